//! Every library the key can reach, per call: `zotero_list_libraries`, and the `library` argument every tool
//! takes (handled once by the registry), against the simulator with the demo library and two groups — one the key
//! may write, one it may only read — whose files are on its Zotero Storage.

mod common;

use common::dav::*;
use common::files::*;
use common::*;
use serde_json::{json, Value};
use zotero_mcp_core::testing::MemoryAiSearch;
use zotero_mcp_server::auth::Grant;
use zotero_sim::LibraryRef;

const LAB: u64 = 100;
const READING: u64 = 200;

/// The demo library (files on WebDAV when `webdav`), plus the groups "Protein Lab" (writable) and "Reading
/// Group" (read only), each with one paper; the lab's paper has a PDF on Zotero Storage. Returns the lab paper's
/// key and its attachment's.
fn groups_bench(webdav: bool) -> (Bench, String, String) {
    groups_bench_with(webdav, &[])
}

/// [`groups_bench`] with more settings.
fn groups_bench_with(webdav: bool, settings: &[(&str, &str)]) -> (Bench, String, String) {
    let b = bench_with(webdav, settings);
    b.sim.add_group(LAB, DEMO_KEY, true);
    b.sim.add_group(READING, DEMO_KEY, false);
    b.sim.set_library_name(LibraryRef::Group(LAB), "Protein Lab");
    b.sim.set_library_name(LibraryRef::Group(READING), "Reading Group");
    let shelf = b.sim.insert_collection(LibraryRef::Group(LAB), json!({ "name": "Lab shelf" }));
    let paper = b.sim.insert_item(
        LibraryRef::Group(LAB),
        json!({
            "itemType": "journalArticle", "title": "Folding intermediates seen by the lab", "date": "2024",
            "collections": [shelf]
        }),
    );
    let attachment = b.sim.insert_item(
        LibraryRef::Group(LAB),
        json!({
            "itemType": "attachment", "linkMode": "imported_file", "parentItem": paper, "title": "Full Text PDF",
            "contentType": "application/pdf", "filename": "lab.pdf"
        }),
    );
    b.sim.store_file(LibraryRef::Group(LAB), &attachment, "lab.pdf", &pdf());
    b.sim.insert_item(
        LibraryRef::Group(READING),
        json!({ "itemType": "book", "title": "A reading group's folding classic", "date": "1999" }),
    );
    (b, paper, attachment)
}

/// A read-only request's context, as the router makes one per request.
fn read_context(b: &Bench) -> zotero_mcp_server::call::Session {
    zotero_mcp_server::call::Session::new(Grant::read_only("owner"), b.app.config.clone(), b.app.platform.clone())
}

