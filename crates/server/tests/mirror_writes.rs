//! Write-through: what the server writes reaches the library mirror as Zotero answered it, so the next
//! whole-library answer holds it at the cost of one freshness request (a 304) when nobody else wrote between;
//! when somebody did, the mirror still holds our write and the next pass reads theirs.

mod common;

use common::*;
use serde_json::{json, Value};
use zotero_mcp_server::app::App;
use zotero_sim::LibraryRef;

const LIB: LibraryRef = LibraryRef::User(DEMO_USER);

async fn call(app: &App, tool: &str, arguments: Value) -> Value {
    ok(&call_tool(app, tool, arguments).await).clone()
}

async fn tags(app: &App) -> Value {
    call(app, "zotero_list_tags", json!({ "limit": 500 })).await
}

fn has_tag(listing: &Value, name: &str) -> bool {
    listing["tags"].as_array().is_some_and(|tags| tags.iter().any(|tag| tag["tag"] == name))
}

async fn doi_matched(app: &App, doi: &str) -> (bool, Value) {
    let out = call(app, "zotero_check_references", json!({ "text": doi, "checkRegistry": false })).await;
    (out["counts"]["matched"] == 1, out)
}

#[tokio::test]
async fn a_write_is_in_the_next_answer_for_one_request_when_nobody_else_wrote() {
    let sim = demo_sim();
    let app = app_with_mirror(sim.clone());
    let filled = tags(&app).await;
    assert_eq!(filled["mirror"]["complete"], true, "{filled}");
    let at = filled["mirror"]["libraryVersion"].as_u64().unwrap();
    let held = filled["mirror"]["items"].as_u64().unwrap();

    // A creation: the next check finds it by DOI, with one request (the mirror moved with the write).
    let article = json!({ "itemType": "journalArticle", "title": "Written through", "fields": { "DOI": "10.5555/through.1" },
                          "tags": [{ "tag": "through-created" }] });
    let created = call(&app, "zotero_create_items", json!({ "items": [article] })).await;
    let key = created["created"][0].as_str().expect("created").to_owned();
    let (matched, out) = doi_matched(&app, "10.5555/through.1").await;
    assert!(matched, "{out}");
    assert_eq!(out["references"][0]["itemKey"], key);
    assert_eq!(out["requests"], 1, "a 304, nothing read again: {out}");
    assert_eq!(out["mirror"]["libraryVersion"], sim.library_version(LIB));
    assert!(out["mirror"]["libraryVersion"].as_u64().unwrap() > at);
    assert_eq!(out["mirror"]["items"], held + 1, "the new item counted");

    // An update: its new tag is listed at once, for one request.
    call(&app, "zotero_update_item", json!({ "keys": [key], "addTags": ["through-updated"] })).await;
    let before = sim.requests().len();
    let listed = tags(&app).await;
    assert!(has_tag(&listed, "through-updated") && has_tag(&listed, "through-created"), "{listed}");
    assert_eq!(sim.requests().len() - before, 1, "one request, a 304");

    // Into the trash: no longer matched, for one request.
    call(&app, "zotero_delete_items", json!({ "keys": [key] })).await;
    let (matched, out) = doi_matched(&app, "10.5555/through.1").await;
    assert!(!matched, "a trashed item is not a match: {out}");
    assert_eq!(out["requests"], 1, "{out}");
}

#[tokio::test]
async fn when_somebody_else_wrote_between_the_next_answer_holds_both_writes() {
    let sim = demo_sim();
    let app = app_with_mirror(sim.clone());
    tags(&app).await;
    // Somebody else (Zotero Desktop, another client) writes first; then the server writes.
    sim.insert_item(LIB, json!({ "itemType": "book", "title": "Theirs", "tags": [{ "tag": "their-tag" }] }));
    let ours = json!({ "itemType": "journalArticle", "title": "Ours", "tags": [{ "tag": "our-tag" }] });
    call(&app, "zotero_create_items", json!({ "items": [ours] })).await;
    let before = sim.requests().len();
    let listed = tags(&app).await;
    assert!(has_tag(&listed, "our-tag") && has_tag(&listed, "their-tag"), "{listed}");
    assert!(sim.requests().len() - before > 1, "their write is read from Zotero");
    assert_eq!(listed["mirror"]["libraryVersion"], sim.library_version(LIB));
}
