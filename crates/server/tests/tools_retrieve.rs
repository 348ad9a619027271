//! `zotero_retrieve` against the simulator's demo library: passages from a real PDF land on the page poppler's
//! `pdftotext` finds their words on; annotations keep their pages and labels and rank on their comments; Zotero's
//! index gives passages without pages; budgets leave passages out whole; coverage and skipped sources are said;
//! the attachment policies choose what is read and refuse what is not the item's.

mod common;
mod library_support;

use std::process::Command;

use common::*;
use library_support::*;
use serde_json::{json, Value};
use zotero_mcp_core::testing::pdf_of_pages;
use zotero_sim::demo_files::REAL_FILES;

/// Springer's llncs instructions (7 pages, real LaTeX output) and the demo item it is the file of.
const LLNCS_ITEM: &str = "2F8HNRI6";
const LLNCS_PDF: &str = "Z36ESMED";
/// A paper whose PDF carries reader annotations with printed page labels (812, 815, …), and that PDF.
const ANNOTATED_ITEM: &str = "T6W7H8UE";
const ANNOTATED_PDF: &str = "93WJRKG5";
/// A PDF attachment with no entry in Zotero's index, and its parent.
const PLAIN_PDF: &str = "UN79YVS8";
const PLAIN_ITEM: &str = "KPDKK5UT";

fn with_demo_files() -> std::rc::Rc<zotero_sim::Simulator> {
    let sim = demo_sim();
    sim.store_demo_files(LIB).expect("demo files");
    sim
}

async fn retrieve(sim: &std::rc::Rc<zotero_sim::Simulator>, arguments: Value) -> Value {
    ok(&rpc(sim, "zotero_retrieve", arguments).await).clone()
}

/// Words as both engines can be compared on: lower case, ligatures spelled out, letters and digits only.
fn words(text: &str) -> Vec<String> {
    text.replace('\u{FB01}', "fi")
        .replace('\u{FB02}', "fl")
        .replace('\u{FB00}', "ff")
        .replace("-\n", "")
        .to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect()
}

/// The 1-based pages of poppler's text on which `window` (consecutive words) occurs.
fn poppler_pages_of(pages: &[Vec<String>], window: &[String]) -> Vec<usize> {
    pages
        .iter()
        .enumerate()
        .filter(|(_, page)| page.windows(window.len()).any(|w| w == window))
        .map(|(at, _)| at + 1)
        .collect()
}

