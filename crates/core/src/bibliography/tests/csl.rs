//! CSL-JSON: a JSON array of items the CSL schema accepts.

use super::*;

/// The properties of an item in the CSL schema (citation-style-language/schema, `csl-data.json`), with the type
/// each may have: "s" a string, "n" a list of names, "d" a date.
const SCHEMA: &[(&str, &str)] = &[
    ("id", "s"),
    ("type", "s"),
    ("author", "n"),
    ("editor", "n"),
    ("collection-editor", "n"),
    ("container-author", "n"),
    ("translator", "n"),
    ("reviewed-author", "n"),
    ("recipient", "n"),
    ("interviewer", "n"),
    ("composer", "n"),
    ("performer", "n"),
    ("director", "n"),
    ("producer", "n"),
    ("contributor", "n"),
    ("title", "s"),
    ("title-short", "s"),
    ("container-title", "s"),
    ("container-title-short", "s"),
    ("collection-title", "s"),
    ("collection-number", "s"),
    ("event-title", "s"),
    ("event-place", "s"),
    ("issued", "d"),
    ("accessed", "d"),
    ("volume", "s"),
    ("issue", "s"),
    ("page", "s"),
    ("number-of-pages", "s"),
    ("number", "s"),
    ("edition", "s"),
    ("genre", "s"),
    ("publisher", "s"),
    ("publisher-place", "s"),
    ("DOI", "s"),
    ("ISBN", "s"),
    ("ISSN", "s"),
    ("URL", "s"),
    ("abstract", "s"),
    ("language", "s"),
    ("keyword", "s"),
    ("PMID", "s"),
    ("PMCID", "s"),
];

/// The CSL types of the schema.
const TYPES: &[&str] = &[
    "article",
    "article-journal",
    "article-magazine",
    "article-newspaper",
    "bill",
    "book",
    "broadcast",
    "chapter",
    "classic",
    "collection",
    "dataset",
    "document",
    "entry",
    "entry-dictionary",
    "entry-encyclopedia",
    "event",
    "figure",
    "graphic",
    "hearing",
    "interview",
    "legal_case",
    "legislation",
    "manuscript",
    "map",
    "motion_picture",
    "musical_score",
    "pamphlet",
    "paper-conference",
    "patent",
    "performance",
    "periodical",
    "personal_communication",
    "post",
    "post-weblog",
    "regulation",
    "report",
    "review",
    "review-book",
    "software",
    "song",
    "speech",
    "standard",
    "thesis",
    "treaty",
    "webpage",
];

/// Fails unless `item` is one the schema accepts (for the properties this writer uses).
fn assert_valid(item: &Value) {
    let object = item.as_object().unwrap_or_else(|| panic!("not an object: {item}"));
    assert!(object.get("id").is_some_and(Value::is_string), "{item}");
    assert!(object.get("type").and_then(Value::as_str).is_some_and(|ty| TYPES.contains(&ty)), "{item}");
    for (name, value) in object {
        let kind = SCHEMA.iter().find(|(field, _)| field == name).map(|(_, kind)| *kind);
        match kind {
            Some("s") => assert!(value.as_str().is_some_and(|text| !text.is_empty()), "{name}: {value}"),
            Some("n") => {
                for person in value.as_array().unwrap() {
                    let person = person.as_object().unwrap();
                    let has = |key: &str| person.get(key).and_then(Value::as_str).is_some_and(|text| !text.is_empty());
                    assert!(has("literal") || has("family"), "{name}: {value}");
                    assert!(person.keys().all(|key| ["family", "given", "literal"].contains(&key.as_str())));
                }
            }
            Some(_) => {
                let parts = value["date-parts"].as_array().unwrap();
                assert_eq!(parts.len(), 1, "{value}");
                let parts = parts[0].as_array().unwrap();
                assert!((1..=3).contains(&parts.len()) && parts.iter().all(Value::is_u64), "{name}: {value}");
                assert_eq!(value.as_object().unwrap().len(), 1, "{value}");
            }
            None => panic!("{name} is not a CSL property"),
        }
    }
}

fn csl(items: &[ZoteroObject]) -> Vec<Value> {
    let text = written(Format::CslJson, items);
    match serde_json::from_str(&text) {
        Ok(Value::Array(items)) => items,
        other => panic!("not a JSON array: {other:?}\n{text}"),
    }
}

