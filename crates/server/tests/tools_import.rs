//! `zotero_import_reference` against the simulator, with the sources answering the recorded real bodies in
//! crates/core/src/sources/resolve/fixtures (served at their real URLs by the test bench's web server) and the
//! PDF stored in the bench's WebDAV folder.

mod common;

use common::dav::{bench, bench_with, source_fixture, Bench, PLOS_DOI};
use common::{error_text, ok};
use serde_json::{json, Value};
use zotero_mcp_server::auth::Grant;
use zotero_sim::LibraryRef;

const LIB: LibraryRef = LibraryRef::User(common::DEMO_USER);
const JSON: &[(&str, &str)] = &[("content-type", "application/json")];

fn item(bench: &Bench, key: &str) -> Value {
    bench.sim.item(LIB, key).unwrap_or_else(|| panic!("{key} is in the library"))
}

fn writes(bench: &Bench) -> usize {
    bench.sim.requests().iter().filter(|r| r.method != "GET").count()
}

#[tokio::test]
async fn a_doi_becomes_a_complete_item_with_its_open_access_pdf_on_webdav() {
    let bench = bench(true);
    let pdf = bench.serve_plos();
    let result = bench
        .write(
            "zotero_import_reference",
            json!({"identifier": format!("https://doi.org/{PLOS_DOI}"), "tags": [{"tag": "imported"}]}),
        )
        .await;
    let out = ok(&result);
    assert_eq!(out["source"], "CrossRef");
    assert!(out["title"].as_str().unwrap().starts_with("Triose Phosphate Isomerase Deficiency"));
    let key = out["itemKey"].as_str().unwrap();
    let data = &item(&bench, key)["data"];
    assert_eq!(data["itemType"], "journalArticle");
    assert_eq!(data["DOI"], PLOS_DOI);
    assert_eq!(data["publicationTitle"], "PLoS ONE");
    assert!(data["creators"].as_array().unwrap().len() > 3);
    assert_eq!(data["tags"], json!([{"tag": "imported"}]));

    let attachment_key = out["attachmentKey"].as_str().expect("a PDF was attached");
    let attachment = &item(&bench, attachment_key)["data"];
    assert_eq!(attachment["parentItem"], key);
    assert_eq!(attachment["title"], "Full Text PDF");
    assert_eq!(attachment["contentType"], "application/pdf");
    let filename = attachment["filename"].as_str().unwrap();
    assert!(filename.ends_with(".pdf") && filename.starts_with("Ralser et al. - 2006 - Triose"), "{filename}");
    let zip = bench.file(&format!("{attachment_key}.zip")).expect("the file is on WebDAV");
    let stored = zotero_mcp_core::webdav::unpack(&zip, None, &Default::default()).unwrap();
    assert_eq!(stored.data, pdf);
    assert!(result["content"][0]["text"].as_str().unwrap().contains("Attached PDF from https://journals.plos.org"));
}

#[tokio::test]
async fn a_second_import_finds_the_first_and_writes_nothing_unless_asked() {
    let bench = bench(true);
    bench.serve_plos();
    let first = bench.write("zotero_import_reference", json!({"identifier": PLOS_DOI, "attachPdf": false})).await;
    let key = ok(&first)["itemKey"].as_str().unwrap().to_owned();

    let before = writes(&bench);
    let again =
        bench.write("zotero_import_reference", json!({"identifier": format!("https://dx.doi.org/{PLOS_DOI}")})).await;
    let out = ok(&again);
    assert_eq!(out["existingKeys"], json!([key]));
    assert!(out.get("itemKey").is_none());
    assert_eq!(out["attachmentKey"], Value::Null);
    assert!(again["content"][0]["text"].as_str().unwrap().contains("allowDuplicate=true"));
    assert_eq!(writes(&bench), before);

    let forced = bench
        .write("zotero_import_reference", json!({"identifier": PLOS_DOI, "allowDuplicate": true, "attachPdf": false}))
        .await;
    assert_ne!(ok(&forced)["itemKey"], json!(key));
}

