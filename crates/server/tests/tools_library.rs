//! The library tools against the Zotero simulator (the demo library): JSON-RPC in, JSON-RPC out for reads;
//! the registry with an explicit grant for writes (the OAuth server decides grants in production).

mod common;

use std::rc::Rc;

use common::*;
use serde_json::{json, Value};
use zotero_mcp_server::auth::Grant;
use zotero_mcp_server::context::RequestContext;
use zotero_sim::{Fault, LibraryRef, Simulator};

const LIB: LibraryRef = LibraryRef::User(DEMO_USER);

/// Calls a tool through the full JSON-RPC path (read-only grant, as every request gets without OAuth).
async fn rpc(sim: &Rc<Simulator>, name: &str, arguments: Value) -> Value {
    let reply =
        send(&app_with_sim(sim.clone()), modern("tools/call", json!({ "name": name, "arguments": arguments }))).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    reply.result().clone()
}

/// Calls a tool with a chosen grant.
async fn call_as(sim: &Rc<Simulator>, grant: Grant, name: &str, arguments: Value) -> Value {
    let app = app_with_sim(sim.clone());
    let ctx = RequestContext::new(grant, app.config.clone(), app.platform.clone());
    zotero_mcp_server::tools::registry(&app.config).call_tool(&ctx, name, arguments).await.expect("tool exists")
}

async fn write(sim: &Rc<Simulator>, name: &str, arguments: Value) -> Value {
    call_as(sim, Grant::read_write("owner"), name, arguments).await
}

fn ok(result: &Value) -> &Value {
    assert!(result.get("isError").is_none(), "unexpected error: {}", result["content"][0]["text"]);
    &result["structuredContent"]
}

fn error_text(result: &Value) -> String {
    assert_eq!(result["isError"], true, "expected an error, got {result}");
    result["content"][0]["text"].as_str().unwrap().to_owned()
}

fn keys(list: &Value) -> Vec<String> {
    list.as_array().unwrap().iter().map(|i| i["key"].as_str().unwrap().to_owned()).collect()
}

fn writes(sim: &Simulator) -> usize {
    sim.requests().iter().filter(|r| r.method != "GET").count()
}

// ---- zotero_search ----

#[tokio::test]
async fn search_finds_items_by_title_words_and_leaves_attachments_out() {
    let sim = demo_sim();
    let result = rpc(&sim, "zotero_search", json!({ "query": "protein" })).await;
    let out = ok(&result);
    assert!(out["total"].as_u64().unwrap() >= 3);
    for item in out["items"].as_array().unwrap() {
        assert_ne!(item["itemType"], "attachment");
    }
    assert!(result["content"][0]["text"].as_str().unwrap().contains("key: "));
}

#[tokio::test]
async fn search_reports_a_pdf_only_phrase_on_the_parent_with_the_attachment() {
    let sim = demo_sim();
    let out = rpc(&sim, "zotero_search", json!({ "query": "stochastic gradient annealing" })).await;
    let items = ok(&out)["items"].as_array().unwrap().clone();
    let hit = items.iter().find(|i| i["key"] == "AIHLBG3Z").expect("the parent of the matching PDF");
    assert_eq!(hit["matchedAttachment"]["key"], "ZJ6BP9I4");
}

#[tokio::test]
async fn search_by_citation_key_matches_the_whole_key() {
    let sim = demo_sim();
    let exact = rpc(&sim, "zotero_search", json!({ "citationKey": "whitfield2021geometric" })).await;
    assert_eq!(keys(&ok(&exact)["items"]), ["T6W7H8UE"]);
    let prefix = rpc(&sim, "zotero_search", json!({ "citationKey": "whitfield2021" })).await;
    assert_eq!(ok(&prefix)["total"], 0);
}

