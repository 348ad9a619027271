//! `search` and `fetch`, the pair ChatGPT's deep research and company knowledge require, against the simulator's
//! demo library and its lab group: the shapes OpenAI documents (one text content holding the JSON, the same
//! object as `structuredContent`), a web `url` on every result, ids that find their library, and `fetch`'s text
//! with page markers, bounded, from the best of several PDFs.

mod common;
mod library_support;

use common::*;
use library_support::*;
use serde_json::{json, Value};
use zotero_mcp_core::testing::pdf_of_pages;
use zotero_sim::demo_groups::{LAB_GROUP, LAB_PAPER, LAB_PDF, READING_GROUP};
use zotero_sim::LibraryRef;

/// A PDF attachment of the demo library without an entry in Zotero's full-text index, and its parent.
const ATTACHMENT: &str = "UN79YVS8";
const PARENT: &str = "KPDKK5UT";

fn demo_with_groups() -> std::rc::Rc<zotero_sim::Simulator> {
    let sim = demo_sim();
    sim.add_demo_groups(DEMO_KEY);
    sim
}

/// The answer as OpenAI's connectors read it: exactly one content item, of type text, whose text is the JSON
/// object that is also the structured content.
fn openai_shape(result: &Value) -> Value {
    assert_eq!(result["isError"], Value::Null, "{result}");
    let content = result["content"].as_array().expect("content");
    assert_eq!(content.len(), 1, "{result}");
    assert_eq!(content[0]["type"], "text");
    let parsed: Value = serde_json::from_str(content[0]["text"].as_str().unwrap()).expect("the text is JSON");
    assert_eq!(parsed, result["structuredContent"]);
    parsed
}

fn is_web_page(url: &str) -> bool {
    url.starts_with("https://") && !url.contains(char::is_whitespace)
}

#[tokio::test]
async fn search_answers_in_openai_s_shape_with_a_web_url_for_every_result() {
    let sim = demo_sim();
    let answer = openai_shape(&rpc(&sim, "search", json!({ "query": "maize" })).await);
    let results = answer["results"].as_array().unwrap();
    assert!(!results.is_empty(), "{answer}");
    for result in results {
        let keys: Vec<&str> = result.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, ["id", "title", "url"], "exactly the documented fields: {result}");
        assert!(is_web_page(result["url"].as_str().unwrap()), "{result}");
        assert!(!result["url"].as_str().unwrap().starts_with("zotero://"));
    }
}

#[tokio::test]
async fn every_demo_item_opens_on_the_web_from_its_doi_its_url_or_its_zotero_org_page() {
    let sim = demo_sim();
    let tops: Vec<Value> =
        sim.items(LibraryRef::User(DEMO_USER)).into_iter().filter(|i| i["data"]["parentItem"].is_null()).collect();
    assert!(tops.len() >= 10);
    for item in tops {
        let key = item["key"].as_str().unwrap();
        let fetched = openai_shape(&rpc(&sim, "fetch", json!({ "id": key })).await);
        let url = fetched["url"].as_str().unwrap();
        assert!(is_web_page(url), "{key}: {url}");
        let data = &item["data"];
        match (data["DOI"].as_str().filter(|d| !d.is_empty()), data["url"].as_str().filter(|u| !u.is_empty())) {
            (Some(doi), _) => assert!(url.starts_with("https://doi.org/10.") && url.ends_with(&doi[doi.len() - 4..])),
            (None, Some(own)) => assert_eq!(url, own),
            (None, None) => {
                assert!(url.starts_with("https://www.zotero.org/") && url.ends_with(&format!("/items/{key}")), "{url}")
            }
        }
    }
}

#[tokio::test]
async fn a_question_that_zotero_matches_as_a_whole_nowhere_still_finds_items_by_its_words() {
    let sim = demo_sim();
    let answer = openai_shape(
        &rpc(&sim, "search", json!({ "query": "What does the literature say about maize under heat?" })).await,
    );
    let titles: Vec<String> =
        answer["results"].as_array().unwrap().iter().map(|r| r["title"].as_str().unwrap().to_lowercase()).collect();
    assert!(!titles.is_empty(), "{answer}");
    assert!(titles[0].contains("maize") || titles[0].contains("heat"), "{titles:?}");

    let nothing = openai_shape(&rpc(&sim, "search", json!({ "query": "zzzqqq" })).await);
    assert_eq!(nothing["results"], json!([]));
    let blank = rpc(&sim, "search", json!({ "query": "   " })).await;
    assert_eq!(blank["isError"], true);
}

