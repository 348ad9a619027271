//! `search` and `fetch`: the pair ChatGPT's deep research and company knowledge require of a custom MCP server,
//! in the shapes OpenAI documents for them. `search` takes one query and answers one text content holding
//! `{"results":[{"id","title","url"}]}`; `fetch` takes one of those ids and answers `{id,title,text,url,metadata}`.
//! ChatGPT cites a result only when its `url` is a non-empty web address, so every result has one
//! ([`crate::format::items::web_url`]). The same JSON goes out as `structuredContent`.
//!
//! An id is the item's key in the configured library, and `<library>/items/<key>` (`groups/123/items/ABCD2345`)
//! in another, so a `fetch` finds the library of a `search` result without being told.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use zotero_mcp_core::attachment::{self, best_of, PagedText};
use zotero_mcp_core::zotero::{LibraryId, ObjectKey, ZoteroObject};

use super::attachments::CandidateOut;
use super::search::{search_words, SearchInput as WordSearch};
use super::semantic::{SemanticSearch, SemanticSearchInput};
use crate::context::RequestContext;
use crate::format::items::{detail, item_detail_markdown, summarize, ItemSummary};
use crate::mcp::apps::Panel;
use crate::mcp::registry::MAX_TEXT_CHARS;
use crate::mcp::{Tool, ToolError, ToolSpec};

/// Results of one `search`: deep research reads a few and fetches the best.
const SEARCH_RESULTS: usize = 10;
/// Children looked at for an item's files.
const MAX_CHILDREN: usize = 100;

// ---------------------------------------------------------------------------------------------------------------
// search

/// Arguments of `search`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchInput {
    // What to look for: words from a title, an author, a topic or a question.
    #[validate(length(min = 1, max = 1000))]
    pub query: String,
}

/// One search result, as OpenAI's connectors read it.
#[derive(Debug, Clone, Serialize, JsonSchema, PartialEq)]
pub struct SearchResult {
    /// Pass to `fetch` to read the item.
    pub id: String,
    pub title: String,
    /// Where the item opens on the web: its DOI, its own web address, or its zotero.org page.
    pub url: String,
}

/// Result of `search`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SearchOutput {
    pub results: Vec<SearchResult>,
}

pub struct Search;

impl Tool for Search {
    type Input = SearchInput;
    type Output = SearchOutput;
    const SPEC: ToolSpec = ToolSpec::read(
        "search",
        "Search the library (for ChatGPT connectors)",
        "For ChatGPT connectors: up to 10 items for a query as {results: [{id, title, url}]}; read one with \
         fetch. Other clients: zotero_search or zotero_semantic_search, which filter and page.",
    )
    .ask_for_less("a narrower `query`");

    fn render(output: &SearchOutput) -> String {
        serde_json::to_string(output).unwrap_or_default()
    }

    async fn call(ctx: &RequestContext, input: SearchInput) -> Result<SearchOutput, ToolError> {
        let query = input.query.trim();
        if query.is_empty() {
            return Err(ToolError::invalid("`query` is blank: give the words or the question to search for"));
        }
        let mut found: Vec<ItemSummary> = by_meaning(ctx, query).await;
        for item in by_words(ctx, query).await? {
            if found.len() >= SEARCH_RESULTS {
                break;
            }
            if !found.iter().any(|seen| seen.key == item.key) {
                found.push(item);
            }
        }
        found.truncate(SEARCH_RESULTS);
        let library = ctx.selected_library().map(|selected| selected.id);
        let results = found
            .into_iter()
            .map(|item| SearchResult {
                id: item_id(library, &item.key),
                title: item.title.clone().unwrap_or_else(|| "(untitled)".into()),
                url: item.web_url.clone().unwrap_or_default(),
            })
            .collect();
        Ok(SearchOutput { results })
    }
}

/// The semantic index's matches, when it holds this library; nothing otherwise (a search by words follows).
async fn by_meaning(ctx: &RequestContext, query: &str) -> Vec<ItemSummary> {
    if !matches!(ctx.semantic_index(), Ok(Some(_))) {
        return Vec::new();
    }
    let input = SemanticSearchInput {
        query: query.to_owned(),
        min_score: 0.0,
        item_type: Some("-attachment".into()),
        limit: SEARCH_RESULTS as u32,
        tags: None,
        collection_key: None,
        from_year: None,
        to_year: None,
        since: None,
    };
    // An index that fails or does not hold the library leaves the answer to the search by words.
    SemanticSearch::call(ctx, input)
        .await
        .map(|out| out.items.into_iter().map(|hit| hit.item).collect())
        .unwrap_or_default()
}

