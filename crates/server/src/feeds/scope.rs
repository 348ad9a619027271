//! What a feed link serves, read whole: from the library mirror when it is complete (in pages, the citation keys
//! first), else from Zotero within the request's budget. Never a part of the scope presented as the whole.

use std::collections::{HashMap, HashSet};

use zotero_mcp_core::bibliography::{self, Format, Writer};
use zotero_mcp_core::mirror::feed::{feed_key_parts, feed_page, FeedItems};
use zotero_mcp_core::mirror::saved::MirrorItems;
use zotero_mcp_core::mirror::store;
use zotero_mcp_core::zotero::{
    LocalItems, ObjectKey, Query, SavedSearch, SavedSearchError, SearchPlan, ZoteroClient, ZoteroError, ZoteroObject,
};

use crate::app::App;
use crate::call::{Plan, Session, Unresolved};
use crate::context::RequestContext;
use crate::feed_links::FeedLink;
use crate::grant::Grant;
use crate::tools::mirrored::{self, Mirrored, Opened};
use crate::tools::saved_searches;

/// The most items a feed is read live with, without a mirror: 40 pages of 100, inside a Worker's 50
/// subrequests with room for the freshness check and the collection tree.
pub const LIVE_MAX: usize = 4000;
/// The most collections read live to find a collection's subcollections (20 pages).
const LIVE_COLLECTIONS: usize = 2000;
/// The most requests a live read may send in all (the collection tree and each subcollection cost one or more).
const LIVE_REQUESTS: usize = 45;
/// When to come back while the mirror fills: the scheduled sync and every call advance it.
const FILLING_RETRY_SECS: u64 = 300;

/// Why a feed is not served now.
pub enum NotNow {
    /// The mirror is still being filled: come back in this many seconds.
    Filling(u64),
    /// The scope is larger than can be read live and there is no mirror: the text says what to do.
    TooLarge(String),
    /// What it names is gone (the collection or saved search was deleted).
    Gone,
    /// Reading failed; the cause, for the log only.
    Failed(String),
}

/// Where the feed is read from, with the library version it is read at.
pub enum Source<'a> {
    Mirror(Opened<'a>, u64),
    Live(u64),
}

impl Source<'_> {
    pub fn version(&self) -> u64 {
        match self {
            Source::Mirror(_, version) | Source::Live(version) => *version,
        }
    }
}

/// The context of a feed's read: a reading call on the link's library, with no grant beyond reading.
pub async fn open(app: &App, link: &FeedLink) -> Result<RequestContext, Unresolved> {
    let session = Session::new(Grant::read_only("feed"), app.config.clone(), app.platform.clone());
    // The configured library needs no lookup of what the key reaches (one request fewer for every fetch).
    let configured = session.services().configured_library().map(|id| id.path());
    let library = (configured.as_deref() != Some(link.library.as_str())).then(|| link.library.clone());
    RequestContext::resolve(&session, Plan::reading("feed", library)).await
}

/// The mirror brought forward (one request when nothing changed), or the library's version from Zotero.
pub async fn source(ctx: &RequestContext) -> Result<Source<'_>, NotNow> {
    match mirrored::opened(ctx).await {
        Mirrored::Answer(opened, status) => Ok(Source::Mirror(opened, status.library_version)),
        Mirrored::Partial(_) => Err(NotNow::Filling(FILLING_RETRY_SECS)),
        Mirrored::Absent | Mirrored::Failed(_) => {
            let zotero = zotero_of(ctx)?;
            let page = zotero.top_items(&Query::new(), 1).await.map_err(failed)?;
            Ok(Source::Live(page.library_version))
        }
    }
}

/// The feed's whole text.
pub async fn write(
    ctx: &RequestContext,
    source: &Source<'_>,
    link: &FeedLink,
    format: Format,
) -> Result<String, NotNow> {
    let zotero = zotero_of(ctx)?;
    if let Some(search) = &link.saved_search {
        // Zotero's Web API never runs a saved search: it is evaluated here. Over a complete mirror the search and
        // its items are read from it (the full text, when a condition needs it, from Zotero); without one, from
        // Zotero within the bounds of one request.
        let (search, mirror) = match source {
            Source::Mirror(opened, _) => {
                let searches = store::searches(opened.db, &opened.library).await.map_err(failed)?;
                let found = searches.iter().find(|s| &s.key == search).ok_or(NotNow::Gone)?;
                let json = serde_json::to_value(found).map_err(failed)?;
                let search = SavedSearch::from_api(&json).ok_or(NotNow::Gone)?;
                (search, Some(MirrorItems { db: opened.db, library: &opened.library }))
            }
            Source::Live(_) => (saved_searches::find(zotero, search).await.map_err(|_| NotNow::Gone)?, None),
        };
        let local = mirror.as_ref().map(|m| m as &dyn LocalItems);
        let plan = SearchPlan::new(&search).map_err(|refused| NotNow::TooLarge(refused.to_string()))?;
        let limits = if local.is_some() { &saved_searches::MIRROR_LIMITS } else { &saved_searches::LIMITS };
        let now_ms = ctx.services().clock().now_ms();
        let evaluated = plan.evaluate_over(zotero, local, limits, now_ms).await.map_err(|error| match error {
            // What reading failed on goes to the log only; what the search asks too much of is said.
            SavedSearchError::Zotero(_) | SavedSearchError::Local(_) => failed(error),
            refused => NotNow::TooLarge(refused.to_string()),
        })?;
        let items: Vec<ZoteroObject> = evaluated.rows.into_iter().map(|row| row.item).collect();
        return Ok(whole(format, items));
    }
    match source {
        Source::Mirror(opened, _) => from_mirror(opened, link, format).await,
        Source::Live(_) => Ok(whole(format, live_items(ctx, zotero, link).await?)),
    }
}

