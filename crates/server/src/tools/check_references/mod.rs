//! `zotero_check_references`: a manuscript's references checked against the library and the registries, one
//! outcome per reference (matched, not in the library, unresolved), with the fields that disagree, the flags a
//! writer must know (retracted, corrected, a preprint since published, cited twice, missing from the `.bib`,
//! never cited) and, given the manuscript's text, the passages of each cited work that bear on each citing
//! sentence. Read-only unless `import` is set. docs/sources.md describes the whole.
//!
//! The pieces: the manuscript read into references (`manuscript`), the library as a cached snapshot matched
//! against (`library`), the registries (`registry`), the citing sentences checked (`support`), the checklist
//! (`render`). One call checks as many references as its request budget allows and hands back a cursor.

mod cursor;
mod library;
mod manuscript;
mod registry;
mod render;
mod support;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use zotero_mcp_core::refcheck::compare::{disagreements, Disagreement};
use zotero_mcp_core::refcheck::confidence::Confidence;
use zotero_mcp_core::refcheck::{Detected, Format, TooLarge};
use zotero_mcp_core::sources::{Identifier, Reference};

use self::cursor::{fingerprint, parse_cursor};
use self::library::{Library, MatchedBy};
use self::manuscript::Cited;
use super::import_reference::entries::Entry as ImportEntry;
use super::import_reference::{steps as import_steps, REQUEST_BUDGET};
use super::mirrored::MirrorOut;
use super::next_step::NextStep;
use crate::config::ToolGroup;
use crate::context::RequestContext;
use crate::mcp::apps::Panel;
use crate::mcp::{Tool, ToolError, ToolSpec};

/// References checked per call at most (`limit`'s ceiling).
pub const MAX_PER_CALL: u32 = 60;
/// Requests a reference may cost, at most: a registry lookup (a DOI's CrossRef and DataCite) or a search, and a
/// second lookup for a preprint's published version.
pub(super) const REGISTRY_REQUESTS: usize = 3;
/// Requests a support check may cost: the item and its children, the attachment's annotations and its text
/// (from Zotero's index, or the file from the store: a download and perhaps a lookup).
const SUPPORT_REQUESTS: usize = 7;
/// Citing sentences checked per reference; the rest are counted.
const SENTENCES_PER_REFERENCE: usize = 3;
/// Passages shown per citing sentence.
const PASSAGES_PER_SENTENCE: usize = 2;
/// Requests kept back for `import`'s writes: templates for a few item types and the batch write (PDFs are
/// attached only while the budget still allows, as the importer does).
const IMPORT_REQUESTS: usize = 4;
/// Works imported per call (each a lookup already made, a template, a write, and perhaps a PDF).
const MAX_IMPORTS: usize = 10;

fn yes() -> bool {
    true
}

fn default_limit() -> u32 {
    20
}

// How `text` is written.
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub enum FormatArg {
    /// Decided from the text (`.bib` entries, `\cite` commands, `[@key]` citations, bare identifiers, else a
    /// formatted reference list).
    #[default]
    Auto,
    Bibtex,
    Latex,
    Markdown,
    Identifiers,
    ReferenceList,
}

/// Arguments of `zotero_check_references`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CheckReferencesInput {
    /// A .bib, LaTeX (\cite), Pandoc Markdown ([@key]), identifiers one per line, or a reference list.
    #[validate(length(min = 1, max = 1_000_000))]
    pub text: String,
    /// The .bib, when `text` is LaTeX or Markdown.
    #[validate(length(min = 1, max = 1_000_000))]
    pub bibtex: Option<String>,
    // The form of `text` (default `auto`).
    #[serde(default)]
    pub format: FormatArg,
    /// Ask CrossRef and other registries (default true).
    #[serde(default = "yes")]
    #[schemars(default = "yes")]
    pub check_registry: bool,
    /// For LaTeX/Markdown: cited passages per sentence (default true).
    #[serde(default = "yes")]
    #[schemars(default = "yes")]
    pub check_support: bool,
    /// Import missing works resolved surely, with their PDFs.
    #[serde(default)]
    #[schemars(default)]
    pub import: bool,
    // References checked in this call, at most (more are left for `cursor`).
    #[validate(range(min = 1, max = 60))]
    #[serde(default = "default_limit")]
    #[schemars(default = "default_limit")]
    pub limit: u32,
    /// The previous call's `nextCursor`, same text.
    #[validate(length(min = 1, max = 100))]
    pub cursor: Option<String>,
}

