//! The steps of an import, in order: look the identifiers up, find copies already in the library, write the new
//! items, attach their PDFs. Each step changes the entries' outcomes and never fails the call as a whole.

use std::collections::BTreeMap;

use serde_json::{Map, Value};
use zotero_mcp_core::attachment::filename::{build_renamed_filename, DEFAULT_TEMPLATE};
use zotero_mcp_core::attachment::write::{self, NewAttachment, Upload, WriteError};
use zotero_mcp_core::duplicates::{is_candidate, normalise_title, same_work, Fingerprints};
use zotero_mcp_core::join::join_all;
use zotero_mcp_core::net::DownloadError;
use zotero_mcp_core::sources::{fit_to_template, Identifier};
use zotero_mcp_core::zotero::{
    KeyError, ObjectKey, ObjectKind, QMode, Query, ZoteroClient, ZoteroObject, ZoteroWriter,
};

use super::entries::{Entry, Origin, Outcome};
use super::{MAX_PDFS_PER_CALL, REQUESTS_PER_PDF, REQUEST_BUDGET};
use crate::context::{RequestContext, WriterRefused};
use crate::mcp::ToolError;
use crate::tools::next_step::NextStep;

/// Looks every identifier up, side by side (a DOI's open-access PDF is asked for later, and only for the items
/// that are created).
pub async fn look_up(ctx: &RequestContext, entries: &mut [Entry]) {
    let lookups = entries.iter().map(|entry| async {
        match (&entry.identifier, entry.is_pending()) {
            (Some(id), true) => Some(ctx.services().resolve_reference(id).await),
            _ => None,
        }
    });
    let looked_up = join_all(lookups).await;
    for (entry, found) in entries.iter_mut().zip(looked_up) {
        if let Some(found) = found {
            entry.resolved(found);
        }
    }
}

/// Marks the entries already in the library (see [`existing_copies`]), side by side.
pub async fn find_copies(zotero: &ZoteroClient, entries: &mut [Entry]) {
    let searches = entries.iter().map(|entry| async {
        match (&entry.record, entry.is_pending()) {
            (Some(record), true) => Some(existing_copies(zotero, &record.data).await),
            _ => None,
        }
    });
    let found = join_all(searches).await;
    for (entry, found) in entries.iter_mut().zip(found) {
        match found {
            Some(Ok(copies)) if !copies.is_empty() => entry.outcome = Outcome::Existing(copies),
            Some(Err(error)) => {
                entry.outcome = Outcome::Failed(format!("the library could not be searched for a copy ({error})"))
            }
            _ => {}
        }
    }
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
    zotero_mcp_core::sort::sort_by_key(&mut words, |w| std::cmp::Reverse(w.chars().count()));
    words.truncate(6);
    words.join(" ")
}

/// Writes every pending entry: one template per item type, then one batch write (Zotero answers object by
/// object, and so does each entry's outcome).
pub async fn create(
    zotero: &ZoteroClient,
    writer: &ZoteroWriter,
    entries: &mut [Entry],
    tags: &[Value],
    collections: &[String],
) {
    let item_type = |entry: &Entry| {
        entry.record.as_ref().and_then(|r| r.data.get("itemType")).and_then(Value::as_str).map(str::to_owned)
    };
    let mut types: Vec<String> = entries.iter().filter(|e| e.is_pending()).filter_map(item_type).collect();
    zotero_mcp_core::sort::sort(&mut types);
    types.dedup();
    let fetched = join_all(types.iter().map(|t| zotero.template(t, None))).await;
    let mut templates: BTreeMap<String, Map<String, Value>> = BTreeMap::new();
    for (name, template) in types.into_iter().zip(fetched) {
        match template {
            Ok(template) => {
                templates.insert(name, template);
            }
            Err(error) => {
                for entry in entries.iter_mut().filter(|e| e.is_pending() && item_type(e).as_ref() == Some(&name)) {
                    entry.outcome =
                        Outcome::Failed(format!("Zotero has no template for the item type {name} ({error})"));
                }
            }
        }
    }

    let mut positions = Vec::new();
    let mut payloads = Vec::new();
    for (index, entry) in entries.iter().enumerate().filter(|(_, e)| e.is_pending()) {
        let template = item_type(entry).and_then(|t| templates.get(&t));
        if let (Some(template), Some(record)) = (template, &entry.record) {
            payloads.push(Value::Object(fit_to_template(template, &record.data, tags, collections).data));
            positions.push(index);
        }
    }
    if payloads.is_empty() {
        return;
    }
    let outcome = match writer.write_objects(ObjectKind::Items, &payloads).await {
        Ok(outcome) => outcome,
        Err(error) => {
            let said = match error.is_outcome_unknown() {
                true => format!("unknown whether created: {error} (zotero_get_item reads a key)"),
                false => format!("Zotero refused the write ({error}); nothing was created"),
            };
            for &index in &positions {
                entries[index].outcome = Outcome::Failed(said.clone());
            }
            return;
        }
    };
    for (position, &index) in positions.iter().enumerate() {
        entries[index].outcome = match (outcome.success.get(&position), outcome.failed.get(&position)) {
            (Some(key), _) => {
                // The stored object carries meta.creatorSummary, which names the PDF.
                let stored = outcome.successful.get(&position).cloned();
                let item = stored.and_then(|v| serde_json::from_value::<ZoteroObject>(v).ok()).unwrap_or_else(|| {
                    let data = payloads[position].as_object().cloned().unwrap_or_default();
                    ZoteroObject { key: key.clone(), version: 0, meta: Map::new(), data }
                });
                Outcome::Created { item: Box::new(item), attachment_key: None }
            }
            (None, Some(failure)) => Outcome::Failed(format!("Zotero refused the item: {}", failure.message)),
            (None, None) => match outcome.unknown.get(&position) {
                Some(unknown) => Outcome::Failed(format!(
                    "unknown whether created as {}: {} (zotero_get_item reads it)",
                    unknown.key, unknown.message
                )),
                None => Outcome::Failed("not sent: an earlier batch of this import failed".into()),
            },
        };
    }
}

