//! `zotero_semantic_search`, `zotero_reindex` and the scheduled sync job through the registry, against the
//! demo library in the simulator and the in-memory AI Search (which indexes asynchronously, like the service).

mod common;

use std::rc::Rc;

use common::*;
use serde_json::{json, Value};
use zotero_mcp_core::testing::MemoryAiSearch;
use zotero_mcp_server::app::App;
use zotero_mcp_server::auth::Grant;
use zotero_mcp_server::call::Session;

struct Setup {
    app: App,
    ai: Rc<MemoryAiSearch>,
}

fn setup(bound: bool) -> Setup {
    let mut app = app_with_sim(demo_sim());
    let ai = MemoryAiSearch::new();
    if bound {
        app.platform.ai_search = Some(ai.clone());
    }
    Setup { app, ai }
}

impl Setup {
    async fn tool(&self, name: &str, grant: Grant, arguments: Value) -> Value {
        let ctx = Session::new(grant, self.app.config.clone(), self.app.platform.clone());
        zotero_mcp_server::tools::registry(&self.app.config)
            .call_tool(&ctx, name, arguments)
            .await
            .expect("the tool exists")
    }

    async fn search(&self, arguments: Value) -> Value {
        self.tool("zotero_semantic_search", Grant::read_only("owner"), arguments).await
    }

    /// Runs the scheduled job until the whole library is sent, then lets the index finish.
    async fn sync_all(&self) {
        for _ in 0..30 {
            let report = zotero_mcp_server::jobs::sync_semantic_index(&self.app).await;
            if report.complete() {
                self.ai.process();
                return;
            }
        }
        panic!("the sync did not finish in 30 runs");
    }
}

#[tokio::test]
async fn without_the_binding_both_tools_say_so() {
    let s = setup(false);
    let error = error_text(&s.search(json!({ "query": "protein folding" })).await);
    assert!(error.contains("AI Search is not bound"), "{error}");
    let reindex = s.tool("zotero_reindex", Grant::read_write("owner"), json!({})).await;
    assert_eq!(ok(&reindex)["complete"], true);
    assert!(ok(&reindex)["message"].as_str().unwrap().contains("not bound"));
}

#[tokio::test]
async fn before_any_sync_the_index_is_empty_and_the_answer_says_how_to_fill_it() {
    let s = setup(true);
    let result = s.search(json!({ "query": "protein folding" })).await;
    assert_eq!(ok(&result)["total"], 0);
    assert!(ok(&result)["note"].as_str().unwrap().contains("zotero_reindex"), "{result}");
    assert!(!s.ai.has_instance("zotero-items"), "reading never creates the instance");
}

#[tokio::test]
async fn the_scheduled_sync_fills_the_index_and_search_finds_papers_with_a_passage() {
    let s = setup(true);
    s.sync_all().await;
    let result = s
        .search(json!({ "query": "geometric deep learning protein structure from single sequences", "limit": 5 }))
        .await;
    let items = ok(&result)["items"].as_array().unwrap().clone();
    assert_eq!(items[0]["key"], "T6W7H8UE", "{}", text(&result));
    let score = items[0]["score"].as_f64().unwrap();
    assert!(score > 0.0 && score <= 1.0);
    assert!(items[0]["passage"].as_str().unwrap().len() > 20);
    let keys: Vec<&str> = items.iter().map(|i| i["key"].as_str().unwrap()).collect();
    let unique: std::collections::HashSet<&str> = keys.iter().copied().collect();
    assert_eq!(keys.len(), unique.len(), "an item comes back once: {keys:?}");
    assert!(text(&result).contains("Matching passages"));
    assert_eq!(ok(&result)["scored"], items.len());
}

/// Both searches read `fromYear` and `toYear` as one range type: a reversed range is refused alike, before any
/// request, and the registry names the tool.
#[tokio::test]
async fn both_searches_refuse_a_reversed_year_range_naming_the_tool() {
    let s = setup(true);
    let arguments = json!({ "query": "protein structure", "fromYear": 2021, "toYear": 2020 });
    for tool in ["zotero_semantic_search", "zotero_search"] {
        let refused = s.tool(tool, Grant::read_only("owner"), arguments.clone()).await;
        assert_eq!(
            error_text(&refused),
            format!("Invalid arguments for {tool}: `fromYear` (2021) is after `toYear` (2020)"),
            "{refused}"
        );
    }
}

#[tokio::test]
async fn filters_narrow_and_what_they_drop_is_reported() {
    let s = setup(true);
    s.sync_all().await;
    let books = s.search(json!({ "query": "demo library guide zotero", "itemType": "book" })).await;
    let items = ok(&books)["items"].as_array().unwrap();
    assert!(!items.is_empty(), "{books}");
    assert!(items.iter().all(|i| i["itemType"] == "book"), "{books}");
    let years = s.search(json!({ "query": "protein structure", "fromYear": 2022, "toYear": 2022 })).await;
    for item in ok(&years)["items"].as_array().unwrap() {
        assert_eq!(item["year"], "2022", "{years}");
    }
    let tagged = s.search(json!({ "query": "protein structure", "tags": ["no-such-tag-anywhere"] })).await;
    assert_eq!(ok(&tagged)["total"], 0);
    assert!(ok(&tagged)["note"].as_str().unwrap().contains("dropped"), "{tagged}");
}

