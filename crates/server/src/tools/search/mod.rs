//! `zotero_search`: keyword and field search through the Zotero Web API, or from the library mirror where it has
//! the whole library and the search is one it answers as Zotero does (`zotero_mcp_core::mirror::search`): then
//! the only requests are the mirror's check and, for words, Zotero's full-text index (asked for keys alone).

use std::collections::HashSet;

use futures_util::future::join;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use zotero_mcp_core::mirror::search::{self as mirror_search, Listed, Listing, SortField as MirrorSort, TermSet};
use zotero_mcp_core::zotero::{ItemCard, ItemScope, ObjectKey, Page, QMode, Query, ZoteroClient, ZoteroError};

mod citation_key;
mod saved;

pub use citation_key::has_citation_key;
use citation_key::search_citation_key;
use saved::{nothing_in, saved_search_page, scope_of};

use super::args::{Key, YearRange};
use super::mirrored::{self, MirrorOut, Mirrored, Opened};
use super::paging::{shorten_list, Paging};
use super::saved_searches;
use crate::context::RequestContext;
use crate::format::items::{item_list, summarize, ItemSummary};
use crate::mcp::{Tool, ToolError, ToolSpec};

/// How many more candidates to fetch when a local filter (years) may discard some.
const FILTER_OVERSHOOT: usize = 3;

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub enum QModeArg {
    TitleCreatorYear,
    Everything,
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum SortField {
    DateAdded,
    DateModified,
    Title,
    Creator,
    Date,
    ItemType,
    Publisher,
    PublicationTitle,
}

impl SortField {
    fn as_str(self) -> &'static str {
        match self {
            SortField::DateAdded => "dateAdded",
            SortField::DateModified => "dateModified",
            SortField::Title => "title",
            SortField::Creator => "creator",
            SortField::Date => "date",
            SortField::ItemType => "itemType",
            SortField::Publisher => "publisher",
            SortField::PublicationTitle => "publicationTitle",
        }
    }
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    Asc,
    Desc,
}

fn default_limit() -> u32 {
    20
}

// How `tags` combine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum TagMatch {
    /// Every tag.
    All,
    /// Any one of them.
    Any,
}

/// Arguments of `zotero_search`. All optional: with none, the most recent matches of the default filters.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SearchInput {
    // Literal words to find. Matched as text, not interpreted.
    pub query: Option<String>,
    /// Default: everything for three or more words.
    pub qmode: Option<QModeArg>,
    /// A Better BibTeX key, matched whole.
    pub citation_key: Option<String>,
    // Order of results.
    pub sort: Option<SortField>,
    // Sort direction.
    pub direction: Option<Direction>,
    /// E.g. book; "-" before excludes. Default "-attachment".
    #[validate(length(min = 1, max = 64))]
    pub item_type: Option<String>,
    // Also search the trash.
    #[serde(default)]
    #[schemars(default)]
    pub include_trashed: bool,
    // How many items to return.
    #[validate(range(min = 1, max = 100))]
    #[serde(default = "default_limit")]
    #[schemars(default = "default_limit")]
    pub limit: u32,
    // Skip this many matches first, to page through long result lists (see `nextOffset` in the result).
    #[validate(range(max = 100000))]
    #[serde(default)]
    #[schemars(default)]
    pub offset: u32,
    /// All must match (one, with tagMatch any); "a || b" is either; "-" before excludes.
    #[validate(length(max = 20))]
    pub tags: Option<Vec<String>>,
    // `all` (default): an item must carry every tag in `tags`; `any`: one of them is enough.
    pub tag_match: Option<TagMatch>,
    // Leave out items carrying any of these tags.
    #[validate(length(max = 20))]
    pub exclude_tags: Option<Vec<String>>,
    // Only items directly in this collection.
    pub collection_key: Option<Key>,
    // Only items dated in or after this year.
    #[validate(range(min = 0, max = 9999))]
    pub from_year: Option<i32>,
    // Only items dated in or before this year.
    #[validate(range(min = 0, max = 9999))]
    pub to_year: Option<i32>,
    /// Changed since this `libraryVersion`.
    pub since: Option<u64>,
    /// Key or name; alone, its items; else searched within (up to 50).
    #[validate(length(min = 1, max = 200))]
    pub saved_search: Option<String>,
}

