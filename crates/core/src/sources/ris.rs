//! RIS records into Zotero item data, following the mapping of Zotero's own RIS import (translators/RIS.js) for
//! the common types; no I/O, so it runs the same on the Worker and natively.
//!
//! A line is `XX  - value`: a tag of a capital letter and a capital letter or digit, one or two spaces, a dash,
//! and the value after one space (a line that ends at the dash, as `ER  -` often does, has an empty value). CRLF
//! line ends and a byte-order mark are accepted; a non-empty line without a tag inside an entry continues the
//! previous field, joined with a space. `TY` begins an entry and `ER` ends it; lines outside entries are ignored.
//!
//! Each entry becomes a [`RisEntry`] with its 1-based position and either the item's `data` (the object the Web
//! API takes in `POST /items`) or a [`RisError`] saying what is missing: an entry without `TY`, or one that is
//! still open when the next `TY` or the end of the text comes. Unknown tags are ignored.
//!
//! | RIS | Zotero |
//! |---|---|
//! | `TY` | `itemType`: JOUR, EJOUR, JFULL, INPR → journalArticle; BOOK, EBOOK, EDBOOK → book; CHAP, ECHAP → bookSection; CONF, CPAPER → conferencePaper; THES → thesis; RPRT → report; ELEC, WEB → webpage; NEWS → newspaperArticle; MGZN → magazineArticle; DATA → dataset; UNPB → manuscript; PAT → patent; anything else (GEN too) → document |
//! | `TI`, `T1` (`BT` for a book without either) | `title` |
//! | `T2`, `JF`, `JO`, `BT` | the container: `publicationTitle` (journal, magazine, newspaper article), `bookTitle` (book section), `proceedingsTitle` (conference paper), `websiteTitle` (web page), `series` (book) |
//! | `J2`, `JA` (or `JO` when another tag named the journal) | `journalAbbreviation` (journal article) |
//! | `T3` | `series` (book, book section, conference paper) |
//! | `ST` | `shortTitle` |
//! | `AU`, `A1` | `author` (`inventor` for a patent) |
//! | `A2`, `ED` | `editor` (`contributor` where Zotero has no editor) |
//! | `A3` | `seriesEditor` (book, book section, conference paper; `contributor` elsewhere) |
//! | `DA`, `PY`, `Y1` | `date` (`issueDate` for a patent): `2020/05/17/` → `2020-05-17`, `2020` → `2020` |
//! | `VL`, `IS`, `ET` | `volume`, `issue`, `edition` where the type has them |
//! | `SP`, `EP` | `pages` `SP-EP` (`numPages` from `SP` for a book or thesis) |
//! | `SN` | `ISBN` (book, book section, conference paper), `ISSN` (journal, magazine, newspaper), `reportNumber` |
//! | `DO` | `DOI` without a `https://doi.org/` or `doi:` prefix (a `DOI: …` line in `extra` for a type without the field in `zotero::schema`) |
//! | `UR` | `url` (the first) |
//! | `AB`, `N2` | `abstractNote` (the first) |
//! | `LA`, `PB`, `CY` | `language`, `publisher` (`institution`, `university`, `repository`), `place` |
//! | `KW` | `tags`, one each |
//! | `N1` | lines of `extra` (not child notes) |
//!
//! Creators: `Last, First` is split at the first comma, `First Last` at the last space, and a single word is a
//! one-field `{name}`.

#[cfg(test)]
mod tests;

use serde_json::{json, Map, Value};

/// One RIS entry of a text, in order.
#[derive(Debug, Clone, PartialEq)]
pub struct RisEntry {
    /// The entry's position among the text's entries, from 1.
    pub index: usize,
    /// The item's `data` (`itemType`, `title`, `creators`, …), or why the entry could not be read.
    pub outcome: Result<Map<String, Value>, RisError>,
}

/// Why an RIS entry was not read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RisError {
    /// Tagged lines began without a `TY` line, or the `TY` line named no type.
    #[error(
        "The RIS entry starting on line {line} has no type: every entry begins with a `TY  - ` line naming one \
         (JOUR, BOOK, CHAP, …)."
    )]
    MissingType { line: usize },
    /// The entry was still open when the next `TY` line or the end of the text came.
    #[error(
        "The RIS entry starting on line {line} has no `ER  - ` line: {}.",
        match next_entry_line {
            Some(next) => format!("a new entry begins on line {next} first"),
            None => "the text ends first, so it may be cut short".to_owned(),
        }
    )]
    MissingEnd { line: usize, next_entry_line: Option<usize> },
}

