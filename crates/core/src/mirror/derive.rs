//! What the mirror keeps of an item for searching it as Zotero does (the `search` column of `mirror_items`, read
//! by [`super::search`]), worked out once, when the item is stored: what Zotero's quick search matches, already
//! lowercased, the year it compares a word with, and the values Zotero sorts by. SQL cannot work these out
//! (SQLite lowercases ASCII only, and a note's title comes from its HTML), so the rows carry them.

use serde_json::{json, Map, Value};

use crate::html_text::{html_to_text, title_line};
use crate::zotero::saved_search::fields_standing_for;
use crate::zotero::{schema, year_of, ZoteroObject};

#[rustfmt::skip]
mod labels;

use labels::LABELS;

/// Between the values of the `text` [`derive`] keeps: a character no search word holds (words holding it are not
/// searched in the mirror), so a match never spans two fields.
pub const SEPARATOR: char = '\u{1f}';

/// Digits of a key read as a number (Zotero's keys are eight of them, from a subset).
pub(super) const KEY_DIGITS: &str = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";

/// A key read as a base-36 number, below 36^8 < 2^42 (what the search index names an item by, with its
/// library's number); `None` for what is not a key.
pub fn key_number(key: &str) -> Option<u64> {
    if key.len() != 8 {
        return None;
    }
    key.chars().try_fold(0u64, |n, c| Some(n * 36 + KEY_DIGITS.find(c)? as u64))
}

/// The item's `search` value: `text` (what quick search matches, lowercased, the values separated by
/// [`SEPARATOR`]), `year` (the year a word is compared with, or null without a date), the sort values (`title`,
/// `creator`, `date`, `type`, `publisher`, `publication`, `added`, `modified`), `tags` (lowercased) and
/// `collections`: what a listing filters and sorts on, without reading the item's whole data; and `n`, the
/// key's [`key_number`].
pub fn derive(object: &ZoteroObject) -> Value {
    let data = &object.data;
    let item_type = text(data, "itemType");
    let note_title = (item_type == "note").then(|| note_title(data));
    let creators = data.get("creators").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();

    // Quick search: a title-like field, a note's title, a creator's `first last`.
    let mut matched: Vec<String> = std::iter::once("title")
        .chain(fields_standing_for("title").iter().copied())
        .map(|f| text(data, f))
        .filter(|v| !v.is_empty())
        .map(lower)
        .collect();
    matched.extend(note_title.iter().filter(|t| !t.is_empty()).map(|t| lower(t)));
    matched.extend(creators.iter().map(full_name).filter(|n| !n.is_empty()).map(|n| lower(&n)));

    let date = first(data, "date");
    let parsed = (!date.is_empty()).then(|| parsed_date(object, date));
    let display_title = note_title.unwrap_or_else(|| first(data, "title").to_owned());
    let mut tags: Vec<String> = data
        .get("tags")
        .and_then(Value::as_array)
        .map(|tags| tags.iter().filter_map(|t| t.get("tag")?.as_str()).map(lower).collect())
        .unwrap_or_default();
    crate::sort::sort(&mut tags);
    tags.dedup();
    json!({
        "n": key_number(&object.key),
        "text": matched.join(&SEPARATOR.to_string()),
        "year": parsed.as_ref().map(|sql| sql[..4].to_owned()),
        "title": sort_title(&display_title),
        "creator": lower(&creator_summary(item_type, creators)),
        "date": parsed.unwrap_or_default(),
        "type": lower(LABELS.iter().find(|(t, _)| *t == item_type).map_or(item_type, |(_, label)| label)),
        "publisher": lower(first(data, "publisher")),
        "publication": lower(first(data, "publicationTitle")),
        "added": text(data, "dateAdded"),
        "modified": text(data, "dateModified"),
        "tags": tags,
        "collections": data.get("collections").cloned().unwrap_or_else(|| json!([])),
    })
}

fn text<'a>(data: &'a Map<String, Value>, field: &str) -> &'a str {
    data.get(field).and_then(Value::as_str).unwrap_or_default()
}

