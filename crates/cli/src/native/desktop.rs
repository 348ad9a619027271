//! Zotero Desktop on this machine, for `serve --local`: its local API, probed once it answers, and its data
//! directory read from disk behind the core's file-store seam.

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use async_trait::async_trait;
use zotero_mcp_core::desktop::{
    linked_document, locate, Desktop, FileLocation, LocateError, MAX_CONCURRENT_READS, MAX_FILE_BYTES,
};
use zotero_mcp_core::files::{FileContent, FileStore, FileStoreError, StoreKind};
use zotero_mcp_core::platform::{Clock, HttpClient};
use zotero_mcp_core::zotero::local::{self, DesktopInfo, LocalKey};
use zotero_mcp_core::zotero::{ObjectKey, ZoteroError, ZoteroObject};

use super::zotero_profile::ZoteroData;

/// Zotero Desktop at `api_base`, its files in `data`.
pub struct NativeDesktop {
    api_base: String,
    http: Rc<dyn HttpClient>,
    clock: Rc<dyn Clock>,
    /// The first answer of the running Zotero, kept for the process: what it accepts is decided once.
    info: RefCell<Option<DesktopInfo>>,
    key: Rc<LocalKey>,
    personal: DiskFiles,
    groups: DiskFiles,
}

impl NativeDesktop {
    pub fn new(api_base: &str, data: &ZoteroData, http: Rc<dyn HttpClient>, clock: Rc<dyn Clock>) -> Self {
        // One gate for both libraries' files: the bound is on what the process holds.
        let gate = Rc::new(tokio::sync::Semaphore::new(MAX_CONCURRENT_READS));
        let files = |personal| DiskFiles {
            data_dir: data.data_dir.clone(),
            base_dir: data.base_dir.clone(),
            personal,
            gate: gate.clone(),
            #[cfg(test)]
            reading: Default::default(),
        };
        Self {
            api_base: api_base.trim_end_matches('/').to_owned(),
            http,
            clock,
            info: RefCell::new(None),
            key: Rc::new(LocalKey::default()),
            personal: files(true),
            groups: files(false),
        }
    }
}

#[async_trait(?Send)]
impl Desktop for NativeDesktop {
    fn api_base(&self) -> &str {
        &self.api_base
    }

    async fn zotero(&self) -> Result<DesktopInfo, ZoteroError> {
        if let Some(info) = self.info.borrow().clone() {
            return Ok(info);
        }
        let info = local::probe(self.http.as_ref(), self.clock.as_ref(), &self.api_base).await?;
        *self.info.borrow_mut() = Some(info.clone());
        Ok(info)
    }

    fn key(&self) -> Rc<LocalKey> {
        self.key.clone()
    }

    fn files(&self, user_library: bool) -> &dyn FileStore {
        if user_library {
            &self.personal
        } else {
            &self.groups
        }
    }
}

/// Why a file on disk was not read.
#[derive(Debug, thiserror::Error)]
enum DiskError {
    #[error(transparent)]
    Locate(#[from] zotero_mcp_core::desktop::LocateError),
    #[error("{path} is not a regular file, so it was not read")]
    NotAFile { path: String },
    #[error(
        "{path} is too large to read here: {size} bytes, over the {MAX_FILE_BYTES} bytes (64 MiB) this server reads \
         from disk, as from Zotero Storage or WebDAV. Read the text Zotero indexed instead (its full-text index), or \
         split the file in Zotero and read the parts"
    )]
    TooLarge { path: String, size: u64 },
    #[error("{path} could not be resolved ({reason}), so it was not read")]
    Unresolved { path: String, reason: String },
    #[error("could not read {path}: {reason}")]
    Io { path: String, reason: String },
}

/// The files of one library in Zotero's data directory.
struct DiskFiles {
    data_dir: PathBuf,
    base_dir: Option<PathBuf>,
    /// The personal library (the only one whose attachments may be linked files).
    personal: bool,
    /// Shared by every reader of the process: at most [`MAX_CONCURRENT_READS`] files are read (and so held
    /// whole) at once; the others wait their turn.
    gate: Rc<tokio::sync::Semaphore>,
    /// Reads in flight now and at most so far, for the test of the gate.
    #[cfg(test)]
    reading: std::cell::Cell<(usize, usize)>,
}

impl DiskFiles {
    fn boxed(error: DiskError) -> FileStoreError {
        FileStoreError::Store(Box::new(error))
    }

