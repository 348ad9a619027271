//! Zotero Desktop on the machine the server runs on: its local API ([`crate::zotero::local`]) and its data
//! directory, where every stored file sits as `storage/<KEY>/<filename>` whatever the library syncs with.
//!
//! The core crate has no filesystem: the native shell implements [`Desktop`] (probing the app once, reading
//! files from disk) and the server reaches Zotero Desktop only through it. What is pure — where in the data
//! directory an attachment's file is, and which names are refused — is here, so every shell decides it alike.

use std::path::{Component, Path, PathBuf};
use std::rc::Rc;

use async_trait::async_trait;

use crate::files::FileStore;
use crate::platform::{Clock, HttpClient};
use crate::zotero::local::{DesktopInfo, LocalApiAccess, LocalKey};
use crate::zotero::{LibraryId, ZoteroError, ZoteroObject, ZoteroWriter};
use crate::zotero_storage::{StoragePolicy, ZoteroStorageError, ZoteroStorageWriter};

/// Zotero Desktop as the server uses it.
#[async_trait(?Send)]
pub trait Desktop {
    /// The local API's base URL (`http://localhost:23119/api`, or `ZOTERO_LOCAL_URL`).
    fn api_base(&self) -> &str;

    /// The running Zotero: probed on first need and kept from its first answer on, so what it accepts is
    /// decided once; probed again while it does not answer (Zotero may be started after the server).
    async fn zotero(&self) -> Result<DesktopInfo, ZoteroError>;

    /// The local write key of this process (shared by every request).
    fn key(&self) -> Rc<LocalKey>;

    /// The data directory's files, for reading: the personal library's (`user_library`, linked files too) or a
    /// group's (stored files only: Zotero keeps no linked files in groups).
    fn files(&self, user_library: bool) -> &dyn FileStore;

    /// A client of the local API for `library`, its requests naming the instance and key `access` gives.
    /// Made here, through the trait, so that a build without a desktop (the Worker's) links none of the
    /// local API's client: only an implementation of this trait reaches it.
    fn client(
        &self,
        library: LibraryId,
        access: LocalApiAccess,
        http: Rc<dyn HttpClient>,
        clock: Rc<dyn Clock>,
    ) -> ZoteroWriter {
        ZoteroWriter::for_desktop(self.api_base(), library, access, http, clock)
    }

    /// The file writer of `library` (`/users/0`, `/groups/<id>`): the three steps of a Zotero Storage upload,
    /// sent to the local API, which puts the file in Zotero's storage itself. Made here for the same reason.
    fn storage(
        &self,
        library: &str,
        access: LocalApiAccess,
        http: Rc<dyn HttpClient>,
        clock: Rc<dyn Clock>,
    ) -> Result<ZoteroStorageWriter, ZoteroStorageError> {
        ZoteroStorageWriter::for_desktop(self.api_base(), library, access, http, clock, StoragePolicy::default())
    }
}

/// Where Zotero Desktop keeps an attachment's file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileLocation {
    /// A stored (imported) file: `<data dir>/storage/<KEY>/<filename>`.
    Stored(PathBuf),
    /// A linked file, wherever the person keeps it.
    Linked(PathBuf),
}

impl FileLocation {
    pub fn path(&self) -> &Path {
        match self {
            Self::Stored(path) | Self::Linked(path) => path,
        }
    }
}

