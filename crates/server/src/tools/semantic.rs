//! `zotero_semantic_search` (meaning, not words, over Cloudflare AI Search) and `zotero_reindex` (bring that
//! index up to date now instead of at the next scheduled sync). The index itself is
//! `zotero_mcp_core::index`; docs/search.md says what goes into it and how to read its scores.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use zotero_mcp_core::index::{self, IndexMatch, QueryOptions, DEFAULT_MIN_SCORE};
use zotero_mcp_core::zotero::{ItemCard, ItemScope};

use super::args::{Key, YearRange};
use super::paging::shorten_list;
use super::search::item_filters;
use crate::config::ToolGroup;
use crate::context::RequestContext;
use crate::format::items::{item_list, summarize, ItemSummary};
use crate::format::text::truncate;
use crate::jobs::{run_sync, SyncRunError};
use crate::mcp::{Tool, ToolError, ToolSpec};

/// Most items a semantic search returns (AI Search returns at most 50 chunks per search).
const MAX_ITEMS: u32 = 50;
/// Candidates fetched per wanted item when filters the index cannot apply may drop some.
const FILTER_OVERSHOOT: usize = 3;

/// The whole answer of a deployment without the AI_SEARCH binding (`zotero-mcp e2e` recognises it by this text).
pub const UNBOUND: &str = "Semantic search is unavailable: AI Search is not bound to this deployment. Use \
                       zotero_search for text and field queries.";

fn default_min_score() -> f64 {
    DEFAULT_MIN_SCORE
}

/// Within what a search assures ([`index::MAX_SEMANTIC_ITEMS`]).
fn default_limit() -> u32 {
    10
}

/// Arguments of `zotero_semantic_search`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SemanticSearchInput {
    /// A question or description, in your own words.
    #[validate(length(min = 1, max = 2000))]
    pub query: String,
    /// Results below it are flagged as probably unrelated (not filtered).
    #[validate(range(min = 0.0, max = 1.0))]
    #[serde(default = "default_min_score")]
    #[schemars(default = "default_min_score")]
    pub min_score: f64,
    /// E.g. book; "-" before excludes.
    #[validate(length(min = 1, max = 64))]
    pub item_type: Option<String>,
    /// Up to 12 assured; more as 50 passages allow.
    #[validate(range(min = 1, max = 50))]
    #[serde(default = "default_limit")]
    #[schemars(default = "default_limit")]
    pub limit: u32,
    /// All must match; "a || b" is either; "-" before excludes.
    #[validate(length(max = 20))]
    pub tags: Option<Vec<String>>,
    // Only items directly in this collection.
    pub collection_key: Option<Key>,
    // Only items dated in or after this year.
    #[validate(range(min = 0, max = 9999))]
    pub from_year: Option<i32>,
    // Only items dated in or before this year.
    #[validate(range(min = 0, max = 9999))]
    pub to_year: Option<i32>,
    // Only items changed since this library version.
    pub since: Option<u64>,
}

/// One semantic search result.
#[derive(Debug, Clone, Serialize, JsonSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct SemanticHit {
    #[serde(flatten)]
    pub item: ItemSummary,
    /// Vector similarity of the best matching passage, 0–1 (absent when the index gave none; never 0 instead).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    /// The passage that matched best: from the abstract and metadata, or from the paper's own text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub passage: Option<String>,
    /// The PDF page of that passage, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page: Option<u32>,
}

/// Result of `zotero_semantic_search`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SemanticSearchOutput {
    pub total: usize,
    pub items: Vec<SemanticHit>,
    /// What to know about these results (an empty index, dropped matches, weak scores).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    pub min_score: f64,
    /// Results that came with a score (of all found).
    pub scored: usize,
    /// Scored results under `minScore`.
    pub below_threshold: usize,
    /// Results without a score.
    pub unscored: usize,
}

pub struct SemanticSearch;

impl Tool for SemanticSearch {
    type Input = SemanticSearchInput;
    type Output = SemanticSearchOutput;
    const SPEC: ToolSpec = ToolSpec::read(
        "zotero_semantic_search",
        "Search the library by meaning",
        "Finds items about a topic even in other words (meaning and keywords over metadata, abstract and PDF \
         text), each with the passage that matched and its page; scores are advisory. For exact words or authors, \
         zotero_search.",
    )
    .group(ToolGroup::Research)
    .ask_for_less("a smaller `limit`, or narrower filters (`tags`, `itemType`, `collectionKey`, `fromYear`, `toYear`)");

    fn shorten(output: &mut SemanticSearchOutput, fraction: f64) -> bool {
        let before = output.items.len();
        if shorten_list(&mut output.items, fraction).is_none() {
            return false;
        }
        output.total = output.items.len();
        let cut = format!("Only the {} closest of {before} results fit in one answer.", output.items.len());
        output.note = Some(match output.note.take() {
            Some(note) => format!("{cut} {note}"),
            None => cut,
        });
        true
    }