/// The item's value for the base field `base`: its own, or that of the field standing for it in its item type (a
/// case's title is its `caseName`). An item type has one of them at most, and an empty one counts.
fn first<'a>(data: &'a Map<String, Value>, base: &str) -> &'a str {
    std::iter::once(base)
        .chain(fields_standing_for(base).iter().copied())
        .find_map(|f| data.get(f).and_then(Value::as_str))
        .unwrap_or_default()
}

fn lower(text: &str) -> String {
    text.to_lowercase()
}

/// A note's title as Zotero shows it: the first line of its text, at most 80 characters.
fn note_title(data: &Map<String, Value>) -> String {
    title_line(&html_to_text(text(data, "note"))).chars().take(80).collect()
}

/// `TRIM(CONCAT(firstName, ' ', lastName))`, or the single-field `name`.
fn full_name(creator: &Value) -> String {
    match creator.get("name").and_then(Value::as_str) {
        Some(name) => name.to_owned(),
        None => {
            let part = |f: &str| creator.get(f).and_then(Value::as_str).unwrap_or_default();
            format!("{} {}", part("firstName"), part("lastName")).trim().to_owned()
        }
    }
}

fn last_name(creator: &Value) -> &str {
    creator.get("name").or_else(|| creator.get("lastName")).and_then(Value::as_str).unwrap_or_default()
}

/// Zotero's creator summary ("A", "A and B", "A et al."): the item type's primary creators, else its editors,
/// else its contributors.
fn creator_summary(item_type: &str, creators: &[Value]) -> String {
    let primary = schema::creator_types(item_type).first().copied();
    for kind in [primary, Some("editor"), Some("contributor")].into_iter().flatten() {
        let names: Vec<&str> = creators
            .iter()
            .filter(|c| c.get("creatorType").and_then(Value::as_str) == Some(kind))
            .take(3)
            .map(last_name)
            .collect();
        match names.as_slice() {
            [] => continue,
            [one] => return (*one).to_owned(),
            [a, b] => return format!("{a} and {b}"),
            [a, ..] => return format!("{a} et al."),
        }
    }
    String::new()
}

/// The date as Zotero sorts it, `YYYY-MM-DD` with zeros for what is unknown: from the date Zotero parsed
/// (`meta.parsedDate`; a date without a year is `0000-00-00`). An object without `meta` (none read from Zotero
/// lacks it) falls back on the date's four-digit year.
fn parsed_date(object: &ZoteroObject, date: &str) -> String {
    if object.meta.is_empty() {
        return format!("{:04}-00-00", year_of(date).unwrap_or(0));
    }
    let parsed = object.meta.get("parsedDate").and_then(Value::as_str).unwrap_or_default();
    let mut parts = parsed.split('-').filter(|p| !p.is_empty());
    let year = parts.next().filter(|y| y.len() == 4 && y.bytes().all(|b| b.is_ascii_digit())).unwrap_or("0000");
    let two = |part: Option<&str>| part.filter(|p| p.len() == 2).unwrap_or("00").to_owned();
    let (month, day) = (two(parts.next()), two(parts.next()));
    format!("{year}-{month}-{day}")
}

