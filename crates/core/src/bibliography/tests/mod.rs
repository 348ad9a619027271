//! The bibliography writer: keys, each format read back by this crate's own importers, and the scale.

mod bibtex;
mod csl;
mod keys;
mod ris;

use serde_json::{json, Map, Value};

use super::*;
use crate::sources::{parse_bibtex, parse_ris};

/// An item with this Zotero key and `data` (an object; `key` and `version` are added).
fn item(key: &str, data: Value) -> ZoteroObject {
    let Value::Object(data) = data else { panic!("item data must be an object") };
    ZoteroObject { key: key.to_owned(), version: 1, meta: Map::new(), data }
}

/// A journal article by these creators.
fn article(key: &str, title: &str, date: &str, creators: Value) -> ZoteroObject {
    item(key, json!({ "itemType": "journalArticle", "title": title, "date": date, "creators": creators }))
}

fn person(first: &str, last: &str) -> Value {
    json!({ "creatorType": "author", "firstName": first, "lastName": last })
}

fn organisation(name: &str) -> Value {
    json!({ "creatorType": "author", "name": name })
}

/// The whole file, with the keys [`citation_keys`] gives.
fn written(format: Format, items: &[ZoteroObject]) -> String {
    write(format, items, &citation_keys(items))
}

/// What the BibTeX importer reads from a text: each entry's key and item data.
fn read_bibtex(text: &str) -> Vec<(String, Map<String, Value>)> {
    parse_bibtex(text)
        .into_iter()
        .map(|entry| match entry.outcome {
            Ok(data) => (entry.key.unwrap_or_default(), data),
            Err(error) => panic!("entry {} was not read back: {error}\n{text}", entry.index),
        })
        .collect()
}

/// What the RIS importer reads from a text.
fn read_ris(text: &str) -> Vec<Map<String, Value>> {
    parse_ris(text)
        .into_iter()
        .map(|entry| match entry.outcome {
            Ok(data) => data,
            Err(error) => panic!("record {} was not read back: {error}\n{text}", entry.index),
        })
        .collect()
}

#[test]
fn formats_by_name() {
    for (name, format) in [
        ("bibtex", Format::BibTex),
        ("BibLaTeX", Format::BibLaTex),
        ("csljson", Format::CslJson),
        ("CSL-JSON", Format::CslJson),
        ("ris", Format::Ris),
    ] {
        assert_eq!(Format::parse(name), Some(format), "{name}");
    }
    assert_eq!(Format::parse("endnote"), None);
    assert_eq!(Format::parse(""), None);
    let described: Vec<_> = [Format::BibTex, Format::BibLaTex, Format::CslJson, Format::Ris]
        .into_iter()
        .map(|format| (format.as_str(), format.extension(), format.content_type()))
        .collect();
    assert_eq!(
        described,
        [
            ("bibtex", "bib", "application/x-bibtex; charset=utf-8"),
            ("biblatex", "bib", "application/x-bibtex; charset=utf-8"),
            ("csljson", "json", "application/vnd.citationstyles.csl+json; charset=utf-8"),
            ("ris", "ris", "application/x-research-info-systems; charset=utf-8"),
        ]
    );
    for format in [Format::BibTex, Format::BibLaTex, Format::CslJson, Format::Ris] {
        assert_eq!(Format::parse(format.as_str()), Some(format));
    }
}

#[test]
fn only_regular_items_are_citable() {
    let of_type = |item_type: &str| item("ABCD2345", json!({ "itemType": item_type, "title": "x" }));
    for item_type in ["journalArticle", "book", "webpage", "preprint", "document"] {
        assert!(is_citable(&of_type(item_type)), "{item_type}");
    }
    for item_type in ["note", "attachment", "annotation"] {
        assert!(!is_citable(&of_type(item_type)), "{item_type}");
    }
    assert!(!is_citable(&item("ABCD2345", json!({ "title": "no type" }))));
}

