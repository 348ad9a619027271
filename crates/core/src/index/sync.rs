//! The incremental sync from Zotero into the index, within a budget of Zotero requests per run.
//!
//! A *cycle* brings the index up to one library version (`target`) from the last one it reached (`since`): it
//! lists the items changed since then, removes the documents of deleted items, and queues the changed keys
//! (`pending`). Each *run* (a cron tick or a `zotero_reindex` call) takes keys from the queue, reads their items
//! and uploads their documents; the cursor moves to `target` only when the queue is empty, so a failed or
//! interrupted run never skips a change. The cursor is the TypeScript project's, key and JSON alike
//! (`aisearch:sync-state:<instance>` in `CACHE_KV`, `{"since":…,"target":…,"pending":[…]}`), so a deployment
//! switched either way resumes where the other stopped.
//!
//! Unlike the TypeScript project's sync: deletions are handled on full runs too (a full run removes every
//! document whose item no longer exists, found by listing the index), `limit` is honoured on every path, and a run stays within [`SyncOptions::subrequest_budget`].
//!
//! # The subrequest budget
//!
//! A Worker invocation may make only so many subrequests (50 on the Free plan), and a run that hits the limit
//! dies half-way. So every Zotero request the run makes is counted before it is sent: the library lookup from
//! the key when the client has not made it yet (1), a new cycle's version listing (1), deletions since the
//! cursor (1, incremental cycles) and the full-text versions (1, with full text on), then per chunk of at most
//! [`KEY_CHUNK`] keys the item read (1) and, with full text on, per item with children its children (1) and its
//! attachment's text (1). A chunk is read whole when one key's worst case (1 + 2) still fits; its items are then
//! given their text in queue order while the budget lasts, and from the first that does not fit the rest go
//! back to the head of the queue (read again next run), reported in `remaining`. An item with several stored
//! PDFs that may have text (in a full cycle: that have it) costs one text read per PDF measured, at most
//! [`MAX_MEASURED_CANDIDATES`]; the reads beyond the first are paid only from what the chunk's worst cases leave
//! over (`Budget::spare`), so an item without such room keeps its first PDF's text. Retries of a 429/503 inside
//! the Zotero client are not visible here, so leave the budget some room below the platform's limit. AI Search
//! binding calls (ensure, uploads, listings, deletions, stats) and `CACHE_KV` reads and writes are not counted:
//! they are bindings with limits of their own, not fetches.

use std::cell::Cell;
use std::collections::{BTreeMap, HashSet, VecDeque};

use crate::join::join_all;
use futures_util::FutureExt;
use serde::Serialize;
use serde_json::{json, Value};

use super::documents::{document_for, is_indexable, ItemText};
use super::error::IndexError;
use super::service::SemanticIndex;
use super::{DEFAULT_BATCH, FULL_TEXT_BUDGET_CHARS, KEY_CHUNK, STATE_PREFIX};
use crate::attachment::{download, require_stored_file, MAX_MEASURED_CANDIDATES};
use crate::files::FileStore;
use crate::pdf::{PdfDocument, PdfLimits, TextBudget};
use crate::platform::{KvStore, KvWrite};
use crate::zotero::{ObjectKey, Versions, ZoteroClient, ZoteroObject};

/// Children read to find an item's attachment (one request).
const MAX_CHILDREN: usize = 100;

/// Zotero requests a run may make unless told otherwise: the Workers Free plan's 50 subrequests, less room
/// for retries and the invocation's other fetches.
pub const DEFAULT_SUBREQUEST_BUDGET: usize = 40;

/// Zotero requests one key may cost beyond its share of the item read, with full text on: the item's children
/// and its attachment's text.
const FULL_TEXT_REQUESTS_PER_KEY: usize = 2;

/// How one run goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncOptions {
    /// Start a new cycle from library version 0 (every item), whatever the cursor says.
    pub full: bool,
    /// Keys taken from the queue in this run (at least 1).
    pub limit: usize,
    /// Zotero requests this run may make (see the module docs).
    pub subrequest_budget: usize,
    /// Append the paper's text from Zotero's full-text index to each document.
    pub full_text: bool,
}

impl Default for SyncOptions {
    fn default() -> Self {
        Self { full: false, limit: DEFAULT_BATCH, subrequest_budget: DEFAULT_SUBREQUEST_BUDGET, full_text: true }
    }
}

