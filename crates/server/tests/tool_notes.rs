//! `zotero_notes` against the Zotero simulator (the demo library): reads through the full JSON-RPC path with the
//! read-only token every test request carries; writes through the registry with an explicit read-write grant.

mod common;

use std::rc::Rc;

use common::*;
use serde_json::{json, Value};
use zotero_mcp_server::auth::Grant;
use zotero_mcp_server::call::Session;
use zotero_sim::{LibraryRef, Simulator};

const LIB: LibraryRef = LibraryRef::User(DEMO_USER);
const TOOL: &str = "zotero_notes";

/// The demo library's notes: 10, none in the trash.
const DEMO_NOTES: u64 = 10;
/// A demo article with one note, 62F45AD7 ("Reading notes").
const ARTICLE: &str = "FQDCTD9F";
const ARTICLE_NOTE: &str = "62F45AD7";

/// Calls the tool through JSON-RPC, as a read-only client.
async fn rpc(sim: &Rc<Simulator>, arguments: Value) -> Value {
    let reply =
        send(&app_with_sim(sim.clone()), modern("tools/call", json!({ "name": TOOL, "arguments": arguments }))).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert!(reply.body.get("error").is_none(), "a tool problem is a result, not a JSON-RPC error: {}", reply.text);
    reply.result().clone()
}

/// Calls the tool with a read-write grant.
async fn write(sim: &Rc<Simulator>, arguments: Value) -> Value {
    let app = app_with_sim(sim.clone());
    let ctx = Session::new(Grant::read_write("owner"), app.config.clone(), app.platform.clone());
    zotero_mcp_server::tools::registry(&app.config)
        .call_tool(&ctx, TOOL, arguments)
        .await
        .expect("zotero_notes is registered")
}

fn keys(notes: &Value) -> Vec<String> {
    notes.as_array().expect("a list").iter().map(|n| n["key"].as_str().expect("a key").to_owned()).collect()
}

fn stored_note(sim: &Simulator, key: &str) -> String {
    let item = sim.item(LIB, key).unwrap_or_else(|| panic!("note {key} exists"));
    item["data"]["note"].as_str().expect("note HTML").to_owned()
}

fn writes(sim: &Simulator) -> usize {
    sim.requests().iter().filter(|r| r.method != http::Method::GET).count()
}

fn is_trashed(sim: &Simulator, key: &str) -> bool {
    let deleted = &sim.item(LIB, key).expect("item exists")["data"]["deleted"];
    deleted.as_bool().unwrap_or(false) || deleted.as_u64().unwrap_or(0) > 0
}

async fn output_schema() -> Value {
    let reply = send(&app(), modern("tools/list", json!({}))).await;
    let tools = reply.result()["tools"].as_array().expect("tools").clone();
    tools.into_iter().find(|t| t["name"] == TOOL).expect("zotero_notes listed")["outputSchema"].clone()
}

fn assert_matches(schema: &Value, output: &Value) {
    let validator = jsonschema::draft202012::new(schema).expect("a valid schema");
    assert!(validator.is_valid(output), "{output} does not match {schema}");
}

// ---- catalogue ----

#[tokio::test]
async fn is_listed_after_the_tags_as_a_tool_that_can_write() {
    let reply = send(&app(), modern("tools/list", json!({}))).await;
    let tools = reply.result()["tools"].as_array().expect("tools").clone();
    let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    let tags = names.iter().position(|n| *n == "zotero_list_tags").expect("zotero_list_tags listed");
    assert_eq!(names.get(tags + 1), Some(&TOOL));
    let notes = &tools[tags + 1];
    assert_eq!(notes["annotations"]["readOnlyHint"], false, "it can write, so it must not claim to be read-only");
    assert_eq!(notes["annotations"]["destructiveHint"], true);
    let properties = &notes["inputSchema"]["properties"];
    for name in ["action", "itemKey", "query", "note", "title", "append", "tags", "raw", "limit"] {
        assert!(properties.get(name).is_some(), "upstream argument `{name}` is kept");
    }
    assert_eq!(properties["action"]["default"], "list");
    assert_eq!(properties["limit"]["default"], 25);
    assert_eq!(properties["limit"]["maximum"], 100);
    let outputs = &notes["outputSchema"]["properties"];
    for name in ["notes", "total", "nextOffset", "noteKey", "parentItem", "appended", "alreadyTrashed"] {
        assert!(outputs.get(name).is_some(), "`{name}` is in the output schema, so clients can rely on it");
    }
}

// ---- list and search ----

