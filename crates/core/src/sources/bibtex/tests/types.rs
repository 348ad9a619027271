//! Every entry type and the fields each Zotero type takes.

use super::*;

#[test]
fn every_entry_type_maps_as_documented() {
    let cases = [
        ("article", "journalArticle"),
        ("book", "book"),
        ("mvbook", "book"),
        ("booklet", "book"),
        ("manual", "book"),
        ("proceedings", "book"),
        ("collection", "book"),
        ("inbook", "bookSection"),
        ("incollection", "bookSection"),
        ("bookinbook", "bookSection"),
        ("inproceedings", "conferencePaper"),
        ("conference", "conferencePaper"),
        ("phdthesis", "thesis"),
        ("mastersthesis", "thesis"),
        ("thesis", "thesis"),
        ("techreport", "report"),
        ("report", "report"),
        ("misc", "document"),
        ("online", "document"),
        ("unpublished", "manuscript"),
        ("patent", "patent"),
        ("dataset", "dataset"),
        ("software", "computerProgram"),
        ("preprint", "preprint"),
        ("letter", "letter"),
        ("audio", "document"),
        ("whatever", "document"),
    ];
    for (ty, expected) in cases {
        let item = only_item(&format!("@{ty}{{k, title = {{T}}}}"));
        assert_eq!(item["itemType"], json!(expected), "{ty}");
        assert_eq!(item["title"], json!("T"), "{ty}");
    }
    for ty in ["misc", "online", "electronic", "www"] {
        let item = only_item(&format!("@{ty}{{k, url = {{https://example.org/}}}}"));
        assert_eq!(item["itemType"], json!("webpage"), "{ty}");
        assert_eq!(item["url"], json!("https://example.org/"));
    }
    let item = only_item("@misc{k, howpublished = {\\url{https://example.org/~me/a_b}}}");
    assert_eq!(item["itemType"], json!("webpage"));
    assert_eq!(item["url"], json!("https://example.org/~me/a_b"));
    let magazine = only_item("@article{k, entrysubtype = {magazine}, journaltitle = {Wired}, number = 4}");
    assert_eq!(magazine["itemType"], json!("magazineArticle"));
    assert_eq!(magazine["issue"], json!("4"));
    let newspaper = only_item("@article{k, entrysubtype = {newspaper}, journaltitle = {The Times}}");
    assert_eq!(newspaper["itemType"], json!("newspaperArticle"));
    assert_eq!(newspaper["publicationTitle"], json!("The Times"));
}

#[test]
fn a_chapter_with_editors_and_translators() {
    let item = only_item(
        "@incollection{ortega2018,
          author = {Ortega, Luis},
          editor = {Keller, Maria and Tanaka, Hiro},
          translator = {Brown, Ann},
          bookauthor = {Humboldt, Alexander von},
          title = {Glaciers of the Andes},
          booktitle = {Mountain Climates},
          booksubtitle = {A Survey},
          series = {Earth Systems},
          number = {12},
          volume = 2,
          volumes = 3,
          edition = {2nd},
          year = 2018,
          pages = {45 -- 67},
          publisher = {Springer},
          location = {Cham},
          isbn = {978-3-319-12345-6},
          doi = {https://doi.org/10.1007/978-3-319-12345-6_3},
        }",
    );
    assert_eq!(
        item,
        json!({
            "itemType": "bookSection",
            "title": "Glaciers of the Andes",
            "creators": [
                person("author", "Luis", "Ortega"),
                person("editor", "Maria", "Keller"),
                person("editor", "Hiro", "Tanaka"),
                person("translator", "Ann", "Brown"),
                person("bookAuthor", "Alexander von", "Humboldt"),
            ],
            "bookTitle": "Mountain Climates: A Survey",
            "volume": "2",
            "numberOfVolumes": "3",
            "edition": "2nd",
            "series": "Earth Systems",
            "seriesNumber": "12",
            "pages": "45-67",
            "date": "2018",
            "publisher": "Springer",
            "place": "Cham",
            "ISBN": "978-3-319-12345-6",
            "tags": [],
            "DOI": "10.1007/978-3-319-12345-6_3",
            "extra": "Citation Key: ortega2018",
        })
    );
}

