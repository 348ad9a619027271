//! The semantic index's sync at scale, natively (`scripts/bench-index.sh`, part of `make bench`): the demo library
//! grown to 5,000 regular items (copies of the demo's items with varied titles, creators, years and abstracts;
//! 30% with a PDF attachment whose text is in Zotero's full-text index), synced into the in-memory AI Search from
//! an empty index until the cycle is complete, one run at a time as the cron does it, the stand-in indexing what
//! was uploaded between runs. Everything is in-process: the simulator answers through `InProcess`, so a run's
//! wall time is CPU time, and the time spent inside the simulator and inside the AI Search stand-in is measured
//! (only while their code runs) and shown apart from the sync's own.
//!
//! Per configuration (budget 40 = the Free plan default, 1,000 = a paid plan; full text on and off; limit 100):
//! runs to complete, items submitted per run, Zotero requests per item, how each run's budget was spent, and
//! time per item. Prints figures only; compare within one run (2 noisy cores).
//!
//! `--dump-demo-documents <file>` instead syncs the plain demo library with the deployed defaults and writes the
//! documents it uploaded (name, content, metadata) and the instance's create config as JSON: the Worker bench
//! (tests/bench/semantic.mjs) loads them into the JavaScript stand-in to time its `search()` on the same
//! documents the Worker's cron uploads.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use serde_json::{json, Map, Value};
use zotero_mcp_core::index::{sync, IndexSettings, SemanticIndex, SyncOptions, SyncReport, DEFAULT_BATCH};
use zotero_mcp_core::platform::{AiSearch, AiSearchError, HttpClient, HttpError, HttpRequest, HttpResponse};
use zotero_mcp_core::testing::{ManualClock, MemoryAiSearch, MemoryKv};
use zotero_mcp_core::zotero::{LibraryKind, ZoteroClient, ZoteroSettings};
use zotero_sim::{LibraryRef, Simulator, DEMO_API_KEY, DEMO_USER_ID};

const LIB: LibraryRef = LibraryRef::User(DEMO_USER_ID);
const REGULAR_ITEMS: usize = 5_000;
/// Share of the generated items with a PDF attachment that has full text, in percent.
const PDF_PERCENT: u64 = 30;
const SEED: u64 = 0x5EED_1DE7;
const MAX_RUNS: usize = 2_000;

// ---- a deterministic generator (no dependency) ----

struct Rng(u64);

impl Rng {
    /// splitmix64
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn pick<'a, T>(&mut self, from: &'a [T]) -> &'a T {
        &from[self.below(from.len())]
    }
    fn percent(&mut self, p: u64) -> bool {
        self.next() % 100 < p
    }
    /// A Zotero key (the simulator's own keys are seeded by the clock; these keep the queue's order, and so
    /// every run's figures, the same from one invocation to the next).
    fn key(&mut self, sim: &Simulator) -> String {
        const ALPHABET: &[u8] = b"23456789ABCDEFGHIJKLMNPQRSTUVWXYZ";
        loop {
            let key: String = (0..8).map(|_| char::from(*self.pick(ALPHABET))).collect();
            if sim.item(LIB, &key).is_none() {
                return key;
            }
        }
    }
}

// ---- the library ----

/// What the generated items are made of: the demo's regular items as templates, and its words.
struct Shapes {
    templates: Vec<Map<String, Value>>,
    title_words: Vec<String>,
    first_names: Vec<String>,
    last_names: Vec<String>,
    sentences: Vec<String>,
    paragraphs: Vec<String>,
}

fn is_regular(data: &Map<String, Value>) -> bool {
    !matches!(data.get("itemType").and_then(Value::as_str), Some("attachment" | "note" | "annotation"))
}

fn is_live_regular(item: &Value) -> bool {
    let data = &item["data"];
    data.as_object().is_some_and(is_regular) && data["deleted"] != json!(true) && data["deleted"] != json!(1)
}

