//! Zotero items into a bibliography file: BibTeX, BibLaTeX, CSL-JSON or RIS, for the feeds LaTeX (Overleaf,
//! latexmk), Pandoc and Quarto read. No I/O: [`write`] takes the items and their citation keys and returns the
//! whole file, one growing buffer, entries in the order given, so a library of 50,000 items costs time linear
//! in its size and the same items always give the same bytes.
//!
//! The mapping is the reverse of the importers' ([`crate::sources::bibtex`], [`crate::sources::ris`]), and
//! follows Zotero's own export translators for which item type becomes which entry type; each format's module
//! documents its choices. What this writes, those importers read back to the same title, creators, year, DOI.
//!
//! # Citation keys
//!
//! [`citation_keys`] gives every item one key, stable as the library changes:
//!
//! 1. Zotero's own `citationKey` field, when it is not empty;
//! 2. else a key pinned in `extra` the way Better BibTeX does: a line `Citation Key: <key>` (the label in any
//!    case), or the older `bibtex: <key>`;
//! 3. else a generated key: the first creator's last name (the first author, else the first editor, else the
//!    first creator; of a one-field name its first word), then the four-digit year of `date`, then the first
//!    word of the title that is not a stop word (`a`, `an`, `the`, `of`, `on`, …). Each part is folded to ASCII
//!    lower-case letters and digits (é → e, ß → ss, ø → o; anything without an ASCII form is dropped), so
//!    `Müller, 2020, "The Deep Net"` gives `muller2020deep`. No creator (or a name with no letter that folds)
//!    gives `anon`; no year, nothing; when
//!    there is no creator, no year and no title word, the key is the item's Zotero key in lower case.
//!
//! A key the user chose (1, 2) keeps the characters BibTeX accepts in a key: white space, control characters
//! and `, { } ( ) # % " ' = \ ~` are dropped (a key left empty is generated instead).
//!
//! Keys must be unique, and BibTeX compares them ignoring case. Items whose keys collide form a group; one of
//! them keeps the key as it is: a chosen key before a generated one, then the item added first (`dateAdded`),
//! then the smaller Zotero key. Every other item of the group gets `_` and its Zotero key in lower case
//! (`smith2020deep_abcd2345`). A suffix that depends only on the item itself means adding, changing or removing
//! an item changes no other item's key, unless that item's key collides with theirs; and a generated key (only
//! letters and digits) never equals a suffixed one.

mod bibtex;
mod csl;
mod keys;
mod ris;
#[cfg(test)]
mod tests;

use serde_json::Value;

use crate::zotero::{year_of, ZoteroObject};

pub use self::keys::citation_keys;

/// A bibliography file format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// BibTeX, for `bibtex` and natbib styles: 7-bit LaTeX, accents as commands.
    BibTex,
    /// BibLaTeX, for biber: UTF-8, BibLaTeX's entry types and fields.
    BibLaTex,
    /// CSL-JSON, for Pandoc, Quarto and every CSL processor.
    CslJson,
    /// RIS, for reference managers.
    Ris,
}

impl Format {
    /// The format a name asks for: `bibtex`, `biblatex`, `csljson` (or `csl-json`), `ris`, in any case.
    pub fn parse(name: &str) -> Option<Format> {
        match name.trim().to_ascii_lowercase().as_str() {
            "bibtex" => Some(Format::BibTex),
            "biblatex" => Some(Format::BibLaTex),
            "csljson" | "csl-json" => Some(Format::CslJson),
            "ris" => Some(Format::Ris),
            _ => None,
        }
    }

    /// The format's name, as [`Format::parse`] reads it.
    pub fn as_str(self) -> &'static str {
        match self {
            Format::BibTex => "bibtex",
            Format::BibLaTex => "biblatex",
            Format::CslJson => "csljson",
            Format::Ris => "ris",
        }
    }

    /// The file name extension, without the dot.
    pub fn extension(self) -> &'static str {
        match self {
            Format::BibTex | Format::BibLaTex => "bib",
            Format::CslJson => "json",
            Format::Ris => "ris",
        }
    }

    /// The `Content-Type` of a file in this format.
    pub fn content_type(self) -> &'static str {
        match self {
            Format::BibTex | Format::BibLaTex => "application/x-bibtex; charset=utf-8",
            Format::CslJson => "application/vnd.citationstyles.csl+json; charset=utf-8",
            Format::Ris => "application/x-research-info-systems; charset=utf-8",
        }
    }
}

