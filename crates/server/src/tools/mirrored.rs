//! Whole-library questions answered from the library mirror (`zotero_mcp_core::mirror`) where the runtime has
//! one: the mirror is brought forward within the call's share of requests first (one request, a 304, when
//! nothing changed), and each answer says how far it is (`mirror` in its structured content), so an answer over a
//! mirror still filling is never taken for one over the whole library.

use futures_util::future::join;
use schemars::JsonSchema;
use serde::Serialize;
use zotero_mcp_core::calendar::iso_time;
use zotero_mcp_core::mirror::{self, store, MirrorStatus, SqlDb, SqlError};
use zotero_mcp_core::zotero::{Tag, ZoteroObject};

use crate::context::RequestContext;

pub use zotero_mcp_core::mirror::CALL_BUDGET;

/// How far the library mirror an answer came from is.
#[derive(Debug, Clone, Serialize, JsonSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct MirrorOut {
    /// The library version the mirror is complete at (while filling, the version it fills to).
    pub library_version: u64,
    /// Items it holds.
    pub items: u64,
    /// Whether it holds the whole library: when false, the answer came from Zotero directly, over part of it.
    pub complete: bool,
    /// When it was last found in step with Zotero (UTC); absent before that.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub synced_at: Option<String>,
}

impl From<&MirrorStatus> for MirrorOut {
    fn from(status: &MirrorStatus) -> Self {
        Self {
            library_version: status.library_version,
            items: status.items,
            complete: status.complete,
            synced_at: (status.synced_at > 0).then(|| iso_time(status.synced_at)),
        }
    }
}

/// What the mirror gave a whole-library question.
pub enum Mirrored<T> {
    /// No mirror here: ask Zotero, as without one.
    Absent,
    /// The answer, from a complete mirror.
    Answer(T, MirrorOut),
    /// The mirror is still filling: ask Zotero, and say how far it is.
    Partial(MirrorOut),
    /// The mirror failed: ask Zotero, and say why in one line.
    Failed(String),
}

/// The library's top-level items not in the trash (of `item_type` when given) that share an identifier or a
/// title key with another, and how many top-level items it has in all, from the mirror brought forward first.
pub async fn duplicate_candidates(ctx: &RequestContext, item_type: Option<&str>) -> Mirrored<(u64, Vec<ZoteroObject>)> {
    read(ctx, |db, library| async move { store::duplicate_candidates(db, &library, item_type).await }).await
}

/// The library's collections (with `meta.numItems` and `meta.numCollections`), from the mirror brought forward
/// first.
pub async fn collections(ctx: &RequestContext) -> Mirrored<Vec<ZoteroObject>> {
    read(ctx, |db, library| async move { store::collections(db, &library).await }).await
}

/// The library's collections (as [`collections`]) and its saved searches, the most recently changed first,
/// from the mirror brought forward once.
pub async fn collections_and_searches(ctx: &RequestContext) -> Mirrored<(Vec<ZoteroObject>, Vec<ZoteroObject>)> {
    read(ctx, |db, library| async move {
        Ok((store::collections(db, &library).await?, store::searches(db, &library).await?))
    })
    .await
}

/// Every tag of the library with its item count, from the mirror brought forward first.
pub async fn tags(ctx: &RequestContext) -> Mirrored<Vec<Tag>> {
    read(ctx, |db, library| async move { store::tags(db, &library).await }).await
}

/// The library's regular items outside the trash sharing a match key with `probes`
/// (`zotero_mcp_core::mirror::matching::probes_of`), from the mirror brought forward first.
pub async fn reference_candidates(ctx: &RequestContext, probes: &[String]) -> Mirrored<Vec<ZoteroObject>> {
    read(ctx, |db, library| async move { store::reference_candidates(db, &library, probes).await }).await
}