/// What a run did.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SyncReport {
    /// Documents uploaded.
    pub submitted: usize,
    /// Deleted items whose documents were removed: every key Zotero reported deleted since the cursor
    /// (incremental cycles, as upstream), or the orphaned documents found (full cycles).
    pub removed: usize,
    /// Keys still queued for the next run.
    pub remaining: usize,
    /// Documents AI Search is still indexing; `None` when its stats could not be read (never 0 in its place).
    pub backlog: Option<u64>,
    /// Documents AI Search failed to index; `None` when unknown.
    pub failed: Option<u64>,
    /// The cycle's starting library version.
    pub from_version: u64,
    /// The library version the cycle brings the index to.
    pub to_version: u64,
    /// The queue is empty: every change up to `to_version` has been sent.
    pub complete: bool,
    /// Something about the instance the operator should fix (its chunk size).
    pub warning: Option<String>,
    pub message: String,
    /// Zotero requests this run made, as counted against the budget.
    pub subrequests: usize,
}

impl SyncReport {
    /// The report when AI Search is not bound: complete, every count 0 (not unknown), as upstream.
    pub fn unbound() -> Self {
        Self {
            submitted: 0,
            removed: 0,
            remaining: 0,
            backlog: Some(0),
            failed: Some(0),
            from_version: 0,
            to_version: 0,
            complete: true,
            warning: None,
            message: "AI Search is not bound, so semantic search is disabled.".into(),
            subrequests: 0,
        }
    }
}

/// The cursor: `{since, target, pending}`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(super) struct SyncState {
    pub since: u64,
    pub target: u64,
    pub pending: Vec<String>,
}

impl SyncState {
    /// The stored JSON, leniently: missing or odd fields are `0/0/[]`, as the TypeScript project reads them; a
    /// value that is not a JSON object is no state at all.
    pub(super) fn parse(text: &str) -> Option<Self> {
        let value: Value = serde_json::from_slice(text.as_bytes()).ok()?;
        let object = value.as_object()?;
        let number = |name: &str| object.get(name).and_then(|v| v.as_u64().or_else(|| v.as_f64().map(|f| f as u64)));
        let pending = object
            .get("pending")
            .and_then(Value::as_array)
            .map(|keys| keys.iter().filter_map(Value::as_str).map(str::to_owned).collect())
            .unwrap_or_default();
        Some(Self { since: number("since").unwrap_or(0), target: number("target").unwrap_or(0), pending })
    }
}

/// The cursor's key in `CACHE_KV` for an instance.
pub fn state_key(instance: &str) -> String {
    format!("{STATE_PREFIX}:{instance}")
}

/// Zotero requests counted against the run's budget. A `Cell`: the reads of one chunk run concurrently.
struct Budget {
    limit: usize,
    used: Cell<usize>,
    /// Of what is left, the requests no key's worst case in the chunk being read has claimed: what an item's
    /// further PDFs are measured with (the chunk's reads run at once, so `left` alone would spend other keys'
    /// shares).
    spare: Cell<usize>,
}

impl Budget {
    fn left(&self) -> usize {
        self.limit.saturating_sub(self.used.get())
    }
    fn spend(&self, requests: usize) {
        self.used.set(self.used.get() + requests);
    }
    /// Claims one spare request, if there is one (spent when it is sent).
    fn claim_spare(&self) -> bool {
        let spare = self.spare.get();
        self.spare.set(spare.saturating_sub(1));
        spare > 0
    }
}

/// Brings the index closer to the library: one run of the cycle described in the module docs. With no index
/// (AI Search unbound) it does nothing and says so.
///
/// If a call fails the error is returned and the cursor is not written, so the next run repeats the work (every
/// step is idempotent: uploads are upserts, deletions of missing documents are no-ops).
pub async fn sync(
    zotero: &ZoteroClient,
    index: Option<&SemanticIndex>,
    kv: &dyn KvStore,
    options: &SyncOptions,
) -> Result<SyncReport, IndexError> {
    sync_with_files(zotero, index, kv, options, None).await
}

