//! [`MemoryAiSearch`]: an in-memory Cloudflare AI Search namespace that behaves like the service where the
//! semantic index could notice. Instances exist once created; uploads are upserts by name that keep an opaque id
//! distinct from the name and are only searchable after indexing ([`MemoryAiSearch::process`]); listings page
//! at most 50 entries; deletions take the id; metadata values must be strings; a search chunks each document and
//! scores chunks by the query words they hold (deterministic, unlike embeddings, so tests can predict it).

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};

use async_trait::async_trait;
use serde_json::{json, Map, Value};

use crate::platform::{AiSearch, AiSearchError};

/// Characters per token, for turning a configured chunk size into characters.
const CHARS_PER_TOKEN: usize = 4;
/// `max_num_results` when a search does not say.
const DEFAULT_RESULTS: usize = 10;
/// The service's ceilings.
const MAX_RESULTS: usize = 50;
const MAX_PER_PAGE: usize = 50;
const DEFAULT_PER_PAGE: usize = 20;

/// The binding's calls, for failure injection and counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AiSearchCall {
    Info,
    Create,
    Search,
    Stats,
    Upload,
    List,
    Delete,
}

/// A document as the stand-in holds it.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredDocument {
    /// The opaque id `items.delete` takes.
    pub id: String,
    /// The name it was uploaded under (`<KEY>.md`).
    pub name: String,
    pub content: String,
    pub metadata: Map<String, Value>,
    /// `queued`, `running`, `completed` or `error`.
    pub status: String,
    /// What searches see: the content and metadata as of the last indexing, if any.
    pub indexed: Option<(String, Map<String, Value>)>,
}

#[derive(Default)]
struct Instance {
    config: Value,
    documents: Vec<StoredDocument>,
}

#[derive(Default)]
struct State {
    instances: BTreeMap<String, Instance>,
    failures: HashMap<AiSearchCall, VecDeque<AiSearchError>>,
    calls: HashMap<AiSearchCall, usize>,
    searches: Vec<Value>,
    creates: Vec<Value>,
    lists: Vec<Value>,
    next_id: u64,
    ignore_key_filter: bool,
    omit_vector_scores: bool,
    missing_info_as_error: bool,
    uploads_in_flight: usize,
    most_uploads_in_flight: usize,
}

/// The in-memory AI Search namespace. Single-threaded, like a Worker.
#[derive(Default)]
pub struct MemoryAiSearch {
    state: RefCell<State>,
}

impl MemoryAiSearch {
    pub fn new() -> Rc<Self> {
        Rc::new(Self::default())
    }

    /// Indexes every queued or running document: it becomes `completed` and searchable as uploaded.
    pub fn process(&self) {
        let mut state = self.state.borrow_mut();
        for instance in state.instances.values_mut() {
            for document in &mut instance.documents {
                if matches!(document.status.as_str(), "queued" | "running") {
                    document.status = "completed".into();
                    document.indexed = Some((document.content.clone(), document.metadata.clone()));
                }
            }
        }
    }

    /// Moves up to `count` queued documents of `instance` to `running` (for backlog reports).
    pub fn start_running(&self, instance: &str, count: usize) {
        let mut state = self.state.borrow_mut();
        if let Some(instance) = state.instances.get_mut(instance) {
            for document in instance.documents.iter_mut().filter(|d| d.status == "queued").take(count) {
                document.status = "running".into();
            }
        }
    }

    /// Marks a document's indexing as failed (it stays unsearchable until uploaded again and processed).
    pub fn fail_indexing(&self, instance: &str, name: &str) {
        let mut state = self.state.borrow_mut();
        if let Some(document) =
            state.instances.get_mut(instance).and_then(|i| i.documents.iter_mut().find(|d| d.name == name))
        {
            document.status = "error".into();
        }
    }

