//! [`SemanticIndex`]: one AI Search instance holding one document per item.

use std::collections::HashSet;
use std::rc::Rc;

use crate::join::join_all;
use serde_json::{json, Value};

use super::documents::{item_key_of, Document};
use super::error::IndexError;
use super::query::{fold, request, wanted, IndexMatch, QueryOptions};
use super::scope::IndexScope;
use super::settings::IndexSettings;
use super::{CHUNK_OVERLAP, CHUNK_SIZE, LIST_PAGE, MAX_LIST_PAGES, UPLOAD_CONCURRENCY};
use crate::platform::{AiSearch, AiSearchError};

/// Up to this many keys, [`SemanticIndex::remove`] looks each document up by its exact key (one call each);
/// beyond it, one scan of the listing finds them all in fewer calls.
const EXACT_LOOKUP_MAX_KEYS: usize = 10;

/// What [`SemanticIndex::ensure`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ensured {
    /// The instance did not exist and was created (so it is empty: the sync must send everything).
    pub created: bool,
    /// The existing instance chunks smaller than this deployment budgets for; the text says what to do.
    pub mismatch: Option<String>,
}

/// How far indexing has got.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct IndexStats {
    /// Vectors stored (one per chunk).
    pub vectors: u64,
    /// Documents waiting to be indexed, including outdated ones.
    pub queued: u64,
    /// Documents being indexed now.
    pub running: u64,
    /// Documents whose indexing failed.
    pub failed: u64,
}

/// One library's documents in the AI Search instance (see [`IndexScope`]): what it uploads, removes, lists and
/// finds is that library's only.
pub struct SemanticIndex {
    service: Rc<dyn AiSearch>,
    settings: IndexSettings,
    scope: IndexScope,
}

impl SemanticIndex {
    /// The configured library's documents, with no other library indexed beside it.
    pub fn new(service: Rc<dyn AiSearch>, settings: IndexSettings) -> Self {
        Self::scoped(service, settings, IndexScope::default())
    }

    /// One library's documents in an instance that may hold several.
    pub fn scoped(service: Rc<dyn AiSearch>, settings: IndexSettings, scope: IndexScope) -> Self {
        Self { service, settings, scope }
    }

    /// Which library's documents this handle sees.
    pub fn scope(&self) -> &IndexScope {
        &self.scope
    }

    /// The instance id.
    pub fn instance(&self) -> &str {
        &self.settings.instance
    }

    pub fn settings(&self) -> &IndexSettings {
        &self.settings
    }

    /// The configuration a new instance is created with: exactly the TypeScript project's keys, so both build
    /// the same index (hybrid retrieval fused by RRF, reranked, 512-token chunks, no score threshold, and the
    /// two filterable metadata fields).
    pub fn create_config(&self) -> Value {
        json!({
            "id": self.settings.instance,
            "index_method": { "vector": true, "keyword": true },
            "fusion_method": "rrf",
            "embedding_model": self.settings.embedding_model,
            "reranking": true,
            "reranking_model": self.settings.reranking_model,
            "chunk": true,
            "chunk_size": CHUNK_SIZE,
            "chunk_overlap": CHUNK_OVERLAP,
            "score_threshold": 0,
            "custom_metadata": [
                { "field_name": "itemtype", "data_type": "text" },
                { "field_name": "year", "data_type": "number" },
            ],
        })
    }

    /// Creates the instance when it does not exist. An existing one is never changed; one that chunks smaller
    /// than [`CHUNK_SIZE`] is reported. Only the sync calls this: a search never creates state.
    pub async fn ensure(&self) -> Result<Ensured, IndexError> {
        match self.service.info(self.instance()).await {
            Ok(Some(info)) => {
                let chunk_size = info.get("chunk_size").and_then(Value::as_f64);
                let mismatch = chunk_size.filter(|size| *size < CHUNK_SIZE as f64).map(|size| {
                    format!(
                        "AI Search instance \"{}\" chunks at {} tokens, but this deployment is built for {CHUNK_SIZE}. \
                         Items split across more chunks than a search budgets result slots for, so \
                         a semantic search returns fewer items than it was asked for. Delete the instance and \
                         let the next sync rebuild it, or set chunk_size to {CHUNK_SIZE} and re-sync — both \
                         re-index the whole library.",
                        self.instance(),
                        js_number(size),
                    )
                });
                Ok(Ensured { created: false, mismatch })
            }
            Ok(None) | Err(AiSearchError::NotFound { .. }) => {
                self.service.create(&self.create_config()).await?;
                Ok(Ensured { created: true, mismatch: None })
            }
            Err(error) => Err(error.into()),
        }
    }

