//! Who is calling: the API key (header, query or bearer token) and the `Zotero-Write-Token` check.

use super::{Caller, Req};
use crate::dates;
use crate::error::{ApiError, ApiResult};
use crate::query;
use crate::state::State;

/// The API key from `Zotero-API-Key`, `?key=` or `Authorization: Bearer`, checked as Zotero checks it.
pub(super) fn authenticate(state: &State, req: &Req) -> ApiResult<Caller> {
    let mut key = req.header("zotero-api-key").filter(|k| !k.is_empty()).map(str::to_string);
    let query_key = query::parse_pairs(&req.query).into_iter().find(|(k, _)| k == "key").map(|(_, v)| v);
    if let Some(qk) = query_key {
        match &key {
            None => key = Some(qk),
            Some(k) if *k != qk => {
                return Err(ApiError::bad_request("Zotero-API-Key header and 'key' parameter differ"))
            }
            Some(_) => {}
        }
    }
    if key.is_none() {
        if let Some(auth) = req.header("authorization") {
            if auth.len() >= 6 && auth[..6].eq_ignore_ascii_case("bearer") {
                let token = auth[6..].trim_start();
                let ok =
                    auth[6..].starts_with(' ') && !token.is_empty() && token.bytes().all(|b| b.is_ascii_alphanumeric());
                if !ok {
                    return Err(ApiError::bad_request("Invalid Authorization header format"));
                }
                key = Some(token.to_string());
            }
        }
    }
    let Some(key) = key else {
        if req.is_write() {
            return Err(ApiError::forbidden("An API key is required for write requests."));
        }
        return Ok(Caller { api_key: None, grant: None });
    };
    let Some(grant) = state.keys.get(&key).cloned() else {
        return Err(ApiError::forbidden("Invalid key"));
    };
    Ok(Caller { api_key: Some(key), grant: Some(grant) })
}

/// `Zotero-Write-Token`: 5–32 characters, refused with 412 when already used successfully in the last 12 hours.
pub(super) fn write_token(state: &mut State, req: &Req, caller: &Caller) -> ApiResult<Option<(String, String)>> {
    let Some(token) = req.header("zotero-write-token").filter(|t| !t.is_empty()) else { return Ok(None) };
    if !(5..=32).contains(&token.len()) {
        return Err(ApiError::bad_request("Write token must be 5-32 characters in length"));
    }
    let Some(api_key) = caller.api_key.clone() else {
        return Err(ApiError::bad_request("Write token cannot be used without an API key"));
    };
    let now = dates::unix_now();
    state.write_tokens.retain(|_, t| t.expires_at > now);
    let id = (api_key, token.to_string());
    if state.write_tokens.contains_key(&id) {
        return Err(ApiError::precondition_failed("Write token already used"));
    }
    Ok(Some(id))
}