/// What became of a reference.
#[derive(Debug, Clone, Copy, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub enum Outcome {
    /// In the library (`itemKey`).
    Matched,
    /// Not in the library; the work is known (`registry`).
    NotInLibrary,
    /// Neither found in the library nor known for certain (`reason`, `tried`).
    Unresolved,
}

/// A flag's kind.
#[derive(Debug, Clone, Copy, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub enum FlagKind {
    /// The registry lists a retraction (or withdrawal) notice for the work.
    Retracted,
    /// The registry lists a correction (erratum, corrigendum) for the work.
    Corrected,
    /// The registry lists an expression of concern.
    ExpressionOfConcern,
    /// The registry lists another kind of update notice.
    Updated,
    /// The work is a preprint whose published version the registry links.
    PreprintPublished,
    /// The manuscript cites the same work under two keys or entries.
    DuplicateCitation,
    /// Cited in the text, but the `.bib` has no entry for the key.
    MissingFromBib,
    /// A `.bib` entry the text never cites.
    NeverCited,
    /// The entry or identifier could not be read (why is in `detail`).
    Unreadable,
    /// Several library items carry the citation key.
    AmbiguousKey,
}

/// A flag on a reference.
#[derive(Debug, Clone, Serialize, JsonSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Flag {
    pub kind: FlagKind,
    pub detail: String,
    /// The registry that says so, for a registry's flag.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

impl Flag {
    fn new(kind: FlagKind, detail: String) -> Self {
        Flag { kind, detail, source: None }
    }
}

/// A field the manuscript and the library give differently.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FieldDisagreement {
    /// `year`, `title`, `firstAuthor`, `container`, `volume`, `issue`, `pages` or `DOI`.
    pub field: String,
    pub manuscript: String,
    /// Empty when the library item lacks the field (only for a DOI).
    pub library: String,
    /// Which side the registry's record agrees with: `manuscript`, `library` or `neither`; absent when the
    /// registry was not asked or does not give the field.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub registry_agrees_with: Option<String>,
}

/// The registry's record of the work.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RegistryRecord {
    /// CrossRef, DataCite, arXiv, Open Library or PubMed.
    pub source: String,
    pub title: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub doi: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub year: Option<String>,
    pub item_type: String,
    /// How it was found: `identifier`, or `bibliographicSearch` (CrossRef's search for the reference as written).
    pub found_by: String,
    /// For a search: how surely the record is the work cited (`high`: title, year and first author agree;
    /// `medium`: the title and one of the others; `low`: not taken).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub confidence: Option<String>,
}

/// One passage bearing on a citing sentence.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SupportPassage {
    pub text: String,
    /// `annotation`, `note`, `abstract` or `fulltext`.
    pub source: String,
    pub source_key: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page_label: Option<String>,
    /// The share of the sentence's words the passage holds.
    pub coverage: f64,
}

/// A citing sentence and what the cited item says near it.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SupportCheck {
    pub sentence: String,
    pub line: u64,
    /// `passagesFound` (a passage holds at least half of the sentence's words), `weak`, or `noText` (nothing
    /// of the item could be read). Never a judgement that the work supports the claim: read the passages.
    pub verdict: String,
    pub passages: Vec<SupportPassage>,
}

