//! JSON-RPC framing, the stdio line handler and the HTTP ladder of `/mcp`, on one fuzzed message.
//!
//! Input: optional header lines, a blank line, then the body (see `zotero_mcp_fuzz::RawRequest`); without a blank
//! line the whole input is the body. Directives: `:method: GET` (default POST), `:access: oauth` (default: a
//! trusted read-write caller, so requests reach the dispatcher; under `oauth` no token exists, so nothing may).
//!
//! The body goes through
//! 1. `mcp::jsonrpc::Incoming::from_value`, checked against an independent statement of JSON-RPC 2.0 validity;
//! 2. `mcp::stdio::answer_line` (the stdio server's whole per-line path, dispatch included);
//! 3. `router::route` as `POST /mcp` with the fuzzed headers: the Origin/Host check, method, media type, JSON,
//!    envelope, header/body agreement, version, method, dispatch and the CORS decision.
//!
//! A message of more than `MAX_MESSAGE_VALUES` JSON values is refused before it is parsed (-32600, null id; 413
//! over HTTP): one whose parsed value holds more must be, and one that is must be longer than the limit in bytes
//! (each value counted is at least one byte).

#![no_main]

use std::rc::Rc;

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use zotero_mcp_fuzz::{block_on, check_rpc_response, echo_ok, valid_id, config, oauth_app, trusted_app, Answer, RawRequest, ORIGIN};
use zotero_mcp_server::context::RequestContext;
use zotero_mcp_server::grant::Grant;
use zotero_mcp_server::mcp::jsonrpc::{code, Incoming, MAX_MESSAGE_VALUES};
use zotero_mcp_server::mcp::protocol::{meta, LEGACY_VERSIONS, MODERN_VERSIONS};
use zotero_mcp_server::mcp::registry::Registry;
use zotero_mcp_server::mcp::transport::decode_header_value;
use zotero_mcp_server::mcp::{origin, stdio};

thread_local! {
    /// The stdio server builds its registry once; so does this target.
    static REGISTRY: Rc<Registry> = zotero_mcp_server::tools::registry(&config(&[]));
    static STDIO_CONFIG: Rc<zotero_mcp_server::config::Config> = Rc::new(config(&[]));
}

fuzz_target!(|data: &[u8]| {
    let raw = RawRequest::parse(data);
    let parsed: Option<Value> = serde_json::from_slice(&raw.body).ok();
    if let Some(value) = &parsed {
        check_incoming(value);
    }
    if let Ok(line) = std::str::from_utf8(&raw.body) {
        check_stdio(line);
    }
    check_http(&raw, parsed.as_ref());
});

/// How many values a parsed message holds: itself and everything inside.
fn values_in(value: &Value) -> usize {
    1 + match value {
        Value::Array(items) => items.iter().map(values_in).sum(),
        Value::Object(members) => members.values().map(values_in).sum(),
        _ => 0,
    }
}

/// Whether `message` is the refusal of a message over `MAX_MESSAGE_VALUES`, and if so, that it was due.
fn refused_as_too_many(message: &Value, input_len: usize) -> bool {
    let refused = message["error"]["code"] == code::INVALID_REQUEST
        && message["error"]["message"].as_str().is_some_and(|m| m.contains("JSON values"));
    if refused {
        assert!(message["id"].is_null(), "refused unparsed, yet echoed an id: {message}");
        assert!(input_len > MAX_MESSAGE_VALUES, "a {input_len}-byte message cannot hold that many values");
    }
    refused
}

/// JSON-RPC 2.0 validity as MCP narrows it, stated without the server's code: an object, `"jsonrpc": "2.0"`, an
/// `id`, when present, that is a string or a number representable as `i64` or `u64` (`valid_id`: `1e30` or
/// `123456789012345678901234567890` make the message invalid, -32600 with a null id), a string `method` (or none
/// in a response: `result` or `error` present), and `params`, when present, an object.
fn expected_valid(value: &Value) -> Result<(), i64> {
    let Some(object) = value.as_object() else { return Err(code::INVALID_REQUEST) };
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(code::INVALID_REQUEST);
    }
    if object.get("id").is_some_and(|id| !valid_id(id)) {
        return Err(code::INVALID_REQUEST);
    }
    match object.get("method") {
        Some(Value::String(_)) => {}
        Some(_) => return Err(code::INVALID_REQUEST),
        None if object.contains_key("result") || object.contains_key("error") => {}
        None => return Err(code::INVALID_REQUEST),
    }
    if object.get("params").is_some_and(|p| !p.is_object()) {
        return Err(code::INVALID_PARAMS);
    }
    Ok(())
}