/// Why an attachment's file cannot be located on disk. Nothing was read.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum LocateError {
    #[error(
        "attachment {key} names its file {name:?}, which is not a plain file name, so it was not read (a name \
         with a path in it could reach outside Zotero's storage folder)"
    )]
    UnsafeName { key: String, name: String },
    #[error(
        "attachment {key} is a linked file in a group library; Zotero keeps linked files in personal libraries \
         only, so it was not read"
    )]
    LinkedOutsideUserLibrary { key: String },
    #[error(
        "attachment {key} is a linked file relative to Zotero's base directory (\"{path}\"), and the base \
         directory is not known: set it in Zotero (Settings → Advanced → Files and Folders) so it is in prefs.js"
    )]
    NoBaseDirectory { key: String, path: String },
    #[error("attachment {key} is a linked file whose path {path:?} is not absolute, so it was not read")]
    RelativeLink { key: String, path: String },
    #[error(
        "attachment {key} links to {path:?}, which is not a document this server reads (a PDF, EPUB, HTML or text \
         file outside hidden folders and outside /proc, /sys and /dev), so it was not read"
    )]
    NotADocument { key: String, path: String },
}

/// The largest file read from Zotero Desktop's data directory or a linked file: what the Web API paths read
/// through their stores ([`crate::webdav::MAX_DOWNLOAD_BYTES`]), so `--local` holds no more per file than they.
pub const MAX_FILE_BYTES: u64 = crate::webdav::MAX_DOWNLOAD_BYTES as u64;

/// How many files a [`Desktop`] reads from disk at once: each is held whole, so a few calls reading large PDFs
/// together would otherwise hold them all (three 64 MiB reads, 192 MB, before any parsing). Further reads wait.
pub const MAX_CONCURRENT_READS: usize = 2;

/// Top-level folders whose files are views of the kernel or of devices, not documents: `/proc/self/root/…`
/// reaches the whole filesystem again past any check made on the path's start, `/proc/<pid>/fd/…` other
/// processes' open files, `/dev/…` devices.
const PSEUDO_FILESYSTEMS: &[&str] = &["proc", "sys", "dev"];

/// The extensions of the documents a linked file may be read as.
const DOCUMENT_EXTENSIONS: &[&str] = &["pdf", "epub", "html", "htm", "xhtml", "txt", "md"];

/// Whether a linked file at `path` may be read: a document by its extension, no hidden file or folder on the
/// way to it, no `..`, and not under a pseudo-filesystem (`/proc`, `/sys`, `/dev`). A linked attachment is only
/// a path in the library, which anyone who can write to the library (a model following a prompt hidden in a
/// paper, say) could point at `~/.ssh/id_rsa` or a browser profile; this keeps what such a path can reach to
/// documents. The native shell checks the path again once symbolic links are resolved.
pub fn linked_document(path: &Path) -> bool {
    let hidden =
        path.components().any(|c| matches!(c, Component::Normal(name) if name.to_string_lossy().starts_with('.')));
    // `/home/r/../../proc/…` would step past the start checked below.
    let climbs = path.components().any(|c| matches!(c, Component::ParentDir));
    let extension = path.extension().map(|e| e.to_string_lossy().to_ascii_lowercase());
    !hidden
        && !climbs
        && !on_pseudo_filesystem(path)
        && extension.is_some_and(|e| DOCUMENT_EXTENSIONS.contains(&e.as_str()))
}

/// Whether `path` starts in one of [`PSEUDO_FILESYSTEMS`].
fn on_pseudo_filesystem(path: &Path) -> bool {
    let mut components = path.components().skip_while(|c| matches!(c, Component::Prefix(_) | Component::RootDir));
    let first = components.next();
    path.has_root()
        && matches!(first, Some(Component::Normal(name)) if PSEUDO_FILESYSTEMS.contains(&&*name.to_string_lossy()))
}

