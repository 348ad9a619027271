//! `zotero_retrieve`: the passages of one or more items that best answer a query, from the reader's
//! annotations (with their pages), the notes, the abstract and the attachments' text, ranked with BM25 over
//! words folded as Zotero folds them (`zotero_mcp_core::retrieve`).
//!
//! A PDF that the file store serves is read by this server's engine page by page (cached, as for `fetch`), so a
//! full-text passage carries the page it is on and that page's label. Text from Zotero's full-text index has no
//! page breaks, and its passages carry no page: none is ever guessed. A passage is given whole or left out; what
//! was read of each attachment (`coverage`) and every source that could not be read (with why) are reported, so
//! a gap never reads as "the paper says nothing".

use futures_util::future::join;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use zotero_mcp_core::retrieve::{self, Passage, SourceKind};
use zotero_mcp_core::zotero::{ObjectKey, ZoteroObject};

mod render;
mod sources;

use super::args::Key;
use super::attachments::CandidateOut;
use crate::config::ToolGroup;
use crate::context::RequestContext;
use crate::mcp::apps::Panel;
use crate::mcp::{Tool, ToolError, ToolSpec};

/// Attachments whose text one call reads (one or two requests each, or a download): `attachmentKeys` takes no
/// more, and `allIndexed` lists the rest as unread.
const MAX_ATTACHMENTS: usize = 8;
/// Attachments whose annotations one call reads (one request each).
const MAX_ANNOTATED: usize = 10;
/// Children read per item and per attachment.
const MAX_CHILDREN: usize = 100;
/// Characters of full text one call ranks, shared evenly by the attachments it reads (about 400 dense pages):
/// ranking costs the Worker CPU time in proportion.
const FULLTEXT_BUDGET: usize = 1_500_000;

fn default_passages() -> u32 {
    6
}

fn default_max_chars() -> u32 {
    8_000
}

/// A kind of evidence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum EvidenceSource {
    /// Highlights, underlines and notes made in Zotero's reader, with their comments and pages.
    Annotation,
    /// Child notes.
    Note,
    /// The item's abstract.
    Abstract,
    /// The attachments' text.
    Fulltext,
}

impl EvidenceSource {
    fn kind(self) -> SourceKind {
        match self {
            Self::Annotation => SourceKind::Annotation,
            Self::Note => SourceKind::Note,
            Self::Abstract => SourceKind::Abstract,
            Self::Fulltext => SourceKind::FullText,
        }
    }
}

/// Which attachments' text is ranked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum AttachmentPolicy {
    /// The item's best file: a PDF before an EPUB before HTML; of several PDFs, the longest indexed text.
    #[default]
    Best,
    /// Every PDF, EPUB or HTML attachment of the item (a paper and its supplement).
    AllIndexed,
    /// Exactly the attachments named in `attachmentKeys`, each of which must belong to one of the items.
    Specified,
}

/// Arguments of `zotero_retrieve`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RetrieveInput {
    // The regular items (papers, books, …) to gather evidence from, by key.
    #[validate(length(min = 1, max = 5))]
    pub item_keys: Vec<Key>,
    // What the evidence should answer: a question or the words to look for.
    #[validate(length(min = 1, max = 1000))]
    pub query: String,
    // Which kinds of evidence to rank (default: all four).
    #[validate(length(min = 1, max = 4))]
    pub sources: Option<Vec<EvidenceSource>>,
    // The most passages returned.
    #[validate(range(min = 1, max = 30))]
    #[serde(default = "default_passages")]
    #[schemars(default = "default_passages")]
    pub passages: u32,
    /// Passages past it are left out whole.
    #[validate(range(min = 200, max = 40000))]
    #[serde(default = "default_max_chars")]
    #[schemars(default = "default_max_chars")]
    pub max_chars: u32,
    /// best: the best file; allIndexed: every PDF, EPUB, HTML; specified: attachmentKeys.
    #[serde(default)]
    pub attachment_policy: AttachmentPolicy,
    /// With attachmentPolicy specified: children of itemKeys.
    #[validate(length(min = 1, max = 8))]
    pub attachment_keys: Option<Vec<Key>>,
}

/// One passage of evidence.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PassageOut {
    pub item_key: String,
    /// `annotation`, `note`, `abstract` or `fulltext`.
    pub source: String,
    /// The annotation, note or attachment the passage is from (the item itself for its abstract).
    pub source_key: String,
    /// The source's own words, unchanged (an annotation's highlighted text; empty for a comment-only one).
    pub text: String,
    /// An annotation's comment: the annotator's words, not the source's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    /// The 1-based page of the file: for full text read from the PDF, and for annotations on a PDF. Absent for
    /// text from Zotero's index, which has no page breaks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page: Option<u64>,
    /// The page's label as the document prints it (`iv`, `A-3`; the page number where it has no labels).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page_label: Option<String>,
    /// The passage's place among its source's passages (0-based), and their number.
    pub chunk_index: u64,
    pub chunk_count: u64,
    /// BM25 score: higher matches the query better; comparable within one answer only.
    pub score: f64,
    /// Annotations: which parts held the query's words (`text`, `comment`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matched_fields: Option<Vec<String>>,
}

