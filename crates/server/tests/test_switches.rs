//! `ENABLE_TEST_FIXTURES=1` and the switches it lets through serve local requests only: a request from another
//! machine, or to a host name that is not loopback, is served as if the variable were unset (no fixture tools,
//! the download guard on), and `/health` warns either way. Both shells route through `App::for_request`.

mod common;

use common::*;
use serde_json::{json, Value};
use zotero_mcp_server::app::App;
use zotero_mcp_server::platform::HttpRequest;

/// `request` as sent to `url` by a client at `client` (the header the shells fill in), served as a shell serves it.
async fn from(app: &App, mut request: HttpRequest, url: &str, client: &str) -> Reply {
    *request.uri_mut() = url.parse().expect("a URL");
    request.headers_mut().insert("cf-connecting-ip", client.parse().expect("a header value"));
    let app = app.for_request(&request).into_owned();
    send(&app, request).await
}

fn tool_names(reply: &Reply) -> Vec<String> {
    reply.result()["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_owned()).collect()
}

const LOCAL: (&str, &str) = ("http://127.0.0.1:8787/mcp", "127.0.0.1");
const ELSEWHERE: [(&str, &str); 2] = [
    // Another machine naming loopback (a native server listening on a public address).
    ("http://127.0.0.1:8787/mcp", "203.0.113.7"),
    // This machine, through a reverse proxy that asks for the deployment's own name (and so every Worker).
    ("https://zotero.example/mcp", "127.0.0.1"),
];

#[tokio::test]
async fn fixture_tools_are_listed_and_served_to_local_requests_only() {
    let app = app();
    let (url, client) = LOCAL;
    let listed = tool_names(&from(&app, modern("tools/list", json!({})), url, client).await);
    assert!(listed.iter().any(|n| n == "fixture_echo"), "{listed:?}");
    let call = json!({ "name": "fixture_echo", "arguments": { "text": "hi" } });
    let echoed = from(&app, modern("tools/call", call.clone()), url, client).await;
    assert_eq!(ok(echoed.result())["echoed"], "hi");

    for (url, client) in ELSEWHERE {
        let listed = tool_names(&from(&app, modern("tools/list", json!({})), url, client).await);
        assert!(!listed.iter().any(|n| n.starts_with("fixture_")), "{url} from {client}: {listed:?}");
        assert!(listed.iter().any(|n| n == "zotero_search"), "the real tools stay: {listed:?}");
        let refused = from(&app, modern("tools/call", call.clone()), url, client).await;
        assert_eq!(refused.error_code(), Some(-32602), "{url} from {client}: {}", refused.text);
    }
}

#[tokio::test]
async fn the_other_switches_are_off_for_a_request_from_elsewhere() {
    let app = app_with(&[
        ("UNLIMITED_REGISTRATION", "1"),
        ("ALLOW_LOOPBACK_SOURCE_URLS", "1"),
        ("SOURCES_TEST_BASE_URL", "http://127.0.0.1:9"),
    ]);
    let request = |url: &str, client: &str| {
        let mut request = http::Request::get(url).body(Vec::new()).unwrap();
        request.headers_mut().insert("cf-connecting-ip", client.parse().unwrap());
        request
    };
    let (url, client) = LOCAL;
    let local = request(url, client);
    let served = app.for_request(&local);
    assert!(served.config.unlimited_registration && served.config.allow_loopback_source_urls);
    assert_eq!(served.config.sources.endpoints.crossref, "http://127.0.0.1:9/crossref");
    for (url, client) in ELSEWHERE {
        let remote = request(url, client);
        let served = app.for_request(&remote);
        let config = &served.config;
        assert!(!config.test_fixtures && !config.unlimited_registration && !config.allow_loopback_source_urls);
        assert!(!config.sources.endpoints.crossref.contains("127.0.0.1"), "{}", config.sources.endpoints.crossref);
    }
}

#[tokio::test]
async fn health_warns_of_the_test_switches_locally_and_from_elsewhere() {
    let health = |url: &str| http::Request::get(url).body(Vec::new()).unwrap();
    let app = app();
    let local = from(&app, health("http://127.0.0.1/health"), "http://127.0.0.1:8787/health", "127.0.0.1").await;
    let warnings = local.body["warnings"].to_string();
    assert!(warnings.contains("ENABLE_TEST_FIXTURES=1 is set"), "{}", local.text);
    assert!(warnings.contains("this request is local"), "{}", local.text);

    let remote =
        from(&app, health("https://zotero.example/health"), "https://zotero.example/health", "198.51.100.4").await;
    let warnings = remote.body["warnings"].to_string();
    assert!(warnings.contains("Remove ENABLE_TEST_FIXTURES from any deployment"), "{}", remote.text);
    assert!(warnings.contains("this request is not local"), "{}", remote.text);

    let production = app_with(&[("ENABLE_TEST_FIXTURES", "0")]);
    let quiet =
        from(&production, health("https://zotero.example/health"), "https://zotero.example/health", "198.51.100.4")
            .await;
    assert_eq!(quiet.body.get("warnings"), None::<&Value>, "{}", quiet.text);
}
