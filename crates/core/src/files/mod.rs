//! The file-store seam: where a library's attachment files are kept, behind one interface, so that reading a
//! paper (its text, its outline, the PDF a highlight is placed on, the text the semantic index lacks) does not
//! depend on which store holds it.
//!
//! A store is chosen per library by the server's configuration. Today that is WebDAV (`WEBDAV_URL`, Zotero's
//! `<KEY>.zip` + `<KEY>.prop` layout, [`crate::webdav`]); Zotero Storage comes behind the same trait (issue 28).
//! Writes still go through [`crate::webdav::WebDavWriter`] in [`crate::attachment::write`].

mod webdav;

use async_trait::async_trait;

use crate::webdav::{ArchiveError, WebDavError};
use crate::zotero::{ObjectKey, ZoteroObject};

/// Which kind of store holds a library's files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreKind {
    /// The user's own WebDAV server, as Zotero Desktop syncs to it.
    WebDav,
}

impl StoreKind {
    /// The store's name as a user knows it, for messages.
    pub fn name(self) -> &'static str {
        match self {
            Self::WebDav => "WebDAV",
        }
    }
}

impl std::fmt::Display for StoreKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

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
    #[error(transparent)]
    WebDav(#[from] WebDavError),
    #[error(transparent)]
    Archive(#[from] ArchiveError),
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
}