#[tokio::test]
async fn search_filters_by_collection_tag_type_and_years() {
    let sim = demo_sim();
    let in_collection = rpc(&sim, "zotero_search", json!({ "collectionKey": "9AV8V2XB", "limit": 100 })).await;
    let found = keys(&ok(&in_collection)["items"]);
    assert!(found.contains(&"T6W7H8UE".to_owned()) && found.contains(&"KPDKK5UT".to_owned()));
    // Zotero's collection listing also returns the children of filed items (notes, annotations); the filed
    // items themselves carry the collection.
    for item in ok(&in_collection)["items"].as_array().unwrap().iter().filter(|i| i["parentItem"].is_null()) {
        assert!(item["collections"].as_array().unwrap().contains(&json!("9AV8V2XB")), "{item}");
    }

    let tagged = rpc(&sim, "zotero_search", json!({ "tags": ["maize"] })).await;
    assert_eq!(ok(&tagged)["total"], 3);
    let both = rpc(&sim, "zotero_search", json!({ "tags": ["maize", "heat stress"] })).await;
    for item in ok(&both)["items"].as_array().unwrap() {
        let tags = item["tags"].as_array().unwrap();
        assert!(tags.contains(&json!("maize")) && tags.contains(&json!("heat stress")));
    }

    let books = rpc(&sim, "zotero_search", json!({ "itemType": "book" })).await;
    assert!(ok(&books)["items"].as_array().unwrap().iter().all(|i| i["itemType"] == "book"));
    // Four invented books and the demo files' EPUB guide (BIFWNE6K).
    assert_eq!(ok(&books)["total"], 5);

    let recent = rpc(&sim, "zotero_search", json!({ "fromYear": 2023, "toYear": 2023, "limit": 100 })).await;
    let recent_items = ok(&recent)["items"].as_array().unwrap().clone();
    assert!(!recent_items.is_empty());
    assert!(recent_items.iter().all(|i| i["year"] == "2023"));
}

#[tokio::test]
async fn search_excludes_the_trash_unless_asked() {
    let sim = demo_sim();
    let normal = rpc(&sim, "zotero_search", json!({ "limit": 100 })).await;
    assert!(!keys(&ok(&normal)["items"]).contains(&"36P5CMPH".to_owned()));
    let with_trash = rpc(&sim, "zotero_search", json!({ "limit": 100, "includeTrashed": true })).await;
    let trashed = ok(&with_trash)["items"].as_array().unwrap().iter().find(|i| i["key"] == "36P5CMPH").cloned();
    assert_eq!(trashed.expect("trashed item listed")["inTrash"], true);
}

#[tokio::test]
async fn search_pages_with_next_offset() {
    let sim = demo_sim();
    let first = rpc(&sim, "zotero_search", json!({ "limit": 10, "sort": "title" })).await;
    let next = ok(&first)["nextOffset"].as_u64().expect("more pages");
    assert_eq!(next, 10);
    let second = rpc(&sim, "zotero_search", json!({ "limit": 10, "sort": "title", "offset": next })).await;
    let (a, b) = (keys(&ok(&first)["items"]), keys(&ok(&second)["items"]));
    assert!(a.iter().all(|k| !b.contains(k)), "pages do not overlap");
}

#[tokio::test]
async fn nothing_found_is_an_empty_result_not_an_error() {
    let sim = demo_sim();
    let result = rpc(&sim, "zotero_search", json!({ "query": "xylophone quantum basket" })).await;
    assert_eq!(ok(&result)["total"], 0);
    assert!(result["content"][0]["text"].as_str().unwrap().contains("No matching items"));
}

#[tokio::test]
async fn argument_errors_name_the_argument_before_any_request() {
    let sim = demo_sim();
    for (tool, arguments, needle) in [
        ("zotero_search", json!({ "limit": 0 }), "`limit`"),
        ("zotero_search", json!({ "collectionKey": "../x" }), "`collectionKey`"),
        ("zotero_search", json!({ "fromYear": 2024, "toYear": 2020 }), "`fromYear`"),
        ("zotero_get_item", json!({ "key": "abc" }), "`key`"),
        ("zotero_get_item", json!({}), "missing field `key`"),
        ("zotero_list_collections", json!({ "collectionKey": "NOPE/123" }), "`collectionKey`"),
        ("zotero_annotations", json!({ "itemKey": "lower123" }), "`itemKey`"),
        // Wrong JSON types are located through the published schema.
        ("zotero_search", json!({ "query": "x", "limit": "five" }), "`limit`: invalid type: string \"five\""),
    ] {
        let before = sim.requests().len();
        let message = error_text(&rpc(&sim, tool, arguments.clone()).await);
        assert!(message.contains(needle), "{tool} {arguments}: {message}");
        assert_eq!(sim.requests().len(), before, "{tool} {arguments} made a request");
    }
    let creator = json!({ "creatorType": "author", "name": 7 });
    let arguments = json!({ "items": [{ "itemType": "book", "title": "T", "creators": [creator] }] });
    let message = error_text(&write(&sim, "zotero_create_items", arguments).await);
    assert!(message.contains("`items[0].creators[0].name`: invalid type: integer `7`"), "{message}");
}

