//! Refresh-token rotation and reuse detection (RFC 9700 §4.14.2).
//!
//! Every refresh replaces the grant's refresh token. The token just used becomes the *previous* one and may be
//! used once more within [`RETRY_WINDOW_SECS`], while the token that replaced it has not been used: that is a
//! client retrying a refresh whose answer it never got (or two of its processes refreshing at once). Any other
//! token of the grant's history coming back means two parties hold its tokens, and the whole grant is revoked.
//!
//! "Of the grant's history" must be provable, or anyone who knows a grant id (it is in every token) could revoke
//! it, and it must not need a list of every token ever issued, or a thief could refresh until the owner's token
//! falls off the list (which is how the old rule of "the last 20 retired tokens" was outlasted). So every
//! refresh token this server issues ends in a tag, an HMAC of the rest under a key kept in the grant
//! (`crypto::refresh_token_tag`): a tagged token that is neither current nor a retry was issued by this grant
//! and retired, however long ago. Tokens issued before the grant had a key (by the TypeScript server, or by this
//! one before tags) carry no tag; the hashes of those that retire are listed (`retiredRefreshTokenIds`), which
//! stops growing once the untagged tokens are gone.
//!
//! Tagged tokens stay `userId:grantId:secret`, the secret 54 characters instead of 32: workers-oauth-provider
//! stores and compares only their hash, so it refreshes them like its own.

use super::crypto::{matches_hash, random_string, refresh_token_tag, secrets_equal, sha256_hex, CryptoError, PropsKey};
use super::storage::StoredGrant;

/// How long after a rotation the token it replaced may be used once more. A client that lost the answer
/// retries at once (its HTTP library, or its next step); one that waits longer has no token it can trust
/// anyway, and the longer the window, the longer a copy of the token taken just before the rotation is worth
/// having. A minute covers a retry after a timeout and two processes of one client refreshing together; it is
/// also the largest grace period identity providers commonly offer for rotation (Okta allows 0–60 s).
pub const RETRY_WINDOW_SECS: u64 = 60;
/// Random characters of a refresh token's secret (as workers-oauth-provider draws them).
const RANDOM_CHARS: usize = 32;
/// Characters of the tag after them: 16 bytes of HMAC, unpadded base64url.
const TAG_CHARS: usize = 22;
/// Characters of a family key (`random_string`, 6 bits each: 258 bits).
const FAMILY_KEY_CHARS: usize = 43;

/// What a presented refresh token is to its grant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Presented {
    /// The grant's current refresh token.
    Current,
    /// The previous one, within its window and before the current one was used.
    Retry,
    /// A token the grant issued that no longer works: a copy is in someone else's hands.
    Replayed,
    /// Nothing this grant issued, as far as can be proven; revokes nothing.
    Unknown,
}

/// Classifies `presented` against `grant` at `now` (seconds). Every comparison is of hashes or tags, in
/// constant time.
pub fn classify(grant: &StoredGrant, presented: &str, now: u64) -> Presented {
    let stored = |id: Option<&str>| id.is_some_and(|id| matches_hash(presented, id));
    if stored(grant.refresh_token_id.as_deref()) {
        return Presented::Current;
    }
    if stored(grant.previous_refresh_token_id.as_deref()) {
        // Without an allowance written for this very token (a grant the TypeScript server or this one before the
        // rule last rotated) nothing says when it was replaced, so it gets no retry.
        let in_window = grant.previous_refresh_retry_until().is_some_and(|until| now <= until);
        return if in_window { Presented::Retry } else { Presented::Replayed };
    }
    if is_tagged_by(grant, presented) || grant.is_retired_refresh_token(presented) {
        Presented::Replayed
    } else {
        Presented::Unknown
    }
}

/// A new refresh token of `grant`, tagged with its family key (made now if the grant has none yet).
pub fn new_refresh_token(grant: &mut StoredGrant) -> Result<String, CryptoError> {
    let key = match grant.refresh_family_key() {
        Some(key) => key.to_owned(),
        None => {
            let key = random_string(FAMILY_KEY_CHARS)?;
            grant.set_refresh_family_key(key.clone());
            key
        }
    };
    let mut token = format!("{}:{}:{}", grant.user_id, grant.id, random_string(RANDOM_CHARS)?);
    let tag = refresh_token_tag(&key, &token);
    token.push_str(&tag);
    Ok(token)
}

