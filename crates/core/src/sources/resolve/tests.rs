//! The resolver against recorded answers of each API (fixtures/README.md says where each came from): the mapping
//! of every source field by field, the requests sent, and each way a lookup can fail.

use std::rc::Rc;

use async_trait::async_trait;
use serde_json::json;

use super::*;
use crate::platform::{HttpError, HttpRequest, HttpResponse};
use crate::sources::detect;
use crate::testing::{ManualClock, StubHttp};

fn answer(status: u16, body: &str) -> Result<HttpResponse, HttpError> {
    Ok(http::Response::builder().status(status).body(body.as_bytes().to_vec()).unwrap())
}

fn router() -> Rc<StubHttp> {
    StubHttp::new(|request| {
        let url = request.uri().to_string();
        let routes: &[(&str, u16, &str)] = &[
            ("https://api.crossref.org/works/10.7554/elife.01567", 200, include_str!("fixtures/crossref-journal-article-elife.json")),
            ("https://api.crossref.org/works/10.1371/journal.pone.0000030", 200, include_str!("fixtures/crossref-journal-article-plos.json")),
            ("https://api.crossref.org/works/10.1007/978-3-662-46370-3_13", 200, include_str!("fixtures/crossref-book-chapter.json")),
            ("https://api.crossref.org/works/10.1109/iccv.2007.4408927", 200, include_str!("fixtures/crossref-proceedings-article.json")),
            ("https://api.crossref.org/works/10.1017/9781108348843", 200, include_str!("fixtures/crossref-monograph.json")),
            ("https://api.crossref.org/works/10.1101/2020.12.01.406702", 200, include_str!("fixtures/crossref-posted-content.json")),
            ("https://api.crossref.org/works/10.1016/s0140-6736(97)11096-0", 200, include_str!("fixtures/crossref-retracted-wakefield.json")),
            ("https://api.crossref.org/works/10.1101/097196", 200, include_str!("fixtures/crossref-preprint-with-published-version.json")),
            ("https://api.crossref.org/works/10.1038/ng.3834", 200, include_str!("fixtures/crossref-article-with-preprint.json")),
            ("https://api.crossref.org/works/10.1371/journal.pone.0033693", 200, include_str!("fixtures/crossref-corrected-plos.json")),
            ("https://api.crossref.org/works?query.bibliographic=", 200, include_str!("fixtures/crossref-bibliographic-cermine.json")),
            ("https://api.crossref.org/works/", 404, include_str!("fixtures/crossref-not-found.txt")),
            ("https://api.datacite.org/dois/10.5061/dryad.8515", 200, include_str!("fixtures/datacite-dataset.json")),
            ("https://api.datacite.org/dois/", 404, include_str!("fixtures/datacite-not-found.json")),
            ("https://export.arxiv.org/api/query?id_list=2206.06921", 200, include_str!("fixtures/arxiv-2206.06921.xml")),
            ("https://export.arxiv.org/api/query?id_list=hep-ex/0307015", 200, include_str!("fixtures/arxiv-hep-ex-0307015.xml")),
            ("https://export.arxiv.org/api/query?id_list=1201.56789", 200, include_str!("fixtures/arxiv-empty.xml")),
            ("https://export.arxiv.org/api/query?id_list=1234.12345", 200, include_str!("fixtures/arxiv-error.xml")),
            ("https://openlibrary.org/api/books?bibkeys=ISBN:9780306406157", 200, include_str!("fixtures/openlibrary-empty.json")),
            ("https://openlibrary.org/api/books?bibkeys=ISBN:9780980200447", 200, include_str!("fixtures/openlibrary-9780980200447.json")),
            ("https://eutils.ncbi.nlm.nih.gov/entrez/eutils/efetch.fcgi?db=pubmed&id=30108519", 200, include_str!("fixtures/pubmed-efetch-30108519.xml")),
            ("https://eutils.ncbi.nlm.nih.gov/entrez/eutils/elink.fcgi?dbfrom=pmc&db=pubmed&linkname=pmc_pubmed&id=6079548", 200, include_str!("fixtures/pmc-elink-6079548.json")),
            ("https://api.openalex.org/works/doi:10.1371/journal.pone.0000030", 200, include_str!("fixtures/openalex-work-with-pdf.json")),
            ("https://api.openalex.org/works/doi:10.7554/elife.01567", 200, include_str!("fixtures/openalex-work-without-pdf.json")),
            ("https://api.openalex.org/", 404, include_str!("fixtures/datacite-not-found.json")),
        ];
        let (_, status, body) = routes.iter().find(|(prefix, _, _)| url.starts_with(prefix)).expect("a route");
        answer(*status, body)
    })
}