/// Zotero's sort title: brackets, quotes and dashes around it left out, lowercased.
fn sort_title(title: &str) -> String {
    const LEAD: &[char] = &['[', '(', '{', '-', '"', '\'', '“', '‘', ' '];
    const TRAIL: &[char] = &[']', ')', '}', '-', '"', '\'', '”', '’', ' '];
    lower(title.trim_start_matches(LEAD).trim_end_matches(TRAIL))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(meta: Value, data: Value) -> ZoteroObject {
        let map = |v: Value| v.as_object().cloned().unwrap_or_default();
        ZoteroObject { key: "ABCD2345".into(), version: 1, meta: map(meta), data: map(data) }
    }

    #[test]
    fn keeps_what_quick_search_matches_lowercased_and_apart() {
        let item = object(
            json!({ "parsedDate": "2019-05" }),
            json!({
                "itemType": "case", "caseName": "Straße v. ÉTAT", "date": "May 2019", "abstractNote": "not searched",
                "creators": [{ "creatorType": "author", "firstName": "Ada", "lastName": "Lovelace" },
                             { "creatorType": "author", "name": "W.H.O." }],
                "tags": [{ "tag": "Zebra" }, { "tag": "apple", "type": 1 }, { "tag": "ZEBRA" }]
            }),
        );
        let derived = derive(&item);
        assert_eq!(derived["text"], "straße v. état\u{1f}ada lovelace\u{1f}w.h.o.");
        assert_eq!((&derived["year"], &derived["date"]), (&json!("2019"), &json!("2019-05-00")));
        assert_eq!(derived["title"], "straße v. état");
        assert_eq!(derived["tags"], json!(["apple", "zebra"]));
        assert_eq!(derived["type"], "case");
    }

    #[test]
    fn a_note_is_matched_and_sorted_by_its_first_line() {
        let note = object(json!({}), json!({ "itemType": "note", "note": "<h1>“Reading” notes</h1><p>body</p>" }));
        let derived = derive(&note);
        assert_eq!(derived["text"], "“reading” notes");
        assert_eq!(derived["title"], "reading” notes");
        assert_eq!(derived["year"], Value::Null);
        assert_eq!(derived["type"], "note");
    }

    #[test]
    fn creators_sum_up_as_zotero_does() {
        let authors = |n: usize| -> Vec<Value> {
            (0..n).map(|i| json!({ "creatorType": "author", "lastName": format!("L{i}") })).collect()
        };
        assert_eq!(creator_summary("book", &authors(1)), "L0");
        assert_eq!(creator_summary("book", &authors(2)), "L0 and L1");
        assert_eq!(creator_summary("book", &authors(4)), "L0 et al.");
        let editor = [json!({ "creatorType": "editor", "name": "Board" })];
        assert_eq!(creator_summary("book", &editor), "Board");
        assert_eq!(creator_summary("computerProgram", &authors(1)), "", "software's creators are programmers");
    }

    #[test]
    fn dates_sort_as_zotero_parsed_them() {
        let dated = |meta: Value, date: &str| derive(&object(meta, json!({ "itemType": "book", "date": date })));
        assert_eq!(dated(json!({ "parsedDate": "1999-12-25" }), "12/25/99")["year"], "1999");
        assert_eq!(dated(json!({ "numChildren": 0 }), "n.d.")["date"], "0000-00-00");
        assert_eq!(dated(json!({}), "c. 1850")["date"], "1850-00-00", "without meta, the date's own year");
        assert_eq!(dated(json!({}), "")["date"], "");
    }

    #[test]
    fn keys_read_as_numbers_below_two_to_the_42() {
        assert_eq!(key_number("00000010"), Some(36));
        assert_eq!(key_number("ZZZZZZZZ"), Some(36u64.pow(8) - 1));
        assert!(36u64.pow(8) < 1 << 42);
        assert_eq!(key_number("abcdefgh"), None);
        assert_eq!(key_number("ABC"), None);
    }

    #[test]
    fn sort_titles_lose_their_brackets_and_quotes() {
        assert_eq!(sort_title("[\"Quoted\" Title]"), "quoted\" title");
        assert_eq!(sort_title("-- Dash"), "dash");
    }

    #[test]
    fn item_type_labels_are_zoteros() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../sim/data/schema.json");
        let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).expect("the schema")).expect("JSON");
        let labels = schema["locales"]["en-US"]["itemTypes"].as_object().cloned().unwrap_or_default();
        let ours: Vec<(String, String)> = LABELS.iter().map(|(t, l)| ((*t).to_owned(), (*l).to_owned())).collect();
        let theirs: Vec<(String, String)> =
            labels.iter().map(|(t, l)| (t.clone(), l.as_str().unwrap_or_default().to_owned())).collect();
        assert_eq!(ours, theirs, "regenerate labels.rs from the schema");
    }
}
