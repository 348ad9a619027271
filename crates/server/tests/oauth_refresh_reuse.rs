//! Refresh token reuse detection (RFC 9700 §4.14.2): a refresh token that rotation retired coming back means
//! a copy is in someone else's hands, so the whole grant is revoked. The previous token works once, within a
//! minute of the rotation, for a client whose answer was lost; a token that matches nothing revokes nothing.

mod oauth_support;

use oauth_support::*;
use serde_json::Value;
use zotero_mcp_core::platform::{KvStore, KvWrite};
use zotero_mcp_server::auth::crypto::sha256_hex;

/// How long after a rotation the previous refresh token may be used once more (`auth::rotation`).
const RETRY_WINDOW_SECS: u64 = 60;

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
async fn a_lost_answer_retried_once_within_the_window_works() {
    let h = Harness::new();
    let t = h.flow(&["zotero:read"]).await;
    let (access2, r2) = rotate(&h, &t.client_id, &t.refresh).await;
    // The answer carrying r2 may have been lost: within the minute, r1 works once more, and nothing is revoked.
    h.clock.advance_secs(RETRY_WINDOW_SECS);
    let (access3, r3) = rotate(&h, &t.client_id, &t.refresh).await;
    assert!(h.token_works(&access2).await && h.token_works(&access3).await);
    assert_eq!(h.grant_keys().await.len(), 1);
    let (access4, _) = rotate(&h, &t.client_id, &r3).await;
    assert!(h.token_works(&access4).await);
    // r2 is the token that retry replaced; the client never had it, so its coming back is a copy.
    assert_revoked_for_reuse(&h.refresh(&t.client_id, &r2).await);
    assert!(!h.token_works(&access4).await);
}

#[tokio::test]
async fn the_previous_token_is_good_for_one_retry_only() {
    let h = Harness::new();
    let t = h.flow(&["zotero:read"]).await;
    let (_, r2) = rotate(&h, &t.client_id, &t.refresh).await;
    let (access3, _) = rotate(&h, &t.client_id, &t.refresh).await;
    // A second retry with r1, even at once, is a copy being used.
    assert_revoked_for_reuse(&h.refresh(&t.client_id, &t.refresh).await);
    assert!(!h.token_works(&access3).await);
    assert_eq!(h.refresh(&t.client_id, &r2).await.error(), "invalid_grant");
    assert!(h.grant_keys().await.is_empty());
}

#[tokio::test]
async fn a_retry_after_the_current_token_was_used_revokes() {
    let h = Harness::new();
    let t = h.flow(&["zotero:read"]).await;
    let (_, r2) = rotate(&h, &t.client_id, &t.refresh).await;
    // The client got r2 and used it, within the same minute: r1 has no use left.
    let (access3, r3) = rotate(&h, &t.client_id, &r2).await;
    assert_revoked_for_reuse(&h.refresh(&t.client_id, &t.refresh).await);
    assert!(!h.token_works(&access3).await);
    assert_eq!(h.refresh(&t.client_id, &r3).await.error(), "invalid_grant");
}

#[tokio::test]
async fn a_retry_after_the_window_revokes() {
    let h = Harness::new();
    let t = h.flow(&["zotero:read"]).await;
    let (access2, r2) = rotate(&h, &t.client_id, &t.refresh).await;
    h.clock.advance_secs(RETRY_WINDOW_SECS + 1);
    assert_revoked_for_reuse(&h.refresh(&t.client_id, &t.refresh).await);
    assert!(!h.token_works(&access2).await);
    assert_eq!(h.refresh(&t.client_id, &r2).await.error(), "invalid_grant", "the current token went with it");
    assert!(h.grant_keys().await.is_empty());
}