fn settings() -> SourceSettings {
    SourceSettings { user_agent: "zotero-mcp-test/1".into(), ..SourceSettings::default() }
}

/// The record, and for a DOI the open-access PDF asked for after it, as an import does for an item it creates.
async fn lookup(http: &StubHttp, text: &str) -> Result<Reference, ResolveError> {
    let id = detect(text).expect("a valid identifier");
    let clock = ManualClock::at(0);
    let mut reference = resolve(http, clock.as_ref(), &id, &settings()).await?;
    if let Identifier::Doi(doi) = &id {
        reference.pdf_url = open_access_pdf(http, clock.as_ref(), doi, &settings()).await;
    }
    Ok(reference)
}

async fn found(text: &str) -> Reference {
    let http = router();
    match lookup(&http, text).await {
        Ok(reference) => reference,
        Err(error) => panic!("{text}: {error}"),
    }
}

/// The record without its abstract, which the test checks on its own.
fn without_abstract(reference: &Reference) -> (Value, String) {
    let mut data = reference.data.clone();
    let abstract_note = data.remove("abstractNote").and_then(|value| value.as_str().map(str::to_owned));
    (Value::Object(data), abstract_note.unwrap_or_default())
}

fn urls(http: &StubHttp) -> Vec<String> {
    http.requests().iter().map(|request| request.uri().to_string()).collect()
}

// --- CrossRef -------------------------------------------------------------------------------------------------

#[tokio::test]
async fn a_crossref_journal_article_with_a_jats_abstract() {
    let reference = found("10.7554/elife.01567").await;
    assert_eq!(reference.source, Source::CrossRef);
    assert_eq!(reference.item_type(), "journalArticle");
    let (data, abstract_note) = without_abstract(&reference);
    assert_eq!(
        data,
        json!({
            "itemType": "journalArticle",
            "title": "Automated quantitative histology reveals vascular morphodynamics during Arabidopsis hypocotyl secondary growth",
            "creators": [
                { "creatorType": "author", "firstName": "Martial", "lastName": "Sankar" },
                { "creatorType": "author", "firstName": "Kaisa", "lastName": "Nieminen" },
                { "creatorType": "author", "firstName": "Laura", "lastName": "Ragni" },
                { "creatorType": "author", "firstName": "Ioannis", "lastName": "Xenarios" },
                { "creatorType": "author", "firstName": "Christian S", "lastName": "Hardtke" },
            ],
            "publicationTitle": "eLife",
            // Zotero's schema gives journal articles a publisher field now.
            "publisher": "eLife Sciences Publications, Ltd",
            "date": "2014-02-11",
            "volume": "3",
            "DOI": "10.7554/elife.01567",
            "ISSN": "2050-084X",
            "url": "https://elifesciences.org/articles/01567",
            "language": "en",
        })
    );
    // The JATS `<jats:title>Abstract</jats:title>` heading and the tags are gone; the text is whole.
    assert!(abstract_note.starts_with("Among various advantages, their small size makes model organisms preferred"));
    assert!(abstract_note.ends_with("for example equidistant phloem pole formation."));
    assert!(!abstract_note.contains('<') && !abstract_note.contains("jats"), "{abstract_note}");
    // OpenAlex has no PDF for it: best_oa_location.pdf_url is null and oa_url a landing page.
    assert_eq!(reference.pdf_url, None);
}

#[tokio::test]
async fn a_crossref_journal_article_with_an_editor_and_an_open_access_pdf() {
    let reference = found("10.1371/journal.pone.0000030").await;
    assert_eq!(
        Value::Object(reference.data.clone()),
        json!({
            "itemType": "journalArticle",
            "title": "Triose Phosphate Isomerase Deficiency Is Caused by Altered Dimerization–Not Catalytic Inactivity–of the Mutant Enzymes",
            "creators": [
                { "creatorType": "author", "firstName": "Markus", "lastName": "Ralser" },
                { "creatorType": "author", "firstName": "Gino", "lastName": "Heeren" },
                { "creatorType": "author", "firstName": "Michael", "lastName": "Breitenbach" },
                { "creatorType": "author", "firstName": "Hans", "lastName": "Lehrach" },
                { "creatorType": "author", "firstName": "Sylvia", "lastName": "Krobitsch" },
                { "creatorType": "editor", "firstName": "Guilhem", "lastName": "Janbon" },
            ],
            "publicationTitle": "PLoS ONE",
            "journalAbbreviation": "PLoS ONE",
            "date": "2006-12-20",
            "volume": "1",
            "issue": "1",
            "pages": "e30",
            "publisher": "Public Library of Science (PLoS)",
            "DOI": "10.1371/journal.pone.0000030",
            "ISSN": "1932-6203",
            "url": "https://dx.plos.org/10.1371/journal.pone.0000030",
            "language": "en",
        })
    );
    assert_eq!(
        reference.pdf_url.as_deref(),
        Some("https://journals.plos.org/plosone/article/file?id=10.1371/journal.pone.0000030&type=printable")
    );
}