// ---- zotero_get_item ----

#[tokio::test]
async fn get_item_returns_every_field_and_children() {
    let sim = demo_sim();
    let result = rpc(&sim, "zotero_get_item", json!({ "key": "T6W7H8UE", "includeChildren": true })).await;
    let out = ok(&result);
    assert_eq!(out["item"]["key"], "T6W7H8UE");
    assert!(out["item"]["fields"]["publicationTitle"].is_string());
    assert!(out["item"]["abstract"].is_string(), "the abstract is in structuredContent");
    assert!(!out["item"]["creators"].as_array().unwrap().is_empty());
    let children = out["children"].as_array().unwrap();
    assert!(children.iter().any(|c| c["itemType"] == "attachment" && c["key"] == "93WJRKG5"));
    assert!(result["content"][0]["text"].as_str().unwrap().starts_with("# "));
}

#[tokio::test]
async fn get_item_puts_note_text_in_structured_content() {
    let sim = demo_sim();
    // The note itself: no title field, so its text is the only place its content lives.
    let result = rpc(&sim, "zotero_get_item", json!({ "key": "62F45AD7" })).await;
    let note = ok(&result)["item"]["note"].as_str().expect("a note's text is in structuredContent").to_owned();
    assert!(note.starts_with("# Reading notes\n\nPublished version"), "{note}");
    assert!(note.contains("\n- Probe: sparse logistic regression"), "{note}");
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("# Reading notes\n"), "titled by its first line: {text}");
    assert!(text.contains("## Note\n\n# Reading notes"), "{text}");
    // As a child: a shortened text, and a one-line preview in the Markdown made from it.
    let parent = rpc(&sim, "zotero_get_item", json!({ "key": "FQDCTD9F", "includeChildren": true })).await;
    let out = ok(&parent);
    assert!(out.get("childrenTruncated").is_none(), "all children fit");
    let child = out["children"].as_array().unwrap().iter().find(|c| c["key"] == "62F45AD7").expect("note child");
    assert!(child["note"].as_str().unwrap().starts_with("# Reading notes\n"), "{child}");
    let text = parent["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("- note 62F45AD7: # Reading notes Published version"), "{text}");
}

#[tokio::test]
async fn a_missing_item_is_an_actionable_error() {
    let sim = demo_sim();
    let message = error_text(&rpc(&sim, "zotero_get_item", json!({ "key": "ZZZZ9999" })).await);
    assert!(message.contains("404"), "{message}");
}

// ---- writes: scope ----

#[tokio::test]
async fn read_only_grants_change_nothing_through_any_write_tool() {
    let sim = demo_sim();
    let version = sim.library_version(LIB);
    for (tool, arguments) in [
        ("zotero_create_items", json!({ "items": [{ "itemType": "book", "title": "x" }] })),
        ("zotero_update_item", json!({ "keys": ["T6W7H8UE"], "addTags": ["x"] })),
        ("zotero_delete_items", json!({ "keys": ["T6W7H8UE"], "permanent": true })),
        ("zotero_manage_collections", json!({ "action": "create", "name": "x" })),
        ("zotero_manage_collections", json!({ "action": "delete", "collectionKey": "4CLV49N5" })),
    ] {
        let message = error_text(&call_as(&sim, Grant::read_only("owner"), tool, arguments).await);
        assert!(message.contains("zotero:write"), "{tool}: {message}");
    }
    assert_eq!(writes(&sim), 0);
    assert_eq!(sim.library_version(LIB), version);
}

