//! `zotero_search` answered from the library mirror: over the simulator's synthetic library and the demo, every
//! query of a table finds the items Zotero finds, in Zotero's order (paged through to the end); PDF text still
//! comes from Zotero's full-text index, and a mirrored search costs at most two requests; without a mirror, or
//! while it fills, Zotero answers as before; and one library's rows never answer another library's search.

mod common;

use std::rc::Rc;

use common::*;
use serde_json::{json, Value};
use zotero_mcp_core::mirror::sqlite::SqliteDb;
use zotero_mcp_server::app::App;
use zotero_sim::{LibraryRef, Simulator};

const LIB: LibraryRef = LibraryRef::User(DEMO_USER);

async fn call(app: &App, arguments: Value) -> Value {
    let session = zotero_mcp_server::call::Session::new(
        zotero_mcp_server::auth::Grant::read_write("owner"),
        app.config.clone(),
        app.platform.clone(),
    );
    let registry = zotero_mcp_server::tools::registry(&app.config);
    registry.call_tool(&session, "zotero_search", arguments).await.expect("the tool exists")
}

/// Searches until the mirror is complete (each call fills it further).
async fn filled(app: &App, library: Option<&str>) {
    let mut arguments = json!({ "query": "x" });
    if let Some(library) = library {
        arguments["library"] = json!(library);
    }
    for _ in 0..20 {
        if ok(&call(app, arguments.clone()).await)["mirror"]["complete"] == true {
            return;
        }
    }
    panic!("the mirror never completed");
}

/// Every hit of a search, page after page (`nextOffset`), as `key` or `key<attachment` for a hit found through
/// an attachment's text; with the `mirror` block of each answer and Zotero's `totalResults`.
async fn every_hit(app: &App, arguments: &Value, max_pages: usize) -> (Vec<String>, Vec<Value>, Value) {
    let (mut hits, mut mirrors, mut total) = (Vec::new(), Vec::new(), Value::Null);
    let mut arguments = arguments.clone();
    arguments["limit"] = json!(100);
    for _ in 0..max_pages {
        let answer = call(app, arguments.clone()).await;
        let out = ok(&answer).clone();
        for item in out["items"].as_array().cloned().unwrap_or_default() {
            let key = item["key"].as_str().unwrap_or_default().to_owned();
            hits.push(match item["matchedAttachment"]["key"].as_str() {
                Some(attachment) => format!("{key}<{attachment}"),
                None => key,
            });
        }
        mirrors.push(out["mirror"].clone());
        total = out["totalResults"].clone();
        match out["nextOffset"].as_u64() {
            Some(next) => arguments["offset"] = json!(next),
            None => break,
        }
    }
    (hits, mirrors, total)
}

/// A library the table can tell apart from Zotero's answers: the synthetic items plus a few odd ones (in the
/// trash, with a diacritic or a Turkish capital, notes with only a title, a PDF whose text has a rare word).
fn library(n: usize) -> (Rc<Simulator>, String, String) {
    let sim = demo_sim();
    sim.add_synthetic(LIB, n, 7).expect("a synthetic library");
    let item = |data: Value| sim.insert_item(LIB, data);
    item(json!({ "itemType": "book", "title": "Zebra migration", "deleted": 1, "date": "2003",
                 "creators": [{ "creatorType": "author", "firstName": "Tomás", "lastName": "Zebrowski" }] }));
    let report = item(json!({ "itemType": "report", "title": "İstanbul ZEBRA crossings", "date": "5/3/99",
                 "creators": [{ "creatorType": "author", "name": "Ünited Nations" }], "tags": [{ "tag": "Zebra" }] }));
    let parent = item(json!({ "itemType": "journalArticle", "title": "Stripes as camouflage", "date": "March 2011",
                              "creators": [{ "creatorType": "editor", "lastName": "Ng", "firstName": "A" }] }));
    item(json!({ "itemType": "note", "parentItem": parent, "note": "<h1>Zebra &amp; stripes</h1><p>body</p>" }));
    let pdf = item(json!({ "itemType": "attachment", "parentItem": parent, "linkMode": "imported_file",
                           "title": "Full Text PDF", "contentType": "application/pdf", "filename": "stripes.pdf" }));
    sim.set_fulltext(LIB, &pdf, "The quagga was a zebra; xylophonic stripes fooled flies.", Some(3), Some(3));
    let collection = sim.collections(LIB).iter().filter_map(|c| c["key"].as_str().map(str::to_owned)).nth(3);
    (sim, collection.unwrap_or_default(), report)
}

