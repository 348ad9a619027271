//! Attachment files as Zotero Desktop keeps them on a WebDAV server: `<KEY>.zip` holding the one stored file,
//! and `<KEY>.prop` beside it with the file's modification time and MD5 (docs/attachments.md).
//!
//! This module knows the formats; the client that moves them over HTTP comes with the attachment tools.

mod archive;
mod prop;

pub use self::archive::{md5_hex, pack, unpack, ArchiveError, StoredFile, ZipLimits};
pub use self::prop::FileProps;