#[tokio::test]
async fn a_crossref_book_chapter_is_a_book_section_with_its_isbns_and_its_doi() {
    let reference = found("10.1007/978-3-662-46370-3_13").await;
    assert_eq!(
        Value::Object(reference.data),
        json!({
            "itemType": "bookSection",
            "title": "Clinical Symptoms and Physical Examinations",
            "creators": [
                { "creatorType": "author", "firstName": "Ronald L.", "lastName": "Diercks" },
                { "creatorType": "author", "firstName": "Tom Clement", "lastName": "Ludvigsen" },
            ],
            "bookTitle": "Shoulder Stiffness",
            "date": "2015",
            "pages": "155-158",
            "publisher": "Springer Berlin Heidelberg",
            "place": "Berlin, Heidelberg",
            "ISBN": "9783662463697 9783662463703",
            "url": "https://link.springer.com/10.1007/978-3-662-46370-3_13",
            "language": "en",
            // Every regular type has a DOI field in Zotero's schema now, book sections included.
            "DOI": "10.1007/978-3-662-46370-3_13",
        })
    );
}

#[tokio::test]
async fn a_crossref_proceedings_article_names_the_conference_and_its_place() {
    let reference = found("10.1109/iccv.2007.4408927").await;
    assert_eq!(
        Value::Object(reference.data),
        json!({
            "itemType": "conferencePaper",
            "title": "A Seeded Image Segmentation Framework Unifying Graph Cuts And Random Walker Which Yields A New Algorithm",
            "creators": [
                { "creatorType": "author", "firstName": "Ali Kemal", "lastName": "Sinop" },
                { "creatorType": "author", "firstName": "Leo", "lastName": "Grady" },
            ],
            "proceedingsTitle": "2007 IEEE 11th International Conference on Computer Vision",
            "conferenceName": "2007 IEEE 11th International Conference on Computer Vision",
            "place": "Rio de Janeiro, Brazil",
            "date": "2007",
            "pages": "1-8",
            "publisher": "IEEE",
            "DOI": "10.1109/iccv.2007.4408927",
            "url": "http://ieeexplore.ieee.org/document/4408927/",
        })
    );
}

#[tokio::test]
async fn a_crossref_monograph_is_a_book_without_journal_fields() {
    let reference = found("10.1017/9781108348843").await;
    assert_eq!(
        Value::Object(reference.data),
        json!({
            "itemType": "book",
            "title": "The Politics of the Past in Early China",
            "creators": [{ "creatorType": "author", "firstName": "Vincent S.", "lastName": "Leung" }],
            "date": "2019-07-01",
            "publisher": "Cambridge University Press",
            "ISBN": "9781108348843 9781108425728 9781108443241",
            "url": "https://www.cambridge.org/core/product/identifier/9781108348843/type/book",
            "DOI": "10.1017/9781108348843",
        })
    );
}

#[tokio::test]
async fn crossref_posted_content_is_a_preprint_in_its_repository() {
    let reference = found("10.1101/2020.12.01.406702").await;
    let (data, abstract_note) = without_abstract(&reference);
    assert_eq!(data["itemType"], "preprint");
    // The title's `<i>` and its line breaks are gone.
    assert_eq!(
        data["title"],
        "Identification of a novel cationic glycolipid in Streptococcus agalactiae that contributes to brain entry and meningitis"
    );
    assert_eq!(data["repository"], "bioRxiv", "institution[0].name before the publisher (openRxiv)");
    assert_eq!(data["DOI"], "10.1101/2020.12.01.406702");
    assert_eq!(data["date"], "2020-12-01");
    assert_eq!(data["url"], "http://biorxiv.org/lookup/doi/10.1101/2020.12.01.406702");
    assert_eq!(data["creators"].as_array().map(Vec::len), Some(8));
    assert_eq!(
        data["creators"][2],
        json!({ "creatorType": "author", "firstName": "Jéssica da C.", "lastName": "Mendonça" })
    );
    assert_eq!(data.get("publicationTitle"), None);
    assert_eq!(data.get("publisher"), None, "a preprint has no publisher field");
    // Inline JATS markup on lines of its own does not break the sentence.
    assert!(
        abstract_note.contains(
            "synthesized in high abundance by the bacterium Streptococcus agalactiae (Group B Streptococcus , GBS)."
        ),
        "{abstract_note}"
    );
    assert!(!abstract_note.contains('\n'), "one paragraph: {abstract_note}");
}

