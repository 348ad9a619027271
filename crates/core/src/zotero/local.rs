//! Zotero Desktop's local API (`http://localhost:23119/api/`): the Web API's shape, served by the desktop app
//! from its own database, with its own rules.
//!
//! What differs for a client, as Zotero's `server_localAPI.js` implements it:
//! - reads need no key; the user library is `users/0`; there is no `/keys/current` (nor, on some builds,
//!   `/deleted`);
//! - every answer names the instance in `Zotero-Server-ID` (from the builds that accept writes on). A write must
//!   send it back (428 without it) and a request naming another instance is refused (412), so a client that
//!   sends it never writes into a Zotero profile other than the one it read;
//! - writes need a *local* key, unrelated to zotero.org keys, issued by `POST /api/local/authorize` after the
//!   person answers Zotero's own dialog (Allow: one write; Always Allow: until revoked). A 401 means the key was
//!   missing or spent; the write was refused before anything changed, so one fresh authorization and one resend
//!   are safe, and nothing else is retried;
//! - versions are the local database's own counters, unrelated to the Web API's: a version read here must never
//!   be sent to api.zotero.org, and the reverse.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use async_trait::async_trait;
use http::Method;

use super::error::ZoteroError;
use super::transport::{is_write, Backend, Call, Capabilities, Reply, Transport, WebApi};
use crate::platform::{within, Clock, HttpClient, HttpError};

/// The name Zotero's authorization dialog shows for this server.
pub const APP_NAME: &str = "zotero-mcp";

/// Zotero Desktop's default local API address.
pub const DEFAULT_LOCAL_URL: &str = "http://localhost:23119/api";

/// How long a person may take to answer Zotero's authorization dialog.
pub const AUTHORIZE_TIMEOUT_MS: u64 = 180_000;

/// Where to switch the local API on, for every message that needs to say it.
pub use super::error::SWITCH_ON;

/// The local write key, shared by every request of the process: issued once by Zotero's dialog and kept while
/// it works (a single-use key is spent by its first write; the next write asks again).
#[derive(Default)]
pub struct LocalKey {
    key: RefCell<Option<String>>,
    /// Dialogs asked for by this process, for messages and tests.
    asked: Cell<u32>,
}

impl LocalKey {
    /// A key known ahead (an "Always Allow" key kept from an earlier run).
    pub fn with(key: Option<String>) -> Self {
        Self { key: RefCell::new(key), asked: Cell::new(0) }
    }

    pub fn get(&self) -> Option<String> {
        self.key.borrow().clone()
    }

    pub fn set(&self, key: Option<String>) {
        *self.key.borrow_mut() = key;
    }

    pub(crate) fn note_asked(&self) {
        self.asked.set(self.asked.get() + 1);
    }

    /// How many times this process asked Zotero for a key.
    pub fn asked(&self) -> u32 {
        self.asked.get()
    }
}

/// What one tool call has done on the local API so far, shared by all its clients (items and files): Zotero's
/// "Allow" key is good for one write, so a call of several writes may be asked about more than once, and a Deny
/// part-way must say that earlier writes stand, and stop the call asking.
#[derive(Default, Debug)]
pub struct LocalCall {
    /// Writes Zotero took past its key check (each spends an "Allow" key).
    writes: Cell<u32>,
    /// Dialogs this call asked for.
    dialogs: Cell<u32>,
    /// The person answered Deny: the call asks no more (a clean-up is a change too, and they said no).
    denied: Cell<bool>,
}

impl LocalCall {
    /// How many times this call asked Zotero's dialog.
    pub fn dialogs(&self) -> u32 {
        self.dialogs.get()
    }

    /// Whether the person denied one of this call's writes.
    pub fn denied(&self) -> bool {
        self.denied.get()
    }

    /// The refusal of a write after a Deny (this one's or an earlier one's in the call).
    fn refusal(&self) -> ZoteroError {
        ZoteroError::LocalWriteDenied { part_way: self.writes.get() > 0 }
    }
}

/// What a client of the local API carries besides the address.
#[derive(Clone)]
pub struct LocalApiAccess {
    /// The instance's `Zotero-Server-ID`, sent on every request once known.
    pub server_id: Option<String>,
    /// The write key, shared by every request of the process.
    pub key: Rc<LocalKey>,
    /// This call's dialogs and writes, shared by its clients.
    pub call: Rc<LocalCall>,
}

