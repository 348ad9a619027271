//! How many requests the file, index, import and duplicate tools make, and in how many sequential steps (issue
//! 10), counted by [`Steps`] (tests/common/steps.rs) in front of the test bench's router: the simulator, the
//! in-memory WebDAV folder and the web server for downloads (tests/common/dav.rs). AI Search is the in-memory
//! one; its calls are not HTTP and are not counted.
//!
//! Each bound is the TypeScript server's sequential requests for the same call or fewer,
//! named in the assertion's message. The library tools are counted in round_trips.rs.

mod common;

use std::rc::Rc;

use common::dav::{bench, Bench, PLOS_DOI};
use common::steps::Steps;
use common::*;
use serde_json::{json, Value};
use zotero_mcp_core::testing::{pdf_of_pages, MemoryAiSearch, StoppedClock};
use zotero_sim::LibraryRef;

const LIB: LibraryRef = LibraryRef::User(DEMO_USER);
/// A paper whose PDF (93WJRKG5) is in Zotero's full-text index.
const INDEXED_PARENT: &str = "T6W7H8UE";
/// A paper with a stored PDF (UN79YVS8) that is not in the index.
const PARENT: &str = "KPDKK5UT";
const ATTACHMENT: &str = "UN79YVS8";

struct Counted {
    bench: Bench,
    http: Rc<Steps>,
    ai: Rc<MemoryAiSearch>,
}

impl Counted {
    /// The demo library with WebDAV configured and AI Search bound.
    fn new() -> Self {
        let mut bench = bench(true);
        let http = Steps::over(bench.router.clone());
        bench.app.platform.http = http.clone();
        // The memory platform's ManualClock returns from every sleep at once, so a request that waits a turn (as
        // `Steps` makes each one do) loses the race with its timeout; a StoppedClock's sleeps never end.
        bench.app.platform.clock = Rc::new(StoppedClock(bench.app.platform.clock.now_ms()));
        let ai = MemoryAiSearch::new();
        bench.app.platform.ai_search = Some(ai.clone());
        Self { bench, http, ai }
    }

    /// Calls a tool with a read-write grant, checks it succeeded; returns its result and (requests, steps).
    async fn call(&self, name: &str, arguments: Value) -> (Value, usize, usize) {
        self.http.reset();
        let result = self.bench.write(name, arguments).await;
        assert!(result.get("isError").is_none(), "{name}: {}", result["content"][0]["text"]);
        (result, self.http.requests(), self.http.steps())
    }

    fn log(&self) -> Vec<String> {
        self.http.log()
    }

    /// The stored attachment's file on WebDAV, under the name its item records (as Zotero Desktop uploads it).
    fn upload_stored_pdf(&self) {
        let item = self.bench.sim.item(LIB, ATTACHMENT).expect("the demo attachment");
        let name = item["data"]["filename"].as_str().expect("a file name").to_owned();
        self.bench.upload(ATTACHMENT, &name, &pdf());
    }
}

fn pdf() -> Vec<u8> {
    pdf_of_pages(&["Residue contacts emerge early", "Side chains pack without rotamers"])
}

fn base64(data: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(data)
}

// ---- reading ----

#[tokio::test]
async fn a_whole_text_from_zoteros_index_is_three_steps() {
    let c = Counted::new();
    let (result, requests, steps) = c.call("zotero_read_attachment", json!({ "itemKey": INDEXED_PARENT })).await;
    assert_eq!(result["structuredContent"]["source"], "zotero-index");
    assert_eq!(
        (requests, steps),
        (3, 3),
        "the item, its children, the index (as the TypeScript server): {:?}",
        c.log()
    );
}

#[tokio::test]
async fn a_page_range_reads_the_file_once_and_then_only_the_item() {
    let c = Counted::new();
    c.upload_stored_pdf();
    let range = json!({ "itemKey": ATTACHMENT, "fromPage": 1, "toPage": 2 });
    let (result, requests, steps) = c.call("zotero_read_attachment", range.clone()).await;
    assert_eq!(result["structuredContent"]["source"], "webdav");
    assert_eq!((requests, steps), (2, 2), "the item, then its file: {:?}", c.log());
    let (_, requests, steps) = c.call("zotero_read_attachment", range).await;
    assert_eq!((requests, steps), (1, 1), "the item (for its md5), the text from the cache: {:?}", c.log());
}

