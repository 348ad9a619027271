//! BibTeX and BibLaTeX entries into Zotero item data, following the mapping of Zotero's own BibTeX import
//! (translators/BibTeX.js) for the common types; no I/O, so it runs the same on the Worker and natively.
//!
//! The syntax is BibTeX's: `@type{key, field = value, …}` or `@type(key, …)`, where a value is `{…}` (braces
//! nest), `"…"`, a number, or a `@string` macro name, and `#` joins pieces. `@string{name = value}` defines a
//! macro (the month macros `jan` … `dec` are predefined; an undefined name reads as itself); `@preamble` and
//! `@comment` blocks (up to the next line that begins with an entry, if their braces do not balance) and all
//! text outside entries are ignored. Field names and types are case-insensitive; of a field given twice the
//! first counts. A byte-order mark and CRLF line ends are accepted. An entry without a key is read, with `key`
//! `None`.
//!
//! Each entry becomes a [`BibEntry`] with its 1-based position, its citation key and either the item's `data`
//! (the object the Web API takes in `POST /items`) or a [`BibError`] saying on which line what went wrong. One
//! broken entry does not take the others with it: a line that begins (after spaces) with `@type{` or `@type(`
//! always starts a new entry, even inside a value that is still open, so an entry whose braces do not balance
//! ends there with an error; after any other syntax error reading goes on at the next such line. A `@string`
//! that cannot be read is reported in the same list (its key is `None`), since the entries that use it will
//! lack it.
//!
//! Limits, so that a hostile text costs bounded time and memory: at most [`MAX_TEXT_BYTES`] of text (a longer
//! one gives a single [`BibError::TextTooLarge`]), [`MAX_ENTRIES`] outcomes (then one
//! [`BibError::TooManyEntries`] naming the line where reading stopped), values of at most [`MAX_VALUE_BYTES`]
//! after concatenation, and [`MAX_EXPANSION_BYTES`] of macro text put into values over the whole text (a value
//! beyond either is its entry's [`BibError::ValueTooLong`]).
//!
//! LaTeX becomes plain Unicode: accents (`{\"o}`, `\"{o}`, `\'e`, `` \`a ``, `\^o`, `\~n`, `\c{c}`, `\v{s}`,
//! `\H{o}`, `\k{a}`, `\={a}`, `\.{z}`, `\u{g}`, `\r{u}`, on `\i` too), letters and symbols (`\ss`, `\o`, `\aa`,
//! `\ae`, `\oe`, `\l`, `\dh`, `\th`, `\S`, `\copyright`, `\ldots`, …), `--` → –, `---` → —, ``` `` ``` and `''`
//! → “ ”, `~` → a space, `\&` `\%` `\$` `\#` `\_` `\{` `\}` → the character, protective braces dropped
//! (`{DNA}` → DNA), any other command dropped with its argument kept (`\emph{x}`, `\textit{x}`, `\textbf{x}` →
//! x: plain text, not Zotero's rich-text `<i>`, so every field reads the same), `\url{…}` copied as written,
//! `\href{url}{text}` → text, and math `$…$` kept as written. URLs, DOIs and e-print ids only lose braces and
//! escapes. White space runs become one space.
//!
//! | BibTeX / BibLaTeX | Zotero |
//! |---|---|
//! | entry type | `itemType`: article → journalArticle (BibLaTeX `entrysubtype` magazine → magazineArticle, newspaper → newspaperArticle); book, mvbook, booklet, manual, proceedings, mvproceedings, collection, mvcollection, reference, mvreference, periodical → book; inbook, incollection, bookinbook, suppbook, suppcollection, inreference → bookSection; inproceedings, conference → conferencePaper; phdthesis, mastersthesis, thesis → thesis; techreport, report → report; misc, online, electronic, www, webpage → preprint with an arXiv e-print, else webpage with a `url` (or a URL in `howpublished`), else document; preprint → preprint; unpublished → manuscript; patent → patent; dataset, data → dataset; software, code → computerProgram; letter → letter; anything else → document |
//! | `title` + `subtitle` | `title` (`Title: Subtitle`); for a BibTeX @inbook without `booktitle` but with a worded `chapter`, `bookTitle`, and `chapter` is the `title` |
//! | `shorttitle` | `shortTitle` |
//! | `journal`, `journaltitle` | `publicationTitle` (journal, magazine, newspaper article) |
//! | `shortjournal` | `journalAbbreviation` |
//! | `booktitle` + `booksubtitle` | `bookTitle` (book section), `proceedingsTitle` (conference paper) |
//! | `eventtitle` | `conferenceName` |
//! | `author` | `author` (`inventor` for a patent, `programmer` for software) |
//! | `editor`, `translator`, `bookauthor` | `editor`, `translator`, `bookAuthor`; `contributor` where the type has no such role |
//! | `date`, or `year` + `month` (+ `day`) | `date` (`issueDate` for a patent): `2020-05-17`, `2020-05`, `2020`; a month that is no month → `Spring 2020` |
//! | `volume`, `volumes`, `edition`, `series`, `version` | `volume`, `numberOfVolumes`, `edition`, `series` (`seriesTitle` for a report or software), `versionNumber` |
//! | `number` (`issue` if no `number`) | `issue` (articles), `reportNumber`, `seriesNumber` (book, book section), `patentNumber` |
//! | `pages` | `pages`, `12--34` → `12-34` (`numPages` for a book, thesis or manuscript without a range); `pagetotal` → `numPages` |
//! | `publisher` (`organization` if none) | `publisher`, `institution` (report), `university` (thesis), `repository` (dataset, preprint), `company` (software) |
//! | `school`, `institution` | `university` (thesis), `institution` (report) |
//! | `address`, `location` (`venue` for a conference paper) | `place` |
//! | `type` | `thesisType` (PhD thesis / Master's thesis from the entry type, or `type`), `reportType`, `manuscriptType`, `letterType`, `websiteType` |
//! | `isbn`, `issn` | `ISBN`, `ISSN` where the type has them |
//! | `doi` | `DOI` without a `https://doi.org/` or `doi:` prefix; a `DOI: …` line of `extra` where the type has none |
//! | `url` | `url` |
//! | `urldate` | `accessDate` (when it is a `YYYY-MM-DD` date) |
//! | `abstract` | `abstractNote` |
//! | `language`, `langid` | `language` |
//! | `keywords` | `tags`, split at `,` and `;` |
//! | `eprint` with `eprinttype`/`archiveprefix` arXiv | preprint: `repository` arXiv, `archiveID` `arXiv:id`; other types: `arXiv: id` in `extra` |
//! | `pmid` (or `eprint` with `eprinttype` pubmed), `pmcid` | `PMID: …`, `PMCID: …` in `extra` |
//! | the key | `Citation Key: …` in `extra` |
//! | `note`, `annotation`, `addendum` | lines of `extra` |
//!
//! Any other field is ignored, and a field goes only into an item type whose Zotero schema has it
//! ([`crate::zotero::schema`]).

