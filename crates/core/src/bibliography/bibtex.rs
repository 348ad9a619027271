//! BibTeX and BibLaTeX entries. Zotero's export translators decide the entry types; the fields are the reverse
//! of the BibTeX importer's table ([`crate::sources::bibtex`]), in a fixed order, and a field without text is
//! left out. Escaping is [`escape`]'s.
//!
//! | Zotero | BibTeX | BibLaTeX |
//! |---|---|---|
//! | journal, magazine, newspaper article | article | article (`entrysubtype` magazine, newspaper) |
//! | book; book section | book; incollection | book; incollection |
//! | conference paper | inproceedings | inproceedings |
//! | thesis | mastersthesis when `thesisType` says master (MA, MSc, …), else phdthesis | thesis, `type` phdthesis / mathesis or as written |
//! | report | techreport | report |
//! | manuscript | unpublished | unpublished |
//! | web page, blog post, forum post; preprint | misc | online (a preprint with its e-print) |
//! | patent; software; dataset; letter | misc | patent; software; dataset; letter |
//! | encyclopedia article, dictionary entry | misc | inreference |
//! | anything else | misc | misc |
//!
//! Fields: `author` (the type's primary creators: authors, inventors, programmers, …), `editor`, BibLaTeX
//! `translator`; `title` and `shorttitle`; `journal` (`journaltitle`) and BibLaTeX `shortjournal`; `booktitle`
//! (book, proceedings, encyclopedia or dictionary title); `howpublished` (BibLaTeX `organization`) with the web
//! site or repository of a misc (online) entry; BibLaTeX `eventtitle`; `year` and `month` (a macro, `may`), or
//! BibLaTeX `date` (`2020-05-17`, `2020-05`, `2020`); `volume`; `number` (issue, report, patent, series number);
//! `pages` (`12--34`) and BibLaTeX `pagetotal`; `edition`; `series`; `publisher`, `school` (BibLaTeX
//! `institution`) for a thesis, `institution` for a report; `address` (`location`); `type` (thesis or report
//! type); `isbn`, `issn`, `doi`; an arXiv id as `eprint` with `archiveprefix` arXiv (BibLaTeX `eprinttype`
//! arxiv); `url` and BibLaTeX `urldate`; `abstract`; `keywords` (the tags, joined with `, `); `language`, or
//! BibLaTeX `langid` for the languages babel names (`en` → english, `de` → ngerman, …; others as `language`).
//!
//! Names are `Last, First`, joined with `and`; a name in one field, or a family name without a given name, is
//! braced whole (`{World Health Organization}`) so BibTeX does not split it; a part with a comma or the word
//! `and` is braced too.

mod escape;

use self::escape::{prose, verbatim, Prose, PAGES, PLAIN, TITLE};
use super::{Date, Entry, Name};

/// Which of the two the entry is written for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Dialect {
    BibTex,
    BibLaTex,
}

/// The BibTeX month macros.
const MONTHS: [&str; 12] = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];