    /// The items whose documents best match `text`, best first, at most `options.top_k` (see
    /// [`QueryOptions`]); an item appears once however many of its chunks matched. An instance that does not
    /// exist yet (no sync has run; the read path never creates one) is an empty index.
    pub async fn query(&self, text: &str, options: &QueryOptions) -> Result<Vec<IndexMatch>, IndexError> {
        let answer = match self.service.search(self.instance(), &request(text, options, &self.scope)).await {
            Ok(answer) => answer,
            Err(AiSearchError::NotFound { .. }) => return Ok(Vec::new()),
            Err(other) => return Err(other.into()),
        };
        Ok(fold(&answer, text, wanted(options), &self.scope)?)
    }

    /// Vectors stored and documents waiting, being indexed, or failed; all 0 for an instance not created yet.
    pub async fn stats(&self) -> Result<IndexStats, IndexError> {
        let stats = match self.service.stats(self.instance()).await {
            Ok(stats) => stats,
            Err(AiSearchError::NotFound { .. }) => return Ok(IndexStats::default()),
            Err(other) => return Err(other.into()),
        };
        let count = |pointer: &str| stats.pointer(pointer).and_then(as_count).unwrap_or(0);
        Ok(IndexStats {
            vectors: count("/engine/vectorize/vectorsCount"),
            queued: count("/queued") + count("/outdated"),
            running: count("/running"),
            failed: count("/error"),
        })
    }

    /// Uploads the documents (an upsert by name, in this library's folder), [`UPLOAD_CONCURRENCY`] at a time,
    /// each group finished before the next starts. Any failed upload fails the call; the documents of earlier
    /// groups stay uploaded.
    pub async fn upsert(&self, documents: &[Document]) -> Result<usize, IndexError> {
        for group in documents.chunks(UPLOAD_CONCURRENCY) {
            let uploads = group.iter().map(|document| {
                let options = json!({ "metadata": document.metadata });
                let name = self.scope.name(item_key_of(&document.name));
                async move { self.service.upload(self.instance(), &name, &document.text, &options).await }
            });
            for outcome in join_all(uploads).await {
                outcome?;
            }
        }
        Ok(documents.len())
    }

    /// Deletes the documents of these item keys; keys without a document are normal. Returns how many
    /// documents were deleted.
    ///
    /// A few keys are looked up by exact key (`list({key})`); a service that ignores `key` (it answers with
    /// other documents) falls back to the paged scan, which also serves many keys: pages of [`LIST_PAGE`]
    /// until every key is found or a page comes back short, at most [`MAX_LIST_PAGES`].
    pub async fn remove(&self, keys: &[String]) -> Result<usize, IndexError> {
        let mut outstanding: HashSet<String> = keys.iter().map(|key| self.scope.name(key)).collect();
        if outstanding.is_empty() {
            return Ok(0);
        }
        let mut ids = Vec::new();
        if outstanding.len() <= EXACT_LOOKUP_MAX_KEYS {
            let mut names: Vec<String> = outstanding.iter().cloned().collect();
            crate::sort::sort(&mut names);
            for name in names {
                let page = self.service.list(self.instance(), &json!({ "key": name, "source": "builtin" })).await?;
                let entries = entries(&page)?;
                if entries.iter().any(|(_, key)| *key != name) {
                    break;
                }
                ids.extend(entries.into_iter().map(|(id, _)| id));
                outstanding.remove(&name);
            }
        }
        if !outstanding.is_empty() {
            let count = outstanding.len();
            if !self.scan(&mut Selection::Named(&mut outstanding), &mut ids).await? {
                return Err(self.endless(count));
            }
        }
        self.delete_all(&ids).await
    }

