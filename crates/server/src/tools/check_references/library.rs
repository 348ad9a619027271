//! The library as the reference check sees it: for every top-level regular item, the fields a reference is
//! matched and compared on, kept in `CACHE_KV` with the library version they reflect.
//!
//! Zotero's quick search reaches neither `extra` (where Better BibTeX keeps `Citation Key:`) nor DOIs, so matching
//! a manuscript by citation key or identifier needs every item. The first check reads the library page by page
//! (100 items a request, several in flight), as far as the call's request budget goes, and carries on in the next
//! call; later checks ask only what changed since (`since=`, the trash included, and `/deleted`): two requests
//! when nothing did.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use zotero_mcp_core::duplicates::{is_candidate, same_work, Fingerprints};
use zotero_mcp_core::platform::{KvStore, KvWrite};
use zotero_mcp_core::sources::Identifier;
use zotero_mcp_core::zotero::{ObjectKey, Query, ZoteroClient, ZoteroObject};

use super::manuscript;
use super::REGISTRY_REQUESTS;
use crate::context::RequestContext;
use crate::mcp::ToolError;
use crate::tools::import_reference::REQUEST_BUDGET;
use crate::tools::mirrored::{self, MirrorOut, Mirrored};
use crate::tools::search::has_citation_key;
use zotero_mcp_core::mirror::matching;

/// The cache key (under the library's prefix, see `RequestContext::cache`).
pub const CACHE_KEY: &str = "refcheck:library:v1";
/// Items per listing page (Zotero's maximum).
const PAGE: usize = 100;
/// Items fetched by key per request (Zotero's `itemKey` maximum).
const BATCH: usize = 50;
/// Items read again at the start of a continued reading (see [`refresh`]).
const OVERLAP: usize = 10;
/// How long an unused snapshot is kept: a month, after which the next check reads the library again.
const KEPT_SECONDS: u64 = 30 * 24 * 3600;

/// The fields kept per item: what matching ([`Fingerprints`], citation keys) and the comparison read.
const KEPT_FIELDS: &[&str] = &[
    "itemType",
    "title",
    "date",
    "DOI",
    "ISBN",
    "citationKey",
    "archiveID",
    "publicationTitle",
    "proceedingsTitle",
    "bookTitle",
    "journalAbbreviation",
    "volume",
    "issue",
    "pages",
    "url",
];

/// One item as kept.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Kept {
    pub key: String,
    pub data: Map<String, Value>,
}

/// The library as last read.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Snapshot {
    /// The library version the items reflect (when `complete`), or the version the first page was read at.
    pub version: u64,
    /// Whether every page has been read.
    pub complete: bool,
    /// Where the reading of pages carries on (items sorted by date added, oldest first).
    pub next_start: usize,
    /// `Total-Results` of the listing, when known.
    pub total: Option<u64>,
    pub items: Vec<Kept>,
}

impl Snapshot {
    /// `items` (those the library mirror selected for a manuscript's references), kept as a reading of the
    /// library keeps them: the library seen through the references' keys.
    pub fn of_items(version: u64, items: Vec<ZoteroObject>) -> Self {
        let mut kept = Vec::with_capacity(items.len());
        for item in items {
            keep(&mut kept, item);
        }
        Snapshot { version, complete: true, next_start: 0, total: None, items: kept }
    }
}

