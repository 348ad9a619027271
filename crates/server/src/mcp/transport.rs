//! The Streamable HTTP endpoint, stateless: one POST in, one response out.
//!
//! The checks run in a fixed order (the "ladder" of protocols.md §1.2), each with its own HTTP status and
//! JSON-RPC code, so a client can tell exactly what it got wrong:
//!
//! 1. `Origin`/`Host` (403), HTTP method (405), media type (415), at most `MAX_MESSAGE_VALUES` JSON values
//!    (413/-32600, counted before parsing), JSON (400/-32700), one JSON-RPC message (400/-32600);
//! 2. notifications and client responses are accepted (202) — nothing here needs them;
//! 3. the era: a request whose `params._meta` carries a protocol version is 2026-07-28 ("modern") and must
//!    carry a valid envelope (400/-32602), an `MCP-Protocol-Version` header equal to it (400/-32020), a supported
//!    revision (400/-32022), and matching `Mcp-Method` and `Mcp-Name` headers (400/-32020) — the order the
//!    official conformance suite checks; anything else is a 2025-era request, served statelessly;
//! 4. the method must exist (404/-32601 modern, in-band for 2025 clients, as their SDK does);
//! 5. the handler runs; its errors travel in-band with HTTP 200.
//!
//! No `Mcp-Session-Id` is required, and one is issued only to a 2025-era client that declares MCP Apps in
//! `initialize`: the id itself says so on its later requests, and nothing is kept (`super::apps`).

use base64::Engine as _;
use serde_json::{json, Map, Value};

use super::apps;
use super::dispatch::{answer_message, dispatch, finish, is_served, Era};
use super::jsonrpc::{
    code, error_message, holds_more_values_than, prepend_member, result_message_text, too_many_values, Incoming,
    RpcError, MAX_MESSAGE_VALUES,
};
use super::origin;
use super::protocol::{meta, LEGACY_VERSIONS, MODERN_VERSIONS};
use super::registry::Registry;
use crate::call::Session;
use crate::config::{Config, ToolView};
use crate::platform::{HttpRequest, HttpResponse};
use crate::respond;

/// The checks that come before knowing who is calling: Origin and Host (403), the CORS preflight (204) and the
/// HTTP method (405). `Ok` means a POST that may go on to the bearer check and [`serve_post`].
pub fn admit(request: &HttpRequest, config: &Config) -> Result<(), Box<HttpResponse>> {
    if let Err(refusal) = origin::check(request, config) {
        // The same words as the other routes' plain-text refusal (`Refusal`'s Display).
        let error = RpcError::new(code::TRANSPORT, refusal.to_string());
        return Err(Box::new(rpc_error_response(403, &Value::Null, &error)));
    }
    match *request.method() {
        http::Method::POST => Ok(()),
        http::Method::OPTIONS => Err(Box::new(preflight())),
        _ => {
            let refusal = rpc_error_response(405, &Value::Null, &RpcError::new(code::TRANSPORT, "Method not allowed: this endpoint takes POST only (the 2026-07-28 and stateless 2025 transports have no GET stream and no sessions)."));
            Err(Box::new(respond::with_header(refusal, http::header::ALLOW, "POST")))
        }
    }
}