/// One reference's report.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReferenceReport {
    /// Its position in the manuscript's list of references, from 1.
    pub position: u64,
    /// The citation key, `[n]` for a numbered reference, or the identifier.
    pub label: String,
    pub outcome: Outcome,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub item_key: Option<String>,
    /// The library item's title (matched), else the registry's or the manuscript's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// `citationKey`, `doi`, `arxiv`, `isbn`, `pmid` or `title` (title, year and first author).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matched_by: Option<String>,
    /// Other library items that match as well (copies of the work).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub also_matching: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub disagreements: Vec<FieldDisagreement>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub registry: Option<RegistryRecord>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub flags: Vec<Flag>,
    /// Why an unresolved reference stayed so.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// What was tried, in order.
    pub tried: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub support: Vec<SupportCheck>,
    /// Citing sentences not checked (past the per-reference limit).
    #[serde(skip_serializing_if = "is_zero")]
    pub sentences_unchecked: u64,
    /// With `import`: the new item's key, or why the work was not imported.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub imported: Option<ImportReport>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// What `import` did for one reference.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImportReport {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub item_key: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attachment_key: Option<String>,
    /// What happened (created, a PDF, or why not).
    pub note: String,
}

/// Counts of this call's references by outcome.
#[derive(Debug, Default, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Counts {
    pub matched: u64,
    pub not_in_library: u64,
    pub unresolved: u64,
    /// References with at least one flag.
    pub flagged: u64,
    pub retracted: u64,
}

/// Result of `zotero_check_references`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CheckReferencesOutput {
    pub counts: Counts,
    /// The form the text was read as.
    pub format: String,
    /// References in the whole manuscript.
    pub total_references: u64,
    /// Position (from 1) of the first reference in this call.
    pub first_position: u64,
    pub references: Vec<ReferenceReport>,
    /// Pass as `cursor`, with the same text, to check the rest; absent when every reference has been checked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// Why the call stopped before `limit`, when it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
    /// Outbound requests this call made (Zotero, registries, files).
    pub requests: u64,
    /// Library items the matching compared against.
    pub library_items: u64,
    /// The library mirror matched against (then `libraryItems` is its size), or still being filled.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mirror: Option<MirrorOut>,
    /// Why the mirror was not used, when it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

pub struct CheckReferences;

impl Tool for CheckReferences {
    type Input = CheckReferencesInput;
    type Output = CheckReferencesOutput;
    const SPEC: ToolSpec = ToolSpec::mixed(
        "zotero_check_references",
        "Check a manuscript's references against the library",
        "Checks a manuscript's references (.bib, LaTeX, Markdown, identifiers or a reference list) against the \
         library and registries: matches, disagreeing fields, missing works, retractions, uncited entries, \
         supporting passages. `import` (write scope) adds the missing works.",
    )
    .group(ToolGroup::Research)
    .open_world()
    .ask_for_less("a smaller `limit`, `checkSupport` false, and `cursor` to continue")
    .panel(Panel::References);

    fn render(output: &CheckReferencesOutput) -> String {
        render::render(output)
    }

    async fn call(ctx: &RequestContext, input: CheckReferencesInput) -> Result<CheckReferencesOutput, ToolError> {
        check(ctx, input).await
    }
}

