//! Confirmation through the protocol (MCP 2026-07-28's `input_required`), against the simulator and the
//! in-memory WebDAV folder, through the MCP layer as a client sends it (one JSON-RPC message per call): each
//! destructive tool asks a client that declares form elicitation, writes on a yes and sends nothing on a no;
//! a forged, replayed, expired or misdirected answer is refused; a client that cannot ask (or a 2025-era one)
//! gets today's behaviour; `CONFIRM_WRITES=0` asks nobody; a tool cannot write past the question.

mod common;

use common::dav::{bench, bench_with, Bench};
use common::*;
use serde_json::{json, Value};
use zotero_mcp_core::testing::ManualClock;
use zotero_mcp_server::auth::Grant;
use zotero_mcp_server::call::{Access, Plan, Session};
use zotero_mcp_server::confirm::Proposal;
use zotero_mcp_server::context::{RequestContext, WriterRefused};
use zotero_sim::{LibraryRef, Simulator};

const LIB: LibraryRef = LibraryRef::User(DEMO_USER);
/// A paper of the demo library; its twin is made by [`twin_of_paper`].
const TWIN: &str = "9ZEFCI5U";
const PAPER: &str = "KPDKK5UT";
const ATTACHMENT: &str = "UN79YVS8";

/// How a test client speaks: 2026-07-28 declaring form elicitation, 2026-07-28 without it, or 2025.
#[derive(Clone, Copy)]
enum Client {
    Asks,
    CannotAsk,
    Legacy,
}

/// One `tools/call` through the MCP layer (the stdio framing, which the HTTP transport shares), with `extra`
/// merged into the params (an answer: `inputResponses`, `requestState`). Returns the JSON-RPC `result`.
async fn call_as(b: &Bench, grant: Grant, client: Client, tool: &str, arguments: Value, extra: Value) -> Value {
    let mut params = json!({ "name": tool, "arguments": arguments });
    let capabilities = match client {
        Client::Asks => json!({ "elicitation": { "form": {} } }),
        _ => json!({}),
    };
    if !matches!(client, Client::Legacy) {
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": capabilities,
        });
    }
    for (key, value) in extra.as_object().into_iter().flatten() {
        params[key] = value.clone();
    }
    let line = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params }).to_string();
    let ctx = Session::new(grant, b.app.config.clone(), b.app.platform.clone());
    let registry = zotero_mcp_server::tools::registry(&b.app.config);
    let answer = zotero_mcp_server::mcp::stdio::answer_line(&line, &registry, &ctx).await.expect("an answer");
    let message: Value = serde_json::from_str(&answer).expect("JSON");
    message.get("result").cloned().unwrap_or_else(|| panic!("no result: {message}"))
}

async fn call(b: &Bench, client: Client, tool: &str, arguments: Value, extra: Value) -> Value {
    call_as(b, Grant::read_write("owner"), client, tool, arguments, extra).await
}

/// The question of an `input_required` result: its message and its `requestState`.
fn question(result: &Value) -> (String, String) {
    assert_eq!(result["resultType"], "input_required", "expected a question, got {result}");
    let request = &result["inputRequests"]["confirm"];
    assert_eq!(request["method"], "elicitation/create");
    assert_eq!(request["params"]["mode"], "form");
    assert_eq!(request["params"]["requestedSchema"]["properties"]["confirm"]["type"], "boolean");
    let message = request["params"]["message"].as_str().expect("a message").to_owned();
    (message, result["requestState"].as_str().expect("a requestState").to_owned())
}

fn answer(state: &str, action: &str, confirm: bool) -> Value {
    let response = match action {
        "accept" => json!({ "action": "accept", "content": { "confirm": confirm } }),
        other => json!({ "action": other }),
    };
    json!({ "requestState": state, "inputResponses": { "confirm": response } })
}

/// A second record of [`TWIN`] (the same title, date and DOI), returned by key.
fn twin_of_paper(sim: &Simulator) -> String {
    let mut data = sim.item(LIB, TWIN).expect("the demo paper")["data"].clone();
    let object = data.as_object_mut().expect("item data");
    for own in ["key", "version", "dateAdded", "dateModified", "collections", "relations", "deleted"] {
        object.remove(own);
    }
    sim.insert_item(LIB, data)
}

fn writes(sim: &Simulator) -> usize {
    sim.requests().iter().filter(|r| r.method != "GET").count()
}