/// Whether an item belongs in a bibliography: a regular item, not a note, an attachment or an annotation (an
/// item without a type is not one either). Trashed items are the caller's to drop.
pub fn is_citable(item: &ZoteroObject) -> bool {
    item.item_type().is_some_and(|item_type| !matches!(item_type, "note" | "attachment" | "annotation"))
}

/// A whole bibliography of `items` in `format`, each under the key at the same position of `keys` (from
/// [`citation_keys`]); an item without one is written under its Zotero key. Every item given is written, in
/// order: leave out what [`is_citable`] refuses first.
pub fn write(format: Format, items: &[ZoteroObject], keys: &[String]) -> String {
    let mut writer = Writer::new(format);
    writer.page(items, keys);
    writer.finish()
}

/// A bibliography written a page of items at a time, so a library read in pages (from the mirror) is never held
/// whole: the file grows page by page, and CSL-JSON's one array is opened by the first entry and closed by
/// [`Writer::finish`].
pub struct Writer {
    format: Format,
    out: String,
    /// CSL-JSON entries written so far (whether the array is open).
    written: usize,
}

impl Writer {
    pub fn new(format: Format) -> Self {
        Self { format, out: String::new(), written: 0 }
    }

    /// Writes `items` as [`write`] does.
    pub fn page(&mut self, items: &[ZoteroObject], keys: &[String]) {
        // About 600 bytes an entry, so the buffer rarely grows more than a few times.
        self.out.reserve(items.len().saturating_mul(600));
        for (index, item) in items.iter().enumerate() {
            let key = keys.get(index).map_or(item.key.as_str(), String::as_str);
            let entry = Entry { item, key };
            match self.format {
                Format::BibTex => bibtex::write_entry(&mut self.out, &entry, bibtex::Dialect::BibTex),
                Format::BibLaTex => bibtex::write_entry(&mut self.out, &entry, bibtex::Dialect::BibLaTex),
                Format::CslJson => {
                    let before = self.out.len();
                    csl::write_entry(&mut self.out, &entry, self.written == 0);
                    self.written += usize::from(self.out.len() > before);
                }
                Format::Ris => ris::write_entry(&mut self.out, &entry),
            }
        }
    }

    /// The whole file.
    pub fn finish(mut self) -> String {
        if self.format == Format::CslJson {
            self.out.push_str(if self.written == 0 { "[]\n" } else { "\n]\n" });
        }
        self.out
    }
}

/// One item being written, with its key.
struct Entry<'a> {
    item: &'a ZoteroObject,
    key: &'a str,
}

/// A creator's name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Name<'a> {
    /// A person: family name (with any particle) and given name, either possibly empty.
    Person { last: &'a str, first: &'a str },
    /// A name in one field: an organisation, a pseudonym.
    Literal(&'a str),
}

/// A date as far as it is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Date {
    year: u16,
    month: Option<u8>,
    day: Option<u8>,
}

/// Zotero's item type names of the fields that play one role across types.
mod roles {
    /// The work's own title.
    pub(super) const TITLE: &[&str] = &["title", "caseName", "subject", "nameOfAct"];
    /// What the work appeared in.
    pub(super) const CONTAINER: &[&str] = &[
        "publicationTitle",
        "bookTitle",
        "proceedingsTitle",
        "websiteTitle",
        "blogTitle",
        "forumTitle",
        "encyclopediaTitle",
        "dictionaryTitle",
        "programTitle",
    ];
    /// Who published it.
    pub(super) const PUBLISHER: &[&str] = &[
        "publisher",
        "university",
        "institution",
        "repository",
        "company",
        "label",
        "distributor",
        "studio",
        "network",
    ];
    /// Its number in a numbered series of documents.
    pub(super) const NUMBER: &[&str] =
        &["number", "reportNumber", "patentNumber", "billNumber", "docketNumber", "publicLawNumber", "episodeNumber"];
    /// What kind of document it is, in words.
    pub(super) const GENRE: &[&str] = &[
        "thesisType",
        "reportType",
        "manuscriptType",
        "websiteType",
        "letterType",
        "presentationType",
        "postType",
        "mapType",
        "type",
    ];
    /// The series it belongs to.
    pub(super) const SERIES: &[&str] = &["series", "seriesTitle"];
    /// Its date.
    pub(super) const DATE: &[&str] = &["date", "issueDate", "dateDecided", "dateEnacted"];
}