// ---- zotero_create_items ----

#[tokio::test]
async fn create_items_uses_templates_and_reports_per_item_failures() {
    let sim = demo_sim();
    let result = write(
        &sim,
        "zotero_create_items",
        json!({ "items": [
            { "itemType": "journalArticle", "title": "A new paper", "creators": [{ "firstName": "Ada", "lastName": "Lovelace" }],
              "tags": [{ "tag": "fresh" }], "collections": ["4CLV49N5"], "fields": { "date": "2026-01-02", "DOI": "10.1234/new" } },
            { "itemType": "book", "title": "Bad field", "fields": { "notAField": "x" } },
            { "itemType": "noSuchType", "title": "Bad type" },
        ] }),
    )
    .await;
    let out = ok(&result);
    let created = out["created"].as_array().unwrap();
    assert_eq!(created.len(), 1);
    let key = created[0].as_str().unwrap();
    let stored = sim.item(LIB, key).expect("created item stored");
    assert_eq!(stored["data"]["title"], "A new paper");
    assert_eq!(stored["data"]["DOI"], "10.1234/new");
    assert_eq!(stored["data"]["creators"][0]["creatorType"], "author");
    assert_eq!(stored["data"]["collections"], json!(["4CLV49N5"]));
    let failed = out["failed"].as_array().unwrap();
    assert_eq!(failed.len(), 2, "{failed:?}");
    assert!(failed
        .iter()
        .any(|f| f["what"].as_str().unwrap().contains("Bad field")
            && f["message"].as_str().unwrap().contains("notAField")));
    assert!(failed.iter().any(|f| f["what"].as_str().unwrap().contains("Bad type")));
}

#[tokio::test]
async fn create_items_refuses_a_creator_without_a_name() {
    let sim = demo_sim();
    let message = error_text(
        &write(
            &sim,
            "zotero_create_items",
            json!({ "items": [{ "itemType": "book", "creators": [{ "creatorType": "author" }] }] }),
        )
        .await,
    );
    assert!(message.contains("creators[0]"), "{message}");
    assert_eq!(writes(&sim), 0);
}

/// Whether stored note HTML carries markup a renderer would act on (as opposed to showing it as text).
fn has_live_markup(html: &str) -> bool {
    html.to_ascii_lowercase().split('<').skip(1).any(|rest| {
        let tag = rest.split('>').next().unwrap_or(rest);
        tag.starts_with("script") || tag.starts_with("img") || tag.contains(" on")
    })
}

#[tokio::test]
async fn a_note_field_is_sanitized_when_items_are_created() {
    let sim = demo_sim();
    let hostile = "Hello <img src=x onerror=alert(1)> and <script>alert(2)</script> **bold**";
    let result = write(
        &sim,
        "zotero_create_items",
        json!({ "items": [
            { "itemType": "note", "fields": { "note": hostile } },
            { "itemType": "note", "parentItem": "KPDKK5UT", "fields": { "note": "<p onclick=\"x()\">hi</p>" } },
        ] }),
    )
    .await;
    let created = ok(&result)["created"].as_array().unwrap().clone();
    assert_eq!(created.len(), 2, "{result}");
    let stored = sim.item(LIB, created[0].as_str().unwrap()).unwrap()["data"]["note"].as_str().unwrap().to_owned();
    assert!(!has_live_markup(&stored), "{stored}");
    assert!(stored.contains("&lt;script&gt;") && stored.contains("<strong>bold</strong>"), "{stored}");
    let child = sim.item(LIB, created[1].as_str().unwrap()).unwrap()["data"]["note"].as_str().unwrap().to_owned();
    assert!(!child.contains("<p onclick"), "{child}");
}

