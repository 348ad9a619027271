//! Helpers shared by the native protocol tests: an app over in-memory platform seams, and request builders.
#![allow(dead_code)]

pub mod dav;
pub mod files;
pub mod kv;
pub mod steps;

use std::collections::HashMap;
use std::rc::Rc;

use serde_json::{json, Value};
use zotero_mcp_server::app::App;
use zotero_mcp_server::config::Config;
use zotero_mcp_server::platform::{HttpRequest, HttpResponse};
use zotero_mcp_server::router::route;

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
    let config = Config::from_lookup(|k| vars.get(k).cloned());
    let (platform, _clock, _http) = zotero_mcp_core::testing::memory_platform(1_800_000_000_000);
    seed_access_token(&platform);
    App::with_oauth(config, platform)
}

/// The bearer token every request built here carries (see [`post_raw`]): read-only, unbound to any URL, valid
/// for an hour of the test clock. Seeded straight into `OAUTH_KV` in the OAuth server's own format, so the
/// protocol tests go through the real bearer check without running the OAuth flow each time; the flow itself
/// is tested in tests/oauth_*.rs.
pub const TEST_TOKEN: &str = "owner:nativetestgrant0:native-test-access-token-secret00";

/// A second token, seeded beside [`TEST_TOKEN`] the same way, with both scopes (`zotero:read zotero:write`):
/// for what a grant that may write is shown. Send it with [`as_writer`].
pub const WRITE_TOKEN: &str = "owner:nativetestgrant1:native-test-write-token-secret00";

/// The same request, carrying [`WRITE_TOKEN`] instead of the read-only [`TEST_TOKEN`].
pub fn as_writer(mut request: HttpRequest) -> HttpRequest {
    let value = http::HeaderValue::from_str(&format!("Bearer {WRITE_TOKEN}")).expect("a header value");
    request.headers_mut().insert("authorization", value);
    request
}

fn seed_access_token(platform: &zotero_mcp_server::platform::Platform) {
    seed_token(platform, TEST_TOKEN, "nativetestgrant0", &["zotero:read"]);
    seed_token(platform, WRITE_TOKEN, "nativetestgrant1", &["zotero:read", "zotero:write"]);
}

fn seed_token(platform: &zotero_mcp_server::platform::Platform, secret: &str, grant_id: &str, scopes: &[&str]) {
    use zotero_mcp_server::auth::crypto::{sha256_hex, PropsKey};
    use zotero_mcp_server::auth::storage::{Props, Store, StoredGrant, StoredToken, TokenGrant};
    let now = platform.clock.now_secs();
    let scope: Vec<String> = scopes.iter().map(|s| (*s).to_owned()).collect();
    let props = serde_json::to_vec(&Props { user_id: "owner".into(), scopes: scope.clone() }).expect("props");
    let key = PropsKey::generate().expect("random key");
    let encrypted_props = key.encrypt(&props).expect("encrypt");
    let grant: StoredGrant = serde_json::from_value(json!({
        "id": grant_id, "clientId": "nativetestclient", "userId": "owner", "scope": scope,
        "encryptedProps": encrypted_props, "createdAt": now, "expiresAt": now + 86_400,
    }))
    .expect("grant");
    let token = StoredToken {
        id: sha256_hex(secret),
        grant_id: grant.id.clone(),
        user_id: "owner".into(),
        created_at: now,
        expires_at: now + 3600,
        audience: None,
        scope: Some(scope.clone()),
        wrapped_encryption_key: key.wrap_for(secret).expect("wrap"),
        grant: TokenGrant { client_id: grant.client_id.clone(), scope, encrypted_props: grant.encrypted_props.clone() },
        extra: Default::default(),
    };
    let store = Store::new(platform.oauth_kv.as_ref());
    ready(store.save_grant(&grant, now)).expect("seed grant");
    ready(store.put_token(&token, 3600)).expect("seed token");
}