/// The snapshot, brought up to date with at most `requests` Zotero requests. Incomplete when the library is
/// larger than that allows: the caller stops, and the next call carries on.
pub async fn refresh(zotero: &ZoteroClient, cache: &dyn KvStore, requests: usize) -> Result<Snapshot, ToolError> {
    let mut snapshot: Snapshot = match cache.get(CACHE_KEY).await {
        Ok(Some(text)) => serde_json::from_slice(text.as_bytes()).unwrap_or_default(),
        _ => Snapshot::default(),
    };
    let mut spent = 0;
    let mut dirty = false;
    if !snapshot.complete {
        let pages = requests.saturating_sub(2).max(1);
        // A page read again from a little before where the last call stopped: an item deleted meanwhile shifts
        // the later ones forward, and none may be skipped.
        let start = snapshot.next_start.saturating_sub(OVERLAP);
        let query = Query::new().sort("dateAdded", false).offset(start);
        let page = zotero.top_items(&query, pages * PAGE).await?;
        spent += page.items.len().div_ceil(PAGE).max(1);
        if snapshot.next_start == 0 {
            snapshot.version = page.library_version;
        }
        let received = page.items.len();
        snapshot.next_start = start + received;
        snapshot.total = page.total_results;
        let known: HashSet<String> = snapshot.items.iter().map(|kept| kept.key.clone()).collect();
        for item in page.items.into_iter().filter(|item| !known.contains(&item.key)) {
            keep(&mut snapshot.items, item);
        }
        let whole = received < pages * PAGE || page.total_results.is_some_and(|t| snapshot.next_start as u64 >= t);
        if !whole {
            save(cache, &snapshot).await;
            return Ok(snapshot);
        }
        // Read whole: what changed while the pages were read is caught up below, from the first page's version;
        // read whole in one request, nothing can have changed between pages.
        snapshot.complete = true;
        if start == 0 && spent == 1 {
            save(cache, &snapshot).await;
            return Ok(snapshot);
        }
        dirty = true;
    }
    if spent + 2 > requests && spent > 0 {
        save(cache, &snapshot).await;
        return Ok(snapshot);
    }
    let since = snapshot.version;
    let changed = zotero.top_item_versions(since).await?;
    let mut version = changed.library_version;
    if version != since {
        let keys: Vec<ObjectKey> = changed.versions.keys().filter_map(|k| ObjectKey::parse(k).ok()).collect();
        // More changed than this call can fetch (50 a request): reading the library afresh costs less (100 a
        // request) and is as sure, so the snapshot starts over and the caller carries on next call.
        if keys.len().div_ceil(BATCH) + spent + 2 > requests {
            let fresh = Snapshot::default();
            save(cache, &fresh).await;
            return Ok(fresh);
        }
        for item in zotero.items_by_keys(&keys).await? {
            snapshot.items.retain(|kept| kept.key != item.key);
            keep(&mut snapshot.items, item);
        }
        let deleted = match zotero.deleted(since).await {
            Ok(deleted) => deleted,
            // Zotero Desktop builds without /deleted: what was removed cannot be known, so start over.
            Err(error) if !zotero.caps().deletions && error.status() == Some(404) => {
                let fresh = Snapshot::default();
                save(cache, &fresh).await;
                return Ok(fresh);
            }
            Err(error) => return Err(error.into()),
        };
        snapshot.items.retain(|kept| !deleted.items.contains(&kept.key));
        version = version.max(deleted.library_version);
        snapshot.version = version;
        dirty = true;
    }
    if dirty {
        save(cache, &snapshot).await;
    }
    Ok(snapshot)
}

/// Adds a live regular item's kept fields (a trashed item, a note or an attachment is left out).
fn keep(items: &mut Vec<Kept>, item: ZoteroObject) {
    if !is_candidate(&item) {
        return;
    }
    let mut data = Map::new();
    for field in KEPT_FIELDS {
        if let Some(value) = item.data.get(*field).filter(|v| v.as_str().is_none_or(|s| !s.is_empty())) {
            data.insert((*field).to_owned(), value.clone());
        }
    }
    // The first three creators (the comparison reads the first author), and the lines of `extra` that carry an
    // identifier or a citation key.
    if let Some(creators) = item.data.get("creators").and_then(Value::as_array) {
        data.insert("creators".into(), Value::Array(creators.iter().take(3).cloned().collect()));
    }
    if let Some(extra) = item.data.get("extra").and_then(Value::as_str) {
        let lines: Vec<&str> = extra
            .lines()
            .filter(|line| {
                let lower = line.trim_start().to_ascii_lowercase();
                ["doi:", "arxiv:", "pmid:", "pmcid:", "isbn:", "citation key:"].iter().any(|p| lower.starts_with(p))
            })
            .collect();
        if !lines.is_empty() {
            data.insert("extra".into(), Value::String(lines.join("\n")));
        }
    }
    items.push(Kept { key: item.key, data });
}

async fn save(cache: &dyn KvStore, snapshot: &Snapshot) {
    // A cache: a failed write costs the next call a re-read, never a wrong answer.
    if let Ok(text) = serde_json::to_string(snapshot) {
        let _ = cache.put(CACHE_KEY, &text, KvWrite::ExpiresIn(KEPT_SECONDS)).await;
    }
}

/// How a reference was found in the library.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatchedBy {
    CitationKey,
    Doi,
    Arxiv,
    Isbn,
    Pmid,
    Title,
}

impl MatchedBy {
    pub fn name(self) -> &'static str {
        match self {
            MatchedBy::CitationKey => "citationKey",
            MatchedBy::Doi => "doi",
            MatchedBy::Arxiv => "arxiv",
            MatchedBy::Isbn => "isbn",
            MatchedBy::Pmid => "pmid",
            MatchedBy::Title => "title",
        }
    }
}

