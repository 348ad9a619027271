//! Helpers for the OAuth tests: an app over in-memory seams whose clock, HTTP stand-in and KV stores stay
//! reachable, and the steps of the authorization code flow as a client performs them.
#![allow(dead_code)]

use std::cell::Cell;
use std::collections::HashMap;
use std::rc::Rc;
use zotero_mcp_core::net::parse_url;

use async_trait::async_trait;
use serde_json::{json, Value};
use zotero_mcp_core::platform::{CounterStep, KvCounters, KvError, KvListPage, KvWrite, MemoryCounters};
use zotero_mcp_core::testing::{ManualClock, MemoryKv, StubHttp};
use zotero_mcp_server::app::App;
use zotero_mcp_server::auth::crypto::pkce_s256;
use zotero_mcp_server::config::Config;
use zotero_mcp_server::platform::{HttpClient, HttpRequest, KvStore, Platform};
use zotero_mcp_server::router::route;

pub const ORIGIN: &str = "https://zotero.example";
pub const MCP_URL: &str = "https://zotero.example/mcp";
pub const PASSWORD: &str = "correct horse battery staple";
pub const REDIRECT: &str = "https://client.example/callback";
pub const VERIFIER: &str = "a-verifier-of-at-least-43-characters-0123456789abcdef";
pub const NOW_MS: u64 = 1_800_000_000_000;

pub struct Reply {
    pub status: u16,
    pub headers: http::HeaderMap,
    pub text: String,
    pub json: Value,
}

impl Reply {
    pub fn header(&self, name: &str) -> &str {
        self.headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or("")
    }
    /// The query parameters of the `Location` of a redirect.
    pub fn location_params(&self) -> HashMap<String, String> {
        let location = self.header("location");
        let url =
            parse_url(location).unwrap_or_else(|_| panic!("no absolute Location in {} {}", self.status, self.text));
        url.query_pairs().map(|(k, v)| (k.into_owned(), v.into_owned())).collect()
    }
    pub fn error(&self) -> &str {
        self.json["error"].as_str().unwrap_or("")
    }
}

/// The tokens of a completed flow.
#[derive(Debug, Clone)]
pub struct Tokens {
    pub client_id: String,
    pub access: String,
    pub refresh: String,
    pub json: Value,
}

pub struct Harness {
    pub app: App,
    pub clock: Rc<ManualClock>,
    pub oauth_kv: Rc<MemoryKv>,
    pub cache_kv: Rc<MemoryKv>,
    /// Registrations sent by [`Harness::register`], which gives each its own address.
    registrations: Cell<u32>,
}

impl Harness {
    pub fn new() -> Self {
        Self::with(&[], StubHttp::strict())
    }

    pub fn with_vars(vars: &[(&str, &str)]) -> Self {
        Self::with(vars, StubHttp::strict())
    }

    pub fn with(vars: &[(&str, &str)], http: Rc<dyn HttpClient>) -> Self {
        let mut all: HashMap<String, String> =
            [("ZOTERO_API_KEY", "test-key"), ("AUTH_PASSWORD", PASSWORD), ("ENABLE_TEST_FIXTURES", "1")]
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
        for (k, v) in vars {
            all.insert(k.to_string(), v.to_string());
        }
        let config = Config::from_lookup(|k| all.get(k).cloned());
        let clock = ManualClock::at(NOW_MS);
        let oauth_kv = MemoryKv::new(clock.clone());
        let cache_kv = MemoryKv::new(clock.clone());
        let platform = Platform {
            http,
            oauth_kv: oauth_kv.clone(),
            cache_kv: cache_kv.clone(),
            counters: MemoryCounters::new(clock.clone()),
            clock: clock.clone(),
            ai_search: None,
            process_run: None,
            mirror_db: None,
            decompose: zotero_mcp_core::platform::decompose_with_tables,
            panel_files: None,
            offload: None,
        };
        Self { app: App::with_oauth(config, platform), clock, oauth_kv, cache_kv, registrations: Cell::new(0) }
    }

    /// Counts attempts in `CACHE_KV`, the Worker's fallback when its Durable Object is not bound.
    pub fn counting_in_kv(mut self) -> Self {
        self.app.platform.counters = KvCounters::new(self.app.platform.cache_kv.clone(), self.clock.clone());
        self
    }

    /// The live count of `key` in the attempt counters (0 when there is none).
    pub async fn count(&self, key: &str) -> u32 {
        let step = CounterStep::Below { key: key.to_owned(), limit: u32::MAX };
        let report = self.app.platform.counters.update(&[step]).await.expect("counters available");
        report.before[0]
    }