/// How much of an attachment's text was ranked.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Coverage {
    /// Characters of text ranked.
    pub indexed_chars: u64,
    /// Characters of the whole text, where Zotero's index says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_chars: Option<u64>,
    /// Pages whose text was ranked, and the document's pages, where known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pages_read: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_pages: Option<u64>,
    /// Whether the whole text was ranked.
    pub complete: bool,
}

/// One attachment the call considered.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AttachmentOut {
    pub key: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content_type: Option<String>,
    /// `read` (its text was ranked), `unindexed` (no text to rank: Zotero's index has none and the file could
    /// not be read), `unread` (past the call's attachment limit), `failed` (see `reason`).
    pub status: String,
    /// Where the text came from: `zotero-storage` or `webdav` (the file, by pages) or `zotero-index`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text_source: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub coverage: Option<Coverage>,
    /// Its passages in this answer.
    pub passages: u64,
    /// Whether the call's full-text budget stopped the reading of this attachment's text.
    pub input_truncated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// A kind of evidence an item gave nothing for, and why.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SkippedSource {
    pub source: String,
    pub reason: String,
}

/// What was gathered for one item.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ItemEvidence {
    pub item_key: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Every attachment whose text was considered, with what was read of it.
    pub attachments: Vec<AttachmentOut>,
    /// `best`: every stored file weighed to choose the one read, best first (`chars`: its indexed text, null
    /// where not measured).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub attachment_candidates: Vec<CandidateOut>,
    pub sources_skipped: Vec<SkippedSource>,
}

/// Result of `zotero_retrieve`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RetrieveOutput {
    pub query: String,
    /// Best first.
    pub passages: Vec<PassageOut>,
    /// Passages that held the query's words, returned or not.
    pub matching: u64,
    /// Whether matching passages were left out (past `passages` or `maxChars`), or the full-text budget cut an
    /// attachment's text.
    pub truncated: bool,
    pub items: Vec<ItemEvidence>,
}

pub struct Retrieve;

impl Tool for Retrieve {
    type Input = RetrieveInput;
    type Output = RetrieveOutput;
    const SPEC: ToolSpec = ToolSpec::read(
        "zotero_retrieve",
        "Find the passages of items that answer a question",
        "The passages of up to 5 known items that best answer a question: annotations, notes, abstract and file \
         text, with PDF pages. Passages are whole; what was read or skipped is named. To find the items first, \
         zotero_semantic_search.",
    )
    .group(ToolGroup::Research)
    .ask_for_less("fewer `passages`, a smaller `maxChars`, or fewer `itemKeys`")
    .panel(Panel::Evidence);

    fn render(output: &RetrieveOutput) -> String {
        render::render(output)
    }

    async fn call(ctx: &RequestContext, input: RetrieveInput) -> Result<RetrieveOutput, ToolError> {
        retrieve_evidence(ctx, input).await
    }
}

/// One item with its children, as read.
struct Gathered {
    item: ZoteroObject,
    children: Vec<ZoteroObject>,
}

