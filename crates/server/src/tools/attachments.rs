//! `zotero_read_attachment`: an attachment's text (Zotero's index, else the stored file), its PDF outline, or
//! what Zotero records about its file.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use zotero_mcp_core::attachment::{
    self, AttachmentError, Candidate, PageRange, ReadSource, TextRead, DEFAULT_MAX_PAGES,
};
use zotero_mcp_core::zotero::journal::title_of;
use zotero_mcp_core::zotero::FullText;

use super::args::Key;
use crate::config::ToolGroup;
use crate::confirm::Proposal;
use crate::context::RequestContext;
use crate::mcp::apps::Panel;
use crate::mcp::registry::MAX_TEXT_CHARS;
use crate::mcp::{Tool, ToolError, ToolSpec};

// What to read.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum ReadMode {
    /// The text, page by page for PDFs.
    #[default]
    Text,
    /// The PDF's table of contents.
    Outline,
    /// What Zotero records about the file (no download).
    Info,
}

fn default_max_pages() -> u32 {
    DEFAULT_MAX_PAGES as u32
}

/// Arguments of `zotero_read_attachment`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReadAttachmentInput {
    // An attachment, or a regular item whose best file (a PDF first) is read.
    pub item_key: Key,
    #[serde(default)]
    #[schemars(default)]
    pub mode: ReadMode,
    /// 1-based; a page range reads the file, not Zotero's index.
    #[validate(range(min = 1))]
    pub from_page: Option<u32>,
    // Last page to read.
    #[validate(range(min = 1))]
    pub to_page: Option<u32>,
    // The most pages read in one call; a longer range is cut and says where to continue.
    #[validate(range(min = 1, max = 200))]
    #[serde(default = "default_max_pages")]
    #[schemars(default = "default_max_pages")]
    pub max_pages: u32,
    /// Read the file even when Zotero's index has the text.
    #[serde(default)]
    #[schemars(default)]
    pub force_file: bool,
    /// Store the text read in Zotero's full-text index (write scope; whole PDFs).
    #[serde(default)]
    #[schemars(default)]
    pub write_back_index: bool,
}

/// One outline entry.
#[derive(Debug, Clone, Serialize, JsonSchema, PartialEq)]
pub struct OutlineOut {
    pub title: String,
    /// 0 for top-level entries.
    pub level: usize,
    /// The page it opens, when it names one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page: Option<usize>,
}

/// One stored file of the item, as it was weighed to choose the one to read.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CandidateOut {
    pub key: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content_type: Option<String>,
    /// Characters of its text in Zotero's full-text index; null when not measured (only one PDF, or past the
    /// first five), which is not 0.
    pub chars: Option<u64>,
}

impl From<Candidate> for CandidateOut {
    fn from(c: Candidate) -> Self {
        Self { key: c.key, title: c.title, content_type: c.content_type, chars: c.chars }
    }
}

/// Result of `zotero_read_attachment`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReadAttachmentOutput {
    pub attachment_key: String,
    /// `zotero-index`, `webdav`, `zotero-storage`, `zotero-desktop` or (mode info) `metadata`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_pages: Option<u64>,
    /// Pages read, 1-based.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pages: Vec<usize>,
    /// Whether more remains than this answer holds (pages, text, or outline entries).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truncated: Option<bool>,
    /// When truncated: the `fromPage` that continues the read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_from_page: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outline: Option<Vec<OutlineOut>>,
    /// Why the answer is incomplete, when it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Mode info: filename, contentType, linkMode, md5, mtime, title, parentItem, onWebDav (whether the file
    /// store has the file) and storedIn (`WebDAV` or `Zotero Storage`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<Value>,
    /// What happened to `writeBackIndex`, when it was asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index_write_back: Option<String>,
    /// Given a regular item: its stored files as they were weighed, the one read first (of several PDFs, the
    /// one with the longest indexed text; `chars` null where not measured).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub attachment_candidates: Vec<CandidateOut>,
}

pub struct ReadAttachment;

impl Tool for ReadAttachment {
    type Input = ReadAttachmentInput;
    type Output = ReadAttachmentOutput;
    const SPEC: ToolSpec = ToolSpec::read(
        "zotero_read_attachment",
        "Read an attachment",
        "An attachment's text (PDF, EPUB, HTML; given an item, its best file), outline or file facts (`mode`); \
         long files by pages (`fromPage` = `nextFromPage`). `writeBackIndex` needs the write scope. To answer a \
         question, zotero_retrieve.",
    )
    .group(ToolGroup::Files)
    .ask_for_less("a smaller `maxPages`, or a page range with `fromPage` and `toPage`")
    .panel(Panel::Evidence);

