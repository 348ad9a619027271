//! What a manuscript's reference and the library's item disagree on, and what a manuscript's `.bib` and its
//! citations disagree on. Both sides are Zotero item `data` (a `.bib` entry is read into the same shape by
//! [`crate::sources::parse_bibtex`]), so one comparison serves every input form.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use super::cites::Citation;
use crate::duplicates::{normalise_title, same_work, Fingerprints};
use crate::sources::BibEntry;
use crate::zotero::ZoteroObject;

/// A field the two sides give differently.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Disagreement {
    /// `year`, `title`, `firstAuthor`, `container`, `volume`, `issue`, `pages` or `DOI`.
    pub field: &'static str,
    pub manuscript: String,
    /// Empty where the library item lacks a field the manuscript gives (only for the DOI: a missing volume is
    /// no disagreement, a missing DOI is worth adding).
    pub library: String,
}

/// The fields `manuscript` and `library` give differently, compared as a reader would: titles without case and
/// punctuation, page ranges written short or long (`583-9` is `583-589`), DOIs without case or `https://doi.org/`.
/// A field only one side gives is no disagreement, but for a DOI the library lacks.
pub fn disagreements(manuscript: &Map<String, Value>, library: &Map<String, Value>) -> Vec<Disagreement> {
    let mut out = Vec::new();
    let mut differ =
        |field: &'static str, ours: Option<String>, theirs: Option<String>, same: &dyn Fn(&str, &str) -> bool| {
            if let (Some(ours), Some(theirs)) = (ours, theirs) {
                if !same(&ours, &theirs) {
                    out.push(Disagreement { field, manuscript: ours, library: theirs });
                }
            }
        };
    let exact = |a: &str, b: &str| a.trim().eq_ignore_ascii_case(b.trim());
    differ("year", year(manuscript), year(library), &exact);
    differ("title", text(manuscript, "title"), text(library, "title"), &|a, b| {
        normalise_title(a) == normalise_title(b)
    });
    differ("firstAuthor", first_author(manuscript), first_author(library), &|a, b| {
        normalise_title(a) == normalise_title(b)
    });
    differ("container", container(manuscript), container(library), &|a, b| {
        let (a, b) = (normalise_title(a), normalise_title(b));
        // An abbreviation (`Nat. Commun.` for `Nature Communications`) is not a disagreement.
        a == b || initials_match(&a, &b) || initials_match(&b, &a)
    });
    differ("volume", text(manuscript, "volume"), text(library, "volume"), &exact);
    differ("issue", text(manuscript, "issue"), text(library, "issue"), &exact);
    differ("pages", text(manuscript, "pages"), text(library, "pages"), &|a, b| pages(a) == pages(b));
    match (doi(manuscript), doi(library)) {
        (Some(ours), Some(theirs)) if ours != theirs => {
            out.push(Disagreement { field: "DOI", manuscript: ours, library: theirs })
        }
        (Some(ours), None) => out.push(Disagreement { field: "DOI", manuscript: ours, library: String::new() }),
        _ => {}
    }
    out
}

/// The keys a manuscript cites that its `.bib` has no entry for, and its entries it never cites (each in the
/// order it first appears). `\nocite{*}`-style blanket inclusion is the caller's to honour.
pub fn bib_gaps(citations: &[Citation], entries: &[BibEntry]) -> (Vec<String>, Vec<String>) {
    let defined: HashSet<&str> = entries.iter().filter_map(|e| e.key.as_deref()).collect();
    let cited: HashSet<&str> = citations.iter().map(|c| c.key.as_str()).collect();
    let mut missing: Vec<String> = Vec::new();
    let mut seen: HashSet<&str> = HashSet::new();
    for citation in citations {
        let key = citation.key.as_str();
        if !defined.contains(key) && seen.insert(key) {
            missing.push(key.to_owned());
        }
    }
    let mut unused: Vec<String> = Vec::new();
    let mut seen: HashSet<&str> = HashSet::new();
    for key in entries.iter().filter_map(|e| e.key.as_deref()) {
        if !cited.contains(key) && seen.insert(key) {
            unused.push(key.to_owned());
        }
    }
    (missing, unused)
}

/// Groups of `.bib` keys that are one work (a shared DOI, ISBN or arXiv id, or the same title, year and first
/// author: the duplicate rules), so the manuscript cites it twice under two keys.
pub fn same_work_keys(entries: &[BibEntry]) -> Vec<Vec<String>> {
    let mut groups = Vec::new();
    for_each_same_work(entries, |group| groups.push(group.iter().map(|key| (*key).to_owned()).collect()));
    groups
}

