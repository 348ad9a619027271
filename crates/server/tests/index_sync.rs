//! The semantic index's sync against the Zotero simulator and the in-memory AI Search: the upstream's 30
//! sync.test.ts scenarios' sync half (21–30; 1–20 are unit tests in crates/core/src/index/tests), the fixes
//! (deletions on full runs, `limit` everywhere), the subrequest budget, the cursor's compatibility, and the
//! paper's text from Zotero's full-text index.

use std::rc::Rc;

use serde_json::{json, Value};
use zotero_mcp_core::index::{sync, IndexSettings, SemanticIndex, SyncOptions, SyncReport};
use zotero_mcp_core::platform::{AiSearch, AiSearchError, KvStore, KvWrite};
use zotero_mcp_core::testing::{AiSearchCall, ManualClock, MemoryAiSearch, MemoryKv, StoredDocument};
use zotero_mcp_core::zotero::{LibraryKind, ObjectKey, ZoteroClient, ZoteroSettings, ZoteroWriter};
use zotero_sim::{Fault, InProcess, LibraryRef, Simulator};

const USER: u64 = 1;
const LIB: LibraryRef = LibraryRef::User(USER);
const API_KEY: &str = "sync-test-key";
const INSTANCE: &str = "zotero-items";
const STATE_KEY: &str = "aisearch:sync-state:zotero-items";

/// A library in the simulator, an AI Search namespace, and `CACHE_KV`, as one deployment sees them.
struct Bench {
    sim: Rc<Simulator>,
    ai: Rc<MemoryAiSearch>,
    kv: Rc<MemoryKv>,
    clock: Rc<ManualClock>,
    /// Whether the client is told the library id (else it looks it up from the key: one more request).
    configured_id: bool,
}

impl Bench {
    fn new() -> Self {
        let sim = Rc::new(Simulator::new());
        sim.add_user(USER, API_KEY, true);
        let clock = ManualClock::at(1_800_000_000_000);
        Self { sim, ai: MemoryAiSearch::new(), kv: MemoryKv::new(clock.clone()), clock, configured_id: true }
    }

    fn settings(&self) -> ZoteroSettings {
        ZoteroSettings {
            api_key: API_KEY.into(),
            library_kind: LibraryKind::User,
            library_id: self.configured_id.then(|| USER.to_string()),
            base_url: None,
        }
    }

    /// A fresh client, as each Worker invocation has.
    fn zotero(&self) -> ZoteroClient {
        ZoteroClient::new(self.settings(), Rc::new(InProcess(self.sim.clone())), self.clock.clone()).unwrap()
    }

    fn writer(&self) -> ZoteroWriter {
        ZoteroWriter::new(self.settings(), Rc::new(InProcess(self.sim.clone())), self.clock.clone()).unwrap()
    }

    fn index(&self) -> SemanticIndex {
        SemanticIndex::new(self.ai.clone(), IndexSettings::default())
    }

    /// One run; checks that the Zotero requests it made are the ones it counted, within its budget.
    async fn run(&self, options: SyncOptions) -> SyncReport {
        self.try_run(options).await.unwrap()
    }

    async fn try_run(&self, options: SyncOptions) -> Result<SyncReport, zotero_mcp_core::index::IndexError> {
        let before = self.sim.requests().len();
        let index = self.index();
        let report = sync(&self.zotero(), Some(&index), self.kv.as_ref(), &options).await?;
        let made = self.sim.requests().len() - before;
        assert_eq!(made, report.subrequests, "every Zotero request is counted: {:?}", self.requests_since(before));
        assert!(made <= options.subrequest_budget, "{made} requests over a budget of {}", options.subrequest_budget);
        Ok(report)
    }

    fn requests_since(&self, from: usize) -> Vec<String> {
        self.sim.requests()[from..].iter().map(|r| format!("{} {}?{}", r.method, r.path, r.query)).collect()
    }

    fn add(&self, data: Value) -> String {
        self.sim.insert_item(LIB, data)
    }

    /// A journal article; `key` when given.
    fn article(&self, key: &str, title: &str, year: u32) -> String {
        self.add(json!({ "key": key, "itemType": "journalArticle", "title": title, "date": format!("{year}-03-01"),
                         "creators": [{ "creatorType": "author", "firstName": "Ada", "lastName": "Lovelace" }] }))
    }