#[tokio::test]
async fn several_identifiers_each_get_their_own_outcome() {
    let bench = bench(true);
    bench.serve_plos();
    bench.serve(
        "export.arxiv.org/api/query",
        200,
        &[("content-type", "application/atom+xml")],
        &source_fixture("arxiv-2206.06921.xml"),
    );
    bench.serve(
        "api.crossref.org/works/10.1371/notarealdoi",
        404,
        &[("content-type", "text/plain")],
        &source_fixture("crossref-not-found.txt"),
    );
    bench.serve("api.datacite.org/dois/10.1371/notarealdoi", 404, JSON, &source_fixture("datacite-not-found.json"));
    let input = format!("{PLOS_DOI}\narXiv:2206.06921\n10.1371/notarealdoi\nnonsense");
    let result = bench.write("zotero_import_reference", json!({"identifier": input, "attachPdf": false})).await;
    let results = ok(&result)["results"].as_array().unwrap().clone();
    let statuses: Vec<&str> = results.iter().map(|r| r["status"].as_str().unwrap()).collect();
    assert_eq!(statuses, ["created", "created", "failed", "failed"], "{result}");
    assert_eq!(results[1]["source"], "arXiv");
    assert_eq!(results[1]["itemType"], "preprint");
    let preprint = &item(&bench, results[1]["itemKey"].as_str().unwrap())["data"];
    assert_eq!(preprint["archiveID"], "arXiv:2206.06921");
    let not_found = results[2]["error"].as_str().unwrap();
    assert!(not_found.contains("CrossRef and DataCite have no record"), "{not_found}");
    assert!(not_found.ends_with("create the item from its fields with zotero_create_items"), "{not_found}");
    assert!(results[3]["error"].as_str().unwrap().contains("DOI"));
}

#[tokio::test]
async fn an_ris_block_is_imported_entry_by_entry_and_its_duplicates_are_found_by_title() {
    let bench = bench(true);
    let ris = "TY  - JOUR\nTI  - Street trees and the urban heat island of Lisbon\nAU  - Silva, Ana\nPY  - 2020\nJO  - Urban Climate\nER  - \n\
               TY  - BOOK\nTI  - A handbook of urban forestry practice\nAU  - Jones, K.\nPY  - 2018\nSN  - 978-0-306-40615-7\nER  - \n";
    let first = bench.write("zotero_import_reference", json!({"identifier": ris})).await;
    let results = ok(&first)["results"].as_array().unwrap().clone();
    assert_eq!(results.len(), 2);
    assert!(results.iter().all(|r| r["status"] == "created" && r["source"] == "RIS"), "{first}");
    assert!(results.iter().all(|r| r.get("pdf").is_none()), "no PDF is looked for without an identifier");
    let book = &item(&bench, results[1]["itemKey"].as_str().unwrap())["data"];
    assert_eq!(book["itemType"], "book");

    let again = bench.write("zotero_import_reference", json!({"identifier": ris})).await;
    let statuses: Vec<Value> = ok(&again)["results"].as_array().unwrap().iter().map(|r| r["status"].clone()).collect();
    assert_eq!(statuses, [json!("existing"), json!("existing")]);
}

#[tokio::test]
async fn a_read_only_grant_is_refused_before_any_source_is_asked() {
    let bench = bench(true);
    bench.serve_plos();
    let before = bench.sim.requests().len();
    let result =
        bench.tool("zotero_import_reference", Grant::read_only("owner"), json!({"identifier": PLOS_DOI})).await;
    assert!(error_text(&result).contains("read-only"));
    assert_eq!(bench.sim.requests().len(), before);
}

#[tokio::test]
async fn bad_input_is_refused_with_the_accepted_forms() {
    let bench = bench(true);
    let before = bench.sim.requests().len();
    let unknown = bench.write("zotero_import_reference", json!({"identifier": "the attention paper"})).await;
    assert!(error_text(&unknown).contains("DOI"));
    let two_with_pdf = bench
        .write(
            "zotero_import_reference",
            json!({"identifier": "10.1000/a\n10.1000/b", "pdfUrl": "https://example.org/a.pdf"}),
        )
        .await;
    assert!(error_text(&two_with_pdf).contains("pdfUrl"));
    let too_many: Vec<String> = (0..11).map(|i| format!("10.1000/x{i}")).collect();
    let many = bench.write("zotero_import_reference", json!({"identifier": too_many.join("\n")})).await;
    assert!(error_text(&many).contains("at most 10"));
    assert_eq!(bench.sim.requests().len(), before);
}