#[tokio::test]
async fn lists_every_note_in_pages() {
    let sim = demo_sim();
    let schema = output_schema().await;
    let first = rpc(&sim, json!({ "limit": 4 })).await;
    let out = ok(&first);
    assert_matches(&schema, out);
    assert_eq!(out["action"], "list");
    assert_eq!(out["notes"].as_array().expect("notes").len(), 4);
    assert_eq!(out["total"], DEMO_NOTES);
    assert_eq!(out["nextOffset"], 4);
    assert!(text(&first).contains("call again with offset 4"), "{}", text(&first));
    let second = rpc(&sim, json!({ "action": "list", "limit": 100, "offset": 4 })).await;
    let rest = ok(&second);
    assert_eq!(rest["notes"].as_array().expect("notes").len() as u64, DEMO_NOTES - 4);
    assert!(rest.get("nextOffset").is_none());
    let mut all = keys(&out["notes"]);
    all.extend(keys(&rest["notes"]));
    all.sort();
    all.dedup();
    assert_eq!(all.len() as u64, DEMO_NOTES, "pages neither overlap nor skip");
    let standalone = rest["notes"]
        .as_array()
        .unwrap()
        .iter()
        .chain(out["notes"].as_array().unwrap())
        .find(|n| n["key"] == "ZEN2MNFG");
    let standalone = standalone.expect("the standalone chapter plan");
    assert_eq!(standalone["parentItem"], Value::Null);
    assert_eq!(standalone["tags"], json!(["thesis admin"]));
}

#[tokio::test]
async fn lists_one_items_notes_as_readable_text() {
    let sim = demo_sim();
    let result = rpc(&sim, json!({ "action": "list", "itemKey": ARTICLE })).await;
    let out = ok(&result);
    assert_matches(&output_schema().await, out);
    assert_eq!(keys(&out["notes"]), [ARTICLE_NOTE]);
    let note = &out["notes"][0];
    assert_eq!(note["parentItem"], ARTICLE);
    assert_eq!(note["title"], "Reading notes");
    let body = note["text"].as_str().expect("text");
    assert!(body.starts_with("# Reading notes\n\nPublished version"), "{body}");
    assert!(!body.contains('<'), "tags are gone: {body}");
    assert!(note["dateModified"].is_string());
    assert!(note.get("html").is_none());
    assert!(text(&result).contains(&format!("### {ARTICLE_NOTE} (on {ARTICLE})")), "{}", text(&result));

    let raw = rpc(&sim, json!({ "itemKey": ARTICLE, "raw": true })).await;
    assert_eq!(ok(&raw)["notes"][0]["html"], stored_note(&sim, ARTICLE_NOTE));
    assert!(text(&raw).contains("```html\n<div data-schema-version=\"9\"><h1>Reading notes</h1>"), "{}", text(&raw));
}

#[tokio::test]
async fn listing_one_items_notes_honours_limit_and_offset() {
    let sim = demo_sim();
    for n in 1..=3 {
        ok(&write(&sim, json!({ "action": "create", "itemKey": ARTICLE, "note": format!("extra note {n}") })).await);
    }
    let page = rpc(&sim, json!({ "itemKey": ARTICLE, "limit": 2 })).await;
    let out = ok(&page);
    assert_eq!(out["notes"].as_array().expect("notes").len(), 2);
    assert_eq!(out["total"], 4);
    assert_eq!(out["nextOffset"], 2);
    let rest = rpc(&sim, json!({ "itemKey": ARTICLE, "limit": 2, "offset": 2 })).await;
    assert_eq!(ok(&rest)["notes"].as_array().expect("notes").len(), 2);
    assert!(ok(&rest).get("nextOffset").is_none());
}

#[tokio::test]
async fn searches_note_text() {
    let sim = demo_sim();
    // Words of the note's title (its first line); see the simulator note in the report about note bodies.
    let result = rpc(&sim, json!({ "action": "search", "query": "refinement chapter" })).await;
    let out = ok(&result);
    assert_eq!(out["action"], "search");
    assert_eq!(keys(&out["notes"]), ["9QKNQY5S"]);
    let request = sim.requests().into_iter().rev().find(|r| r.path.ends_with("/items")).expect("an /items request");
    assert_eq!(request.query_values("qmode"), ["everything"]);
    assert_eq!(request.query_values("itemType"), ["note"]);

    let none = rpc(&sim, json!({ "action": "search", "query": "no note says this xyzzy" })).await;
    assert_eq!(ok(&none)["notes"], json!([]));
    assert_eq!(text(&none), "_No notes._");

    let within = rpc(&sim, json!({ "action": "search", "query": "PUBLISHED version", "itemKey": ARTICLE })).await;
    assert_eq!(keys(&ok(&within)["notes"]), [ARTICLE_NOTE]);
    // Within one item's notes the whole text is searched, here a word from the body of another item's note.
    let elsewhere = rpc(&sim, json!({ "action": "search", "query": "Langevin", "itemKey": ARTICLE })).await;
    assert_eq!(ok(&elsewhere)["notes"], json!([]));
    let body_word = rpc(&sim, json!({ "action": "search", "query": "Langevin", "itemKey": "AIHLBG3Z" })).await;
    assert_eq!(keys(&ok(&body_word)["notes"]), ["9QKNQY5S"]);
}