fn queries(collection: &str) -> Vec<Value> {
    vec![
        json!({ "query": "neural" }),
        json!({ "query": "PROTEIN folding" }),
        json!({ "query": "\"under heat stress\"" }),
        json!({ "query": "garcía" }),
        json!({ "query": "MÜLLER" }),
        json!({ "query": "istanbul" }),
        json!({ "query": "zebra" }),
        json!({ "query": "zebra", "includeTrashed": true }),
        json!({ "query": "zebra", "itemType": "-note" }),
        json!({ "query": "xylophonic" }),
        json!({ "query": "quagga fooled flies", "qmode": "everything" }),
        json!({ "query": "2011" }),
        json!({ "query": "1999" }),
        json!({ "query": "2020 coral" }),
        json!({ "query": "ng" }),
        json!({ "query": "ab" }),
        json!({ "query": "reading notes" }),
        json!({ "query": "notes", "itemType": "note" }),
        json!({ "query": "full text", "itemType": "attachment" }),
        json!({ "query": "smith", "itemType": "book || conferencePaper" }),
        json!({ "query": "soil", "tags": ["ecology methods", "genomics methods"], "tagMatch": "any" }),
        json!({ "tags": ["ECOLOGY REVIEW"] }),
        json!({ "query": "climate", "excludeTags": ["ecology methods"] }),
        json!({ "query": "coral", "sort": "title" }),
        json!({ "query": "coral", "sort": "title", "direction": "desc" }),
        json!({ "query": "river", "sort": "creator" }),
        json!({ "query": "ocean", "sort": "date", "direction": "desc" }),
        json!({ "query": "glacier", "sort": "dateAdded" }),
        json!({ "query": "market", "sort": "publicationTitle" }),
        json!({ "query": "memory", "sort": "publisher", "direction": "desc" }),
        json!({ "query": "cell", "sort": "itemType" }),
        json!({ "query": "forest", "direction": "asc" }),
        json!({ "query": "protein", "fromYear": 2000, "toYear": 2009 }),
        json!({ "query": "drought", "since": 30 }),
        json!({ "collectionKey": collection }),
        json!({ "collectionKey": collection, "query": "reading" }),
    ]
}

#[tokio::test]
async fn searches_from_the_mirror_find_what_zotero_finds_in_zoteros_order() {
    let (sim, collection, report) = library(3_000);
    let live = app_with_sim(sim.clone());
    let mirrored = app_with_mirror(sim.clone());
    filled(&mirrored, None).await;
    let mut answers = Vec::new();
    for arguments in queries(&collection) {
        let (from_zotero, _, zotero_total) = every_hit(&live, &arguments, 40).await;
        let (from_mirror, mirrors, mirror_total) = every_hit(&mirrored, &arguments, 40).await;
        assert!(mirrors.iter().all(|m| m["complete"] == true), "{arguments}: answered from the mirror: {mirrors:?}");
        assert_eq!(from_mirror, from_zotero, "{arguments}: the same items, in the same order");
        assert_eq!(mirror_total, zotero_total, "{arguments}");
        answers.push((arguments, from_zotero));
    }
    let found = |arguments: Value| -> Vec<String> {
        answers.iter().find(|(asked, _)| *asked == arguments).map(|(_, hits)| hits.clone()).unwrap_or_default()
    };
    let empty = answers.iter().filter(|(_, hits)| hits.is_empty()).count();
    assert!(empty <= 2, "the table finds something nearly everywhere ({empty} empty)");
    // What the table relies on, as Zotero answers it: the trash left out unless asked for, a child note found by
    // its own title, a PDF's text found for the parent, a phrase kept whole.
    let zebra = found(json!({ "query": "zebra" }));
    assert_eq!(zebra.len(), 3, "a report, a note and an article by its PDF, not the trashed book: {zebra:?}");
    assert_eq!(zebra.iter().filter(|hit| hit.contains('<')).count(), 1, "{zebra:?}");
    assert_eq!(found(json!({ "query": "zebra", "includeTrashed": true })).len(), 4);
    assert_eq!(found(json!({ "query": "zebra", "itemType": "-note" })).len(), 2);
    assert!(!found(json!({ "query": "MÜLLER" })).is_empty(), "case folded beyond ASCII");
    let pdf = found(json!({ "query": "xylophonic" }));
    assert!(pdf.len() == 1 && pdf[0].contains('<'), "the parent, through its PDF: {pdf:?}");
    assert!(found(json!({ "query": "1999" })).contains(&report), "a two-digit year, as Zotero parsed it");
    assert!(
        found(json!({ "query": "\"under heat stress\"" })).len() < found(json!({ "query": "heat" })).len().max(1000)
    );
    assert!(found(json!({ "query": "reading notes" })).len() >= 50, "child notes by their first line");
}

