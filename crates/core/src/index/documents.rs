//! What an item's document in the index says, plus the paper's text with page markers.

use serde_json::{Map, Value};

use super::measure::{char_weight, slice_utf16, weight};
use super::passage::{page_marker, repeat_marker};
use super::{ABSTRACT_CHARS, FULL_TEXT_BUDGET_CHARS, MAX_CREATORS, METADATA_CHARS, PAGE_MARKER_EVERY_CHARS};
use crate::zotero::ZoteroObject;

/// A "word" longer than this (weighted) is unspaced text, cut at the budget rather than dropped.
const LONG_WORD: usize = 64;

/// Item types that never get a document: they are parts of other items.
const CHILD_TYPES: &[&str] = &["attachment", "annotation", "note"];

/// One item's document as it is uploaded: `name` is `<KEY>.md` (the suffix makes AI Search read the content as
/// text), `metadata` holds only strings (`itemtype`, `year`): the service rejects numbers.
#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    pub name: String,
    pub text: String,
    pub metadata: Map<String, Value>,
}

/// The paper's text, as far as it is known.
#[derive(Debug, Clone, PartialEq)]
pub enum ItemText {
    /// One string per page, in file order (from our PDF engine): the document marks the pages.
    Pages(Vec<String>),
    /// The text without page breaks (Zotero's full-text index): the document has no page markers.
    Whole(String),
}

/// Whether `item` gets a document: not an attachment, annotation or note, and not in the trash.
pub fn is_indexable(item: &ZoteroObject) -> bool {
    let item_type = item.data.get("itemType").and_then(Value::as_str).unwrap_or_default();
    !CHILD_TYPES.contains(&item_type) && !is_truthy(item.data.get("deleted"))
}

/// `<KEY>.md`.
pub fn document_name(key: &str) -> String {
    format!("{key}.md")
}

/// The item key a document name stands for (the name minus a trailing `.md`).
pub fn item_key_of(name: &str) -> &str {
    name.strip_suffix(".md").unwrap_or(name)
}

/// The metadata part of a document, exactly as upstream: title; up to 8 creator surnames; the year; the venue;
/// the tags; the abstract (at most 4000 characters): one line each, blank lines dropped, at most 6000 characters
/// in all (lengths in UTF-16 code units, as JavaScript counts).
pub fn document_text(data: &Map<String, Value>) -> String {
    let creators: Vec<String> = data
        .get("creators")
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                // `lastName ?? name ?? ""`: an empty lastName wins over a name, as in JavaScript.
                .map(|c| js_string(nullish(c.get("lastName")).or_else(|| nullish(c.get("name")))))
                .filter(|name| !name.is_empty())
                .take(MAX_CREATORS)
                .collect()
        })
        .unwrap_or_default();
    let date = js_string(nullish(data.get("date")));
    let venue = ["publicationTitle", "bookTitle", "proceedingsTitle", "publisher"]
        .iter()
        .find_map(|field| nullish(data.get(*field)));
    let tags: Vec<&str> = data
        .get("tags")
        .and_then(Value::as_array)
        .map(|list| list.iter().filter_map(|t| t.get("tag").and_then(Value::as_str)).collect())
        .unwrap_or_default();
    let abstract_note = js_string(nullish(data.get("abstractNote")));
    let lines = [
        js_string(nullish(data.get("title"))),
        creators.join(", "),
        crate::zotero::year_of(&date).map(|year| format!("{year:04}")).unwrap_or_default(),
        js_string(venue),
        tags.join(", "),
        slice_utf16(&abstract_note, ABSTRACT_CHARS).to_owned(),
    ];
    let kept: Vec<&str> = lines.iter().map(String::as_str).filter(|line| !line.trim().is_empty()).collect();
    slice_utf16(&kept.join("\n"), METADATA_CHARS).to_owned()
}

/// `{itemtype, year}`, both strings: the year by the one year rule ([`crate::zotero::year_of`]) as a number
/// (`"0999"` → `"999"`), `"0"` when the date has none.
pub fn document_metadata(item: &ZoteroObject) -> Map<String, Value> {
    let item_type = js_string(nullish(item.data.get("itemType")));
    let date = js_string(nullish(item.data.get("date")));
    let year = crate::zotero::year_of(&date).unwrap_or(0);
    let mut metadata = Map::new();
    metadata.insert("itemtype".into(), Value::String(item_type));
    metadata.insert("year".into(), Value::String(year.to_string()));
    metadata
}

/// The document for `item`, with the paper's text appended when known; `None` when the item is not indexable.
pub fn document_for(item: &ZoteroObject, full_text: Option<&ItemText>) -> Option<Document> {
    if !is_indexable(item) {
        return None;
    }
    let mut text = document_text(&item.data);
    let appended = full_text.map(full_text_section).unwrap_or_default();
    if !appended.is_empty() {
        if !text.is_empty() {
            text.push_str("\n\n");
        }
        text.push_str(&appended);
    }
    Some(Document { name: document_name(&item.key), text, metadata: document_metadata(item) })
}

