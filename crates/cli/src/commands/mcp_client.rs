//! A minimal MCP client over Streamable HTTP, shared by `zotero-mcp reindex` and `zotero-mcp e2e`: the 2025-era
//! flow (`initialize`, `notifications/initialized`, then requests) or the 2026-07-28 one (`server/discover`, then
//! requests carrying the `_meta` envelope and the `MCP-Protocol-Version`/`Mcp-Method`/`Mcp-Name` headers), JSON
//! or event-stream answers, a deadline on every request, bounded retries of what is safe to repeat, and one
//! token refresh when signed in by OAuth.

use std::time::Duration;

use serde_json::{json, Value};
use url::Url;
use zotero_mcp_server::mcp::protocol::{meta, MODERN_VERSION};

use crate::commands::get_token::SignedIn;

/// The revision offered in `initialize` unless the caller names one; the server answers with the one it speaks.
pub const PROTOCOL_VERSION: &str = "2025-11-25";
/// Longest wait a `Retry-After` may ask for before a retry.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);
/// Wait before a retry when the server names none (times the attempt).
const RETRY_DELAY: Duration = Duration::from_secs(5);

/// How the client proves who it is.
pub enum Auth {
    /// A token given on the command line or in ZOTERO_MCP_TOKEN: refused means stop.
    Token(String),
    /// A sign-in by this run: an expired access token is refreshed once per request.
    SignedIn(Box<SignedIn>),
}

impl Auth {
    fn access_token(&self) -> &str {
        match self {
            Auth::Token(token) => token,
            Auth::SignedIn(signed_in) => &signed_in.tokens.access_token,
        }
    }
}

/// A tool's result: its text, whether it is an error, and its `structuredContent`.
pub struct ToolResult {
    pub is_error: bool,
    pub text: String,
    pub structured: Option<Value>,
    /// How a successful answer fails the `outputSchema` the server listed for the tool (every failing path), as
    /// a validating client (the official SDKs) would reject it; `None` when it matches or no schema was listed.
    pub schema_mismatch: Option<String>,
}

pub struct Client {
    http: reqwest::blocking::Client,
    url: Url,
    auth: Auth,
    retries: u32,
    /// Who this client says it is (`clientInfo.name`, and the User-Agent).
    name: &'static str,
    protocol_version: Option<String>,
    session: Option<String>,
    next_id: u64,
    /// The output schemas of the tools listed so far, compiled, by name (filled by [`Client::list_tool_names`]).
    output_schemas: std::collections::HashMap<String, OutputSchema>,
}

