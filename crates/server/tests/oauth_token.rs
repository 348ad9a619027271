//! The token endpoint: code exchange, PKCE, replay, refresh rotation, scopes, resources, client
//! authentication, strict parsing, revocation.

mod oauth_support;

use base64::Engine as _;
use oauth_support::*;
use serde_json::json;
use zotero_mcp_core::platform::{KvStore, KvWrite};

#[tokio::test]
async fn the_code_exchange_returns_bearer_tokens_bound_to_the_resource() {
    let h = Harness::new();
    let tokens = h.flow(&["zotero:read", "zotero:write"]).await;
    assert_eq!(tokens.json["token_type"], "bearer");
    assert_eq!(tokens.json["expires_in"], 3600);
    assert_eq!(tokens.json["scope"], "zotero:read zotero:write");
    assert_eq!(tokens.json["resource"], MCP_URL);
    assert!(tokens.access.starts_with("owner:") && tokens.refresh.starts_with("owner:"));
}

#[tokio::test]
async fn a_missing_or_wrong_pkce_verifier_is_refused() {
    let h = Harness::new();
    let client = h.public_client(REDIRECT).await;
    let path = h.authorize_path(&client, REDIRECT, &[]);
    let code = h.code(&path, &["zotero:read"]).await;
    let missing = h
        .token(&[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("client_id", &client),
            ("redirect_uri", REDIRECT),
        ])
        .await;
    assert_eq!((missing.status, missing.error()), (400, "invalid_request"));
    let wrong = h
        .token(&[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("client_id", &client),
            ("code_verifier", "another-verifier-another-verifier-another-verif"),
        ])
        .await;
    assert_eq!((wrong.status, wrong.error()), (400, "invalid_grant"));
    assert_eq!(wrong.json["error_description"], "Invalid PKCE code_verifier");
    // The failed attempts did not consume the code: the real verifier still works.
    assert_eq!(h.exchange(&client, &code).await.status, 200);
}

#[tokio::test]
async fn a_verifier_outside_rfc_7636_grammar_is_a_malformed_request() {
    let h = Harness::new();
    let client = h.public_client(REDIRECT).await;
    let code = h.code(&h.authorize_path(&client, REDIRECT, &[]), &["zotero:read"]).await;
    let short = "abc".to_owned();
    let long = "a".repeat(129);
    let bad_chars = format!("{VERIFIER}+/=");
    for verifier in [short.as_str(), long.as_str(), bad_chars.as_str()] {
        let reply = h
            .token(&[
                ("grant_type", "authorization_code"),
                ("code", &code),
                ("client_id", &client),
                ("code_verifier", verifier),
            ])
            .await;
        assert_eq!((reply.status, reply.error()), (400, "invalid_request"), "{verifier}");
        assert!(reply.json["error_description"].as_str().unwrap().contains("43 to 128"), "{}", reply.text);
    }
    assert_eq!(h.exchange(&client, &code).await.status, 200, "the refused attempts did not burn the code");
}

#[tokio::test]
async fn a_pending_code_without_a_challenge_is_not_redeemed_even_by_a_confidential_client() {
    use zotero_mcp_core::platform::{KvStore, KvWrite};
    let h = Harness::new();
    let (id, secret) = h.confidential_client(REDIRECT).await;
    let code = h.code(&h.authorize_path(&id, REDIRECT, &[]), &["zotero:read"]).await;
    // A pending grant as one issued before PKCE was required (or by workers-oauth-provider to a client with a
    // secret, which it let skip PKCE) is stored: without the challenge.
    let key = h.grant_keys().await.pop().unwrap();
    let mut grant: serde_json::Value = serde_json::from_str(&h.oauth_kv.get(&key).await.unwrap().unwrap()).unwrap();
    let record = grant.as_object_mut().unwrap();
    record.remove("codeChallenge");
    record.remove("codeChallengeMethod");
    h.oauth_kv.put(&key, &grant.to_string(), KvWrite::ExpiresIn(600)).await.unwrap();
    let basic = format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(format!("{id}:{secret}")));
    for form in [
        vec![("grant_type", "authorization_code"), ("code", code.as_str()), ("redirect_uri", REDIRECT)],
        vec![("grant_type", "authorization_code"), ("code", code.as_str()), ("code_verifier", VERIFIER)],
    ] {
        let reply = h.token_with(&form, &[("authorization", &basic)]).await;
        assert_eq!((reply.status, reply.error()), (400, "invalid_grant"), "{form:?}: {}", reply.text);
        assert!(reply.json["error_description"].as_str().unwrap().contains("Start the authorization again"));
    }
}

