//! The core Zotero client against the simulator: the same behaviours as its stubbed unit tests, now with
//! Zotero's semantics on the other side (versions, 412s, per-object batch results, pagination headers).

use std::rc::Rc;

use serde_json::{json, Value};
use zotero_mcp_core::testing::ManualClock;
use zotero_mcp_core::zotero::{
    LibraryKind, ObjectKey, ObjectKind, QMode, Query, ZoteroError, ZoteroSettings, ZoteroWriter,
};
use zotero_sim::{Fault, InProcess, LibraryRef, Simulator};

const USER: u64 = 4242;
const LIB: LibraryRef = LibraryRef::User(USER);

fn setup() -> (Rc<Simulator>, ZoteroWriter, Rc<ManualClock>) {
    let sim = Rc::new(Simulator::new());
    sim.add_user(USER, "secret-key", true);
    let clock = ManualClock::at(1_800_000_000_000);
    let settings = ZoteroSettings {
        api_key: "secret-key".into(),
        library_kind: LibraryKind::User,
        library_id: None,
        base_url: Some("https://api.zotero.org".into()),
    };
    let client = ZoteroWriter::new(settings, Rc::new(InProcess(sim.clone())), clock.clone()).unwrap();
    (sim, client, clock)
}

fn key(k: &str) -> ObjectKey {
    ObjectKey::parse(k).unwrap()
}

fn book(title: &str) -> Value {
    json!({ "itemType": "book", "title": title, "creators": [], "tags": [], "collections": [], "relations": {} })
}

#[tokio::test]
async fn finds_the_library_from_the_key_and_creates_items_in_three_batches() {
    let (sim, client, _) = setup();
    let objects: Vec<Value> = (0..120).map(|i| book(&format!("Book {i:03}"))).collect();
    let outcome = client.write_objects(ObjectKind::Items, &objects).await.unwrap();
    assert!(outcome.is_complete(), "{outcome:?}");
    assert_eq!(outcome.success.len(), 120);
    // Position 75 is index 25 of the second batch.
    let key75 = &outcome.success[&75];
    assert_eq!(sim.item(LIB, key75).unwrap()["data"]["title"], "Book 075");
    let posts = sim.requests().iter().filter(|r| r.method == "POST").count();
    assert_eq!(posts, 3);
    assert_eq!(outcome.library_version, sim.library_version(LIB));
}

#[tokio::test]
async fn paginates_to_a_maximum_and_reads_total_results() {
    let (sim, client, _) = setup();
    for i in 0..230 {
        sim.insert_item(LIB, book(&format!("Title {i:03}")));
    }
    let page = client.items(&Query::new().sort("title", false), 205).await.unwrap();
    assert_eq!(page.items.len(), 205);
    assert_eq!(page.total_results, Some(230));
    assert_eq!(page.items[0].field("title"), Some("Title 000"));
    assert_eq!(page.items[204].field("title"), Some("Title 204"));
    let rest = client.items(&Query::new().sort("title", false).offset(205), 100).await.unwrap();
    assert_eq!(rest.items.len(), 25);
}

#[tokio::test]
async fn a_stale_patch_is_a_conflict_and_is_not_retried() {
    let (sim, client, _) = setup();
    let k = sim.insert_item(LIB, book("Original"));
    let item = client.item(&key(&k)).await.unwrap();
    sim.edit_before_next_write(LIB, &k);
    let error = client.patch_item(&key(&k), item.version, &json!({ "title": "Mine" })).await.unwrap_err();
    assert!(error.is_conflict(), "{error}");
    assert_eq!(sim.requests().iter().filter(|r| r.method == "PATCH").count(), 1);
    assert_ne!(sim.item(LIB, &k).unwrap()["data"]["title"], "Mine");
}

#[tokio::test]
async fn a_stale_object_in_a_batch_fails_alone() {
    let (sim, client, _) = setup();
    let a = sim.insert_item(LIB, book("A"));
    let b = sim.insert_item(LIB, book("B"));
    let item_a = client.item(&key(&a)).await.unwrap();
    let item_b = client.item(&key(&b)).await.unwrap();
    sim.edit_before_next_write(LIB, &b);
    let outcome = client
        .write_objects(
            ObjectKind::Items,
            &[
                json!({ "key": a, "version": item_a.version, "title": "A2" }),
                json!({ "key": b, "version": item_b.version, "title": "B2" }),
            ],
        )
        .await
        .unwrap();
    assert_eq!(outcome.success.get(&0), Some(&a));
    assert_eq!(outcome.failed[&1].code, 412);
}

