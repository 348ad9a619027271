//! Work done on a schedule rather than for a request: the Worker's cron (`[triggers] crons` in wrangler.toml)
//! runs [`sync_semantic_index`], which keeps the AI Search index in step with the library. The same sync runs
//! on demand through `zotero_reindex`; `SYNC_BATCH_LIMIT` and `SYNC_SUBREQUEST_BUDGET` bound both.
//!
//! A run logs one summary line (`ai search sync: …`) through the `log` facade, a warning line when the
//! instance needs the operator's attention (its chunk size), and an error line when it failed. A failed run
//! loses nothing: the cursor in `CACHE_KV` moves only when a cycle has finished, so the next run takes up the
//! same cycle again.

use zotero_mcp_core::index::{self, IndexError, SyncReport};

use crate::app::App;
use crate::context::RequestContext;
use crate::grant::Grant;

/// The grant a scheduled run acts under: it reads the library and writes only the index (derived data).
const SCHEDULED: &str = "scheduled-sync";

/// One scheduled sync run, logged; returns its report (or why it failed) for the caller and tests.
pub async fn sync_semantic_index(app: &App) -> Result<SyncReport, String> {
    let ctx = RequestContext::new(Grant::read_only(SCHEDULED), app.config.clone(), app.platform.clone());
    let result = run(&ctx).await;
    match &result {
        Ok(report) => {
            log::info!(target: "sync", "ai search sync: {}", report.message);
            if let Some(warning) = &report.warning {
                log::warn!(target: "sync", "ai search sync: {warning}");
            }
        }
        Err(error) => log::error!(target: "sync", "ai search sync failed: {error}"),
    }
    result
}

async fn run(ctx: &RequestContext) -> Result<SyncReport, String> {
    run_sync(ctx, false, None).await.map_err(|e| e.to_string())
}

/// Why a sync run did not finish.
#[derive(Debug, thiserror::Error)]
pub enum SyncRunError {
    /// The deployment cannot run it (an unusable `AI_SEARCH_INSTANCE`, Zotero or WebDAV settings).
    #[error("{0}")]
    Setup(String),
    /// It failed part-way; what it sent stays sent, and the cursor did not move.
    #[error(transparent)]
    Sync(#[from] IndexError),
}

/// One sync run with the deployment's settings — the cron's and `zotero_reindex`'s alike — `full` and `limit`
/// as asked (the batch size defaults to `SYNC_BATCH_LIMIT` everywhere: the TypeScript server ignored it on
/// demand, Q9). A paper without text in Zotero's index is read from the library's file store when it has one.
pub async fn run_sync(ctx: &RequestContext, full: bool, limit: Option<usize>) -> Result<SyncReport, SyncRunError> {
    let index = ctx.semantic_index().map_err(SyncRunError::Setup)?;
    let zotero = ctx.zotero().map_err(|e| SyncRunError::Setup(e.to_string()))?;
    let mut options = ctx.sync_options(full, limit);
    // The file store only for a run that may read papers. Zotero Storage needs the library's id, which may
    // cost the key lookup the run would otherwise make (and count) itself: counted here instead.
    let files = if index.is_some() && options.full_text {
        let lookup = zotero.needs_key_lookup();
        let files = ctx.files().await.map_err(|e| SyncRunError::Setup(e.to_string()))?;
        if lookup && !zotero.needs_key_lookup() {
            options.subrequest_budget = options.subrequest_budget.saturating_sub(1);
        }
        files
    } else {
        None
    };
    Ok(index::sync_with_files(zotero, index, ctx.cache(), &options, files).await?)
}