#[tokio::test]
async fn reusing_the_previous_token_21_times_revokes_at_the_second_use() {
    // The attack that outlasted the old rule: the previous token worked any number of times, each use retiring
    // the owner's current token into a list of 20, so after 21 uses the owner's token was merely unknown.
    let h = Harness::new();
    let owner = h.flow(&["zotero:read"]).await;
    let (_, owners_current) = rotate(&h, &owner.client_id, &owner.refresh).await;
    let stolen = owner.refresh.clone();
    let mut thiefs_access = Vec::new();
    let mut outcomes = Vec::new();
    for _ in 0..21 {
        let reply = h.refresh(&owner.client_id, &stolen).await;
        if reply.status == 200 {
            thiefs_access.push(reply.json["access_token"].as_str().unwrap().to_owned());
        }
        outcomes.push((reply.status, reply.error().to_owned()));
    }
    assert_eq!(outcomes[0], (200, String::new()), "the first reuse is indistinguishable from a retry");
    assert_eq!(outcomes[1], (400, "invalid_grant".to_owned()), "the second is not");
    assert!(outcomes[1..].iter().all(|o| o.0 == 400), "{outcomes:?}");
    assert!(h.grant_keys().await.is_empty(), "the grant was revoked");
    for access in &thiefs_access {
        assert!(!h.token_works(access).await, "the thief's access tokens stop working");
    }
    assert_eq!(h.refresh(&owner.client_id, &owners_current).await.error(), "invalid_grant");
}

