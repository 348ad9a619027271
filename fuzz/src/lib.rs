//! Helpers shared by the fuzz targets: apps over the in-memory platform, a tiny executor, the text format the
//! HTTP targets read their requests from, and checks on JSON-RPC and OAuth answers.
//!
//! The HTTP targets read an input as a small, human-writable request: header lines (`name: value`) up to the
//! first blank line, then the body. Lines whose name starts with `:` are directives for the target (such as
//! `:method: GET`), not headers. Header names or values `http` would refuse are skipped, as a real server would
//! never pass them on.

use std::collections::HashMap;
use std::future::Future;

use serde_json::{json, Value};
use zotero_mcp_core::platform::KvWrite;
use zotero_mcp_server::app::{App, McpAccess};
use zotero_mcp_server::auth::crypto::{pkce_s256, sha256_hex, PropsKey};
use zotero_mcp_server::auth::storage::{Props, Store, StoredClient, StoredGrant};
use zotero_mcp_server::config::Config;
use zotero_mcp_server::grant::Grant;
use zotero_mcp_server::platform::{HttpRequest, HttpResponse};

/// The in-memory clock's start (2027-01-15), as in the server's own tests.
pub const NOW_MS: u64 = 1_800_000_000_000;
/// The password of every fuzzed app.
pub const PASSWORD: &str = "fuzz-password";
/// Where the fuzzed server lives.
pub const ORIGIN: &str = "https://zotero.example";

/// Whether a known finding (reported, not yet fixed; see README.md, "Findings") is tolerated. The long runs set
/// `ZOTERO_MCP_FUZZ_TOLERATE_KNOWN=1` so that the fuzzer keeps looking for other problems instead of stopping at
/// these; the regression inputs run without it, and fail until the server is fixed. `finding` names it.
pub fn tolerate_known(finding: &str) -> bool {
    let _ = finding;
    std::env::var_os("ZOTERO_MCP_FUZZ_TOLERATE_KNOWN").is_some_and(|v| v == "1")
}

/// With `ZOTERO_MCP_FUZZ_DEBUG=1`, prints what a target saw (to check what seeds reach); silent otherwise.
pub fn debug(what: impl FnOnce() -> String) {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    if *ON.get_or_init(|| std::env::var_os("ZOTERO_MCP_FUZZ_DEBUG").is_some_and(|v| v == "1")) {
        eprintln!("[fuzz] {}", what());
    }
}

/// Drives a future to completion. The in-memory platform never waits on anything outside the future, so this
/// returns at once; a future that never completes shows up as a libFuzzer timeout, not a false crash.
pub fn block_on<F: Future>(future: F) -> F::Output {
    futures::executor::block_on(future)
}

/// A configuration from `(name, value)` pairs, over the defaults every fuzzed app has (an API key, a password).
pub fn config(extra: &[(&str, &str)]) -> Config {
    let mut vars: HashMap<String, String> =
        [("ZOTERO_API_KEY", "fuzz-key"), ("ZOTERO_LIBRARY_ID", "1234567"), ("AUTH_PASSWORD", PASSWORD)]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
    for (k, v) in extra {
        vars.insert(k.to_string(), v.to_string());
    }
    Config::from_lookup(|k| vars.get(k).cloned())
}

/// An app whose `/mcp` takes tokens from its own OAuth server (the Worker's mode), over a fresh in-memory
/// platform. Its HTTP seam fails every request, so nothing leaves the process.
pub fn oauth_app(extra: &[(&str, &str)]) -> App {
    let (platform, _clock, _http) = zotero_mcp_core::testing::memory_platform(NOW_MS);
    App::with_oauth(config(extra), platform)
}

/// An app whose `/mcp` trusts every caller with read and write access (the native loopback mode), so fuzzed
/// requests reach the whole ladder and the dispatcher.
pub fn trusted_app(extra: &[(&str, &str)]) -> App {
    let mut app = oauth_app(extra);
    app.access = McpAccess::Trusted(Grant::read_write("owner"));
    app
}

