//! Attachment files on Zotero Storage, through the Web API's file endpoint (`{library}/items/{key}/file`), as
//! Zotero documents it (dev/web_api/v3/file_upload) and as Zotero Desktop uses it (`xpcom/storage/zfs.js`;
//! the server side in the dataserver's `ItemsController::_handleFileRequest`).
//!
//! **Reading.** `GET …/file` with the key answers 302 to a short-lived signed URL on another origin (S3), with
//! `Zotero-File-MD5`, `Zotero-File-Modification-Time`, `Zotero-File-Size` and `Zotero-File-Compressed`; 404
//! when Zotero has no file. Runtimes keep custom headers across redirects, so both HTTP seams return redirects
//! unfollowed (the Worker's `redirect: "manual"`, reqwest's `Policy::none()`) and [`ZoteroStorage::download`]
//! follows them itself: the API key goes in the first request only, never to the storage origin.
//!
//! **Zipped files.** Desktop uploads zipped the imported attachments whose content type is `text/*` (HTML
//! snapshots) and those with several files: `md5` and `filename` are then the main file's, `zipMD5` and
//! `zipFilename` (`<KEY>.zip`) the archive's, and `filesize` the archive's size; the download says
//! `Zotero-File-Compressed: Yes` and is unpacked. Here with WebDAV's archive rules (`webdav::unpack`).
//!
//! **Storing.** Authorization (`POST …/file`, form-encoded, `If-None-Match: *` for a first file or `If-Match:
//! <md5 stored now>` for a replacement) answers `{"exists": 1}` when Zotero already holds these bytes (done),
//! or `{url, contentType, prefix, suffix, uploadKey}`; then prefix + file + suffix go to `url` (Desktop expects
//! 201), then `upload=<uploadKey>` under the same precondition registers the file on the item (204 with
//! `Last-Modified-Version`). Desktop does not send `params=1` (which asks for multipart form fields instead of
//! prefix/suffix), and neither does this client. Zotero's statuses: 403 no file-write access (or, in a group,
//! no file editing), 404 no such item, 412 the stored file is not the one the precondition names (with the
//! item's version in `Last-Modified-Version`, or without when `If-Match` named a file the server does not have:
//! Desktop then asks again as a new file), 413 over quota (`Zotero-Storage-Usage`/`-Quota` in MB), 429 "Too many queued
//! uploads" with `Retry-After` (the dataserver's answer to an API client; 413 with `Retry-After` is its answer
//! to the old HTTP-auth client, read the same way), 428 no precondition. The authorization and the
//! registration are retried after a 429 or 503 as every Zotero step safe to repeat is (their precondition makes
//! them so), within [`crate::zotero::RetryPolicy`]'s bound; past it, and for every other status, each is a
//! typed [`ZoteroStorageError`] saying what to do.
//!
//! **Renaming**, as Desktop does it on Zotero Storage: the local file is renamed and the item's `filename`
//! changes (`Item.relinkAttachmentFile`, synced as an ordinary item write); the file's bytes, md5 and mtime do
//! not change, so nothing is uploaded again. The stored copy keeps its old name on storage, and a download
//! saves it under the item's `filename`. So a rename is only an item write (the existing `ZoteroWriter`), no
//! call of this module.
//!
//! **Deleting**: deleting the attachment item (`DELETE …/items/{key}`) removes its file with it: the server
//! drops the item's file record and its size from the library's storage usage. There is no per-file delete in
//! the API (Desktop's `removestoragefiles` purges a whole library), so this module has none either.

mod client;
mod desktop;
mod download;
mod error;
mod upload;

pub use self::client::{StoragePolicy, ZoteroStorage, ZoteroStorageWriter};
pub use self::download::DownloadedFile;
pub use self::error::{UnansweredStep, ZoteroStorageError};
pub use self::upload::{FileUpload, Precondition, UploadedFile};

#[cfg(test)]
mod tests;
