//! Work done on a schedule rather than for a request: the Worker's cron (`[triggers] crons` in wrangler.toml)
//! runs [`sync_semantic_index`], which keeps the AI Search index in step with the library. The same sync runs
//! on demand through `zotero_reindex`; `SYNC_BATCH_LIMIT` and `SYNC_SUBREQUEST_BUDGET` bound both.
//!
//! The index may hold several libraries (`INDEX_LIBRARIES` beside the configured one): a scheduled run syncs
//! them one after the other within one budget, each with its own cursor (the configured library's under the
//! TypeScript project's key, the others' under their `lib:<path>:` prefix), starting one library further on
//! each run.
//!
//! A run logs one summary line per library (`ai search sync: …`) through the `log` facade, a warning line when
//! the instance needs the operator's attention (its chunk size), and an error line when it failed. A failed run
//! loses nothing: the cursor in `CACHE_KV` moves only when a cycle has finished, so the next run takes up the
//! same cycle again.

use zotero_mcp_core::index::{self, IndexError, SyncReport, STATE_PREFIX};
use zotero_mcp_core::mirror::{self, MirrorError, MirrorStatus};
use zotero_mcp_core::zotero::{LibraryId, ZoteroError};

use crate::app::App;
use crate::call::{Session, Unresolved};
use crate::config::IndexSetupError;
use crate::context::{self, FilesUnavailable, RequestContext};
use crate::grant::Grant;
use crate::library::LibraryRefused;

/// The grant a scheduled run acts under: it reads the library and writes only the index (derived data).
const SCHEDULED: &str = "scheduled-sync";

/// Below this many requests left, a scheduled run starts no further library: a cycle's first step costs 2–4.
const MIN_REQUESTS_PER_LIBRARY: usize = 4;

/// What one scheduled run did, library by library.
#[derive(Debug)]
pub struct ScheduledSync {
    /// The libraries the run synced, in the order it took them; `None` is the configured library.
    pub runs: Vec<LibraryRun>,
    /// The indexed libraries the run had no budget left for: the next runs start elsewhere in the rotation.
    pub skipped: Vec<Option<LibraryId>>,
    /// Zotero requests the run made (or, for a library whose run failed, the budget it had).
    pub requests: usize,
}

/// One library's part of a scheduled run.
#[derive(Debug)]
pub struct LibraryRun {
    /// `None` for the configured library.
    pub library: Option<LibraryId>,
    pub result: Result<SyncReport, SyncRunError>,
}

impl ScheduledSync {
    /// Every indexed library ran and has sent every change.
    pub fn complete(&self) -> bool {
        self.skipped.is_empty() && self.runs.iter().all(|run| run.result.as_ref().is_ok_and(|r| r.complete))
    }

    /// The configured library's report, when it ran.
    pub fn configured(&self) -> Option<&Result<SyncReport, SyncRunError>> {
        self.runs.iter().find(|run| run.library.is_none()).map(|run| &run.result)
    }
}

/// One scheduled sync run over every indexed library (the configured one and `INDEX_LIBRARIES`), logged: the
/// libraries share the run's `SYNC_SUBREQUEST_BUDGET`, each with its own cursor. Round-robin: each run starts
/// one library further on than the last (`aisearch:sync-state-rotation:<instance>` in `CACHE_KV`), so a library with
/// a long queue cannot starve the others.
pub async fn sync_semantic_index(app: &App) -> ScheduledSync {
    let libraries: Vec<Option<LibraryId>> = match &app.config.index_libraries {
        Ok(others) => {
            let configured = app.config.configured_library();
            std::iter::once(None)
                .chain(others.iter().filter(|id| Some(**id) != configured).map(|id| Some(*id)))
                .collect()
        }
        Err(why) => {
            log::error!(target: "sync", "ai search sync failed: {why}");
            let result = Err(why.clone().into());
            return ScheduledSync {
                runs: vec![LibraryRun { library: None, result }],
                skipped: Vec::new(),
                requests: 0,
            };
        }
    };
    let rotation = rotation_key(app);
    let start = match (&rotation, libraries.len()) {
        (Some(key), 2..) => {
            app.platform.cache_kv.get(key).await.ok().flatten().and_then(|v| v.parse().ok()).unwrap_or(0)
        }
        _ => 0,
    };
    let mut left = app.config.sync_subrequest_budget;
    let mut outcome = ScheduledSync { runs: Vec::new(), skipped: Vec::new(), requests: 0 };
    for turn in 0..libraries.len() {
        let library = libraries[(start + turn) % libraries.len()];
        if turn > 0 && left < MIN_REQUESTS_PER_LIBRARY {
            outcome.skipped.push(library);
            continue;
        }
        let (result, used) = sync_one(app, library, left).await;
        left = left.saturating_sub(used);
        log_outcome(library, &result, libraries.len() > 1);
        outcome.runs.push(LibraryRun { library, result });
    }
    outcome.requests = app.config.sync_subrequest_budget.saturating_sub(left);
    if let (Some(key), 2..) = (&rotation, libraries.len()) {
        let next = ((start + 1) % libraries.len()).to_string();
        // A lost write only repeats this run's order next time.
        let _ = app.platform.cache_kv.put(key, &next, zotero_mcp_core::platform::KvWrite::Forever).await;
    }
    outcome
}