    /// Deletes every document of this library whose item key is not in `keep` (items that no longer exist), by
    /// one scan of the listing; other libraries' documents are left alone. Returns how many were deleted.
    pub async fn remove_absent(&self, keep: &HashSet<String>) -> Result<usize, IndexError> {
        let mut ids = Vec::new();
        if !self.scan(&mut Selection::AllBut(keep, &self.scope), &mut ids).await? {
            return Err(self.endless(ids.len()));
        }
        self.delete_all(&ids).await
    }

    /// Lists the instance's documents page by page, collecting the ids of those `selection` picks, until it has
    /// all it wants or a page comes back short. False when the listing did not end within [`MAX_LIST_PAGES`].
    async fn scan(&self, selection: &mut Selection<'_>, ids: &mut Vec<String>) -> Result<bool, IndexError> {
        for page in 1..=MAX_LIST_PAGES {
            let params = json!({ "page": page, "per_page": LIST_PAGE, "source": "builtin" });
            let entries = entries(&self.service.list(self.instance(), &params).await?)?;
            let short = entries.len() < LIST_PAGE;
            ids.extend(entries.into_iter().filter(|(_, key)| selection.pick(key)).map(|(id, _)| id));
            if short || selection.done() {
                return Ok(true);
            }
        }
        Ok(false)
    }

    fn endless(&self, count: usize) -> IndexError {
        IndexError::ListingDidNotTerminate { instance: self.instance().to_owned(), pages: MAX_LIST_PAGES, count }
    }

    /// Deletes by id, one after the other; an id already gone is not an error.
    async fn delete_all(&self, ids: &[String]) -> Result<usize, IndexError> {
        let mut deleted = 0;
        for id in ids {
            match self.service.delete(self.instance(), id).await {
                Ok(()) => deleted += 1,
                Err(AiSearchError::NotFound { .. }) => {}
                Err(error) => return Err(error.into()),
            }
        }
        Ok(deleted)
    }
}

/// Which documents a scan of the listing collects.
enum Selection<'a> {
    /// These names; each is taken out when found, and the scan ends when none is left.
    Named(&'a mut HashSet<String>),
    /// Every document of the scope's library whose item key is not one of these.
    AllBut(&'a HashSet<String>, &'a IndexScope),
}

impl Selection<'_> {
    fn pick(&mut self, name: &str) -> bool {
        match self {
            Selection::Named(names) => names.remove(name),
            Selection::AllBut(keep, scope) => scope.key_of(name).is_some_and(|key| !keep.contains(key)),
        }
    }

    fn done(&self) -> bool {
        match self {
            Selection::Named(names) => names.is_empty(),
            Selection::AllBut(..) => false,
        }
    }
}

/// `(id, key)` of each entry of a listing page.
fn entries(page: &Value) -> Result<Vec<(String, String)>, AiSearchError> {
    let result = page
        .get("result")
        .and_then(Value::as_array)
        .ok_or_else(|| AiSearchError::Malformed { reason: "the item listing has no `result` list".into() })?;
    Ok(result
        .iter()
        .filter_map(|entry| {
            let id = entry.get("id").and_then(Value::as_str)?;
            let key = entry.get("key").and_then(Value::as_str)?;
            Some((id.to_owned(), key.to_owned()))
        })
        .collect())
}

/// A count the service sent as a JSON number (integer or not).
fn as_count(value: &Value) -> Option<u64> {
    value.as_u64().or_else(|| value.as_f64().filter(|f| f.is_finite() && *f >= 0.0).map(|f| f as u64))
}

/// A number as JavaScript prints it (`256`, not `256.0`).
fn js_number(value: f64) -> String {
    if value.fract() == 0.0 && value.abs() < 1e15 {
        format!("{}", value as i64)
    } else {
        value.to_string()
    }
}