#[test]
fn a_classic_inbook_names_the_book_in_its_title() {
    let classic = only_item(
        "@inbook{k, author = {Knuth, Donald E.}, title = {Fundamental Algorithms}, chapter = {Information \
         Structures}, pages = {228--463}, publisher = {Addison-Wesley}, year = 1997}",
    );
    assert_eq!(classic["itemType"], json!("bookSection"));
    assert_eq!(classic["title"], json!("Information Structures"));
    assert_eq!(classic["bookTitle"], json!("Fundamental Algorithms"));
    assert_eq!(classic["pages"], json!("228-463"));
    let biblatex = only_item("@inbook{k, title = {Part}, booktitle = {Whole}, chapter = {3}}");
    assert_eq!(biblatex["title"], json!("Part"));
    assert_eq!(biblatex["bookTitle"], json!("Whole"));
    let numbered = only_item("@inbook{k, title = {Whole}, chapter = 3}");
    assert_eq!(numbered["title"], json!("Whole"));
    assert!(numbered.get("bookTitle").is_none());
}

#[test]
fn a_book_with_a_page_total_and_a_proceedings_volume() {
    let book = only_item(
        "@book{knuth97, author = {Donald E. Knuth}, title = {The Art of Computer Programming}, volume = 1, \
         edition = {Third}, publisher = {Addison-Wesley}, address = {Reading, MA}, year = 1997, pagetotal = 672, \
         isbn = {0201896834}}",
    );
    assert_eq!(book["numPages"], json!("672"));
    assert_eq!(book["creators"], json!([person("author", "Donald E.", "Knuth")]));
    assert_eq!(book["place"], json!("Reading, MA"));
    let proceedings =
        only_item("@proceedings{p, editor = {Roe, Richard}, title = {Proc. X}, organization = {IEEE}, year = 2001}");
    assert_eq!(proceedings["itemType"], json!("book"));
    assert_eq!(proceedings["creators"], json!([person("editor", "Richard", "Roe")]));
    assert_eq!(proceedings["publisher"], json!("IEEE"));
}

#[test]
fn conference_fields() {
    let item = only_item(
        "@inproceedings{lee19, author = {Lee, K.}, title = {Fast joins}, booktitle = {Proceedings of VLDB}, \
         eventtitle = {VLDB 2019}, venue = {Los Angeles}, year = 2019, month = aug, pages = {10--20}, \
         doi = {doi:10.14778/1234.5678}, editor = {Roe, R.}}",
    );
    assert_eq!(item["proceedingsTitle"], json!("Proceedings of VLDB"));
    assert_eq!(item["conferenceName"], json!("VLDB 2019"));
    assert_eq!(item["place"], json!("Los Angeles"));
    assert_eq!(item["date"], json!("2019-08"));
    assert_eq!(item["DOI"], json!("10.14778/1234.5678"));
    assert_eq!(item["creators"][1], person("editor", "R.", "Roe"));
}

#[test]
fn theses_reports_and_manuscripts() {
    let masters = only_item(
        "@mastersthesis{m, author = {Ng, A.}, title = {T}, school = {MIT}, address = {Cambridge}, year = 2001}",
    );
    assert_eq!(masters["thesisType"], json!("Master's thesis"));
    assert_eq!(masters["university"], json!("MIT"));
    assert_eq!(masters["place"], json!("Cambridge"));
    let biblatex = only_item("@thesis{t, title = {T}, type = {phdthesis}, institution = {ETH Zürich}}");
    assert_eq!(biblatex["thesisType"], json!("PhD thesis"));
    assert_eq!(biblatex["university"], json!("ETH Zürich"));
    let habil = only_item("@thesis{t, title = {T}, type = {Habilitation}, institution = {Uni}}");
    assert_eq!(habil["thesisType"], json!("Habilitation"));

    let report = only_item(
        "@techreport{r, author = {Roe, R.}, editor = {Poe, P.}, title = {T}, institution = {NASA}, \
         number = {TM-2020-1}, type = {Technical Memorandum}, year = 2020, pages = {1--30}, series = {NASA TM}}",
    );
    assert_eq!(report["itemType"], json!("report"));
    assert_eq!(report["institution"], json!("NASA"));
    assert_eq!(report["reportNumber"], json!("TM-2020-1"));
    assert_eq!(report["reportType"], json!("Technical Memorandum"));
    assert_eq!(report["seriesTitle"], json!("NASA TM"));
    assert_eq!(report["pages"], json!("1-30"));
    assert_eq!(report["creators"][1], person("editor", "P.", "Poe"));
    let biblatex_report = only_item("@report{r, title = {T}, type = {techreport}, institution = {CERN}}");
    assert_eq!(biblatex_report["reportType"], json!("Technical report"));

    let manuscript =
        only_item("@unpublished{u, author = {Doe, J.}, title = {Draft}, note = {In preparation}, year = 2024}");
    assert_eq!(manuscript["itemType"], json!("manuscript"));
    assert_eq!(manuscript["extra"], json!("Citation Key: u\nIn preparation"));
}