#[tokio::test]
async fn a_replayed_code_revokes_everything_issued_from_it() {
    let h = Harness::new();
    let client = h.public_client(REDIRECT).await;
    let code = h.code(&h.authorize_path(&client, REDIRECT, &[]), &["zotero:read"]).await;
    let first = h.exchange(&client, &code).await;
    assert_eq!(first.status, 200);
    let access = first.json["access_token"].as_str().unwrap();
    assert!(h.token_works(access).await);
    let replay = h.exchange(&client, &code).await;
    assert_eq!((replay.status, replay.error()), (400, "invalid_grant"));
    assert_eq!(replay.json["error_description"], "Authorization code already used");
    assert!(!h.token_works(access).await, "the access token of the first exchange is revoked");
    let refresh = h.refresh(&client, first.json["refresh_token"].as_str().unwrap()).await;
    assert_eq!(refresh.error(), "invalid_grant", "and so is its refresh token");
    assert!(h.grant_keys().await.is_empty());
}

#[tokio::test]
async fn codes_and_refresh_tokens_work_only_for_the_client_they_were_issued_to() {
    let h = Harness::new();
    let alice = h.public_client(REDIRECT).await;
    let mallory = h.public_client(REDIRECT).await;
    let code = h.code(&h.authorize_path(&alice, REDIRECT, &[]), &["zotero:read"]).await;
    let stolen = h.exchange(&mallory, &code).await;
    assert_eq!((stolen.status, stolen.json["error_description"].as_str()), (400, Some("Client ID mismatch")));
    let tokens = h.exchange(&alice, &code).await;
    assert_eq!(tokens.status, 200, "the mismatch did not burn the code");
    let refresh = tokens.json["refresh_token"].as_str().unwrap();
    assert_eq!(h.refresh(&mallory, refresh).await.error(), "invalid_grant");
    assert_eq!(h.refresh(&alice, refresh).await.status, 200);
}

#[tokio::test]
async fn refresh_rotates_every_time_with_a_one_step_grace_for_the_previous_token() {
    let h = Harness::new();
    let t = h.flow(&["zotero:read"]).await;
    let r1 = t.refresh.clone();
    let second = h.refresh(&t.client_id, &r1).await;
    assert_eq!(second.status, 200, "{}", second.text);
    let r2 = second.json["refresh_token"].as_str().unwrap().to_owned();
    assert_ne!(r1, r2, "a new refresh token every time");
    assert!(h.token_works(second.json["access_token"].as_str().unwrap()).await);
    // The answer may have been lost: the previous token still works once more…
    let retry = h.refresh(&t.client_id, &r1).await;
    assert_eq!(retry.status, 200, "grace for the previous token: {}", retry.text);
    let r3 = retry.json["refresh_token"].as_str().unwrap().to_owned();
    // …and using the newest retires every older one.
    assert_eq!(h.refresh(&t.client_id, &r3).await.status, 200);
    assert_eq!(h.refresh(&t.client_id, &r1).await.error(), "invalid_grant");
    assert_eq!(h.refresh(&t.client_id, &r2).await.error(), "invalid_grant");
}

#[tokio::test]
async fn access_lifetime_is_capped_by_the_refresh_lifetime_which_expires() {
    let h = Harness::new();
    let t = h.flow(&["zotero:read"]).await;
    // 30 days minus 30 minutes later, only half an hour of refresh lifetime is left.
    h.clock.advance_secs(30 * 24 * 3600 - 1800);
    let late = h.refresh(&t.client_id, &t.refresh).await;
    assert_eq!(late.status, 200, "{}", late.text);
    assert_eq!(late.json["expires_in"], 1800);
    h.clock.advance_secs(1800 - 30);
    let expired = h.refresh(&t.client_id, late.json["refresh_token"].as_str().unwrap()).await;
    assert_eq!((expired.status, expired.error()), (400, "invalid_grant"));
}

