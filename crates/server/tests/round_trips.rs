//! How many Zotero requests each tool makes, and in how many sequential steps: a tool call's time is
//! mostly its round trips, so independent requests must go out together and nothing may be fetched twice.
//!
//! The simulator is wrapped in [`Steps`] (tests/common/steps.rs), which counts requests and sequential steps.
//! The bounds are the TypeScript server's sequential requests for the same call or better,
//! and at most one extra step where we return more (PDF-body matches). The file tools (WebDAV, downloads, the
//! semantic index, imports, duplicates) are counted in round_trips_files.rs.

mod common;

use std::cell::Cell;
use std::rc::Rc;

use async_trait::async_trait;
use common::steps::Steps;
use common::*;
use serde_json::{json, Value};
use zotero_mcp_core::testing::StoppedClock;
use zotero_mcp_server::auth::Grant;
use zotero_mcp_server::call::Session;
use zotero_sim::{InProcess, Simulator};

struct Counted {
    sim: Rc<Simulator>,
    http: Rc<Steps>,
}

impl Counted {
    fn new() -> Self {
        let sim = demo_sim();
        let http = Steps::over(Rc::new(InProcess(sim.clone())));
        Self { sim, http }
    }

    /// Calls a tool with a read-write grant; returns its result and (requests, steps).
    async fn call(&self, name: &str, arguments: Value) -> (Value, usize, usize) {
        let (result, requests, steps) = self.call_any(name, arguments).await;
        assert!(result.get("isError").is_none(), "{name}: {}", result["content"][0]["text"]);
        (result, requests, steps)
    }

    /// The same, for a call that may fail.
    async fn call_any(&self, name: &str, arguments: Value) -> (Value, usize, usize) {
        let mut app = app_with_sim(self.sim.clone());
        app.platform.http = self.http.clone();
        // A StoppedClock: the memory clock's sleeps end at once, so a request waiting its turn would time out.
        app.platform.clock = Rc::new(StoppedClock(app.platform.clock.now_ms()));
        let ctx = Session::new(Grant::read_write("owner"), app.config.clone(), app.platform.clone());
        self.http.reset();
        let result = zotero_mcp_server::tools::registry(&app.config)
            .call_tool(&ctx, name, arguments)
            .await
            .expect("tool exists");
        (result, self.http.requests(), self.http.steps())
    }

    /// Reads a resource; returns its text and (requests, steps).
    async fn read(&self, uri: &str) -> (String, usize, usize) {
        let mut app = app_with_sim(self.sim.clone());
        app.platform.http = self.http.clone();
        app.platform.clock = Rc::new(StoppedClock(app.platform.clock.now_ms()));
        let ctx = Session::new(Grant::read_only("owner"), app.config.clone(), app.platform.clone());
        self.http.reset();
        let (contents, _) =
            zotero_mcp_server::tools::registry(&app.config).read_resource(&ctx, uri).await.expect("resource read");
        (contents[0].text.clone(), self.http.requests(), self.http.steps())
    }

    fn log(&self) -> Vec<String> {
        self.http.log()
    }
}

/// A demo item with children (attachments and notes), and one of its PDF attachments.
const PARENT: &str = "T6W7H8UE";

#[tokio::test]
async fn search_sends_the_full_text_query_with_the_main_one() {
    let c = Counted::new();
    // A word in titles: one step, whatever the PDF bodies hold.
    let (_, requests, steps) = c.call("zotero_search", json!({ "query": "protein", "limit": 5 })).await;
    assert_eq!(steps, 1, "{:?}", c.log());
    assert!(requests <= 3, "{:?}", c.log());
    // No text: one request.
    let (_, requests, steps) = c.call("zotero_search", json!({ "limit": 25 })).await;
    assert_eq!((requests, steps), (1, 1), "{:?}", c.log());
}

#[tokio::test]
async fn search_finds_parents_of_body_only_matches_in_the_same_round_trip() {
    let c = Counted::new();
    // "urban" occurs only in a PDF's indexed text: its parent is reported, with the attachment that matched, and
    // the three queries (main, attachments, top-level items) go out together.
    let (result, requests, steps) = c.call("zotero_search", json!({ "query": "urban", "limit": 5 })).await;
    let promoted: Vec<&Value> = result["structuredContent"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i.get("matchedAttachment").is_some_and(|m| !m.is_null()))
        .collect();
    assert!(!promoted.is_empty(), "the demo's PDF text should match: {result}");
    assert_eq!((requests, steps), (3, 1), "{:?}", c.log());

    // A filtered search cannot ask Zotero's top-level listing (its filters would apply to the matching child):
    // the parents come in one more step, through the same filters.
    let (result, requests, steps) =
        c.call("zotero_search", json!({ "query": "urban", "limit": 5, "itemType": "journalArticle" })).await;
    let promoted_filtered = result["structuredContent"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i.get("matchedAttachment").is_some_and(|m| !m.is_null()))
        .count();
    assert_eq!(promoted_filtered, 1, "the PDF's parent is a journal article: {result}");
    assert_eq!((requests, steps), (3, 2), "{:?}", c.log());
}