/// Reads every entry of an RIS text (see the module's documentation for the format and the mapping).
pub fn parse_ris(text: &str) -> Vec<RisEntry> {
    let mut outcomes = Vec::new();
    let mut open: Option<RawEntry> = None;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    for (number, line) in text.split('\n').enumerate() {
        let line_number = number + 1;
        let line = line.strip_suffix('\r').unwrap_or(line).trim_start_matches('\u{feff}');
        match tagged(line) {
            Some(("TY", value)) => {
                if let Some(previous) = open.take() {
                    outcomes.push(previous.unfinished(Some(line_number)));
                }
                open = Some(RawEntry::new(line_number, Some(value)));
            }
            Some(("ER", _)) => {
                if let Some(entry) = open.take() {
                    outcomes.push(entry.finish());
                }
            }
            Some((tag, value)) => {
                open.get_or_insert_with(|| RawEntry::new(line_number, None)).fields.push((tag, value.to_owned()));
            }
            None => {
                let continuation = line.trim();
                if continuation.is_empty() {
                    continue;
                }
                if let Some((_, value)) = open.as_mut().and_then(|entry| entry.fields.last_mut()) {
                    if !value.is_empty() {
                        value.push(' ');
                    }
                    value.push_str(continuation);
                }
            }
        }
    }
    if let Some(entry) = open {
        outcomes.push(entry.unfinished(None));
    }
    outcomes.into_iter().enumerate().map(|(number, outcome)| RisEntry { index: number + 1, outcome }).collect()
}

/// `XX  - value` → `("XX", "value")`; one space before the dash is tolerated, and nothing after it.
fn tagged(line: &str) -> Option<(&str, &str)> {
    let bytes = line.as_bytes();
    let tag_ok = bytes.len() >= 4
        && bytes[0].is_ascii_uppercase()
        && (bytes[1].is_ascii_uppercase() || bytes[1].is_ascii_digit());
    if !tag_ok {
        return None;
    }
    let after_tag = &line[2..];
    let after_spaces = after_tag.strip_prefix("  ").or_else(|| after_tag.strip_prefix(' '))?;
    let value = after_spaces.strip_prefix('-')?;
    if !(value.is_empty() || value.starts_with(' ') || value.starts_with('\t')) {
        return None;
    }
    Some((&line[..2], value.trim()))
}

/// An entry's lines, before they are mapped.
struct RawEntry<'a> {
    line: usize,
    item_type: Option<&'a str>,
    fields: Vec<(&'a str, String)>,
}

impl<'a> RawEntry<'a> {
    fn new(line: usize, item_type: Option<&'a str>) -> Self {
        RawEntry { line, item_type, fields: Vec::new() }
    }

    fn unfinished(self, next_entry_line: Option<usize>) -> Result<Map<String, Value>, RisError> {
        match self.item_type {
            Some(ty) if !ty.is_empty() => Err(RisError::MissingEnd { line: self.line, next_entry_line }),
            _ => Err(RisError::MissingType { line: self.line }),
        }
    }

    fn finish(self) -> Result<Map<String, Value>, RisError> {
        match self.item_type {
            Some(ty) if !ty.is_empty() => Ok(Fields { fields: &self.fields }.into_item(item_type(ty))),
            _ => Err(RisError::MissingType { line: self.line }),
        }
    }
}

/// The Zotero item type of an RIS type.
fn item_type(ty: &str) -> &'static str {
    match ty.to_ascii_uppercase().as_str() {
        "JOUR" | "EJOUR" | "JFULL" | "INPR" => "journalArticle",
        "BOOK" | "EBOOK" | "EDBOOK" => "book",
        "CHAP" | "ECHAP" => "bookSection",
        "CONF" | "CPAPER" => "conferencePaper",
        "THES" => "thesis",
        "RPRT" => "report",
        "ELEC" | "WEB" => "webpage",
        "NEWS" => "newspaperArticle",
        "MGZN" => "magazineArticle",
        "DATA" => "dataset",
        "UNPB" => "manuscript",
        "PAT" => "patent",
        _ => "document",
    }
}

/// An entry's fields, looked up by tag.
struct Fields<'e, 'a> {
    fields: &'e [(&'a str, String)],
}

impl Fields<'_, '_> {
    /// Every non-empty value of these tags, in the order of the lines.
    fn all(&self, tags: &[&str]) -> Vec<&str> {
        self.fields
            .iter()
            .filter(|(tag, value)| tags.contains(tag) && !value.is_empty())
            .map(|(_, value)| value.as_str())
            .collect()
    }

    /// The first non-empty value of the first of these tags that has one.
    fn first(&self, tags: &[&str]) -> Option<&str> {
        tags.iter().find_map(|tag| self.all(std::slice::from_ref(tag)).first().copied())
    }