#[tokio::test]
async fn info_and_outline_are_two_steps() {
    let c = Counted::new();
    c.upload_stored_pdf();
    let (result, requests, steps) =
        c.call("zotero_read_attachment", json!({ "itemKey": ATTACHMENT, "mode": "info" })).await;
    assert_eq!(result["structuredContent"]["file"]["onWebDav"], true);
    assert_eq!((requests, steps), (2, 2), "the item, then HEAD on its archive: {:?}", c.log());
    assert_eq!(c.http.count("HEAD "), 1, "{:?}", c.log());
    let (_, requests, steps) =
        c.call("zotero_read_attachment", json!({ "itemKey": ATTACHMENT, "mode": "outline" })).await;
    assert_eq!((requests, steps), (2, 2), "the item, then its file: {:?}", c.log());
}

// ---- writing files ----

#[tokio::test]
async fn a_new_attachment_is_four_steps_where_the_typescript_server_takes_six() {
    let c = Counted::new();
    let arguments = json!({ "parentItemKey": PARENT, "base64Data": base64(&pdf()), "filename": "paper.pdf" });
    let (_, requests, steps) = c.call("zotero_put_attachment", arguments).await;
    // Theirs: the template, the item, the zip, the prop, the item again for its version, the md5 patch.
    assert_eq!((requests, steps), (4, 4), "the item, the zip, the prop, the md5 patch: {:?}", c.log());
    assert_eq!(c.http.count("/items/new"), 0, "the attachment template is known, not fetched: {:?}", c.log());

    c.bench.serve("example.org/paper.pdf", 200, &[("content-type", "application/pdf")], &pdf());
    let arguments = json!({ "parentItemKey": PARENT, "sourceUrl": "https://example.org/paper.pdf" });
    let (_, requests, steps) = c.call("zotero_put_attachment", arguments).await;
    assert_eq!((requests, steps), (5, 5), "the download, then the same four (theirs: seven): {:?}", c.log());
}

#[tokio::test]
async fn a_replacement_reads_the_item_before_the_file_downloads() {
    let c = Counted::new();
    c.upload_stored_pdf();
    let arguments = json!({ "replaceAttachmentKey": ATTACHMENT, "base64Data": base64(&pdf()) });
    let (_, requests, steps) = c.call("zotero_put_attachment", arguments).await;
    // The earlier zip and prop are first copied aside, both at once, for the undo journal.
    assert_eq!((requests, steps), (6, 5), "the item, the copies, the zip, the prop, the patch: {:?}", c.log());

    c.bench.serve("example.org/new.pdf", 200, &[("content-type", "application/pdf")], &pdf());
    let arguments = json!({ "replaceAttachmentKey": ATTACHMENT, "sourceUrl": "https://example.org/new.pdf" });
    let (_, requests, steps) = c.call("zotero_put_attachment", arguments).await;
    // The item is read first: the person may be asked about the replacement, and a "no" costs no download.
    assert_eq!((requests, steps), (7, 6), "the item, the download, then the same four: {:?}", c.log());
}

#[tokio::test]
async fn deleting_an_attachment_removes_both_files_together() {
    let c = Counted::new();
    c.upload_stored_pdf();
    let (_, requests, steps) = c.call("zotero_delete_attachment", json!({ "attachmentKey": ATTACHMENT })).await;
    assert_eq!((requests, steps), (2, 2), "the item, then the move to the trash: {:?}", c.log());

    let c = Counted::new();
    c.upload_stored_pdf();
    let (_, requests, steps) =
        c.call("zotero_delete_attachment", json!({ "attachmentKey": ATTACHMENT, "permanent": true })).await;
    // Theirs: the item, its deletion, the zip, the prop, each after the last. Ours reads the children, the trashed
    // ones included, before the deletion (Zotero deletes them with it; `numChildren` leaves the trashed out), so
    // the undo journal can bring them back.
    assert_eq!(
        (requests, steps),
        (5, 4),
        "the item, its children, its deletion, then both files at once: {:?}",
        c.log()
    );
    assert!(
        c.bench.file(&format!("{ATTACHMENT}.zip")).is_none() && c.bench.file(&format!("{ATTACHMENT}.prop")).is_none()
    );
    assert_eq!(c.log().iter().filter(|r| r.starts_with("MOVE ")).count(), 2, "moved aside for the undo journal");
}