#[tokio::test]
async fn scope_can_only_narrow_and_a_narrowed_token_cannot_write() {
    let h = Harness::new();
    let t = h.flow(&["zotero:read", "zotero:write"]).await;
    let narrowed = h
        .token(&[
            ("grant_type", "refresh_token"),
            ("refresh_token", &t.refresh),
            ("client_id", &t.client_id),
            ("scope", "zotero:read"),
        ])
        .await;
    assert_eq!(narrowed.json["scope"], "zotero:read");
    let call = h
        .mcp_call(MCP_URL, narrowed.json["access_token"].as_str().unwrap(), "fixture_write", json!({ "note": "x" }))
        .await;
    assert_eq!(call.json["result"]["isError"], true);
    let refresh = narrowed.json["refresh_token"].as_str().unwrap();
    let widened = h
        .token(&[
            ("grant_type", "refresh_token"),
            ("refresh_token", refresh),
            ("client_id", &t.client_id),
            ("scope", "zotero:read zotero:write zotero:admin"),
        ])
        .await;
    assert_eq!(widened.json["scope"], "zotero:read zotero:write", "no more than the grant, never an unknown scope");

    let read_only = h.flow(&["zotero:read"]).await;
    let asked = h
        .token(&[
            ("grant_type", "refresh_token"),
            ("refresh_token", &read_only.refresh),
            ("client_id", &read_only.client_id),
            ("scope", "zotero:write"),
        ])
        .await;
    assert_eq!(asked.json["scope"], "", "a grant without write cannot be refreshed into one");
}

#[tokio::test]
async fn the_resource_must_be_one_the_grant_was_authorized_for() {
    let h = Harness::new();
    let client = h.public_client(REDIRECT).await;
    let code = h.code(&h.authorize_path(&client, REDIRECT, &[]), &["zotero:read"]).await;
    let other = h
        .token(&[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("client_id", &client),
            ("code_verifier", VERIFIER),
            ("resource", "https://evil.example/mcp"),
        ])
        .await;
    assert_eq!((other.status, other.error()), (400, "invalid_target"));
    let inherited = h
        .token(&[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("client_id", &client),
            ("code_verifier", VERIFIER),
        ])
        .await;
    assert_eq!(inherited.json["resource"], MCP_URL, "omitting resource inherits the grant's");
}

#[tokio::test]
async fn confidential_clients_authenticate_one_way_with_their_secret() {
    let h = Harness::new();
    let (id, secret) = h.confidential_client(REDIRECT).await;
    let path = h.authorize_path(&id, REDIRECT, &[]);
    let code = h.code(&path, &["zotero:read"]).await;
    let basic = format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(format!("{id}:{secret}")));
    let wrong_basic = format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(format!("{id}:nope")));
    let form = [
        ("grant_type", "authorization_code"),
        ("code", code.as_str()),
        ("code_verifier", VERIFIER),
        ("redirect_uri", REDIRECT),
    ];

    let bad = h.token_with(&form, &[("authorization", &wrong_basic)]).await;
    assert_eq!((bad.status, bad.error()), (401, "invalid_client"));
    assert_eq!(bad.header("www-authenticate"), "Basic realm=\"OAuth\"");
    let mut both = form.to_vec();
    both.push(("client_id", &id));
    let two_methods = h.token_with(&both, &[("authorization", &basic)]).await;
    assert_eq!((two_methods.status, two_methods.error()), (400, "invalid_request"));
    let unauthenticated = h.token(&both).await;
    assert_eq!(
        (unauthenticated.status, unauthenticated.error()),
        (401, "invalid_client"),
        "a confidential client cannot act public"
    );
    let ok = h.token_with(&form, &[("authorization", &basic)]).await;
    assert_eq!(ok.status, 200, "{}", ok.text);

    // The secret in the body works too for a client that did not pick a method at registration.
    let refresh = ok.json["refresh_token"].as_str().unwrap();
    let post = h
        .token(&[
            ("grant_type", "refresh_token"),
            ("refresh_token", refresh),
            ("client_id", &id),
            ("client_secret", &secret),
        ])
        .await;
    assert_eq!(post.status, 200, "{}", post.text);
}

#[tokio::test]
async fn a_client_that_chose_its_method_cannot_switch() {
    let h = Harness::new();
    let reply = h.register(json!({ "redirect_uris": [REDIRECT], "token_endpoint_auth_method": "client_secret_post", "grant_types": ["authorization_code", "refresh_token"] })).await;
    let (id, secret) = (
        reply.json["client_id"].as_str().unwrap().to_owned(),
        reply.json["client_secret"].as_str().unwrap().to_owned(),
    );
    let code = h.code(&h.authorize_path(&id, REDIRECT, &[]), &["zotero:read"]).await;
    let basic = format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(format!("{id}:{secret}")));
    let switched = h
        .token_with(
            &[("grant_type", "authorization_code"), ("code", &code), ("code_verifier", VERIFIER)],
            &[("authorization", &basic)],
        )
        .await;
    assert_eq!((switched.status, switched.error()), (401, "invalid_client"));
}

