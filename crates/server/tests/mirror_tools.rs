//! Tools answering whole-library questions from the library mirror: `zotero_find_duplicates` scans every item
//! once the mirror is complete (the newest `scanLimit` only without one), says so in its `mirror` block, costs one
//! request when nothing changed, and while the mirror is still filling says how little it scanned.

mod common;

use std::rc::Rc;

use common::*;
use serde_json::{json, Value};
use zotero_mcp_server::app::App;
use zotero_sim::LibraryRef;

const LIB: LibraryRef = LibraryRef::User(DEMO_USER);

/// The demo library with `n` more articles, the first `twins` of which have a twin added after all the others
/// (same DOI): far apart, beyond the newest 500 the live scan reads.
fn grown(n: usize, twins: usize) -> (Rc<zotero_sim::Simulator>, App) {
    let sim = demo_sim();
    let article = |i: usize, title: String| {
        json!({ "itemType": "journalArticle", "title": title, "DOI": format!("10.5555/grown.{i}"),
                "creators": [{ "creatorType": "author", "firstName": "Ada", "lastName": format!("Author{i}") }],
                "date": "2020", "tags": [], "collections": [], "relations": {} })
    };
    for i in 0..n {
        sim.insert_item(LIB, article(i, format!("Grown paper number {i}")));
    }
    for i in 0..twins {
        sim.insert_item(LIB, article(i, format!("Grown Paper Number {i}.")));
    }
    let mut app = app_with_sim(sim.clone());
    app.platform.mirror_db = Some(common::mirror_db());
    (sim, app)
}

async fn find_duplicates(app: &App) -> Value {
    call_tool(app, "zotero_find_duplicates", json!({})).await
}

fn grown_groups(out: &Value) -> usize {
    let groups = out["groups"].as_array().cloned().unwrap_or_default();
    groups
        .iter()
        .filter(|g| g["titles"][0].as_str().is_some_and(|t| t.to_lowercase().starts_with("grown paper")))
        .count()
}

#[tokio::test]
async fn duplicates_are_found_across_the_whole_library_once_its_mirror_is_complete() {
    let (sim, app) = grown(700, 20);
    let first = find_duplicates(&app).await;
    let out = ok(&first);
    assert_eq!(out["mirror"]["complete"], true, "{out}");
    assert!(out["scanned"].as_u64().unwrap_or(0) >= 720, "{out}");
    assert_eq!(grown_groups(out), 20, "every twin, however far apart: {}", text(&first));
    assert!(text(&first).contains("The whole library was scanned"), "{}", text(&first));
    assert_eq!(out["mirror"]["libraryVersion"], sim.library_version(LIB));

    // Nothing changed since: one request to Zotero (answered 304), the same groups.
    let before = sim.requests().len();
    let again = find_duplicates(&app).await;
    assert_eq!(sim.requests().len() - before, 1, "{:?}", &sim.requests()[before..]);
    assert_eq!(grown_groups(ok(&again)), 20);
}

#[tokio::test]
async fn more_groups_than_an_answer_holds_follow_page_by_page_each_once() {
    let (_, app) = grown(400, 120);
    let mut seen = std::collections::BTreeSet::new();
    let mut offset = 0;
    let mut total = None;
    for _ in 0..10 {
        let page = call_tool(&app, "zotero_find_duplicates", json!({ "offset": offset })).await;
        let out = ok(&page);
        let groups = out["groups"].as_array().expect("groups");
        assert!(groups.len() <= 50, "{}", groups.len());
        total = out["groupsTotal"].as_u64();
        for group in groups {
            assert!(seen.insert(group["keys"].to_string()), "a group shown twice: {group}");
        }
        match out["nextOffset"].as_u64() {
            Some(next) => {
                assert!(text(&page).contains(&format!("call again with offset {next}")), "{}", text(&page));
                offset = next;
            }
            None => break,
        }
    }
    let total = total.expect("the total is given");
    assert!(total >= 120, "{total}");
    assert_eq!(seen.len() as u64, total, "every group, once");
    let past = call_tool(&app, "zotero_find_duplicates", json!({ "offset": total + 5 })).await;
    assert!(ok(&past)["groups"].as_array().expect("groups").is_empty());
    assert!(text(&past).contains("none past offset"), "{}", text(&past));
}

