//! Every shape of every tool's answer, called once: each mode, empty results, dry runs and applied writes,
//! truncated and shortened answers, a parent's key and an attachment's key.
//!
//! The schema check itself runs inside the registry for every call of every test (the `check-outputs`
//! feature, `src/mcp/output_check.rs`): an answer outside its published `outputSchema` panics with the tool,
//! the arguments and the failing paths. What this file adds is reach and the rest of the promise:
//! - every tool of the catalogue is called, and every property of its output schema appears in at least one
//!   answer here (or is named below with the reason it cannot be produced), so no optional field goes out
//!   unchecked;
//! - the Markdown of each answer, what a client that ignores `structuredContent` shows the model, carries the
//!   keys, the continuation (`nextOffset`, `nextFromPage`) and the notes of the structured answer;
//! - an answer that grows with the library is shortened to fit, or refused with advice that names only the
//!   tool's own arguments;
//! - resources and prompts answer in the shapes the protocol defines, and `zotero://recent`'s JSON items have
//!   the shape of a search result's items.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

use base64::Engine;
use common::dav::*;
use common::*;
use serde_json::{json, Value};
use zotero_mcp_core::platform::{HttpClient, HttpError, HttpRequest, HttpResponse};
use zotero_mcp_core::testing::{pdf_of_pages, MemoryAiSearch};
use zotero_mcp_server::auth::Grant;
use zotero_mcp_server::mcp::registry::MAX_RESULT_CHARS;
use zotero_sim::LibraryRef;

const LIB: LibraryRef = LibraryRef::User(DEMO_USER);
/// A paper whose PDF (INDEXED) has an entry in Zotero's full-text index.
const INDEXED_PARENT: &str = "T6W7H8UE";
const INDEXED: &str = "93WJRKG5";
/// A paper whose PDF (ATTACHMENT) has none, so its text comes from the file on WebDAV.
const PARENT: &str = "KPDKK5UT";
const ATTACHMENT: &str = "UN79YVS8";

/// The answers collected so far: per tool, each successful call's arguments, structured answer and Markdown.
#[derive(Default)]
struct Shapes {
    answers: BTreeMap<String, Vec<(Value, Value, String)>>,
}

impl Shapes {
    /// Calls `tool` (the registry checks the answer against its schema) and keeps the answer.
    async fn call(&mut self, bench: &Bench, tool: &str, grant: Grant, arguments: Value) -> Value {
        let result = bench.tool(tool, grant, arguments.clone()).await;
        self.keep(tool, arguments, &result)
    }

    /// A tool only panels call, as a client that declared MCP Apps calls it.
    async fn panel(&mut self, bench: &Bench, tool: &str, arguments: Value) -> Value {
        let result = bench.panel_tool(tool, arguments.clone()).await;
        self.keep(tool, arguments, &result)
    }

    /// Keeps a successful answer's structured part and text; returns the structured part.
    fn keep(&mut self, tool: &str, arguments: Value, result: &Value) -> Value {
        let structured = ok(result).clone();
        self.answers.entry(tool.to_owned()).or_default().push((arguments, structured.clone(), text(result).into()));
        structured
    }

    async fn read(&mut self, bench: &Bench, tool: &str, arguments: Value) -> Value {
        self.call(bench, tool, Grant::read_only("owner"), arguments).await
    }

    async fn write(&mut self, bench: &Bench, tool: &str, arguments: Value) -> Value {
        self.call(bench, tool, Grant::read_write("owner"), arguments).await
    }

    /// Every property of every tool's published output schema was in at least one answer.
    fn assert_every_property_seen(&self, published: &Value) {
        let mut unseen = Vec::new();
        for (tool, entry) in published["tools"].as_object().expect("tools") {
            let answers = self.answers.get(tool).unwrap_or_else(|| panic!("{tool} was never called here"));
            let seen: BTreeSet<&str> = answers
                .iter()
                .flat_map(|(_, s, _)| s.as_object().into_iter().flat_map(|o| o.keys()))
                .map(String::as_str)
                .collect();
            for property in entry["outputSchema"]["properties"].as_object().expect("properties").keys() {
                if !seen.contains(property.as_str()) {
                    unseen.push(format!("{tool}.{property}"));
                }
            }
        }
        assert!(unseen.is_empty(), "never produced by any call here, so never checked against the schema: {unseen:?}");
    }

    /// The Markdown says what the model needs when it is all a client shows: the keys in the answer, where to
    /// continue, and the notes.
    fn assert_text_carries_the_answer(&self) {
        for (tool, answers) in &self.answers {
            for (arguments, structured, markdown) in answers {
                let mut needed = Vec::new();
                collect_needed(structured, &mut needed);
                // The answer's own notes and warnings (a child note's text is content, shown shortened).
                for name in ["note", "warning"] {
                    if let Some(note) = structured[name].as_str() {
                        needed.push(note.chars().take(60).collect());
                    }
                }
                for fact in needed {
                    assert!(
                        markdown.contains(&fact),
                        "{tool} {arguments}: the text fallback lacks `{fact}`, which structuredContent has\n{markdown}"
                    );
                }
            }
        }
    }
}