#[tokio::test]
async fn without_a_usable_file_store_the_item_is_created_and_the_pdf_s_address_given() {
    let bench = bench_with(false, &[("FILE_STORAGE", "webdav")]);
    bench.serve_plos();
    let result = bench.write("zotero_import_reference", json!({"identifier": PLOS_DOI})).await;
    let out = ok(&result);
    assert!(out["itemKey"].is_string());
    assert_eq!(out["attachmentKey"], Value::Null);
    let pdf = out["results"][0]["pdf"].as_str().unwrap();
    assert!(pdf.contains("WEBDAV_URL is not set") && pdf.contains("journals.plos.org"), "{pdf}");
}

#[tokio::test]
async fn a_pdf_url_that_serves_a_web_page_is_not_attached() {
    let bench = bench(true);
    bench.serve_plos();
    bench.serve("example.org/paper.pdf", 200, &[("content-type", "text/html")], b"<html>Log in</html>");
    let result = bench
        .write("zotero_import_reference", json!({"identifier": PLOS_DOI, "pdfUrl": "https://example.org/paper.pdf"}))
        .await;
    let out = ok(&result);
    assert!(out["itemKey"].is_string());
    assert_eq!(out["attachmentKey"], Value::Null);
    assert!(out["results"][0]["pdf"].as_str().unwrap().contains("text/html rather than a PDF"));
}

#[tokio::test]
async fn a_bibtex_block_keeps_good_entries_around_a_broken_one_and_files_them_where_asked() {
    let bench = bench(true);
    let collection = bench.sim.insert_collection(LIB, json!({"name": "Imported"}));
    // The first entry as DBLP exports it; the second is missing its closing brace.
    let bibtex = r#"@inproceedings{DBLP:conf/nips/VaswaniSPUJGKP17,
  author    = {Ashish Vaswani and Noam Shazeer and Niki Parmar},
  title     = {Attention is All you Need},
  booktitle = {Advances in Neural Information Processing Systems 30},
  pages     = {5998--6008},
  year      = {2017},
}
@article{broken,
  title = {Never closed,
@book{knuth1984,
  author = {Knuth, Donald E.},
  title = {The {\TeX}book},
  publisher = {Addison-Wesley},
  year = 1984,
  isbn = {0-201-13447-0},
}
"#;
    let result = bench
        .write("zotero_import_reference", json!({"identifier": bibtex, "collections": [collection], "attachPdf": true}))
        .await;
    let results = ok(&result)["results"].as_array().unwrap().clone();
    let statuses: Vec<&str> = results.iter().map(|r| r["status"].as_str().unwrap()).collect();
    assert_eq!(statuses, ["created", "failed", "created"], "{result}");
    assert_eq!(results[0]["source"], "BibTeX");
    assert!(results[0]["input"].as_str().unwrap().contains("DBLP:conf/nips/VaswaniSPUJGKP17"));
    assert!(results[1]["error"].as_str().unwrap().contains("line"), "{}", results[1]["error"]);
    let paper = &item(&bench, results[0]["itemKey"].as_str().unwrap())["data"];
    assert_eq!(paper["itemType"], "conferencePaper");
    assert_eq!(paper["proceedingsTitle"], "Advances in Neural Information Processing Systems 30");
    assert_eq!(paper["pages"], "5998-6008");
    assert_eq!(paper["collections"], json!([collection]));
    let book = &item(&bench, results[2]["itemKey"].as_str().unwrap())["data"];
    assert_eq!(book["title"], "The TeXbook");
    assert_eq!(book["creators"][0]["lastName"], "Knuth");
}

#[tokio::test]
async fn many_identifiers_attach_only_the_pdfs_the_request_budget_allows() {
    let bench = bench(true);
    bench.serve_plos();
    // Ten times the same DOI, each forced in: 10 × 2 lookups + 10 searches + 1 template + 1 write = 32 of 45;
    // the first item's OpenAlex question and PDF (1 + 6) fit, the second's would not, so it is not even asked.
    let input = [PLOS_DOI; 10].join("\n");
    let result = bench.write("zotero_import_reference", json!({"identifier": input, "allowDuplicate": true})).await;
    let results = ok(&result)["results"].as_array().unwrap().clone();
    assert_eq!(results.len(), 10);
    assert!(results.iter().all(|r| r["status"] == "created"), "{result}");
    assert!(results[0]["attachmentKey"].is_string(), "{result}");
    assert!(results[1..].iter().all(|r| r["attachmentKey"].is_null()));
    let pdf = results[1]["pdf"].as_str().unwrap();
    assert!(pdf.contains("No PDF was looked for") && pdf.contains("zotero_put_attachment"), "{pdf}");
}