#[tokio::test]
async fn a_note_field_is_sanitized_when_items_are_updated() {
    let sim = demo_sim();
    let created = write(
        &sim,
        "zotero_create_items",
        json!({ "items": [{ "itemType": "note", "parentItem": "KPDKK5UT", "fields": { "note": "plain" } }] }),
    )
    .await;
    let key = ok(&created)["created"][0].as_str().unwrap().to_owned();
    let hostile = "<img src=x onerror=alert(1)><script>alert(2)</script>";
    let result = write(&sim, "zotero_update_item", json!({ "keys": [key], "fields": { "note": hostile } })).await;
    assert_eq!(ok(&result)["updated"], json!([key]));
    let stored = sim.item(LIB, &key).unwrap()["data"]["note"].as_str().unwrap().to_owned();
    assert!(!has_live_markup(&stored), "{stored}");
    assert!(stored.contains("&lt;img"), "the markup shows as text: {stored}");
    // The same Markdown again renders to the same HTML, so nothing is written.
    let again = write(&sim, "zotero_update_item", json!({ "keys": [key], "fields": { "note": hostile } })).await;
    assert_eq!(ok(&again)["skipped"], json!([key]));
    // And an empty note still clears it.
    let cleared = write(&sim, "zotero_update_item", json!({ "keys": [key], "fields": { "note": "" } })).await;
    assert_eq!(ok(&cleared)["updated"], json!([key]));
    assert_eq!(sim.item(LIB, &key).unwrap()["data"]["note"], "");
}

// ---- zotero_update_item ----

#[tokio::test]
async fn update_item_changes_fields_tags_and_collections_under_the_version() {
    let sim = demo_sim();
    let result = write(
        &sim,
        "zotero_update_item",
        json!({ "keys": ["KPDKK5UT"], "fields": { "extra": "Reviewed" }, "addTags": ["to-cite"], "addCollections": ["4CLV49N5"] }),
    )
    .await;
    assert_eq!(ok(&result)["updated"], json!(["KPDKK5UT"]));
    let stored = sim.item(LIB, "KPDKK5UT").unwrap();
    assert_eq!(stored["data"]["extra"], "Reviewed");
    assert!(stored["data"]["tags"].as_array().unwrap().iter().any(|t| t["tag"] == "to-cite"));
    assert!(stored["data"]["collections"].as_array().unwrap().contains(&json!("4CLV49N5")));
    let patch = sim.requests().into_iter().find(|r| r.method == "PATCH").expect("a PATCH");
    assert!(patch.headers.iter().any(|(n, _)| n.eq_ignore_ascii_case("if-unmodified-since-version")));
}

#[tokio::test]
async fn update_item_writes_nothing_when_nothing_changes() {
    let sim = demo_sim();
    let current = sim.item(LIB, "KPDKK5UT").unwrap();
    let title = current["data"]["title"].clone();
    let result = write(&sim, "zotero_update_item", json!({ "keys": ["KPDKK5UT"], "fields": { "title": title } })).await;
    assert_eq!(ok(&result)["skipped"], json!(["KPDKK5UT"]));
    assert_eq!(writes(&sim), 0);
}

#[tokio::test]
async fn an_edit_elsewhere_between_read_and_write_is_a_conflict_not_retried() {
    let sim = demo_sim();
    sim.edit_before_next_write(LIB, "KPDKK5UT");
    let result = write(&sim, "zotero_update_item", json!({ "keys": ["KPDKK5UT"], "addTags": ["x"] })).await;
    let out = ok(&result);
    assert_eq!(out["updated"], json!([]));
    assert_eq!(out["failed"][0]["code"], 412);
    assert!(out["failed"][0]["message"].as_str().unwrap().contains("read"));
    assert_eq!(writes(&sim), 1, "the stale write is sent once");
}

#[tokio::test]
async fn update_item_refuses_contradictory_tag_arguments() {
    let sim = demo_sim();
    let message = error_text(
        &write(&sim, "zotero_update_item", json!({ "keys": ["KPDKK5UT"], "setTags": ["a"], "addTags": ["b"] })).await,
    );
    assert!(message.contains("setTags"));
}

// ---- zotero_delete_items ----