/// [`sync`], reading a paper's PDF from the library's file store (`files`) when Zotero's full-text index has no
/// text for it: page by page through the PDF engine, so its passages know their pages. The store's requests per
/// file more per such paper, counted against the budget; one file is held at a time.
pub async fn sync_with_files(
    zotero: &ZoteroClient,
    index: Option<&SemanticIndex>,
    kv: &dyn KvStore,
    options: &SyncOptions,
    files: Option<&dyn FileStore>,
) -> Result<SyncReport, IndexError> {
    let Some(index) = index else { return Ok(SyncReport::unbound()) };
    // The steps below are awaited boxed (`boxed_local`): inlined, the callees awaited at several places were
    // copied into this one state machine each time (6 KiB of the Worker's gzip size).
    let budget = Budget { limit: options.subrequest_budget, used: Cell::new(0), spare: Cell::new(0) };
    let files = files.filter(|_| options.full_text);
    let ensured = index.ensure().await?;
    let full = options.full || ensured.created;
    let key = state_key(index.instance());
    let saved = if full { None } else { kv.get(&key).await?.as_deref().and_then(SyncState::parse) };
    let per_key = match (options.full_text, files) {
        (false, _) => 0,
        (true, None) => FULL_TEXT_REQUESTS_PER_KEY,
        (true, Some(store)) => FULL_TEXT_REQUESTS_PER_KEY + store.requests_per_fetch(),
    };
    let lookup = usize::from(zotero.needs_key_lookup());

    let mut run =
        Run { budget: &budget, files, per_key, report: Report { warning: ensured.mismatch, ..Report::default() } };
    let (state, texts) = match saved {
        Some(state) if !state.pending.is_empty() => {
            // Resume the cycle: no version scan and no deletions (they were handled when it started).
            if budget.left() < lookup + 1 + per_key {
                return run.too_small(index, &state, lookup + 1 + per_key).boxed_local().await;
            }
            budget.spend(lookup);
            // Which attachments have text: kept beside the cursor when the cycle started (the cursor's JSON is
            // the TypeScript project's and has no room for it); read from Zotero again only when it is missing.
            let texts = match read_texts(kv, &texts_key(index.instance()), &state).await {
                Some(texts) if options.full_text => Some(texts),
                _ if options.full_text && budget.left() >= 1 + 1 + per_key => {
                    budget.spend(1);
                    Some(TextIndex::new(zotero.fulltext_versions(state.since).await?, state.since))
                }
                _ => None,
            };
            (state, texts)
        }
        saved => {
            let since = if full { 0 } else { saved.map_or(0, |s| s.since) };
            let scan = lookup + 1 + usize::from(since > 0) + usize::from(options.full_text);
            if budget.left() < scan {
                let state = SyncState { since, target: since, pending: Vec::new() };
                return run.too_small(index, &state, scan).boxed_local().await;
            }
            budget.spend(scan);
            let (versions, texts) = run.start_cycle(zotero, index, since, options.full_text).boxed_local().await?;
            let mut pending: Vec<String> = versions.versions.keys().cloned().collect();
            if let Some(texts) = &texts {
                // Attachments that gained text since the cursor: their parents' documents change.
                let known: HashSet<&String> = versions.versions.keys().collect();
                pending.extend(texts.versions.keys().filter(|k| !known.contains(k)).cloned());
            }
            let state = SyncState { since, target: versions.library_version, pending };
            if let Some(texts) = &texts {
                write_texts(kv, &texts_key(index.instance()), &state, texts).await;
            }
            if state.pending.is_empty() {
                let done = SyncState { since: state.target, target: state.target, pending: Vec::new() };
                write_state(kv, &key, &done).boxed_local().await?;
                run.report.complete = true;
                return Ok(run
                    .finish(index, &state, 0, format!("Nothing changed since library version {since}."))
                    .boxed_local()
                    .await);
            }
            (state, texts)
        }
    };

    let mut queue: VecDeque<String> = state.pending.iter().cloned().collect();
    let mut submitted = 0;
    let mut taken = 0;
    let mut stopped_by_budget = false;
    let mut queued: HashSet<String> = queue.iter().cloned().collect();
    let mut handled: HashSet<String> = HashSet::new();
    let mut gone: Vec<String> = Vec::new();
    let limit = options.limit.max(1);
    let incremental = state.since > 0;
    while taken < limit && !queue.is_empty() {
        // A chunk is read whole (one request for up to 50 keys) as soon as one key's worst case fits; the items
        // whose text no longer fits are put back at the head of the queue, read again next run. Reserving every
        // key's worst case up front instead cut the chunks short and spent the budget on item reads.
        if budget.left() < 1 + per_key {
            stopped_by_budget = true;
            break;
        }
        let take = KEY_CHUNK.min(limit - taken).min(queue.len());
        let keys: Vec<String> = queue.drain(..take).collect();
        taken += take;
        for key in &keys {
            queued.remove(key);
            handled.insert(key.clone());
        }
        let chunk = run.read_chunk(zotero, &keys, options.full_text, texts.as_ref()).boxed_local().await?;
        gone.extend(chunk.gone);
        submitted += index.upsert(&chunk.documents).boxed_local().await?;
        let deferred = chunk.deferred.len();
        for key in chunk.deferred.into_iter().rev() {
            handled.remove(&key);
            queued.insert(key.clone());
            queue.push_front(key);
        }
        taken -= deferred;
        if incremental && options.full_text {
            // A changed attachment (new, replaced, or with new text) changes its parent's text: the parent joins
            // the queue unless it is there already or was read in this run after the change.
            for parent in chunk.parents {
                if !queued.contains(&parent) && !handled.contains(&parent) {
                    queued.insert(parent.clone());
                    queue.push_back(parent);
                }
            }
        }
        if deferred > 0 {
            stopped_by_budget = true;
            break;
        }
    }
    if !gone.is_empty() {
        // Counted in `removed` by neither upstream nor here: these are cleanups, not reported deletions.
        index.remove(&gone).boxed_local().await?;
    }

    let remaining: Vec<String> = queue.into_iter().collect();
    let complete = remaining.is_empty();
    let next = SyncState {
        since: if complete { state.target } else { state.since },
        target: state.target,
        pending: remaining.clone(),
    };
    write_state(kv, &key, &next).boxed_local().await?;
    run.report.complete = complete;
    run.report.remaining = remaining.len();
    let message = if complete {
        String::new()
    } else {
        let mut message = format!("Submitted {submitted} item(s); {} still queued for the next run.", remaining.len());
        if stopped_by_budget {
            message.push_str(&format!(" This run stopped at its budget of {} Zotero requests.", budget.limit));
        }
        message
    };
    Ok(run.finish(index, &state, submitted, message).boxed_local().await)
}