async fn check(ctx: &RequestContext, mut input: CheckReferencesInput) -> Result<CheckReferencesOutput, ToolError> {
    // The scope first: a read-only grant asking to import is refused before anything is read or asked.
    if input.import {
        ctx.writer()?;
    }
    // The text is read off the request thread (natively), so the closure takes the strings with it; the
    // cursor is checked first, and the limits after it, as before.
    let (text, bibtex, asked) = (std::mem::take(&mut input.text), input.bibtex.take(), input.format);
    let (format, fingerprint, cited) =
        ctx.services().off_thread(move || read_manuscript(&text, bibtex.as_deref(), asked)).await.ok_or_else(|| {
            ToolError::Failed("The manuscript could not be read: the reading stopped with an internal error.".into())
        })?;
    let start = match &input.cursor {
        Some(cursor) => parse_cursor(cursor, &fingerprint)?,
        None => 0,
    };
    let cited = cited.map_err(|too_large| ToolError::invalid(too_large.to_string()))?;
    if cited.is_empty() {
        return Err(ToolError::invalid(match format {
            Format::Latex | Format::Markdown => {
                "the text cites nothing: no \\cite commands or [@key] citations were found. Give the source with its \
                 citations, or the reference list itself (format referenceList)"
            }
            _ => {
                "no reference was found in the text: give a .bib, identifiers one per line, or a reference list with \
                  one reference per line or per numbered entry"
            }
        }));
    }
    if start > cited.len() {
        return Err(ToolError::invalid(
            "the cursor points past the end of this manuscript's references: start without one",
        ));
    }

    let end = (start + input.limit as usize).min(cited.len());
    let (snapshot, library_items, mirror, note) = library::for_window(ctx, &cited[start..end]).await?;
    let mut reports = Vec::new();
    // The registry's record of each work reported, for the importer.
    let mut works: Vec<Option<Reference>> = Vec::new();
    let mut stopped = None;
    let mut next = start;
    if let Some(status) = mirror.as_ref().filter(|status| !status.complete) {
        stopped = Some(format!(
            "The library mirror is still being filled ({} items so far, 100 per request): call again with the \
             cursor to carry on; nothing has been checked yet.",
            status.items
        ));
    } else if !snapshot.complete {
        stopped = Some(format!(
            "The library is being read for matching ({} of {} items so far, a page of 100 per request); call again \
             with the cursor to carry on: nothing has been checked yet.",
            snapshot.next_start,
            snapshot.total.map_or("?".to_owned(), |t| t.to_string())
        ));
    } else {
        let library = Library::new(&snapshot);
        let wants_support = input.check_support && matches!(format, Format::Latex | Format::Markdown);
        while next < end {
            let one = &cited[next];
            let mut report = new_report(one, next);
            let found = locate(&library, one, &mut report);
            let needs = usize::from(input.check_registry) * REGISTRY_REQUESTS
                + usize::from(wants_support && !found.is_empty() && !one.citations.is_empty()) * SUPPORT_REQUESTS;
            // With `import`, the writes at the end (a template per item type, the batch) are kept back too.
            let kept_back = usize::from(input.import) * IMPORT_REQUESTS;
            if next > start && ctx.services().requests_sent() + needs + kept_back > REQUEST_BUDGET {
                stopped = Some(format!(
                    "This call's requests are spent ({} of {REQUEST_BUDGET}); call again with the cursor for the rest.",
                    ctx.services().requests_sent()
                ));
                break;
            }
            let (report, work) = check_one(ctx, &library, one, report, found, &input, wants_support).await;
            reports.push(report);
            works.push(work);
            next += 1;
        }
    }
    if input.import {
        import_missing(ctx, works, &mut reports).await;
    }
    let next_cursor = (next < cited.len()).then(|| format!("{next}.{fingerprint}"));
    let mut counts = Counts::default();
    for report in &reports {
        match report.outcome {
            Outcome::Matched => counts.matched += 1,
            Outcome::NotInLibrary => counts.not_in_library += 1,
            Outcome::Unresolved => counts.unresolved += 1,
        }
        counts.flagged += u64::from(!report.flags.is_empty());
        counts.retracted += u64::from(report.flags.iter().any(|f| f.kind == FlagKind::Retracted));
    }
    Ok(CheckReferencesOutput {
        counts,
        format: format_name(format).into(),
        total_references: cited.len() as u64,
        first_position: start as u64 + 1,
        references: reports,
        next_cursor,
        stopped,
        requests: ctx.services().requests_sent() as u64,
        library_items,
        mirror,
        note,
    })
}

/// The manuscript's form (`asked`, or detected), the fingerprint its cursors carry, and its references: the
/// CPU-bound part of a call, which reads the text once (detection hands on what it read).
fn read_manuscript(
    text: &str,
    bibtex: Option<&str>,
    asked: FormatArg,
) -> (Format, String, Result<Vec<Cited>, TooLarge>) {
    let given = |format| Detected { format, citations: None };
    let detected = match asked {
        FormatArg::Auto => Format::detect_reading(text),
        FormatArg::Bibtex => given(Format::Bibtex),
        FormatArg::Latex => given(Format::Latex),
        FormatArg::Markdown => given(Format::Markdown),
        FormatArg::Identifiers => given(Format::Identifiers),
        FormatArg::ReferenceList => given(Format::ReferenceList),
    };
    let fingerprint = fingerprint(text, bibtex, detected.format);
    let cited = manuscript::read(text, bibtex, detected.format, detected.citations);
    (detected.format, fingerprint, cited)
}