/// Zotero's own search for the query's words (titles, creators, years and indexed full text). Zotero wants
/// every word to match; a question rarely does, so when the whole query finds nothing its longest words are
/// searched one by one and the items ranked by how many of them they match.
async fn by_words(ctx: &RequestContext, query: &str) -> Result<Vec<ItemSummary>, ToolError> {
    let zotero = ctx.zotero()?;
    let whole = search_words(zotero, &WordSearch::words(query, SEARCH_RESULTS as u32), None).await?;
    let words = significant_words(query);
    if !whole.items.is_empty() || words.len() < 2 {
        return Ok(whole.items.into_iter().map(|hit| hit.item).collect());
    }
    // One word after the other: this runs only when the whole query found nothing, and a `join_all` over these
    // futures would link its own copy of the ordered-futures machinery into the Worker.
    let mut ranked: Vec<(usize, ItemSummary)> = Vec::new();
    for word in &words {
        let found = search_words(zotero, &WordSearch::words(word, SEARCH_RESULTS as u32), None).await?;
        for hit in found.items {
            match ranked.iter_mut().find(|(_, seen)| seen.key == hit.item.key) {
                Some((count, _)) => *count += 1,
                None => ranked.push((1, hit.item)),
            }
        }
    }
    // More words matched first; then first found first (longer words are searched first). Counted down rather
    // than sorted: a library sort over this element type would link its own copy of the algorithm.
    let mut ordered = Vec::with_capacity(ranked.len());
    for wanted in (1..=words.len()).rev() {
        ordered.extend(ranked.iter().filter(|(count, _)| *count == wanted).map(|(_, item)| item.clone()));
    }
    Ok(ordered)
}

/// Words of four letters or more that say nothing about a topic.
const STOPWORDS: &[&str] = &[
    "about", "does", "from", "have", "into", "papers", "says", "that", "their", "there", "these", "this", "what",
    "when", "where", "which", "with",
];

/// The longest words of a query (at most four, four letters or more, not [`STOPWORDS`]), for a search by any
/// word.
fn significant_words(query: &str) -> Vec<&str> {
    let words: Vec<&str> = query
        .split(|c: char| !c.is_alphanumeric() && c != '-')
        .filter(|word| word.chars().count() >= 4)
        .filter(|word| !STOPWORDS.iter().any(|stop| stop.eq_ignore_ascii_case(word)))
        .collect();
    // Longest first, in the query's order between equals (counted down, not sorted: see `by_words`).
    let longest = words.iter().map(|word| word.chars().count()).max().unwrap_or(0);
    let mut unique: Vec<&str> = Vec::new();
    for length in (4..=longest).rev() {
        for word in words.iter().filter(|word| word.chars().count() == length) {
            if !unique.iter().any(|seen| seen.eq_ignore_ascii_case(word)) {
                unique.push(word);
            }
        }
    }
    unique.truncate(4);
    unique
}

/// A result's id: the key in the configured library, `<library>/items/<key>` in another.
fn item_id(library: Option<LibraryId>, key: &str) -> String {
    match library {
        Some(library) => format!("{library}/items/{key}"),
        None => key.to_owned(),
    }
}

// ---------------------------------------------------------------------------------------------------------------
// fetch

/// Arguments of `fetch`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FetchInput {
    // The `id` of a `search` result: an item key, or `groups/<id>/items/<key>` for another library.
    #[validate(length(min = 1, max = 120))]
    pub id: String,
}

/// What `fetch` says about the item beside its text.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FetchMetadata {
    pub item_type: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub creators: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub year: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub publication: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub doi: Option<String>,
    /// The library the item is in (`users/<id>` or `groups/<id>`), when it is not the configured one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub library: Option<String>,
    /// The attachment whose text follows the metadata, when one was read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attachment_key: Option<String>,
    /// Where that text came from: `zotero-index` (no page breaks), `zotero-storage` or `webdav` (the file,
    /// with `[page N]` markers).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text_source: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_pages: Option<u64>,
    /// The last page whose text is included, when the text has pages.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_page: Option<u64>,
    /// Whether the attachment's text goes on past this answer.
    pub truncated: bool,
    /// Every stored file of the item that was weighed, best first (`chars`: its indexed text, null where not
    /// measured).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub attachment_candidates: Vec<CandidateOut>,
    /// Why no text of a file is included, or how to read on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Result of `fetch`, as OpenAI's connectors read it.
