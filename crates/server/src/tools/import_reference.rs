//! `zotero_import_reference`: creates items from identifiers (DOI, arXiv, ISBN, PMID, PMCID; several at once) or
//! from a pasted BibTeX or RIS block, each checked for an existing copy first, and attaches an open-access PDF
//! to each new item when one is found. Every entry gets its own outcome: created, already in the library, or
//! failed with why.

use std::collections::BTreeMap;

use futures_util::future::join_all;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use validator::Validate;
use zotero_mcp_core::attachment::filename::{build_renamed_filename, DEFAULT_TEMPLATE};
use zotero_mcp_core::attachment::write::{self, NewAttachment, Upload};
use zotero_mcp_core::duplicates::{is_candidate, normalise_title, same_work, Fingerprints};
use zotero_mcp_core::sources::{self, detect_all, fit_to_template, Identifier, Reference};
use zotero_mcp_core::zotero::{ObjectKey, ObjectKind, QMode, Query, ZoteroClient, ZoteroObject};

use super::args::Key;
use super::items::TagIn;
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
/// WebDAV writer's first check take some of them. PDFs are attached only while the estimate stays within it.
pub const REQUEST_BUDGET: usize = 45;
/// Requests one PDF costs: the download, the attachment item, the `.zip`, the `.prop`, the md5/mtime record, and
/// a WebDAV check.
const REQUESTS_PER_PDF: usize = 6;
/// Characters of `identifier` accepted (a BibTeX or RIS export pasted whole).
pub const MAX_INPUT_CHARS: u64 = 1_000_000;

fn yes() -> bool {
    true
}