    fn render(output: &SemanticSearchOutput) -> String {
        let rows: Vec<_> = output
            .items
            .iter()
            .map(|hit| {
                let title = hit.item.title.clone().unwrap_or_else(|| "(untitled)".into());
                let mut tail = Vec::new();
                if let Some(score) = hit.score {
                    tail.push(format!("score: {score:.3}"));
                }
                if let Some(page) = hit.page {
                    tail.push(format!("p. {page}"));
                }
                (hit.item.clone(), title, tail)
            })
            .collect();
        let mut lines = vec![item_list(&rows)];
        let passages: Vec<String> = output
            .items
            .iter()
            .filter_map(|hit| {
                let passage = hit.passage.as_deref()?;
                let page = hit.page.map(|p| format!(" (p. {p})")).unwrap_or_default();
                Some(format!("- {}{page}: “{}”", hit.item.key, truncate(passage, 400)))
            })
            .collect();
        if !passages.is_empty() {
            lines.push(format!("\nMatching passages:\n{}", passages.join("\n")));
        }
        if let Some(note) = &output.note {
            lines.push(format!("\n> {note}"));
        }
        lines.join("\n")
    }

    async fn call(ctx: &RequestContext, input: SemanticSearchInput) -> Result<SemanticSearchOutput, ToolError> {
        indexed_library_only(ctx)?;
        let years = YearRange::new(input.from_year, input.to_year).checked()?;
        let index = ctx.semantic_index()?.ok_or_else(|| ToolError::Failed(UNBOUND.into()))?;
        let limit = input.limit.min(MAX_ITEMS) as usize;
        let narrowed = input.item_type.is_some()
            || input.tags.as_ref().is_some_and(|t| !t.is_empty())
            || input.collection_key.is_some()
            || input.since.is_some()
            || years.is_bounded();
        let options = QueryOptions {
            top_k: if narrowed { limit * FILTER_OVERSHOOT } else { limit },
            item_type: input.item_type.clone(),
            from_year: years.from(),
            to_year: years.to(),
        };
        let matches = index.query(&input.query, &options).await.map_err(|e| ToolError::Failed(e.to_string()))?;
        let mut notes = Vec::new();
        if matches.is_empty() {
            // An empty index and a query that found nothing look alike; the index's size tells them apart, and
            // the library's sync cursor whether this library was ever sent (the instance may hold others).
            let cursor = index::sync::state_key(index.instance());
            let never_synced = matches!(ctx.cache().get(&cursor).await, Ok(None));
            if never_synced || index.stats().await.map(|s| s.vectors).unwrap_or(0) == 0 {
                notes.push(
                    "The semantic index is empty for this library. It fills on the scheduled sync, or at once with \
                     zotero_reindex (full=true if a plain call reports that nothing changed)."
                        .to_owned(),
                );
            }
            return Ok(output(Vec::new(), notes, input.min_score));
        }
        let items = fetch_in_order(ctx, &input, &matches).await?;
        let kept: Vec<SemanticHit> = items
            .into_iter()
            .filter(|(item, _)| {
                in_collection(item, &input) && years.zero_unbounded().contains(item.data.date.as_deref())
            })
            .map(|(item, found)| SemanticHit {
                item: summarize(&item),
                score: found.score,
                passage: found.passage.clone(),
                page: found.page,
            })
            .collect();
        let dropped = matches.len() - kept.len();
        if dropped > 0 {
            notes.push(if narrowed {
                format!("{dropped} match(es) were dropped: they fall outside the active filters, or no longer exist in Zotero.")
            } else {
                format!("{dropped} match(es) no longer exist in Zotero and were dropped.")
            });
        }
        let hits: Vec<SemanticHit> = kept.into_iter().take(limit).collect();
        if hits.len() < limit && limit > index::MAX_SEMANTIC_ITEMS && dropped == 0 {
            notes.push(format!(
                "{} item(s) came back of the {limit} asked for: fewer matched, or the 50 passages a search returns \
                 came from fewer papers (several can come from one). Up to {} items are assured per search.",
                hits.len(),
                index::MAX_SEMANTIC_ITEMS
            ));
        }
        Ok(output(hits, notes, input.min_score))
    }
}

/// The matched items from Zotero, with the server-side filters, in the index's order; gone or filtered-out
/// keys are left out.
async fn fetch_in_order<'m>(
    ctx: &RequestContext,
    input: &SemanticSearchInput,
    matches: &'m [IndexMatch],
) -> Result<Vec<(ItemCard, &'m IndexMatch)>, ToolError> {
    let zotero = ctx.zotero()?;
    let keys: Vec<&str> = matches.iter().map(|m| m.item_key.as_str()).collect();
    let query =
        item_filters(input.item_type.as_deref(), input.tags.as_deref(), input.since).param("itemKey", keys.join(","));
    let page = zotero.item_cards(ItemScope::All, &query, keys.len()).await?;
    let mut found = Vec::new();
    for m in matches {
        if let Some(item) = page.items.iter().find(|i| i.key == m.item_key) {
            found.push((item.clone(), m));
        }
    }
    Ok(found)
}

fn in_collection(item: &ItemCard, input: &SemanticSearchInput) -> bool {
    let Some(collection) = &input.collection_key else { return true };
    item.data.collections.iter().any(|k| k == collection.as_str())
}

