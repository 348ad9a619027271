//! Saved searches for the tools: listed with their conditions (beside the collection tree in
//! `zotero_list_collections`, as Zotero's left pane shows them) and run by `zotero_search`'s `savedSearch`.
//! Zotero's Web API stores saved searches but never runs them, so a run evaluates the conditions here
//! (`zotero_mcp_core::zotero::saved_search`), refusing a search with a condition it cannot evaluate rather than
//! answering a different question.

use schemars::JsonSchema;
use serde::Serialize;
use zotero_mcp_core::mirror::saved::MirrorItems;
use zotero_mcp_core::mirror::store;
use zotero_mcp_core::zotero::{
    Evaluated, EvaluationLimits, ItemCard, LocalItems, ObjectKey, SavedSearch, SavedSearchError, SearchPlan,
    ZoteroClient, ZoteroObject,
};

use super::mirrored::{self, MirrorOut, Mirrored};
use crate::context::RequestContext;
use crate::mcp::ToolError;

/// What one run may read: within a Worker's 50 subrequests on the free plan, with room for the call's others. A
/// search built in Zotero's dialog rarely has twenty conditions; a hundred, each decided for up to 3000 items,
/// keeps one run's work bounded however the search was made.
pub const LIMITS: EvaluationLimits =
    EvaluationLimits { max_items: 3000, max_requests: 40, max_fulltext_reads: 25, max_conditions: 100 };

/// Conditions listed per saved search; beyond them the listing says how many there are (`conditionsTotal`).
pub const MAX_LISTED_CONDITIONS: usize = 25;

/// Saved searches read for a listing or to find one by name: five requests. A library with more (none that a
/// person made by hand) is listed in part, saying how many it has.
pub const MAX_SAVED_SEARCHES: usize = 500;

/// One condition, as Zotero keeps it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ConditionOut {
    /// What is tested: title, creator, tag, collection, itemType, date, fulltextContent…, or a flag such as
    /// joinMode, noChildren, recursive.
    pub condition: String,
    pub operator: String,
    pub value: String,
}

/// One saved search.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SavedSearchOut {
    pub key: String,
    pub name: String,
    /// Its conditions in Zotero's order, the first 25 of them.
    pub conditions: Vec<ConditionOut>,
    /// How many conditions it has, when that is more than `conditions` lists.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conditions_total: Option<usize>,
    /// Whether zotero_search can run it (`savedSearch`); when not, `unsupported` says which conditions stop it.
    pub runnable: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unsupported: Vec<String>,
}

/// The saved searches as Markdown lines, under the collection tree.
pub fn searches_markdown(searches: &[SavedSearchOut]) -> String {
    let lines: Vec<String> = searches
        .iter()
        .map(|search| {
            let conditions: Vec<String> =
                search.conditions.iter().map(|c| format!("{} {} {:?}", c.condition, c.operator, c.value)).collect();
            let mut line = format!("- {} (key: {}): {}", search.name, search.key, conditions.join("; "));
            if let Some(total) = search.conditions_total {
                line.push_str(&format!(
                    "; \u{2026} {} more of its {total} conditions not listed",
                    total - conditions.len()
                ));
            }
            if !search.runnable {
                line.push_str(&format!(" — cannot be run here: {}", search.unsupported.join("; ")));
            }
            line
        })
        .collect();
    format!("Saved searches (run one with zotero_search `savedSearch`):\n{}", lines.join("\n"))
}

/// A saved search as listed, with whether it can be run.
pub fn listed(search: &SavedSearch) -> SavedSearchOut {
    let unsupported = match SearchPlan::new(search).map(|plan| plan.check_size(&LIMITS)) {
        Ok(Ok(())) => Vec::new(),
        Ok(Err(too_large)) => vec![too_large.to_string()],
        Err(refused) => {
            refused.conditions.iter().map(|c| format!("{} {} ({})", c.condition, c.operator, c.reason)).collect()
        }
    };
    let total = search.conditions.len();
    SavedSearchOut {
        key: search.key.clone(),
        name: search.name.clone(),
        conditions_total: (total > MAX_LISTED_CONDITIONS).then_some(total),
        conditions: search
            .conditions
            .iter()
            .take(MAX_LISTED_CONDITIONS)
            .map(|c| ConditionOut {
                condition: c.condition.clone(),
                operator: c.operator.clone(),
                value: c.value.clone(),
            })
            .collect(),
        runnable: unsupported.is_empty(),
        unsupported,
    }
}

/// The saved search `wanted` names: its key, or its name (case and surrounding spaces ignored) when one search
/// has it.
pub async fn find(zotero: &ZoteroClient, wanted: &str) -> Result<SavedSearch, ToolError> {
    let (searches, total) = zotero.saved_searches_up_to(MAX_SAVED_SEARCHES).await?;
    let unread = total.filter(|total| *total > searches.len() as u64);
    // A key beyond the searches read is asked for by itself.
    if let (Some(_), Ok(key)) = (unread, ObjectKey::parse(wanted.trim())) {
        if !searches.iter().any(|s| s.key == wanted.trim()) {
            if let Ok(search) = zotero.saved_search(&key).await {
                return Ok(search);
            }
        }
    }
    pick(&searches, wanted, unread)
}