/// Arguments of `zotero_import_reference`.
#[derive(Debug, Serialize, Deserialize, JsonSchema, Validate)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ImportReferenceInput {
    /// What to import: a DOI, arXiv id, ISBN, PMID (`PMID: 123`), PMCID, or a doi.org / arxiv.org / PubMed link;
    /// several of them separated by new lines or commas (up to 10); or a BibTeX or RIS block (up to 25 entries).
    #[validate(length(min = 1, max = 1_000_000))]
    pub identifier: String,
    /// Collections to file the new items in.
    pub collections: Option<Vec<Key>>,
    /// Tags for the new items.
    #[validate(nested)]
    pub tags: Option<Vec<TagIn>>,
    /// Download and attach an open-access PDF when one is found (needs WebDAV).
    #[serde(default = "yes")]
    #[schemars(default = "yes")]
    pub attach_pdf: bool,
    /// Explicit PDF URL, overriding automatic discovery (one identifier only).
    #[schemars(url)]
    #[validate(length(min = 8, max = 4000))]
    pub pdf_url: Option<String>,
    /// Import even when a matching item already exists.
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
    /// created, existing (already in the library: nothing written), or failed.
    pub status: String,
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
        "Creates library items with full metadata: from identifiers (DOI via CrossRef or DataCite, arXiv id, ISBN \
         via Open Library, PMID/PMCID via PubMed; up to 10, one per line) or from a pasted BibTeX or RIS block \
         (up to 25 entries). Each is first checked against the library: a copy already there is reported with \
         its key and not imported again unless allowDuplicate=true. With attachPdf (default) an open-access PDF \
         (OpenAlex, arXiv, or pdfUrl) is stored on WebDAV under the new item.",
    )
    .open_world();

    fn render(output: &ImportReferenceOutput) -> String {
        let mut lines = Vec::new();
        for result in &output.results {
            let title = if result.title.is_empty() { result.input.as_str() } else { result.title.as_str() };
            let title = truncate(title, 160);
            match result.status.as_str() {
                "created" => lines.push(format!(
                    "Imported \"{title}\" as {} ({}, via {})",
                    result.item_key.as_deref().unwrap_or_default(),
                    result.item_type,
                    result.source
                )),
                "existing" => lines.push(format!(
                    "\"{title}\" is already in the library as {}; pass allowDuplicate=true to import it anyway.",
                    result.existing_keys.join(", ")
                )),
                _ => lines.push(format!(
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
            return Err(invalid(
                "pdfUrl names the PDF of one work, but several entries were given; import them without pdfUrl and \
                 attach PDFs with zotero_put_attachment"
                    .into(),
            ));
        }

        // 1. Identifiers to records, side by side.
        let lookups = entries.iter().map(|entry| async {
            match &entry.kind {
                EntryKind::Identifier(id) => Some(ctx.resolve_reference(id, input.attach_pdf).await),
                _ => None,
            }
        });
        let looked_up_all = join_all(lookups).await;
        for (entry, looked_up) in entries.iter_mut().zip(looked_up_all) {
            match looked_up {
                Some(Ok(reference)) => entry.kind = EntryKind::Record(reference),
                Some(Err(error)) => entry.kind = EntryKind::Failed(error.to_string()),
                None => {}
            }
        }

        // 2. A copy of each already in the library, unless duplicates are wanted.
        if !input.allow_duplicate {
            let checks = entries.iter().map(|entry| async {
                match entry.record() {
                    Some(record) => Some(existing_copies(zotero, record.data).await),
                    None => None,
                }
            });
            let found_all = join_all(checks).await;
            for (entry, found) in entries.iter_mut().zip(found_all) {
                entry.settle(found);
            }
        }
        let mut results: Vec<ImportResult> = entries.iter().map(Entry::result).collect();

        // 3. One template per item type, then one batch write for every new item.
        let to_create: Vec<usize> = (0..entries.len()).filter(|&i| results[i].status == "pending").collect();
        let mut types: Vec<String> = to_create.iter().map(|&i| results[i].item_type.clone()).collect();
        types.sort();
        types.dedup();
        let fetched = join_all(types.iter().map(|t| zotero.template(t, None))).await;
        let mut templates: BTreeMap<String, Map<String, Value>> = BTreeMap::new();
        for (item_type, template) in types.iter().zip(fetched) {
            match template {
                Ok(template) => {
                    templates.insert(item_type.clone(), template);
                }
                Err(error) => {
                    for &i in &to_create {
                        if &results[i].item_type == item_type {
                            results[i].status = "failed".into();
                            results[i].error =
                                Some(format!("Zotero has no template for the item type {item_type} ({error})"));
                        }
                    }
                }
            }
        }
        let tags: Vec<Value> = input.tags.iter().flatten().map(TagIn::to_zotero).collect();
        let collections: Vec<String> = input.collections.iter().flatten().map(|k| k.0.as_str().to_owned()).collect();
        let mut positions = Vec::new();
        let mut payloads = Vec::new();
        for &i in &to_create {
            let (Some(template), Some(reference)) = (templates.get(&results[i].item_type), entries[i].record()) else {
                continue;
            };
            payloads.push(Value::Object(fit_to_template(template, reference.data, &tags, &collections).data));
            positions.push(i);
        }
        let mut created: Vec<(usize, ZoteroObject)> = Vec::new();
        if !payloads.is_empty() {
            let outcome = writer.write_objects(ObjectKind::Items, &payloads).await?;
            for (position, &i) in positions.iter().enumerate() {
                match (outcome.success.get(&position), outcome.failed.get(&position)) {
                    (Some(key), _) => {
                        results[i].status = "created".into();
                        results[i].item_key = Some(key.clone());
                        let stored = outcome.successful.get(&position).cloned();
                        let object = stored
                            .and_then(|v| serde_json::from_value::<ZoteroObject>(v).ok())
                            .unwrap_or_else(|| ZoteroObject {
                                key: key.clone(),
                                version: 0,
                                meta: Map::new(),
                                data: payloads[position].as_object().cloned().unwrap_or_default(),
                            });
                        created.push((i, object));
                    }
                    (None, Some(failure)) => {
                        results[i].status = "failed".into();
                        results[i].error = Some(format!("Zotero refused the item: {}", failure.message));
                    }
                    (None, None) => {
                        results[i].status = "failed".into();
                        results[i].error = Some("not sent: an earlier batch of this import failed".into());
                    }
                }
            }
        }

        // 4. PDFs for the new items.
        if input.attach_pdf {
            let mut attached = 0;
            let mut spent = requests_before_pdfs(&entries, &results, input.attach_pdf);
            for (i, item) in created {
                let candidate = input.pdf_url.clone().or_else(|| entries[i].record().and_then(|r| r.pdf_url.cloned()));
                let Some(url) = candidate else {
                    if matches!(entries[i].origin, Origin::Identifier) {
                        results[i].pdf = Some("No open-access PDF was found. Supply pdfUrl if you have one.".into());
                    }
                    continue;
                };
                if attached >= MAX_PDFS_PER_CALL || spent + REQUESTS_PER_PDF > REQUEST_BUDGET {
                    results[i].pdf = Some(format!(
                        "A PDF is at {url}, not attached: one call attaches at most {MAX_PDFS_PER_CALL} PDFs, fewer \
                         when it imports many entries. Attach it with zotero_put_attachment (parentItemKey {}, \
                         sourceUrl).",
                        item.key
                    ));
                    continue;
                }
                attached += 1;
                spent += REQUESTS_PER_PDF;
                match attach_pdf(ctx, &item, &url).await {
                    Ok(key) => {
                        results[i].pdf = Some(format!("Attached PDF from {url} as {key}"));
                        results[i].attachment_key = Some(key);
                    }
                    Err(why) => results[i].pdf = Some(format!("Could not attach the PDF from {url}: {why}")),
                }
            }
        }

        let first = results.first().cloned();
        Ok(ImportReferenceOutput {
            item_key: first.as_ref().and_then(|r| r.item_key.clone()),
            existing_keys: first.as_ref().map(|r| r.existing_keys.clone()).unwrap_or_default(),
            attachment_key: first.as_ref().and_then(|r| r.attachment_key.clone()),
            source: first.as_ref().map(|r| r.source.clone()).unwrap_or_default(),
            title: first.as_ref().map(|r| r.title.clone()).unwrap_or_default(),
            results,
        })
    }
}

/// At most the requests made before PDFs are fetched: each identifier's lookup (counted as a DOI's worst case:
/// CrossRef, DataCite after a miss, and OpenAlex for its PDF), each existing-copy search, each template, and the
/// batch writes.
fn requests_before_pdfs(entries: &[Entry], results: &[ImportResult], attach_pdf: bool) -> usize {
    let identifiers = entries.iter().filter(|entry| entry.origin == Origin::Identifier).count();
    let lookups = identifiers * (2 + usize::from(attach_pdf));
    let created: Vec<&ImportResult> = results.iter().filter(|r| r.status == "created").collect();
    let mut types: Vec<&str> = created.iter().map(|r| r.item_type.as_str()).collect();
    types.sort_unstable();
    types.dedup();
    lookups + entries.len() + types.len() + created.len().div_ceil(50)
}

/// Where an entry came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Origin {
    Identifier,
    BibTex,
    Ris,
}

enum EntryKind {
    Identifier(Identifier),
    Record(Reference),
    /// An entry of a BibTeX or RIS block, already item data.
    Parsed(Map<String, Value>),
    /// Already in the library: keys and titles of the copies.
    Existing(Vec<(String, String)>),
    Failed(String),
}

struct Entry {
    input: String,
    origin: Origin,
    kind: EntryKind,
}

impl Entry {
    /// Takes in the outcome of a search for a copy, when one was made.
    fn settle(&mut self, found: Option<Result<Vec<(String, String)>, ToolError>>) {
        let Some(found) = found else { return };
        match found {
            Ok(copies) if !copies.is_empty() => self.kind = EntryKind::Existing(copies),
            Ok(_) => {}
            Err(error) => {
                self.kind = EntryKind::Failed(format!("the library could not be searched for a copy ({error})"))
            }
        }
    }

    /// The entry's item data, once it has some: a resolved record, or a parsed BibTeX/RIS entry.
    fn record(&self) -> Option<RecordView<'_>> {
        match &self.kind {
            EntryKind::Record(reference) => {
                Some(RecordView { data: &reference.data, pdf_url: reference.pdf_url.as_ref() })
            }
            EntryKind::Parsed(data) => Some(RecordView { data, pdf_url: None }),
            _ => None,
        }
    }

    fn result(&self) -> ImportResult {
        let (status, source, error) = match (&self.kind, self.origin) {
            (EntryKind::Failed(why), _) => ("failed", String::new(), Some(why.clone())),
            (EntryKind::Existing(_), Origin::BibTex) => ("existing", "BibTeX".to_owned(), None),
            (EntryKind::Existing(_), Origin::Ris) => ("existing", "RIS".to_owned(), None),
            (EntryKind::Existing(_), Origin::Identifier) => ("existing", String::new(), None),
            (EntryKind::Record(reference), _) => ("pending", reference.source.to_string(), None),
            (_, Origin::BibTex) => ("pending", "BibTeX".to_owned(), None),
            (_, Origin::Ris) => ("pending", "RIS".to_owned(), None),
            (_, Origin::Identifier) => ("pending", String::new(), None),
        };
        let data = self.record().map(|r| r.data);
        let text = |name: &str| data.and_then(|d| d.get(name)).and_then(Value::as_str).unwrap_or_default().to_owned();
        let copies = match &self.kind {
            EntryKind::Existing(copies) => copies.clone(),
            _ => Vec::new(),
        };
        let title = match copies.first() {
            Some((_, title)) if data.is_none() => title.clone(),
            _ => text("title"),
        };
        ImportResult {
            input: self.input.clone(),
            status: status.into(),
            item_key: None,
            existing_keys: copies.into_iter().map(|(key, _)| key).collect(),
            attachment_key: None,
            source,
            title,
            item_type: text("itemType"),
            pdf: None,
            error,
        }
    }
}