impl Client {
    /// A client named `name` (e.g. "zotero-mcp reindex") for the MCP endpoint `url`; `timeout` bounds each HTTP
    /// request, `retries` the repeats of one that failed in transit or was answered 429/502/503/504.
    pub fn new(url: Url, auth: Auth, timeout: Duration, retries: u32, name: &'static str) -> Result<Self, String> {
        let http = reqwest::blocking::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(timeout.min(Duration::from_secs(20)))
            .timeout(timeout)
            .user_agent(format!("{}/{}", name.replace(' ', "-"), env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| format!("could not set up the HTTP client: {e}"))?;
        Ok(Self {
            http,
            url,
            auth,
            retries,
            name,
            protocol_version: None,
            session: None,
            next_id: 1,
            output_schemas: Default::default(),
        })
    }

    pub fn url(&self) -> &Url {
        &self.url
    }

    /// `initialize` (offering [`PROTOCOL_VERSION`]) and `notifications/initialized`.
    pub fn initialize(&mut self) -> Result<(), String> {
        self.initialize_as(PROTOCOL_VERSION).map(|_| ())
    }

    /// `initialize` offering `version`, and `notifications/initialized`; remembers the revision the server
    /// chose and returns the whole result.
    pub fn initialize_as(&mut self, version: &str) -> Result<Value, String> {
        self.protocol_version = None;
        let params = json!({
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": { "name": self.name, "version": env!("CARGO_PKG_VERSION") },
        });
        let result = self.request("initialize", params)?;
        let chosen = result["protocolVersion"].as_str().unwrap_or(version).to_owned();
        self.protocol_version = Some(chosen);
        self.post("notifications/initialized", &json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }))?;
        Ok(result)
    }

    /// `server/discover` in the 2026-07-28 revision, which every request after it then uses (there is no
    /// handshake in that revision: each request carries its version). Returns the result.
    pub fn discover(&mut self) -> Result<Value, String> {
        self.protocol_version = Some(MODERN_VERSION.to_owned());
        self.request("server/discover", json!({}))
    }

    /// Sends the requests from here on in the 2026-07-28 revision, as after [`Client::discover`] (which needs
    /// no repeating: that revision has no session to set up).
    pub fn use_modern(&mut self) {
        self.protocol_version = Some(MODERN_VERSION.to_owned());
        self.session = None;
    }

    /// `tools/list`: the tools' names in the order the server lists them, following `nextCursor` if any.
    pub fn list_tool_names(&mut self) -> Result<Vec<String>, String> {
        let mut names = Vec::new();
        let mut cursor: Option<String> = None;
        // A bound on pages, so a server that keeps handing out cursors cannot hold the client forever.
        for _ in 0..20 {
            let params = match &cursor {
                Some(c) => json!({ "cursor": c }),
                None => json!({}),
            };
            let result = self.request("tools/list", params)?;
            let tools = result["tools"].as_array().ok_or("tools/list: the answer has no `tools` list")?;
            for tool in tools {
                let Some(name) = tool["name"].as_str() else { continue };
                if let Some(schema) = tool.get("outputSchema").filter(|s| s.is_object()) {
                    let compiled = jsonschema::draft202012::new(schema).map_err(|e| e.to_string());
                    self.output_schemas.insert(name.to_owned(), compiled);
                }
                names.push(name.to_owned());
            }
            match result["nextCursor"].as_str() {
                Some(next) if !next.is_empty() => cursor = Some(next.to_owned()),
                _ => return Ok(names),
            }
        }
        Err("tools/list: the server kept answering with a nextCursor after 20 pages".into())
    }

    /// `tools/call`. A tool error (`isError`) is a result like any other; the caller decides.
    pub fn call_tool(&mut self, name: &str, arguments: Value) -> Result<ToolResult, String> {
        let result = self.request("tools/call", json!({ "name": name, "arguments": arguments }))?;
        let text = result["content"]
            .as_array()
            .map(|blocks| blocks.iter().filter_map(|b| b["text"].as_str()).collect::<Vec<_>>().join("\n"))
            .unwrap_or_default();
        let is_error = result["isError"].as_bool().unwrap_or(false);
        let structured = result.get("structuredContent").filter(|v| v.is_object()).cloned();
        let schema_mismatch = match (is_error, self.output_schemas.get(name)) {
            (false, Some(schema)) => schema_mismatch(schema, structured.as_ref()),
            _ => None,
        };
        Ok(ToolResult { is_error, text, structured, schema_mismatch })
    }

    /// A GET of another document of the server (metadata, `/health`), with the client's deadline and without
    /// following redirects: its status and body. No token is sent; these documents are public.
    pub fn get(&self, url: &str) -> Result<(u16, Vec<u8>), String> {
        let response = self
            .http
            .get(url)
            .header("accept", "application/json")
            .send()
            .map_err(|e| format!("{}: {e}", self.describe_failure(&e)))?;
        let status = response.status().as_u16();
        let body = response.bytes().map_err(|e| format!("the answer from {url} broke off: {e}"))?;
        Ok((status, body.to_vec()))
    }

    /// One JSON-RPC request; its `result`, or the JSON-RPC error as a message.
    fn request(&mut self, method: &str, mut params: Value) -> Result<Value, String> {
        let id = self.next_id;
        self.next_id += 1;
        if self.is_modern() {
            // The 2026-07-28 revision has no session: every request says who is asking and in which revision.
            if let Some(object) = params.as_object_mut() {
                object.insert(
                    "_meta".into(),
                    json!({
                        meta::PROTOCOL_VERSION: MODERN_VERSION,
                        meta::CLIENT_INFO: { "name": self.name, "version": env!("CARGO_PKG_VERSION") },
                        meta::CLIENT_CAPABILITIES: {},
                    }),
                );
            }
        }
        let body = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
        let message = self.post(method, &body)?.ok_or_else(|| format!("{method}: the server sent no answer"))?;
        if let Some(error) = message.get("error") {
            return Err(format!("{method} was refused: {}", rpc_error(error)));
        }
        message.get("result").cloned().ok_or_else(|| format!("{method}: the answer has neither result nor error"))
    }

    /// POSTs one message; `None` for an accepted notification (202).
    fn post(&mut self, method: &str, body: &Value) -> Result<Option<Value>, String> {
        let mut refreshed = false;
        let mut attempt = 0;
        loop {
            let mut request = self
                .http
                .post(self.url.as_str())
                .header("content-type", "application/json")
                .header("accept", "application/json, text/event-stream")
                .header("authorization", format!("Bearer {}", self.auth.access_token()))
                .body(body.to_string());
            if let Some(version) = &self.protocol_version {
                request = request.header("mcp-protocol-version", version);
            }
            if self.is_modern() {
                request = request.header("mcp-method", method);
                // The header mirrors what the request names, so gateways can route without parsing the body.
                if let Some(name) = body["params"]["name"].as_str().filter(|_| method == "tools/call") {
                    request = request.header("mcp-name", name);
                }
            }
            if let Some(session) = &self.session {
                request = request.header("mcp-session-id", session);
            }
            let response = match request.send() {
                Ok(response) => response,
                Err(e) if attempt < self.retries => {
                    attempt += 1;
                    eprintln!(
                        "{method}: {} ({e}); retrying ({attempt} of {})",
                        self.describe_failure(&e),
                        self.retries
                    );
                    std::thread::sleep(RETRY_DELAY * attempt);
                    continue;
                }
                Err(e) => return Err(format!("{method}: {} ({e})", self.describe_failure(&e))),
            };
            let status = response.status().as_u16();
            let header = |name: &str| response.headers().get(name).and_then(|v| v.to_str().ok()).map(str::to_owned);
            let retry_after = header("retry-after").and_then(|s| s.trim().parse::<u64>().ok());
            let content_type = header("content-type").unwrap_or_default();
            let challenge = header("www-authenticate");
            if let Some(session) = header("mcp-session-id") {
                self.session = Some(session);
            }
            let bytes = match response.bytes() {
                Ok(bytes) => bytes,
                Err(e) if attempt < self.retries => {
                    attempt += 1;
                    eprintln!("{method}: the answer broke off ({e}); retrying ({attempt} of {})", self.retries);
                    std::thread::sleep(RETRY_DELAY * attempt);
                    continue;
                }
                Err(e) => return Err(format!("{method}: the answer from {} broke off: {e}", self.url)),
            };
            match status {
                200 => return parse_body(&content_type, &bytes).map(Some).map_err(|e| format!("{method}: {e}")),
                202 => return Ok(None),
                401 if !refreshed && matches!(self.auth, Auth::SignedIn(_)) => {
                    refreshed = true;
                    self.refresh()?;
                    continue;
                }
                401 => return Err(self.unauthorized(challenge.as_deref())),
                429 | 502 | 503 | 504 if attempt < self.retries => {
                    attempt += 1;
                    let wait = retry_after.map_or(RETRY_DELAY * attempt, Duration::from_secs).min(MAX_RETRY_AFTER);
                    eprintln!(
                        "{method}: HTTP {status} from the server; retrying in {} s ({attempt} of {})",
                        wait.as_secs(),
                        self.retries
                    );
                    std::thread::sleep(wait);
                    continue;
                }
                _ => {
                    let detail = serde_json::from_slice::<Value>(&bytes)
                        .ok()
                        .and_then(|v| v.get("error").map(rpc_error))
                        .unwrap_or_else(|| String::from_utf8_lossy(&bytes).chars().take(300).collect());
                    return Err(format!("{method} failed: HTTP {status} from {}: {detail}", self.url));
                }
            }
        }
    }

    fn is_modern(&self) -> bool {
        self.protocol_version.as_deref() == Some(MODERN_VERSION)
    }

    fn describe_failure(&self, error: &reqwest::Error) -> String {
        if error.is_timeout() {
            format!("{} did not answer in time", self.url)
        } else {
            format!("could not reach {}", self.url)
        }
    }

    /// A new access token from the refresh token of this run's sign-in.
    fn refresh(&mut self) -> Result<(), String> {
        let Auth::SignedIn(signed_in) = &mut self.auth else { return Ok(()) };
        let refresh_token = signed_in
            .tokens
            .refresh_token
            .clone()
            .ok_or("the access token expired and the server gave no refresh token: run again to sign in again")?;
        let tokens = signed_in
            .flow
            .refresh(&signed_in.client_id, &refresh_token)
            .map_err(|e| format!("the access token expired and could not be refreshed: {e}. Run again to sign in"))?;
        signed_in.tokens = tokens;
        Ok(())
    }

    fn unauthorized(&self, challenge: Option<&str>) -> String {
        let said = challenge
            .and_then(|c| c.split("error_description=\"").nth(1))
            .and_then(|d| d.split('"').next())
            .map(|d| format!(": {d}"))
            .unwrap_or_default();
        match self.auth {
            Auth::Token(_) => format!(
                "the server refused the access token (HTTP 401{said}). Tokens last one hour and are bound to the \
                 address they were issued for ({}): get a new one with `scripts/get-token`, or leave out --token \
                 and ZOTERO_MCP_TOKEN to sign in with the password",
                self.url
            ),
            Auth::SignedIn(_) => {
                format!("the server refused the token it had just issued, even after a refresh (HTTP 401{said})")
            }
        }
    }
}

