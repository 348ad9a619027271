//! `zotero_changes` against the simulator: a baseline cursor, then what a write, a child, a trashing, a
//! collection, a saved search and a permanent delete show as; cursors of another library and bare versions
//! refused; and no cursor when the library moves while the call reads it.

mod common;
mod library_support;

use std::rc::Rc;

use async_trait::async_trait;
use common::*;
use library_support::*;
use serde_json::{json, Value};
use zotero_mcp_core::platform::{HttpClient, HttpError, HttpRequest, HttpResponse};
use zotero_mcp_server::auth::Grant;
use zotero_mcp_server::call::Session;
use zotero_sim::Simulator;

const LIBRARY: &str = "users/1234567";

fn keys_of(list: &Value) -> Vec<String> {
    let mut keys: Vec<String> = list.as_array().unwrap().iter().map(|c| c["key"].as_str().unwrap().into()).collect();
    keys.sort();
    keys
}

#[tokio::test]
async fn a_baseline_lists_nothing_and_its_cursor_shows_every_later_change_in_its_place() {
    let sim = demo_sim();
    let baseline = rpc(&sim, "zotero_changes", json!({})).await;
    let base = ok(&baseline).clone();
    assert_eq!(base["cursor"], json!({ "library": LIBRARY, "version": sim.library_version(LIB) }));
    assert!(base.get("fromVersion").is_none());
    assert_eq!(base["changed"]["items"], json!([]));
    assert_eq!(base["deleted"], json!({ "items": [], "collections": [], "savedSearches": [], "tags": [] }));

    let paper = sim.insert_item(LIB, json!({ "itemType": "journalArticle", "title": "A new paper" }));
    let note = sim.insert_item(LIB, json!({ "itemType": "note", "parentItem": paper, "note": "<p>Read it</p>" }));
    let collection = sim.insert_collection(LIB, json!({ "name": "New shelf" }));
    let search = sim.insert_search(
        LIB,
        json!({ "name": "New search", "conditions": [
        { "condition": "title", "operator": "contains", "value": "new" } ] }),
    );
    write(&sim, "zotero_delete_items", json!({ "keys": ["T6W7H8UE"] })).await;
    let gone = sim.insert_item(LIB, json!({ "itemType": "book", "title": "Soon gone" }));
    let removed = write(&sim, "zotero_delete_items", json!({ "keys": [gone], "permanent": true })).await;
    assert_eq!(removed["isError"], Value::Null, "{removed}");

    let result = rpc(&sim, "zotero_changes", json!({ "since": base["cursor"] })).await;
    let out = ok(&result);
    assert_eq!(out["fromVersion"], base["cursor"]["version"]);
    assert_eq!(keys_of(&out["changed"]["items"]), [paper], "{out}");
    assert_eq!(keys_of(&out["changed"]["childItems"]), [note]);
    assert_eq!(keys_of(&out["changed"]["trashedItems"]), ["T6W7H8UE"]);
    assert_eq!(keys_of(&out["changed"]["collections"]), [collection]);
    assert_eq!(keys_of(&out["changed"]["savedSearches"]), [search]);
    assert_eq!(out["deleted"]["items"], json!([gone]));
    assert_eq!(out["totals"]["childItems"], 1);
    assert_eq!(out["cursor"], json!({ "library": LIBRARY, "version": sim.library_version(LIB) }));
    assert!(text(&result).contains("- child items: "), "{}", text(&result));

    // From the new cursor: nothing, and a deletion log that says so.
    let quiet = rpc(&sim, "zotero_changes", json!({ "since": out["cursor"] })).await;
    assert_eq!(ok(&quiet)["totals"]["items"], 0);
    assert!(text(&quiet).contains("- deleted: nothing"), "{}", text(&quiet));
}

#[tokio::test]
async fn a_cursor_of_another_library_or_a_bare_version_is_refused_before_anything_is_read() {
    let sim = demo_sim();
    sim.add_demo_groups(DEMO_KEY);
    let other = rpc(&sim, "zotero_changes", json!({ "since": { "library": "groups/100001", "version": 3 } })).await;
    assert!(error_text(&other).contains("the cursor is for library groups/100001"), "{}", error_text(&other));
    let bare = rpc(&sim, "zotero_changes", json!({ "since": 12 })).await;
    assert_eq!(bare["isError"], true);
    assert!(error_text(&bare).contains("since"), "{}", error_text(&bare));

    // The group's own cursor works with the group named.
    let group = rpc(&sim, "zotero_changes", json!({ "library": "groups/100001" })).await;
    let cursor = ok(&group)["cursor"].clone();
    assert_eq!(cursor["library"], "groups/100001");
    let again = rpc(&sim, "zotero_changes", json!({ "library": "groups/100001", "since": cursor })).await;
    assert_eq!(ok(&again)["library"], "groups/100001");
}

