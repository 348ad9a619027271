//! Sending one Zotero API request the way Zotero asks clients to behave: at most four in flight, a `Backoff`
//! header slows every later request, 429/503 are retried a bounded number of times, nothing else is retried.

use std::cell::Cell;
use std::rc::Rc;

use async_trait::async_trait;
use http::{HeaderMap, Method, StatusCode};
use serde::de::DeserializeOwned;

use super::error::{hint_for, ZoteroError};
use crate::platform::{within, Clock, HttpClient, HttpError, HttpRequest};

/// How retries behave. The defaults are Zotero's advice, bounded so a Worker request never hangs for minutes.
#[derive(Debug, Clone, Copy)]
pub struct RetryPolicy {
    /// Retries after the first attempt (so `max_retries + 1` attempts in all).
    pub max_retries: u32,
    /// The first exponential delay when Zotero gives no `Retry-After`; doubled on each retry.
    pub base_delay_ms: u64,
    /// The longest single wait we accept; a longer `Retry-After` fails at once and tells the caller when to retry.
    pub max_wait_ms: u64,
    /// How long one attempt may take before it is abandoned (a hung connection must not hold the Worker until
    /// the platform kills it). A timed-out request is not retried: a write may have reached Zotero.
    pub request_timeout_ms: u64,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self { max_retries: 4, base_delay_ms: 500, max_wait_ms: 30_000, request_timeout_ms: 30_000 }
    }
}

/// Requests allowed in flight at once per client (Zotero's guidance for well-behaved clients).
pub const MAX_IN_FLIGHT: usize = 4;

/// One request to make.
#[derive(Debug, Clone)]
pub(crate) struct Call {
    pub method: Method,
    /// The path below the base URL, e.g. `/users/1/items` (no query).
    pub path: String,
    pub query: Vec<(String, String)>,
    pub headers: Vec<(&'static str, String)>,
    pub body: Option<Vec<u8>>,
}

impl Call {
    pub fn new(method: Method, path: String) -> Self {
        Self { method, path, query: Vec::new(), headers: Vec::new(), body: None }
    }
    pub fn query(mut self, query: Vec<(String, String)>) -> Self {
        self.query = query;
        self
    }
    pub fn header(mut self, name: &'static str, value: impl Into<String>) -> Self {
        self.headers.push((name, value.into()));
        self
    }
    pub fn json_body(mut self, body: &serde_json::Value) -> Self {
        self.body = Some(body.to_string().into_bytes());
        self.headers.push(("content-type", "application/json".into()));
        self
    }
}

/// A successful (2xx or 304) answer.
#[derive(Debug)]
pub(crate) struct Reply {
    pub headers: HeaderMap,
    pub body: Vec<u8>,
    /// Whether Zotero answered 304: nothing changed since the version the request named.
    pub not_modified: bool,
    method: Method,
    path: String,
}

impl Reply {
    /// `Last-Modified-Version`, or 0 when absent.
    pub fn last_modified_version(&self) -> u64 {
        header_u64(&self.headers, "last-modified-version").unwrap_or(0)
    }
    /// `Total-Results`, when present.
    pub fn total_results(&self) -> Option<u64> {
        header_u64(&self.headers, "total-results")
    }
    pub fn json<T: DeserializeOwned>(&self) -> Result<T, ZoteroError> {
        serde_json::from_slice(&self.body).map_err(|e| self.decode_error(e.to_string()))
    }
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
    pub fn decode_error(&self, reason: String) -> ZoteroError {
        ZoteroError::Decode { method: self.method.to_string(), path: self.path.clone(), reason }
    }
}

pub(crate) fn is_write(method: &Method) -> bool {
    matches!(*method, Method::POST | Method::PUT | Method::PATCH | Method::DELETE)
}

fn header_u64(headers: &HeaderMap, name: &str) -> Option<u64> {
    headers.get(name)?.to_str().ok()?.trim().parse().ok()
}

/// What a Zotero server can do, for code that would otherwise ask which server it talks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Capabilities {
    /// `/deleted` is always served, so a 404 from it is an error. Without this a 404 there means the server
    /// keeps no list of deletions (some Zotero Desktop builds' local API has none): removals cannot be seen,
    /// which is not the same as "none".
    pub deletions: bool,
    /// A bare children listing includes annotations. Without this they come only when asked for by type (Zotero
    /// Desktop's local API), so a full listing asks for them alongside.
    pub annotation_children: bool,
    /// A file stored zipped (a snapshot) goes up as an archive. Without this the server keeps the file itself
    /// and stores the bytes it is sent (Zotero Desktop).
    pub file_archives: bool,
    /// A stored file is renamed by changing its item's `filename` (the file follows, as Zotero Desktop syncs
    /// it). Without this the name would change without the file (Zotero Desktop's local API: the file on disk
    /// keeps its name).
    pub file_renames: bool,
    /// An upload's `If-Match` is checked against the hash of the file as last synced, not the md5 the server
    /// reports (Zotero Desktop's local API), so its 412 says more than "changed meanwhile".
    pub if_match_synced_hash: bool,
}