#[tokio::test]
async fn delete_items_trashes_by_default_and_deletes_permanently_when_asked() {
    let sim = demo_sim();
    let trashed = write(&sim, "zotero_delete_items", json!({ "keys": ["KPDKK5UT"] })).await;
    assert_eq!(ok(&trashed)["deleted"], json!(["KPDKK5UT"]));
    assert_eq!(sim.item(LIB, "KPDKK5UT").unwrap()["data"]["deleted"], json!(1));

    let gone = write(&sim, "zotero_delete_items", json!({ "keys": ["BMTDL3F8"], "permanent": true })).await;
    assert_eq!(ok(&gone)["permanent"], true);
    assert!(sim.item(LIB, "BMTDL3F8").is_none());
    let delete = sim.requests().into_iter().find(|r| r.method == "DELETE").unwrap();
    assert!(delete.path.ends_with("/items/BMTDL3F8"), "one item per DELETE");
}

// ---- collections and tags ----

#[tokio::test]
async fn list_collections_shows_the_tree_with_paths() {
    let sim = demo_sim();
    let result = rpc(&sim, "zotero_list_collections", json!({})).await;
    let collections = ok(&result)["collections"].as_array().unwrap().clone();
    let deep = collections.iter().find(|c| c["key"] == "9AV8V2XB").unwrap();
    assert_eq!(deep["path"], "PhD Thesis / Chapter 2 — Literature Review / Protein structure prediction");
    assert!(collections.iter().any(|c| c["name"] == "宋代科技史"));
    let by_name = rpc(&sim, "zotero_list_collections", json!({ "query": " crop " })).await;
    assert_eq!(keys(&ok(&by_name)["collections"]), ["RVRZREQQ"]);
    assert_eq!(ok(&by_name)["query"], "crop", "the query matched against is part of the result");
    let none = rpc(&sim, "zotero_list_collections", json!({ "query": "astrology" })).await;
    assert_eq!(ok(&none)["collections"], json!([]));
    assert_eq!(none["content"][0]["text"], "_No collection name contains \"astrology\"._");
    let items = rpc(&sim, "zotero_list_collections", json!({ "collectionKey": "RVRZREQQ", "topOnly": true })).await;
    assert_eq!(ok(&items)["items"].as_array().unwrap().len(), 6);
}

#[tokio::test]
async fn manage_collections_creates_renames_moves_files_and_deletes() {
    let sim = demo_sim();
    let created = write(
        &sim,
        "zotero_manage_collections",
        json!({ "action": "create", "name": "Reading group", "parentCollection": "VYEVNKKX" }),
    )
    .await;
    let key = ok(&created)["collectionKey"].as_str().unwrap().to_owned();
    assert_eq!(sim.collection(LIB, &key).unwrap()["data"]["parentCollection"], "VYEVNKKX");
    assert_eq!(ok(&created)["name"], "Reading group");
    assert_eq!(ok(&created)["parentCollection"], "VYEVNKKX");
    assert_eq!(ok(&created)["changed"], true);

    let renamed = write(
        &sim,
        "zotero_manage_collections",
        json!({ "action": "rename", "collectionKey": key, "name": "Seminar" }),
    )
    .await;
    assert_eq!(sim.collection(LIB, &key).unwrap()["data"]["name"], "Seminar");
    assert_eq!(ok(&renamed)["previousName"], "Reading group");
    assert_eq!(renamed["content"][0]["text"], format!("Renamed {key} from \"Reading group\" to \"Seminar\""));
    let again = write(
        &sim,
        "zotero_manage_collections",
        json!({ "action": "rename", "collectionKey": key, "name": "Seminar" }),
    )
    .await;
    assert_eq!(ok(&again)["changed"], false, "a rename to the current name writes nothing, and says so as data");
    assert!(again["content"][0]["text"].as_str().unwrap().contains("already called \"Seminar\""));

    let moved = write(&sim, "zotero_manage_collections", json!({ "action": "move", "collectionKey": key })).await;
    assert_eq!(sim.collection(LIB, &key).unwrap()["data"]["parentCollection"], false);
    assert!(ok(&moved).get("parentCollection").is_none(), "moved to the top level");
    assert!(moved["content"][0]["text"].as_str().unwrap().ends_with("to the top level"));

    let filed = write(
        &sim,
        "zotero_manage_collections",
        json!({ "action": "addItems", "collectionKey": key, "itemKeys": ["T6W7H8UE", "KPDKK5UT"] }),
    )
    .await;
    assert_eq!(ok(&filed)["affected"].as_array().unwrap().len(), 2);
    assert_eq!(ok(&filed)["changed"], true);
    assert!(sim.item(LIB, "T6W7H8UE").unwrap()["data"]["collections"].as_array().unwrap().contains(&json!(key)));

    let removed = write(
        &sim,
        "zotero_manage_collections",
        json!({ "action": "removeItems", "collectionKey": key, "itemKeys": ["T6W7H8UE"] }),
    )
    .await;
    assert_eq!(ok(&removed)["affected"], json!(["T6W7H8UE"]));

    let deleted = write(&sim, "zotero_manage_collections", json!({ "action": "delete", "collectionKey": key })).await;
    assert!(deleted["content"][0]["text"].as_str().unwrap().contains("remain in the library"));
    assert!(sim.collection(LIB, &key).is_none());
    assert!(sim.item(LIB, "KPDKK5UT").is_some(), "items survive their collection");
}

