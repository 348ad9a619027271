//! What `OAUTH_KV` holds after every kind of flow: the layout of workers-oauth-provider, and no secret.

mod oauth_support;

use oauth_support::*;
use serde_json::Value;
use zotero_mcp_core::platform::KvStore;

#[tokio::test]
async fn no_secret_is_stored_in_any_kv_value() {
    let h = Harness::new();
    let (id, client_secret) = h.confidential_client(REDIRECT).await;
    let path = h.authorize_path(&id, REDIRECT, &[]);
    let code = h.code(&path, &["zotero:read", "zotero:write"]).await;
    let basic = format!(
        "Basic {}",
        base64::Engine::encode(&base64::engine::general_purpose::STANDARD, format!("{id}:{client_secret}"))
    );
    let first = h
        .token_with(
            &[("grant_type", "authorization_code"), ("code", &code), ("code_verifier", VERIFIER)],
            &[("authorization", &basic)],
        )
        .await;
    assert_eq!(first.status, 200, "{}", first.text);
    let second = h
        .token_with(
            &[("grant_type", "refresh_token"), ("refresh_token", first.json["refresh_token"].as_str().unwrap())],
            &[("authorization", &basic)],
        )
        .await;
    let public = h.flow(&["zotero:read"]).await;
    // And a code still pending, of another client (re-authorizing the same one would replace its grant).
    let other = h.public_client(REDIRECT).await;
    let pending = h.code(&h.authorize_path(&other, REDIRECT, &[]), &["zotero:read"]).await;

    let secrets = [
        client_secret.as_str(),
        code.as_str(),
        pending.as_str(),
        VERIFIER,
        PASSWORD,
        first.json["access_token"].as_str().unwrap(),
        first.json["refresh_token"].as_str().unwrap(),
        second.json["access_token"].as_str().unwrap(),
        second.json["refresh_token"].as_str().unwrap(),
        public.access.as_str(),
        public.refresh.as_str(),
    ];
    let dump = h.oauth_dump().await;
    assert_eq!(dump.iter().filter(|(k, _)| k.starts_with("grant:")).count(), 3, "two active grants and a pending one");
    for (key, value) in dump.iter().chain(dump_cache(&h).await.iter()) {
        for secret in secrets {
            // The secret part of a token is what must never appear (its user and grant ids are key parts).
            let secret_part = secret.rsplit(':').next().unwrap();
            assert!(!value.contains(secret_part) && !key.contains(secret_part), "{key} holds a secret");
        }
        // Props (user id and ticked scopes) are only in encrypted form.
        assert!(!value.contains("\"userId\":\"owner\",\"scopes\""), "{key} holds plaintext props");
    }
}

async fn dump_cache(h: &Harness) -> Vec<(String, String)> {
    dump(&h.cache_kv).await
}

#[tokio::test]
async fn records_use_the_workers_oauth_provider_layout() {
    let h = Harness::new();
    let t = h.flow(&["zotero:read"]).await;
    let (user, grant_id) = {
        let mut parts = t.access.split(':');
        (parts.next().unwrap().to_owned(), parts.next().unwrap().to_owned())
    };
    let grant: Value =
        serde_json::from_str(&h.oauth_kv.get(&format!("grant:{user}:{grant_id}")).await.unwrap().unwrap()).unwrap();
    for field in [
        "id",
        "clientId",
        "userId",
        "scope",
        "metadata",
        "encryptedProps",
        "createdAt",
        "expiresAt",
        "refreshTokenId",
        "refreshTokenWrappedKey",
        "authCodeId",
        "resource",
        "redirectUri",
    ] {
        assert!(grant.get(field).is_some(), "grant lacks {field}: {grant}");
    }
    for gone in ["authCodeWrappedKey", "codeChallenge", "codeChallengeMethod"] {
        assert!(grant.get(gone).is_none(), "{gone} must be removed after the exchange");
    }
    assert_eq!(grant["metadata"]["clientName"], "Test Client");
    let hash = zotero_mcp_server::auth::crypto::sha256_hex(&t.access);
    let token: Value =
        serde_json::from_str(&h.oauth_kv.get(&format!("token:{user}:{grant_id}:{hash}")).await.unwrap().unwrap())
            .unwrap();
    assert_eq!(token["id"], hash);
    assert_eq!(token["audience"], MCP_URL);
    assert_eq!(token["expiresAt"], token["createdAt"].as_u64().unwrap() + 3600);
    assert_eq!(token["grant"]["clientId"], t.client_id.as_str());
    let listed = h.oauth_kv.list("grant:", None, 10).await.unwrap();
    assert_eq!(
        listed.keys[0].expiration,
        Some(NOW_MS / 1000 + 30 * 24 * 3600),
        "the grant lives as long as its refresh token"
    );
    let wrapped = base64::Engine::decode(
        &base64::engine::general_purpose::STANDARD,
        token["wrappedEncryptionKey"].as_str().unwrap(),
    )
    .unwrap();
    assert_eq!(wrapped.len(), 40, "AES-KW of a 32-byte key");
}

/// Workers KV is eventually consistent: an expired value can linger for a while. Every expiry is therefore
/// re-checked against the time stored in the record. These rewrite records without a KV expiry to stand for
/// a value KV has not dropped yet.
#[tokio::test]
async fn expiry_is_rechecked_against_stored_times_not_left_to_kv() {
    use zotero_mcp_core::platform::KvWrite;
    let h = Harness::new();
    // An access token past its expiresAt.
    let t = h.flow(&["zotero:read"]).await;
    let token_key = h.oauth_kv.keys().into_iter().find(|k| k.starts_with("token:")).unwrap();
    let record = h.oauth_kv.get(&token_key).await.unwrap().unwrap();
    h.oauth_kv.put(&token_key, &record, KvWrite::Forever).await.unwrap();
    h.clock.advance_secs(3601);
    assert!(!h.token_works(&t.access).await, "an access token past expiresAt is refused even if KV still has it");

    // A pending code past its ten minutes.
    let client = h.public_client(REDIRECT).await;
    let code = h.code(&h.authorize_path(&client, REDIRECT, &[]), &["zotero:read"]).await;
    let grant_key = format!("grant:{}", code.rsplit_once(':').unwrap().0);
    let grant = h.oauth_kv.get(&grant_key).await.unwrap().unwrap();
    h.oauth_kv.put(&grant_key, &grant, KvWrite::Forever).await.unwrap();
    h.clock.advance_secs(601);
    let reply = h.exchange(&client, &code).await;
    assert_eq!((reply.status, reply.error()), (400, "invalid_grant"), "{}", reply.text);
}