#[tokio::test]
async fn the_crossref_request_is_polite_encoded_and_sent_once() {
    let http = router();
    let settings = SourceSettings { contact_email: Some("me@example.org".into()), ..settings() };
    let id = Identifier::Doi("10.1002/(SICI)1097-4636(199706)35:4<413::AID-JBM1>3.0.CO;2-J".into());
    let error = resolve(http.as_ref(), ManualClock::at(0).as_ref(), &id, &settings).await.unwrap_err();
    assert!(matches!(error, ResolveError::NotFound { .. }), "{error}");
    let requests = http.requests();
    assert_eq!(
        urls(&http),
        [
            "https://api.crossref.org/works/10.1002/(SICI)1097-4636(199706)35:4%3C413::AID-JBM1%3E3.0.CO%3B2-J?mailto=me%40example.org",
            "https://api.datacite.org/dois/10.1002/(SICI)1097-4636(199706)35:4%3C413::AID-JBM1%3E3.0.CO%3B2-J",
        ]
    );
    assert_eq!(requests[0].headers()["user-agent"], "zotero-mcp-test/1");
    assert_eq!(requests[0].headers()["accept"], "application/json");
    assert_eq!(requests[1].headers()["accept"], "application/vnd.api+json");
    assert_eq!(requests[1].headers()["user-agent"], "zotero-mcp-test/1");
}

// --- DataCite -------------------------------------------------------------------------------------------------

#[tokio::test]
async fn a_doi_crossref_does_not_know_is_looked_up_in_datacite() {
    let http = router();
    let reference = lookup(&http, "10.5061/dryad.8515").await.unwrap();
    assert_eq!(reference.source, Source::DataCite);
    let (data, abstract_note) = without_abstract(&reference);
    assert_eq!(
        data,
        json!({
            "itemType": "dataset",
            "title": "Data from: A new malaria agent in African hominids.",
            "creators": [
                { "creatorType": "author", "firstName": "Benjamin", "lastName": "Ollomo" },
                { "creatorType": "author", "firstName": "Patrick", "lastName": "Durand" },
                { "creatorType": "author", "firstName": "Franck", "lastName": "Prugnolle" },
                { "creatorType": "author", "firstName": "Emmanuel J. P.", "lastName": "Douzery" },
                { "creatorType": "author", "firstName": "Céline", "lastName": "Arnathau" },
                { "creatorType": "author", "firstName": "Dieudonné", "lastName": "Nkoghe" },
                { "creatorType": "author", "firstName": "Eric", "lastName": "Leroy" },
                { "creatorType": "author", "firstName": "François", "lastName": "Renaud" },
            ],
            "repository": "Dryad",
            "date": "2011-02-01",
            "language": "en",
            "url": "https://datadryad.org/dataset/doi:10.5061/dryad.8515",
            "versionNumber": "1",
            "rights": "Creative Commons Zero v1.0 Universal",
            "DOI": "10.5061/dryad.8515",
        })
    );
    assert!(abstract_note
        .starts_with("Plasmodium falciparum is the major human malaria agent responsible for 200 to 300 million"));
    assert!(!abstract_note.contains('\n'));
    assert_eq!(
        urls(&http),
        [
            "https://api.crossref.org/works/10.5061/dryad.8515",
            "https://api.datacite.org/dois/10.5061/dryad.8515",
            "https://api.openalex.org/works/doi:10.5061/dryad.8515",
        ]
    );
    assert_eq!(reference.pdf_url, None, "OpenAlex's 404 is no PDF, not a failure");
}

#[tokio::test]
async fn a_doi_neither_registry_knows_is_not_found_naming_both() {
    let http = router();
    let error = lookup(&http, "10.1371/notarealdoi").await.unwrap_err();
    assert_eq!(
        error,
        ResolveError::NotFound { sources: "CrossRef and DataCite".into(), what: "DOI 10.1371/notarealdoi".into() }
    );
    assert_eq!(
        error.to_string(),
        "CrossRef and DataCite have no record for DOI 10.1371/notarealdoi; check it, or create the item from its \
         fields"
    );
    assert_eq!(http.requests().len(), 2, "no OpenAlex request without a record");
}

// --- Failures -------------------------------------------------------------------------------------------------

