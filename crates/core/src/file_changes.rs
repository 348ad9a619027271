//! What a write did to stored files, for the undo journal: the kind of store, each file replaced or removed,
//! and the name an earlier file is kept under. It sits below the stores ([`crate::webdav`],
//! [`crate::zotero_storage`]), which record into a [`FileLog`], and below the file-store seam ([`crate::files`]),
//! which re-exports it, so the stores never reach up to the seam built on them.

use std::cell::RefCell;
use std::rc::Rc;

use serde::{Deserialize, Serialize};

/// Which kind of store holds a library's files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum StoreKind {
    /// The user's own WebDAV server, as Zotero Desktop syncs to it.
    WebDav,
    /// Zotero's own file storage, through the Web API.
    ZoteroStorage,
    /// Zotero Desktop's data directory on this machine (`storage/<KEY>/…`, and linked files).
    Desktop,
}

impl StoreKind {
    /// The store's name as a user knows it, for messages.
    pub fn name(self) -> &'static str {
        match self {
            Self::WebDav => "WebDAV",
            Self::ZoteroStorage => "Zotero Storage",
            Self::Desktop => "Zotero Desktop's data directory",
        }
    }
}

impl std::fmt::Display for StoreKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A stored file a write replaced or removed, for the undo journal (the item's own fields are in the writer's
/// [`crate::zotero::journal::ChangeLog`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileChange {
    /// The attachment's key.
    pub key: String,
    pub store: StoreKind,
    pub action: FileAction,
    /// Whether the earlier file was kept under the journal's name ([`kept_name`]) and can be put back. WebDAV
    /// keeps it; Zotero Storage holds one file per attachment, so there it is never kept.
    pub kept: bool,
    /// The md5 of the file the write left in its place (a replacement's new file), when the store records one
    /// (WebDAV's `.prop`): an undo puts the earlier file back only over this one, never over a file stored since
    /// by someone else. Absent in entries written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub left: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum FileAction {
    /// A new file took the place of the earlier one (a replacement, or a rename that rewrote the archive).
    Replaced,
    /// The file was removed with its attachment, deleted for good.
    Removed,
    /// A new attachment's file, stored by the write (nothing earlier is kept): an undo that deletes the
    /// attachment removes it too, or no item would refer to it.
    Created,
}

/// Where a store keeps an earlier file for the journal entry `entry`: beside the file, as
/// `<KEY>.zip.undo-<entry>` (and `.prop.undo-<entry>`). Not ending in `.zip` or `.prop` is deliberate: Zotero
/// Desktop's "purge orphaned files" skips every other name, so it never takes a kept file for an orphan.
pub fn kept_name(file: &str, entry: &str) -> String {
    format!("{file}.undo-{entry}")
}

/// The files changed through one writer, shared with whoever made it (the request context).
#[derive(Debug, Clone, Default)]
pub struct FileLog(Rc<RefCell<Vec<FileChange>>>);

impl FileLog {
    pub(crate) fn push(&self, change: FileChange) {
        self.0.borrow_mut().push(change);
    }
    /// Whether the file of `key` was already recorded (a second write in one call keeps the first earlier file).
    pub(crate) fn has(&self, key: &str) -> bool {
        self.0.borrow().iter().any(|change| change.key == key)
    }
    /// Notes the md5 of the file a recorded change of `key` left in place.
    pub(crate) fn note_left(&self, key: &str, md5: &str) {
        for change in self.0.borrow_mut().iter_mut().filter(|c| c.key == key && c.action != FileAction::Removed) {
            change.left = Some(md5.to_owned());
        }
    }
    /// A copy of every change recorded so far, leaving them recorded: for a journal kept while the call runs.
    pub fn snapshot(&self) -> Vec<FileChange> {
        self.0.borrow().clone()
    }
    /// How many changes are recorded (and not yet taken).
    pub fn len(&self) -> usize {
        self.0.borrow().len()
    }
    pub fn is_empty(&self) -> bool {
        self.0.borrow().is_empty()
    }
    /// Takes every change recorded so far, oldest first.
    pub fn take(&self) -> Vec<FileChange> {
        std::mem::take(&mut *self.0.borrow_mut())
    }
}