/// A reference's report before anything is looked up: what the manuscript itself says of it.
fn new_report(one: &Cited, at: usize) -> ReferenceReport {
    ReferenceReport {
        position: at as u64 + 1,
        label: one.label.clone(),
        outcome: Outcome::Unresolved,
        item_key: None,
        title: one.data.as_ref().and_then(|d| d.get("title")).and_then(Value::as_str).map(str::to_owned),
        matched_by: None,
        also_matching: Vec::new(),
        disagreements: Vec::new(),
        registry: None,
        flags: one.flags.clone(),
        reason: None,
        tried: Vec::new(),
        support: Vec::new(),
        sentences_unchecked: 0,
        imported: None,
    }
}

/// The library items a reference names (no request: the snapshot is in memory), by citation key, then by the
/// duplicate rules over identifiers and title; what was tried is noted in `report`.
fn locate<'a>(library: &Library<'a>, one: &Cited, report: &mut ReferenceReport) -> Vec<(&'a library::Kept, MatchedBy)> {
    let mut found: Vec<(&library::Kept, MatchedBy)> = Vec::new();
    if let Some(key) = &one.key {
        report.tried.push(format!("citation key `{key}` in the library"));
        found = library.by_citation_key(key).into_iter().map(|k| (k, MatchedBy::CitationKey)).collect();
        if found.len() > 1 {
            let keys: Vec<&str> = found.iter().map(|(k, _)| k.key.as_str()).collect();
            report.flags.push(Flag::new(
                FlagKind::AmbiguousKey,
                format!("{} library items carry this citation key: {}", keys.len(), keys.join(", ")),
            ));
        }
    }
    if found.is_empty() && (one.data.is_some() || !one.identifiers.is_empty()) {
        report.tried.push("identifiers, then title + year + first author, in the library".into());
        let ours = one.data.clone().unwrap_or_else(|| manuscript::identifier_data(&one.identifiers));
        found = library.same_work(&ours, &library::pmids(&one.identifiers));
    }
    found
}