fn titles(result: &Value) -> Vec<String> {
    ok(result)["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|i| i["title"].as_str().map(str::to_owned))
        .collect()
}

/// Requests the simulator's API received that changed something.
fn writes(b: &Bench) -> Vec<String> {
    b.sim.requests().iter().filter(|r| r.method != "GET").map(|r| format!("{} {}", r.method, r.path)).collect()
}

#[tokio::test]
async fn the_libraries_are_listed_with_their_rights_and_file_stores() {
    let (b, _, _) = groups_bench(true);
    let result = b.tool("zotero_list_libraries", Grant::read_only("owner"), json!({})).await;
    let libraries = ok(&result)["libraries"].as_array().unwrap().clone();
    let find = |path: &str| libraries.iter().find(|l| l["library"] == path).cloned().unwrap_or_default();
    let personal = find(&format!("users/{DEMO_USER}"));
    assert_eq!((personal["type"].as_str(), personal["write"].as_bool()), (Some("user"), Some(true)));
    assert_eq!(personal["fileStore"], "WebDAV");
    assert_eq!(personal["default"], true);
    let lab = find(&format!("groups/{LAB}"));
    assert_eq!((lab["name"].as_str(), lab["write"].as_bool()), (Some("Protein Lab"), Some(true)));
    assert_eq!(lab["fileStore"], "Zotero Storage", "a group's files are on Zotero Storage, WebDAV or not");
    assert_eq!(lab["items"], 2);
    let reading = find(&format!("groups/{READING}"));
    assert_eq!((reading["write"].as_bool(), reading["default"].as_bool()), (Some(false), Some(false)));
    assert!(text(&result).contains("Reading Group — `groups/200` (read only"), "{}", text(&result));
    assert_eq!(personal["semanticIndex"], false, "no AI Search bound");
}

#[tokio::test]
async fn the_listing_says_which_libraries_the_semantic_index_covers() {
    let (mut b, _, _) = groups_bench_with(false, &[("INDEX_LIBRARIES", "groups/100")]);
    b.app.platform.ai_search = Some(MemoryAiSearch::new());
    let result = b.tool("zotero_list_libraries", Grant::read_only("owner"), json!({})).await;
    let covered: Vec<(String, bool)> = ok(&result)["libraries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| (l["library"].as_str().unwrap().to_owned(), l["semanticIndex"].as_bool().unwrap()))
        .collect();
    let expected =
        [(format!("users/{DEMO_USER}"), true), ("groups/100".to_owned(), true), ("groups/200".to_owned(), false)];
    assert_eq!(covered, expected);
    assert!(
        text(&result).contains(
            "Protein Lab — `groups/100` (read and write, 2 items, files on Zotero Storage, in the semantic index)"
        ),
        "{}",
        text(&result)
    );
}

#[tokio::test]
async fn a_call_without_library_works_on_the_configured_one_without_asking_the_key() {
    let (b, _, _) = groups_bench(false);
    let result = b.tool("zotero_search", Grant::read_only("owner"), json!({ "query": "folding" })).await;
    assert!(!titles(&result).iter().any(|t| t.contains("lab") || t.contains("reading group")), "{result}");
    let asked = b.sim.requests().iter().filter(|r| r.path == "/keys/current").count();
    assert_eq!(asked, 0, "the configured library needs no access check");
    assert!(b.sim.requests().iter().all(|r| r.path.starts_with(&format!("/users/{DEMO_USER}/"))));
}

#[tokio::test]
async fn a_group_is_searched_by_its_path_or_its_name() {
    let (b, _, _) = groups_bench(false);
    for library in [format!("groups/{LAB}"), "protein lab".to_owned()] {
        let result =
            b.tool("zotero_search", Grant::read_only("owner"), json!({ "query": "folding", "library": library })).await;
        assert_eq!(titles(&result), ["Folding intermediates seen by the lab"], "{library}: {result}");
    }
    let unknown =
        b.tool("zotero_search", Grant::read_only("owner"), json!({ "query": "x", "library": "Chess Club" })).await;
    let error = error_text(&unknown);
    assert!(error.contains("no group of this key is called") && error.contains("Protein Lab"), "{error}");
    let elsewhere =
        b.tool("zotero_search", Grant::read_only("owner"), json!({ "query": "x", "library": "groups/999" })).await;
    assert!(error_text(&elsewhere).contains("cannot reach library groups/999"), "{}", error_text(&elsewhere));
    let other_user =
        b.tool("zotero_search", Grant::read_only("owner"), json!({ "query": "x", "library": "users/1" })).await;
    assert!(error_text(&other_user).contains("cannot reach library users/1"));
    let not_text = b.tool("zotero_search", Grant::read_only("owner"), json!({ "query": "x", "library": 5 })).await;
    assert!(error_text(&not_text).contains("library must be a string"), "{}", error_text(&not_text));
    // The configured library by its path is the default one.
    let mine = format!("users/{DEMO_USER}");
    let result =
        b.tool("zotero_search", Grant::read_only("owner"), json!({ "query": "protein", "library": mine })).await;
    assert!(!titles(&result).is_empty());
}

#[tokio::test]
async fn a_writable_group_takes_writes_and_a_read_only_one_refuses_them_with_nothing_written() {
    let (b, paper, _) = groups_bench(false);
    let created = b
        .write(
            "zotero_notes",
            json!({ "action": "create", "itemKey": paper, "note": "Seen in lab meeting", "library": format!("groups/{LAB}") }),
        )
        .await;
    let note = ok(&created)["noteKey"].as_str().unwrap().to_owned();
    assert_eq!(b.sim.item(LibraryRef::Group(LAB), &note).unwrap()["data"]["parentItem"], json!(paper));

    let before = writes(&b);
    let refused = b
        .write(
            "zotero_create_items",
            json!({ "items": [{ "itemType": "book", "title": "Not here" }], "library": "Reading Group" }),
        )
        .await;
    let error = error_text(&refused);
    assert!(error.contains("may only read library groups/200") && error.contains("wrote nothing"), "{error}");
    assert_eq!(writes(&b), before, "nothing was sent that writes");
    // A read-only connection is refused for its scope first, whatever the library.
    let read_only = b
        .tool(
            "zotero_create_items",
            Grant::read_only("owner"),
            json!({ "items": [{ "itemType": "book", "title": "x" }], "library": format!("groups/{LAB}") }),
        )
        .await;
    assert!(error_text(&read_only).contains("zotero:write"));
}

/// The id the answer's last line gives for undoing the call.
fn undo_id(result: &Value) -> String {
    let said = text(result);
    let line = said.lines().rev().find(|l| l.starts_with("Undo: zotero_undo")).unwrap_or_else(|| panic!("{said}"));
    line.split('"').nth(1).expect("an id in quotes").to_owned()
}

#[tokio::test]
async fn a_group_s_undo_journal_is_apart_from_the_personal_library_s() {
    let (b, paper, _) = groups_bench(false);
    let lab = format!("groups/{LAB}");
    let in_lab = undo_id(
        &b.write("zotero_update_item", json!({ "keys": [paper], "fields": { "extra": "lab" }, "library": lab })).await,
    );
    let personal =
        undo_id(&b.write("zotero_update_item", json!({ "keys": ["KPDKK5UT"], "fields": { "extra": "mine" } })).await);
    let ids = |listing: &Value| -> Vec<String> {
        ok(listing)["entries"].as_array().unwrap().iter().map(|e| e["id"].as_str().unwrap().to_owned()).collect()
    };
    assert_eq!(ids(&b.write("zotero_undo", json!({})).await), std::slice::from_ref(&personal));
    assert_eq!(ids(&b.write("zotero_undo", json!({ "library": lab })).await), std::slice::from_ref(&in_lab));
    // Explicitly naming the configured library is the configured library.
    let named = b.write("zotero_undo", json!({ "library": format!("users/{DEMO_USER}") })).await;
    assert_eq!(ids(&named), std::slice::from_ref(&personal));

    let before = writes(&b);
    let said = error_text(&b.write("zotero_undo", json!({ "id": in_lab })).await);
    assert!(said.contains(&format!("made in {lab} through the Web API")), "{said}");
    assert!(said.contains(&format!("library set to {lab}")) && said.contains("Nothing was changed"), "{said}");
    let said = error_text(&b.write("zotero_undo", json!({ "id": personal, "library": lab })).await);
    assert!(said.contains(&format!("made in users/{DEMO_USER}")), "{said}");
    assert_eq!(writes(&b), before, "nothing was written");
    let extra = |lib, key: &str| b.sim.item(lib, key).unwrap()["data"]["extra"].clone();
    assert_eq!(extra(LibraryRef::Group(LAB), &paper), "lab");
    assert_eq!(extra(LibraryRef::User(DEMO_USER), "KPDKK5UT"), "mine");

    let undone = b.write("zotero_undo", json!({ "id": in_lab, "library": lab })).await;
    assert_eq!(ok(&undone)["objects"][0]["outcome"], "restored", "{undone}");
}

#[tokio::test]
async fn a_group_s_pdf_is_read_from_zotero_storage_even_when_webdav_holds_the_personal_files() {
    let (b, _, pdf) = groups_bench(true);
    let result = b
        .tool(
            "zotero_read_attachment",
            Grant::read_only("owner"),
            json!({ "itemKey": pdf, "fromPage": 2, "toPage": 2, "library": format!("groups/{LAB}") }),
        )
        .await;
    assert_eq!(ok(&result)["source"], "zotero-storage", "{result}");
    assert!(ok(&result)["text"].as_str().unwrap().contains("Side chains pack"), "{result}");
    assert!(b.dav_requests().is_empty(), "WebDAV holds the personal library's files only");
    assert_key_stayed_with_the_api(&b.sim);
}

#[tokio::test]
async fn every_tool_publishes_the_library_argument() {
    let published: Value = serde_json::from_str(include_str!("../src/mcp/schemas.json")).unwrap();
    for (tool, entry) in published["tools"].as_object().unwrap() {
        let library = &entry["inputSchema"]["properties"]["library"];
        // Plain and undescribed in every tool (each tool's schema is in the model's context on every turn); what it
        // takes is said once, where the values are listed, and in the server's instructions.
        assert_eq!(library, &json!({ "type": "string" }), "{tool}");
    }
    let libraries = published["tools"]["zotero_list_libraries"].clone();
    assert!(libraries.is_object());
    let listed = zotero_mcp_server::tools::registry(&app().config).tool_specs();
    let spec = listed.iter().find(|s| s.name == "zotero_list_libraries").unwrap();
    assert!(spec.description.contains("groups/<id>") && spec.description.contains("`library`"), "{}", spec.description);
    assert!(zotero_mcp_server::mcp::protocol::INSTRUCTIONS.contains("groups/<id>"));
}

#[tokio::test]
async fn a_null_argument_is_taken_as_left_out() {
    let (b, _, _) = groups_bench_with(false, &[]);
    let result = b.tool("zotero_list_tags", Grant::read_only("owner"), json!({ "library": null, "limit": null })).await;
    assert!(result.get("isError").is_none(), "{result}");
}

#[tokio::test]
async fn semantic_search_is_not_answered_for_a_library_the_index_does_not_hold() {
    let (b, _, _) = groups_bench_with(false, &[("INDEX_LIBRARIES", "groups/100")]);
    let result = b
        .tool(
            "zotero_semantic_search",
            Grant::read_only("owner"),
            json!({ "query": "folding", "library": format!("groups/{READING}") }),
        )
        .await;
    let error = error_text(&result);
    assert!(error.contains("does not hold library groups/200: add it to INDEX_LIBRARIES"), "{error}");
    let reindex =
        b.tool("zotero_reindex", Grant::read_write("owner"), json!({ "library": format!("groups/{READING}") })).await;
    assert!(error_text(&reindex).contains("INDEX_LIBRARIES"), "{reindex}");
}

/// The semantic index with the two groups beside the configured library, and `SYNC_SUBREQUEST_BUDGET` and
/// `INDEX_FULL_TEXT` as given.
fn indexed_groups_bench(budget: &str, full_text: bool) -> (Bench, std::rc::Rc<MemoryAiSearch>) {
    let full_text = if full_text { "1" } else { "0" };
    let settings = [
        ("INDEX_LIBRARIES", "groups/100, groups/200"),
        ("SYNC_SUBREQUEST_BUDGET", budget),
        ("INDEX_FULL_TEXT", full_text),
    ];
    let (mut b, _, _) = groups_bench_with(false, &settings);
    let ai = MemoryAiSearch::new();
    b.app.platform.ai_search = Some(ai.clone());
    (b, ai)
}

/// The documents' names, sorted.
fn document_names(ai: &MemoryAiSearch) -> Vec<String> {
    let mut names: Vec<String> = ai.documents("zotero-items").into_iter().map(|d| d.name).collect();
    names.sort();
    names
}

#[tokio::test]
async fn the_index_holds_each_library_in_its_own_folder_and_each_search_stays_in_its_library() {
    let (b, ai) = indexed_groups_bench("1000", true);
    let run = zotero_mcp_server::jobs::sync_semantic_index(&b.app).await;
    assert!(run.complete(), "{run:?}");
    assert_eq!(run.runs.len(), 3);
    ai.process();

    let names = document_names(&ai);
    let lab: Vec<&String> = names.iter().filter(|n| n.starts_with("groups/100/")).collect();
    let reading: Vec<&String> = names.iter().filter(|n| n.starts_with("groups/200/")).collect();
    assert_eq!((lab.len(), reading.len()), (1, 1), "{names:?}");
    // The configured library's documents stay at the root under the TypeScript project's names.
    assert!(names.contains(&format!("{PARENT}.md")), "{names:?}");
    // So does its cursor; the groups' cursors are under their prefixes.
    let keys: Vec<String> =
        b.app.platform.cache_kv.list("", None, 1000).await.unwrap().keys.into_iter().map(|k| k.name).collect();
    for key in ["aisearch:sync-state:zotero-items", "lib:groups/100:aisearch:sync-state:zotero-items"] {
        assert!(keys.iter().any(|k| k == key), "{key} missing from {keys:?}");
    }
    assert!(keys.iter().any(|k| k == "lib:groups/200:aisearch:sync-state:zotero-items"), "{keys:?}");

    let search = |library: Option<&str>| {
        let mut arguments = json!({ "query": "folding intermediates seen by the lab reading group classic" });
        if let Some(library) = library {
            arguments["library"] = json!(library);
        }
        b.tool("zotero_semantic_search", Grant::read_only("owner"), arguments)
    };
    let in_lab = titles(&search(Some("groups/100")).await);
    assert_eq!(in_lab, ["Folding intermediates seen by the lab"]);
    let in_reading = titles(&search(Some("Reading Group")).await);
    assert_eq!(in_reading, ["A reading group's folding classic"]);
    let in_default = titles(&search(None).await);
    assert!(!in_default.iter().any(|t| t.contains("lab") || t.contains("reading group")), "{in_default:?}");
    // The default library's search keeps the groups' folders out before retrieval, not only afterwards.
    let filters = ai.searches().last().unwrap()["ai_search_options"]["retrieval"]["filters"].clone();
    assert_eq!(filters["folder"], json!({ "$nin": ["groups/100/", "groups/200/"] }), "{filters}");
}

#[tokio::test]
async fn a_full_sync_of_one_library_removes_none_of_the_others_documents() {
    let (b, ai) = indexed_groups_bench("1000", true);
    assert!(zotero_mcp_server::jobs::sync_semantic_index(&b.app).await.complete());
    let before = document_names(&ai);
    let full = b.tool("zotero_reindex", Grant::read_write("owner"), json!({ "full": true })).await;
    assert_eq!(ok(&full)["removed"], 0, "{full}");
    let full =
        b.tool("zotero_reindex", Grant::read_write("owner"), json!({ "full": true, "library": "groups/100" })).await;
    assert_eq!(ok(&full)["removed"], 0, "{full}");
    assert_eq!(document_names(&ai), before);
}

#[tokio::test]
async fn a_small_budget_reaches_all_three_libraries_across_runs_in_turn() {
    // Metadata only, so the configured library's 88 items take a few runs rather than dozens.
    let (b, ai) = indexed_groups_bench("6", false);
    let mut first = Vec::new();
    let mut caught_up = std::collections::HashSet::new();
    for _ in 0..40 {
        let before = b.sim.requests().len();
        let run = zotero_mcp_server::jobs::sync_semantic_index(&b.app).await;
        let made = b.sim.requests().len() - before;
        assert!(made <= 6, "a run made {made} Zotero requests over its budget of 6");
        first.push(run.runs[0].library.map(|id| id.path()));
        for library in &run.runs {
            if library.result.as_ref().expect("each library's run succeeds").complete {
                caught_up.insert(library.library.map(|id| id.path()));
            }
        }
        if caught_up.len() == 3 {
            break;
        }
    }
    assert_eq!(caught_up.len(), 3, "the three libraries were not all caught up in 40 runs: {caught_up:?}");
    // Each run starts one library further on.
    assert_eq!(first[..3], [None, Some("groups/100".to_owned()), Some("groups/200".to_owned())]);
    let names = document_names(&ai);
    assert!(names.iter().any(|n| n.starts_with("groups/100/")) && names.iter().any(|n| n.starts_with("groups/200/")));
    assert!(names.contains(&format!("{PARENT}.md")), "{names:?}");
}

#[tokio::test]
async fn an_unusable_index_libraries_setting_is_named_by_the_sync_and_the_search() {
    let (mut b, _, _) = groups_bench_with(false, &[("INDEX_LIBRARIES", "groups/100, the lab")]);
    b.app.platform.ai_search = Some(MemoryAiSearch::new());
    let run = zotero_mcp_server::jobs::sync_semantic_index(&b.app).await;
    let error = run.configured().unwrap().as_ref().unwrap_err();
    assert!(error.to_string().contains("INDEX_LIBRARIES names \"the\""), "{error}");
    let result = b.tool("zotero_semantic_search", Grant::read_only("owner"), json!({ "query": "folding" })).await;
    assert!(error_text(&result).contains("INDEX_LIBRARIES"), "{result}");
}

#[tokio::test]
async fn resources_and_the_prompt_reach_a_group_by_its_path() {
    let (b, paper, _) = groups_bench(false);
    let ctx = read_context(&b);
    let registry = zotero_mcp_server::tools::registry(&b.app.config);
    let uri = format!("zotero://groups/{LAB}/item/{paper}");
    let (contents, _) = registry.read_resource(&ctx, &uri).await.unwrap();
    assert!(contents[0].text.contains("Folding intermediates seen by the lab"), "{}", contents[0].text);
    assert_eq!(contents[0].uri, uri, "the contents keep the URI asked for");

    let ctx = read_context(&b);
    let refused = registry.read_resource(&ctx, "zotero://groups/999/item/ABCD2345").await.unwrap_err();
    assert!(refused.to_string().contains("cannot reach library groups/999"), "{refused}");

    let shelf = b.sim.collections(LibraryRef::Group(LAB))[0]["key"].as_str().unwrap().to_owned();
    let ctx = read_context(&b);
    let arguments = json!({ "collectionKey": shelf, "library": "Protein Lab" });
    let prompt = registry.get_prompt(&ctx, "literature-review", Some(&arguments)).await.unwrap();
    let text = prompt["messages"][0]["content"]["text"].as_str().unwrap();
    assert!(text.contains(&format!("collection {shelf}")), "{text}");
    assert!(text.contains(r#"pass `"library": "groups/100"` to every tool"#), "{text}");
    let listed = registry.list_prompts();
    assert!(listed[0]["arguments"].as_array().unwrap().iter().any(|a| a["name"] == "library"));
}

#[tokio::test]
async fn a_group_s_cached_texts_are_kept_under_its_prefix_and_the_default_keys_do_not_change() {
    let (b, _, pdf) = groups_bench(false);
    b.sim.store_file(LIB, ATTACHMENT, "paper.pdf", &common::files::pdf());
    let read = |library: Option<String>, key: String| {
        let mut arguments = json!({ "itemKey": key, "fromPage": 1, "toPage": 1 });
        if let Some(library) = library {
            arguments["library"] = json!(library);
        }
        b.tool("zotero_read_attachment", Grant::read_only("owner"), arguments)
    };
    ok(&read(Some(format!("groups/{LAB}")), pdf.clone()).await);
    ok(&read(None, ATTACHMENT.to_owned()).await);
    let keys: Vec<String> =
        b.app.platform.cache_kv.list("", None, 1000).await.unwrap().keys.into_iter().map(|k| k.name).collect();
    let md5 =
        |key: &str| b.sim.item(LibraryRef::Group(LAB), key).map(|i| i["data"]["md5"].as_str().unwrap().to_owned());
    let group_key = format!("lib:groups/{LAB}:text:{pdf}:{}:1-1:60", md5(&pdf).unwrap());
    assert!(keys.contains(&group_key), "{keys:?}");
    let default_md5 = b.sim.item(LIB, ATTACHMENT).unwrap()["data"]["md5"].as_str().unwrap().to_owned();
    // The TypeScript server's key, unchanged for the configured library.
    assert!(keys.contains(&format!("text:{ATTACHMENT}:{default_md5}:1-1:60")), "{keys:?}");
    // A second read of the group's page comes from its own cache entry.
    let again = read(Some(format!("groups/{LAB}")), pdf.clone()).await;
    ok(&again);
    assert_eq!(b.sim.storage_requests().len(), 2, "one download per file: the third read is the cache's");
}

#[tokio::test]
async fn a_group_s_files_are_on_zotero_storage_even_with_file_storage_forced_to_webdav() {
    let (b, _, pdf) = groups_bench_with(false, &[("FILE_STORAGE", "webdav")]);
    let arguments = json!({ "itemKey": pdf, "fromPage": 1, "toPage": 1, "library": format!("groups/{LAB}") });
    let result = b.tool("zotero_read_attachment", Grant::read_only("owner"), arguments).await;
    assert_eq!(ok(&result)["source"], "zotero-storage", "{result}");
    // The personal library still follows the setting: without WEBDAV_URL it says what is missing.
    let mine = b
        .tool("zotero_read_attachment", Grant::read_only("owner"), json!({ "itemKey": ATTACHMENT, "fromPage": 1 }))
        .await;
    assert!(error_text(&mine).contains("WEBDAV_URL is not set"), "{}", error_text(&mine));
}

#[tokio::test]
async fn a_library_never_synced_is_said_to_be_empty_though_another_is_indexed() {
    let (b, ai) = indexed_groups_bench("1000", true);
    let lab = b.tool("zotero_reindex", Grant::read_write("owner"), json!({ "library": "groups/100" })).await;
    assert_eq!(ok(&lab)["complete"], true, "{lab}");
    ai.process();
    let result =
        b.tool("zotero_semantic_search", Grant::read_only("owner"), json!({ "query": "nothing of the kind" })).await;
    let note = ok(&result)["note"].as_str().unwrap_or_default().to_owned();
    assert!(note.contains("The semantic index is empty for this library"), "{result}");
}

#[tokio::test]
async fn a_recreated_instance_gets_every_library_again_not_only_the_first_synced() {
    let (mut b, first) = indexed_groups_bench("1000", true);
    assert!(zotero_mcp_server::jobs::sync_semantic_index(&b.app).await.complete());
    assert!(document_names(&first).iter().any(|n| n.starts_with("groups/100/")));
    // The instance is gone (deleted by the operator, or a fresh stand-in): the cursors in KV remain.
    let second = MemoryAiSearch::new();
    b.app.platform.ai_search = Some(second.clone());
    for _ in 0..10 {
        if zotero_mcp_server::jobs::sync_semantic_index(&b.app).await.complete() {
            break;
        }
    }
    let names = document_names(&second);
    for folder in ["groups/100/", "groups/200/"] {
        assert!(names.iter().any(|n| n.starts_with(folder)), "{folder} missing from {names:?}");
    }
    assert!(names.contains(&format!("{PARENT}.md")), "{names:?}");
}

/// A key made for groups only: `/keys/current` without a `user` block and with `access.groups.all` (every
/// group of its user). The listing offers the groups with the rights `all` gives and not the personal library
/// the key cannot read; a write to a group `all` makes writable goes through.
#[tokio::test]
async fn a_key_for_all_groups_without_the_personal_library_reaches_the_groups_only() {
    let (b, paper, _) = groups_bench(false);
    b.sim.set_key_scope(DEMO_KEY, false, Some(true));
    let result = b.tool("zotero_list_libraries", Grant::read_only("owner"), json!({})).await;
    let libraries = ok(&result)["libraries"].as_array().unwrap().clone();
    let paths: Vec<&str> = libraries.iter().filter_map(|l| l["library"].as_str()).collect();
    assert!(!paths.contains(&format!("users/{DEMO_USER}").as_str()), "the key cannot read it: {paths:?}");
    for group in [LAB, READING] {
        let entry =
            libraries.iter().find(|l| l["library"] == format!("groups/{group}")).unwrap_or_else(|| panic!("{paths:?}"));
        assert_eq!(entry["write"], true, "`all` gives write to every group: {entry}");
    }
    let note = json!({ "action": "create", "itemKey": paper, "note": "Seen by a group key", "library": format!("groups/{LAB}") });
    let created = b.write("zotero_notes", note).await;
    let key = ok(&created)["noteKey"].as_str().unwrap().to_owned();
    assert!(b.sim.item(LibraryRef::Group(LAB), &key).is_some());
}