fn shapes() -> Shapes {
    let demo: Value = serde_json::from_str(zotero_sim::demo::DEMO_JSON).expect("the demo library parses");
    let mut shapes = Shapes {
        templates: Vec::new(),
        title_words: Vec::new(),
        first_names: Vec::new(),
        last_names: Vec::new(),
        sentences: Vec::new(),
        paragraphs: Vec::new(),
    };
    for item in demo["items"].as_array().expect("items") {
        let Some(data) = item.as_object().filter(|d| is_regular(d)) else { continue };
        let mut template = data.clone();
        for field in ["key", "version", "deleted", "relations", "dateAdded", "dateModified", "citationKey"] {
            template.remove(field);
        }
        if let Some(title) = data.get("title").and_then(Value::as_str) {
            shapes.title_words.extend(title.split_whitespace().filter(|w| w.len() > 3).map(str::to_owned));
        }
        for creator in data.get("creators").and_then(Value::as_array).into_iter().flatten() {
            shapes.first_names.extend(creator["firstName"].as_str().filter(|s| !s.is_empty()).map(str::to_owned));
            shapes.last_names.extend(creator["lastName"].as_str().filter(|s| !s.is_empty()).map(str::to_owned));
        }
        if let Some(text) = data.get("abstractNote").and_then(Value::as_str) {
            shapes
                .sentences
                .extend(text.split(". ").filter(|s| s.len() > 20).map(|s| s.trim_end_matches('.').to_owned()));
        }
        shapes.templates.push(template);
    }
    for text in demo["fulltext"].as_object().expect("fulltext").values() {
        let content = text["content"].as_str().unwrap_or_default();
        shapes.paragraphs.extend(content.split("\n\n").filter(|p| p.len() > 80).map(str::to_owned));
    }
    shapes
}

fn generated_item(shapes: &Shapes, rng: &mut Rng, n: usize) -> Value {
    let mut data = rng.pick(&shapes.templates).clone();
    let words = 5 + rng.below(8);
    let mut title: Vec<&str> = (0..words).map(|_| rng.pick(&shapes.title_words).as_str()).collect();
    title.dedup();
    data.insert("title".into(), json!(format!("{} ({n})", title.join(" "))));
    let creators: Vec<Value> = (0..1 + rng.below(6))
        .map(|_| {
            json!({ "creatorType": "author", "firstName": rng.pick(&shapes.first_names),
                    "lastName": rng.pick(&shapes.last_names) })
        })
        .collect();
    data.insert("creators".into(), Value::Array(creators));
    data.insert("date".into(), json!(format!("{}-{:02}", 1990 + rng.below(36), 1 + rng.below(12))));
    let sentences = 3 + rng.below(6);
    let abstract_note: Vec<&str> = (0..sentences).map(|_| rng.pick(&shapes.sentences).as_str()).collect();
    data.insert("abstractNote".into(), json!(format!("{}.", abstract_note.join(". "))));
    if data.contains_key("DOI") {
        data.insert("DOI".into(), json!(format!("10.5555/bench.{n}")));
    }
    Value::Object(data)
}

/// Paper text from the demo's full-text paragraphs, 3–12 kB.
fn paper_text(shapes: &Shapes, rng: &mut Rng) -> String {
    let target = 3_000 + rng.below(9_000);
    let mut text = String::new();
    while text.len() < target {
        text.push_str(rng.pick(&shapes.paragraphs).as_str());
        text.push_str("\n\n");
    }
    text
}

/// The demo library grown to `REGULAR_ITEMS` live regular items.
fn scaled_library() -> (Rc<Simulator>, usize, usize) {
    let sim = Rc::new(Simulator::demo());
    let shapes = shapes();
    let mut rng = Rng(SEED);
    let existing = sim.items(LIB).iter().filter(|i| is_live_regular(i)).count();
    let mut pdfs = 0;
    for n in existing..REGULAR_ITEMS {
        let mut item = generated_item(&shapes, &mut rng, n);
        item["key"] = json!(rng.key(&sim));
        let key = sim.insert_item(LIB, item);
        if rng.percent(PDF_PERCENT) {
            let pdf = sim.insert_item(
                LIB,
                json!({ "key": rng.key(&sim), "itemType": "attachment", "parentItem": key, "linkMode": "imported_file",
                        "contentType": "application/pdf", "filename": "paper.pdf", "title": "Full Text PDF" }),
            );
            let pages = 4 + rng.below(20) as u32;
            sim.set_fulltext(LIB, &pdf, &paper_text(&shapes, &mut rng), Some(pages), Some(pages));
            pdfs += 1;
        }
    }
    let items = sim.items(LIB);
    let regular = items.iter().filter(|i| is_live_regular(i)).count();
    println!(
        "Library: {regular} live regular items ({} generated from the demo's {} shapes, {pdfs} of them with a PDF \
         and full text), {} keys in all (attachments, notes, annotations, trashed included)",
        REGULAR_ITEMS - existing,
        shapes.templates.len(),
        items.len()
    );
    (sim, regular, items.len())
}

