//! The authorization endpoint: request validation, the consent page, the password, scopes and the throttle.

mod oauth_support;

use std::rc::Rc;

use oauth_support::*;
use serde_json::json;
use zotero_mcp_core::platform::{KvStore, KvWrite};
use zotero_mcp_server::config::{Config, SetupHint};

#[tokio::test]
async fn a_redirect_uri_that_was_not_registered_gets_an_error_page_and_no_redirect() {
    let h = Harness::new();
    let client = h.public_client(REDIRECT).await;
    for bad in
        ["https://evil.example/callback", "https://client.example/callback/", "https://client.example/callback?x=1"]
    {
        let reply = h.get(&h.authorize_path(&client, bad, &[])).await;
        assert_eq!(reply.status, 400, "{bad}");
        assert_eq!(reply.header("location"), "", "{bad} must not be redirected to");
        assert!(reply.text.contains("Invalid redirect URI"), "{bad}");
        // Errors that follow redirect validation are never reached either: a broken PKCE stays on the page.
        let both = h.get(&h.authorize_path(&client, bad, &[("code_challenge_method", "plain")])).await;
        assert_eq!(both.header("location"), "");
    }
    // Posting the form to a bad redirect cannot complete either, even with the right password.
    let reply =
        h.approve(&h.authorize_path(&client, "https://evil.example/callback", &[]), &[("password", PASSWORD)]).await;
    assert_eq!(reply.status, 400);
    assert!(h.grant_keys().await.is_empty());
}

#[tokio::test]
async fn a_javascript_redirect_uri_is_refused_at_registration_and_authorization() {
    let h = Harness::new();
    let reply = h
        .register(
            json!({ "redirect_uris": ["javascript:alert(document.domain)//"], "token_endpoint_auth_method": "none" }),
        )
        .await;
    assert_eq!(reply.status, 400);
    let client = h.public_client(REDIRECT).await;
    let reply = h.get(&h.authorize_path(&client, "javascript:alert(1)", &[])).await;
    assert_eq!(reply.status, 400);
    assert_eq!(reply.header("location"), "");
}

#[tokio::test]
async fn loopback_redirects_match_on_any_port_but_nothing_else_changes() {
    let h = Harness::new();
    let client = h.public_client("http://localhost/callback").await;
    let page = h.get(&h.authorize_path(&client, "http://localhost:53682/callback", &[])).await;
    assert_eq!(page.status, 200, "{}", page.text);
    assert!(page.text.contains("localhost:53682"), "the page shows where the approval goes");
    assert!(page.text.contains("program on the computer you are using"), "and warns that it is a local program");
    assert_eq!(h.get(&h.authorize_path(&client, "http://localhost:53682/other", &[])).await.status, 400);
    assert_eq!(h.get(&h.authorize_path(&client, "http://127.0.0.1:53682/callback", &[])).await.status, 400);
    assert_eq!(h.get(&h.authorize_path(&client, "https://localhost:53682/callback", &[])).await.status, 400);
    // The code can be exchanged with the same loopback URI.
    let path = h.authorize_path(&client, "http://localhost:53682/callback", &[]);
    let code = h.code(&path, &["zotero:read"]).await;
    let reply = h
        .token(&[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("client_id", &client),
            ("code_verifier", VERIFIER),
            ("redirect_uri", "http://localhost:53682/callback"),
        ])
        .await;
    assert_eq!(reply.status, 200, "{}", reply.text);
}

#[tokio::test]
async fn unknown_or_missing_clients_get_a_page() {
    let h = Harness::new();
    let reply = h.get(&h.authorize_path("NoSuchClient0000", REDIRECT, &[])).await;
    assert_eq!(reply.status, 400);
    assert!(reply.text.contains("Unknown OAuth client"));
    assert_eq!(h.get("/authorize?response_type=code").await.status, 400);
}