struct RecordView<'a> {
    data: &'a Map<String, Value>,
    pdf_url: Option<&'a String>,
}

/// The entries of `text`: a BibTeX block, an RIS block, or identifiers.
fn parse_input(text: &str) -> Result<Vec<Entry>, ToolError> {
    let trimmed = text.trim_start_matches('\u{feff}').trim();
    if trimmed.chars().count() as u64 > MAX_INPUT_CHARS {
        return Err(invalid(format!("the text is longer than {MAX_INPUT_CHARS} characters; import it in parts")));
    }
    let entries: Vec<Entry> = if looks_like_bibtex(trimmed) {
        sources::parse_bibtex(trimmed)
            .into_iter()
            .map(|entry| {
                let label = match &entry.key {
                    Some(key) => format!("BibTeX entry {} ({key})", entry.index),
                    None => format!("BibTeX entry {}", entry.index),
                };
                Entry {
                    input: label,
                    origin: Origin::BibTex,
                    kind: match entry.outcome {
                        Ok(data) => EntryKind::Parsed(data),
                        Err(error) => EntryKind::Failed(error.to_string()),
                    },
                }
            })
            .collect()
    } else if looks_like_ris(trimmed) {
        sources::parse_ris(trimmed)
            .into_iter()
            .map(|entry| {
                let data = entry.outcome.as_ref().ok();
                let title = data.and_then(|d| d.get("title")).and_then(Value::as_str).unwrap_or_default();
                Entry {
                    input: if title.is_empty() {
                        format!("RIS entry {}", entry.index)
                    } else {
                        format!("RIS entry {} ({})", entry.index, truncate(title, 60))
                    },
                    origin: Origin::Ris,
                    kind: match entry.outcome {
                        Ok(data) => EntryKind::Parsed(data),
                        Err(error) => EntryKind::Failed(error.to_string()),
                    },
                }
            })
            .collect()
    } else {
        let found = detect_all(trimmed);
        if found.iter().all(|(_, outcome)| outcome.is_err()) {
            // Nothing usable at all: prose, or a single bad identifier. Say why once instead of word by word.
            if let (1, Some((_, Err(error)))) = (found.len(), found.first()) {
                return Err(invalid(error.to_string()));
            }
            return Err(invalid(
                "no identifier was found; give a DOI, arXiv id, ISBN, PMID or PMCID (one per line), or a BibTeX or \
                 RIS block. Create the item with zotero_create_items if it has no identifier."
                    .into(),
            ));
        }
        if found.len() > MAX_IDENTIFIERS_PER_CALL {
            return Err(invalid(format!(
                "{} identifiers were given; import at most {MAX_IDENTIFIERS_PER_CALL} per call",
                found.len()
            )));
        }
        found
            .into_iter()
            .map(|(input, outcome)| Entry {
                input,
                origin: Origin::Identifier,
                kind: match outcome {
                    Ok(id) => EntryKind::Identifier(id),
                    Err(error) => EntryKind::Failed(error.to_string()),
                },
            })
            .collect()
    };
    if entries.is_empty() {
        return Err(invalid("the block holds no entries; check that it is complete".into()));
    }
    if entries.len() > MAX_ENTRIES_PER_CALL {
        return Err(invalid(format!(
            "the block holds {} entries; import at most {MAX_ENTRIES_PER_CALL} per call (split it)",
            entries.len()
        )));
    }
    Ok(entries)
}