#[tokio::test]
async fn the_demo_library_searches_the_same_from_its_mirror() {
    let sim = demo_sim();
    let live = app_with_sim(sim.clone());
    let mirrored = app_with_mirror(sim.clone());
    filled(&mirrored, None).await;
    for arguments in [
        json!({}),
        json!({ "query": "protein" }),
        json!({ "query": "the" }),
        json!({ "query": "2021" }),
        json!({ "query": "folding structure prediction" }),
        json!({ "sort": "title" }),
        json!({ "sort": "creator", "direction": "desc" }),
        json!({ "sort": "date" }),
        json!({ "itemType": "note" }),
        json!({ "itemType": "-note || attachment", "includeTrashed": true }),
    ] {
        let (from_zotero, _, zotero_total) = every_hit(&live, &arguments, 5).await;
        let (from_mirror, mirrors, mirror_total) = every_hit(&mirrored, &arguments, 5).await;
        assert!(mirrors.iter().all(|m| m["complete"] == true), "{arguments}: {mirrors:?}");
        assert_eq!(from_mirror, from_zotero, "{arguments}");
        assert_eq!(mirror_total, zotero_total, "{arguments}");
    }
}

#[tokio::test]
async fn a_mirrored_search_costs_the_check_and_one_question_to_the_full_text_index() {
    let (sim, _, _) = library(600);
    let mut app = app_with_mirror(sim.clone());
    filled(&app, None).await;
    let steps = common::steps::Steps::over(app.platform.http.clone());
    app.platform.http = steps.clone();
    // Stopped: the memory clock's sleeps end at once, so a request waiting its turn in `Steps` would time out.
    app.platform.clock = Rc::new(zotero_mcp_core::testing::StoppedClock(app.platform.clock.now_ms()));
    let before = sim.requests().len();
    let answer = call(&app, json!({ "query": "xylophonic stripes" })).await;
    let asked = &sim.requests()[before..];
    assert_eq!(asked.len(), 2, "{asked:?}");
    // The mirror was complete at the last call: the index is asked while the mirror is checked, one round trip.
    assert_eq!(steps.steps(), 1, "{:?}", steps.log());
    assert!(asked.iter().any(|r| r.query_values("format") == ["keys"]), "keys only from the index: {asked:?}");
    let out = ok(&answer);
    assert_eq!(out["mirror"]["complete"], true);
    assert_eq!(out["items"][0]["matchedAttachment"]["filename"], "stripes.pdf", "{out}");
    assert_eq!(out["libraryVersion"], sim.library_version(LIB));
    // Filters only: the check alone.
    let before = sim.requests().len();
    let tagged = call(&app, json!({ "tags": ["ecology review"], "sort": "title" })).await;
    assert_eq!(sim.requests().len() - before, 1, "{:?}", &sim.requests()[before..]);
    assert!(ok(&tagged)["totalResults"].as_u64().unwrap_or(0) > 0, "{tagged}");
}