#[tokio::test]
async fn a_server_error_is_a_status_error_and_not_retried() {
    let http = StubHttp::new(|_| answer(500, "Internal Server Error"));
    let error = lookup(&http, "10.7554/elife.01567").await.unwrap_err();
    assert_eq!(
        error,
        ResolveError::Status { service: Source::CrossRef, what: "DOI 10.7554/elife.01567".into(), status: 500 }
    );
    assert!(error.to_string().contains("try again in a minute"), "{error}");
    assert_eq!(http.requests().len(), 1, "one attempt, and no DataCite fallback for a 500");
}

/// A server that never answers.
struct Silent;

#[async_trait(?Send)]
impl crate::platform::HttpClient for Silent {
    async fn send(&self, _request: HttpRequest) -> Result<HttpResponse, HttpError> {
        std::future::pending().await
    }
}

#[tokio::test]
async fn a_source_that_does_not_answer_times_out() {
    let clock = ManualClock::at(0);
    let settings = SourceSettings { timeout_ms: 4_000, ..settings() };
    let id = detect("arXiv:2206.06921").unwrap();
    let error = resolve(&Silent, clock.as_ref(), &id, &settings).await.unwrap_err();
    assert_eq!(
        error,
        ResolveError::Timeout { service: Source::Arxiv, what: "arXiv:2206.06921".into(), after_ms: 4_000 }
    );
    assert_eq!(clock.sleeps(), [4_000]);
}

#[tokio::test]
async fn an_oversized_answer_is_refused() {
    let huge = "x".repeat(fetch::MAX_BODY + 1);
    let http = StubHttp::new(move |_| answer(200, &huge));
    let error = lookup(&http, "ISBN 9780980200447").await.unwrap_err();
    assert_eq!(
        error,
        ResolveError::TooLarge {
            service: Source::OpenLibrary,
            what: "ISBN 9780980200447".into(),
            limit: 2 * 1024 * 1024
        }
    );
}

#[tokio::test]
async fn a_transport_failure_and_an_unreadable_body_are_told_apart() {
    let http = StubHttp::new(|request| {
        Err(HttpError::Transport { url: request.uri().to_string(), reason: "connection reset".into() })
    });
    let error = lookup(&http, "PMID: 30108519").await.unwrap_err();
    assert!(
        matches!(&error, ResolveError::Transport { service: Source::PubMed, reason, .. } if reason.contains("connection reset")),
        "{error}"
    );

    // CrossRef's HTML error page where JSON belongs.
    let http = StubHttp::new(|_| answer(200, include_str!("fixtures/crossref-not-found.txt")));
    let error = lookup(&http, "10.7554/elife.01567").await.unwrap_err();
    assert!(matches!(&error, ResolveError::Unparseable { service: Source::CrossRef, .. }), "{error}");
}

// --- OpenAlex -------------------------------------------------------------------------------------------------

#[tokio::test]
async fn open_access_pdf_is_best_effort() {
    let clock = ManualClock::at(0);
    let polite = SourceSettings { contact_email: Some("me@example.org".into()), ..settings() };
    let http = router();
    assert_eq!(
        open_access_pdf(http.as_ref(), clock.as_ref(), "10.1371/journal.pone.0000030", &polite).await.as_deref(),
        Some("https://journals.plos.org/plosone/article/file?id=10.1371/journal.pone.0000030&type=printable")
    );
    assert_eq!(
        urls(&http),
        ["https://api.openalex.org/works/doi:10.1371/journal.pone.0000030?mailto=me%40example.org"]
    );
    // A landing page in oa_url is no PDF.
    assert_eq!(open_access_pdf(http.as_ref(), clock.as_ref(), "10.7554/elife.01567", &polite).await, None);
    // Not in OpenAlex, a server error, no connection, no answer in time: all no PDF.
    assert_eq!(open_access_pdf(http.as_ref(), clock.as_ref(), "10.1371/notarealdoi", &polite).await, None);
    let failing = StubHttp::new(|_| answer(503, ""));
    assert_eq!(open_access_pdf(failing.as_ref(), clock.as_ref(), "10.7554/elife.01567", &polite).await, None);
    let broken = StubHttp::strict();
    assert_eq!(open_access_pdf(broken.as_ref(), clock.as_ref(), "10.7554/elife.01567", &polite).await, None);
    assert_eq!(open_access_pdf(&Silent, clock.as_ref(), "10.7554/elife.01567", &polite).await, None);
}

// --- arXiv ----------------------------------------------------------------------------------------------------

