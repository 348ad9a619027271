//! BibTeX and BibLaTeX: the text written, and what this crate's BibTeX importer reads back from it.

use super::*;

/// One item written in `format` and read back by the importer.
fn round_trip(format: Format, item: ZoteroObject) -> (String, Map<String, Value>) {
    let text = written(format, &[item]);
    let mut read = read_bibtex(&text);
    assert_eq!(read.len(), 1, "{text}");
    (text, read.remove(0).1)
}

fn titled(title: &str) -> ZoteroObject {
    article("ABCD2345", title, "2020", json!([person("Ann", "Lee")]))
}

/// Whether every brace of `value` has its partner, counting escaped ones too, as BibTeX does.
fn balanced(text: &str) -> bool {
    let mut depth: i64 = 0;
    for c in text.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            _ => {}
        }
        if depth < 0 {
            return false;
        }
    }
    depth == 0
}

#[test]
fn a_journal_article_in_bibtex() {
    let item = item(
        "ABCD2345",
        json!({
            "itemType": "journalArticle",
            "title": "Sleep and memory in DNA research",
            "creators": [person("Jane A.", "Smith"), person("Pieter", "van der Berg"), organisation("WHO Consortium")],
            "date": "2020-05-17",
            "publicationTitle": "Journal of Sleep Research",
            "journalAbbreviation": "J. Sleep Res.",
            "volume": "29",
            "issue": "3",
            "pages": "123-135",
            "ISSN": "0962-1105",
            "DOI": "10.1111/jsr.12345",
            "url": "https://example.com/a?b=1%20c#frag",
            "abstractNote": "First line.\n\nSecond paragraph.",
            "language": "en",
            "tags": [{ "tag": "sleep" }, { "tag": "memory", "type": 1 }],
            "extra": "PMID: 123",
        }),
    );
    let text = written(Format::BibTex, &[item]);
    assert_eq!(
        text,
        "@article{smith2020sleep,
  author = {Smith, Jane A. and van der Berg, Pieter and {WHO Consortium}},
  title = {Sleep and memory in {DNA} research},
  journal = {Journal of Sleep Research},
  year = {2020},
  month = may,
  volume = {29},
  number = {3},
  pages = {123--135},
  issn = {0962-1105},
  doi = {10.1111/jsr.12345},
  url = {https://example.com/a?b=1%20c#frag},
  abstract = {First line. Second paragraph.},
  keywords = {sleep, memory},
  language = {en}
}

"
    );
    let (key, data) = read_bibtex(&text).remove(0);
    assert_eq!(key, "smith2020sleep");
    assert_eq!(data["title"], "Sleep and memory in DNA research");
    assert_eq!(data["date"], "2020-05");
    assert_eq!(data["pages"], "123-135");
    assert_eq!(data["url"], "https://example.com/a?b=1%20c#frag");
    assert_eq!(
        data["creators"],
        json!([
            { "creatorType": "author", "firstName": "Jane A.", "lastName": "Smith" },
            { "creatorType": "author", "firstName": "Pieter", "lastName": "van der Berg" },
            { "creatorType": "author", "name": "WHO Consortium" },
        ])
    );
}

#[test]
fn the_same_article_in_biblatex() {
    let mut item = titled("Ångström, Łódź and Dvořák");
    item.data.insert("date".to_owned(), json!("2020-05-17"));
    item.data.insert("publicationTitle".to_owned(), json!("Zeitschrift für Physik"));
    item.data.insert("journalAbbreviation".to_owned(), json!("Z. Phys."));
    item.data.insert("language".to_owned(), json!("de"));
    item.data.insert("accessDate".to_owned(), json!("2021-02-03T04:05:06Z"));
    item.data.insert("url".to_owned(), json!("https://example.org/x"));
    let (text, data) = round_trip(Format::BibLaTex, item);
    assert_eq!(
        text,
        "@article{lee2020angstrom,
  author = {Lee, Ann},
  title = {Ångström, Łódź and Dvořák},
  journaltitle = {Zeitschrift für Physik},
  shortjournal = {Z. Phys.},
  date = {2020-05-17},
  url = {https://example.org/x},
  urldate = {2021-02-03},
  langid = {ngerman}
}

"
    );
    assert_eq!(data["title"], "Ångström, Łódź and Dvořák");
    assert_eq!(data["date"], "2020-05-17");
    assert_eq!(data["accessDate"], "2021-02-03");
    assert_eq!(data["journalAbbreviation"], "Z. Phys.");
}