impl SearchInput {
    /// `fromYear` and `toYear` as one range.
    fn years(&self) -> YearRange {
        YearRange::new(self.from_year, self.to_year)
    }

    /// A search for `query`'s words in titles, creators, years and indexed full text, `limit` items.
    pub(super) fn words(query: &str, limit: u32) -> Self {
        Self {
            query: Some(query.to_owned()),
            qmode: Some(QModeArg::Everything),
            citation_key: None,
            sort: None,
            direction: None,
            item_type: None,
            include_trashed: false,
            limit,
            offset: 0,
            tags: None,
            tag_match: None,
            exclude_tags: None,
            collection_key: None,
            from_year: None,
            to_year: None,
            since: None,
            saved_search: None,
        }
    }
}

/// An attachment whose indexed text matched the query, reported on its parent.
#[derive(Debug, Clone, Serialize, JsonSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct MatchedAttachment {
    pub key: String,
    pub title: Option<String>,
    pub filename: Option<String>,
}

/// One search result.
#[derive(Debug, Clone, Serialize, JsonSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct SearchHit {
    #[serde(flatten)]
    pub item: ItemSummary,
    /// Present when the item was found through the indexed full text of this attachment (for example a phrase
    /// that only appears in the PDF).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matched_attachment: Option<MatchedAttachment>,
    /// For a hit from the main listing: how many of its entries were looked at up to this one (where the next
    /// page starts if the answer is cut after it). Not sent.
    #[serde(skip)]
    pub consumed: Option<usize>,
}

/// Result of `zotero_search`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SearchOutput {
    /// How many items are returned here.
    pub total: usize,
    pub items: Vec<SearchHit>,
    /// How many items Zotero matched in all (before year filters), when it said.
    pub total_results: Option<u64>,
    /// Pass as `offset` to get the next page; absent when this is the last.
    pub next_offset: Option<u64>,
    /// The library version these results reflect (use as `since` later).
    pub library_version: u64,
    /// Anything the caller should know about how complete the result is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The library mirror the results came from (Zotero's own search over the whole mirrored library), or that is
    /// still being filled (then Zotero answered).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mirror: Option<MirrorOut>,
    /// The `offset` this page started at. Not sent.
    #[serde(skip)]
    pub offset: usize,
}

pub struct ZoteroSearch;

impl Tool for ZoteroSearch {
    type Input = SearchInput;
    type Output = SearchOutput;
    const SPEC: ToolSpec = ToolSpec::read(
        "zotero_search",
        "Search the library by words and fields",
        "Finds items by literal words (titles, creators, years; PDF text with `qmode: everything`), tags, type, \
         collection, years, citation key or saved search; sorted and paged. For a topic put in other words, \
         zotero_semantic_search.",
    )
    .ask_for_less("a smaller `limit`, narrower filters (`query`, `tags`, `itemType`, `collectionKey`)");

    fn shorten(output: &mut SearchOutput, fraction: f64) -> bool {
        if shorten_list(&mut output.items, fraction).is_none() {
            return false;
        }
        // The next page starts after the last listed item kept. Items found through an attachment's text come
        // after the listing's and are looked for on the first page only, so `offset` does not bring those back.
        if let Some(consumed) = output.items.iter().rev().find_map(|hit| hit.consumed) {
            output.next_offset = Some((output.offset + consumed) as u64);
        }
        output.total = output.items.len();
        output.note = Some("Not every result fit in one answer: the rest follow from nextOffset.".to_owned());
        true
    }