/// [`same_work_keys`], handing each group to `each` as it is found rather than keeping them all.
///
/// The groups are those of comparing every entry with every later one by [`same_work`]: in order, an entry not
/// yet in a group gathers each later entry (under another key) that is the same work as it. Only the entries
/// that can be are compared: those sharing a DOI, ISBN or arXiv id with it, and those with its title key whose
/// identifiers cannot contradict its own (an entry lacks each kind the other has). Comparing all pairs took
/// eighteen seconds for forty thousand DOIs.
pub fn for_each_same_work(entries: &[BibEntry], mut each: impl FnMut(&[&str])) {
    let read: Vec<(&str, Fingerprints)> = entries
        .iter()
        .filter_map(|e| {
            let data = e.outcome.as_ref().ok()?;
            let item = ZoteroObject { key: String::new(), version: 0, meta: Map::new(), data: data.clone() };
            Some((e.key.as_deref()?, Fingerprints::of(&item)))
        })
        .collect();
    let index = WorkIndex::of(&read);
    let mut grouped: HashSet<&str> = HashSet::new();
    let mut candidates: Vec<usize> = Vec::new();
    for (at, (key, prints)) in read.iter().enumerate() {
        if grouped.contains(key) {
            continue;
        }
        index.candidates(at, prints, &mut candidates);
        let mut group: Vec<&str> = vec![key];
        let mut in_group: HashSet<&str> = HashSet::from([*key]);
        for &other in &candidates {
            let (other_key, other_prints) = &read[other];
            if same_work(prints, other_prints) && in_group.insert(other_key) {
                group.push(other_key);
            }
        }
        if group.len() > 1 {
            grouped.extend(group.iter().copied());
            each(&group);
        }
    }
}

/// The entries by each identifier and by title key, to find an entry's possible twins without comparing it
/// with every other.
struct WorkIndex<'a> {
    by_value: HashMap<(u8, &'a str), Vec<usize>>,
    /// By title key, then by which identifier kinds an entry has (a bit each: DOI, ISBN, arXiv).
    by_title: HashMap<&'a str, [Vec<usize>; 8]>,
}

impl<'a> WorkIndex<'a> {
    fn of(read: &'a [(&'a str, Fingerprints)]) -> Self {
        let mut by_value: HashMap<(u8, &str), Vec<usize>> = HashMap::new();
        let mut by_title: HashMap<&str, [Vec<usize>; 8]> = HashMap::new();
        for (at, (_, prints)) in read.iter().enumerate() {
            for (kind, values) in [&prints.dois, &prints.isbns, &prints.arxiv].into_iter().enumerate() {
                for value in values {
                    by_value.entry((kind as u8, value.as_str())).or_default().push(at);
                }
            }
            if let Some(title) = &prints.title_key {
                by_title.entry(title.as_str()).or_default()[kinds(prints)].push(at);
            }
        }
        WorkIndex { by_value, by_title }
    }

    /// The entries after `at` that may be the same work as it, in order, each once.
    fn candidates(&self, at: usize, prints: &Fingerprints, out: &mut Vec<usize>) {
        out.clear();
        for (kind, values) in [&prints.dois, &prints.isbns, &prints.arxiv].into_iter().enumerate() {
            for value in values {
                if let Some(list) = self.by_value.get(&(kind as u8, value.as_str())) {
                    out.extend_from_slice(later(list, at));
                }
            }
        }
        if let Some(lists) = prints.title_key.as_ref().and_then(|title| self.by_title.get(title.as_str())) {
            let own = kinds(prints);
            // Without a shared identifier, a title joins only where no kind is known on both sides.
            for (theirs, list) in lists.iter().enumerate() {
                if theirs & own == 0 {
                    out.extend_from_slice(later(list, at));
                }
            }
        }
        crate::sort::sort(out);
        out.dedup();
    }
}

/// The entries of `list` (in order) after `at`.
fn later(list: &[usize], at: usize) -> &[usize] {
    &list[list.partition_point(|&other| other <= at)..]
}

/// Which identifier kinds an entry has: 1 for a DOI, 2 for an ISBN, 4 for an arXiv id.
fn kinds(prints: &Fingerprints) -> usize {
    usize::from(!prints.dois.is_empty())
        | (usize::from(!prints.isbns.is_empty()) << 1)
        | (usize::from(!prints.arxiv.is_empty()) << 2)
}

/// Labels an "also cited as" names, at most; the rest are counted. One work cited under four thousand
/// spellings would otherwise name the 3,999 others on each of them.
pub const MAX_NAMED_LABELS: usize = 10;

/// The labels of `group` but `label` (a group's labels are distinct): `a, b, c`, or the first
/// [`MAX_NAMED_LABELS`] and `… and 3,990 more`.
pub fn others_named(group: &[&str], label: &str) -> String {
    let shown: Vec<&str> = group.iter().filter(|g| **g != label).take(MAX_NAMED_LABELS).copied().collect();
    match group.len().saturating_sub(1 + shown.len()) {
        0 => shown.join(", "),
        rest => format!("{} … and {} more", shown.join(", "), thousands(rest)),
    }
}