#[test]
fn accents_become_latex_commands_in_bibtex_and_read_back() {
    let title = "Müller, Ångström, Łódź, Dvořák, Straße, Øresund, Íñigo, naïve, Ålesund, Şahin, Ģirts, ī";
    let mut item = titled(title);
    item.data.insert(
        "creators".to_owned(),
        json!([person("Jürgen", "Müller"), person("Antonín", "Dvořák"), person("Anders", "Ångström")]),
    );
    let (text, data) = round_trip(Format::BibTex, item);
    let title_line = text.lines().find(|line| line.starts_with("  title")).unwrap();
    assert!(title_line.is_ascii(), "{title_line}");
    for command in [
        "M{\\\"u}ller",
        "{\\AA}ngstr{\\\"o}m",
        "{\\L}{\\'o}d{\\'z}",
        "Dvo{\\v{r}}{\\'a}k",
        "Stra{\\ss}e",
        "{\\O}resund",
    ] {
        assert!(title_line.contains(command), "{command} in {title_line}");
    }
    assert!(title_line.contains("{\\'\\I}") || title_line.contains("{\\'I}"), "{title_line}");
    assert!(title_line.contains("na{\\\"\\i}ve"), "{title_line}");
    assert_eq!(data["title"], title);
    assert_eq!(
        data["creators"],
        json!([
            { "creatorType": "author", "firstName": "Jürgen", "lastName": "Müller" },
            { "creatorType": "author", "firstName": "Antonín", "lastName": "Dvořák" },
            { "creatorType": "author", "firstName": "Anders", "lastName": "Ångström" },
        ])
    );
    // A character LaTeX has no command for stays UTF-8, in both dialects.
    let (text, data) = round_trip(Format::BibTex, titled("Ελληνικά and 漢字"));
    assert!(text.contains("title = {Ελληνικά and 漢字}"), "{text}");
    assert_eq!(data["title"], "Ελληνικά and 漢字");
    let (text, _) = round_trip(Format::BibLaTex, titled("Müller"));
    assert!(text.contains("title = {Müller}"), "{text}");
}

#[test]
fn specials_are_escaped_in_both_dialects() {
    let title = r"50% & more_{x} #1 ~ ^ \ $5";
    for format in [Format::BibTex, Format::BibLaTex] {
        let (text, data) = round_trip(format, titled(title));
        assert!(
            text.contains(
                r"title = {50\% \& more\_\{x\} \#1 \textasciitilde{} \textasciicircum{} \textbackslash{} \$5}"
            ),
            "{text}"
        );
        assert_eq!(data["title"], title, "{format:?}");
    }
}

#[test]
fn braces_in_a_title_stay_balanced() {
    for title in ["A {nested {pair}} here", "An open { brace", "A close } brace", "} both {", "{{{"] {
        for format in [Format::BibTex, Format::BibLaTex] {
            let (text, data) = round_trip(format, titled(title));
            assert!(balanced(&text), "{text}");
            assert_eq!(data["title"], title, "{format:?}: {text}");
        }
    }
}

#[test]
fn dashes_and_quotes_are_kept_as_typed() {
    let title = "A--B, ``quoted'' and x---y – z — w";
    for format in [Format::BibTex, Format::BibLaTex] {
        let (_, data) = round_trip(format, titled(title));
        assert_eq!(data["title"], title, "{format:?}");
    }
}

#[test]
fn rich_text_and_acronyms_in_titles() {
    let title =
        "<i>E. coli</i> and H<sub>2</sub>O in <span class=\"nocase\">iPhone Users</span>: x<sup>2</sup> <b>bold</b>";
    let (text, data) = round_trip(Format::BibTex, titled(title));
    assert!(
        text.contains(
            "title = {\\textit{E. coli} and H\\textsubscript{2}O in {iPhone Users}: x\\textsuperscript{2} \\textbf{bold}}"
        ),
        "{text}"
    );
    assert_eq!(data["title"], "E. coli and H2O in iPhone Users: x2 bold");

    let (text, data) = round_trip(Format::BibTex, titled("DNA and mRNA on the iPhone, not Bayesian (NASA)"));
    assert!(text.contains("title = {{DNA} and {mRNA} on the {iPhone}, not Bayesian ({NASA})}"), "{text}");
    assert_eq!(data["title"], "DNA and mRNA on the iPhone, not Bayesian (NASA)");

    // A `<` that begins no tag is text, and the tags after it still count.
    let (text, data) = round_trip(Format::BibTex, titled("When a < b <i>in vivo</i>"));
    assert!(text.contains("title = {When a {\\textless} b \\textit{in vivo}}"), "{text}");
    assert_eq!(data["title"], "When a < b in vivo");

    // Markup that does not close, or closes nothing, still gives balanced braces.
    let (text, data) = round_trip(Format::BibTex, titled("<i>open and </b>stray"));
    assert!(balanced(&text), "{text}");
    assert_eq!(data["title"], "open and </b>stray");
}