fn check_incoming(value: &Value) {
    let expected = expected_valid(value);
    match (Incoming::from_value(value.clone()), expected) {
        (Ok(message), Ok(())) => {
            assert_eq!(message.id.as_ref(), value.get("id"), "id changed: {value}");
            assert_eq!(message.method.as_deref(), value.get("method").and_then(Value::as_str), "{value}");
            assert_eq!(message.params.as_ref(), value.get("params"), "params changed: {value}");
        }
        (Err(rejected), Err(code)) => {
            let (error, id) = *rejected;
            assert_eq!(error.code, code, "wrong code for {value}: {error:?}");
            let sent = value.get("id").cloned().unwrap_or(Value::Null);
            assert!(echo_ok(&id, &sent), "the echoed id {id} does not echo the request's: {value}");
        }
        (Ok(_), Err(code)) => panic!("accepted an invalid message (expected {code}): {value}"),
        (Err(rejected), Ok(())) => panic!("refused a valid message: {value}: {:?}", rejected.0),
    }
}

fn check_stdio(line: &str) {
    let ctx = STDIO_CONFIG.with(|config| {
        let (platform, _clock, _http) = zotero_mcp_core::testing::memory_platform(zotero_mcp_fuzz::NOW_MS);
        RequestContext::new(Grant::read_write("owner"), config.clone(), platform)
    });
    let out = REGISTRY.with(|registry| block_on(stdio::answer_line(line, registry, &ctx)));
    // The line the server reads is trimmed first; `serde_json` also ignores surrounding whitespace.
    let value: Option<Value> = serde_json::from_str(line.trim()).ok();
    zotero_mcp_fuzz::debug(|| format!("stdio -> {out:?}"));
    let Some(out) = out else {
        // Nothing is answered only for a blank line or a valid notification/response.
        if line.trim().is_empty() {
            return;
        }
        let value = value.unwrap_or_else(|| panic!("no answer to a line that is not JSON: {line:?}"));
        assert!(expected_valid(&value).is_ok(), "no answer to an invalid message: {value}");
        assert!(value.get("id").is_none() || value.get("method").is_none(), "no answer to a request: {value}");
        return;
    };
    assert!(!out.contains('\n'), "a stdio answer must be one line: {out:?}");
    let message: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("stdio answer is not JSON ({e}): {out}"));
    let error = check_rpc_response(&message);
    let too_many = refused_as_too_many(&message, line.trim().len());
    if let Some(value) = &value {
        assert!(values_in(value) <= MAX_MESSAGE_VALUES || too_many, "{} values were parsed", values_in(value));
    }
    if too_many {
        return;
    }
    match value {
        None => assert_eq!(error, Some(code::PARSE_ERROR), "{line:?} -> {out}"),
        Some(value) if value.is_array() => assert_eq!(error, Some(code::INVALID_REQUEST), "{out}"),
        Some(value) => {
            match expected_valid(&value) {
                Err(code) => assert_eq!(error, Some(code), "{value} -> {out}"),
                Ok(()) => {
                    assert!(value.get("id").is_some() && value.get("method").is_some(), "answered a notification: {value} -> {out}")
                }
            }
            let sent = value.get("id").cloned().unwrap_or(Value::Null);
            assert!(echo_ok(&message["id"], &sent), "the answer must echo the id: {value} -> {out}");
        }
    }
}