/// Lets a browser page on an allowed origin read the answer (the Origin check has already run).
pub fn with_cors(mut response: HttpResponse, request: &HttpRequest) -> HttpResponse {
    if let Some(origin) = request.headers().get(http::header::ORIGIN).cloned() {
        let headers = response.headers_mut();
        headers.insert(http::header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
        headers.insert(http::header::VARY, http::HeaderValue::from_static("Origin"));
        headers.insert(
            http::header::ACCESS_CONTROL_EXPOSE_HEADERS,
            http::HeaderValue::from_static("WWW-Authenticate, Mcp-Session-Id"),
        );
    }
    response
}

fn preflight() -> HttpResponse {
    let mut response = empty_response(204);
    let headers = response.headers_mut();
    headers.insert(http::header::ACCESS_CONTROL_ALLOW_METHODS, http::HeaderValue::from_static("POST, OPTIONS"));
    headers.insert(
        http::header::ACCESS_CONTROL_ALLOW_HEADERS,
        http::HeaderValue::from_static(
            "Authorization, Content-Type, Accept, MCP-Protocol-Version, Mcp-Method, Mcp-Name, Mcp-Session-Id",
        ),
    );
    headers.insert(http::header::ACCESS_CONTROL_MAX_AGE, http::HeaderValue::from_static("86400"));
    response
}

/// The ladder for a POST, from media type to the handler's result.
pub async fn serve_post(request: &HttpRequest, registry: &Registry, session: &Session) -> HttpResponse {
    if !is_json_media_type(request) {
        return rpc_error_response(
            415,
            &Value::Null,
            &RpcError::new(code::TRANSPORT, "Unsupported Media Type: Content-Type must be application/json"),
        );
    }
    if holds_more_values_than(request.body(), MAX_MESSAGE_VALUES) {
        return rpc_error_response(413, &Value::Null, &too_many_values());
    }
    let body: Value = match serde_json::from_slice(request.body()) {
        Ok(v) => v,
        Err(e) => {
            return rpc_error_response(
                400,
                &Value::Null,
                &RpcError::new(code::PARSE_ERROR, format!("Parse error: the body is not valid JSON ({e})")),
            )
        }
    };
    if body.is_array() {
        return rpc_error_response(
            400,
            &Value::Null,
            &RpcError::new(
                code::INVALID_REQUEST,
                "Invalid Request: batches are not supported; send one JSON-RPC message per POST",
            ),
        );
    }
    let incoming = match Incoming::from_value(body) {
        Ok(m) => m,
        Err(rejected) => return rpc_error_response(400, &rejected.1, &rejected.0),
    };
    let (Some(id), Some(method)) = (incoming.id.clone(), incoming.method.clone()) else {
        // A notification, or a response to a request this server never sends: nothing to answer.
        return empty_response(202);
    };
    let era =
        if incoming.meta().is_some_and(|m| m.contains_key(meta::PROTOCOL_VERSION)) { Era::Modern } else { Era::Legacy };
    let checked = match era {
        Era::Modern => check_modern(request, &incoming, &method),
        Era::Legacy => check_legacy(request, &method),
    };
    if let Err((status, error)) = checked {
        return rpc_error_response(status, &id, &error);
    }
    if !is_served(era, &method) {
        let status = if era == Era::Modern { 404 } else { 200 };
        return rpc_error_response(status, &id, &RpcError::method_not_found(&method));
    }
    // MCP Apps: a 2026-07-28 request declares it in its envelope; a 2025-era client in `initialize`, and after
    // that through the session id its answer carried (`super::apps`).
    let declares_apps_now = era == Era::Legacy
        && method == "initialize"
        && apps::declared_in(incoming.params.as_ref().and_then(|p| p.get("capabilities")));
    session.set_apps(match era {
        Era::Modern => apps::declared_in_envelope(incoming.meta()),
        Era::Legacy => declares_apps_now || apps::declared_by_session(header(request, apps::SESSION_HEADER)),
    });
    let no_cursor =
        || super::dispatch::reject_cursor(&method, incoming.params.as_ref().unwrap_or(&Value::Null)).is_ok();
    let message = if method == "tools/list" && no_cursor() {
        tools_list_message(era, &id, registry, session.tool_view())
    } else {
        match dispatch(&method, incoming.params, registry, session).await {
            Ok((answer, cache)) => answer_message(era, &id, answer, cache),
            Err(error) => error_message(&id, &error).to_string(),
        }
    };
    let response = if wants_event_stream(request) {
        event_stream_response(&message)
    } else {
        respond::typed(200, "application/json", message.into_bytes())
    };
    let mut response = response;
    if declares_apps_now {
        if let Some(Ok(id)) = apps::new_session_id().map(|id| http::HeaderValue::from_str(&id)) {
            response.headers_mut().insert(http::header::HeaderName::from_static(apps::SESSION_HEADER), id);
        }
    }
    response
}

/// `tools/list`'s whole answer as JSON text: the era's envelope spliced around the `tools` array the request's
/// view lists (its grant's scope and the deployment's tool groups), which the registry serialized once per view
/// for the isolate. The array is up to ~80 KB; building it as values and serializing it again for every request
/// was most of this method's own time. The text is exactly what the general path (`dispatch`,
/// `finish`, `result_message`) makes, as a test checks.
pub fn tools_list_message(era: Era, id: &Value, registry: &Registry, view: ToolView) -> String {
    let envelope = finish(era, Value::Object(Map::new()), Some(super::dispatch::CATALOGUE_CACHE)).to_string();
    result_message_text(id, &prepend_member(&envelope, "tools", &registry.tools_json(view)))
}

/// An HTTP status and the JSON-RPC error that goes with it.
pub(super) type Rejection = (u16, RpcError);

/// The 2026-07-28 envelope and header rules.
fn check_modern(request: &HttpRequest, incoming: &Incoming, method: &str) -> Result<(), Rejection> {
    let version = check_envelope(incoming)?;
    let mismatch = |why: String| (400, RpcError::new(code::HEADER_MISMATCH, format!("Header mismatch: {why}")));
    match header(request, "mcp-protocol-version") {
        None => return Err(mismatch(format!("the MCP-Protocol-Version header is required and must be `{version}`"))),
        Some(h) if h != version => {
            return Err(mismatch(format!("MCP-Protocol-Version is `{h}` but params._meta says `{version}`")))
        }
        Some(_) => {}
    }
    check_version(version)?;
    match header(request, "mcp-method").map(decode_header_value) {
        None => return Err(mismatch(format!("the Mcp-Method header is required and must be `{method}`"))),
        Some(h) if h.as_deref() != Some(method) => {
            return Err(mismatch(format!("Mcp-Method does not match the body's method `{method}`")))
        }
        Some(_) => {}
    }
    let named = match method {
        "tools/call" | "prompts/get" => incoming.param_str("name").map(|n| ("params.name", n)),
        "resources/read" => incoming.param_str("uri").map(|u| ("params.uri", u)),
        _ => None,
    };
    if let Some((field, expected)) = named {
        match header(request, "mcp-name").map(decode_header_value) {
            None => {
                return Err(mismatch(format!("the Mcp-Name header is required for {method} and must equal {field}")))
            }
            Some(h) if h.as_deref() != Some(expected) => {
                return Err(mismatch(format!("Mcp-Name does not match {field} `{expected}`")))
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// The `_meta` envelope of a 2026-07-28 request, whatever the transport: returns the protocol version it
/// names (checked against the supported ones by [`check_version`]).
pub(super) fn check_envelope(incoming: &Incoming) -> Result<&str, Rejection> {
    let envelope = incoming.meta();
    let bad_envelope = |why: String| {
        (400, RpcError::invalid_params(format!("Invalid _meta envelope for protocol revision 2026-07-28: {why}")))
    };
    let Some(version) = envelope.and_then(|e| e.get(meta::PROTOCOL_VERSION)).and_then(Value::as_str) else {
        return Err(bad_envelope(format!("`{}` must be a string", meta::PROTOCOL_VERSION)));
    };
    let field = |name: &str| envelope.and_then(|e| e.get(name));
    match field(meta::CLIENT_CAPABILITIES) {
        Some(Value::Object(_)) => {}
        Some(_) => return Err(bad_envelope(format!("`{}` must be an object", meta::CLIENT_CAPABILITIES))),
        None => return Err(bad_envelope(format!("`{}` is required", meta::CLIENT_CAPABILITIES))),
    }
    if let Some(info) = field(meta::CLIENT_INFO) {
        let valid = info.get("name").is_some_and(Value::is_string) && info.get("version").is_some_and(Value::is_string);
        if !valid {
            return Err(bad_envelope(format!(
                "`{}` must be an object with string `name` and `version`",
                meta::CLIENT_INFO
            )));
        }
    }
    if let Some(level) = field(meta::LOG_LEVEL) {
        const LEVELS: &[&str] = &["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"];
        if !level.as_str().is_some_and(|l| LEVELS.contains(&l)) {
            return Err(bad_envelope(format!("`{}` must be one of {}", meta::LOG_LEVEL, LEVELS.join(", "))));
        }
    }
    Ok(version)
}

/// A 2026-07-28-era version this server speaks, or -32022 with the supported ones.
pub(super) fn check_version(version: &str) -> Result<(), Rejection> {
    if MODERN_VERSIONS.contains(&version) {
        return Ok(());
    }
    let error = RpcError::new(
        code::UNSUPPORTED_PROTOCOL_VERSION,
        format!("Unsupported protocol version `{version}`; this server speaks {}", MODERN_VERSIONS.join(", ")),
    )
    .with_data(json!({ "supported": MODERN_VERSIONS, "requested": version }));
    Err((400, error))
}

/// 2025-era requests: tolerant of a missing `MCP-Protocol-Version` (claude.ai omits it), strict about a wrong one.
fn check_legacy(request: &HttpRequest, method: &str) -> Result<(), Rejection> {
    if let Some(version) = header(request, "mcp-protocol-version") {
        if MODERN_VERSIONS.contains(&version) {
            return Err(if method == "initialize" {
                (400, RpcError::new(code::HEADER_MISMATCH, format!("Header mismatch: MCP-Protocol-Version `{version}` has no initialize; send requests with the params._meta envelope instead")))
            } else {
                (400, RpcError::invalid_params(format!("Invalid _meta envelope for protocol revision {version}: the MCP-Protocol-Version header claims it, but params._meta lacks `{}`", meta::PROTOCOL_VERSION)))
            });
        }
        if method != "initialize" && !LEGACY_VERSIONS.contains(&version) {
            return Err((
                400,
                RpcError::new(
                    code::TRANSPORT,
                    format!(
                        "Bad Request: unsupported MCP-Protocol-Version `{version}` (supported: {})",
                        LEGACY_VERSIONS.join(", ")
                    ),
                ),
            ));
        }
    }
    if !accepts_a_reply(request) {
        return Err((
            406,
            RpcError::new(
                code::TRANSPORT,
                "Not Acceptable: the Accept header must allow application/json or text/event-stream",
            ),
        ));
    }
    Ok(())
}

fn header<'a>(request: &'a HttpRequest, name: &str) -> Option<&'a str> {
    request.headers().get(name).and_then(|v| v.to_str().ok()).map(str::trim)
}

/// Header values may carry non-ASCII names in the sentinel form `=?base64?<standard base64 of UTF-8>?=`.
/// `None` when the sentinel is present but does not decode.
pub fn decode_header_value(value: &str) -> Option<String> {
    match value.strip_prefix("=?base64?").and_then(|v| v.strip_suffix("?=")) {
        Some(encoded) => {
            let bytes = base64::engine::general_purpose::STANDARD.decode(encoded).ok()?;
            String::from_utf8(bytes).ok()
        }
        None => Some(value.to_owned()),
    }
}

fn is_json_media_type(request: &HttpRequest) -> bool {
    header(request, "content-type")
        .and_then(|v| v.split(';').next())
        .is_some_and(|t| t.trim().eq_ignore_ascii_case("application/json"))
}

fn accept_types(request: &HttpRequest) -> Vec<String> {
    request
        .headers()
        .get_all(http::header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|t| t.split(';').next().unwrap_or("").trim().to_ascii_lowercase())
        .filter(|t| !t.is_empty())
        .collect()
}

/// A missing Accept accepts anything; `*/*` and `application/*` are taken as JSON (claude.ai sends `*/*`).
fn accepts_a_reply(request: &HttpRequest) -> bool {
    let types = accept_types(request);
    types.is_empty()
        || types.iter().any(|t| {
            matches!(t.as_str(), "application/json" | "text/event-stream" | "*/*" | "application/*" | "text/*")
        })
}

/// Answer with an event stream only for a client that cannot take JSON.
fn wants_event_stream(request: &HttpRequest) -> bool {
    let types = accept_types(request);
    types.iter().any(|t| t == "text/event-stream")
        && !types.iter().any(|t| matches!(t.as_str(), "application/json" | "*/*" | "application/*"))
}

use crate::respond::{empty as empty_response, json as json_response};

fn event_stream_response(message: &str) -> HttpResponse {
    let body = format!("event: message\ndata: {message}\n\n").into_bytes();
    let response = respond::typed(200, "text/event-stream", body);
    let response = respond::with_header(response, http::header::CACHE_CONTROL, "no-cache");
    respond::with_header(response, http::header::HeaderName::from_static("x-accel-buffering"), "no")
}

fn rpc_error_response(status: u16, id: &Value, error: &RpcError) -> HttpResponse {
    json_response(status, &error_message(id, error))
}