    /// Only the outline can be cut here: a text read is fitted to the answer while it is read.
    fn shorten(output: &mut ReadAttachmentOutput, fraction: f64) -> bool {
        let Some(outline) = output.outline.as_mut() else { return false };
        let keep = ((outline.len() as f64) * fraction) as usize;
        if keep == 0 || keep >= outline.len() {
            return false;
        }
        let total = outline.len();
        outline.truncate(keep);
        output.truncated = Some(true);
        output.note = Some(format!("Only the first {keep} of {total} outline entries fit in one answer."));
        true
    }

    fn render(output: &ReadAttachmentOutput) -> String {
        if let Some(outline) = &output.outline {
            if outline.is_empty() {
                return format!("_The PDF of attachment {} has no outline._", output.attachment_key);
            }
            let mut text = format!("Outline of attachment {}\n\n", output.attachment_key);
            text += &outline
                .iter()
                .map(|e| {
                    let page = e.page.map(|p| format!(" (p.{p})")).unwrap_or_default();
                    format!("{}- {}{page}", "  ".repeat(e.level), e.title)
                })
                .collect::<Vec<_>>()
                .join("\n");
            if let Some(note) = &output.note {
                text.push_str(&format!("\n\n> {note}"));
            }
            return text;
        }
        if let Some(file) = &output.file {
            let show = |name: &str, missing: &str| match file.get(name) {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Number(n)) => n.to_string(),
                Some(Value::Bool(b)) => if *b { "yes" } else { "no" }.to_owned(),
                _ => missing.to_owned(),
            };
            let mut lines = vec![
                format!("- attachment: {}", output.attachment_key),
                format!("- filename: {}", show("filename", "(none)")),
                format!("- contentType: {}", show("contentType", "(unknown)")),
                format!("- linkMode: {}", show("linkMode", "(unknown)")),
                format!("- md5: {}", show("md5", "(not uploaded yet)")),
                format!("- mtime: {}", show("mtime", "(none)")),
            ];
            if file.get("onWebDav").is_some_and(|v| !v.is_null()) {
                lines.push(format!("- on {}: {}", show("storedIn", "WebDAV"), show("onWebDav", "unknown")));
            }
            return lines.join("\n");
        }
        let source = match output.source.as_deref() {
            Some("zotero-index") => "Zotero's full-text index",
            Some("zotero-storage") => "the file on Zotero Storage",
            Some("zotero-desktop") => "the file in Zotero Desktop's data directory",
            _ => "the file on WebDAV",
        };
        let mut header = vec![format!("Attachment {} · from {source}", output.attachment_key)];
        if let Some(total) = output.total_pages.filter(|t| *t > 0) {
            header.push(format!("pages: {total}"));
        }
        if let (Some(first), Some(last)) = (output.pages.first(), output.pages.last()) {
            header.push(format!("read: {first}–{last}"));
        }
        if output.truncated == Some(true) {
            header.push(match output.next_from_page {
                Some(next) => format!("TRUNCATED — call again with fromPage: {next} to continue"),
                None => "TRUNCATED".to_owned(),
            });
        }
        let mut text = header.join(" · ");
        if output.attachment_candidates.len() > 1 {
            let weighed: Vec<String> = output
                .attachment_candidates
                .iter()
                .map(|c| match c.chars {
                    Some(chars) => format!("{} ({chars} characters indexed)", c.key),
                    None => format!("{} (not measured)", c.key),
                })
                .collect();
            text.push_str(&format!("\nRead the best of the item's stored files: {}", weighed.join(", ")));
        }
        if let Some(note) = &output.note {
            text.push_str(&format!("\n{note}"));
        }
        if let Some(note) = &output.index_write_back {
            text.push_str(&format!("\n{note}"));
        }
        text.push_str("\n\n");
        text.push_str(output.text.as_deref().unwrap_or_default());
        text
    }

    async fn call(ctx: &RequestContext, input: ReadAttachmentInput) -> Result<ReadAttachmentOutput, ToolError> {
        // Writing the index back is a write: refused before anything is read on a read-only grant.
        let writer = if input.write_back_index { Some(ctx.writer()?) } else { None };
        let zotero = ctx.zotero()?;
        let (item, candidates) = attachment::resolve_weighed(zotero, &input.item_key).await?;
        let mut output = ReadAttachmentOutput {
            attachment_key: item.key.clone(),
            source: None,
            total_pages: None,
            pages: Vec::new(),
            truncated: None,
            next_from_page: None,
            text: None,
            outline: None,
            note: None,
            file: None,
            index_write_back: None,
            attachment_candidates: candidates.into_iter().map(CandidateOut::from).collect(),
        };
        let files = ctx.files().await?;
        match input.mode {
            ReadMode::Info => {
                let mut file = attachment::file_facts(&item);
                // `onWebDav` is the TypeScript server's name for "the store has the file" (kept, so its readers
                // keep working), `storedIn` names the store; null without a store.
                if let (Some(store), Ok(key)) = (files, attachment::key_of(&item)) {
                    let stored = store.has_file(&key).await.map_err(AttachmentError::from)?;
                    file["onWebDav"] = Value::Bool(stored);
                    file["storedIn"] = Value::String(store.kind().name().into());
                } else {
                    file["onWebDav"] = Value::Null;
                }
                output.source = Some("metadata".into());
                output.file = Some(file);
            }
            ReadMode::Outline => {
                let outline = attachment::read_outline(files, &item).await?;
                output.outline = Some(
                    outline
                        .into_iter()
                        .map(|e| OutlineOut { title: e.title, level: e.depth.saturating_sub(1), page: e.page })
                        .collect(),
                );
            }
            ReadMode::Text => {
                let range = PageRange {
                    from: input.from_page.map(|p| p as usize),
                    to: input.to_page.map(|p| p as usize),
                    max_pages: input.max_pages as usize,
                    max_chars: Some(MAX_TEXT_CHARS),
                    cpu_limit_ms: ctx.services().config().cpu_limit_ms,
                };
                let read = attachment::read_text(zotero, files, ctx.cache(), &item, range, input.force_file).await?;
                if let Some(writer) = writer {
                    let whole = range.from.is_none() && range.to.is_none() && !read.truncated;
                    output.index_write_back = Some(match (read.source, read.total_pages) {
                        (ReadSource::ZoteroIndex, _) => {
                            "Zotero's index already has this text; nothing was written.".into()
                        }
                        _ if !whole => {
                            "The index was not updated: only a whole-document read can be written back.".into()
                        }
                        (_, None) => "The index was not updated: only PDFs are written back.".into(),
                        _ if read.text.trim().is_empty() => "The index was not updated: no text was found.".into(),
                        (_, Some(total)) => {
                            let key = attachment::key_of(&item)?;
                            let text = FullText {
                                content: read.text.clone(),
                                indexed_pages: Some(read.pages.len() as u64),
                                total_pages: Some(total),
                                indexed_chars: None,
                                total_chars: None,
                            };
                            match writer.put_fulltext(&key, &text).await {
                                Ok(_) => "The text was written to Zotero's full-text index.".into(),
                                Err(e) => format!("The index was not updated: {e}"),
                            }
                        }
                    });
                }
                output.source = Some(read.source.name().into());
                output.note = read_note(&read, input.max_pages);
                output.next_from_page = match (read.truncated, read.pages.last()) {
                    (true, Some(last)) => {
                        Some(last + 1).filter(|next| read.total_pages.is_none_or(|t| *next as u64 <= t))
                    }
                    _ => None,
                };
                output.total_pages = read.total_pages;
                output.pages = read.pages;
                output.truncated = Some(read.truncated);
                output.text = Some(read.text);
            }
        }
        Ok(output)
    }
}

