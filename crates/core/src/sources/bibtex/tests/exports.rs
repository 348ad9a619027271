//! Entries as real tools export them, mapped to exact item data.

use super::*;

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
