//! `zotero_put_attachment`: stores a file (sent as base64, or fetched from a URL) as a new attachment, or as the
//! new file of an existing one. The write order and what a failure part-way leaves are in
//! `zotero_mcp_core::attachment::write`.

use base64::Engine;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use zotero_mcp_core::attachment::write::{self, NewAttachment, StoredAttachment, Upload, WriteError};
use zotero_mcp_core::files::StoreKind;
use zotero_mcp_core::zotero::journal::title_of;
use zotero_mcp_core::zotero::ZoteroObject;

use super::args::Key;
use super::items::TagIn;
use super::next_step::{record_again, NextStep};
use crate::config::ToolGroup;
use crate::confirm::Proposal;
use crate::context::RequestContext;
use crate::mcp::{Tool, ToolError, ToolSpec};

/// The largest file accepted as `base64Data`, decoded: its encoded text (a third larger) must fit, with the rest
/// of the message, in the 4 MiB a request may have (`router::body_limit`, and a stdio line). Larger files come by
/// `sourceUrl` (40 MiB), which never passes through a request body.
pub const MAX_BASE64_BYTES: usize = 3_000_000;

/// Arguments of `zotero_put_attachment`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PutAttachmentInput {
    // The regular item the new attachment belongs to; leave out for a standalone attachment.
    pub parent_item_key: Option<Key>,
    /// Give this attachment the file instead (name and type kept unless given).
    pub replace_attachment_key: Option<Key>,
    // A public https URL to download the file from (at most 40 MiB; redirects are followed to public hosts only).
    #[schemars(url)]
    pub source_url: Option<String>,
    /// Base64 (a data: prefix is fine), up to 3 MB decoded.
    pub base64_data: Option<String>,
    /// Default: the URL's name, else attachment.pdf.
    #[validate(length(min = 1, max = 255))]
    pub filename: Option<String>,
    /// Default: from the file name.
    #[validate(length(min = 3, max = 255))]
    pub content_type: Option<String>,
    /// Default: the file name.
    #[validate(length(min = 1, max = 1000))]
    pub title: Option<String>,
    // Tags for the new attachment.
    pub tags: Option<Vec<TagIn>>,
    /// For a standalone attachment.
    pub collections: Option<Vec<Key>>,
}

/// Result of `zotero_put_attachment`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PutAttachmentOutput {
    pub attachment_key: String,
    pub filename: String,
    pub bytes: usize,
    pub md5: String,
    pub content_type: String,
    /// True when an existing attachment's file was replaced.
    pub replaced: bool,
    /// Whether the item records all of the new file: md5/mtime, name and type (false only when the last step,
    /// that item write, failed: the file itself is stored; see `warning`).
    pub recorded: bool,
    /// Where the file is stored: `WebDAV` or `Zotero Storage`.
    pub stored_in: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
}

pub struct PutAttachment;

impl Tool for PutAttachment {
    type Input = PutAttachmentInput;
    type Output = PutAttachmentOutput;
    const SPEC: ToolSpec = ToolSpec::write(
        "zotero_put_attachment",
        "Upload or replace an attachment file",
        "Stores a file (https `sourceUrl` up to 40 MiB, or `base64Data` up to 3 MB) as a new attachment under \
         `parentItemKey` or standalone, or as the new file of `replaceAttachmentKey`. For a paper and its PDF by \
         DOI, zotero_import_reference.",
    )
    .group(ToolGroup::Files)
    .confirms()
    .open_world();

    fn render(output: &PutAttachmentOutput) -> String {
        let verb = if output.replaced { "Replaced the file of attachment" } else { "Created attachment" };
        let mut lines = vec![
            format!("{verb} {}", output.attachment_key),
            format!("- filename: {}", output.filename),
            format!("- contentType: {}", output.content_type),
            format!("- size: {} bytes", output.bytes),
            format!("- md5: {}", output.md5),
            String::new(),
        ];
        match &output.warning {
            Some(warning) => lines.push(warning.clone()),
            None if output.stored_in == StoreKind::Desktop.name() => lines.push(format!(
                "Zotero Desktop stored the file in its data directory (storage/{}/); it syncs it as its own.",
                output.attachment_key
            )),
            None => {
                lines.push(format!("The file is on {}; Zotero Desktop picks it up on its next sync.", output.stored_in))
            }
        }
        lines.join("\n")
    }

    /// Replacing a file is asked about (the earlier file is kept for undo on WebDAV only).
    fn needs_confirmation(input: &PutAttachmentInput) -> bool {
        input.replace_attachment_key.is_some()
    }