    /// A stored PDF under `parent`, with full text when given.
    fn pdf(&self, key: &str, parent: &str, text: Option<&str>) -> String {
        let key = self.add(json!({ "key": key, "itemType": "attachment", "parentItem": parent,
                                   "linkMode": "imported_file", "contentType": "application/pdf",
                                   "filename": "paper.pdf", "title": "Full Text PDF" }));
        if let Some(text) = text {
            self.sim.set_fulltext(LIB, &key, text, Some(3), Some(3));
        }
        key
    }

    fn version(&self) -> u64 {
        self.sim.library_version(LIB)
    }

    async fn delete(&self, key: &str) {
        let version = self.item_version(key);
        self.writer().delete_item(&ObjectKey::parse(key).unwrap(), version).await.unwrap();
    }

    async fn trash(&self, key: &str) {
        let version = self.item_version(key);
        self.writer().patch_item(&ObjectKey::parse(key).unwrap(), version, &json!({ "deleted": 1 })).await.unwrap();
    }

    fn item_version(&self, key: &str) -> u64 {
        self.sim.item(LIB, key).unwrap()["version"].as_u64().unwrap()
    }

    async fn state(&self) -> Option<Value> {
        self.kv.get(STATE_KEY).await.unwrap().map(|text| serde_json::from_str(&text).unwrap())
    }

    fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.ai.documents(INSTANCE).into_iter().map(|d| d.name).collect();
        names.sort();
        names
    }

    fn document(&self, key: &str) -> Option<StoredDocument> {
        self.ai.document(INSTANCE, &format!("{key}.md"))
    }
}

fn options() -> SyncOptions {
    SyncOptions { full: false, limit: 100, subrequest_budget: 1000, full_text: false }
}

fn with_text() -> SyncOptions {
    SyncOptions { full_text: true, ..options() }
}

// ---- upstream 21–30 ----

#[tokio::test]
async fn an_unbound_index_reports_complete_and_not_bound() {
    let bench = Bench::new();
    let report = sync(&bench.zotero(), None, bench.kv.as_ref(), &options()).await.unwrap();
    assert!(report.complete);
    assert!(report.message.contains("not bound"), "{}", report.message);
    assert_eq!((report.submitted, report.removed, report.remaining), (0, 0, 0));
    assert_eq!((report.backlog, report.failed, report.warning), (Some(0), Some(0), None));
    assert!(bench.sim.requests().is_empty());
}

#[tokio::test]
async fn a_first_run_submits_everything_and_moves_the_cursor() {
    let bench = Bench::new();
    bench.article("AAAA2222", "Heat stress", 2020);
    bench.article("BBBB3333", "Drought", 2021);
    bench.add(json!({ "itemType": "note", "note": "<p>standalone</p>" }));
    let version = bench.version();
    let report = bench.run(options()).await;
    assert_eq!(report.submitted, 2);
    assert!(report.complete);
    assert_eq!((report.from_version, report.to_version), (0, version));
    assert_eq!(bench.state().await.unwrap()["since"], json!(version));
    assert_eq!(bench.names(), ["AAAA2222.md", "BBBB3333.md"]);
    assert!(report
        .message
        .starts_with(&format!("Submitted 2 item(s). Every change up to library version {version} has been sent; ")));
}

#[tokio::test]
async fn a_small_chunk_size_is_a_warning_not_part_of_the_message() {
    let bench = Bench::new();
    bench.ai.create(&json!({ "id": INSTANCE, "chunk_size": 256 })).await.unwrap();
    bench.article("AAAA2222", "Heat stress", 2020);
    let report = bench.run(options()).await;
    assert!(report.warning.as_deref().unwrap().contains("chunks at 256 tokens"));
    assert!(!report.message.contains("256"));
}

#[tokio::test]
async fn a_clean_run_has_no_warning() {
    let bench = Bench::new();
    bench.article("AAAA2222", "Heat stress", 2020);
    assert_eq!(bench.run(options()).await.warning, None);
}

#[tokio::test]
async fn the_backlog_is_queued_plus_running() {
    let bench = Bench::new();
    bench.article("AAAA2222", "Heat stress", 2020);
    bench.article("BBBB3333", "Drought", 2021);
    bench.run(options()).await;
    bench.ai.start_running(INSTANCE, 1);
    bench.article("CCCC4444", "Irrigation", 2022);
    let report = bench.run(options()).await;
    assert_eq!(report.submitted, 1);
    assert_eq!(report.backlog, Some(3), "queued 2 + running 1");
    assert_eq!(report.failed, Some(0));
    assert!(report.message.contains("3 document(s) are still being indexed"), "{}", report.message);
    bench.ai.process();
    bench.article("DDDD5555", "Soils", 2023);
    let report = bench.run(options()).await;
    assert_eq!(report.backlog, Some(1));
}

