//! The library tools against the Zotero simulator (the demo library): JSON-RPC in, JSON-RPC out for reads;
//! the registry with an explicit grant for writes (the OAuth server decides grants in production).

mod common;
mod library_support;

use common::*;
use library_support::*;
use serde_json::{json, Value};
use zotero_mcp_server::auth::Grant;
use zotero_mcp_server::tools::items;

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

    // tagMatch any: either tag; excludeTags: never one of these.
    let has = |item: &Value, tag: &str| item["tags"].as_array().unwrap().contains(&json!(tag));
    let either =
        rpc(&sim, "zotero_search", json!({ "tags": ["maize", "heat stress"], "tagMatch": "any", "limit": 100 })).await;
    let either = ok(&either)["items"].as_array().unwrap().clone();
    assert!(either.iter().all(|i| has(i, "maize") || has(i, "heat stress")));
    assert!(either.len() > ok(&both)["items"].as_array().unwrap().len(), "any finds more than all");
    let without = rpc(&sim, "zotero_search", json!({ "tags": ["maize"], "excludeTags": ["heat stress"] })).await;
    let without = ok(&without)["items"].as_array().unwrap().clone();
    assert!(!without.is_empty() && without.iter().all(|i| has(i, "maize") && !has(i, "heat stress")), "{without:?}");

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

// ---- fields Zotero keeps, and fields with their own argument ----

/// Every field the two tools refuse in `fields`, with a value Zotero would take for it.
fn refused_fields(sim: &zotero_sim::Simulator) -> Vec<(&'static str, Value)> {
    let version = sim.item(LIB, "ZJ6BP9I4").unwrap()["version"].clone();
    let mut fields = Vec::new();
    for field in zotero_mcp_core::zotero::MANAGED_FIELDS.into_iter().chain(items::DEDICATED_FIELDS) {
        let value = match field {
            // A stored-file attachment: the item a "create" once wrote a template over.
            "key" => json!("ZJ6BP9I4"),
            "version" => version.clone(),
            "dateAdded" | "dateModified" => json!("2001-02-03T04:05:06Z"),
            "deleted" => json!(true),
            "itemType" => json!("book"),
            _ => json!("x"),
        };
        fields.push((field, value));
    }
    fields
}

#[tokio::test]
async fn create_and_update_refuse_the_same_fields_in_the_same_words_and_write_nothing() {
    let sim = demo_sim();
    let before = (sim.item(LIB, "ZJ6BP9I4").unwrap(), sim.item(LIB, "KPDKK5UT").unwrap(), sim.items(LIB).len());
    for (field, value) in refused_fields(&sim) {
        let why = items::field_refusal(field).expect("a refused field has a reason");
        let sent = sim.requests().len();
        let create = json!({ "items": [
            { "itemType": "journalArticle", "title": "A template", "fields": { field: value.clone() } },
        ] });
        let message = error_text(&write(&sim, "zotero_create_items", create).await);
        assert!(message.contains(&why), "create {field}: {message}");
        let update = json!({ "keys": ["KPDKK5UT"], "fields": { field: value } });
        let message = error_text(&write(&sim, "zotero_update_item", update).await);
        assert!(message.contains(&why), "update {field}: {message}");
        assert_eq!(sim.requests().len(), sent, "{field}: refused before any request");
    }
    // Among other items too: one refused field stops the whole call, so a key hidden in the tenth item writes
    // over nothing and creates nothing.
    let mixed = json!({ "items": [
        { "itemType": "book", "title": "Fine" },
        { "itemType": "attachment", "fields": { "key": "ZJ6BP9I4", "version": before.0["version"], "title": "x" } },
    ] });
    assert!(error_text(&write(&sim, "zotero_create_items", mixed).await).contains("`fields.key`"));
    assert_eq!(writes(&sim), 0);
    let after = (sim.item(LIB, "ZJ6BP9I4").unwrap(), sim.item(LIB, "KPDKK5UT").unwrap(), sim.items(LIB).len());
    assert_eq!(after, before, "nothing in the library changed");
}

#[test]
fn every_managed_field_is_refused_and_other_fields_still_go_through() {
    for field in zotero_mcp_core::zotero::MANAGED_FIELDS {
        assert!(items::field_refusal(field).is_some_and(|why| why.contains("Nothing was written")), "{field}");
    }
    for field in ["title", "DOI", "extra", "note", "parentItem", "url"] {
        assert_eq!(items::field_refusal(field), None, "{field}");
    }
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
    let text = renamed["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.starts_with(&format!("Renamed {key} from \"Reading group\" to \"Seminar\"\n\nUndo:")), "{text}");
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
    assert!(moved["content"][0]["text"].as_str().unwrap().contains("to the top level\n\nUndo:"));

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
