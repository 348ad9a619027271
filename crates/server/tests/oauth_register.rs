//! Dynamic Client Registration (RFC 7591): validation, defaults, secrets, lifetime.

mod oauth_support;

use oauth_support::*;
use serde_json::json;
use zotero_mcp_core::platform::{KvStore, KvWrite};

#[tokio::test]
async fn public_clients_get_no_secret_and_confidential_ones_a_hashed_one() {
    let h = Harness::new();
    let public = h
        .register(json!({ "client_name": "CLI", "redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none" }))
        .await;
    assert_eq!(public.status, 201, "{}", public.text);
    assert_eq!(public.header("cache-control"), "no-store");
    assert_eq!(public.json["token_endpoint_auth_method"], "none");
    assert!(public.json.get("client_secret").is_none());
    assert_eq!(public.json["client_id"].as_str().unwrap().len(), 16);

    let confidential = h.register(json!({ "redirect_uris": [REDIRECT] })).await;
    assert_eq!(confidential.status, 201);
    assert_eq!(confidential.json["token_endpoint_auth_method"], "client_secret_basic", "RFC 7591 default");
    assert_eq!(confidential.json["grant_types"], json!(["authorization_code"]));
    let secret = confidential.json["client_secret"].as_str().unwrap();
    assert_eq!(secret.len(), 32);
    let id = confidential.json["client_id"].as_str().unwrap();
    let stored = h.oauth_kv.get(&format!("client:{id}")).await.unwrap().unwrap();
    assert!(!stored.contains(secret), "the secret is stored hashed only");
    assert!(stored.contains(&zotero_mcp_server::auth::crypto::sha256_hex(secret)));
}

#[tokio::test]
async fn registered_clients_expire_after_ninety_days() {
    let h = Harness::new();
    let id = h.public_client(REDIRECT).await;
    let listed = h.oauth_kv.list("client:", None, 10).await.unwrap();
    let now = NOW_MS / 1000;
    assert_eq!(listed.keys[0].name, format!("client:{id}"));
    assert_eq!(listed.keys[0].expiration, Some(now + 90 * 24 * 3600));
}

#[tokio::test]
async fn registration_refuses_bad_metadata_with_a_reason() {
    let h = Harness::new();
    let cases = [
        (json!({ "client_name": "x" }), "redirect_uris"),
        (json!({ "redirect_uris": [] }), "redirect_uris"),
        (json!({ "redirect_uris": "https://x/cb" }), "redirect_uris"),
        (json!({ "redirect_uris": ["javascript:alert(1)"] }), "redirect URI"),
        (json!({ "redirect_uris": [REDIRECT], "client_name": 7 }), "client_name"),
        (json!({ "redirect_uris": [REDIRECT], "logo_uri": "javascript:x" }), "logo_uri"),
        (json!({ "redirect_uris": [REDIRECT], "grant_types": ["client_credentials"] }), "grant_type"),
        (json!({ "redirect_uris": [REDIRECT], "response_types": ["token"] }), "response_type"),
        (json!({ "redirect_uris": [REDIRECT], "grant_types": ["refresh_token"] }), "registered together"),
        (
            json!({ "redirect_uris": [REDIRECT], "token_endpoint_auth_method": "private_key_jwt" }),
            "authentication method",
        ),
        (json!(["not", "an", "object"]), "JSON object"),
    ];
    for (metadata, mentions) in cases {
        let reply = h.register(metadata.clone()).await;
        assert_eq!(reply.status, 400, "{metadata}: {}", reply.text);
        assert_eq!(reply.error(), "invalid_client_metadata", "{metadata}");
        assert!(reply.json["error_description"].as_str().unwrap().contains(mentions), "{metadata}: {}", reply.text);
    }
    assert!(h.oauth_kv.keys().is_empty(), "nothing was stored");
}