/// The rest of a reference's check, after [`locate`]: the registry, then the citing sentences.
async fn check_one<'a>(
    ctx: &RequestContext,
    library: &Library<'a>,
    one: &Cited,
    mut report: ReferenceReport,
    mut found: Vec<(&'a library::Kept, MatchedBy)>,
    input: &CheckReferencesInput,
    wants_support: bool,
) -> (ReferenceReport, Option<Reference>) {
    if report.flags.iter().any(|f| f.kind == FlagKind::Unreadable) && one.data.is_none() && one.identifiers.is_empty() {
        report.reason = Some("the reference could not be read, so there was nothing to look for".into());
        return (report, None);
    }

    // The registry's record: of the matched item (its DOI, else the manuscript's identifier), or of the work.
    let mut record: Option<(Reference, Option<Confidence>)> = None;
    if input.check_registry {
        let matched_data = found.first().map(|(kept, _)| &kept.data);
        let id = matched_data
            .and_then(|data| first_identifier(&manuscript::identifiers_of(data)))
            .or_else(|| first_identifier(&one.identifiers));
        match (id, &one.written) {
            (Some(id), _) => {
                report.tried.push(format!("{id} at its registry"));
                match registry::look_up(ctx, &id).await {
                    Ok(reference) => record = Some((reference, None)),
                    Err(why) => {
                        // An identifier no registry knows is the likeliest mistake in a reference: said as the reason.
                        if found.is_empty() {
                            report.reason = Some(format!("not in the library, and {why}: check the identifier"));
                        }
                        report.tried.push(format!("no record: {why}"));
                    }
                }
            }
            (None, Some(written)) if found.is_empty() => {
                report.tried.push("CrossRef's bibliographic search for the reference as written".into());
                match registry::search(ctx, written).await {
                    Ok(Some((reference, confidence))) => record = Some((reference, Some(confidence))),
                    Ok(None) => report.tried.push("CrossRef found no candidate".into()),
                    Err(why) => report.tried.push(format!("the search failed: {}", why.with_next_step())),
                }
            }
            _ => {}
        }
    }
    // A work known only from the registry may still be in the library under its registry identifiers or title.
    if found.is_empty() {
        if let Some((reference, confidence)) = &record {
            if confidence.is_none_or(|c| c == Confidence::High) {
                found = library.same_work(&reference.data, &[]);
            }
        }
    }

    if let Some(((kept, by), others)) = found.split_first() {
        report.outcome = Outcome::Matched;
        report.item_key = Some(kept.key.clone());
        report.title = kept.data.get("title").and_then(Value::as_str).map(str::to_owned);
        report.matched_by = Some(by.name().into());
        report.also_matching = others.iter().map(|(k, _)| k.key.clone()).collect();
        if let Some(data) = &one.data {
            let registry_data = record.as_ref().filter(|(_, c)| c.is_none()).map(|(r, _)| &r.data);
            report.disagreements = disagreements(data, &kept.data)
                .into_iter()
                .map(|d| with_registry_side(d, data, &kept.data, registry_data))
                .collect();
        }
        if wants_support && !one.citations.is_empty() {
            if ctx.services().requests_sent() + SUPPORT_REQUESTS <= REQUEST_BUDGET {
                let (checks, unchecked) = support::check(ctx, &kept.key, &one.citations).await;
                report.support = checks;
                report.sentences_unchecked = unchecked as u64;
            } else {
                // Matched only through the registry, past what the call reserved: never past the budget.
                report.sentences_unchecked = one.citations.len() as u64;
            }
        }
    }
    let mut work = None;
    if let Some((reference, confidence)) = record {
        // The registry's flags first: a retraction is what a writer must see before anything else. A search
        // candidate that was not taken is another work as far as anyone knows: its notices are not this one's.
        if confidence != Some(Confidence::Low) {
            let mut flags = registry::flags_of(&reference.notes, reference.source);
            flags.append(&mut report.flags);
            report.flags = flags;
        }
        if report.outcome != Outcome::Matched {
            match confidence {
                Some(Confidence::Low) => {
                    report.reason = Some(format!(
                        "not in the library, and CrossRef's closest candidate (\"{}\") does not agree with the \
                         reference on title, year and first author, so it was not taken",
                        reference.title()
                    ));
                }
                _ => {
                    report.outcome = Outcome::NotInLibrary;
                    report.title = Some(reference.title().to_owned());
                }
            }
        }
        if confidence != Some(Confidence::Low) {
            report.registry = Some(record_of(&reference, confidence));
            work = Some(reference);
        }
    }
    if report.outcome == Outcome::Unresolved && report.reason.is_none() {
        report.reason = Some(match (&one.key, one.data.is_some(), input.check_registry) {
            (Some(key), false, _) => format!(
                "no library item has the citation key `{key}`, and the manuscript gives nothing else to look for"
            ),
            (_, _, false) => "not in the library, and the registries were not asked (checkRegistry false)".into(),
            _ => "not in the library, and no registry knows the work for certain".into(),
        });
    }
    (report, work)
}

/// Which side of a disagreement the registry's record agrees with.
fn with_registry_side(
    found: Disagreement,
    manuscript: &Map<String, Value>,
    library: &Map<String, Value>,
    registry: Option<&Map<String, Value>>,
) -> FieldDisagreement {
    // The record was looked up by the library's DOI when it has one: its DOI agrees with the library by
    // construction, which says nothing.
    let side = registry.filter(|_| found.field != "DOI").and_then(|registry| {
        let differs = |data: &Map<String, Value>| disagreements(data, registry).iter().any(|d| d.field == found.field);
        let gives = field_given(registry, found.field);
        match (differs(manuscript), differs(library)) {
            (false, true) if gives => Some("manuscript"),
            (true, false) if gives => Some("library"),
            (true, true) => Some("neither"),
            _ => None,
        }
    });
    FieldDisagreement {
        field: found.field.into(),
        manuscript: found.manuscript,
        library: found.library,
        registry_agrees_with: side.map(str::to_owned),
    }
}