#[tokio::test]
async fn renaming_reads_each_file_and_its_prop_together() {
    let c = Counted::new();
    c.upload_stored_pdf();
    let template = r#"{{ firstCreator suffix="_" }}{{ year }}"#;
    let (_, requests, steps) =
        c.call("zotero_rename_attachments", json!({ "itemKeys": [PARENT], "template": template })).await;
    // Theirs: the item, its children, then the parent again for the name.
    assert_eq!((requests, steps), (2, 2), "a dry run: the items, then their children: {:?}", c.log());
    let (_, requests, steps) =
        c.call("zotero_rename_attachments", json!({ "itemKeys": [ATTACHMENT], "template": template })).await;
    assert_eq!((requests, steps), (2, 2), "an attachment given itself: it, then its parent: {:?}", c.log());

    let (result, requests, steps) =
        c.call("zotero_rename_attachments", json!({ "itemKeys": [PARENT], "template": template, "apply": true })).await;
    assert_eq!(result["structuredContent"]["planned"][0]["status"], "renamed", "{result}");
    // Theirs: the item, its children, the parent, the zip, the item again, the zip, the prop, the patch.
    assert_eq!(
        (requests, steps),
        (9, 7),
        "the items, their children, the zip with its prop, the copies for the undo journal, the new zip, the new \
         prop, the patch: {:?}",
        c.log()
    );
}

// ---- imports ----

#[tokio::test]
async fn an_import_with_its_pdf_takes_fewer_steps_than_the_typescript_server() {
    let c = Counted::new();
    c.bench.serve_plos();
    let (result, requests, steps) = c.call("zotero_import_reference", json!({ "identifier": PLOS_DOI })).await;
    assert!(result["structuredContent"]["attachmentKey"].is_string(), "{result}");
    // Theirs (with an open-access PDF): CrossRef, the copy search, the template, the item, the download, the
    // parent again, the attachment template, the attachment, the zip, the prop, the attachment again, the patch.
    assert_eq!(
        (requests, steps),
        (10, 10),
        "CrossRef, the copy search, the template, the item, OpenAlex for the PDF, the download, the attachment, \
         the zip, the prop, the patch: {:?}",
        c.log()
    );
}

// ---- the semantic index ----

#[tokio::test]
async fn a_semantic_search_reads_its_matches_in_one_request() {
    let c = Counted::new();
    let (result, requests, _) = c.call("zotero_semantic_search", json!({ "query": "protein folding" })).await;
    assert_eq!(result["structuredContent"]["total"], 0);
    assert_eq!(requests, 0, "an empty index asks Zotero nothing: {:?}", c.log());

    c.call("zotero_reindex", json!({ "full": true, "limit": 2000 })).await;
    c.ai.process();
    let (result, requests, steps) = c
        .call("zotero_semantic_search", json!({ "query": "protein structure from single sequences", "limit": 5 }))
        .await;
    assert!(result["structuredContent"]["total"].as_u64().unwrap() > 0, "{result}");
    assert_eq!((requests, steps), (1, 1), "every match's item in one request (as theirs): {:?}", c.log());
}

#[tokio::test]
async fn a_metadata_sync_is_the_versions_then_one_request_per_fifty_items() {
    let mut c = Counted::new();
    let mut config = (*c.bench.app.config).clone();
    config.index_full_text = false;
    c.bench.app.config = Rc::new(config);
    let (result, requests, steps) = c.call("zotero_reindex", json!({ "full": true, "limit": 2000 })).await;
    assert_eq!(result["structuredContent"]["complete"], true, "{result}");
    let items = c.bench.sim.items(LIB).len();
    // As theirs: the version scan, then the items 50 keys at a time, one batch after another.
    let expected = 1 + items.div_ceil(50);
    assert_eq!((requests, steps), (expected, expected), "{:?}", c.log());
}

