//! The search request and how its chunks fold back into items.

use std::collections::HashMap;

use serde_json::{json, Map, Value};

use super::passage::passage;
use super::scope::IndexScope;
use super::{CHUNKS_PER_ITEM, MAX_CHUNKS};
use crate::platform::AiSearchError;

/// What a semantic query asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryOptions {
    /// Items wanted (at most [`MAX_CHUNKS`]; at least 1).
    pub top_k: usize,
    /// One item type; a negated one (`-book`) is not sent to the index (the caller filters it out afterwards).
    pub item_type: Option<String>,
    /// Earliest year; 0 means no bound, as upstream.
    pub from_year: Option<i32>,
    /// Latest year; 0 means no bound, as upstream.
    pub to_year: Option<i32>,
}

impl Default for QueryOptions {
    fn default() -> Self {
        Self { top_k: 10, item_type: None, from_year: None, to_year: None }
    }
}

/// One item a search found, best first.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexMatch {
    pub item_key: String,
    /// The best vector similarity among the item's chunks; `None` when the service gave none (never 0 in its
    /// place: the caller reports unscored results as such).
    pub score: Option<f64>,
    /// From the item's best chunk: the part that matched, without page markers.
    pub passage: Option<String>,
    /// The page of that passage, when the document marks pages.
    pub page: Option<u32>,
}

/// Items a query returns for `top_k`.
pub(crate) fn wanted(options: &QueryOptions) -> usize {
    options.top_k.clamp(1, MAX_CHUNKS)
}

/// The `filters` of a search: `itemtype` equality unless negated, a year range when either bound is set, and
/// the library's `folder` when the instance holds several libraries.
pub(crate) fn filters(options: &QueryOptions, scope: &IndexScope) -> Option<Value> {
    let mut filters = Map::new();
    if let Some(folder) = scope.filter() {
        filters.insert("folder".into(), folder);
    }
    if let Some(item_type) = options.item_type.as_deref().filter(|t| !t.is_empty() && !t.starts_with('-')) {
        filters.insert("itemtype".into(), json!({ "$eq": item_type }));
    }
    let mut year = Map::new();
    if let Some(from) = options.from_year.filter(|y| *y != 0) {
        year.insert("$gte".into(), json!(from));
    }
    if let Some(to) = options.to_year.filter(|y| *y != 0) {
        year.insert("$lte".into(), json!(to));
    }
    if !year.is_empty() {
        filters.insert("year".into(), Value::Object(year));
    }
    (!filters.is_empty()).then_some(Value::Object(filters))
}

/// The `instance.search` argument: hybrid retrieval with keyword `or`, no thresholds (weak matches are the
/// caller's to judge), reranked; `min(50, wanted × CHUNKS_PER_ITEM)` chunks.
pub(crate) fn request(text: &str, options: &QueryOptions, scope: &IndexScope) -> Value {
    let mut retrieval = json!({
        "retrieval_type": "hybrid",
        "keyword_match_mode": "or",
        "max_num_results": (wanted(options) * CHUNKS_PER_ITEM).min(MAX_CHUNKS),
        "match_threshold": 0,
        "return_on_failure": false,
    });
    if let (Some(filters), Some(object)) = (filters(options, scope), retrieval.as_object_mut()) {
        object.insert("filters".into(), filters);
    }
    json!({
        "query": text,
        "ai_search_options": {
            "retrieval": retrieval,
            "reranking": { "enabled": true, "match_threshold": 0 },
        },
    })
}

/// An item while chunks are folded: its best score and the chunk that had it.
struct Folding<'a> {
    key: &'a str,
    score: Option<f64>,
    text: &'a str,
}

/// Folds the answer's chunks into items in the order each first appears. An item's score is the highest
/// `vector_score` among its chunks (the fused `score` is a rank artefact, not a similarity, and is never used);
/// its passage comes from that chunk (the first one when none is scored). Chunks of another library's documents
/// are dropped, whatever the service's filter did.
pub(crate) fn fold(
    answer: &Value,
    query: &str,
    wanted: usize,
    scope: &IndexScope,
) -> Result<Vec<IndexMatch>, AiSearchError> {
    let chunks = answer
        .get("chunks")
        .and_then(Value::as_array)
        .ok_or_else(|| AiSearchError::Malformed { reason: "the search answer has no `chunks` list".into() })?;
    let mut items: Vec<Folding> = Vec::new();
    let mut positions: HashMap<&str, usize> = HashMap::new();
    for chunk in chunks {
        let Some(key) = chunk.pointer("/item/key").and_then(Value::as_str).and_then(|name| scope.key_of(name)) else {
            continue;
        };
        let score = chunk.pointer("/scoring_details/vector_score").and_then(Value::as_f64);
        let text = chunk.get("text").and_then(Value::as_str).unwrap_or_default();
        match positions.get(key) {
            Some(&at) => {
                let item = &mut items[at];
                if let Some(score) = score.filter(|s| item.score.is_none_or(|best| *s > best)) {
                    item.score = Some(score);
                    item.text = text;
                }
            }
            None => {
                positions.insert(key, items.len());
                items.push(Folding { key, score, text });
            }
        }
    }
    Ok(items
        .into_iter()
        .take(wanted)
        .map(|item| {
            let found = passage(item.text, query);
            IndexMatch {
                item_key: item.key.to_owned(),
                score: item.score,
                passage: (!found.text.is_empty()).then_some(found.text),
                page: found.page,
            }
        })
        .collect())
}
