//! The bearer check in front of `/mcp`: which grant, if any, a request carries.
//!
//! A token is valid while its record exists and has not expired, while its grant exists (revocation removes
//! the grant first in effect, even where KV has not yet caught up with every token deletion), and when the
//! request URL is within its audience (RFC 8707; checked on every request, not only at issue). The grant's
//! scopes are those the person ticked (the encrypted props), narrowed by the token's own scope.

use super::crypto::{sha256_hex, PropsKey};
use super::error::AuthError;
use super::http_util::{header, json_response, no_store, request_origin, request_url};
use super::metadata::PRM_PATH;
use super::storage::{split_token, Props, Store};
use super::{log, resource, Grant, Scope};
use crate::platform::{HttpRequest, HttpResponse, Platform};

/// The bearer token of a request's `Authorization` header, if it has a non-empty one.
pub fn presented_token(request: &HttpRequest) -> Option<&str> {
    let value = header(request, http::header::AUTHORIZATION)?;
    let (scheme, rest) = value.split_once(' ')?;
    Some(rest.trim()).filter(|t| scheme.eq_ignore_ascii_case("bearer") && !t.is_empty())
}

/// The 401 of a server guarded by one fixed token (no OAuth discovery to point at).
pub fn static_token_refusal() -> HttpResponse {
    let body = serde_json::json!({
        "error": "invalid_token",
        "error_description": "This server needs `Authorization: Bearer <token>` with the token it was started with (ZOTERO_MCP_TOKEN).",
    });
    crate::respond::with_header(
        no_store(json_response(401, &body)),
        http::header::WWW_AUTHENTICATE,
        "Bearer realm=\"zotero-mcp\"",
    )
}

/// The grant of a request to a protected route, or the 401 that refuses it.
pub async fn authenticate(request: &HttpRequest, platform: &Platform) -> Result<Grant, Box<HttpResponse>> {
    let metadata_url = format!("{}{PRM_PATH}{}", request_origin(request), request.uri().path());
    let challenge = |error: Option<(&str, Option<&str>)>| {
        let mut value = format!("Bearer realm=\"OAuth\", resource_metadata=\"{metadata_url}\"");
        if let Some((code, description)) = error {
            value.push_str(&format!(", error=\"{code}\""));
            if let Some(description) = description {
                value.push_str(&format!(", error_description=\"{description}\""));
            }
        }
        value
    };
    let refuse = |description: &str, challenge_description: Option<&str>| {
        let body = serde_json::json!({ "error": "invalid_token", "error_description": description });
        let mut response = no_store(json_response(401, &body));
        if let Ok(value) = http::HeaderValue::from_str(&challenge(Some(("invalid_token", challenge_description)))) {
            response.headers_mut().insert(http::header::WWW_AUTHENTICATE, value);
        }
        Box::new(response)
    };

    let Some(token) = presented_token(request) else {
        // No credentials at all: a bare challenge (RFC 6750 §3.1), which starts discovery in MCP clients.
        let mut response = no_store(super::http_util::empty_response(401));
        if let Ok(value) = http::HeaderValue::from_str(&challenge(None)) {
            response.headers_mut().insert(http::header::WWW_AUTHENTICATE, value);
        }
        return Err(Box::new(response));
    };
    let Some((user_id, grant_id)) = split_token(token) else {
        return Err(refuse("Invalid access token", None));
    };
    let store = Store::new(platform.oauth_kv.as_ref());
    let hash = sha256_hex(token);
    // The token and its grant are named by the token itself, so both are read at once: one bulk KV read.
    let (record, grant_exists) = match store.token_and_grant(user_id, grant_id, &hash).await {
        Ok(found) => found,
        Err(e) => return Err(Box::new(e.into_response())),
    };
    let Some(record) = record else {
        return Err(refuse("Invalid access token", None));
    };
    if record.expires_at < platform.clock.now_secs() {
        return Err(refuse("Access token expired", None));
    }
    if let Some(audience) = &record.audience {
        let url = request_url(request);
        if !audience.values().iter().any(|a| resource::audience_matches(&url, a)) {
            return Err(refuse("Token audience does not match resource server", Some("Invalid audience")));
        }
    }
    // A revoked grant closes every token of it, even where a token's deletion has not arrived yet.
    if !grant_exists {
        return Err(refuse("Invalid access token", None));
    }
    let props = PropsKey::unwrap_with(token, &record.wrapped_encryption_key)
        .and_then(|key| key.decrypt(&record.grant.encrypted_props))
        .map_err(AuthError::from)
        .and_then(|plain| {
            serde_json::from_slice::<Props>(&plain)
                .map_err(|e| AuthError::Corrupt { key: format!("props of grant {grant_id}"), reason: e.to_string() })
        });
    let props = match props {
        Ok(props) => props,
        Err(e) => {
            log::warn(&e.to_string());
            return Err(refuse("Invalid access token", None));
        }
    };
    let token_scope = record.scope.as_ref().unwrap_or(&record.grant.scope);
    Ok(grant_from(props, token_scope))
}

/// The ticked scopes, narrowed by the token's scope; no scope left means read access, as in the TypeScript
/// project (a grant always carries at least read).
fn grant_from(props: Props, token_scope: &[String]) -> Grant {
    let mut scopes: Vec<Scope> = Vec::new();
    for name in &props.scopes {
        if let Some(scope) = Scope::parse(name) {
            if token_scope.iter().any(|t| t == name) && !scopes.contains(&scope) {
                scopes.push(scope);
            }
        }
    }
    if scopes.is_empty() {
        return Grant::read_only(props.user_id);
    }
    Grant { user_id: props.user_id, scopes }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn props(scopes: &[&str]) -> Props {
        Props { user_id: "owner".into(), scopes: scopes.iter().map(|s| s.to_string()).collect() }
    }

    #[test]
    fn token_scope_narrows_the_ticked_scopes() {
        let both = ["zotero:read".to_owned(), "zotero:write".to_owned()];
        assert!(grant_from(props(&["zotero:read", "zotero:write"]), &both).allows(Scope::Write));
        assert!(!grant_from(props(&["zotero:read", "zotero:write"]), &both[..1]).allows(Scope::Write));
        assert!(!grant_from(props(&["zotero:read"]), &both).allows(Scope::Write));
        assert_eq!(grant_from(props(&[]), &both), Grant::read_only("owner"));
    }
}
