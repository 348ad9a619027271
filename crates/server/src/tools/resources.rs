//! Resources (`zotero://item/{key}`, `zotero://attachment/{key}` and its pages, `zotero://collections`,
//! `zotero://recent`) and the `literature-review` prompt.

use futures_util::future::join;
use schemars::JsonSchema;
use serde::Deserialize;
use zotero_mcp_core::attachment::{self, AttachmentError, PageRange, DEFAULT_MAX_PAGES};
use zotero_mcp_core::zotero::{ItemScope, Query};

use super::args::Key;
use super::next_step::NextStep;
use super::paging::Paging;
use crate::context::RequestContext;
use crate::format::collections::{tree, tree_markdown};
use crate::format::items::{detail, item_detail_markdown, summarize, summarize_child};
use crate::mcp::registry::MAX_RESULT_CHARS;
use crate::mcp::registry::{
    LookupError, NoVariables, Prompt, PromptMessage, PromptSpec, Resource, ResourceContents, ResourceSpec,
};
use crate::mcp::{CacheHint, Declare};

pub fn register(registry: &mut impl Declare) {
    registry
        .resource::<ItemResource>()
        .resource::<AttachmentResource>()
        .resource::<AttachmentPagesResource>()
        .resource::<CollectionsResource>()
        .resource::<RecentResource>()
        .prompt::<LiteratureReview>();
}

fn failed(error: impl std::fmt::Display) -> LookupError {
    LookupError::Failed(error.to_string())
}

struct ItemResource;

/// Children shown in an item resource, as in `zotero_get_item`.
const MAX_CHILDREN: usize = 100;

/// The variable of `zotero://item/{key}`.
#[derive(Deserialize)]
struct ItemUri {
    key: Key,
}

impl Resource for ItemResource {
    type Variables = ItemUri;

    const SPEC: ResourceSpec = ResourceSpec {
        uri: "zotero://item/{key}",
        name: "zotero-item",
        title: "Zotero item",
        description: "One item's metadata, abstract and children, as Markdown.",
        mime_type: "text/markdown",
        cache: CacheHint::NONE,
    };

    async fn read(ctx: &RequestContext, uri: &str, variables: ItemUri) -> Result<Vec<ResourceContents>, LookupError> {
        let key = variables.key;
        let zotero = ctx.zotero().map_err(failed)?;
        // The item and its children in one round trip.
        let everything = Query::new();
        let children = zotero.item_cards(ItemScope::Children(&key), &everything, MAX_CHILDREN);
        let (item, children) = join(zotero.item_with_card(&key), children).await;
        let (item, card) = match item {
            Ok(item) => item,
            Err(error) if error.status() == Some(404) => return Err(LookupError::ResourceNotFound(uri.to_owned())),
            Err(error) => return Err(failed(error)),
        };
        let children = children.map_err(failed)?;
        let truncated = Paging::first(MAX_CHILDREN).next_offset(children.items.len(), children.total_results).is_some();
        let children: Vec<_> = children.items.iter().map(summarize_child).collect();
        Ok(vec![ResourceContents {
            uri: uri.to_owned(),
            mime_type: "text/markdown".into(),
            text: item_detail_markdown(&detail(&item, &card), &children, truncated),
        }])
    }
}

/// `zotero://attachment/{key}`: an attachment's text (or its parent's best file), as `zotero_read_attachment`
/// reads it — Zotero's index first, else the first pages of the file.
struct AttachmentResource;

/// The variable of `zotero://attachment/{key}`.
#[derive(Deserialize)]
struct AttachmentUri {
    key: Key,
}

impl Resource for AttachmentResource {
    type Variables = AttachmentUri;

    const SPEC: ResourceSpec = ResourceSpec {
        uri: "zotero://attachment/{key}",
        name: "zotero-attachment",
        title: "Attachment text",
        description: "An attachment's text (an item's key picks its PDF): Zotero's full-text index when it has it, \
                      else the first pages of the stored file. zotero://attachment/{key}/pages/{from}-{to} reads \
                      pages.",
        mime_type: "text/plain",
        cache: CacheHint::NONE,
    };