/// Why a text read stops where it does, when that is not simply the last page asked for.
fn read_note(read: &TextRead, max_pages: u32) -> Option<String> {
    if !read.truncated {
        return None;
    }
    let next = read.pages.last().map(|last| last + 1);
    Some(match (read.cut, read.pages.as_slice(), read.source) {
        (true, [page], _) => format!("Page {page} alone is longer than one answer; this is its beginning."),
        (true, _, ReadSource::ZoteroIndex) => {
            "This is the beginning of Zotero's index text, which has no pages; read the file by page with fromPage."
                .to_owned()
        }
        (true, _, _) => "This is the beginning of the text, which has no pages to continue from.".to_owned(),
        (false, pages, _) if pages.len() < max_pages as usize => {
            format!("Only {} pages fit in one answer; continue with fromPage: {}.", pages.len(), next.unwrap_or(1))
        }
        (false, _, _) => return None,
    })
}

/// Arguments of `zotero_delete_attachment`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DeleteAttachmentInput {
    // The attachment whose stored file (PDF, EPUB, snapshot…) goes. Any other item is refused: use
    // zotero_delete_items for those.
    pub attachment_key: Key,
    /// Delete it and its file for good, not to the trash. Cannot be undone.
    #[serde(default)]
    #[schemars(default)]
    pub permanent: bool,
}

