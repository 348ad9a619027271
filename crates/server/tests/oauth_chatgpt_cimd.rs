//! ChatGPT connecting through its Client ID Metadata Document, replayed request by request: the unauthenticated
//! probe and its 401, the protected-resource and authorization-server metadata, the consent page for the
//! document's URL as client id, the approval, the code exchange with the path-bearing `resource` it echoes, a
//! tool list with the token, and a refresh. The Worker's e2e replay (tests/e2e/chatgpt.test.mjs) registers
//! instead, because the Worker cannot fetch chatgpt.com there; here the outbound fetch serves the document.
//! Then the ways ChatGPT could trip: a callback its document does not list, a document that names another
//! client id, and a code redeemed under another client id.

mod oauth_support;

use std::rc::Rc;

use oauth_support::*;
use serde_json::{json, Value};
use zotero_mcp_core::testing::StubHttp;

/// The client id: the URL ChatGPT publishes its metadata at (an id of the observed `/oauth/<id>/client.json`
/// shape).
const CHATGPT: &str = "https://chatgpt.com/oauth/7d1f4c2ab9e05a63/client.json";
/// Another connector's document, which the same stand-in also serves.
const OTHER_CHATGPT: &str = "https://chatgpt.com/oauth/0c9e8b7a6d5f4e32/client.json";
const CHATGPT_REDIRECT: &str = "https://chatgpt.com/connector_platform_oauth_redirect";
const STATE: &str = "chatgpt-state-3b2c";

/// The document as ChatGPT publishes it: its own URL as client id, one callback, a public client.
fn chatgpt_document(url: &str) -> Value {
    json!({
        "client_id": url,
        "client_name": "ChatGPT",
        "redirect_uris": [CHATGPT_REDIRECT],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
    })
}

/// chatgpt.com as the platform's outbound fetch reaches it: `documents` answered by URL, anything else a 404.
fn chatgpt_com(documents: Vec<(&'static str, Value)>) -> Rc<StubHttp> {
    StubHttp::new(move |request| {
        let url = request.uri().to_string();
        let response = match documents.iter().find(|(at, _)| *at == url) {
            Some((_, document)) => http::Response::builder()
                .status(200)
                .header("content-type", "application/json")
                .header("cache-control", "public, max-age=300")
                .body(document.to_string().into_bytes()),
            None => http::Response::builder().status(404).body(b"not found".to_vec()),
        };
        Ok(response.unwrap())
    })
}

/// `/authorize` as ChatGPT opens it: PKCE S256, its state, the `/mcp` URL as `resource`, no `scope`.
fn authorize_path(h: &Harness, client_id: &str, redirect_uri: &str) -> String {
    h.authorize_path(client_id, redirect_uri, &[("state", STATE)])
}

/// A 2025-era JSON-RPC request to `/mcp` as ChatGPT's connector sends it, with a bearer token when given.
async fn mcp(h: &Harness, token: Option<&str>, method: &str, params: Value) -> Reply {
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params });
    let mut request = http::Request::post(MCP_URL)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    if let Some(token) = token {
        request = request.header("authorization", format!("Bearer {token}"));
    }
    h.send(request.body(body.to_string().into_bytes()).unwrap()).await
}

