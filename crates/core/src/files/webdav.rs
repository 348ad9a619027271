//! WebDAV behind the file-store seam: `<KEY>.zip` is fetched and its one file unpacked under the archive limits.

use async_trait::async_trait;

use super::{FileContent, FileStore, FileStoreError, StoreKind};
use crate::webdav::{unpack, WebDavClient, ZipLimits};
use crate::zotero::{ObjectKey, ZoteroObject};

#[async_trait(?Send)]
impl FileStore for WebDavClient {
    fn kind(&self) -> StoreKind {
        StoreKind::WebDav
    }

    fn requests_per_fetch(&self) -> usize {
        1
    }

    async fn fetch(&self, attachment: &ZoteroObject, key: &ObjectKey) -> Result<Option<FileContent>, FileStoreError> {
        let Some(zip) = self.get_zip(key).await.map_err(FileStoreError::store)? else { return Ok(None) };
        let stored = unpack(&zip, attachment.field("filename"), &ZipLimits::default())?;
        // The archive is dropped here, before the caller parses the file: one copy of the bytes at a time.
        drop(zip);
        Ok(Some(FileContent { filename: stored.filename, data: stored.data }))
    }

    async fn has_file(&self, key: &ObjectKey) -> Result<bool, FileStoreError> {
        self.has_zip(key).await.map_err(FileStoreError::store)
    }
}