/// The call's library in its complete mirror, brought forward first, for an answer that takes several queries
/// (`zotero_search` reads a page, then the parents of what Zotero's full-text index found).
pub async fn opened(ctx: &RequestContext) -> Mirrored<Opened<'_>> {
    read(ctx, |db, library| async move { Ok(Opened { db, library }) }).await
}

/// Runs `answer` over the call's library in its complete mirror, as [`read`] runs a query (meanwhile the mirror
/// is brought forward, where this isolate last found it complete), for an answer that makes several queries and
/// requests of its own (`zotero_search`); its outcome is the caller's to read.
pub async fn answer<'a, T, F, Fut>(ctx: &'a RequestContext, answer: F) -> Mirrored<T>
where
    F: Fn(Opened<'a>) -> Fut,
    Fut: std::future::Future<Output = T> + 'a,
{
    read(ctx, |db, library| {
        let answered = answer(Opened { db, library });
        async move { Ok(answered.await) }
    })
    .await
}

/// A complete library mirror, in step with Zotero as of this call.
pub struct Opened<'a> {
    pub db: &'a dyn SqlDb,
    /// The library its queries name (`users/<id>`, `groups/<id>`).
    pub library: String,
}

thread_local! {
    /// The libraries whose mirror this isolate (or thread) last found complete.
    static FOUND_COMPLETE: std::cell::RefCell<std::collections::HashSet<String>> = Default::default();
}

/// Brings the mirror forward, then runs `query` on it for the call's library when it is complete.
///
/// Where the mirror was complete at this isolate's last call, the query is run while the mirror is brought
/// forward (on its rows as they stood), and its answer kept when that changed no row: most calls find the mirror
/// in step, and then wait for Zotero's answer and the database's at the same time. When rows changed, the query
/// runs again on them.
async fn read<'a, T, F, Fut>(ctx: &'a RequestContext, query: F) -> Mirrored<T>
where
    F: Fn(&'a dyn SqlDb, String) -> Fut,
    Fut: std::future::Future<Output = Result<T, SqlError>> + 'a,
{
    let Some(db) = ctx.services().platform().mirror_db.as_deref() else { return Mirrored::Absent };
    let Ok(zotero) = ctx.zotero() else { return Mirrored::Absent };
    if !zotero.caps().deletions {
        // Zotero Desktop's local API reads its own database, whole and at once, and has no `/deleted` to keep a
        // copy in step with: there the library needs no mirror.
        return Mirrored::Absent;
    }
    let library = match mirror::library_of(zotero).await {
        Ok(library) => library,
        Err(error) => return Mirrored::Failed(format!("The library mirror could not be read ({error}).")),
    };
    let now = ctx.services().clock().now_ms();
    // Only where this isolate last found the mirror complete: a mirror still filling would be read for nothing
    // (D1 counts the rows read), and a whole-library scan twice is only paid when the library changed.
    let speculate = FOUND_COMPLETE.with(|found| found.borrow().contains(&library));
    let early = async {
        match speculate {
            true => Some(query(db, library.clone()).await),
            false => None,
        }
    };
    let (advanced, early) = join(mirror::advance_telling(db, zotero, CALL_BUDGET, now), early).await;
    let (status, changed) = match advanced {
        Ok(advanced) => advanced,
        Err(error) => {
            return Mirrored::Failed(format!("The library mirror could not be brought up to date ({error})."))
        }
    };
    FOUND_COMPLETE.with(|found| match status.complete {
        true => found.borrow_mut().insert(library.clone()),
        false => found.borrow_mut().remove(&library),
    });
    if !status.complete {
        return Mirrored::Partial(MirrorOut::from(&status));
    }
    // An early read that failed is tried again too.
    let found = match early {
        Some(Ok(found)) if !changed => Ok(found),
        _ => query(db, library).await,
    };
    match found {
        Ok(found) => Mirrored::Answer(found, MirrorOut::from(&status)),
        Err(error) => Mirrored::Failed(format!("The library mirror could not be read ({error}).")),
    }
}