#[tokio::test]
async fn an_arxiv_preprint_keeps_its_own_doi_and_notes_the_journal_version() {
    let http = router();
    let reference = lookup(&http, "arXiv:2206.06921").await.unwrap();
    assert_eq!(reference.source, Source::Arxiv);
    let (data, abstract_note) = without_abstract(&reference);
    assert_eq!(
        data,
        json!({
            "itemType": "preprint",
            "title": "Attainable forms of Assouad spectra",
            "creators": [{ "creatorType": "author", "firstName": "Alex", "lastName": "Rutar" }],
            "date": "2022-06-14",
            "repository": "arXiv",
            "archiveID": "arXiv:2206.06921",
            "url": "https://arxiv.org/abs/2206.06921",
            "DOI": "10.48550/arXiv.2206.06921",
            "extra": "arXiv:2206.06921 [math.CA]\nJournal reference: Indiana Univ. Math. J. 73 (2024), 1331-1356\n\
                      Published DOI: 10.1512/iumj.2024.73.9928",
        })
    );
    // Entities decoded (`&lt;`), TeX kept as the authors wrote it.
    assert!(abstract_note.contains("if and only if for every $0<λ<θ<1$"), "{abstract_note}");
    assert_eq!(reference.pdf_url.as_deref(), Some("https://arxiv.org/pdf/2206.06921"));
    assert_eq!(urls(&http), ["https://export.arxiv.org/api/query?id_list=2206.06921&max_results=1"]);
    assert_eq!(http.requests()[0].headers()["accept"], "application/atom+xml");
}

#[tokio::test]
async fn a_versioned_arxiv_id_asks_for_and_links_that_version() {
    let http = router();
    let reference = lookup(&http, "arXiv:2206.06921v2").await.unwrap();
    assert_eq!(urls(&http), ["https://export.arxiv.org/api/query?id_list=2206.06921v2&max_results=1"]);
    assert_eq!(reference.data["url"], "https://arxiv.org/abs/2206.06921v2");
    assert_eq!(reference.pdf_url.as_deref(), Some("https://arxiv.org/pdf/2206.06921v2"));
    // A paper's DOI and archive id name all its versions.
    assert_eq!(reference.data["DOI"], "10.48550/arXiv.2206.06921");
    assert_eq!(reference.data["archiveID"], "arXiv:2206.06921");
}

#[tokio::test]
async fn an_old_style_arxiv_id_and_a_collaboration_as_author() {
    let http = router();
    let reference = lookup(&http, "hep-ex/0307015").await.unwrap();
    let (data, abstract_note) = without_abstract(&reference);
    assert_eq!(
        data,
        json!({
            "itemType": "preprint",
            "title": "Multi-Electron Production at High Transverse Momenta in ep Collisions at HERA",
            "creators": [{ "creatorType": "author", "name": "H1 Collaboration" }],
            "date": "2003-07-07",
            "repository": "arXiv",
            "archiveID": "arXiv:hep-ex/0307015",
            "url": "https://arxiv.org/abs/hep-ex/0307015",
            "DOI": "10.48550/arXiv.hep-ex/0307015",
            "extra": "arXiv:hep-ex/0307015 [hep-ex]\nJournal reference: Eur.Phys.J. C31 (2003) 17-29",
        })
    );
    assert!(abstract_note
        .starts_with("Multi-electron production is studied at high electron transverse momentum in positron- and"));
    assert_eq!(reference.pdf_url.as_deref(), Some("https://arxiv.org/pdf/hep-ex/0307015"));
    assert_eq!(urls(&http), ["https://export.arxiv.org/api/query?id_list=hep-ex/0307015&max_results=1"]);
}

#[tokio::test]
async fn an_empty_feed_and_an_error_entry_are_not_found() {
    let http = router();
    let error = lookup(&http, "arXiv:1201.56789").await.unwrap_err();
    assert_eq!(error, ResolveError::NotFound { sources: "arXiv".into(), what: "arXiv:1201.56789".into() });
    assert_eq!(
        error.to_string(),
        "arXiv has no record for arXiv:1201.56789; check it, or create the item from its fields"
    );
    let error = lookup(&http, "arXiv:1234.12345").await.unwrap_err();
    assert_eq!(error, ResolveError::NotFound { sources: "arXiv".into(), what: "arXiv:1234.12345".into() });
}