#[test]
fn a_journal_article() {
    let mut article = item(
        "ABCD2345",
        json!({
            "itemType": "journalArticle",
            "title": "Sleep in <i>Drosophila</i>",
            "creators": [
                person("Jane", "Smith"),
                organisation("WHO"),
                { "creatorType": "editor", "firstName": "Eve", "lastName": "Editor" },
                { "creatorType": "reviewedAuthor", "firstName": "", "lastName": "Plato" },
            ],
            "date": "May 2020",
            "accessDate": "2021-02-03T04:05:06Z",
            "publicationTitle": "Sleep",
            "journalAbbreviation": "Slp",
            "volume": "29",
            "issue": "3",
            "pages": "123-135",
            "DOI": "10.1/x",
            "ISSN": "1234-5678",
            "url": "https://example.org",
            "abstractNote": "Line one.\nLine two.",
            "language": "en",
            "tags": [{ "tag": "sleep" }, { "tag": "flies" }],
            "extra": "PMID: 42\nPMCID: PMC7",
            "series": "S",
        }),
    );
    article.meta.insert("parsedDate".to_owned(), json!("2020-05"));
    let items = csl(&[article]);
    assert_eq!(
        items,
        [json!({
            "id": "smith2020sleep",
            "type": "article-journal",
            "author": [{ "family": "Smith", "given": "Jane" }, { "literal": "WHO" }],
            "editor": [{ "family": "Editor", "given": "Eve" }],
            "reviewed-author": [{ "literal": "Plato" }],
            "title": "Sleep in <i>Drosophila</i>",
            "container-title": "Sleep",
            "container-title-short": "Slp",
            "collection-title": "S",
            "issued": { "date-parts": [[2020, 5]] },
            "accessed": { "date-parts": [[2021, 2, 3]] },
            "volume": "29",
            "issue": "3",
            "page": "123-135",
            "DOI": "10.1/x",
            "ISSN": "1234-5678",
            "URL": "https://example.org",
            "abstract": "Line one.\nLine two.",
            "language": "en",
            "keyword": "sleep, flies",
            "PMID": "42",
            "PMCID": "PMC7",
        })]
    );
    assert_valid(&items[0]);
}

#[test]
fn types_follow_zoteros_csl_mapping() {
    let cases = [
        ("journalArticle", "article-journal"),
        ("book", "book"),
        ("bookSection", "chapter"),
        ("conferencePaper", "paper-conference"),
        ("thesis", "thesis"),
        ("report", "report"),
        ("webpage", "webpage"),
        ("preprint", "article"),
        ("manuscript", "manuscript"),
        ("patent", "patent"),
        ("computerProgram", "software"),
        ("letter", "personal_communication"),
        ("film", "motion_picture"),
        ("case", "legal_case"),
        ("statute", "legislation"),
        ("document", "document"),
        ("somethingNew", "document"),
    ];
    let items: Vec<ZoteroObject> = cases
        .iter()
        .enumerate()
        .map(|(n, (item_type, _))| item(&format!("K{n:07}"), json!({ "itemType": item_type, "title": "T" })))
        .collect();
    let written = csl(&items);
    for ((item_type, expected), item) in cases.iter().zip(&written) {
        assert_eq!(item["type"], *expected, "{item_type}");
        assert_valid(item);
    }
}

#[test]
fn every_item_is_valid_whatever_its_fields() {
    let items = [
        item(
            "AAAA2222",
            json!({ "itemType": "book", "title": "No date", "numPages": "300", "edition": "2", "publisher": "P", "place": "Q", "ISBN": "1" }),
        ),
        item(
            "BBBB3333",
            json!({ "itemType": "thesis", "title": "T", "date": "n.d.", "thesisType": "PhD thesis", "university": "U" }),
        ),
        item(
            "CCCC4444",
            json!({ "itemType": "preprint", "title": "P", "archiveID": "arXiv:2101.00001", "repository": "arXiv", "date": "2021-01-01" }),
        ),
        item(
            "DDDD5555",
            json!({ "itemType": "patent", "title": "P", "issueDate": "1999-12-31", "patentNumber": "US1", "creators": [{ "creatorType": "inventor", "firstName": "I", "lastName": "Nventor" }] }),
        ),
        item(
            "EEEE6666",
            json!({ "itemType": "conferencePaper", "title": "C", "conferenceName": "Conf", "proceedingsTitle": "Proc", "creators": [{ "creatorType": "seriesEditor", "name": "Board" }] }),
        ),
        item(
            "FFFF7777",
            json!({ "itemType": "journalArticle", "title": "", "creators": [{ "creatorType": "author" }] }),
        ),
    ];
    let written = csl(&items);
    assert_eq!(written.len(), items.len());
    for item in &written {
        assert_valid(item);
    }
    assert!(written[0].get("issued").is_none(), "no year, no issued: {}", written[0]);
    assert!(written[1].get("issued").is_none(), "{}", written[1]);
    assert_eq!(written[1]["genre"], "PhD thesis");
    assert_eq!(written[2]["number"], "arXiv:2101.00001");
    assert_eq!(written[3]["issued"], json!({ "date-parts": [[1999, 12, 31]] }));
    assert_eq!(written[3]["author"], json!([{ "family": "Nventor", "given": "I" }]));
    assert_eq!(written[4]["collection-editor"], json!([{ "literal": "Board" }]));
    assert_eq!(written[4]["event-title"], "Conf");
    assert!(written[5].get("title").is_none() && written[5].get("author").is_none(), "{}", written[5]);
    assert_eq!(super::written(Format::CslJson, &[]), "[]\n");
}