#[tokio::test]
async fn errors_in_a_request_with_a_registered_redirect_are_pages_too() {
    let h = Harness::new();
    let client = h.public_client(REDIRECT).await;
    let cases: [(&[(&str, &str)], &str); 7] = [
        (&[("code_challenge", ""), ("code_challenge_method", "")], "invalid_request"),
        (&[("code_challenge_method", "plain")], "invalid_request"),
        (&[("code_challenge_method", "")], "invalid_request"),
        (&[("code_challenge", "")], "invalid_request"),
        (&[("response_type", "token")], "unsupported_response_type"),
        (&[("response_type", "")], "invalid_request"),
        (&[("resource", "https://zotero.example/mcp#frag")], "invalid_target"),
    ];
    for (extra, error) in cases {
        let reply = h.get(&h.authorize_path(&client, REDIRECT, extra)).await;
        assert_eq!(reply.status, 400, "{extra:?}: {}", reply.text);
        assert_eq!(reply.header("location"), "", "{extra:?} must not be redirected");
        assert!(reply.text.contains(&format!("OAuth error: {error}")), "{extra:?}: {}", reply.text);
        assert!(reply.text.contains("Start the connection again"), "the page says what to do");
        assert_eq!(reply.header("cache-control"), "no-store");
    }
    // A client registered for another response type (stored by an older version) gets a page as well.
    let record = json!({ "clientId": "NoCodeClient0000", "redirectUris": [REDIRECT], "tokenEndpointAuthMethod": "none",
        "grantTypes": ["refresh_token"], "responseTypes": [] });
    h.oauth_kv.put("client:NoCodeClient0000", &record.to_string(), KvWrite::Forever).await.unwrap();
    let reply = h.get(&h.authorize_path("NoCodeClient0000", REDIRECT, &[])).await;
    assert_eq!((reply.status, reply.header("location")), (400, ""));
    assert!(reply.text.contains("OAuth error: unauthorized_client"), "{}", reply.text);
}

#[tokio::test]
async fn a_client_registered_by_an_attacker_cannot_turn_errors_into_redirects_to_their_site() {
    // RFC 9700 §4.11.2: registration is open, so anyone can register a client whose redirect URI is their own
    // page and send a victim to /authorize with a broken request. Were errors redirected, this server's origin
    // would bounce the victim to that page: an open redirector.
    let h = Harness::new();
    let landing = "https://attacker.example/landing";
    let attacker = h.public_client(landing).await;
    for extra in [
        &[("response_type", "token")][..],
        &[("code_challenge", "")][..],
        &[("resource", "not a uri")][..],
        &[("response_type", "code id_token"), ("code_challenge_method", "plain")][..],
    ] {
        let reply = h.get(&h.authorize_path(&attacker, landing, extra)).await;
        assert_eq!(reply.status, 400, "{extra:?}");
        assert_eq!(reply.header("location"), "", "{extra:?}: nothing sends the browser to {landing}");
        assert!(!reply.text.contains(landing), "{extra:?}: the page does not even link to it");
        // Posting the form changes nothing.
        let posted = h.approve(&h.authorize_path(&attacker, landing, extra), &[("password", PASSWORD)]).await;
        assert_eq!((posted.status, posted.header("location")), (400, ""), "{extra:?}");
    }
    assert!(h.grant_keys().await.is_empty());
}

#[tokio::test]
async fn every_client_needs_a_well_formed_s256_challenge() {
    let h = Harness::new();
    let public = h.public_client(REDIRECT).await;
    let (confidential, _) = h.confidential_client(REDIRECT).await;
    let cases: [&[(&str, &str)]; 5] = [
        // No PKCE at all: refused for a client with a secret too (OAuth 2.1).
        &[("code_challenge", ""), ("code_challenge_method", "")],
        &[("code_challenge", "too-short")],
        &[("code_challenge", "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw+cM")],
        &[("code_challenge", "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM=")],
        &[("code_challenge", "a-verifier-of-at-least-43-characters-0123456789abcdef")],
    ];
    for client in [&public, &confidential] {
        for extra in cases {
            let reply = h.get(&h.authorize_path(client, REDIRECT, extra)).await;
            assert_eq!(reply.status, 400, "{extra:?}: {}", reply.text);
            assert_eq!(reply.header("location"), "", "{extra:?}");
            assert!(reply.text.contains("OAuth error: invalid_request"), "{extra:?}: {}", reply.text);
            assert!(reply.text.contains("S256"), "{extra:?}: {}", reply.text);
        }
        // The form cannot be posted around the check either.
        let path = h.authorize_path(client, REDIRECT, &[("code_challenge", ""), ("code_challenge_method", "")]);
        let reply = h.approve(&path, &[("password", PASSWORD)]).await;
        assert_eq!((reply.status, reply.header("location")), (400, ""));
    }
    assert!(h.grant_keys().await.is_empty());
    // A confidential client with PKCE still completes the flow.
    assert_eq!(h.get(&h.authorize_path(&confidential, REDIRECT, &[])).await.status, 200);
}

