//! `zotero_find_duplicates` against the simulator: grouping, the dry run, merges checked against the
//! simulator's state (children, relations, tags, collections, trash), a merge stopped part-way, group
//! libraries, and a read-only grant changing nothing whatever the arguments.

mod common;

use std::rc::Rc;

use common::*;
use serde_json::{json, Value};
use zotero_mcp_server::auth::Grant;
use zotero_mcp_server::call::Session;
use zotero_sim::{LibraryRef, Simulator};

const LIB: LibraryRef = LibraryRef::User(DEMO_USER);

async fn call_on(app: &zotero_mcp_server::app::App, grant: Grant, arguments: Value) -> Value {
    let ctx = Session::new(grant, app.config.clone(), app.platform.clone());
    zotero_mcp_server::tools::registry(&app.config)
        .call_tool(&ctx, "zotero_find_duplicates", arguments)
        .await
        .expect("tool exists")
}

async fn call(sim: &Rc<Simulator>, grant: Grant, arguments: Value) -> Value {
    call_on(&app_with_sim(sim.clone()), grant, arguments).await
}

fn writes(sim: &Simulator) -> usize {
    sim.requests().iter().filter(|r| r.method != "GET").count()
}

/// An empty user library with two copies of one article: the poorer one (B) has a note, a tag, a collection
/// and a volume the richer one (A) lacks. Returns (sim, A, B, note, collection).
fn twins(lib_kind: &str) -> (Rc<Simulator>, zotero_mcp_server::app::App, LibraryRef, [String; 4]) {
    let sim = Rc::new(Simulator::new());
    let (lib, app) = if lib_kind == "group" {
        sim.add_user(DEMO_USER, "gkey", true);
        sim.add_group(77, "gkey", true);
        let mut app =
            app_with(&[("ZOTERO_API_KEY", "gkey"), ("ZOTERO_LIBRARY_ID", "77"), ("ZOTERO_LIBRARY_TYPE", "group")]);
        app.platform.http = Rc::new(zotero_sim::InProcess(sim.clone()));
        (LibraryRef::Group(77), app)
    } else {
        sim.add_user(DEMO_USER, DEMO_KEY, true);
        (LIB, app_with_sim(sim.clone()))
    };
    let collection = sim.insert_collection(lib, json!({"name": "Reading"}));
    let rich = sim.insert_item(
        lib,
        json!({"itemType": "journalArticle", "title": "Urban heat islands and street trees", "date": "2020-03-01",
               "DOI": "10.1016/j.uclim.2020.100001", "publicationTitle": "Urban Climate", "pages": "1-20",
               "abstractNote": "Trees cool streets.", "language": "en", "issue": "2", "ISSN": "2212-0955",
               "url": "https://example.org/uhi",
               "creators": [{"creatorType": "author", "firstName": "Ana", "lastName": "Silva"}],
               "tags": [{"tag": "heat"}]}),
    );
    let poor = sim.insert_item(
        lib,
        json!({"itemType": "journalArticle", "title": "Urban Heat Islands and Street Trees.", "date": "March 2020",
               "DOI": "https://doi.org/10.1016/J.UCLIM.2020.100001", "volume": "31",
               "creators": [{"creatorType": "author", "firstName": "A.", "lastName": "Silva"}],
               "tags": [{"tag": "to-read", "type": 1}], "collections": [collection]}),
    );
    let note = sim.insert_item(lib, json!({"itemType": "note", "note": "<p>My notes</p>", "parentItem": poor}));
    sim.insert_item(lib, json!({"itemType": "journalArticle", "title": "Something else entirely", "date": "2020"}));
    (sim, app, lib, [rich, poor, note, collection])
}

#[tokio::test]
async fn a_scan_finds_the_pair_and_a_dry_run_changes_nothing() {
    let (sim, app, _, [rich, poor, ..]) = twins("user");
    let before = writes(&sim);
    let result = call_on(&app, Grant::read_write("owner"), json!({})).await;
    let out = ok(&result);
    assert_eq!(out["scanned"], 3);
    let groups = out["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 1);
    assert_eq!(groups[0]["reason"], "DOI");
    assert_eq!(groups[0]["keys"], json!([rich, poor]), "the richer copy is kept");
    assert_eq!(groups[0]["merged"], false);
    assert_eq!(groups[0]["gainedFields"], json!(["volume"]));
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("merge=true"), "{text}");
    assert_eq!(writes(&sim), before);
}

#[tokio::test]
async fn a_merge_moves_children_tags_collections_and_trashes_the_copy_as_desktop_does() {
    let (sim, app, lib, [rich, poor, note, collection]) = twins("user");
    let result = call_on(&app, Grant::read_write("owner"), json!({"merge": true})).await;
    let group = &ok(&result)["groups"][0];
    assert_eq!(group["merged"], true, "{result}");
    assert_eq!(group["movedChildren"], json!([note]));
    assert_eq!(group["trashed"], json!([poor]));

    let master = sim.item(lib, &rich).unwrap();
    let data = &master["data"];
    assert_eq!(data["volume"], "31");
    assert_eq!(data["pages"], "1-20", "the kept item's own fields stay");
    assert_eq!(data["collections"], json!([collection]));
    let tags: Vec<&str> = data["tags"].as_array().unwrap().iter().map(|t| t["tag"].as_str().unwrap()).collect();
    assert_eq!(tags, ["heat", "to-read"]);
    assert_eq!(data["relations"]["dc:replaces"], format!("http://zotero.org/users/{DEMO_USER}/items/{poor}"));
    assert_eq!(sim.item(lib, &note).unwrap()["data"]["parentItem"], rich.as_str());
    let deleted = sim.item(lib, &poor).unwrap()["data"]["deleted"].clone();
    assert!(deleted == json!(1) || deleted == json!(true), "the copy is in the trash: {deleted}");
    assert_eq!(master["meta"]["numChildren"], 1);

    // A second scan finds nothing: the copy is in the trash.
    let again = call_on(&app, Grant::read_write("owner"), json!({"merge": true})).await;
    assert_eq!(ok(&again)["groups"], json!([]));
}