impl Capabilities {
    /// zotero.org's Web API.
    pub const WEB_API: Self = Self {
        deletions: true,
        annotation_children: true,
        file_archives: true,
        file_renames: true,
        if_match_synced_hash: false,
    };
}

/// What differs between the servers that speak the Web API: zotero.org ([`WebApi`]) and Zotero Desktop's local
/// API (its backend lives in [`super::local`]). The shared path (the in-flight limit, backoff, 429/503 retries,
/// the reading of a status) is the transport's; a backend adds its credentials, names its own refusals, and may
/// wrap a send.
#[async_trait(?Send)]
pub(crate) trait Backend {
    /// What this server can do.
    fn caps(&self) -> Capabilities;

    /// `builder` with this server's credentials for a request of `method`.
    fn credentials(&self, method: &Method, builder: http::request::Builder) -> http::request::Builder;

    /// The error for a request to `base` that nothing answered (or that timed out).
    fn unanswered(&self, _base: &str, error: HttpError) -> ZoteroError {
        ZoteroError::Transport(error)
    }

    /// A failure status this server means something of its own by, read before the shared reading.
    fn refusal(&self, _base: &str, _status: u16, _body: &[u8]) -> Option<ZoteroError> {
        None
    }

    /// Sends `call` through `transport`'s shared path, with whatever this server asks around it.
    async fn execute(&self, transport: &Transport, call: &Call) -> Result<Reply, ZoteroError> {
        transport.execute_once(call).await
    }
}

/// zotero.org's Web API: the key on every request, nothing around a send.
pub(crate) struct WebApi {
    api_key: String,
}

impl WebApi {
    pub fn new(api_key: &str) -> Self {
        Self { api_key: api_key.to_owned() }
    }
}

#[async_trait(?Send)]
impl Backend for WebApi {
    fn caps(&self) -> Capabilities {
        Capabilities::WEB_API
    }

    fn credentials(&self, _: &Method, builder: http::request::Builder) -> http::request::Builder {
        builder.header("zotero-api-key", &self.api_key)
    }
}

/// Sends requests for one client (one MCP request's worth of work).
pub(crate) struct Transport {
    http: Rc<dyn HttpClient>,
    clock: Rc<dyn Clock>,
    base_url: String,
    policy: RetryPolicy,
    in_flight: async_lock::Semaphore,
    /// No request starts before this time (ms since epoch); set by `Backoff` headers, only ever moved later.
    backoff_until_ms: Cell<u64>,
    /// The server on the other end: zotero.org unless [`Self::with_backend`] says otherwise.
    backend: Box<dyn Backend>,
}

