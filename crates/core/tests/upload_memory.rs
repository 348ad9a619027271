//! How much memory a Zotero Storage upload holds at its peak, counted by this test binary's own allocator: the
//! file's bytes become the upload's body without a copy kept beside them, so the peak is at most twice the file
//! (the body's buffer growing by the prefix and suffix may move it once), never the three times it was.
//!
//! A binary of its own: the allocator counts every allocation of the process, so nothing else may run beside the
//! one test.

use std::alloc::{GlobalAlloc, Layout, System};
use std::rc::Rc;
use std::sync::atomic::{AtomicUsize, Ordering};

use async_trait::async_trait;
use zotero_mcp_core::platform::{Clock, HttpClient, HttpError, HttpRequest, HttpResponse};
use zotero_mcp_core::zotero::{LibraryKind, ObjectKey, ZoteroSettings};
use zotero_mcp_core::zotero_storage::{FileUpload, Precondition, StoragePolicy, ZoteroStorageWriter};

/// The system allocator, counting the bytes live and the most ever live since [`Counting::reset_peak`]. A
/// reallocation counts the old and the new block together until it returns, as a moving one holds both.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

impl Counting {
    fn grow(by: usize) {
        let live = LIVE.fetch_add(by, Ordering::SeqCst) + by;
        PEAK.fetch_max(live, Ordering::SeqCst);
    }
    fn shrink(by: usize) {
        LIVE.fetch_sub(by, Ordering::SeqCst);
    }
    fn reset_peak() -> usize {
        let live = LIVE.load(Ordering::SeqCst);
        PEAK.store(live, Ordering::SeqCst);
        live
    }
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        Self::grow(layout.size());
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        Self::shrink(layout.size());
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        Self::grow(layout.size());
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        Self::grow(new_size);
        let moved = unsafe { System.realloc(ptr, layout, new_size) };
        Self::shrink(layout.size());
        moved
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

const PREFIX: &str = "--b0undary\r\nContent-Disposition: form-data; name=\"file\"\r\n\r\n";
const SUFFIX: &str = "\r\n--b0undary--";

/// Zotero's three answers; the upload's body is checked and dropped, as a socket would send and drop it.
struct ZoteroStandIn {
    uploaded: std::cell::Cell<Option<(usize, bool)>>,
}

#[async_trait(?Send)]
impl HttpClient for ZoteroStandIn {
    async fn send(&self, request: HttpRequest) -> Result<HttpResponse, HttpError> {
        let answer = |status: u16, body: &str| {
            http::Response::builder()
                .status(status)
                .body(body.as_bytes().to_vec())
                .map_err(|e| HttpError::InvalidRequest { url: "stand-in".into(), reason: e.to_string() })
        };
        if request.uri().host() == Some("upload.storage.test") {
            let body = request.body();
            let framed = body.starts_with(PREFIX.as_bytes()) && body.ends_with(SUFFIX.as_bytes());
            self.uploaded.set(Some((body.len(), framed)));
            return answer(201, "");
        }
        if String::from_utf8_lossy(request.body()).starts_with("upload=") {
            return answer(204, "");
        }
        let authorization = serde_json::json!({
            "url": "https://upload.storage.test/",
            "contentType": "multipart/form-data; boundary=b0undary",
            "prefix": PREFIX,
            "suffix": SUFFIX,
            "uploadKey": "a1b2c3d4e5f6",
        });
        answer(200, &authorization.to_string())
    }
}

/// A clock whose timers never fire (nothing here waits on one).
struct Still;

#[async_trait(?Send)]
impl Clock for Still {
    fn now_ms(&self) -> u64 {
        1_700_000_000_000
    }
    async fn sleep(&self, _ms: u64) {
        std::future::pending::<()>().await;
    }
}

#[tokio::test(flavor = "current_thread")]
async fn an_upload_holds_the_file_at_most_twice() {
    const SIZE: usize = 16 * 1024 * 1024;
    let http = Rc::new(ZoteroStandIn { uploaded: std::cell::Cell::new(None) });
    let settings = ZoteroSettings {
        api_key: "P9NiFoyLeZu2bZNvvuQPDWsd".into(),
        library_kind: LibraryKind::User,
        library_id: Some("42".into()),
        base_url: Some("https://api.zotero.test".into()),
    };
    let writer =
        ZoteroStorageWriter::new(&settings, "/users/42", http.clone(), Rc::new(Still), StoragePolicy::default())
            .unwrap();
    let key = ObjectKey::parse("ABCD2345").unwrap();
    let file = FileUpload {
        filename: "paper.pdf".into(),
        data: vec![7u8; SIZE],
        mtime_ms: 1_700_000_000_000,
        zipped: false,
        precondition: Precondition::NewFile,
    };

    let before = Counting::reset_peak();
    let stored = writer.upload(&key, file).await.unwrap();
    let peak = PEAK.load(Ordering::SeqCst) - before;

    assert!(!stored.already_stored);
    assert_eq!(http.uploaded.get(), Some((SIZE + PREFIX.len() + SUFFIX.len(), true)), "prefix + file + suffix");
    // The file itself is counted before the upload starts, so what the upload adds is at most one more file (the
    // buffer moving as it grows) and some small change.
    let allowed = SIZE + 1024 * 1024;
    assert!(
        peak <= allowed,
        "an upload of {SIZE} bytes added {peak} bytes at its peak, over {allowed}: the file is copied more than once"
    );
}