    /// Makes the next `count` calls of `call` fail with `error` (after they are counted).
    pub fn fail_next(&self, call: AiSearchCall, count: usize, error: AiSearchError) {
        let mut state = self.state.borrow_mut();
        let queue = state.failures.entry(call).or_default();
        for _ in 0..count {
            queue.push_back(error.clone());
        }
    }

    /// How many times `call` was made.
    pub fn calls(&self, call: AiSearchCall) -> usize {
        self.state.borrow().calls.get(&call).copied().unwrap_or(0)
    }

    /// Every search request, in order.
    pub fn searches(&self) -> Vec<Value> {
        self.state.borrow().searches.clone()
    }

    /// Every `create` configuration, in order.
    pub fn creates(&self) -> Vec<Value> {
        self.state.borrow().creates.clone()
    }

    /// Every `items.list` parameter object, in order.
    pub fn lists(&self) -> Vec<Value> {
        self.state.borrow().lists.clone()
    }

    /// The documents of `instance`, in upload order.
    pub fn documents(&self, instance: &str) -> Vec<StoredDocument> {
        self.state.borrow().instances.get(instance).map(|i| i.documents.clone()).unwrap_or_default()
    }

    /// One document by name.
    pub fn document(&self, instance: &str, name: &str) -> Option<StoredDocument> {
        self.documents(instance).into_iter().find(|d| d.name == name)
    }

    /// Whether the instance exists.
    pub fn has_instance(&self, instance: &str) -> bool {
        self.state.borrow().instances.contains_key(instance)
    }

    /// Plays a service from before `items.list` took `key`: the filter is ignored and the listing comes back.
    pub fn ignore_key_filter(&self, ignore: bool) {
        self.state.borrow_mut().ignore_key_filter = ignore;
    }

    /// Leaves `vector_score` out of every chunk's `scoring_details` (the field is optional in the binding).
    pub fn omit_vector_scores(&self, omit: bool) {
        self.state.borrow_mut().omit_vector_scores = omit;
    }

    /// Makes `info` of a missing instance fail with `NotFound` (the raw binding's behaviour) instead of
    /// answering `None` (the seam's contract).
    pub fn missing_info_as_error(&self, error: bool) {
        self.state.borrow_mut().missing_info_as_error = error;
    }

    /// The most uploads that were in flight at once.
    pub fn most_uploads_in_flight(&self) -> usize {
        self.state.borrow().most_uploads_in_flight
    }

    /// Counts the call and answers with an injected failure when one is waiting.
    fn enter(&self, call: AiSearchCall) -> Result<(), AiSearchError> {
        let mut state = self.state.borrow_mut();
        *state.calls.entry(call).or_default() += 1;
        match state.failures.get_mut(&call).and_then(VecDeque::pop_front) {
            Some(error) => Err(error),
            None => Ok(()),
        }
    }

    fn fresh_id(state: &mut State) -> String {
        state.next_id += 1;
        // Opaque like the service's ids, and never equal to a document's name.
        format!("{:08x}-ai{:04}", state.next_id.wrapping_mul(0x9E37_79B9) & 0xFFFF_FFFF, state.next_id)
    }
}

fn missing_instance(instance: &str) -> AiSearchError {
    AiSearchError::NotFound { what: format!("instance \"{instance}\"") }
}

/// A future that is pending once, so uploads started together are in flight together.
struct YieldOnce(bool);

impl Future for YieldOnce {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            Poll::Ready(())
        } else {
            self.0 = true;
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }
}

#[async_trait(?Send)]
impl AiSearch for MemoryAiSearch {
    async fn info(&self, instance: &str) -> Result<Option<Value>, AiSearchError> {
        self.enter(AiSearchCall::Info)?;
        let state = self.state.borrow();
        match state.instances.get(instance) {
            Some(found) => Ok(Some(found.config.clone())),
            None if state.missing_info_as_error => Err(missing_instance(instance)),
            None => Ok(None),
        }
    }