/// Where a cycle's full-text versions are kept between its runs (beside the cursor, not in it).
pub fn texts_key(instance: &str) -> String {
    format!("{STATE_PREFIX}:{instance}:fulltext")
}

/// The full-text versions saved for this cycle, when they are for exactly this cycle.
async fn read_texts(kv: &dyn KvStore, key: &str, state: &SyncState) -> Option<TextIndex> {
    let saved: Value = serde_json::from_slice(kv.get(key).await.ok().flatten()?.as_bytes()).ok()?;
    if saved["since"].as_u64() != Some(state.since) || saved["target"].as_u64() != Some(state.target) {
        return None;
    }
    let versions: BTreeMap<String, u64> = serde_json::from_value(saved["versions"].clone()).ok()?;
    Some(TextIndex { versions, complete: state.since == 0 })
}

/// Saves a cycle's full-text versions for its later runs. A failure only costs those runs a request each.
async fn write_texts(kv: &dyn KvStore, key: &str, state: &SyncState, texts: &TextIndex) {
    let value = json!({ "since": state.since, "target": state.target, "versions": texts.versions });
    let _ = kv.put(key, &value.to_string(), KvWrite::Forever).await;
}

async fn write_state(kv: &dyn KvStore, key: &str, state: &SyncState) -> Result<(), IndexError> {
    let text = json!({ "since": state.since, "target": state.target, "pending": state.pending }).to_string();
    kv.put(key, &text, KvWrite::Forever).await?;
    Ok(())
}

/// The report's parts known before the end of the run.
#[derive(Default)]
struct Report {
    removed: usize,
    remaining: usize,
    complete: bool,
    warning: Option<String>,
}

struct Run<'a> {
    budget: &'a Budget,
    /// Where papers' PDFs are, when they may be read for text the index lacks.
    files: Option<&'a dyn FileStore>,
    /// Requests one item may cost beyond its share of the item read.
    per_key: usize,
    report: Report,
}

/// Where an item's text is to come from.
enum TextSource {
    Index(ItemText),
    /// The stored PDF, to be read from the file store.
    File(ZoteroObject),
    None,
}