pub(crate) mod latex;
mod names;
mod parse;
#[cfg(test)]
mod tests;

use std::collections::HashSet;

use serde_json::{json, Map, Value};

use crate::zotero::schema;

use self::latex::{to_unicode, verbatim};
use self::names::{names, Name};
use self::parse::RawEntry;

/// The longest text read: 2 MiB.
pub const MAX_TEXT_BYTES: usize = 2 * 1024 * 1024;
/// The most outcomes (entries, and `@string`s that could not be read) of one text.
pub const MAX_ENTRIES: usize = 5_000;
/// The longest value of a field or macro, after concatenation and macro expansion: 64 KiB.
pub const MAX_VALUE_BYTES: usize = 64 * 1024;
/// The most macro text put into values over a whole text: 4 MiB (so nested macros cannot multiply the text).
pub const MAX_EXPANSION_BYTES: usize = 4 * 1024 * 1024;

/// One BibTeX entry of a text, in order.
#[derive(Debug, Clone, PartialEq)]
pub struct BibEntry {
    /// The entry's position among the text's outcomes, from 1.
    pub index: usize,
    /// The citation key, when the entry has one (and it was read before anything went wrong).
    pub key: Option<String>,
    /// The item's `data` (`itemType`, `title`, `creators`, …), or why the entry could not be read.
    pub outcome: Result<Map<String, Value>, BibError>,
}

