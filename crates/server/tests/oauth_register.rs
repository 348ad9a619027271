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
    assert_eq!(
        confidential.json["grant_types"],
        json!(["authorization_code", "refresh_token"]),
        "a client that names no grant types gets both, and is told so"
    );
    let secret = confidential.json["client_secret"].as_str().unwrap();
    assert_eq!(secret.len(), 32);
    let id = confidential.json["client_id"].as_str().unwrap();
    let stored = h.oauth_kv.get(&format!("client:{id}")).await.unwrap().unwrap();
    assert!(!stored.contains(secret), "the secret is stored hashed only");
    assert!(stored.contains(&zotero_mcp_server::auth::crypto::sha256_hex(secret)));
}

/// The KV expiration of `client:{id}`.
async fn client_expiration(h: &Harness, id: &str) -> Option<u64> {
    let listed = h.oauth_kv.list(&format!("client:{id}"), None, 10).await.unwrap();
    assert_eq!(listed.keys.len(), 1, "client:{id} is stored");
    listed.keys[0].expiration
}

#[tokio::test]
async fn a_registration_lives_a_day_until_approved_then_ninety_days_from_registration() {
    let h = Harness::new();
    let now = NOW_MS / 1000;
    let id = h.public_client(REDIRECT).await;
    assert_eq!(client_expiration(&h, &id).await, Some(now + 24 * 3600), "unused, it is gone after a day");
    // Showing the consent page or failing the password is not an approval.
    h.clock.advance_secs(3 * 3600);
    let path = h.authorize_path(&id, REDIRECT, &[]);
    assert_eq!(h.get(&path).await.status, 200);
    assert_eq!(h.approve(&path, &[("password", "wrong")]).await.status, 401);
    assert_eq!(client_expiration(&h, &id).await, Some(now + 24 * 3600));
    // The first approval keeps it for the usual 90 days, counted from its registration.
    let tokens = h.flow_for(&id, &["zotero:read"]).await;
    assert_eq!(client_expiration(&h, &id).await, Some(now + 90 * 24 * 3600));
    h.clock.advance_secs(2 * 24 * 3600);
    assert_eq!(h.refresh(&id, &tokens.refresh).await.status, 200, "days later the client is still there");
    // A later approval leaves the record alone (it is not written again).
    let stored = h.oauth_kv.get(&format!("client:{id}")).await.unwrap();
    h.flow_for(&id, &["zotero:read"]).await;
    assert_eq!(client_expiration(&h, &id).await, Some(now + 90 * 24 * 3600));
    assert_eq!(h.oauth_kv.get(&format!("client:{id}")).await.unwrap(), stored);
}

#[tokio::test]
async fn a_registration_nobody_approves_is_gone_after_a_day() {
    let h = Harness::new();
    let (id, secret) = h.confidential_client(REDIRECT).await;
    h.clock.advance_secs(24 * 3600);
    let reply = h.get(&h.authorize_path(&id, REDIRECT, &[])).await;
    assert_eq!(reply.status, 400);
    assert!(reply.text.contains("Unknown OAuth client") && reply.text.contains("Connect again"), "{}", reply.text);
    let token = h
        .token(&[
            ("grant_type", "authorization_code"),
            ("code", "a:b:c"),
            ("client_id", &id),
            ("client_secret", &secret),
        ])
        .await;
    assert_eq!((token.status, token.error()), (401, "invalid_client"));
}