/// The largest PDF the sync reads from the file store: a run holds one file, and its text work is bounded too.
const MAX_SYNC_PDF_BYTES: usize = 24 * 1024 * 1024;

/// What reading one chunk of keys gave.
struct Chunk {
    documents: Vec<super::Document>,
    /// Keys whose documents must go: the item no longer exists, or is in the trash.
    gone: Vec<String>,
    /// Parents of the attachments among the keys.
    parents: Vec<String>,
    /// Items whose text the budget could not pay for, in queue order: not uploaded, to be read again.
    deferred: Vec<String>,
}

impl Run<'_> {
    /// A new cycle's scan: the versions since `since`, the deletions, and the full-text versions, all at once.
    async fn start_cycle(
        &mut self,
        zotero: &ZoteroClient,
        index: &SemanticIndex,
        since: u64,
        full_text: bool,
    ) -> Result<(Versions, Option<TextIndex>), IndexError> {
        let versions = zotero.item_versions(since);
        let deleted = async {
            if since > 0 {
                zotero.deleted(since).await.map(Some)
            } else {
                Ok(None)
            }
        };
        let texts = async {
            if full_text {
                zotero.fulltext_versions(since).await.map(Some)
            } else {
                Ok(None)
            }
        };
        let (versions, deleted, texts) = futures_util::future::join3(versions, deleted, texts).await;
        let (versions, deleted, texts) = (versions?, deleted?, texts?);
        match deleted {
            Some(deleted) => {
                if !deleted.items.is_empty() {
                    index.remove(&deleted.items).await?;
                    self.report.removed = deleted.items.len();
                }
            }
            None => {
                // A full cycle: Zotero's deletion log may have been pruned, so the index itself says which
                // documents belong to items that are gone (every live item, trashed ones too, is listed).
                let live: HashSet<String> = versions.versions.keys().cloned().collect();
                self.report.removed = index.remove_absent(&live).await?;
            }
        }
        Ok((versions, texts.map(|t| TextIndex::new(t, since))))
    }

    /// Reads one chunk of keys (one request) and, with full text on, each indexable item's text.
    async fn read_chunk(
        &self,
        zotero: &ZoteroClient,
        keys: &[String],
        full_text: bool,
        texts: Option<&TextIndex>,
    ) -> Result<Chunk, IndexError> {
        let valid: Vec<ObjectKey> = keys.iter().filter_map(|k| ObjectKey::parse(k).ok()).collect();
        let items = if valid.is_empty() {
            Vec::new()
        } else {
            self.budget.spend(1);
            zotero.items_by_keys(&valid).await?
        };
        let returned: HashSet<&str> = items.iter().map(|item| item.key.as_str()).collect();
        let mut gone: Vec<String> = keys.iter().filter(|k| !returned.contains(k.as_str())).cloned().collect();
        let mut parents = Vec::new();
        let mut indexable = Vec::new();
        for item in &items {
            if is_indexable(item) {
                indexable.push(item);
            } else if item.is_trashed() && !is_child(item) {
                gone.push(item.key.clone());
            } else if item.item_type() == Some("attachment") {
                parents.extend(item.field("parentItem").map(str::to_owned));
            }
        }
        // Each item with attachments costs two more requests (its children, its text): as many as the budget
        // still pays for are read now, in queue order; from the first that does not fit, the rest wait.
        let mut affordable = self.budget.left() / self.per_key.max(1);
        let mut deferred = Vec::new();
        if full_text {
            indexable.retain(|item| {
                if !deferred.is_empty() || (has_children(item) && affordable == 0) {
                    deferred.push(item.key.clone());
                    return false;
                }
                affordable -= usize::from(has_children(item));
                true
            });
        }
        let claimed = indexable.iter().filter(|item| has_children(item)).count() * self.per_key;
        self.budget.spare.set(self.budget.left().saturating_sub(claimed));
        let reads = indexable.iter().map(|item| async move {
            if full_text && has_children(item) {
                self.item_text(zotero, item, texts).await
            } else {
                Ok(TextSource::None)
            }
        });
        let mut documents = Vec::with_capacity(indexable.len());
        for (item, text) in indexable.iter().zip(join_all(reads).await) {
            let text = match text? {
                TextSource::Index(text) => Some(text),
                // One PDF at a time, after the concurrent reads: a Worker has 128 MB.
                TextSource::File(attachment) => self.file_text(&attachment).await,
                TextSource::None => None,
            };
            documents.extend(document_for(item, text.as_ref()));
        }
        Ok(Chunk { documents, gone, parents, deferred })
    }

    /// Where the item's text comes from: Zotero's full-text index (its best attachment that has text; 2
    /// requests), else — with `files` — the stored PDF to be read from the file store afterwards, one at a time.
    /// Of several stored PDFs, the one with the longest indexed text, as [`crate::attachment::best_of`] chooses
    /// for the tools: up to [`MAX_MEASURED_CANDIDATES`] are read, the first paid by the key's share and the rest
    /// by spare requests; without them, the first PDF's text is taken. Ties keep Zotero's order.
    async fn item_text(
        &self,
        zotero: &ZoteroClient,
        item: &ZoteroObject,
        texts: Option<&TextIndex>,
    ) -> Result<TextSource, IndexError> {
        let Ok(key) = ObjectKey::parse(&item.key) else { return Ok(TextSource::None) };
        self.budget.spend(1);
        let children = zotero.children(&key, MAX_CHILDREN).await?;
        if let Some(first) = best_attachment(&children.items, texts) {
            // The PDFs weighed, in Zotero's order: `first` alone unless it is a stored PDF; with it, every stored
            // PDF not known to lack text (an incremental cycle knows only the texts changed since its cursor).
            let weighed: Vec<&ZoteroObject> = if is_stored_pdf(first) {
                let maybe = |c: &ZoteroObject| texts.and_then(|t| t.has_text(&c.key)) != Some(false);
                children.items.iter().filter(|c| is_stored_pdf(c) && maybe(c)).collect()
            } else {
                vec![first]
            };
            let mut best: Option<String> = None;
            let mut measured = 1;
            for candidate in weighed {
                let text = if candidate.key == first.key {
                    self.index_text(zotero, candidate).await?
                } else if measured < MAX_MEASURED_CANDIDATES && self.budget.claim_spare() {
                    // Only with a request no key's worst case claims; without one, the first PDF's text stands.
                    measured += 1;
                    self.index_text(zotero, candidate).await?
                } else {
                    continue;
                };
                if chars(&text) > chars(&best) {
                    best = text;
                }
            }
            if let Some(text) = best {
                return Ok(TextSource::Index(ItemText::Whole(text)));
            }
        }
        let stored_pdf = children.items.into_iter().find(is_stored_pdf);
        Ok(match (self.files, stored_pdf) {
            (Some(_), Some(pdf)) => TextSource::File(pdf),
            _ => TextSource::None,
        })
    }

    /// An attachment's text in Zotero's full-text index, when it has some (1 request, counted here).
    async fn index_text(&self, zotero: &ZoteroClient, attachment: &ZoteroObject) -> Result<Option<String>, IndexError> {
        let Ok(key) = ObjectKey::parse(&attachment.key) else { return Ok(None) };
        self.budget.spend(1);
        Ok(zotero.fulltext(&key).await?.map(|t| t.content).filter(|c| !c.trim().is_empty()))
    }

    /// A stored PDF's text, page by page, from the file store through the PDF engine: as many pages as the
    /// document budget takes. Any failure (no file yet, a scan, a damaged or oversized file) leaves the item
    /// indexed by its metadata: the sync never fails over one paper's file.
    async fn file_text(&self, attachment: &ZoteroObject) -> Option<ItemText> {
        let files = self.files?;
        let key = ObjectKey::parse(&attachment.key).ok()?;
        if self.budget.left() < files.requests_per_fetch() {
            return None;
        }
        self.budget.spend(files.requests_per_fetch());
        let (_, data) = download(Some(files), attachment, &key).await.ok()?;
        if data.len() > MAX_SYNC_PDF_BYTES {
            return None;
        }
        let doc = PdfDocument::open_owned(data, &PdfLimits::default()).ok()?;
        let mut pages = Vec::new();
        let mut chars = 0;
        for page in 1..=doc.page_count() {
            let Ok(mut text) = doc.text(page, page, &TextBudget::default()) else { break };
            let text = text.pop().unwrap_or_default();
            chars += text.len();
            pages.push(text);
            if chars >= FULL_TEXT_BUDGET_CHARS {
                break;
            }
        }
        pages.iter().any(|p| !p.trim().is_empty()).then_some(ItemText::Pages(pages))
    }

    /// A run that cannot afford even its first step does nothing and says how much it needs.
    async fn too_small(
        mut self,
        index: &SemanticIndex,
        state: &SyncState,
        needed: usize,
    ) -> Result<SyncReport, IndexError> {
        self.report.remaining = state.pending.len();
        let message = format!(
            "Nothing was done: this run may make {} Zotero request(s), and the next step needs {needed}. Raise the \
             subrequest budget.",
            self.budget.limit
        );
        Ok(self.finish(index, state, 0, message).await)
    }

    /// Reads the backlog and builds the report; `message` is kept when given, else the completed-cycle one.
    async fn finish(self, index: &SemanticIndex, state: &SyncState, submitted: usize, message: String) -> SyncReport {
        let stats = index.stats().await.ok();
        let backlog = stats.map(|s| s.queued + s.running);
        let message = if message.is_empty() {
            let phrase = match backlog {
                Some(0) => "nothing is left to index".to_owned(),
                Some(n) => format!("{n} document(s) are still being indexed"),
                None => "how much is still being indexed could not be read".to_owned(),
            };
            format!(
                "Submitted {submitted} item(s). Every change up to library version {} has been sent; {phrase}.",
                state.target
            )
        } else {
            message
        };
        SyncReport {
            submitted,
            removed: self.report.removed,
            remaining: self.report.remaining,
            backlog,
            failed: stats.map(|s| s.failed),
            from_version: state.since,
            to_version: state.target,
            complete: self.report.complete,
            warning: self.report.warning,
            message,
            subrequests: self.budget.used.get(),
        }
    }
}