    fn render(output: &SearchOutput) -> String {
        let rows: Vec<_> = output
            .items
            .iter()
            .map(|hit| {
                let title = hit.item.title.clone().unwrap_or_else(|| "(untitled)".into());
                let tail = hit
                    .matched_attachment
                    .as_ref()
                    .map(|a| vec![format!("text match in attachment {}", a.key)])
                    .unwrap_or_default();
                (hit.item.clone(), title, tail)
            })
            .collect();
        let mut text = item_list(&rows);
        if let Some(next) = output.next_offset {
            text.push_str(&format!("\n\n_More results: call again with offset {next}._"));
        }
        if let Some(note) = &output.note {
            text.push_str(&format!("\n\n> {note}"));
        }
        text
    }

    async fn call(ctx: &RequestContext, input: SearchInput) -> Result<SearchOutput, ToolError> {
        input.years().checked()?;
        let zotero = ctx.zotero()?;
        let scope = match input.saved_search.as_deref() {
            Some(wanted) => {
                let (search, evaluated, mirror) = saved_searches::find_and_run(ctx, zotero, wanted).await?;
                if !narrows(&input) {
                    return saved_search_page(zotero, &input, &search.name, &evaluated, mirror).await;
                }
                Some(scope_of(&search, &evaluated)?)
            }
            None => None,
        };
        if let Some(scope) = scope.as_ref().filter(|scope| scope.keys.is_empty()) {
            return nothing_in(zotero, &scope.name).await;
        }
        let scope = scope.as_ref().map(|scope| scope.keys.as_slice());
        match input.citation_key.as_deref().map(str::trim).filter(|k| !k.is_empty()) {
            Some(citation_key) => search_citation_key(zotero, &input, citation_key, scope).await,
            None if scope.is_none() => search_mirrored(ctx, zotero, &input).await,
            None => search_words(zotero, &input, scope).await,
        }
    }
}

/// Whether anything but paging is asked beside `savedSearch`: then the saved search is a scope to search in,
/// else its own result is the answer.
fn narrows(input: &SearchInput) -> bool {
    input.query.as_deref().is_some_and(|q| !q.trim().is_empty())
        || input.citation_key.is_some()
        || input.sort.is_some()
        || input.direction.is_some()
        || input.item_type.is_some()
        || input.tags.as_ref().is_some_and(|t| !t.is_empty())
        || input.exclude_tags.as_ref().is_some_and(|t| !t.is_empty())
        || input.collection_key.is_some()
        || input.from_year.is_some()
        || input.to_year.is_some()
        || input.since.is_some()
}

/// The filters Zotero applies itself.
fn server_filters(input: &SearchInput) -> Query {
    let tags = tag_expressions(input);
    let tags = (!tags.is_empty()).then_some(tags);
    let mut query = item_filters(input.item_type.as_deref(), tags.as_deref(), input.since);
    query = query.include_trashed(input.include_trashed);
    if let Some(sort) = input.sort {
        query = query.sort(sort.as_str(), input.direction == Some(Direction::Desc));
    } else if let Some(direction) = input.direction {
        query = query.param("direction", if direction == Direction::Desc { "desc" } else { "asc" });
    }
    query
}

/// `tags`, `tagMatch` and `excludeTags` as Zotero's `tag` parameters. Zotero's own tag syntax does the rest:
/// `a || b` for any of them, `-a` to leave one out.
fn tag_expressions(input: &SearchInput) -> Vec<String> {
    let mut tags = match (input.tag_match, input.tags.as_deref()) {
        (Some(TagMatch::Any), Some(tags)) if tags.len() > 1 => vec![tags.join(" || ")],
        (_, tags) => tags.unwrap_or_default().to_vec(),
    };
    tags.extend(input.exclude_tags.iter().flatten().map(|tag| format!("-{tag}")));
    tags
}

/// The query limited to the scope's items, when there is one.
fn within_scope(query: Query, scope: Option<&[String]>) -> Query {
    match scope {
        Some(keys) => query.param("itemKey", keys.join(",")),
        None => query,
    }
}

