//! Zotero Desktop's local API as the simulator imitates it (`zotero_sim::local`), and the core's desktop client
//! against it: each difference from the Web API that seed 004 and Zotero's `server_localAPI.js` document, and
//! what the client does about it.

use std::rc::Rc;

use serde_json::{json, Value};
use zotero_mcp_core::testing::ManualClock;
use zotero_mcp_core::zotero::local::{self, LocalApiAccess, LocalKey};
use zotero_mcp_core::zotero::{LibraryId, LibraryKind, ObjectKey, ObjectKind, ZoteroError, ZoteroWriter};
use zotero_mcp_core::zotero_storage::{FileUpload, Precondition, StoragePolicy, ZoteroStorageWriter};
use zotero_sim::local::{
    DialogAnswer, Flavour, InProcessLocal, LocalApi, EDITED_SINCE_SYNC, LINKED_KEY, NEVER_SYNCED, SERVER_ID,
};
use zotero_sim::{LibraryRef, Simulator, DEMO_API_KEY, DEMO_USER_ID};

const BASE: &str = "http://localhost:23119/api";
const LIB: LibraryRef = LibraryRef::User(DEMO_USER_ID);
/// A PDF attachment of the demo library with annotations.
const ANNOTATED_PDF: &str = "93WJRKG5";

fn desktop(flavour: Flavour) -> Rc<LocalApi> {
    Rc::new(LocalApi::new(Rc::new(Simulator::demo()), flavour, DEMO_USER_ID, DEMO_API_KEY))
}

fn request(method: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> http::Request<Vec<u8>> {
    let mut builder = http::Request::builder().method(method).uri(format!("http://localhost:23119{path}"));
    for (name, value) in headers {
        builder = builder.header(*name, *value);
    }
    builder.body(body.to_vec()).unwrap()
}

fn get(api: &LocalApi, path: &str) -> http::Response<Vec<u8>> {
    api.handle(request("GET", path, &[], b""))
}

fn body(response: &http::Response<Vec<u8>>) -> String {
    String::from_utf8_lossy(response.body()).into_owned()
}

fn header<'a>(response: &'a http::Response<Vec<u8>>, name: &str) -> Option<&'a str> {
    response.headers().get(name).and_then(|v| v.to_str().ok())
}

fn clients(api: &Rc<LocalApi>, server_id: Option<&str>) -> (ZoteroWriter, Rc<LocalKey>) {
    let key = Rc::new(LocalKey::default());
    let access = LocalApiAccess { server_id: server_id.map(str::to_owned), key: key.clone(), call: Rc::default() };
    let writer = ZoteroWriter::for_desktop(
        BASE,
        LibraryId { kind: LibraryKind::User, id: 0 },
        access,
        Rc::new(InProcessLocal(api.clone())),
        ManualClock::at(1_800_000_000_000),
    );
    (writer, key)
}

fn note(text: &str) -> Value {
    json!({ "itemType": "note", "note": format!("<p>{text}</p>"), "tags": [], "collections": [], "relations": {} })
}

#[test]
fn the_root_names_the_running_zotero_and_only_zotero_10_names_its_instance() {
    let ten = get(&desktop(Flavour::Zotero10), "/api/");
    assert_eq!((ten.status().as_u16(), body(&ten).as_str()), (200, "Nothing to see here."));
    assert_eq!(header(&ten, "x-zotero-version"), Some("10.0.2"));
    assert_eq!(header(&ten, "zotero-server-id"), Some(SERVER_ID));
    let seven = get(&desktop(Flavour::Zotero7), "/api/");
    assert_eq!(header(&seven, "x-zotero-version"), Some("7.0.15"));
    assert_eq!(header(&seven, "zotero-server-id"), None);
}

#[test]
fn the_user_library_is_users_0_and_there_are_no_keys_and_no_deletions() {
    let api = desktop(Flavour::Zotero10);
    let items = get(&api, "/api/users/0/items/top?limit=3");
    assert_eq!(items.status(), 200);
    assert_eq!(serde_json::from_slice::<Vec<Value>>(items.body()).unwrap().len(), 3);
    assert!(header(&items, "total-results").is_some());
    let other = get(&api, "/api/users/99/items");
    assert_eq!(other.status(), 400);
    assert!(body(&other).contains("use userID 0"), "{}", body(&other));
    assert_eq!(get(&api, "/api/keys/current").status(), 404);
    assert_eq!(get(&api, "/api/users/0/deleted?since=0").status(), 404);
    assert_eq!(get(&api, "/users/0/items").status(), 404, "everything is under /api/");
}