    async fn read(
        ctx: &RequestContext,
        uri: &str,
        variables: AttachmentUri,
    ) -> Result<Vec<ResourceContents>, LookupError> {
        attachment_text(ctx, uri, &variables.key, PageRange::whole(DEFAULT_MAX_PAGES, Some(RESOURCE_TEXT_CHARS))).await
    }
}

/// `zotero://attachment/{key}/pages/{from}-{to}`: pages of an attachment's file.
struct AttachmentPagesResource;

/// The variables of `zotero://attachment/{key}/pages/{pages}`.
#[derive(Deserialize)]
struct AttachmentPagesUri {
    key: Key,
    pages: String,
}

impl Resource for AttachmentPagesResource {
    type Variables = AttachmentPagesUri;

    const SPEC: ResourceSpec = ResourceSpec {
        uri: "zotero://attachment/{key}/pages/{pages}",
        name: "zotero-attachment-pages",
        title: "Attachment pages",
        description: "Pages of an attachment's file, e.g. zotero://attachment/ABCD2345/pages/3-5 (at most 60 at a \
                      time), read from the stored file (WebDAV or Zotero Storage).",
        mime_type: "text/plain",
        cache: CacheHint::NONE,
    };

    async fn read(
        ctx: &RequestContext,
        uri: &str,
        variables: AttachmentPagesUri,
    ) -> Result<Vec<ResourceContents>, LookupError> {
        let bad = || failed(format!("`{}` is not a page range: write it as FROM-TO, e.g. 3-5", variables.pages));
        let (from, to) = match variables.pages.split_once('-') {
            Some((from, to)) => {
                (from.trim().parse::<usize>().map_err(|_| bad())?, to.trim().parse::<usize>().map_err(|_| bad())?)
            }
            None => {
                let page = variables.pages.trim().parse::<usize>().map_err(|_| bad())?;
                (page, page)
            }
        };
        if from == 0 || to < from {
            return Err(bad());
        }
        let range = PageRange {
            from: Some(from),
            to: Some(to),
            max_pages: DEFAULT_MAX_PAGES,
            max_chars: Some(RESOURCE_TEXT_CHARS),
            cpu_limit_ms: ctx.services().config().cpu_limit_ms,
        };
        attachment_text(ctx, uri, &variables.key, range).await
    }
}

/// The most characters of text in one resource answer (sent once, unlike a tool's text), leaving room for the
/// line that points to the next pages.
const RESOURCE_TEXT_CHARS: usize = MAX_RESULT_CHARS - 2_000;

async fn attachment_text(
    ctx: &RequestContext,
    uri: &str,
    key: &Key,
    range: PageRange,
) -> Result<Vec<ResourceContents>, LookupError> {
    let zotero = ctx.zotero().map_err(failed)?;
    let item = match attachment::resolve(zotero, key).await {
        Ok(item) => item,
        Err(AttachmentError::Zotero(error)) if error.status() == Some(404) => {
            return Err(LookupError::ResourceNotFound(uri.to_owned()))
        }
        Err(error) => return Err(failed(error)),
    };
    let files = ctx.files().await.map_err(failed)?;
    let read = attachment::read_text(zotero, files, ctx.cache(), &item, range, false)
        .await
        .map_err(|error| failed(error.with_next_step()))?;
    let mut text = read.text;
    if read.truncated {
        let next = read.pages.last().map_or(1, |p| p + 1);
        text.push_str(&format!(
            "\n\n[more pages follow: zotero://attachment/{}/pages/{next}-{}]",
            item.key,
            next + DEFAULT_MAX_PAGES - 1
        ));
    }
    Ok(vec![ResourceContents { uri: uri.to_owned(), mime_type: "text/plain".into(), text }])
}

struct CollectionsResource;

impl Resource for CollectionsResource {
    type Variables = NoVariables;

