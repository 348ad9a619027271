//! A minimal MCP client over Streamable HTTP, enough to call one tool of a zotero-mcp server: the 2025-11-25
//! flow (`initialize`, `notifications/initialized`, `tools/call`), JSON or event-stream answers, a deadline on
//! every request, bounded retries of what is safe to repeat, and one token refresh when signed in by OAuth.

use std::time::Duration;

use serde_json::{json, Value};
use url::Url;

use crate::commands::get_token::SignedIn;

/// The revision offered in `initialize`; the server answers with the one it speaks.
const PROTOCOL_VERSION: &str = "2025-11-25";
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
}

pub struct Client {
    http: reqwest::blocking::Client,
    url: Url,
    auth: Auth,
    retries: u32,
    protocol_version: Option<String>,
    session: Option<String>,
    next_id: u64,
}

impl Client {
    /// A client for the MCP endpoint `url`; `timeout` bounds each HTTP request, `retries` the repeats of one
    /// that failed in transit or was answered 429/502/503/504.
    pub fn new(url: Url, auth: Auth, timeout: Duration, retries: u32) -> Result<Self, String> {
        let http = reqwest::blocking::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(timeout.min(Duration::from_secs(20)))
            .timeout(timeout)
            .user_agent(concat!("zotero-mcp-reindex/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| format!("could not set up the HTTP client: {e}"))?;
        Ok(Self { http, url, auth, retries, protocol_version: None, session: None, next_id: 1 })
    }

    pub fn url(&self) -> &Url {
        &self.url
    }

    /// `initialize` and `notifications/initialized`; remembers the negotiated revision.
    pub fn initialize(&mut self) -> Result<(), String> {
        let params = json!({
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": { "name": "zotero-mcp reindex", "version": env!("CARGO_PKG_VERSION") },
        });
        let result = self.request("initialize", params)?;
        let version = result["protocolVersion"].as_str().unwrap_or(PROTOCOL_VERSION).to_owned();
        self.protocol_version = Some(version);
        self.post("notifications/initialized", &json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }))?;
        Ok(())
    }

    /// `tools/call`. A tool error (`isError`) is a result like any other; the caller decides.
    pub fn call_tool(&mut self, name: &str, arguments: Value) -> Result<ToolResult, String> {
        let result = self.request("tools/call", json!({ "name": name, "arguments": arguments }))?;
        let text = result["content"]
            .as_array()
            .map(|blocks| blocks.iter().filter_map(|b| b["text"].as_str()).collect::<Vec<_>>().join("\n"))
            .unwrap_or_default();
        Ok(ToolResult {
            is_error: result["isError"].as_bool().unwrap_or(false),
            text,
            structured: result.get("structuredContent").filter(|v| v.is_object()).cloned(),
        })
    }

    /// One JSON-RPC request; its `result`, or the JSON-RPC error as a message.
    fn request(&mut self, method: &str, params: Value) -> Result<Value, String> {
        let id = self.next_id;
        self.next_id += 1;
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