/// The simulator, with an item added just before the first `/items/top` read: a write landing mid-call.
struct MovingLibrary {
    sim: Rc<Simulator>,
    moved: std::cell::Cell<bool>,
}

#[async_trait(?Send)]
impl HttpClient for MovingLibrary {
    async fn send(&self, request: HttpRequest) -> Result<HttpResponse, HttpError> {
        if request.uri().path().ends_with("/items/top") && !self.moved.replace(true) {
            self.sim.insert_item(LIB, json!({ "itemType": "book", "title": "Written meanwhile" }));
        }
        Ok(self.sim.handle(request))
    }
}

#[tokio::test]
async fn a_library_that_moves_during_the_call_gives_no_cursor() {
    let sim = demo_sim();
    let base = ok(&rpc(&sim, "zotero_changes", json!({})).await).clone();
    let mut app = app_with_sim(sim.clone());
    app.platform.http = Rc::new(MovingLibrary { sim: sim.clone(), moved: Default::default() });
    let ctx = Session::new(Grant::read_only("owner"), app.config.clone(), app.platform.clone());
    let result = zotero_mcp_server::tools::registry(&app.config)
        .call_tool(&ctx, "zotero_changes", json!({ "since": base["cursor"] }))
        .await
        .expect("the tool exists");
    let out = ok(&result);
    assert_eq!(out["libraryChanged"], true, "{out}");
    assert!(out.get("cursor").is_none(), "{out}");
    assert!(text(&result).contains("No cursor"), "{}", text(&result));
}

/// Follows `continuation`s from `first` until an answer gives a cursor; returns every item key listed and the
/// cursor. Fails if a part gives neither.
async fn follow(sim: &Rc<Simulator>, first: &Value, limit: u32) -> (Vec<String>, Value) {
    let mut out = ok(first).clone();
    let mut listed = keys_of(&out["changed"]["items"]);
    for _ in 0..20 {
        if let Some(cursor) = out.get("cursor") {
            listed.sort();
            return (listed, cursor.clone());
        }
        let next = out.get("continuation").unwrap_or_else(|| panic!("neither a cursor nor a continuation: {out}"));
        let part = rpc(sim, "zotero_changes", json!({ "since": next, "limit": limit })).await;
        out = ok(&part).clone();
        listed.extend(keys_of(&out["changed"]["items"]));
    }
    panic!("no cursor after 20 parts: {out}");
}

#[tokio::test]
async fn a_cut_answer_gives_a_continuation_not_a_cursor_and_its_parts_list_every_change() {
    let sim = demo_sim();
    let base = ok(&rpc(&sim, "zotero_changes", json!({})).await).clone();
    let mut added: Vec<String> =
        (0..5).map(|n| sim.insert_item(LIB, json!({ "itemType": "book", "title": format!("Book {n}") }))).collect();
    added.sort();

    let first = rpc(&sim, "zotero_changes", json!({ "since": base["cursor"], "limit": 2 })).await;
    let out = ok(&first);
    assert_eq!(out["truncated"], true, "{out}");
    assert_eq!(out["totals"]["items"], 5);
    assert_eq!(keys_of(&out["changed"]["items"]), added[..2], "the first keys, in key order");
    // A cursor here would skip the three items past the limit for good.
    assert!(out.get("cursor").is_none(), "a cut answer must not be resumed from: {out}");
    let version = sim.library_version(LIB);
    assert_eq!(
        out["continuation"],
        json!({ "library": LIBRARY, "version": base["cursor"]["version"], "offset": 2, "atVersion": version })
    );
    let markdown = text(&first);
    assert!(markdown.contains("Cut at `limit`"), "{markdown}");
    assert!(!markdown.contains("Next time pass since"), "{markdown}");

    let (listed, cursor) = follow(&sim, &first, 2).await;
    assert_eq!(listed, added, "every change, each once");
    assert_eq!(cursor, json!({ "library": LIBRARY, "version": version }));

    // A later part says where it starts.
    let second = rpc(&sim, "zotero_changes", json!({ "since": out["continuation"], "limit": 2 })).await;
    assert_eq!(ok(&second)["offset"], 2);
    assert!(text(&second).contains("from entry 3 of each list"), "{}", text(&second));
}