#[tokio::test]
async fn without_a_mirror_or_while_it_fills_zotero_answers_and_says_why() {
    let (sim, _, _) = library(3_000);
    let live = app_with_sim(sim.clone());
    let arguments = json!({ "query": "coral bleaching" });
    let (expected, _, _) = every_hit(&live, &arguments, 5).await;
    let plain = call(&live, arguments.clone()).await;
    assert!(ok(&plain).get("mirror").is_none() && ok(&plain).get("note").is_none(), "{plain}");

    // More pages than one call reads: the first call fills part of the mirror and Zotero answers.
    let filling = app_with_mirror(sim.clone());
    let first = call(&filling, json!({ "query": "coral bleaching", "limit": 100 })).await;
    let out = ok(&first);
    assert_eq!(out["mirror"]["complete"], false, "{out}");
    assert!(out["note"].as_str().is_some_and(|n| n.contains("still being filled")), "{out}");
    assert!(text(&first).contains("still being filled"), "{}", text(&first));
    let keys: Vec<&str> =
        out["items"].as_array().map(|i| i.iter().filter_map(|i| i["key"].as_str()).collect()).unwrap_or_default();
    assert_eq!(keys, expected.iter().map(|k| k.split('<').next().unwrap_or_default()).collect::<Vec<_>>());

    // A search the mirror cannot answer as Zotero does (attachments decided by their file text) is Zotero's,
    // without asking the mirror anything.
    filled(&filling, None).await;
    let before = sim.requests().len();
    let bodies = json!({ "query": "quagga fooled flies", "qmode": "everything", "itemType": "attachment" });
    let answer = call(&filling, bodies.clone()).await;
    assert!(ok(&answer).get("mirror").is_none(), "{answer}");
    assert_eq!(sim.requests().len() - before, 1, "Zotero's search alone");
    assert_eq!(ok(&answer)["items"], ok(&call(&live, bodies).await)["items"]);
}

#[tokio::test]
async fn a_failing_mirror_leaves_the_search_to_zotero_in_one_line() {
    let (sim, _, _) = library(50);
    let mut app = app_with_sim(sim.clone());
    app.platform.mirror_db = Some(Rc::new(UnreachableMirror));
    let answer = call(&app, json!({ "query": "zebra" })).await;
    let out = ok(&answer);
    assert!(out.get("mirror").is_none(), "{out}");
    let note = out["note"].as_str().unwrap_or_default();
    assert!(note.contains("could not be brought up to date") && note.contains("Zotero answered"), "{note}");
    assert_eq!(out["items"].as_array().map(Vec::len), Some(3), "{out}");
}

/// A mirror database that cannot be reached.

#[tokio::test]
async fn one_group_s_rows_never_answer_another_group_s_search() {
    use zotero_sim::demo_groups::{LAB_GROUP, READING_GROUP};
    let sim = demo_sim();
    sim.add_demo_groups(DEMO_KEY);
    // The same seed: the two groups hold items with the same keys and titles, and one item each of their own.
    for (group, title) in [(LAB_GROUP, "Zebrafish in the lab"), (READING_GROUP, "Zebra finches, read aloud")] {
        sim.add_synthetic(LibraryRef::Group(group), 300, 3).expect("a synthetic library");
        sim.insert_item(LibraryRef::Group(group), json!({ "itemType": "book", "title": title }));
    }
    let live = app_with_sim(sim.clone());
    let mirrored = app_with_mirror(sim.clone());
    for group in [LAB_GROUP, READING_GROUP] {
        filled(&mirrored, Some(&format!("groups/{group}"))).await;
    }
    filled(&mirrored, None).await;
    for (library, own) in [
        (format!("groups/{LAB_GROUP}"), "Zebrafish in the lab"),
        (format!("groups/{READING_GROUP}"), "Zebra finches, read aloud"),
    ] {
        for query in ["zebra", "protein", "reading notes"] {
            let arguments = json!({ "query": query, "library": library });
            let (from_mirror, mirrors, _) = every_hit(&mirrored, &arguments, 5).await;
            let (from_zotero, _, _) = every_hit(&live, &arguments, 5).await;
            assert!(mirrors.iter().all(|m| m["complete"] == true), "{mirrors:?}");
            assert_eq!(from_mirror, from_zotero, "{arguments}");
        }
        let answer = call(&mirrored, json!({ "query": "zebra", "library": library })).await;
        let titles: Vec<&str> = ok(&answer)["items"]
            .as_array()
            .map(|i| i.iter().filter_map(|i| i["title"].as_str()).collect())
            .unwrap_or_default();
        assert_eq!(titles, [own], "{library}");
    }
    // The personal library has neither.
    let mine = call(&mirrored, json!({ "query": "zebrafish" })).await;
    assert_eq!(ok(&mine)["totalResults"], 0, "{mine}");
}

/// The mirror's size in bytes (SQLite's `dbstat`, after a `VACUUM`).
async fn bytes(db: &SqliteDb) -> u64 {
    use zotero_mcp_core::mirror::SqlDb;
    db.query("VACUUM", &[]).await.expect("vacuumed");
    let rows = db.query("SELECT sum(pgsize) AS bytes FROM dbstat", &[]).await.expect("dbstat");
    rows[0]["bytes"].as_u64().unwrap_or(0)
}