// ---------------------------------------------------------------------------------------------------------------
// The request text format

/// A request read from fuzz input: headers, directives (`:name: value` lines) and the body.
#[derive(Debug, Default, Clone)]
pub struct RawRequest {
    pub headers: Vec<(Vec<u8>, Vec<u8>)>,
    pub directives: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl RawRequest {
    /// Header lines up to the first blank line (`\n\n`), then the body. Without a blank line the whole input is
    /// the body, so a bare JSON or form seed is a request too.
    pub fn parse(data: &[u8]) -> Self {
        let Some(split) = find(data, b"\n\n") else {
            return Self { body: data.to_vec(), ..Self::default() };
        };
        let (head, body) = (&data[..split], &data[split + 2..]);
        let mut request = Self { body: body.to_vec(), ..Self::default() };
        for line in head.split(|&b| b == b'\n') {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            if let Some(rest) = line.strip_prefix(b":") {
                let (name, value) = split_line(rest);
                request.directives.push((lossy(name).to_ascii_lowercase(), lossy(value)));
            } else if !line.is_empty() {
                let (name, value) = split_line(line);
                request.headers.push((name.to_vec(), value.to_vec()));
            }
        }
        request
    }

    /// The value of directive `name` (the first one).
    pub fn directive(&self, name: &str) -> Option<&str> {
        self.directives.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    /// The first header named `name` (ASCII case-insensitive), as bytes.
    pub fn header(&self, name: &str) -> Option<&[u8]> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name.as_bytes())).map(|(_, v)| v.as_slice())
    }

    /// An `http::Request` with these headers (those `http` accepts) and body.
    pub fn build(&self, method: http::Method, uri: &str) -> HttpRequest {
        let mut request = http::Request::builder().method(method).uri(uri).body(self.body.clone()).expect("uri");
        for (name, value) in &self.headers {
            let (Ok(name), Ok(value)) =
                (http::HeaderName::from_bytes(name), http::HeaderValue::from_bytes(value))
            else {
                continue;
            };
            request.headers_mut().append(name, value);
        }
        request
    }
}

fn split_line(line: &[u8]) -> (&[u8], &[u8]) {
    match line.iter().position(|&b| b == b':') {
        Some(at) => {
            let value = &line[at + 1..];
            (&line[..at], value.strip_prefix(b" ").unwrap_or(value))
        }
        None => (line, &[]),
    }
}

pub fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

pub fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

// ---------------------------------------------------------------------------------------------------------------
// Answers

/// A response's status, headers and body as text.
pub struct Answer {
    pub status: u16,
    pub headers: http::HeaderMap,
    pub body: Vec<u8>,
}