    fn into_item(self, item_type: &'static str) -> Map<String, Value> {
        use ItemKind::*;
        let kind = ItemKind::of(item_type);
        let mut item = Map::new();
        let mut extra: Vec<String> = Vec::new();
        let put = |item: &mut Map<String, Value>, field: &str, value: Option<&str>| {
            if let Some(value) = value {
                item.insert(field.to_owned(), Value::String(value.to_owned()));
            }
        };
        item.insert("itemType".to_owned(), Value::String(item_type.to_owned()));

        let title = self.first(&["TI", "T1"]).or_else(|| (kind == Book).then(|| self.first(&["BT"])).flatten());
        put(&mut item, "title", title);

        let creators = self.creators(kind);
        item.insert("creators".to_owned(), Value::Array(creators));

        put(&mut item, "abstractNote", self.first(&["AB", "N2"]));

        // The container: JOUR names the journal in T2, JF or JO; a book's T2 is its series.
        match kind {
            Journal | Periodical => {
                let publication = self.first(&["T2", "JF", "JO"]);
                put(&mut item, "publicationTitle", publication);
                if kind == Journal {
                    let abbreviation =
                        self.first(&["J2", "JA"]).or_else(|| self.first(&["JO"]).filter(|jo| Some(*jo) != publication));
                    put(&mut item, "journalAbbreviation", abbreviation);
                }
            }
            Section => put(&mut item, "bookTitle", self.first(&["T2", "BT"])),
            Conference => put(&mut item, "proceedingsTitle", self.first(&["T2", "BT"])),
            Webpage => put(&mut item, "websiteTitle", self.first(&["T2"])),
            _ => {}
        }
        match kind {
            Book => put(&mut item, "series", self.first(&["T3", "T2"])),
            Section | Conference => put(&mut item, "series", self.first(&["T3"])),
            _ => {}
        }
        if matches!(kind, Book | Section) {
            put(&mut item, "edition", self.first(&["ET"]));
        }
        if matches!(kind, Journal | Book | Section | Conference) || item_type == "magazineArticle" {
            put(&mut item, "volume", self.first(&["VL"]));
        }
        if kind == Journal || item_type == "magazineArticle" {
            put(&mut item, "issue", self.first(&["IS"]));
        }

        let start = self.first(&["SP"]);
        let end = self.first(&["EP"]);
        if matches!(kind, Book) || matches!(item_type, "thesis" | "manuscript") {
            put(&mut item, "numPages", start.filter(|_| end.is_none()));
        } else if item_type != "webpage" && item_type != "dataset" && item_type != "document" {
            let pages = match (start, end) {
                (Some(start), Some(end)) if start != end => Some(format!("{start}-{end}")),
                (Some(page), _) | (None, Some(page)) => Some(page.to_owned()),
                (None, None) => None,
            };
            put(&mut item, "pages", pages.as_deref());
        }

        let date_field = if item_type == "patent" { "issueDate" } else { "date" };
        put(&mut item, date_field, self.date().as_deref());

        let serial = self.all(&["SN"]).join(" ");
        let serial = (!serial.is_empty()).then_some(serial.as_str());
        match kind {
            Book | Section | Conference => put(&mut item, "ISBN", serial),
            Journal | Periodical => put(&mut item, "ISSN", serial),
            _ if item_type == "report" => put(&mut item, "reportNumber", serial),
            _ => {}
        }

        if let Some(doi) = self.first(&["DO"]).map(strip_doi).filter(|doi| !doi.is_empty()) {
            if crate::zotero::schema::has_field(item_type, "DOI") {
                put(&mut item, "DOI", Some(doi));
            } else {
                extra.push(format!("DOI: {doi}"));
            }
        }

        put(&mut item, "url", self.first(&["UR"]));
        put(&mut item, "language", self.first(&["LA"]));
        let publisher_field = match item_type {
            "book" | "bookSection" | "conferencePaper" | "document" => Some("publisher"),
            "report" => Some("institution"),
            "thesis" => Some("university"),
            "dataset" => Some("repository"),
            _ => None,
        };
        if let Some(field) = publisher_field {
            put(&mut item, field, self.first(&["PB"]));
        }
        let has_place = matches!(
            item_type,
            "book"
                | "bookSection"
                | "conferencePaper"
                | "report"
                | "thesis"
                | "newspaperArticle"
                | "manuscript"
                | "patent"
        );
        if has_place {
            put(&mut item, "place", self.first(&["CY"]));
        }
        put(&mut item, "shortTitle", self.first(&["ST"]));

        let mut tags: Vec<&str> = Vec::new();
        for keyword in self.all(&["KW"]) {
            if !tags.contains(&keyword) {
                tags.push(keyword);
            }
        }
        item.insert("tags".to_owned(), tags.into_iter().map(|tag| json!({ "tag": tag })).collect());

        extra.extend(self.all(&["N1"]).into_iter().map(str::to_owned));
        if !extra.is_empty() {
            item.insert("extra".to_owned(), Value::String(extra.join("\n")));
        }
        item
    }