#[tokio::test]
async fn manage_collections_says_what_an_action_needs() {
    let sim = demo_sim();
    let message =
        error_text(&write(&sim, "zotero_manage_collections", json!({ "action": "rename", "name": "x" })).await);
    assert!(message.contains("collectionKey"), "{message}");
}

#[tokio::test]
async fn list_tags_counts_and_filters() {
    let sim = demo_sim();
    let all = rpc(&sim, "zotero_list_tags", json!({})).await;
    let tags = ok(&all)["tags"].as_array().unwrap().clone();
    let maize = tags.iter().find(|t| t["tag"] == "maize").expect("maize listed");
    assert_eq!(maize["numItems"], 3);
    let filtered = rpc(&sim, "zotero_list_tags", json!({ "query": "protein" })).await;
    let filtered = ok(&filtered)["tags"].as_array().unwrap().clone();
    assert!(!filtered.is_empty());
    assert!(filtered.iter().all(|t| t["tag"].as_str().unwrap().to_lowercase().contains("protein")));
}

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

#[tokio::test]
async fn the_catalogue_keeps_the_upstream_names_order_and_hints() {
    let sim = demo_sim();
    let reply = send(&app_with_sim(sim), modern("tools/list", json!({}))).await;
    let tools = reply.result()["tools"].as_array().unwrap().clone();
    let names: Vec<&str> =
        tools.iter().map(|t| t["name"].as_str().unwrap()).filter(|n| !n.starts_with("fixture_")).collect();
    assert_eq!(
        names,
        [
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
        ]
    );
    let hints = |name: &str| tools.iter().find(|t| t["name"] == name).unwrap()["annotations"].clone();
    for read in
        ["zotero_search", "zotero_get_item", "zotero_list_collections", "zotero_list_tags", "zotero_read_attachment"]
    {
        assert_eq!(hints(read)["readOnlyHint"], true, "{read}");
    }
    for writer in [
        "zotero_create_items",
        "zotero_update_item",
        "zotero_delete_items",
        "zotero_manage_collections",
        "zotero_notes",
        "zotero_annotations",
        "zotero_put_attachment",
        "zotero_delete_attachment",
        "zotero_rename_attachments",
        "zotero_import_reference",
        "zotero_reindex",
        "zotero_find_duplicates",
    ] {
        assert_eq!(hints(writer)["readOnlyHint"], false, "{writer}");
    }
    assert_eq!(hints("zotero_find_duplicates")["destructiveHint"], true, "a merge trashes items");
    assert_eq!(hints("zotero_delete_items")["destructiveHint"], true);
    assert_eq!(hints("zotero_delete_attachment")["destructiveHint"], true);
    assert_eq!(hints("zotero_update_item")["idempotentHint"], true);
    assert_eq!(hints("zotero_rename_attachments")["idempotentHint"], true);
    assert_eq!(hints("zotero_put_attachment")["openWorldHint"], true, "it downloads from URLs");
    assert_eq!(hints("zotero_import_reference")["openWorldHint"], true, "it asks CrossRef, arXiv, …");
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