#[tokio::test]
async fn fetch_reads_metadata_then_the_pdf_by_pages() {
    let sim = demo_sim();
    let pdf = pdf_of_pages(&["Residue contacts emerge early", "The second page", "The third page"]);
    sim.store_file(LIB, ATTACHMENT, "paper.pdf", &pdf);
    let app = app_with_sim(sim.clone());
    let call = || async {
        let reply = send(&app, modern("tools/call", json!({ "name": "fetch", "arguments": { "id": PARENT } }))).await;
        reply.result().clone()
    };
    let answer = openai_shape(&call().await);
    assert_eq!(answer["id"], PARENT);
    let text = answer["text"].as_str().unwrap();
    let first = text.find("[page 1]\nResidue contacts emerge early").expect(text);
    let third = text.find("[page 3]\nThe third page").expect(text);
    assert!(first < third);
    assert!(text.find("## Text of attachment").unwrap() < first, "metadata first: {text}");
    let metadata = &answer["metadata"];
    assert_eq!(metadata["attachmentKey"], ATTACHMENT);
    assert_eq!(metadata["textSource"], "zotero-storage");
    assert_eq!((metadata["totalPages"].as_u64(), metadata["lastPage"].as_u64()), (Some(3), Some(3)));
    assert_eq!(metadata["truncated"], false);
    assert_eq!(metadata["attachmentCandidates"][0]["key"], ATTACHMENT);
    assert_eq!(metadata["attachmentCandidates"][0]["chars"], Value::Null, "a single PDF is not measured");
    for field in ["itemType", "creators", "year"] {
        assert!(metadata[field].is_string(), "{field}: {metadata}");
    }

    // The pages are cached: a second fetch downloads nothing.
    let downloads = sim.storage_requests().len();
    assert!(downloads > 0);
    assert_eq!(openai_shape(&call().await), answer);
    assert_eq!(sim.storage_requests().len(), downloads);
}

#[tokio::test]
async fn a_long_pdf_stops_at_a_whole_page_and_says_where_to_read_on() {
    let sim = demo_sim();
    let long_page = "Stomatal conductance fell sharply under heat. ".repeat(300);
    let pages: Vec<String> = (1..=12).map(|n| format!("Page {n}. {long_page}")).collect();
    let refs: Vec<&str> = pages.iter().map(String::as_str).collect();
    sim.store_file(LIB, ATTACHMENT, "paper.pdf", &pdf_of_pages(&refs));
    let result = rpc(&sim, "fetch", json!({ "id": PARENT })).await;
    let answer = openai_shape(&result);
    let metadata = &answer["metadata"];
    assert_eq!(metadata["truncated"], true);
    let last = metadata["lastPage"].as_u64().unwrap();
    assert!((1..12).contains(&last), "{metadata}");
    let text = answer["text"].as_str().unwrap();
    assert!(text.contains(&format!("[page {last}]")) && !text.contains(&format!("[page {}]", last + 1)));
    let note = metadata["note"].as_str().unwrap();
    assert!(note.contains(&format!("fromPage {}", last + 1)) && note.contains(ATTACHMENT), "{note}");
    assert!(text.ends_with(&format!("[{note}]")), "the text itself says where it stops");
}

#[tokio::test]
async fn of_several_pdfs_the_one_with_the_longest_indexed_text_is_read() {
    let sim = demo_sim();
    let short = sim.insert_item(
        LIB,
        json!({ "itemType": "attachment", "linkMode": "imported_url", "parentItem": PARENT, "title": "News story",
                "contentType": "application/pdf", "filename": "news.pdf" }),
    );
    sim.set_fulltext(LIB, &short, "A short news story about the paper.", Some(1), Some(1));
    sim.set_fulltext(LIB, ATTACHMENT, &"The paper's own long text. ".repeat(50), Some(3), Some(3));
    sim.store_file(LIB, ATTACHMENT, "paper.pdf", &pdf_of_pages(&["The paper itself"]));
    sim.store_file(LIB, &short, "news.pdf", &pdf_of_pages(&["The news story"]));
    let answer = openai_shape(&rpc(&sim, "fetch", json!({ "id": PARENT })).await);
    let metadata = &answer["metadata"];
    assert_eq!(metadata["attachmentKey"], ATTACHMENT, "{metadata}");
    let candidates = metadata["attachmentCandidates"].as_array().unwrap();
    assert_eq!(candidates.len(), 2);
    assert_eq!(candidates[0]["key"], ATTACHMENT);
    assert_eq!(candidates[1]["key"], short);
    assert!(candidates[0]["chars"].as_u64().unwrap() > candidates[1]["chars"].as_u64().unwrap());
    assert!(answer["text"].as_str().unwrap().contains("The paper itself"));
}

