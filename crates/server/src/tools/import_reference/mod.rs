//! `zotero_import_reference`: creates items from identifiers (DOI, arXiv, ISBN, PMID, PMCID; several at once) or
//! from a pasted BibTeX or RIS block, each checked for an existing copy first, and attaches an open-access PDF
//! to each new item when one is found. Every entry gets its own outcome: created, already in the library, or
//! failed with why. The steps, in the order `call` takes them, are in `steps`; reading the pasted text into
//! entries in `entries`; docs/sources.md describes the whole.

pub(crate) mod entries;
pub(crate) mod steps;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use self::entries::parse_input;
use super::args::Key;
use super::items::TagIn;
use crate::config::ToolGroup;
use crate::context::RequestContext;
use crate::format::text::truncate;
use crate::mcp::{Tool, ToolError, ToolSpec};

/// Identifiers resolved per call: each costs one to three requests to its source, one existing-copy search and
/// perhaps a PDF, and a Worker on the free plan may make 50 requests per call.
pub const MAX_IDENTIFIERS_PER_CALL: usize = 10;
/// BibTeX or RIS entries created per call (they need no source; one search each, and one write per 50).
pub const MAX_ENTRIES_PER_CALL: usize = 25;
/// PDFs attached per call: each is a download of up to 40 MiB and four writes. The others are named, with
/// their URLs, for zotero_put_attachment.
pub const MAX_PDFS_PER_CALL: usize = 3;
/// Outbound requests one call plans for: a Worker on the free plan may make 50, and the OAuth check and the
/// file store's first request take some of them. PDFs are attached only while the estimate stays within it.
pub const REQUEST_BUDGET: usize = 45;
/// Requests one PDF costs, the larger of the two stores: on WebDAV the download, the attachment item, the
/// `.zip`, the `.prop`, the md5/mtime record and a WebDAV check; on Zotero Storage the download, the item, the
/// upload's authorization, the upload and its registration.
pub(crate) const REQUESTS_PER_PDF: usize = 6;
/// Characters of `identifier` accepted (a BibTeX or RIS export pasted whole).
pub const MAX_INPUT_CHARS: u64 = 1_000_000;

fn yes() -> bool {
    true
}

/// Arguments of `zotero_import_reference`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ImportReferenceInput {
    /// DOIs, arXiv ids, ISBNs, PMIDs, PMCIDs or links, by lines or commas; or a BibTeX/RIS block.
    #[validate(length(min = 1, max = 1_000_000))]
    pub identifier: String,
    // Collections to file the new items in.
    pub collections: Option<Vec<Key>>,
    // Tags for the new items.
    pub tags: Option<Vec<TagIn>>,
    // Download and attach an open-access PDF when one is found (stored on WebDAV or Zotero Storage, as the
    // library's other files).
    #[serde(default = "yes")]
    #[schemars(default = "yes")]
    pub attach_pdf: bool,
    /// Instead of the PDF found (one identifier only).
    #[schemars(url)]
    #[validate(length(min = 8, max = 4000))]
    pub pdf_url: Option<String>,
    // Import even when a matching item already exists.
    #[serde(default)]
    #[schemars(default)]
    pub allow_duplicate: bool,
}

/// One entry's outcome.
#[derive(Debug, Clone, Serialize, JsonSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ImportResult {
    /// The identifier or entry as given (`BibTeX entry 2 (smith2020)`).
    pub input: String,
    pub status: ImportStatus,
    pub item_key: Option<String>,
    pub existing_keys: Vec<String>,
    pub attachment_key: Option<String>,
    /// CrossRef, DataCite, arXiv, Open Library, PubMed, BibTeX or RIS.
    pub source: String,
    pub title: String,
    pub item_type: String,
    /// What happened about a PDF, when anything did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pdf: Option<String>,
    /// Why the entry failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// What became of one entry.
