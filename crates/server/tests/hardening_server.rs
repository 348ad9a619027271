//! Hostile or bursty use of the server's own surfaces: `/health` under a burst, and what else a
//! caller can make the server do at will.

mod common;

use std::rc::Rc;

use common::dav::bench;
use common::steps::Steps;
use common::*;
use serde_json::json;
use zotero_mcp_core::testing::StoppedClock;
use zotero_mcp_server::config::{Config, SetupHint};

fn health() -> http::Request<Vec<u8>> {
    http::Request::get("https://z.example/health").body(Vec::new()).expect("request")
}

/// `/health` is public: a burst of requests must not become a burst of `PROPFIND`s at the owner's WebDAV server.
/// The requests arrive together and the stand-in answers a turn later, so all of them are waiting on the probe
/// at once; they share it.
#[tokio::test]
async fn concurrent_health_requests_share_one_webdav_probe() {
    let mut bench = bench(true);
    let http = Steps::over(bench.router.clone());
    bench.app.platform.http = http.clone();
    // ManualClock ends every wait at once, so the probe's 5 s deadline would win against a stand-in that takes a
    // turn; a StoppedClock's timers never fire.
    bench.app.platform.clock = Rc::new(StoppedClock(bench.app.platform.clock.now_ms()));
    let replies = futures_util::future::join_all((0..20).map(|_| send(&bench.app, health()))).await;
    for reply in &replies {
        let webdav = reply.body["checks"].as_array().and_then(|c| c.iter().find(|c| c["name"] == "webdav"));
        assert_eq!(webdav.map(|c| c["ok"].clone()), Some(true.into()), "{}", reply.text);
    }
    assert_eq!(http.count("PROPFIND"), 1, "one probe for 20 requests: {:?}", http.log());
    // Later requests within the minute reuse its answer too.
    send(&bench.app, health()).await;
    assert_eq!(http.count("PROPFIND"), 1, "{:?}", http.log());
}

/// An app without a Zotero key, its configuration as the given shell reads it.
fn app_without_key(setup: SetupHint) -> zotero_mcp_server::app::App {
    let mut app = app_with(&[("ZOTERO_API_KEY", "")]);
    app.config = Rc::new(Config { setup, ..Config::clone(&app.config) });
    app
}

/// A tool that needs Zotero, called through JSON-RPC: its error text.
async fn search_error(app: &zotero_mcp_server::app::App) -> String {
    let reply =
        send(app, modern("tools/call", json!({ "name": "zotero_search", "arguments": { "query": "x" } }))).await;
    error_text(reply.result())
}

async fn health_fix(app: &zotero_mcp_server::app::App, check: &str) -> String {
    let reply = send(app, health()).await;
    let checks = reply.body["checks"].as_array().cloned().unwrap_or_default();
    let found = checks.into_iter().find(|c| c["name"] == check);
    found.and_then(|c| c["fix"].as_str().map(str::to_owned)).unwrap_or_else(|| panic!("no fix: {}", reply.text))
}

/// The core crate names the missing variable; the Worker shell says how to set it there.
#[tokio::test]
async fn a_worker_without_a_key_says_to_put_the_secret_with_wrangler() {
    let app = app_without_key(SetupHint::Worker);
    let message = search_error(&app).await;
    assert!(message.contains("ZOTERO_API_KEY is not set"), "{message}");
    assert!(message.contains("`wrangler secret put ZOTERO_API_KEY`"), "{message}");
    let fix = health_fix(&app, "zotero_api_key").await;
    assert!(fix.contains("`wrangler secret put ZOTERO_API_KEY`") && !fix.contains("environment"), "{fix}");
}

/// A native server is never told to run wrangler.
#[tokio::test]
async fn a_native_server_without_a_key_says_to_set_the_variable() {
    let app = app_without_key(SetupHint::Native);
    let message = search_error(&app).await;
    assert!(message.contains("set ZOTERO_API_KEY in the environment or as `ZOTERO_API_KEY = \"…\"`"), "{message}");
    assert!(!message.contains("wrangler"), "{message}");
    let fix = health_fix(&app, "zotero_api_key").await;
    assert!(fix.contains("set ZOTERO_API_KEY in the environment") && !fix.contains("wrangler"), "{fix}");
}
