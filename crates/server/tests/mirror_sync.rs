//! The library mirror kept in step with the simulator as Zotero's clients sync: a first fill spread over calls
//! that never starts over, one request (a 304) when nothing changed, changes and deletions caught up, pages that
//! shifted under a fill healed, and one library's rows never answering for another's.

use std::rc::Rc;

use serde_json::{json, Value};
use zotero_mcp_core::mirror::sqlite::SqliteDb;
use zotero_mcp_core::mirror::{advance, status, store, MirrorStatus};
use zotero_mcp_core::testing::ManualClock;
use zotero_mcp_core::zotero::{LibraryKind, ObjectKey, ObjectKind, ZoteroSettings, ZoteroWriter};
use zotero_sim::{InProcess, LibraryRef, Simulator};

const USER: u64 = 4242;
const LIB: LibraryRef = LibraryRef::User(USER);
const NOW: u64 = 1_800_000_000_000;

fn setup(items: usize) -> (Rc<Simulator>, ZoteroWriter, SqliteDb) {
    let sim = Rc::new(Simulator::new());
    sim.add_user(USER, "secret-key", true);
    for n in 0..items {
        sim.insert_item(LIB, article(n, &format!("10.1000/paper.{n}")));
    }
    (sim.clone(), writer(&sim, LibraryKind::User, None), SqliteDb::in_memory().expect("an in-memory database"))
}

fn writer(sim: &Rc<Simulator>, kind: LibraryKind, id: Option<&str>) -> ZoteroWriter {
    let settings = ZoteroSettings {
        api_key: "secret-key".into(),
        library_kind: kind,
        library_id: id.map(str::to_owned),
        base_url: Some("https://api.zotero.org".into()),
    };
    ZoteroWriter::new(settings, Rc::new(InProcess(sim.clone())), ManualClock::at(NOW)).expect("a client")
}

fn article(n: usize, doi: &str) -> Value {
    json!({
        "itemType": "journalArticle", "title": format!("Paper {n}"), "DOI": doi,
        "creators": [], "tags": [{ "tag": format!("topic-{}", n % 3) }], "collections": [], "relations": {}
    })
}

/// The schema made, as it is once the mirror has been used: a call that makes it reads fewer pages (its
/// statements count against D1's per-call queries).
async fn migrated(db: &SqliteDb) {
    zotero_mcp_core::mirror::schema::migrate(db).await.expect("migrated");
}

fn requests(sim: &Simulator) -> usize {
    sim.requests().len()
}

/// Advances `budget` requests at a time until the mirror is complete; returns how many calls it took.
async fn fill(db: &SqliteDb, client: &ZoteroWriter, budget: usize) -> (usize, MirrorStatus) {
    for calls in 1..=100 {
        let status = advance(db, client, budget, NOW).await.expect("advanced");
        if status.complete {
            return (calls, status);
        }
    }
    panic!("the fill never completed");
}

#[tokio::test]
async fn a_first_fill_spread_over_calls_never_starts_over_and_then_costs_one_request() {
    let (sim, client, db) = setup(250);
    migrated(&db).await;
    let before = requests(&sim);
    // Two requests a call: 250 items are three pages, then collections and searches.
    let first = advance(&db, &client, 2, NOW).await.expect("advanced");
    assert!(!first.complete, "{first:?}");
    assert_eq!(first.items, 200, "two pages stored: {first:?}");
    assert_eq!(status(&db, "users/4242").await.expect("a status"), first, "what a later call reads without asking");
    let (_, done) = fill(&db, &client, 2).await;
    assert!(done.complete);
    assert_eq!(done.items, 250);
    assert_eq!(done.library_version, sim.library_version(LIB));
    // The library key lookup, three item pages, collections and searches: nothing read twice.
    assert_eq!(requests(&sim) - before, 1 + 3 + 2, "{:?}", sim.requests());

    // Nothing changed: one request, answered 304.
    let before = requests(&sim);
    let again = advance(&db, &client, 10, NOW + 1).await.expect("advanced");
    assert_eq!(requests(&sim) - before, 1);
    assert_eq!((again.items, again.synced_at), (250, NOW + 1));
}

