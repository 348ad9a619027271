//! Resource indicators (RFC 8707) name this server or nothing: a token is bound to its resource, so one for
//! another server would be useless at `/mcp` and would mislead the person who approved it. `/authorize` refuses
//! such a request with a page before consent; the token endpoint refuses to bind a token to one.

mod oauth_support;

use oauth_support::*;

const FOREIGN: [&str; 6] = [
    "https://evil.example/mcp",
    "http://zotero.example/mcp",
    "https://zotero.example:8443/mcp",
    "https://zotero.example/mcp/",
    "https://zotero.example/sse",
    "https://zotero.example.evil.example/mcp",
];

fn assert_names_the_expected_resource(reply: &Reply, sent: &str) {
    assert_eq!(reply.status, 400, "{sent}: {}", reply.text);
    assert_eq!(reply.header("location"), "", "{sent}: errors before consent are pages, never redirects");
    assert!(reply.text.contains("OAuth error: invalid_target"), "{sent}: {}", reply.text);
    assert!(reply.text.contains(MCP_URL), "{sent}: the page names the expected URL: {}", reply.text);
    assert!(!reply.text.contains("name=\"password\""), "{sent}: no consent form");
    assert_eq!(reply.header("cache-control"), "no-store");
}

#[tokio::test]
async fn a_foreign_resource_gets_a_page_naming_this_servers_resource_and_no_grant() {
    let h = Harness::new();
    let client = h.public_client(REDIRECT).await;
    for foreign in FOREIGN {
        let path = h.authorize_path(&client, REDIRECT, &[("resource", foreign)]);
        assert_names_the_expected_resource(&h.get(&path).await, foreign);
        // Submitting the form with the right password changes nothing: no code is issued.
        let posted = h.approve(&path, &[("password", PASSWORD), ("scope", "zotero:read")]).await;
        assert_names_the_expected_resource(&posted, foreign);
    }
    assert!(h.grant_keys().await.is_empty());
}

#[tokio::test]
async fn one_foreign_value_among_several_is_enough_to_refuse() {
    let h = Harness::new();
    let client = h.public_client(REDIRECT).await;
    let path = format!("{}&resource={}", h.authorize_path(&client, REDIRECT, &[]), "https%3A%2F%2Fevil.example%2Fmcp");
    assert_names_the_expected_resource(&h.get(&path).await, "two resources");
}

#[tokio::test]
async fn the_page_does_not_echo_the_foreign_value() {
    let h = Harness::new();
    let client = h.public_client(REDIRECT).await;
    let sent = "https://evil.example/Your-account-is-locked-call-555";
    let reply = h.get(&h.authorize_path(&client, REDIRECT, &[("resource", sent)])).await;
    assert_names_the_expected_resource(&reply, sent);
    assert!(!reply.text.contains("Your-account-is-locked"), "{}", reply.text);
}

#[tokio::test]
async fn this_servers_resource_in_any_spelling_the_audience_check_accepts_still_works() {
    let h = Harness::new();
    let client = h.public_client(REDIRECT).await;
    for own in [MCP_URL, ORIGIN, "https://zotero.example/", "https://ZOTERO.example:443/mcp"] {
        let path = h.authorize_path(&client, REDIRECT, &[("resource", own)]);
        let page = h.get(&path).await;
        assert_eq!(page.status, 200, "{own}: {}", page.text);
        let code = h.code(&path, &["zotero:read"]).await;
        // Without `resource` the token inherits the grant's.
        let tokens = h
            .token(&[
                ("grant_type", "authorization_code"),
                ("code", &code),
                ("client_id", &client),
                ("code_verifier", VERIFIER),
            ])
            .await;
        assert_eq!(tokens.status, 200, "{own}: {}", tokens.text);
        assert_eq!(tokens.json["resource"], own);
        assert!(h.token_works(tokens.json["access_token"].as_str().unwrap()).await, "{own}");
    }
    // And without any resource at all, as before.
    let path = h.authorize_path(&client, REDIRECT, &[("resource", "")]);
    assert_eq!(h.get(&path).await.status, 200);
}

#[tokio::test]
async fn the_expected_resource_is_that_of_the_host_the_request_came_to() {
    // The native server answers on whatever address it is reached at; the resource follows the request.
    let h = Harness::new();
    let client = h.public_client("http://127.0.0.1:9999/callback").await;
    let path =
        h.authorize_path(&client, "http://127.0.0.1:9999/callback", &[("resource", "http://127.0.0.1:8787/mcp")]);
    let get = |path: String| http::Request::get(format!("http://127.0.0.1:8787{path}")).body(Vec::new()).unwrap();
    assert_eq!(h.send(get(path)).await.status, 200);
    let path =
        h.authorize_path(&client, "http://127.0.0.1:9999/callback", &[("resource", "http://localhost:8787/mcp")]);
    let refused = h.send(get(path)).await;
    assert_eq!(refused.status, 400, "{}", refused.text);
    assert!(refused.text.contains("http://127.0.0.1:8787/mcp"), "{}", refused.text);
}

/// Exchanges `code` as the public `client`, with `resource` when given.
async fn exchange(h: &Harness, client: &str, code: &str, resource: Option<&str>) -> Reply {
    let mut form =
        vec![("grant_type", "authorization_code"), ("code", code), ("client_id", client), ("code_verifier", VERIFIER)];
    if let Some(resource) = resource {
        form.push(("resource", resource));
    }
    h.token(&form).await
}

#[tokio::test]
async fn the_token_endpoint_binds_tokens_only_to_what_was_granted_and_to_this_server() {
    let h = Harness::new();
    let client = h.public_client(REDIRECT).await;
    // A grant bound to /mcp: another resource is refused, and refusing it does not burn the code.
    let code = h.code(&h.authorize_path(&client, REDIRECT, &[]), &["zotero:read"]).await;
    let foreign = exchange(&h, &client, &code, Some("https://evil.example/mcp")).await;
    assert_eq!((foreign.status, foreign.error()), (400, "invalid_target"), "{}", foreign.text);
    let bound = exchange(&h, &client, &code, Some(MCP_URL)).await;
    assert_eq!(bound.status, 200, "{}", bound.text);

    // A grant bound to nothing (the client sent no resource): still only this server.
    let code = h.code(&h.authorize_path(&client, REDIRECT, &[("resource", "")]), &["zotero:read"]).await;
    let foreign = exchange(&h, &client, &code, Some("https://evil.example/mcp")).await;
    assert_eq!((foreign.status, foreign.error()), (400, "invalid_target"), "{}", foreign.text);
    assert!(foreign.json["error_description"].as_str().unwrap().contains(MCP_URL), "{}", foreign.text);
    let own = exchange(&h, &client, &code, Some(MCP_URL)).await;
    assert_eq!(own.status, 200, "{}", own.text);
    assert_eq!(own.json["resource"], MCP_URL);
    assert!(h.token_works(own.json["access_token"].as_str().unwrap()).await);

    // The same at refresh.
    let refresh = own.json["refresh_token"].as_str().unwrap();
    let refused = h
        .token(&[
            ("grant_type", "refresh_token"),
            ("refresh_token", refresh),
            ("client_id", &client),
            ("resource", "https://evil.example/mcp"),
        ])
        .await;
    assert_eq!((refused.status, refused.error()), (400, "invalid_target"), "{}", refused.text);
    let refreshed = h
        .token(&[
            ("grant_type", "refresh_token"),
            ("refresh_token", refresh),
            ("client_id", &client),
            ("resource", MCP_URL),
        ])
        .await;
    assert_eq!(refreshed.status, 200, "the refused attempt did not rotate the token: {}", refreshed.text);
}