#[tokio::test]
async fn without_a_mirror_the_scan_reads_the_newest_items_as_before() {
    let (_, mut app) = grown(700, 20);
    app.platform.mirror_db = None;
    let out = find_duplicates(&app).await;
    assert!(ok(&out).get("mirror").is_none(), "{out}");
    assert_eq!(ok(&out)["scanned"], 500);
    assert!(grown_groups(ok(&out)) < 20, "the live scan misses twins beyond its newest 500");
}

#[tokio::test]
async fn while_the_mirror_fills_the_answer_says_how_little_it_covered() {
    // More pages than one call may read: the first calls scan the newest 500 live and say so.
    let (_, app) = grown(3_200, 5);
    let first = find_duplicates(&app).await;
    let out = ok(&first);
    assert_eq!(out["mirror"]["complete"], false, "{out}");
    assert_eq!(out["scanned"], 500, "{out}");
    let note = out["note"].as_str().unwrap_or_default();
    assert!(note.contains("still being filled") && note.contains("newest 500"), "{out}");
    assert!(!text(&first).contains("whole library was scanned"), "{}", text(&first));
    // The next call goes on where the first stopped, and completes it.
    let second = find_duplicates(&app).await;
    assert_eq!(ok(&second)["mirror"]["complete"], true, "{}", ok(&second));
    assert_eq!(grown_groups(ok(&second)), 5);
}

#[tokio::test]
async fn a_scheduled_run_fills_the_mirror_with_what_the_semantic_index_left() {
    let (sim, app) = grown(1_200, 3);
    let run = zotero_mcp_server::jobs::sync_semantic_index(&app).await;
    assert_eq!(run.requests, 0, "no AI Search here, no request for it: {run:?}");
    let status =
        zotero_mcp_server::jobs::advance_mirror(&app, run.requests).await.expect("a mirror").expect("advanced");
    assert!(status.complete, "{status:?}");
    // The call after it only asks whether anything changed.
    let before = sim.requests().len();
    let scan = find_duplicates(&app).await;
    assert_eq!(sim.requests().len() - before, 1, "{:?}", &sim.requests()[before..]);
    assert_eq!(grown_groups(ok(&scan)), 3);
    // A run whose semantic index took its share leaves the mirror what is left, or nothing.
    assert!(zotero_mcp_server::jobs::advance_mirror(&app, zotero_mcp_server::jobs::SCHEDULED_REQUESTS).await.is_none());
}

#[tokio::test]
async fn collections_from_the_mirror_are_those_zotero_lists_with_the_same_counts() {
    let demo = demo_sim();
    assert!(!demo.searches(LIB).is_empty(), "the demo library has saved searches to compare");
    for sim in [demo, Rc::new(zotero_sim::Simulator::synthetic(3_000, 11))] {
        let live = app_with_sim(sim.clone());
        let mut mirrored = app_with_sim(sim.clone());
        mirrored.platform.mirror_db = Some(common::mirror_db());
        let (from_zotero, from_mirror) = loop {
            let answer = call_tool(&mirrored, "zotero_list_collections", json!({})).await;
            if ok(&answer)["mirror"]["complete"] == true {
                break (call_tool(&live, "zotero_list_collections", json!({})).await, answer);
            }
        };
        let (zotero_tree, mirror_tree) = (&ok(&from_zotero)["collections"], &ok(&from_mirror)["collections"]);
        assert!(zotero_tree.as_array().is_some_and(|tree| tree.len() >= 10), "{from_zotero}");
        assert_eq!(mirror_tree, zotero_tree, "the same tree, paths and counts");
        let searches = &ok(&from_zotero)["savedSearches"];
        assert_eq!(&ok(&from_mirror)["savedSearches"], searches, "the same saved searches, in the same order");
        assert!(ok(&from_zotero).get("mirror").is_none());
        // With the mirror in step: one request to check it, the saved searches from the mirror too.
        let before = sim.requests().len();
        call_tool(&mirrored, "zotero_list_collections", json!({})).await;
        assert_eq!(sim.requests().len() - before, 1, "{:?}", &sim.requests()[before..]);
    }
}

