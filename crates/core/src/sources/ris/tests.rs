//! RIS import: records as publishers and reference managers export them, mapped to exact item data, then the
//! line format's tolerances and the entries that cannot be read.

use serde_json::json;

use super::*;

fn items(text: &str) -> Vec<Map<String, Value>> {
    parse_ris(text)
        .into_iter()
        .map(|entry| match entry.outcome {
            Ok(item) => item,
            Err(error) => panic!("entry {} was not read: {error}", entry.index),
        })
        .collect()
}

fn only_item(text: &str) -> Value {
    let mut items = items(text);
    assert_eq!(items.len(), 1, "{items:?}");
    Value::Object(items.remove(0))
}

/// A journal article as a publisher's "export citation" writes it: CRLF, a BOM, JO and JF both, a DOI link.
const JOURNAL: &str = "\u{feff}TY  - JOUR\r\n\
AU  - Smith, Jane A.\r\n\
AU  - van der Berg, Pieter\r\n\
AU  - Consortium\r\n\
PY  - 2020\r\n\
DA  - 2020/05/17/\r\n\
TI  - Sleep and memory consolidation in adolescents\r\n\
JO  - J. Sleep Res.\r\n\
JF  - Journal of Sleep Research\r\n\
SP  - 123\r\n\
EP  - 135\r\n\
VL  - 29\r\n\
IS  - 3\r\n\
AB  - We studied sleep.\r\n\
SN  - 0962-1105\r\n\
UR  - https://onlinelibrary.example.com/doi/10.1111/jsr.12345\r\n\
DO  - https://doi.org/10.1111/jsr.12345\r\n\
KW  - sleep\r\n\
KW  - memory\r\n\
KW  - sleep\r\n\
LA  - en\r\n\
N1  - Epub ahead of print\r\n\
ID  - smith2020\r\n\
ER  - \r\n";

#[test]
fn a_journal_article_from_a_publisher() {
    assert_eq!(
        only_item(JOURNAL),
        json!({
            "itemType": "journalArticle",
            "title": "Sleep and memory consolidation in adolescents",
            "creators": [
                { "creatorType": "author", "firstName": "Jane A.", "lastName": "Smith" },
                { "creatorType": "author", "firstName": "Pieter", "lastName": "van der Berg" },
                { "creatorType": "author", "name": "Consortium" },
            ],
            "abstractNote": "We studied sleep.",
            "publicationTitle": "Journal of Sleep Research",
            "journalAbbreviation": "J. Sleep Res.",
            "volume": "29",
            "issue": "3",
            "pages": "123-135",
            "date": "2020-05-17",
            "ISSN": "0962-1105",
            "DOI": "10.1111/jsr.12345",
            "url": "https://onlinelibrary.example.com/doi/10.1111/jsr.12345",
            "language": "en",
            "tags": [{ "tag": "sleep" }, { "tag": "memory" }],
            "extra": "Epub ahead of print",
        })
    );
}

#[test]
fn a_chapter_with_editors() {
    let text = "TY  - CHAP
AU  - Ortega, Luis
A2  - Keller, Maria
ED  - Tanaka, Hiro
A3  - Brown, Ann
TI  - Glaciers of the Andes
T2  - Mountain Climates
T3  - Earth Systems
PY  - 2018
SP  - 45
EP  - 67
PB  - Springer
CY  - Cham
SN  - 978-3-319-12345-6
DO  - 10.1007/978-3-319-12345-6_3
ET  - 2
ER  -
";
    assert_eq!(
        only_item(text),
        json!({
            "itemType": "bookSection",
            "title": "Glaciers of the Andes",
            "creators": [
                { "creatorType": "author", "firstName": "Luis", "lastName": "Ortega" },
                { "creatorType": "editor", "firstName": "Maria", "lastName": "Keller" },
                { "creatorType": "editor", "firstName": "Hiro", "lastName": "Tanaka" },
                { "creatorType": "seriesEditor", "firstName": "Ann", "lastName": "Brown" },
            ],
            "bookTitle": "Mountain Climates",
            "series": "Earth Systems",
            "edition": "2",
            "pages": "45-67",
            "date": "2018",
            "ISBN": "978-3-319-12345-6",
            "publisher": "Springer",
            "place": "Cham",
            "tags": [],
            "DOI": "10.1007/978-3-319-12345-6_3",
        })
    );
}

