//! Zotero Desktop on this machine, for `serve --local`: its local API, probed once it answers, and its data
//! directory read from disk behind the core's file-store seam.

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use async_trait::async_trait;
use zotero_mcp_core::desktop::{locate, Desktop, FileLocation};
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
