//! `zotero_retrieve`: the passages of one or more items that best answer a query, from the reader's
//! annotations (with their pages), the notes, the abstract and the attachments' text, ranked with BM25 over
//! words folded as Zotero folds them (`zotero_mcp_core::retrieve`).
//!
//! A PDF that the file store serves is read by this server's engine page by page (cached, as for `fetch`), so a
//! full-text passage carries the page it is on and that page's label. Text from Zotero's full-text index has no
//! page breaks, and its passages carry no page: none is ever guessed. A passage is given whole or left out; what
//! was read of each attachment (`coverage`) and every source that could not be read (with why) are reported, so
//! a gap never reads as "the paper says nothing".

use std::collections::BTreeSet;

use futures_util::future::join;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use zotero_mcp_core::attachment::{self, best_of, PagedText};
use zotero_mcp_core::html_text::html_to_text;
use zotero_mcp_core::retrieve::{self, chunk, Passage, SourceKind};
use zotero_mcp_core::zotero::{ObjectKey, ZoteroClient, ZoteroObject};

use super::args::Key;
use super::attachments::CandidateOut;
use crate::context::RequestContext;
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
    /// The regular items (papers, books, …) to gather evidence from, by key.
    #[validate(length(min = 1, max = 5))]
    pub item_keys: Vec<Key>,
    /// What the evidence should answer: a question or the words to look for.
    #[validate(length(min = 1, max = 1000))]
    pub query: String,
    /// Which kinds of evidence to rank (default: all four).
    #[validate(length(min = 1, max = 4))]
    pub sources: Option<Vec<EvidenceSource>>,
    /// The most passages returned.
    #[validate(range(min = 1, max = 30))]
    #[serde(default = "default_passages")]
    #[schemars(default = "default_passages")]
    pub passages: u32,
    /// The most characters of passage text returned (an annotation's comment counts): a passage that does not
    /// fit is left out whole, never shortened.
    #[validate(range(min = 200, max = 40000))]
    #[serde(default = "default_max_chars")]
    #[schemars(default = "default_max_chars")]
    pub max_chars: u32,
    /// Which attachments' text is ranked (default `best`).
    #[serde(default)]
    pub attachment_policy: AttachmentPolicy,
    /// With `attachmentPolicy: specified`: the attachments to read, each a child of one of `itemKeys`.
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
        "Ranks the passages of up to 5 items for a query (BM25; accents, quotes and dashes folded as Zotero \
         does): the reader's annotations with their comments and pages, notes, the abstract, and the text of \
         the best attachment (attachmentPolicy: best, allIndexed, or specified with attachmentKeys). Passages \
         from a PDF read by this server carry their page and page label; text from Zotero's index has no pages. \
         Passages are whole, never cut: past `passages` or `maxChars` they are left out. Reports what was read \
         of each attachment (coverage) and every source skipped, with why.",
    )
    .ask_for_less("fewer `passages`, a smaller `maxChars`, or fewer `itemKeys`");

    fn render(output: &RetrieveOutput) -> String {
        render(output)
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
    if retrieve::fold::terms(&input.query, ctx.decompose()).is_empty() {
        return Err(invalid(
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
            return Err(invalid(&format!(
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
            return Err(invalid(&format!(
                "attachment {key} is not an attachment of {}: name attachments of these items only (evidence \
                 for another item needs its own call)",
                keys.iter().map(ObjectKey::as_str).collect::<Vec<_>>().join(", ")
            )));
        }
    }

    let mut passages: Vec<Passage> = Vec::new();
    let mut items = Vec::with_capacity(gathered.len());
    let mut budget =
        Reading { attachments_left: MAX_ATTACHMENTS, annotated_left: MAX_ANNOTATED, fulltext_chars: FULLTEXT_BUDGET };
    for one in &gathered {
        let evidence =
            gather_item(ctx, zotero, one, &wanted, input.attachment_policy, &specified, &mut budget, &mut passages)
                .await?;
        items.push(evidence);
    }

    let ranked = retrieve::rank(&input.query, &passages, ctx.decompose());
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
            Err(invalid("attachmentPolicy specified needs `attachmentKeys`: the attachments to read"))
        }
        (_, Some(_)) => {
            Err(invalid("`attachmentKeys` is read only with attachmentPolicy specified: set it, or leave the keys out"))
        }
        (_, None) => Ok(Vec::new()),
    }
}

/// What one call may still read.
struct Reading {
    attachments_left: usize,
    annotated_left: usize,
    fulltext_chars: usize,
}

/// The item's passages of every wanted kind, added to `passages`, and what was read.
#[allow(clippy::too_many_arguments)]
async fn gather_item(
    ctx: &RequestContext,
    zotero: &ZoteroClient,
    one: &Gathered,
    wanted: &[SourceKind],
    policy: AttachmentPolicy,
    specified: &[ObjectKey],
    budget: &mut Reading,
    passages: &mut Vec<Passage>,
) -> Result<ItemEvidence, ToolError> {
    let item_key = one.item.key.clone();
    let mut evidence = ItemEvidence {
        item_key: item_key.clone(),
        title: one.item.field("title").map(str::to_owned),
        attachments: Vec::new(),
        attachment_candidates: Vec::new(),
        sources_skipped: Vec::new(),
    };
    let mut skipped: Vec<SkippedSource> = Vec::new();
    let mut skip = |source: SourceKind, reason: &str| {
        skipped.push(SkippedSource { source: source.name().into(), reason: reason.into() })
    };

    if wanted.contains(&SourceKind::Abstract) {
        match one.item.field("abstractNote").filter(|a| !a.trim().is_empty()) {
            Some(text) => {
                push_chunks(passages, &item_key, SourceKind::Abstract, &item_key, text);
            }
            None => skip(SourceKind::Abstract, "the item has no abstract"),
        }
    }
    if wanted.contains(&SourceKind::Note) {
        let notes: Vec<&ZoteroObject> =
            one.children.iter().filter(|c| c.item_type() == Some("note") && !c.is_trashed()).collect();
        if notes.is_empty() {
            skip(SourceKind::Note, "the item has no notes");
        }
        for note in notes {
            let text = html_to_text(note.field("note").unwrap_or_default());
            push_chunks(passages, &item_key, SourceKind::Note, &note.key, &text);
        }
    }

    let readable: Vec<ZoteroObject> = one
        .children
        .iter()
        .filter(|c| c.item_type() == Some("attachment") && !c.is_trashed())
        .filter(|c| matches!(c.field("contentType"), Some("application/pdf" | "application/epub+zip" | "text/html")))
        .cloned()
        .collect();

    if wanted.contains(&SourceKind::Annotation) {
        if readable.is_empty() {
            skip(SourceKind::Annotation, "the item has no PDF, EPUB or web page attachment to annotate");
        } else {
            let found = annotations(zotero, &readable, budget, &item_key, passages).await;
            match found {
                Ok(AnnotationsRead { count: 0, unread: 0 }) => {
                    skip(SourceKind::Annotation, "no annotations on the item's attachments")
                }
                Ok(AnnotationsRead { unread, .. }) if unread > 0 => skip(
                    SourceKind::Annotation,
                    &format!("{unread} attachment(s) not searched for annotations: past this call's limit of {MAX_ANNOTATED} attachments"),
                ),
                Ok(_) => {}
                Err(error) => skip(SourceKind::Annotation, &format!("could not be read: {error}")),
            }
        }
    }

    if wanted.contains(&SourceKind::FullText) {
        let chosen: Vec<ZoteroObject> = match policy {
            AttachmentPolicy::Best => {
                let (best, candidates) = best_of(zotero, one.children.clone()).await?;
                if candidates.len() > 1 {
                    evidence.attachment_candidates = candidates.into_iter().map(CandidateOut::from).collect();
                }
                // A stored file first; else the best readable link (Zotero indexes linked files too).
                best.or_else(|| readable.first().cloned()).into_iter().collect()
            }
            AttachmentPolicy::AllIndexed => readable.clone(),
            AttachmentPolicy::Specified => {
                one.children.iter().filter(|c| specified.iter().any(|k| k.as_str() == c.key)).cloned().collect()
            }
        };
        if chosen.is_empty() {
            skip(
                SourceKind::FullText,
                if policy == AttachmentPolicy::Specified {
                    "none of its attachments is named in attachmentKeys"
                } else {
                    "the item has no attachment with text (PDF, EPUB or web page)"
                },
            );
        }
        let share = budget.fulltext_chars / chosen.len().max(1);
        for attachment in &chosen {
            if budget.attachments_left == 0 {
                evidence.attachments.push(attachment_out(
                    attachment,
                    "unread",
                    Some(format!(
                    "not read: this call reads at most {MAX_ATTACHMENTS} attachments; ask for this one in another call"
                )),
                ));
                continue;
            }
            budget.attachments_left -= 1;
            let out = read_attachment(ctx, zotero, attachment, share, &item_key, passages).await;
            budget.fulltext_chars =
                budget.fulltext_chars.saturating_sub(out.coverage.as_ref().map_or(0, |c| c.indexed_chars as usize));
            evidence.attachments.push(out);
        }
    }
    evidence.sources_skipped = skipped;
    Ok(evidence)
}

/// How the annotation reading went.
struct AnnotationsRead {
    count: usize,
    unread: usize,
}

/// The annotations on `attachments` (one read each, while the call's attachment limit allows), as passages:
/// the highlighted text with the comment, on the page the annotation is on.
async fn annotations(
    zotero: &ZoteroClient,
    attachments: &[ZoteroObject],
    budget: &mut Reading,
    item_key: &str,
    passages: &mut Vec<Passage>,
) -> Result<AnnotationsRead, ToolError> {
    let mut read = AnnotationsRead { count: 0, unread: 0 };
    for attachment in attachments {
        if budget.annotated_left == 0 {
            read.unread += 1;
            continue;
        }
        budget.annotated_left -= 1;
        let Ok(key) = ObjectKey::parse(&attachment.key) else { continue };
        let children = zotero.children(&key, MAX_CHILDREN).await?;
        let is_pdf = attachment.field("contentType") == Some("application/pdf");
        for annotation in children.items.iter().filter(|c| c.item_type() == Some("annotation")) {
            let text = annotation.field("annotationText").unwrap_or_default().trim();
            let comment = annotation.field("annotationComment").map(str::trim).filter(|c| !c.is_empty());
            if text.is_empty() && comment.is_none() {
                continue; // an image or ink annotation: no words to match
            }
            passages.push(Passage {
                item_key: item_key.to_owned(),
                source: SourceKind::Annotation,
                source_key: annotation.key.clone(),
                text: text.to_owned(),
                comment: comment.map(str::to_owned),
                page: if is_pdf { pdf_page_of(annotation) } else { None },
                page_label: annotation.field("annotationPageLabel").filter(|l| !l.is_empty()).map(str::to_owned),
                chunk_index: 0,
                chunk_count: 1,
            });
            read.count += 1;
        }
    }
    Ok(read)
}

/// The 1-based page a PDF annotation is on, from its position's `pageIndex` (`{"pageIndex":3,"rects":…}`). Read
/// by hand: a JSON reader into a `Value` for this one number costs the Worker several KiB.
fn pdf_page_of(annotation: &ZoteroObject) -> Option<usize> {
    let position = annotation.field("annotationPosition")?;
    let after = position.split_once("\"pageIndex\"")?.1.trim_start().strip_prefix(':')?.trim_start();
    let digits = after.find(|c: char| !c.is_ascii_digit()).unwrap_or(after.len());
    Some(after[..digits].parse::<usize>().ok()? + 1)
}

/// One attachment's text as passages: its PDF by pages when the file store serves it, else Zotero's index.
async fn read_attachment(
    ctx: &RequestContext,
    zotero: &ZoteroClient,
    attachment: &ZoteroObject,
    share: usize,
    item_key: &str,
    passages: &mut Vec<Passage>,
) -> AttachmentOut {
    let is_pdf = attachment.field("contentType") == Some("application/pdf");
    let mut file_problem = None;
    if is_pdf && attachment::require_stored_file(attachment).is_ok() {
        match ctx.files().await {
            Ok(Some(files)) => match attachment::read_pages(Some(files), ctx.cache(), attachment).await {
                Ok(paged) if paged.pages.iter().any(|p| !p.text.trim().is_empty()) => {
                    return pages_out(attachment, &paged, share, item_key, passages);
                }
                Ok(_) => file_problem = Some("the PDF has no text layer (a scan?)".to_owned()),
                Err(error) => file_problem = Some(error.to_string()),
            },
            Ok(None) => {}
            Err(error) => file_problem = Some(error.to_string()),
        }
    }
    let Ok(key) = ObjectKey::parse(&attachment.key) else {
        return attachment_out(attachment, "failed", Some("its key is not a Zotero key".into()));
    };
    match zotero.fulltext(&key).await {
        Ok(Some(full)) if !full.content.trim().is_empty() => {
            let (text, cut) = head(&full.content, share);
            let count = push_chunks(passages, item_key, SourceKind::FullText, &attachment.key, text);
            let indexed = text.chars().count() as u64;
            let mut out = attachment_out(attachment, "read", None);
            out.text_source = Some("zotero-index".into());
            out.input_truncated = cut;
            let whole_pages = match (full.indexed_pages, full.total_pages) {
                (Some(read), Some(total)) => read >= total,
                _ => true,
            };
            let whole_chars = match (full.indexed_chars, full.total_chars) {
                (Some(read), Some(total)) => read >= total,
                _ => true,
            };
            out.coverage = Some(Coverage {
                indexed_chars: indexed,
                total_chars: full.total_chars,
                pages_read: full.indexed_pages,
                total_pages: full.total_pages,
                complete: !cut && whole_pages && whole_chars,
            });
            if count == 0 {
                out.reason = Some("its text has no sentence to rank".into());
            }
            out
        }
        Ok(_) => {
            let why = match file_problem {
                Some(problem) => format!("Zotero's full-text index has no text for it, and its file: {problem}"),
                None => "Zotero's full-text index has no text for it (Zotero Desktop indexes a file once it has \
                         synced it)"
                    .to_owned(),
            };
            attachment_out(attachment, "unindexed", Some(why))
        }
        Err(error) => {
            attachment_out(attachment, "failed", Some(format!("its indexed text could not be read: {error}")))
        }
    }
}

/// Passages of a PDF read by pages, each on its page, within `share` characters of text.
fn pages_out(
    attachment: &ZoteroObject,
    paged: &PagedText,
    share: usize,
    item_key: &str,
    passages: &mut Vec<Passage>,
) -> AttachmentOut {
    let mut spent = 0;
    let mut pages_read = 0;
    let start = passages.len();
    for page in &paged.pages {
        let chars = page.text.chars().count();
        if spent + chars > share && pages_read > 0 {
            break;
        }
        spent += chars;
        pages_read += 1;
        let label = page.label.clone().unwrap_or_else(|| page.number.to_string());
        for text in chunk::passages(&page.text) {
            passages.push(Passage {
                item_key: item_key.to_owned(),
                source: SourceKind::FullText,
                source_key: attachment.key.clone(),
                text,
                comment: None,
                page: Some(page.number),
                page_label: Some(label.clone()),
                chunk_index: 0,
                chunk_count: 0,
            });
        }
    }
    number_chunks(&mut passages[start..]);
    let input_truncated = pages_read < paged.pages.len();
    let mut out = attachment_out(attachment, "read", None);
    out.text_source = Some(paged.source.name().into());
    out.input_truncated = input_truncated;
    out.coverage = Some(Coverage {
        indexed_chars: spent as u64,
        total_chars: None,
        pages_read: Some(pages_read as u64),
        total_pages: Some(paged.total_pages as u64),
        complete: pages_read == paged.total_pages,
    });
    if !out.coverage.as_ref().is_some_and(|c| c.complete) {
        out.reason = Some(format!(
            "pages {}–{} were not ranked: {}",
            pages_read + 1,
            paged.total_pages,
            if input_truncated {
                "past this call's full-text budget; ask for this attachment alone"
            } else {
                "past the most pages one read extracts"
            }
        ));
    }
    out
}

/// Adds `text` cut into passages; returns how many.
fn push_chunks(passages: &mut Vec<Passage>, item_key: &str, source: SourceKind, source_key: &str, text: &str) -> usize {
    let start = passages.len();
    for piece in chunk::passages(text) {
        passages.push(Passage {
            item_key: item_key.to_owned(),
            source,
            source_key: source_key.to_owned(),
            text: piece,
            comment: None,
            page: None,
            page_label: None,
            chunk_index: 0,
            chunk_count: 0,
        });
    }
    number_chunks(&mut passages[start..]);
    passages.len() - start
}

fn number_chunks(passages: &mut [Passage]) {
    let count = passages.len();
    for (at, passage) in passages.iter_mut().enumerate() {
        passage.chunk_index = at;
        passage.chunk_count = count;
    }
}

/// At most `chars` characters of `text`, cut at a space; and whether it was cut.
fn head(text: &str, chars: usize) -> (&str, bool) {
    match text.char_indices().nth(chars) {
        None => (text, false),
        Some((at, _)) => (text[..at].rfind(char::is_whitespace).map_or(&text[..at], |space| &text[..space]), true),
    }
}

fn attachment_out(attachment: &ZoteroObject, status: &str, reason: Option<String>) -> AttachmentOut {
    AttachmentOut {
        key: attachment.key.clone(),
        title: attachment.field("title").map(str::to_owned),
        content_type: attachment.field("contentType").map(str::to_owned),
        status: status.into(),
        text_source: None,
        coverage: None,
        passages: 0,
        input_truncated: false,
        reason,
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

fn render(output: &RetrieveOutput) -> String {
    let mut out = format!("## Evidence for “{}”\n", output.query);
    if output.passages.is_empty() {
        out.push_str(
            "\n_No passage holds the query's words. Try other words (a term the paper would use), or read the \
             text with zotero_read_attachment._\n",
        );
    }
    for (at, p) in output.passages.iter().enumerate() {
        let mut place = format!("{} {}", p.source, p.source_key);
        if let Some(page) = p.page {
            place.push_str(&format!(", page {page}"));
        }
        if let Some(label) = p.page_label.as_deref().filter(|l| Some(l.to_string()) != p.page.map(|n| n.to_string())) {
            place.push_str(&format!(" (labelled {label})"));
        }
        out.push_str(&format!("\n{}. [item {}, {place}]", at + 1, p.item_key));
        if !p.text.is_empty() {
            out.push_str(&format!("\n   {}", p.text));
        }
        if let Some(comment) = &p.comment {
            out.push_str(&format!("\n   Annotator's comment: {comment}"));
        }
    }
    if output.truncated {
        out.push_str(&format!(
            "\n\n_{} passage(s) matched; more than shown (raise `passages` or `maxChars`, or read on where an \
             attachment's text was cut)._",
            output.matching
        ));
    }
    let mut seen = BTreeSet::new();
    for item in &output.items {
        if !seen.insert(item.item_key.as_str()) {
            continue;
        }
        out.push_str(&format!("\n\n### {} {}", item.item_key, item.title.as_deref().unwrap_or("(untitled)")));
        for a in &item.attachments {
            let mut line =
                format!("\n- attachment {} ({}): {}", a.key, a.content_type.as_deref().unwrap_or("?"), a.status);
            if let Some(c) = &a.coverage {
                match (c.pages_read, c.total_pages) {
                    (Some(read), Some(total)) => line.push_str(&format!(", {read} of {total} pages")),
                    _ => line.push_str(&format!(", {} characters", c.indexed_chars)),
                }
                if let Some(source) = &a.text_source {
                    line.push_str(&format!(" from {source}"));
                }
            }
            if let Some(reason) = &a.reason {
                line.push_str(&format!(" — {reason}"));
            }
            out.push_str(&line);
        }
        for skipped in &item.sources_skipped {
            out.push_str(&format!("\n- no {}: {}", skipped.source, skipped.reason));
        }
    }
    out
}

fn invalid(problem: &str) -> ToolError {
    ToolError::InvalidArguments { tool: "zotero_retrieve".into(), problem: problem.into() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_annotation_s_page_is_its_page_index_plus_one() {
        let at = |position: &str| {
            let annotation: ZoteroObject = serde_json::from_value(serde_json::json!({
                "key": "ANNOTAT1", "version": 1, "data": { "annotationPosition": position }
            }))
            .unwrap();
            pdf_page_of(&annotation)
        };
        assert_eq!(at(r#"{"pageIndex":3,"rects":[[1,2,3,4]]}"#), Some(4));
        assert_eq!(at(r#"{"rects":[[1,2]], "pageIndex" : 0}"#), Some(1));
        assert_eq!(at(r#"{"value":"epubcfi(/6/4)"}"#), None);
        assert_eq!(at(r#"{"pageIndex":"x"}"#), None);
    }

    #[test]
    fn a_text_is_cut_at_a_space_within_its_share() {
        assert_eq!(head("one two three", 100), ("one two three", false));
        assert_eq!(head("one two three", 9), ("one two", true));
        assert_eq!(head("ééé", 2), ("éé", true));
    }
}