#[tokio::test]
async fn registration_limits_size_method_and_syntax() {
    let h = Harness::new();
    let huge = format!(r#"{{"redirect_uris":["{REDIRECT}"],"client_name":"{}"}}"#, "x".repeat(1024 * 1024));
    let request = http::Request::post(format!("{ORIGIN}/oauth/register"))
        .header("content-type", "application/json")
        .body(huge.into_bytes())
        .unwrap();
    assert_eq!(h.send(request).await.status, 413);
    let bad_json = http::Request::post(format!("{ORIGIN}/oauth/register")).body(b"{not json".to_vec()).unwrap();
    let reply = h.send(bad_json).await;
    assert_eq!((reply.status, reply.error()), (400, "invalid_request"));
    assert_eq!(h.get("/oauth/register").await.status, 405);
}

#[tokio::test]
async fn the_redirect_uris_real_clients_use_are_accepted() {
    let h = Harness::new();
    let accepted = [
        "https://claude.ai/api/mcp/auth_callback",
        "https://claude.com/api/mcp/auth_callback",
        "https://chatgpt.com/connector_platform_oauth_redirect",
        "https://vscode.dev/redirect",
        // Claude Code, `zotero-mcp get-token`, the e2e and SDK tests, VS Code: loopback http, any port.
        "http://localhost/callback",
        "http://localhost:53682/callback",
        "http://127.0.0.1/get-token-callback",
        "http://127.0.0.1:33418/",
        "http://[::1]:8080/callback",
        // Private-use schemes: reverse-domain (RFC 8252 §7.1) and the named ones of Cursor and VS Code extensions.
        "com.example.app:/oauth2redirect",
        "cursor://anysphere.cursor-mcp/oauth/callback",
        "vscode://saoudrizwan.claude-dev/mcp-auth",
    ];
    for uri in accepted {
        let reply = h.register(json!({ "redirect_uris": [uri], "token_endpoint_auth_method": "none" })).await;
        assert_eq!(reply.status, 201, "{uri}: {}", reply.text);
    }
}

#[tokio::test]
async fn redirect_uris_outside_the_allow_list_are_refused_with_what_to_use() {
    let h = Harness::new();
    let refused = [
        ("http://client.example/callback", "use https:"),
        ("http://192.168.1.20:8080/callback", "not loopback"),
        ("myapp://callback", "reverse-domain form such as com.example.app:/callback"),
        ("ftp://client.example/cb", "scheme ftp:"),
        ("data:text/html,<script>alert(1)</script>", "scheme data:"),
        ("file:///etc/passwd", "scheme file:"),
        ("vbscript:msgbox", "scheme vbscript:"),
        ("https://client.example/callback#frag", "fragment"),
        ("https://client.example/callback#", "fragment"),
        ("https://client.example/call back", "whitespace"),
        ("callback", "absolute URI"),
    ];
    for (uri, says) in refused {
        let reply = h.register(json!({ "redirect_uris": [REDIRECT, uri], "token_endpoint_auth_method": "none" })).await;
        assert_eq!((reply.status, reply.error()), (400, "invalid_client_metadata"), "{uri}: {}", reply.text);
        let description = reply.json["error_description"].as_str().unwrap();
        assert!(description.contains("Invalid redirect URI") && description.contains(says), "{uri}: {description}");
    }
    assert!(h.oauth_kv.keys().is_empty(), "nothing was stored");
}

#[tokio::test]
async fn a_client_stored_under_the_old_rules_cannot_send_approval_to_a_refused_uri() {
    let h = Harness::new();
    // Registered before the allow-list (the TypeScript provider and earlier versions accepted any non-dangerous
    // scheme): plain http to another host.
    let record = |id: &str, redirect: &str| {
        json!({
            "clientId": id,
            "redirectUris": [redirect],
            "clientName": "Old",
            "tokenEndpointAuthMethod": "none",
            "grantTypes": ["authorization_code"],
            "responseTypes": ["code"],
        })
        .to_string()
    };
    let plain_http = "http://client.example/callback";
    h.oauth_kv.put("client:OldClient0000000", &record("OldClient0000000", plain_http), KvWrite::Forever).await.unwrap();
    let reply = h.get(&h.authorize_path("OldClient0000000", plain_http, &[])).await;
    assert_eq!(reply.status, 400, "{}", reply.text);
    assert_eq!(reply.header("location"), "", "the refusal is a page, never a redirect");
    // The same record with an https callback is served: only the redirect URI was the problem.
    h.oauth_kv.put("client:OldClient0000001", &record("OldClient0000001", REDIRECT), KvWrite::Forever).await.unwrap();
    let reply = h.get(&h.authorize_path("OldClient0000001", REDIRECT, &[])).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
}
