//! The file-store seam: where a library's attachment files are kept, behind one interface, so that reading a
//! paper (its text, its outline, the PDF a highlight is placed on, the text the semantic index lacks) does not
//! depend on which store holds it.
//!
//! A store is chosen per library by the server's configuration: WebDAV (`WEBDAV_URL`, Zotero's `<KEY>.zip` +
//! `<KEY>.prop` layout, [`crate::webdav`]) or Zotero Storage (the Web API's file endpoint,
//! [`crate::zotero_storage`]). Changing files takes a [`FileWriter`], the same stores' writing halves, which the
//! server hands out only with the write scope; [`crate::attachment::write`] keeps each store's order.

mod webdav;
mod zotero_storage;

use async_trait::async_trait;

pub use crate::file_changes::{kept_name, FileAction, FileChange, FileLog, StoreKind};
use crate::webdav::{ArchiveError, WebDavWriter};
use crate::zotero::{ObjectKey, ZoteroObject};
use crate::zotero_storage::ZoteroStorageWriter;

/// A stored file, out of whatever packing its store keeps it in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileContent {
    /// The file's name as stored (the attachment's `filename` field is preferred by callers when it is set).
    pub filename: String,
    pub data: Vec<u8>,
}

/// Why a store could not hand out a file.
#[derive(Debug, thiserror::Error)]
pub enum FileStoreError {
    /// A zipped file that could not be unpacked within the archive limits, whichever store held it.
    #[error(transparent)]
    Archive(#[from] ArchiveError),
    /// A store's own failure (WebDAV's [`crate::webdav::WebDavError`], Zotero Storage's
    /// [`crate::zotero_storage::ZoteroStorageError`], Desktop's disk), boxed: this seam names no store, and a
    /// build that never reads from a store carries none of its messages (the Worker has a size budget).
    /// `downcast_ref` gives the store's error back.
    #[error(transparent)]
    Store(Box<dyn std::error::Error>),
}

impl FileStoreError {
    /// A store's own failure, boxed.
    pub fn store(error: impl std::error::Error + 'static) -> Self {
        Self::Store(Box::new(error))
    }
}

/// One library's file store.
#[async_trait(?Send)]
pub trait FileStore {
    /// Which store this is.
    fn kind(&self) -> StoreKind;

    /// Requests one [`FileStore::fetch`] costs, for callers that keep a budget of subrequests (the index sync).
    fn requests_per_fetch(&self) -> usize;

    /// The stored file of `attachment` (whose key is `key`), or `None` when the store holds no file for it
    /// (Zotero Desktop has not synced it yet). Sizes are bounded as the store's own limits say.
    async fn fetch(&self, attachment: &ZoteroObject, key: &ObjectKey) -> Result<Option<FileContent>, FileStoreError>;

    /// Whether the store holds a file for the attachment `key`, without downloading it.
    async fn has_file(&self, key: &ObjectKey) -> Result<bool, FileStoreError>;

    /// Whether it also reads linked files (`linked_file` attachments, wherever the person keeps them): only
    /// Zotero Desktop's disk can; the synced stores hold stored files alone.
    fn reads_linked_files(&self) -> bool {
        false
    }
}

/// A library's file store for changing files: made only for requests allowed to write. The stores keep
/// different orders of steps (WebDAV's archive, `.prop` and item record; Zotero Storage's authorization, upload
/// and registration), each in its own module of [`crate::attachment::write`], which names the stores in one
/// place (and where this handle's methods are); the handle only says which one a request writes to.
#[derive(Clone, Copy)]
pub enum FileWriter<'a> {
    WebDav(&'a WebDavWriter),
    ZoteroStorage(&'a ZoteroStorageWriter),
}
