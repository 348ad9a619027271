//! `zotero_search` with `savedSearch` over the library mirror: once the mirror is complete, the search and its
//! items are read there (`mirror::saved`), for the mirror's one freshness request, with the same rows in the same
//! order as the run through Zotero; and a search too broad to run through Zotero in one call (more than 3,000
//! items to decide) runs over the mirror.

mod common;

use std::rc::Rc;

use common::*;
use serde_json::{json, Value};
use zotero_mcp_server::app::App;
use zotero_sim::{LibraryRef, Simulator};

const LIB: LibraryRef = LibraryRef::User(DEMO_USER);

/// The demo library with `n` more items: every third a book, every fifth tagged "Core", every seventh with a
/// note, the first ten in a collection "Shelf"; and saved searches over them.
fn library(n: usize) -> Rc<Simulator> {
    let sim = demo_sim();
    let shelf = sim.insert_collection(LIB, json!({ "name": "Shelf" }));
    for i in 0..n {
        let key = sim.insert_item(
            LIB,
            json!({ "itemType": if i % 3 == 0 { "book" } else { "journalArticle" },
                    "title": format!("Grown source {i}"), "date": format!("{}", 1980 + i % 40),
                    "creators": [{ "creatorType": "author", "firstName": "Ada", "lastName": format!("Writer{}", i % 9) }],
                    "tags": if i % 5 == 0 { json!([{ "tag": "Core" }]) } else { json!([]) },
                    "collections": if i < 10 { json!([shelf]) } else { json!([]) } }),
        );
        if i % 7 == 0 {
            sim.insert_item(
                LIB,
                json!({ "itemType": "note", "parentItem": key, "note": format!("<p>remark {i}</p>") }),
            );
        }
    }
    for (name, conditions) in [
        (
            "core books",
            json!([{ "condition": "tag", "operator": "is", "value": "core" },
                              { "condition": "itemType", "operator": "is", "value": "book" }]),
        ),
        ("shelf", json!([{ "condition": "collection", "operator": "is", "value": shelf }])),
        ("remarks", json!([{ "condition": "note", "operator": "contains", "value": "remark 7" }])),
        (
            "old or writer3",
            json!([{ "condition": "date", "operator": "isBefore", "value": "1983" },
                                  { "condition": "creator", "operator": "is", "value": "Writer3" },
                                  { "condition": "joinMode", "operator": "any", "value": "" }]),
        ),
        ("grown", json!([{ "condition": "title", "operator": "contains", "value": "grown source 1" }])),
    ] {
        sim.insert_search(LIB, json!({ "name": name, "conditions": conditions }));
    }
    sim
}

async fn search(app: &App, name: &str) -> Value {
    call_tool(app, "zotero_search", json!({ "savedSearch": name, "limit": 100 })).await
}

fn rows(result: &Value) -> (Vec<String>, Value) {
    let out = ok(result);
    let keys = out["items"].as_array().expect("items").iter().map(|i| i["key"].as_str().unwrap().to_owned()).collect();
    (keys, out["totalResults"].clone())
}

#[tokio::test]
async fn a_saved_search_runs_over_the_mirror_with_zotero_s_rows_for_one_request() {
    let sim = library(600);
    let live = app_with_sim(sim.clone());
    let mirrored = app_with_mirror(sim.clone());
    search(&mirrored, "shelf").await; // fills the mirror
    for name in ["core books", "shelf", "remarks", "old or writer3", "grown"] {
        let through_zotero = search(&live, name).await;
        let before = sim.requests().len();
        let over_mirror = search(&mirrored, name).await;
        assert_eq!(sim.requests().len() - before, 1, "{name}: the mirror's check only");
        assert_eq!(ok(&over_mirror)["mirror"]["complete"], true, "{name}");
        assert!(ok(&through_zotero).get("mirror").is_none());
        let (keys, total) = rows(&over_mirror);
        assert!(!keys.is_empty(), "{name} finds something");
        assert_eq!((keys, total), rows(&through_zotero), "{name}: the same rows in the same order");
    }
}

#[tokio::test]
async fn a_saved_search_too_broad_for_one_call_through_zotero_runs_over_the_mirror() {
    let sim = library(3200);
    let live = app_with_sim(sim.clone());
    let refused = search(&live, "grown").await;
    assert_eq!(refused["isError"], true, "{refused}");
    assert!(error_text(&refused).contains("more than the 3000"), "{}", error_text(&refused));

    // While the mirror fills (2,000 items a call), the search goes to Zotero and is refused as above.
    let mirrored = app_with_mirror(sim.clone());
    let mut answer = search(&mirrored, "grown").await;
    for _ in 0..5 {
        if answer["isError"] != true {
            break;
        }
        answer = search(&mirrored, "grown").await;
    }
    let out = ok(&answer);
    assert_eq!(out["mirror"]["complete"], true, "{out}");
    // "Grown source 1", 10–19, 100–199, 1000–1999: 1 + 10 + 100 + 1000.
    assert_eq!(out["totalResults"], 1111, "{}", text(&answer));
}