/// Why a BibTeX entry (or a `@string`) was not read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BibError {
    /// The entry was still open when a line began with a new entry, or when the text ended.
    #[error(
        "The BibTeX {what}{} starting on line {line} is not closed: its braces (or quotes) do not balance before {}. \
         Look for a missing `}}` or `\"`, or an extra `{{`, in its fields.",
        key.as_deref().map(|key| format!(" `{key}`")).unwrap_or_default(),
        match next_entry_line {
            Some(next) => format!("line {next}, where a new entry begins"),
            None => "the end of the text".to_owned(),
        }
    )]
    Unterminated { line: usize, what: &'static str, key: Option<String>, next_entry_line: Option<usize> },
    /// Something the syntax does not allow where it stands.
    #[error(
        "Line {line}, in the BibTeX {what}{} starting on line {entry_line}: expected {expected}, found {found}.",
        key.as_deref().map(|key| format!(" `{key}`")).unwrap_or_default()
    )]
    Syntax {
        line: usize,
        entry_line: usize,
        what: &'static str,
        key: Option<String>,
        expected: &'static str,
        found: String,
    },
    /// A value longer than [`MAX_VALUE_BYTES`], or macros expanding beyond [`MAX_EXPANSION_BYTES`] in all.
    #[error(
        "Line {line}, in the BibTeX {what}{} starting on line {entry_line}: the value of `{field}` is too long \
         (at most {limit} bytes a value, and {budget} bytes of @string text in all). Shorten it, or split the text.",
        key.as_deref().map(|key| format!(" `{key}`")).unwrap_or_default()
    )]
    ValueTooLong {
        line: usize,
        entry_line: usize,
        what: &'static str,
        key: Option<String>,
        field: String,
        limit: usize,
        budget: usize,
    },
    /// More than [`MAX_ENTRIES`] outcomes: the rest of the text is not read.
    #[error(
        "The BibTeX text has more than {limit} entries: reading stopped at the entry on line {line}. Import the rest \
         as a separate text."
    )]
    TooManyEntries { line: usize, limit: usize },
    /// A text longer than [`MAX_TEXT_BYTES`]: none of it is read.
    #[error("The BibTeX text is {bytes} bytes long, more than the {limit} read at once. Split it into smaller texts.")]
    TextTooLarge { bytes: usize, limit: usize },
}

/// Reads every entry of a BibTeX or BibLaTeX text (see the module's documentation for the syntax, the limits and
/// the mapping).
pub fn parse_bibtex(text: &str) -> Vec<BibEntry> {
    if text.len() > MAX_TEXT_BYTES {
        let error = BibError::TextTooLarge { bytes: text.len(), limit: MAX_TEXT_BYTES };
        return vec![BibEntry { index: 1, key: None, outcome: Err(error) }];
    }
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    parse::parse(text)
        .into_iter()
        .enumerate()
        .map(|(number, (key, outcome))| BibEntry { index: number + 1, key, outcome: outcome.map(into_item) })
        .collect()
}

/// An entry's fields, looked up by name.
struct Fields<'e> {
    fields: &'e [(String, String)],
}

impl Fields<'_> {
    fn raw(&self, name: &str) -> Option<&str> {
        self.fields.iter().find(|(field, _)| field == name).map(|(_, value)| value.as_str())
    }

    /// The first of these fields that has text, as Unicode.
    fn text(&self, names: &[&str]) -> Option<String> {
        names.iter().filter_map(|name| self.raw(name)).map(to_unicode).find(|text| !text.is_empty())
    }

    /// The first of these fields that has a value, without braces and escapes (URLs, identifiers).
    fn verbatim(&self, names: &[&str]) -> Option<String> {
        names.iter().filter_map(|name| self.raw(name)).map(verbatim).find(|text| !text.is_empty())
    }

    /// A title and its subtitle, `Title: Subtitle`.
    fn titled(&self, title: &str, subtitle: &str) -> Option<String> {
        match (self.text(&[title]), self.text(&[subtitle])) {
            (Some(title), Some(subtitle)) => Some(format!("{title}: {subtitle}")),
            (title, None) => title,
            (None, subtitle) => subtitle,
        }
    }
}

/// The arXiv id of an entry, from `eprint` when `eprinttype` or `archiveprefix` says arXiv.
fn arxiv_id(fields: &Fields<'_>) -> Option<String> {
    let kind = fields.text(&["eprinttype", "archiveprefix"])?;
    if !kind.eq_ignore_ascii_case("arxiv") {
        return None;
    }
    let id = fields.verbatim(&["eprint"])?;
    let id = match id.get(..6) {
        Some(prefix) if prefix.eq_ignore_ascii_case("arxiv:") => id[6..].trim().to_owned(),
        _ => id,
    };
    (!id.is_empty()).then_some(id)
}