#[test]
fn a_bare_children_listing_leaves_annotations_out() {
    let api = desktop(Flavour::Zotero10);
    let bare = get(&api, &format!("/api/users/0/items/{ANNOTATED_PDF}/children"));
    assert_eq!(serde_json::from_slice::<Vec<Value>>(bare.body()).unwrap().len(), 0);
    let typed = get(&api, &format!("/api/users/0/items/{ANNOTATED_PDF}/children?itemType=annotation"));
    let annotations: Vec<Value> = serde_json::from_slice(typed.body()).unwrap();
    assert!(annotations.len() >= 4, "{annotations:?}");
    // The Web API gives them either way.
    let web = api.simulator().handle(
        http::Request::get(format!("https://api.zotero.org/users/{DEMO_USER_ID}/items/{ANNOTATED_PDF}/children"))
            .header("zotero-api-key", DEMO_API_KEY)
            .body(Vec::new())
            .unwrap(),
    );
    assert_eq!(serde_json::from_slice::<Vec<Value>>(web.body()).unwrap().len(), annotations.len());
}

#[test]
fn the_fulltext_listing_sends_no_library_version() {
    let api = desktop(Flavour::Zotero10);
    let listing = get(&api, "/api/users/0/fulltext?since=0");
    assert_eq!(listing.status(), 200);
    assert_eq!(header(&listing, "last-modified-version"), None);
    assert!(header(&get(&api, "/api/users/0/items?limit=1"), "last-modified-version").is_some());
}

#[test]
fn writes_need_the_instance_and_a_local_key() {
    let api = desktop(Flavour::Zotero10);
    let batch = serde_json::to_vec(&[note("n")]).unwrap();
    let no_id = api.handle(request("POST", "/api/users/0/items", &[], &batch));
    assert_eq!(no_id.status(), 428);
    let other = api.handle(request("GET", "/api/users/0/items", &[("zotero-server-id", "AnotherOne12")], b""));
    assert_eq!(other.status(), 412, "a read naming another instance is refused too");
    let no_key = api.handle(request("POST", "/api/users/0/items", &[("zotero-server-id", SERVER_ID)], &batch));
    assert_eq!(no_key.status(), 401);
    assert!(body(&no_key).contains("/api/local/authorize"));
    let forged = [("zotero-server-id", SERVER_ID), ("zotero-api-key", DEMO_API_KEY)];
    assert_eq!(
        api.handle(request("POST", "/api/users/0/items", &forged, &batch)).status(),
        401,
        "a Web API key is no local key"
    );
    assert_eq!(api.simulator().items(LIB).len(), Simulator::demo().items(LIB).len(), "nothing was written");
}

#[test]
fn zotero_7_takes_no_writes_and_a_switched_off_api_answers_403() {
    let seven = desktop(Flavour::Zotero7);
    let refused = seven.handle(request("POST", "/api/users/0/items", &[], b"[]"));
    assert_eq!((refused.status().as_u16(), body(&refused).as_str()), (400, "Endpoint does not support method\n"));
    assert_eq!(seven.handle(request("POST", "/api/local/authorize", &[], b"{}")).status(), 400);
    let off = desktop(Flavour::Zotero10);
    off.set_enabled(false);
    let answer = get(&off, "/api/users/0/items");
    assert_eq!((answer.status().as_u16(), body(&answer).as_str()), (403, "Local API is not enabled"));
}

