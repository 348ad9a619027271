//! The reads one evaluation makes, each counted against its bounds before it is sent: a search that needs more
//! than the bounds fails with what it would have needed, never with a silently shortened answer.

use async_trait::async_trait;
use futures_util::future::{join4, OptionFuture};

use super::error::SavedSearchError;
use crate::platform::SqlError;
use crate::zotero::{FullText, ObjectKey, Page, Query, ZoteroClient, ZoteroError, ZoteroObject, PAGE_LIMIT};

/// How much one evaluation may read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EvaluationLimits {
    /// Items read: the candidates the API returns plus the parents read for context.
    pub max_items: usize,
    /// Requests to Zotero, of every kind. A Worker on Cloudflare's free plan has 50 subrequests per request in
    /// all; lower this (and `max_items`) there.
    pub max_requests: usize,
    /// Attachments whose full text is read to check a full-text condition.
    pub max_fulltext_reads: usize,
    /// Conditions that test items (flags such as `noChildren` and the join mode are not counted). Each is
    /// decided for every item read, so this times `max_items` bounds the work of one evaluation; a search over
    /// it is refused before any request.
    pub max_conditions: usize,
}

impl Default for EvaluationLimits {
    fn default() -> Self {
        Self { max_items: 5000, max_requests: 100, max_fulltext_reads: 40, max_conditions: 100 }
    }
}

/// A copy of the library that answers a search's listings instead of Zotero (the library mirror): its reads
/// cost no request, and an item read from it still counts against `max_items`. Full text is always Zotero's.
#[async_trait(?Send)]
pub trait LocalItems {
    /// A listing from the query's offset, at most `max` objects, as Zotero would answer it (its parameters:
    /// `tag`, `itemType`, `includeTrashed`), and how many the whole listing holds; `None` for one it cannot
    /// answer exactly, which Zotero then answers.
    async fn listing(
        &self,
        source: Source<'_>,
        query: &Query,
        max: usize,
    ) -> Result<Option<(Vec<ZoteroObject>, u64)>, SqlError>;
    /// The items with these keys, in the trash or not.
    async fn by_keys(&self, keys: &[ObjectKey]) -> Result<Vec<ZoteroObject>, SqlError>;
}

/// Where a listing reads from.
#[derive(Debug, Clone, Copy)]
pub enum Source<'a> {
    /// `/items`, or `/items/top` when `top`.
    Library { top: bool },
    /// `/collections/<key>/items[/top]`.
    Collection { key: &'a ObjectKey, top: bool },
    /// `/collections` (not counted as items).
    Collections,
}

pub(super) struct Reader<'a> {
    pub zotero: &'a ZoteroClient,
    local: Option<&'a dyn LocalItems>,
    limits: EvaluationLimits,
    pub search: &'a str,
    pub requests: usize,
    pub items: usize,
    pub fulltext_reads: usize,
}

fn pages(count: usize, per_page: usize) -> usize {
    count.div_ceil(per_page)
}

impl<'a> Reader<'a> {
    pub fn new(
        zotero: &'a ZoteroClient,
        local: Option<&'a dyn LocalItems>,
        limits: EvaluationLimits,
        search: &'a str,
    ) -> Self {
        // The library is looked up from the key on the first request when it was not configured.
        let requests = usize::from(zotero.needs_key_lookup() && local.is_none());
        Self { zotero, local, limits, search, requests, items: 0, fulltext_reads: 0 }
    }

    pub fn fulltext_reads_left(&self) -> usize {
        self.limits.max_fulltext_reads.saturating_sub(self.fulltext_reads)
    }

    pub fn fulltext_limit(&self) -> usize {
        self.limits.max_fulltext_reads
    }

    pub fn spend_requests(&mut self, count: usize) -> Result<(), SavedSearchError> {
        let needed = self.requests + count;
        if needed > self.limits.max_requests {
            return Err(SavedSearchError::TooManyRequests {
                search: self.search.to_owned(),
                needed,
                limit: self.limits.max_requests,
            });
        }
        self.requests = needed;
        Ok(())
    }

    fn spend_items(&mut self, count: u64) -> Result<(), SavedSearchError> {
        let needed = (self.items as u64).saturating_add(count);
        if needed > self.limits.max_items as u64 {
            return Err(SavedSearchError::TooManyItems {
                search: self.search.to_owned(),
                needed,
                limit: self.limits.max_items,
            });
        }
        self.items = usize::try_from(needed).unwrap_or(usize::MAX);
        Ok(())
    }

    async fn page(&self, source: Source<'_>, query: &Query, max: usize) -> Result<Page<ZoteroObject>, ZoteroError> {
        match source {
            Source::Library { top: false } => self.zotero.items(query, max).await,
            Source::Library { top: true } => self.zotero.top_items(query, max).await,
            Source::Collection { key, top } => self.zotero.collection_items(key, top, query, max).await,
            Source::Collections => self.zotero.collections(query, max).await,
        }
    }