#[tokio::test]
async fn a_group_library_s_merge_names_items_by_the_group() {
    let (sim, app, lib, [rich, poor, ..]) = twins("group");
    let result = call_on(&app, Grant::read_write("owner"), json!({"mergeKeys": [rich, poor], "merge": true})).await;
    assert_eq!(ok(&result)["groups"][0]["reason"], "explicit");
    let master = sim.item(lib, &rich).unwrap();
    assert_eq!(master["data"]["relations"]["dc:replaces"], format!("http://zotero.org/groups/77/items/{poor}"));
}

#[tokio::test]
async fn merge_keys_are_a_dry_run_without_merge_and_keep_the_first_key() {
    let (sim, app, _, [rich, poor, ..]) = twins("user");
    let before = writes(&sim);
    let result = call_on(&app, Grant::read_write("owner"), json!({"mergeKeys": [poor, rich]})).await;
    let group = &ok(&result)["groups"][0];
    assert_eq!(group["keys"], json!([poor, rich]));
    assert_eq!(group["merged"], false);
    assert_eq!(writes(&sim), before);
}

#[tokio::test]
async fn a_read_only_grant_changes_nothing_on_any_argument_combination() {
    let (sim, app, _, [rich, poor, ..]) = twins("user");
    let before = writes(&sim);
    for arguments in [
        json!({"merge": true}),
        json!({"mergeKeys": [rich, poor], "merge": true}),
        json!({"mergeKeys": [rich, poor]}),
        json!({}),
        json!({"merge": true, "scanLimit": 10}),
    ] {
        let result = call_on(&app, Grant::read_only("owner"), arguments.clone()).await;
        if arguments["merge"] == true {
            assert!(error_text(&result).contains("read-only"), "{arguments}");
        } else {
            ok(&result);
        }
    }
    assert_eq!(writes(&sim), before);
}

#[tokio::test]
async fn merges_zotero_would_refuse_are_refused_with_nothing_written() {
    let (sim, app, lib, [rich, _, note, _]) = twins("user");
    let book = sim.insert_item(lib, json!({"itemType": "book", "title": "Urban heat islands and street trees"}));
    let before = writes(&sim);
    for (keys, expected) in [
        (json!([rich, book]), "one type"),
        (json!([rich, note]), "only regular items"),
        (json!([rich, "ZZZZZZZZ"]), "no item with the key ZZZZZZZZ"),
    ] {
        let result = call_on(&app, Grant::read_write("owner"), json!({"mergeKeys": keys, "merge": true})).await;
        let text = error_text(&result);
        assert!(text.contains(expected) && text.contains("nothing was changed"), "{text}");
    }
    assert_eq!(writes(&sim), before);
}

#[tokio::test]
async fn a_child_changed_meanwhile_stops_the_merge_before_the_master_or_the_trash() {
    let (sim, app, lib, [rich, poor, note, _]) = twins("user");
    let second = sim.insert_item(lib, json!({"itemType": "note", "note": "<p>Second</p>", "parentItem": poor}));
    sim.edit_before_next_write(lib, &second);
    let master_before = sim.item(lib, &rich).unwrap()["version"].clone();
    let result = call_on(&app, Grant::read_write("owner"), json!({"mergeKeys": [rich, poor], "merge": true})).await;
    let group = &ok(&result)["groups"][0];
    assert_eq!(group["merged"], false);
    assert_eq!(group["movedChildren"], json!([note]));
    let why = group["note"].as_str().unwrap();
    assert!(why.contains("not updated") && why.contains("Run the merge again"), "{why}");
    assert_eq!(sim.item(lib, &rich).unwrap()["version"], master_before, "the master is untouched");
    assert!(sim.item(lib, &poor).unwrap()["data"].get("deleted").is_none(), "the copy is not trashed");
    assert_eq!(sim.item(lib, &second).unwrap()["data"]["parentItem"], poor.as_str());

    // Run again: the rest moves and the merge completes.
    let again = call_on(&app, Grant::read_write("owner"), json!({"mergeKeys": [rich, poor], "merge": true})).await;
    assert_eq!(ok(&again)["groups"][0]["merged"], true, "{again}");
    assert_eq!(sim.item(lib, &second).unwrap()["data"]["parentItem"], rich.as_str());
}

#[tokio::test]
async fn the_demo_library_scan_reads_only_what_it_needs() {
    let sim = demo_sim();
    let before = sim.requests().len();
    let result = call(&sim, Grant::read_only("owner"), json!({"scanLimit": 100})).await;
    ok(&result);
    assert_eq!(sim.requests().len() - before, 1, "one page of 100 top-level items");
}
