//! The file-store seam (`zotero_mcp_core::files`) as the attachment readers rely on it, with a store of files kept
//! in memory. Outside the crate's modules: tests/layout.rs would count a test module of `files` that calls the
//! readers as a circle between `files` and `attachment`.

use std::cell::Cell;

use async_trait::async_trait;
use serde_json::json;

use zotero_mcp_core::attachment::{download, read_outline, AttachmentError};
use zotero_mcp_core::files::{FileContent, FileStore, FileStoreError, StoreKind};
use zotero_mcp_core::zotero::{ObjectKey, ZoteroObject};

/// Holds at most one file, under the archive's own name, and counts what it is asked.
struct MemoryStore {
    file: Option<FileContent>,
    fetches: Cell<usize>,
}

#[async_trait(?Send)]
impl FileStore for MemoryStore {
    fn kind(&self) -> StoreKind {
        StoreKind::WebDav
    }

    fn requests_per_fetch(&self) -> usize {
        1
    }

    async fn fetch(&self, _: &ZoteroObject, _: &ObjectKey) -> Result<Option<FileContent>, FileStoreError> {
        self.fetches.set(self.fetches.get() + 1);
        Ok(self.file.clone())
    }

    async fn has_file(&self, _: &ObjectKey) -> Result<bool, FileStoreError> {
        Ok(self.file.is_some())
    }
}

fn store(file: Option<(&str, &[u8])>) -> MemoryStore {
    MemoryStore {
        file: file.map(|(name, data)| FileContent { filename: name.to_owned(), data: data.to_vec() }),
        fetches: Cell::new(0),
    }
}

fn attachment(fields: serde_json::Value) -> ZoteroObject {
    let mut data = json!({"itemType": "attachment", "linkMode": "imported_file"});
    if let (Some(data), Some(extra)) = (data.as_object_mut(), fields.as_object()) {
        data.extend(extra.clone());
    }
    serde_json::from_value(json!({"key": "ABCD2345", "version": 3, "data": data})).unwrap()
}

fn key() -> ObjectKey {
    ObjectKey::parse("ABCD2345").unwrap()
}

#[tokio::test]
async fn without_a_store_the_reader_says_what_to_set_up() {
    let error = download(None, &attachment(json!({})), &key()).await.unwrap_err();
    assert!(matches!(error, AttachmentError::NoFileStore), "{error:?}");
    assert!(error.to_string().contains("WEBDAV_URL"), "{error}");
}

#[tokio::test]
async fn a_file_the_store_lacks_is_named_with_its_store() {
    let files = store(None);
    let error = download(Some(&files), &attachment(json!({})), &key()).await.unwrap_err();
    assert!(
        matches!(&error, AttachmentError::NoFileInStore { key, store: StoreKind::WebDav } if key == "ABCD2345"),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        "no file for attachment ABCD2345 on WebDAV; sync Zotero Desktop so it uploads the file, then try again"
    );
    assert_eq!(files.fetches.get(), 1);
}

#[tokio::test]
async fn the_items_filename_wins_over_the_stored_name() {
    let files = store(Some(("stored.pdf", b"%PDF-1.4")));
    let (name, data) = download(Some(&files), &attachment(json!({"filename": "Paper.pdf"})), &key()).await.unwrap();
    assert_eq!((name.as_str(), data.as_slice()), ("Paper.pdf", b"%PDF-1.4".as_slice()));
    let (name, _) = download(Some(&files), &attachment(json!({})), &key()).await.unwrap();
    assert_eq!(name, "stored.pdf", "an item without a filename keeps the store's");
}

#[tokio::test]
async fn a_link_is_refused_before_the_store_is_asked() {
    let files = store(Some(("a.pdf", b"%PDF-1.4")));
    let linked = attachment(json!({"linkMode": "linked_file", "contentType": "application/pdf"}));
    let error = read_outline(Some(&files), &linked).await.unwrap_err();
    assert!(matches!(error, AttachmentError::Linked { .. }), "{error:?}");
    assert_eq!(files.fetches.get(), 0, "nothing is downloaded for a link");
}
