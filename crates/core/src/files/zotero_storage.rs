//! Zotero Storage behind the file-store seam: the file API's download, its redirect followed by hand
//! ([`crate::zotero_storage`]), the md5 checked, a zipped snapshot unpacked.

use async_trait::async_trait;

use super::{FileContent, FileStore, FileStoreError, StoreKind};
use crate::zotero::{ObjectKey, ZoteroObject};
use crate::zotero_storage::{ZoteroStorage, ZoteroStorageError};

#[async_trait(?Send)]
impl FileStore for ZoteroStorage {
    fn kind(&self) -> StoreKind {
        StoreKind::ZoteroStorage
    }

    /// The API's answer (a redirect) and the storage origin's.
    fn requests_per_fetch(&self) -> usize {
        2
    }

    async fn fetch(&self, attachment: &ZoteroObject, _: &ObjectKey) -> Result<Option<FileContent>, FileStoreError> {
        match self.download(attachment).await {
            Ok(file) => Ok(Some(FileContent {
                filename: file.filename.unwrap_or_else(|| attachment.key.clone()),
                data: file.data,
            })),
            Err(ZoteroStorageError::NoFile { .. }) => Ok(None),
            Err(error) => Err(FileStoreError::store(error)),
        }
    }

    async fn has_file(&self, key: &ObjectKey) -> Result<bool, FileStoreError> {
        self.file_exists(key).await.map_err(FileStoreError::store)
    }
}