#[derive(Debug, Serialize, JsonSchema)]
pub struct FetchOutput {
    pub id: String,
    pub title: String,
    /// The item's citation-ready metadata and abstract, then its best attachment's text.
    pub text: String,
    pub url: String,
    pub metadata: FetchMetadata,
}

pub struct Fetch;

impl Tool for Fetch {
    type Input = FetchInput;
    type Output = FetchOutput;
    const SPEC: ToolSpec = ToolSpec::read(
        "fetch",
        "Read an item (for ChatGPT connectors)",
        "For ChatGPT connectors: one item by its `search` id, with metadata, abstract and its best file's text \
         with [page N] markers, as much as fits. Other clients: zotero_get_item and zotero_read_attachment.",
    )
    .ask_for_less("the `id` of the attachment alone, or zotero_read_attachment with a page range")
    .panel(Panel::Evidence);

    fn render(output: &FetchOutput) -> String {
        serde_json::to_string(output).unwrap_or_default()
    }

    /// The id's library is the call's: the pipeline works there, and refuses a `library` argument naming another.
    fn library(input: &FetchInput) -> Option<LibraryId> {
        parse_id(&input.id).ok().and_then(|(library, _)| library)
    }

    async fn call(ctx: &RequestContext, input: FetchInput) -> Result<FetchOutput, ToolError> {
        let (_, key) = parse_id(&input.id)?;
        let zotero = ctx.zotero()?;
        let (item, children) =
            futures_util::future::join(zotero.item_with_card(&key), zotero.children(&key, MAX_CHILDREN)).await;
        let (item, card) = item?;
        let summary = summarize(&card);
        let library = ctx.selected_library().map(|selected| selected.id);
        let mut text = item_detail_markdown(&detail(&item, &card), &[], false);
        let mut metadata = FetchMetadata {
            item_type: summary.item_type.clone(),
            creators: summary.creators.clone(),
            year: summary.year.clone(),
            publication: summary.publication.clone(),
            doi: summary.doi.clone(),
            library: library.map(|l| l.path()),
            attachment_key: None,
            text_source: None,
            total_pages: None,
            last_page: None,
            truncated: false,
            attachment_candidates: Vec::new(),
            note: None,
        };
        let best = match item.item_type() {
            Some("attachment") => Some(item.clone()),
            Some("note" | "annotation") => None,
            _ => {
                let (best, candidates) = best_of(zotero, children?.items).await?;
                metadata.attachment_candidates = candidates.into_iter().map(CandidateOut::from).collect();
                best
            }
        };
        match best {
            Some(attachment) => {
                let budget = MAX_TEXT_CHARS.saturating_sub(attachment::json_chars(&text) + 2_000);
                append_attachment_text(ctx, &attachment, budget, &mut text, &mut metadata).await;
            }
            // A note or an annotation has no file of its own to miss.
            None if !matches!(item.item_type(), Some("note" | "annotation")) => {
                metadata.note = Some("The item has no stored file, so only its metadata is given.".into());
            }
            None => {}
        }
        Ok(FetchOutput {
            id: item_id(library, &item.key),
            title: summary.title.clone().unwrap_or_else(|| "(untitled)".into()),
            text,
            url: summary.web_url.clone().unwrap_or_default(),
            metadata,
        })
    }
}