/// Zotero requests a scheduled invocation makes in all, the semantic index's and the library mirror's together:
/// below the 50 subrequests a Worker on the free plan may make.
pub const SCHEDULED_REQUESTS: usize = 45;

/// Brings the configured library's mirror forward in a scheduled run, with what the run has left of
/// [`SCHEDULED_REQUESTS`] after `spent` (at most a call's share, [`mirror::CALL_BUDGET`]: the
/// mirror's two database statements a page count against D1's 50 queries too), logged. `None` without a mirror
/// or with no requests left.
pub async fn advance_mirror(app: &App, spent: usize) -> Option<Result<MirrorStatus, MirrorError>> {
    let db = app.platform.mirror_db.clone()?;
    let budget = SCHEDULED_REQUESTS.saturating_sub(spent).min(mirror::CALL_BUDGET);
    if budget == 0 {
        return None;
    }
    let session = Session::new(Grant::read_only(SCHEDULED), app.config.clone(), app.platform.clone());
    let ctx = context::reading(&session, SCHEDULED, None).await.ok()?;
    let zotero = ctx.zotero().ok()?;
    let result = mirror::advance(db.as_ref(), zotero, budget, app.platform.clock.now_ms()).await;
    match &result {
        Ok(status) => log::info!(
            target: "sync",
            "library mirror: {} items at version {}{}",
            status.items,
            status.library_version,
            if status.complete { "" } else { ", still filling" }
        ),
        Err(error) => log::warn!(target: "sync", "library mirror: {error}"),
    }
    Some(result)
}

/// Where the rotation's next start is kept, per instance.
fn rotation_key(app: &App) -> Option<String> {
    app.config.index.as_ref().ok().map(|settings| format!("{STATE_PREFIX}-rotation:{}", settings.instance))
}

/// One library's sync within `budget` Zotero requests; returns its result and the requests it made.
async fn sync_one(app: &App, library: Option<LibraryId>, budget: usize) -> (Result<SyncReport, SyncRunError>, usize) {
    let session = Session::new(Grant::read_only(SCHEDULED), app.config.clone(), app.platform.clone());
    // A chosen library costs one request: the key's access, read to check it still reaches the library.
    let selecting = usize::from(library.is_some());
    let ctx = match context::reading(&session, SCHEDULED, library.map(|id| id.path())).await {
        Ok(ctx) => ctx,
        Err(Unresolved::Library(error)) => return (Err(error.into()), selecting),
        Err(Unresolved::Desktop(error)) => return (Err(SyncRunError::Zotero(error)), selecting),
    };
    let mut options = ctx.services().sync_options(false, None);
    options.subrequest_budget = budget.saturating_sub(selecting);
    match sync_with(&ctx, options).await {
        Ok(report) => {
            let used = selecting + report.subrequests;
            (Ok(report), used)
        }
        // How many requests a failed run made is not known: the whole budget counts as spent, so the
        // invocation stays within the platform's limit; the other libraries' turns come in the next runs.
        Err(error) => (Err(error), budget),
    }
}