    async fn create(&self, config: &Value) -> Result<(), AiSearchError> {
        self.enter(AiSearchCall::Create)?;
        let mut state = self.state.borrow_mut();
        state.creates.push(config.clone());
        let Some(id) = config.get("id").and_then(Value::as_str) else {
            return Err(AiSearchError::Failed {
                name: "Error".into(),
                message: "invalid_config: id is required".into(),
            });
        };
        if state.instances.contains_key(id) {
            return Err(AiSearchError::Failed {
                name: "Error".into(),
                message: format!("instance_already_exists: an instance named \"{id}\" exists"),
            });
        }
        state.instances.insert(id.to_owned(), Instance { config: config.clone(), documents: Vec::new() });
        Ok(())
    }

    async fn search(&self, instance: &str, request: &Value) -> Result<Value, AiSearchError> {
        self.enter(AiSearchCall::Search)?;
        let mut state = self.state.borrow_mut();
        state.searches.push(request.clone());
        let omit_scores = state.omit_vector_scores;
        let found = state.instances.get(instance).ok_or_else(|| missing_instance(instance))?;
        let query = request.get("query").and_then(Value::as_str).unwrap_or_default();
        let retrieval = request.pointer("/ai_search_options/retrieval");
        let wanted = match retrieval.and_then(|r| r.get("max_num_results")) {
            None => DEFAULT_RESULTS,
            Some(n) => match n.as_u64() {
                Some(n) if (1..=MAX_RESULTS as u64).contains(&n) => n as usize,
                _ => {
                    return Err(AiSearchError::Failed {
                        name: "Error".into(),
                        message: format!("invalid_request: max_num_results must be 1–{MAX_RESULTS}, not {n}"),
                    })
                }
            },
        };
        let filters = retrieval.and_then(|r| r.get("filters"));
        let (chunk_chars, overlap_chars) = chunking(&found.config);
        let words = words_of(query);
        let mut scored: Vec<(f64, usize, Value)> = Vec::new();
        for document in &found.documents {
            let Some((content, metadata)) = &document.indexed else { continue };
            if !filters.is_none_or(|f| matches_filters(&with_builtin(metadata, &document.name), f)) {
                continue;
            }
            for (n, text) in chunks(content, chunk_chars, overlap_chars).into_iter().enumerate() {
                let lower = text.to_lowercase();
                let hits = words.iter().filter(|w| lower.contains(w.as_str())).count();
                if hits == 0 {
                    continue;
                }
                let score = hits as f64 / words.len() as f64;
                let mut details = json!({ "keyword_score": hits, "fusion_method": "rrf" });
                if !omit_scores {
                    details["vector_score"] = json!(score);
                }
                let chunk = json!({
                    "id": format!("{}:{n}", document.id),
                    "type": "text",
                    "text": text,
                    "item": { "key": document.name, "timestamp": 0, "metadata": metadata },
                    "scoring_details": details,
                });
                scored.push((score, scored.len(), chunk));
            }
        }
        // Best first; ties keep document and chunk order.
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        let chunks: Vec<Value> = scored
            .into_iter()
            .take(wanted)
            .enumerate()
            .map(|(rank, (_, _, mut chunk))| {
                // The fused score is a rank artefact (reciprocal rank fusion), not a similarity.
                chunk["score"] = json!(1.0 / (60.0 + rank as f64 + 1.0));
                chunk
            })
            .collect();
        Ok(json!({ "search_query": query, "chunks": chunks }))
    }

    async fn stats(&self, instance: &str) -> Result<Value, AiSearchError> {
        self.enter(AiSearchCall::Stats)?;
        let state = self.state.borrow();
        let found = state.instances.get(instance).ok_or_else(|| missing_instance(instance))?;
        let count = |status: &str| found.documents.iter().filter(|d| d.status == status).count();
        let (chunk_chars, overlap_chars) = chunking(&found.config);
        let vectors: usize = found
            .documents
            .iter()
            .filter_map(|d| d.indexed.as_ref())
            .map(|(content, _)| chunks(content, chunk_chars, overlap_chars).len())
            .sum();
        Ok(json!({
            "queued": count("queued"),
            "running": count("running"),
            "completed": count("completed"),
            "error": count("error"),
            "skipped": 0,
            "outdated": 0,
            "engine": { "vectorize": { "vectorsCount": vectors, "dimensions": 1024 } },
        }))
    }