#[tokio::test]
async fn argument_problems_are_tool_errors() {
    let sim = demo_sim();
    assert!(error_text(&rpc(&sim, json!({ "action": "search" })).await).contains("`query`"));
    assert!(error_text(&rpc(&sim, json!({ "action": "archive" })).await).contains("action"));
    assert!(error_text(&rpc(&sim, json!({ "limit": 0 })).await).contains("limit"));
    assert!(error_text(&rpc(&sim, json!({ "itemKey": "lowercase" })).await).contains("itemKey"));
    assert!(error_text(&write(&sim, json!({ "action": "create" })).await).contains("`note`"));
    assert!(error_text(&write(&sim, json!({ "action": "update", "note": "x" })).await).contains("`itemKey`"));
    assert!(error_text(&write(&sim, json!({ "action": "update", "itemKey": ARTICLE_NOTE })).await).contains("`note`"));
    assert!(error_text(&write(&sim, json!({ "action": "delete" })).await).contains("`itemKey`"));
    assert_eq!(writes(&sim), 0);
}

// ---- create ----

#[tokio::test]
async fn creates_a_note_from_markdown_with_a_title_and_tags() {
    let sim = demo_sim();
    let result = write(
        &sim,
        json!({
            "action": "create",
            "itemKey": ARTICLE,
            "title": "Follow-up",
            "note": "Check **table 2** and [the preprint](https://arxiv.org/abs/2101.00001).\n\n- one\n- two",
            "tags": [{ "tag": "to-read" }, { "tag": "auto", "type": 1 }],
        }),
    )
    .await;
    let out = ok(&result);
    assert_matches(&output_schema().await, out);
    assert_eq!(out["action"], "create");
    assert_eq!(out["parentItem"], ARTICLE);
    let key = out["noteKey"].as_str().expect("the new key");
    assert!(text(&result).starts_with(&format!("Created note {key} on item {ARTICLE}\n\nUndo: zotero_undo")));
    let item = sim.item(LIB, key).expect("stored");
    assert_eq!(item["data"]["itemType"], "note");
    assert_eq!(item["data"]["parentItem"], ARTICLE);
    assert_eq!(item["data"]["tags"], json!([{ "tag": "to-read" }, { "tag": "auto", "type": 1 }]));
    assert_eq!(
        stored_note(&sim, key),
        "<div data-schema-version=\"9\"><h1>Follow-up</h1>\n<p>Check <strong>table 2</strong> and \
         <a href=\"https://arxiv.org/abs/2101.00001\">the preprint</a>.</p>\n<ul>\n<li>one</li>\n<li>two</li>\n</ul></div>"
    );
    // And it reads back as text.
    let listed = rpc(&sim, json!({ "itemKey": ARTICLE, "limit": 100 })).await;
    let note =
        ok(&listed)["notes"].as_array().expect("notes").iter().find(|n| n["key"] == key).expect("listed").clone();
    assert_eq!(note["title"], "Follow-up");
    assert_eq!(
        note["text"],
        "# Follow-up\n\nCheck table 2 and the preprint (https://arxiv.org/abs/2101.00001).\n\n- one\n- two"
    );
}

