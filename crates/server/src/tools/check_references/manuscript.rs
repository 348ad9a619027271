//! The manuscript as a list of references to check, in the order the writer gave them, with what the
//! manuscript itself gets wrong (keys cited but not in the `.bib`, entries never cited, two keys for one work).

use std::collections::{HashMap, HashSet};

use serde_json::{json, Map, Value};
use zotero_mcp_core::duplicates::Fingerprints;
use zotero_mcp_core::refcheck::cites::{latex_citations, pandoc_citations, Citation};
use zotero_mcp_core::refcheck::compare::{bib_gaps, for_each_same_work, others_named};
use zotero_mcp_core::refcheck::reflist::{references, ListedReference};
use zotero_mcp_core::refcheck::{Format, TooLarge, MAX_REFERENCES};
use zotero_mcp_core::sources::{detect, detect_each, parse_bibtex, BibEntry, BibError, Identifier};
use zotero_mcp_core::zotero::ZoteroObject;

use super::{Flag, FlagKind};

/// One reference of the manuscript.
#[derive(Debug, Clone)]
pub struct Cited {
    /// How the report names it: the citation key, `[3]`, or the identifier.
    pub label: String,
    pub key: Option<String>,
    /// What the manuscript says of the work, as Zotero item data (from the `.bib` entry, or read off a
    /// formatted reference); `None` for a key with no entry or a bare identifier.
    pub data: Option<Map<String, Value>>,
    pub identifiers: Vec<Identifier>,
    /// The reference as written (a formatted reference, or one built from the entry's fields), for a
    /// bibliographic search and for judging its candidates.
    pub written: Option<ListedReference>,
    /// Where the manuscript cites it.
    pub citations: Vec<Citation>,
    /// What the manuscript itself gets wrong about it.
    pub flags: Vec<Flag>,
}

impl Cited {
    fn new(label: String) -> Self {
        Cited {
            label,
            key: None,
            data: None,
            identifiers: Vec::new(),
            written: None,
            citations: Vec::new(),
            flags: Vec::new(),
        }
    }
}

/// The references of a manuscript given in `format`, with `bibtex` as its `.bib` when `text` is LaTeX or
/// Markdown source; `citations` are the text's, when [`Format::detect_reading`] has read them already. A
/// manuscript over a limit of [`zotero_mcp_core::refcheck`] is refused whole.
pub fn read(
    text: &str,
    bibtex: Option<&str>,
    format: Format,
    citations: Option<Result<Vec<Citation>, TooLarge>>,
) -> Result<Vec<Cited>, TooLarge> {
    let mut cited: Vec<Cited> = match format {
        Format::Bibtex => {
            let entries = parse_bibtex(text);
            if entries.len() > MAX_REFERENCES || over_entry_limit(&entries) {
                return Err(TooLarge::References);
            }
            entries.iter().map(from_entry).collect()
        }
        Format::Latex | Format::Markdown => {
            let citations = match citations {
                Some(read) => read?,
                None if format == Format::Latex => latex_citations(text)?,
                None => pandoc_citations(text)?,
            };
            from_source(citations, bibtex)?
        }
        Format::Identifiers => {
            // One past the limit is enough to refuse: the rest of a long text is not read.
            let outcomes: Vec<_> = detect_each(text).take(MAX_REFERENCES + 1).collect();
            if outcomes.len() > MAX_REFERENCES {
                return Err(TooLarge::References);
            }
            outcomes
                .into_iter()
                .map(|(written, found)| {
                    let mut one = Cited::new(written);
                    match found {
                        Ok(id) => one.identifiers.push(id),
                        Err(why) => one.flags.push(Flag::new(FlagKind::Unreadable, why.to_string())),
                    }
                    one
                })
                .collect()
        }
        Format::ReferenceList => references(text)?.into_iter().enumerate().map(|(at, r)| from_listed(at, r)).collect(),
    };
    flag_same_work(&mut cited);
    Ok(cited)
}

/// Whether the BibTeX reader stopped at its limit of entries (its last outcome says so).
fn over_entry_limit(entries: &[BibEntry]) -> bool {
    entries.iter().any(|e| matches!(e.outcome, Err(BibError::TooManyEntries { .. })))
}

