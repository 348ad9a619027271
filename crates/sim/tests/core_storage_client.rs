//! The core's Zotero Storage client (`zotero_mcp_core::zotero_storage`) against the simulator's file endpoints,
//! in process: both are written from Zotero's documented protocol, and this is where they must agree — the
//! three-step upload, the download through the redirect, the preconditions, and the key never reaching the
//! storage origin (which answers 403 to any request carrying it, so a leak fails the test).

use std::rc::Rc;

use serde_json::json;
use zotero_mcp_core::testing::StoppedClock;
use zotero_mcp_core::zotero::{LibraryKind, ObjectKey, ZoteroObject, ZoteroSettings};
use zotero_mcp_core::zotero_storage::{
    FileUpload, Precondition, StoragePolicy, ZoteroStorageError, ZoteroStorageWriter,
};
use zotero_sim::{InProcess, LibraryRef, Simulator};

const KEY: &str = "storage-key";
const LIB: LibraryRef = LibraryRef::User(1);

fn settings() -> ZoteroSettings {
    ZoteroSettings {
        api_key: KEY.into(),
        library_kind: LibraryKind::User,
        library_id: Some("1".into()),
        base_url: None,
    }
}

fn setup() -> (Rc<Simulator>, ZoteroStorageWriter, String) {
    let sim = Rc::new(Simulator::new());
    sim.add_user(1, KEY, true);
    sim.set_file_access(KEY, true);
    let parent = sim.insert_item(LIB, json!({"itemType": "journalArticle", "title": "A paper"}));
    let attachment = sim.insert_item(
        LIB,
        json!({"itemType": "attachment", "parentItem": parent, "linkMode": "imported_file",
               "title": "Full Text PDF", "contentType": "application/pdf", "filename": "paper.pdf"}),
    );
    let http = Rc::new(InProcess(Rc::clone(&sim)));
    let writer =
        ZoteroStorageWriter::new(&settings(), "/users/1", http, Rc::new(StoppedClock(0)), StoragePolicy::default())
            .unwrap();
    (sim, writer, attachment)
}

fn item(sim: &Simulator, key: &str) -> ZoteroObject {
    serde_json::from_value(sim.item(LIB, key).unwrap()).unwrap()
}

fn upload(data: &[u8], precondition: Precondition) -> FileUpload {
    FileUpload {
        filename: "paper.pdf".into(),
        data: data.to_vec(),
        mtime_ms: 1_700_000_000_000,
        zipped: false,
        precondition,
    }
}

#[tokio::test]
async fn a_file_stored_by_the_client_reads_back_through_the_redirect_without_the_key() {
    let (sim, writer, key) = setup();
    let object_key = ObjectKey::parse(&key).unwrap();
    let before = item(&sim, &key).version;

    let stored = writer.upload(&object_key, upload(b"%PDF-1.4 first", Precondition::NewFile)).await.unwrap();
    assert!(!stored.already_stored);
    let after = item(&sim, &key);
    assert_eq!(after.field("md5"), Some(stored.md5.as_str()), "registration records the md5 on the item");
    assert!(after.version > before, "registration bumps the item's version");
    assert_eq!(sim.stored_file(LIB, &key).as_deref(), Some(b"%PDF-1.4 first".as_slice()));

    let read = writer.download(&after).await.unwrap();
    assert_eq!(read.data, b"%PDF-1.4 first");
    assert_eq!(read.md5, stored.md5);
    // The storage origin saw requests (the upload and the download), none with the key: it would have refused.
    let storage = sim.storage_requests();
    assert!(storage.len() >= 2, "{storage:?}");
    for request in &storage {
        let carries_key = request.headers.iter().any(|(name, value)| {
            name.eq_ignore_ascii_case("zotero-api-key") || name.eq_ignore_ascii_case("authorization") || value == KEY
        });
        assert!(!carries_key, "the key reached the storage origin: {request:?}");
    }
}

#[tokio::test]
async fn a_replacement_names_the_stored_md5_and_a_stale_one_changes_nothing() {
    let (sim, writer, key) = setup();
    let object_key = ObjectKey::parse(&key).unwrap();
    let first = writer.upload(&object_key, upload(b"%PDF-1.4 first", Precondition::NewFile)).await.unwrap();

    // A second "new file" is refused: the attachment has one now.
    let again = writer.upload(&object_key, upload(b"%PDF-1.4 other", Precondition::NewFile)).await.unwrap_err();
    assert!(matches!(again, ZoteroStorageError::Changed { .. }), "{again:?}");

    let second =
        writer.upload(&object_key, upload(b"%PDF-1.4 second", Precondition::Replaces(first.md5.clone()))).await;
    let second = second.unwrap();
    assert_eq!(item(&sim, &key).field("md5"), Some(second.md5.as_str()));

    // Replacing "first" again is stale now: refused, and the stored file stays the second.
    let stale = writer.upload(&object_key, upload(b"%PDF-1.4 third", Precondition::Replaces(first.md5))).await;
    assert!(matches!(stale, Err(ZoteroStorageError::Changed { .. })), "{stale:?}");
    assert_eq!(sim.stored_file(LIB, &key).as_deref(), Some(b"%PDF-1.4 second".as_slice()));
}

#[tokio::test]
async fn a_file_without_storage_says_to_sync_and_a_key_without_file_access_is_told_which_permission() {
    let (sim, writer, key) = setup();
    let missing = writer.download(&item(&sim, &key)).await.unwrap_err();
    assert!(matches!(missing, ZoteroStorageError::NoFile { .. }), "{missing:?}");
    assert!(missing.to_string().contains("Zotero Desktop"), "{missing}");

    sim.store_file(LIB, &key, "paper.pdf", b"%PDF-1.4 synced by Desktop");
    sim.set_file_access(KEY, false);
    let denied = writer.download(&item(&sim, &key)).await.unwrap_err();
    assert!(matches!(denied, ZoteroStorageError::ReadDenied { .. }), "{denied:?}");
}

/// Zotero Storage behind the file-store seam (`zotero_mcp_core::files`), as the attachment readers use it.
#[tokio::test]
async fn behind_the_file_store_seam_a_stored_file_is_fetched_and_a_missing_one_is_none() {
    use zotero_mcp_core::attachment::{download, AttachmentError};
    use zotero_mcp_core::files::{FileStore, StoreKind};

    let (sim, writer, key) = setup();
    let object_key = ObjectKey::parse(&key).unwrap();
    let store: &dyn FileStore = &*writer;
    assert_eq!(store.kind(), StoreKind::ZoteroStorage);
    assert_eq!(store.requests_per_fetch(), 2, "the API's redirect and the storage origin");

    assert!(!store.has_file(&object_key).await.unwrap());
    let missing = download(Some(store), &item(&sim, &key), &object_key).await.unwrap_err();
    assert!(matches!(&missing, AttachmentError::NoFileInStore { store: StoreKind::ZoteroStorage, .. }), "{missing:?}");
    assert!(missing.to_string().contains("on Zotero Storage; sync Zotero Desktop"), "{missing}");

    sim.store_file(LIB, &key, "paper.pdf", b"%PDF-1.4 synced by Desktop");
    let requests_before = sim.storage_requests().len();
    assert!(store.has_file(&object_key).await.unwrap());
    assert_eq!(sim.storage_requests().len(), requests_before, "has_file downloads nothing");
    let (name, data) = download(Some(store), &item(&sim, &key), &object_key).await.unwrap();
    assert_eq!((name.as_str(), data.as_slice()), ("paper.pdf", b"%PDF-1.4 synced by Desktop".as_slice()));
}
