//! The pasted text as entries (a BibTeX block, an RIS block, or identifiers), and what becomes of each.

use serde_json::{Map, Value};
use zotero_mcp_core::sources::{self, detect_all, Identifier, Reference, ResolveError};
use zotero_mcp_core::zotero::ZoteroObject;

use super::{ImportResult, ImportStatus, MAX_ENTRIES_PER_CALL, MAX_IDENTIFIERS_PER_CALL, MAX_INPUT_CHARS};
use crate::format::text::truncate;
use crate::mcp::ToolError;
use crate::tools::next_step::NextStep;

/// Where an entry came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    Identifier,
    BibTex,
    Ris,
}

/// An entry's item data, once known.
pub struct Record {
    pub data: Map<String, Value>,
    /// CrossRef, DataCite, arXiv, Open Library, PubMed, BibTeX or RIS.
    pub source: String,
    /// A PDF of the work the source named (arXiv's, or OpenAlex's for a DOI).
    pub pdf_url: Option<String>,
}

/// What has become of an entry so far.
pub enum Outcome {
    /// Still to be written (or, for an identifier, looked up).
    Pending,
    /// Already in the library: the copies' keys and titles.
    Existing(Vec<(String, String)>),
    /// Written, as Zotero now stores it; with its PDF's attachment key when one was stored.
    Created {
        item: Box<ZoteroObject>,
        attachment_key: Option<String>,
    },
    Failed(String),
}

impl Outcome {
    /// The status reported; an entry still pending when the import ended was not written.
    fn status(&self) -> ImportStatus {
        match self {
            Outcome::Created { .. } => ImportStatus::Created,
            Outcome::Existing(_) => ImportStatus::Existing,
            Outcome::Pending | Outcome::Failed(_) => ImportStatus::Failed,
        }
    }
}

pub struct Entry {
    /// The identifier or entry as given (`BibTeX entry 2 (smith2020)`).
    pub input: String,
    pub origin: Origin,
    /// What to look up: an identifier not yet resolved.
    pub identifier: Option<Identifier>,
    pub record: Option<Record>,
    pub outcome: Outcome,
    /// What happened about a PDF, when anything did.
    pub pdf: Option<String>,
}

impl Entry {
    fn new(input: String, origin: Origin) -> Self {
        Entry { input, origin, identifier: None, record: None, outcome: Outcome::Pending, pdf: None }
    }

    /// An entry whose record is already resolved (by another tool): only to be checked, written and given a PDF.
    pub fn from_reference(input: String, reference: Reference) -> Self {
        let mut entry = Entry::new(input, Origin::Identifier);
        if let Ok(id) = sources::detect(reference.data.get("DOI").and_then(Value::as_str).unwrap_or_default()) {
            entry.identifier = Some(id);
        }
        entry.resolved(Ok(reference));
        entry
    }

    fn failed(mut self, why: String) -> Self {
        self.outcome = Outcome::Failed(why);
        self
    }

    /// Whether the entry still waits to be written.
    pub fn is_pending(&self) -> bool {
        matches!(self.outcome, Outcome::Pending)
    }

    /// Takes a resolved record in, or why there is none.
    pub fn resolved(&mut self, looked_up: Result<Reference, ResolveError>) {
        match looked_up {
            Ok(reference) => {
                self.record = Some(Record {
                    source: reference.source.to_string(),
                    pdf_url: reference.pdf_url,
                    data: reference.data,
                })
            }
            Err(error) => self.outcome = Outcome::Failed(error.with_next_step()),
        }
    }

    /// The entry's outcome as the tool reports it.
    pub fn into_result(self) -> ImportResult {
        let text = |name: &str| {
            self.record.as_ref().and_then(|r| r.data.get(name)).and_then(Value::as_str).unwrap_or_default().to_owned()
        };
        let mut result = ImportResult {
            input: self.input.clone(),
            status: self.outcome.status(),
            item_key: None,
            existing_keys: Vec::new(),
            attachment_key: None,
            source: self.record.as_ref().map(|r| r.source.clone()).unwrap_or_default(),
            title: text("title"),
            item_type: text("itemType"),
            pdf: self.pdf,
            error: None,
        };
        match self.outcome {
            Outcome::Existing(copies) => {
                if result.title.is_empty() {
                    result.title = copies.first().map(|(_, title)| title.clone()).unwrap_or_default();
                }
                result.existing_keys = copies.into_iter().map(|(key, _)| key).collect();
            }
            Outcome::Created { item, attachment_key } => {
                result.item_key = Some(item.key);
                result.attachment_key = attachment_key;
            }
            Outcome::Failed(why) => result.error = Some(why),
            Outcome::Pending => result.error = Some("not written: the import stopped before this entry".into()),
        }
        result
    }
}