/// Runs a future that completes without waiting (the in-memory KV never waits), from sync code.
fn ready<T>(future: impl std::future::Future<Output = T>) -> T {
    let mut future = std::pin::pin!(future);
    match future.as_mut().poll(&mut std::task::Context::from_waker(std::task::Waker::noop())) {
        std::task::Poll::Ready(value) => value,
        std::task::Poll::Pending => panic!("the in-memory platform never waits"),
    }
}

pub fn app() -> App {
    app_with(&[])
}

/// The demo library's user id and API key in the simulator.
pub const DEMO_USER: u64 = 1234567;
pub const DEMO_KEY: &str = "demo";

/// An app whose Zotero is the in-process simulator seeded with the demo library, with the given scopes.
pub fn app_with_sim(sim: Rc<zotero_sim::Simulator>) -> App {
    let mut app = app_with(&[("ZOTERO_API_KEY", DEMO_KEY), ("ZOTERO_LIBRARY_ID", "1234567")]);
    app.platform.http = Rc::new(zotero_sim::InProcess(sim));
    app
}

/// A fresh demo simulator.
pub fn demo_sim() -> Rc<zotero_sim::Simulator> {
    Rc::new(zotero_sim::Simulator::demo())
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
    if !headers.iter().any(|(name, _)| name.eq_ignore_ascii_case("authorization")) {
        builder = builder.header("authorization", format!("Bearer {TEST_TOKEN}"));
    }
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

/// A tool result's `structuredContent`, after checking it is not an error.
pub fn ok(result: &Value) -> &Value {
    assert!(result.get("isError").is_none(), "unexpected error: {}", result["content"][0]["text"]);
    &result["structuredContent"]
}

/// A tool error's message, after checking the result is one.
pub fn error_text(result: &Value) -> String {
    assert_eq!(result["isError"], true, "expected an error, got {result}");
    result["content"][0]["text"].as_str().unwrap().to_owned()
}

/// The first text block of a tool result.
pub fn text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap()
}

/// An in-memory library mirror with its schema made, as a mirror is once it has been used: the call that makes
/// the schema reads fewer pages (its statements count against D1's queries a call), which tests of what the
/// tools answer need not wait through.
pub fn mirror_db() -> Rc<zotero_mcp_core::mirror::sqlite::SqliteDb> {
    use futures_util::FutureExt;
    let db = zotero_mcp_core::mirror::sqlite::SqliteDb::in_memory().expect("an in-memory database");
    // SQLite answers at once: the future is ready when first polled.
    let made = zotero_mcp_core::mirror::schema::migrate(&db).now_or_never().expect("ready at once");
    made.expect("the schema made");
    Rc::new(db)
}

/// A library mirror's database that cannot be reached: every statement fails.
pub struct UnreachableMirror;

#[async_trait::async_trait(?Send)]
impl zotero_mcp_core::mirror::SqlDb for UnreachableMirror {
    async fn query(
        &self,
        _: &str,
        _: &[Value],
    ) -> Result<Vec<zotero_mcp_core::mirror::Row>, zotero_mcp_core::mirror::SqlError> {
        Err(zotero_mcp_core::mirror::SqlError::Unavailable("closed for the test".into()))
    }
    async fn batch(&self, _: &[zotero_mcp_core::mirror::Statement]) -> Result<(), zotero_mcp_core::mirror::SqlError> {
        Err(zotero_mcp_core::mirror::SqlError::Unavailable("closed for the test".into()))
    }
}

/// The app over `sim` with an in-memory library mirror ([`mirror_db`]).
pub fn app_with_mirror(sim: Rc<zotero_sim::Simulator>) -> App {
    let mut app = app_with_sim(sim);
    app.platform.mirror_db = Some(mirror_db());
    app
}

/// Calls a tool through the registry with a read-write grant, as one request would.
pub async fn call_tool(app: &App, tool: &str, arguments: Value) -> Value {
    let session = zotero_mcp_server::call::Session::new(
        zotero_mcp_server::auth::Grant::read_write("owner"),
        app.config.clone(),
        app.platform.clone(),
    );
    zotero_mcp_server::tools::registry(&app.config).call_tool(&session, tool, arguments).await.expect("the tool exists")
}