/// The snapshot, ready to match against: each item's fingerprints computed once per call.
pub struct Library<'a> {
    items: Vec<(&'a Kept, Fingerprints)>,
}

impl<'a> Library<'a> {
    pub fn new(snapshot: &'a Snapshot) -> Self {
        let items = snapshot
            .items
            .iter()
            .map(|kept| {
                let object =
                    ZoteroObject { key: kept.key.clone(), version: 0, meta: Map::new(), data: kept.data.clone() };
                (kept, Fingerprints::of(&object))
            })
            .collect();
        Library { items }
    }

    /// Items whose citation key is `key`: Zotero's `citationKey` field, or Better BibTeX's `Citation Key:` line.
    pub fn by_citation_key(&self, key: &str) -> Vec<&'a Kept> {
        self.items
            .iter()
            .map(|(kept, _)| *kept)
            .filter(|kept| {
                let field = kept.data.get("citationKey").and_then(Value::as_str);
                field.is_some_and(|f| f.trim().eq_ignore_ascii_case(key))
                    || kept.data.get("extra").and_then(Value::as_str).is_some_and(|e| has_citation_key(e, key))
            })
            .collect()
    }

    /// Items that are the same work as `data` by the duplicate rules (a shared DOI, ISBN or arXiv id, or the same
    /// title, year and first author, unless identifiers of one kind contradict), or share its PMID; with how.
    pub fn same_work(&self, data: &Map<String, Value>, pmids: &[String]) -> Vec<(&'a Kept, MatchedBy)> {
        let object = ZoteroObject { key: String::new(), version: 0, meta: Map::new(), data: data.clone() };
        let prints = Fingerprints::of(&object);
        let shares = |a: &[String], b: &[String]| a.iter().any(|v| b.contains(v));
        let mut found = Vec::new();
        for (kept, theirs) in &self.items {
            let by = if shares(&prints.dois, &theirs.dois) {
                Some(MatchedBy::Doi)
            } else if !pmids.is_empty() && pmids.iter().any(|p| matching::pmids_in_extra(&kept.data).contains(p)) {
                Some(MatchedBy::Pmid)
            } else if !same_work(&prints, theirs) {
                None
            } else if shares(&prints.arxiv, &theirs.arxiv) {
                Some(MatchedBy::Arxiv)
            } else if shares(&prints.isbns, &theirs.isbns) {
                Some(MatchedBy::Isbn)
            } else {
                Some(MatchedBy::Title)
            };
            if let Some(by) = by {
                found.push((*kept, by));
            }
        }
        found
    }
}

/// The PMIDs among `identifiers`.
pub fn pmids(identifiers: &[Identifier]) -> Vec<String> {
    identifiers
        .iter()
        .filter_map(|id| match id {
            Identifier::Pmid(pmid) => Some(pmid.clone()),
            _ => None,
        })
        .collect()
}

/// The library the references in `window` are matched against: from a complete library mirror, the items sharing
/// a key with one of them (the mirror's size as `library_items`); while the mirror fills, nothing (the caller
/// stops, the next call goes on); else the snapshot read from Zotero, with the mirror's failure in `note`.
pub async fn for_window(
    ctx: &RequestContext,
    window: &[manuscript::Cited],
) -> Result<(Snapshot, u64, Option<MirrorOut>, Option<String>), ToolError> {
    let mut probes: Vec<String> = window
        .iter()
        .flat_map(|one| {
            let ours = one.data.clone().unwrap_or_else(|| manuscript::identifier_data(&one.identifiers));
            matching::probes_of(&ours, &pmids(&one.identifiers), one.key.as_deref())
        })
        .collect();
    // References naming one work share its keys: each probe once (the query tries every probe on every row).
    zotero_mcp_core::sort::sort(&mut probes);
    probes.dedup();
    let note = match mirrored::reference_candidates(ctx, &probes).await {
        Mirrored::Answer(items, status) => {
            let snapshot = Snapshot::of_items(status.library_version, items);
            return Ok((snapshot, status.items, Some(status), None));
        }
        Mirrored::Partial(status) => return Ok((Snapshot::default(), status.items, Some(status), None)),
        Mirrored::Failed(why) => Some(format!("{why} The library was read from Zotero instead.")),
        Mirrored::Absent => None,
    };
    // The library snapshot may take most of a first call's budget; the references take what is left.
    let snapshot = refresh(ctx.zotero()?, ctx.cache(), REQUEST_BUDGET - REGISTRY_REQUESTS * 2).await?;
    let items = snapshot.items.len() as u64;
    Ok((snapshot, items, None, note))
}
