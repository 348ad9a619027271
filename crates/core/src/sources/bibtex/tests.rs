//! BibTeX import: entries as Google Scholar, dblp, the ACM Digital Library, arXiv, Zotero / Better BibTeX and
//! JabRef export them, mapped to exact item data; then the syntax (macros, concatenation, delimiters), LaTeX,
//! names, every entry type, and the entries that cannot be read.
//!
//! The exported samples are written in each exporter's own layout (field order, indentation, bracing, key
//! scheme), taken from records published with those tools: dblp's `DBLP:conf/kdd/PlantBB20` and
//! `DBLP:conf/iclr/ChenLKWH19` (as quoted in READMEs on GitHub), arXiv's "Export BibTeX citation" of 1706.03762,
//! Google Scholar's "Cite → BibTeX" layout, the ACM DL's export of a DOI 10.1145 record, and JabRef's and Better
//! BibTeX's file layouts (`@Comment{jabref-meta: …}`, `langid`, `urldate`, `shortjournal`).

use serde_json::json;

use super::latex::{to_unicode, verbatim};
use super::names::{names, Name};
use super::*;

fn items(text: &str) -> Vec<Map<String, Value>> {
    parse_bibtex(text)
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

fn person(role: &str, first: &str, last: &str) -> Value {
    json!({ "creatorType": role, "firstName": first, "lastName": last })
}

// ---------------------------------------------------------------------------------------------------------------
// Exports of real tools

/// dblp: keys `DBLP:…`, names `First Last and` across lines, `{{KDD}}`-style protected acronyms, `B{\"{o}}hm`,
/// `crossref`, `timestamp`, `biburl`, `bibsource` (ignored).
const DBLP: &str = r#"@inproceedings{DBLP:conf/kdd/PlantBB20,
  author    = {Claudia Plant and
               Sonja Biedermann and
               Christian B{\"{o}}hm},
  title     = {Data Compression as a Comprehensive Framework for Graph Drawing and
               Representation Learning},
  booktitle = {{KDD} '20: The 26th {ACM} {SIGKDD} Conference on Knowledge Discovery
               and Data Mining, Virtual Event, CA, USA, August 23-27, 2020},
  pages     = {1212--1222},
  publisher = {{ACM}},
  year      = {2020},
  crossref  = {DBLP:conf/kdd/2020},
  url       = {https://dl.acm.org/doi/10.1145/3394486.3403174},
  doi       = {10.1145/3394486.3403174},
  timestamp = {Mon, 24 Aug 2020 14:13:33 +0200},
  biburl    = {https://dblp.org/rec/conf/kdd/PlantBB20.bib},
  bibsource = {dblp computer science bibliography, https://dblp.org}
}

@inproceedings{DBLP:conf/iclr/ChenLKWH19,
  author    = {Wei{-}Yu Chen and
               Yen{-}Cheng Liu and
               Zsolt Kira and
               Yu{-}Chiang Frank Wang and
               Jia{-}Bin Huang},
  title     = {A Closer Look at Few-shot Classification},
  booktitle = {7th International Conference on Learning Representations, {ICLR} 2019,
               New Orleans, LA, USA, May 6-9, 2019},
  year      = {2019},
  url       = {https://openreview.net/forum?id=HkxLXnAcFQ}
}
"#;

#[test]
fn dblp_conference_papers() {
    let entries = parse_bibtex(DBLP);
    assert_eq!(entries.len(), 2);
    assert_eq!(entries[0].key.as_deref(), Some("DBLP:conf/kdd/PlantBB20"));
    assert_eq!(entries[1].index, 2);
    let items = items(DBLP);
    assert_eq!(
        Value::Object(items[0].clone()),
        json!({
            "itemType": "conferencePaper",
            "title": "Data Compression as a Comprehensive Framework for Graph Drawing and Representation Learning",
            "creators": [
                person("author", "Claudia", "Plant"),
                person("author", "Sonja", "Biedermann"),
                person("author", "Christian", "Böhm"),
            ],
            "proceedingsTitle": "KDD '20: The 26th ACM SIGKDD Conference on Knowledge Discovery and Data Mining, \
                                 Virtual Event, CA, USA, August 23-27, 2020",
            "pages": "1212-1222",
            "date": "2020",
            "publisher": "ACM",
            "DOI": "10.1145/3394486.3403174",
            "url": "https://dl.acm.org/doi/10.1145/3394486.3403174",
            "tags": [],
            "extra": "Citation Key: DBLP:conf/kdd/PlantBB20",
        })
    );
    assert_eq!(
        items[1]["creators"],
        json!([
            person("author", "Wei-Yu", "Chen"),
            person("author", "Yen-Cheng", "Liu"),
            person("author", "Zsolt", "Kira"),
            person("author", "Yu-Chiang Frank", "Wang"),
            person("author", "Jia-Bin", "Huang"),
        ])
    );
    assert_eq!(
        items[1]["proceedingsTitle"],
        json!(
            "7th International Conference on Learning Representations, ICLR 2019, New Orleans, LA, USA, May 6-9, 2019"
        )
    );
}

/// arXiv's "Export BibTeX citation": `@misc` with `eprint`, `archivePrefix`, `primaryClass`.
const ARXIV: &str = "@misc{vaswani2017attention,
      title={Attention Is All You Need}, 
      author={Ashish Vaswani and Noam Shazeer and Niki Parmar and Jakob Uszkoreit and Llion Jones and Aidan N. Gomez and Lukasz Kaiser and Illia Polosukhin},
      year={2017},
      eprint={1706.03762},
      archivePrefix={arXiv},
      primaryClass={cs.CL},
      url={https://arxiv.org/abs/1706.03762}, 
}";

#[test]
fn an_arxiv_export_is_a_preprint() {
    let item = only_item(ARXIV);
    assert_eq!(item["itemType"], json!("preprint"));
    assert_eq!(item["title"], json!("Attention Is All You Need"));
    assert_eq!(item["creators"].as_array().map(Vec::len), Some(8));
    assert_eq!(item["creators"][5], person("author", "Aidan N.", "Gomez"));
    assert_eq!(item["repository"], json!("arXiv"));
    assert_eq!(item["archiveID"], json!("arXiv:1706.03762"));
    assert_eq!(item["date"], json!("2017"));
    assert_eq!(item["url"], json!("https://arxiv.org/abs/1706.03762"));
    assert_eq!(item["extra"], json!("Citation Key: vaswani2017attention"));
}

/// Google Scholar's "Cite → BibTeX": compact, `Last, First` names, `journal={arXiv preprint …}` for preprints,
/// `pages={…--…}`, `publisher`.
const SCHOLAR: &str = "@article{lecun2015deep,
  title={Deep learning},
  author={LeCun, Yann and Bengio, Yoshua and Hinton, Geoffrey},
  journal={nature},
  volume={521},
  number={7553},
  pages={436--444},
  year={2015},
  publisher={Nature Publishing Group UK London}
}

@book{goodfellow2016deep,
  title={Deep learning},
  author={Goodfellow, Ian and Bengio, Yoshua and Courville, Aaron},
  volume={1},
  number={2},
  year={2016},
  publisher={MIT press Cambridge}
}

@phdthesis{hinton1977relaxation,
  title={Relaxation and its role in vision},
  author={Hinton, Geoffrey E},
  year={1977},
  school={University of Edinburgh}
}
";

#[test]
fn google_scholar_exports() {
    let items = items(SCHOLAR);
    assert_eq!(
        Value::Object(items[0].clone()),
        json!({
            "itemType": "journalArticle",
            "title": "Deep learning",
            "creators": [
                person("author", "Yann", "LeCun"),
                person("author", "Yoshua", "Bengio"),
                person("author", "Geoffrey", "Hinton"),
            ],
            "publicationTitle": "nature",
            "publisher": "Nature Publishing Group UK London",
            "volume": "521",
            "issue": "7553",
            "pages": "436-444",
            "date": "2015",
            "tags": [],
            "extra": "Citation Key: lecun2015deep",
        })
    );
    assert_eq!(
        Value::Object(items[1].clone()),
        json!({
            "itemType": "book",
            "title": "Deep learning",
            "creators": [
                person("author", "Ian", "Goodfellow"),
                person("author", "Yoshua", "Bengio"),
                person("author", "Aaron", "Courville"),
            ],
            "volume": "1",
            "seriesNumber": "2",
            "date": "2016",
            "publisher": "MIT press Cambridge",
            "tags": [],
            "extra": "Citation Key: goodfellow2016deep",
        })
    );
    assert_eq!(items[2]["itemType"], json!("thesis"));
    assert_eq!(items[2]["thesisType"], json!("PhD thesis"));
    assert_eq!(items[2]["university"], json!("University of Edinburgh"));
    assert_eq!(items[2]["creators"], json!([person("author", "Geoffrey E", "Hinton")]));
}

/// The ACM Digital Library's export: `@inproceedings` with `isbn`, `address`, `doi`, `abstract`, `booktitle`,
/// `numpages`, `keywords`, `location`, `series`, month as a macro.
const ACM: &str = "@inproceedings{10.1145/3394486.3403174,
author = {Plant, Claudia and Biedermann, Sonja and B\\\"{o}hm, Christian},
title = {Data Compression as a Comprehensive Framework for Graph Drawing and Representation Learning},
year = {2020},
isbn = {9781450379984},
publisher = {Association for Computing Machinery},
address = {New York, NY, USA},
url = {https://doi.org/10.1145/3394486.3403174},
doi = {10.1145/3394486.3403174},
abstract = {Embedding a graph into feature space is a promising approach.},
booktitle = {Proceedings of the 26th ACM SIGKDD International Conference on Knowledge Discovery \\& Data Mining},
pages = {1212–1222},
numpages = {11},
keywords = {graph drawing, minimum description length, data compression},
location = {Virtual Event, CA, USA},
series = {KDD '20}
}";

#[test]
fn an_acm_digital_library_export() {
    assert_eq!(
        only_item(ACM),
        json!({
            "itemType": "conferencePaper",
            "title": "Data Compression as a Comprehensive Framework for Graph Drawing and Representation Learning",
            "creators": [
                person("author", "Claudia", "Plant"),
                person("author", "Sonja", "Biedermann"),
                person("author", "Christian", "Böhm"),
            ],
            "abstractNote": "Embedding a graph into feature space is a promising approach.",
            "proceedingsTitle": "Proceedings of the 26th ACM SIGKDD International Conference on Knowledge Discovery & Data Mining",
            "series": "KDD '20",
            "pages": "1212-1222",
            "date": "2020",
            "publisher": "Association for Computing Machinery",
            "place": "New York, NY, USA",
            "ISBN": "9781450379984",
            "DOI": "10.1145/3394486.3403174",
            "url": "https://doi.org/10.1145/3394486.3403174",
            "tags": [
                { "tag": "graph drawing" },
                { "tag": "minimum description length" },
                { "tag": "data compression" },
            ],
            "extra": "Citation Key: 10.1145/3394486.3403174",
        })
    );
}

/// Zotero / Better BibLaTeX: `journaltitle`, `shortjournal`, `date`, `langid`, `urldate`, `eprinttype`,
/// `file` (ignored), `keywords` with `;`? (Better BibTeX writes `,`), and `annotation`.
const BETTER_BIBLATEX: &str = "
@article{smithSleepMemoryConsolidation2020,
  title = {Sleep and Memory Consolidation in Adolescents},
  subtitle = {A Longitudinal Study},
  author = {Smith, Jane A. and {van der Berg}, Pieter and {World Health Organization}},
  date = {2020-05-17},
  journaltitle = {Journal of Sleep Research},
  shortjournal = {J. Sleep Res.},
  volume = {29},
  number = {3},
  pages = {e12345},
  issn = {0962-1105},
  doi = {10.1111/jsr.12345},
  url = {https://onlinelibrary.wiley.com/doi/abs/10.1111/jsr.12345},
  urldate = {2021-01-04},
  abstract = {We studied sleep.},
  langid = {english},
  keywords = {memory,sleep,adolescence},
  annotation = {Read for the review.},
  file = {/home/jane/Zotero/storage/ABCD1234/Smith - 2020.pdf}
}
";

#[test]
fn a_better_biblatex_article() {
    assert_eq!(
        only_item(BETTER_BIBLATEX),
        json!({
            "itemType": "journalArticle",
            "title": "Sleep and Memory Consolidation in Adolescents: A Longitudinal Study",
            "creators": [
                person("author", "Jane A.", "Smith"),
                person("author", "Pieter", "van der Berg"),
                { "creatorType": "author", "name": "World Health Organization" },
            ],
            "abstractNote": "We studied sleep.",
            "publicationTitle": "Journal of Sleep Research",
            "journalAbbreviation": "J. Sleep Res.",
            "volume": "29",
            "issue": "3",
            "pages": "e12345",
            "date": "2020-05-17",
            "ISSN": "0962-1105",
            "DOI": "10.1111/jsr.12345",
            "url": "https://onlinelibrary.wiley.com/doi/abs/10.1111/jsr.12345",
            "accessDate": "2021-01-04",
            "language": "english",
            "tags": [{ "tag": "memory" }, { "tag": "sleep" }, { "tag": "adolescence" }],
            "extra": "Citation Key: smithSleepMemoryConsolidation2020\nRead for the review.",
        })
    );
}

/// JabRef: capitalised types and fields (`@Article`, `Author`), a preamble, `@String`s and the metadata comment.
const JABREF: &str = "% Encoding: UTF-8

@Preamble{ \"\\newcommand{\\noopsort}[1]{} \" }

@String{jsr = {Journal of Sleep Research}}

@Article{Doe2019,
  Author    = {Doe, John and M{\\\"u}ller, J{\\\"o}rg},
  Title     = {On {B}ayesian Sleep},
  Journal   = jsr,
  Year      = 2019,
  Month     = mar,
  Keywords  = {sleep; bayes},
}

@Comment{jabref-meta: databaseType:bibtex;}
";

#[test]
fn a_jabref_file() {
    let item = only_item(JABREF);
    assert_eq!(item["itemType"], json!("journalArticle"));
    assert_eq!(item["title"], json!("On Bayesian Sleep"));
    assert_eq!(item["publicationTitle"], json!("Journal of Sleep Research"));
    assert_eq!(item["date"], json!("2019-03"));
    assert_eq!(item["creators"], json!([person("author", "John", "Doe"), person("author", "Jörg", "Müller")]));
    assert_eq!(item["tags"], json!([{ "tag": "sleep" }, { "tag": "bayes" }]));
}

// ---------------------------------------------------------------------------------------------------------------
// Types

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

// ---------------------------------------------------------------------------------------------------------------
// Syntax

#[test]
fn string_macros_concatenation_and_months() {
    let text = r#"
@string{ieee = "IEEE"}
@STRING(tpami = ieee # " Transactions on Pattern Analysis")
@string{pre = {Proc. }}
@article{k,
  journal = tpami # { and Machine Intelligence},
  booktitle = pre # "of " # "X",
  title = "A " # {{"}Quoted{"}} # " title",
  month = dec,
  year = 1999,
  volume = 21 # {b},
  publisher = undefinedmacro,
}
"#;
    let item = only_item(text);
    assert_eq!(item["publicationTitle"], json!("IEEE Transactions on Pattern Analysis and Machine Intelligence"));
    assert_eq!(item["title"], json!("A \"Quoted\" title"));
    assert_eq!(item["date"], json!("1999-12"));
    assert_eq!(item["volume"], json!("21b"));
    assert_eq!(item["publisher"], json!("undefinedmacro"), "journal articles have a publisher in Zotero's schema");
    let doc = only_item("@misc{k, publisher = undefinedMacro}");
    assert_eq!(doc["publisher"], json!("undefinedMacro"));
    // A @string may redefine a month.
    let redefined = only_item("@string{may = {5}}@article{k, year = 2001, month = may}");
    assert_eq!(redefined["date"], json!("2001-05"));
}

#[test]
fn parentheses_delimit_entries_too() {
    let item = only_item("@article(key, title = {With (parentheses) inside}, year = {2001})");
    assert_eq!(item["title"], json!("With (parentheses) inside"));
    assert_eq!(item["extra"], json!("Citation Key: key"));
}

#[test]
fn nested_braces_and_escapes() {
    let item =
        only_item(r#"@article{k, title = {The {{DNA}} of {\em {C}ats} \{not\} 100\% \& more}, note = "M\"uller"}"#);
    assert_eq!(item["title"], json!("The DNA of Cats {not} 100% & more"));
    assert_eq!(item["extra"], json!("Citation Key: k\nMüller"));
}

#[test]
fn keys_fields_and_text_outside_entries() {
    let entries = parse_bibtex(
        "Some words before. @ signs in prose are fine: me@example.org.\n\
         @article{title = {No key}}\n@book{, title = {Empty key}}\n@misc{onlykey}\n\
         @article { spaced , title = {Spaced} , , }",
    );
    let keys: Vec<Option<&str>> = entries.iter().map(|entry| entry.key.as_deref()).collect();
    assert_eq!(keys, [None, None, Some("onlykey"), Some("spaced")]);
    let titles: Vec<Option<&Value>> =
        entries.iter().map(|entry| entry.outcome.as_ref().ok().and_then(|item| item.get("title"))).collect();
    assert_eq!(titles, [Some(&json!("No key")), Some(&json!("Empty key")), None, Some(&json!("Spaced"))]);
    assert!(entries[0].outcome.as_ref().is_ok_and(|item| item.get("extra").is_none()));
}

#[test]
fn keys_are_trimmed_of_any_white_space() {
    // Found by the fuzzer: a vertical tab is no ASCII white space to Rust, so it ended up in the key.
    let entries = parse_bibtex("@misc{\u{a0}key\u{b}, title = {T}}\n@misc{\u{b}, title = {U}}");
    assert_eq!(entries[0].key.as_deref(), Some("key"));
    assert_eq!(entries[1].key, None);
    assert!(entries[1].outcome.as_ref().is_ok_and(|item| item.get("extra").is_none()));
}

#[test]
fn a_field_given_twice_keeps_the_first() {
    let item = only_item("@article{k, title = {First}, TITLE = {Second}}");
    assert_eq!(item["title"], json!("First"));
}

#[test]
fn crlf_bom_and_empty_input() {
    let item = only_item("\u{feff}@article{k,\r\n  title = {Line\r\n  two},\r\n  year = 2020\r\n}\r\n");
    assert_eq!(item["title"], json!("Line two"));
    assert!(parse_bibtex("").is_empty());
    assert!(parse_bibtex("\u{feff}\r\n% only a comment\r\n").is_empty());
    assert!(parse_bibtex("@comment{anything @article{x, title={y}} here}").is_empty());
}

// ---------------------------------------------------------------------------------------------------------------
// Errors and recovery

#[test]
fn a_malformed_entry_between_two_good_ones() {
    let text = "@article{good1,\n  title = {One}\n}\n\n@article{bad,\n  title = {Two,\n  author = {X}\n\n@book{good2,\n  title = {Three}\n}\n";
    let entries = parse_bibtex(text);
    assert_eq!(entries.len(), 3);
    assert_eq!(entries[0].outcome.as_ref().ok().and_then(|item| item.get("title")), Some(&json!("One")));
    assert_eq!(entries[1].key.as_deref(), Some("bad"));
    let error = entries[1].outcome.clone().err();
    assert_eq!(
        error,
        Some(BibError::Unterminated { line: 5, what: "entry", key: Some("bad".to_owned()), next_entry_line: Some(9) })
    );
    let message = error.map(|error| error.to_string()).unwrap_or_default();
    assert!(message.contains("line 5") && message.contains("line 9") && message.contains("`bad`"), "{message}");
    assert_eq!(entries[2].index, 3);
    assert_eq!(entries[2].outcome.as_ref().ok().and_then(|item| item.get("title")), Some(&json!("Three")));
}

#[test]
fn syntax_errors_name_their_line_and_reading_goes_on() {
    let text = "@article{a,\n  title = {One}\n  year = 2000\n}\n@article{b, title {Two}}\n@article{c, title = }\n\
                @article{d, title = {Four}}";
    let entries = parse_bibtex(text);
    assert_eq!(entries.len(), 4);
    match &entries[0].outcome {
        Err(BibError::Syntax { line: 3, entry_line: 1, expected, found, .. }) => {
            assert!(expected.contains("`,`"), "{expected}");
            assert_eq!(found, "`y`");
        }
        other => panic!("{other:?}"),
    }
    let message = entries[0].outcome.clone().err().map(|error| error.to_string()).unwrap_or_default();
    assert!(message.starts_with("Line 3, in the BibTeX entry `a` starting on line 1: expected `,`"), "{message}");
    assert!(matches!(&entries[1].outcome, Err(BibError::Syntax { line: 5, expected, .. }) if expected.contains("`=`")));
    assert!(
        matches!(&entries[2].outcome, Err(BibError::Syntax { line: 6, expected, .. }) if expected.contains("a value"))
    );
    assert_eq!(entries[3].outcome.as_ref().ok().and_then(|item| item.get("title")), Some(&json!("Four")));
}

#[test]
fn an_entry_cut_short_at_the_end() {
    let entries = parse_bibtex("@article{ok, title = {A}}\n\n@article{cut, title = {B");
    assert_eq!(
        entries[1].outcome,
        Err(BibError::Unterminated { line: 3, what: "entry", key: Some("cut".to_owned()), next_entry_line: None })
    );
    assert!(entries[1].outcome.clone().err().is_some_and(|error| error.to_string().contains("the end of the text")));
    let quoted = parse_bibtex("@article{q, title = \"open\n");
    assert!(matches!(quoted[0].outcome, Err(BibError::Unterminated { line: 1, .. })));
    let stray = parse_bibtex("@article{q, title = \"a}b\"}");
    assert!(matches!(&stray[0].outcome, Err(BibError::Syntax { expected, .. }) if expected.contains("`\"`")));
}

#[test]
fn a_broken_string_is_reported_and_the_entries_still_read() {
    let entries = parse_bibtex("@string{x {X}}\n@article{k, title = {T}}");
    assert_eq!(entries.len(), 2);
    assert_eq!(entries[0].key, None);
    let message = entries[0].outcome.clone().err().map(|error| error.to_string()).unwrap_or_default();
    assert!(message.contains("@string") && message.contains("line 1"), "{message}");
    assert!(entries[1].outcome.is_ok());
}

#[test]
fn limits() {
    let big = "x".repeat(MAX_TEXT_BYTES + 1);
    let entries = parse_bibtex(&big);
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0].outcome, Err(BibError::TextTooLarge { bytes: MAX_TEXT_BYTES + 1, limit: MAX_TEXT_BYTES }));

    let many = "@misc{k, title = {t}}\n".repeat(MAX_ENTRIES + 3);
    let entries = parse_bibtex(&many);
    assert_eq!(entries.len(), MAX_ENTRIES + 1);
    assert_eq!(
        entries[MAX_ENTRIES].outcome,
        Err(BibError::TooManyEntries { line: MAX_ENTRIES + 1, limit: MAX_ENTRIES })
    );

    let long =
        format!("@article{{k, abstract = {{{}}}}}\n@article{{ok, title = {{T}}}}", "a".repeat(MAX_VALUE_BYTES + 1));
    let entries = parse_bibtex(&long);
    assert!(matches!(&entries[0].outcome, Err(BibError::ValueTooLong { field, .. }) if field == "abstract"));
    assert!(entries[1].outcome.is_ok());

    // Macros that double at each step would reach 2^40 bytes: the budget stops them.
    let mut doubling = String::from("@string{m0 = {aaaaaaaaaaaaaaaa}}\n");
    for level in 1..=40 {
        doubling.push_str(&format!("@string{{m{level} = m{prev} # m{prev}}}\n", prev = level - 1));
    }
    doubling.push_str("@article{k, title = m40}\n");
    let entries = parse_bibtex(&doubling);
    assert!(entries.iter().any(|entry| matches!(entry.outcome, Err(BibError::ValueTooLong { .. }))));
    assert!(entries.len() < 45);
}

#[test]
fn hostile_texts_take_linear_time() {
    // Each of these was quadratic in a first draft; at the text limit they must finish at once.
    let comments = "@comment{".repeat(MAX_TEXT_BYTES / 9);
    assert!(parse_bibtex(&comments).is_empty());
    let unclosed_comment = "@comment{ {\n@article{k, title = {T}}\n";
    assert_eq!(only_item(unclosed_comment)["title"], json!("T"));

    let mut many_fields = String::from("@misc{k");
    for field in 0..150_000 {
        many_fields.push_str(&format!(",f{field}=1"));
    }
    many_fields.push_str(", title = {T}}");
    assert!(many_fields.len() < MAX_TEXT_BYTES);
    assert_eq!(only_item(&many_fields)["title"], json!("T"));

    let keywords: Vec<String> = (0..7_000).map(|n| format!("k{n}")).collect();
    let item = only_item(&format!("@misc{{k, keywords = {{{}, k1}}}}", keywords.join(", ")));
    assert_eq!(item["tags"].as_array().map(Vec::len), Some(7_000));
}

#[test]
fn deep_nesting_costs_no_stack() {
    // As deep as a value may be long.
    let depth = 30_000;
    let text = format!("@article{{k, title = {{{}x{}}}}}", "{".repeat(depth), "}".repeat(depth));
    assert_eq!(only_item(&text)["title"], json!("x"));
    let depth = 15_000;
    let accents = format!("@article{{k, title = {{{}o{}}}}}", "\\\"{".repeat(depth), "}".repeat(depth));
    assert_eq!(only_item(&accents)["title"], json!("ö"));
}

// ---------------------------------------------------------------------------------------------------------------
// LaTeX, dates, pages, names

#[test]
fn latex_accents_and_symbols() {
    let cases = [
        (r#"{\"o}"#, "ö"),
        (r#"\"{o}"#, "ö"),
        (r#"\"o"#, "ö"),
        (r"\'e", "é"),
        (r"\`a", "à"),
        (r"\^{o}", "ô"),
        (r"\~n", "ñ"),
        (r"\c{c}", "ç"),
        (r"\c c", "ç"),
        (r"\v{s}", "š"),
        (r"\v{Z}", "Ž"),
        (r"\H{o}", "ő"),
        (r"\k{a}", "ą"),
        (r"\={a}", "ā"),
        (r"\.{Z}", "Ż"),
        (r"\u{g}", "ğ"),
        (r"\r{u}", "ů"),
        (r"\'{\i}", "í"),
        (r"\'\i", "í"),
        (r"\v{q}", "q\u{30c}"),
        (r#"\"{}"#, "\u{308}"),
        (r"Stra\ss e", "Straße"),
        (r"{\o}re", "øre"),
        (r#"\AA{}ngstr\"{o}m"#, "Ångström"),
        (r"{\ae}{\OE}", "æŒ"),
        (r"\L{}\'od\'z", "Łódź"),
        (r"1--2, a---b", "1–2, a—b"),
        (r"A~B", "A B"),
        (r"\& \% \_ \$ \# \{\}", "& % _ $ # {}"),
        (r"{DNA} and {RNA}", "DNA and RNA"),
        (r"\textit{E. coli} \emph{in} \textbf{vivo}", "E. coli in vivo"),
        (r"\textsuperscript{2}", "2"),
        (r"$O(n \log n)$ time", "$O(n \\log n)$ time"),
        (r"costs \$5", "costs $5"),
        ("``quoted''", "“quoted”"),
        (r"\href{https://x.org}{the site}", "the site"),
        (r"\LaTeX\ and \TeX{}", "LaTeX and TeX"),
        (r"a\\b", "a b"),
        ("  spread \n\t out  ", "spread out"),
        (r"\unknown{kept}", "kept"),
        (r"end\", "end"),
        (r#"\"{\"{o}}"#, "ö"),
    ];
    for (raw, expected) in cases {
        assert_eq!(to_unicode(raw), expected, "{raw}");
    }
    assert_eq!(verbatim(r"https://x.org/a\_b{c}\%20"), "https://x.org/a_bc%20");
}

#[test]
fn dates_from_year_month_and_date() {
    let date_of = |fields: &str| only_item(&format!("@article{{k, {fields}}}")).get("date").cloned();
    assert_eq!(date_of("year = 2020, month = {May}"), Some(json!("2020-05")));
    assert_eq!(date_of("year = 2020, month = 5, day = 7"), Some(json!("2020-05-07")));
    assert_eq!(date_of("year = 2020, month = {Sept.}"), Some(json!("2020-09")));
    assert_eq!(date_of("year = 2020, month = {Spring}"), Some(json!("Spring 2020")));
    assert_eq!(date_of("year = 2020, month = jul # {--} # aug"), Some(json!("July–August 2020")));
    assert_eq!(date_of("year = {in press}"), Some(json!("in press")));
    assert_eq!(date_of("date = {2019-03}"), Some(json!("2019-03")));
    assert_eq!(date_of("date = {2019-03-01/2019-03-05}"), Some(json!("2019-03-01")));
    assert_eq!(date_of("date = {2019-03-01/2019-03-05}, year = 1900"), Some(json!("2019-03-01")));
    assert_eq!(date_of("date = {ca. 1850}"), Some(json!("ca. 1850")));
    assert_eq!(date_of("month = may"), None);
}

#[test]
fn pages_use_a_plain_hyphen() {
    assert_eq!(pages("12–34"), "12-34");
    assert_eq!(pages("12 - 34"), "12-34");
    assert_eq!(pages("12-34, 40—42"), "12-34, 40-42");
    assert_eq!(pages("e12345"), "e12345");
}

#[test]
fn names_in_every_form() {
    let person = |first: &str, last: &str| Name::Person { first: first.to_owned(), last: last.to_owned() };
    assert_eq!(names("Donald E. Knuth"), [person("Donald E.", "Knuth")]);
    assert_eq!(names("Knuth, Donald E."), [person("Donald E.", "Knuth")]);
    assert_eq!(names("Ludwig van Beethoven"), [person("Ludwig", "van Beethoven")]);
    assert_eq!(names("Jean de La Fontaine"), [person("Jean", "de La Fontaine")]);
    assert_eq!(names("van Beethoven, Ludwig"), [person("Ludwig", "van Beethoven")]);
    assert_eq!(names("King, Jr, Martin Luther"), [person("Martin Luther, Jr", "King")]);
    assert_eq!(names("{World Health Organization}"), [Name::Single("World Health Organization".to_owned())]);
    assert_eq!(names("{Barnes and Noble}"), [Name::Single("Barnes and Noble".to_owned())]);
    assert_eq!(names("Aristotle"), [Name::Single("Aristotle".to_owned())]);
    assert_eq!(names("D.~E.~Knuth"), [person("D. E.", "Knuth")]);
    assert_eq!(names("{\\\"O}zt{\\\"u}rk, Ay{\\c{s}}e"), [person("Ayşe", "Öztürk")]);
    assert_eq!(names("Jane Doe and others"), [person("Jane", "Doe")]);
    assert_eq!(
        names("A. Smith AND B. Jones\nand\tC. Brown"),
        [person("A.", "Smith"), person("B.", "Jones"), person("C.", "Brown")]
    );
    assert_eq!(names("Alexandra Anderson"), [person("Alexandra", "Anderson")]);
    assert_eq!(names("Doe, "), [Name::Single("Doe".to_owned())]);
    assert_eq!(names(" and and "), []);
}
