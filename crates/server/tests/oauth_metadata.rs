//! Discovery: authorization server and protected resource metadata, CORS, and the challenge on `/mcp`.

mod oauth_support;

use oauth_support::*;

#[tokio::test]
async fn authorization_server_metadata_derives_from_the_origin_and_advertises_what_clients_check() {
    let h = Harness::new();
    let reply = h.get("/.well-known/oauth-authorization-server").await;
    assert_eq!(reply.status, 200);
    let m = &reply.json;
    assert_eq!(m["issuer"], ORIGIN);
    assert_eq!(m["authorization_endpoint"], format!("{ORIGIN}/authorize"));
    assert_eq!(m["token_endpoint"], format!("{ORIGIN}/oauth/token"));
    assert_eq!(m["registration_endpoint"], format!("{ORIGIN}/oauth/register"));
    assert_eq!(m["revocation_endpoint"], format!("{ORIGIN}/oauth/token"));
    assert_eq!(m["scopes_supported"], serde_json::json!(["zotero:read", "zotero:write"]));
    assert_eq!(m["code_challenge_methods_supported"], serde_json::json!(["S256"]));
    assert_eq!(m["authorization_response_iss_parameter_supported"], true);
    assert_eq!(m["client_id_metadata_document_supported"], true);
    assert_eq!(m["response_types_supported"], serde_json::json!(["code"]));
    assert_eq!(m["grant_types_supported"], serde_json::json!(["authorization_code", "refresh_token"]));
    // Claude only uses metadata documents when `none` is listed.
    assert!(m["token_endpoint_auth_methods_supported"].as_array().unwrap().contains(&"none".into()));
}

#[tokio::test]
async fn protected_resource_metadata_names_the_resource_at_root_and_for_mcp() {
    let h = Harness::new();
    let root = h.get("/.well-known/oauth-protected-resource").await;
    assert_eq!(root.status, 200);
    assert_eq!(root.json["resource"], ORIGIN);
    assert_eq!(root.json["authorization_servers"], serde_json::json!([ORIGIN]));
    assert_eq!(root.json["bearer_methods_supported"], serde_json::json!(["header"]));
    assert!(root.json.get("scopes_supported").is_none(), "no scopes: clients then send none and get both offered");
    let mcp = h.get("/.well-known/oauth-protected-resource/mcp").await;
    assert_eq!(mcp.json["resource"], MCP_URL);
    let other_host = h
        .send(
            http::Request::get("http://127.0.0.1:8787/.well-known/oauth-protected-resource/mcp")
                .body(Vec::new())
                .unwrap(),
        )
        .await;
    assert_eq!(other_host.json["resource"], "http://127.0.0.1:8787/mcp");
}

#[tokio::test]
async fn oauth_routes_reflect_origin_and_answer_preflights() {
    let h = Harness::new();
    let request = http::Request::options(format!("{ORIGIN}/oauth/token"))
        .header("origin", "https://inspector.example")
        .header("access-control-request-method", "POST")
        .body(Vec::new())
        .unwrap();
    let reply = h.send(request).await;
    assert_eq!(reply.status, 204);
    assert_eq!(reply.header("access-control-allow-origin"), "https://inspector.example");
    assert!(reply.header("access-control-allow-headers").contains("Authorization"));
    let get = http::Request::get(format!("{ORIGIN}/.well-known/oauth-authorization-server"))
        .header("origin", "https://inspector.example")
        .body(Vec::new())
        .unwrap();
    let reply = h.send(get).await;
    assert_eq!(reply.header("access-control-allow-origin"), "https://inspector.example");
    assert!(reply.header("access-control-expose-headers").contains("WWW-Authenticate"));
    // Without an Origin there is nothing to reflect.
    assert_eq!(h.get("/.well-known/oauth-authorization-server").await.header("access-control-allow-origin"), "");
}

#[tokio::test]
async fn mcp_without_a_token_is_challenged_with_the_resource_metadata_url() {
    let h = Harness::new();
    let request = http::Request::post(MCP_URL)
        .header("content-type", "application/json")
        .header("origin", "https://claude.ai")
        .body(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#.to_vec())
        .unwrap();
    let reply = h.send(request).await;
    assert_eq!(reply.status, 401);
    assert!(reply.text.is_empty());
    assert_eq!(
        reply.header("www-authenticate"),
        format!("Bearer realm=\"OAuth\", resource_metadata=\"{ORIGIN}/.well-known/oauth-protected-resource/mcp\"")
    );
    assert_eq!(reply.header("cache-control"), "no-store");
    // A browser client must be able to read the challenge.
    assert!(reply.header("access-control-expose-headers").contains("WWW-Authenticate"));
}

/// An HTTP client that cannot promise public-only fetches (the native binary's reqwest).
struct AnyAddress;

#[async_trait::async_trait(?Send)]
impl zotero_mcp_server::platform::HttpClient for AnyAddress {
    async fn send(
        &self,
        request: zotero_mcp_server::platform::HttpRequest,
    ) -> Result<zotero_mcp_server::platform::HttpResponse, zotero_mcp_server::platform::HttpError> {
        Err(zotero_mcp_server::platform::HttpError::Transport {
            url: request.uri().to_string(),
            reason: "not in this test".into(),
        })
    }
}

#[tokio::test]
async fn metadata_documents_are_offered_only_over_public_only_http() {
    let h = Harness::with(&[], std::rc::Rc::new(AnyAddress));
    let reply = h.get("/.well-known/oauth-authorization-server").await;
    assert_eq!(reply.json["client_id_metadata_document_supported"], false);
}