#[tokio::test]
async fn changes_and_deletions_are_caught_up_and_dois_shared_are_found() {
    let (sim, client, db) = setup(30);
    fill(&db, &client, 50).await;
    let created = client
        .write_objects(ObjectKind::Items, &[article(99, "https://doi.org/10.1000/PAPER.7")])
        .await
        .expect("created");
    let twin = created.success[&0].clone();
    let gone = sim.items(LIB).iter().find(|i| i["data"]["title"] == "Paper 3").expect("paper 3")["key"]
        .as_str()
        .expect("a key")
        .to_owned();
    let version = sim.item(LIB, &gone).expect("paper 3")["version"].as_u64().expect("a version");
    client.delete_item(&ObjectKey::parse(&gone).expect("a key"), version).await.expect("deleted");

    let before = requests(&sim);
    let caught_up = advance(&db, &client, 50, NOW).await.expect("advanced");
    assert!(caught_up.complete);
    assert_eq!(caught_up.items, 30, "one created, one deleted");
    assert_eq!(caught_up.library_version, sim.library_version(LIB));
    // Items, collections and searches changed since, then the deletions.
    assert_eq!(requests(&sim) - before, 4, "{:?}", sim.requests());

    let shared = store::shared_dois(&db, "users/4242").await.expect("a query");
    assert_eq!(shared.len(), 1, "{shared:?}");
    assert_eq!(shared[0].0, "10.1000/paper.7");
    assert!(shared[0].1.contains(&twin), "{shared:?}");
    let tags = store::tags(&db, "users/4242").await.expect("a query");
    assert_eq!(tags.iter().map(|tag| tag.num_items).sum::<u64>(), 30, "{tags:?}");
}

#[tokio::test]
async fn a_fill_whose_pages_shift_under_it_reads_what_it_missed() {
    let (sim, client, db) = setup(250);
    migrated(&db).await;
    // First page stored; then an item of the first page is deleted, shifting every later page by one.
    let first = advance(&db, &client, 1, NOW).await.expect("advanced");
    assert_eq!(first.items, 100);
    let stored: Vec<String> = sim.items(LIB).iter().map(|i| i["key"].as_str().unwrap_or_default().to_owned()).collect();
    let victim = sim.items(LIB).iter().find(|i| i["data"]["title"] == "Paper 0").expect("the first added")["key"]
        .as_str()
        .expect("a key")
        .to_owned();
    let version = sim.item(LIB, &victim).expect("it")["version"].as_u64().expect("a version");
    client.delete_item(&ObjectKey::parse(&victim).expect("a key"), version).await.expect("deleted");
    let before = requests(&sim);
    let (_, done) = fill(&db, &client, 50).await;
    let checked = sim.requests()[before..].iter().filter(|r| r.query.contains("format=versions")).count();
    assert_eq!(checked, 1, "the keys are checked once the pages moved: {:?}", sim.requests());
    // Every item still in the library is in the mirror, and the one deleted while the fill ran is not (a first
    // fill's key check holds every key); the count kept as rows were written is the rows' own.
    let rows = zotero_mcp_core::mirror::SqlDb::query(
        &db,
        "SELECT count(*) AS n FROM mirror_items WHERE library = 'users/4242'",
        &[],
    )
    .await
    .expect("a count");
    assert_eq!(rows[0]["n"], 249, "{done:?}");
    assert_eq!(done.items, 249);
    for key in stored.iter().filter(|key| **key != victim) {
        let rows = zotero_mcp_core::mirror::SqlDb::query(
            &db,
            "SELECT key FROM mirror_items WHERE library = 'users/4242' AND key = ?1",
            &[Value::from(key.as_str())],
        )
        .await
        .expect("a query");
        assert_eq!(rows.len(), 1, "{key} missing");
    }
    // The next pass removes the deleted one.
    let next = advance(&db, &client, 50, NOW).await.expect("advanced");
    assert_eq!(next.items, 249);
}

#[tokio::test]
async fn one_library_s_rows_never_answer_for_another() {
    let (sim, client, db) = setup(5);
    sim.add_group(777, "secret-key", true);
    let group = writer(&sim, LibraryKind::Group, Some("777"));
    group.write_objects(ObjectKind::Items, &[article(1, "10.1000/paper.1")]).await.expect("created in the group");
    fill(&db, &client, 50).await;
    let (_, in_group) = fill(&db, &group, 50).await;
    assert_eq!(in_group.items, 1);
    assert_eq!(status(&db, "users/4242").await.expect("a status").items, 5);
    // The same DOI in both libraries is no duplicate in either.
    assert!(store::shared_dois(&db, "users/4242").await.expect("a query").is_empty());
    assert!(store::shared_dois(&db, "groups/777").await.expect("a query").is_empty());
}