    async fn call(ctx: &RequestContext, mut input: PutAttachmentInput) -> Result<PutAttachmentOutput, ToolError> {
        refuse_new_only_arguments(&input)?;
        if let Some(content_type) = &input.content_type {
            if !is_media_type(content_type) {
                return Err(ToolError::invalid(format!(
                    "contentType {content_type:?} is not a MIME type such as application/pdf"
                )));
            }
        }
        // Taken out of the input, so the encoded text is freed as soon as it is decoded.
        let source = match (input.source_url.clone(), input.base64_data.take()) {
            (Some(_), Some(_)) => return Err(ToolError::invalid("give either sourceUrl or base64Data, not both")),
            (None, None) => return Err(ToolError::invalid("give the file as sourceUrl or as base64Data")),
            (Some(url), None) => Source::Url(url),
            (None, Some(encoded)) => Source::Encoded(encoded),
        };
        // The attachment being replaced is read, and the replacement allowed, before the file is fetched: a
        // question answered no costs no download.
        let (current, confirmed) = match &input.replace_attachment_key {
            Some(key) => {
                let item = ctx.zotero()?.item(key).await?;
                let confirmed = ctx.confirm(replacement_plan(&item, &source, input.filename.as_deref())).await?;
                (Some(item), Some(confirmed))
            }
            None => (None, None),
        };
        let zotero = ctx.writer_after(confirmed)?;
        let files = ctx.file_writer_after(confirmed).await?;
        let (data, fetched_name, fetched_type) = match source {
            Source::Url(url) => {
                let download = ctx
                    .services()
                    .download(&url)
                    .await
                    .map_err(|e| ToolError::Failed(format!("{e}. Nothing was written.")))?;
                (download.bytes, download.filename, download.content_type)
            }
            Source::Encoded(encoded) => (decode_base64(&encoded)?, None, None),
        };
        if input.content_type.as_deref() == Some("application/pdf") && !looks_like_pdf(&data) {
            return Err(ToolError::invalid(
                "contentType is application/pdf but the data is not a PDF (no %PDF- header); check the source, or \
                 give the right contentType",
            ));
        }
        let stored = match &input.replace_attachment_key {
            Some(key) => {
                let item = match current {
                    Some(item) => item,
                    None => zotero.item(key).await?,
                };
                // Only a name the caller gives replaces the stored one, not one the URL suggests (Q4).
                let (filename, content_type) = (input.filename.as_deref(), input.content_type.as_deref());
                write::replace(zotero, files, ctx.services().clock(), &item, filename, content_type, data).await
            }
            None => {
                let filename = match input.filename.clone().or(fetched_name) {
                    Some(name) => name,
                    None => default_name(&data)?,
                };
                let content_type = input.content_type.clone().or_else(|| {
                    let guessed = zotero_mcp_core::attachment::guess_content_type(&filename);
                    match (guessed, fetched_type) {
                        ("application/octet-stream", Some(served)) => Some(served),
                        _ => None,
                    }
                });
                let meta = NewAttachment {
                    parent: input.parent_item_key.as_ref().map(|k| k.0.clone()),
                    title: input.title.clone(),
                    url: input.source_url.clone(),
                    tags: input.tags.iter().flatten().map(TagIn::to_zotero).collect(),
                    collections: input.collections.iter().flatten().map(|k| k.as_str().to_owned()).collect(),
                };
                write::create(zotero, files, ctx.services().clock(), Upload { filename, content_type, data }, meta)
                    .await
            }
        };
        let stored: StoredAttachment = stored.map_err(write_error)?;
        let warning = stored
            .warning
            .as_ref()
            .map(|warning| format!("{warning}{}", record_again(&stored.key, &stored.content_type)));
        Ok(PutAttachmentOutput {
            recorded: stored.recorded(),
            attachment_key: stored.key,
            filename: stored.filename,
            bytes: stored.bytes,
            md5: stored.md5,
            content_type: stored.content_type,
            replaced: input.replace_attachment_key.is_some(),
            stored_in: files.kind().name(),
            warning,
        })
    }
}

/// Where the new file comes from: exactly one of `sourceUrl` and `base64Data`.
enum Source {
    Url(String),
    Encoded(String),
}

/// What replacing `item`'s file will do, for the person asked to allow it.
fn replacement_plan(item: &ZoteroObject, source: &Source, filename: Option<&str>) -> Proposal {
    let now = item.field("filename").map(|f| format!(", now \u{201c}{f}\u{201d},")).unwrap_or_default();
    let source = match source {
        Source::Url(url) => format!("the file at {url}"),
        Source::Encoded(encoded) => format!("the file given (about {} bytes)", encoded.len() / 4 * 3),
    };
    let named = filename.map(|f| format!(", named \u{201c}{f}\u{201d}")).unwrap_or_default();
    Proposal::new(format!(
        "Replace the file of the attachment \u{201c}{}\u{201d} ({}){now} with {source}{named}. On WebDAV the earlier \
         file is kept for zotero_undo; on Zotero Storage it is gone for good.",
        title_of(&item.data),
        item.key
    ))
}