#[tokio::test]
async fn a_limit_splits_the_cycle_and_the_cursor_waits_for_the_queue() {
    let bench = Bench::new();
    for (key, title) in [("AAAA2222", "One"), ("BBBB3333", "Two"), ("CCCC4444", "Three")] {
        bench.article(key, title, 2020);
    }
    let version = bench.version();
    let first = bench.run(SyncOptions { limit: 2, ..options() }).await;
    assert_eq!((first.submitted, first.remaining, first.complete), (2, 1, false));
    assert_eq!(first.message, "Submitted 2 item(s); 1 still queued for the next run.");
    assert_eq!(bench.state().await.unwrap()["since"], json!(0));
    let second = bench.run(SyncOptions { limit: 2, ..options() }).await;
    assert_eq!((second.submitted, second.remaining, second.complete), (1, 0, true));
    assert_eq!(bench.state().await.unwrap(), json!({ "since": version, "target": version, "pending": [] }));
    assert_eq!(bench.names().len(), 3);
}

#[tokio::test]
async fn deletions_since_the_cursor_are_removed() {
    let bench = Bench::new();
    bench.article("AAAA2222", "Kept", 2020);
    bench.article("DDDD2222", "Deleted later", 2019);
    bench.run(options()).await;
    assert_eq!(bench.names(), ["AAAA2222.md", "DDDD2222.md"]);
    bench.delete("DDDD2222").await;
    let report = bench.run(options()).await;
    assert_eq!(report.removed, 1);
    assert_eq!(bench.names(), ["AAAA2222.md"]);
}

#[tokio::test]
async fn a_new_instance_forces_a_full_run_despite_the_cursor() {
    let bench = Bench::new();
    bench.article("AAAA2222", "One", 2020);
    bench.article("BBBB3333", "Two", 2021);
    let version = bench.version();
    let cursor = json!({ "since": version, "target": version, "pending": [] }).to_string();
    bench.kv.put(STATE_KEY, &cursor, KvWrite::Forever).await.unwrap();
    let report = bench.run(options()).await;
    assert_eq!(report.submitted, 2, "the cursor would have said nothing changed");
    assert_eq!(report.from_version, 0);
}