/// The search of `searches` that `wanted` names (see [`find`]); `unread` is how many the library has when some
/// were not read.
fn pick(searches: &[SavedSearch], wanted: &str, unread: Option<u64>) -> Result<SavedSearch, ToolError> {
    let wanted = wanted.trim();
    if let Some(search) = searches.iter().find(|s| s.key == wanted) {
        return Ok(search.clone());
    }
    let lower = wanted.to_lowercase();
    let named: Vec<&SavedSearch> = searches.iter().filter(|s| s.name.trim().to_lowercase() == lower).collect();
    match named.as_slice() {
        [one] => Ok((*one).clone()),
        [] => {
            let known: Vec<String> = searches.iter().take(20).map(|s| format!("{:?} ({})", s.name, s.key)).collect();
            let known = if known.is_empty() { "none".to_owned() } else { known.join(", ") };
            let searched = match unread {
                Some(total) => format!(
                    " (of its {total} saved searches the {MAX_SAVED_SEARCHES} changed last were searched by name: \
                     give the key of another)"
                ),
                None => String::new(),
            };
            Err(ToolError::Failed(format!(
                "no saved search is called or keyed {:?} in this library{searched} (its saved searches: {known}); \
                 zotero_list_collections lists them",
                wanted.chars().take(100).collect::<String>()
            )))
        }
        many => Err(ToolError::Failed(format!(
            "{} saved searches are called {:?}; give the key instead (zotero_list_collections lists them)",
            many.len(),
            wanted.chars().take(100).collect::<String>()
        ))),
    }
}

/// The saved search `wanted` names, run: over the library's complete mirror where there is one (the search and
/// its items read there, for the mirror's one freshness request; full text from Zotero), else found and run
/// through Zotero. With the mirror's state when it answered.
pub async fn find_and_run(
    ctx: &RequestContext,
    zotero: &ZoteroClient,
    wanted: &str,
) -> Result<(SavedSearch, Evaluated, Option<MirrorOut>), ToolError> {
    if let Mirrored::Answer(opened, status) = mirrored::opened(ctx).await {
        if let Ok(objects) = store::searches(opened.db, &opened.library).await {
            let searches: Vec<SavedSearch> = objects
                .iter()
                .filter_map(|object| serde_json::to_value(object).ok())
                .filter_map(|json| SavedSearch::from_api(&json))
                .collect();
            let search = pick(&searches, wanted, None)?;
            let local = MirrorItems { db: opened.db, library: &opened.library };
            let evaluated = evaluate(ctx, zotero, &search, Some(&local)).await?;
            return Ok((search, evaluated, Some(status)));
        }
    }
    let search = find(zotero, wanted).await?;
    let evaluated = run(ctx, zotero, &search).await?;
    Ok((search, evaluated, None))
}

/// What one run over the library mirror may read: the mirror's reads cost no request, so more items
/// may be decided, up to what a Worker holds in memory at once (each is held whole while the search is decided).
pub const MIRROR_LIMITS: EvaluationLimits = EvaluationLimits { max_items: 10_000, ..LIMITS };

/// Evaluates the search over the context's library through Zotero, or says why it cannot be.
pub async fn run(ctx: &RequestContext, zotero: &ZoteroClient, search: &SavedSearch) -> Result<Evaluated, ToolError> {
    evaluate(ctx, zotero, search, None).await
}

/// Evaluates the search, reading its items from `local` (the library mirror, within [`MIRROR_LIMITS`]) or from
/// Zotero (within [`LIMITS`]).
async fn evaluate(
    ctx: &RequestContext,
    zotero: &ZoteroClient,
    search: &SavedSearch,
    local: Option<&dyn LocalItems>,
) -> Result<Evaluated, ToolError> {
    let plan = SearchPlan::new(search).map_err(|refused| ToolError::Failed(refused.to_string()))?;
    let now_ms = ctx.services().clock().now_ms();
    let limits = if local.is_some() { &MIRROR_LIMITS } else { &LIMITS };
    plan.evaluate_over(zotero, local, limits, now_ms).await.map_err(|error| match error {
        SavedSearchError::Zotero(error) => ToolError::from(error),
        other => ToolError::Failed(other.to_string()),
    })
}

/// The item as the summary formatter reads it (through JSON bytes: the card reader for text is in the build
/// already, a second one for `Value` would cost kilobytes). A malformed item keeps its key and version.
pub fn card(object: &ZoteroObject) -> ItemCard {
    serde_json::to_vec(object).ok().and_then(|bytes| serde_json::from_slice(&bytes).ok()).unwrap_or_else(|| ItemCard {
        key: object.key.clone(),
        version: object.version,
        ..ItemCard::default()
    })
}