#[tokio::test]
async fn registrations_are_limited_to_ten_an_hour_per_address() {
    let h = Harness::new();
    let metadata = json!({ "redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none" });
    for n in 1..=10 {
        let reply = h.register_from(metadata.clone(), "203.0.113.7").await;
        assert_eq!(reply.status, 201, "registration {n}: {}", reply.text);
    }
    let refused = h.register_from(metadata.clone(), "203.0.113.7").await;
    assert_eq!((refused.status, refused.error()), (429, "temporarily_unavailable"), "{}", refused.text);
    assert_eq!(refused.header("retry-after"), "3600");
    assert_eq!(refused.header("cache-control"), "no-store");
    let description = refused.json["error_description"].as_str().unwrap();
    assert!(description.contains("at most 10 an hour") && description.contains("60 minutes"), "{description}");
    assert!(description.contains("Use the client_id you already registered"), "{description}");
    assert_eq!(h.oauth_kv.keys().iter().filter(|k| k.starts_with("client:")).count(), 10, "the 11th is not stored");
    // The count is the address's own; invalid metadata is refused for what it is, and not counted anyway.
    assert_eq!(h.register_from(metadata.clone(), "198.51.100.9").await.status, 201);
    let bad = h.register_from(json!({ "redirect_uris": [] }), "198.51.100.20").await;
    assert_eq!(bad.error(), "invalid_client_metadata");
    assert_eq!(h.count("register-attempts:198.51.100.20").await, 0);
    // The window is fixed from the address's first registration: half an hour on, half an hour is left.
    h.clock.advance_secs(30 * 60);
    let later = h.register_from(metadata.clone(), "203.0.113.7").await;
    assert_eq!((later.status, later.header("retry-after")), (429, "1800"));
    assert!(later.json["error_description"].as_str().unwrap().contains("30 minutes"));
    h.clock.advance_secs(30 * 60);
    assert_eq!(h.register_from(metadata.clone(), "203.0.113.7").await.status, 201, "a new window");
}

#[tokio::test]
async fn an_ipv6_network_is_counted_by_its_prefix() {
    let h = Harness::new();
    let metadata = json!({ "redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none" });
    // Ten addresses of one /64: one subscriber, one count.
    for n in 1..=10 {
        let address = format!("2001:db8:1:2::{n:x}");
        assert_eq!(h.register_from(metadata.clone(), &address).await.status, 201, "{address}");
    }
    assert_eq!(h.register_from(metadata.clone(), "2001:db8:1:2:ffff::1").await.status, 429);
    assert_eq!(h.count("register-attempts:2001:db8:1:2::/64").await, 10);
    assert_eq!(h.register_from(metadata.clone(), "2001:db8:1:3::1").await.status, 201, "the next /64");
    // LOGIN_IPV6_PREFIX sets the length for registrations too.
    let h = Harness::with_vars(&[("LOGIN_IPV6_PREFIX", "48")]);
    for n in 1..=10 {
        assert_eq!(h.register_from(metadata.clone(), &format!("2001:db8:1:{n:x}::1")).await.status, 201);
    }
    assert_eq!(h.register_from(metadata.clone(), "2001:db8:1:ff::1").await.status, 429);
}

#[tokio::test]
async fn registrations_without_an_address_share_one_count() {
    let h = Harness::new();
    let metadata = json!({ "redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none" });
    for _ in 0..10 {
        assert_eq!(h.register_from(metadata.clone(), "").await.status, 201);
    }
    assert_eq!(h.register_from(metadata.clone(), "not an address").await.status, 429, "counted as `unknown`");
}

#[tokio::test]
async fn loopback_registrations_are_counted_like_any_other_address() {
    // Behind a reverse proxy on the same host every client is loopback, and a web page can post here from the
    // owner's browser: 3,000 uncounted registrations in six seconds grew the native store by 66 MB.
    let h = Harness::new();
    let metadata = json!({ "redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none" });
    for n in 1..=10 {
        assert_eq!(h.register_from(metadata.clone(), "127.0.0.1").await.status, 201, "registration {n}");
    }
    let refused = h.register_from(metadata.clone(), "127.0.0.1").await;
    assert_eq!((refused.status, refused.error()), (429, "temporarily_unavailable"), "{}", refused.text);
    assert_eq!(refused.header("retry-after"), "3600");
    assert_eq!(h.register_from(metadata.clone(), "::ffff:127.0.0.1").await.status, 429, "the same address, mapped");
    assert_eq!(h.count("register-attempts:127.0.0.1").await, 10);
    for _ in 0..10 {
        assert_eq!(h.register_from(metadata.clone(), "::1").await.status, 201);
    }
    assert_eq!(h.register_from(metadata.clone(), "::1").await.status, 429);
    assert_eq!(h.count("register-attempts:::/64").await, 10, "::1 by its /64, like any IPv6 client");
}