#[tokio::test]
async fn weak_matches_are_flagged_not_hidden() {
    let s = setup(true);
    s.sync_all().await;
    // No document has all of these words, so no similarity reaches 0.99.
    let result =
        s.search(json!({ "query": "protein folding kinetics inside lipid membranes", "minScore": 0.99 })).await;
    let out = ok(&result);
    assert!(out["total"].as_u64().unwrap() > 0);
    assert_eq!(out["belowThreshold"], out["scored"]);
    assert!(out["note"].as_str().unwrap().contains("relevance floor"), "{result}");
}

#[tokio::test]
async fn reindex_needs_the_write_scope_and_reports_progress_until_complete() {
    let s = setup(true);
    let refused = s.tool("zotero_reindex", Grant::read_only("owner"), json!({})).await;
    assert!(error_text(&refused).contains("zotero:write"));
    let first = s.tool("zotero_reindex", Grant::read_write("owner"), json!({ "limit": 3 })).await;
    let out = ok(&first);
    // Three keys are taken; notes and attachments among them have no document of their own.
    let submitted = out["submitted"].as_u64().unwrap();
    assert!((1..=3).contains(&submitted), "{out}");
    assert_eq!(out["complete"], false);
    assert!(out["remaining"].as_u64().unwrap() > 0);
    assert!(text(&first).contains("call again"), "{}", text(&first));
    let mut complete = false;
    for _ in 0..30 {
        let next = s.tool("zotero_reindex", Grant::read_write("owner"), json!({})).await;
        let out = ok(&next).clone();
        assert!(out["zoteroRequests"].as_u64().unwrap() <= 40, "{out}");
        if out["complete"] == true {
            complete = true;
            break;
        }
    }
    assert!(complete);
    let again = s.tool("zotero_reindex", Grant::read_write("owner"), json!({})).await;
    assert!(ok(&again)["message"].as_str().unwrap().contains("Nothing changed"), "{again}");
}

#[tokio::test]
async fn the_semantic_schema_has_the_upstream_arguments_and_not_the_keyword_only_ones() {
    let s = setup(true);
    let view = zotero_mcp_server::config::ToolView { groups: s.app.config.tool_groups, writes: false, apps: false };
    let tools = zotero_mcp_server::tools::registry(&s.app.config).list_tools(view);
    let tool = tools.iter().find(|t| t["name"] == "zotero_semantic_search").unwrap();
    let properties = tool["inputSchema"]["properties"].as_object().unwrap();
    for absent in ["includeTrashed", "sort", "direction", "qmode", "citationKey"] {
        assert!(!properties.contains_key(absent), "{absent}");
    }
    for present in ["query", "minScore", "itemType", "limit", "tags", "collectionKey", "fromYear", "toYear", "since"] {
        assert!(properties.contains_key(present), "{present}");
    }
    assert_eq!(properties["limit"]["maximum"], 50);
    assert_eq!(tool["annotations"]["readOnlyHint"], true);
}

/// Indexes the demo library with KPDKK5UT's PDF (UN79YVS8, which has no entry in Zotero's full-text index, so
/// its text can only come from the file) put in the bench's file store by `store`, then searches for words of its
/// second page: the first hit.
async fn first_hit_for_page_two_of_a_stored_pdf(
    b: &mut common::dav::Bench,
    store: fn(&common::dav::Bench, &[u8]),
) -> Value {
    let ai = MemoryAiSearch::new();
    b.app.platform.ai_search = Some(ai.clone());
    let pdf = zotero_mcp_core::testing::pdf_of_pages(&[
        "Side chains are packed by message passing over residue graphs",
        "Rotamer libraries are replaced by a learned equivariant energy landscape",
    ]);
    store(b, &pdf);
    for _ in 0..30 {
        let report = zotero_mcp_server::jobs::sync_semantic_index(&b.app).await;
        if report.complete() {
            break;
        }
    }
    ai.process();
    let result = b
        .tool(
            "zotero_semantic_search",
            Grant::read_only("owner"),
            json!({ "query": "learned equivariant energy landscape replaces rotamer libraries", "limit": 3 }),
        )
        .await;
    let first = ok(&result)["items"][0].clone();
    assert_eq!(first["key"], "KPDKK5UT", "{}", text(&result));
    assert_eq!(first["page"], 2, "{first}");
    first
}

#[tokio::test]
async fn a_paper_without_indexed_text_is_read_from_webdav_and_its_passages_have_pages() {
    let mut b = common::dav::bench(true);
    let first = first_hit_for_page_two_of_a_stored_pdf(&mut b, |b, pdf| b.upload("UN79YVS8", "paper.pdf", pdf)).await;
    assert!(b.dav_requests().iter().any(|r| r == "GET /files/zotero/UN79YVS8.zip"), "{:?}", b.dav_requests());
    assert!(first["passage"].as_str().unwrap().contains("equivariant energy landscape"), "{first}");
    assert!(!first["passage"].as_str().unwrap().contains("[p"), "page markers never reach a caller: {first}");
}

#[tokio::test]
async fn a_paper_without_indexed_text_is_read_from_zotero_storage_too() {
    let mut b = common::dav::bench(false);
    let store = |b: &common::dav::Bench, pdf: &[u8]| {
        b.sim.store_file(common::files::LIB, "UN79YVS8", "paper.pdf", pdf);
    };
    let first = first_hit_for_page_two_of_a_stored_pdf(&mut b, store).await;
    assert!(first["passage"].as_str().unwrap().contains("equivariant energy landscape"), "{first}");
    common::files::assert_key_stayed_with_the_api(&b.sim);
}