/// Result of `zotero_delete_attachment`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeleteAttachmentOutput {
    pub attachment_key: String,
    pub permanent: bool,
    /// Whether the stored file was removed, from WebDAV or with the item on Zotero Storage (permanent deletes
    /// only; null when not attempted).
    pub files_removed: Option<bool>,
    /// What was done, and what was left as it was.
    pub note: String,
}

pub struct DeleteAttachment;

impl Tool for DeleteAttachment {
    type Input = DeleteAttachmentInput;
    type Output = DeleteAttachmentOutput;
    const SPEC: ToolSpec = ToolSpec::write(
        "zotero_delete_attachment",
        "Delete an attachment",
        "Moves a stored-file attachment (PDF, EPUB, snapshot) to the trash, its file kept, or with `permanent` \
         deletes it and its file for good. Refuses other items: use zotero_delete_items for those.",
    )
    .group(ToolGroup::Files)
    .confirms()
    .idempotent();

    fn render(output: &DeleteAttachmentOutput) -> String {
        output.note.clone()
    }

    /// Deleting for good is asked about (the trash is Zotero's own undo).
    fn needs_confirmation(input: &DeleteAttachmentInput) -> bool {
        input.permanent
    }

    async fn call(ctx: &RequestContext, input: DeleteAttachmentInput) -> Result<DeleteAttachmentOutput, ToolError> {
        let key = &input.attachment_key;
        let item = ctx.zotero()?.item(key).await?;
        // Only what this tool is for: a stored file (Q2: the TypeScript server deleted any item given).
        attachment::require_stored_file(&item).map_err(|refused| {
            ToolError::Failed(format!(
                "{refused}; nothing was deleted. zotero_delete_attachment removes stored-file attachments only: use \
                 zotero_delete_items for other items"
            ))
        })?;
        let confirmed = match input.permanent {
            true => {
                let file = item.field("filename").unwrap_or("its file");
                let parent = item.field("parentItem").map(|p| format!(" of item {p}")).unwrap_or_default();
                let proposal = Proposal::new(format!(
                    "Delete the attachment \u{201c}{}\u{201d} ({key}){parent} for good, with {file} from the file \
                     store. Zotero cannot restore it from its trash.",
                    title_of(&item.data)
                ));
                Some(ctx.confirm(proposal).await?)
            }
            false => None,
        };
        let zotero = ctx.writer_after(confirmed)?;
        let mut output = DeleteAttachmentOutput {
            attachment_key: item.key.clone(),
            permanent: input.permanent,
            files_removed: None,
            note: String::new(),
        };
        if !input.permanent {
            let payload = [serde_json::json!({ "key": item.key, "version": item.version, "deleted": 1 })];
            let outcome = zotero.write_objects(zotero_mcp_core::zotero::ObjectKind::Items, &payload).await?;
            if let Some(unknown) = outcome.unknown.get(&0) {
                return Err(ToolError::Failed(format!(
                    "whether {key} was moved to the trash is unknown: {} (zotero_get_item {key} shows it)",
                    unknown.message
                )));
            }
            if !outcome.is_written(0) {
                let why = outcome.failed.get(&0).map_or_else(|| "it was not written".to_owned(), |f| f.message.clone());
                return Err(ToolError::Failed(format!("{key} was not moved to the trash: {why}")));
            }
            output.note = format!(
                "Moved attachment {key} to the trash. Its file stays where it is stored, so restoring it in Zotero \
                 brings the file back; permanent=true deletes both."
            );
            return Ok(output);
        }
        // The store is known before anything is deleted; a store that cannot be used does not stop the delete.
        let files = ctx.file_writer_after(confirmed).await;
        // The item first, then its files: an item whose file is gone would show as missing in Zotero Desktop,
        // while files left without an item harm nothing.
        zotero.delete_item(key, item.version).await?;
        output.note = match files {
            Err(error) => format!(
                "Deleted attachment {key} for good. Its stored file was left as it was: the file store cannot be \
                 used here ({error})."
            ),
            Ok(files) => match attachment::write::remove_file_of_deleted_item(files, key).await {
                Ok(()) => {
                    output.files_removed = Some(true);
                    format!("Deleted attachment {key} for good, with its file on {}.", files.kind())
                }
                Err(left) => {
                    output.files_removed = Some(false);
                    format!("Deleted attachment {key} for good, but its file was not removed: {left}.")
                }
            },
        };
        Ok(output)
    }
}
