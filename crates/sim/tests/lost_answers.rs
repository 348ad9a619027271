//! Writes whose answer is lost: the core writer reads the objects back and reports each as written (and records
//! it for the undo journal), not written, or unknown, and never sends the write again.

use std::rc::Rc;

use serde_json::{json, Value};
use zotero_mcp_core::testing::ManualClock;
use zotero_mcp_core::zotero::journal::Change;
use zotero_mcp_core::zotero::{LibraryKind, ObjectKey, ObjectKind, ZoteroError, ZoteroSettings, ZoteroWriter};
use zotero_sim::{Fault, FaultMatch, InProcess, LibraryRef, Simulator};

const USER: u64 = 4242;
const LIB: LibraryRef = LibraryRef::User(USER);

fn setup() -> (Rc<Simulator>, ZoteroWriter) {
    let sim = Rc::new(Simulator::new());
    sim.add_user(USER, "secret-key", true);
    let settings = ZoteroSettings {
        api_key: "secret-key".into(),
        library_kind: LibraryKind::User,
        library_id: Some(USER.to_string()),
        base_url: Some("https://api.zotero.org".into()),
    };
    let clock = ManualClock::at(1_800_000_000_000);
    let writer = ZoteroWriter::new(settings, Rc::new(InProcess(sim.clone())), clock).unwrap();
    (sim, writer)
}

fn book(title: &str) -> Value {
    json!({ "itemType": "book", "title": title })
}

fn on(method: http::Method) -> FaultMatch {
    FaultMatch { method: Some(method), ..FaultMatch::default() }
}

fn posts(sim: &Simulator) -> usize {
    sim.requests().iter().filter(|r| r.method == http::Method::POST).count()
}

/// The faults that apply a write and lose its answer.
fn losing_faults() -> [Fault; 3] {
    [Fault::DropAnswer, Fault::LoseAnswer { status: 500 }, Fault::LoseAnswer { status: 503 }]
}

#[tokio::test]
async fn a_created_batch_whose_answer_is_lost_is_found_written_and_recorded() {
    for fault in losing_faults() {
        let (sim, writer) = setup();
        sim.fail_matching(1, on(http::Method::POST), fault.clone());
        let outcome = writer.write_objects(ObjectKind::Items, &[book("One"), book("Two")]).await.unwrap();
        assert_eq!(outcome.success.len(), 2, "{fault:?}: {outcome:?}");
        assert!(outcome.is_complete(), "{fault:?}: {outcome:?}");
        for (position, title) in [(0, "One"), (1, "Two")] {
            let key = &outcome.success[&position];
            assert_eq!(sim.item(LIB, key).unwrap()["data"]["title"], title, "{fault:?}");
            assert_eq!(outcome.successful[&position]["data"]["title"], title, "{fault:?}");
        }
        assert_eq!(sim.items(LIB).len(), 2, "{fault:?}: nothing written twice");
        assert_eq!(posts(&sim), if fault == (Fault::LoseAnswer { status: 503 }) { 2 } else { 1 }, "{fault:?}");
        let created: Vec<String> = writer
            .log()
            .take()
            .into_iter()
            .filter_map(|change| match change {
                Change::Created { key, .. } => Some(key),
                _ => None,
            })
            .collect();
        assert_eq!(created, [outcome.success[&0].clone(), outcome.success[&1].clone()], "{fault:?}");
    }
}

#[tokio::test]
async fn new_objects_are_sent_with_their_own_key_to_be_created_only() {
    let (sim, writer) = setup();
    let outcome = writer.write_objects(ObjectKind::Items, &[book("One")]).await.unwrap();
    let sent: Vec<Value> = serde_json::from_slice(&sim.requests().last().unwrap().body).unwrap();
    assert_eq!(sent[0]["key"], outcome.success[&0].as_str());
    assert_eq!(sent[0]["version"], 0);
}

#[tokio::test]
async fn a_batch_refused_with_a_server_error_is_not_written_and_is_the_error() {
    let (sim, writer) = setup();
    sim.fail_matching(1, on(http::Method::POST), Fault::Status { status: 500 });
    let error = writer.write_objects(ObjectKind::Items, &[book("One")]).await.unwrap_err();
    assert_eq!(error.status(), Some(500), "{error}");
    assert!(sim.items(LIB).is_empty());
    assert!(writer.log().is_empty());
    assert_eq!(posts(&sim), 1, "not sent again");
}

#[tokio::test]
async fn a_lost_batch_that_cannot_be_read_back_is_unknown() {
    let (sim, writer) = setup();
    sim.fail_matching(1, on(http::Method::POST), Fault::DropAnswer);
    sim.fail_matching(1, on(http::Method::GET), Fault::Status { status: 500 });
    let error = writer.write_objects(ObjectKind::Items, &[book("One")]).await.unwrap_err();
    assert!(matches!(error, ZoteroError::OutcomeUnknown { .. }), "{error}");
    let key = sim.items(LIB)[0]["key"].as_str().unwrap().to_owned();
    assert!(error.to_string().contains(&key), "the message names the key to check: {error}");
    assert!(error.to_string().contains("is unknown"), "{error}");
    assert_eq!(posts(&sim), 1, "not sent again");
}