fn trashed(sim: &Simulator, key: &str) -> bool {
    let deleted = sim.item(LIB, key).map(|item| item["data"]["deleted"].clone()).unwrap_or(Value::Null);
    deleted == json!(1) || deleted == json!(true)
}

fn title(sim: &Simulator, key: &str) -> String {
    sim.item(LIB, key).and_then(|i| i["data"]["title"].as_str().map(str::to_owned)).unwrap_or_default()
}

#[tokio::test]
async fn a_deletion_is_asked_about_and_done_on_yes() {
    let b = bench(false);
    let args = json!({ "keys": [PAPER, TWIN] });
    let asked = call(&b, Client::Asks, "zotero_delete_items", args.clone(), json!({})).await;
    let (message, state) = question(&asked);
    assert!(message.starts_with("Move 2 item(s) to the trash"), "{message}");
    for key in [PAPER, TWIN] {
        assert!(message.contains(key) && message.contains(&title(&b.sim, key)[..30]), "names {key}: {message}");
    }
    assert_eq!(writes(&b.sim), 0, "nothing is written before the answer");
    assert_eq!(asked["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "zotero-mcp");

    let done = call(&b, Client::Asks, "zotero_delete_items", args, answer(&state, "accept", true)).await;
    assert_eq!(ok(&done)["deleted"], json!([PAPER, TWIN]), "{done}");
    assert!(trashed(&b.sim, PAPER) && trashed(&b.sim, TWIN));
}

#[tokio::test]
async fn a_no_sends_nothing_and_so_does_an_unticked_box_or_a_cancel() {
    for (action, ticked) in [("decline", false), ("cancel", false), ("accept", false)] {
        let b = bench(false);
        let args = json!({ "keys": [PAPER], "permanent": true });
        let (message, state) = question(&call(&b, Client::Asks, "zotero_delete_items", args.clone(), json!({})).await);
        assert!(message.contains("for good"), "{message}");
        let children = b.sim.item(LIB, PAPER).unwrap()["meta"]["numChildren"].as_u64().unwrap_or(0);
        assert!(children > 0 && message.contains(&format!("with their {children} notes and attachments")), "{message}");
        let declined = call(&b, Client::Asks, "zotero_delete_items", args, answer(&state, action, ticked)).await;
        let text = error_text(&declined);
        assert!(text.contains("declined") && text.contains("Nothing was changed"), "{action}: {text}");
        assert_eq!(writes(&b.sim), 0, "{action}: nothing sent");
        assert!(b.sim.item(LIB, PAPER).is_some());
    }
}

#[tokio::test]
async fn forged_replayed_expired_and_misdirected_answers_are_refused() {
    let mut b = bench(false);
    let clock = ManualClock::at(1_800_000_000_000);
    b.app.platform.clock = clock.clone();
    let args = json!({ "keys": [PAPER] });
    let refused = |result: &Value| {
        let text = error_text(result);
        assert!(text.starts_with("Refused:") && text.contains("Nothing was changed"), "{text}");
        text
    };

    // Forged: a state this server never issued.
    let forged = answer("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "accept", true);
    refused(&call(&b, Client::Asks, "zotero_delete_items", args.clone(), forged).await);
    refused(&call(&b, Client::Asks, "zotero_delete_items", args.clone(), answer("../../x", "accept", true)).await);

    // Misdirected: a yes to one call presented with other arguments, or by another user.
    let (_, state) = question(&call(&b, Client::Asks, "zotero_delete_items", args.clone(), json!({})).await);
    let other = json!({ "keys": [TWIN] });
    let text = refused(&call(&b, Client::Asks, "zotero_delete_items", other, answer(&state, "accept", true)).await);
    assert!(text.contains("another call"), "{text}");
    let stranger = Grant::read_write("someone-else");
    let yes = answer(&state, "accept", true);
    refused(&call_as(&b, stranger, Client::Asks, "zotero_delete_items", args.clone(), yes.clone()).await);

    // Replayed: the yes works once.
    let done = call(&b, Client::Asks, "zotero_delete_items", args.clone(), yes.clone()).await;
    assert_eq!(ok(&done)["deleted"], json!([PAPER]));
    let before = writes(&b.sim);
    refused(&call(&b, Client::Asks, "zotero_delete_items", args.clone(), yes).await);
    assert_eq!(writes(&b.sim), before, "the replay sent nothing");

    // Expired: an answer after ten minutes.
    let args = json!({ "keys": [TWIN] });
    let (_, state) = question(&call(&b, Client::Asks, "zotero_delete_items", args.clone(), json!({})).await);
    clock.advance_secs(601);
    refused(&call(&b, Client::Asks, "zotero_delete_items", args, answer(&state, "accept", true)).await);
    assert!(!trashed(&b.sim, TWIN));
    assert_eq!(writes(&b.sim), before);
}

#[tokio::test]
async fn a_change_in_the_library_between_question_and_answer_asks_again() {
    let b = bench(false);
    let args = json!({ "keys": [PAPER] });
    let (_, state) = question(&call(&b, Client::Asks, "zotero_delete_items", args.clone(), json!({})).await);
    // Someone renames the paper in Zotero Desktop meanwhile: the person did not see this title.
    let edit = call(
        &b,
        Client::Asks,
        "zotero_update_item",
        json!({ "keys": [PAPER], "fields": { "title": "Renamed" } }),
        json!({}),
    )
    .await;
    ok(&edit);
    let again = call(&b, Client::Asks, "zotero_delete_items", args.clone(), answer(&state, "accept", true)).await;
    let (message, fresh) = question(&again);
    assert!(message.starts_with("The library changed") && message.contains("Renamed"), "{message}");
    assert!(!trashed(&b.sim, PAPER));
    let done = call(&b, Client::Asks, "zotero_delete_items", args, answer(&fresh, "accept", true)).await;
    assert_eq!(ok(&done)["deleted"], json!([PAPER]));
}

#[tokio::test]
async fn an_answer_without_the_response_asks_again() {
    let b = bench(false);
    let args = json!({ "keys": [PAPER] });
    let (_, state) = question(&call(&b, Client::Asks, "zotero_delete_items", args.clone(), json!({})).await);
    let retry = call(&b, Client::Asks, "zotero_delete_items", args, json!({ "requestState": state })).await;
    let (_, fresh) = question(&retry);
    assert_ne!(fresh, state, "a fresh question");
    assert_eq!(writes(&b.sim), 0);
}

#[tokio::test]
async fn clients_that_cannot_ask_keep_today_s_behaviour_and_the_setting_turns_asking_off() {
    for client in [Client::CannotAsk, Client::Legacy] {
        let b = bench(false);
        let result = call(&b, client, "zotero_delete_items", json!({ "keys": [PAPER] }), json!({})).await;
        assert_eq!(ok(&result)["deleted"], json!([PAPER]));
        assert!(result.get("resultType").is_none_or(|t| t == "complete"), "{result}");
        // The dry run is still the guard for them.
        let copy = twin_of_paper(&b.sim);
        let dry = call(&b, client, "zotero_find_duplicates", json!({ "mergeKeys": [TWIN, copy] }), json!({})).await;
        assert_eq!(ok(&dry)["groups"][0]["merged"], false);
    }
    let b = bench_with(false, &[("CONFIRM_WRITES", "0")]);
    let result = call(&b, Client::Asks, "zotero_delete_items", json!({ "keys": [PAPER] }), json!({})).await;
    assert_eq!(ok(&result)["deleted"], json!([PAPER]), "CONFIRM_WRITES=0 asks nobody");
}

#[tokio::test]
async fn a_read_only_grant_is_refused_before_anyone_is_asked() {
    let b = bench(false);
    let copy = twin_of_paper(&b.sim);
    let args = json!({ "mergeKeys": [TWIN, copy], "merge": true });
    let result = call_as(&b, Grant::read_only("owner"), Client::Asks, "zotero_find_duplicates", args, json!({})).await;
    assert!(error_text(&result).contains("zotero:write"), "{result}");
}

#[tokio::test]
async fn a_merge_names_the_copy_kept_and_what_moves_to_it() {
    let b = bench(false);
    let copy = twin_of_paper(&b.sim);
    let args = json!({ "mergeKeys": [TWIN, copy], "merge": true });
    let (message, state) = question(&call(&b, Client::Asks, "zotero_find_duplicates", args.clone(), json!({})).await);
    let keep = message.find(&format!("keep \u{201c}{}", title(&b.sim, TWIN))).expect("names the copy kept");
    let trash = message.find(&format!("({copy})")).expect("names the copy trashed");
    assert!(keep < trash && message.contains("- trash"), "{message}");
    assert_eq!(writes(&b.sim), 0);
    let done = call(&b, Client::Asks, "zotero_find_duplicates", args, answer(&state, "accept", true)).await;
    assert_eq!(ok(&done)["groups"][0]["merged"], true, "{done}");
    assert!(trashed(&b.sim, &copy) && !trashed(&b.sim, TWIN));
}

#[tokio::test]
async fn a_permanent_attachment_delete_and_a_collection_delete_are_asked_about() {
    let b = bench(false);
    let args = json!({ "attachmentKey": ATTACHMENT, "permanent": true });
    let (message, state) = question(&call(&b, Client::Asks, "zotero_delete_attachment", args.clone(), json!({})).await);
    assert!(message.contains(ATTACHMENT) && message.contains("for good"), "{message}");
    let declined = call(&b, Client::Asks, "zotero_delete_attachment", args, answer(&state, "decline", false)).await;
    error_text(&declined);
    assert!(b.sim.item(LIB, ATTACHMENT).is_some());

    // Trashing an attachment is Zotero's own undo: not asked.
    let trash =
        call(&b, Client::Asks, "zotero_delete_attachment", json!({ "attachmentKey": ATTACHMENT }), json!({})).await;
    ok(&trash);

    let collection = b.sim.collections(LIB).into_iter().next().expect("the demo library has collections");
    let key = collection["key"].as_str().unwrap().to_owned();
    let args = json!({ "action": "delete", "collectionKey": key });
    let (message, state) =
        question(&call(&b, Client::Asks, "zotero_manage_collections", args.clone(), json!({})).await);
    let name = collection["data"]["name"].as_str().unwrap();
    assert!(message.contains(name) && message.contains("stay in the library"), "{message}");
    let done = call(&b, Client::Asks, "zotero_manage_collections", args, answer(&state, "accept", true)).await;
    ok(&done);
    assert!(b.sim.collection(LIB, &key).is_none(), "deleted on yes");
    // Creating a collection is not destructive: not asked.
    let created =
        call(&b, Client::Asks, "zotero_manage_collections", json!({ "action": "create", "name": "New" }), json!({}))
            .await;
    ok(&created);
}

#[tokio::test]
async fn a_file_replacement_is_asked_about_before_anything_is_fetched() {
    let b = bench(true);
    b.upload(ATTACHMENT, "paper.pdf", b"%PDF-1.4 the old file");
    b.serve("files.example.org/new.pdf", 200, &[("content-type", "application/pdf")], b"%PDF-1.4 new");
    let args = json!({ "replaceAttachmentKey": ATTACHMENT, "sourceUrl": "https://files.example.org/new.pdf" });
    let (message, state) = question(&call(&b, Client::Asks, "zotero_put_attachment", args.clone(), json!({})).await);
    assert!(message.contains(ATTACHMENT) && message.contains("https://files.example.org/new.pdf"), "{message}");
    assert!(
        b.dav_requests().iter().all(|r| r.starts_with("GET") || r.starts_with("PROPFIND")),
        "{:?}",
        b.dav_requests()
    );
    let done = call(&b, Client::Asks, "zotero_put_attachment", args, answer(&state, "accept", true)).await;
    assert_eq!(ok(&done)["replaced"], true, "{done}");
}

#[tokio::test]
async fn tag_changes_on_more_than_a_handful_of_items_are_asked_about_a_handful_are_not() {
    let b = bench(false);
    let many = ["T6W7H8UE", "KPDKK5UT", "BMTDL3F8", "FQDCTD9F", "RSCKVSN3", "8CR2RQWN"];
    let args = json!({ "keys": many, "addTags": ["to-check"] });
    let (message, state) = question(&call(&b, Client::Asks, "zotero_update_item", args.clone(), json!({})).await);
    assert!(message.starts_with("Change the tags of 6 item(s): add \u{201c}to-check\u{201d}"), "{message}");
    assert_eq!(writes(&b.sim), 0);
    let done = call(&b, Client::Asks, "zotero_update_item", args, answer(&state, "accept", true)).await;
    assert_eq!(ok(&done)["updated"].as_array().map(Vec::len), Some(6));

    let few = json!({ "keys": &many[..5], "removeTags": ["to-check"] });
    let result = call(&b, Client::Asks, "zotero_update_item", few, json!({})).await;
    assert_eq!(ok(&result)["updated"].as_array().map(Vec::len), Some(5), "five items: no question");
}

#[tokio::test]
async fn a_tool_that_expects_confirmation_gets_no_writer_until_it_has_confirmed() {
    let b = bench(false);
    let session = Session::new(Grant::read_write("owner"), b.app.config.clone(), b.app.platform.clone());
    let plan = Plan {
        tool: "zotero_delete_items",
        access: Access::Write,
        confirms: true,
        library: None,
        asking: Default::default(),
    };
    let ctx = RequestContext::resolve(&session, plan).await.expect("the configured library");
    assert!(matches!(ctx.writer(), Err(WriterRefused::Unconfirmed { .. })));
    assert!(matches!(ctx.file_writer().await, Err(WriterRefused::Unconfirmed { .. })));
    // This client asks nobody (no elicitation declared): confirming lets the write go ahead, through the
    // confirmation's own writer; the context's stays refused.
    let confirmed = ctx.confirm(Proposal::new("Delete 1 item")).await.expect("no one to ask");
    assert!(confirmed.writer().is_ok());
    assert!(matches!(ctx.writer(), Err(WriterRefused::Unconfirmed { .. })));
}

#[tokio::test]
async fn a_mass_rename_is_asked_about_call_by_call_and_a_handful_is_not() {
    let b = bench(true);
    // Six PDFs stored on WebDAV under one paper: more than a call renames (5).
    for n in 0..6 {
        let key = b.sim.insert_item(
            LIB,
            json!({ "itemType": "attachment", "linkMode": "imported_file", "parentItem": TWIN, "title": "PDF",
                    "filename": format!("scan-{n}.pdf"), "contentType": "application/pdf" }),
        );
        b.upload(&key, &format!("scan-{n}.pdf"), b"%PDF-1.4 a scan");
    }
    let args = json!({ "itemKeys": [TWIN], "apply": true });
    let asked = call(&b, Client::Asks, "zotero_rename_attachments", args.clone(), json!({})).await;
    let (message, state) = question(&asked);
    assert!(message.starts_with("Rename 5 attachment file(s)") && message.contains("1 more file(s)"), "{message}");
    assert!(
        message.contains("scan-5.pdf\u{201d} \u{2192} \u{201c}Brennan et al. - 2022"),
        "old and new names: {message}"
    );
    assert_eq!(writes(&b.sim), 0);

    let declined =
        call(&b, Client::Asks, "zotero_rename_attachments", args.clone(), answer(&state, "decline", false)).await;
    error_text(&declined);
    assert_eq!(writes(&b.sim), 0, "a no renames nothing");

    let (_, state) = question(&call(&b, Client::Asks, "zotero_rename_attachments", args.clone(), json!({})).await);
    let done = call(&b, Client::Asks, "zotero_rename_attachments", args.clone(), answer(&state, "accept", true)).await;
    let statuses: Vec<&str> =
        ok(&done)["planned"].as_array().unwrap().iter().filter_map(|p| p["status"].as_str()).collect();
    assert_eq!(statuses.iter().filter(|s| **s == "renamed").count(), 5, "{statuses:?}");
    assert_eq!(statuses.iter().filter(|s| **s == "deferred").count(), 1, "{statuses:?}");

    // The last file alone is a handful: renamed without a question.
    let rest = call(&b, Client::Asks, "zotero_rename_attachments", args, json!({})).await;
    let statuses: Vec<&str> =
        ok(&rest)["planned"].as_array().unwrap().iter().filter_map(|p| p["status"].as_str()).collect();
    assert_eq!(statuses.iter().filter(|s| **s == "renamed").count(), 1, "{statuses:?}");
}

/// The id the answer's last line gives for undoing the call.
fn undo_id(result: &Value) -> String {
    let text = text(result);
    let line = text.lines().rev().find(|l| l.starts_with("Undo: zotero_undo")).unwrap_or_else(|| panic!("{text}"));
    line.split('"').nth(1).expect("an id in quotes").to_owned()
}

#[tokio::test]
async fn an_undo_that_deletes_is_asked_about_and_one_that_only_restores_is_not() {
    let b = bench(false);
    let made = json!({ "items": [{ "itemType": "book", "title": "Made by mistake" }] });
    let created = call(&b, Client::Asks, "zotero_create_items", made, json!({})).await;
    let key = ok(&created)["created"][0].as_str().unwrap_or_else(|| panic!("{created}")).to_owned();
    let args = json!({ "id": undo_id(&created) });
    let sent = writes(&b.sim);

    let (message, state) = question(&call(&b, Client::Asks, "zotero_undo", args.clone(), json!({})).await);
    assert!(message.contains("delete for good") && message.contains(&key), "{message}");
    assert!(message.contains("Made by mistake"), "names what goes: {message}");
    assert_eq!(writes(&b.sim), sent, "nothing is deleted before the answer");
    let declined = call(&b, Client::Asks, "zotero_undo", args.clone(), answer(&state, "decline", false)).await;
    assert!(error_text(&declined).contains("declined"), "{declined}");
    assert!(b.sim.item(LIB, &key).is_some(), "a no keeps it");

    let (_, state) = question(&call(&b, Client::Asks, "zotero_undo", args.clone(), json!({})).await);
    let done = call(&b, Client::Asks, "zotero_undo", args, answer(&state, "accept", true)).await;
    assert_eq!(ok(&done)["objects"][0]["outcome"], "removed", "{done}");
    assert!(b.sim.item(LIB, &key).is_none());

    // Writing earlier fields back deletes nothing: no question.
    let edit = json!({ "keys": [PAPER], "fields": { "extra": "an edit" } });
    let edited = call(&b, Client::Asks, "zotero_update_item", edit, json!({})).await;
    let restored = call(&b, Client::Asks, "zotero_undo", json!({ "id": undo_id(&edited) }), json!({})).await;
    assert_eq!(ok(&restored)["objects"][0]["outcome"], "restored", "{restored}");
}

#[tokio::test]
async fn two_answers_to_one_question_sent_together_pass_once() {
    let mut b = bench(false);
    // Every KV step waits a turn, so the two answers can interleave between reading the question and using it.
    let kv = common::kv::InterposedKv::over(b.app.platform.cache_kv.clone());
    kv.yields.set(true);
    b.app.platform.cache_kv = kv;
    let args = json!({ "keys": [PAPER] });
    let (_, state) = question(&call(&b, Client::Asks, "zotero_delete_items", args.clone(), json!({})).await);
    let yes = answer(&state, "accept", true);
    let (first, second) = futures_util::future::join(
        call(&b, Client::Asks, "zotero_delete_items", args.clone(), yes.clone()),
        call(&b, Client::Asks, "zotero_delete_items", args, yes),
    )
    .await;
    let passed = [&first, &second].iter().filter(|r| r.get("isError") != Some(&Value::Bool(true))).count();
    assert_eq!(passed, 1, "exactly one answer goes through:\n{first}\n{second}");
    let refused = if passed == 1 && first.get("isError") == Some(&Value::Bool(true)) { &first } else { &second };
    assert!(error_text(refused).contains("already used"), "{refused}");
    assert_eq!(writes(&b.sim), 1, "one trash write");
}

#[tokio::test]
async fn making_a_feed_link_is_asked_about_even_for_a_group_the_key_may_only_read() {
    let b = bench(false);
    b.sim.add_demo_groups(DEMO_KEY);
    let args = json!({ "library": "groups/100002", "format": "ris", "label": "reading" });
    let links = |listed: &Value| ok(listed)["links"].as_array().map_or(0, Vec::len);
    let list = json!({ "action": "list" });

    // A no makes nothing.
    let (_, state) = question(&call(&b, Client::Asks, "zotero_export_link", args.clone(), json!({})).await);
    let declined = call(&b, Client::Asks, "zotero_export_link", args.clone(), answer(&state, "decline", false)).await;
    assert!(error_text(&declined).contains("declined"), "{declined}");
    assert_eq!(links(&call(&b, Client::Asks, "zotero_export_link", list.clone(), json!({})).await), 0);

    // The question says what is handed out and to whom; the yes makes the link, for a library the key may only
    // read (nothing in it changes).
    let asked = call(&b, Client::Asks, "zotero_export_link", args.clone(), json!({})).await;
    let (message, state) = question(&asked);
    assert!(message.contains("anyone who has it") && message.contains("groups/100002"), "{message}");
    assert!(message.contains("ris") && message.contains("until revoked"), "{message}");
    let made = call(&b, Client::Asks, "zotero_export_link", args, answer(&state, "accept", true)).await;
    assert!(ok(&made)["url"].as_str().is_some_and(|url| url.ends_with(".ris")), "{made}");
    assert_eq!(links(&call(&b, Client::Asks, "zotero_export_link", list.clone(), json!({})).await), 1);

    // Listing and revoking are not asked about.
    let listed = call(&b, Client::Asks, "zotero_export_link", list, json!({})).await;
    let id = ok(&listed)["links"][0]["id"].clone();
    let revoked =
        call(&b, Client::Asks, "zotero_export_link", json!({ "action": "revoke", "id": id }), json!({})).await;
    assert_eq!(ok(&revoked)["action"], "revoke");
}