    pub async fn send(&self, request: HttpRequest) -> Reply {
        let response = route(request, &self.app).await;
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let text = String::from_utf8(response.into_body()).expect("utf-8 body");
        let json = serde_json::from_str(&text).unwrap_or(Value::Null);
        Reply { status, headers, text, json }
    }

    pub async fn get(&self, path_and_query: &str) -> Reply {
        self.send(http::Request::get(format!("{ORIGIN}{path_and_query}")).body(Vec::new()).unwrap()).await
    }

    /// Registers from an address of its own (192.0.2.0/24, one per call), so that tests registering many
    /// clients stay under the per-address registration limit; [`Harness::register_from`] picks the address. The
    /// server-wide limit (20 an hour) still holds: a test registering more advances the clock an hour, or uses
    /// `Harness::with_vars(&[("UNLIMITED_REGISTRATION", "1")])`.
    pub async fn register(&self, metadata: Value) -> Reply {
        let n = self.registrations.get();
        self.registrations.set(n + 1);
        self.register_from(metadata, &format!("192.0.2.{}", n % 250 + 1)).await
    }

    /// Registers with `cf-connecting-ip: ip` (`""` sends no address).
    pub async fn register_from(&self, metadata: Value, ip: &str) -> Reply {
        let mut request =
            http::Request::post(format!("{ORIGIN}/oauth/register")).header("content-type", "application/json");
        if !ip.is_empty() {
            request = request.header("cf-connecting-ip", ip);
        }
        self.send(request.body(metadata.to_string().into_bytes()).unwrap()).await
    }

    /// Registers a public client (PKCE, no secret) with one redirect URI.
    pub async fn public_client(&self, redirect_uri: &str) -> String {
        let reply = self
            .register(json!({ "client_name": "Test Client", "redirect_uris": [redirect_uri], "token_endpoint_auth_method": "none", "grant_types": ["authorization_code", "refresh_token"] }))
            .await;
        assert_eq!(reply.status, 201, "{}", reply.text);
        reply.json["client_id"].as_str().unwrap().to_owned()
    }

    /// Registers a confidential client; returns its id and secret.
    pub async fn confidential_client(&self, redirect_uri: &str) -> (String, String) {
        let reply = self
            .register(json!({ "client_name": "Server App", "redirect_uris": [redirect_uri], "grant_types": ["authorization_code", "refresh_token"] }))
            .await;
        assert_eq!(reply.status, 201, "{}", reply.text);
        (reply.json["client_id"].as_str().unwrap().to_owned(), reply.json["client_secret"].as_str().unwrap().to_owned())
    }

    /// `/authorize?…` with PKCE S256 and the given extra (or overriding) parameters; `("name", "")` drops one.
    pub fn authorize_path(&self, client_id: &str, redirect_uri: &str, extra: &[(&str, &str)]) -> String {
        let challenge = pkce_s256(VERIFIER);
        let mut params: Vec<(&str, &str)> = vec![
            ("response_type", "code"),
            ("client_id", client_id),
            ("redirect_uri", redirect_uri),
            ("state", "xyz-state"),
            ("code_challenge", &challenge),
            ("code_challenge_method", "S256"),
            ("resource", MCP_URL),
        ];
        for (name, value) in extra {
            params.retain(|(n, _)| n != name);
            if !value.is_empty() {
                params.push((name, value));
            }
        }
        let query: String = form_urlencoded::Serializer::new(String::new()).extend_pairs(params).finish();
        format!("/authorize?{query}")
    }

    /// Posts the consent form as a browser would.
    pub async fn approve(&self, path: &str, form: &[(&str, &str)]) -> Reply {
        self.approve_from(path, form, "203.0.113.7").await
    }

    pub async fn approve_from(&self, path: &str, form: &[(&str, &str)], ip: &str) -> Reply {
        let body: String = form_urlencoded::Serializer::new(String::new()).extend_pairs(form).finish();
        let request = http::Request::post(format!("{ORIGIN}{path}"))
            .header("content-type", "application/x-www-form-urlencoded")
            .header("cf-connecting-ip", ip)
            .body(body.into_bytes())
            .unwrap();
        self.send(request).await
    }

    /// The code from approving `path` with the right password and these ticks.
    pub async fn code(&self, path: &str, scopes: &[&str]) -> String {
        let mut form = vec![("password", PASSWORD)];
        form.extend(scopes.iter().map(|s| ("scope", *s)));
        let reply = self.approve(path, &form).await;
        assert_eq!(reply.status, 303, "{}", reply.text);
        reply.location_params().remove("code").expect("code in Location")
    }

    pub async fn token(&self, form: &[(&str, &str)]) -> Reply {
        self.token_with(form, &[]).await
    }