#[tokio::test]
async fn parsing_is_strict_about_method_media_type_and_repeats() {
    let h = Harness::new();
    let t = h.flow(&["zotero:read"]).await;
    let json_body = http::Request::post(format!("{ORIGIN}/oauth/token"))
        .header("content-type", "application/json")
        .body(
            json!({ "grant_type": "refresh_token", "refresh_token": t.refresh, "client_id": t.client_id })
                .to_string()
                .into_bytes(),
        )
        .unwrap();
    let reply = h.send(json_body).await;
    assert_eq!((reply.status, reply.error()), (400, "invalid_request"));
    let smuggled = http::Request::post(format!("{ORIGIN}/oauth/token"))
        .header("content-type", "application/json, application/x-www-form-urlencoded")
        .body(b"grant_type=refresh_token".to_vec())
        .unwrap();
    assert_eq!(h.send(smuggled).await.status, 400);
    let repeated = h
        .token(&[
            ("grant_type", "refresh_token"),
            ("refresh_token", &t.refresh),
            ("refresh_token", "x:y:z"),
            ("client_id", &t.client_id),
        ])
        .await;
    assert_eq!((repeated.status, repeated.error()), (400, "invalid_request"));
    assert!(repeated.text.contains("refresh_token"));
    let two_resources = h
        .token(&[
            ("grant_type", "refresh_token"),
            ("refresh_token", &t.refresh),
            ("client_id", &t.client_id),
            ("resource", MCP_URL),
            ("resource", MCP_URL),
        ])
        .await;
    assert_eq!(two_resources.status, 200, "resource may repeat: {}", two_resources.text);
    assert_eq!(h.get("/oauth/token").await.status, 405);
    let unsupported = h.token(&[("grant_type", "client_credentials"), ("client_id", &t.client_id)]).await;
    assert_eq!(unsupported.error(), "unsupported_grant_type");
}

#[tokio::test]
async fn every_token_endpoint_answer_is_no_store() {
    let h = Harness::new();
    let t = h.flow(&["zotero:read"]).await;
    let answers = [
        h.refresh(&t.client_id, &t.refresh).await,
        h.refresh(&t.client_id, "owner:nope:nope").await,
        h.token(&[("grant_type", "refresh_token")]).await,
        h.token(&[("token", &t.access), ("client_id", &t.client_id)]).await,
        h.get("/oauth/token").await,
    ];
    for reply in answers {
        assert_eq!(reply.header("cache-control"), "no-store", "{} {}", reply.status, reply.text);
        assert_eq!(reply.header("pragma"), "no-cache");
    }
}

#[tokio::test]
async fn revoking_an_access_token_removes_only_it_and_a_refresh_token_the_whole_grant() {
    let h = Harness::new();
    let t = h.flow(&["zotero:read"]).await;
    let second = h.refresh(&t.client_id, &t.refresh).await;
    let access2 = second.json["access_token"].as_str().unwrap().to_owned();
    let refresh2 = second.json["refresh_token"].as_str().unwrap().to_owned();

    let reply = h.token(&[("token", &t.access), ("client_id", &t.client_id)]).await;
    assert_eq!(reply.status, 200);
    assert!(!h.token_works(&t.access).await);
    assert!(h.token_works(&access2).await, "only that access token");

    // Another client cannot revoke it, and learns nothing (still 200).
    let other = h.public_client(REDIRECT).await;
    assert_eq!(h.token(&[("token", &refresh2), ("client_id", &other)]).await.status, 200);
    assert!(h.token_works(&access2).await);

    let reply =
        h.token(&[("token", &refresh2), ("token_type_hint", "refresh_token"), ("client_id", &t.client_id)]).await;
    assert_eq!(reply.status, 200);
    assert!(!h.token_works(&access2).await, "revoking the refresh token cascades to the grant's access tokens");
    assert_eq!(h.refresh(&t.client_id, &refresh2).await.error(), "invalid_grant");
    assert!(h.grant_keys().await.is_empty());
    assert!(h.oauth_kv.keys().iter().all(|k| !k.starts_with("token:")));
    // Unknown and malformed tokens are fine too.
    assert_eq!(h.token(&[("token", "garbage"), ("client_id", &t.client_id)]).await.status, 200);
}

#[tokio::test]
async fn unknown_clients_are_invalid_client_with_401() {
    let h = Harness::new();
    let reply = h.token(&[("grant_type", "refresh_token"), ("refresh_token", "a:b:c"), ("client_id", "nobody")]).await;
    assert_eq!((reply.status, reply.error()), (401, "invalid_client"));
    let none = h.token(&[("grant_type", "refresh_token"), ("refresh_token", "a:b:c")]).await;
    assert_eq!((none.status, none.error()), (401, "invalid_client"));
}