// ---- the seams, timed ----

/// Zotero requests by what they are for, as the sync's budget counts them.
#[derive(Debug, Default, Clone, Copy)]
struct Requests {
    lookup: usize,
    versions: usize,
    deleted: usize,
    text_map: usize,
    item_reads: usize,
    children: usize,
    texts: usize,
    other: usize,
}

impl Requests {
    fn total(&self) -> usize {
        self.lookup
            + self.versions
            + self.deleted
            + self.text_map
            + self.item_reads
            + self.children
            + self.texts
            + self.other
    }
    /// Requests whose answers went into uploaded documents: the item reads and each item's children and text.
    fn toward_uploads(&self) -> usize {
        self.item_reads + self.children + self.texts
    }
    fn add(&mut self, other: &Requests) {
        self.lookup += other.lookup;
        self.versions += other.versions;
        self.deleted += other.deleted;
        self.text_map += other.text_map;
        self.item_reads += other.item_reads;
        self.children += other.children;
        self.texts += other.texts;
        self.other += other.other;
    }
}

/// The in-process simulator, counting requests by kind and timing its own work.
struct CountingSim {
    sim: Rc<Simulator>,
    requests: RefCell<Requests>,
    spent: Cell<Duration>,
}

#[async_trait::async_trait(?Send)]
impl HttpClient for CountingSim {
    async fn send(&self, request: HttpRequest) -> Result<HttpResponse, HttpError> {
        {
            let path = request.uri().path();
            let query = request.uri().query().unwrap_or_default();
            let mut counts = self.requests.borrow_mut();
            if path.contains("/keys/") {
                counts.lookup += 1;
            } else if path.ends_with("/deleted") {
                counts.deleted += 1;
            } else if path.ends_with("/children") {
                counts.children += 1;
            } else if path.contains("/items/") && path.ends_with("/fulltext") {
                counts.texts += 1;
            } else if path.ends_with("/fulltext") {
                counts.text_map += 1;
            } else if path.ends_with("/items") && query.contains("format=versions") {
                counts.versions += 1;
            } else if path.ends_with("/items") && query.contains("itemKey=") {
                counts.item_reads += 1;
            } else {
                counts.other += 1;
            }
        }
        let started = Instant::now();
        let response = self.sim.handle(request);
        self.spent.set(self.spent.get() + started.elapsed());
        Ok(response)
    }
}

/// A future whose polls are timed: only the time its own code runs, not the time it waits.
struct Timed<'a, F> {
    future: F,
    spent: &'a Cell<Duration>,
}

impl<F: Future + Unpin> Future for Timed<'_, F> {
    type Output = F::Output;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let started = Instant::now();
        let poll = Pin::new(&mut self.future).poll(cx);
        self.spent.set(self.spent.get() + started.elapsed());
        poll
    }
}

/// The in-memory AI Search with a stopwatch around its code.
struct TimedAi {
    inner: Rc<MemoryAiSearch>,
    spent: Cell<Duration>,
}

impl TimedAi {
    fn timed<'a, F: Future + Unpin>(&'a self, future: F) -> Timed<'a, F> {
        Timed { future, spent: &self.spent }
    }
}

#[async_trait::async_trait(?Send)]
impl AiSearch for TimedAi {
    async fn info(&self, instance: &str) -> Result<Option<Value>, AiSearchError> {
        self.timed(self.inner.info(instance)).await
    }
    async fn create(&self, config: &Value) -> Result<(), AiSearchError> {
        self.timed(self.inner.create(config)).await
    }
    async fn search(&self, instance: &str, request: &Value) -> Result<Value, AiSearchError> {
        self.timed(self.inner.search(instance, request)).await
    }
    async fn stats(&self, instance: &str) -> Result<Value, AiSearchError> {
        self.timed(self.inner.stats(instance)).await
    }
    async fn upload(&self, instance: &str, name: &str, content: &str, options: &Value) -> Result<Value, AiSearchError> {
        self.timed(self.inner.upload(instance, name, content, options)).await
    }
    async fn list(&self, instance: &str, params: &Value) -> Result<Value, AiSearchError> {
        self.timed(self.inner.list(instance, params)).await
    }
    async fn delete(&self, instance: &str, id: &str) -> Result<(), AiSearchError> {
        self.timed(self.inner.delete(instance, id)).await
    }
}