/// Arguments only a new attachment takes are refused with a replacement, before anything is read or written.
fn refuse_new_only_arguments(input: &PutAttachmentInput) -> Result<(), ToolError> {
    if input.replace_attachment_key.is_some() {
        let extras = [
            (input.parent_item_key.is_some(), "parentItemKey"),
            (input.title.is_some(), "title"),
            (input.tags.is_some(), "tags"),
            (input.collections.is_some(), "collections"),
        ];
        let given: Vec<&str> = extras.iter().filter(|(set, _)| *set).map(|(_, name)| *name).collect();
        if !given.is_empty() {
            return Err(ToolError::invalid(format!(
                "{} only apply to a new attachment; replacing a file keeps the attachment's metadata (change it with \
                 zotero_update_item)",
                given.join(", ")
            )));
        }
    }
    Ok(())
}

/// The bytes of a base64 argument: an optional `data:` URL prefix, whitespace and line breaks, standard or
/// URL-safe alphabet, with or without padding. The size is checked before decoding.
fn decode_base64(encoded: &str) -> Result<Vec<u8>, ToolError> {
    let body = match encoded.trim_start().strip_prefix("data:") {
        Some(rest) => rest.split_once(',').map(|(_, data)| data).unwrap_or_default(),
        None => encoded,
    };
    let compact: String = body.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    if compact.len() / 4 * 3 > MAX_BASE64_BYTES + 3 {
        return Err(ToolError::invalid(format!(
            "the file is about {} bytes, over the {MAX_BASE64_BYTES}-byte limit for base64Data; put the file at a \
             public https URL and pass sourceUrl instead (up to 40 MiB)",
            compact.len() / 4 * 3
        )));
    }
    let trimmed = compact.trim_end_matches('=');
    let engines = [base64::engine::general_purpose::STANDARD_NO_PAD, base64::engine::general_purpose::URL_SAFE_NO_PAD];
    let data = engines
        .iter()
        .find_map(|engine| engine.decode(trimmed).ok())
        .ok_or_else(|| ToolError::invalid("base64Data is not valid base64; send the file's bytes base64-encoded"))?;
    if data.is_empty() {
        return Err(ToolError::invalid("base64Data is empty"));
    }
    Ok(data)
}

/// A name for a new file sent without one, from what the bytes are.
fn default_name(data: &[u8]) -> Result<String, ToolError> {
    if looks_like_pdf(data) {
        return Ok("attachment.pdf".into());
    }
    if data.starts_with(b"PK\x03\x04") && data.get(30..58) == Some(b"mimetypeapplication/epub+zip") {
        return Ok("attachment.epub".into());
    }
    Err(ToolError::invalid(
        "give a filename (with its extension): the file is not a PDF or EPUB, so no name can be guessed",
    ))
}

fn looks_like_pdf(data: &[u8]) -> bool {
    data[..data.len().min(1024)].windows(5).any(|w| w == b"%PDF-")
}

/// `type/subtype`, each a token (parameters such as `; charset=utf-8` allowed after).
fn is_media_type(value: &str) -> bool {
    let essence = value.split(';').next().unwrap_or_default().trim();
    let token = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$&^_.+-".contains(&b));
    essence.split_once('/').is_some_and(|(t, s)| token(t) && token(s))
}

fn write_error(error: WriteError) -> ToolError {
    match error {
        WriteError::Invalid { .. } | WriteError::Refused(_) => ToolError::invalid(error.with_next_step()),
        other => ToolError::Failed(other.with_next_step()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_in_its_usual_forms_decodes() {
        let pdf = b"%PDF-1.4 hello";
        let standard = base64::engine::general_purpose::STANDARD.encode(pdf);
        assert_eq!(decode_base64(&standard).unwrap(), pdf);
        assert_eq!(decode_base64(&format!("data:application/pdf;base64,{standard}")).unwrap(), pdf);
        let wrapped: String = standard
            .chars()
            .enumerate()
            .flat_map(|(i, c)| [c].into_iter().chain((i % 4 == 3).then_some('\n')))
            .collect();
        assert_eq!(decode_base64(&wrapped).unwrap(), pdf);
        let url_safe = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode([0xfb, 0xff, 0xfe]);
        assert_eq!(decode_base64(&url_safe).unwrap(), [0xfb, 0xff, 0xfe]);
        assert!(decode_base64("not base64!").is_err());
        let too_big = "A".repeat(MAX_BASE64_BYTES / 3 * 4 + 8);
        let error = decode_base64(&too_big).unwrap_err().to_string();
        assert!(error.contains("sourceUrl"), "{error}");
        assert!(decode_base64("").is_err());
    }

    #[test]
    fn names_and_types_are_checked() {
        assert_eq!(default_name(b"%PDF-1.7\n...").unwrap(), "attachment.pdf");
        assert!(default_name(b"hello").is_err());
        assert!(is_media_type("application/pdf"));
        assert!(is_media_type("text/html; charset=utf-8"));
        assert!(!is_media_type("pdf"));
        assert!(!is_media_type("application/"));
    }
}