/// Appends one entry and the blank line after it.
pub(super) fn write_entry(out: &mut String, entry: &Entry<'_>, dialect: Dialect) {
    let item_type = entry.item_type();
    let bibtex = dialect == Dialect::BibTex;
    let ty = entry_type(entry, dialect);
    out.push('@');
    out.push_str(ty);
    out.push('{');
    out.push_str(entry.key);
    let mut fields = Fields { out, dialect };

    if !bibtex {
        let subtype = match item_type {
            "magazineArticle" => Some("magazine"),
            "newspaperArticle" => Some("newspaper"),
            _ => None,
        };
        fields.text("entrysubtype", subtype, PLAIN);
    }
    fields.names("author", entry.creators_as(entry.primary_role()));
    fields.names("editor", entry.creators_as("editor"));
    if !bibtex {
        fields.names("translator", entry.creators_as("translator"));
    }
    fields.text("title", entry.title(), TITLE);
    fields.text("shorttitle", entry.field("shortTitle"), TITLE);

    if matches!(item_type, "journalArticle" | "magazineArticle" | "newspaperArticle") {
        fields.text(if bibtex { "journal" } else { "journaltitle" }, entry.field("publicationTitle"), PLAIN);
        if !bibtex {
            fields.text("shortjournal", entry.field("journalAbbreviation"), PLAIN);
        }
    }
    let booktitle = entry.first(&["bookTitle", "proceedingsTitle", "encyclopediaTitle", "dictionaryTitle"]);
    fields.text("booktitle", booktitle, TITLE);
    if ty == "misc" || ty == "online" {
        let site = entry.first(&["websiteTitle", "blogTitle", "forumTitle", "repository"]);
        fields.text(if bibtex { "howpublished" } else { "organization" }, site, PLAIN);
    }
    if !bibtex {
        fields.text("eventtitle", entry.field("conferenceName"), PLAIN);
    }

    let date = entry.date();
    if bibtex {
        fields.text("year", date.map(|date| format!("{:04}", date.year)).as_deref(), PLAIN);
        let month = date.and_then(|date| date.month).and_then(|month| MONTHS.get(usize::from(month) - 1));
        fields.bare("month", month.copied());
    } else {
        fields.text("date", date.map(iso_date).as_deref(), PLAIN);
    }

    fields.text("volume", entry.field("volume"), PLAIN);
    let number = entry.first(&["issue", "reportNumber", "patentNumber", "seriesNumber", "number", "billNumber"]);
    fields.text("number", number, PLAIN);
    fields.text("pages", entry.field("pages").map(bibtex_pages).as_deref(), PAGES);
    if !bibtex {
        fields.text("pagetotal", entry.field("numPages"), PLAIN);
    }
    fields.text("edition", entry.field("edition"), PLAIN);
    fields.text("series", entry.first(super::roles::SERIES), PLAIN);

    match item_type {
        "thesis" => fields.text(if bibtex { "school" } else { "institution" }, entry.field("university"), PLAIN),
        "report" => fields.text("institution", entry.field("institution"), PLAIN),
        "preprint" => {}
        _ => fields.text(
            "publisher",
            entry.first(&["publisher", "company", "repository", "label", "distributor", "studio", "network"]),
            PLAIN,
        ),
    }
    fields.text(if bibtex { "address" } else { "location" }, entry.field("place"), PLAIN);
    let kind = match item_type {
        "thesis" => thesis_type(entry.field("thesisType"), dialect),
        "report" => entry.field("reportType"),
        _ => None,
    };
    fields.text("type", kind, PLAIN);

    fields.text("isbn", entry.field("ISBN"), PLAIN);
    fields.text("issn", entry.field("ISSN"), PLAIN);
    fields.verbatim("doi", entry.field("DOI"));
    if let Some(id) = entry.arxiv_id() {
        fields.verbatim("eprint", Some(id));
        if bibtex {
            fields.verbatim("archiveprefix", Some("arXiv"));
        } else {
            fields.verbatim("eprinttype", Some("arxiv"));
        }
    }
    fields.verbatim("url", entry.field("url"));
    if !bibtex {
        fields.text("urldate", entry.access_date().map(iso_date).as_deref(), PLAIN);
    }
    fields.text("abstract", entry.field("abstractNote"), PLAIN);
    let keywords = entry.tags().collect::<Vec<_>>().join(", ");
    fields.text("keywords", Some(keywords.as_str()), PLAIN);
    let language = entry.field("language");
    match language.and_then(babel_language).filter(|_| !bibtex) {
        Some(langid) => fields.text("langid", Some(langid), PLAIN),
        None => fields.text("language", language, PLAIN),
    }

    fields.out.push_str("\n}\n\n");
}