    /// Reads `path` once the gate lets it, within [`MAX_FILE_BYTES`].
    async fn read_gated(&self, path: &Path) -> Result<Option<Vec<u8>>, DiskError> {
        // Never closed, so acquiring fails never; were it to, reading without the gate beats refusing the file.
        let _permit = self.gate.acquire().await.ok();
        #[cfg(test)]
        {
            let (now, most) = self.reading.get();
            self.reading.set((now + 1, most.max(now + 1)));
        }
        let read = Self::read(path).await;
        #[cfg(test)]
        {
            let (now, most) = self.reading.get();
            self.reading.set((now - 1, most));
        }
        read
    }

    async fn read(path: &Path) -> Result<Option<Vec<u8>>, DiskError> {
        let shown = path.display().to_string();
        let metadata = match tokio::fs::metadata(path).await {
            Ok(metadata) => metadata,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(DiskError::Io { path: shown, reason: e.to_string() }),
        };
        if !metadata.is_file() {
            return Err(DiskError::NotAFile { path: shown });
        }
        if metadata.len() > MAX_FILE_BYTES {
            return Err(DiskError::TooLarge { path: shown, size: metadata.len() });
        }
        // At most the limit is read, should the file have grown since its size was looked at.
        let read = async {
            use tokio::io::AsyncReadExt;
            let file = tokio::fs::File::open(path).await?;
            let mut data = Vec::with_capacity(usize::try_from(metadata.len()).unwrap_or(0));
            file.take(MAX_FILE_BYTES + 1).read_to_end(&mut data).await?;
            Ok::<_, std::io::Error>(data)
        };
        match read.await {
            Ok(data) if data.len() as u64 > MAX_FILE_BYTES => {
                Err(DiskError::TooLarge { path: shown, size: data.len() as u64 })
            }
            Ok(data) => Ok(Some(data)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(DiskError::Io { path: shown, reason: e.to_string() }),
        }
    }
}

impl DiskFiles {
    /// The path a linked file's bytes are read from: `path` with its symbolic links resolved, checked again as a
    /// document (a `paper.pdf` that links to a hidden file, or into /proc, is refused as that file would be).
    /// The resolved path is the one read, so what was checked is what is read. `None`: there is no such file.
    async fn resolved_link(key: &str, path: &Path) -> Result<Option<PathBuf>, FileStoreError> {
        let shown = path.display().to_string();
        let real = match tokio::fs::canonicalize(path).await {
            Ok(real) => real,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            // Unresolvable is not readable: the bytes would come from a path nobody checked.
            Err(e) => return Err(Self::boxed(DiskError::Unresolved { path: shown, reason: e.to_string() })),
        };
        if !linked_document(&real) {
            return Err(Self::boxed(LocateError::NotADocument { key: key.to_owned(), path: shown }.into()));
        }
        Ok(Some(real))
    }
}

#[async_trait(?Send)]
impl FileStore for DiskFiles {
    fn kind(&self) -> StoreKind {
        StoreKind::Desktop
    }

    /// A file on disk costs no request.
    fn requests_per_fetch(&self) -> usize {
        0
    }

    async fn fetch(&self, attachment: &ZoteroObject, _: &ObjectKey) -> Result<Option<FileContent>, FileStoreError> {
        let located = locate(attachment, &self.data_dir, self.base_dir.as_deref(), self.personal)
            .map_err(|e| Self::boxed(e.into()))?;
        let Some(location) = located else { return Ok(None) };
        let source = match &location {
            FileLocation::Stored(path) => path.clone(),
            FileLocation::Linked(path) => match Self::resolved_link(&attachment.key, path).await? {
                Some(real) => real,
                None => return Ok(None),
            },
        };
        let Some(data) = self.read_gated(&source).await.map_err(Self::boxed)? else { return Ok(None) };
        let filename = match &location {
            FileLocation::Stored(path) | FileLocation::Linked(path) => {
                path.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default()
            }
        };
        Ok(Some(FileContent { filename, data }))
    }

    /// The personal library's linked files are on this disk too (groups have none).
    fn reads_linked_files(&self) -> bool {
        self.personal
    }