/// `3990` as `3,990`.
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (at, digit) in digits.chars().enumerate() {
        if at > 0 && (digits.len() - at).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

fn text(data: &Map<String, Value>, field: &str) -> Option<String> {
    data.get(field).and_then(Value::as_str).map(str::trim).filter(|v| !v.is_empty()).map(str::to_owned)
}

/// The one year rule the rest of the server reads dates by.
fn year(data: &Map<String, Value>) -> Option<String> {
    crate::zotero::year_of(&text(data, "date")?).map(|year| format!("{year:04}"))
}

fn first_author(data: &Map<String, Value>) -> Option<String> {
    let creators = data.get("creators")?.as_array()?;
    let first = creators.iter().find(|c| c.get("creatorType").and_then(Value::as_str) == Some("author"))?;
    first
        .get("lastName")
        .or_else(|| first.get("name"))
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .map(str::to_owned)
}

fn container(data: &Map<String, Value>) -> Option<String> {
    ["publicationTitle", "proceedingsTitle", "bookTitle", "websiteTitle", "blogTitle"]
        .iter()
        .find_map(|field| text(data, field))
}

/// The DOI as the duplicate check reads it (the field, or a `DOI:` line of `extra`; lower case, no link prefix).
fn doi(data: &Map<String, Value>) -> Option<String> {
    let item = ZoteroObject { key: String::new(), version: 0, meta: Map::new(), data: data.clone() };
    Fingerprints::of(&item).dois.into_iter().next()
}

/// A page range with its end written in full (`583-9` → `583-589`), dashes of any kind as `-`.
fn pages(raw: &str) -> String {
    let plain: String = raw.chars().map(|c| if matches!(c, '–' | '—' | '‐') { '-' } else { c }).collect();
    let plain = plain.replace("--", "-").replace(' ', "");
    match plain.split_once('-') {
        Some((start, end)) if end.len() < start.len() && end.bytes().all(|b| b.is_ascii_digit()) => {
            format!("{start}-{}{end}", &start[..start.len() - end.len()])
        }
        _ => plain,
    }
}

/// Whether the words of `short` (an abbreviation: `nat commun`) begin the words of `long` one for one.
fn initials_match(short: &str, long: &str) -> bool {
    let short: Vec<&str> = short.split(' ').filter(|w| !w.is_empty()).collect();
    let long: Vec<&str> =
        long.split(' ').filter(|w| !w.is_empty() && !matches!(*w, "of" | "the" | "and" | "for")).collect();
    !short.is_empty() && short.len() == long.len() && short.iter().zip(&long).all(|(s, l)| l.starts_with(s))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sources::parse_bibtex;
    use serde_json::json;

    fn data(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn fields_are_compared_as_a_reader_would() {
        let library = data(json!({
            "title": "Highly accurate protein structure prediction with AlphaFold",
            "creators": [{ "creatorType": "author", "firstName": "John", "lastName": "Jumper" }],
            "publicationTitle": "Nature Communications", "volume": "596", "pages": "583-589", "date": "2021-08-26",
        }));
        let agreeing = data(json!({
            "title": "Highly Accurate Protein Structure Prediction with {AlphaFold}.",
            "creators": [{ "creatorType": "author", "firstName": "J.", "lastName": "Jumper" }],
            "publicationTitle": "Nat. Commun.", "volume": "596", "pages": "583–9", "date": "2021",
        }));
        assert_eq!(disagreements(&agreeing, &library), Vec::new());
        let wrong = data(json!({
            "title": "Protein structure prediction", "date": "2020", "volume": "595",
            "creators": [{ "creatorType": "author", "lastName": "Jumpers" }], "DOI": "https://doi.org/10.1038/X1",
        }));
        let fields: Vec<&str> = disagreements(&wrong, &library).iter().map(|d| d.field).collect();
        assert_eq!(fields, ["year", "title", "firstAuthor", "volume", "DOI"]);
        let doi = disagreements(&wrong, &library).pop().unwrap();
        assert_eq!((doi.manuscript.as_str(), doi.library.as_str()), ("10.1038/x1", ""));
    }

    #[test]
    fn a_bib_and_its_citations_are_checked_against_each_other() {
        let bib = parse_bibtex(
            "@article{jumper2021, title={Highly accurate protein structure prediction with AlphaFold}, \
             doi={10.1038/s41586-021-03819-2}, year={2021}}\n\
             @article{alphafold, title={AlphaFold}, doi={10.1038/S41586-021-03819-2}, year={2021}}\n\
             @book{unused, title={Never cited}, year={1999}}",
        );
        let citations =
            crate::refcheck::cites::latex_citations("See \\cite{jumper2021, alphafold, missing2020}.").unwrap();
        let (missing, unused) = bib_gaps(&citations, &bib);
        assert_eq!((missing, unused), (vec!["missing2020".to_owned()], vec!["unused".to_owned()]));
        assert_eq!(same_work_keys(&bib), vec![vec!["jumper2021".to_owned(), "alphafold".to_owned()]]);
    }
}