/// Attaches a PDF to each new item that has one (`pdf_url` for a single entry, else what its source named),
/// while the call's request estimate allows (`spent_before`: requests the call made before the import began);
/// the others are told where their PDF is.
pub async fn attach_pdfs(ctx: &RequestContext, entries: &mut [Entry], pdf_url: Option<&str>, spent_before: usize) {
    let mut attached = 0;
    let mut spent = spent_before + requests_before_pdfs(entries);
    for entry in entries.iter_mut() {
        let Outcome::Created { item, attachment_key } = &mut entry.outcome else { continue };
        let mut candidate =
            pdf_url.map(str::to_owned).or_else(|| entry.record.as_ref().and_then(|r| r.pdf_url.clone()));
        if let (None, Some(Identifier::Doi(doi))) = (&candidate, &entry.identifier) {
            if spent + 1 + REQUESTS_PER_PDF > REQUEST_BUDGET {
                entry.pdf = Some(format!(
                    "No PDF was looked for: this call imported many entries and its requests are spent. Attach one \
                     with zotero_put_attachment (parentItemKey {}).",
                    item.key
                ));
                continue;
            }
            spent += 1;
            candidate = ctx.services().open_access_pdf(doi).await;
        }
        let Some(url) = candidate else {
            if entry.origin == Origin::Identifier {
                entry.pdf = Some("No open-access PDF was found. Supply pdfUrl if you have one.".into());
            }
            continue;
        };
        if attached >= MAX_PDFS_PER_CALL || spent + REQUESTS_PER_PDF > REQUEST_BUDGET {
            entry.pdf = Some(format!(
                "A PDF is at {url}, not attached: one call attaches at most {MAX_PDFS_PER_CALL} PDFs, fewer when it \
                 imports many entries. Attach it with zotero_put_attachment (parentItemKey {}, sourceUrl).",
                item.key
            ));
            continue;
        }
        attached += 1;
        spent += REQUESTS_PER_PDF;
        entry.pdf = Some(match attach_pdf(ctx, item, &url).await {
            Ok(key) => {
                let line = format!("Attached PDF from {url} as {key}");
                *attachment_key = Some(key);
                line
            }
            Err(why) => format!("Could not attach the PDF from {url}: {why}"),
        });
    }
}

/// At most the requests made before PDFs are looked for: each identifier's lookup (counted as a DOI's worst case,
/// CrossRef and then DataCite after a miss), each existing-copy search, each template, and the batch writes.
fn requests_before_pdfs(entries: &[Entry]) -> usize {
    let identifiers = entries.iter().filter(|entry| entry.origin == Origin::Identifier).count();
    let created: Vec<&ZoteroObject> = entries
        .iter()
        .filter_map(|entry| match &entry.outcome {
            Outcome::Created { item, .. } => Some(item.as_ref()),
            _ => None,
        })
        .collect();
    let mut types: Vec<&str> = created.iter().filter_map(|item| item.item_type()).collect();
    zotero_mcp_core::sort::sort(&mut types);
    types.dedup();
    identifiers * 2 + entries.len() + types.len() + created.len().div_ceil(50)
}

/// Why a found PDF was not attached; the import itself stands, and the result says how to attach it by hand.
#[derive(Debug, thiserror::Error)]
enum PdfNotAttached {
    #[error(transparent)]
    Refused(#[from] WriterRefused),
    #[error(transparent)]
    Download(#[from] DownloadError),
    #[error("the response was {0} rather than a PDF")]
    NotPdf(String),
    #[error(transparent)]
    Key(#[from] KeyError),
    #[error("{}", .0.with_next_step())]
    Stored(#[from] WriteError),
}

/// Downloads `url` (through the SSRF guard) and stores it as the new item's PDF; the key of the attachment.
async fn attach_pdf(ctx: &RequestContext, item: &ZoteroObject, url: &str) -> Result<String, PdfNotAttached> {
    let zotero = ctx.writer()?;
    let files = ctx.file_writer().await?;
    let download = ctx.services().download(url).await?;
    if !download.bytes.starts_with(b"%PDF") {
        let kind = download.content_type.unwrap_or_else(|| "not a PDF".into());
        return Err(PdfNotAttached::NotPdf(kind));
    }
    let summary = item.meta.get("creatorSummary").and_then(Value::as_str);
    let filename = build_renamed_filename(&item.data, "attachment.pdf", DEFAULT_TEMPLATE, summary)
        .unwrap_or_else(|| "attachment.pdf".into());
    let parent = ObjectKey::parse(&item.key)?;
    let upload = Upload { filename, content_type: Some("application/pdf".into()), data: download.bytes };
    let meta = NewAttachment {
        parent: Some(parent),
        title: Some("Full Text PDF".into()),
        url: Some(download.final_url),
        ..NewAttachment::default()
    };
    let stored = write::create(zotero, files, ctx.services().clock(), upload, meta).await?;
    Ok(stored.key)
}