#[tokio::test]
async fn get_item_reads_the_item_its_children_and_the_export_together() {
    let c = Counted::new();
    let (_, requests, steps) = c.call("zotero_get_item", json!({ "key": PARENT })).await;
    assert_eq!((requests, steps), (1, 1), "{:?}", c.log());
    let (_, requests, steps) = c.call("zotero_get_item", json!({ "key": PARENT, "includeChildren": true })).await;
    assert_eq!((requests, steps), (2, 1), "{:?}", c.log());
    // The simulator renders no exports (it answers 501), but the request still goes out with the others.
    let (_, requests, steps) = c
        .call_any("zotero_get_item", json!({ "key": PARENT, "includeChildren": true, "exportFormat": "bibtex" }))
        .await;
    assert_eq!((requests, steps), (3, 1), "{:?}", c.log());
}

#[tokio::test]
async fn the_item_resource_reads_the_item_and_its_children_together() {
    let c = Counted::new();
    let (text, requests, steps) = c.read(&format!("zotero://item/{PARENT}")).await;
    assert_eq!((requests, steps), (2, 1), "{:?}", c.log());
    assert!(text.contains("## Children"), "{text}");
}

#[tokio::test]
async fn list_collections_reads_the_tree_and_the_items_together() {
    let c = Counted::new();
    // The tree and the saved searches beside it, in one round trip.
    let (_, requests, steps) = c.call("zotero_list_collections", json!({})).await;
    assert_eq!((requests, steps), (2, 1), "{:?}", c.log());
    let (result, _, _) = c.call("zotero_list_collections", json!({})).await;
    let key = result["structuredContent"]["collections"][0]["key"].as_str().unwrap().to_owned();
    let (_, requests, steps) = c.call("zotero_list_collections", json!({ "collectionKey": key })).await;
    assert_eq!((requests, steps), (2, 1), "{:?}", c.log());
}

#[tokio::test]
async fn list_tags_is_one_request() {
    let c = Counted::new();
    let (_, requests, steps) = c.call("zotero_list_tags", json!({ "limit": 50 })).await;
    assert_eq!((requests, steps), (1, 1), "{:?}", c.log());
}

#[tokio::test]
async fn annotations_take_at_most_two_steps() {
    let c = Counted::new();
    let (_, _, steps) = c.call("zotero_annotations", json!({ "itemKey": PARENT })).await;
    assert!(steps <= 2, "item and its children together, then every attachment's children together: {:?}", c.log());
}

#[tokio::test]
async fn notes_reads_are_one_step() {
    let c = Counted::new();
    let (_, requests, steps) = c.call("zotero_notes", json!({ "action": "list", "itemKey": PARENT })).await;
    assert_eq!((requests, steps), (1, 1), "{:?}", c.log());
    let (_, requests, steps) = c.call("zotero_notes", json!({ "action": "search", "query": "protein" })).await;
    assert_eq!((requests, steps), (1, 1), "{:?}", c.log());
}