/// The file of `attachment` on disk, or `None` for an attachment without one (a linked URL, a note).
/// `data_dir` is Zotero's data directory; `base_dir` its base directory for linked files, when set;
/// `in_user_library` whether the attachment is in the personal library (the only one with linked files).
pub fn locate(
    attachment: &ZoteroObject,
    data_dir: &Path,
    base_dir: Option<&Path>,
    in_user_library: bool,
) -> Result<Option<FileLocation>, LocateError> {
    let key = &attachment.key;
    match attachment.field("linkMode") {
        Some("imported_file" | "imported_url") => {
            let Some(name) = attachment.field("filename") else { return Ok(None) };
            if !is_plain_name(name) {
                return Err(LocateError::UnsafeName { key: key.clone(), name: name.to_owned() });
            }
            // The key is checked by its type elsewhere; a key is eight letters and digits, never a path.
            if !key.bytes().all(|b| b.is_ascii_alphanumeric()) {
                return Err(LocateError::UnsafeName { key: key.clone(), name: key.clone() });
            }
            Ok(Some(FileLocation::Stored(data_dir.join("storage").join(key).join(name))))
        }
        Some("linked_file") => {
            if !in_user_library {
                return Err(LocateError::LinkedOutsideUserLibrary { key: key.clone() });
            }
            let Some(path) = attachment.field("path") else { return Ok(None) };
            // Zotero writes a path under the base directory as `attachments:<relative path>`, with `/`.
            if let Some(relative) = path.strip_prefix("attachments:") {
                let Some(base) = base_dir else {
                    return Err(LocateError::NoBaseDirectory { key: key.clone(), path: path.to_owned() });
                };
                let relative = Path::new(relative);
                if relative.components().any(|c| !matches!(c, Component::Normal(_))) {
                    return Err(LocateError::RelativeLink { key: key.clone(), path: path.to_owned() });
                }
                let linked = base.join(relative);
                if !linked_document(&linked) {
                    return Err(LocateError::NotADocument { key: key.clone(), path: path.to_owned() });
                }
                return Ok(Some(FileLocation::Linked(linked)));
            }
            let path_buf = PathBuf::from(path);
            if !path_buf.is_absolute() {
                return Err(LocateError::RelativeLink { key: key.clone(), path: path.to_owned() });
            }
            if !linked_document(&path_buf) {
                return Err(LocateError::NotADocument { key: key.clone(), path: path.to_owned() });
            }
            Ok(Some(FileLocation::Linked(path_buf)))
        }
        _ => Ok(None),
    }
}

