//! Why a call may not write, decided before anything is sent: the refusals of the call's target and of its
//! confirmation step.

use zotero_mcp_core::webdav::WebDavError;
use zotero_mcp_core::zotero::{LibraryId, ZoteroError};
use zotero_mcp_core::zotero_storage::ZoteroStorageError;

use crate::config::FileStorageError;
use crate::confirm::Unconfirmed;

/// Why `RequestContext::writer` gave no writer. Nothing was sent to Zotero in either case.
#[derive(Debug, thiserror::Error)]
pub enum WriterRefused {
    /// The grant lacks `zotero:write`.
    #[error("`{tool}` needs the zotero:write scope, which this connection lacks")]
    ScopeMissing { tool: &'static str },
    /// The deployment offers no writes: `TOOL_GROUPS` leaves out `write`.
    #[error("`{tool}` changes the library, but this server is read-only (TOOL_GROUPS leaves out `write`)")]
    WritesOff { tool: &'static str },
    /// The call's `library` is one the API key may only read.
    #[error(
        "the API key may only read library {library}, so `{tool}` wrote nothing there. Give the key write access \
         to the group at zotero.org/settings/keys (and, in the group's settings, editing rights to its user)"
    )]
    ReadOnlyLibrary { library: LibraryId, tool: &'static str },
    /// The server runs on Zotero Desktop, and neither it nor the Web API takes this call's writes.
    #[error("`{tool}` wrote nothing: {reason}")]
    ReadOnlyDesktop { tool: &'static str, reason: String },
    /// The Zotero settings are incomplete (no key, a group without an id…).
    #[error(transparent)]
    Zotero(#[from] ZoteroError),
    /// The file store cannot be used (`FILE_STORAGE` or `WEBDAV_URL` unusable, the key's library not found…).
    #[error(transparent)]
    Files(#[from] FilesUnavailable),
    /// The tool declared this call one to confirm (`Tool::needs_confirmation`) but asked for a
    /// writer before `RequestContext::confirm` passed: a bug, stopped before anything was sent.
    #[error(
        "`{tool}` asks the person before this change, but was about to write without asking; nothing was \
         changed. This is a bug in the server: please report it"
    )]
    Unconfirmed { tool: &'static str },
}

/// Why `RequestContext::confirm` did not let a write go ahead. Nothing was sent to Zotero.
#[derive(Debug, thiserror::Error)]
pub enum NotConfirmed {
    /// The write would be refused anyway (no write scope, a read-only library): nobody is asked.
    #[error(transparent)]
    Writer(#[from] WriterRefused),
    /// The person is to be asked, said no, or the answer does not hold.
    #[error(transparent)]
    Unconfirmed(#[from] Unconfirmed),
}

/// Why the library's file store could not be set up for this request.
#[derive(Debug, thiserror::Error)]
pub enum FilesUnavailable {
    #[error(transparent)]
    Setting(#[from] FileStorageError),
    #[error(transparent)]
    WebDav(#[from] WebDavError),
    #[error(transparent)]
    Zotero(#[from] ZoteroError),
    #[error(transparent)]
    ZoteroStorage(#[from] ZoteroStorageError),
}
