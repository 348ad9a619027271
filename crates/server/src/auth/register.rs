//! Dynamic Client Registration (RFC 7591). Deprecated by MCP in favour of metadata documents, but Claude Code,
//! older Claude and ChatGPT builds and most other clients still register this way.

use serde_json::{json, Map, Value};
use zotero_mcp_core::platform::KvWrite;

use super::client::ClientMetadata;
use super::crypto::{random_string, sha256_hex};
use super::error::{AuthError, ErrorCode};
use super::http_util::{header, json_response, no_store};
use super::storage::{Store, CLIENT_REGISTRATION_TTL_SECS};
use crate::platform::{HttpRequest, HttpResponse, Platform};

/// Largest registration request accepted, in bytes. Real registrations are a few hundred bytes. The record is
/// stored for 90 days at an unauthenticated request, so a megabyte each (the old limit) let anyone fill the
/// store; `client` bounds each field as well.
pub const MAX_BODY_BYTES: usize = 16 * 1024;

pub async fn register(request: &HttpRequest, platform: &Platform) -> Result<HttpResponse, AuthError> {
    if request.method() != http::Method::POST {
        return Err(AuthError::invalid_request("Method not allowed").with_status(405).with_header("allow", "POST"));
    }
    // The size is checked before the JSON is parsed, so an oversized body costs no parsing. The answer is HTTP
    // 413 (the body's size is the problem, not a metadata value; RFC 7591 §3.2.2 leaves other errors to HTTP)
    // with an `invalid_request` body that states the limit, as the Worker and native shells answer 413 to a body
    // over their own per-route limit.
    let declared = header(request, http::header::CONTENT_LENGTH).and_then(|v| v.trim().parse::<u64>().ok());
    let size = declared.filter(|&n| n > MAX_BODY_BYTES as u64).unwrap_or(request.body().len() as u64);
    if size > MAX_BODY_BYTES as u64 {
        return Err(AuthError::invalid_request(format!(
            "The registration request is {size} bytes; at most {MAX_BODY_BYTES} bytes (16 KiB) are accepted. \
             Send only the client metadata this client needs (RFC 7591 §2); real registrations are a few hundred bytes."
        ))
        .with_status(413));
    }
    let raw: Value = serde_json::from_slice(request.body())
        .map_err(|_| AuthError::invalid_request("Invalid JSON payload: send the client metadata as a JSON object"))?;
    let Value::Object(raw) = raw else {
        return Err(AuthError::new(ErrorCode::InvalidClientMetadata, "Client metadata must be a JSON object"));
    };
    let mut client = ClientMetadata::parse(&raw)
        .and_then(ClientMetadata::into_registered_client)
        .map_err(|e| AuthError::new(ErrorCode::InvalidClientMetadata, e.0))?;

    let now = platform.clock.now_secs();
    client.client_id = random_string(16)?;
    client.registration_date = Some(now);
    let secret = if client.is_public() { None } else { Some(random_string(32)?) };
    client.client_secret = secret.as_deref().map(sha256_hex);
    Store::new(platform.oauth_kv.as_ref())
        .put_client(&client, KvWrite::ExpiresIn(CLIENT_REGISTRATION_TTL_SECS))
        .await?;

    let mut body = Map::new();
    let mut put = |name: &str, value: Value| {
        if !value.is_null() {
            body.insert(name.to_owned(), value);
        }
    };
    put("client_id", json!(client.client_id));
    put("redirect_uris", json!(client.redirect_uris));
    put("client_name", json!(client.client_name));
    put("logo_uri", json!(client.logo_uri));
    put("client_uri", json!(client.client_uri));
    put("policy_uri", json!(client.policy_uri));
    put("tos_uri", json!(client.tos_uri));
    put("jwks_uri", json!(client.jwks_uri));
    put("contacts", json!(client.contacts));
    put("grant_types", json!(client.grant_types));
    put("response_types", json!(client.response_types));
    put("token_endpoint_auth_method", json!(client.token_endpoint_auth_method));
    put("client_id_issued_at", json!(now));
    for (name, value) in client.i18n.iter().flatten() {
        put(name, value.clone());
    }
    if let Some(secret) = secret {
        // The only time the secret exists in plain text: KV holds its hash.
        put("client_secret", json!(secret));
        put("client_secret_expires_at", json!(now + CLIENT_REGISTRATION_TTL_SECS));
        put("client_secret_issued_at", json!(now));
    }
    Ok(no_store(json_response(201, &Value::Object(body))))
}
