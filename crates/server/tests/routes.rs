//! The routes besides /mcp: the landing page, /health, and everything else.

mod common;

use common::*;

fn get(path: &str, host: &str) -> http::Request<Vec<u8>> {
    http::Request::get(format!("https://{host}{path}")).body(Vec::new()).unwrap()
}

#[tokio::test]
async fn landing_page_names_the_mcp_url_and_how_to_connect() {
    let reply = send(&app(), get("/", "zotero.example")).await;
    assert_eq!(reply.status, 200);
    assert!(reply.headers["content-type"].to_str().unwrap().starts_with("text/html"));
    assert!(reply.text.contains("https://zotero.example/mcp"));
    for client in ["Claude Code", "ChatGPT", "claude mcp add"] {
        assert!(reply.text.contains(client), "{client}");
    }
    assert!(reply.headers["content-security-policy"].to_str().unwrap().contains("default-src 'none'"));
}

#[tokio::test]
async fn landing_page_escapes_the_host() {
    let request = http::Request::get("/").header("host", "x\"><script>alert(1)</script>").body(Vec::new()).unwrap();
    let reply = send(&app(), request).await;
    assert!(!reply.text.contains("<script>alert"), "the Host header is reflected unescaped");
}

#[tokio::test]
async fn health_is_ok_when_configured_and_never_echoes_secrets() {
    let reply = send(&app_with(&[]), get("/health", "z.example")).await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.headers["cache-control"], "no-store");
    assert_eq!(reply.body["status"], "ok");
    let checks = reply.body["checks"].as_array().unwrap();
    let check = |name: &str| checks.iter().find(|c| c["name"] == name).unwrap().clone();
    assert_eq!(check("zotero_api_key")["ok"], true);
    assert_eq!(check("auth_password")["ok"], true);
    // Only features that exist are reported (no AI Search check claims anything yet); files (here on Zotero
    // Storage, as no WEBDAV_URL is set, and unreachable from this test) are optional, so a failing check does
    // not make the server unhealthy.
    let names: Vec<&str> = checks.iter().filter_map(|c| c["name"].as_str()).collect();
    assert_eq!(names, ["zotero_api_key", "auth_password", "zotero_storage"]);
    assert_eq!(check("zotero_storage")["required"], false);
    for secret in ["test-key", "test-password"] {
        assert!(!reply.text.contains(secret), "{secret} leaked");
    }
}

#[tokio::test]
async fn health_is_503_with_a_fix_when_a_required_secret_is_missing() {
    let reply = send(&app_with(&[("ZOTERO_API_KEY", "")]), get("/health", "z.example")).await;
    assert_eq!(reply.status, 503);
    assert_eq!(reply.body["status"], "misconfigured");
    let key = reply.body["checks"].as_array().unwrap().iter().find(|c| c["name"] == "zotero_api_key").unwrap().clone();
    assert_eq!(key["ok"], false);
    // How to set it is the shell's wording (a native server's here; tests/hardening_server.rs has the Worker's).
    assert!(key["fix"].as_str().unwrap().contains("set ZOTERO_API_KEY in the environment"), "{key}");
}

#[tokio::test]
async fn unknown_paths_are_404_and_pages_refuse_posts() {
    assert_eq!(send(&app(), get("/nope", "z.example")).await.status, 404);
    assert_eq!(send(&app(), get("/mcp/extra", "z.example")).await.status, 404);
    let post = http::Request::post("https://z.example/health").body(Vec::new()).unwrap();
    assert_eq!(send(&app(), post).await.status, 405);
}