    /// A whole listing from the query's offset, or its first `cap` objects: the first page says how many there
    /// are, which is checked against the bounds before the rest is asked for. Returns the objects and how many the
    /// whole listing holds. A collection that does not exist (404) is an empty listing: no item is in it.
    pub async fn listing(
        &mut self,
        source: Source<'_>,
        query: &Query,
        cap: usize,
    ) -> Result<(Vec<ZoteroObject>, u64), SavedSearchError> {
        if let Some(local) = self.local {
            // At most one item past what may still be read: the total then says whether the bound is passed,
            // and no more is held than the bound allows.
            let counted = !matches!(source, Source::Collections);
            let room = if counted { self.limits.max_items.saturating_sub(self.items).saturating_add(1) } else { cap };
            let read = local.listing(source, query, cap.min(room)).await.map_err(SavedSearchError::Local)?;
            if let Some((objects, total)) = read {
                if counted {
                    let left = total.saturating_sub(query.initial_offset() as u64);
                    self.spend_items(left.min(cap as u64))?;
                }
                return Ok((objects, total));
            }
        }
        self.spend_requests(1)?;
        let first = match self.page(source, query, PAGE_LIMIT.min(cap)).await {
            Ok(page) => page,
            Err(e) if e.status() == Some(404) && matches!(source, Source::Collection { .. }) => {
                return Ok((Vec::new(), 0));
            }
            Err(e) => return Err(e.into()),
        };
        // `Total-Results` counts the whole listing, wherever this read starts. Without it a full page could be
        // followed by more, and reading on blindly could pass the bounds unseen: refused instead.
        let total = match first.total_results {
            Some(total) => total,
            None if first.items.len() < PAGE_LIMIT.min(cap) => first.items.len() as u64 + query.initial_offset() as u64,
            None => {
                return Err(ZoteroError::Decode {
                    method: "GET".to_owned(),
                    path: format!("{source:?}"),
                    reason: "a full page came without Total-Results, so the listing's size is unknown".to_owned(),
                }
                .into())
            }
        };
        let left = total.saturating_sub(query.initial_offset() as u64);
        let wanted = usize::try_from(left).unwrap_or(usize::MAX).min(cap);
        if !matches!(source, Source::Collections) {
            self.spend_items(wanted as u64)?;
        }
        let mut objects = first.items;
        if objects.len() >= PAGE_LIMIT && wanted > objects.len() {
            let rest = wanted - objects.len();
            self.spend_requests(pages(rest, PAGE_LIMIT))?;
            let more = self.page(source, &query.clone().offset(objects.len()), rest).await?;
            objects.extend(more.items);
        }
        Ok((objects, total))
    }

    /// Items by key (the parents of items read), trashed or not.
    pub async fn by_keys(&mut self, keys: &[ObjectKey]) -> Result<Vec<ZoteroObject>, SavedSearchError> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        if let Some(local) = self.local {
            self.spend_items(keys.len() as u64)?;
            return local.by_keys(keys).await.map_err(SavedSearchError::Local);
        }
        self.spend_requests(pages(keys.len(), crate::zotero::BATCH_SIZE))?;
        self.spend_items(keys.len() as u64)?;
        Ok(self.zotero.items_by_keys(keys).await?)
    }

    /// The keys of every attachment with indexed text (`/fulltext?since=0`, one request), sorted.
    pub async fn keys_with_text(&mut self) -> Result<Vec<String>, SavedSearchError> {
        self.spend_requests(1)?;
        Ok(self.zotero.fulltext_versions(0).await?.versions.keys().cloned().collect())
    }

    /// The text of each attachment, four at a time (the client's limit). Counted as full-text reads.
    pub async fn texts(&mut self, keys: &[ObjectKey]) -> Result<Vec<(String, Option<FullText>)>, SavedSearchError> {
        self.spend_requests(keys.len())?;
        self.fulltext_reads += keys.len();
        let mut out = Vec::with_capacity(keys.len());
        for wave in keys.chunks(4) {
            // Four fixed slots, as the client pages: `join_all`'s machinery costs kilobytes of wasm.
            let read = |slot: usize| OptionFuture::from(wave.get(slot).map(|key| self.zotero.fulltext(key)));
            let (a, b, c, d) = join4(read(0), read(1), read(2), read(3)).await;
            for (key, text) in wave.iter().zip([a, b, c, d]) {
                if let Some(text) = text {
                    out.push((key.as_str().to_owned(), text?));
                }
            }
        }
        Ok(out)
    }
}
