//! `zotero_annotations`: the highlights, underlines, notes and image selections made on an item's PDFs.

use futures_util::future::{join, join_all};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use validator::Validate;
use zotero_mcp_core::zotero::{ObjectKey, ZoteroObject};

use super::args::Key;
use super::paging::Paging;
use crate::context::RequestContext;
use crate::format::text::truncate;
use crate::mcp::{Tool, ToolError, ToolSpec};

/// What to do. Only listing is available; creating anchored highlights needs the PDF support.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum AnnotationAction {
    #[default]
    List,
}

fn default_limit() -> u32 {
    100
}

/// Attachments of an item that are searched for annotations.
const MAX_ATTACHMENTS: usize = 100;
/// Children (annotations, notes) read per attachment.
const MAX_ATTACHMENT_CHILDREN: usize = 500;

/// Arguments of `zotero_annotations`.
#[derive(Debug, Serialize, Deserialize, JsonSchema, Validate)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AnnotationsInput {
    #[serde(default)]
    #[schemars(default)]
    pub action: AnnotationAction,
    /// A regular item (its attachments are searched) or an attachment.
    pub item_key: Key,
    /// How many annotations to return.
    #[validate(range(min = 1, max = 500))]
    #[serde(default = "default_limit")]
    #[schemars(default = "default_limit")]
    pub limit: u32,
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
}

pub struct Annotations;

impl Tool for Annotations {
    type Input = AnnotationsInput;
    type Output = AnnotationsOutput;
    const SPEC: ToolSpec = ToolSpec::read(
        "zotero_annotations",
        "List an item's annotations",
        "Lists the highlights, underlines, notes and image selections made in Zotero's reader on an item's \
         attachments (or on one attachment), in reading order, with their text, comment, colour, page and tags.",
    );

    fn render(output: &AnnotationsOutput) -> String {
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
            lines.push("\n_More annotations exist; raise `limit` to see them._".into());
        }
        lines.join("\n")
    }

    async fn call(ctx: &RequestContext, input: AnnotationsInput) -> Result<AnnotationsOutput, ToolError> {
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
            batch.sort_by(|a, b| a.field("annotationSortIndex").cmp(&b.field("annotationSortIndex")));
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
        Ok(AnnotationsOutput { action: input.action, annotations, truncated })
    }
}
