//! MCP Apps over HTTP, as hosts speak it: a client that declares the extension (in `initialize`, then by the
//! session id it was given, or in a 2026-07-28 envelope) is shown the panels and asked through the review panel;
//! a client that does not gets exactly the answers it got before panels existed.

mod common;

use base64::Engine as _;
use common::dav::{bench, Bench};
use common::*;
use serde_json::{json, Value};
use zotero_sim::LibraryRef;

const LIB: LibraryRef = LibraryRef::User(DEMO_USER);
const PAPER: &str = "KPDKK5UT";
const ATTACHMENT: &str = "UN79YVS8";
const UI: &str = "io.modelcontextprotocol/ui";
const MIME: &str = "text/html;profile=mcp-app";

fn apps_capabilities() -> Value {
    json!({ "extensions": { UI: { "mimeTypes": [MIME] } } })
}

fn initialize(capabilities: Value) -> http::Request<Vec<u8>> {
    legacy(
        "initialize",
        json!({
            "protocolVersion": "2025-06-18",
            "capabilities": capabilities,
            "clientInfo": { "name": "host", "version": "1" },
        }),
    )
}

/// A 2025-era client: its session id, if `initialize` gave it one.
async fn connect(b: &Bench, capabilities: Value) -> Option<String> {
    let reply = send(&b.app, initialize(capabilities)).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    reply.headers.get("mcp-session-id").and_then(|v| v.to_str().ok()).map(str::to_owned)
}

/// A 2025-era request, with the session id when there is one.
async fn request(b: &Bench, session: Option<&str>, method: &str, params: Value) -> Reply {
    let body = json!({ "jsonrpc": "2.0", "id": 3, "method": method, "params": params });
    let mut headers = vec![("accept", "*/*")];
    if let Some(id) = session {
        headers.push(("mcp-session-id", id));
    }
    send(&b.app, as_writer(post(&body, &headers))).await
}

fn trashed(b: &Bench, key: &str) -> bool {
    let deleted = b.sim.item(LIB, key).map(|item| item["data"]["deleted"].clone()).unwrap_or(Value::Null);
    deleted == json!(1) || deleted == json!(true)
}

fn tool<'a>(list: &'a Value, name: &str) -> Option<&'a Value> {
    list["tools"].as_array()?.iter().find(|t| t["name"] == name)
}

#[tokio::test(flavor = "current_thread")]
async fn a_client_without_the_extension_gets_no_session_no_panels_and_the_same_bytes() {
    let b = bench(false);
    assert_eq!(connect(&b, json!({})).await, None, "no session id without the extension");
    let declared = connect(&b, apps_capabilities()).await.expect("a session id with the extension");
    assert!(declared.starts_with("apps-"), "{declared}");

    let plain = request(&b, None, "tools/list", json!({})).await;
    assert!(!plain.text.contains("\"_meta\""), "a plain client's tools/list has no _meta");
    assert!(tool(plain.result(), "zotero_attachment_file").is_none());
    let resources = request(&b, None, "resources/list", json!({})).await;
    assert!(!resources.text.contains("ui://"), "{}", resources.text);
    // Neither a panel nor the tool only panels call exists for it: the answers of before panels existed.
    let panel = request(&b, None, "resources/read", json!({ "uri": "ui://zotero/evidence" })).await;
    let unknown = request(&b, None, "resources/read", json!({ "uri": "ui://zotero/nothing" })).await;
    assert_eq!(panel.text.replace("evidence", "nothing"), unknown.text);
    let file = json!({ "name": "zotero_attachment_file", "arguments": { "key": ATTACHMENT } });
    let file = request(&b, None, "tools/call", file).await;
    let unknown = json!({ "name": "zotero_no_tool", "arguments": { "key": ATTACHMENT } });
    let unknown = request(&b, None, "tools/call", unknown).await;
    assert_eq!(file.text.replace("zotero_attachment_file", "zotero_no_tool"), unknown.text);

    // The same read, with and without the extension: the same structured answer, the same bytes of it.
    let retrieve = json!({ "name": "zotero_retrieve", "arguments": { "query": "attention" } });
    let without = request(&b, None, "tools/call", retrieve.clone()).await;
    let with = request(&b, Some(&declared), "tools/call", retrieve).await;
    assert_eq!(without.result()["structuredContent"], with.result()["structuredContent"]);
    assert_eq!(without.text, with.text, "no _meta is added to a reading answer");
}