#[derive(Debug, Clone, Copy, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum ImportStatus {
    /// A new item was written (`itemKey`).
    Created,
    /// Already in the library (`existingKeys`): nothing was written.
    Existing,
    /// Not imported (`error` says why and what to do).
    Failed,
}

/// Result of `zotero_import_reference`. The first five fields describe the first entry, as the TypeScript server
/// reported its one identifier; `results` has every entry.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImportReferenceOutput {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub item_key: Option<String>,
    pub existing_keys: Vec<String>,
    pub attachment_key: Option<String>,
    pub source: String,
    pub title: String,
    pub results: Vec<ImportResult>,
}

pub struct ImportReference;

impl Tool for ImportReference {
    type Input = ImportReferenceInput;
    type Output = ImportReferenceOutput;
    const SPEC: ToolSpec = ToolSpec::write(
        "zotero_import_reference",
        "Import a reference by DOI, arXiv id, ISBN or PubMed id, or from BibTeX/RIS",
        "Creates items with full metadata from DOIs, arXiv ids, ISBNs, PMIDs or PMCIDs (up to 10) or BibTeX/RIS \
         (up to 25), each checked against the library first, with an open-access PDF when found. For items \
         described by hand, zotero_create_items.",
    )
    .group(ToolGroup::Research)
    .open_world();

    fn render(output: &ImportReferenceOutput) -> String {
        let mut lines = Vec::new();
        for result in &output.results {
            let title = if result.title.is_empty() { result.input.as_str() } else { result.title.as_str() };
            let title = truncate(title, 160);
            match result.status {
                ImportStatus::Created => lines.push(format!(
                    "Imported \"{title}\" as {} ({}, via {})",
                    result.item_key.as_deref().unwrap_or_default(),
                    result.item_type,
                    result.source
                )),
                ImportStatus::Existing => lines.push(format!(
                    "\"{title}\" is already in the library as {}; pass allowDuplicate=true to import it anyway.",
                    result.existing_keys.join(", ")
                )),
                ImportStatus::Failed => lines.push(format!(
                    "Could not import {}: {}",
                    result.input,
                    result.error.as_deref().unwrap_or("unknown error")
                )),
            }
            if let Some(pdf) = &result.pdf {
                lines.push(format!("  {pdf}"));
            }
        }
        lines.join("\n")
    }

    async fn call(ctx: &RequestContext, input: ImportReferenceInput) -> Result<ImportReferenceOutput, ToolError> {
        let writer = ctx.writer()?;
        let zotero = ctx.zotero()?;
        let mut entries = parse_input(&input.identifier)?;
        if input.pdf_url.is_some() && entries.len() > 1 {
            return Err(ToolError::invalid(
                "pdfUrl names the PDF of one work, but several entries were given; import them without pdfUrl and \
                 attach PDFs with zotero_put_attachment",
            ));
        }
        steps::look_up(ctx, &mut entries).await;
        if !input.allow_duplicate {
            steps::find_copies(zotero, &mut entries).await;
        }
        let tags: Vec<serde_json::Value> = input.tags.iter().flatten().map(TagIn::to_zotero).collect();
        let collections: Vec<String> = input.collections.iter().flatten().map(|k| k.0.as_str().to_owned()).collect();
        steps::create(zotero, writer, &mut entries, &tags, &collections).await;
        if input.attach_pdf {
            steps::attach_pdfs(ctx, &mut entries, input.pdf_url.as_deref(), 0).await;
        }

        let results: Vec<ImportResult> = entries.into_iter().map(|entry| entry.into_result()).collect();
        let first = results.first();
        Ok(ImportReferenceOutput {
            item_key: first.and_then(|r| r.item_key.clone()),
            existing_keys: first.map(|r| r.existing_keys.clone()).unwrap_or_default(),
            attachment_key: first.and_then(|r| r.attachment_key.clone()),
            source: first.map(|r| r.source.clone()).unwrap_or_default(),
            title: first.map(|r| r.title.clone()).unwrap_or_default(),
            results,
        })
    }
}