impl<'a> Entry<'a> {
    fn item_type(&self) -> &'a str {
        self.item.item_type().unwrap_or("document")
    }

    /// A string field, trimmed, when it has text.
    fn field(&self, name: &str) -> Option<&'a str> {
        self.item.field(name).map(str::trim).filter(|value| !value.is_empty())
    }

    /// The first of these fields that has text.
    fn first(&self, names: &[&str]) -> Option<&'a str> {
        names.iter().find_map(|name| self.field(name))
    }

    fn title(&self) -> Option<&'a str> {
        self.first(roles::TITLE)
    }

    /// The creators in their order, each with its role.
    fn creators(&self) -> impl Iterator<Item = (&'a str, Name<'a>)> + 'a {
        let list = self.item.data.get("creators").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
        list.iter().filter_map(creator)
    }

    /// The creators in one role.
    fn creators_as(&self, role: &'a str) -> impl Iterator<Item = Name<'a>> + 'a {
        self.creators().filter(move |(this, _)| *this == role).map(|(_, name)| name)
    }

    /// The item type's primary creator role (`author`, `inventor`, `programmer`, `artist`, …).
    fn primary_role(&self) -> &'static str {
        crate::zotero::schema::creator_types(self.item_type()).first().copied().unwrap_or("author")
    }

    /// The work's date: Zotero's own reading of it (`meta.parsedDate`) when the API sent one, else the date
    /// field read as `YYYY-MM-DD` (or with `/`), else its year and an English month name in it.
    fn date(&self) -> Option<Date> {
        let parsed = self.item.meta.get("parsedDate").and_then(Value::as_str).and_then(parse_iso_date);
        parsed.or_else(|| self.first(roles::DATE).and_then(read_date))
    }

    /// The day the URL was last seen (`accessDate`, `2020-05-17` or `2020-05-17T10:00:00Z`).
    fn access_date(&self) -> Option<Date> {
        let text = self.field("accessDate")?;
        parse_iso_date(text.get(..10).unwrap_or(text))
    }

    /// The tags, in order.
    fn tags(&self) -> impl Iterator<Item = &'a str> + 'a {
        let list = self.item.data.get("tags").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
        list.iter()
            .filter_map(|tag| tag.get("tag").and_then(Value::as_str))
            .map(str::trim)
            .filter(|tag| !tag.is_empty())
    }

    /// The arXiv id: from `archiveID` (`arXiv:2101.00001`), a DOI `10.48550/arXiv.2101.00001`, or an
    /// `arXiv: 2101.00001` line of `extra` (as the BibTeX import writes for a type without `archiveID`).
    fn arxiv_id(&self) -> Option<&'a str> {
        let strip = |text: &'a str, prefix: &str| {
            text.get(..prefix.len())
                .filter(|head| head.eq_ignore_ascii_case(prefix))
                .map(|_| text[prefix.len()..].trim())
                .filter(|id| !id.is_empty())
        };
        self.field("archiveID")
            .and_then(|id| strip(id, "arxiv:"))
            .or_else(|| self.field("DOI").and_then(|doi| strip(doi, "10.48550/arxiv.")))
            .or_else(|| {
                self.field("extra").and_then(|extra| extra.lines().find_map(|line| strip(line.trim(), "arxiv:")))
            })
    }

    /// The page range split at its dash (`-`, `–` or `—`): the first page and, for a range, the last.
    fn page_range(&self) -> Option<(&'a str, Option<&'a str>)> {
        let pages = self.field("pages")?;
        let Some(at) = pages.find(['-', '–', '—']) else {
            return Some((pages, None));
        };
        let first = pages[..at].trim();
        let last = pages[at..].trim_start_matches(['-', '–', '—']).trim();
        let simple = |part: &str| !part.is_empty() && !part.contains([',', '-', '–', '—', ' '].as_slice());
        if simple(first) && simple(last) {
            Some((first, Some(last)))
        } else {
            Some((pages, None))
        }
    }
}