/// The result with its scoring report: weak and unscored results are flagged, never hidden.
fn output(items: Vec<SemanticHit>, mut notes: Vec<String>, min_score: f64) -> SemanticSearchOutput {
    let scores: Vec<f64> = items.iter().filter_map(|h| h.score).collect();
    let below: Vec<f64> = scores.iter().copied().filter(|s| *s < min_score).collect();
    let unscored = items.len() - scores.len();
    if !below.is_empty() {
        let weakest = below.iter().copied().fold(f64::INFINITY, f64::min);
        notes.push(format!(
            "{} of {} result(s) scored below the {min_score} relevance floor (weakest {weakest:.3}). Results are \
             ranked by closeness, not filtered by it, so these may be unrelated to the query — read their titles \
             and abstracts before relying on them.",
            below.len(),
            items.len()
        ));
    }
    if unscored > 0 {
        notes.push(format!(
            "{unscored} of {} result(s) came back without a similarity score, so the {min_score} floor could not be \
             applied to them.",
            items.len()
        ));
    }
    SemanticSearchOutput {
        total: items.len(),
        scored: scores.len(),
        below_threshold: below.len(),
        unscored,
        min_score,
        note: (!notes.is_empty()).then(|| notes.join(" ")),
        items,
    }
}

/// Arguments of `zotero_reindex`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReindexInput {
    /// Re-send every item and drop deleted ones' documents.
    #[serde(default)]
    #[schemars(default)]
    pub full: bool,
    /// Default: SYNC_BATCH_LIMIT (100).
    #[validate(range(min = 1, max = 2000))]
    pub limit: Option<u32>,
}

/// Result of `zotero_reindex`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReindexOutput {
    pub submitted: usize,
    pub removed: usize,
    /// Items still waiting to be sent (call again).
    pub remaining: usize,
    /// Documents AI Search is still indexing; null when that could not be read.
    pub backlog: Option<u64>,
    /// Documents AI Search failed to index; null when unknown.
    pub failed: Option<u64>,
    /// Every change up to the library's current version has been sent (the sync cursor advanced).
    pub complete: bool,
    /// Something about the AI Search instance to fix.
    pub warning: Option<String>,
    pub message: String,
    /// Zotero requests this call made.
    pub zotero_requests: usize,
}

pub struct Reindex;

impl Tool for Reindex {
    type Input = ReindexInput;
    type Output = ReindexOutput;
    const SPEC: ToolSpec = ToolSpec::write(
        "zotero_reindex",
        "Update the semantic index now",
        "Brings the index behind zotero_semantic_search up to date now, not at the next scheduled sync; `full` \
         re-sends everything. Up to `limit` items per call: call again until `complete`.",
    )
    .group(ToolGroup::Admin)
    .changes_only_derived_data()
    .idempotent();

    fn render(output: &ReindexOutput) -> String {
        let unknown = |n: Option<u64>| n.map_or_else(|| "unknown".to_owned(), |n| n.to_string());
        let mut lines = vec![
            output.message.clone(),
            format!("- submitted: {}", output.submitted),
            format!("- removed: {}", output.removed),
            format!("- still queued locally: {}", output.remaining),
            format!("- indexing backlog: {}", unknown(output.backlog)),
        ];
        if output.failed != Some(0) {
            lines.push(format!("- failed to index: {}", unknown(output.failed)));
        }
        if !output.complete {
            lines.push("- call again to continue".into());
        }
        if let Some(warning) = &output.warning {
            lines.push(format!("\n> {warning}"));
        }
        lines.join("\n")
    }

    async fn call(ctx: &RequestContext, input: ReindexInput) -> Result<ReindexOutput, ToolError> {
        indexed_library_only(ctx)?;
        let report = match run_sync(ctx, input.full, input.limit.map(|l| l as usize)).await {
            Ok(report) => report,
            Err(SyncRunError::Sync(e)) => {
                return Err(ToolError::Failed(format!("{e}. What was sent before the failure stays sent; call again.")))
            }
            // The deployment's settings: the message names the one to change.
            Err(setup) => return Err(ToolError::Failed(setup.to_string())),
        };
        Ok(ReindexOutput {
            submitted: report.submitted,
            removed: report.removed,
            remaining: report.remaining,
            backlog: report.backlog,
            failed: report.failed,
            complete: report.complete,
            warning: report.warning,
            message: report.message,
            zotero_requests: report.subrequests,
        })
    }
}

/// The semantic index holds the configured library and those `INDEX_LIBRARIES` names: a call for another
/// library is refused rather than answered from an index that does not hold it.
fn indexed_library_only(ctx: &RequestContext) -> Result<(), ToolError> {
    let Some(selected) = ctx.selected_library() else { return Ok(()) };
    if ctx.services().indexed_libraries()?.contains(&selected.id) {
        return Ok(());
    }
    Err(ToolError::Failed(format!(
        "the semantic index does not hold library {}: add it to INDEX_LIBRARIES (the scheduled sync then indexes \
         it), or use zotero_search with the same `library` to search it by words",
        selected.id
    )))
}