#[tokio::test]
async fn a_continuation_read_after_the_library_moved_starts_over_and_skips_nothing() {
    let sim = demo_sim();
    let base = ok(&rpc(&sim, "zotero_changes", json!({})).await).clone();
    for n in 0..3 {
        sim.insert_item(LIB, json!({ "itemType": "book", "title": format!("Book {n}") }));
    }
    let first = rpc(&sim, "zotero_changes", json!({ "since": base["cursor"], "limit": 2 })).await;
    let continuation = ok(&first)["continuation"].clone();
    let late = sim.insert_item(LIB, json!({ "itemType": "book", "title": "Written between the parts" }));

    let part = rpc(&sim, "zotero_changes", json!({ "since": continuation, "limit": 2 })).await;
    let out = ok(&part).clone();
    assert!(out.get("offset").is_none(), "it starts over: {out}");
    assert!(out["note"].as_str().unwrap().contains("lists from the first entry again"), "{out}");
    let (listed, cursor) = follow(&sim, &part, 2).await;
    assert!(listed.contains(&late), "{listed:?}");
    assert_eq!(listed.len(), 4, "{listed:?}");
    assert_eq!(cursor["version"], sim.library_version(LIB));
}

#[tokio::test]
async fn half_a_continuation_is_refused() {
    let sim = demo_sim();
    let since = json!({ "library": LIBRARY, "version": 1, "offset": 50 });
    let refused = rpc(&sim, "zotero_changes", json!({ "since": since })).await;
    assert!(error_text(&refused).contains("a continuation carries both"), "{}", error_text(&refused));
}

/// The simulator, with `Total-Results` on every `/items` listing saying more than the answer holds: a listing
/// Zotero cut short.
struct CountsMore(Rc<Simulator>);

#[async_trait(?Send)]
impl HttpClient for CountsMore {
    async fn send(&self, request: HttpRequest) -> Result<HttpResponse, HttpError> {
        let cut = request.uri().path().ends_with("/items");
        let mut response = self.0.handle(request);
        if cut {
            response.headers_mut().insert("total-results", http::HeaderValue::from_static("100000"));
        }
        Ok(response)
    }
}

#[tokio::test]
async fn a_listing_zotero_counted_more_of_than_it_sent_gives_no_cursor_and_no_continuation() {
    let sim = demo_sim();
    let base = ok(&rpc(&sim, "zotero_changes", json!({})).await).clone();
    sim.insert_item(LIB, json!({ "itemType": "book", "title": "Changed since" }));
    let mut app = app_with_sim(sim.clone());
    app.platform.http = Rc::new(CountsMore(sim.clone()));
    let ctx = Session::new(Grant::read_only("owner"), app.config.clone(), app.platform.clone());
    let result = zotero_mcp_server::tools::registry(&app.config)
        .call_tool(&ctx, "zotero_changes", json!({ "since": base["cursor"] }))
        .await
        .expect("the tool exists");
    let out = ok(&result);
    assert!(out.get("cursor").is_none() && out.get("continuation").is_none(), "{out}");
    assert!(out["note"].as_str().unwrap().contains("did not send a whole listing"), "{out}");
    assert!(text(&result).contains("No cursor"), "{}", text(&result));
}

#[tokio::test]
async fn a_large_library_s_changes_are_whole_lists_of_keys_one_request_each_without_a_mirror() {
    // Zotero answers `format=versions` whole, however many keys: what changed in a 20,000-item library is six
    // requests (items, top-level, trash, collections, saved searches, deletions), not 200 pages.
    let sim = Rc::new(Simulator::synthetic(20_000, 3));
    let before = sim.requests().len();
    let answer =
        rpc(&sim, "zotero_changes", json!({ "since": { "library": LIBRARY, "version": 0 }, "limit": 10 })).await;
    let out = ok(&answer);
    assert_eq!(sim.requests().len() - before, 6, "{:?}", &sim.requests()[before..]);
    assert_eq!(out["totals"]["items"], 20_000, "{out}");
    assert!(out["continuation"].is_object(), "the lists are cut at the limit, and go on: {out}");
}