/// Which attachments have full text, from `/fulltext?since=`: complete when read from version 0.
struct TextIndex {
    versions: BTreeMap<String, u64>,
    complete: bool,
}

impl TextIndex {
    fn new(versions: Versions, since: u64) -> Self {
        Self { versions: versions.versions, complete: since == 0 }
    }

    /// Whether the attachment has text: `Some(false)` only when the listing is complete.
    fn has_text(&self, key: &str) -> Option<bool> {
        if self.versions.contains_key(key) {
            Some(true)
        } else if self.complete {
            Some(false)
        } else {
            None
        }
    }
}

/// The attachment whose text stands for the item: a PDF before an EPUB before HTML, a stored file before a
/// linked one; one known to have text before one that may not; none known to have no text.
fn best_attachment<'a>(children: &'a [ZoteroObject], texts: Option<&TextIndex>) -> Option<&'a ZoteroObject> {
    let has_text = |key: &str| texts.and_then(|t| t.has_text(key));
    let mut candidates: Vec<(u8, u8, u8, &ZoteroObject)> = children
        .iter()
        .filter(|c| c.item_type() == Some("attachment") && !c.is_trashed())
        .filter(|c| has_text(&c.key) != Some(false))
        .filter_map(|c| {
            let kind = match c.field("contentType")? {
                "application/pdf" => 0,
                "application/epub+zip" => 1,
                "text/html" => 2,
                _ => return None,
            };
            let link = match c.field("linkMode")? {
                "imported_file" | "imported_url" => 0,
                "linked_file" => 1,
                _ => return None,
            };
            Some((u8::from(has_text(&c.key) != Some(true)), kind, link, c))
        })
        .collect();
    crate::sort::sort_by_key(&mut candidates, |(known, kind, link, _)| (*known, *kind, *link));
    candidates.into_iter().next().map(|(_, _, _, c)| c)
}

/// An untrashed PDF whose file Zotero stores.
fn is_stored_pdf(item: &ZoteroObject) -> bool {
    !item.is_trashed() && item.field("contentType") == Some("application/pdf") && require_stored_file(item).is_ok()
}

/// The characters of a text, 0 for none.
fn chars(text: &Option<String>) -> usize {
    text.as_ref().map_or(0, |t| t.chars().count())
}

fn is_child(item: &ZoteroObject) -> bool {
    matches!(item.item_type(), Some("attachment" | "note" | "annotation"))
}

fn has_children(item: &ZoteroObject) -> bool {
    item.meta.get("numChildren").and_then(Value::as_u64).is_some_and(|n| n > 0)
}