/// A listed output schema, compiled once, or why it does not compile.
type OutputSchema = Result<jsonschema::Validator, String>;

/// How `structured` fails `schema`, every failing path on one line; `None` when it matches. A listed output
/// schema with no `structuredContent` fails too: clients that validate reject that as well.
fn schema_mismatch(schema: &OutputSchema, structured: Option<&Value>) -> Option<String> {
    let Some(structured) = structured else {
        return Some("the answer has no structuredContent, though the tool lists an outputSchema".to_owned());
    };
    let validator = match schema {
        Ok(validator) => validator,
        Err(error) => return Some(format!("its listed outputSchema does not compile: {error}")),
    };
    let failures: Vec<String> = validator
        .iter_errors(structured)
        .map(|error| {
            let at = error.instance_path().to_string();
            format!("at `{}`: {error}", if at.is_empty() { "/" } else { at.as_str() })
        })
        .collect();
    (!failures.is_empty()).then(|| failures.join("; "))
}

/// A bare domain becomes an https address (http for loopback names, where development servers run).
pub fn server_address(server: &str) -> String {
    let server = server.trim();
    if server.contains("://") {
        return server.to_owned();
    }
    let authority = server.split('/').next().unwrap_or("");
    let host = match authority.strip_prefix('[') {
        Some(bracketed) => bracketed.split(']').next().unwrap_or(""),
        None => authority.split(':').next().unwrap_or(""),
    };
    let loopback = host.eq_ignore_ascii_case("localhost") || host.starts_with("127.") || host == "::1";
    format!("{}://{server}", if loopback { "http" } else { "https" })
}

