//! The native server killed in the middle of a multi-step write and started again on the same data directory:
//! the call's undo journal entry, kept ahead of the writes in the data directory's store, is listed as
//! incomplete with what landed before the kill, and undoing it removes that.
//!
//! The write is `zotero_put_attachment` on the simulator's Zotero Storage: the attachment item is created, then
//! the upload's authorization is held by the simulator (`/_sim/hold`) and the server is killed (SIGKILL) while
//! it waits, leaving an attachment item without its file that no answer named. The server started again is
//! another run on the same data file, so the next write call names the call cut off at once, with the item that
//! landed (the Worker, whose isolates share their stores, waits ten minutes before it does: see
//! crates/server/tests/journal_ahead.rs).

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use base64::Engine;
use serde_json::{json, Value};

const TOKEN: &str = "crash-test-token";
/// A paper of the demo library.
const PARENT: &str = "KPDKK5UT";

/// Kills the server when dropped.
struct Server(std::process::Child, String);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_sim() -> String {
    zotero_sim::server::start_demo_on_loopback().expect("zotero-sim started")
}

fn start_server(sim: &str, data: &Path) -> Server {
    let (child, url) = common::serve_over_sim(sim, data, TOKEN, &[]);
    Server(child, url)
}

fn client() -> reqwest::blocking::Client {
    reqwest::blocking::Client::builder().timeout(Duration::from_secs(30)).build().expect("a client")
}

/// Calls `name` on the server at `url`: the tool's result, or the transport error.
fn call(url: &str, name: &str, arguments: Value) -> Result<Value, String> {
    let body = json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": { "name": name, "arguments": arguments, "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": { "name": "crash-test", "version": "1" },
            "io.modelcontextprotocol/clientCapabilities": {} } }
    });
    let answer = client()
        .post(url)
        .bearer_auth(TOKEN)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", name)
        .body(body.to_string())
        .send()
        .map_err(|e| e.to_string())?;
    let status = answer.status().as_u16();
    let text = answer.text().map_err(|e| e.to_string())?;
    if status != 200 {
        return Err(format!("HTTP {status}: {text}"));
    }
    let reply: Value = serde_json::from_str(&text).map_err(|e| format!("{e}: {text}"))?;
    Ok(reply["result"].clone())
}

fn control(sim: &str, method: reqwest::Method, path: &str, body: Option<Value>) -> Value {
    let mut request = client().request(method, format!("{sim}{path}"));
    if let Some(body) = body {
        request = request.header("content-type", "application/json").body(body.to_string());
    }
    let answer = request.send().expect("the simulator answers");
    let text = answer.text().expect("a body");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

/// The item's status and JSON as the simulator serves them.
fn item(sim: &str, key: &str) -> (u16, Value) {
    let url = format!("{sim}/users/{}/items/{key}", zotero_sim::DEMO_USER_ID);
    let answer = client().get(url).header("zotero-api-key", "demo").send().expect("the simulator answers");
    let status = answer.status().as_u16();
    (status, answer.text().ok().and_then(|t| serde_json::from_str(&t).ok()).unwrap_or(Value::Null))
}

#[test]
fn a_server_killed_mid_write_lists_what_landed_after_a_restart_and_undoes_it() {
    let sim = start_sim();
    let data = std::env::temp_dir().join(format!("zotero-mcp-crash-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&data);
    let server = start_server(&sim, &data);

    // The upload's authorization (the write after the attachment item's creation) is held before it is applied.
    let hold = json!({ "method": "POST", "pathContains": "/file" });
    let armed = control(&sim, reqwest::Method::POST, "/_sim/hold", Some(hold));
    assert!(armed.get("holding").is_some(), "{armed}");
    let url = server.1.clone();
    let pdf = zotero_mcp_core::testing::pdf_of_pages(&["Written before the crash"]);
    let data64 = base64::engine::general_purpose::STANDARD.encode(&pdf);
    let arguments = json!({ "parentItemKey": PARENT, "base64Data": data64, "filename": "Crash.pdf" });
    let cut_off = std::thread::spawn(move || call(&url, "zotero_put_attachment", arguments));

    let deadline = Instant::now() + Duration::from_secs(20);
    while control(&sim, reqwest::Method::GET, "/_sim/hold", None)["held"] != 1 {
        assert!(Instant::now() < deadline, "the upload's authorization never reached the simulator");
        std::thread::sleep(Duration::from_millis(20));
    }
    // SIGKILL: no clean-up of any kind.
    drop(server);
    let answer = cut_off.join().expect("the calling thread");
    assert!(answer.is_err(), "the killed server answered: {answer:?}");
    control(&sim, reqwest::Method::POST, "/_sim/release", None);

    let server = start_server(&sim, &data);
    let listed = call(&server.1, "zotero_undo", json!({})).expect("zotero_undo answers");
    let entries = listed["structuredContent"]["entries"].as_array().cloned().unwrap_or_default();
    let entry = entries.first().unwrap_or_else(|| panic!("no entry: {listed}"));
    assert_eq!(entry["incomplete"], true, "{listed}");
    assert_eq!(entry["tool"], "zotero_put_attachment", "{listed}");
    assert_eq!(entry["objects"][0]["change"], "created", "{listed}");
    let key = entry["objects"][0]["key"].as_str().unwrap_or_else(|| panic!("a key: {listed}")).to_owned();
    let (status, landed) = item(&sim, &key);
    assert_eq!(status, 200, "the attachment item landed before the kill");
    assert!(landed["data"].get("md5").is_none_or(Value::is_null), "its file was never registered: {landed}");

    let id = entry["id"].as_str().unwrap_or_else(|| panic!("an id: {listed}")).to_owned();

    // The next write call names it, with what landed: doing it again is not needed to find that out.
    let next = call(&server.1, "zotero_update_item", json!({ "keys": [PARENT], "fields": { "extra": "after" } }))
        .expect("zotero_update_item answers");
    let said = next["content"][0]["text"].as_str().unwrap_or_default().to_owned();
    let line = said.lines().find(|l| l.contains("was cut off")).unwrap_or_else(|| panic!("not named: {next}"));
    for part in [id.as_str(), key.as_str(), "zotero_put_attachment", "zotero_undo"] {
        assert!(line.contains(part), "{part} missing: {line}");
    }
    let again = call(&server.1, "zotero_update_item", json!({ "keys": [PARENT], "fields": { "extra": "later" } }))
        .expect("zotero_update_item answers");
    assert!(!again.to_string().contains("was cut off"), "named once: {again}");

    let undone = call(&server.1, "zotero_undo", json!({ "id": id })).expect("zotero_undo answers");
    assert_eq!(undone["structuredContent"]["objects"][0]["outcome"], "removed", "{undone}");
    assert_eq!(item(&sim, &key).0, 404, "what landed is gone");
    drop(server);
    let _ = std::fs::remove_dir_all(&data);
}