fn effective_qmode(input: &SearchInput, text: &str) -> QMode {
    match input.qmode {
        Some(QModeArg::Everything) => QMode::Everything,
        Some(QModeArg::TitleCreatorYear) => QMode::TitleCreatorYear,
        None if text.split_whitespace().count() > 2 => QMode::Everything,
        None => QMode::TitleCreatorYear,
    }
}

/// The filters Zotero applies itself that both searches (this one and `zotero_semantic_search`) take: one item
/// type (default: no attachments), tags, changed since a version.
pub(super) fn item_filters(item_type: Option<&str>, tags: Option<&[String]>, since: Option<u64>) -> Query {
    let mut query = Query::new().item_type(item_type.unwrap_or("-attachment").trim());
    for tag in tags.into_iter().flatten() {
        query = query.tag(tag);
    }
    if let Some(since) = since {
        query = query.since(since);
    }
    query
}

fn has_year_filter(input: &SearchInput) -> bool {
    input.years().is_bounded()
}

fn within_years(item: &ItemCard, input: &SearchInput) -> bool {
    input.years().contains(item.data.date.as_deref())
}

/// The items of the input's scope matching `query`, read from Zotero (the citation-key scan's listing).
async fn list(
    zotero: &ZoteroClient,
    input: &SearchInput,
    query: &Query,
    top_only: bool,
    max: usize,
) -> Result<Page<ItemCard>, ToolError> {
    let scope = match &input.collection_key {
        Some(key) => ItemScope::Collection { key, top_only },
        None if top_only => ItemScope::Top,
        None => ItemScope::All,
    };
    Ok(zotero.item_cards(scope, query, max).await?)
}

/// Where a word search reads its listings.
#[derive(Clone, Copy)]
enum Source<'a> {
    Zotero,
    /// The library's complete mirror (the answer's library version is the mirror's, set by the caller).
    Mirror(&'a Opened<'a>),
}

/// Why a word search did not answer.
enum Failure {
    Tool(ToolError),
    /// The mirror cannot answer this search (and why, when it failed): Zotero is asked instead.
    Declined(Option<String>),
}

impl From<ToolError> for Failure {
    fn from(error: ToolError) -> Self {
        Failure::Tool(error)
    }
}

impl From<ZoteroError> for Failure {
    fn from(error: ZoteroError) -> Self {
        Failure::Tool(error.into())
    }
}

fn unreadable(error: impl std::fmt::Display) -> Failure {
    Failure::Declined(Some(format!("The library mirror could not be read ({error}).")))
}

/// What one listing of a word search asks for, beyond the input's filters.
#[derive(Clone, Copy)]
struct Ask<'q> {
    /// The quick search, when there is one.
    text: Option<(&'q str, QMode)>,
    /// `itemKey`: only these items.
    keys: Option<&'q [String]>,
    offset: usize,
    max: usize,
}

/// The items of the input's scope (the library, or one collection with the notes and attachments under its
/// items) that match its filters and `ask`, as Zotero lists them, from `source`.
async fn listing(
    zotero: &ZoteroClient,
    source: Source<'_>,
    input: &SearchInput,
    ask: Ask<'_>,
) -> Result<Page<ItemCard>, Failure> {
    match source {
        Source::Zotero => {
            let mut query = within_scope(server_filters(input), ask.keys);
            if let Some((text, mode)) = ask.text {
                query = query.q(text, mode);
            }
            Ok(list(zotero, input, &query.offset(ask.offset), false, ask.max).await?)
        }
        Source::Mirror(opened) => {
            let listing = mirror_listing(input, ask).ok_or(Failure::Declined(None))?;
            match mirror_search::list(opened.db, &opened.library, &listing).await.map_err(unreadable)? {
                Listed::Found(found) => {
                    Ok(Page { items: found.items, total_results: Some(found.total), library_version: 0 })
                }
                // Zotero answers an unknown collection with its own error.
                Listed::NoSuchCollection | Listed::Unsupported(_) => Err(Failure::Declined(None)),
            }
        }
    }
}