    const SPEC: ResourceSpec = ResourceSpec {
        uri: "zotero://collections",
        name: "zotero-collections",
        title: "Zotero collections",
        description: "The library's collection tree with keys and item counts, as Markdown.",
        mime_type: "text/markdown",
        cache: CacheHint::private(300_000),
    };

    async fn read(ctx: &RequestContext, uri: &str, _: NoVariables) -> Result<Vec<ResourceContents>, LookupError> {
        let zotero = ctx.zotero().map_err(failed)?;
        let collections = zotero.collections(&Query::new(), 1000).await.map_err(failed)?;
        Ok(vec![ResourceContents {
            uri: uri.to_owned(),
            mime_type: "text/markdown".into(),
            text: tree_markdown(&tree(&collections.items)),
        }])
    }
}

struct RecentResource;

impl Resource for RecentResource {
    type Variables = NoVariables;

    const SPEC: ResourceSpec = ResourceSpec {
        uri: "zotero://recent",
        name: "zotero-recent",
        title: "Recently added items",
        description: "The 25 most recently added top-level items (no attachments or notes), as JSON.",
        mime_type: "application/json",
        cache: CacheHint::private(60_000),
    };

    async fn read(ctx: &RequestContext, uri: &str, _: NoVariables) -> Result<Vec<ResourceContents>, LookupError> {
        let zotero = ctx.zotero().map_err(failed)?;
        // References only: the upstream listed attachments and notes here too, which crowded out the items a
        // reader wants to see. Standalone notes and files are top-level too, so they are filtered out here
        // (with some headroom fetched so 25 references remain).
        let query = Query::new().sort("dateAdded", true);
        let page = zotero.item_cards(ItemScope::Top, &query, 60).await.map_err(failed)?;
        let summaries: Vec<_> = page
            .items
            .iter()
            .filter(|i| !matches!(i.item_type(), Some("attachment" | "note" | "annotation")))
            .take(25)
            .map(summarize)
            .collect();
        // Compact: a model reads it as well as indented JSON, in fewer tokens, and the Worker carries one JSON
        // formatter instead of two.
        let text = serde_json::to_string(&summaries).map_err(failed)?;
        Ok(vec![ResourceContents { uri: uri.to_owned(), mime_type: "application/json".into(), text }])
    }
}

struct LiteratureReview;

/// Arguments of `literature-review`.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct LiteratureReviewArguments {
    /// The collection's key, e.g. MT53KB66
    #[schemars(with = "String")]
    collection_key: Key,
    /// An angle to emphasise (optional)
    focus: Option<String>,
}

impl Prompt for LiteratureReview {
    type Arguments = LiteratureReviewArguments;

    const SPEC: PromptSpec = PromptSpec {
        name: "literature-review",
        title: "Literature review from a collection",
        description: "Draft a thematic review of one Zotero collection, grounded in its items, abstracts, notes and \
                      annotations.",
    };

    async fn render(
        _ctx: &RequestContext,
        arguments: LiteratureReviewArguments,
    ) -> Result<Vec<PromptMessage>, LookupError> {
        let key = arguments.collection_key;
        let mut lines = vec![
            format!("Write a literature review of the Zotero collection {key}."),
            String::new(),
            format!("1. Call zotero_list_collections with collectionKey {key} to see its items (page with offset if there are more)."),
            "2. For the items that matter, call zotero_get_item for the metadata and abstract, and zotero_notes with their itemKey for the notes on them.".to_owned(),
            "3. Call zotero_annotations on those items to pick up what the reader already highlighted and commented.".to_owned(),
        ];
        if let Some(focus) = arguments.focus.as_deref().map(str::trim).filter(|f| !f.is_empty()) {
            lines.push(String::new());
            lines.push(format!("Focus on: {focus}."));
        }
        lines.push(String::new());
        lines.push(
            "Organise the review by theme rather than paper by paper, cite every claim with the item key, and point \
             out where sources disagree instead of smoothing it over."
                .to_owned(),
        );
        Ok(vec![PromptMessage { role: "user", text: lines.join("\n") }])
    }
}