// --- Open Library ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn an_open_library_book() {
    let http = router();
    let reference = lookup(&http, "978-0-9802004-4-7").await.unwrap();
    assert_eq!(reference.source, Source::OpenLibrary);
    assert_eq!(
        Value::Object(reference.data),
        json!({
            "itemType": "book",
            "title": "Slow reading",
            "creators": [{ "creatorType": "author", "firstName": "John", "lastName": "Miedema" }],
            "publisher": "Litwin Books",
            "place": "Duluth, Minn",
            "date": "2009",
            "numPages": "80",
            "url": "https://openlibrary.org/books/OL22853304M/Slow_reading",
            // Both forms of the ISBN asked for, not the record's (its isbn_10 is a placeholder).
            "ISBN": "9780980200447 098020044X",
        })
    );
    assert_eq!(reference.pdf_url, None);
    assert_eq!(urls(&http), ["https://openlibrary.org/api/books?bibkeys=ISBN:9780980200447&format=json&jscmd=data"]);
}

#[tokio::test]
async fn an_isbn_open_library_does_not_know_is_not_found() {
    let http = router();
    let error = lookup(&http, "ISBN 978-0-306-40615-7").await.unwrap_err();
    assert_eq!(error, ResolveError::NotFound { sources: "Open Library".into(), what: "ISBN 9780306406157".into() });
}

// --- PubMed ---------------------------------------------------------------------------------------------------

fn pubmed_expected() -> Value {
    json!({
        "itemType": "journalArticle",
        "title": "A \"Blood Relationship\" Between the Overlooked Minimum Lactate Equivalent and Maximal Lactate Steady State in Trained Runners. Back to the Old Days?",
        "creators": [
            { "creatorType": "author", "firstName": "Ibai", "lastName": "Garcia-Tabar" },
            { "creatorType": "author", "firstName": "Esteban M", "lastName": "Gorostiaga" },
        ],
        "publicationTitle": "Frontiers in physiology",
        "journalAbbreviation": "Front Physiol",
        "volume": "9",
        "pages": "1034",
        "date": "2018",
        "ISSN": "1664-042X",
        "language": "eng",
        "DOI": "10.3389/fphys.2018.01034",
        "url": "https://pubmed.ncbi.nlm.nih.gov/30108519/",
        "extra": "PMID: 30108519\nPMCID: PMC6079548",
    })
}

#[tokio::test]
async fn a_pubmed_article_from_efetch() {
    let http = router();
    let settings = SourceSettings { contact_email: Some("me@example.org".into()), ..settings() };
    let id = detect("PMID: 30108519").unwrap();
    let reference = resolve(http.as_ref(), ManualClock::at(0).as_ref(), &id, &settings).await.unwrap();
    assert_eq!(reference.source, Source::PubMed);
    let (data, abstract_note) = without_abstract(&reference);
    assert_eq!(data, pubmed_expected());
    // Markup dropped, MathML read as its symbols.
    assert!(abstract_note.starts_with("Maximal Lactate Steady State (MLSS) and Lactate Threshold (LT) are"));
    assert!(abstract_note.contains("the disused \"Minimum Lactate Equivalent\" (LEmin)"), "{abstract_note}");
    assert!(abstract_note.contains("maximal oxygen uptake ( V.O2max ) 67.6 ± 4.1 ml·kg-1·min-1]"), "{abstract_note}");
    assert!(abstract_note.contains("(P < 0.001; ES: 3.54)"));
    assert_eq!(
        urls(&http),
        ["https://eutils.ncbi.nlm.nih.gov/entrez/eutils/efetch.fcgi?db=pubmed&id=30108519&retmode=xml&tool=zotero-mcp&email=me%40example.org"]
    );
}

#[tokio::test]
async fn a_pmc_id_is_linked_to_its_pubmed_record() {
    let http = router();
    let reference = lookup(&http, "PMC6079548").await.unwrap();
    let (data, _) = without_abstract(&reference);
    assert_eq!(data, pubmed_expected());
    assert_eq!(
        urls(&http),
        [
            "https://eutils.ncbi.nlm.nih.gov/entrez/eutils/elink.fcgi?dbfrom=pmc&db=pubmed&linkname=pmc_pubmed&id=6079548&retmode=json",
            "https://eutils.ncbi.nlm.nih.gov/entrez/eutils/efetch.fcgi?db=pubmed&id=30108519&retmode=xml",
        ]
    );
}

// --- Pieces ---------------------------------------------------------------------------------------------------

#[test]
fn sources_are_named_as_their_owners_write_them() {
    let names: Vec<String> = [Source::CrossRef, Source::DataCite, Source::Arxiv, Source::OpenLibrary, Source::PubMed]
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(names, ["CrossRef", "DataCite", "arXiv", "Open Library", "PubMed"]);
}