impl Transport {
    pub fn new(
        http: Rc<dyn HttpClient>,
        clock: Rc<dyn Clock>,
        base_url: &str,
        api_key: &str,
        policy: RetryPolicy,
    ) -> Self {
        Self {
            http,
            clock,
            base_url: base_url.trim_end_matches('/').to_owned(),
            policy,
            in_flight: async_lock::Semaphore::new(MAX_IN_FLIGHT),
            backoff_until_ms: Cell::new(0),
            backend: Box::new(WebApi::new(api_key)),
        }
    }

    /// This transport talks to another server than zotero.org.
    pub fn with_backend(mut self, backend: Box<dyn Backend>) -> Self {
        self.backend = backend;
        self
    }

    /// What the server on the other end can do.
    pub fn caps(&self) -> Capabilities {
        self.backend.caps()
    }

    /// The base URL, without a trailing slash.
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// The HTTP client and clock, for a backend that sends requests of its own around a call.
    pub fn platform(&self) -> (&dyn HttpClient, &dyn Clock) {
        (self.http.as_ref(), self.clock.as_ref())
    }

    /// Sends `call` as the backend asks (Zotero Desktop's local API, for one, wants a local key on a write).
    pub async fn execute(&self, call: &Call) -> Result<Reply, ZoteroError> {
        self.backend.execute(self, call).await
    }

    /// Sends `call`, retrying 429/503 within the policy. Any other failure status is an error at once.
    pub async fn execute_once(&self, call: &Call) -> Result<Reply, ZoteroError> {
        let _permit = self.in_flight.acquire().await;
        let mut attempt = 0;
        // Whether an attempt was answered 503 and sent again: a write refused after that may have been applied.
        let mut after_503 = false;
        loop {
            self.wait_for_backoff().await;
            let request = self.build(call)?;
            let url = request.uri().to_string();
            let timeout = self.policy.request_timeout_ms;
            let response = within(self.clock.as_ref(), timeout, self.http.send(request))
                .await
                .ok_or(HttpError::Timeout { url, after_ms: timeout })
                .and_then(|sent| sent)
                .map_err(|error| self.backend.unanswered(&self.base_url, error))?;
            let (parts, body) = response.into_parts();
            self.note_backoff(&parts.headers);
            let status = parts.status;
            if status.is_success() || status == StatusCode::NOT_MODIFIED {
                return Ok(Reply {
                    headers: parts.headers,
                    body,
                    not_modified: status == StatusCode::NOT_MODIFIED,
                    method: call.method.clone(),
                    path: call.path.clone(),
                });
            }
            if let Some(refused) = self.backend.refusal(&self.base_url, status.as_u16(), &body) {
                return Err(refused);
            }
            // A write's earlier attempt may have been applied with its answer lost as a 503 (a 429 turns a request
            // away before anything is done): Zotero then refuses the repeat (412 "Write token already used", a
            // stale version, a deleted object), and that refusal says nothing about whether the write landed.
            if after_503 && is_write(&call.method) && !matches!(status.as_u16(), 429 | 503) {
                return Err(ZoteroError::AnswerLost {
                    method: call.method.to_string(),
                    path: call.path.clone(),
                    status: status.as_u16(),
                    reason: format!(
                        "Zotero answered {} to the request sent again after a 503, which the earlier attempt \
                         may have caused",
                        status.as_u16()
                    ),
                });
            }
            match status.as_u16() {
                412 => return Err(ZoteroError::Conflict { method: call.method.to_string(), path: call.path.clone() }),
                code @ (429 | 503) => {
                    let retry_after = retry_after_ms(&parts.headers, self.clock.now_ms());
                    let wait =
                        retry_wait(&self.policy, retry_after, attempt).map_err(|wait| ZoteroError::Unavailable {
                            method: call.method.to_string(),
                            path: call.path.clone(),
                            status: code,
                            retry_after_secs: wait.div_ceil(1000).max(1),
                        })?;
                    self.clock.sleep(wait).await;
                    attempt += 1;
                    after_503 |= code == 503;
                }
                code => {
                    let text = String::from_utf8_lossy(&body);
                    let body: String = text.chars().take(500).collect();
                    return Err(ZoteroError::Api {
                        method: call.method.to_string(),
                        path: call.path.clone(),
                        status: code,
                        body: body.trim().to_owned(),
                        hint: hint_for(code),
                    });
                }
            }
        }
    }