#[tokio::test]
async fn creating_escapes_html_end_to_end() {
    let sim = demo_sim();
    let hostile = "<script>alert(1)</script>\n\nHi <img src=x onerror=alert(2)> [x](javascript:alert(3)) \
                   <a href=\"javascript:alert(4)\">y</a> ![i](data:image/png;base64,AAAA) `a<b`";
    let result = write(&sim, json!({ "action": "create", "title": "<b>t</b>", "note": hostile })).await;
    let out = ok(&result);
    assert!(out.get("parentItem").is_none(), "a standalone note");
    let stored = stored_note(&sim, out["noteKey"].as_str().expect("key"));
    for forbidden in ["<script", "<img", "<a ", "<b>", "javascript:alert(3)\"", "data:image"] {
        assert!(!stored.contains(forbidden), "`{forbidden}` reached the stored note: {stored}");
    }
    assert!(stored.contains("&lt;script&gt;alert(1)&lt;/script&gt;"), "{stored}");
    assert!(stored.contains("&lt;img src=x onerror=alert(2)&gt;"), "{stored}");
    assert!(stored.contains("<h1>&lt;b&gt;t&lt;/b&gt;</h1>"), "{stored}");
    assert!(stored.contains("<code>a&lt;b</code>"), "{stored}");
    // Read back, the escaped markup is text again, and the script's content is visible rather than dropped.
    let listed = rpc(&sim, json!({ "limit": 100 })).await;
    let note = ok(&listed)["notes"].as_array().expect("notes").iter().find(|n| n["key"] == out["noteKey"]).cloned();
    let note = note.expect("listed");
    assert_eq!(note["title"], "<b>t</b>");
    assert!(note["text"].as_str().expect("text").contains("<script>alert(1)</script>"), "{note}");
}

#[tokio::test]
async fn raw_html_keeps_its_formatting_but_nothing_that_runs() {
    let sim = demo_sim();
    let html =
        "<p>User's own <strong>markup</strong>, <a href=\"https://example.org/a?b=1&amp;c=2\">a link</a>&nbsp;and \
                <span style=\"color: red\" onmouseover=\"alert(0)\">colour</span></p>\
                <script>alert(1)</script><img src=\"x\" onerror=\"alert(2)\">\
                <a href=\"javascript:alert(3)\">click</a>";
    let result = write(&sim, json!({ "action": "create", "itemKey": ARTICLE, "note": html, "raw": true })).await;
    let stored = stored_note(&sim, ok(&result)["noteKey"].as_str().expect("key"));
    assert_eq!(
        stored,
        "<p>User's own <strong>markup</strong>, <a href=\"https://example.org/a?b=1&amp;c=2\">a link</a>&nbsp;and \
         <span>colour</span></p><img><a>click</a>"
    );
}

#[tokio::test]
async fn raw_html_appended_to_a_note_is_sanitized_too() {
    let sim = demo_sim();
    let note = "<p>More<img src=x onerror=alert(1)></p><script>alert(2)</script>";
    let arguments = json!({ "action": "update", "itemKey": ARTICLE_NOTE, "append": true, "raw": true, "note": note });
    ok(&write(&sim, arguments).await);
    let after = stored_note(&sim, ARTICLE_NOTE);
    assert!(after.contains("<p>More<img></p>"), "{after}");
    for payload in ["onerror", "<script", "alert"] {
        assert!(!after.contains(payload), "{payload} stored: {after}");
    }
}

#[tokio::test]
async fn creating_on_a_missing_parent_says_why() {
    let sim = demo_sim();
    let message = error_text(&write(&sim, json!({ "action": "create", "itemKey": "ZZZZ2222", "note": "x" })).await);
    assert!(message.contains("did not create the note"), "{message}");
}

// ---- update ----

#[tokio::test]
async fn appends_inside_the_existing_note_with_its_version() {
    let sim = demo_sim();
    let before = stored_note(&sim, ARTICLE_NOTE);
    let version = sim.item(LIB, ARTICLE_NOTE).expect("note")["version"].as_u64().expect("version");
    let result =
        write(&sim, json!({ "action": "update", "itemKey": ARTICLE_NOTE, "append": true, "note": "Added <later>." }))
            .await;
    let out = ok(&result);
    assert_matches(&output_schema().await, out);
    assert_eq!(out, &json!({ "action": "update", "noteKey": ARTICLE_NOTE, "parentItem": ARTICLE, "appended": true }));
    assert!(text(&result).starts_with(&format!("Appended to note {ARTICLE_NOTE}\n\nUndo: zotero_undo")));
    let after = stored_note(&sim, ARTICLE_NOTE);
    let kept = before.strip_suffix("</div>").expect("the demo note is wrapped");
    assert!(after.starts_with(kept), "the old text is kept: {after}");
    assert!(after.ends_with("<p>Added &lt;later&gt;.</p></div>"), "{after}");
    assert_eq!(after.matches("data-schema-version").count(), 1, "one wrapper: {after}");
    let patch = sim.requests().into_iter().find(|r| r.method == http::Method::PATCH).expect("a PATCH");
    assert_eq!(patch.header("if-unmodified-since-version"), Some(version.to_string().as_str()));
}