/// A BibTeX export: a line that opens an entry, `@article{` or `@book(` (identifiers never start with `@`).
fn looks_like_bibtex(text: &str) -> bool {
    text.lines().map(str::trim_start).any(|line| {
        line.strip_prefix('@').is_some_and(|rest| {
            let name_len = rest.chars().take_while(|c| c.is_ascii_alphabetic()).count();
            name_len > 0 && rest[name_len..].trim_start().starts_with(['{', '('])
        })
    })
}

/// An RIS export: a line starting `TY  - `.
fn looks_like_ris(text: &str) -> bool {
    text.lines()
        .map(str::trim_end)
        .any(|line| line.len() >= 5 && line.starts_with("TY") && line[2..].trim_start().starts_with('-'))
}

/// Keys and titles of items in the library that are the same work as `data` (by the duplicate check's rules:
/// a shared DOI, ISBN or arXiv id, or the same title, year and first author), found with one quick search for
/// the title's longest words. Zotero's quick search matches titles, creators and years (and full text), never a
/// DOI or ISBN field, which is why the TypeScript server's search for the DOI itself found nothing.
async fn existing_copies(zotero: &ZoteroClient, data: &Map<String, Value>) -> Result<Vec<(String, String)>, ToolError> {
    let new_item = ZoteroObject { key: String::new(), version: 0, meta: Map::new(), data: data.clone() };
    let Some(needle) = new_item.field("title").map(title_words).filter(|n| !n.is_empty()) else {
        return Ok(Vec::new());
    };
    let prints = Fingerprints::of(&new_item);
    let page = zotero.items(&Query::new().q(&needle, QMode::TitleCreatorYear), 25).await?;
    Ok(page
        .items
        .iter()
        .filter(|item| is_candidate(item) && same_work(&prints, &Fingerprints::of(item)))
        .map(|item| (item.key.clone(), item.field("title").unwrap_or_default().to_owned()))
        .collect())
}