/// The input's filters and `ask` as a listing of the mirror's; `None` for one the mirror does not answer as
/// Zotero would (a sort it does not keep, an unknown item type, a word with a control character).
fn mirror_listing(input: &SearchInput, ask: Ask<'_>) -> Option<Listing> {
    let (sort, descending) = match input.sort {
        Some(sort) => (MirrorSort::parse(sort.as_str())?, input.direction == Some(Direction::Desc)),
        // Zotero's default: newest change first.
        None => (MirrorSort::DateModified, input.direction != Some(Direction::Asc)),
    };
    let listing = Listing {
        collection: input.collection_key.as_ref().map(|key| key.as_str().to_owned()),
        item_type: TermSet::parse(input.item_type.as_deref().unwrap_or("-attachment")),
        tags: tag_expressions(input).iter().filter_map(|tag| TermSet::parse(tag)).collect(),
        include_trashed: input.include_trashed,
        since: input.since,
        words: ask.text.map(|(text, _)| mirror_search::words(text)).unwrap_or_default(),
        keys: ask.keys.map(<[String]>::to_vec),
        top: false,
        sort,
        descending,
        start: ask.offset,
        limit: ask.max,
    };
    listing.unsupported().is_none().then_some(listing)
}

/// Whether the library mirror can answer this word search as Zotero would. With `everything`, Zotero's index of
/// file contents decides which attachments match, and only Zotero has it: such a search goes to Zotero when it
/// lists attachments (no other item has file contents, and their words the mirror matches).
fn mirror_may_answer(input: &SearchInput) -> bool {
    let text = input.query.as_deref().unwrap_or("").trim();
    let lists_attachments = TermSet::parse(input.item_type.as_deref().unwrap_or("-attachment"))
        .is_none_or(|set| set.values.iter().any(|t| t == "attachment") != set.negated);
    let contents_decide = !text.is_empty() && effective_qmode(input, text) == QMode::Everything && lists_attachments;
    let ask = Ask { text: Some((text, QMode::TitleCreatorYear)), keys: None, offset: 0, max: 1 };
    !contents_decide && mirror_listing(input, ask).is_some()
}

/// A word search from the library's mirror where it has a complete one and the search is one it answers
/// exactly; else from Zotero, as without a mirror, saying in one line why the mirror did not answer.
async fn search_mirrored(
    ctx: &RequestContext,
    zotero: &ZoteroClient,
    input: &SearchInput,
) -> Result<SearchOutput, ToolError> {
    if !mirror_may_answer(input) {
        return search_words(zotero, input, None).await;
    }
    // Where this isolate last found the mirror complete, the whole search runs on it while it is brought forward
    // (`mirrored::answer`), Zotero's full-text index asked meanwhile: the search waits for one round trip.
    let searched =
        mirrored::answer(ctx, |opened| async move { search_in(zotero, Source::Mirror(&opened), input, None).await })
            .await;
    let (note, mirror) = match searched {
        Mirrored::Answer(searched, status) => match searched {
            Ok(mut out) => {
                out.library_version = status.library_version;
                out.mirror = Some(status);
                return Ok(out);
            }
            Err(Failure::Tool(error)) => return Err(error),
            Err(Failure::Declined(why)) => (why.map(|why| format!("{why} Zotero answered this search.")), None),
        },
        Mirrored::Partial(status) => (
            Some(format!(
                "The library mirror is still being filled ({} items so far), so Zotero answered this search.",
                status.items
            )),
            Some(status),
        ),
        Mirrored::Failed(why) => (Some(format!("{why} Zotero answered this search.")), None),
        Mirrored::Absent => (None, None),
    };
    let mut out = search_words(zotero, input, None).await?;
    out.note = out.note.or(note);
    out.mirror = mirror;
    Ok(out)
}

/// A word search through Zotero.
pub(super) async fn search_words(
    zotero: &ZoteroClient,
    input: &SearchInput,
    scope: Option<&[String]>,
) -> Result<SearchOutput, ToolError> {
    search_in(zotero, Source::Zotero, input, scope).await.map_err(|failure| match failure {
        Failure::Tool(error) => error,
        // Only a mirror declines; Zotero answers or fails.
        Failure::Declined(why) => ToolError::Failed(why.unwrap_or_default()),
    })
}

