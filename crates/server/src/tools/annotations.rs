//! `zotero_annotations`: the highlights, underlines, notes and image selections made on an item's PDFs, and
//! new ones: a highlight or underline anchored to a quoted passage, or a note on a page. Listing is a read;
//! creating checks `zotero:write` itself, so the tool is declared [`ToolSpec::mixed`].

use futures_util::future::join;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use zotero_mcp_core::attachment::annotate::{self, AnnotationKind, AnnotationRequest};
use zotero_mcp_core::attachment::{self, AttachmentError};
use zotero_mcp_core::join::join_all;
use zotero_mcp_core::pdf::{PdfDocument, PdfLimits};
use zotero_mcp_core::zotero::{ObjectKey, ObjectKind, ZoteroObject};

use super::args::Key;
use super::items::TagIn;
use super::next_step::NextStep;
use super::paging::{shorten_list, Paging};
use crate::context::RequestContext;
use crate::format::text::truncate;
use crate::mcp::{Tool, ToolError, ToolSpec};

// What to do.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum AnnotationAction {
    /// The annotations on the item's attachments.
    #[default]
    List,
    /// A new annotation on the item's PDF (needs the write scope).
    Create,
}

/// The kind of annotation to create.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum NewAnnotationType {
    /// Marks the quoted `text`.
    #[default]
    Highlight,
    /// Underlines the quoted `text`.
    Underline,
    /// A sticky note with `comment`, on `page`.
    Note,
}

fn default_color() -> String {
    annotate::DEFAULT_COLOR.to_owned()
}

fn default_limit() -> u32 {
    100
}

/// Attachments of an item that are searched for annotations.
const MAX_ATTACHMENTS: usize = 100;
/// Children (annotations, notes) read per attachment.
const MAX_ATTACHMENT_CHILDREN: usize = 500;

/// Arguments of `zotero_annotations`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AnnotationsInput {
    #[serde(default)]
    #[schemars(default)]
    pub action: AnnotationAction,
    /// A regular item, or one attachment.
    pub item_key: Key,
    // How many annotations to return (list).
    #[validate(range(min = 1, max = 500))]
    #[serde(default = "default_limit")]
    #[schemars(default = "default_limit")]
    pub limit: u32,
    /// create: highlight/underline quote `text`; a note needs `comment`, `page`.
    #[serde(default, rename = "type")]
    #[schemars(default)]
    pub kind: NewAnnotationType,
    /// create: 1-based; needed for a note, narrows a highlight's search.
    #[validate(range(min = 1, max = 100000))]
    pub page: Option<u32>,
    /// create: the passage, quoted as zotero_read_attachment shows it.
    #[validate(length(min = 1, max = 5000))]
    pub text: Option<String>,
    /// create: shown with it; a note's text.
    #[validate(length(max = 10000))]
    pub comment: Option<String>,
    /// create: #rrggbb, e.g. #ffd400 yellow, #2ea8e5 blue.
    #[serde(default = "default_color")]
    #[schemars(default = "default_color", regex(pattern = r"^#[0-9a-fA-F]{6}$"))]
    pub color: String,
    // create: tags for the new annotation.
    pub tags: Option<Vec<TagIn>>,
}

/// One annotation.
#[derive(Debug, Clone, Serialize, JsonSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct AnnotationOut {
    pub key: String,
    /// highlight, underline, note, image or ink.
    #[serde(rename = "type")]
    pub kind: Option<String>,
    /// The attachment (PDF, EPUB, snapshot) the annotation is on.
    pub attachment_key: String,
    /// The page label shown in the reader.
    pub page: Option<String>,
    /// The highlighted or underlined text.
    pub text: Option<String>,
    /// The user's comment.
    pub comment: Option<String>,
    pub color: Option<String>,
    pub tags: Vec<String>,
}

/// Result of `zotero_annotations`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AnnotationsOutput {
    pub action: AnnotationAction,
    pub annotations: Vec<AnnotationOut>,
    /// True when more annotations exist than were returned (more than `limit`, or more than could be read).
    pub truncated: bool,
    /// create: the annotation made.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub created: Option<CreatedAnnotation>,
}