#[test]
fn names_with_particles_suffixes_and_organisations() {
    let creators = json!([
        person("Pieter", "van der Berg"),
        person("Ludwig", "van Beethoven"),
        person("Martin Luther", "King, Jr."),
        organisation("Procter and Gamble"),
        organisation("Ministère de l'Éducation"),
        { "creatorType": "author", "firstName": "", "lastName": "Plato" },
        { "creatorType": "editor", "firstName": "Eve", "lastName": "Editor" },
    ]);
    let book = item("ABCD2345", json!({ "itemType": "book", "title": "Names", "creators": creators }));
    for format in [Format::BibTex, Format::BibLaTex] {
        let (text, data) = round_trip(format, book.clone());
        assert!(text.contains("{Procter and Gamble}"), "{text}");
        assert_eq!(
            data["creators"],
            json!([
                { "creatorType": "author", "firstName": "Pieter", "lastName": "van der Berg" },
                { "creatorType": "author", "firstName": "Ludwig", "lastName": "van Beethoven" },
                { "creatorType": "author", "firstName": "Martin Luther", "lastName": "King, Jr." },
                { "creatorType": "author", "name": "Procter and Gamble" },
                { "creatorType": "author", "name": "Ministère de l'Éducation" },
                { "creatorType": "author", "name": "Plato" },
                { "creatorType": "editor", "firstName": "Eve", "lastName": "Editor" },
            ]),
            "{format:?}: {text}"
        );
    }
}

#[test]
fn entry_types_by_item_type() {
    let cases = [
        ("journalArticle", "", "article", "article"),
        ("magazineArticle", "", "article", "article"),
        ("book", "", "book", "book"),
        ("bookSection", "", "incollection", "incollection"),
        ("conferencePaper", "", "inproceedings", "inproceedings"),
        ("thesis", "", "phdthesis", "thesis"),
        ("thesis", "Master's thesis", "mastersthesis", "thesis"),
        ("thesis", "MSc dissertation", "mastersthesis", "thesis"),
        ("thesis", "Doctoral dissertation", "phdthesis", "thesis"),
        ("report", "", "techreport", "report"),
        ("webpage", "", "misc", "online"),
        ("preprint", "", "misc", "online"),
        ("manuscript", "", "unpublished", "unpublished"),
        ("patent", "", "misc", "patent"),
        ("computerProgram", "", "misc", "software"),
        ("dataset", "", "misc", "dataset"),
        ("encyclopediaArticle", "", "misc", "inreference"),
        ("film", "", "misc", "misc"),
        ("document", "", "misc", "misc"),
    ];
    for (item_type, thesis_type, bibtex, biblatex) in cases {
        let item = item("ABCD2345", json!({ "itemType": item_type, "title": "T", "thesisType": thesis_type }));
        for (format, expected) in [(Format::BibTex, bibtex), (Format::BibLaTex, biblatex)] {
            let text = written(format, std::slice::from_ref(&item));
            assert!(
                text.starts_with(&format!("@{expected}{{anont,")),
                "{item_type} {thesis_type:?} {format:?}: {text}"
            );
        }
    }
}