#[test]
fn too_many_dialogs_in_a_minute_are_refused() {
    let api = desktop(Flavour::Zotero10);
    let ask = || {
        api.handle(request("POST", "/api/local/authorize", &[("zotero-server-id", SERVER_ID)], br#"{"appName":"t"}"#))
    };
    for _ in 0..5 {
        assert_eq!(ask().status(), 200);
    }
    let limited = ask();
    assert_eq!(limited.status(), 429);
    assert!(header(&limited, "retry-after").is_some());
}

#[tokio::test]
async fn the_probe_tells_zotero_10_from_7_by_its_instance_id() {
    let clock = ManualClock::at(0);
    for (flavour, writes) in [(Flavour::Zotero10, true), (Flavour::Zotero7, false)] {
        let http = InProcessLocal(desktop(flavour));
        let info = local::probe(&http, clock.as_ref(), BASE).await.unwrap();
        assert_eq!(info.accepts_writes(), writes, "{flavour:?}");
        assert_eq!(info.version.as_deref(), Some(flavour.version()));
    }
    let off = desktop(Flavour::Zotero10);
    off.set_enabled(false);
    let refused = local::probe(&InProcessLocal(off), clock.as_ref(), BASE).await.unwrap_err();
    assert!(matches!(refused, ZoteroError::LocalApiOff { .. }), "{refused}");
    assert!(refused.to_string().contains("Allow other applications on this computer"), "{refused}");
}

#[tokio::test]
async fn the_client_reads_annotations_among_an_attachments_children() {
    let api = desktop(Flavour::Zotero10);
    let (writer, _) = clients(&api, Some(SERVER_ID));
    let children = writer.children(&ObjectKey::parse(ANNOTATED_PDF).unwrap(), 100).await.unwrap();
    let annotations = children.items.iter().filter(|c| c.field("itemType") == Some("annotation")).count();
    assert!(annotations >= 4, "asked for by type, alongside the bare listing: {annotations}");
    let asked: Vec<String> = api.requests().iter().map(|r| r.target.clone()).collect();
    assert!(asked.iter().any(|t| t.contains("itemType=annotation")), "{asked:?}");
}

#[tokio::test]
async fn the_client_says_deletions_cannot_be_read_rather_than_none() {
    let api = desktop(Flavour::Zotero10);
    let (writer, _) = clients(&api, Some(SERVER_ID));
    let error = writer.deleted(0).await.unwrap_err();
    assert_eq!(error.status(), Some(404), "{error}");
}

#[tokio::test]
async fn an_always_allow_key_is_asked_for_once_and_kept() {
    let api = desktop(Flavour::Zotero10);
    let (writer, key) = clients(&api, Some(SERVER_ID));
    for text in ["first", "second"] {
        let outcome = writer.write_objects(ObjectKind::Items, &[note(text)]).await.unwrap();
        assert!(outcome.is_complete(), "{outcome:?}");
    }
    assert_eq!((api.dialogs_shown(), key.asked()), (1, 1));
}

#[tokio::test]
async fn an_allow_once_key_is_spent_and_the_next_write_asks_again_once() {
    let api = desktop(Flavour::Zotero10);
    api.answer_dialogs(DialogAnswer::Allow);
    let (writer, _) = clients(&api, Some(SERVER_ID));
    writer.write_objects(ObjectKind::Items, &[note("one")]).await.unwrap();
    writer.write_objects(ObjectKind::Items, &[note("two")]).await.unwrap();
    assert_eq!(api.dialogs_shown(), 2, "the spent key's 401 was answered by one fresh dialog");
    let written = api.simulator().items(LIB).iter().filter(|i| i["data"]["itemType"] == "note").count();
    let demo_notes = Simulator::demo().items(LIB).iter().filter(|i| i["data"]["itemType"] == "note").count();
    assert_eq!(written, demo_notes + 2, "each note written once");
}

#[tokio::test]
async fn deny_writes_nothing_and_says_so() {
    let api = desktop(Flavour::Zotero10);
    api.answer_dialogs(DialogAnswer::Deny);
    let (writer, _) = clients(&api, Some(SERVER_ID));
    let before = api.simulator().library_version(LIB);
    let error = writer.write_objects(ObjectKind::Items, &[note("no")]).await.unwrap_err();
    assert!(matches!(error, ZoteroError::LocalWriteDenied { part_way: false }), "{error}");
    assert_eq!(api.simulator().library_version(LIB), before);
}

#[tokio::test]
async fn a_client_of_another_instance_is_told_to_restart() {
    let api = desktop(Flavour::Zotero10);
    let (writer, _) = clients(&api, Some("NotThisOne12"));
    let error = writer.item(&ObjectKey::parse(ANNOTATED_PDF).unwrap()).await.unwrap_err();
    assert!(matches!(error, ZoteroError::DesktopChanged { .. }), "{error}");
}

#[tokio::test]
async fn a_file_stored_through_zotero_10_lands_in_the_data_directory() {
    let dir = std::env::temp_dir().join(format!("zotero-sim-local-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let api = Rc::new(
        LocalApi::new(Rc::new(Simulator::demo()), Flavour::Zotero10, DEMO_USER_ID, DEMO_API_KEY)
            .with_data_dir(dir.clone())
            .unwrap(),
    );
    assert!(dir.join("zotero.sqlite").exists());
    let pdf = api.simulator().item(LIB, "A6JVMAK4").unwrap();
    let stored = dir.join("storage/A6JVMAK4").join(pdf["data"]["filename"].as_str().unwrap());
    assert!(stored.exists(), "the demo's files are in storage/<KEY>/: {}", stored.display());
    let linked = api.simulator().item(LIB, LINKED_KEY).unwrap();
    assert!(std::path::Path::new(linked["data"]["path"].as_str().unwrap()).exists());

    let sim = api.simulator();
    let attachment = sim.insert_item(
        LIB,
        json!({"itemType": "attachment", "parentItem": "6FEP7ILJ", "linkMode": "imported_file",
               "title": "New.pdf", "contentType": "application/pdf", "filename": "New.pdf"}),
    );
    let key = Rc::new(LocalKey::default());
    let access = LocalApiAccess { server_id: Some(SERVER_ID.into()), key: key.clone(), call: Rc::default() };
    let storage = ZoteroStorageWriter::for_desktop(
        BASE,
        "/users/0",
        access,
        Rc::new(InProcessLocal(api.clone())),
        ManualClock::at(1_800_000_000_000),
        StoragePolicy::default(),
    )
    .unwrap();
    let data = b"%PDF-1.4 new file".to_vec();
    let upload = FileUpload {
        filename: "New.pdf".into(),
        data: data.clone(),
        mtime_ms: 1_800_000_000_000,
        zipped: false,
        precondition: Precondition::NewFile,
    };
    let stored = storage.upload(&ObjectKey::parse(&attachment).unwrap(), upload.clone()).await.unwrap();
    assert_eq!(std::fs::read(dir.join("storage").join(&attachment).join("New.pdf")).unwrap(), data);
    assert_eq!(sim.item(LIB, &attachment).unwrap()["data"]["md5"], stored.md5.as_str());
    assert_eq!(key.asked(), 1, "one dialog for the whole upload (Always Allow)");
    let targets: Vec<String> = api.requests().iter().map(|r| r.target.clone()).collect();
    assert!(targets.iter().any(|t| t.starts_with("/api/local/uploads/")), "{targets:?}");
    // A second upload under a stale precondition is refused, the file on disk unchanged.
    let stale = FileUpload { data: b"other".to_vec(), ..upload };
    let refused = storage.upload(&ObjectKey::parse(&attachment).unwrap(), stale).await;
    assert!(refused.is_err());
    assert_eq!(std::fs::read(dir.join("storage").join(&attachment).join("New.pdf")).unwrap(), data);
    let _ = std::fs::remove_dir_all(&dir);
    let _ =
        std::fs::remove_dir_all(dir.with_file_name(format!("{}-papers", dir.file_name().unwrap().to_string_lossy())));
}

#[tokio::test]
async fn a_sixth_dialog_in_a_minute_is_refused_with_when_to_try_again_and_nothing_written() {
    let api = desktop(Flavour::Zotero10);
    api.answer_dialogs(DialogAnswer::Allow);
    let (writer, _) = clients(&api, Some(SERVER_ID));
    for i in 0..5 {
        writer.write_objects(ObjectKind::Items, &[note(&format!("note {i}"))]).await.unwrap();
    }
    let before = api.simulator().library_version(LIB);
    let error = writer.write_objects(ObjectKind::Items, &[note("one too many")]).await.unwrap_err();
    assert!(
        matches!(error, ZoteroError::Unavailable { status: 429, retry_after_secs, .. } if retry_after_secs >= 1),
        "{error}"
    );
    assert_eq!(api.simulator().library_version(LIB), before, "the write that found no key was not sent");
    assert_eq!(api.dialogs_shown(), 5, "the refused sixth is not a dialog shown");
}

/// Zotero's two hashes: the `md5` reported is the file on disk's, `If-Match` is checked against the synced hash
/// (server_localAPI.js, authorizeUpload), which a local-API upload sets; a file already there is `exists`.
#[test]
fn an_upload_is_checked_against_the_synced_hash_not_the_md5_reported() {
    let api = desktop(Flavour::Zotero10);
    let dialog =
        api.handle(request("POST", "/api/local/authorize", &[("zotero-server-id", SERVER_ID)], br#"{"appName":"t"}"#));
    let key = serde_json::from_slice::<Value>(dialog.body()).unwrap()["key"].as_str().unwrap().to_owned();
    let authorize = |item: &str, precondition: (&str, &str), md5: &str| {
        let headers = [
            ("zotero-server-id", SERVER_ID),
            ("zotero-api-key", key.as_str()),
            ("content-type", "application/x-www-form-urlencoded"),
            precondition,
        ];
        let form = format!("md5={md5}&filename=f.pdf&filesize=3&mtime=1800000000000");
        api.handle(request("POST", &format!("/api/users/0/items/{item}/file"), &headers, form.as_bytes()))
    };
    let md5_of = |item: &str| api.simulator().item(LIB, item).unwrap()["data"]["md5"].as_str().unwrap().to_owned();
    let other = "0123456789abcdef0123456789abcdef";

    // Never synced: no synced hash, whatever md5 the file on disk has.
    assert_eq!(api.synced_hash(LIB, NEVER_SYNCED), None);
    let refused = authorize(NEVER_SYNCED, ("if-match", &md5_of(NEVER_SYNCED)), other);
    assert_eq!((refused.status().as_u16(), body(&refused).as_str()), (412, "If-Match set but file does not exist"));
    assert_eq!(authorize(NEVER_SYNCED, ("if-none-match", "*"), other).status(), 200);

    // Edited since its sync: the md5 reported is not the synced hash.
    let synced = api.synced_hash(LIB, EDITED_SINCE_SYNC).unwrap();
    assert_ne!(synced, md5_of(EDITED_SINCE_SYNC));
    let refused = authorize(EDITED_SINCE_SYNC, ("if-match", &md5_of(EDITED_SINCE_SYNC)), other);
    assert_eq!(
        (refused.status().as_u16(), body(&refused).as_str()),
        (412, "ETag does not match current version of file")
    );
    assert_eq!(authorize(EDITED_SINCE_SYNC, ("if-match", &synced), other).status(), 200);
    // The bytes already on disk need no upload, and are now the synced ones.
    let on_disk = md5_of(EDITED_SINCE_SYNC);
    let exists = authorize(EDITED_SINCE_SYNC, ("if-match", &synced), &on_disk);
    assert_eq!(body(&exists), r#"{"exists":1}"#);
    assert_eq!(api.synced_hash(LIB, EDITED_SINCE_SYNC), Some(on_disk));

    // Any other demo file is synced as it is.
    assert_eq!(api.synced_hash(LIB, ANNOTATED_PDF), Some(md5_of(ANNOTATED_PDF)));
}

/// A group whose file editing is off: the local API refuses any upload to it before its preconditions
/// (handleFileWrite: "File editing denied"), and the Web API says it its own way.
#[test]
fn a_group_without_file_editing_refuses_uploads_on_both_apis() {
    use zotero_sim::demo_groups::{LAB_GROUP, LAB_PDF};
    let sim = Rc::new(Simulator::demo());
    sim.add_demo_groups(DEMO_API_KEY);
    sim.set_group_file_editing(LAB_GROUP, false);
    let api = LocalApi::new(sim.clone(), Flavour::Zotero10, DEMO_USER_ID, DEMO_API_KEY);
    let dialog =
        api.handle(request("POST", "/api/local/authorize", &[("zotero-server-id", SERVER_ID)], br#"{"appName":"t"}"#));
    let key = serde_json::from_slice::<Value>(dialog.body()).unwrap()["key"].as_str().unwrap().to_owned();
    let form = b"md5=0123456789abcdef0123456789abcdef&filename=f.pdf&filesize=3&mtime=1800000000000";
    let headers = [
        ("zotero-server-id", SERVER_ID),
        ("zotero-api-key", key.as_str()),
        ("content-type", "application/x-www-form-urlencoded"),
        ("if-none-match", "*"),
    ];
    let path = format!("/api/groups/{LAB_GROUP}/items/{LAB_PDF}/file");
    let local = api.handle(request("POST", &path, &headers, form));
    assert_eq!((local.status().as_u16(), body(&local).as_str()), (403, "File editing denied"));

    let web = sim.handle(
        http::Request::builder()
            .method("POST")
            .uri(format!("https://api.zotero.org/groups/{LAB_GROUP}/items/{LAB_PDF}/file"))
            .header("zotero-api-key", DEMO_API_KEY)
            .header("content-type", "application/x-www-form-urlencoded")
            .header("if-none-match", "*")
            .body(form.to_vec())
            .unwrap(),
    );
    assert_eq!((web.status().as_u16(), body(&web).as_str()), (403, "You do not have file editing access"));
}