/// Whether the registry's record gives the field compared as `field`.
fn field_given(data: &Map<String, Value>, field: &str) -> bool {
    let has = |name: &str| data.get(name).and_then(Value::as_str).is_some_and(|v| !v.trim().is_empty());
    match field {
        "year" => has("date"),
        "firstAuthor" => data.get("creators").and_then(Value::as_array).is_some_and(|c| !c.is_empty()),
        "container" => ["publicationTitle", "proceedingsTitle", "bookTitle"].iter().any(|f| has(f)),
        other => has(other),
    }
}

fn record_of(reference: &Reference, confidence: Option<Confidence>) -> RegistryRecord {
    let text = |name: &str| reference.data.get(name).and_then(Value::as_str).map(str::to_owned);
    RegistryRecord {
        source: reference.source.to_string(),
        title: reference.title().to_owned(),
        doi: text("DOI"),
        year: text("date").and_then(|d| zotero_mcp_core::zotero::year_of(&d)).map(|y| y.to_string()),
        item_type: reference.item_type().to_owned(),
        found_by: if confidence.is_some() { "bibliographicSearch" } else { "identifier" }.into(),
        confidence: confidence.map(|c| c.name().to_owned()),
    }
}

/// The identifier the registry is asked for: a DOI first (its record carries update notices), then arXiv,
/// PubMed, ISBN.
fn first_identifier(ids: &[Identifier]) -> Option<Identifier> {
    let rank = |id: &Identifier| match id {
        Identifier::Doi(doi) if doi.to_lowercase().starts_with("10.48550/arxiv.") => 1,
        Identifier::Doi(_) => 0,
        Identifier::Arxiv { .. } => 1,
        Identifier::Pmid(_) | Identifier::Pmcid(_) => 2,
        Identifier::Isbn { .. } => 3,
    };
    ids.iter().min_by_key(|id| rank(id)).cloned()
}

/// Imports the works this call found not to be in the library and knows for certain (resolved from an
/// identifier, or a search match of high confidence), through the importer: one batch write, then PDFs while the
/// request budget lasts.
async fn import_missing(ctx: &RequestContext, works: Vec<Option<Reference>>, reports: &mut [ReferenceReport]) {
    let (Ok(writer), Ok(zotero)) = (ctx.writer(), ctx.zotero()) else { return };
    let mut entries: Vec<ImportEntry> = Vec::new();
    let mut positions: Vec<usize> = Vec::new();
    for (at, (report, work)) in reports.iter_mut().zip(works).enumerate() {
        let (Some(record), Some(work)) = (&report.registry, work) else { continue };
        if report.outcome != Outcome::NotInLibrary {
            continue;
        }
        let note = if record.confidence.as_deref().is_some_and(|c| c != "high") {
            "not imported: the search's match is not certain; check it, then import it by its DOI".to_owned()
        } else if entries.len() >= MAX_IMPORTS {
            format!("not imported: one call imports at most {MAX_IMPORTS} works; call again for the rest")
        } else {
            entries.push(ImportEntry::from_reference(report.label.clone(), work));
            positions.push(at);
            continue;
        };
        report.imported = Some(ImportReport { item_key: None, attachment_key: None, note });
    }
    if entries.is_empty() {
        return;
    }
    import_steps::create(zotero, writer, &mut entries, &[], &[]).await;
    import_steps::attach_pdfs(ctx, &mut entries, None, ctx.services().requests_sent()).await;
    for (entry, at) in entries.into_iter().zip(positions) {
        let result = entry.into_result();
        let note = match (&result.item_key, &result.error) {
            (Some(key), _) => format!("imported as {key}"),
            (None, Some(why)) => format!("not imported: {why}"),
            (None, None) => "not imported".into(),
        };
        let note = match &result.pdf {
            Some(pdf) => format!("{note}; {pdf}"),
            None => note,
        };
        reports[at].imported =
            Some(ImportReport { item_key: result.item_key, attachment_key: result.attachment_key, note });
    }
}

pub(super) fn format_name(format: Format) -> &'static str {
    match format {
        Format::Bibtex => "bibtex",
        Format::Latex => "latex",
        Format::Markdown => "markdown",
        Format::Identifiers => "identifiers",
        Format::ReferenceList => "referenceList",
    }
}
