//! RIS records: `XX  - value` lines ending in CRLF, the line end of the RIS specification, which EndNote and
//! older readers expect and every newer one (Zotero, rispy, this crate's importer) accepts. A value is one line:
//! line breaks inside it (an abstract's paragraphs) become spaces, and titles lose Zotero's rich-text markup.
//!
//! | Zotero | `TY` |
//! |---|---|
//! | journal, magazine, newspaper article | JOUR, MGZN, NEWS |
//! | book, book section, conference paper | BOOK, CHAP, CPAPER |
//! | thesis, report, manuscript, preprint | THES, RPRT, UNPB, UNPB (RIS has no preprint type; "unpublished work" is the nearest) |
//! | web page, blog post, patent, software, dataset | ELEC, BLOG, PAT, COMP, DATA |
//! | encyclopedia article, dictionary entry, film, video, audio, map, artwork, case, bill, statute, hearing, letter, email, standard | ENCYC, DICT, MPCT, VIDEO, SOUND, MAP, ART, CASE, BILL, STAT, HEAR, PCOMM, ICOMM, STAND |
//! | anything else | GEN |
//!
//! Tags, in this order: `TY`, `ID` (the citation key), `AU` (the type's primary creators), `A2` (editors), `A3`
//! (series editors), `TI`, `T2` (journal, book, proceedings, web site …), `J2` (journal abbreviation), `T3`
//! (series), `PY` (`2020`), `DA` (`2020/05/17/`, `2020/05//`; only when the month is known), `VL`, `IS`, `SP`
//! and `EP` (a range split at its dash; a book's, thesis' or manuscript's page count as `SP`), `ET`, `PB`, `CY`,
//! `SN` (ISBN, else ISSN, else a report's number), `M3` (thesis or report type), `DO`, `UR`, `Y2` (accessed),
//! `AB`, `KW` (a tag each), `LA`, `ER`. Names are `Last, First`; a name in one field keeps a trailing comma
//! (`World Health Organization,`), as EndNote writes one, so a reader does not split it into given and family
//! names.

use super::{one_line, roles, strip_markup, Date, Entry, Name};

/// Appends one record and the blank line after it.
pub(super) fn write_entry(out: &mut String, entry: &Entry<'_>) {
    let item_type = entry.item_type();
    let mut lines = Lines { out };
    lines.line("TY", Some(ris_type(item_type)));
    lines.line("ID", Some(entry.key));
    lines.names("AU", entry.creators_as(entry.primary_role()));
    lines.names("A2", entry.creators_as("editor"));
    lines.names("A3", entry.creators_as("seriesEditor"));
    lines.line("TI", entry.title().map(strip_markup).as_deref());
    lines.line("T2", entry.first(roles::CONTAINER).map(strip_markup).as_deref());
    lines.line("J2", entry.field("journalAbbreviation"));
    lines.line("T3", entry.first(roles::SERIES));

    let date = entry.date();
    lines.line("PY", date.map(|date| format!("{:04}", date.year)).as_deref());
    lines.line("DA", date.filter(|date| date.month.is_some()).map(ris_date).as_deref());

    lines.line("VL", entry.field("volume"));
    lines.line("IS", entry.field("issue"));
    match entry.page_range() {
        Some((first, last)) => {
            lines.line("SP", Some(first));
            lines.line("EP", last);
        }
        None if matches!(item_type, "book" | "thesis" | "manuscript") => lines.line("SP", entry.field("numPages")),
        None => {}
    }
    lines.line("ET", entry.field("edition"));
    lines.line("PB", entry.first(roles::PUBLISHER));
    lines.line("CY", entry.field("place"));
    lines.line("SN", entry.first(&["ISBN", "ISSN", "reportNumber"]));
    lines.line("M3", entry.first(&["thesisType", "reportType"]));
    lines.line("DO", entry.field("DOI"));
    lines.line("UR", entry.field("url"));
    lines.line("Y2", entry.access_date().map(ris_date).as_deref());
    lines.line("AB", entry.field("abstractNote"));
    for tag in entry.tags() {
        lines.line("KW", Some(tag));
    }
    lines.line("LA", entry.field("language"));
    lines.out.push_str("ER  - \r\n\r\n");
}

/// The RIS type of a Zotero item type (the table in the module's documentation).
fn ris_type(item_type: &str) -> &'static str {
    match item_type {
        "journalArticle" => "JOUR",
        "magazineArticle" => "MGZN",
        "newspaperArticle" => "NEWS",
        "book" => "BOOK",
        "bookSection" => "CHAP",
        "conferencePaper" => "CPAPER",
        "thesis" => "THES",
        "report" => "RPRT",
        "manuscript" | "preprint" => "UNPB",
        "webpage" => "ELEC",
        "blogPost" => "BLOG",
        "patent" => "PAT",
        "computerProgram" => "COMP",
        "dataset" => "DATA",
        "encyclopediaArticle" => "ENCYC",
        "dictionaryEntry" => "DICT",
        "film" => "MPCT",
        "videoRecording" => "VIDEO",
        "audioRecording" => "SOUND",
        "map" => "MAP",
        "artwork" => "ART",
        "case" => "CASE",
        "bill" => "BILL",
        "statute" => "STAT",
        "hearing" => "HEAR",
        "letter" => "PCOMM",
        "email" => "ICOMM",
        "standard" => "STAND",
        _ => "GEN",
    }
}

/// `2020/05/17/` or `2020/05//`.
fn ris_date(date: Date) -> String {
    match (date.month, date.day) {
        (Some(month), Some(day)) => format!("{:04}/{month:02}/{day:02}/", date.year),
        (Some(month), None) => format!("{:04}/{month:02}//", date.year),
        _ => format!("{:04}///", date.year),
    }
}

struct Lines<'o> {
    out: &'o mut String,
}

impl Lines<'_> {
    /// `XX  - value` and CRLF, when the value has text.
    fn line(&mut self, tag: &str, value: Option<&str>) {
        let Some(value) = value.map(one_line).filter(|value| !value.is_empty()) else {
            return;
        };
        self.out.push_str(tag);
        self.out.push_str("  - ");
        self.out.push_str(&value);
        self.out.push_str("\r\n");
    }

    fn names<'a>(&mut self, tag: &str, names: impl Iterator<Item = Name<'a>>) {
        for name in names {
            let written = match name {
                Name::Person { last, first } if !last.is_empty() && !first.is_empty() => format!("{last}, {first}"),
                Name::Person { last, first } => format!("{},", if last.is_empty() { first } else { last }),
                Name::Literal(literal) => format!("{literal},"),
            };
            self.line(tag, Some(&written));
        }
    }
}