/// The running Zotero, as its local API root (`GET /api/`) describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DesktopInfo {
    /// `X-Zotero-Version`, e.g. `7.0.15` or `10.0.2-beta.9`.
    pub version: Option<String>,
    /// `Zotero-Server-ID`: present from the builds that accept writes on the local API.
    pub server_id: Option<String>,
}

impl DesktopInfo {
    /// Whether this build takes writes on its local API. Decided from what it sends, not from its version
    /// number: a build that names no instance cannot take the `Zotero-Server-ID` every local write must carry.
    pub fn accepts_writes(&self) -> bool {
        self.server_id.is_some()
    }

    /// "Zotero 10.0.2-beta.9", or "Zotero (version not given)".
    pub fn describe(&self) -> String {
        match &self.version {
            Some(version) => format!("Zotero {version}"),
            None => "Zotero (version not given)".to_owned(),
        }
    }
}

/// Asks the local API at `base` (e.g. `http://localhost:23119/api`) what it is: one `GET /api/`.
pub async fn probe(http: &dyn HttpClient, clock: &dyn Clock, base: &str) -> Result<DesktopInfo, ZoteroError> {
    let url = format!("{}/", base.trim_end_matches('/'));
    let request = http::Request::builder()
        .method(Method::GET)
        .uri(&url)
        .header("zotero-api-version", "3")
        .body(Vec::new())
        .map_err(|e| ZoteroError::Config(format!("ZOTERO_LOCAL_URL `{base}` is not a usable URL: {e}")))?;
    let response = within(clock, 10_000, http.send(request))
        .await
        .ok_or(HttpError::Timeout { url: url.clone(), after_ms: 10_000 })
        .and_then(|sent| sent)
        .map_err(|error| unreachable(base, &error))?;
    let header = |name: &str| {
        response.headers().get(name).and_then(|v| v.to_str().ok()).map(str::trim).filter(|v| !v.is_empty())
    };
    match response.status().as_u16() {
        200..=299 => Ok(DesktopInfo {
            version: header("x-zotero-version").map(str::to_owned),
            server_id: header("zotero-server-id").map(str::to_owned),
        }),
        403 => Err(ZoteroError::LocalApiOff { url }),
        status => Err(ZoteroError::Config(format!(
            "{url} answered {status}, not as Zotero's local API does: check ZOTERO_LOCAL_URL (Zotero Desktop \
             listens on {DEFAULT_LOCAL_URL})"
        ))),
    }
}

/// The error for a local API that did not answer at all.
pub(crate) fn unreachable(base: &str, error: &HttpError) -> ZoteroError {
    ZoteroError::DesktopUnreachable { url: base.to_owned(), reason: error.to_string() }
}