/// A LaTeX or Markdown manuscript: every key it cites, in order of first citation, each with its citing
/// sentences; with a `.bib`, the entries never cited after them. Keys and entries are found through maps: a
/// search of the list per citation was quadratic.
fn from_source(citations: Vec<Citation>, bibtex: Option<&str>) -> Result<Vec<Cited>, TooLarge> {
    let entries = bibtex.map(parse_bibtex).unwrap_or_default();
    if over_entry_limit(&entries) {
        return Err(TooLarge::Keys);
    }
    let (missing, never_cited) = bib_gaps(&citations, &entries);
    let missing: HashSet<&str> = missing.iter().map(String::as_str).collect();
    let mut entry_of: HashMap<&str, &BibEntry> = HashMap::new();
    for entry in &entries {
        if let Some(key) = entry.key.as_deref() {
            entry_of.entry(key).or_insert(entry);
        }
    }
    // `\nocite{*}` puts every entry in the bibliography: none is "never cited".
    let cites_all = citations.iter().any(|c| c.key == "*");
    let mut out: Vec<Cited> = Vec::new();
    let mut position: HashMap<String, usize> = HashMap::new();
    for citation in citations.into_iter().filter(|c| c.key != "*") {
        if let Some(&at) = position.get(&citation.key) {
            out[at].citations.push(citation);
            continue;
        }
        if out.len() == MAX_REFERENCES {
            return Err(TooLarge::References);
        }
        let mut one = match entry_of.get(citation.key.as_str()) {
            Some(entry) => from_entry(entry),
            None => {
                let mut one = Cited::new(citation.key.clone());
                one.key = Some(citation.key.clone());
                one
            }
        };
        if bibtex.is_some() && missing.contains(citation.key.as_str()) {
            one.flags.push(Flag::new(
                FlagKind::MissingFromBib,
                format!("cited (line {}) but the .bib has no entry `{}`", citation.line, citation.key),
            ));
        }
        position.insert(citation.key.clone(), out.len());
        one.citations.push(citation);
        out.push(one);
    }
    if !cites_all {
        for key in never_cited {
            if let Some(entry) = entry_of.get(key.as_str()) {
                if out.len() == MAX_REFERENCES {
                    return Err(TooLarge::References);
                }
                let mut one = from_entry(entry);
                one.flags.push(Flag::new(FlagKind::NeverCited, format!("the .bib entry `{key}` is never cited")));
                out.push(one);
            }
        }
    }
    Ok(out)
}

fn from_entry(entry: &BibEntry) -> Cited {
    let label = entry.key.clone().unwrap_or_else(|| format!("entry {}", entry.index));
    let mut one = Cited::new(label);
    one.key = entry.key.clone();
    match &entry.outcome {
        Ok(data) => {
            one.identifiers = identifiers_of(data);
            one.written = Some(written_from(data));
            one.data = Some(data.clone());
        }
        Err(why) => one.flags.push(Flag::new(FlagKind::Unreadable, why.to_string())),
    }
    one
}

fn from_listed(at: usize, listed: ListedReference) -> Cited {
    let label = format!("[{}]", listed.number.map_or(at as u32 + 1, |n| n));
    let mut one = Cited::new(label);
    one.identifiers = listed.identifiers.clone();
    let mut data = Map::new();
    data.insert("itemType".into(), json!("journalArticle"));
    if let Some(title) = &listed.title {
        data.insert("title".into(), json!(title));
    }
    if let Some(year) = &listed.year {
        data.insert("date".into(), json!(year));
    }
    if let Some(author) = &listed.first_author {
        data.insert("creators".into(), json!([{"creatorType": "author", "lastName": author, "firstName": ""}]));
    }
    for id in &listed.identifiers {
        if let Identifier::Doi(doi) = id {
            data.insert("DOI".into(), json!(doi));
        }
    }
    one.data = Some(data);
    one.written = Some(listed);
    one
}