#[tokio::test]
async fn ids_of_a_group_s_results_lead_fetch_to_the_group() {
    let sim = demo_with_groups();
    let answer = openai_shape(
        &rpc(&sim, "search", json!({ "query": "folding", "library": format!("groups/{LAB_GROUP}") })).await,
    );
    let id = format!("groups/{LAB_GROUP}/items/{LAB_PAPER}");
    let result =
        answer["results"].as_array().unwrap().iter().find(|r| r["id"] == id.as_str()).cloned().expect("lab paper");
    assert_eq!(result["url"], format!("https://www.zotero.org/groups/{LAB_GROUP}/items/{LAB_PAPER}"));

    // No `library` argument: the id alone finds the group, its PDF read from the group's Zotero Storage.
    let fetched = openai_shape(&rpc(&sim, "fetch", json!({ "id": id })).await);
    assert_eq!(fetched["id"], id.as_str());
    assert_eq!(fetched["metadata"]["library"], format!("groups/{LAB_GROUP}"));
    assert_eq!(fetched["metadata"]["attachmentKey"], LAB_PDF);
    assert!(fetched["text"].as_str().unwrap().contains("[page 1]"), "{fetched}");

    // An id of one library with a `library` argument naming another is refused, as is a malformed id.
    let clash = rpc(&sim, "fetch", json!({ "id": id, "library": format!("groups/{READING_GROUP}") })).await;
    assert!(error_text(&clash).contains("give one of them"), "{}", error_text(&clash));
    for bad in ["zotero://select/items/ABCD2345", "groups/x/items/ABCD2345", "nope"] {
        let refused = rpc(&sim, "fetch", json!({ "id": bad })).await;
        assert!(error_text(&refused).contains("is not an id from search"), "{bad}: {}", error_text(&refused));
    }
}

#[tokio::test]
async fn fetch_of_an_unknown_item_says_so() {
    let sim = demo_sim();
    let missing = rpc(&sim, "fetch", json!({ "id": "ZZZZ2222" })).await;
    assert_eq!(missing["isError"], true);
    assert!(error_text(&missing).contains("ZZZZ2222"), "{}", error_text(&missing));
}

#[tokio::test]
async fn read_attachment_on_a_parent_reads_the_best_pdf_and_lists_every_candidate() {
    let sim = demo_sim();
    let short = sim.insert_item(
        LIB,
        json!({ "itemType": "attachment", "linkMode": "imported_file", "parentItem": PARENT, "title": "Supplement",
                "contentType": "application/pdf", "filename": "supplement.pdf" }),
    );
    sim.set_fulltext(LIB, &short, "Supplementary tables.", Some(1), Some(1));
    sim.set_fulltext(LIB, ATTACHMENT, &"The paper's own long text. ".repeat(50), Some(3), Some(3));
    let result = rpc(&sim, "zotero_read_attachment", json!({ "itemKey": PARENT })).await;
    let out = ok(&result);
    assert_eq!(out["attachmentKey"], ATTACHMENT);
    assert!(out["text"].as_str().unwrap().starts_with("The paper's own long text."));
    let candidates = out["attachmentCandidates"].as_array().unwrap();
    assert_eq!(candidates.iter().map(|c| c["key"].clone()).collect::<Vec<_>>(), [json!(ATTACHMENT), json!(short)]);
    assert_eq!(candidates[1]["chars"], 21);
    assert!(text(&result).contains("Read the best of the item's stored files"), "{}", text(&result));

    // Given the attachment itself, nothing is weighed.
    let direct = rpc(&sim, "zotero_read_attachment", json!({ "itemKey": short })).await;
    assert!(ok(&direct).get("attachmentCandidates").is_none());
    assert!(ok(&direct)["text"].as_str().unwrap().starts_with("Supplementary"));
}