/// One creator of `data.creators`: `{creatorType, firstName, lastName}` or `{creatorType, name}`.
fn creator(value: &Value) -> Option<(&str, Name<'_>)> {
    let text = |key: &str| value.get(key).and_then(Value::as_str).map(str::trim).unwrap_or_default();
    let role = value.get("creatorType").and_then(Value::as_str).unwrap_or("author");
    let (name, first, last) = (text("name"), text("firstName"), text("lastName"));
    let name = if !last.is_empty() || !first.is_empty() {
        Name::Person { last, first }
    } else if !name.is_empty() {
        Name::Literal(name)
    } else {
        return None;
    };
    Some((role, name))
}

/// `YYYY`, `YYYY-MM` or `YYYY-MM-DD` (a month or day `00` counts as unknown); `None` for anything else.
fn parse_iso_date(text: &str) -> Option<Date> {
    let text = text.trim();
    let mut parts = text.split(['-', '/']);
    let year = parts.next().filter(|year| year.len() == 4 && year.bytes().all(|b| b.is_ascii_digit()))?;
    let number = |part: Option<&str>, max: u8| -> Result<Option<u8>, ()> {
        match part {
            None => Ok(None),
            Some(part) if part.is_empty() || part.len() > 2 || !part.bytes().all(|b| b.is_ascii_digit()) => Err(()),
            Some(part) => match part.parse::<u8>() {
                Ok(0) => Ok(None),
                Ok(value) if value <= max => Ok(Some(value)),
                _ => Err(()),
            },
        }
    };
    let month = number(parts.next(), 12).ok()?;
    let day = number(parts.next(), 31).ok()?;
    if parts.next().is_some() {
        return None;
    }
    Some(Date { year: year.parse().ok()?, month, day: month.and(day) })
}

/// A date as a person typed it: ISO, else its year and the first English month name in it (`May 2020`,
/// `17 May 2020`, `May 17, 2020` give 2020 and 5; the day only from ISO, where it cannot be mistaken).
fn read_date(text: &str) -> Option<Date> {
    if let Some(date) = parse_iso_date(text) {
        return Some(date);
    }
    let year = year_of(text)?;
    let month = text.split(|c: char| !c.is_ascii_alphabetic()).find_map(|word| {
        let word = word.to_ascii_lowercase();
        let named = |name: &&str| {
            *name == word || (word.len() == 3 && name.starts_with(&word)) || word == "sept" && *name == "september"
        };
        crate::calendar::MONTH_NAMES.iter().position(named).and_then(|index| u8::try_from(index + 1).ok())
    });
    Some(Date { year, month, day: None })
}

/// Zotero's rich-text title markup dropped, the text inside kept (`<i>E. coli</i>` → `E. coli`).
fn strip_markup(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('<') {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        match markup_tag(tail) {
            Some((_, len)) => rest = &tail[len..],
            None => {
                out.push('<');
                rest = &tail[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// A tag of Zotero's rich-text markup at the start of `text`: what it is and its length in bytes.
fn markup_tag(text: &str) -> Option<(Markup, usize)> {
    const TAGS: [(&str, Markup); 10] = [
        ("<i>", Markup::Open(Style::Italic)),
        ("</i>", Markup::Close(Style::Italic)),
        ("<b>", Markup::Open(Style::Bold)),
        ("</b>", Markup::Close(Style::Bold)),
        ("<sup>", Markup::Open(Style::Superscript)),
        ("</sup>", Markup::Close(Style::Superscript)),
        ("<sub>", Markup::Open(Style::Subscript)),
        ("</sub>", Markup::Close(Style::Subscript)),
        ("<span class=\"nocase\">", Markup::Open(Style::NoCase)),
        ("</span>", Markup::Close(Style::NoCase)),
    ];
    TAGS.iter().find(|(tag, _)| text.starts_with(tag)).map(|(tag, markup)| (*markup, tag.len()))
}

/// A tag of Zotero's rich-text markup.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Markup {
    Open(Style),
    Close(Style),
}

/// What a rich-text tag does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Style {
    Italic,
    Bold,
    Superscript,
    Subscript,
    /// Keep the case as written (a proper name in a title a style would lower-case).
    NoCase,
}

/// Runs of white space (line breaks too) made one space, control characters dropped, the ends trimmed.
fn one_line(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for word in text.split(char::is_whitespace).filter(|word| !word.is_empty()) {
        if !out.is_empty() {
            out.push(' ');
        }
        out.extend(word.chars().filter(|c| !c.is_control()));
    }
    out
}