fn check_http(raw: &RawRequest, parsed: Option<&Value>) {
    let method = raw
        .directive("method")
        .and_then(|m| http::Method::from_bytes(m.as_bytes()).ok())
        .unwrap_or(http::Method::POST);
    let oauth = raw.directive("access") == Some("oauth");
    let app = if oauth { oauth_app(&[]) } else { trusted_app(&[]) };
    let uri = format!("{ORIGIN}/mcp");
    let request = raw.build(method.clone(), &uri);
    let origin_ok = origin::check(&request, &app.config).is_ok();
    let answer = Answer::of(block_on(zotero_mcp_server::router::route(request, &app)));
    let request = raw.build(method.clone(), &uri);
    zotero_mcp_fuzz::debug(|| format!("http {} -> {}", method, String::from_utf8_lossy(&answer.body)));

    // CORS headers only for an origin the check let through, and only that origin.
    if let Some(allowed) = answer.headers.get("access-control-allow-origin") {
        assert!(origin_ok, "CORS granted to a refused origin {allowed:?}");
        assert_eq!(Some(allowed), request.headers().get("origin"));
    }
    let status = answer.status;
    if !origin_ok {
        assert_eq!(status, 403, "a refused Origin must be 403");
    }
    if oauth && status != 403 && method == http::Method::POST {
        // No token was ever issued: a POST cannot get past the bearer check.
        assert_eq!(status, 401, "a request without a valid token reached {status}");
        return;
    }
    match status {
        202 | 204 => {
            assert!(answer.body.is_empty(), "{status} must have no body");
            if status == 204 {
                assert_eq!(method, http::Method::OPTIONS);
            }
            if status == 202 {
                let value = parsed.expect("202 only for a parsed message");
                assert!(expected_valid(value).is_ok() && (value.get("id").is_none() || value.get("method").is_none()));
            }
            return;
        }
        200 | 400 | 403 | 404 | 405 | 406 | 415 => {}
        413 => {
            assert!(refused_as_too_many(&answer.json(), raw.body.len()), "413 for another reason");
            return;
        }
        401 if oauth => return,
        other => panic!("unexpected status {other}"),
    }
    let message = answer.json();
    let error = check_rpc_response(&message);
    match (status, error) {
        (200, _) => {}
        (403 | 405 | 406 | 415, Some(code::TRANSPORT)) => {}
        (404, Some(code::METHOD_NOT_FOUND)) => {}
        (
            400,
            Some(
                code::PARSE_ERROR
                | code::INVALID_REQUEST
                | code::INVALID_PARAMS
                | code::HEADER_MISMATCH
                | code::UNSUPPORTED_PROTOCOL_VERSION
                | code::TRANSPORT,
            ),
        ) => {}
        (status, error) => panic!("status {status} with error {error:?}: {message}"),
    }
    if status == 405 {
        assert_ne!(method, http::Method::POST);
    }
    if message.get("result").is_none() {
        return;
    }
    // A result: the request passed every rung of the ladder, which the headers and body must bear out.
    assert_eq!(method, http::Method::POST);
    let value = parsed.expect("a result needs a parsed body");
    assert!(valid_id(&value["id"]), "a result for a request whose id is not a string or 64-bit integer: {value}");
    assert_eq!(message["id"], value["id"], "the result must answer the request's id");
    let body_method = value["method"].as_str().expect("a result needs a method");
    let header = |name: &str| request.headers().get(name).and_then(|v| v.to_str().ok()).map(str::trim);
    let content_type = header("content-type").expect("a result needs a content type");
    assert!(
        content_type.split(';').next().is_some_and(|t| t.trim().eq_ignore_ascii_case("application/json")),
        "served a body of type {content_type:?}"
    );
    let version = value.pointer("/params/_meta").and_then(|m| m.get(meta::PROTOCOL_VERSION));
    if let Some(version) = version {
        let version = version.as_str().expect("a served modern request names its version as a string");
        assert!(MODERN_VERSIONS.contains(&version), "served unsupported modern version {version}");
        assert_eq!(header("mcp-protocol-version"), Some(version), "served without a matching version header");
        let named = header("mcp-method").and_then(decode_header_value);
        assert_eq!(named.as_deref(), Some(body_method), "served without a matching Mcp-Method");
        let name = match body_method {
            "tools/call" | "prompts/get" => value.pointer("/params/name").and_then(Value::as_str),
            "resources/read" => value.pointer("/params/uri").and_then(Value::as_str),
            _ => None,
        };
        if let Some(name) = name {
            assert_eq!(header("mcp-name").and_then(decode_header_value).as_deref(), Some(name), "Mcp-Name mismatch");
        }
    } else if let Some(version) = header("mcp-protocol-version") {
        assert!(!MODERN_VERSIONS.contains(&version), "a modern header on a request without the envelope was served");
        if body_method != "initialize" {
            assert!(LEGACY_VERSIONS.contains(&version), "served unsupported legacy version {version:?}");
        }
    }
}