/// A file name with no directory in it: not empty, not `.` or `..`, no separator of any platform, no NUL.
fn is_plain_name(name: &str) -> bool {
    !name.is_empty() && name != "." && name != ".." && !name.contains(['/', '\\', '\0'])
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn attachment(data: serde_json::Value) -> ZoteroObject {
        let key = data["key"].as_str().unwrap_or("ABCD2345").to_owned();
        ZoteroObject { key, version: 1, meta: Default::default(), data: data.as_object().cloned().unwrap_or_default() }
    }

    #[test]
    fn a_stored_file_is_under_storage_and_its_key() {
        let item = attachment(json!({"key": "ABCD2345", "linkMode": "imported_file", "filename": "paper.pdf"}));
        let found = locate(&item, Path::new("/home/r/Zotero"), None, true).unwrap();
        assert_eq!(found, Some(FileLocation::Stored(PathBuf::from("/home/r/Zotero/storage/ABCD2345/paper.pdf"))));
    }

    #[test]
    fn a_name_that_leaves_the_storage_folder_is_refused() {
        for name in ["../../.ssh/id_rsa", "a/b.pdf", "a\\b.pdf", "..", "."] {
            let item = attachment(json!({"key": "ABCD2345", "linkMode": "imported_file", "filename": name}));
            let refused = locate(&item, Path::new("/d"), None, true);
            assert!(matches!(refused, Err(LocateError::UnsafeName { .. })), "{name}: {refused:?}");
        }
    }

    #[test]
    fn linked_files_are_absolute_or_under_the_base_directory() {
        let absolute = attachment(json!({"linkMode": "linked_file", "path": "/papers/x.pdf"}));
        assert_eq!(
            locate(&absolute, Path::new("/d"), None, true).unwrap(),
            Some(FileLocation::Linked(PathBuf::from("/papers/x.pdf")))
        );
        let based = attachment(json!({"linkMode": "linked_file", "path": "attachments:2024/x.pdf"}));
        assert_eq!(
            locate(&based, Path::new("/d"), Some(Path::new("/base")), true).unwrap(),
            Some(FileLocation::Linked(PathBuf::from("/base/2024/x.pdf")))
        );
        assert!(matches!(locate(&based, Path::new("/d"), None, true), Err(LocateError::NoBaseDirectory { .. })));
        let escaping = attachment(json!({"linkMode": "linked_file", "path": "attachments:../secret"}));
        assert!(matches!(
            locate(&escaping, Path::new("/d"), Some(Path::new("/base")), true),
            Err(LocateError::RelativeLink { .. })
        ));
        let relative = attachment(json!({"linkMode": "linked_file", "path": "x.pdf"}));
        assert!(matches!(locate(&relative, Path::new("/d"), None, true), Err(LocateError::RelativeLink { .. })));
        assert!(matches!(
            locate(&absolute, Path::new("/d"), None, false),
            Err(LocateError::LinkedOutsideUserLibrary { .. })
        ));
    }

    #[test]
    fn a_link_reaches_documents_only() {
        for path in [
            "/home/r/.ssh/id_rsa",
            "/home/r/.mozilla/firefox/x.default/key4.db",
            "/etc/shadow",
            "/home/r/.config/paper.pdf",
            "/home/r/notes.sh",
        ] {
            let link = attachment(json!({"linkMode": "linked_file", "path": path}));
            let refused = locate(&link, Path::new("/d"), None, true);
            assert!(matches!(refused, Err(LocateError::NotADocument { .. })), "{path}: {refused:?}");
        }
        let hidden_base = attachment(json!({"linkMode": "linked_file", "path": "attachments:.git/config.txt"}));
        assert!(matches!(
            locate(&hidden_base, Path::new("/d"), Some(Path::new("/base")), true),
            Err(LocateError::NotADocument { .. })
        ));
        // The pseudo-filesystems lead anywhere again (`/proc/self/root` is `/`), or to devices and open files.
        for path in [
            "/proc/self/root/home/r/paper.pdf",
            "/proc/1/cwd/paper.pdf",
            "/proc/self/fd/3.pdf",
            "/sys/kernel/notes.txt",
            "/dev/fd/4.pdf",
            "//proc/self/root/x.pdf",
            "/home/r/../../proc/self/root/x.pdf",
        ] {
            let link = attachment(json!({"linkMode": "linked_file", "path": path}));
            let refused = locate(&link, Path::new("/d"), None, true);
            assert!(matches!(refused, Err(LocateError::NotADocument { .. })), "{path}: {refused:?}");
        }
        let hidden_base = attachment(json!({"linkMode": "linked_file", "path": "attachments:self/root/x.pdf"}));
        assert!(matches!(
            locate(&hidden_base, Path::new("/d"), Some(Path::new("/proc")), true),
            Err(LocateError::NotADocument { .. })
        ));
        let hidden_base = attachment(json!({"linkMode": "linked_file", "path": "attachments:.git/config.txt"}));
        assert!(matches!(
            locate(&hidden_base, Path::new("/d"), Some(Path::new("/base")), true),
            Err(LocateError::NotADocument { .. })
        ));
        for path in
            ["/home/r/Papers/Smith 2020.PDF", "/srv/books/a.epub", "/home/r/notes/reading.txt", "/home/r/proc/a.pdf"]
        {
            let link = attachment(json!({"linkMode": "linked_file", "path": path}));
            assert!(matches!(locate(&link, Path::new("/d"), None, true), Ok(Some(FileLocation::Linked(_)))), "{path}");
        }
    }

    #[test]
    fn a_link_to_a_web_page_has_no_file() {
        let url = attachment(json!({"linkMode": "linked_url", "url": "https://example.org"}));
        assert_eq!(locate(&url, Path::new("/d"), None, true).unwrap(), None);
    }
}