impl Answer {
    pub fn of(response: HttpResponse) -> Self {
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        Self { status, headers, body: response.into_body() }
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    pub fn text(&self) -> String {
        String::from_utf8(self.body.clone()).unwrap_or_else(|e| panic!("the body is not UTF-8: {e}"))
    }

    /// The body as JSON; with an event stream, the JSON of its one `data:` line.
    pub fn json(&self) -> Value {
        let text = self.text();
        let json_text = if self.header("content-type").is_some_and(|t| t.starts_with("text/event-stream")) {
            let data = text.lines().find_map(|l| l.strip_prefix("data: "));
            assert!(text.starts_with("event: message\n"), "event stream without an event line: {text:?}");
            data.unwrap_or_else(|| panic!("event stream without data: {text:?}")).to_owned()
        } else {
            text
        };
        serde_json::from_str(&json_text).unwrap_or_else(|e| panic!("status {} body is not JSON ({e}): {json_text:?}", self.status))
    }
}

/// Checks that `message` is one JSON-RPC 2.0 response and returns its error code, if it is an error.
pub fn check_rpc_response(message: &Value) -> Option<i64> {
    let object = message.as_object().unwrap_or_else(|| panic!("a response must be an object: {message}"));
    assert_eq!(object.get("jsonrpc"), Some(&json!("2.0")), "{message}");
    let id = object.get("id").unwrap_or_else(|| panic!("a response must have an id (or null): {message}"));
    assert!(id.is_null() || id.is_string() || id.is_number(), "bad id in {message}");
    match (object.get("result"), object.get("error")) {
        (Some(_), None) => None,
        (None, Some(error)) => {
            let code = error.get("code").and_then(Value::as_i64).unwrap_or_else(|| panic!("error without an integer code: {message}"));
            assert!(error.get("message").is_some_and(Value::is_string), "error without a message: {message}");
            // Every code this server uses is JSON-RPC's own or in the range reserved for implementations.
            assert!((-32768..=-32000).contains(&code), "error code {code} outside the reserved range: {message}");
            Some(code)
        }
        _ => panic!("a response needs exactly one of result and error: {message}"),
    }
}

/// Whether `echo` is an acceptable echo of the request id `id` in an answer. The rule, stated independently of the
/// server: an id is a string or a number representable as an `i64` or a `u64` ([`valid_id`]; MCP ids are strings
/// or integers). Such an id must come back exactly. Any other number is no id the server can echo: serde_json
/// reads it as an f64 and would write another number back (`133333330333333333333333` as
/// `1.3333333033333333e+23`), so the answer must carry a null id. Anything else (absent, null, bool, array,
/// object) is answered with a null id too, whatever else is wrong with the message (finding 4, fixed).
pub fn echo_ok(echo: &Value, id: &Value) -> bool {
    match id {
        Value::Number(_) if !valid_id(id) => echo.is_null(),
        Value::String(_) | Value::Number(_) => echo == id,
        _ => echo.is_null(),
    }
}

/// Whether `id` is one a request may carry: a string, or a number representable as an `i64` or a `u64` (MCP:
/// string or integer; serde_json keeps such a number as an integer, so it is echoed exactly). A number beyond
/// 64 bits (`1e30`, `123456789012345678901234567890`) or with a fraction or exponent (`1.5`, `1e2`, `-0`, which
/// serde_json reads as floats) is not: such a message is an invalid request (-32600), answered with a null id.
pub fn valid_id(id: &Value) -> bool {
    match id {
        Value::String(_) => true,
        Value::Number(n) => n.is_i64() || n.is_u64(),
        _ => false,
    }
}

/// The OAuth error codes of RFC 6749, 7009 and 7591 (and `temporarily_unavailable`/`server_error`).
pub const OAUTH_ERRORS: &[&str] = &[
    "invalid_request",
    "invalid_client",
    "invalid_grant",
    "unauthorized_client",
    "unsupported_grant_type",
    "invalid_scope",
    "invalid_target",
    "unsupported_token_type",
    "invalid_client_metadata",
    "invalid_redirect_uri",
    "server_error",
    "temporarily_unavailable",
];

/// Checks an OAuth JSON error answer: `no-store`, a known `error` code, a string description.
pub fn check_oauth_error(answer: &Answer) -> String {
    let body = answer.json();
    assert_eq!(answer.header("cache-control"), Some("no-store"), "an OAuth error must be no-store");
    let code = body.get("error").and_then(Value::as_str).unwrap_or_else(|| panic!("no error code in {body}"));
    assert!(OAUTH_ERRORS.contains(&code), "unknown OAuth error code {code:?} in {body}");
    assert!(body.get("error_description").is_none_or(Value::is_string), "{body}");
    code.to_owned()
}

// ---------------------------------------------------------------------------------------------------------------
// OAuth fixtures

/// A public client (PKCE, no secret) registered with two redirect URIs.
pub const PUBLIC_CLIENT: &str = "fuzzpublicclient";
pub const PUBLIC_REDIRECT: &str = "https://client.example/cb";
pub const LOOPBACK_REDIRECT: &str = "http://localhost/callback";
/// A confidential client whose secret is [`CONFIDENTIAL_SECRET`] (`client_secret_basic` or `_post`).
pub const CONFIDENTIAL_CLIENT: &str = "fuzzconfidential";
pub const CONFIDENTIAL_SECRET: &str = "fuzz-client-secret";
/// A pending authorization code of [`PUBLIC_CLIENT`], for [`PUBLIC_REDIRECT`], scope `zotero:read`.
pub const KNOWN_CODE: &str = "owner:fuzzgrant000000:fuzzcodesecret0000000000000000000";
/// The PKCE verifier of [`KNOWN_CODE`].
pub const KNOWN_VERIFIER: &str = "fuzz-verifier-0123456789-abcdefghijklmnopqrstuvwxyz";

/// The records [`seed_oauth`] stores, made once per process (key generation and wrapping are not free).
pub struct OAuthFixtures {
    pub clients: Vec<StoredClient>,
    pub grant: StoredGrant,
}

impl OAuthFixtures {
    pub fn new() -> Self {
        let client = |id: &str, method: &str, secret: Option<&str>| -> StoredClient {
            let mut record = json!({
                "clientId": id,
                "redirectUris": [PUBLIC_REDIRECT, LOOPBACK_REDIRECT],
                "clientName": "Fuzz client",
                "tokenEndpointAuthMethod": method,
                "grantTypes": ["authorization_code", "refresh_token"],
                "responseTypes": ["code"],
                "registrationDate": NOW_MS / 1000,
            });
            if let Some(secret) = secret {
                record["clientSecret"] = json!(sha256_hex(secret));
            }
            serde_json::from_value(record).expect("client record")
        };
        let clients = vec![
            client(PUBLIC_CLIENT, "none", None),
            client(CONFIDENTIAL_CLIENT, "client_secret_basic", Some(CONFIDENTIAL_SECRET)),
        ];
        let scope = vec!["zotero:read".to_owned()];
        let props = serde_json::to_vec(&Props { user_id: "owner".into(), scopes: scope.clone() }).expect("props");
        let key = PropsKey::generate().expect("random key");
        let grant: StoredGrant = serde_json::from_value(json!({
            "id": "fuzzgrant000000",
            "clientId": PUBLIC_CLIENT,
            "userId": "owner",
            "scope": scope,
            "encryptedProps": key.encrypt(&props).expect("encrypt"),
            "createdAt": NOW_MS / 1000,
            "authCodeId": sha256_hex(KNOWN_CODE),
            "authCodeWrappedKey": key.wrap_for(KNOWN_CODE).expect("wrap"),
            "codeChallenge": pkce_s256(KNOWN_VERIFIER),
            "codeChallengeMethod": "S256",
            "redirectUri": PUBLIC_REDIRECT,
        }))
        .expect("grant record");
        Self { clients, grant }
    }
}

impl Default for OAuthFixtures {
    fn default() -> Self {
        Self::new()
    }
}

/// Stores the fixture clients and the pending grant in `app`'s OAuth KV.
pub fn seed_oauth(app: &App, fixtures: &OAuthFixtures) {
    let store = Store::new(app.platform.oauth_kv.as_ref());
    block_on(async {
        for client in &fixtures.clients {
            store.put_client(client, KvWrite::Forever).await.expect("seed client");
        }
        store.put_pending_grant(&fixtures.grant).await.expect("seed grant");
    });
}

/// A valid S256 `code_challenge` for authorization requests built by the targets.
pub fn challenge() -> String {
    pkce_s256(KNOWN_VERIFIER)
}

/// A query string from pairs, form-encoded.
pub fn query(pairs: &[(&str, &str)]) -> String {
    form_urlencoded::Serializer::new(String::new()).extend_pairs(pairs).finish()
}

/// The form pairs as the server's parser would see them (same decoder: `form_urlencoded`).
pub fn form_pairs(body: &[u8]) -> Vec<(String, String)> {
    form_urlencoded::parse(body).map(|(k, v)| (k.into_owned(), v.into_owned())).collect()
}

/// Whether `uri` names a loopback host, by the url crate (an oracle independent of the server's helpers).
pub fn url_is_loopback(url: &url::Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.octets()[0] == 127,
        Some(url::Host::Ipv6(ip)) => ip == std::net::Ipv6Addr::LOCALHOST,
        None => false,
    }
}