#[tokio::test]
async fn the_consent_page_names_the_client_and_redirect_host_and_is_locked_down() {
    let h = Harness::new();
    let reply = h
        .register(json!({ "client_name": "Claude <script>alert(1)</script>", "redirect_uris": ["https://claude.ai/api/mcp/auth_callback"], "token_endpoint_auth_method": "none" }))
        .await;
    let client = reply.json["client_id"].as_str().unwrap().to_owned();
    let page = h.get(&h.authorize_path(&client, "https://claude.ai/api/mcp/auth_callback", &[])).await;
    assert_eq!(page.status, 200);
    assert!(page.text.contains("Claude &lt;script&gt;alert(1)&lt;/script&gt;"), "the name is shown, escaped");
    assert!(!page.text.contains("<script>"));
    assert!(page.text.contains("<span class=\"host\">claude.ai</span>"), "the redirect host is shown plainly");
    assert!(!page.text.contains("program on the computer"), "no loopback warning for a remote host");
    assert!(page.text.contains(r#"type="password""#));
    assert!(!page.text.contains(r#"name="username""#), "no user name unless AUTH_USERNAME is set");
    assert_eq!(page.header("cache-control"), "no-store");
    assert_eq!(page.header("x-content-type-options"), "nosniff");
    assert_eq!(page.header("referrer-policy"), "no-referrer");
    let csp = page.header("content-security-policy");
    assert!(csp.contains("default-src 'none'") && csp.contains("frame-ancestors 'none'"), "{csp}");
    assert!(!csp.contains("form-action"), "form-action would block the redirect after the POST");
}

#[tokio::test]
async fn the_consent_page_says_when_access_ends_and_it_ends_then_however_often_it_is_used() {
    let h = Harness::new();
    let client = h.public_client(REDIRECT).await;
    let path = h.authorize_path(&client, REDIRECT, &[]);
    let page = h.get(&path).await;
    assert!(
        page.text
            .contains("Access ends 30 days after you approve, however often it is used, or sooner if it is revoked"),
        "{}",
        page.text
    );
    assert!(!page.text.contains("unused"), "use does not extend access, so the page must not suggest it does");
    // What the page says: refreshing every day keeps access for 30 days after approval, and not a day longer.
    let code = h.code(&path, &["zotero:read"]).await;
    let mut refresh = h.exchange(&client, &code).await.json["refresh_token"].as_str().unwrap().to_owned();
    for day in 1..30 {
        h.clock.advance_secs(24 * 3600);
        let reply = h.refresh(&client, &refresh).await;
        assert_eq!(reply.status, 200, "day {day}: {}", reply.text);
        refresh = reply.json["refresh_token"].as_str().unwrap().to_owned();
    }
    h.clock.advance_secs(24 * 3600);
    assert_eq!(h.refresh(&client, &refresh).await.error(), "invalid_grant", "day 30");
}

#[tokio::test]
async fn an_absent_scope_offers_both_and_the_ticks_decide() {
    let h = Harness::new();
    let client = h.public_client(REDIRECT).await;
    let path = h.authorize_path(&client, REDIRECT, &[]);
    let page = h.get(&path).await;
    assert!(
        page.text.contains(r#"value="zotero:read" checked"#) && page.text.contains(r#"value="zotero:write" checked"#)
    );
    assert!(page.text.contains("did not say which access it needs"));
    for (ticks, granted) in [
        (vec!["zotero:read", "zotero:write"], "zotero:read zotero:write"),
        (vec!["zotero:read"], "zotero:read"),
        (vec![], "zotero:read"),
    ] {
        let code = h.code(&path, &ticks).await;
        let tokens = h.exchange(&client, &code).await;
        assert_eq!(tokens.json["scope"], granted, "ticks {ticks:?}");
    }
}

#[tokio::test]
async fn a_requested_scope_is_a_ceiling_and_nothing_ticked_grants_read_only() {
    let h = Harness::new();
    let client = h.public_client(REDIRECT).await;
    let path = h.authorize_path(&client, REDIRECT, &[("scope", "zotero:read")]);
    let page = h.get(&path).await;
    assert!(!page.text.contains(r#"value="zotero:write""#), "write was not requested, so it is not offered");
    assert!(!page.text.contains("did not say which access"));
    let code = h.code(&path, &["zotero:read", "zotero:write", "zotero:admin"]).await;
    assert_eq!(
        h.exchange(&client, &code).await.json["scope"],
        "zotero:read",
        "a posted scope beyond the request is ignored"
    );

    let write_only = h.authorize_path(&client, REDIRECT, &[("scope", "zotero:write")]);
    let code = h.code(&write_only, &[]).await;
    let tokens = h.exchange(&client, &code).await;
    assert_eq!(tokens.json["scope"], "zotero:read", "nothing ticked grants read only");
    let call = h
        .mcp_call(MCP_URL, tokens.json["access_token"].as_str().unwrap(), "fixture_write", json!({ "note": "x" }))
        .await;
    assert_eq!(call.json["result"]["isError"], true);
}

#[tokio::test]
async fn a_wrong_password_is_refused_without_a_grant_and_the_page_says_so() {
    let h = Harness::new();
    let client = h.public_client(REDIRECT).await;
    let reply =
        h.approve(&h.authorize_path(&client, REDIRECT, &[]), &[("password", "wrong"), ("scope", "zotero:write")]).await;
    assert_eq!(reply.status, 401);
    assert!(reply.text.contains("Incorrect password."));
    assert!(h.grant_keys().await.is_empty());
    assert_eq!(h.clock.sleeps(), [400], "the first failure waits 400 ms");
}

#[tokio::test]
async fn auth_username_is_asked_for_and_checked_when_set() {
    let h = Harness::with_vars(&[("AUTH_USERNAME", "alice")]);
    let client = h.public_client(REDIRECT).await;
    let path = h.authorize_path(&client, REDIRECT, &[]);
    assert!(h.get(&path).await.text.contains(r#"name="username""#));
    let wrong_user = h.approve(&path, &[("username", "bob"), ("password", PASSWORD)]).await;
    assert_eq!(wrong_user.status, 401);
    assert!(wrong_user.text.contains("Incorrect user name or password."));
    let right = h.approve(&path, &[("username", "alice"), ("password", PASSWORD)]).await;
    assert_eq!(right.status, 303);
    assert!(right.location_params()["code"].starts_with("alice:"), "the user name is the grant's user id");
}

#[tokio::test]
async fn the_throttle_locks_out_after_eight_failures_even_for_the_right_password_then_resets() {
    let h = Harness::new();
    let client = h.public_client(REDIRECT).await;
    let path = h.authorize_path(&client, REDIRECT, &[]);
    for _ in 0..8 {
        assert_eq!(h.approve(&path, &[("password", "guess")]).await.status, 401);
    }
    assert_eq!(h.clock.sleeps(), [400, 700, 1000, 1300, 1600, 1900, 2200, 2500], "each failure waits longer");
    let locked = h.approve(&path, &[("password", PASSWORD)]).await;
    assert_eq!(locked.status, 429);
    assert!(locked.text.contains("Too many failed sign-in attempts"));
    assert!(h.grant_keys().await.is_empty(), "nothing is granted while locked");
    // Another address is not locked out.
    assert_eq!(h.approve_from(&path, &[("password", PASSWORD)], "198.51.100.9").await.status, 303);
    // The window is 15 minutes from the last failure.
    h.clock.advance_secs(15 * 60);
    let ok = h.approve(&path, &[("password", PASSWORD)]).await;
    assert_eq!(ok.status, 303);
    // A success clears the count.
    assert_eq!(h.approve(&path, &[("password", "guess")]).await.status, 401);
    assert_eq!(h.count("login-attempts:203.0.113.7").await, 1);
    assert_eq!(h.approve(&path, &[("password", PASSWORD)]).await.status, 303);
    assert_eq!(h.count("login-attempts:203.0.113.7").await, 0);
}

#[tokio::test]
async fn without_exact_counters_the_throttle_counts_in_kv_under_the_typescript_keys() {
    let h = Harness::new().counting_in_kv();
    let client = h.public_client(REDIRECT).await;
    let path = h.authorize_path(&client, REDIRECT, &[]);
    for _ in 0..8 {
        assert_eq!(h.approve(&path, &[("password", "guess")]).await.status, 401);
    }
    assert_eq!(h.cache_kv.get("login-attempts:203.0.113.7").await.unwrap().as_deref(), Some("8"));
    assert_eq!(h.cache_kv.get("login-attempts:*").await.unwrap().as_deref(), Some("8"));
    let locked = h.approve(&path, &[("password", PASSWORD)]).await;
    assert_eq!((locked.status, locked.header("retry-after")), (429, "900"));
    h.clock.advance_secs(15 * 60);
    assert_eq!(h.approve(&path, &[("password", PASSWORD)]).await.status, 303);
    assert_eq!(h.cache_kv.get("login-attempts:203.0.113.7").await.unwrap(), None, "a success clears the count");
}

#[tokio::test]
async fn approval_redirects_with_code_state_and_iss_and_replaces_the_clients_earlier_grant() {
    let h = Harness::new();
    let first = h.flow(&["zotero:read"]).await;
    assert!(h.token_works(&first.access).await);
    let reply = h.approve(&h.authorize_path(&first.client_id, REDIRECT, &[]), &[("password", PASSWORD)]).await;
    assert_eq!(reply.status, 303);
    let params = reply.location_params();
    assert_eq!(params["state"], "xyz-state");
    assert_eq!(params["iss"], ORIGIN);
    assert_eq!(params["code"].split(':').count(), 3);
    assert_eq!(h.grant_keys().await.len(), 1, "re-authorizing the same client revokes its earlier grant");
    assert!(!h.token_works(&first.access).await);
    // Another client's grant is left alone.
    let other = h.flow(&["zotero:read"]).await;
    assert_eq!(h.grant_keys().await.len(), 2);
    assert!(h.token_works(&other.access).await);
}

#[tokio::test]
async fn a_pending_code_lives_ten_minutes() {
    let h = Harness::new();
    let client = h.public_client(REDIRECT).await;
    let code = h.code(&h.authorize_path(&client, REDIRECT, &[]), &["zotero:read"]).await;
    h.clock.advance_secs(601);
    let reply = h.exchange(&client, &code).await;
    assert_eq!((reply.status, reply.error()), (400, "invalid_grant"));
}

/// A harness whose configuration says where it runs, as the Worker shell or the native binary sets it.
fn harness_on(setup: SetupHint, vars: &[(&str, &str)]) -> Harness {
    let mut h = Harness::with_vars(vars);
    h.app.config = Rc::new(Config { setup, ..Config::clone(&h.app.config) });
    h
}

/// The page says how to set the password where the server runs: wrangler on Workers, never natively.
#[tokio::test]
async fn missing_auth_password_is_a_server_error_page_that_says_how_to_set_it_there() {
    for (setup, expected) in [
        (SetupHint::Worker, "`wrangler secret put AUTH_PASSWORD`"),
        (SetupHint::Native, "set AUTH_PASSWORD in the environment or as `AUTH_PASSWORD = "),
    ] {
        let h = harness_on(setup, &[("AUTH_PASSWORD", "")]);
        let client = h.public_client(REDIRECT).await;
        let reply = h.approve(&h.authorize_path(&client, REDIRECT, &[]), &[("password", "")]).await;
        assert_eq!(reply.status, 500);
        assert!(reply.text.contains("AUTH_PASSWORD is not configured"), "{}", reply.text);
        assert!(reply.text.contains(expected), "{setup:?}: {}", reply.text);
        assert_eq!(reply.text.contains("wrangler"), setup == SetupHint::Worker, "{}", reply.text);
    }
}

#[tokio::test]
async fn a_user_name_with_a_colon_is_a_server_error_page_that_says_where_to_change_it() {
    for (setup, expected) in [(SetupHint::Worker, "deploy again"), (SetupHint::Native, "restart the server")] {
        let h = harness_on(setup, &[("AUTH_USERNAME", "a:b")]);
        let client = h.public_client(REDIRECT).await;
        let form = [("username", "a:b"), ("password", PASSWORD)];
        let reply = h.approve(&h.authorize_path(&client, REDIRECT, &[]), &form).await;
        assert_eq!(reply.status, 500);
        assert!(reply.text.contains("must not contain a colon") && reply.text.contains(expected), "{}", reply.text);
        assert_eq!(reply.text.contains("wrangler"), setup == SetupHint::Worker, "{}", reply.text);
    }
}