#[tokio::test]
async fn a_later_lost_batch_reports_its_objects_and_leaves_the_rest_unsent() {
    let (sim, writer) = setup();
    let objects: Vec<Value> = (0..120).map(|i| book(&format!("Book {i}"))).collect();
    // The second batch is applied and its answer lost; reading it back fails too.
    let second = FaultMatch { body_contains: Some("\"Book 50\"".into()), ..on(http::Method::POST) };
    sim.fail_matching(1, second, Fault::DropAnswer);
    sim.fail_matching(1, on(http::Method::GET), Fault::Status { status: 502 });
    let outcome = writer.write_objects(ObjectKind::Items, &objects).await.unwrap();
    assert_eq!(outcome.success.len(), 50);
    assert_eq!(outcome.unknown.len(), 50);
    assert!(outcome.unknown[&50].message.contains("unknown"), "{:?}", outcome.unknown[&50]);
    assert_eq!(outcome.not_sent, (100..120).collect::<Vec<_>>());
    assert!(!outcome.is_complete());
}

#[tokio::test]
async fn an_update_whose_answer_is_lost_is_found_written() {
    for fault in losing_faults() {
        let (sim, writer) = setup();
        let key = sim.insert_item(LIB, book("Old"));
        let version = sim.item(LIB, &key).unwrap()["version"].as_u64().unwrap();
        sim.fail_matching(1, on(http::Method::POST), fault.clone());
        let update = json!({ "key": key, "version": version, "title": "New" });
        let outcome = writer.write_objects(ObjectKind::Items, &[update]).await.unwrap();
        assert_eq!(outcome.success.get(&0), Some(&key), "{fault:?}: {outcome:?}");
        let changes = writer.log().take();
        assert!(
            matches!(&changes[..], [Change::Updated { before, .. }] if before["title"] == "Old"),
            "{fault:?}: {changes:?}"
        );
    }
}

#[tokio::test]
async fn a_patch_whose_answer_is_lost_is_found_written_and_one_refused_is_not() {
    for fault in losing_faults() {
        let (sim, writer) = setup();
        let key = ObjectKey::parse(&sim.insert_item(LIB, book("Old"))).unwrap();
        let version = sim.item(LIB, key.as_str()).unwrap()["version"].as_u64().unwrap();
        sim.fail_matching(1, on(http::Method::PATCH), fault.clone());
        let written = writer.patch_item(&key, version, &json!({ "title": "New" })).await.unwrap();
        assert_eq!(written, sim.item(LIB, key.as_str()).unwrap()["version"].as_u64().unwrap(), "{fault:?}");
        let changes = writer.log().take();
        assert!(matches!(&changes[..], [Change::Updated { .. }]), "{fault:?}: {changes:?}");
    }

    let (sim, writer) = setup();
    let key = ObjectKey::parse(&sim.insert_item(LIB, book("Old"))).unwrap();
    let version = sim.item(LIB, key.as_str()).unwrap()["version"].as_u64().unwrap();
    sim.fail_matching(1, on(http::Method::PATCH), Fault::Status { status: 500 });
    let error = writer.patch_item(&key, version, &json!({ "title": "New" })).await.unwrap_err();
    assert_eq!(error.status(), Some(500), "{error}");
    assert!(writer.log().is_empty(), "nothing written, nothing recorded");
    assert_eq!(sim.item(LIB, key.as_str()).unwrap()["data"]["title"], "Old");

    sim.fail_matching(1, on(http::Method::PATCH), Fault::DropAnswer);
    sim.fail_matching(1, on(http::Method::GET), Fault::Status { status: 500 });
    let error = writer.patch_item(&key, version, &json!({ "title": "New" })).await.unwrap_err();
    assert!(error.is_outcome_unknown(), "{error}");
    assert!(error.to_string().contains(key.as_str()), "{error}");
}

#[tokio::test]
async fn a_delete_whose_answer_is_lost_is_found_done_and_recorded() {
    for fault in losing_faults() {
        let (sim, writer) = setup();
        let key = ObjectKey::parse(&sim.insert_item(LIB, book("Gone"))).unwrap();
        let version = sim.item(LIB, key.as_str()).unwrap()["version"].as_u64().unwrap();
        sim.fail_matching(1, on(http::Method::DELETE), fault.clone());
        writer.delete_item(&key, version).await.unwrap();
        assert!(sim.item(LIB, key.as_str()).is_none(), "{fault:?}");
        let changes = writer.log().take();
        assert!(matches!(&changes[..], [Change::Deleted { .. }]), "{fault:?}: {changes:?}");
    }

    let (sim, writer) = setup();
    let key = ObjectKey::parse(&sim.insert_item(LIB, book("Kept"))).unwrap();
    let version = sim.item(LIB, key.as_str()).unwrap()["version"].as_u64().unwrap();
    sim.fail_matching(1, on(http::Method::DELETE), Fault::Status { status: 503 });
    sim.fail_matching(1, on(http::Method::DELETE), Fault::Status { status: 500 });
    let error = writer.delete_item(&key, version).await.unwrap_err();
    assert_eq!(error.status(), Some(500), "{error}");
    assert!(error.to_string().contains("not applied"), "read back, it is known: {error}");
    assert!(sim.item(LIB, key.as_str()).is_some());
    assert!(writer.log().is_empty());
}

#[tokio::test]
async fn a_collection_created_with_its_answer_lost_is_found_written() {
    let (sim, writer) = setup();
    sim.fail_matching(1, on(http::Method::POST), Fault::LoseAnswer { status: 500 });
    let outcome = writer.write_objects(ObjectKind::Collections, &[json!({ "name": "Reading" })]).await.unwrap();
    let key = &outcome.success[&0];
    assert_eq!(sim.collection(LIB, key).unwrap()["data"]["name"], "Reading");
    assert!(matches!(&writer.log().take()[..], [Change::Created { .. }]));
}
