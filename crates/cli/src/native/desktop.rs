//! Zotero Desktop on this machine, for `serve --local`: its local API, probed once it answers, and its data
//! directory read from disk behind the core's file-store seam.

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use async_trait::async_trait;
use zotero_mcp_core::desktop::{linked_document, locate, Desktop, FileLocation, LocateError};
use zotero_mcp_core::files::{FileContent, FileStore, FileStoreError, StoreKind};
use zotero_mcp_core::platform::{Clock, HttpClient};
use zotero_mcp_core::zotero::local::{self, DesktopInfo, LocalKey};
use zotero_mcp_core::zotero::{ObjectKey, ZoteroError, ZoteroObject};

use super::zotero_profile::ZoteroData;

/// The largest file read from disk (the Web API paths allow as much through their stores).
pub const MAX_FILE_BYTES: u64 = 256 * 1024 * 1024;

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
        let files = |personal| DiskFiles { data_dir: data.data_dir.clone(), base_dir: data.base_dir.clone(), personal };
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
    #[error("{path} is {size} bytes, more than the {MAX_FILE_BYTES} this server reads")]
    TooLarge { path: String, size: u64 },
    #[error("could not read {path}: {reason}")]
    Io { path: String, reason: String },
}

/// The files of one library in Zotero's data directory.
struct DiskFiles {
    data_dir: PathBuf,
    base_dir: Option<PathBuf>,
    /// The personal library (the only one whose attachments may be linked files).
    personal: bool,
}

impl DiskFiles {
    fn boxed(error: DiskError) -> FileStoreError {
        FileStoreError::Store(Box::new(error))
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
        match tokio::fs::read(path).await {
            Ok(data) => Ok(Some(data)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(DiskError::Io { path: shown, reason: e.to_string() }),
        }
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
        if let FileLocation::Linked(path) = &location {
            // The path checked is the one the bytes come from: a link to `paper.pdf` that is a symbolic link to
            // a hidden file is refused as that file would be.
            if let Ok(real) = tokio::fs::canonicalize(path).await {
                if !linked_document(&real) {
                    let error =
                        LocateError::NotADocument { key: attachment.key.clone(), path: path.display().to_string() };
                    return Err(Self::boxed(error.into()));
                }
            }
        }
        let Some(data) = Self::read(location.path()).await.map_err(Self::boxed)? else { return Ok(None) };
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
}