fn initialize_params() -> Value {
    json!({ "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "openai-mcp", "version": "1.0.0" } })
}

/// The code exchange as ChatGPT sends it.
async fn exchange(h: &Harness, client_id: &str, code: &str) -> Reply {
    h.token(&[
        ("grant_type", "authorization_code"),
        ("code", code),
        ("client_id", client_id),
        ("code_verifier", VERIFIER),
        ("redirect_uri", CHATGPT_REDIRECT),
        ("resource", MCP_URL),
    ])
    .await
}

#[tokio::test]
async fn chatgpt_connects_with_its_metadata_document_and_keeps_its_token_fresh() {
    let http = chatgpt_com(vec![(CHATGPT, chatgpt_document(CHATGPT))]);
    let h = Harness::with(&[], http.clone());

    // The probe: an initialize without a token, answered 401 with the protected-resource metadata URL.
    let probe = mcp(&h, None, "initialize", initialize_params()).await;
    assert_eq!(probe.status, 401, "{}", probe.text);
    let challenge = probe.header("www-authenticate");
    let prm_url = challenge
        .split("resource_metadata=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap_or_else(|| panic!("no resource_metadata in {challenge:?}"));
    assert_eq!(prm_url, format!("{ORIGIN}/.well-known/oauth-protected-resource/mcp"));

    let prm = h.get(prm_url.strip_prefix(ORIGIN).unwrap()).await;
    assert_eq!(prm.status, 200, "{}", prm.text);
    assert_eq!(prm.json["resource"], MCP_URL, "the resource ChatGPT echoes is the /mcp URL, path and all");
    let issuer = prm.json["authorization_servers"][0].as_str().expect("an authorization server");
    assert_eq!(issuer, ORIGIN);

    let as_metadata = h.get("/.well-known/oauth-authorization-server").await;
    assert_eq!(as_metadata.status, 200, "{}", as_metadata.text);
    let m = &as_metadata.json;
    assert_eq!(m["issuer"], issuer);
    assert_eq!(m["client_id_metadata_document_supported"], true);
    assert!(m["code_challenge_methods_supported"].as_array().unwrap().contains(&json!("S256")));
    assert!(m["token_endpoint_auth_methods_supported"].as_array().unwrap().contains(&json!("none")));
    assert_eq!(m["authorization_endpoint"], format!("{ORIGIN}/authorize"));
    assert_eq!(m["token_endpoint"], format!("{ORIGIN}/oauth/token"));
    assert!(http.requests().is_empty(), "discovery fetches nothing");

    // The consent page, for a client id that is the document's URL: it names ChatGPT and where approval goes.
    let path = authorize_path(&h, CHATGPT, CHATGPT_REDIRECT);
    let page = h.get(&path).await;
    assert_eq!(page.status, 200, "{}", page.text);
    assert!(page.text.contains("<strong>ChatGPT</strong>"), "the document's client_name is shown");
    assert!(page.text.contains(r#"<span class="host">chatgpt.com</span>"#), "the redirect host is shown");
    assert!(page.text.contains(CHATGPT), "the client id (the document's URL) is shown");
    assert!(!page.text.contains("class=\"warn\""), "chatgpt.com is no program on this machine");
    for scope in ["zotero:read", "zotero:write"] {
        assert!(page.text.contains(&format!("value=\"{scope}\"")), "no scope asked, so {scope} is offered");
    }
    let fetched = http.requests();
    assert_eq!(fetched[0].uri().to_string(), CHATGPT);
    assert_eq!(fetched[0].headers()["accept"], "application/json");

    // Approval (read only ticked): back to ChatGPT's callback with the code, its state and our issuer.
    let approved = h.approve(&path, &[("password", PASSWORD), ("scope", "zotero:read")]).await;
    assert_eq!(approved.status, 303, "{}", approved.text);
    let location = approved.header("location");
    assert!(location.starts_with(&format!("{CHATGPT_REDIRECT}?")), "{location}");
    let params = approved.location_params();
    assert_eq!(params["state"], STATE);
    assert_eq!(params["iss"], ORIGIN);
    let code = params["code"].clone();

    // The exchange with the same client id, the verifier, the callback and the resource.
    let tokens = exchange(&h, CHATGPT, &code).await;
    assert_eq!(tokens.status, 200, "{}", tokens.text);
    assert_eq!(tokens.header("cache-control"), "no-store");
    assert_eq!(tokens.json["token_type"].as_str().unwrap().to_lowercase(), "bearer");
    assert_eq!(tokens.json["scope"], "zotero:read");
    assert_eq!(tokens.json["resource"], MCP_URL);
    let access = tokens.json["access_token"].as_str().expect("an access token").to_owned();
    let refresh = tokens.json["refresh_token"].as_str().expect("a refresh token").to_owned();
    assert!(
        h.oauth_kv.keys().iter().all(|k| !k.starts_with("client:")),
        "ChatGPT's document is never stored as a registration"
    );

    // The token opens /mcp: initialize, then the tool list deep research needs.
    let init = mcp(&h, Some(&access), "initialize", initialize_params()).await;
    assert_eq!(init.status, 200, "{}", init.text);
    assert_eq!(init.json["result"]["protocolVersion"], "2025-06-18");
    let list = mcp(&h, Some(&access), "tools/list", json!({})).await;
    assert_eq!(list.status, 200, "{}", list.text);
    let tools = list.json["result"]["tools"].as_array().expect("a tool list");
    for name in ["search", "fetch"] {
        let tool = tools.iter().find(|t| t["name"] == name).unwrap_or_else(|| panic!("{name} is listed"));
        assert_eq!(tool["annotations"]["readOnlyHint"], true, "{name}");
    }

    // The refresh, echoing the resource as ChatGPT does throughout: a new pair, the old refresh token retired.
    let refreshed = h
        .token(&[
            ("grant_type", "refresh_token"),
            ("refresh_token", &refresh),
            ("client_id", CHATGPT),
            ("resource", MCP_URL),
        ])
        .await;
    assert_eq!(refreshed.status, 200, "{}", refreshed.text);
    assert_eq!(refreshed.json["resource"], MCP_URL);
    assert_eq!(refreshed.json["scope"], "zotero:read");
    let new_access = refreshed.json["access_token"].as_str().expect("a new access token");
    let new_refresh = refreshed.json["refresh_token"].as_str().expect("a rotated refresh token");
    assert_ne!(new_refresh, refresh);
    assert!(h.token_works(new_access).await, "the refreshed access token opens /mcp");
    let again = h
        .token(&[
            ("grant_type", "refresh_token"),
            ("refresh_token", new_refresh),
            ("client_id", CHATGPT),
            ("resource", MCP_URL),
        ])
        .await;
    assert_eq!(again.status, 200, "the rotated refresh token refreshes in turn: {}", again.text);

    assert!(http.requests().iter().all(|r| *r.uri() == CHATGPT), "the only outbound fetch is ChatGPT's document");
}

#[tokio::test]
async fn a_callback_the_document_does_not_list_is_refused_before_consent() {
    let http = chatgpt_com(vec![(CHATGPT, chatgpt_document(CHATGPT))]);
    let h = Harness::with(&[], http);
    // ChatGPT's other callback shape, absent from this document, and a stranger's.
    for redirect in ["https://chatgpt.com/connector/oauth/cb_5e1a9d", "https://evil.example/callback"] {
        let path = authorize_path(&h, CHATGPT, redirect);
        let page = h.get(&path).await;
        assert_eq!(page.status, 400, "{redirect}: {}", page.text);
        assert_eq!(page.header("location"), "", "{redirect}: never redirected");
        assert!(page.text.contains("Invalid redirect URI"), "{redirect}: {}", page.text);
        assert!(!page.text.contains("name=\"password\""), "{redirect}: no login form");

        // Posting the form anyway, with the right password, changes nothing.
        let posted = h.approve(&path, &[("password", PASSWORD), ("scope", "zotero:read")]).await;
        assert_eq!(posted.status, 400, "{redirect}: {}", posted.text);
        assert_eq!(posted.header("location"), "");
    }
    assert!(h.grant_keys().await.is_empty(), "no grant was created");
}

#[tokio::test]
async fn a_document_naming_another_client_id_is_refused() {
    // The document at CHATGPT claims to be another client.
    let http = chatgpt_com(vec![(CHATGPT, chatgpt_document("https://chatgpt.com/oauth/client.json"))]);
    let h = Harness::with(&[], http.clone());
    let page = h.get(&authorize_path(&h, CHATGPT, CHATGPT_REDIRECT)).await;
    assert_eq!(page.status, 400, "{}", page.text);
    assert!(page.text.contains("could not be used"), "{}", page.text);
    assert!(!page.text.contains("name=\"password\""), "no login form");
    assert_eq!(page.header("location"), "");

    // At the token endpoint the same document leaves the client unknown: a generic invalid_client.
    let token = h
        .token(&[
            ("grant_type", "refresh_token"),
            ("refresh_token", "user:grant:secret"),
            ("client_id", CHATGPT),
            ("resource", MCP_URL),
        ])
        .await;
    assert_eq!((token.status, token.error()), (401, "invalid_client"), "{}", token.text);
    assert!(h.cache_kv.keys().is_empty(), "the refused document was not cached");
    assert_eq!(http.requests().len(), 2, "fetched at each use, since it was not cached");
}

#[tokio::test]
async fn a_code_redeemed_under_another_client_id_is_refused() {
    let http =
        chatgpt_com(vec![(CHATGPT, chatgpt_document(CHATGPT)), (OTHER_CHATGPT, chatgpt_document(OTHER_CHATGPT))]);
    let h = Harness::with(&[], http);
    let code = h.code(&authorize_path(&h, CHATGPT, CHATGPT_REDIRECT), &["zotero:read"]).await;

    // Another connector's document (same callback, valid), and a registered client with ChatGPT's name and callback.
    let registered = h.public_client(CHATGPT_REDIRECT).await;
    for other in [OTHER_CHATGPT, registered.as_str()] {
        let reply = exchange(&h, other, &code).await;
        assert_eq!((reply.status, reply.error()), (400, "invalid_grant"), "{other}: {}", reply.text);
        assert!(reply.json.get("access_token").is_none());
    }
    // A client id without a document behind it is no client at all.
    let missing = exchange(&h, "https://chatgpt.com/oauth/ffffffffffffffff/client.json", &code).await;
    assert_eq!((missing.status, missing.error()), (401, "invalid_client"), "{}", missing.text);

    // The refusals did not use the code up: ChatGPT, which it was issued to, still redeems it.
    let tokens = exchange(&h, CHATGPT, &code).await;
    assert_eq!(tokens.status, 200, "{}", tokens.text);
    let refresh = tokens.json["refresh_token"].as_str().unwrap();

    // Nor may another client id refresh ChatGPT's grant.
    let stolen =
        h.token(&[("grant_type", "refresh_token"), ("refresh_token", refresh), ("client_id", OTHER_CHATGPT)]).await;
    assert_eq!((stolen.status, stolen.error()), (400, "invalid_grant"), "{}", stolen.text);
    assert_eq!(h.refresh(CHATGPT, refresh).await.status, 200, "the refresh token is still ChatGPT's to use");
}