#[test]
fn a_book_with_an_isbn() {
    let item = only_item(
        "TY  - BOOK\nA1  - Knuth, Donald E.\nT1  - The Art of Computer Programming\nT2  - Series in CS\nVL  - 1\n\
         Y1  - 1997///\nSN  - 0201896834\nPB  - Addison-Wesley\nCY  - Reading, MA\nSP  - 672\nER  - \n",
    );
    assert_eq!(
        item,
        json!({
            "itemType": "book",
            "title": "The Art of Computer Programming",
            "creators": [{ "creatorType": "author", "firstName": "Donald E.", "lastName": "Knuth" }],
            "series": "Series in CS",
            "volume": "1",
            "numPages": "672",
            "date": "1997",
            "ISBN": "0201896834",
            "publisher": "Addison-Wesley",
            "place": "Reading, MA",
            "tags": [],
        })
    );
}

#[test]
fn a_conference_paper() {
    let item = only_item(
        "TY  - CPAPER\nAU  - Lee, K.\nTI  - Fast joins\nT2  - Proceedings of VLDB 2019\nPY  - 2019/08//\n\
         SP  - 10-20\nSN  - 978-1-4503-0000-0\nDO  - doi:10.14778/1234.5678\nPB  - VLDB Endowment\nER  - \n",
    );
    assert_eq!(
        item,
        json!({
            "itemType": "conferencePaper",
            "title": "Fast joins",
            "creators": [{ "creatorType": "author", "firstName": "K.", "lastName": "Lee" }],
            "proceedingsTitle": "Proceedings of VLDB 2019",
            "pages": "10-20",
            "date": "2019-08",
            "ISBN": "978-1-4503-0000-0",
            "DOI": "10.14778/1234.5678",
            "publisher": "VLDB Endowment",
            "tags": [],
        })
    );
}

#[test]
fn two_entries_where_the_second_lacks_er() {
    let text = "TY  - JOUR\nTI  - First\nER  - \n\nTY  - BOOK\nTI  - Second\n";
    let entries = parse_ris(text);
    assert_eq!(entries.len(), 2);
    assert_eq!(entries[0].index, 1);
    assert_eq!(entries[0].outcome.as_ref().ok().and_then(|item| item.get("title")), Some(&json!("First")));
    assert_eq!(entries[1].index, 2);
    let error = entries[1].outcome.clone().err();
    assert_eq!(error, Some(RisError::MissingEnd { line: 5, next_entry_line: None }));
    let message = error.map(|error| error.to_string()).unwrap_or_default();
    assert!(message.contains("line 5") && message.contains("ER"), "{message}");
}

#[test]
fn an_entry_left_open_before_the_next_ty_is_an_error_and_the_next_is_read() {
    let entries = parse_ris("TY  - JOUR\nTI  - Open\nTY  - JOUR\nTI  - Closed\nER  - \n");
    assert_eq!(entries[0].outcome, Err(RisError::MissingEnd { line: 1, next_entry_line: Some(3) }));
    assert!(entries[0].outcome.clone().err().is_some_and(|error| error.to_string().contains("line 3")));
    assert_eq!(entries[1].index, 2);
    assert_eq!(entries[1].outcome.as_ref().ok().and_then(|item| item.get("title")), Some(&json!("Closed")));
}

#[test]
fn an_entry_without_ty_is_an_error() {
    let entries = parse_ris("Provider: Example\n\nTI  - Untyped\nAU  - Doe, J.\nER  - \nTY  -\nER  -\n");
    assert_eq!(entries.len(), 2);
    assert_eq!(entries[0].outcome, Err(RisError::MissingType { line: 3 }));
    assert_eq!(entries[1].outcome, Err(RisError::MissingType { line: 6 }));
    assert!(entries[0].outcome.clone().err().is_some_and(|error| error.to_string().contains("TY")));
}

#[test]
fn continuation_lines_join_the_previous_field() {
    let item =
        only_item("TY  - JOUR\nTI  - A title that\n   goes on\nand on\nAB  - First part.\r\nSecond part.\r\nER  - \n");
    assert_eq!(item["title"], json!("A title that goes on and on"));
    assert_eq!(item["abstractNote"], json!("First part. Second part."));
}