#[tokio::test]
async fn replaces_a_note_and_its_tags() {
    let sim = demo_sim();
    let result = write(
        &sim,
        json!({ "action": "update", "itemKey": ARTICLE_NOTE, "note": "## New\n\nText", "tags": [{ "tag": "rewritten" }] }),
    )
    .await;
    assert_eq!(ok(&result)["appended"], json!(false), "a replacement is reported as such");
    assert_eq!(stored_note(&sim, ARTICLE_NOTE), "<div data-schema-version=\"9\"><h2>New</h2>\n<p>Text</p></div>");
    assert_eq!(sim.item(LIB, ARTICLE_NOTE).expect("note")["data"]["tags"], json!([{ "tag": "rewritten" }]));
}

#[tokio::test]
async fn updating_or_deleting_a_non_note_is_refused_with_the_right_tool() {
    let sim = demo_sim();
    let update = error_text(&write(&sim, json!({ "action": "update", "itemKey": ARTICLE, "note": "x" })).await);
    assert!(update.contains("not a note") && update.contains("zotero_update_item"), "{update}");
    let delete = error_text(&write(&sim, json!({ "action": "delete", "itemKey": ARTICLE })).await);
    assert!(delete.contains("not a note") && delete.contains("zotero_delete_items"), "{delete}");
    assert_eq!(writes(&sim), 0);
    assert!(!is_trashed(&sim, ARTICLE));
}

#[tokio::test]
async fn a_conflicting_edit_is_reported_and_nothing_is_written() {
    let sim = demo_sim();
    let before = stored_note(&sim, ARTICLE_NOTE);
    sim.edit_before_next_write(LIB, ARTICLE_NOTE);
    let message = error_text(
        &write(&sim, json!({ "action": "update", "itemKey": ARTICLE_NOTE, "append": true, "note": "x" })).await,
    );
    assert!(message.contains("412") && message.contains("was not updated"), "{message}");
    assert!(message.contains("again"), "says to read again: {message}");
    assert_eq!(stored_note(&sim, ARTICLE_NOTE), before);
}

// ---- delete ----

#[tokio::test]
async fn deleting_moves_the_note_to_the_trash() {
    let sim = demo_sim();
    let result = write(&sim, json!({ "action": "delete", "itemKey": ARTICLE_NOTE })).await;
    let out = ok(&result);
    assert_eq!(
        out,
        &json!({ "action": "delete", "noteKey": ARTICLE_NOTE, "parentItem": ARTICLE, "alreadyTrashed": false })
    );
    assert!(text(&result).contains("trash"));
    assert!(is_trashed(&sim, ARTICLE_NOTE));
    assert!(sim.item(LIB, ARTICLE_NOTE).is_some(), "trashed, not deleted for good");
    assert!(!sim.requests().iter().any(|r| r.method == http::Method::DELETE));
    // Gone from listings.
    let listed = rpc(&sim, json!({ "itemKey": ARTICLE })).await;
    assert_eq!(ok(&listed)["notes"], json!([]));
    let all = rpc(&sim, json!({ "limit": 100 })).await;
    assert_eq!(ok(&all)["total"], DEMO_NOTES - 1);
    // Again: nothing more to do, and the result says so as data, not only in the text.
    let writes_before = writes(&sim);
    let again = write(&sim, json!({ "action": "delete", "itemKey": ARTICLE_NOTE })).await;
    assert_matches(&output_schema().await, ok(&again));
    assert_eq!(ok(&again)["alreadyTrashed"], json!(true));
    assert_eq!(ok(&again)["noteKey"], json!(ARTICLE_NOTE));
    assert!(text(&again).contains("already in the trash"), "{}", text(&again));
    assert_eq!(writes(&sim), writes_before, "nothing was written the second time");
}

// ---- scopes ----

#[tokio::test]
async fn read_only_grants_cannot_write_and_zotero_is_not_called() {
    let sim = demo_sim();
    for arguments in [
        json!({ "action": "create", "itemKey": ARTICLE, "note": "x" }),
        json!({ "action": "create" }),
        json!({ "action": "update", "itemKey": ARTICLE_NOTE, "note": "x", "append": true }),
        json!({ "action": "update" }),
        json!({ "action": "delete", "itemKey": ARTICLE_NOTE }),
        json!({ "action": "delete" }),
    ] {
        let message = error_text(&rpc(&sim, arguments.clone()).await);
        assert!(message.contains("zotero:write") && message.contains("zotero_notes"), "{arguments}: {message}");
        assert!(sim.requests().is_empty(), "{arguments} reached Zotero");
    }
    assert!(!is_trashed(&sim, ARTICLE_NOTE));
    // Reading still works on the same grant.
    ok(&rpc(&sim, json!({ "action": "list", "itemKey": ARTICLE })).await);
}