async fn retrieve_evidence(ctx: &RequestContext, input: RetrieveInput) -> Result<RetrieveOutput, ToolError> {
    if retrieve::fold::terms(&input.query, ctx.services().decompose()).is_empty() {
        return Err(ToolError::invalid(
            "`query` has no word to rank by (only short or common words): give the words a passage should hold",
        ));
    }
    let wanted: Vec<SourceKind> = match &input.sources {
        Some(sources) => sources.iter().map(|s| s.kind()).collect(),
        None => SourceKind::ALL.to_vec(),
    };
    let specified = specified_keys(&input)?;
    let mut keys: Vec<ObjectKey> = Vec::new();
    for key in input.item_keys {
        if !keys.contains(&key.0) {
            keys.push(key.0);
        }
    }
    let zotero = ctx.zotero()?;
    let mut gathered = Vec::with_capacity(keys.len());
    for key in &keys {
        let (item, children) = join(zotero.item(key), zotero.children(key, MAX_CHILDREN)).await;
        let item = item?;
        if let Some(kind @ ("attachment" | "note" | "annotation")) = item.item_type() {
            let parent = item.field("parentItem").map_or(String::new(), |p| format!(" of item {p}"));
            return Err(ToolError::invalid(format!(
                "{key} is {} {kind}{parent}: give the regular item's key (evidence is gathered per item; an \
                 attachment goes in `attachmentKeys` with attachmentPolicy specified)",
                if kind == "attachment" || kind == "annotation" { "an" } else { "a" }
            )));
        }
        gathered.push(Gathered { item, children: children?.items });
    }
    // Every named attachment must be one of these items' own, before anything is read.
    for key in &specified {
        let owned = gathered.iter().any(|g| {
            g.children.iter().any(|c| c.key == key.as_str() && c.item_type() == Some("attachment") && !c.is_trashed())
        });
        if !owned {
            return Err(ToolError::invalid(format!(
                "attachment {key} is not an attachment of {}: name attachments of these items only (evidence \
                 for another item needs its own call)",
                keys.iter().map(ObjectKey::as_str).collect::<Vec<_>>().join(", ")
            )));
        }
    }

    let mut passages: Vec<Passage> = Vec::new();
    let mut items = Vec::with_capacity(gathered.len());
    let mut budget = sources::Reading {
        attachments_left: MAX_ATTACHMENTS,
        annotated_left: MAX_ANNOTATED,
        fulltext_chars: FULLTEXT_BUDGET,
    };
    for one in &gathered {
        let evidence = sources::gather_item(
            ctx,
            zotero,
            one,
            &wanted,
            input.attachment_policy,
            &specified,
            &mut budget,
            &mut passages,
        )
        .await?;
        items.push(evidence);
    }

    let ranked = retrieve::rank(&input.query, &passages, ctx.services().decompose());
    let selection = retrieve::select(&ranked, &passages, input.passages as usize, input.max_chars as usize);
    let mut out_passages = Vec::with_capacity(selection.chosen.len());
    for hit in &selection.chosen {
        let passage = &passages[hit.passage];
        for item in items.iter_mut().filter(|i| i.item_key == passage.item_key) {
            for attachment in item.attachments.iter_mut().filter(|a| a.key == passage.source_key) {
                attachment.passages += 1;
            }
        }
        out_passages.push(passage_out(passage, hit));
    }
    let input_truncated = items.iter().flat_map(|i| &i.attachments).any(|a| a.input_truncated);
    Ok(RetrieveOutput {
        query: input.query,
        passages: out_passages,
        matching: ranked.len() as u64,
        truncated: selection.omitted > 0 || input_truncated,
        items,
    })
}

/// Every passage of one regular item (its abstract, notes, annotations and best attachment's text), for a tool
/// that ranks them against several queries itself (`zotero_check_references`' support check); with what was read
/// of it and what was skipped.
pub(crate) async fn item_passages(
    ctx: &RequestContext,
    key: &ObjectKey,
) -> Result<(Vec<Passage>, ItemEvidence), ToolError> {
    let zotero = ctx.zotero()?;
    let (item, children) = join(zotero.item(key), zotero.children(key, MAX_CHILDREN)).await;
    let one = Gathered { item: item?, children: children?.items };
    let mut budget =
        sources::Reading { attachments_left: 1, annotated_left: MAX_ANNOTATED, fulltext_chars: FULLTEXT_BUDGET };
    let mut passages = Vec::new();
    let evidence = sources::gather_item(
        ctx,
        zotero,
        &one,
        &SourceKind::ALL,
        AttachmentPolicy::Best,
        &[],
        &mut budget,
        &mut passages,
    )
    .await?;
    Ok((passages, evidence))
}

/// `attachmentKeys` checked against `attachmentPolicy`.
fn specified_keys(input: &RetrieveInput) -> Result<Vec<ObjectKey>, ToolError> {
    match (input.attachment_policy, &input.attachment_keys) {
        (AttachmentPolicy::Specified, Some(keys)) => {
            let mut unique: Vec<ObjectKey> = Vec::new();
            for key in keys {
                if !unique.contains(&key.0) {
                    unique.push(key.0.clone());
                }
            }
            Ok(unique)
        }
        (AttachmentPolicy::Specified, None) => {
            Err(ToolError::invalid("attachmentPolicy specified needs `attachmentKeys`: the attachments to read"))
        }
        (_, Some(_)) => Err(ToolError::invalid(
            "`attachmentKeys` is read only with attachmentPolicy specified: set it, or leave the keys out",
        )),
        (_, None) => Ok(Vec::new()),
    }
}

fn passage_out(passage: &Passage, hit: &retrieve::Ranked) -> PassageOut {
    let matched_fields = (passage.source == SourceKind::Annotation).then(|| {
        let mut fields = Vec::new();
        if hit.matched.text {
            fields.push("text".to_owned());
        }
        if hit.matched.comment {
            fields.push("comment".to_owned());
        }
        fields
    });
    PassageOut {
        item_key: passage.item_key.clone(),
        source: passage.source.name().into(),
        source_key: passage.source_key.clone(),
        text: passage.text.clone(),
        comment: passage.comment.clone(),
        page: passage.page.map(|p| p as u64),
        page_label: passage.page_label.clone(),
        chunk_index: passage.chunk_index as u64,
        chunk_count: passage.chunk_count as u64,
        score: (hit.score * 1000.0).round() / 1000.0,
        matched_fields,
    }
}
