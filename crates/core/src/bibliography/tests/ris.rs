//! RIS: the records written, and what this crate's RIS importer reads back from them.

use super::*;

#[test]
fn a_journal_article() {
    let article = item(
        "ABCD2345",
        json!({
            "itemType": "journalArticle",
            "title": "Sleep in <i>Drosophila</i>",
            "creators": [
                person("Jane A.", "Smith"),
                person("Pieter", "van der Berg"),
                organisation("World Health Organization"),
                { "creatorType": "editor", "firstName": "Eve", "lastName": "Editor" },
            ],
            "date": "2020-05-17",
            "publicationTitle": "Journal of Sleep",
            "volume": "29",
            "issue": "3",
            "pages": "123–135",
            "DOI": "10.1111/jsr.12345",
            "ISSN": "0962-1105",
            "url": "https://example.org/a",
            "abstractNote": "First paragraph.\n\nSecond\r\nparagraph.",
            "language": "en",
            "tags": [{ "tag": "sleep" }, { "tag": "flies" }],
            "accessDate": "2021-02-03",
        }),
    );
    let text = written(Format::Ris, &[article]);
    assert_eq!(
        text,
        "TY  - JOUR\r\n\
ID  - smith2020sleep\r\n\
AU  - Smith, Jane A.\r\n\
AU  - van der Berg, Pieter\r\n\
AU  - World Health Organization,\r\n\
A2  - Editor, Eve\r\n\
TI  - Sleep in Drosophila\r\n\
T2  - Journal of Sleep\r\n\
PY  - 2020\r\n\
DA  - 2020/05/17/\r\n\
VL  - 29\r\n\
IS  - 3\r\n\
SP  - 123\r\n\
EP  - 135\r\n\
SN  - 0962-1105\r\n\
DO  - 10.1111/jsr.12345\r\n\
UR  - https://example.org/a\r\n\
Y2  - 2021/02/03/\r\n\
AB  - First paragraph. Second paragraph.\r\n\
KW  - sleep\r\n\
KW  - flies\r\n\
LA  - en\r\n\
ER  - \r\n\r\n"
    );
    let read = read_ris(&text);
    assert_eq!(read.len(), 1);
    let data = &read[0];
    assert_eq!(data["itemType"], "journalArticle");
    assert_eq!(data["title"], "Sleep in Drosophila");
    assert_eq!(data["date"], "2020-05-17");
    assert_eq!(data["DOI"], "10.1111/jsr.12345");
    assert_eq!(data["pages"], "123-135");
    assert_eq!(
        data["creators"],
        json!([
            { "creatorType": "author", "firstName": "Jane A.", "lastName": "Smith" },
            { "creatorType": "author", "firstName": "Pieter", "lastName": "van der Berg" },
            { "creatorType": "author", "name": "World Health Organization" },
            { "creatorType": "editor", "firstName": "Eve", "lastName": "Editor" },
        ])
    );
}

#[test]
fn titles_authors_years_and_dois_read_back_for_every_common_type() {
    let types = [
        ("journalArticle", "JOUR"),
        ("book", "BOOK"),
        ("bookSection", "CHAP"),
        ("conferencePaper", "CPAPER"),
        ("thesis", "THES"),
        ("report", "RPRT"),
        ("webpage", "ELEC"),
        ("manuscript", "UNPB"),
        ("patent", "PAT"),
        ("magazineArticle", "MGZN"),
        ("newspaperArticle", "NEWS"),
        ("dataset", "DATA"),
        ("film", "MPCT"),
    ];
    let items: Vec<ZoteroObject> = types
        .iter()
        .enumerate()
        .map(|(n, (item_type, _))| {
            let author = if *item_type == "patent" {
                "inventor"
            } else if *item_type == "film" {
                "director"
            } else {
                "author"
            };
            item(
                &format!("K{n:07}"),
                json!({
                    "itemType": item_type,
                    "title": format!("Ångström & Łódź: {item_type}"),
                    "creators": [{ "creatorType": author, "firstName": "Antonín", "lastName": "Dvořák" }],
                    "date": "1999",
                    "DOI": format!("10.1000/{n}"),
                }),
            )
        })
        .collect();
    let text = written(Format::Ris, &items);
    let read = read_ris(&text);
    assert_eq!(read.len(), types.len());
    for ((item_type, tag), data) in types.iter().zip(&read) {
        assert!(text.contains(&format!("TY  - {tag}\r\n")), "{item_type}");
        assert_eq!(data["title"], format!("Ångström & Łódź: {item_type}"), "{item_type}");
        assert_eq!(data["creators"][0]["lastName"], "Dvořák", "{item_type}");
        assert_eq!(data["creators"][0]["firstName"], "Antonín", "{item_type}");
        let date = if *item_type == "patent" { &data["issueDate"] } else { &data["date"] };
        assert_eq!(date, "1999", "{item_type}");
        let doi = data.get("DOI").cloned().or_else(|| {
            data.get("extra").and_then(Value::as_str).and_then(|extra| extra.strip_prefix("DOI: ")).map(Value::from)
        });
        assert!(
            doi.is_some_and(|doi| doi.as_str().is_some_and(|doi| doi.starts_with("10.1000/"))),
            "{item_type}: {data:?}"
        );
    }
    // Only the year known: PY and no DA.
    assert!(!text.contains("DA  - "), "{text}");
}

#[test]
fn a_book_has_its_page_count_and_a_month_only_date() {
    let book = item(
        "ABCD2345",
        json!({ "itemType": "book", "title": "B", "numPages": "300", "date": "2020-05", "ISBN": "978-3-16-148410-0", "publisher": "P", "place": "Q", "edition": "2" }),
    );
    let text = written(Format::Ris, &[book]);
    assert!(
        text.contains("DA  - 2020/05//\r\nSP  - 300\r\nET  - 2\r\nPB  - P\r\nCY  - Q\r\nSN  - 978-3-16-148410-0\r\n"),
        "{text}"
    );
    let data = &read_ris(&text)[0];
    assert_eq!(data["numPages"], "300");
    assert_eq!(data["date"], "2020-05");
    assert_eq!(data["ISBN"], "978-3-16-148410-0");
    assert_eq!(data["publisher"], "P");
    assert_eq!(data["place"], "Q");
}
