//! The three ways `/mcp` learns who is calling (`McpAccess`): the OAuth server's tokens (the Worker, and a native
//! server with AUTH_PASSWORD), one fixed token (a native server with ZOTERO_MCP_TOKEN), and a trusted grant (a
//! native server on loopback or stdio). The OAuth tests cover the first; these the other two.

mod common;

use common::*;
use serde_json::json;
use zotero_mcp_server::app::{App, McpAccess};
use zotero_mcp_server::auth::crypto::sha256_hex;
use zotero_mcp_server::grant::Grant;

fn with_access(access: McpAccess) -> App {
    App { access, ..app() }
}

fn call_write(token: Option<&str>) -> http::Request<Vec<u8>> {
    let body = json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": { "name": "fixture_write", "arguments": { "note": "x" } },
    });
    let auth = token.map(|t| format!("Bearer {t}")).unwrap_or_default();
    post(&body, &[("authorization", auth.as_str())])
}

#[tokio::test]
async fn a_static_token_server_takes_that_token_and_nothing_else() {
    let app = with_access(McpAccess::StaticToken {
        token_sha256: sha256_hex("the-one-token"),
        grant: Grant::read_write("owner"),
    });
    let ok = send(&app, call_write(Some("the-one-token"))).await;
    assert_eq!(ok.status, 200, "{}", ok.text);
    assert_eq!(ok.result()["structuredContent"]["written"], true, "the configured grant writes: {}", ok.text);
    for wrong in [Some("the-one-toke"), Some("not-it"), Some(TEST_TOKEN), None] {
        let refused = send(&app, call_write(wrong)).await;
        assert_eq!(refused.status, 401, "{wrong:?}: {}", refused.text);
        assert!(refused.headers["www-authenticate"].to_str().unwrap().starts_with("Bearer"));
        assert!(refused.text.contains("ZOTERO_MCP_TOKEN"), "says what to send: {}", refused.text);
    }
}

#[tokio::test]
async fn a_trusted_server_needs_no_token_and_keeps_its_grant() {
    let read_only = with_access(McpAccess::Trusted(Grant::read_only("owner")));
    let refused = send(&read_only, call_write(None)).await;
    assert_eq!(refused.status, 200);
    assert_eq!(refused.result()["isError"], true, "a read-only grant still cannot write: {}", refused.text);
    let writer = with_access(McpAccess::Trusted(Grant::read_write("owner")));
    assert_eq!(send(&writer, call_write(None)).await.result()["structuredContent"]["written"], true);
}

#[tokio::test]
async fn only_a_server_that_issues_tokens_serves_the_oauth_routes() {
    let trusted = with_access(McpAccess::Trusted(Grant::read_only("owner")));
    for path in ["/.well-known/oauth-authorization-server", "/oauth/register", "/authorize"] {
        let request = http::Request::get(format!("https://zotero.example{path}")).body(Vec::new()).unwrap();
        assert_eq!(send(&trusted, request).await.status, 404, "{path}");
    }
    let health = http::Request::get("https://zotero.example/health").body(Vec::new()).unwrap();
    let reply = send(&trusted, health).await;
    let names: Vec<&str> = reply.body["checks"].as_array().unwrap().iter().filter_map(|c| c["name"].as_str()).collect();
    assert_eq!(names, ["zotero_api_key", "zotero_storage"], "no password is needed without a login page");
}