/// Whether `token` carries a valid tag under `grant`'s family key, so this grant issued it.
fn is_tagged_by(grant: &StoredGrant, token: &str) -> bool {
    let Some(key) = grant.refresh_family_key() else { return false };
    // The bytes after the last `:` (a byte scan: a reverse `str` split would link a searcher of its own).
    let secret_len = token.bytes().rev().position(|b| b == b':').unwrap_or(token.len());
    if !token.is_ascii() || secret_len != RANDOM_CHARS + TAG_CHARS {
        return false;
    }
    let (body, tag) = token.split_at(token.len() - TAG_CHARS);
    secrets_equal(tag, &refresh_token_tag(key, body))
}

/// Moves `grant` on after `presented`, classified as `how` ([`Presented::Current`] or [`Presented::Retry`]),
/// was accepted and `new_token` (from [`new_refresh_token`]) issued in its place. `presented_wrapped` is the
/// props key as stored for `presented`; `key` is that props key. The record keeps a fixed set of fields
/// whatever the number of rotations: current, previous, the retry allowance, the family key, and the list of
/// untagged retired tokens, which only untagged tokens enter.
pub fn rotate(
    grant: &mut StoredGrant,
    presented: &str,
    how: Presented,
    presented_wrapped: String,
    new_token: &str,
    key: &PropsKey,
    now: u64,
) -> Result<(), CryptoError> {
    if how == Presented::Retry {
        // The retry is the previous token's one use. The current token it replaces was issued with a tag (the
        // allowance is written only by a rotation here, which tags what it issues), so it is recognised if it
        // ever comes back; the previous token was listed when it was used as the current one, if untagged.
        grant.clear_previous_refresh_token();
    } else {
        // The previous token is replaced. Untagged and with no allowance of ours, it was put there by a server
        // that tags nothing and was never listed: list it now.
        if let Some(previous) = grant.previous_refresh_token_id.clone() {
            if grant.previous_refresh_retry_until().is_none() {
                grant.retire_refresh_token_id(previous);
            }
        }
        let hash = sha256_hex(presented);
        // An untagged token leaving the current place is listed at once, while it is in hand: once it is only a
        // previous token's hash, nothing tells whether it carried a tag.
        if !is_tagged_by(grant, presented) {
            grant.retire_refresh_token_id(hash.clone());
        }
        grant.allow_previous_refresh_retry(&hash, now.saturating_add(RETRY_WINDOW_SECS));
        grant.previous_refresh_token_id = Some(hash);
        grant.previous_refresh_token_wrapped_key = Some(presented_wrapped);
    }
    grant.refresh_token_id = Some(sha256_hex(new_token));
    grant.refresh_token_wrapped_key = Some(key.wrap_for(new_token)?);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grant() -> StoredGrant {
        serde_json::from_value(serde_json::json!({ "id": "g", "clientId": "c", "userId": "owner",
            "encryptedProps": "AAAA", "createdAt": 1 }))
        .unwrap()
    }

    #[test]
    fn tags_prove_a_token_came_from_its_own_grant() {
        let mut g = grant();
        let token = new_refresh_token(&mut g).unwrap();
        assert!(token.starts_with("owner:g:"));
        assert_eq!(token.len(), "owner:g:".len() + RANDOM_CHARS + TAG_CHARS);
        assert!(is_tagged_by(&g, &token));
        // Another grant (another key) did not issue it, and no edit of it passes.
        let mut other = grant();
        new_refresh_token(&mut other).unwrap();
        assert!(!is_tagged_by(&other, &token));
        let mut altered = token.clone().into_bytes();
        altered[10] = if altered[10] == b'A' { b'B' } else { b'A' };
        assert!(!is_tagged_by(&g, &String::from_utf8(altered).unwrap()));
        // Untagged tokens, odd lengths and non-ASCII input are simply not tagged (no panic on a char boundary).
        for junk in ["owner:g:".to_owned() + &"A".repeat(32), "owner:g:".to_owned() + &"é".repeat(27), String::new()] {
            assert!(!is_tagged_by(&g, &junk), "{junk}");
        }
        assert!(!is_tagged_by(&grant(), &token), "a grant without a key recognises nothing");
    }

    #[test]
    fn the_family_key_is_made_once() {
        let mut g = grant();
        new_refresh_token(&mut g).unwrap();
        let key = g.refresh_family_key().unwrap().to_owned();
        assert_eq!(key.len(), FAMILY_KEY_CHARS);
        new_refresh_token(&mut g).unwrap();
        assert_eq!(g.refresh_family_key(), Some(key.as_str()));
    }
}