    fn build(&self, call: &Call) -> Result<HttpRequest, ZoteroError> {
        let mut url = format!("{}{}", self.base_url, call.path);
        if !call.query.is_empty() {
            let mut query = form_urlencoded::Serializer::new(String::new());
            for (name, value) in &call.query {
                query.append_pair(name, value);
            }
            url.push('?');
            url.push_str(&query.finish());
        }
        let mut builder =
            http::Request::builder().method(call.method.clone()).uri(&url).header("zotero-api-version", "3");
        builder = self.backend.credentials(&call.method, builder);
        builder = builder.header(
            "user-agent",
            concat!("zotero-mcp/", env!("CARGO_PKG_VERSION"), " (+https://github.com/zotero-mcp)"),
        );
        for (name, value) in &call.headers {
            builder = builder.header(*name, value);
        }
        builder.body(call.body.clone().unwrap_or_default()).map_err(|e| ZoteroError::Decode {
            method: call.method.to_string(),
            path: call.path.clone(),
            reason: format!("the request could not be built: {e}"),
        })
    }

    async fn wait_for_backoff(&self) {
        let now = self.clock.now_ms();
        let until = self.backoff_until_ms.get();
        if until > now {
            self.clock.sleep(until - now).await;
        }
    }

    fn note_backoff(&self, headers: &HeaderMap) {
        let now = self.clock.now_ms();
        if let Some(ms) = headers.get("backoff").and_then(|v| v.to_str().ok()).and_then(|v| delay_ms(v, now)) {
            let until = now + ms;
            if until > self.backoff_until_ms.get() {
                self.backoff_until_ms.set(until);
            }
        }
    }
}

/// The one retry rule for a Zotero step that is safe to repeat: a read, a write carrying a write token or a
/// version precondition, an upload's authorization or registration under its `If-Match`/`If-None-Match` (each
/// either lands once or is refused with 412, however often it is sent). After a 429 or a 503 such a step is sent
/// again after `Retry-After` (or, without one, a delay doubling from `base_delay_ms`), at most `max_retries`
/// times, and never after a wait longer than `max_wait_ms`, so a Worker request is not held for minutes.
/// `attempt` counts the retries made so far. `Ok(wait)`: sleep, then send again; `Err(wait)`: give up, and tell
/// the caller to come back after `wait`. A step that is not safe to repeat never comes here.
pub(crate) fn retry_wait(policy: &RetryPolicy, retry_after_ms: Option<u64>, attempt: u32) -> Result<u64, u64> {
    let wait = retry_after_ms.unwrap_or(policy.base_delay_ms << attempt.min(20));
    if attempt >= policy.max_retries || wait > policy.max_wait_ms {
        Err(wait)
    } else {
        Ok(wait)
    }
}

/// `Retry-After` in milliseconds from `now_ms` (none when absent, unreadable or zero).
pub(crate) fn retry_after_ms(headers: &HeaderMap, now_ms: u64) -> Option<u64> {
    let value = headers.get(http::header::RETRY_AFTER)?.to_str().ok()?;
    delay_ms(value, now_ms).filter(|ms| *ms > 0)
}

/// A delay given as whole seconds or as an HTTP date, in milliseconds from `now_ms`.
fn delay_ms(value: &str, now_ms: u64) -> Option<u64> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<f64>() {
        return (secs.is_finite() && secs >= 0.0).then_some((secs * 1000.0) as u64);
    }
    let at = httpdate::parse_http_date(value).ok()?;
    let at_ms = at.duration_since(std::time::UNIX_EPOCH).ok()?.as_millis() as u64;
    Some(at_ms.saturating_sub(now_ms))
}