/// The URL of an entry: `url`, or a `howpublished` that is a URL (`\url{…}` or plain).
fn url(fields: &Fields<'_>) -> Option<String> {
    fields.verbatim(&["url"]).or_else(|| {
        let howpublished = fields.raw("howpublished")?;
        let text = to_unicode(howpublished);
        let lower = text.to_ascii_lowercase();
        (lower.starts_with("http://") || lower.starts_with("https://")).then_some(text)
    })
}

/// The Zotero item type of an entry type.
fn item_type(ty: &str, fields: &Fields<'_>) -> &'static str {
    match ty {
        "article" => match fields.text(&["entrysubtype"]).map(|subtype| subtype.to_ascii_lowercase()).as_deref() {
            Some("magazine") => "magazineArticle",
            Some("newspaper") => "newspaperArticle",
            _ => "journalArticle",
        },
        "book" | "mvbook" | "booklet" | "manual" | "proceedings" | "mvproceedings" | "collection" | "mvcollection"
        | "reference" | "mvreference" | "periodical" => "book",
        "inbook" | "incollection" | "bookinbook" | "suppbook" | "suppcollection" | "inreference" => "bookSection",
        "inproceedings" | "conference" => "conferencePaper",
        "phdthesis" | "mastersthesis" | "thesis" => "thesis",
        "techreport" | "report" => "report",
        "misc" | "online" | "electronic" | "www" | "webpage" => {
            if arxiv_id(fields).is_some() {
                "preprint"
            } else if url(fields).is_some() {
                "webpage"
            } else {
                "document"
            }
        }
        "preprint" => "preprint",
        "unpublished" => "manuscript",
        "patent" => "patent",
        "dataset" | "data" => "dataset",
        "software" | "code" => "computerProgram",
        "letter" => "letter",
        _ => "document",
    }
}

/// What `type` names, for the types that have a field for it; the BibLaTeX keys read as words.
fn type_name(ty: &str, fields: &Fields<'_>) -> Option<String> {
    let given = fields.text(&["type"]);
    let named = given.as_deref().map(|given| match given.to_ascii_lowercase().as_str() {
        "phdthesis" => "PhD thesis".to_owned(),
        "mathesis" | "mastersthesis" => "Master's thesis".to_owned(),
        "candthesis" => "Candidate thesis".to_owned(),
        "techreport" => "Technical report".to_owned(),
        "resreport" => "Research report".to_owned(),
        _ => given.to_owned(),
    });
    named.or_else(|| match ty {
        "phdthesis" => Some("PhD thesis".to_owned()),
        "mastersthesis" => Some("Master's thesis".to_owned()),
        _ => None,
    })
}

/// A month as its number: `5`, `05`, `May`, `may`, `May.`, `Sept`.
fn month_number(month: &str) -> Option<u32> {
    let month = month.trim().trim_end_matches('.').to_lowercase();
    if let Ok(number) = month.parse::<u32>() {
        return (1..=12).contains(&number).then_some(number);
    }
    if month.len() < 3 {
        return None;
    }
    crate::calendar::MONTH_NAMES
        .iter()
        .position(|name| name.starts_with(&month))
        .and_then(|index| u32::try_from(index + 1).ok())
}

/// Whether `text` is an ISO date `YYYY`, `YYYY-MM` or `YYYY-MM-DD`.
fn is_iso_date(text: &str) -> bool {
    let parts: Vec<&str> = text.split('-').collect();
    let digits = |part: &str, len: usize| part.len() == len && part.bytes().all(|b| b.is_ascii_digit());
    match parts.as_slice() {
        [year] => digits(year, 4),
        [year, month] => digits(year, 4) && digits(month, 2),
        [year, month, day] => digits(year, 4) && digits(month, 2) && digits(day, 2),
        _ => false,
    }
}

/// `date` (BibLaTeX; the start of a range `2020-05-01/2020-05-03`), else `year` with `month` and `day`.
fn date(fields: &Fields<'_>) -> Option<String> {
    if let Some(date) = fields.text(&["date"]) {
        let start = date.split('/').next().unwrap_or_default().trim();
        return Some(if is_iso_date(start) { start.to_owned() } else { date });
    }
    let year = fields.text(&["year"])?;
    let is_year = year.len() == 4 && year.bytes().all(|b| b.is_ascii_digit());
    let month = fields.text(&["month"]);
    if !is_year {
        return Some(match month {
            Some(month) => format!("{month} {year}"),
            None => year,
        });
    }
    match (month.as_deref().map(month_number), month) {
        (Some(Some(number)), _) => {
            let day =
                fields.text(&["day"]).and_then(|day| day.parse::<u32>().ok()).filter(|day| (1..=31).contains(day));
            Some(match day {
                Some(day) => format!("{year}-{number:02}-{day:02}"),
                None => format!("{year}-{number:02}"),
            })
        }
        (_, Some(month)) => Some(format!("{month} {year}")),
        (_, None) => Some(year),
    }
}

/// Pages with any dash between the numbers written `-`.
fn pages(text: &str) -> String {
    let dashed = text.replace(['–', '—'], "-");
    let mut out = String::with_capacity(dashed.len());
    let mut rest = dashed.as_str();
    while let Some(at) = rest.find('-') {
        out.push_str(rest[..at].trim_end());
        out.push('-');
        rest = rest[at..].trim_start_matches('-').trim_start();
    }
    out.push_str(rest);
    out
}

/// A DOI without the resolver or `doi:` prefix it was written with.
fn strip_doi(value: &str) -> String {
    let value = value.trim();
    let lower = value.to_ascii_lowercase();
    for prefix in
        ["https://doi.org/", "http://doi.org/", "https://dx.doi.org/", "http://dx.doi.org/", "doi.org/", "doi:"]
    {
        if lower.starts_with(prefix) {
            return value[prefix.len()..].trim().to_owned();
        }
    }
    value.to_owned()
}

/// One entry as Zotero item data.
fn into_item(entry: RawEntry) -> Map<String, Value> {
    let fields = Fields { fields: &entry.fields };
    let ty = entry.ty.as_str();
    let item_type = item_type(ty, &fields);
    let mut item = Item { item_type, data: Map::new() };
    let mut extra: Vec<String> = Vec::new();
    item.data.insert("itemType".to_owned(), json!(item_type));

    // A classic BibTeX @inbook names the book in `title` and the part in `chapter`; BibLaTeX's has `booktitle`.
    // Only a chapter with words (not a bare number) is taken as the part's title.
    let classic_inbook = ty == "inbook"
        && fields.raw("booktitle").is_none()
        && fields.text(&["chapter"]).is_some_and(|chapter| chapter.chars().any(char::is_alphabetic));
    if classic_inbook {
        item.put("title", fields.text(&["chapter"]));
        item.put("bookTitle", fields.titled("title", "subtitle"));
    } else {
        item.put("title", fields.titled("title", "subtitle"));
    }
    item.data.insert("creators".to_owned(), Value::Array(creators(item_type, &fields)));
    item.put("abstractNote", fields.text(&["abstract"]));
    item.put("shortTitle", fields.text(&["shorttitle"]));

    item.put("publicationTitle", fields.text(&["journaltitle", "journal"]));
    item.put("journalAbbreviation", fields.text(&["shortjournal"]));
    let container = fields.titled("booktitle", "booksubtitle");
    item.put("bookTitle", container.clone());
    item.put("proceedingsTitle", container);
    item.put("conferenceName", fields.text(&["eventtitle"]));

    item.put("volume", fields.text(&["volume"]));
    item.put("numberOfVolumes", fields.text(&["volumes"]));
    item.put("edition", fields.text(&["edition"]));
    let series = fields.text(&["series"]);
    item.put("series", series.clone());
    item.put("seriesTitle", series);
    item.put("versionNumber", fields.text(&["version"]));

    let number = fields.text(&["number"]);
    match item_type {
        "journalArticle" | "magazineArticle" => item.put("issue", number.or_else(|| fields.text(&["issue"]))),
        "report" => item.put("reportNumber", number),
        "book" | "bookSection" => item.put("seriesNumber", number),
        "patent" => item.put("patentNumber", number),
        _ => {}
    }

    let page_text = fields.text(&["pages"]).map(|text| pages(&text));
    if item.has("numPages") {
        let total = fields.text(&["pagetotal"]).or_else(|| page_text.filter(|pages| !pages.contains('-')));
        item.put("numPages", total);
    } else {
        item.put("pages", page_text);
    }

    let date_field = if item_type == "patent" { "issueDate" } else { "date" };
    item.put(date_field, date(&fields));

    let publisher = fields.text(&["publisher"]).or_else(|| fields.text(&["organization"]));
    match item_type {
        "thesis" => item.put("university", fields.text(&["school", "institution"]).or(publisher)),
        "report" => item.put("institution", fields.text(&["institution"]).or(publisher)),
        "computerProgram" => item.put("company", publisher),
        "dataset" | "preprint" => item.put("repository", publisher),
        _ => item.put("publisher", publisher),
    }
    let place = match item_type {
        "conferencePaper" => fields.text(&["address", "location", "venue"]),
        _ => fields.text(&["address", "location"]),
    };
    item.put("place", place);
    item.put("assignee", fields.text(&["holder"]));

    let kind = type_name(ty, &fields);
    for field in ["thesisType", "reportType", "manuscriptType", "letterType", "websiteType"] {
        if item.has(field) {
            item.put(field, kind.clone());
        }
    }

    item.put("ISBN", fields.text(&["isbn"]));
    item.put("ISSN", fields.text(&["issn"]));
    if let Some(doi) = fields.verbatim(&["doi"]).map(|doi| strip_doi(&doi)).filter(|doi| !doi.is_empty()) {
        if item.has("DOI") {
            item.put("DOI", Some(doi));
        } else {
            extra.push(format!("DOI: {doi}"));
        }
    }
    if let Some(id) = arxiv_id(&fields) {
        if item_type == "preprint" {
            item.put("repository", Some("arXiv".to_owned()));
            item.put("archiveID", Some(format!("arXiv:{id}")));
        } else {
            extra.push(format!("arXiv: {id}"));
        }
    }
    let pubmed_eprint = fields
        .text(&["eprinttype"])
        .filter(|kind| kind.eq_ignore_ascii_case("pubmed"))
        .and_then(|_| fields.verbatim(&["eprint"]));
    if let Some(pmid) = fields.verbatim(&["pmid"]).or(pubmed_eprint) {
        extra.push(format!("PMID: {pmid}"));
    }
    if let Some(pmcid) = fields.verbatim(&["pmcid"]) {
        extra.push(format!("PMCID: {pmcid}"));
    }

    item.put("url", url(&fields));
    item.put("accessDate", fields.text(&["urldate"]).filter(|date| is_iso_date(date) && date.len() == 10));
    item.put("language", fields.text(&["language", "langid"]));

    let mut tags: Vec<&str> = Vec::new();
    let mut seen: HashSet<&str> = HashSet::new();
    let keywords = fields.text(&["keywords"]).unwrap_or_default();
    for keyword in keywords.split([',', ';']).map(str::trim).filter(|keyword| !keyword.is_empty()) {
        if seen.insert(keyword) {
            tags.push(keyword);
        }
    }
    item.data.insert("tags".to_owned(), tags.into_iter().map(|tag| json!({ "tag": tag })).collect());

    if let Some(key) = entry.key.as_deref().filter(|key| !key.is_empty()) {
        extra.push(format!("Citation Key: {key}"));
    }
    for note in ["note", "annotation", "addendum"] {
        extra.extend(fields.text(&[note]));
    }
    if !extra.is_empty() {
        item.data.insert("extra".to_owned(), Value::String(extra.join("\n")));
    }
    item.data
}

/// Item data being built: a field is set only when the type has it and the value is there (and not set yet).
struct Item {
    item_type: &'static str,
    data: Map<String, Value>,
}

impl Item {
    fn has(&self, field: &str) -> bool {
        schema::has_field(self.item_type, field)
    }

    fn put(&mut self, field: &str, value: Option<String>) {
        if let Some(value) = value.filter(|value| !value.is_empty()) {
            if self.has(field) && !self.data.contains_key(field) {
                self.data.insert(field.to_owned(), Value::String(value));
            }
        }
    }
}

/// Authors, editors, translators and book authors, in that order, each as the type allows it.
fn creators(item_type: &str, fields: &Fields<'_>) -> Vec<Value> {
    let allowed = schema::creator_types(item_type);
    let primary = allowed.first().copied().unwrap_or("author");
    let roles = [("author", primary), ("editor", "editor"), ("translator", "translator"), ("bookauthor", "bookAuthor")];
    let mut creators = Vec::new();
    for (field, role) in roles {
        let role = if allowed.contains(&role) { role } else { "contributor" };
        for name in fields.raw(field).map(names).unwrap_or_default() {
            creators.push(match name {
                Name::Person { first, last } => json!({ "creatorType": role, "firstName": first, "lastName": last }),
                Name::Single(name) => json!({ "creatorType": role, "name": name }),
            });
        }
    }
    creators
}