/// Fills a mirror of `sim`'s library through searches; returns the rows SQLite counted written meanwhile.
async fn fill_counting(sim: &Rc<Simulator>, db: &Rc<SqliteDb>) -> u64 {
    use zotero_mcp_core::mirror::SqlDb;
    let mut app = app_with_sim(sim.clone());
    app.platform.mirror_db = Some(db.clone());
    let changes = |rows: Vec<zotero_mcp_core::mirror::Row>| rows[0]["n"].as_u64().unwrap_or(0);
    let before = changes(db.query("SELECT total_changes() AS n", &[]).await.expect("counted"));
    filled(&app, None).await;
    changes(db.query("SELECT total_changes() AS n", &[]).await.expect("counted")) - before
}

#[tokio::test]
async fn the_search_index_of_a_ten_thousand_item_library_stays_a_fraction_of_the_mirror() {
    use zotero_mcp_core::mirror::{schema, SqlDb, Statement};
    let sim = demo_sim();
    sim.add_synthetic(LIB, 10_000, 5).expect("a synthetic library");
    let with = Rc::new(SqliteDb::in_memory().expect("an in-memory database"));
    let with_rows = fill_counting(&sim, &with).await;
    let with_bytes = bytes(&with).await;

    // The same fill without the index: its triggers gone first, its tables and the search column after.
    let without = Rc::new(SqliteDb::in_memory().expect("an in-memory database"));
    schema::migrate(&*without).await.expect("migrated");
    for trigger in ["insert", "update", "delete"] {
        let sql = format!("DROP TRIGGER mirror_search_{trigger}");
        without.query(&sql, &[]).await.expect("dropped");
    }
    let without_rows = fill_counting(&sim, &without).await;
    let drop = |sql: &'static str| Statement::new(sql, Vec::new());
    without
        .batch(&[
            drop("DROP TABLE mirror_search_text"),
            drop("DROP TABLE mirror_search_libraries"),
            drop("ALTER TABLE mirror_items DROP COLUMN search"),
        ])
        .await
        .expect("dropped");
    let without_bytes = bytes(&without).await;
    let items = with.query("SELECT count(*) AS n FROM mirror_items", &[]).await.expect("counted")[0]["n"].as_u64();
    let items = items.unwrap_or(0);
    eprintln!(
        "{items} items: {with_bytes} bytes and {with_rows} rows written with the search index, \
         {without_bytes} bytes and {without_rows} rows without"
    );
    // docs/mirror.md, "Searching" (and "D1's free plan": about 5 KB an item): about 12% more bytes, about one
    // more row written per item.
    assert!(items > 10_000);
    assert!((45_000_000..50_000_000).contains(&without_bytes), "{without_bytes}");
    assert!((50_000_000..56_000_000).contains(&with_bytes), "{with_bytes}");
    assert!(with_bytes < without_bytes * 115 / 100, "{with_bytes} against {without_bytes}");
    assert!(with_rows - without_rows < items * 12 / 10, "{with_rows} against {without_rows}");
}

#[tokio::test]
async fn a_search_run_while_the_mirror_is_checked_is_run_again_when_the_check_brought_changes() {
    let (sim, _, _) = library(300);
    let mut app = app_with_mirror(sim.clone());
    filled(&app, None).await;
    // Requests that take a turn, so the search really runs while Zotero is asked (as on a real network).
    app.platform.http = common::steps::Steps::over(app.platform.http.clone());
    app.platform.clock = Rc::new(zotero_mcp_core::testing::StoppedClock(app.platform.clock.now_ms()));
    let hits = |answer: &Value| ok(answer)["items"].as_array().map_or(0, Vec::len);
    let before = call(&app, json!({ "query": "Okapi" })).await;
    assert_eq!(hits(&before), 0, "{before}");
    // Added in Zotero after the mirror's last check: the search that ran meanwhile did not see it, the answer must.
    let added = sim.insert_item(LIB, json!({ "itemType": "book", "title": "Okapi stripes of the Congo" }));
    let after = call(&app, json!({ "query": "Okapi" })).await;
    assert_eq!(ok(&after)["items"][0]["key"], added.as_str(), "{after}");
    assert_eq!(ok(&after)["mirror"]["complete"], true);
    assert_eq!(ok(&after)["libraryVersion"], sim.library_version(LIB));
}
