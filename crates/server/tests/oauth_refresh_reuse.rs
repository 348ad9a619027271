//! Refresh token reuse detection (RFC 9700 §4.14.2): a refresh token that rotation retired coming back means
//! a copy is in someone else's hands, so the whole grant is revoked. The one-step grace for the previous token
//! stays, and a token that matches nothing revokes nothing.

mod oauth_support;

use oauth_support::*;
use serde_json::Value;
use zotero_mcp_core::platform::{KvStore, KvWrite};

/// Refreshes with `refresh_token` and returns the new `(access, refresh)` pair, asserting success.
async fn rotate(h: &Harness, client_id: &str, refresh_token: &str) -> (String, String) {
    let reply = h.refresh(client_id, refresh_token).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    (reply.json["access_token"].as_str().unwrap().to_owned(), reply.json["refresh_token"].as_str().unwrap().to_owned())
}

/// The one grant record in `OAUTH_KV`, parsed.
async fn grant_record(h: &Harness) -> (String, Value) {
    let keys = h.grant_keys().await;
    assert_eq!(keys.len(), 1, "{keys:?}");
    let text = h.oauth_kv.get(&keys[0]).await.unwrap().unwrap();
    (keys[0].clone(), serde_json::from_str(&text).unwrap())
}

fn assert_revoked_for_reuse(reply: &Reply) {
    assert_eq!((reply.status, reply.error()), (400, "invalid_grant"), "{}", reply.text);
    let description = reply.json["error_description"].as_str().unwrap();
    assert!(description.contains("already used"), "{description}");
    assert!(description.contains("revoked"), "{description}");
    assert!(description.contains("Connect the client"), "{description}");
    assert_eq!(reply.header("cache-control"), "no-store");
}

#[tokio::test]
async fn replaying_a_retired_refresh_token_revokes_the_whole_grant() {
    let h = Harness::new();
    let t = h.flow(&["zotero:read"]).await;
    let (_, r2) = rotate(&h, &t.client_id, &t.refresh).await;
    let (access3, r3) = rotate(&h, &t.client_id, &r2).await;
    assert!(h.token_works(&access3).await);

    // The first token is neither current (r3) nor previous (r2): someone kept a copy.
    let replay = h.refresh(&t.client_id, &t.refresh).await;
    assert_revoked_for_reuse(&replay);

    assert!(!h.token_works(&access3).await, "the current access token stops working at /mcp");
    assert!(!h.token_works(&t.access).await);
    let current = h.refresh(&t.client_id, &r3).await;
    assert_eq!((current.status, current.error()), (400, "invalid_grant"), "and so does the current refresh token");
    assert_eq!(h.refresh(&t.client_id, &r2).await.error(), "invalid_grant", "and the previous one");
    assert!(h.grant_keys().await.is_empty());
    assert!(h.oauth_kv.keys().iter().all(|k| !k.starts_with("token:")), "every access token of the grant is gone");
}

#[tokio::test]
async fn another_client_presenting_a_retired_token_revokes_the_grant_too() {
    // The token itself is the proof of a leak, whoever presents it.
    let h = Harness::new();
    let t = h.flow(&["zotero:read"]).await;
    let (_, r2) = rotate(&h, &t.client_id, &t.refresh).await;
    let (access3, _) = rotate(&h, &t.client_id, &r2).await;
    let mallory = h.public_client(REDIRECT).await;
    assert_revoked_for_reuse(&h.refresh(&mallory, &t.refresh).await);
    assert!(!h.token_works(&access3).await);
    assert!(h.grant_keys().await.is_empty());
}

#[tokio::test]
async fn the_previous_token_is_still_accepted_for_a_retry_and_revokes_nothing() {
    let h = Harness::new();
    let t = h.flow(&["zotero:read"]).await;
    let (access2, r2) = rotate(&h, &t.client_id, &t.refresh).await;
    // The answer carrying r2 may have been lost: r1 works once more, and nothing is revoked.
    let (access3, r3) = rotate(&h, &t.client_id, &t.refresh).await;
    assert!(h.token_works(&access2).await && h.token_works(&access3).await);
    assert_eq!(h.grant_keys().await.len(), 1);
    let (access4, _) = rotate(&h, &t.client_id, &r3).await;
    assert!(h.token_works(&access4).await);
    // r2 is the token that retry replaced; the client never had it, so its coming back is a copy too.
    assert_revoked_for_reuse(&h.refresh(&t.client_id, &r2).await);
    assert!(!h.token_works(&access4).await);
}