/// Two demo items to change.
async fn two_items(c: &Counted) -> Vec<String> {
    let (result, _, _) = c.call("zotero_search", json!({ "limit": 2 })).await;
    result["structuredContent"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["key"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn updating_many_items_reads_them_in_one_request_and_patches_them_together() {
    let c = Counted::new();
    let keys = two_items(&c).await;
    let (result, requests, steps) = c.call("zotero_update_item", json!({ "keys": keys, "addTags": ["batch"] })).await;
    assert_eq!(result["structuredContent"]["updated"].as_array().unwrap().len(), 2, "{result}");
    assert_eq!((requests, steps), (3, 2), "one read of both, then both patches at once: {:?}", c.log());
}

#[tokio::test]
async fn trashing_many_items_is_two_requests() {
    let c = Counted::new();
    let keys = two_items(&c).await;
    let (result, requests, steps) = c.call("zotero_delete_items", json!({ "keys": keys })).await;
    assert_eq!(result["structuredContent"]["deleted"].as_array().unwrap().len(), 2, "{result}");
    assert_eq!((requests, steps), (2, 2), "{:?}", c.log());
}

#[tokio::test]
async fn deleting_many_items_permanently_reads_them_once_and_deletes_them_together() {
    let c = Counted::new();
    let keys = two_items(&c).await;
    let (result, requests, steps) = c.call("zotero_delete_items", json!({ "keys": keys, "permanent": true })).await;
    assert_eq!(result["structuredContent"]["deleted"].as_array().unwrap().len(), 2, "{result}");
    // Each item's children are read together (Zotero deletes them with it; the undo journal keeps them so an
    // undo can create them again), then both deletions go together once the journal has recorded them.
    assert_eq!((requests, steps), (5, 3), "{:?}", c.log());
}

#[tokio::test]
async fn filing_items_reads_the_collection_and_the_items_together() {
    let c = Counted::new();
    let keys = two_items(&c).await;
    let (result, _, _) = c.call("zotero_list_collections", json!({})).await;
    let collection = result["structuredContent"]["collections"][0]["key"].as_str().unwrap().to_owned();
    let (_, requests, steps) = c
        .call(
            "zotero_manage_collections",
            json!({ "action": "addItems", "collectionKey": collection, "itemKeys": keys }),
        )
        .await;
    assert_eq!((requests, steps), (3, 2), "collection and items together, then one write: {:?}", c.log());
}

#[tokio::test]
async fn creating_items_fetches_each_template_once_and_together() {
    let c = Counted::new();
    let items = json!([
        { "itemType": "book", "title": "A" },
        { "itemType": "journalArticle", "title": "B" },
        { "itemType": "book", "title": "C" },
    ]);
    let (_, requests, steps) = c.call("zotero_create_items", json!({ "items": items })).await;
    assert_eq!((requests, steps), (3, 2), "two templates at once, then one write: {:?}", c.log());
}

#[tokio::test]
async fn note_writes_are_as_few_as_the_typescript_servers() {
    let c = Counted::new();
    let (result, requests, steps) =
        c.call("zotero_notes", json!({ "action": "create", "itemKey": PARENT, "note": "A remark" })).await;
    assert_eq!((requests, steps), (1, 1), "one write: {:?}", c.log());
    let key = result["structuredContent"]["noteKey"].as_str().unwrap().to_owned();
    let (_, requests, steps) = c.call("zotero_notes", json!({ "action": "update", "itemKey": key, "note": "B" })).await;
    assert_eq!((requests, steps), (2, 2), "read (for its version), then patch: {:?}", c.log());
    let (_, requests, steps) = c.call("zotero_notes", json!({ "action": "delete", "itemKey": key })).await;
    assert_eq!((requests, steps), (2, 2), "{:?}", c.log());
}

#[tokio::test]
async fn collection_changes_are_as_few_as_the_typescript_servers() {
    let c = Counted::new();
    let (result, requests, steps) =
        c.call("zotero_manage_collections", json!({ "action": "create", "name": "Reading group" })).await;
    assert_eq!((requests, steps), (1, 1), "{:?}", c.log());
    let key = result["structuredContent"]["collectionKey"].as_str().unwrap().to_owned();
    let (_, requests, steps) = c
        .call("zotero_manage_collections", json!({ "action": "rename", "collectionKey": key, "name": "Seminar" }))
        .await;
    assert_eq!((requests, steps), (2, 2), "read (for its version), then patch: {:?}", c.log());
    let (_, requests, steps) =
        c.call("zotero_manage_collections", json!({ "action": "delete", "collectionKey": key })).await;
    assert_eq!((requests, steps), (2, 2), "{:?}", c.log());
}

/// `OAUTH_KV` that lets every read wait one turn and counts the sequential steps, like [`Steps`] for HTTP.
struct KvSteps {
    inner: Rc<dyn zotero_mcp_server::platform::KvStore>,
    in_flight: Cell<usize>,
    steps: Cell<usize>,
    reads: Cell<usize>,
}

#[async_trait(?Send)]
impl zotero_mcp_server::platform::KvStore for KvSteps {
    async fn get(&self, key: &str) -> Result<Option<String>, zotero_mcp_server::platform::KvError> {
        if self.in_flight.get() == 0 {
            self.steps.set(self.steps.get() + 1);
        }
        self.in_flight.set(self.in_flight.get() + 1);
        self.reads.set(self.reads.get() + 1);
        tokio::task::yield_now().await;
        let value = self.inner.get(key).await;
        self.in_flight.set(self.in_flight.get() - 1);
        value
    }
    async fn put(
        &self,
        key: &str,
        value: &str,
        lifetime: zotero_mcp_server::platform::KvWrite,
    ) -> Result<(), zotero_mcp_server::platform::KvError> {
        self.inner.put(key, value, lifetime).await
    }
    async fn delete(&self, key: &str) -> Result<(), zotero_mcp_server::platform::KvError> {
        self.inner.delete(key).await
    }
    async fn list(
        &self,
        prefix: &str,
        cursor: Option<&str>,
        limit: u32,
    ) -> Result<zotero_mcp_server::platform::KvListPage, zotero_mcp_server::platform::KvError> {
        self.inner.list(prefix, cursor, limit).await
    }
}

#[tokio::test]
async fn the_bearer_check_reads_the_token_and_its_grant_together() {
    let mut app = app();
    let kv = Rc::new(KvSteps {
        inner: app.platform.oauth_kv.clone(),
        in_flight: Cell::new(0),
        steps: Cell::new(0),
        reads: Cell::new(0),
    });
    app.platform.oauth_kv = kv.clone();
    let reply = send(&app, modern("tools/list", json!({}))).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!((kv.reads.get(), kv.steps.get()), (2, 1), "one KV round trip per authenticated request");
}
