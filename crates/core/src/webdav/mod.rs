//! Attachment files as Zotero Desktop keeps them on a WebDAV server: `<KEY>.zip` holding the one stored file,
//! and `<KEY>.prop` beside it with the file's modification time and MD5 (docs/attachments.md).
//!
//! `archive` and `prop` know the formats; `client` moves them over the HTTP seam.

mod archive;
mod client;
mod prop;

pub use self::archive::{md5_hex, pack, unpack, ArchiveError, StoredFile, ZipLimits};
pub use self::client::{
    folder_url, WebDavClient, WebDavError, WebDavHealth, WebDavPolicy, WebDavSettings, WebDavWriter, MAX_DOWNLOAD_BYTES,
};
pub use self::prop::FileProps;

#[cfg(test)]
mod tests;