// ---- one configuration, synced to completion ----

struct Run {
    report: SyncReport,
    requests: Requests,
    wall: Duration,
    in_sim: Duration,
    in_ai: Duration,
}

struct Outcome {
    label: String,
    options: SyncOptions,
    runs: Vec<Run>,
    documents: usize,
}

fn settings() -> ZoteroSettings {
    ZoteroSettings {
        api_key: DEMO_API_KEY.into(),
        library_kind: LibraryKind::User,
        library_id: Some(DEMO_USER_ID.to_string()),
        base_url: None,
    }
}

/// Syncs `sim` into a fresh index (a new instance: the first run is a full cycle) until a run reports the cycle
/// complete; the stand-in indexes the uploads between runs, as AI Search would between cron ticks.
fn sync_to_completion(
    runtime: &tokio::runtime::Runtime,
    sim: &Rc<Simulator>,
    label: &str,
    options: SyncOptions,
) -> Outcome {
    let clock = ManualClock::at(1_800_000_000_000);
    let kv = MemoryKv::new(clock.clone());
    let memory = MemoryAiSearch::new();
    let ai = Rc::new(TimedAi { inner: memory.clone(), spent: Cell::new(Duration::ZERO) });
    let http =
        Rc::new(CountingSim { sim: sim.clone(), requests: RefCell::default(), spent: Cell::new(Duration::ZERO) });
    let index = SemanticIndex::new(ai.clone(), IndexSettings::default());
    let mut runs = Vec::new();
    loop {
        // A fresh client per run, as each Worker invocation has.
        let zotero = ZoteroClient::new(settings(), http.clone(), clock.clone()).expect("client");
        *http.requests.borrow_mut() = Requests::default();
        http.spent.set(Duration::ZERO);
        ai.spent.set(Duration::ZERO);
        let started = Instant::now();
        let report = runtime.block_on(sync(&zotero, Some(&index), kv.as_ref(), &options)).expect("sync");
        let wall = started.elapsed();
        let requests = *http.requests.borrow();
        assert_eq!(requests.total(), report.subrequests, "every request is counted by the sync");
        let complete = report.complete;
        runs.push(Run { report, requests, wall, in_sim: http.spent.get(), in_ai: ai.spent.get() });
        memory.process();
        if complete {
            break;
        }
        assert!(runs.len() < MAX_RUNS, "{label}: no end in sight after {MAX_RUNS} runs");
    }
    let documents = memory.documents(&IndexSettings::default().instance).len();
    Outcome { label: label.to_owned(), options, runs, documents }
}

// ---- printing ----

fn ms(d: Duration) -> String {
    format!("{:.1}", d.as_secs_f64() * 1e3)
}

fn us_per(d: Duration, n: usize) -> String {
    format!("{:.1}", d.as_secs_f64() * 1e6 / n.max(1) as f64)
}

fn pct(part: usize, whole: usize) -> String {
    format!("{:.1}%", 100.0 * part as f64 / whole.max(1) as f64)
}

/// One configuration's figures, over all its runs.
struct Figures {
    items: usize,
    submitted_min: usize,
    submitted_max: usize,
    /// Summed over all runs.
    requests: Requests,
    /// Budget over all runs.
    budget: usize,
    /// Per run but the last (which only finishes the queue), the share of its budget spent toward uploads.
    run_shares: Vec<f64>,
    stopped_by_budget: usize,
    wall: Duration,
    in_sim: Duration,
    in_ai: Duration,
}