#[tokio::test]
async fn tags_from_the_mirror_are_those_zotero_lists_with_the_same_counts_by_name() {
    let by_name = |answer: &Value| {
        let mut tags: Vec<(String, u64, bool)> = ok(answer)["tags"]
            .as_array()
            .map(|tags| {
                tags.iter()
                    .map(|t| {
                        let name = t["tag"].as_str().unwrap_or_default().to_owned();
                        (name, t["numItems"].as_u64().unwrap_or(0), t["automatic"] == true)
                    })
                    .collect()
            })
            .unwrap_or_default();
        tags.sort_by(|a, b| a.0.to_lowercase().cmp(&b.0.to_lowercase()).then(a.2.cmp(&b.2)));
        tags
    };
    for sim in [demo_sim(), Rc::new(zotero_sim::Simulator::synthetic(3_000, 11))] {
        let live = app_with_sim(sim.clone());
        let mut mirrored = app_with_sim(sim.clone());
        mirrored.platform.mirror_db = Some(common::mirror_db());
        for arguments in [json!({ "limit": 1000 }), json!({ "limit": 1000, "query": "A" })] {
            let from_mirror = loop {
                let answer = call_tool(&mirrored, "zotero_list_tags", arguments.clone()).await;
                if ok(&answer)["mirror"]["complete"] == true {
                    break answer;
                }
            };
            let from_zotero = call_tool(&live, "zotero_list_tags", arguments.clone()).await;
            assert!(by_name(&from_zotero).len() >= 5, "{from_zotero}");
            assert_eq!(by_name(&from_mirror), by_name(&from_zotero), "{arguments}");
            assert_eq!(ok(&from_mirror)["totalResults"], ok(&from_zotero)["totalResults"]);
            // Listed by name.
            let names: Vec<String> = by_name(&from_mirror).into_iter().map(|t| t.0).collect();
            let listed: Vec<&str> = ok(&from_mirror)["tags"]
                .as_array()
                .map(|t| t.iter().filter_map(|t| t["tag"].as_str()).collect())
                .unwrap_or_default();
            assert_eq!(listed, names);
        }
        let before = sim.requests().len();
        call_tool(&mirrored, "zotero_list_tags", json!({ "limit": 1000 })).await;
        assert_eq!(sim.requests().len() - before, 1, "the mirror's check only");
    }
}

#[tokio::test]
async fn the_mirror_s_groups_are_those_a_scan_of_every_item_finds() {
    // A library small enough for the live scan to read whole: the mirror reads only the items sharing a key,
    // and must find the same groups, for the same reasons, with the same copy kept.
    let sim = Rc::new(zotero_sim::Simulator::synthetic(1_200, 5));
    let copies = [
        // The same title, year and first author, no identifier.
        json!({ "itemType": "report", "title": "Field notes on a long winter", "date": "2011",
                "creators": [{ "creatorType": "author", "lastName": "Olsen", "firstName": "K." }] }),
        json!({ "itemType": "report", "title": "Field Notes on a Long Winter.", "date": "2011-03",
                "creators": [{ "creatorType": "author", "lastName": "Olsen", "firstName": "Karin" }] }),
        // Two books with one ISBN written two ways.
        json!({ "itemType": "book", "title": "A handbook", "ISBN": "978-0-306-40615-7" }),
        json!({ "itemType": "book", "title": "Handbook, second printing", "ISBN": "0306406152" }),
        // A preprint named by its arXiv id in two places.
        json!({ "itemType": "preprint", "title": "Attention", "archiveID": "arXiv:1706.03762" }),
        json!({ "itemType": "journalArticle", "title": "Attention again", "extra": "arXiv: 1706.03762v5" }),
    ];
    for copy in copies {
        sim.insert_item(LIB, copy);
    }
    let groups = |answer: &Value| {
        let mut found: Vec<(String, String)> = ok(answer)["groups"]
            .as_array()
            .expect("groups")
            .iter()
            .map(|g| (g["reason"].as_str().unwrap_or_default().to_owned(), g["keys"].to_string()))
            .collect();
        found.sort();
        found
    };
    let live = call_tool(&app_with_sim(sim.clone()), "zotero_find_duplicates", json!({ "scanLimit": 2000 })).await;
    let mut mirrored = app_with_sim(sim.clone());
    mirrored.platform.mirror_db = Some(common::mirror_db());
    let mut answer = call_tool(&mirrored, "zotero_find_duplicates", json!({})).await;
    for _ in 0..5 {
        if ok(&answer)["mirror"]["complete"] == true {
            break;
        }
        answer = call_tool(&mirrored, "zotero_find_duplicates", json!({})).await;
    }
    assert_eq!(ok(&answer)["mirror"]["complete"], true);
    assert_eq!(ok(&answer)["scanned"], ok(&live)["scanned"], "every top-level item counted as examined");
    let reasons: std::collections::BTreeSet<String> = groups(&live).into_iter().map(|(reason, _)| reason).collect();
    assert!(reasons.len() >= 3, "DOI, ISBN, arXiv and title groups to compare: {reasons:?}");
    assert_eq!(groups(&answer), groups(&live));
}