#[tokio::test(flavor = "current_thread")]
async fn a_client_with_the_extension_sees_each_panel_on_its_tools_and_can_read_it() {
    let b = bench(false);
    let session = connect(&b, apps_capabilities()).await;
    let list = request(&b, session.as_deref(), "tools/list", json!({})).await;
    let list = list.result();
    for (name, uri) in [
        ("zotero_retrieve", "ui://zotero/evidence"),
        ("fetch", "ui://zotero/evidence"),
        ("zotero_read_attachment", "ui://zotero/evidence"),
        ("zotero_check_references", "ui://zotero/references"),
        ("zotero_delete_items", "ui://zotero/review"),
        ("zotero_undo", "ui://zotero/review"),
        ("zotero_manage_collections", "ui://zotero/review"),
    ] {
        let entry = tool(list, name).unwrap_or_else(|| panic!("{name} listed"));
        assert_eq!(entry["_meta"]["ui"]["resourceUri"], uri, "{name}");
        assert_eq!(entry["_meta"]["ui/resourceUri"], uri, "{name}");
    }
    assert!(tool(list, "zotero_search").and_then(|t| t.get("_meta")).is_none(), "no panel, no _meta");
    let file = tool(list, "zotero_attachment_file").expect("the app-only tool is listed");
    assert_eq!(file["_meta"]["ui"]["visibility"], json!(["app"]));

    let resources = request(&b, session.as_deref(), "resources/list", json!({})).await;
    let uris: Vec<&str> =
        resources.result()["resources"].as_array().unwrap().iter().filter_map(|r| r["uri"].as_str()).collect();
    for uri in ["ui://zotero/evidence", "ui://zotero/references", "ui://zotero/review"] {
        assert!(uris.contains(&uri), "{uri} in {uris:?}");
        let read = request(&b, session.as_deref(), "resources/read", json!({ "uri": uri })).await;
        let contents = &read.result()["contents"][0];
        assert_eq!(contents["mimeType"], MIME);
        let html = contents["text"].as_str().unwrap();
        assert!(html.contains("ui/initialize"), "{uri}: the bridge is inlined");
        let domains = &contents["_meta"]["ui"]["csp"]["resourceDomains"];
        if uri.ends_with("evidence") {
            assert_eq!(domains, &json!(["https://zotero.example"]));
            assert!(html.contains("\"https://zotero.example/apps/\""), "the files come from this server");
        } else {
            assert!(domains.is_null(), "{uri} loads nothing and names nothing");
        }
    }
}

#[tokio::test(flavor = "current_thread")]
async fn a_2026_client_declares_the_extension_in_its_envelope() {
    let b = bench(false);
    let mut params = json!({});
    params["_meta"] = envelope();
    params["_meta"]["io.modelcontextprotocol/clientCapabilities"] = apps_capabilities();
    let body = json!({ "jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": params });
    let reply = send(&b.app, post(&body, &[("mcp-protocol-version", MODERN), ("mcp-method", "tools/list")])).await;
    assert_eq!(tool(reply.result(), "zotero_retrieve").unwrap()["_meta"]["ui"]["resourceUri"], "ui://zotero/evidence");
    let plain = send(&b.app, modern("tools/list", json!({}))).await;
    assert!(tool(plain.result(), "zotero_retrieve").unwrap().get("_meta").is_none());
}

#[tokio::test(flavor = "current_thread")]
async fn the_panel_gets_the_pdf_from_the_file_store_the_library_uses() {
    let b = bench(true);
    let pdf = include_bytes!("../../sim/demo/files/elstest-5p.pdf");
    b.upload(ATTACHMENT, "paper.pdf", pdf);
    let session = connect(&b, apps_capabilities()).await;
    for key in [ATTACHMENT, PAPER] {
        let params = json!({ "name": "zotero_attachment_file", "arguments": { "key": key } });
        let reply = request(&b, session.as_deref(), "tools/call", params).await;
        let file = ok(reply.result());
        assert_eq!(file["attachmentKey"], ATTACHMENT, "{key}");
        assert_eq!(file["contentType"], "application/pdf");
        assert_eq!(file["source"], "webdav");
        let data = base64::engine::general_purpose::STANDARD.decode(file["data"].as_str().unwrap()).unwrap();
        assert_eq!(data, pdf, "{key}: the stored file, whole");
        assert_eq!(file["bytes"], data.len());
    }
    // An annotation's key gives the PDF it is on.
    b.upload("93WJRKG5", "annotated.pdf", pdf);
    let params = json!({ "name": "zotero_attachment_file", "arguments": { "key": "2GV792WE" } });
    let reply = request(&b, session.as_deref(), "tools/call", params).await;
    assert_eq!(ok(reply.result())["attachmentKey"], "93WJRKG5");
}

