//! Saved searches run over the library mirror: the mirror answers the evaluation's listings and its reads by key
//! (no request to Zotero, and no page of 100), with the Web API's rules (`search`); only full text is still
//! Zotero's. The evaluation decides every item itself, so the listing need only be the same set Zotero's would be.

use async_trait::async_trait;

use super::search::{self, Listing, SortField, TermSet};
use super::store;
use crate::platform::{SqlDb, SqlError};
use crate::zotero::{ListingSource, LocalItems, ObjectKey, Query, ZoteroObject};

/// One library of the mirror, as the place a saved search reads its items.
pub struct MirrorItems<'a> {
    pub db: &'a dyn SqlDb,
    pub library: &'a str,
}

/// The parameters a listing of the mirror reads; a query with any other goes to Zotero.
const KNOWN: &[&str] = &["tag", "itemType", "includeTrashed", "start"];

/// The most rows one read asks for (SQLite takes a signed 64-bit LIMIT; `usize` is 32 bits in the Worker).
const MAX_ROWS: usize = 1 << 30;

#[async_trait(?Send)]
impl LocalItems for MirrorItems<'_> {
    async fn listing(
        &self,
        source: ListingSource<'_>,
        query: &Query,
        max: usize,
    ) -> Result<Option<(Vec<ZoteroObject>, u64)>, SqlError> {
        if query.names().any(|name| !KNOWN.contains(&name)) {
            return Ok(None);
        }
        let start = query.initial_offset();
        let (collection, top) = match source {
            ListingSource::Library { top } => (None, top),
            ListingSource::Collection { key, top } => (Some(key.as_str().to_owned()), top),
            ListingSource::Collections => {
                // Every collection, those in the trash too (as the evaluation asks for them).
                let all = store::collections(self.db, self.library).await?;
                let total = all.len() as u64;
                return Ok(Some((all.into_iter().skip(start).take(max).collect(), total)));
            }
        };
        let listing = Listing {
            collection,
            item_type: query.values("itemType").next().and_then(TermSet::parse),
            tags: query.values("tag").filter_map(TermSet::parse).collect(),
            include_trashed: query.has("includeTrashed"),
            since: None,
            words: Vec::new(),
            keys: None,
            top,
            sort: SortField::DateModified,
            descending: true,
            start,
            limit: max.min(MAX_ROWS),
        };
        search::objects(self.db, self.library, &listing).await
    }

    async fn by_keys(&self, keys: &[ObjectKey]) -> Result<Vec<ZoteroObject>, SqlError> {
        let keys: Vec<String> = keys.iter().map(|key| key.as_str().to_owned()).collect();
        store::items_by_keys(self.db, self.library, &keys).await
    }
}