#[tokio::test]
async fn the_whole_server_accepts_at_most_twenty_registrations_an_hour() {
    let h = Harness::new();
    let metadata = json!({ "redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none" });
    // Twenty addresses, one registration each: every address is far under its own limit.
    for n in 1..=20 {
        let reply = h.register_from(metadata.clone(), &format!("198.51.100.{n}")).await;
        assert_eq!(reply.status, 201, "registration {n}: {}", reply.text);
    }
    h.clock.advance_secs(15 * 60);
    let refused = h.register_from(metadata.clone(), "203.0.113.99").await;
    assert_eq!((refused.status, refused.error()), (429, "temporarily_unavailable"), "{}", refused.text);
    assert_eq!(refused.header("retry-after"), "2700", "the server's window began with its first registration");
    assert_eq!(refused.header("cache-control"), "no-store");
    let description = refused.json["error_description"].as_str().unwrap();
    assert!(description.contains("on this server: at most 20 an hour"), "{description}");
    assert!(
        description.contains("45 minutes") && description.contains("already connected keep working"),
        "{description}"
    );
    assert_eq!(h.count("register-attempts:203.0.113.99").await, 0, "a refused registration is counted nowhere");
    assert_eq!(h.count("register-attempts:*").await, 20);
    assert_eq!(h.oauth_kv.keys().iter().filter(|k| k.starts_with("client:")).count(), 20, "the 21st is not stored");
    h.clock.advance_secs(45 * 60);
    assert_eq!(h.register_from(metadata.clone(), "203.0.113.99").await.status, 201, "a new window");
}

#[tokio::test]
async fn the_test_opt_out_turns_both_counts_off_and_needs_test_fixtures() {
    let metadata = json!({ "redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none" });
    let h = Harness::with_vars(&[("UNLIMITED_REGISTRATION", "1")]);
    for n in 1..=30 {
        assert_eq!(h.register_from(metadata.clone(), "127.0.0.1").await.status, 201, "registration {n}");
    }
    assert_eq!(h.count("register-attempts:127.0.0.1").await, 0);
    assert_eq!(h.count("register-attempts:*").await, 0);
    // Without ENABLE_TEST_FIXTURES=1 (no deployment sets it) the variable does nothing.
    let h = Harness::with_vars(&[("UNLIMITED_REGISTRATION", "1"), ("ENABLE_TEST_FIXTURES", "0")]);
    for _ in 0..10 {
        assert_eq!(h.register_from(metadata.clone(), "127.0.0.1").await.status, 201);
    }
    assert_eq!(h.register_from(metadata.clone(), "127.0.0.1").await.status, 429);
}

#[tokio::test]
async fn a_day_of_registrations_from_a_thousand_addresses_stores_at_most_480_clients() {
    let h = Harness::new();
    let metadata = json!({ "redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none" });
    let (mut stored, mut refused) = (0, 0);
    for hour in 0..24u32 {
        for n in 0..42u32 {
            let address = format!("10.{}.{}.1", hour, n);
            match h.register_from(metadata.clone(), &address).await.status {
                201 => stored += 1,
                429 => refused += 1,
                other => panic!("status {other}"),
            }
        }
        h.clock.advance_secs(3600);
    }
    assert_eq!((stored, refused), (480, 24 * 42 - 480));
}

#[tokio::test]
async fn a_registration_that_cannot_be_counted_is_not_stored() {
    let mut h = Harness::new();
    let kv = RefusingKv::around_cache(&mut h);
    kv.refusing.set(true);
    let metadata = json!({ "redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none" });
    let reply = h.register_from(metadata.clone(), "203.0.113.7").await;
    assert_eq!((reply.status, reply.error()), (429, "temporarily_unavailable"), "{}", reply.text);
    assert!(reply.header("retry-after").parse::<u64>().is_ok());
    assert!(h.oauth_kv.keys().is_empty(), "nothing was stored uncounted");
    kv.refusing.set(false);
    assert_eq!(h.register_from(metadata, "203.0.113.7").await.status, 201);
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