/// Asks Zotero at `base` for a local write key (`POST /api/local/authorize`): Zotero shows its dialog and
/// answers when the person does; the key is kept in `access` for every later write of the process.
pub async fn authorize(
    http: &dyn HttpClient,
    clock: &dyn Clock,
    base: &str,
    access: &LocalApiAccess,
) -> Result<(), ZoteroError> {
    let url = format!("{}/local/authorize", base.trim_end_matches('/'));
    let mut builder = http::Request::builder()
        .method(Method::POST)
        .uri(&url)
        .header("zotero-api-version", "3")
        .header("content-type", "application/json");
    if let Some(id) = &access.server_id {
        builder = builder.header("zotero-server-id", id);
    }
    let body = serde_json::json!({ "appName": APP_NAME }).to_string().into_bytes();
    let request = builder.body(body).map_err(|e| ZoteroError::Decode {
        method: "POST".into(),
        path: "/local/authorize".into(),
        reason: format!("the request could not be built: {e}"),
    })?;
    if access.call.denied() {
        // The person said no to this call already: asking again, even to tidy up, would be asking them to
        // change their mind.
        return Err(access.call.refusal());
    }
    access.key.note_asked();
    access.call.dialogs.set(access.call.dialogs.get() + 1);
    let response = within(clock, AUTHORIZE_TIMEOUT_MS, http.send(request))
        .await
        .ok_or(HttpError::Timeout { url: url.clone(), after_ms: AUTHORIZE_TIMEOUT_MS })
        .and_then(|sent| sent)
        .map_err(|error| unreachable(base, &error))?;
    let status = response.status().as_u16();
    if status == 429 {
        // Zotero shows at most five dialogs a minute; it says when the next may come.
        let wait_secs = response
            .headers()
            .get(http::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .unwrap_or(60);
        return Err(ZoteroError::Unavailable {
            method: "POST".into(),
            path: "/local/authorize".into(),
            status,
            retry_after_secs: wait_secs.max(1),
        });
    }
    match read_authorization(status, response.body()) {
        Ok(Authorized::Key(key)) => {
            access.key.set(Some(key));
            Ok(())
        }
        Ok(Authorized::Denied) => {
            access.call.denied.set(true);
            Err(access.call.refusal())
        }
        Err(reason) => Err(ZoteroError::Decode {
            method: "POST".into(),
            path: "/local/authorize".into(),
            reason: format!("Zotero's authorization did not give a key: {reason}"),
        }),
    }
}

/// Sends a write to the local API with the process's local key: asked for first when there is none, and once
/// more when Zotero answers 401 (`refused` says so of an answer: the key was missing or spent), after which the
/// same write is sent again. Zotero refused it before changing anything, so the resend cannot apply it twice;
/// nothing else is retried. The one place that decides this for the transport and the file uploads alike.
pub(crate) async fn with_local_key<T, E, F, Fut>(
    http: &dyn HttpClient,
    clock: &dyn Clock,
    base: &str,
    access: &LocalApiAccess,
    refused: impl Fn(&Result<T, E>) -> bool,
    send: F,
) -> Result<T, E>
where
    E: From<ZoteroError>,
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Result<T, E>>,
{
    if access.call.denied() {
        // A write after a Deny in the same call (the next step, or the clean-up of the last): not sent, and Zotero
        // is not asked again.
        return Err(access.call.refusal().into());
    }
    if access.key.get().is_none() {
        authorize(http, clock, base, access).await?;
    }
    let mut answer = send().await;
    if refused(&answer) {
        access.key.set(None);
        authorize(http, clock, base, access).await?;
        answer = send().await;
    }
    if !refused(&answer) {
        // Past the key check: Zotero took the write (and spent an "Allow" key on it), whatever it then answered.
        access.call.writes.set(access.call.writes.get() + 1);
    }
    answer
}

/// Whether this build talks to Zotero Desktop at all: not without the `desktop` feature (the Worker's build).
/// The one switch of the core: the desktop backends are constructed only where it is on, so everything reachable
/// only through them is left out of the Worker; the two functions below are how the rest of the core asks it.
const DESKTOP: bool = cfg!(any(test, feature = "desktop"));

/// `access`, where this build talks to Zotero Desktop at all: always `None` without the `desktop` feature (the
/// Worker's build), so the optimizer drops the synchronous desktop branches there.
#[inline]
pub(crate) fn enabled(access: &Option<LocalApiAccess>) -> Option<&LocalApiAccess> {
    if DESKTOP {
        access.as_ref()
    } else {
        None
    }
}

/// `caps`, where this build talks to Zotero Desktop at all: zotero.org's without the `desktop` feature, so the
/// optimizer drops the branches only a desktop takes (an async one stays linked even when it can never run).
#[inline]
pub(crate) fn possible(caps: Capabilities) -> Capabilities {
    if DESKTOP {
        caps
    } else {
        Capabilities::WEB_API
    }
}

/// What Zotero Desktop's local API can do, unlike zotero.org.
pub(crate) const CAPABILITIES: Capabilities = Capabilities {
    deletions: false,
    annotation_children: false,
    file_archives: false,
    file_renames: false,
    if_match_synced_hash: true,
};

/// The transport's backend for Zotero Desktop's local API. Built only where this build talks to the desktop:
/// elsewhere (the Worker) nothing constructs it, so its async send, reachable only through the trait object, is
/// not linked either; a client made for the desktop there behaves as a keyless Web API client, as it always
/// has.
pub(crate) fn backend(access: LocalApiAccess) -> Box<dyn Backend> {
    match enabled(&Some(access)) {
        Some(access) => Box::new(LocalApi { access: access.clone() }),
        None => Box::new(WebApi::new("")),
    }
}

/// Zotero Desktop's local API behind the transport: the instance id on every request, the local key on writes
/// (asked for by Zotero's dialog, and once more after a 401), and the desktop's own refusals named.
struct LocalApi {
    access: LocalApiAccess,
}

#[async_trait(?Send)]
impl Backend for LocalApi {
    fn caps(&self) -> Capabilities {
        CAPABILITIES
    }

    fn credentials(&self, method: &Method, mut builder: http::request::Builder) -> http::request::Builder {
        // Reads need no key; a write carries the local one. The instance id goes on every request, so a request
        // that reaches another Zotero profile than the one first probed is refused (412).
        if let Some(key) = self.access.key.get().filter(|_| is_write(method)) {
            builder = builder.header("zotero-api-key", key);
        }
        match &self.access.server_id {
            Some(id) => builder.header("zotero-server-id", id),
            None => builder,
        }
    }

    fn unanswered(&self, base: &str, error: HttpError) -> ZoteroError {
        match error {
            // Nothing answers on the desktop's port: Zotero is not running (or listens elsewhere).
            HttpError::Transport { .. } => unreachable(base, &error),
            error => ZoteroError::Transport(error),
        }
    }

    fn refusal(&self, base: &str, status: u16, body: &[u8]) -> Option<ZoteroError> {
        match status {
            412 if body.starts_with(b"Zotero-Server-ID") => Some(ZoteroError::DesktopChanged { url: base.to_owned() }),
            403 if body.starts_with(b"Local API is not enabled") => {
                Some(ZoteroError::LocalApiOff { url: base.to_owned() })
            }
            _ => None,
        }
    }

    /// A write first needs a local key (Zotero's dialog gives one), and a 401 (the key missing or spent) is
    /// answered by one fresh authorization and one resend: Zotero refused the write before changing anything, so
    /// the resend cannot apply it twice.
    async fn execute(&self, transport: &Transport, call: &Call) -> Result<Reply, ZoteroError> {
        if !is_write(&call.method) {
            return transport.execute_once(call).await;
        }
        let refused = |answer: &Result<Reply, ZoteroError>| matches!(answer, Err(ZoteroError::Api { status: 401, .. }));
        let (http, clock) = transport.platform();
        with_local_key(http, clock, transport.base_url(), &self.access, refused, || transport.execute_once(call)).await
    }
}

/// What `POST /api/local/authorize` answered.
pub(crate) enum Authorized {
    Key(String),
    Denied,
}

/// Why Zotero's answer to `POST /api/local/authorize` gave no key (reported as a [`ZoteroError::Decode`]).
#[derive(Debug, thiserror::Error)]
pub(crate) enum NoKey {
    #[error("{0}")]
    NotJson(#[from] serde_json::Error),
    #[error("the answer carries no key")]
    Missing,
    #[error("it answered {status}: {body}")]
    Status { status: u16, body: String },
}

/// Reads the authorization answer: `{"key": "…", "remember": bool}` on Allow, 403 `{"denied": true}` on Deny.
pub(crate) fn read_authorization(status: u16, body: &[u8]) -> Result<Authorized, NoKey> {
    match status {
        200 => {
            let value: serde_json::Value = serde_json::from_slice(body)?;
            value["key"]
                .as_str()
                .filter(|key| !key.is_empty() && key.bytes().all(|b| b.is_ascii_alphanumeric()))
                .map(|key| Authorized::Key(key.to_owned()))
                .ok_or(NoKey::Missing)
        }
        403 => Ok(Authorized::Denied),
        status => {
            Err(NoKey::Status { status, body: String::from_utf8_lossy(body).chars().take(200).collect::<String>() })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_follow_the_server_id_not_the_version_number() {
        let seven = DesktopInfo { version: Some("7.0.15".into()), server_id: None };
        let ten = DesktopInfo { version: Some("10.0.2-beta.9".into()), server_id: Some("abcdefghijkl".into()) };
        assert!(!seven.accepts_writes());
        assert!(ten.accepts_writes());
        assert_eq!(ten.describe(), "Zotero 10.0.2-beta.9");
    }

    #[test]
    fn an_authorization_answer_is_read_strictly() {
        assert!(
            matches!(read_authorization(200, br#"{"key":"abc123","remember":true}"#), Ok(Authorized::Key(k)) if k == "abc123")
        );
        assert!(matches!(read_authorization(403, br#"{"denied":true}"#), Ok(Authorized::Denied)));
        assert!(read_authorization(200, br#"{"key":"a b"}"#).is_err());
        assert!(read_authorization(200, b"{}").is_err());
        assert!(read_authorization(500, b"boom").is_err());
    }
}
