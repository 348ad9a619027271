//! Where `zotero_retrieve`'s passages come from: an item's abstract and notes, the annotations on its
//! attachments, and the attachments' text (the PDF by pages from the file store, else Zotero's index), each
//! attachment reported with what was read of it.

use zotero_mcp_core::attachment::{self, best_of, PagedText};
use zotero_mcp_core::html_text::html_to_text;
use zotero_mcp_core::retrieve::{chunk, Passage, SourceKind};
use zotero_mcp_core::zotero::{ObjectKey, ZoteroClient, ZoteroObject};

use super::{
    AttachmentOut, AttachmentPolicy, Coverage, Gathered, ItemEvidence, SkippedSource, MAX_ANNOTATED, MAX_ATTACHMENTS,
    MAX_CHILDREN,
};
use crate::context::RequestContext;
use crate::mcp::ToolError;
use crate::tools::attachments::CandidateOut;

/// What one call may still read.
pub(super) struct Reading {
    pub(super) attachments_left: usize,
    pub(super) annotated_left: usize,
    pub(super) fulltext_chars: usize,
}

/// The item's passages of every wanted kind, added to `passages`, and what was read.
#[allow(clippy::too_many_arguments)]
pub(super) async fn gather_item(
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