#[test]
fn patents_datasets_software_and_letters() {
    let patent = only_item(
        "@patent{p, author = {Tesla, Nikola}, title = {Electrical Transmission of Power}, number = {US 382,280}, \
         holder = {Tesla Electric Company}, date = {1888-05-01}, location = {US}, volume = 3, doi = {10.1/p}}",
    );
    assert_eq!(
        patent,
        json!({
            "itemType": "patent",
            "title": "Electrical Transmission of Power",
            "creators": [person("inventor", "Nikola", "Tesla")],
            "patentNumber": "US 382,280",
            "issueDate": "1888-05-01",
            "place": "US",
            "assignee": "Tesla Electric Company",
            "tags": [],
            "DOI": "10.1/p",
            "extra": "Citation Key: p",
        })
    );
    let dataset = only_item(
        "@dataset{d, author = {Roe, R.}, title = {Counts}, publisher = {Zenodo}, version = {1.2}, year = 2022, \
         doi = {10.5281/zenodo.1}}",
    );
    assert_eq!(dataset["repository"], json!("Zenodo"));
    assert_eq!(dataset["versionNumber"], json!("1.2"));
    assert_eq!(dataset["DOI"], json!("10.5281/zenodo.1"));
    let software = only_item(
        "@software{s, author = {Roe, R.}, title = {tool}, version = {2.0}, publisher = {ACME}, language = {en}, \
         year = 2023, url = {https://example.org/tool}}",
    );
    assert_eq!(software["itemType"], json!("computerProgram"));
    assert_eq!(software["creators"], json!([person("programmer", "R.", "Roe")]));
    assert_eq!(software["company"], json!("ACME"));
    assert_eq!(software["versionNumber"], json!("2.0"));
    assert!(software.get("language").is_none(), "computerProgram has no language field");
    let letter = only_item("@letter{l, author = {Darwin, Charles}, title = {To Hooker}, type = {Letter}, year = 1844}");
    assert_eq!(letter["letterType"], json!("Letter"));
}

#[test]
fn identifiers_go_to_extra_where_the_type_has_no_field() {
    let article = only_item(
        "@article{a, title = {T}, eprint = {arXiv:2101.00001}, eprinttype = {arxiv}, pmid = {123456}, \
         pmcid = {PMC7654321}}",
    );
    assert_eq!(article["extra"], json!("arXiv: 2101.00001\nPMID: 123456\nPMCID: PMC7654321\nCitation Key: a"));
    let pubmed = only_item("@article{a, title = {T}, eprint = {99}, eprinttype = {pubmed}}");
    assert_eq!(pubmed["extra"], json!("PMID: 99\nCitation Key: a"));
    // Zotero's schema gives every regular type a DOI field now, theses included.
    let thesis = only_item("@phdthesis{t, title = {T}, doi = {10.1/x}}");
    assert_eq!(thesis["DOI"], json!("10.1/x"));
    assert_eq!(thesis["extra"], json!("Citation Key: t"));
    let preprint = only_item(
        "@online{o, title = {T}, eprint = {2101.00001}, eprinttype = {arXiv}, doi = {10.48550/arXiv.2101.00001}}",
    );
    assert_eq!(preprint["itemType"], json!("preprint"));
    assert_eq!(preprint["DOI"], json!("10.48550/arXiv.2101.00001"));
}

#[test]
fn notes_and_unknown_fields() {
    let item = only_item(
        "@article{a, title = {T}, note = {First note}, addendum = {Also}, annotation = {Mine}, foo = {bar}, \
         howpublished = {Print}, urldate = {last week}}",
    );
    assert_eq!(item["extra"], json!("Citation Key: a\nFirst note\nMine\nAlso"));
    assert!(item.get("foo").is_none() && item.get("accessDate").is_none());
}
