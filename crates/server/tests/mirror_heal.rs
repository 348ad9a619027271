//! Gaps in the library mirror heal by themselves: a library reset on the server (its version gone back, which
//! the freshness check answers with a 304) is found by the daily verification and filled again; rows a pass
//! missed or left behind are found the same way; and a write Zotero refused as stale (412) makes the next pass
//! verify at once.

use std::collections::BTreeSet;
use std::rc::Rc;

use serde_json::{json, Value};
use zotero_mcp_core::mirror::sqlite::SqliteDb;
use zotero_mcp_core::mirror::sync::VERIFY_EVERY_MS;
use zotero_mcp_core::mirror::{advance, write_through, MirrorStatus, SqlDb, Statement};
use zotero_mcp_core::testing::ManualClock;
use zotero_mcp_core::zotero::{LibraryKind, ObjectKey, ZoteroSettings, ZoteroWriter};
use zotero_sim::{InProcess, LibraryRef, Simulator};

const USER: u64 = 4242;
const LIB: LibraryRef = LibraryRef::User(USER);
const NOW: u64 = 1_800_000_000_000;

fn library(items: &[&str]) -> (Rc<Simulator>, ZoteroWriter) {
    let sim = Rc::new(Simulator::new());
    sim.add_user(USER, "secret-key", true);
    for title in items {
        sim.insert_item(LIB, json!({ "itemType": "journalArticle", "title": title, "creators": [], "tags": [] }));
    }
    let settings = ZoteroSettings {
        api_key: "secret-key".into(),
        library_kind: LibraryKind::User,
        library_id: None,
        base_url: Some("https://api.zotero.org".into()),
    };
    let writer = ZoteroWriter::new(settings, Rc::new(InProcess(sim.clone())), ManualClock::at(NOW)).expect("a client");
    (sim, writer)
}

async fn fill(db: &SqliteDb, client: &ZoteroWriter, now: u64) -> MirrorStatus {
    for _ in 0..20 {
        let status = advance(db, client, 20, now).await.expect("advanced");
        if status.complete {
            return status;
        }
    }
    panic!("the fill never completed");
}

async fn keys(db: &SqliteDb) -> BTreeSet<String> {
    let rows = db.query("SELECT key FROM mirror_items", &[]).await.expect("a query");
    rows.iter().filter_map(|row| row.get("key").and_then(Value::as_str).map(str::to_owned)).collect()
}

fn sim_keys(sim: &Simulator) -> BTreeSet<String> {
    sim.items(LIB).iter().filter_map(|item| item["key"].as_str().map(str::to_owned)).collect()
}

fn asked_for_versions(sim: &Simulator, from: usize) -> bool {
    sim.requests()[from..].iter().any(|request| request.query.contains("format=versions"))
}

#[tokio::test]
async fn a_library_reset_on_the_server_is_found_by_the_verification_and_filled_again() {
    let titles: Vec<String> = (0..30).map(|n| format!("Before the reset {n}")).collect();
    let (old, old_client) = library(&titles.iter().map(String::as_str).collect::<Vec<_>>());
    let db = SqliteDb::in_memory().expect("a database");
    let before = fill(&db, &old_client, NOW).await;
    assert_eq!(before.items, 30);
    // The same library, reset on the server: another history, at a lower version.
    let (new, new_client) = library(&["After the reset A", "After the reset B"]);
    assert!(new.library_version(LIB) < before.library_version);
    // Its version went back: the freshness check says nothing changed, until the verification is due.
    let stale = advance(&db, &new_client, 20, NOW + 1000).await.expect("advanced");
    assert_eq!(stale.items, 30, "a 304 cannot tell a reset");
    let healed = fill(&db, &new_client, NOW + VERIFY_EVERY_MS).await;
    assert_eq!(healed.library_version, new.library_version(LIB));
    assert_eq!(healed.items, 2, "the count kept with the rows starts again too");
    assert_eq!(keys(&db).await, sim_keys(&new), "only the reset library's items, the old rows gone");
    drop(old);
}

#[tokio::test]
async fn rows_a_pass_missed_or_left_behind_are_found_by_the_verification() {
    let (sim, client) = library(&["One", "Two", "Three", "Four"]);
    sim.insert_collection(LIB, json!({ "name": "Kept" }));
    sim.insert_collection(LIB, json!({ "name": "In the trash", "deleted": true }));
    let db = SqliteDb::in_memory().expect("a database");
    fill(&db, &client, NOW).await;
    let lost = sim_keys(&sim).into_iter().next().expect("an item");
    db.batch(&[
        Statement::new("DELETE FROM mirror_items WHERE key = ?1", vec![Value::from(lost.clone())]),
        Statement::new(
            "INSERT INTO mirror_items (library, key, version, item_type, data) \
             VALUES ('users/4242', 'GONEGONE', 1, 'book', '{}')",
            Vec::new(),
        ),
    ])
    .await
    .expect("a gap made");
    // Not due yet: one request, and the gap stays.
    let from = sim.requests().len();
    advance(&db, &client, 20, NOW + 1000).await.expect("advanced");
    assert_eq!(sim.requests().len() - from, 1);
    assert!(!keys(&db).await.contains(&lost));
    // Due: every key compared (three requests), the missing one read, the stray one gone.
    let from = sim.requests().len();
    let healed = fill(&db, &client, NOW + VERIFY_EVERY_MS).await;
    assert!(asked_for_versions(&sim, from));
    assert_eq!(keys(&db).await, sim_keys(&sim));
    assert_eq!(healed.items, 4);
    let collections = db.query("SELECT key FROM mirror_collections", &[]).await.expect("a query");
    assert_eq!(collections.len(), 2, "a collection in the trash is one Zotero has: it stays");
    assert!(sim.requests().len() - from <= 6, "{:?}", &sim.requests()[from..]);
    // Verified: the next day's first call is one request again.
    let from = sim.requests().len();
    advance(&db, &client, 20, NOW + VERIFY_EVERY_MS + 1000).await.expect("advanced");
    assert_eq!(sim.requests().len() - from, 1);
}

#[tokio::test]
async fn a_write_refused_as_stale_makes_the_next_pass_verify() {
    let (sim, client) = library(&["One", "Two"]);
    let db = SqliteDb::in_memory().expect("a database");
    fill(&db, &client, NOW).await;
    // The item written second is at version 2: a write made against version 1 is refused (412).
    let second = sim.items(LIB).into_iter().find(|item| item["version"] == 2).expect("the second item");
    let key = ObjectKey::parse(second["key"].as_str().expect("a key")).expect("a key");
    let refused = client.patch_item(&key, 1, &json!({ "title": "Stale" })).await;
    assert_eq!(refused.expect_err("refused").status(), Some(412));
    let written = client.log().take_written();
    assert!(written.conflicted);
    write_through(&db, "users/4242", &written).await.expect("written through");
    let from = sim.requests().len();
    advance(&db, &client, 20, NOW + 1000).await.expect("advanced");
    assert!(asked_for_versions(&sim, from), "{:?}", &sim.requests()[from..]);
}