/// The entry type of an item (the table in the module's documentation).
fn entry_type(entry: &Entry<'_>, dialect: Dialect) -> &'static str {
    let bibtex = dialect == Dialect::BibTex;
    match entry.item_type() {
        "journalArticle" | "magazineArticle" | "newspaperArticle" => "article",
        "book" => "book",
        "bookSection" => "incollection",
        "conferencePaper" => "inproceedings",
        "thesis" if !bibtex => "thesis",
        "thesis" if entry.field("thesisType").is_some_and(is_masters) => "mastersthesis",
        "thesis" => "phdthesis",
        "report" if bibtex => "techreport",
        "report" => "report",
        "manuscript" => "unpublished",
        _ if bibtex => "misc",
        "webpage" | "blogPost" | "forumPost" | "preprint" => "online",
        "patent" => "patent",
        "computerProgram" => "software",
        "dataset" => "dataset",
        "letter" => "letter",
        "encyclopediaArticle" | "dictionaryEntry" => "inreference",
        _ => "misc",
    }
}

/// Whether a thesis type names a master's degree: `Master's thesis`, `MA thesis`, `MSc`, `M.Phil.`, ….
fn is_masters(thesis_type: &str) -> bool {
    let lower = thesis_type.to_lowercase();
    let first_word: String =
        lower.split_whitespace().next().unwrap_or_default().chars().filter(|c| *c != '.').collect();
    lower.contains("master")
        || ["ma", "ms", "msc", "mphil", "meng", "mres", "mba", "llm"].contains(&first_word.as_str())
}

/// The `type` of a thesis: BibLaTeX's localised keys for the two usual types, else the type as written (BibTeX
/// writes only an unusual type: its entry type already says PhD or master's).
fn thesis_type(thesis_type: Option<&str>, dialect: Dialect) -> Option<&str> {
    let thesis_type = thesis_type?;
    let lower = thesis_type.to_lowercase().replace(['.', '\''], "");
    let usual = match lower.as_str() {
        "phd thesis" | "phd dissertation" | "doctoral thesis" | "doctoral dissertation" => Some("phdthesis"),
        "masters thesis" | "master thesis" | "ma thesis" | "msc thesis" => Some("mathesis"),
        _ => None,
    };
    match (dialect, usual) {
        (Dialect::BibLaTex, Some(key)) => Some(key),
        (Dialect::BibTex, Some(_)) => None,
        (_, None) => Some(thesis_type),
    }
}

/// `2020-05-17`, `2020-05` or `2020`.
fn iso_date(date: Date) -> String {
    match (date.month, date.day) {
        (Some(month), Some(day)) => format!("{:04}-{month:02}-{day:02}", date.year),
        (Some(month), None) => format!("{:04}-{month:02}", date.year),
        _ => format!("{:04}", date.year),
    }
}

/// Pages with every dash between numbers written `--` (`12-34` → `12--34`, `1–5, 7–9` → `1--5, 7--9`).
fn bibtex_pages(pages: &str) -> String {
    let mut out = String::with_capacity(pages.len() + 2);
    let mut in_dash = false;
    for c in pages.chars() {
        if matches!(c, '-' | '–' | '—') {
            if !in_dash {
                while out.ends_with(' ') {
                    out.pop();
                }
                out.push_str("--");
            }
            in_dash = true;
        } else if !(in_dash && c == ' ') {
            in_dash = false;
            out.push(c);
        }
    }
    out
}

/// The babel name of a language Zotero records as an ISO code or an English name.
fn babel_language(language: &str) -> Option<&'static str> {
    let lower = language.trim().to_ascii_lowercase().replace('_', "-");
    Some(match lower.as_str() {
        "en" | "eng" | "english" => "english",
        "en-us" => "american",
        "en-gb" => "british",
        "en-ca" => "canadian",
        "en-au" => "australian",
        "de" | "deu" | "ger" | "german" | "de-de" => "ngerman",
        "de-at" => "naustrian",
        "de-ch" => "nswissgerman",
        "fr" | "fra" | "fre" | "french" | "fr-fr" => "french",
        "es" | "spa" | "spanish" | "es-es" => "spanish",
        "it" | "ita" | "italian" | "it-it" => "italian",
        "nl" | "nld" | "dut" | "dutch" | "nl-nl" => "dutch",
        "pt" | "por" | "portuguese" | "pt-pt" => "portuguese",
        "pt-br" => "brazilian",
        "sv" | "swe" | "swedish" => "swedish",
        "da" | "dan" | "danish" => "danish",
        "nb" | "no" | "nor" | "norwegian" => "norsk",
        "fi" | "fin" | "finnish" => "finnish",
        "pl" | "pol" | "polish" => "polish",
        "cs" | "ces" | "cze" | "czech" => "czech",
        "ru" | "rus" | "russian" => "russian",
        "el" | "ell" | "gre" | "greek" => "greek",
        "tr" | "tur" | "turkish" => "turkish",
        "hu" | "hun" | "hungarian" => "magyar",
        _ => return None,
    })
}

/// The fields of the entry being written: each `,\n  name = {value}` (the key line has no trailing comma, so
/// the last field has none either).
struct Fields<'o> {
    out: &'o mut String,
    dialect: Dialect,
}

impl Fields<'_> {
    fn start(&mut self, name: &str) {
        self.out.push_str(",\n  ");
        self.out.push_str(name);
        self.out.push_str(" = ");
    }

    fn text(&mut self, name: &str, value: Option<&str>, how: Prose) {
        let Some(value) = value.map(str::trim).filter(|value| !value.is_empty()) else {
            return;
        };
        self.start(name);
        self.out.push('{');
        prose(self.out, value, self.dialect, how);
        self.out.push('}');
    }

    fn verbatim(&mut self, name: &str, value: Option<&str>) {
        let Some(value) = value.map(str::trim).filter(|value| !value.is_empty()) else {
            return;
        };
        self.start(name);
        self.out.push('{');
        verbatim(self.out, value);
        self.out.push('}');
    }

    /// A value without braces: a month macro.
    fn bare(&mut self, name: &str, value: Option<&str>) {
        if let Some(value) = value {
            self.start(name);
            self.out.push_str(value);
        }
    }

    fn names<'a>(&mut self, name: &str, names: impl Iterator<Item = Name<'a>>) {
        let mut names = names.peekable();
        if names.peek().is_none() {
            return;
        }
        self.start(name);
        self.out.push('{');
        for (index, name) in names.enumerate() {
            if index > 0 {
                self.out.push_str(" and ");
            }
            match name {
                Name::Person { last, first } if !last.is_empty() && !first.is_empty() => {
                    self.name_part(last, false);
                    self.out.push_str(", ");
                    self.name_part(first, false);
                }
                Name::Person { last, first } => self.name_part(if last.is_empty() { first } else { last }, true),
                Name::Literal(literal) => self.name_part(literal, true),
            }
        }
        self.out.push('}');
    }

    /// One part of a name; braced when `whole`, or when a comma or the word `and` in it would split it.
    fn name_part(&mut self, part: &str, whole: bool) {
        let splits = part.contains(',') || part.split_whitespace().any(|word| word.eq_ignore_ascii_case("and"));
        let braced = whole || splits;
        if braced {
            self.out.push('{');
        }
        prose(self.out, part, self.dialect, PLAIN);
        if braced {
            self.out.push('}');
        }
    }
}
