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
use zotero_mcp_server::context::RequestContext;
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
    let ctx = RequestContext::new(Grant::read_only("owner"), app.config.clone(), app.platform.clone());
    let result = zotero_mcp_server::tools::registry(&app.config)
        .call_tool(&ctx, "zotero_changes", json!({ "since": base["cursor"] }))
        .await
        .expect("the tool exists");
    let out = ok(&result);
    assert_eq!(out["libraryChanged"], true, "{out}");
    assert!(out.get("cursor").is_none(), "{out}");
    assert!(text(&result).contains("No cursor"), "{}", text(&result));
}
