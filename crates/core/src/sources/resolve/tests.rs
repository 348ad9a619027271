use std::rc::Rc;

use super::*;
use crate::testing::{ManualClock, StubHttp};

fn ok(status: u16, body: &str) -> Result<crate::platform::HttpResponse, crate::platform::HttpError> {
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
            ("https://api.crossref.org/works/", 404, include_str!("fixtures/crossref-not-found.txt")),
            ("https://api.datacite.org/dois/10.5061/dryad.8515", 200, include_str!("fixtures/datacite-dataset.json")),
            ("https://api.datacite.org/dois/", 404, include_str!("fixtures/datacite-not-found.json")),
            ("https://export.arxiv.org/api/query?id_list=2206.06921", 200, include_str!("fixtures/arxiv-2206.06921.xml")),
            ("https://export.arxiv.org/api/query?id_list=hep-ex/0307015", 200, include_str!("fixtures/arxiv-hep-ex-0307015.xml")),
            ("https://openlibrary.org/api/books?bibkeys=ISBN:9780980200447", 200, include_str!("fixtures/openlibrary-9780980200447.json")),
            ("https://eutils.ncbi.nlm.nih.gov/entrez/eutils/efetch.fcgi?db=pubmed&id=30108519", 200, include_str!("fixtures/pubmed-efetch-30108519.xml")),
            ("https://eutils.ncbi.nlm.nih.gov/entrez/eutils/elink.fcgi?dbfrom=pmc&db=pubmed&linkname=pmc_pubmed&id=6079548", 200, include_str!("fixtures/pmc-elink-6079548.json")),
            ("https://api.openalex.org/works/doi:10.1371/journal.pone.0000030", 200, include_str!("fixtures/openalex-work-with-pdf.json")),
            ("https://api.openalex.org/works/doi:10.7554/elife.01567", 200, include_str!("fixtures/openalex-work-without-pdf.json")),
            ("https://api.openalex.org/", 404, "{}"),
        ];
        let (_, status, body) = routes.iter().find(|(prefix, _, _)| url.starts_with(prefix)).expect("a route");
        ok(*status, body)
    })
}

#[tokio::test]
async fn dump() {
    let http = router();
    let clock = ManualClock::at(0);
    let settings = SourceSettings::default();
    for id in ["10.7554/elife.01567", "10.1371/journal.pone.0000030", "10.1007/978-3-662-46370-3_13", "10.1109/iccv.2007.4408927", "10.1017/9781108348843", "10.1101/2020.12.01.406702", "10.5061/dryad.8515", "arXiv:2206.06921", "hep-ex/0307015", "9780980200447", "PMID: 30108519", "PMC6079548"] {
        let id = crate::sources::detect(id).unwrap();
        let r = resolve(http.as_ref(), clock.as_ref(), &id, &settings).await;
        match r { Ok(r) => println!("{} {:?} {:?}\n{}\n", id, r.source, r.pdf_url, serde_json::to_string_pretty(&r.data).unwrap()), Err(e) => println!("{id} ERR {e}") }
    }
}