    /// Whether Zotero's storage folder for the attachment holds a file (linked files are checked on reading).
    async fn has_file(&self, key: &ObjectKey) -> Result<bool, FileStoreError> {
        let folder = self.data_dir.join("storage").join(key.as_str());
        let Ok(mut entries) = tokio::fs::read_dir(&folder).await else { return Ok(false) };
        while let Ok(Some(entry)) = entries.next_entry().await {
            let name = entry.file_name();
            // Zotero keeps `.zotero-ft-cache` and similar beside the file.
            if !name.to_string_lossy().starts_with('.') && entry.file_type().await.is_ok_and(|t| t.is_file()) {
                return Ok(true);
            }
        }
        Ok(false)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use zotero_mcp_core::platform::HttpError;
    use zotero_mcp_core::testing::{ManualClock, StubHttp};

    use super::*;

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("zotero-mcp-desktop-unit-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn desktop(http: Rc<StubHttp>, data_dir: &Path) -> NativeDesktop {
        let data = ZoteroData { data_dir: data_dir.to_owned(), base_dir: None, found_by: "test" };
        NativeDesktop::new("http://localhost:23119/api", &data, http, ManualClock::at(0))
    }

    fn zotero_10() -> http::Response<Vec<u8>> {
        http::Response::builder()
            .header("x-zotero-version", "10.0.2")
            .header("zotero-server-id", "abcdefghijkl")
            .body(b"Nothing to see here.".to_vec())
            .unwrap()
    }

    fn attachment(data: serde_json::Value) -> ZoteroObject {
        let key = data["key"].as_str().unwrap().to_owned();
        ZoteroObject { key, version: 1, meta: Default::default(), data: data.as_object().cloned().unwrap() }
    }

    #[tokio::test]
    async fn zotero_started_after_the_server_is_found_on_the_next_call_and_then_kept() {
        let http = StubHttp::strict();
        http.enqueue(Err(HttpError::Transport { url: "http://localhost:23119/api/".into(), reason: "refused".into() }));
        http.enqueue(Ok(zotero_10()));
        let dir = temp_dir("probe");
        let desktop = desktop(http.clone(), &dir);
        let first = desktop.zotero().await.unwrap_err();
        assert!(first.to_string().contains("Start Zotero"), "{first}");
        let info = desktop.zotero().await.unwrap();
        assert!(info.accepts_writes());
        // Kept: what it accepts is decided once, and no request is sent for it again.
        assert_eq!(desktop.zotero().await.unwrap(), info);
        assert_eq!(http.requests().len(), 2);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[tokio::test]
    async fn stored_files_are_read_from_storage_and_zoteros_cache_beside_them_is_no_file() {
        let dir = temp_dir("stored");
        let desktop = desktop(StubHttp::strict(), &dir);
        let folder = dir.join("storage").join("ABCD2345");
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join(".zotero-ft-cache"), b"cache").unwrap();
        let key = ObjectKey::parse("ABCD2345").unwrap();
        assert!(!desktop.files(true).has_file(&key).await.unwrap(), "only Zotero's cache is there");
        std::fs::write(folder.join("paper.pdf"), b"%PDF-1.4").unwrap();
        assert!(desktop.files(true).has_file(&key).await.unwrap());
        let item = attachment(json!({"key": "ABCD2345", "linkMode": "imported_file", "filename": "paper.pdf"}));
        let read = desktop.files(true).fetch(&item, &key).await.unwrap().unwrap();
        assert_eq!((read.filename.as_str(), read.data.as_slice()), ("paper.pdf", b"%PDF-1.4".as_slice()));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn a_linked_pdf_that_is_a_symbolic_link_to_a_hidden_file_is_refused() {
        let dir = temp_dir("linked");
        let secret = dir.join(".ssh").join("id_rsa");
        std::fs::create_dir_all(secret.parent().unwrap()).unwrap();
        std::fs::write(&secret, b"PRIVATE KEY").unwrap();
        let disguised = dir.join("paper.pdf");
        std::os::unix::fs::symlink(&secret, &disguised).unwrap();
        let real = dir.join("real.pdf");
        std::fs::write(&real, b"%PDF-1.4 real").unwrap();
        let desktop = desktop(StubHttp::strict(), &dir);
        let key = ObjectKey::parse("LNKD2345").unwrap();
        let link = |path: &Path| {
            attachment(json!({"key": "LNKD2345", "linkMode": "linked_file", "path": path.display().to_string()}))
        };
        let refused = desktop.files(true).fetch(&link(&disguised), &key).await.unwrap_err();
        assert!(refused.to_string().contains("not a document this server reads"), "{refused}");
        let read = desktop.files(true).fetch(&link(&real), &key).await.unwrap().unwrap();
        assert_eq!(read.data, b"%PDF-1.4 real");
        // Groups have no linked files.
        assert!(desktop.files(false).fetch(&link(&real), &key).await.is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }

    fn stored(key: &str, name: &str) -> ZoteroObject {
        attachment(json!({"key": key, "linkMode": "imported_file", "filename": name}))
    }

    #[tokio::test]
    async fn a_file_over_64_mib_is_refused_as_too_large_without_reading_it() {
        let dir = temp_dir("large");
        let folder = dir.join("storage").join("BIGG2345");
        std::fs::create_dir_all(&folder).unwrap();
        // Sparse: its size says 64 MiB and a byte, and it costs the disk nothing.
        let file = std::fs::File::create(folder.join("big.pdf")).unwrap();
        file.set_len(MAX_FILE_BYTES + 1).unwrap();
        let desktop = desktop(StubHttp::strict(), &dir);
        let key = ObjectKey::parse("BIGG2345").unwrap();
        let refused = desktop.files(true).fetch(&stored("BIGG2345", "big.pdf"), &key).await.unwrap_err().to_string();
        assert!(refused.contains("too large") && refused.contains("64 MiB"), "{refused}");
        assert!(refused.contains("full-text index"), "says what to do instead: {refused}");
        // At the limit it is read.
        file.set_len(MAX_FILE_BYTES).unwrap();
        let read = desktop.files(true).fetch(&stored("BIGG2345", "big.pdf"), &key).await.unwrap().unwrap();
        assert_eq!(read.data.len() as u64, MAX_FILE_BYTES);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[tokio::test]
    async fn no_more_than_two_files_are_read_at_once() {
        let dir = temp_dir("gate");
        let keys = ["GATE2345", "GATE3456", "GATE4567", "GATE5678"];
        for key in keys {
            let folder = dir.join("storage").join(key);
            std::fs::create_dir_all(&folder).unwrap();
            std::fs::write(folder.join("paper.pdf"), vec![b'%'; 4 * 1024 * 1024]).unwrap();
        }
        let desktop = desktop(StubHttp::strict(), &dir);
        let items: Vec<(ZoteroObject, ObjectKey)> =
            keys.iter().map(|key| (stored(key, "paper.pdf"), ObjectKey::parse(key).unwrap())).collect();
        // Every read starts before any finishes (the reads go to tokio's blocking threads), so without the gate
        // all four would be in flight together.
        let reads = items.iter().map(|(item, key)| desktop.personal.fetch(item, key));
        let read = join_all(reads).await;
        assert!(read.iter().all(|r| matches!(r, Ok(Some(file)) if file.data.len() == 4 * 1024 * 1024)));
        assert_eq!(desktop.personal.reading.get(), (0, MAX_CONCURRENT_READS), "at most two in flight");
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Polls every future until all are done (the cli has no futures crate of its own).
    async fn join_all<F: std::future::Future>(futures: impl Iterator<Item = F>) -> Vec<F::Output> {
        let handles: Vec<_> = futures.map(Box::pin).collect();
        let mut outputs: Vec<Option<F::Output>> = handles.iter().map(|_| None).collect();
        let mut handles: Vec<Option<_>> = handles.into_iter().map(Some).collect();
        std::future::poll_fn(|cx| {
            let mut pending = false;
            for (slot, output) in handles.iter_mut().zip(outputs.iter_mut()) {
                if let Some(future) = slot {
                    match future.as_mut().poll(cx) {
                        std::task::Poll::Ready(value) => {
                            *output = Some(value);
                            *slot = None;
                        }
                        std::task::Poll::Pending => pending = true,
                    }
                }
            }
            if pending {
                std::task::Poll::Pending
            } else {
                std::task::Poll::Ready(())
            }
        })
        .await;
        outputs.into_iter().flatten().collect()
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn a_linked_pdf_that_leads_into_proc_is_refused() {
        let dir = temp_dir("proc");
        let desktop = desktop(StubHttp::strict(), &dir);
        let key = ObjectKey::parse("PROC2345").unwrap();
        let link = |path: &str| attachment(json!({"key": "PROC2345", "linkMode": "linked_file", "path": path}));
        // Written as /proc/self/root/…: the same file as the path after it, past every check of that path's start.
        let real = dir.join("real.pdf");
        std::fs::write(&real, b"%PDF-1.4 real").unwrap();
        let through_proc = format!("/proc/self/root{}", real.display());
        let refused = desktop.files(true).fetch(&link(&through_proc), &key).await.unwrap_err();
        assert!(refused.to_string().contains("/proc"), "{refused}");
        // A link whose target is a kernel file: refused once resolved.
        let disguised = dir.join("paper.pdf");
        std::os::unix::fs::symlink("/proc/self/environ", &disguised).unwrap();
        let refused = desktop.files(true).fetch(&link(&disguised.display().to_string()), &key).await.unwrap_err();
        assert!(refused.to_string().contains("not a document"), "{refused}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