#[test]
fn dates_are_zero_padded_and_stop_at_a_missing_part() {
    assert_eq!(item::date_of_parts(&[json!(2021), json!(4), json!(2)]).as_deref(), Some("2021-04-02"));
    assert_eq!(item::date_of_parts(&[json!(2015)]).as_deref(), Some("2015"));
    assert_eq!(item::date_of_parts(&[json!(2015), json!(null), json!(3)]).as_deref(), Some("2015"));
    assert_eq!(item::date_of_parts(&[json!(null)]), None);
}

#[test]
fn the_default_endpoints_are_the_public_apis() {
    let endpoints = Endpoints::default();
    assert_eq!(endpoints.crossref, "https://api.crossref.org");
    assert_eq!(endpoints.datacite, "https://api.datacite.org");
    assert_eq!(endpoints.arxiv, "https://export.arxiv.org");
    assert_eq!(endpoints.open_library, "https://openlibrary.org");
    assert_eq!(endpoints.eutils, "https://eutils.ncbi.nlm.nih.gov/entrez/eutils");
    assert_eq!(endpoints.openalex, "https://api.openalex.org");
}

#[tokio::test]
async fn a_retracted_work_carries_both_its_notices_as_listed() {
    let reference = found("10.1016/s0140-6736(97)11096-0").await;
    assert!(reference.title().starts_with("RETRACTED: Ileal-lymphoid-nodular hyperplasia"));
    assert_eq!(
        reference.notes.updates,
        [
            Update {
                kind: "correction".into(),
                notice_doi: Some("10.1016/s0140-6736(04)15715-2".into()),
                date: Some("2004-03-06".into()),
                source: Some("retraction-watch".into()),
            },
            Update {
                kind: "retraction".into(),
                notice_doi: Some("10.1016/s0140-6736(10)60175-4".into()),
                date: Some("2010-02-06".into()),
                source: Some("retraction-watch".into()),
            },
        ]
    );
    assert!(!reference.notes.updates[0].withdraws() && reference.notes.updates[1].withdraws());
    assert!(reference.notes.published_as.is_empty() && reference.notes.preprints.is_empty());
}

#[tokio::test]
async fn a_publisher_s_correction_notice_is_read() {
    let reference = found("10.1371/journal.pone.0033693").await;
    let [update] = reference.notes.updates.as_slice() else { panic!("{:?}", reference.notes) };
    assert_eq!(update.kind, "correction");
    assert_eq!(update.source.as_deref(), Some("publisher"));
    assert_eq!(update.date.as_deref(), Some("2012-05-08"));
}

#[tokio::test]
async fn a_preprint_names_its_published_version_and_an_article_its_preprint() {
    let preprint = found("10.1101/097196").await;
    assert_eq!(preprint.item_type(), "preprint");
    assert_eq!(preprint.notes.published_as, ["10.1038/s41597-019-0031-8"]);
    let article = found("10.1038/ng.3834").await;
    assert_eq!(article.notes.preprints, ["10.1101/055962"]);
    assert!(article.notes.published_as.is_empty());
}

#[tokio::test]
async fn an_arxiv_preprint_with_a_journal_doi_names_it_as_its_published_version() {
    let preprint = found("arXiv:hep-ex/0307015").await;
    let journal_doi = preprint.data["extra"].as_str().unwrap().lines().find_map(|l| l.strip_prefix("Published DOI: "));
    assert_eq!(preprint.notes.published_as.first().map(String::as_str), journal_doi);
}

#[tokio::test]
async fn a_bibliographic_search_gives_its_candidates_in_crossref_s_order_with_their_scores() {
    let http = router();
    let written = "D. Tkaczyk, P. Szostek, M. Fedoryszak, P. J. Dendek, and Bolikowski, \u{201c}CERMINE: automatic \
                   extraction of structured metadata from scientific literature,\u{201d} IJDAR, vol. 18, no. 4, 2015.";
    let clock = ManualClock::at(0);
    let candidates = bibliographic_candidates(http.as_ref(), clock.as_ref(), written, 5, &settings()).await.unwrap();
    let found: Vec<(&str, f64)> =
        candidates.iter().map(|(r, score)| (r.data["DOI"].as_str().unwrap(), *score)).collect();
    assert_eq!(found.len(), 5);
    assert_eq!(found[0], ("10.1007/s10032-015-0249-8", 167.66986));
    assert_eq!(found[1].0, "10.1109/das.2014.63");
    let url = &urls(&http)[0];
    assert!(url.starts_with("https://api.crossref.org/works?query.bibliographic=D.%20Tkaczyk"), "{url}");
    assert!(url.ends_with("&rows=5"), "{url}");
}