/// The longest words of a title (up to six), for a quick search that finds the title however it is punctuated.
fn title_words(title: &str) -> String {
    let plain = normalise_title(title);
    let mut words: Vec<&str> = plain.split(' ').filter(|w| w.chars().count() > 3).collect();
    words.sort_by_key(|w| std::cmp::Reverse(w.chars().count()));
    words.truncate(6);
    words.join(" ")
}

/// Downloads `url` (through the SSRF guard) and stores it as the new item's PDF; the key of the attachment.
async fn attach_pdf(ctx: &RequestContext, item: &ZoteroObject, url: &str) -> Result<String, String> {
    let zotero = ctx.writer().map_err(|e| e.to_string())?;
    let Some(dav) = ctx.webdav_writer().map_err(|e| e.to_string())? else {
        return Err("WebDAV is not configured (WEBDAV_URL), so files cannot be stored".into());
    };
    let download = ctx.download(url).await.map_err(|e| e.to_string())?;
    if !download.bytes.starts_with(b"%PDF") {
        let kind = download.content_type.unwrap_or_else(|| "not a PDF".into());
        return Err(format!("the response was {kind} rather than a PDF"));
    }
    let summary = item.meta.get("creatorSummary").and_then(Value::as_str);
    let filename = build_renamed_filename(&item.data, "attachment.pdf", DEFAULT_TEMPLATE, summary)
        .unwrap_or_else(|| "attachment.pdf".into());
    let parent = ObjectKey::parse(&item.key).map_err(|e| e.to_string())?;
    let upload = Upload { filename, content_type: Some("application/pdf".into()), data: download.bytes };
    let meta = NewAttachment {
        parent: Some(parent),
        title: Some("Full Text PDF".into()),
        url: Some(download.final_url),
        ..NewAttachment::default()
    };
    let stored = write::create(zotero, dav, ctx.clock(), upload, meta).await.map_err(|e| e.to_string())?;
    Ok(stored.key)
}

fn invalid(problem: String) -> ToolError {
    ToolError::InvalidArguments { tool: "zotero_import_reference".into(), problem }
}