fn log_outcome(library: Option<LibraryId>, result: &Result<SyncReport, SyncRunError>, several: bool) {
    let which = match (library, several) {
        (Some(id), _) => format!(" ({id})"),
        (None, true) => " (configured library)".to_owned(),
        (None, false) => String::new(),
    };
    match result {
        Ok(report) => {
            log::info!(target: "sync", "ai search sync{which}: {}", report.message);
            if let Some(warning) = &report.warning {
                log::warn!(target: "sync", "ai search sync{which}: {warning}");
            }
        }
        Err(error) => log::error!(target: "sync", "ai search sync{which} failed: {error}"),
    }
}

/// Why a sync run did not finish.
#[derive(Debug, thiserror::Error)]
pub enum SyncRunError {
    /// The deployment cannot reach Zotero (its key or library settings); the message names the setting.
    #[error("{0}")]
    Zotero(ZoteroError),
    /// The library's file store cannot be set up (WebDAV or Zotero Storage settings).
    #[error("{0}")]
    Files(FilesUnavailable),
    /// The index's own settings (`AI_SEARCH_INSTANCE`, `INDEX_LIBRARIES`) are unusable.
    #[error(transparent)]
    Index(#[from] IndexSetupError),
    /// The library of an `INDEX_LIBRARIES` entry cannot be chosen (the key no longer reaches it).
    #[error(transparent)]
    Library(#[from] LibraryRefused),
    /// It failed part-way; what it sent stays sent, and the cursor did not move.
    #[error(transparent)]
    Sync(#[from] IndexError),
}

/// One sync run with the deployment's settings — the cron's and `zotero_reindex`'s alike — `full` and `limit`
/// as asked (the batch size defaults to `SYNC_BATCH_LIMIT` everywhere: the TypeScript server ignored it on
/// demand, Q9). A paper without text in Zotero's index is read from the library's file store when it has one.
pub async fn run_sync(ctx: &RequestContext, full: bool, limit: Option<usize>) -> Result<SyncReport, SyncRunError> {
    sync_with(ctx, ctx.services().sync_options(full, limit)).await
}

/// One sync run of the context's library with these options.
async fn sync_with(ctx: &RequestContext, mut options: index::SyncOptions) -> Result<SyncReport, SyncRunError> {
    let index = ctx.semantic_index()?;
    if let Some(index) = index {
        // A new (or recreated) instance holds nothing: every indexed library's cursor is forgotten, or the
        // libraries synced after this one would trust cursors that describe the old instance.
        if index.ensure().await?.created {
            forget_index_cursors(ctx, index.instance()).await;
            options.full = true;
        }
    }
    let zotero = ctx.zotero().map_err(SyncRunError::Zotero)?;
    // The file store only for a run that may read papers. Zotero Storage needs the library's id, which may
    // cost the key lookup the run would otherwise make (and count) itself: counted here instead.
    let files = if index.is_some() && options.full_text {
        let lookup = zotero.needs_key_lookup();
        let files = ctx.files().await.map_err(SyncRunError::Files)?;
        if lookup && !zotero.needs_key_lookup() {
            options.subrequest_budget = options.subrequest_budget.saturating_sub(1);
        }
        files
    } else {
        None
    };
    Ok(index::sync_with_files(zotero, index, ctx.cache(), &options, files).await?)
}

/// Forgets the sync cursors of every indexed library (the configured one's and those under `lib:<path>:`), so
/// each starts a full cycle: for an instance that was just created. A failed delete only costs that library a
/// full cycle it would have needed anyway.
async fn forget_index_cursors(ctx: &RequestContext, instance: &str) {
    let cursor = index::sync::state_key(instance);
    let texts = index::sync::texts_key(instance);
    let services = ctx.services();
    let kv = &services.platform().cache_kv;
    for key in [&cursor, &texts] {
        let _ = kv.delete(key).await;
    }
    let configured = services.configured_library();
    for library in services.indexed_libraries().unwrap_or_default().iter().filter(|id| Some(**id) != configured) {
        for key in [&cursor, &texts] {
            let _ = kv.delete(&format!("lib:{library}:{key}")).await;
        }
    }
}
