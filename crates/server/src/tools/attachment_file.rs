//! `zotero_attachment_file`: a stored PDF's bytes, for the evidence panel of MCP Apps to draw its pages. Only
//! panels call it (`crate::mcp::apps`): it is listed, marked for the app alone, to a client that declared the
//! extension. The file comes from the library's file store, the same one `zotero_read_attachment` reads, so
//! the panel never holds a URL or a credential of its own.

use base64::Engine as _;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use zotero_mcp_core::attachment::{self, AttachmentError};

use super::args::Key;
use crate::config::ToolGroup;
use crate::context::RequestContext;
use crate::mcp::{Tool, ToolError, ToolSpec};

/// The largest file handed to a panel. It travels as base64 in one answer, through the host to the frame.
pub const MAX_PANEL_FILE_BYTES: usize = 20 * 1024 * 1024;

/// Arguments of `zotero_attachment_file`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AttachmentFileInput {
    /// A PDF attachment, an annotation on one, or a regular item whose best file is taken.
    pub key: Key,
}

/// Result of `zotero_attachment_file`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AttachmentFileOutput {
    pub attachment_key: String,
    pub content_type: String,
    pub filename: String,
    /// The file's size in bytes.
    pub bytes: u64,
    /// Where the file came from: `webdav`, `zotero-storage` or `zotero-desktop`.
    pub source: String,
    /// The file, in standard base64.
    pub data: String,
}

/// Why a file is not handed to a panel.
#[derive(Debug, thiserror::Error)]
pub enum PanelFileError {
    #[error(
        "{key} is a {content_type} file; the panel draws PDF pages only. Read its text with zotero_read_attachment."
    )]
    NotPdf { key: String, content_type: String },
    #[error(
        "{key} is {bytes} bytes, over the {limit} bytes a panel is sent. Read its text with zotero_read_attachment, \
         or open it in Zotero."
    )]
    TooLarge { key: String, bytes: usize, limit: usize },
}

impl From<PanelFileError> for ToolError {
    fn from(error: PanelFileError) -> Self {
        ToolError::Failed(error.to_string())
    }
}

pub struct AttachmentFile;

impl Tool for AttachmentFile {
    type Input = AttachmentFileInput;
    type Output = AttachmentFileOutput;
    const SPEC: ToolSpec = ToolSpec::read(
        "zotero_attachment_file",
        "Attachment file (for panels)",
        "The stored PDF of an attachment, an annotation's attachment or an item, as base64, for a panel to draw. \
         Not for reading text: use zotero_read_attachment.",
    )
    .group(ToolGroup::Files)
    .app_only();

    fn render(output: &AttachmentFileOutput) -> String {
        format!(
            "{} of attachment {} ({}, {} bytes, from {}), for the panel to draw.",
            output.filename, output.attachment_key, output.content_type, output.bytes, output.source
        )
    }

    async fn call(ctx: &RequestContext, input: AttachmentFileInput) -> Result<AttachmentFileOutput, ToolError> {
        let zotero = ctx.zotero()?;
        let item = zotero.item(&input.key).await.map_err(AttachmentError::from)?;
        // An attachment is the file's own item; an annotation names its attachment as its parent; a regular item
        // is resolved as zotero_read_attachment resolves it (its best file).
        let attachment = match item.field("itemType") {
            Some("attachment") => item,
            Some("annotation") => {
                let parent = item.field("parentItem").and_then(|p| zotero_mcp_core::zotero::ObjectKey::parse(p).ok());
                let parent = parent.ok_or_else(|| AttachmentError::NotAttachment { key: item.key.clone() })?;
                attachment::resolve(zotero, &parent).await?
            }
            _ => attachment::resolve(zotero, &input.key).await?,
        };
        let attachment_key = attachment::key_of(&attachment)?;
        let files = ctx.files().await?;
        let store = files.map(|f| f.kind());
        let (filename, data) = attachment::download(files, &attachment, &attachment_key).await?;
        let content_type = attachment
            .field("contentType")
            .map_or_else(|| attachment::guess_content_type(&filename).to_owned(), str::to_owned);
        if content_type != "application/pdf" {
            return Err(PanelFileError::NotPdf { key: attachment.key.clone(), content_type }.into());
        }
        if data.len() > MAX_PANEL_FILE_BYTES {
            let error = PanelFileError::TooLarge {
                key: attachment.key.clone(),
                bytes: data.len(),
                limit: MAX_PANEL_FILE_BYTES,
            };
            return Err(error.into());
        }
        let source = match store {
            Some(zotero_mcp_core::file_changes::StoreKind::WebDav) => "webdav",
            Some(zotero_mcp_core::file_changes::StoreKind::Desktop) => "zotero-desktop",
            _ => "zotero-storage",
        };
        Ok(AttachmentFileOutput {
            attachment_key: attachment.key.clone(),
            content_type,
            filename,
            bytes: data.len() as u64,
            source: source.to_owned(),
            data: base64::engine::general_purpose::STANDARD.encode(&data),
        })
    }
}