#[tokio::test]
async fn the_cursor_key_and_json_are_the_typescript_projects() {
    let bench = Bench::new();
    bench.article("AAAA2222", "One", 2020);
    bench.article("BBBB3333", "Two", 2021);
    bench.run(SyncOptions { limit: 1, ..options() }).await;
    assert_eq!(bench.kv.keys(), [STATE_KEY]);
    let stored = bench.kv.get(STATE_KEY).await.unwrap().unwrap();
    let version = bench.version();
    assert_eq!(stored, format!(r#"{{"since":0,"target":{version},"pending":["BBBB3333"]}}"#));
}

#[tokio::test]
async fn unreadable_stats_give_unknown_backlog_and_the_run_still_completes() {
    let bench = Bench::new();
    bench.article("AAAA2222", "One", 2020);
    bench.ai.fail_next(AiSearchCall::Stats, 1, AiSearchError::Failed { name: "Error".into(), message: "down".into() });
    let report = bench.run(options()).await;
    assert_eq!((report.backlog, report.failed), (None, None));
    assert!(report.message.contains("could not be read"), "{}", report.message);
    assert_eq!((report.submitted, report.complete), (1, true));
}

// ---- nothing changed, and the cursor across deployments ----

#[tokio::test]
async fn nothing_changed_is_reported_and_the_cursor_stays() {
    let bench = Bench::new();
    bench.article("AAAA2222", "One", 2020);
    bench.run(options()).await;
    let version = bench.version();
    let report = bench.run(options()).await;
    assert_eq!(report.message, format!("Nothing changed since library version {version}."));
    assert!(report.complete);
    assert_eq!(report.subrequests, 2, "versions and deletions");
    assert_eq!(bench.state().await.unwrap(), json!({ "since": version, "target": version, "pending": [] }));
}

#[tokio::test]
async fn a_cursor_written_by_the_typescript_project_is_resumed() {
    let bench = Bench::new();
    bench.article("AAAA2222", "One", 2020);
    bench.article("BBBB3333", "Two", 2021);
    bench.index().ensure().await.unwrap();
    let cursor = r#"{"since":1,"target":9,"pending":["BBBB3333"]}"#;
    bench.kv.put(STATE_KEY, cursor, KvWrite::Forever).await.unwrap();
    let before = bench.sim.requests().len();
    let report = bench.run(options()).await;
    assert!(!bench.requests_since(before).iter().any(|r| r.contains("format=versions")), "a resume does not rescan");
    assert_eq!((report.submitted, report.removed, report.complete), (1, 0, true));
    assert_eq!((report.from_version, report.to_version), (1, 9));
    assert_eq!(bench.names(), ["BBBB3333.md"]);
    assert_eq!(bench.state().await.unwrap(), json!({ "since": 9, "target": 9, "pending": [] }));
}

#[tokio::test]
async fn an_unreadable_cursor_starts_over() {
    let bench = Bench::new();
    bench.article("AAAA2222", "One", 2020);
    bench.index().ensure().await.unwrap();
    bench.kv.put(STATE_KEY, "not json", KvWrite::Forever).await.unwrap();
    let report = bench.run(options()).await;
    assert_eq!((report.submitted, report.from_version), (1, 0));
    // Missing fields read as 0/0/[].
    bench.kv.put(STATE_KEY, "{}", KvWrite::Forever).await.unwrap();
    assert_eq!(bench.run(options()).await.submitted, 1);
}

#[tokio::test]
async fn a_failed_run_writes_no_cursor() {
    let bench = Bench::new();
    bench.article("AAAA2222", "One", 2020);
    bench.ai.fail_next(AiSearchCall::Upload, 1, AiSearchError::Failed { name: "Error".into(), message: "x".into() });
    let error = bench.try_run(options()).await.unwrap_err();
    assert!(error.to_string().contains("Try again"), "{error}");
    assert_eq!(bench.state().await, None);
    // Zotero failing after its retries: the same.
    // Five answers of 503: the first attempt and its four retries.
    bench.sim.fail_next(5, Fault::ServiceUnavailable { retry_after: None });
    assert!(sync(&bench.zotero(), Some(&bench.index()), bench.kv.as_ref(), &options()).await.is_err());
    assert_eq!(bench.state().await, None);
    assert_eq!(bench.run(options()).await.submitted, 1);
}

// ---- the fixes: deletions on full runs (Q6), limit everywhere (Q9) ----

#[tokio::test]
async fn a_full_run_removes_documents_of_items_that_no_longer_exist() {
    let bench = Bench::new();
    bench.article("AAAA2222", "Kept", 2020);
    bench.article("DDDD2222", "Deleted", 2019);
    bench.run(options()).await;
    bench.delete("DDDD2222").await;
    // A document nothing in the library stands for (left by another deployment).
    bench.ai.upload(INSTANCE, "XXXX9999.md", "orphan", &json!({ "metadata": {} })).await.unwrap();
    let report = bench.run(SyncOptions { full: true, ..options() }).await;
    assert_eq!(report.removed, 2);
    assert_eq!(report.submitted, 1);
    assert_eq!(bench.names(), ["AAAA2222.md"]);
}

#[tokio::test]
async fn trashed_items_lose_their_documents() {
    let bench = Bench::new();
    bench.article("AAAA2222", "Kept", 2020);
    bench.article("TTTT2222", "Trashed", 2019);
    bench.run(options()).await;
    bench.trash("TTTT2222").await;
    let report = bench.run(options()).await;
    assert_eq!((report.submitted, report.removed), (0, 0), "a cleanup, not a reported deletion");
    assert_eq!(bench.names(), ["AAAA2222.md"]);
}

#[tokio::test]
async fn the_limit_holds_on_full_runs_too() {
    let bench = Bench::new();
    for key in ["AAAA2222", "BBBB3333", "CCCC4444"] {
        bench.article(key, "Paper", 2020);
    }
    bench.run(options()).await;
    let report = bench.run(SyncOptions { full: true, limit: 1, ..options() }).await;
    assert_eq!((report.submitted, report.remaining, report.complete), (1, 2, false));
}

// ---- the subrequest budget ----

#[tokio::test]
async fn a_run_stops_at_its_budget_and_the_next_resumes() {
    let bench = Bench::new();
    let mut parents = Vec::new();
    for i in 0..6 {
        let key = format!("PAPR{}{}{}{}", i + 2, i + 2, i + 2, i + 2);
        bench.article(&key, &format!("Paper {i}"), 2020);
        bench.pdf(&format!("FILE{}{}{}{}", i + 2, i + 2, i + 2, i + 2), &key, Some(&format!("Body of paper {i}.")));
        parents.push(key);
    }
    let version = bench.version();
    let budget = SyncOptions { subrequest_budget: 5, ..with_text() };

    let first = bench.run(budget.clone()).await;
    assert!(!first.complete);
    // The scan (versions + full-text versions) leaves 3: the read of all twelve keys, then one paper's children
    // and text. The six attachments are done with (they have no documents); the five papers whose text did not
    // fit go back to the queue.
    assert_eq!(first.submitted, 1);
    assert_eq!(first.remaining, 5);
    assert!(first.message.ends_with("This run stopped at its budget of 5 Zotero requests."), "{}", first.message);
    let state = bench.state().await.unwrap();
    assert_eq!((state["since"].clone(), state["target"].clone()), (json!(0), json!(version)), "cursor not advanced");
    assert_eq!(state["pending"].as_array().unwrap().len(), 5);
    assert!(state["pending"].as_array().unwrap().iter().all(|k| parents.contains(&k.as_str().unwrap().to_owned())));

    let mut runs = 1;
    let mut report = first;
    while !report.complete {
        let before = report.remaining;
        let seen = bench.sim.requests().len();
        report = bench.run(budget.clone()).await;
        // The cycle's full-text versions were kept beside the cursor: a resumed run does not list them again.
        let listings = bench.sim.requests()[seen..]
            .iter()
            .filter(|r| r.path.ends_with("/fulltext") && !r.path.contains("/items/"))
            .count();
        assert_eq!(listings, 0, "listed again");
        assert!(report.remaining < before, "every run makes progress");
        runs += 1;
        assert!(runs < 20);
    }
    assert_eq!(bench.state().await.unwrap(), json!({ "since": version, "target": version, "pending": [] }));
    let names = bench.names();
    assert_eq!(names.len(), 6);
    for (i, key) in parents.iter().enumerate() {
        let document = bench.document(key).unwrap();
        assert!(document.content.ends_with(&format!("\n\nBody of paper {i}.")), "{}", document.content);
    }
}

#[tokio::test]
async fn without_full_text_a_small_budget_reads_fifty_keys_per_request() {
    let bench = Bench::new();
    for i in 0..30 {
        bench.add(json!({ "itemType": "book", "title": format!("Book {i}") }));
    }
    let report = bench.run(SyncOptions { subrequest_budget: 2, ..options() }).await;
    assert_eq!((report.submitted, report.complete, report.subrequests), (30, true, 2));
}

#[tokio::test]
async fn a_budget_too_small_to_start_does_nothing() {
    let bench = Bench::new();
    bench.article("AAAA2222", "One", 2020);
    let report = bench.run(SyncOptions { subrequest_budget: 1, ..with_text() }).await;
    assert_eq!((report.submitted, report.complete, report.subrequests), (0, false, 0));
    assert!(report.message.contains("needs 2"), "{}", report.message);
    assert_eq!(bench.state().await, None);
}

#[tokio::test]
async fn the_key_lookup_is_counted_when_the_library_id_is_not_configured() {
    let mut bench = Bench::new();
    bench.configured_id = false;
    bench.article("AAAA2222", "One", 2020);
    let report = bench.run(options()).await;
    assert_eq!(report.subrequests, 3, "keys/current, versions, items");
    let report = bench.run(SyncOptions { subrequest_budget: 2, ..options() }).await;
    assert_eq!(report.subrequests, 0, "versions and deletions need 3 with the lookup");
    assert!(!report.complete);
}

// ---- the paper's text ----

#[tokio::test]
async fn documents_carry_the_text_of_the_best_attachment() {
    let bench = Bench::new();
    bench.article("AAAA2222", "Heat stress", 2020);
    bench.add(
        json!({ "key": "HTML2222", "itemType": "attachment", "parentItem": "AAAA2222", "linkMode": "imported_url",
                      "contentType": "text/html", "title": "Snapshot", "url": "https://example.org" }),
    );
    bench.sim.set_fulltext(LIB, "HTML2222", "Snapshot text.", None, None);
    bench.pdf("FILE2222", "AAAA2222", Some("The PDF's own words about grain filling."));
    bench.article("BBBB3333", "Note only", 2021);
    bench.add(json!({ "itemType": "note", "parentItem": "BBBB3333", "note": "<p>n</p>" }));
    bench.article("CCCC4444", "No children", 2022);
    let before = bench.sim.requests().len();
    let report = bench.run(with_text()).await;
    assert_eq!(report.submitted, 3);
    let text = bench.document("AAAA2222").unwrap().content;
    assert!(text.ends_with("\n\nThe PDF's own words about grain filling."), "{text}");
    assert!(!bench.document("BBBB3333").unwrap().content.contains("\n\n"));
    // versions, full-text versions, one item read; children of the two items that have some; one text read.
    assert_eq!(report.subrequests, 6, "{:?}", bench.requests_since(before));
    assert!(bench.document("AAAA2222").unwrap().metadata.values().all(Value::is_string));
}

#[tokio::test]
async fn of_several_pdfs_the_one_with_the_longest_indexed_text_is_indexed() {
    let bench = Bench::new();
    bench.article("AAAA2222", "Heat stress", 2020);
    // Zotero lists children newest first (`dateModified` descending), so the short one (a news story about the
    // paper), added last, comes first.
    bench.pdf("LNGP2222", "AAAA2222", Some("The paper itself, whose indexed text is much the longer of the two."));
    bench.pdf("SHRT2222", "AAAA2222", Some("A news story."));
    let children = bench.zotero().children(&ObjectKey::parse("AAAA2222").unwrap(), 10).await.unwrap();
    assert_eq!(children.items.iter().map(|c| c.key.as_str()).collect::<Vec<_>>(), ["SHRT2222", "LNGP2222"]);
    let before = bench.sim.requests().len();
    let report = bench.run(with_text()).await;
    let text = bench.document("AAAA2222").unwrap().content;
    assert!(text.ends_with("\n\nThe paper itself, whose indexed text is much the longer of the two."), "{text}");
    assert!(!text.contains("A news story."), "{text}");
    // versions, full-text versions, one item read, the children, one text read per PDF.
    assert_eq!(report.subrequests, 6, "{:?}", bench.requests_since(before));

    // Equal lengths: Zotero's order decides.
    let bench = Bench::new();
    bench.article("AAAA2222", "Heat stress", 2020);
    bench.pdf("SCND2222", "AAAA2222", Some("Other of two."));
    bench.pdf("FRST2222", "AAAA2222", Some("First of two."));
    bench.run(with_text()).await;
    assert!(bench.document("AAAA2222").unwrap().content.ends_with("\n\nFirst of two."));
}

#[tokio::test]
async fn further_pdfs_are_measured_only_with_requests_the_budget_spares() {
    let short = |i: usize| format!("Short {i}.");
    let long = |i: usize| format!("The longer indexed text of paper {i}.");
    let library = || {
        let bench = Bench::new();
        for i in 0..3 {
            let parent = bench.article(&format!("PAPR{}{}{}{}", i + 2, i + 2, i + 2, i + 2), "Paper", 2020);
            // The short one last: first in Zotero's order (newest first).
            bench.pdf(&format!("LNGP{}{}{}{}", i + 2, i + 2, i + 2, i + 2), &parent, Some(&long(i)));
            bench.pdf(&format!("SHRT{}{}{}{}", i + 2, i + 2, i + 2, i + 2), &parent, Some(&short(i)));
        }
        bench
    };
    // Budget 5: the scan (2) and the item read (1) leave one paper's children and first text (2) and nothing
    // spare, so every paper keeps its first PDF's text, run after run; 6 spares one more read in the first run;
    // from 12 the first run spares one for each paper. Every run, whatever its budget, makes exactly the requests
    // it counts and no more than its budget (`Bench::run`).
    for budget in 5..=12 {
        let bench = library();
        let options = SyncOptions { subrequest_budget: budget, ..with_text() };
        let mut runs = 0;
        while !bench.run(options.clone()).await.complete {
            runs += 1;
            assert!(runs < 20, "budget {budget}");
        }
        let mut longer = 0;
        for i in 0..3 {
            let text = bench.document(&format!("PAPR{}{}{}{}", i + 2, i + 2, i + 2, i + 2)).unwrap().content;
            assert!(text.ends_with(&format!("\n\n{}", short(i))) || text.ends_with(&format!("\n\n{}", long(i))));
            longer += usize::from(text.ends_with(&long(i)));
        }
        match budget {
            5 => assert_eq!(longer, 0),
            6 => assert!(longer >= 1),
            12 => assert_eq!(longer, 3),
            _ => {}
        }
    }
}

#[tokio::test]
async fn an_attachment_gaining_text_updates_its_parents_document() {
    let bench = Bench::new();
    bench.article("AAAA2222", "Heat stress", 2020);
    bench.pdf("FILE2222", "AAAA2222", None);
    bench.article("BBBB3333", "Unrelated", 2020);
    bench.run(with_text()).await;
    assert!(!bench.document("AAAA2222").unwrap().content.contains("\n\n"));

    bench.sim.set_fulltext(LIB, "FILE2222", "Text indexed later.", Some(1), Some(1));
    let report = bench.run(with_text()).await;
    assert!(report.complete);
    assert_eq!(report.submitted, 1, "the parent, not the unrelated item");
    assert!(bench.document("AAAA2222").unwrap().content.ends_with("\n\nText indexed later."));
}

#[tokio::test]
async fn a_searched_full_text_match_finds_its_item_once() {
    let bench = Bench::new();
    bench.article("AAAA2222", "Heat stress", 2020);
    let body =
        format!("{} Vapour pressure deficit amplifies canopy warming. {}", "filler ".repeat(500), "tail ".repeat(300));
    bench.pdf("FILE2222", "AAAA2222", Some(&body));
    bench.article("BBBB3333", "Unrelated", 2020);
    bench.run(with_text()).await;
    bench.ai.process();
    let options = zotero_mcp_core::index::QueryOptions { top_k: 5, ..Default::default() };
    let found = bench.index().query("vapour pressure deficit", &options).await.unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].item_key, "AAAA2222");
    assert!(found[0].passage.as_deref().unwrap().contains("Vapour pressure deficit amplifies"));
    assert_eq!(found[0].page, None, "Zotero's index has no page breaks");
}