/// The review record of an answer that asks through the panel.
fn review(result: &Value) -> Value {
    assert_eq!(result["isError"], true, "a question is not a result: {result}");
    assert!(text(result).contains("Not done yet"), "{}", text(result));
    result["_meta"]["io.github.zotero-mcp/review"].clone()
}

#[tokio::test(flavor = "current_thread")]
async fn a_delete_is_asked_in_the_panel_and_its_answer_works_once() {
    let b = bench(false);
    let session = connect(&b, apps_capabilities()).await;
    let s = session.as_deref();
    let arguments = json!({ "keys": [PAPER] });
    let call = json!({ "name": "zotero_delete_items", "arguments": arguments });
    let asked = request(&b, s, "tools/call", call.clone()).await;
    let record = review(asked.result());
    assert_eq!(record["tool"], "zotero_delete_items");
    assert_eq!(record["arguments"], arguments);
    assert!(record["summary"].as_str().unwrap().contains(PAPER), "{record}");
    assert!(record["expiresAt"].as_str().is_some_and(|t| t.ends_with('Z')), "{record}");
    assert!(!trashed(&b, PAPER), "nothing changed while asking");

    // Declined: nothing changes, and the handle is spent.
    let state = record["requestState"].as_str().unwrap().to_owned();
    let mut declined = call.clone();
    declined["requestState"] = json!(state);
    declined["inputResponses"] = json!({ "confirm": { "action": "decline" } });
    let no = request(&b, s, "tools/call", declined.clone()).await;
    assert!(error_text(no.result()).contains("declined"));
    assert!(!trashed(&b, PAPER));
    let again = request(&b, s, "tools/call", declined).await;
    assert!(error_text(again.result()).contains("already used"), "{}", again.text);

    // Approved, the answer in `_meta` as a host that passes on only standard members sends it.
    let asked = request(&b, s, "tools/call", call.clone()).await;
    let state = review(asked.result())["requestState"].as_str().unwrap().to_owned();
    let mut approved = call.clone();
    approved["_meta"] = json!({ "io.github.zotero-mcp/answer": {
        "requestState": state,
        "inputResponses": { "confirm": { "action": "accept", "content": { "confirm": true } } },
    } });
    let yes = request(&b, s, "tools/call", approved.clone()).await;
    assert_eq!(ok(yes.result())["deleted"], json!([PAPER]));
    assert!(trashed(&b, PAPER), "in the trash");
    let replay = request(&b, s, "tools/call", approved).await;
    assert!(error_text(replay.result()).contains("already used"));

    // An answer for other arguments is refused, whatever it says.
    let asked =
        request(&b, s, "tools/call", json!({ "name": "zotero_delete_items", "arguments": { "keys": [ATTACHMENT] } }))
            .await;
    let state = review(asked.result())["requestState"].as_str().unwrap().to_owned();
    let mut forged = json!({ "name": "zotero_delete_items", "arguments": { "keys": ["9ZEFCI5U"] } });
    forged["requestState"] = json!(state);
    forged["inputResponses"] = json!({ "confirm": { "action": "accept", "content": { "confirm": true } } });
    let refused = request(&b, s, "tools/call", forged).await;
    assert!(error_text(refused.result()).contains("another call"), "{}", refused.text);
    assert!(!trashed(&b, "9ZEFCI5U"));
}

#[tokio::test(flavor = "current_thread")]
async fn a_client_without_the_extension_still_deletes_as_before() {
    let b = bench(false);
    let call = json!({ "name": "zotero_delete_items", "arguments": { "keys": [PAPER] } });
    let reply = request(&b, None, "tools/call", call).await;
    assert_eq!(ok(reply.result())["deleted"], json!([PAPER]));
    assert!(reply.result().get("_meta").is_none());
}

