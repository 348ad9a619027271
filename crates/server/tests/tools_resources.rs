//! Annotations, resources and prompts against the Zotero simulator (the demo library), through the same paths
//! as tools_library.rs.

mod common;
mod library_support;

use std::rc::Rc;

use common::*;
use library_support::*;
use serde_json::{json, Value};
use zotero_sim::{Fault, Simulator};

// ---- annotations, resources, prompt ----

#[tokio::test]
async fn annotations_are_listed_across_an_items_attachments_in_reading_order() {
    let sim = demo_sim();
    let result = rpc(&sim, "zotero_annotations", json!({ "itemKey": "T6W7H8UE" })).await;
    let annotations = ok(&result)["annotations"].as_array().unwrap().clone();
    assert_eq!(annotations.len(), 4);
    assert!(annotations.iter().all(|a| a["attachmentKey"] == "93WJRKG5"));
    let limited = rpc(&sim, "zotero_annotations", json!({ "itemKey": "T6W7H8UE", "limit": 2 })).await;
    assert_eq!(ok(&limited)["annotations"].as_array().unwrap().len(), 2);
    assert_eq!(ok(&limited)["truncated"], true);
}

#[tokio::test]
async fn resources_read_items_collections_and_recent_items() {
    let sim = demo_sim();
    let app = app_with_sim(sim.clone());
    let item = send(&app, modern("resources/read", json!({ "uri": "zotero://item/T6W7H8UE" }))).await;
    assert!(item.result()["contents"][0]["text"].as_str().unwrap().starts_with("# Geometric"));
    let collections = send(&app, modern("resources/read", json!({ "uri": "zotero://collections" }))).await;
    assert_eq!(collections.result()["ttlMs"], 300_000);
    assert!(collections.result()["contents"][0]["text"].as_str().unwrap().contains("宋代科技史"));
    let recent = send(&app, modern("resources/read", json!({ "uri": "zotero://recent" }))).await;
    let list: Vec<Value> = serde_json::from_str(recent.result()["contents"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(list.len(), 25);
    assert!(list.iter().all(|i| !matches!(i["itemType"].as_str(), Some("attachment" | "note" | "annotation"))));
    let missing = send(&app, modern("resources/read", json!({ "uri": "zotero://item/ZZZZ9999" }))).await;
    assert_eq!(missing.error_code(), Some(-32602));
}

#[tokio::test]
async fn the_literature_review_prompt_names_the_collection() {
    let sim = demo_sim();
    let app = app_with_sim(sim);
    let reply = send(
        &app,
        modern(
            "prompts/get",
            json!({ "name": "literature-review", "arguments": { "collectionKey": "RVRZREQQ", "focus": "heat" } }),
        ),
    )
    .await;
    let text = reply.result()["messages"][0]["content"]["text"].as_str().unwrap().to_owned();
    assert!(text.contains("RVRZREQQ") && text.contains("Focus on: heat."));
    let bad = send(
        &app,
        modern("prompts/get", json!({ "name": "literature-review", "arguments": { "collectionKey": "x" } })),
    )
    .await;
    assert_eq!(bad.error_code(), Some(-32602));
}

#[tokio::test]
async fn rate_limits_are_waited_out_transparently() {
    let sim = demo_sim();
    sim.fail_next(1, Fault::TooManyRequests { retry_after: Some(1) });
    let app = app_with_sim(sim.clone());
    // The test platform's clock is manual: the one-second wait costs nothing.
    let reply =
        send(&app, modern("tools/call", json!({ "name": "zotero_get_item", "arguments": { "key": "T6W7H8UE" } })))
            .await;
    assert!(reply.result().get("isError").is_none(), "{}", reply.text);
}

#[tokio::test]
async fn creating_more_than_fifty_items_reports_failures_at_their_own_positions() {
    let sim = demo_sim();
    let items: Vec<Value> = (0..120)
        .map(|i| {
            let mut item = json!({ "itemType": "book", "title": format!("Volume {i}") });
            if i == 3 || i == 77 {
                item["fields"] = json!({ "notAField": "x" });
            }
            item
        })
        .collect();
    let result = write(&sim, "zotero_create_items", json!({ "items": items })).await;
    let out = ok(&result);
    assert_eq!(out["created"].as_array().unwrap().len(), 118);
    let failed: Vec<String> =
        out["failed"].as_array().unwrap().iter().map(|f| f["what"].as_str().unwrap().to_owned()).collect();
    assert_eq!(failed, ["#3 Volume 3", "#77 Volume 77"], "positions survive the 50-object batches");
    assert_eq!(sim.requests().iter().filter(|r| r.method == "POST").count(), 3);
}

#[tokio::test]
async fn details_keep_the_type_specific_fields_of_theses_reports_and_preprints() {
    let sim = demo_sim();
    for (key, expected) in [
        ("Q5W3D4ZV", vec![("thesisType", "Doctoral Thesis"), ("university", "ETH Zürich"), ("numPages", "214")]),
        (
            "BH3LF34R",
            vec![
                ("institution", "Food and Agriculture Organization of the United Nations"),
                ("reportNumber", "17"),
                ("reportType", "Working paper"),
            ],
        ),
        ("BMTDL3F8", vec![("repository", "arXiv"), ("archiveID", "arXiv:2203.04517")]),
    ] {
        let result = rpc(&sim, "zotero_get_item", json!({ "key": key })).await;
        let fields = &ok(&result)["item"]["fields"];
        let text = result["content"][0]["text"].as_str().unwrap();
        for (field, value) in expected {
            assert_eq!(fields[field], value, "{key} {field}");
            assert!(text.contains(&format!("- {field}: {value}")), "{key}: {field} missing from the Markdown");
        }
        assert!(fields.get("key").is_none() && fields.get("tags").is_none(), "bookkeeping stays out of fields");
    }
}

/// A BibTeX export in the exact form api.zotero.org answers `format=bibtex` (Zotero's BibTeX translator: a leading
/// newline, tab-indented fields, `application/x-bibtex`), for a demo item. The simulator cannot run Zotero's
/// translators, so it answers 501 for export formats; this stand-in checks that the tool passes Zotero's text
/// through untouched.
const RECORDED_BIBTEX: &str = "\n@article{whitfield_geometric_2021,\n\ttitle = {Geometric deep learning enables accurate protein structure prediction},\n\tvolume = {18},\n\tjournal = {Nature Methods},\n\tauthor = {Whitfield, Hannah},\n\tyear = {2021},\n}\n";

/// The simulator, except that export requests get the recorded Zotero answer.
struct RecordedExports(Rc<Simulator>);

#[async_trait::async_trait(?Send)]
impl zotero_mcp_server::platform::HttpClient for RecordedExports {
    async fn send(
        &self,
        request: zotero_mcp_server::platform::HttpRequest,
    ) -> Result<zotero_mcp_server::platform::HttpResponse, zotero_mcp_server::platform::HttpError> {
        if request.uri().query().is_some_and(|q| q.contains("format=bibtex")) {
            assert!(request.uri().query().unwrap().contains("itemKey=T6W7H8UE"));
            return Ok(http::Response::builder()
                .status(200)
                .header("content-type", "application/x-bibtex")
                .body(RECORDED_BIBTEX.as_bytes().to_vec())
                .unwrap());
        }
        Ok(self.0.handle(request))
    }
}

#[tokio::test]
async fn get_item_includes_zoteros_own_export() {
    let sim = demo_sim();
    let mut app = app_with_sim(sim.clone());
    app.platform.http = Rc::new(RecordedExports(sim));
    let reply = send(
        &app,
        modern(
            "tools/call",
            json!({ "name": "zotero_get_item", "arguments": { "key": "T6W7H8UE", "exportFormat": "bibtex" } }),
        ),
    )
    .await;
    let out = ok(reply.result());
    assert_eq!(out["export"], RECORDED_BIBTEX);
    assert_eq!(out["exportFormat"], "bibtex", "the Markdown's heading comes from structuredContent");
    assert!(reply.result()["content"][0]["text"]
        .as_str()
        .unwrap()
        .contains("## bibtex\n\n```\n@article{whitfield_geometric_2021"));
}

#[tokio::test]
async fn an_export_the_simulator_cannot_make_is_reported_not_invented() {
    let sim = demo_sim();
    let message = error_text(
        &rpc(&sim, "zotero_get_item", json!({ "key": "T6W7H8UE", "exportFormat": "bib", "style": "apa" })).await,
    );
    assert!(message.contains("501"), "{message}");
}

/// The TypeScript server's tools, in the order its `tools/list` gives them: prompts and scripts written for it
/// call these names, so they stay, first and in this order. A fact about the upstream, not
/// a copy of the catalogue: a tool added here comes after them and is listed nowhere else.
const UPSTREAM_TOOLS: [&str; 18] = [
    "zotero_search",
    "zotero_semantic_search",
    "zotero_get_item",
    "zotero_create_items",
    "zotero_update_item",
    "zotero_delete_items",
    "zotero_list_collections",
    "zotero_manage_collections",
    "zotero_list_tags",
    "zotero_notes",
    "zotero_annotations",
    "zotero_read_attachment",
    "zotero_put_attachment",
    "zotero_delete_attachment",
    "zotero_rename_attachments",
    "zotero_import_reference",
    "zotero_reindex",
    "zotero_find_duplicates",
];

#[tokio::test]
async fn the_catalogue_keeps_the_upstream_names_order_and_declared_hints() {
    let sim = demo_sim();
    // As a grant that may write is shown it: a read-only one is not shown the tools that only write.
    let reply = send(&app_with_sim(sim), as_writer(modern("tools/list", json!({})))).await;
    let tools = reply.result()["tools"].as_array().unwrap().clone();
    let names: Vec<&str> =
        tools.iter().map(|t| t["name"].as_str().unwrap()).filter(|n| !n.starts_with("fixture_")).collect();
    assert_eq!(names[..UPSTREAM_TOOLS.len()], UPSTREAM_TOOLS, "the upstream's tools come first, in its order");
    // Every declared tool is listed, in declaration order, with the four hints its `ToolSpec` declares
    // (docs/tools.md's table of them is written from the same declarations by tests/catalogue_lists.rs).
    // A tool only panels call is listed to clients that declare MCP Apps alone (tests/apps.rs).
    let specs = zotero_mcp_server::tools::registry(&zotero_mcp_server::config::Config::from_lookup(|_| None))
        .model_tool_specs();
    assert_eq!(names, specs.iter().map(|s| s.name).collect::<Vec<_>>(), "tools/list follows tools::declare");
    for spec in &specs {
        let listed = tools.iter().find(|t| t["name"] == spec.name).unwrap();
        let mut hints = listed["annotations"].clone();
        assert_eq!(hints.as_object_mut().unwrap().remove("title"), Some(json!(spec.title)), "{}", spec.name);
        let declared = json!({
            "readOnlyHint": spec.access == zotero_mcp_server::mcp::Access::Read,
            "destructiveHint": spec.destructive,
            "idempotentHint": spec.idempotent,
            "openWorldHint": spec.open_world,
        });
        assert_eq!(hints, declared, "{}: the hints clients are shown are the declared ones", spec.name);
    }
    for tool in &tools {
        assert!(tool["description"].as_str().unwrap().len() > 60, "{} needs a real description", tool["name"]);
        assert!(!zotero_mcp_server::mcp::schema::contains_ref(&tool["inputSchema"]));
        assert!(!zotero_mcp_server::mcp::schema::contains_ref(&tool["outputSchema"]));
    }
}

#[tokio::test]
async fn year_filtered_pages_skip_no_matches() {
    let sim = demo_sim();
    let everything = rpc(&sim, "zotero_search", json!({ "fromYear": 2022, "limit": 100, "sort": "title" })).await;
    let all = keys(&ok(&everything)["items"]);
    assert!(all.len() > 6, "enough matches to page through");
    let mut paged = Vec::new();
    let mut offset = 0;
    for _ in 0..20 {
        let page =
            rpc(&sim, "zotero_search", json!({ "fromYear": 2022, "limit": 3, "sort": "title", "offset": offset }))
                .await;
        paged.extend(keys(&ok(&page)["items"]));
        match ok(&page)["nextOffset"].as_u64() {
            Some(next) => offset = next,
            None => break,
        }
    }
    assert_eq!(paged, all, "paging with nextOffset returns every match once, in order");
}

// ---- resources and prompts (typed like tools) ----

#[tokio::test]
async fn the_item_resource_parses_its_key_before_any_request() {
    let sim = demo_sim();
    let app = app_with_sim(sim.clone());
    let good = send(&app, modern("resources/read", json!({ "uri": "zotero://item/T6W7H8UE" }))).await;
    assert!(good.result()["contents"][0]["text"].as_str().unwrap().contains("T6W7H8UE"), "{}", good.text);
    let before = sim.requests().len();
    let bad = send(&app, modern("resources/read", json!({ "uri": "zotero://item/NOT-A-KEY" }))).await;
    assert_eq!(bad.error_code(), Some(-32602), "{}", bad.text);
    assert!(bad.text.contains("`key`"), "names the variable: {}", bad.text);
    assert_eq!(sim.requests().len(), before, "a malformed key reaches no request");
}

#[tokio::test]
async fn prompt_arguments_come_from_their_type() {
    let app = app_with_sim(demo_sim());
    let listed = send(&app, modern("prompts/list", json!({}))).await;
    let review =
        listed.result()["prompts"].as_array().unwrap().iter().find(|p| p["name"] == "literature-review").cloned();
    let arguments = review.expect("literature-review listed")["arguments"].clone();
    assert_eq!(arguments[0]["name"], "collectionKey");
    assert_eq!(arguments[0]["required"], true);
    assert!(arguments[0]["description"].as_str().unwrap().contains("collection's key"));
    assert_eq!(arguments[1]["name"], "focus");
    assert_eq!(arguments[1]["required"], false);

    let get = |arguments: Value| modern("prompts/get", json!({ "name": "literature-review", "arguments": arguments }));
    let blank = send(&app, get(json!({ "collectionKey": "  " }))).await;
    assert_eq!(blank.error_code(), Some(-32602));
    assert!(blank.text.contains("needs the argument `collectionKey`"), "{}", blank.text);
    let malformed = send(&app, get(json!({ "collectionKey": "../etc" }))).await;
    assert_eq!(malformed.error_code(), Some(-32602));
    assert!(malformed.text.contains("`collectionKey`"), "{}", malformed.text);
    let fine = send(&app, get(json!({ "collectionKey": "9AV8V2XB", "focus": "methods" }))).await;
    let text = fine.result()["messages"][0]["content"]["text"].as_str().unwrap().to_owned();
    assert!(text.contains("9AV8V2XB") && text.contains("Focus on: methods."), "{text}");
}