/// The paper's text as it follows the metadata: whitespace collapsed, within [`FULL_TEXT_BUDGET_CHARS`], with
/// page markers when the pages are known. The budget keeps the beginning (abstract, introduction), which is
/// what a topic search most often matches; the rest of a long paper is not indexed.
pub fn full_text_section(text: &ItemText) -> String {
    let mut out = Budgeted::new(FULL_TEXT_BUDGET_CHARS);
    match text {
        ItemText::Whole(whole) => {
            for word in whole.split_whitespace() {
                if !out.word(word) {
                    break;
                }
            }
        }
        ItemText::Pages(pages) => {
            'pages: for (index, page) in pages.iter().enumerate() {
                let number = index + 1;
                let mut words = page.split_whitespace().peekable();
                if words.peek().is_none() {
                    // A page without text (a scan, a figure) gets no marker: it would only spend the budget.
                    continue;
                }
                if !out.is_empty() {
                    out.newline();
                }
                if !out.marker(&page_marker(number)) {
                    break;
                }
                let mut since_marker = 0;
                for word in words {
                    // A word longer than the marker distance (unspaced CJK text) is marked inside as well.
                    for piece in split_long(word, PAGE_MARKER_EVERY_CHARS) {
                        if since_marker >= PAGE_MARKER_EVERY_CHARS {
                            if !out.marker(&repeat_marker(number)) {
                                break 'pages;
                            }
                            since_marker = 0;
                        }
                        if !out.word(piece) {
                            break 'pages;
                        }
                        since_marker += weight(piece) + 1;
                    }
                }
            }
        }
    }
    out.text
}

/// Text built word by word within a weighted character budget.
struct Budgeted {
    text: String,
    used: usize,
    budget: usize,
}

impl Budgeted {
    fn new(budget: usize) -> Self {
        Self { text: String::new(), used: 0, budget }
    }

    fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    fn separator(&self) -> usize {
        usize::from(!self.text.is_empty() && !self.text.ends_with('\n'))
    }

    /// Appends a word (a space before it when needed); a word that does not fit is cut when it is the budget's
    /// only chance (unspaced text), else left out. False once the budget is spent.
    fn word(&mut self, word: &str) -> bool {
        let room = self.budget.saturating_sub(self.used + self.separator());
        if room == 0 {
            return false;
        }
        let cost = weight(word);
        if cost > room {
            // Unspaced script (CJK) comes as one long "word": cut it rather than leave the budget unused. An
            // ordinary word that does not fit is left out whole.
            if cost > LONG_WORD {
                let part = prefix_within(word, room);
                self.push(part);
            }
            return false;
        }
        self.push(word);
        true
    }

    /// Appends a marker whole, or nothing when it does not fit with at least a little text after it.
    fn marker(&mut self, marker: &str) -> bool {
        let cost = marker.len() + self.separator();
        if self.used + cost + 1 > self.budget {
            return false;
        }
        self.push(marker);
        true
    }

    fn newline(&mut self) {
        if self.used < self.budget {
            self.text.push('\n');
            self.used += 1;
        }
    }

    fn push(&mut self, piece: &str) {
        if piece.is_empty() {
            return;
        }
        if self.separator() == 1 {
            self.text.push(' ');
            self.used += 1;
        }
        self.text.push_str(piece);
        self.used += weight(piece);
    }
}

/// Splits a word into pieces of at most `max` weighted characters (most words are one piece).
fn split_long(word: &str, max: usize) -> Vec<&str> {
    let mut pieces = Vec::new();
    let mut rest = word;
    while weight(rest) > max {
        let head = prefix_within(rest, max);
        if head.is_empty() {
            break;
        }
        pieces.push(head);
        rest = &rest[head.len()..];
    }
    if !rest.is_empty() {
        pieces.push(rest);
    }
    pieces
}

/// The longest prefix of `text` whose weight is at most `max`.
fn prefix_within(text: &str, max: usize) -> &str {
    let mut used = 0;
    for (at, c) in text.char_indices() {
        used += char_weight(c);
        if used > max {
            return &text[..at];
        }
    }
    text
}

/// The first run of four ASCII digits (JavaScript's `/\d{4}/`).
/// The value unless it is absent or null (JavaScript's `??` operand).
fn nullish(value: Option<&Value>) -> Option<&Value> {
    value.filter(|v| !v.is_null())
}

/// `String(value)` for the values item data holds; anything absent is empty.
fn js_string(value: Option<&Value>) -> String {
    match value {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        Some(Value::Bool(b)) => b.to_string(),
        _ => String::new(),
    }
}

/// JavaScript truthiness of a JSON value.
fn is_truthy(value: Option<&Value>) -> bool {
    match value {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(Value::Number(n)) => n.as_f64().is_some_and(|f| f != 0.0 && !f.is_nan()),
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Array(_) | Value::Object(_)) => true,
    }
}