impl Figures {
    fn of(outcome: &Outcome) -> Self {
        let runs = &outcome.runs;
        let mut requests = Requests::default();
        for run in runs {
            requests.add(&run.requests);
        }
        let per_run = outcome.options.subrequest_budget;
        let mut run_shares: Vec<f64> =
            runs[..runs.len() - 1].iter().map(|r| r.requests.toward_uploads() as f64 / per_run as f64).collect();
        run_shares.sort_by(f64::total_cmp);
        Self {
            items: runs.iter().map(|r| r.report.submitted).sum(),
            submitted_min: runs.iter().map(|r| r.report.submitted).min().unwrap_or(0),
            submitted_max: runs.iter().map(|r| r.report.submitted).max().unwrap_or(0),
            requests,
            budget: per_run * runs.len(),
            run_shares,
            stopped_by_budget: runs.iter().filter(|r| r.report.message.contains("stopped at its budget")).count(),
            wall: runs.iter().map(|r| r.wall).sum(),
            in_sim: runs.iter().map(|r| r.in_sim).sum(),
            in_ai: runs.iter().map(|r| r.in_ai).sum(),
        }
    }

    fn median_share(&self) -> String {
        self.run_shares.get(self.run_shares.len() / 2).map_or("—".into(), |s| format!("{:.1}%", s * 100.0))
    }

    fn min_share(&self) -> String {
        self.run_shares.first().map_or("—".into(), |s| format!("{:.1}%", s * 100.0))
    }

    fn own(&self) -> Duration {
        self.wall.saturating_sub(self.in_sim).saturating_sub(self.in_ai)
    }
}

/// `keys`: every key of the library, which a full cycle queues and reads once.
fn summary(outcomes: &[Outcome], keys: usize) {
    let figures: Vec<Figures> = outcomes.iter().map(Figures::of).collect();
    println!();
    println!("Sync to completion from an empty index (limit {DEFAULT_BATCH}; one fresh client per run):");
    println!();
    println!(
        "| configuration | runs | submitted per run mean / min / max | Zotero requests per item | budget spent \
         toward uploads: all runs / per run median / min | of requests made | runs stopped by the budget |"
    );
    println!("|---|---|---|---|---|---|---|");
    for (outcome, f) in outcomes.iter().zip(&figures) {
        let runs = outcome.runs.len();
        println!(
            "| {} | {runs} | {:.1} / {} / {} | {:.3} | {} / {} / {} | {} | {} of {runs} |",
            outcome.label,
            f.items as f64 / runs as f64,
            f.submitted_min,
            f.submitted_max,
            f.requests.total() as f64 / f.items.max(1) as f64,
            pct(f.requests.toward_uploads(), f.budget),
            f.median_share(),
            f.min_share(),
            pct(f.requests.toward_uploads(), f.requests.total()),
            f.stopped_by_budget,
        );
    }
    println!();
    println!(
        "Per-run shares leave out the last run (which only empties the queue). Every configuration ended with all \
         {} documents indexed.",
        outcomes.first().map_or(0, |o| o.documents)
    );

    println!();
    println!(
        "Where the budget went, summed over all runs: item reads, children and texts feed uploads; the rest is \
         overhead, and `unspent` is budget a run left unused (a run stops when the next key's worst case, its \
         item read plus children plus text, no longer fits):"
    );
    println!();
    println!(
        "| configuration | budget | item reads | children | texts | children without text | version scan | \
         deleted | full-text map | key lookup | unspent | keys per item read |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    for (outcome, f) in outcomes.iter().zip(&figures) {
        let r = &f.requests;
        let cell = |n: usize| format!("{n} ({})", pct(n, f.budget));
        println!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {:.1} |",
            outcome.label,
            f.budget,
            cell(r.item_reads),
            cell(r.children),
            cell(r.texts),
            r.children.saturating_sub(r.texts),
            cell(r.versions),
            cell(r.deleted),
            cell(r.text_map),
            cell(r.lookup),
            cell(f.budget.saturating_sub(r.total())),
            keys as f64 / r.item_reads.max(1) as f64,
        );
    }

    println!();
    println!(
        "Time per submitted item: wall time of sync() in-process (one thread, so CPU time), with the simulator's \
         and the AI Search stand-in's own code timed apart:"
    );
    println!();
    println!(
        "| configuration | total ms | µs/item, all | in the simulator | in the AI Search stand-in | the sync's own | \
         slowest run ms |"
    );
    println!("|---|---|---|---|---|---|---|");
    for (outcome, f) in outcomes.iter().zip(&figures) {
        println!(
            "| {} | {} | {} | {} | {} | {} | {} |",
            outcome.label,
            ms(f.wall),
            us_per(f.wall, f.items),
            us_per(f.in_sim, f.items),
            us_per(f.in_ai, f.items),
            us_per(f.own(), f.items),
            ms(outcome.runs.iter().map(|r| r.wall).max().unwrap_or_default()),
        );
    }

    // For scripts/bench-index.sh's closing table.
    for (outcome, f) in outcomes.iter().zip(&figures) {
        let runs = outcome.runs.len();
        println!(
            "@summary Sync, {}: runs / items per run (mean) / Zotero requests per item | {runs} / {:.1} / {:.3} | —",
            outcome.label,
            f.items as f64 / runs as f64,
            f.requests.total() as f64 / f.items.max(1) as f64,
        );
        if outcome.options.subrequest_budget <= 40 && outcome.options.full_text {
            println!(
                "@summary Sync, {}: budget spent toward uploads, all runs / per run median / min | {} / {} / {} | ≥ \
                 95%",
                outcome.label,
                pct(f.requests.toward_uploads(), f.budget),
                f.median_share(),
                f.min_share(),
            );
        }
        println!(
            "@summary Sync, {}: µs per item, sync's own / all in-process | {} / {} | —",
            outcome.label,
            us_per(f.own(), f.items),
            us_per(f.wall, f.items),
        );
    }
}