#[tokio::test]
async fn a_full_text_sync_reads_every_items_text_together_and_the_pdfs_one_at_a_time() {
    let c = Counted::new();
    c.upload_stored_pdf();
    let (_, requests, steps) = c.call("zotero_reindex", json!({ "full": true, "limit": 50 })).await;
    let chunks = c.http.count("itemKey=");
    let text_reads = c.log().iter().filter(|r| r.contains("/children?") || r.ends_with("/fulltext")).count();
    let downloads = c.http.count("dav.test");
    assert_eq!(c.http.count("format=versions"), 1, "{:?}", c.log());
    assert!(chunks >= 1 && text_reads > 4 && downloads > 0, "{:?}", c.log());
    // What the metadata sync takes (the version scan, with the full-text versions beside it, then each chunk),
    // and the passages theirs does not index: every item's children and the text of each one's best attachment,
    // all sent together and so as many round trips as the client's four-in-flight limit makes of them. The PDFs
    // without an indexed text are read one at a time, after those: a Worker has 128 MB, and one PDF with its
    // parse is what the sync budgets for.
    let bound = 1 + chunks + text_reads.div_ceil(4) + downloads;
    assert!(steps <= bound, "{steps} steps, over {bound}; {requests} requests: {:?}", c.log());
}

// ---- duplicates ----

/// Adds `count` distinct articles to the demo library, and two copies of one more.
fn a_large_library(c: &Counted, count: usize) {
    for n in 0..count {
        c.bench.sim.insert_item(
            LIB,
            json!({ "itemType": "journalArticle", "title": format!("Distinct study number {n} of many"), "date": "2020" }),
        );
    }
    for _ in 0..2 {
        c.bench.sim.insert_item(
            LIB,
            json!({ "itemType": "journalArticle", "title": "A study printed twice by mistake", "date": "2021",
                    "DOI": "10.1000/twice" }),
        );
    }
}

#[tokio::test]
async fn a_scan_reads_every_page_after_the_first_together() {
    let c = Counted::new();
    a_large_library(&c, 240);
    let (result, requests, steps) = c.call("zotero_find_duplicates", json!({ "scanLimit": 500 })).await;
    let scanned = result["structuredContent"]["scanned"].as_u64().unwrap();
    assert!(scanned > 200, "{result}");
    assert_eq!(requests, (scanned as usize).div_ceil(100), "pages of 100: {:?}", c.log());
    // Theirs: one page after another.
    assert_eq!(steps, 2, "the first page (which gives the total), then all the others at once: {:?}", c.log());
}

#[tokio::test]
async fn a_merge_lists_every_duplicates_children_together() {
    let c = Counted::new();
    a_large_library(&c, 0);
    let third = c.bench.sim.insert_item(
        LIB,
        json!({ "itemType": "journalArticle", "title": "A study printed twice by mistake", "date": "2021",
                "DOI": "10.1000/twice" }),
    );
    let (result, _, _) = c.call("zotero_find_duplicates", json!({})).await;
    let group = result["structuredContent"]["groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["keys"].as_array().unwrap().iter().any(|k| k == third.as_str()))
        .cloned()
        .expect("the three copies are one group");
    let keys = group["keys"].clone();
    assert_eq!(keys.as_array().unwrap().len(), 3);
    let (result, requests, steps) = c.call("zotero_find_duplicates", json!({ "mergeKeys": keys, "merge": true })).await;
    assert_eq!(result["structuredContent"]["groups"][0]["merged"], true, "{result}");
    // Theirs, for these copies without children: the items, each duplicate's children, the master, then each
    // duplicate read and trashed, one after another (eight steps).
    assert_eq!(
        (requests, steps),
        (6, 5),
        "the items, both duplicates' children at once, the items again, the master, both trashed at once: {:?}",
        c.log()
    );
}