/// Registers a public client with these `grant_types` (and `response_types`, when given).
async fn client_with_grants(h: &Harness, grant_types: &[&str], response_types: Option<&[&str]>) -> String {
    let mut metadata =
        json!({ "redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none", "grant_types": grant_types });
    if let Some(response_types) = response_types {
        metadata["response_types"] = json!(response_types);
    }
    let reply = h.register(metadata).await;
    assert_eq!(reply.status, 201, "{}", reply.text);
    reply.json["client_id"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn a_client_registered_for_codes_only_gets_no_refresh_token_and_cannot_refresh() {
    let h = Harness::new();
    let id = client_with_grants(&h, &["authorization_code"], None).await;
    let stored = h.oauth_kv.get(&format!("client:{id}")).await.unwrap().unwrap();
    assert!(stored.contains(r#""grantTypesExplicit":true"#), "{stored}");
    let code = h.code(&h.authorize_path(&id, REDIRECT, &[]), &["zotero:read"]).await;
    let tokens = h.exchange(&id, &code).await;
    assert_eq!(tokens.status, 200, "{}", tokens.text);
    assert!(tokens.json.get("refresh_token").is_none(), "no refresh token it may not use: {}", tokens.text);
    assert!(h.token_works(tokens.json["access_token"].as_str().unwrap()).await);
    // Its grant lives as long as its access token, not 30 days.
    let grant = h.grant_keys().await.remove(0);
    let listed = h.oauth_kv.list(&grant, None, 1).await.unwrap();
    assert_eq!(listed.keys[0].expiration, Some(NOW_MS / 1000 + 3600));
    // The grant type is checked before the token, so any refresh request says why.
    let refused = h.refresh(&id, "owner:whatever:token").await;
    assert_eq!((refused.status, refused.error()), (400, "unauthorized_client"), "{}", refused.text);
    let description = refused.json["error_description"].as_str().unwrap();
    assert!(description.contains("not registered for the refresh_token grant"), "{description}");
    assert!(description.contains("Authorize again"), "{description}");
    assert_eq!(refused.header("cache-control"), "no-store");
}

#[tokio::test]
async fn a_client_registered_for_refresh_only_cannot_exchange_a_code() {
    let h = Harness::new();
    let id = client_with_grants(&h, &["refresh_token"], Some(&[])).await;
    let refused = h
        .token(&[
            ("grant_type", "authorization_code"),
            ("code", "owner:some-grant:some-code"),
            ("client_id", &id),
            ("code_verifier", VERIFIER),
        ])
        .await;
    assert_eq!((refused.status, refused.error()), (400, "unauthorized_client"), "{}", refused.text);
    assert!(refused.json["error_description"].as_str().unwrap().contains("authorization_code grant"));
}

#[tokio::test]
async fn clients_that_name_no_grant_types_and_old_records_keep_refreshing() {
    let h = Harness::new();
    // A registration that names none gets both, stored as such.
    let reply = h.register(json!({ "redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none" })).await;
    let id = reply.json["client_id"].as_str().unwrap().to_owned();
    let tokens = h.flow_for(&id, &["zotero:read"]).await;
    assert_eq!(h.refresh(&id, &tokens.refresh).await.status, 200);
    // A record stored before grant types were enforced (by this server or the TypeScript provider): a client
    // that named none got `["authorization_code"]` and has refreshed ever since. It still may.
    let old = json!({ "clientId": "OldDefault000000", "redirectUris": [REDIRECT], "clientName": "Old",
        "tokenEndpointAuthMethod": "none", "grantTypes": ["authorization_code"], "responseTypes": ["code"],
        "registrationDate": NOW_MS / 1000 - 40 * 24 * 3600 });
    h.oauth_kv.put("client:OldDefault000000", &old.to_string(), KvWrite::Forever).await.unwrap();
    let tokens = h.flow_for("OldDefault000000", &["zotero:read"]).await;
    let refreshed = h.refresh("OldDefault000000", &tokens.refresh).await;
    assert_eq!(refreshed.status, 200, "{}", refreshed.text);
    let stored = h.oauth_kv.get("client:OldDefault000000").await.unwrap().unwrap();
    assert_eq!(serde_json::from_str::<serde_json::Value>(&stored).unwrap(), old, "the old record is not rewritten");
}
