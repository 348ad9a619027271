//! Zotero item data as the sources build it: a field is kept only when the item type has it in Zotero's
//! schema ([`crate::zotero::schema`]), so `POST /items` never refuses a record for an invalid field, and the identifiers a type has no field
//! for (a book's ISSN, a report's DOI) go into `extra` as `DOI: …` lines, which Zotero reads back as fields.

use serde_json::{json, Map, Value};

use crate::zotero::schema;

/// Identifiers worth keeping in `extra` when the type has no field for them.
const KEPT_IN_EXTRA: &[&str] = &["DOI", "ISSN", "ISBN"];

/// What a creator does, before the item type decides the Zotero creator type.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Role {
    Author,
    Editor,
}

/// A person or organisation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Name {
    Person { first: String, last: String },
    Single(String),
}

impl Name {
    /// `First Middle Last` split at the last space; one word is a single-field name.
    pub fn split(full: &str) -> Option<Name> {
        let full = full.split_whitespace().collect::<Vec<_>>().join(" ");
        match full.rsplit_once(' ') {
            Some((first, last)) => Some(Name::Person { first: first.to_owned(), last: last.to_owned() }),
            None if full.is_empty() => None,
            None => Some(Name::Single(full)),
        }
    }

    /// Given and family names as a source gives them; a family name alone keeps an empty first name.
    pub fn parts(given: Option<&str>, family: Option<&str>) -> Option<Name> {
        let given = given.map(str::trim).unwrap_or_default();
        let family = family.map(str::trim).unwrap_or_default();
        match (given.is_empty(), family.is_empty()) {
            (_, false) => Some(Name::Person { first: given.to_owned(), last: family.to_owned() }),
            (false, true) => Some(Name::Single(given.to_owned())),
            (true, true) => None,
        }
    }
}

pub(super) struct Item {
    item_type: &'static str,
    fields: Map<String, Value>,
    creators: Vec<Value>,
    extra: Vec<String>,
}

impl Item {
    pub fn new(item_type: &'static str) -> Self {
        Item { item_type, fields: Map::new(), creators: Vec::new(), extra: Vec::new() }
    }

    pub fn item_type(&self) -> &'static str {
        self.item_type
    }

    pub fn has(&self, field: &str) -> bool {
        schema::has_field(self.item_type, field)
    }

    /// Sets a field the type has, trimmed; an empty value is no value. A DOI, ISSN or ISBN the type has no field
    /// for becomes an `extra` line; any other field the type lacks is dropped.
    pub fn set(&mut self, field: &str, value: Option<impl AsRef<str>>) {
        let Some(value) = value else { return };
        let value = value.as_ref().trim();
        if value.is_empty() || self.fields.contains_key(field) {
            return;
        }
        if self.has(field) {
            self.fields.insert(field.to_owned(), Value::String(value.to_owned()));
        } else if KEPT_IN_EXTRA.contains(&field) {
            self.extra(format!("{field}: {value}"));
        }
    }

    pub fn extra(&mut self, line: impl Into<String>) {
        let line = line.into();
        if !line.trim().is_empty() && !self.extra.contains(&line) {
            self.extra.push(line);
        }
    }

    pub fn creator(&mut self, role: Role, name: Option<Name>) {
        let Some(name) = name else { return };
        let creator_type = match role {
            // The type's primary creator: `programmer` for software, `author` for the others the sources make.
            Role::Author => schema::creator_types(self.item_type).first().copied().unwrap_or("author"),
            Role::Editor if schema::has_creator_type(self.item_type, "editor") => "editor",
            Role::Editor => "contributor",
        };
        self.creators.push(match name {
            Name::Person { first, last } => {
                json!({ "creatorType": creator_type, "firstName": first, "lastName": last })
            }
            Name::Single(name) => json!({ "creatorType": creator_type, "name": name }),
        });
    }

    /// The item data: `itemType`, `title`, `creators`, then the fields in the order they were set, `extra` last.
    pub fn into_data(self) -> Map<String, Value> {
        let mut data = Map::new();
        data.insert("itemType".into(), Value::String(self.item_type.to_owned()));
        let mut fields = self.fields;
        data.insert("title".into(), fields.remove("title").unwrap_or_else(|| Value::String(String::new())));
        data.insert("creators".into(), Value::Array(self.creators));
        data.extend(fields);
        if !self.extra.is_empty() {
            data.insert("extra".into(), Value::String(self.extra.join("\n")));
        }
        data
    }
}

/// Whitespace runs collapsed to one space, ends trimmed.
pub(super) fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `[2021, 4, 2]` → `2021-04-02`; `[2015]` → `2015`. Zero or missing parts end the date.
pub(super) fn date_of_parts(parts: &[Value]) -> Option<String> {
    let mut numbers = parts.iter().map_while(|part| {
        part.as_u64().or_else(|| part.as_str().and_then(|text| text.trim().parse().ok())).filter(|n| *n > 0)
    });
    let year = numbers.next().filter(|year| *year < 10_000)?;
    let mut date = format!("{year:04}");
    for part in numbers.take(2) {
        date.push_str(&format!("-{part:02}"));
    }
    Some(date)
}

/// Abstract markup (JATS from CrossRef, HTML elsewhere) as plain text: a paragraph or section per line, other
/// tags dropped, whitespace collapsed, and a leading "Abstract" heading dropped. The common entities are decoded.
pub(super) fn plain_abstract(markup: &str) -> String {
    let mut text = String::with_capacity(markup.len());
    let mut rest = markup;
    while let Some(open) = rest.find('<') {
        text.push_str(&rest[..open]);
        let Some(close) = rest[open..].find('>') else {
            rest = &rest[open..];
            break;
        };
        let tag = rest[open + 1..open + close].trim_start_matches('/').to_ascii_lowercase();
        let name = tag.split(|c: char| c.is_whitespace() || c == '/').next().unwrap_or_default();
        let local = name.rsplit(':').next().unwrap_or_default();
        if matches!(local, "p" | "sec" | "title" | "br" | "div" | "list-item") {
            text.push(BREAK);
        }
        rest = &rest[open + close + 1..];
    }
    text.push_str(rest);
    let text = decode_entities(&text);
    // Line breaks in the markup are layout; only the block elements above end a line.
    let mut lines: Vec<String> = text.split(BREAK).map(collapse).filter(|line| !line.is_empty()).collect();
    if lines.first().is_some_and(|line| line.eq_ignore_ascii_case("abstract")) {
        lines.remove(0);
    }
    lines.join("\n")
}

/// Where a block element ended, while the markup is being stripped (a character no abstract contains).
const BREAK: char = '\u{1}';

/// A title with its markup (`<i>`, `<sub>`, MathML) dropped and whitespace collapsed.
pub(super) fn plain_title(markup: &str) -> String {
    let mut text = String::with_capacity(markup.len());
    let mut inside = false;
    for character in markup.chars() {
        match character {
            '<' => inside = true,
            '>' if inside => inside = false,
            _ if !inside => text.push(character),
            _ => {}
        }
    }
    collapse(&decode_entities(&text))
}

fn decode_entities(text: &str) -> String {
    if !text.contains('&') {
        return text.to_owned();
    }
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&apos;", "'")
        .replace("&nbsp;", "\u{a0}")
        .replace("&amp;", "&")
}