#[test]
fn the_line_format_tolerates_one_space_and_a_bare_dash() {
    let item = only_item("TY - JOUR\r\nTI  -Not a tag line\r\nT1 - Title\r\nER  -");
    assert_eq!(item["title"], json!("Title"));
}

#[test]
fn types_map_as_zotero_imports_them() {
    let cases = [
        ("JOUR", "journalArticle"),
        ("BOOK", "book"),
        ("CHAP", "bookSection"),
        ("CONF", "conferencePaper"),
        ("CPAPER", "conferencePaper"),
        ("THES", "thesis"),
        ("RPRT", "report"),
        ("ELEC", "webpage"),
        ("WEB", "webpage"),
        ("GEN", "document"),
        ("NEWS", "newspaperArticle"),
        ("MGZN", "magazineArticle"),
        ("DATA", "dataset"),
        ("UNPB", "manuscript"),
        ("PAT", "patent"),
        ("SOUND", "document"),
    ];
    for (ty, expected) in cases {
        let item = only_item(&format!("TY  - {ty}\nER  - \n"));
        assert_eq!(item["itemType"], json!(expected), "{ty}");
    }
}

#[test]
fn fields_go_where_the_type_has_them() {
    let patent = only_item("TY  - PAT\nAU  - Tesla, Nikola\nPY  - 1888/05/01/\nVL  - 3\nIS  - 4\nER  - \n");
    assert_eq!(patent["creators"][0]["creatorType"], json!("inventor"));
    assert_eq!(patent["issueDate"], json!("1888-05-01"));
    assert!(patent.get("volume").is_none() && patent.get("issue").is_none() && patent.get("date").is_none());

    let report = only_item("TY  - RPRT\nPB  - NASA\nSN  - TM-2020-1\nA2  - Roe, R.\nER  - \n");
    assert_eq!(report["institution"], json!("NASA"));
    assert_eq!(report["reportNumber"], json!("TM-2020-1"));
    assert_eq!(report["creators"][0]["creatorType"], json!("contributor"));

    let thesis = only_item("TY  - THES\nPB  - MIT\nCY  - Cambridge\nER  - \n");
    assert_eq!(thesis["university"], json!("MIT"));
    assert_eq!(thesis["place"], json!("Cambridge"));

    let page = only_item("TY  - ELEC\nT2  - Example Site\nUR  - https://example.org/a\nPB  - Ex\nER  - \n");
    assert_eq!(page["websiteTitle"], json!("Example Site"));
    assert!(page.get("publisher").is_none());
}

#[test]
fn dates_in_their_ris_forms() {
    assert_eq!(normalise_date("2020/05/17/"), "2020-05-17");
    assert_eq!(normalise_date("2020/5/7"), "2020-05-07");
    assert_eq!(normalise_date("2020"), "2020");
    assert_eq!(normalise_date("2020///"), "2020");
    assert_eq!(normalise_date("2020///Spring"), "Spring 2020");
    assert_eq!(normalise_date("May 2020"), "May 2020");
    assert_eq!(normalise_date("2020-05-17"), "2020-05-17");
}

#[test]
fn a_full_date_of_another_year_does_not_replace_the_year() {
    let item = only_item("TY  - JOUR\nPY  - 2021\nDA  - 2020/12/01/\nER  - \n");
    assert_eq!(item["date"], json!("2021"));
    let item = only_item("TY  - JOUR\nY1  - 2019/03//\nER  - \n");
    assert_eq!(item["date"], json!("2019-03"));
}

#[test]
fn doi_prefixes_are_stripped() {
    assert_eq!(strip_doi("https://doi.org/10.1/x"), "10.1/x");
    assert_eq!(strip_doi("http://dx.doi.org/10.1/x"), "10.1/x");
    assert_eq!(strip_doi("DOI: 10.1/x"), "10.1/x");
    assert_eq!(strip_doi("10.1/x"), "10.1/x");
}

#[test]
fn empty_text_has_no_entries() {
    assert!(parse_ris("").is_empty());
    assert!(parse_ris("\u{feff}\r\n\r\n").is_empty());
}