#[tokio::test]
async fn a_thief_rotating_forward_cannot_outlast_the_owners_token() {
    // A copy of the current token used first: the thief rotates as often as it likes, and the owner's token,
    // however far back, is still recognised as the grant's when it comes back.
    let h = Harness::new();
    let owner = h.flow(&["zotero:read"]).await;
    let mut thiefs = owner.refresh.clone();
    let mut thiefs_access = String::new();
    for _ in 0..25 {
        h.clock.advance_secs(120);
        (thiefs_access, thiefs) = rotate(&h, &owner.client_id, &thiefs).await;
    }
    assert_revoked_for_reuse(&h.refresh(&owner.client_id, &owner.refresh).await);
    assert!(!h.token_works(&thiefs_access).await);
    assert_eq!(h.refresh(&owner.client_id, &thiefs).await.error(), "invalid_grant");
    assert!(h.grant_keys().await.is_empty());
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
async fn the_grant_record_stays_the_same_size_however_often_it_rotates() {
    let h = Harness::new();
    let t = h.flow(&["zotero:read"]).await;
    let (_, mut current) = rotate(&h, &t.client_id, &t.refresh).await;
    let (_, after_one) = grant_record(&h).await;
    let size = after_one.to_string().len();
    for n in 0..200 {
        h.clock.advance_secs(30);
        let (_, next) = rotate(&h, &t.client_id, &current).await;
        if n % 3 == 0 {
            // Every third rotation the answer is "lost" and the client retries with the token it sent.
            (_, current) = rotate(&h, &t.client_id, &current).await;
        } else {
            current = next;
        }
    }
    let (_, grant) = grant_record(&h).await;
    assert_eq!(grant.to_string().len(), size, "{grant}");
    assert!(grant.get("retiredRefreshTokenIds").is_none(), "no list of tokens: {grant}");
    // And yet the oldest token is still known as the grant's.
    assert_revoked_for_reuse(&h.refresh(&t.client_id, &t.refresh).await);
}

#[tokio::test]
async fn rotation_state_is_stored_as_hashes_and_a_key_in_camel_case_fields() {
    let h = Harness::new();
    let t = h.flow(&["zotero:read"]).await;
    let (_, fresh) = grant_record(&h).await;
    assert!(fresh.get("previousRefreshTokenRetry").is_none(), "no previous token yet: {fresh}");
    let family_key = fresh["refreshTokenFamilyKey"].as_str().unwrap().to_owned();
    assert_eq!(family_key.len(), 43);
    let (_, r2) = rotate(&h, &t.client_id, &t.refresh).await;
    let (_, once) = grant_record(&h).await;
    let previous = zotero_mcp_server::auth::crypto::sha256_hex(&t.refresh);
    assert_eq!(once["previousRefreshTokenId"], previous.as_str());
    assert_eq!(
        once["previousRefreshTokenRetry"],
        serde_json::json!({ "id": previous, "until": NOW_MS / 1000 + RETRY_WINDOW_SECS }),
        "{once}"
    );
    assert_eq!(once["refreshTokenFamilyKey"], family_key.as_str(), "the key never changes");
    // A retry spends the previous token: it is gone from the record (the TypeScript server refuses it too).
    rotate(&h, &t.client_id, &t.refresh).await;
    let (_, retried) = grant_record(&h).await;
    assert!(retried.get("previousRefreshTokenId").is_none() && retried.get("previousRefreshTokenRetry").is_none());
    for token in [&t.refresh, &r2] {
        let secret = token.rsplit(':').next().unwrap();
        assert!(!retried.to_string().contains(secret), "no secret is stored");
    }
}

#[tokio::test]
async fn a_grant_record_from_before_tags_still_refreshes_and_its_old_tokens_are_remembered() {
    // As workers-oauth-provider (or this server before tags) writes it: untagged tokens, a previous token without
    // a retry allowance, perhaps a list of retired tokens, fields this version does not know.
    let h = Harness::new();
    let t = h.flow(&["zotero:read"]).await;
    let (_, r2) = rotate(&h, &t.client_id, &t.refresh).await;
    let (key, mut grant) = grant_record(&h).await;
    let record = grant.as_object_mut().unwrap();
    for field in ["refreshTokenFamilyKey", "previousRefreshTokenRetry"] {
        assert!(record.remove(field).is_some(), "{field}");
    }
    record.insert("retiredRefreshTokenIds".into(), serde_json::json!([sha256_hex("owner:g:an-older-token")]));
    record.insert("futureField".into(), Value::Bool(true));
    h.oauth_kv.put(&key, &grant.to_string(), KvWrite::ExpiresIn(3600)).await.unwrap();
    // Without the key, r1 and r2 are as good as untagged here.

    // The current token refreshes; the grant gets a key, and both old tokens are listed.
    let (access3, r3) = rotate(&h, &t.client_id, &r2).await;
    assert!(h.token_works(&access3).await);
    let (_, grant) = grant_record(&h).await;
    assert_eq!(grant["futureField"], true, "unknown fields are kept");
    assert!(grant["refreshTokenFamilyKey"].is_string());
    let listed = grant["retiredRefreshTokenIds"].as_array().unwrap();
    assert_eq!(listed.len(), 3, "the older token, r1 and r2: {grant}");
    // Nothing more is listed from here on: the tokens issued now are tagged.
    let (_, r4) = rotate(&h, &t.client_id, &r3).await;
    let (access5, _) = rotate(&h, &t.client_id, &r4).await;
    let (_, grant) = grant_record(&h).await;
    assert_eq!(grant["retiredRefreshTokenIds"].as_array().map(Vec::len), Some(3), "{grant}");
    assert!(h.token_works(&access5).await);
    // The untagged r1 is still recognised, and revokes.
    assert_revoked_for_reuse(&h.refresh(&t.client_id, &t.refresh).await);
}

#[tokio::test]
async fn a_previous_token_without_a_retry_allowance_is_refused_and_revokes() {
    // Nothing in a record another server wrote says when its previous token was replaced, so it gets no retry.
    let h = Harness::new();
    let t = h.flow(&["zotero:read"]).await;
    let (access2, _) = rotate(&h, &t.client_id, &t.refresh).await;
    let (key, mut grant) = grant_record(&h).await;
    assert!(grant.as_object_mut().unwrap().remove("previousRefreshTokenRetry").is_some());
    h.oauth_kv.put(&key, &grant.to_string(), KvWrite::ExpiresIn(3600)).await.unwrap();
    assert_revoked_for_reuse(&h.refresh(&t.client_id, &t.refresh).await);
    assert!(!h.token_works(&access2).await);
}