/// The query for attachments whose indexed text matches the search's words, when the search looks in PDF bodies: it has words, does not ask for attachments themselves, and is at its first page.
fn body_query(input: &SearchInput, text: &str, offset: usize) -> Option<Query> {
    let wants_attachments = input.item_type.as_deref().map(str::trim).is_some_and(|t| t == "attachment");
    if text.is_empty() || wants_attachments || offset != 0 {
        return None;
    }
    Some(Query::new().item_type("attachment").q(text, QMode::Everything).include_trashed(input.include_trashed))
}

async fn search_in(
    zotero: &ZoteroClient,
    source: Source<'_>,
    input: &SearchInput,
    scope: Option<&[String]>,
) -> Result<SearchOutput, Failure> {
    let paging = Paging::new(input.offset, input.limit);
    let limit = paging.limit;
    let text = input.query.as_deref().unwrap_or("").trim().to_owned();
    let offset = paging.offset;
    let wanted = if has_year_filter(input) { (limit * FILTER_OVERSHOOT).min(100) } else { limit };
    let words = (!text.is_empty()).then(|| (text.as_str(), effective_qmode(input, &text)));
    let ask = Ask { text: words, keys: scope, offset, max: wanted };
    // A phrase inside a PDF matches the attachment, which the default filter leaves out: those attachments are
    // looked for in the same round trip as the main query (not after it), and their parents reported.
    let body_query = body_query(input, &text, offset);
    let look_in_bodies = body_query.is_some();
    let bodies = async {
        match &body_query {
            Some(query) => full_text_attachments(zotero, source, query, limit).await.map(Some),
            None => Ok(None),
        }
    };
    // Without filters the attachments' parents can be asked for in that same round trip too: Zotero's top-level
    // listing with `everything` lists an item when its own fields or a child's indexed text match. With filters
    // it cannot stand in (Zotero applies them to the matching child, not to the parent), so the parents missing
    // from the main page are looked up after it, through the same filters.
    let parents_at_once = look_in_bodies && matches!(source, Source::Zotero) && scope.is_none() && !filtered(input);
    let parents = async {
        match parents_at_once {
            true => {
                let query = Query::new().q(&text, QMode::Everything).include_trashed(input.include_trashed);
                // Twice the page: items matching by their own fields are listed among the parents.
                Ok::<_, Failure>(Some(zotero.item_cards(ItemScope::Top, &query, (limit * 2).min(100)).await?))
            }
            false => Ok(None),
        }
    };
    let (page, (attachments, parents)) = join(listing(zotero, source, input, ask), join(bodies, parents)).await;
    let page = page?;
    let attachments = attachments?;
    let parents = parents?;
    // Keep matches up to `limit`, and remember how far into the fetched page that went: the next page must
    // start right after the last item looked at, or matches fetched but not returned would be skipped.
    let mut hits = Vec::new();
    let mut consumed = 0;
    for item in &page.items {
        if hits.len() == limit {
            break;
        }
        consumed += 1;
        if within_years(item, input) {
            hits.push(SearchHit { item: summarize(item), matched_attachment: None, consumed: Some(consumed) });
        }
    }
    // At least what was fetched exists, even when Zotero gave no total: matches fetched but not looked at
    // (because `limit` was reached first) are on the next page.
    let fetched_end = offset.saturating_add(page.items.len()) as u64;
    let available = page.total_results.map_or(fetched_end, |total| total.max(fetched_end));
    let next_offset = paging.next_offset(consumed, Some(available));

    if let Some(attachments) = attachments.filter(|_| hits.len() < limit) {
        let found = Found { attachments: &attachments, parents: parents.as_ref() };
        add_full_text_parents(zotero, source, input, found, &mut hits, limit, scope).await?;
    }
    Ok(SearchOutput {
        total: hits.len(),
        items: hits,
        total_results: page.total_results,
        next_offset,
        library_version: page.library_version,
        note: None,
        mirror: None,
        offset,
    })
}