fn per_run_lines(outcome: &Outcome) {
    println!();
    println!("Runs of `{}` (first 5 and the last):", outcome.label);
    println!("| run | submitted | remaining | requests | item reads | children | texts | map | scan | ms |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    let last = outcome.runs.len().saturating_sub(1);
    for (n, run) in outcome.runs.iter().enumerate().filter(|(n, _)| *n < 5 || *n == last) {
        let r = &run.requests;
        println!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            n + 1,
            run.report.submitted,
            run.report.remaining,
            r.total(),
            r.item_reads,
            r.children,
            r.texts,
            r.text_map,
            r.versions,
            ms(run.wall),
        );
    }
}

// ---- the documents the Worker bench loads ----

fn dump_demo_documents(runtime: &tokio::runtime::Runtime, path: &str) {
    let sim = Rc::new(Simulator::demo());
    let clock = ManualClock::at(1_800_000_000_000);
    let kv = MemoryKv::new(clock.clone());
    let ai = MemoryAiSearch::new();
    let index_settings = IndexSettings::default();
    let index = SemanticIndex::new(ai.clone(), index_settings.clone());
    let options = SyncOptions::default();
    for _ in 0..MAX_RUNS {
        let zotero =
            ZoteroClient::new(settings(), Rc::new(zotero_sim::InProcess(sim.clone())), clock.clone()).expect("client");
        if runtime.block_on(sync(&zotero, Some(&index), kv.as_ref(), &options)).expect("sync").complete {
            break;
        }
    }
    let documents: Vec<Value> = ai
        .documents(&index_settings.instance)
        .into_iter()
        .map(|d| json!({ "name": d.name, "content": d.content, "metadata": d.metadata }))
        .collect();
    let config = ai.creates().into_iter().next().unwrap_or_else(|| json!({ "id": index_settings.instance }));
    let out = json!({ "instance": index_settings.instance, "config": config, "documents": documents });
    std::fs::write(path, serde_json::to_string(&out).expect("json")).expect("write the documents");
    eprintln!("wrote {} documents of the demo library to {path}", out["documents"].as_array().map_or(0, Vec::len));
}

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread().build().expect("runtime");
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [flag, path] = args.as_slice() {
        if flag == "--dump-demo-documents" {
            dump_demo_documents(&runtime, path);
            return;
        }
    }
    let started = Instant::now();
    let (sim, regular, keys) = scaled_library();
    println!("(built in {} ms)", ms(started.elapsed()));
    let configurations = [
        ("budget 40, full text (deployed defaults)", 40, true),
        ("budget 40, no full text", 40, false),
        ("budget 1000, full text (paid plan)", 1000, true),
        ("budget 1000, no full text", 1000, false),
    ];
    let mut outcomes = Vec::new();
    for (label, budget, full_text) in configurations {
        let options = SyncOptions { full: false, limit: DEFAULT_BATCH, subrequest_budget: budget, full_text };
        let outcome = sync_to_completion(&runtime, &sim, label, options);
        assert_eq!(outcome.documents, regular, "{label}: every live regular item has its document");
        outcomes.push(outcome);
    }
    summary(&outcomes, keys);
    per_run_lines(&outcomes[0]);
}
