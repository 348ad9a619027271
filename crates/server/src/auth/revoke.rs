//! Token revocation (RFC 7009), served by the token endpoint for a request with `token` and no `grant_type`.
//! Revoking an access token removes that token; revoking a refresh token (current or previous) removes the
//! whole grant and every token issued from it. Only the client a token was issued to can revoke it, and the
//! answer is always 200, so the endpoint does not reveal whether a token existed.

use super::crypto::{matches_hash, sha256_hex};
use super::error::AuthError;
use super::form::Params;
use super::http_util::{empty_response, no_store};
use super::storage::{split_token, Store, StoredClient};
use crate::platform::{HttpResponse, Platform};

pub async fn revoke(params: &Params, client: &StoredClient, platform: &Platform) -> Result<HttpResponse, AuthError> {
    let done = || Ok(no_store(empty_response(200)));
    let Some(token) = params.non_empty("token") else {
        return Err(AuthError::invalid_request("Token parameter is required"));
    };
    let Some((user_id, grant_id)) = split_token(token) else { return done() };
    let hash = sha256_hex(token);
    let store = Store::new(platform.oauth_kv.as_ref());
    // RFC 7009 §2.1: the hint says where to look first, not where to look only.
    if params.get("token_type_hint") == Some("refresh_token") {
        if !revoke_refresh(&store, user_id, grant_id, token, client).await? {
            revoke_access(&store, user_id, grant_id, &hash, client).await?;
        }
    } else if !revoke_access(&store, user_id, grant_id, &hash, client).await? {
        revoke_refresh(&store, user_id, grant_id, token, client).await?;
    }
    done()
}

async fn revoke_access(
    store: &Store<'_>,
    user_id: &str,
    grant_id: &str,
    hash: &str,
    client: &StoredClient,
) -> Result<bool, AuthError> {
    let Some(token) = store.token(user_id, grant_id, hash).await? else { return Ok(false) };
    if token.grant.client_id != client.client_id {
        return Ok(false);
    }
    store.delete_token(user_id, grant_id, hash).await?;
    Ok(true)
}

async fn revoke_refresh(
    store: &Store<'_>,
    user_id: &str,
    grant_id: &str,
    token: &str,
    client: &StoredClient,
) -> Result<bool, AuthError> {
    let Some(grant) = store.grant(user_id, grant_id).await? else { return Ok(false) };
    // Compared in constant time like every other secret: revocation must not become an oracle for the stored
    // refresh token ids.
    let is_stored = |id: Option<&str>| id.is_some_and(|id| matches_hash(token, id));
    let is_refresh =
        is_stored(grant.refresh_token_id.as_deref()) || is_stored(grant.previous_refresh_token_id.as_deref());
    if !is_refresh || grant.client_id != client.client_id {
        return Ok(false);
    }
    store.revoke_grant(user_id, grant_id).await?;
    Ok(true)
}