/// Adds the attachment's text: the PDF page by page when the file can be read, else Zotero's index text; a
/// failure to read becomes a note, never the call's failure (the metadata is still worth having).
async fn append_attachment_text(
    ctx: &RequestContext,
    attachment: &ZoteroObject,
    budget: usize,
    text: &mut String,
    metadata: &mut FetchMetadata,
) {
    metadata.attachment_key = Some(attachment.key.clone());
    let files = ctx.files().await.ok().flatten();
    let is_pdf = attachment.field("contentType") == Some("application/pdf");
    if is_pdf && files.is_some() {
        if let Ok(paged) = attachment::read_pages(files, ctx.cache(), attachment).await {
            append_pages(&paged, attachment, budget, text, metadata);
            return;
        }
    }
    let Ok(zotero) = ctx.zotero() else { return };
    let range = attachment::PageRange::whole(attachment::DEFAULT_MAX_PAGES, Some(budget))
        .within_cpu(ctx.services().config().cpu_limit_ms);
    match attachment::read_text(zotero, files, ctx.cache(), attachment, range, false).await {
        Ok(read) => {
            text.push_str(&format!("\n\n## Text of attachment {}\n\n", attachment.key));
            text.push_str(read.text.trim());
            metadata.text_source = Some(read.source.name().into());
            metadata.total_pages = read.total_pages;
            metadata.last_page = read.pages.last().map(|p| *p as u64);
            metadata.truncated = read.truncated;
            if read.truncated {
                metadata.note = Some(format!(
                    "The text stops here; read on with zotero_read_attachment (itemKey {}, fromPage).",
                    attachment.key
                ));
            }
        }
        Err(error) => metadata.note = Some(format!("The attachment's text could not be read: {error}")),
    }
}

/// Whole pages, each after a `[page N]` marker (with its label where the PDF gives one), while they fit.
fn append_pages(
    paged: &PagedText,
    attachment: &ZoteroObject,
    budget: usize,
    text: &mut String,
    metadata: &mut FetchMetadata,
) {
    text.push_str(&format!("\n\n## Text of attachment {}\n", attachment.key));
    let mut spent = 0;
    let mut last = None;
    for page in &paged.pages {
        let marker = match &page.label {
            Some(label) => format!("\n[page {} (labelled {label})]\n", page.number),
            None => format!("\n[page {}]\n", page.number),
        };
        let cost = attachment::json_chars(&marker) + attachment::json_chars(&page.text);
        if spent + cost > budget {
            break;
        }
        spent += cost;
        text.push_str(&marker);
        text.push_str(&page.text);
        last = Some(page.number);
    }
    let total = paged.total_pages as u64;
    let last = last.unwrap_or(0) as u64;
    metadata.text_source = Some(paged.source.name().into());
    metadata.total_pages = Some(total);
    metadata.last_page = Some(last);
    metadata.truncated = last < total;
    if last < total {
        let note = format!(
            "The text stops after page {last} of {total}; read on with zotero_read_attachment (itemKey {}, \
             fromPage {}).",
            attachment.key,
            last + 1
        );
        text.push_str(&format!("\n\n[{note}]"));
        metadata.note = Some(note);
    }
}

/// An id as `search` gives it: a key, or `users|groups/<id>/items/<key>`.
fn parse_id(id: &str) -> Result<(Option<LibraryId>, ObjectKey), ToolError> {
    let id = id.trim().trim_matches('/');
    let (library, key) = match id.rsplit_once("/items/") {
        Some((library, key)) => match LibraryId::parse(library) {
            Some(library) => (Some(library), key),
            None => return Err(bad_id(id)),
        },
        None => (None, id),
    };
    let key = ObjectKey::parse(key).map_err(|_| bad_id(id))?;
    Ok((library, key))
}

fn bad_id(id: &str) -> ToolError {
    ToolError::invalid(format!(
        "{id:?} is not an id from search: give an item key (ABCD2345) or groups/<id>/items/<key>"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_name_the_library_only_outside_the_configured_one() {
        assert_eq!(item_id(None, "ABCD2345"), "ABCD2345");
        let group = LibraryId::parse("groups/42").unwrap();
        assert_eq!(item_id(Some(group), "ABCD2345"), "groups/42/items/ABCD2345");
        let (library, key) = parse_id("groups/42/items/ABCD2345").unwrap();
        assert_eq!((library, key.as_str()), (Some(group), "ABCD2345"));
        assert_eq!(parse_id(" ABCD2345 ").unwrap().0, None);
        for bad in ["", "groups/x/items/ABCD2345", "teams/4/items/ABCD2345", "groups/4/items/abc", "zotero://x"] {
            assert!(parse_id(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_question_is_searched_by_its_longest_words() {
        assert_eq!(
            significant_words("How does heat stress affect maize yield in the heat?"),
            vec!["stress", "affect", "maize", "yield"]
        );
        assert_eq!(significant_words("What does this paper say about Maize?"), vec!["paper", "Maize"]);
        assert!(significant_words("a of in").is_empty());
    }
}