#[test]
fn dates_as_zotero_keeps_them() {
    let date = |year, month, day| Some(Date { year, month, day });
    for (text, expected) in [
        ("2020-05-17", date(2020, Some(5), Some(17))),
        ("2020-05", date(2020, Some(5), None)),
        ("2020/05/17", date(2020, Some(5), Some(17))),
        ("2020-00-00", date(2020, None, None)),
        ("2020", date(2020, None, None)),
        ("May 17, 2020", date(2020, Some(5), None)),
        ("17 September 2020", date(2020, Some(9), None)),
        ("Sept. 2020", date(2020, Some(9), None)),
        ("Spring 2020", date(2020, None, None)),
        ("2020-13-01", date(2020, None, None)),
        ("n.d.", None),
        ("", None),
    ] {
        assert_eq!(read_date(text), expected, "{text:?}");
    }
    // Zotero's own reading, when the API sends it, wins over the text.
    let mut with_meta = article("ABCD2345", "T", "Frühjahr 2020", json!([]));
    with_meta.meta.insert("parsedDate".to_owned(), json!("2020-03"));
    let entry = Entry { item: &with_meta, key: "k" };
    assert_eq!(entry.date(), date(2020, Some(3), None));
}

#[test]
fn fifty_thousand_items_in_one_pass() {
    let items: Vec<ZoteroObject> = (0..50_000)
        .map(|n| {
            item(
                &format!("K{n:07}"),
                json!({
                    "itemType": "journalArticle",
                    "title": format!("Study number {n} of DNA"),
                    "creators": [person("Ann", "Lee")],
                    "date": "2021-02-03",
                    "publicationTitle": "Journal",
                    "pages": "1-10",
                    "DOI": format!("10.1000/{n}"),
                    "dateAdded": "2021-01-01T00:00:00Z",
                }),
            )
        })
        .collect();
    let keys = citation_keys(&items);
    let unique: std::collections::HashSet<&String> = keys.iter().collect();
    assert_eq!(unique.len(), 50_000);
    let bib = write(Format::BibTex, &items, &keys);
    assert_eq!(bib.matches("\n@article{").count() + usize::from(bib.starts_with("@article{")), 50_000);
    let ris = write(Format::Ris, &items, &keys);
    assert_eq!(ris.matches("TY  - JOUR\r\n").count(), 50_000);
    let csl: Value = serde_json::from_str(&write(Format::CslJson, &items, &keys)).unwrap();
    assert_eq!(csl.as_array().map(Vec::len), Some(50_000));
}

#[test]
fn pages_written_one_after_another_make_one_file() {
    let one = article("AAAAAAAA", "One", "2020", json!([]));
    let two = article("BBBBBBBB", "Two", "2021", json!([]));
    let three = article("CCCCCCCC", "Three", "2022", json!([]));
    let keys = |names: &[&str]| names.iter().map(|n| (*n).to_owned()).collect::<Vec<_>>();
    for format in [Format::BibTex, Format::BibLaTex, Format::CslJson, Format::Ris] {
        let mut writer = Writer::new(format);
        writer.page(&[one.clone(), two.clone()], &keys(&["one", "two"]));
        writer.page(&[], &[]);
        writer.page(std::slice::from_ref(&three), &keys(&["three"]));
        let whole = write(format, &[one.clone(), two.clone(), three.clone()], &keys(&["one", "two", "three"]));
        assert_eq!(writer.finish(), whole, "{format:?}");
    }
    let parsed: Vec<Value> = serde_json::from_str(&write(Format::CslJson, &[one, two], &keys(&["a", "b"]))).unwrap();
    assert_eq!(parsed.iter().map(|e| e["id"].clone()).collect::<Vec<_>>(), [json!("a"), json!("b")]);
    let empty: Vec<Value> = serde_json::from_str(&Writer::new(Format::CslJson).finish()).unwrap();
    assert!(empty.is_empty());
}