/// The annotation `create` made.
#[derive(Debug, Clone, Serialize, JsonSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct CreatedAnnotation {
    pub annotation_key: String,
    pub attachment_key: String,
    #[serde(rename = "type")]
    pub kind: String,
    /// 1-based page number.
    pub page: usize,
    /// The page's own label, as the reader shows it.
    pub page_label: String,
    /// The highlighted text as the PDF has it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

pub struct Annotations;

impl Tool for Annotations {
    type Input = AnnotationsInput;
    type Output = AnnotationsOutput;
    const SPEC: ToolSpec = ToolSpec::mixed(
        "zotero_annotations",
        "Read and create PDF annotations",
        "`list`: highlights, underlines, notes and images from Zotero's reader, with page, colour and comment. \
         `create` (write scope): highlight or underline a passage quoted from zotero_read_attachment, or a page \
         note. For child notes, zotero_notes.",
    )
    .ask_for_less("a smaller `limit`, or one attachment's key as `itemKey`");

    fn shorten(output: &mut AnnotationsOutput, fraction: f64) -> bool {
        if shorten_list(&mut output.annotations, fraction).is_none() {
            return false;
        }
        output.truncated = true;
        true
    }

    fn render(output: &AnnotationsOutput) -> String {
        if let Some(created) = &output.created {
            let quoted = created.text.as_ref().map(|t| format!(": \"{}\"", truncate(t, 300))).unwrap_or_default();
            return format!(
                "Created {} annotation {} on page {} (label {}) of attachment {}{quoted}",
                created.kind, created.annotation_key, created.page, created.page_label, created.attachment_key
            );
        }
        if output.annotations.is_empty() {
            return "_No annotations._".to_owned();
        }
        let mut lines: Vec<String> = output
            .annotations
            .iter()
            .map(|a| {
                let page = a.page.as_ref().map(|p| format!(" p.{p}")).unwrap_or_default();
                let mut body = Vec::new();
                if let Some(text) = &a.text {
                    body.push(format!("\"{}\"", truncate(text, 500)));
                }
                if let Some(comment) = &a.comment {
                    body.push(format!("— {}", truncate(comment, 500)));
                }
                if !a.tags.is_empty() {
                    body.push(format!("(tags: {})", a.tags.join(", ")));
                }
                let body = if body.is_empty() { "(no text)".to_owned() } else { body.join(" ") };
                format!("- [{}] {}{page}\n  {body}", a.kind.as_deref().unwrap_or("annotation"), a.key)
            })
            .collect();
        if output.truncated {
            lines.push(
                "\n_More annotations exist than are shown (more than `limit`, or more than fit in one answer)._".into(),
            );
        }
        lines.join("\n")
    }

    async fn call(ctx: &RequestContext, input: AnnotationsInput) -> Result<AnnotationsOutput, ToolError> {
        if input.action == AnnotationAction::Create {
            let created = create(ctx, &input).await?;
            return Ok(AnnotationsOutput {
                action: input.action,
                annotations: Vec::new(),
                truncated: false,
                created: Some(created),
            });
        }
        let zotero = ctx.zotero()?;
        // The item and its children together: for an attachment its children are the annotations themselves,
        // so one round trip answers; for a regular item they are its attachments, whose children all go out
        // together in a second.
        let (item, children) =
            join(zotero.item(&input.item_key), zotero.children(&input.item_key, MAX_ATTACHMENT_CHILDREN)).await;
        let item = item?;
        let children = children?;
        let paging = Paging::first(input.limit as usize);
        let pages = if item.item_type() == Some("attachment") {
            vec![children]
        } else {
            let attachments: Vec<ObjectKey> = children
                .items
                .iter()
                .filter(|c| c.item_type() == Some("attachment"))
                .filter_map(|c| ObjectKey::parse(&c.key).ok())
                .take(MAX_ATTACHMENTS)
                .collect();
            let read = join_all(attachments.iter().map(|a| zotero.children(a, MAX_ATTACHMENT_CHILDREN))).await;
            read.into_iter().collect::<Result<Vec<_>, _>>()?
        };
        let mut found: Vec<ZoteroObject> = Vec::new();
        // An attachment with more children than one read returns: annotations were left out even below `limit`.
        let mut cut_short = false;
        for children in pages {
            cut_short |= Paging::first(MAX_ATTACHMENT_CHILDREN)
                .next_offset(children.items.len(), children.total_results)
                .is_some();
            let mut batch: Vec<ZoteroObject> =
                children.items.into_iter().filter(|c| c.item_type() == Some("annotation")).collect();
            zotero_mcp_core::sort::sort_by(&mut batch, |a, b| {
                a.field("annotationSortIndex").cmp(&b.field("annotationSortIndex"))
            });
            found.extend(batch);
        }
        let (page, next_offset) = paging.slice(&found);
        let truncated = next_offset.is_some() || cut_short;
        let annotations = page
            .iter()
            .map(|a| AnnotationOut {
                key: a.key.clone(),
                kind: a.field("annotationType").map(str::to_owned),
                attachment_key: a.field("parentItem").unwrap_or_default().to_owned(),
                page: a.field("annotationPageLabel").map(str::to_owned),
                text: a.field("annotationText").map(str::to_owned),
                comment: a.field("annotationComment").map(str::to_owned),
                color: a.field("annotationColor").map(str::to_owned),
                tags: a
                    .data
                    .get("tags")
                    .and_then(Value::as_array)
                    .map(|t| t.iter().filter_map(|t| t.get("tag").and_then(Value::as_str)).map(str::to_owned).collect())
                    .unwrap_or_default(),
            })
            .collect();
        Ok(AnnotationsOutput { action: input.action, annotations, truncated, created: None })
    }
}