#[test]
fn each_type_reads_back_as_itself() {
    let cases = [
        ("journalArticle", json!({ "publicationTitle": "Nature", "volume": "1", "issue": "2", "pages": "3-4" })),
        (
            "book",
            json!({ "publisher": "MIT Press", "place": "Cambridge, MA", "edition": "2", "ISBN": "978-0-262-03384-8" }),
        ),
        ("bookSection", json!({ "bookTitle": "Handbook of RNA", "publisher": "Springer", "pages": "10-20" })),
        ("conferencePaper", json!({ "proceedingsTitle": "Proceedings of NeurIPS", "conferenceName": "NeurIPS 2020" })),
        ("thesis", json!({ "university": "ETH Zürich", "thesisType": "PhD thesis" })),
        ("report", json!({ "institution": "RAND", "reportNumber": "TR-7", "reportType": "Technical report" })),
        ("webpage", json!({ "url": "https://example.org/page", "websiteTitle": "Example" })),
        ("manuscript", json!({})),
    ];
    for (item_type, fields) in cases {
        let mut data =
            json!({ "itemType": item_type, "title": "A title", "date": "2020", "creators": [person("Ann", "Lee")] });
        data.as_object_mut().unwrap().extend(fields.as_object().unwrap().clone());
        let original = item("ABCD2345", data.clone());
        for format in [Format::BibTex, Format::BibLaTex] {
            let (text, read) = round_trip(format, original.clone());
            assert_eq!(read["itemType"], item_type, "{format:?}: {text}");
            for (field, value) in fields.as_object().unwrap() {
                if field == "websiteTitle" || (field == "conferenceName" && format == Format::BibTex) {
                    continue;
                }
                assert_eq!(&read[field], value, "{item_type}.{field} in {format:?}: {text}");
            }
        }
    }
}

#[test]
fn arxiv_preprints_carry_their_eprint() {
    let preprint = item(
        "ABCD2345",
        json!({
            "itemType": "preprint",
            "title": "Attention is all you need",
            "creators": [person("Ashish", "Vaswani")],
            "date": "2017-06-12",
            "repository": "arXiv",
            "archiveID": "arXiv:1706.03762",
            "DOI": "10.48550/arXiv.1706.03762",
            "url": "http://arxiv.org/abs/1706.03762",
        }),
    );
    let (text, data) = round_trip(Format::BibTex, preprint.clone());
    assert!(text.contains("  eprint = {1706.03762},\n  archiveprefix = {arXiv},\n"), "{text}");
    assert!(text.contains("  howpublished = {arXiv},\n"), "{text}");
    assert_eq!(data["itemType"], "preprint");
    assert_eq!(data["archiveID"], "arXiv:1706.03762");
    let (text, data) = round_trip(Format::BibLaTex, preprint);
    assert!(text.starts_with("@online{vaswani2017attention,"), "{text}");
    assert!(text.contains("  eprint = {1706.03762},\n  eprinttype = {arxiv},\n"), "{text}");
    assert_eq!(data["itemType"], "preprint");
    assert_eq!(data["DOI"], "10.48550/arXiv.1706.03762");
    // Only the DOI says arXiv: the id comes from it.
    let article = item("K", json!({ "itemType": "journalArticle", "title": "T", "DOI": "10.48550/arXiv.2101.00001" }));
    assert!(written(Format::BibTex, &[article]).contains("eprint = {2101.00001}"));
}

#[test]
fn urls_and_dois_are_written_as_they_are() {
    let mut item = titled("T");
    item.data.insert("url".to_owned(), json!("https://example.org/a_b%20c#x~y&z={1}\\"));
    item.data.insert("DOI".to_owned(), json!("10.1002/(SICI)1097-4636(199707)36:1<1::AID-JBM1>3.0.CO;2-T"));
    for format in [Format::BibTex, Format::BibLaTex] {
        let (text, data) = round_trip(format, item.clone());
        assert!(text.contains("url = {https://example.org/a_b%20c#x~y&z=%7B1%7D%5C}"), "{text}");
        assert!(balanced(&text), "{text}");
        assert_eq!(data["url"], "https://example.org/a_b%20c#x~y&z=%7B1%7D%5C");
        assert_eq!(data["DOI"], "10.1002/(SICI)1097-4636(199707)36:1<1::AID-JBM1>3.0.CO;2-T");
    }
}

#[test]
fn empty_fields_are_left_out_and_entries_keep_their_order() {
    let items = [
        item("BBBB3333", json!({ "itemType": "book", "title": "Second", "publisher": "  ", "volume": "" })),
        item("AAAA2222", json!({ "itemType": "book", "title": "First" })),
    ];
    let keys = vec!["b".to_owned(), "a".to_owned()];
    assert_eq!(
        write(Format::BibTex, &items, &keys),
        "@book{b,\n  title = {Second}\n}\n\n@book{a,\n  title = {First}\n}\n\n"
    );
    assert_eq!(write(Format::BibTex, &[], &[]), "");
}