/// The identifiers an entry's fields carry (DOI, ISBN, arXiv id; PMID and PMCID from `extra` lines).
pub fn identifiers_of(data: &Map<String, Value>) -> Vec<Identifier> {
    let item = ZoteroObject { key: String::new(), version: 0, meta: Map::new(), data: data.clone() };
    let prints = Fingerprints::of(&item);
    let mut ids: Vec<Identifier> = Vec::new();
    let mut add = |text: String| {
        if let Ok(id) = detect(&text) {
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
    };
    prints.dois.into_iter().for_each(&mut add);
    prints.arxiv.into_iter().map(|a| format!("arXiv:{a}")).for_each(&mut add);
    if let Some(isbn) = data.get("ISBN").and_then(Value::as_str).and_then(|i| i.split_whitespace().next()) {
        add(format!("ISBN {isbn}"));
    }
    for line in data.get("extra").and_then(Value::as_str).unwrap_or_default().lines() {
        if let Some((label, value)) = line.split_once(':') {
            if ["pmid", "pmcid"].contains(&label.trim().to_ascii_lowercase().as_str()) {
                add(format!("{}: {}", label.trim(), value.trim()));
            }
        }
    }
    ids
}

/// A written form of an entry, as a reference list would print it: what a bibliographic search is given.
fn written_from(data: &Map<String, Value>) -> ListedReference {
    let text_of = |field: &str| data.get(field).and_then(Value::as_str).map(str::trim).filter(|v| !v.is_empty());
    let authors: Vec<String> = data
        .get("creators")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .take(3)
        .filter_map(|c| c.get("lastName").or_else(|| c.get("name")).and_then(Value::as_str).map(str::to_owned))
        .collect();
    let year = text_of("date").and_then(zotero_mcp_core::zotero::year_of).map(|y| y.to_string());
    let container = ["publicationTitle", "proceedingsTitle", "bookTitle", "publisher"].iter().find_map(|f| text_of(f));
    let mut parts = vec![authors.join(", ")];
    parts.extend(year.clone());
    parts.extend(text_of("title").map(str::to_owned));
    parts.extend(container.map(str::to_owned));
    ListedReference {
        number: None,
        text: parts.into_iter().filter(|p| !p.is_empty()).collect::<Vec<_>>().join(". "),
        identifiers: Vec::new(),
        year,
        first_author: authors.first().cloned(),
        title: text_of("title").map(str::to_owned),
    }
}

/// Flags references that are one work under two labels (a shared identifier, or the same title, year and first
/// author), naming the others on each (ten at most, `compare::MAX_NAMED_LABELS`). A label is flagged once, for the first
/// group that holds it.
fn flag_same_work(cited: &mut [Cited]) {
    let entries: Vec<BibEntry> = cited
        .iter()
        .enumerate()
        .filter_map(|(at, c)| {
            let data =
                c.data.clone().or_else(|| (!c.identifiers.is_empty()).then(|| identifier_data(&c.identifiers)))?;
            Some(BibEntry { index: at + 1, key: Some(c.label.clone()), outcome: Ok(data) })
        })
        .collect();
    let mut first_with: HashMap<&str, usize> = HashMap::new();
    for (at, one) in cited.iter().enumerate() {
        first_with.entry(one.label.as_str()).or_insert(at);
    }
    let mut flags: Vec<(usize, String)> = Vec::new();
    let mut flagged: HashSet<usize> = HashSet::new();
    for_each_same_work(&entries, |group| {
        for label in group {
            let Some(&at) = first_with.get(label) else { continue };
            if flagged.insert(at) {
                flags.push((at, format!("the same work is also cited as {}", others_named(group, label))));
            }
        }
    });
    for (at, detail) in flags {
        cited[at].flags.push(Flag::new(FlagKind::DuplicateCitation, detail));
    }
}

/// Item data carrying only identifiers, so the duplicate rules can compare a bare identifier.
pub fn identifier_data(ids: &[Identifier]) -> Map<String, Value> {
    let mut data = Map::new();
    data.insert("itemType".into(), json!("journalArticle"));
    let mut extra: Vec<String> = Vec::new();
    for id in ids {
        match id {
            Identifier::Doi(doi) => {
                data.insert("DOI".into(), json!(doi));
            }
            Identifier::Arxiv { .. } => extra.push(id.to_string()),
            Identifier::Isbn { isbn13, .. } => {
                data.insert("itemType".into(), json!("book"));
                data.insert("ISBN".into(), json!(isbn13));
            }
            Identifier::Pmid(pmid) => extra.push(format!("PMID: {pmid}")),
            Identifier::Pmcid(pmcid) => extra.push(format!("PMCID: {pmcid}")),
        }
    }
    if !extra.is_empty() {
        data.insert("extra".into(), json!(extra.join("\n")));
    }
    data
}