/// `action=create`: the annotation placed on the item's PDF and written as a child of the attachment.
async fn create(ctx: &RequestContext, input: &AnnotationsInput) -> Result<CreatedAnnotation, ToolError> {
    let zotero = ctx.writer()?;
    let kind = match input.kind {
        NewAnnotationType::Highlight => AnnotationKind::Highlight,
        NewAnnotationType::Underline => AnnotationKind::Underline,
        NewAnnotationType::Note => AnnotationKind::Note,
    };
    let request = AnnotationRequest {
        kind,
        page: input.page.map(|p| p as usize),
        text: input.text.clone(),
        comment: input.comment.clone(),
        color: Some(input.color.to_ascii_lowercase()),
        tags: input.tags.iter().flatten().map(TagIn::to_zotero).collect(),
    };
    // `annotate::place` refuses these too; checked here first so that a bad call costs no download.
    if kind == AnnotationKind::Note && request.page.is_none() {
        return Err(ToolError::invalid("a note needs `page`, the 1-based page it goes on"));
    }
    if kind != AnnotationKind::Note && request.text.as_deref().is_none_or(|t| t.trim().is_empty()) {
        return Err(ToolError::invalid("a highlight or underline needs `text`: the passage, quoted from the page"));
    }
    let attachment = attachment::resolve(zotero, &input.item_key).await?;
    if attachment.field("contentType") != Some("application/pdf") {
        return Err(ToolError::Failed(format!(
            "attachment {} is not a PDF ({}), so this server cannot place annotations on it; nothing was written",
            attachment.key,
            attachment.field("contentType").unwrap_or("no content type")
        )));
    }
    let key = attachment::key_of(&attachment)?;
    let (_, data) = attachment::download(ctx.files().await?, &attachment, &key).await?;
    let doc = PdfDocument::open_owned(data, &PdfLimits::default()).map_err(AttachmentError::from)?;
    let placed = annotate::place(&doc, &attachment.key, &request)
        .map_err(|e| ToolError::Failed(format!("{}; nothing was written", e.with_next_step())))?;
    drop(doc);
    let outcome = zotero.write_objects(ObjectKind::Items, std::slice::from_ref(&placed.item)).await?;
    let Some(annotation_key) = outcome.success.get(&0).cloned() else {
        let why = outcome.failed.get(&0).map_or_else(|| "no reason given".to_owned(), |f| f.message.clone());
        return Err(ToolError::Failed(format!("Zotero refused the annotation: {why}; nothing was written")));
    };
    Ok(CreatedAnnotation {
        annotation_key,
        attachment_key: attachment.key.clone(),
        kind: kind.as_str().to_owned(),
        page: placed.page,
        page_label: placed.page_label,
        text: placed.text,
    })
}