#[tokio::test]
async fn rate_limits_and_backoff_are_honoured() {
    let (sim, client, clock) = setup();
    let k = sim.insert_item(LIB, book("Patient"));
    sim.fail_next(1, Fault::TooManyRequests { retry_after: Some(3) });
    client.item(&key(&k)).await.unwrap();
    assert_eq!(clock.sleeps(), [3_000]);
    sim.fail_next(1, Fault::Backoff { seconds: 5 });
    client.item(&key(&k)).await.unwrap();
    client.item(&key(&k)).await.unwrap();
    assert_eq!(clock.sleeps(), [3_000, 5_000]);
}

#[tokio::test]
async fn full_text_round_trips_and_missing_text_is_none() {
    let (sim, client, _) = setup();
    let parent = sim.insert_item(LIB, book("Parent"));
    let attachment = sim.insert_item(
        LIB,
        json!({ "itemType": "attachment", "parentItem": parent, "linkMode": "imported_file", "title": "PDF",
                "contentType": "application/pdf", "filename": "a.pdf", "tags": [], "relations": {} }),
    );
    assert_eq!(client.fulltext(&key(&attachment)).await.unwrap(), None);
    let text = zotero_mcp_core::zotero::FullText {
        content: "quantum tunnelling of protons".into(),
        indexed_pages: Some(3),
        total_pages: Some(3),
        ..Default::default()
    };
    client.put_fulltext(&key(&attachment), &text).await.unwrap();
    assert_eq!(client.fulltext(&key(&attachment)).await.unwrap().unwrap().content, text.content);
    let found =
        client.items(&Query::new().q("tunnelling", QMode::Everything).item_type("attachment"), 10).await.unwrap();
    assert_eq!(found.items.len(), 1);
}

#[tokio::test]
async fn versions_and_deletions_since_a_version() {
    let (sim, client, _) = setup();
    let a = sim.insert_item(LIB, book("A"));
    let since = sim.library_version(LIB);
    let b = sim.insert_item(LIB, book("B"));
    let versions = client.item_versions(since).await.unwrap();
    assert_eq!(versions.versions.keys().cloned().collect::<Vec<_>>(), vec![b]);
    let item_a = client.item(&key(&a)).await.unwrap();
    client.delete_item(&key(&a), item_a.version).await.unwrap();
    let deleted = client.deleted(since).await.unwrap();
    assert_eq!(deleted.items, [a]);
}

#[tokio::test]
async fn templates_tags_and_collections() {
    let (sim, client, _) = setup();
    let template = client.template("journalArticle", None).await.unwrap();
    assert!(template.contains_key("publicationTitle"));
    let parent = client.write_objects(ObjectKind::Collections, &[json!({ "name": "Parent" })]).await.unwrap().success
        [&0]
        .clone();
    client
        .write_objects(ObjectKind::Collections, &[json!({ "name": "Child", "parentCollection": parent })])
        .await
        .unwrap();
    let top = client.top_collections(10).await.unwrap();
    assert_eq!(top.items.len(), 1);
    let children = client.subcollections(&key(&parent), 10).await.unwrap();
    assert_eq!(children.items[0].field("name"), Some("Child"));
    sim.insert_item(
        LIB,
        json!({ "itemType": "book", "title": "T", "tags": [{ "tag": "alpha" }, { "tag": "beta", "type": 1 }] }),
    );
    let tags = client.tags(&Query::new(), 10).await.unwrap();
    let beta = tags.items.iter().find(|t| t.tag == "beta").unwrap();
    assert_eq!((beta.kind, beta.num_items), (1, 1));
}

#[tokio::test]
async fn a_group_library_is_addressed_by_its_id() {
    let sim = Rc::new(Simulator::new());
    sim.add_user(USER, "secret-key", true);
    sim.add_group(777, "secret-key", true);
    let settings = ZoteroSettings {
        api_key: "secret-key".into(),
        library_kind: LibraryKind::Group,
        library_id: Some("777".into()),
        base_url: None,
    };
    let client = ZoteroWriter::new(settings, Rc::new(InProcess(sim.clone())), ManualClock::at(0)).unwrap();
    let outcome = client.write_objects(ObjectKind::Items, &[book("Group book")]).await.unwrap();
    assert!(sim.item(LibraryRef::Group(777), &outcome.success[&0]).is_some());
}

#[tokio::test]
async fn a_wrong_key_is_refused_with_an_actionable_message() {
    let sim = Rc::new(Simulator::new());
    sim.add_user(USER, "secret-key", true);
    let settings = ZoteroSettings {
        api_key: "wrong".into(),
        library_kind: LibraryKind::User,
        library_id: Some(USER.to_string()),
        base_url: None,
    };
    let client = ZoteroWriter::new(settings, Rc::new(InProcess(sim)), ManualClock::at(0)).unwrap();
    let error = client.items(&Query::new(), 5).await.unwrap_err();
    assert!(matches!(error, ZoteroError::Api { status: 403, .. }), "{error}");
    assert!(error.to_string().contains("zotero.org/settings/keys"));
}