    async fn upload(&self, instance: &str, name: &str, content: &str, options: &Value) -> Result<Value, AiSearchError> {
        self.enter(AiSearchCall::Upload)?;
        {
            let mut state = self.state.borrow_mut();
            state.uploads_in_flight += 1;
            state.most_uploads_in_flight = state.most_uploads_in_flight.max(state.uploads_in_flight);
        }
        YieldOnce(false).await;
        let mut state = self.state.borrow_mut();
        state.uploads_in_flight -= 1;
        let metadata = options.get("metadata").and_then(Value::as_object).cloned().unwrap_or_default();
        if let Some((field, _)) = metadata.iter().find(|(_, v)| !v.is_string()) {
            return Err(AiSearchError::Failed {
                name: "Error".into(),
                message: format!("invalid_metadata_format: metadata value of \"{field}\" must be a string"),
            });
        }
        if !state.instances.contains_key(instance) {
            return Err(missing_instance(instance));
        }
        let id = Self::fresh_id(&mut state);
        let found = state.instances.get_mut(instance).ok_or_else(|| missing_instance(instance))?;
        let document = match found.documents.iter_mut().find(|d| d.name == name) {
            Some(existing) => {
                existing.content = content.to_owned();
                existing.metadata = metadata;
                existing.status = "queued".into();
                existing
            }
            None => {
                found.documents.push(StoredDocument {
                    id,
                    name: name.to_owned(),
                    content: content.to_owned(),
                    metadata,
                    status: "queued".into(),
                    indexed: None,
                });
                let last = found.documents.len() - 1;
                &mut found.documents[last]
            }
        };
        Ok(json!({ "id": document.id, "key": document.name, "status": document.status, "metadata": document.metadata }))
    }

    async fn list(&self, instance: &str, params: &Value) -> Result<Value, AiSearchError> {
        self.enter(AiSearchCall::List)?;
        let mut state = self.state.borrow_mut();
        state.lists.push(params.clone());
        let ignore_key = state.ignore_key_filter;
        let found = state.instances.get(instance).ok_or_else(|| missing_instance(instance))?;
        let page = params.get("page").and_then(Value::as_u64).unwrap_or(1).max(1) as usize;
        let per_page = params.get("per_page").and_then(Value::as_u64).unwrap_or(DEFAULT_PER_PAGE as u64) as usize;
        if per_page == 0 || per_page > MAX_PER_PAGE {
            return Err(AiSearchError::Failed {
                name: "Error".into(),
                message: format!("invalid_request: per_page must be 1–{MAX_PER_PAGE}, not {per_page}"),
            });
        }
        let key = params.get("key").and_then(Value::as_str).filter(|_| !ignore_key);
        let matching: Vec<&StoredDocument> =
            found.documents.iter().filter(|d| key.is_none_or(|k| d.name == k)).collect();
        let result: Vec<Value> = matching
            .iter()
            .skip((page - 1) * per_page)
            .take(per_page)
            .map(|d| json!({ "id": d.id, "key": d.name, "status": d.status, "metadata": d.metadata }))
            .collect();
        let count = result.len();
        Ok(json!({
            "result": result,
            "result_info": { "page": page, "per_page": per_page, "count": count, "total_count": matching.len() },
        }))
    }

    async fn delete(&self, instance: &str, id: &str) -> Result<(), AiSearchError> {
        self.enter(AiSearchCall::Delete)?;
        let mut state = self.state.borrow_mut();
        let found = state.instances.get_mut(instance).ok_or_else(|| missing_instance(instance))?;
        let before = found.documents.len();
        found.documents.retain(|d| d.id != id);
        if found.documents.len() == before {
            return Err(AiSearchError::NotFound { what: format!("item \"{id}\"") });
        }
        Ok(())
    }
}