    /// AU/A1 authors, A2/ED editors, A3 series editors, in that order, as the type allows them.
    fn creators(&self, kind: ItemKind) -> Vec<Value> {
        use ItemKind::*;
        let author = if kind == Patent { "inventor" } else { "author" };
        let editor =
            if matches!(kind, Journal | Book | Section | Conference | Document) { "editor" } else { "contributor" };
        let series_editor = if matches!(kind, Book | Section | Conference) { "seriesEditor" } else { "contributor" };
        let roles: [(&[&str], &str); 3] = [(&["AU", "A1"], author), (&["A2", "ED"], editor), (&["A3"], series_editor)];
        let mut creators = Vec::new();
        for (tags, role) in roles {
            creators.extend(self.all(tags).into_iter().filter_map(|name| creator(name, role)));
        }
        creators
    }

    /// `DA` when it is as specific as `PY`/`Y1` and agrees on the year, else `PY`/`Y1`, else `DA`.
    fn date(&self) -> Option<String> {
        let year_date = self.first(&["PY", "Y1"]).map(normalise_date);
        let full_date = self.first(&["DA"]).map(normalise_date);
        match (year_date, full_date) {
            (Some(year), Some(full)) if full.starts_with(&year) => Some(full),
            (Some(year), _) => Some(year),
            (None, full) => full,
        }
        .filter(|date| !date.is_empty())
    }
}

/// The groups of Zotero item types the mapping tells apart.
#[derive(Clone, Copy, PartialEq, Eq)]
enum ItemKind {
    Journal,
    /// Magazine and newspaper articles.
    Periodical,
    Book,
    Section,
    Conference,
    Webpage,
    Patent,
    Document,
    Other,
}

impl ItemKind {
    fn of(item_type: &str) -> Self {
        match item_type {
            "journalArticle" => ItemKind::Journal,
            "magazineArticle" | "newspaperArticle" => ItemKind::Periodical,
            "book" => ItemKind::Book,
            "bookSection" => ItemKind::Section,
            "conferencePaper" => ItemKind::Conference,
            "webpage" => ItemKind::Webpage,
            "patent" => ItemKind::Patent,
            "document" => ItemKind::Document,
            _ => ItemKind::Other,
        }
    }
}

/// `Last, First` → last and first name; `First Last` → split at the last space; one word → `{name}`.
fn creator(name: &str, role: &str) -> Option<Value> {
    let name = name.trim();
    if name.is_empty() {
        return None;
    }
    let (last, first) = match name.split_once(',') {
        Some((last, first)) => (last.trim(), first.trim()),
        None => match name.rsplit_once(' ') {
            Some((first, last)) => (last.trim(), first.trim()),
            None => (name, ""),
        },
    };
    Some(if first.is_empty() || last.is_empty() {
        json!({ "creatorType": role, "name": if last.is_empty() { first } else { last } })
    } else {
        json!({ "creatorType": role, "firstName": first, "lastName": last })
    })
}

/// RIS dates, `YYYY/MM/DD/other` with any part empty, as Zotero writes them: `2020/05/17/` → `2020-05-17`,
/// `2020/05//` → `2020-05`, `2020///Spring` → `Spring 2020`; anything else is kept as given.
fn normalise_date(value: &str) -> String {
    let value = value.trim();
    let mut parts = value.splitn(4, '/');
    let year = parts.next().unwrap_or_default().trim();
    let month = parts.next().unwrap_or_default().trim();
    let day = parts.next().unwrap_or_default().trim();
    let other = parts.next().unwrap_or_default().trim().trim_end_matches('/').trim();
    let numeric = |part: &str, max: u32| part.is_empty() || part.parse::<u32>().is_ok_and(|n| (1..=max).contains(&n));
    let is_year = year.len() == 4 && year.bytes().all(|byte| byte.is_ascii_digit());
    if !is_year || !numeric(month, 12) || !numeric(day, 31) || (month.is_empty() && !day.is_empty()) {
        return value.to_owned();
    }
    let mut date = year.to_owned();
    for part in [month, day] {
        if !part.is_empty() {
            date.push_str(&format!("-{part:0>2}"));
        }
    }
    if !other.is_empty() && month.is_empty() {
        date = format!("{other} {date}");
    }
    date
}

/// A DOI without the resolver or `doi:` prefix it was written with.
fn strip_doi(value: &str) -> &str {
    let value = value.trim();
    let lower = value.to_ascii_lowercase();
    for prefix in
        ["https://doi.org/", "http://doi.org/", "https://dx.doi.org/", "http://dx.doi.org/", "doi.org/", "doi:"]
    {
        if lower.starts_with(prefix) {
            return value[prefix.len()..].trim();
        }
    }
    value
}