/// The message of a JSON-RPC answer, from a JSON body or the first `message` event of an event stream.
pub fn parse_body(content_type: &str, body: &[u8]) -> Result<Value, String> {
    let text = String::from_utf8_lossy(body);
    let media = content_type.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    let json = if media == "text/event-stream" {
        first_message_event(&text).ok_or("the event stream held no `message` event with data")?
    } else {
        text.into_owned()
    };
    serde_json::from_str(&json).map_err(|e| format!("the answer is not JSON ({e}): {}", excerpt(&json)))
}

/// The data of the first `message` event (an event without an `event:` field is a message) of a stream.
fn first_message_event(stream: &str) -> Option<String> {
    let mut kind = String::new();
    let mut data: Vec<&str> = Vec::new();
    for line in stream.lines().chain(std::iter::once("")) {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.is_empty() {
            if !data.is_empty() && (kind.is_empty() || kind == "message") {
                return Some(data.join("\n"));
            }
            kind.clear();
            data.clear();
            continue;
        }
        let (field, value) = line.split_once(':').unwrap_or((line, ""));
        let value = value.strip_prefix(' ').unwrap_or(value);
        match field {
            "event" => kind = value.to_owned(),
            "data" => data.push(value),
            _ => {}
        }
    }
    None
}

fn rpc_error(error: &Value) -> String {
    let message = error["message"].as_str().unwrap_or("(no message)");
    match error["code"].as_i64() {
        Some(code) => format!("{message} (JSON-RPC error {code})"),
        None => message.to_owned(),
    }
}

fn excerpt(text: &str) -> String {
    text.chars().take(300).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bare_domain_becomes_an_address() {
        assert_eq!(server_address("zotero.example.org"), "https://zotero.example.org");
        assert_eq!(server_address(" zotero.example.org/mcp "), "https://zotero.example.org/mcp");
        assert_eq!(server_address("localhost:8787"), "http://localhost:8787");
        assert_eq!(server_address("127.0.0.1:8787/mcp"), "http://127.0.0.1:8787/mcp");
        assert_eq!(server_address("[::1]:8787"), "http://[::1]:8787");
        assert_eq!(server_address("http://example.org"), "http://example.org");
    }

    #[test]
    fn the_first_message_event_is_read() {
        let stream =
            "event: ping\ndata: {}\n\n: comment\r\nevent: message\r\ndata: {\"a\":\r\ndata: 1}\r\n\r\ndata: 2\n\n";
        assert_eq!(first_message_event(stream).as_deref(), Some("{\"a\":\n1}"));
        assert_eq!(first_message_event("data: {\"b\":2}").as_deref(), Some("{\"b\":2}"));
        assert_eq!(first_message_event("event: other\ndata: 1\n\n"), None);
    }

    #[test]
    fn bodies_are_json_or_event_streams() {
        assert_eq!(parse_body("application/json", b"{\"x\":1}").unwrap(), json!({ "x": 1 }));
        assert_eq!(
            parse_body("text/event-stream; charset=utf-8", b"event: message\ndata: [1]\n\n").unwrap(),
            json!([1])
        );
        assert!(parse_body("text/html", b"<html>").unwrap_err().contains("not JSON"));
    }
}