#[tokio::test]
async fn a_token_that_matches_nothing_revokes_nothing() {
    let h = Harness::new();
    let t = h.flow(&["zotero:read"]).await;
    let (_, r2) = rotate(&h, &t.client_id, &t.refresh).await;
    let (access3, r3) = rotate(&h, &t.client_id, &r2).await;
    // Anyone who knows the user and grant ids (they are in every token) can send this.
    let mut parts = r3.split(':');
    let (user, grant) = (parts.next().unwrap(), parts.next().unwrap());
    for junk in
        [format!("{user}:{grant}:junk"), format!("{user}:{grant}:{}", "A".repeat(32)), format!("{user}:{grant}:")]
    {
        let reply = h.refresh(&t.client_id, &junk).await;
        assert_eq!((reply.status, reply.error()), (400, "invalid_grant"), "{junk}");
        assert_eq!(reply.json["error_description"], "Invalid refresh token", "{junk}");
    }
    assert_eq!(h.grant_keys().await.len(), 1, "the grant is still there");
    assert!(h.token_works(&access3).await);
    assert_eq!(h.refresh(&t.client_id, &r3).await.status, 200, "and its current refresh token still works");
}

#[tokio::test]
async fn the_grant_remembers_only_its_last_twenty_retired_tokens() {
    let h = Harness::new();
    let t = h.flow(&["zotero:read"]).await;
    // Tokens r1..r26: using r1..r25 retires r1..r24 (r25 is the previous one, r26 the current one).
    let mut tokens = vec![t.refresh.clone()];
    for _ in 0..25 {
        let (_, next) = rotate(&h, &t.client_id, tokens.last().unwrap()).await;
        tokens.push(next);
    }
    let (_, grant) = grant_record(&h).await;
    assert_eq!(grant["retiredRefreshTokenIds"].as_array().map(Vec::len), Some(20), "{grant}");
    // r1..r4 are forgotten: refused like any unknown token, without revoking.
    let forgotten = h.refresh(&t.client_id, &tokens[0]).await;
    assert_eq!(forgotten.json["error_description"], "Invalid refresh token", "{}", forgotten.text);
    assert_eq!(h.grant_keys().await.len(), 1);
    // r5 is still remembered.
    assert_revoked_for_reuse(&h.refresh(&t.client_id, &tokens[4]).await);
    assert!(h.grant_keys().await.is_empty());
}

#[tokio::test]
async fn retired_tokens_are_stored_as_hashes_in_a_camel_case_field_left_out_while_empty() {
    let h = Harness::new();
    let t = h.flow(&["zotero:read"]).await;
    let (_, fresh) = grant_record(&h).await;
    assert!(fresh.get("retiredRefreshTokenIds").is_none(), "absent while empty: {fresh}");
    let (_, r2) = rotate(&h, &t.client_id, &t.refresh).await;
    let (_, once) = grant_record(&h).await;
    assert!(once.get("retiredRefreshTokenIds").is_none(), "r1 is the previous token, not retired yet: {once}");
    rotate(&h, &t.client_id, &r2).await;
    let (_, twice) = grant_record(&h).await;
    let expected = zotero_mcp_server::auth::crypto::sha256_hex(&t.refresh);
    assert_eq!(twice["retiredRefreshTokenIds"], serde_json::json!([expected]), "{twice}");
    let secret = t.refresh.rsplit(':').next().unwrap();
    assert!(!twice.to_string().contains(secret), "no secret is stored");
}

#[tokio::test]
async fn a_grant_record_without_the_field_still_refreshes() {
    // As workers-oauth-provider writes it (or this server before the field): no `retiredRefreshTokenIds`.
    let h = Harness::new();
    let t = h.flow(&["zotero:read"]).await;
    let (_, r2) = rotate(&h, &t.client_id, &t.refresh).await;
    let (_, r3) = rotate(&h, &t.client_id, &r2).await;
    let (key, mut grant) = grant_record(&h).await;
    assert!(grant.as_object_mut().unwrap().remove("retiredRefreshTokenIds").is_some());
    grant["futureField"] = Value::Bool(true);
    h.oauth_kv.put(&key, &grant.to_string(), KvWrite::ExpiresIn(3600)).await.unwrap();

    // The previous token (grace) and then the current one work as before.
    let (_, r4) = rotate(&h, &t.client_id, &r2).await;
    let (access5, r5) = rotate(&h, &t.client_id, &r4).await;
    assert!(h.token_works(&access5).await);
    // r1 was retired before the field was dropped, so it is now just unknown: refused, nothing revoked.
    let unknown = h.refresh(&t.client_id, &t.refresh).await;
    assert_eq!(unknown.json["error_description"], "Invalid refresh token", "{}", unknown.text);
    assert!(h.token_works(&access5).await);
    // The list starts again from the rotations made since, and unknown fields are kept.
    let (_, grant) = grant_record(&h).await;
    assert_eq!(grant["futureField"], true);
    assert_eq!(grant["retiredRefreshTokenIds"].as_array().map(Vec::len), Some(2), "r3 and r2: {grant}");
    assert_revoked_for_reuse(&h.refresh(&t.client_id, &r3).await);
    assert_eq!(h.refresh(&t.client_id, &r5).await.error(), "invalid_grant");
}