fn zotero_of(ctx: &RequestContext) -> Result<&ZoteroClient, NotNow> {
    ctx.zotero().map_err(failed)
}

fn failed(error: impl std::fmt::Display) -> NotNow {
    NotNow::Failed(error.to_string())
}

/// A bibliography of `items` (citable ones, outside the trash), in key order so the file is the same for the same
/// library whichever way it was read.
fn whole(format: Format, mut items: Vec<ZoteroObject>) -> String {
    items.retain(|item| bibliography::is_citable(item) && !item.is_trashed());
    zotero_mcp_core::sort::sort_by(&mut items, |a, b| a.key.cmp(&b.key));
    items.dedup_by(|a, b| a.key == b.key);
    let keys = bibliography::citation_keys(&items);
    let mut writer = Writer::new(format);
    writer.page(&items, &keys);
    writer.finish()
}

async fn from_mirror(opened: &Opened<'_>, link: &FeedLink, format: Format) -> Result<String, NotNow> {
    let collections;
    let items = match &link.collection {
        None => FeedItems::Library,
        Some(key) => {
            let all = store::collections(opened.db, &opened.library).await.map_err(failed)?;
            if !all.iter().any(|c| &c.key == key) {
                return Err(NotNow::Gone);
            }
            collections = with_descendants(key, link.subcollections, &all);
            FeedItems::InCollections(&collections)
        }
    };
    // The keys must be unique across the whole feed, so they are decided over all of it first, from a slim read.
    let parts = feed_key_parts(opened.db, &opened.library, items).await.map_err(failed)?;
    let citable: Vec<ZoteroObject> = parts.into_iter().filter(bibliography::is_citable).collect();
    let keys: HashMap<String, String> =
        citable.iter().map(|item| item.key.clone()).zip(bibliography::citation_keys(&citable)).collect();
    drop(citable);
    let mut writer = Writer::new(format);
    let mut after = String::new();
    loop {
        let page = feed_page(opened.db, &opened.library, items, &after).await.map_err(failed)?;
        let last = page.last().map(|item| item.key.clone());
        let full = page.len() == zotero_mcp_core::mirror::feed::FEED_PAGE;
        let (citable, page_keys): (Vec<ZoteroObject>, Vec<String>) =
            page.into_iter().filter_map(|item| keys.get(&item.key).cloned().map(|key| (item, key))).unzip();
        writer.page(&citable, &page_keys);
        match last {
            Some(last) if full => after = last,
            _ => break,
        }
    }
    Ok(writer.finish())
}

/// `key` and, when asked, every collection below it at any depth (a collection tree has no cycles in Zotero, but
/// a key is visited once whatever the data says).
fn with_descendants(key: &str, subcollections: bool, all: &[ZoteroObject]) -> Vec<String> {
    let mut keys = vec![key.to_owned()];
    if !subcollections {
        return keys;
    }
    let mut seen: HashSet<String> = keys.iter().cloned().collect();
    let mut at = 0;
    while at < keys.len() {
        let parent = keys[at].clone();
        for child in all.iter().filter(|c| c.field("parentCollection") == Some(parent.as_str())) {
            if seen.insert(child.key.clone()) {
                keys.push(child.key.clone());
            }
        }
        at += 1;
    }
    keys
}

/// The scope read from Zotero, refused when it is more than one request can read.
async fn live_items(ctx: &RequestContext, zotero: &ZoteroClient, link: &FeedLink) -> Result<Vec<ZoteroObject>, NotNow> {
    let over = |count: String| {
        NotNow::TooLarge(format!(
            "{count} items are more than this server reads from Zotero in one request ({LIVE_MAX}); with the \
             library mirror (a MIRROR_DB binding) every feed is served whole"
        ))
    };
    let Some(collection) = &link.collection else {
        let page = zotero.top_items(&Query::new(), LIVE_MAX + 1).await.map_err(failed)?;
        if page.items.len() > LIVE_MAX {
            return Err(over(page.total_results.map_or("More than 4000".to_owned(), |n| n.to_string())));
        }
        return Ok(page.items);
    };
    let key = ObjectKey::parse(collection).map_err(|_| NotNow::Gone)?;
    let mut keys = vec![key];
    if link.subcollections {
        let all = zotero.collections(&Query::new(), LIVE_COLLECTIONS).await.map_err(failed)?;
        if all.total_results.is_some_and(|total| total > all.items.len() as u64) {
            // A tree read in part could leave out subcollections, and their items, unseen.
            return Err(NotNow::TooLarge(format!(
                "the library has more than {LIVE_COLLECTIONS} collections, more than this server reads from Zotero \
                 in one request to find the subcollections; with the library mirror (a MIRROR_DB binding) every \
                 feed is served whole"
            )));
        }
        if !all.items.iter().any(|c| c.key == collection.as_str()) {
            return Err(NotNow::Gone);
        }
        keys = with_descendants(collection, true, &all.items).iter().filter_map(|k| ObjectKey::parse(k).ok()).collect();
    }
    let mut items = Vec::new();
    for key in &keys {
        let left = LIVE_MAX + 1 - items.len().min(LIVE_MAX);
        let page = zotero.collection_items(key, true, &Query::new(), left).await.map_err(|error| match error {
            ZoteroError::Api { status: 404, .. } => NotNow::Gone,
            other => failed(other),
        })?;
        items.extend(page.items);
        if items.len() > LIVE_MAX || ctx.services().requests_sent() > LIVE_REQUESTS {
            return Err(over(format!("More than {}", items.len())));
        }
    }
    Ok(items)
}