#[tokio::test]
async fn a_synthetic_library_fills_within_its_page_count_and_finds_every_shared_doi() {
    let sim = Rc::new(Simulator::new());
    sim.add_user(USER, "secret-key", true);
    let made = sim.add_synthetic(LIB, 5_000, 7).expect("a synthetic library");
    let client = writer(&sim, LibraryKind::User, None);
    let db = SqliteDb::in_memory().expect("an in-memory database");
    let objects = made.top_level + made.notes + made.attachments;
    let before = requests(&sim);
    // At most 45 requests a call, as a cron run on the free plan.
    let (calls, done) = fill(&db, &client, 45).await;
    let spent = requests(&sim) - before;
    assert_eq!(done.items, objects as u64, "{made:?}");
    assert_eq!(done.library_version, made.version);
    assert!(spent <= objects / 100 + 20, "{spent} requests for {objects} objects");
    assert_eq!(calls, spent.div_ceil(45), "no call stopped short of its budget but the last");
    let shared = store::shared_dois(&db, "users/4242").await.expect("a query");
    assert_eq!(shared.len(), made.duplicate_pairs, "every pair the library holds");
    let collections = store::collections(&db, "users/4242").await.expect("a query");
    assert_eq!(collections.len(), made.collections);
    let tags = store::tags(&db, "users/4242").await.expect("a query");
    assert_eq!(tags.len(), made.tags);
}

#[tokio::test]
async fn an_empty_library_is_complete_after_one_pass_and_then_costs_one_request() {
    let (sim, client, db) = setup(0);
    migrated(&db).await;
    let done = advance(&db, &client, 10, NOW).await.expect("advanced");
    assert!(done.complete, "{done:?}");
    assert_eq!(done.items, 0);
    let before = requests(&sim);
    let again = advance(&db, &client, 10, NOW).await.expect("advanced");
    assert!(again.complete);
    assert_eq!(requests(&sim) - before, 1, "{:?}", sim.requests());
}

/// SQLite, counting statements as D1 counts its queries: each statement of a batch is one.
struct Counting(SqliteDb, std::cell::Cell<usize>);

#[async_trait::async_trait(?Send)]
impl zotero_mcp_core::mirror::SqlDb for Counting {
    async fn query(
        &self,
        sql: &str,
        params: &[Value],
    ) -> Result<Vec<zotero_mcp_core::mirror::Row>, zotero_mcp_core::mirror::SqlError> {
        self.1.set(self.1.get() + 1);
        self.0.query(sql, params).await
    }
    async fn batch(
        &self,
        statements: &[zotero_mcp_core::mirror::Statement],
    ) -> Result<(), zotero_mcp_core::mirror::SqlError> {
        self.1.set(self.1.get() + statements.len());
        self.0.batch(statements).await
    }
}

#[tokio::test]
async fn a_call_s_share_of_a_fill_stays_within_d1_s_fifty_queries() {
    // D1 on the free plan takes 50 queries a Worker invocation, each statement of a batch counted: a call's
    // share of the fill (its 20 requests' pages and where the pass stands) leaves room for the tool's own.
    let (sim, client, _) = setup(2_500);
    let db = Counting(SqliteDb::in_memory().expect("a database"), std::cell::Cell::new(0));
    let mut most = 0;
    for _ in 0..10 {
        db.1.set(0);
        let status = advance(&db, &client, zotero_mcp_core::mirror::CALL_BUDGET, NOW).await.expect("advanced");
        most = most.max(db.1.get());
        if status.complete {
            break;
        }
    }
    assert!(most <= 45, "{most} statements in one call");
    assert!(most >= 40, "the test measured full calls ({most})");
    drop(sim);
}

#[tokio::test]
async fn a_call_finding_the_mirror_in_step_reads_one_row_and_writes_only_when_its_record_is_old() {
    let (sim, client, _) = setup(30);
    let db = Counting(SqliteDb::in_memory().expect("a database"), std::cell::Cell::new(0));
    let (_, done) = {
        let mut status = advance(&db, &client, 20, NOW).await.expect("advanced");
        while !status.complete {
            status = advance(&db, &client, 20, NOW).await.expect("advanced");
        }
        ((), status)
    };
    assert_eq!(done.items, 30);
    // Nothing changed, the record of being in step is recent: one D1 statement (the schema and the library's
    // row together) and one request, Zotero's 304.
    db.1.set(0);
    let before = requests(&sim);
    let later = NOW + 1_000;
    let again = advance(&db, &client, 20, later).await.expect("advanced");
    assert_eq!((db.1.get(), requests(&sim) - before), (1, 1));
    assert_eq!((again.complete, again.items, again.synced_at), (true, 30, later));
    // Once that record is older than a minute, it is written again: one statement more.
    db.1.set(0);
    let much_later = NOW + zotero_mcp_core::mirror::SYNCED_AT_REFRESH_MS + 1_000;
    let status = advance(&db, &client, 20, much_later).await.expect("advanced");
    assert_eq!(db.1.get(), 2);
    assert_eq!((status.items, status.synced_at), (30, much_later));
    // A change since is read and counted as before.
    sim.insert_item(LIB, article(31, "10.1000/new"));
    let status = advance(&db, &client, 20, much_later + 1_000).await.expect("advanced");
    assert_eq!(status.items, 31);
}