/// Chunk length and overlap in characters, from the instance's `chunk_size` (tokens) and `chunk_overlap` (%).
fn chunking(config: &Value) -> (usize, usize) {
    let tokens = config.get("chunk_size").and_then(Value::as_u64).unwrap_or(512).max(16) as usize;
    let overlap = config.get("chunk_overlap").and_then(Value::as_u64).unwrap_or(10).min(50) as usize;
    let chars = tokens * CHARS_PER_TOKEN;
    (chars, chars * overlap / 100)
}

/// Splits `text` into windows of `size` characters, each starting `overlap` characters before the previous
/// one's end.
fn chunks(text: &str, size: usize, overlap: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut start = 0;
    while start < chars.len() {
        let end = (start + size).min(chars.len());
        out.push(chars[start..end].iter().collect());
        if end == chars.len() {
            break;
        }
        start = end - overlap.min(end - start - 1);
    }
    out
}

/// The query's distinct lowercase words of two or more characters.
fn words_of(query: &str) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    for word in query.to_lowercase().split(|c: char| !c.is_alphanumeric()) {
        if word.chars().count() >= 2 && !words.iter().any(|w| w == word) {
            words.push(word.to_owned());
        }
    }
    words
}

/// The metadata a filter sees: the document's own, and the service's built-in `filename` and `folder` (the
/// name up to its last `/`, slash included: `groups/100/` for `groups/100/ABCD2345.md`; empty at the root).
fn with_builtin(metadata: &Map<String, Value>, name: &str) -> Map<String, Value> {
    let mut all = metadata.clone();
    let folder = name.rfind('/').map_or("", |at| &name[..=at]);
    all.insert("filename".into(), Value::String(name.to_owned()));
    all.insert("folder".into(), Value::String(folder.to_owned()));
    all
}

/// Vectorize filter syntax over the metadata: `{field: value}` or `{field: {$eq|$ne|$gt|$gte|$lt|$lte|$in|$nin:
/// …}}`. Strings holding numbers compare as numbers with number operands (`year` is declared a number).
fn matches_filters(metadata: &Map<String, Value>, filters: &Value) -> bool {
    let Some(filters) = filters.as_object() else { return true };
    filters.iter().all(|(field, condition)| {
        let value = metadata.get(field);
        match condition.as_object() {
            Some(ops) => ops.iter().all(|(op, operand)| compare(value, op, operand)),
            None => compare(value, "$eq", condition),
        }
    })
}

fn compare(value: Option<&Value>, op: &str, operand: &Value) -> bool {
    let Some(value) = value else { return op == "$ne" || op == "$nin" };
    let as_number = |v: &Value| v.as_f64().or_else(|| v.as_str().and_then(|s| s.trim().parse::<f64>().ok()));
    let ordering = match (as_number(value), operand.is_number()) {
        (Some(left), true) => operand.as_f64().and_then(|right| left.partial_cmp(&right)),
        _ => match (value.as_str(), operand.as_str()) {
            (Some(left), Some(right)) => Some(left.cmp(right)),
            _ => None,
        },
    };
    let member = |list: &Value| list.as_array().is_some_and(|l| l.iter().any(|o| compare(Some(value), "$eq", o)));
    match op {
        "$eq" => ordering == Some(std::cmp::Ordering::Equal),
        "$ne" => ordering != Some(std::cmp::Ordering::Equal),
        "$gt" => ordering == Some(std::cmp::Ordering::Greater),
        "$gte" => matches!(ordering, Some(std::cmp::Ordering::Greater | std::cmp::Ordering::Equal)),
        "$lt" => ordering == Some(std::cmp::Ordering::Less),
        "$lte" => matches!(ordering, Some(std::cmp::Ordering::Less | std::cmp::Ordering::Equal)),
        "$in" => member(operand),
        "$nin" => !member(operand),
        _ => false,
    }
}
