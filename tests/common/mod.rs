//! Helpers shared by the native protocol tests: an app over in-memory platform seams, and request builders.
#![allow(dead_code)]

use std::collections::HashMap;
use std::rc::Rc;

use serde_json::{json, Value};
use zotero_mcp::config::Config;
use zotero_mcp::platform::{HttpRequest, HttpResponse};
use zotero_mcp::router::{route, App};

pub const MODERN: &str = "2026-07-28";

/// An app with the test fixtures registered and a complete configuration, plus `extra` variables.
pub fn app_with(extra: &[(&str, &str)]) -> App {
    let mut vars: HashMap<String, String> =
        [("ZOTERO_API_KEY", "test-key"), ("AUTH_PASSWORD", "test-password"), ("ENABLE_TEST_FIXTURES", "1")]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
    for (k, v) in extra {
        vars.insert(k.to_string(), v.to_string());
    }
    let config = Config::from_lookup(|k| vars.get(k).cloned(), false);
    let (platform, _clock, _http) = zotero_mcp_core::testing::memory_platform(1_800_000_000_000);
    App { config: Rc::new(config), platform }
}

pub fn app() -> App {
    app_with(&[])
}

/// The modern envelope for `params._meta`.
pub fn envelope() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": { "name": "native-test", "version": "1.0.0" },
    })
}

/// A POST to /mcp with a JSON body and the given headers.
pub fn post(body: &Value, headers: &[(&str, &str)]) -> HttpRequest {
    post_raw(body.to_string().into_bytes(), "application/json", headers)
}

pub fn post_raw(body: Vec<u8>, content_type: &str, headers: &[(&str, &str)]) -> HttpRequest {
    let mut builder = http::Request::post("https://zotero.example/mcp").header("content-type", content_type);
    for (name, value) in headers {
        builder = builder.header(*name, *value);
    }
    builder.body(body).expect("valid test request")
}

/// A well-formed modern request: envelope merged into `params`, and the three headers set.
pub fn modern(method: &str, params: Value) -> HttpRequest {
    let mut params = params;
    params["_meta"] = envelope();
    let name = params.get("name").or_else(|| params.get("uri")).and_then(Value::as_str).map(str::to_owned);
    let body = json!({ "jsonrpc": "2.0", "id": 7, "method": method, "params": params });
    let mut headers = vec![("mcp-protocol-version", MODERN), ("mcp-method", method)];
    let name_header;
    if let Some(name) = name {
        name_header = name;
        headers.push(("mcp-name", name_header.as_str()));
    }
    post(&body, &headers)
}

/// A 2025-era request as claude.ai sends it: no protocol header, `Accept: */*`.
pub fn legacy(method: &str, params: Value) -> HttpRequest {
    post(&json!({ "jsonrpc": "2.0", "id": 3, "method": method, "params": params }), &[("accept", "*/*")])
}

pub struct Reply {
    pub status: u16,
    pub headers: http::HeaderMap,
    pub body: Value,
    pub text: String,
}

pub async fn send(app: &App, request: HttpRequest) -> Reply {
    let response: HttpResponse = route(request, app).await;
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let text = String::from_utf8(response.into_body()).expect("utf-8 body");
    let body = serde_json::from_str(&text).unwrap_or(Value::Null);
    Reply { status, headers, body, text }
}

impl Reply {
    pub fn error_code(&self) -> Option<i64> {
        self.body.pointer("/error/code").and_then(Value::as_i64)
    }
    pub fn result(&self) -> &Value {
        self.body.get("result").unwrap_or_else(|| panic!("no result in {}", self.text))
    }
}
