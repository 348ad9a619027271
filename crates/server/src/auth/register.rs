//! Dynamic Client Registration (RFC 7591). Deprecated by MCP in favour of metadata documents, but Claude Code,
//! older Claude and ChatGPT builds and most other clients still register this way.
//!
//! Registration is open (no initial access token), so what anyone can make the server store is bounded: each
//! request by size and per field (`client`), the registrations per client address by [`MAX_PER_WINDOW`] an hour
//! and those of the whole server by [`SERVER_MAX_PER_WINDOW`] an hour (in the platform's attempt counters,
//! exact in the Durable Object and natively), and the time a record stays by [`UNUSED_CLIENT_TTL_SECS`] until
//! someone approves the client. Without the counts, about a thousand registrations would use up the Workers free
//! plan's daily KV writes and every sign-in with them, and natively 3,000 registrations in six seconds grew the
//! store by 66 MB. Every address is counted, loopback too: behind a reverse proxy on the same host every client
//! is loopback (unless the native server is told which header carries the client, `TRUSTED_PROXY_HEADER`), and
//! a web page can post here from the owner's browser. Only the end-to-end tests turn the counts off
//! (`UNLIMITED_REGISTRATION=1` with `ENABLE_TEST_FIXTURES=1`).

use serde_json::{json, Map, Value};
use zotero_mcp_core::platform::{CounterStep, Counters, CountersError, KvWrite};

use super::client::ClientMetadata;
use super::crypto::{random_string, sha256_hex};
use super::error::{AuthError, ErrorCode};
use super::http_util::{header, json_response, no_store};
use super::log;
use super::storage::{Store, CLIENT_REGISTRATION_TTL_SECS, UNUSED_CLIENT_TTL_SECS};
use super::throttle::{client_key, CLIENT_ADDRESS_HEADER};
use crate::app::App;
use crate::platform::{HttpRequest, HttpResponse};

/// Registrations accepted per client address (an IPv6 client by its prefix, as the login throttle counts it)
/// per [`WINDOW_SECS`]. A client registers once per installation; ten an hour is far above what one network
/// needs, and caps what one address can make the server store at 240 records a day.
pub const MAX_PER_WINDOW: u32 = 10;
/// Registrations accepted from all addresses together per [`WINDOW_SECS`]. The owner registers a client once
/// per installation, a few a day at most (a metadata-document client never registers), so twenty an hour leave
/// room for setting up several at once while a registration nobody approves stays a day: at most 480 such
/// records exist, whatever the number of addresses (SECURITY.md gives the bytes). The price: someone
/// registering on purpose can keep the owner from registering a *new* client for up to an hour; connected
/// clients keep working.
pub const SERVER_MAX_PER_WINDOW: u32 = 20;
/// The counting window: it starts at an address's (or the server's) first registration and does not move
/// until it ends.
pub const WINDOW_SECS: u64 = 3600;
/// Key prefix of the per-address counts (also their `CACHE_KV` keys when counts fall back to KV).
const COUNT_PREFIX: &str = "register-attempts:";
/// The count of the whole server's registrations.
pub const SERVER_COUNT_KEY: &str = "register-attempts:*";

/// Largest registration request accepted, in bytes. Real registrations are a few hundred bytes. The record is
/// stored (a day, or 90 days once approved) at an unauthenticated request, so a megabyte each (the old limit)
/// let anyone fill the store; `client` bounds each field as well.
pub const MAX_BODY_BYTES: usize = 16 * 1024;

pub async fn register(request: &HttpRequest, app: &App) -> Result<HttpResponse, AuthError> {
    let platform = &app.platform;
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
    // Counted only now, once the metadata is known to be storable: a refused registration stores nothing and
    // costs no write. The count is written before the client, so a registration that cannot be counted is
    // not stored either.
    if !app.config.unlimited_registration {
        let raw_address = header(request, CLIENT_ADDRESS_HEADER).unwrap_or("");
        let key = format!("{COUNT_PREFIX}{}", client_key(raw_address, app.config.login_ipv6_prefix));
        count_registration(platform.counters.as_ref(), &key, platform.clock.now_ms()).await?;
    }
    client.client_id = random_string(16)?;
    client.registration_date = Some(now);
    let secret = if client.is_public() { None } else { Some(random_string(32)?) };
    client.client_secret = secret.as_deref().map(sha256_hex);
    // The short first lifetime; the first approval extends it to 90 days from registration (`authorize::complete`).
    Store::new(platform.oauth_kv.as_ref()).put_client(&client, KvWrite::ExpiresIn(UNUSED_CLIENT_TTL_SECS)).await?;

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

/// Counts a registration from the address behind `key` and for the server, or refuses it (429) when either has
/// used its window; a refused registration is counted nowhere. A registration that cannot be counted is not
/// stored.
async fn count_registration(counters: &dyn Counters, key: &str, now_ms: u64) -> Result<(), AuthError> {
    let steps = [
        CounterStep::Below { key: key.to_owned(), limit: MAX_PER_WINDOW },
        CounterStep::Below { key: SERVER_COUNT_KEY.to_owned(), limit: SERVER_MAX_PER_WINDOW },
        CounterStep::Add { key: key.to_owned(), window_secs: WINDOW_SECS, rolling: false },
        CounterStep::Add { key: SERVER_COUNT_KEY.to_owned(), window_secs: WINDOW_SECS, rolling: false },
    ];
    match counters.update(&steps).await {
        Ok(_) => Ok(()),
        Err(CountersError::Refused { step, until_ms }) => {
            let wait = until_ms.saturating_sub(now_ms).div_ceil(1000).max(1);
            let minutes = wait.div_ceil(60);
            let minutes = format!("{minutes} minute{}", if minutes == 1 { "" } else { "s" });
            let description = if step == 0 {
                format!(
                    "Too many client registrations from your network: at most {MAX_PER_WINDOW} an hour. Use the \
                     client_id you already registered, or register again in {minutes}."
                )
            } else {
                format!(
                    "Too many client registrations on this server: at most {SERVER_MAX_PER_WINDOW} an hour from \
                     everyone together. Use the client_id you already registered, or register again in {minutes}; \
                     clients that are already connected keep working."
                )
            };
            Err(AuthError::new(ErrorCode::TemporarilyUnavailable, description)
                .with_status(429)
                .with_header("retry-after", wait.to_string()))
        }
        Err(e @ CountersError::Unavailable(_)) => {
            log::warn(&format!("a registration was refused because it could not be counted: {e}"));
            Err(AuthError::new(
                ErrorCode::TemporarilyUnavailable,
                "Registrations cannot be counted right now, so none is accepted. Try again in a minute.",
            )
            .with_status(429)
            .with_header("retry-after", "60"))
        }
    }
}