    pub async fn token_with(&self, form: &[(&str, &str)], headers: &[(&str, &str)]) -> Reply {
        let body: String = form_urlencoded::Serializer::new(String::new()).extend_pairs(form).finish();
        let mut request = http::Request::post(format!("{ORIGIN}/oauth/token"))
            .header("content-type", "application/x-www-form-urlencoded");
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        self.send(request.body(body.into_bytes()).unwrap()).await
    }

    /// Exchanges a code for tokens as a public client.
    pub async fn exchange(&self, client_id: &str, code: &str) -> Reply {
        self.token(&[
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", REDIRECT),
            ("client_id", client_id),
            ("code_verifier", VERIFIER),
            ("resource", MCP_URL),
        ])
        .await
    }

    /// Registration, authorization with these ticks (scope not named by the client), and code exchange.
    pub async fn flow(&self, scopes: &[&str]) -> Tokens {
        let client_id = self.public_client(REDIRECT).await;
        self.flow_for(&client_id, scopes).await
    }

    pub async fn flow_for(&self, client_id: &str, scopes: &[&str]) -> Tokens {
        let code = self.code(&self.authorize_path(client_id, REDIRECT, &[]), scopes).await;
        let reply = self.exchange(client_id, &code).await;
        assert_eq!(reply.status, 200, "{}", reply.text);
        Tokens {
            client_id: client_id.to_owned(),
            access: reply.json["access_token"].as_str().unwrap().to_owned(),
            refresh: reply.json["refresh_token"].as_str().unwrap().to_owned(),
            json: reply.json,
        }
    }

    pub async fn refresh(&self, client_id: &str, refresh_token: &str) -> Reply {
        self.token(&[("grant_type", "refresh_token"), ("refresh_token", refresh_token), ("client_id", client_id)]).await
    }

    /// A `tools/call` to `/mcp` at `url` with this bearer token (2025-era request, the simplest to build).
    pub async fn mcp_call(&self, url: &str, token: &str, tool: &str, arguments: Value) -> Reply {
        let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": tool, "arguments": arguments } });
        let request = http::Request::post(url)
            .header("content-type", "application/json")
            .header("accept", "application/json")
            .header("authorization", format!("Bearer {token}"))
            .body(body.to_string().into_bytes())
            .unwrap();
        self.send(request).await
    }

    /// Whether the token opens `/mcp` (a read tool call answers 200).
    pub async fn token_works(&self, token: &str) -> bool {
        self.mcp_call(MCP_URL, token, "fixture_echo", json!({ "text": "hi" })).await.status == 200
    }

    /// Every live `(key, value)` in `OAUTH_KV`.
    pub async fn oauth_dump(&self) -> Vec<(String, String)> {
        dump(&self.oauth_kv).await
    }

    pub async fn grant_keys(&self) -> Vec<String> {
        self.oauth_kv.keys().into_iter().filter(|k| k.starts_with("grant:")).collect()
    }
}

pub async fn dump(kv: &MemoryKv) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for key in kv.keys() {
        if let Some(value) = kv.get(&key).await.unwrap() {
            out.push((key, value));
        }
    }
    out
}

/// A KV store that refuses writes while `refusing` is set, as Workers KV does once the day's writes are used up.
pub struct RefusingKv {
    pub inner: Rc<dyn KvStore>,
    pub refusing: Cell<bool>,
}

impl RefusingKv {
    /// Puts a refusing wrapper around the harness's `CACHE_KV`, and counts attempts in it (the Worker's
    /// fallback without its Durable Object), so that counting fails as Workers KV does when its writes run out.
    pub fn around_cache(h: &mut Harness) -> Rc<Self> {
        let kv = Rc::new(Self { inner: h.cache_kv.clone(), refusing: Cell::new(false) });
        h.app.platform.cache_kv = kv.clone();
        h.app.platform.counters = KvCounters::new(kv.clone(), h.clock.clone());
        kv
    }
}

#[async_trait(?Send)]
impl KvStore for RefusingKv {
    async fn get(&self, key: &str) -> Result<Option<String>, KvError> {
        self.inner.get(key).await
    }
    async fn put(&self, key: &str, value: &str, lifetime: KvWrite) -> Result<(), KvError> {
        if self.refusing.get() {
            return Err(KvError::RateLimited { key: key.to_owned() });
        }
        self.inner.put(key, value, lifetime).await
    }
    async fn delete(&self, key: &str) -> Result<(), KvError> {
        self.inner.delete(key).await
    }
    async fn list(&self, prefix: &str, cursor: Option<&str>, limit: u32) -> Result<KvListPage, KvError> {
        self.inner.list(prefix, cursor, limit).await
    }
}