/// A fault's matcher: `method` to a path containing `path`, after `skip` such requests went through.
fn on(method: &str, path: &str, skip: usize) -> zotero_sim::FaultMatch {
    zotero_sim::FaultMatch { method: method.parse().ok(), path_contains: Some(path.into()), body_contains: None, skip }
}

/// Keys of results and continuation offsets and pages, anywhere in `value`.
fn collect_needed(value: &Value, out: &mut Vec<String>) {
    const KEYS: &[&str] = &["key", "attachmentKey", "noteKey", "annotationKey", "itemKey", "collectionKey"];
    match value {
        Value::Object(map) => {
            for (name, inner) in map {
                match (name.as_str(), inner) {
                    (name, Value::String(key)) if KEYS.contains(&name) => out.push(key.clone()),
                    ("nextOffset" | "nextFromPage", Value::Number(n)) => out.push(n.to_string()),
                    _ => collect_needed(inner, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|item| collect_needed(item, out)),
        _ => {}
    }
}

fn published() -> Value {
    serde_json::from_str(include_str!("../src/mcp/schemas.json")).expect("schemas.json parses")
}

fn b64(data: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(data)
}

fn three_pages() -> Vec<u8> {
    pdf_of_pages(&["Residue contacts emerge early", "Side chains pack without rotamers", "Equivariance is the key"])
}

/// Zotero's export of one item as BibTeX: the simulator renders no exports (Zotero makes them with its
/// translators), so the bench answers `format=bibtex` as the API does (text, not JSON) and passes the rest on.
struct Exporting(Rc<Router>);

#[async_trait::async_trait(?Send)]
impl HttpClient for Exporting {
    async fn send(&self, request: HttpRequest) -> Result<HttpResponse, HttpError> {
        if request.uri().query().is_some_and(|q| q.contains("format=bibtex")) {
            let body = "\n@article{whitfield_geometric_2021,\n\ttitle = {Geometric deep learning},\n}\n";
            return Ok(http::Response::builder()
                .status(200)
                .header("content-type", "application/x-bibtex")
                .header("last-modified-version", "10")
                .body(body.as_bytes().to_vec())
                .expect("a response"));
        }
        self.0.send(request).await
    }
}

/// The bench's HTTP with a write landing in the library just before the first `/items/top` read.
/// Disarmed while its flag is true.
struct MovingLibrary(Rc<dyn HttpClient>, Rc<zotero_sim::Simulator>, Rc<std::cell::Cell<bool>>);

#[async_trait::async_trait(?Send)]
impl HttpClient for MovingLibrary {
    async fn send(&self, request: HttpRequest) -> Result<HttpResponse, HttpError> {
        if request.uri().path().ends_with("/items/top") && !self.2.replace(true) {
            self.1.insert_item(LibraryRef::User(DEMO_USER), json!({ "itemType": "book", "title": "Meanwhile" }));
        }
        self.0.send(request).await
    }
}

/// The demo library, WebDAV with the unindexed paper's PDF, AI Search bound, BibTeX exports answered.
fn bench_with_files() -> (Bench, Rc<MemoryAiSearch>) {
    let mut bench = bench(true);
    bench.upload(ATTACHMENT, "Marchetti et al. - 2022.pdf", &three_pages());
    let ai = MemoryAiSearch::new();
    bench.app.platform.ai_search = Some(ai.clone());
    bench.app.platform.http = Rc::new(Exporting(bench.router.clone()));
    (bench, ai)
}

#[tokio::test]
async fn every_shape_of_every_answer_matches_its_schema_and_reads_as_text() {
    let (bench, ai) = bench_with_files();
    let mut shapes = Shapes::default();
    let b = &bench;

    // ---- searching ----
    let page = shapes.read(b, "zotero_search", json!({ "query": "protein", "limit": 1 })).await;
    assert!(page["nextOffset"].is_u64(), "a first page of one says where the next starts: {page}");
    shapes.read(b, "zotero_search", json!({ "query": "no such words anywhere at all" })).await;
    shapes.read(b, "zotero_search", json!({ "query": "stochastic gradient annealing" })).await;
    shapes.read(b, "zotero_search", json!({ "citationKey": "nobody2099none" })).await;

    // ---- items ----
    shapes.read(b, "zotero_get_item", json!({ "key": INDEXED_PARENT })).await;
    shapes
        .read(b, "zotero_get_item", json!({ "key": INDEXED_PARENT, "includeChildren": true, "exportFormat": "bibtex" }))
        .await;
    let created = shapes
        .write(b, "zotero_create_items", json!({ "items": [{ "itemType": "journalArticle", "title": "Shapes" }] }))
        .await;
    let new_key = created["created"][0].as_str().expect("a new key").to_owned();
    shapes.write(b, "zotero_update_item", json!({ "keys": [new_key], "fields": { "date": "2026" } })).await;
    shapes.write(b, "zotero_update_item", json!({ "keys": [new_key], "fields": { "date": "2026" } })).await;

    // ---- collections and tags ----
    // A saved search longer than the listing shows (`conditionsTotal`).
    let words: Vec<Value> = (0..30)
        .map(|n| json!({ "condition": "title", "operator": "contains", "value": format!("shapes{n}") }))
        .collect();
    b.sim.insert_search(LIB, json!({ "name": "Thirty words", "conditions": words }));
    let tree = shapes.read(b, "zotero_list_collections", json!({})).await;
    let long = tree["savedSearches"].as_array().expect("searches").iter().find(|s| s["name"] == "Thirty words");
    assert_eq!(long.expect("listed")["conditionsTotal"], 30);
    let collection = tree["collections"][0]["key"].as_str().expect("a collection").to_owned();
    shapes.read(b, "zotero_list_collections", json!({ "query": "zzz-no-such-collection" })).await;
    let items = shapes.read(b, "zotero_list_collections", json!({ "collectionKey": collection, "limit": 1 })).await;
    assert!(items["collection"].is_object());
    let made = shapes
        .write(
            b,
            "zotero_manage_collections",
            json!({ "action": "create", "name": "Shapes", "parentCollection": collection }),
        )
        .await;
    let shapes_collection = made["collectionKey"].as_str().expect("the new collection").to_owned();
    shapes
        .write(
            b,
            "zotero_manage_collections",
            json!({ "action": "rename", "collectionKey": shapes_collection, "name": "Shapes 2" }),
        )
        .await;
    shapes
        .write(
            b,
            "zotero_manage_collections",
            json!({ "action": "addItems", "collectionKey": shapes_collection, "itemKeys": [new_key] }),
        )
        .await;
    // Once more with an item already in it and one that does not exist: unchanged and failed.
    shapes
        .write(
            b,
            "zotero_manage_collections",
            json!({ "action": "addItems", "collectionKey": shapes_collection, "itemKeys": [new_key, "ZZZZ2222"] }),
        )
        .await;
    shapes.read(b, "zotero_list_tags", json!({})).await;
    shapes.read(b, "zotero_list_tags", json!({ "query": "zzz-no-such-tag" })).await;

    // ---- notes ----
    shapes.read(b, "zotero_notes", json!({ "action": "list", "limit": 1 })).await;
    shapes.read(b, "zotero_notes", json!({ "action": "search", "query": "zzz-nothing" })).await;
    let note =
        shapes.write(b, "zotero_notes", json!({ "action": "create", "itemKey": PARENT, "note": "A remark" })).await;
    let note_key = note["noteKey"].as_str().expect("the note").to_owned();
    shapes
        .write(b, "zotero_notes", json!({ "action": "update", "itemKey": note_key, "note": "More", "append": true }))
        .await;
    shapes.write(b, "zotero_notes", json!({ "action": "delete", "itemKey": note_key })).await;
    shapes.write(b, "zotero_notes", json!({ "action": "delete", "itemKey": note_key })).await;

    // ---- annotations ----
    shapes.read(b, "zotero_annotations", json!({ "itemKey": PARENT })).await;
    shapes
        .write(
            b,
            "zotero_annotations",
            json!({ "action": "create", "itemKey": PARENT, "text": "side chains pack without" }),
        )
        .await;

    // ---- reading attachments: a parent's key and an attachment's, every mode ----
    shapes.read(b, "zotero_read_attachment", json!({ "itemKey": INDEXED_PARENT })).await;
    shapes.read(b, "zotero_read_attachment", json!({ "itemKey": INDEXED, "mode": "info" })).await;
    shapes.read(b, "zotero_read_attachment", json!({ "itemKey": ATTACHMENT, "mode": "outline" })).await;
    shapes.panel(b, "zotero_attachment_file", json!({ "key": ATTACHMENT })).await;
    let first = shapes.read(b, "zotero_read_attachment", json!({ "itemKey": PARENT, "maxPages": 1 })).await;
    assert_eq!((first["truncated"].as_bool(), first["nextFromPage"].as_u64()), (Some(true), Some(2)));
    shapes.read(b, "zotero_read_attachment", json!({ "itemKey": ATTACHMENT, "fromPage": 3 })).await;
    shapes.write(b, "zotero_read_attachment", json!({ "itemKey": ATTACHMENT, "writeBackIndex": true })).await;

    // ---- attachment writes ----
    let put = shapes
        .write(
            b,
            "zotero_put_attachment",
            json!({ "parentItemKey": PARENT, "base64Data": b64(&three_pages()), "filename": "copy.pdf" }),
        )
        .await;
    let copy = put["attachmentKey"].as_str().expect("the new attachment").to_owned();
    shapes
        .write(b, "zotero_put_attachment", json!({ "replaceAttachmentKey": copy, "base64Data": b64(&three_pages()) }))
        .await;
    // The last step (recording md5 and mtime on the item) fails: the file is complete, the answer warns.
    bench.fail("PATCH", "/items/", 500, 1);
    let warned = shapes
        .write(
            b,
            "zotero_put_attachment",
            json!({ "parentItemKey": PARENT, "base64Data": b64(&three_pages()), "filename": "w.pdf" }),
        )
        .await;
    assert!(warned["warning"].is_string(), "{warned}");
    shapes.read(b, "zotero_rename_attachments", json!({ "itemKeys": [PARENT] })).await;
    shapes.write(b, "zotero_rename_attachments", json!({ "itemKeys": [PARENT], "apply": true })).await;
    shapes.write(b, "zotero_delete_attachment", json!({ "attachmentKey": copy })).await;
    shapes.write(b, "zotero_delete_attachment", json!({ "attachmentKey": copy, "permanent": true })).await;

    // ---- imports ----
    bench.serve_plos();
    shapes.write(b, "zotero_import_reference", json!({ "identifier": PLOS_DOI })).await;
    shapes.write(b, "zotero_import_reference", json!({ "identifier": PLOS_DOI, "attachPdf": false })).await;

    // ---- libraries: the personal one and a group (its item count given) ----
    b.sim.add_group(7, DEMO_KEY, false);
    let libraries = shapes.read(b, "zotero_list_libraries", json!({})).await;
    assert_eq!(libraries["libraries"].as_array().map(Vec::len), Some(2), "{libraries}");

    // ---- changes: a baseline, a change since, and a library that moved during the call ----
    let base = shapes.read(b, "zotero_changes", json!({})).await;
    b.sim.insert_item(LibraryRef::User(DEMO_USER), json!({ "itemType": "book", "title": "Changed since" }));
    b.sim.insert_item(LibraryRef::User(DEMO_USER), json!({ "itemType": "book", "title": "Also changed since" }));
    let cut = shapes.read(b, "zotero_changes", json!({ "since": base["cursor"], "limit": 1 })).await;
    assert!(cut["continuation"].is_object(), "{cut}");
    shapes.read(b, "zotero_changes", json!({ "since": cut["continuation"], "limit": 1 })).await;
    let mut moving = common::dav::bench(false);
    let done = Rc::new(std::cell::Cell::new(true));
    moving.app.platform.http = Rc::new(MovingLibrary(moving.router.clone(), moving.sim.clone(), done.clone()));
    let base = shapes.read(&moving, "zotero_changes", json!({})).await;
    done.set(false);
    let moved = shapes.read(&moving, "zotero_changes", json!({ "since": base["cursor"] })).await;
    assert_eq!(moved["libraryChanged"], true, "{moved}");

    // ---- evidence: annotations with pages and comments, the PDF by pages, the index, a gap ----
    shapes
        .read(b, "zotero_retrieve", json!({ "itemKeys": ["T6W7H8UE"], "query": "calibration ESMFold orphan MSAs" }))
        .await;
    shapes
        .read(
            b,
            "zotero_retrieve",
            json!({ "itemKeys": ["KPDKK5UT", "T6W7H8UE"], "query": "protein structure",
        "attachmentPolicy": "allIndexed", "passages": 2, "maxChars": 300 }),
        )
        .await;

    // ---- a manuscript's references: matched with support, unresolved, a page with a cursor ----
    let latex =
        "Side chains are packed as a continuous distribution of dihedral angles \\citep{marchetti2022equivariant}.\n\
                 Heat thresholds \\cite{li2021heat,nobody2020}.";
    let bib = "@article{li2021heat, title={Heat stress thresholds for winter wheat}, year={2020}, author={Li, Wei}}";
    shapes.read(b, "zotero_check_references", json!({ "text": latex, "bibtex": bib, "checkRegistry": false })).await;
    let page = shapes
        .read(b, "zotero_check_references", json!({ "text": "10.1038/s41592-021-01187-3\n10.1101/097196", "limit": 1 }))
        .await;
    assert!(page["nextCursor"].is_string(), "{page}");
    shapes
        .read(
            b,
            "zotero_check_references",
            json!({ "text": "1. Nobody Q. A title no registry has. J Imagin Res. 2019." }),
        )
        .await;
    let many: Vec<String> = (1..=30).map(|n| format!("10.5555/shapes.{n}")).collect();
    let spent = shapes.read(b, "zotero_check_references", json!({ "text": many.join("\n"), "limit": 30 })).await;
    assert!(spent["stopped"].is_string(), "{spent}");

    // ---- the undo journal: a page of changes, and an undo that leaves an item changed since alone ----
    shapes
        .write(b, "zotero_update_item", json!({ "keys": ["T6W7H8UE"], "fields": { "extra": "shapes: first" } }))
        .await;
    shapes.write(b, "zotero_update_item", json!({ "keys": ["T6W7H8UE"], "fields": { "shortTitle": "Second" } })).await;
    let listed = shapes.write(b, "zotero_undo", json!({ "limit": 2 })).await;
    assert!(listed["nextOffset"].is_number(), "{listed}");
    // The test clock stands still, so entries of one millisecond list in any order: look through all of them.
    let mut first = None;
    let mut offset = 0;
    while first.is_none() {
        let page = shapes.write(b, "zotero_undo", json!({ "limit": 50, "offset": offset })).await;
        let entries = page["entries"].as_array().expect("a listing").clone();
        first = entries
            .into_iter()
            .find(|e| e["objects"][0]["key"] == "T6W7H8UE" && e["objects"][0]["fields"] == json!(["extra"]));
        offset = page["nextOffset"]
            .as_u64()
            .map(|n| n as usize)
            .unwrap_or_else(|| first.is_some().then_some(0).expect("the first change is listed"));
    }
    let first = first.expect("found");
    let undone = shapes.write(b, "zotero_undo", json!({ "id": first["id"] })).await;
    assert_eq!(undone["objects"][0]["outcome"], "changedSince", "{undone}");

    // ---- feed links: made, listed, revoked ----
    let made = shapes
        .write(b, "zotero_export_link", json!({ "format": "csljson", "label": "shapes", "expiresInDays": 7 }))
        .await;
    assert!(made["url"].as_str().is_some_and(|url| url.ends_with(".json")), "{made}");
    shapes.write(b, "zotero_export_link", json!({ "action": "list" })).await;
    shapes.write(b, "zotero_export_link", json!({ "action": "revoke", "id": made["links"][0]["id"] })).await;

    // ---- the pair ChatGPT's connectors call ----
    let found = shapes.read(b, "search", json!({ "query": "protein" })).await;
    let id = found["results"][0]["id"].as_str().expect("a result").to_owned();
    shapes.read(b, "fetch", json!({ "id": id })).await;

    // ---- saved searches: run one, a page at a time ----
    let run = shapes.read(b, "zotero_search", json!({ "savedSearch": "HEATMAIZ", "limit": 1 })).await;
    assert_eq!((run["totalResults"].as_u64(), run["nextOffset"].as_u64()), (Some(2), Some(1)), "{run}");

    // ---- duplicates: a dry run, then a merge of the two copies the import above made ----
    shapes.read(b, "zotero_find_duplicates", json!({ "itemType": "thesis" })).await;
    shapes.read(b, "zotero_find_duplicates", json!({})).await;
    // From a library mirror (the whole library), and with one that fails (the newest items, and why).
    let mut mirrored = common::dav::bench(false);
    mirrored.app.platform.mirror_db = Some(common::mirror_db());
    let whole = shapes.read(&mirrored, "zotero_find_duplicates", json!({})).await;
    assert_eq!(whole["mirror"]["complete"], true, "{whole}");
    let tree = shapes.read(&mirrored, "zotero_list_collections", json!({})).await;
    assert_eq!(tree["mirror"]["complete"], true, "{tree}");
    let tags = shapes.read(&mirrored, "zotero_list_tags", json!({})).await;
    assert_eq!(tags["mirror"]["complete"], true, "{tags}");
    let refs = json!({ "text": "10.1038/nature14539", "checkRegistry": false });
    let matched = shapes.read(&mirrored, "zotero_check_references", refs.clone()).await;
    assert_eq!(matched["mirror"]["complete"], true, "{matched}");
    let found = shapes.read(&mirrored, "zotero_search", json!({ "query": "protein" })).await;
    assert_eq!(found["mirror"]["complete"], true, "{found}");
    mirrored.app.platform.mirror_db = Some(Rc::new(common::UnreachableMirror));
    let partial = shapes.read(&mirrored, "zotero_find_duplicates", json!({})).await;
    assert!(partial["note"].is_string(), "{partial}");
    let live = shapes.read(&mirrored, "zotero_check_references", refs).await;
    assert!(live["note"].is_string(), "{live}");

    // ---- the semantic index: empty, then filled ----
    let empty = shapes.read(b, "zotero_semantic_search", json!({ "query": "protein structure" })).await;
    assert!(empty["note"].is_string(), "an empty index says so: {empty}");
    shapes.write(b, "zotero_reindex", json!({ "full": true })).await;
    ai.process();
    shapes.read(b, "zotero_semantic_search", json!({ "query": "protein structure", "limit": 3 })).await;
    shapes.read(b, "zotero_semantic_search", json!({ "query": "protein", "minScore": 0.99 })).await;

    // ---- writes whose answer was lost and could not be read back either: `unknown` ----
    let lost = |method: &str| b.sim.fail_matching(1, on(method, "/items", 0), zotero_sim::Fault::DropAnswer);
    // The read that checks the write fails: the read before it (the tool's own, `before` of them) goes through.
    let unread = |before: usize| {
        let items = format!("users/{DEMO_USER}/items");
        b.sim.fail_matching(1, on("GET", &items, before), zotero_sim::Fault::Status { status: 500 });
    };
    lost("POST");
    unread(0);
    let unknown = shapes.write(b, "zotero_create_items", json!({ "items": [{ "itemType": "book", "title": "Lost" }] }));
    assert_eq!(unknown.await["unknown"].as_array().map(Vec::len), Some(1));
    lost("PATCH");
    unread(1);
    let unknown = shapes.write(b, "zotero_update_item", json!({ "keys": [new_key], "fields": { "date": "2027" } }));
    assert_eq!(unknown.await["unknown"].as_array().map(Vec::len), Some(1));
    lost("POST");
    unread(1);
    let unknown = shapes.write(
        b,
        "zotero_manage_collections",
        json!({ "action": "removeItems", "collectionKey": shapes_collection, "itemKeys": [new_key] }),
    );
    assert_eq!(unknown.await["unknown"].as_array().map(Vec::len), Some(1));
    lost("POST");
    unread(1);
    let unknown = shapes.write(b, "zotero_delete_items", json!({ "keys": [new_key] }));
    assert_eq!(unknown.await["unknown"].as_array().map(Vec::len), Some(1));
    b.sim.clear_faults();

    // ---- the delete after everything that used the item ----
    shapes.write(b, "zotero_delete_items", json!({ "keys": [new_key] })).await;

    // ---- test fixtures ----
    shapes.read(b, "fixture_echo", json!({ "text": "hi", "repeat": 2 })).await;
    shapes.write(b, "fixture_write", json!({ "note": "x" })).await;

    shapes_of_answers_too_large(&mut shapes).await;

    shapes.assert_every_property_seen(&published());
    shapes.assert_text_carries_the_answer();
}

/// The Markdown of the last answer of `tool`.
fn text_of_last(shapes: &Shapes, tool: &str) -> String {
    shapes.answers[tool].last().map(|(_, _, markdown)| markdown.clone()).unwrap_or_default()
}

/// A library whose answers outgrow one message: each growing listing comes back shortened, continuing where
/// it stopped, and within the limit.
async fn shapes_of_answers_too_large(shapes: &mut Shapes) {
    let bench = bench(true);
    let b = &bench;
    let long = "A long abstract about protein folding and its many kinds. ".repeat(120);
    let mut keys = Vec::new();
    for n in 0..40 {
        let tags: Vec<Value> =
            (0..60).map(|t| json!({ "tag": format!("topic {n:02}-{t:02} {}", "x".repeat(60)) })).collect();
        let key = bench.sim.insert_item(
            LIB,
            json!({ "itemType": "journalArticle", "title": format!("Bulk protein paper {n}"), "abstractNote": long,
                    "date": "2020", "tags": tags }),
        );
        keys.push(key);
    }
    for n in 0..600 {
        bench.sim.insert_collection(LIB, json!({ "name": format!("Collection {n:03} {}", "y".repeat(150)) }));
    }
    // 150 papers filed twice (same title, year and first author): 150 duplicate groups.
    let twice = "A twice-filed study of folding kinetics in small proteins across many conditions ".repeat(3);
    for n in 0..150 {
        for _ in 0..2 {
            bench.sim.insert_item(
                LIB,
                json!({ "itemType": "journalArticle", "title": format!("{twice}{n}"), "date": "2019",
                        "creators": [{ "creatorType": "author", "firstName": "Ada", "lastName": format!("Dup{n}") }] }),
            );
        }
    }
    // 100 papers in one collection, four stored files each: 400 renames planned.
    let shelf = bench.sim.insert_collection(LIB, json!({ "name": "Shelf" }));
    for n in 0..100 {
        let title = format!("{} {n}", "An exceedingly long title for a paper about renaming many files".repeat(3));
        let parent = bench.sim.insert_item(
            LIB,
            json!({ "itemType": "journalArticle", "title": title, "date": "2021", "collections": [shelf],
                    "creators": [{ "creatorType": "author", "firstName": "Bo", "lastName": "Shelf" }] }),
        );
        for f in 0..4 {
            bench.sim.insert_item(
                LIB,
                json!({ "itemType": "attachment", "parentItem": parent, "linkMode": "imported_file",
                        "contentType": "application/pdf", "filename": format!("{}-{f}.pdf", "old name ".repeat(25)),
                        "title": "PDF" }),
            );
        }
    }
    // An item with more children than one answer holds.
    let crowded = keys[0].clone();
    for n in 0..101 {
        bench
            .sim
            .insert_item(LIB, json!({ "itemType": "note", "parentItem": crowded, "note": format!("<p>note {n}</p>") }));
    }
    let within = |answer: &Value| serde_json::to_string(answer).expect("JSON").chars().count() < MAX_RESULT_CHARS;

    let search = shapes.read(b, "zotero_search", json!({ "query": "Bulk protein paper", "limit": 40 })).await;
    let shown = search["items"].as_array().expect("items").len();
    assert!(
        shown < 40 && within(&search),
        "shortened, not refused: {shown} items, {} characters",
        search.to_string().len()
    );
    assert_eq!(search["nextOffset"].as_u64(), Some(shown as u64), "the next page starts after the last item shown");
    assert!(text_of_last(shapes, "zotero_search").contains(&format!("call again with offset {shown}")));

    b.sim.insert_search(
        LIB,
        json!({ "name": "Bulk", "conditions": [{ "condition": "title", "operator": "contains", "value": "Bulk protein paper" }] }),
    );
    let bulk = shapes.read(b, "zotero_search", json!({ "savedSearch": "Bulk", "limit": 40 })).await;
    let shown = bulk["items"].as_array().expect("items").len();
    assert!(shown < 40 && within(&bulk), "shortened, not refused: {shown} items");
    assert_eq!(bulk["nextOffset"].as_u64(), Some(shown as u64), "the next page starts after the last item shown");

    let tags = shapes.read(b, "zotero_list_tags", json!({ "limit": 1000 })).await;
    assert_eq!(tags["cut"], true);
    assert!(within(&tags));

    let tree = shapes.read(b, "zotero_list_collections", json!({})).await;
    assert!(tree["collectionsTotal"].as_u64().is_some_and(|t| t > 600) && within(&tree));
    assert!(
        tree["savedSearchesTotal"].as_u64().is_some_and(|t| t >= 3),
        "the searches are cut too: {}",
        tree["savedSearchesTotal"]
    );

    let duplicates = shapes.read(b, "zotero_find_duplicates", json!({ "scanLimit": 2000 })).await;
    assert!(
        duplicates["groupsTotal"].as_u64().is_some_and(|t| t >= 150) && within(&duplicates),
        "{}",
        duplicates["groupsTotal"]
    );
    let renames = shapes.read(b, "zotero_rename_attachments", json!({ "collectionKey": shelf, "limit": 100 })).await;
    assert!(renames["plannedTotal"].as_u64() == Some(400) && within(&renames), "{}", renames["plannedTotal"]);
    let item = shapes.read(b, "zotero_get_item", json!({ "key": crowded, "includeChildren": true })).await;
    assert_eq!(item["childrenTruncated"], true);

    // The same listings read page by page with the offsets they give reach every item exactly once.
    let mut offset = 0;
    let mut seen = BTreeSet::new();
    for _ in 0..40 {
        let page = shapes
            .read(b, "zotero_search", json!({ "query": "Bulk protein paper", "limit": 40, "offset": offset }))
            .await;
        for item in page["items"].as_array().expect("items") {
            assert!(seen.insert(item["key"].as_str().expect("key").to_owned()), "{item} twice");
        }
        match page["nextOffset"].as_u64() {
            Some(next) => offset = next,
            None => break,
        }
    }
    assert_eq!(seen.len(), 40, "every item once");

    // A document text too long for one answer: whole pages while they fit, then where to go on.
    let dense: Vec<String> = (0..6).map(|p| format!("Page {p} ").repeat(4_000)).collect();
    let pages: Vec<&str> = dense.iter().map(String::as_str).collect();
    bench.upload(ATTACHMENT, "dense.pdf", &pdf_of_pages(&pages));
    let read = shapes.read(b, "zotero_read_attachment", json!({ "itemKey": PARENT })).await;
    assert_eq!(read["truncated"], true);
    let next = read["nextFromPage"].as_u64().expect("where to continue");
    assert!(
        (2..=6).contains(&next) && read["note"].as_str().is_some_and(|n| n.contains("fit in one answer")),
        "{read:?}"
    );
    assert_eq!(read["pages"].as_array().map(Vec::len), Some(next as usize - 1));

    // One page longer than an answer: its beginning, and the read moves on.
    let huge = "Dense ".repeat(40_000);
    bench.upload(ATTACHMENT, "one-dense-page.pdf", &pdf_of_pages(&[&huge, "after"]));
    let cut =
        shapes.read(b, "zotero_read_attachment", json!({ "itemKey": ATTACHMENT, "fromPage": 1, "toPage": 2 })).await;
    assert_eq!((cut["pages"].clone(), cut["nextFromPage"].as_u64()), (json!([1]), Some(2)));
    assert!(cut["note"].as_str().is_some_and(|n| n.contains("Page 1 alone")));
    let _ = keys;
}

#[tokio::test]
async fn refusals_name_only_the_arguments_of_the_tool_called() {
    let app = app();
    let registry = zotero_mcp_server::tools::registry(&app.config);
    let published = published();
    for spec in registry.tool_specs() {
        let properties = published["tools"][spec.name]["inputSchema"]["properties"].as_object().expect("properties");
        // A panel's answer is not held to the model's limit (it is bounded by the tool), so it is never refused.
        let writes_always = spec.access == zotero_mcp_server::mcp::Access::Write || spec.app_only;
        assert!(
            writes_always || !spec.ask_for_less.is_empty(),
            "{}: a tool that can answer too much must say how to ask for less (ToolSpec::ask_for_less)",
            spec.name
        );
        for name in spec.ask_for_less.split('`').skip(1).step_by(2) {
            assert!(
                properties.contains_key(name),
                "{}: its advice names `{name}`, which is not one of its arguments",
                spec.name
            );
        }
    }
}

#[tokio::test]
async fn resources_and_prompts_answer_in_the_protocols_shapes() {
    let (bench, _) = bench_with_files();
    let contents_schema = json!({
        "type": "object",
        "required": ["contents"],
        "properties": { "contents": { "type": "array", "minItems": 1, "items": {
            "type": "object", "required": ["uri", "mimeType", "text"],
            "properties": { "uri": { "type": "string" }, "mimeType": { "type": "string" }, "text": { "type": "string" } }
        } } }
    });
    let contents = jsonschema::draft202012::new(&contents_schema).expect("schema");
    let search_item = published()["tools"]["zotero_search"]["outputSchema"]["properties"]["items"]["items"].clone();
    let item = jsonschema::draft202012::new(&search_item).expect("the search item schema");
    for uri in [
        format!("zotero://item/{INDEXED_PARENT}"),
        format!("zotero://attachment/{PARENT}"),
        format!("zotero://attachment/{ATTACHMENT}/pages/2-3"),
        "zotero://collections".to_owned(),
        "zotero://recent".to_owned(),
    ] {
        let reply = send(&bench.app, modern("resources/read", json!({ "uri": uri }))).await;
        let result = reply.result();
        let errors: Vec<String> = contents.iter_errors(result).map(|e| format!("{}: {e}", e.instance_path())).collect();
        assert!(errors.is_empty(), "{uri}: {errors:?}");
        let content = &result["contents"][0];
        assert_eq!(content["uri"], uri.as_str());
        if content["mimeType"] == "application/json" {
            let parsed: Value =
                serde_json::from_str(content["text"].as_str().unwrap()).expect("JSON, as its type says");
            let entries = parsed.as_array().expect("a list of items");
            assert!(!entries.is_empty());
            for entry in entries {
                let errors: Vec<String> =
                    item.iter_errors(entry).map(|e| format!("{}: {e}", e.instance_path())).collect();
                assert!(errors.is_empty(), "{uri}: an item unlike a search result's: {errors:?}");
            }
        }
    }
    let prompt_schema = json!({
        "type": "object", "required": ["messages"],
        "properties": {
            "description": { "type": "string" },
            "messages": { "type": "array", "minItems": 1, "items": {
                "type": "object", "required": ["role", "content"],
                "properties": {
                    "role": { "enum": ["user", "assistant"] },
                    "content": { "type": "object", "required": ["type", "text"],
                                 "properties": { "type": { "const": "text" }, "text": { "type": "string", "minLength": 1 } } }
                }
            } }
        }
    });
    let prompt = jsonschema::draft202012::new(&prompt_schema).expect("schema");
    let reply = send(
        &bench.app,
        modern(
            "prompts/get",
            json!({ "name": "literature-review", "arguments": { "collectionKey": "MT53KB66", "focus": "methods" } }),
        ),
    )
    .await;
    let errors: Vec<String> =
        prompt.iter_errors(reply.result()).map(|e| format!("{}: {e}", e.instance_path())).collect();
    assert!(errors.is_empty(), "literature-review: {errors:?}");
}