#[tokio::test]
async fn passages_from_a_pdf_are_on_the_page_pdftotext_finds_them_on() {
    let bytes = REAL_FILES.iter().find(|(key, _)| *key == LLNCS_PDF).unwrap().1;
    let dir = std::env::temp_dir().join(format!("retrieve-poppler-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let pdf = dir.join("llncsdoc.pdf");
    std::fs::write(&pdf, bytes).unwrap();
    let poppler = Command::new("pdftotext")
        .args(["-enc", "UTF-8"])
        .arg(&pdf)
        .arg("-")
        .output()
        .expect("poppler's pdftotext is installed (scripts/setup.sh installs poppler-utils)");
    assert!(poppler.status.success());
    let _ = std::fs::remove_dir_all(&dir);
    let text = String::from_utf8(poppler.stdout).unwrap();
    let pages: Vec<Vec<String>> = text.split('\u{c}').map(words).collect();
    assert!(pages.len() >= 7);

    let sim = with_demo_files();
    let mut checked = 0;
    for query in [
        "ORCID registry identifiers",
        "capitalized conjunctions prepositions",
        "theorems definitions proofs",
        "texmf directory installation",
        "abstract keywords",
    ] {
        let answer =
            retrieve(&sim, json!({ "itemKeys": [LLNCS_ITEM], "query": query, "sources": ["fulltext"], "passages": 3 }))
                .await;
        let passages = answer["passages"].as_array().unwrap();
        assert!(!passages.is_empty(), "{query}: {answer}");
        for passage in passages {
            assert_eq!(passage["source"], "fulltext");
            assert_eq!(passage["sourceKey"], LLNCS_PDF);
            let page = passage["page"].as_u64().expect("a passage from the PDF has its page") as usize;
            assert_eq!(passage["pageLabel"], page.to_string(), "this PDF has no labels: its label is its number");
            // Every run of six words that poppler finds on one page only must be on our page, and at least one
            // must be found (the engines lay out a listing differently, so not every run is on poppler's page).
            let ours = words(passage["text"].as_str().unwrap());
            let mut placed = 0;
            for window in ours.windows(6.min(ours.len())) {
                if let [only] = poppler_pages_of(&pages, window)[..] {
                    assert_eq!(only, page, "{query}: poppler has {window:?} on page {only}, we say page {page}");
                    placed += 1;
                }
            }
            assert!(placed > 0, "{query}: poppler finds no run of this passage on one page: {passage}");
            checked += 1;
        }
    }
    assert!(checked >= 10, "{checked}");
}

#[tokio::test]
async fn annotations_keep_their_page_and_label_and_rank_on_their_comments() {
    let sim = with_demo_files();
    let answer = retrieve(
        &sim,
        json!({ "itemKeys": [ANNOTATED_ITEM], "query": "calibration ESMFold", "sources": ["annotation"] }),
    )
    .await;
    let top = &answer["passages"][0];
    assert_eq!(top["source"], "annotation", "{answer}");
    assert_eq!(top["sourceKey"], "ALERVV85");
    assert_eq!((top["page"].as_u64(), top["pageLabel"].as_str()), (Some(5), Some("816")), "pageIndex 4, label 816");
    assert_eq!(top["matchedFields"], json!(["comment"]), "a comment-only annotation matches on its comment");
    assert_eq!(top["text"], "");
    assert!(top["comment"].as_str().unwrap().contains("ESMFold"));

    let highlight = retrieve(
        &sim,
        json!({ "itemKeys": [ANNOTATED_ITEM], "query": "orphan proteins deep MSAs", "sources": ["annotation"] }),
    )
    .await;
    let top = &highlight["passages"][0];
    assert_eq!((top["sourceKey"].as_str(), top["pageLabel"].as_str()), (Some("2GV792WE"), Some("812")));
    assert_eq!(top["matchedFields"], json!(["text"]));
}

#[tokio::test]
async fn zotero_s_index_gives_passages_without_pages_and_says_how_much_it_holds() {
    // No file store serves the file: the text is Zotero's index, which has no page breaks.
    let sim = demo_sim();
    let answer = retrieve(
        &sim,
        json!({ "itemKeys": [ANNOTATED_ITEM], "query": "pairwise representations co-evolutionary couplings",
                "sources": ["fulltext"] }),
    )
    .await;
    let passages = answer["passages"].as_array().unwrap();
    assert!(!passages.is_empty(), "{answer}");
    for passage in passages {
        assert!(passage.get("page").is_none() && passage.get("pageLabel").is_none(), "{passage}");
    }
    let attachment = &answer["items"][0]["attachments"][0];
    assert_eq!(attachment["key"], ANNOTATED_PDF);
    assert_eq!(attachment["status"], "read");
    assert_eq!(attachment["textSource"], "zotero-index");
    assert!(attachment["coverage"]["indexedChars"].as_u64().unwrap() > 100, "{attachment}");
}

#[tokio::test]
async fn a_budget_leaves_passages_out_whole_and_says_so() {
    let sim = demo_sim();
    let sentence = "Stomatal conductance fell sharply under heat in the maize trials of that summer. ";
    let pages: Vec<String> = (1..=6).map(|n| format!("Page {n}. {}", sentence.repeat(12))).collect();
    let refs: Vec<&str> = pages.iter().map(String::as_str).collect();
    sim.store_file(LIB, PLAIN_PDF, "paper.pdf", &pdf_of_pages(&refs));
    let all =
        retrieve(&sim, json!({ "itemKeys": [PLAIN_ITEM], "query": "stomatal conductance", "passages": 30 })).await;
    let matching = all["matching"].as_u64().unwrap();
    assert!(matching >= 6, "{all}");
    let budget = 1_000;
    let cut = retrieve(
        &sim,
        json!({ "itemKeys": [PLAIN_ITEM], "query": "stomatal conductance", "passages": 30, "maxChars": budget }),
    )
    .await;
    let passages = cut["passages"].as_array().unwrap();
    assert!(!passages.is_empty());
    let spent: usize = passages.iter().map(|p| p["text"].as_str().unwrap().chars().count()).sum();
    assert!(spent <= budget, "{spent}");
    assert_eq!(cut["truncated"], true);
    assert_eq!(cut["matching"].as_u64(), Some(matching));
    // Whole: every passage returned is one the unbounded call returned, word for word.
    let unbounded: Vec<&Value> = all["passages"].as_array().unwrap().iter().map(|p| &p["text"]).collect();
    for passage in passages {
        assert!(unbounded.contains(&&passage["text"]), "{passage}");
        assert!(passage["text"].as_str().unwrap().ends_with('.'), "ends at a sentence: {passage}");
    }
    let coverage = &cut["items"][0]["attachments"][0]["coverage"];
    assert_eq!((coverage["pagesRead"].as_u64(), coverage["totalPages"].as_u64()), (Some(6), Some(6)));
    assert_eq!(coverage["complete"], true);
}

#[tokio::test]
async fn missing_sources_are_named_with_their_reasons() {
    let sim = demo_sim();
    let answer = retrieve(&sim, json!({ "itemKeys": [PLAIN_ITEM], "query": "maize heat" })).await;
    let item = &answer["items"][0];
    let skipped: Vec<&str> =
        item["sourcesSkipped"].as_array().unwrap().iter().map(|s| s["source"].as_str().unwrap()).collect();
    assert!(skipped.contains(&"note"), "{item}");
    assert!(skipped.contains(&"annotation"), "{item}");
    // The PDF has neither an index entry nor a file: a named gap, not an empty text.
    let attachment = &item["attachments"][0];
    assert_eq!(attachment["key"], PLAIN_PDF);
    assert_eq!(attachment["status"], "unindexed", "{attachment}");
    assert!(attachment["reason"].as_str().unwrap().contains("index"), "{attachment}");
}

#[tokio::test]
async fn words_are_folded_as_zotero_folds_them() {
    let sim = demo_sim();
    sim.insert_item(
        LIB,
        json!({ "itemType": "note", "parentItem": PLAIN_ITEM,
                "note": "<p>Samples from the Café “Naïve” site — see the Ångström scale.</p>" }),
    );
    let answer =
        retrieve(&sim, json!({ "itemKeys": [PLAIN_ITEM], "query": "cafe naive angstrom", "sources": ["note"] })).await;
    let top = &answer["passages"][0];
    assert_eq!(top["source"], "note", "{answer}");
    assert_eq!(top["text"], "Samples from the Café “Naïve” site — see the Ångström scale.", "the original text");
}

#[tokio::test]
async fn the_policies_choose_what_is_read_and_refuse_what_is_not_the_item_s() {
    let sim = demo_sim();
    let supplement = sim.insert_item(
        LIB,
        json!({ "itemType": "attachment", "linkMode": "imported_file", "parentItem": PLAIN_ITEM,
                "title": "Supplement", "contentType": "application/pdf", "filename": "supp.pdf" }),
    );
    sim.set_fulltext(LIB, &supplement, "Supplementary table S3 lists every primer used.", Some(1), Some(1));
    sim.set_fulltext(LIB, PLAIN_PDF, &"The main text of the paper about heat. ".repeat(40), Some(5), Some(5));

    let best = retrieve(&sim, json!({ "itemKeys": [PLAIN_ITEM], "query": "primer", "sources": ["fulltext"] })).await;
    let attachments = best["items"][0]["attachments"].as_array().unwrap();
    assert_eq!(attachments.len(), 1);
    assert_eq!(attachments[0]["key"], PLAIN_PDF, "the longest indexed text is the best");
    assert!(best["passages"].as_array().unwrap().is_empty(), "the supplement was not read: {best}");
    assert_eq!(best["items"][0]["attachmentCandidates"].as_array().unwrap().len(), 2);

    let all = retrieve(
        &sim,
        json!({ "itemKeys": [PLAIN_ITEM], "query": "primer", "sources": ["fulltext"], "attachmentPolicy": "allIndexed" }),
    )
    .await;
    assert_eq!(all["items"][0]["attachments"].as_array().unwrap().len(), 2);
    assert_eq!(all["passages"][0]["sourceKey"], supplement.as_str());

    let named = retrieve(
        &sim,
        json!({ "itemKeys": [PLAIN_ITEM], "query": "primer", "attachmentPolicy": "specified",
                "attachmentKeys": [supplement] }),
    )
    .await;
    let read: Vec<&str> =
        named["items"][0]["attachments"].as_array().unwrap().iter().map(|a| a["key"].as_str().unwrap()).collect();
    assert_eq!(read, [supplement.as_str()]);
    let both = retrieve(
        &sim,
        json!({ "itemKeys": [PLAIN_ITEM, ANNOTATED_ITEM], "query": "primer", "sources": ["fulltext"],
                "attachmentPolicy": "specified", "attachmentKeys": [supplement] }),
    )
    .await;
    assert_eq!(
        both["items"][1]["sourcesSkipped"],
        json!([{ "source": "fulltext", "reason": "none of its attachments is named in attachmentKeys" }])
    );

    let before = sim.requests().len();
    let foreign = error_text(
        &rpc(
            &sim,
            "zotero_retrieve",
            json!({ "itemKeys": [PLAIN_ITEM], "query": "primer", "attachmentPolicy": "specified",
                    "attachmentKeys": [ANNOTATED_PDF] }),
        )
        .await,
    );
    assert!(foreign.contains(ANNOTATED_PDF) && foreign.contains("not an attachment of"), "{foreign}");
    assert!(
        !sim.requests()[before..].iter().any(|r| r.path.contains("fulltext") || r.path.contains("/file")),
        "nothing is read for a refused call"
    );
    let missing = error_text(
        &rpc(
            &sim,
            "zotero_retrieve",
            json!({ "itemKeys": [PLAIN_ITEM], "query": "primer", "attachmentPolicy": "specified" }),
        )
        .await,
    );
    assert!(missing.contains("attachmentKeys"), "{missing}");
    let child = error_text(&rpc(&sim, "zotero_retrieve", json!({ "itemKeys": [PLAIN_PDF], "query": "primer" })).await);
    assert!(child.contains(PLAIN_ITEM) && child.contains("regular item"), "{child}");
    let blank =
        error_text(&rpc(&sim, "zotero_retrieve", json!({ "itemKeys": [PLAIN_ITEM], "query": "the of a" })).await);
    assert!(blank.contains("no word"), "{blank}");
}

#[tokio::test]
async fn one_call_reads_at_most_eight_attachments_and_names_the_rest() {
    let sim = demo_sim();
    for n in 1..=9 {
        let key = sim.insert_item(
            LIB,
            json!({ "itemType": "attachment", "linkMode": "linked_file", "parentItem": PLAIN_ITEM,
                    "title": format!("Supplement {n}"), "contentType": "application/pdf", "path": format!("/s{n}.pdf") }),
        );
        sim.set_fulltext(LIB, &key, &format!("Supplementary table {n} lists the primers."), Some(1), Some(1));
    }
    let answer = retrieve(
        &sim,
        json!({ "itemKeys": [PLAIN_ITEM], "query": "primers", "sources": ["fulltext"], "attachmentPolicy": "allIndexed",
                "passages": 30 }),
    )
    .await;
    let attachments = answer["items"][0]["attachments"].as_array().unwrap();
    assert_eq!(attachments.len(), 10, "the nine supplements and the paper's PDF");
    let unread: Vec<&Value> = attachments.iter().filter(|a| a["status"] == "unread").collect();
    assert_eq!(unread.len(), 2, "{answer}");
    assert!(unread[0]["reason"].as_str().unwrap().contains("at most 8"));
    let read = attachments.iter().filter(|a| a["status"] == "read").count();
    assert_eq!(read + attachments.iter().filter(|a| a["status"] == "unindexed").count(), 8, "{answer}");
    assert_eq!(answer["passages"].as_array().unwrap().len(), read, "one passage from each supplement read");
}