/// The entries of `text`: a BibTeX block, an RIS block, or identifiers; refused past the per-call limits
/// before anything is asked.
pub fn parse_input(text: &str) -> Result<Vec<Entry>, ToolError> {
    let trimmed = text.trim_start_matches('\u{feff}').trim();
    if trimmed.chars().count() as u64 > MAX_INPUT_CHARS {
        return Err(ToolError::invalid(format!(
            "the text is longer than {MAX_INPUT_CHARS} characters; import it in parts"
        )));
    }
    let entries = if looks_like_bibtex(trimmed) {
        sources::parse_bibtex(trimmed)
            .into_iter()
            .map(|entry| {
                let label = match &entry.key {
                    Some(key) => format!("BibTeX entry {} ({key})", entry.index),
                    None => format!("BibTeX entry {}", entry.index),
                };
                parsed(Entry::new(label, Origin::BibTex), "BibTeX", entry.outcome)
            })
            .collect()
    } else if looks_like_ris(trimmed) {
        sources::parse_ris(trimmed)
            .into_iter()
            .map(|entry| {
                let title = entry.outcome.as_ref().ok().and_then(|d| d.get("title")).and_then(Value::as_str);
                let label = match title.filter(|t| !t.is_empty()) {
                    Some(title) => format!("RIS entry {} ({})", entry.index, truncate(title, 60)),
                    None => format!("RIS entry {}", entry.index),
                };
                parsed(Entry::new(label, Origin::Ris), "RIS", entry.outcome)
            })
            .collect()
    } else {
        identifiers(trimmed)?
    };
    if entries.is_empty() {
        return Err(ToolError::invalid("the block holds no entries; check that it is complete"));
    }
    if entries.len() > MAX_ENTRIES_PER_CALL {
        return Err(ToolError::invalid(format!(
            "the block holds {} entries; import at most {MAX_ENTRIES_PER_CALL} per call (split it)",
            entries.len()
        )));
    }
    Ok(entries)
}

fn parsed(entry: Entry, source: &str, outcome: Result<Map<String, Value>, impl std::fmt::Display>) -> Entry {
    match outcome {
        Ok(data) => Entry { record: Some(Record { data, source: source.to_owned(), pdf_url: None }), ..entry },
        Err(why) => entry.failed(why.to_string()),
    }
}

fn identifiers(text: &str) -> Result<Vec<Entry>, ToolError> {
    let found = detect_all(text);
    if found.iter().all(|(_, outcome)| outcome.is_err()) {
        // Nothing usable at all: prose, or a single bad identifier. Say why once instead of word by word.
        if let (1, Some((_, Err(error)))) = (found.len(), found.first()) {
            return Err(ToolError::invalid(error.to_string()));
        }
        return Err(ToolError::invalid(
            "no identifier was found; give a DOI, arXiv id, ISBN, PMID or PMCID (one per line), or a BibTeX or RIS \
             block. Create the item with zotero_create_items if it has no identifier.",
        ));
    }
    if found.len() > MAX_IDENTIFIERS_PER_CALL {
        return Err(ToolError::invalid(format!(
            "{} identifiers were given; import at most {MAX_IDENTIFIERS_PER_CALL} per call",
            found.len()
        )));
    }
    Ok(found
        .into_iter()
        .map(|(input, outcome)| {
            let entry = Entry::new(input, Origin::Identifier);
            match outcome {
                Ok(id) => Entry { identifier: Some(id), ..entry },
                Err(error) => entry.failed(error.to_string()),
            }
        })
        .collect())
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