/// Attachments whose indexed text (or title) matches `text`. Zotero's full-text index is Zotero's alone: with a
/// mirror it is asked for their keys only, and the mirror has the rest.
async fn full_text_attachments(
    zotero: &ZoteroClient,
    source: Source<'_>,
    query: &Query,
    limit: usize,
) -> Result<Page<ItemCard>, Failure> {
    match source {
        Source::Zotero => Ok(zotero.item_cards(ItemScope::All, query, limit).await?),
        Source::Mirror(opened) => {
            let keys = zotero.item_keys(ItemScope::All, query, limit).await?;
            let items = mirror_search::cards(opened.db, &opened.library, &keys.items).await.map_err(unreadable)?;
            Ok(Page { items, total_results: keys.total_results, library_version: keys.library_version })
        }
    }
}

/// Whether the search has filters Zotero applies beyond its words (the years are checked here, on the results).
fn filtered(input: &SearchInput) -> bool {
    input.item_type.is_some()
        || input.tags.as_ref().is_some_and(|t| !t.is_empty())
        || input.exclude_tags.as_ref().is_some_and(|t| !t.is_empty())
        || input.collection_key.is_some()
        || input.since.is_some()
}

/// What the first round trip found beside the main page: the attachments whose text matched, and (for a search
/// without filters) the top-level items matching by their own fields or a child's text.
struct Found<'a> {
    attachments: &'a Page<ItemCard>,
    parents: Option<&'a Page<ItemCard>>,
}

/// Reports the parents of matching attachments that the main query did not return. Those the first round trip
/// did not already bring are fetched in a second (only a filtered search, or a parent beyond that page, needs it).
async fn add_full_text_parents(
    zotero: &ZoteroClient,
    source: Source<'_>,
    input: &SearchInput,
    found: Found<'_>,
    hits: &mut Vec<SearchHit>,
    limit: usize,
    scope: Option<&[String]>,
) -> Result<(), Failure> {
    let attachments = found.attachments;
    let known: HashSet<String> = hits.iter().map(|h| h.item.key.clone()).collect();
    let mut parents: Vec<(ObjectKey, &ItemCard)> = Vec::new();
    for attachment in &attachments.items {
        let Some(parent) = attachment.data.parent_item.as_deref().and_then(|p| ObjectKey::parse(p).ok()) else {
            continue;
        };
        let in_scope = scope.is_none_or(|keys| keys.iter().any(|k| k == parent.as_str()));
        if in_scope && !known.contains(parent.as_str()) && !parents.iter().any(|(k, _)| k == &parent) {
            parents.push((parent, attachment));
        }
    }
    if parents.is_empty() {
        return Ok(());
    }
    let prefetched = found.parents.map(|page| page.items.as_slice()).unwrap_or_default();
    let missing: Vec<String> = parents
        .iter()
        .filter(|(k, _)| !prefetched.iter().any(|p| p.key == k.as_str()))
        .map(|(k, _)| k.as_str().to_owned())
        .collect();
    // Fetch the others through the same filters, so Zotero decides whether they match the other criteria.
    let fetched = match missing.is_empty() {
        true => Vec::new(),
        false => {
            let ask = Ask { text: None, keys: Some(&missing), offset: 0, max: missing.len() };
            listing(zotero, source, input, ask).await?.items
        }
    };
    for (key, attachment) in &parents {
        if hits.len() >= limit {
            break;
        }
        let Some(parent) = prefetched.iter().chain(&fetched).find(|p| p.key == key.as_str()) else { continue };
        if !within_years(parent, input) {
            continue;
        }
        hits.push(SearchHit {
            item: summarize(parent),
            matched_attachment: Some(MatchedAttachment {
                key: attachment.key.clone(),
                title: attachment.data.title.clone(),
                filename: attachment.data.filename.clone(),
            }),
            consumed: None,
        });
    }
    Ok(())
}