/// The demo library end to end: every regular item indexed, with text where Zotero has some.
#[tokio::test]
async fn the_demo_library_is_indexed_within_a_free_plan_budget() {
    let sim = Rc::new(Simulator::demo());
    let clock = ManualClock::at(1_800_000_000_000);
    let kv = MemoryKv::new(clock.clone());
    let ai = MemoryAiSearch::new();
    let index = SemanticIndex::new(ai.clone(), IndexSettings::default());
    let settings = ZoteroSettings {
        api_key: zotero_sim::DEMO_API_KEY.into(),
        library_kind: LibraryKind::User,
        library_id: Some(zotero_sim::DEMO_USER_ID.to_string()),
        base_url: None,
    };
    let options = SyncOptions::default();
    assert_eq!(options.subrequest_budget, zotero_mcp_core::index::sync::DEFAULT_SUBREQUEST_BUDGET);
    let mut runs = 0;
    loop {
        let zotero = ZoteroClient::new(settings.clone(), Rc::new(InProcess(sim.clone())), clock.clone()).unwrap();
        let before = sim.requests().len();
        let report = sync(&zotero, Some(&index), kv.as_ref(), &options).await.unwrap();
        assert_eq!(sim.requests().len() - before, report.subrequests);
        assert!(report.subrequests <= options.subrequest_budget);
        runs += 1;
        if report.complete {
            break;
        }
        assert!(runs < 30, "{report:?}");
    }
    let documents = ai.documents(INSTANCE);
    let regular = sim
        .items(LIB_DEMO)
        .iter()
        .filter(|i| !matches!(i["data"]["itemType"].as_str(), Some("attachment" | "note" | "annotation")))
        .filter(|i| i["data"]["deleted"] != json!(true) && i["data"]["deleted"] != json!(1))
        .count();
    assert_eq!(documents.len(), regular);
    // T6W7H8UE's PDF (93WJRKG5) has text in the demo's full-text index.
    let with_text = documents.iter().find(|d| d.name == "T6W7H8UE.md").unwrap();
    let stored = sim.fulltext(LIB_DEMO, "93WJRKG5").unwrap();
    let start: String = stored["content"].as_str().unwrap().split_whitespace().take(5).collect::<Vec<_>>().join(" ");
    assert!(with_text.content.contains(&start), "{}", with_text.content);
}

const LIB_DEMO: LibraryRef = LibraryRef::User(zotero_sim::DEMO_USER_ID);