#[tokio::test(flavor = "current_thread")]
async fn an_undo_that_deletes_is_reviewed_in_the_panel_and_approved_there() {
    let b = bench(false);
    let session = connect(&b, apps_capabilities()).await;
    let s = session.as_deref();
    let made = json!({ "name": "zotero_create_items", "arguments": { "items": [{ "itemType": "book", "title": "Made by mistake" }] } });
    let created = request(&b, s, "tools/call", made).await;
    let key = ok(created.result())["created"][0].as_str().expect("a key").to_owned();
    let line = text(created.result()).lines().rev().find(|l| l.starts_with("Undo: zotero_undo")).map(str::to_owned);
    let id = line.as_deref().and_then(|l| l.split('"').nth(1)).expect("an undo id").to_owned();

    let undo = json!({ "name": "zotero_undo", "arguments": { "id": id } });
    let asked = request(&b, s, "tools/call", undo.clone()).await;
    let record = review(asked.result());
    assert_eq!(record["tool"], "zotero_undo");
    let summary = record["summary"].as_str().unwrap_or_default();
    assert!(summary.contains(&key) && summary.contains("Made by mistake"), "names what goes: {summary}");
    assert!(b.sim.item(LIB, &key).is_some(), "nothing is deleted before the answer");

    let mut approved = undo;
    approved["_meta"] = json!({ "io.github.zotero-mcp/answer": {
        "requestState": record["requestState"],
        "inputResponses": { "confirm": { "action": "accept", "content": { "confirm": true } } },
    } });
    let done = request(&b, s, "tools/call", approved).await;
    assert_eq!(ok(done.result())["objects"][0]["outcome"], "removed", "{}", done.text);
    assert!(b.sim.item(LIB, &key).is_none());
}

#[tokio::test(flavor = "current_thread")]
async fn the_panel_lists_every_object_where_the_summary_names_ten() {
    let b = bench(false);
    let session = connect(&b, apps_capabilities()).await;
    let s = session.as_deref();
    let items: Vec<Value> = (1..=12).map(|n| json!({ "itemType": "book", "title": format!("Book {n}") })).collect();
    let made =
        request(&b, s, "tools/call", json!({ "name": "zotero_create_items", "arguments": { "items": items } })).await;
    let keys = ok(made.result())["created"].clone();
    assert_eq!(keys.as_array().map(Vec::len), Some(12), "{}", made.text);

    let asked =
        request(&b, s, "tools/call", json!({ "name": "zotero_delete_items", "arguments": { "keys": keys } })).await;
    let record = review(asked.result());
    let summary = record["summary"].as_str().unwrap_or_default();
    assert!(summary.contains("\u{2026} and 2 more"), "the summary names ten and counts the rest: {summary}");
    let every: Vec<&str> = record["items"].as_array().expect("items").iter().filter_map(Value::as_str).collect();
    assert_eq!(every.len(), 12, "{record}");
    for (n, key) in keys.as_array().into_iter().flatten().filter_map(Value::as_str).enumerate() {
        assert!(
            every.iter().any(|line| line.contains(key) && line.contains(&format!("Book {}", n + 1))),
            "{key}: {every:?}"
        );
    }
}

#[tokio::test(flavor = "current_thread")]
async fn a_pdf_of_the_largest_size_a_panel_is_sent_goes_whole_and_one_byte_more_is_refused() {
    use zotero_mcp_server::tools::attachment_file::MAX_PANEL_FILE_BYTES;
    let b = bench(true);
    let session = connect(&b, apps_capabilities()).await;
    // Bytes that do not compress, as a real PDF's streams: a zip inflating more than 100 times is refused first.
    let mut state = 0x2545_F491_u32;
    let mut pdf = b"%PDF-1.4\n".to_vec();
    while pdf.len() < MAX_PANEL_FILE_BYTES {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        pdf.push(state.to_le_bytes()[0]);
    }
    b.upload(ATTACHMENT, "large.pdf", &pdf);
    let params = json!({ "name": "zotero_attachment_file", "arguments": { "key": ATTACHMENT } });
    let reply = request(&b, session.as_deref(), "tools/call", params.clone()).await;
    let file = ok(reply.result());
    assert_eq!(file["bytes"], MAX_PANEL_FILE_BYTES);
    let data = base64::engine::general_purpose::STANDARD.decode(file["data"].as_str().unwrap()).unwrap();
    assert!(data == pdf, "the file whole, though larger than a model's answer may be");

    pdf.push(b'%');
    b.upload(ATTACHMENT, "large.pdf", &pdf);
    let reply = request(&b, session.as_deref(), "tools/call", params).await;
    let refused = error_text(reply.result());
    assert!(refused.contains(&format!("over the {MAX_PANEL_FILE_BYTES} bytes")), "{refused}");
    assert!(refused.contains("zotero_read_attachment"), "says what to do instead: {refused}");
}
