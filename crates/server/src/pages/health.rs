//! `/health`: which parts of the configuration are in place, without ever echoing a value.

use std::borrow::Cow;
use std::cell::{Cell, RefCell};
use std::rc::Rc;

use serde::Serialize;
use zotero_mcp_core::webdav::{WebDavClient, WebDavError, WebDavPolicy, WebDavSettings};

use crate::app::{App, McpAccess};
use crate::platform::HttpResponse;

#[derive(Debug, Serialize)]
pub struct Check {
    pub name: &'static str,
    pub ok: bool,
    /// Whether the server is unusable without it (the others disable one feature).
    pub required: bool,
    /// What to do when it is not ok (how to set a variable depends on the shell: `Config::setup`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<Cow<'static, str>>,
}

#[derive(Debug, Serialize)]
pub struct Health {
    pub status: &'static str,
    pub name: &'static str,
    pub version: &'static str,
    pub checks: Vec<Check>,
}

/// What this server has in place. Only features that exist are listed: a check for something the server cannot
/// do yet would report "ok" about nothing.
pub fn checks(app: &App) -> Health {
    let config = &app.config;
    let check = |name, ok, required, fix: String| Check { name, ok, required, fix: (!ok).then_some(fix.into()) };
    let how = |variable| config.setup.how_to_set(variable);
    let mut checks = vec![check(
        "zotero_api_key",
        config.zotero_api_key.is_some(),
        true,
        format!("Set ZOTERO_API_KEY (a key from zotero.org/settings/keys): {}.", how("ZOTERO_API_KEY")),
    )];
    // The login page needs a password only where this server issues its own tokens.
    if matches!(app.access, McpAccess::OAuth) {
        checks.push(check(
            "auth_password",
            config.auth_password.is_some(),
            true,
            format!("Set AUTH_PASSWORD (the password of the login page): {}.", how("AUTH_PASSWORD")),
        ));
    }
    let usable = checks.iter().all(|c| c.ok || !c.required);
    Health {
        status: if usable { "ok" } else { "misconfigured" },
        name: crate::mcp::protocol::SERVER_NAME,
        version: crate::mcp::protocol::SERVER_VERSION,
        checks,
    }
}

/// Seconds a WebDAV probe's answer is reused: `/health` is public, and must not let anyone make this server call
/// the user's WebDAV server at will.
const WEBDAV_PROBE_SECS: u64 = 60;

/// What a probe found: nothing to fix, or what to fix.
type ProbeOutcome = Result<(), &'static str>;

/// One probe of the WebDAV server: when it started, and its outcome once it is known. Every `/health` request
/// of the next [`WEBDAV_PROBE_SECS`] awaits this one, including those that arrive while it is still in flight,
/// so a burst of requests sends one `PROPFIND` (issue 26): each takes the one permit in turn, and only the one
/// that finds no outcome runs the probe. If the request running it is dropped half-way, its permit goes to the
/// next waiter, which runs it. (A semaphore the Zotero client already links rather than an async `OnceCell`,
/// which cost the Worker about 1.5 KB of code for the same rule.)
struct Probe {
    started: u64,
    turn: async_lock::Semaphore,
    outcome: Cell<Option<ProbeOutcome>>,
}

thread_local! {
    /// The current probe of this isolate (or server thread).
    static LAST_PROBE: RefCell<Option<Rc<Probe>>> = const { RefCell::new(None) };
}

/// The probe to await: the current one while it is fresh (finished or not), else a new one.
fn current_probe(now: u64) -> Rc<Probe> {
    LAST_PROBE.with(|last| {
        let mut last = last.borrow_mut();
        match &*last {
            Some(probe) if now.saturating_sub(probe.started) < WEBDAV_PROBE_SECS => probe.clone(),
            _ => {
                let probe =
                    Rc::new(Probe { started: now, turn: async_lock::Semaphore::new(1), outcome: Cell::new(None) });
                *last = Some(probe.clone());
                probe
            }
        }
    })
}

/// Whether the WebDAV server answers with the configured credentials and has the `zotero/` folder (a `PROPFIND`,
/// at most once a minute per isolate, however many requests ask at once). Not required: without it only
/// attachment files are out of reach. The fix never echoes the URL or the server's answer (`/health` is public).
pub async fn webdav_check(app: &App) -> Check {
    let Some(settings) = &app.config.webdav else {
        return Check {
            name: "webdav",
            ok: false,
            required: false,
            fix: Some("Set WEBDAV_URL, WEBDAV_USERNAME and WEBDAV_PASSWORD to read attachment files (the WebDAV folder Zotero Desktop syncs to).".into()),
        };
    };
    let probe = current_probe(app.platform.clock.now_secs());
    let _turn = probe.turn.acquire().await;
    let outcome = match probe.outcome.get() {
        Some(outcome) => outcome,
        None => {
            let outcome = probe_webdav(app, settings).await;
            probe.outcome.set(Some(outcome));
            outcome
        }
    };
    Check { name: "webdav", ok: outcome.is_ok(), required: false, fix: outcome.err().map(Cow::Borrowed) }
}

/// One `PROPFIND` of the `zotero/` folder, without retries, within 5 s.
async fn probe_webdav(app: &App, settings: &WebDavSettings) -> ProbeOutcome {
    let policy = WebDavPolicy { max_retries: 0, attempt_timeout_ms: 5_000, ..WebDavPolicy::default() };
    let client = match WebDavClient::new(settings, app.platform.http.clone(), app.platform.clock.clone(), policy) {
        Err(_) => return Err("WEBDAV_URL is not an http(s) URL of a folder."),
        Ok(client) => client,
    };
    client.check().await.map(|_| ()).map_err(|e| match e {
        WebDavError::Unauthorized { .. } => "The WebDAV server refused the sign-in: check WEBDAV_USERNAME and WEBDAV_PASSWORD (many providers want an app password).",
        WebDavError::MissingFolder { .. } => "There is no zotero/ folder at WEBDAV_URL: set up file syncing to this server in Zotero Desktop, or correct WEBDAV_URL.",
        WebDavError::BadUrl { .. } => "WEBDAV_URL is not an http(s) URL of a folder.",
        WebDavError::Redirected { .. } => "The WebDAV server redirects to another site: set WEBDAV_URL to the address it redirects to.",
        WebDavError::Unreachable { .. } | WebDavError::Timeout { .. } => "The WebDAV server does not answer: check WEBDAV_URL and that the server is up.",
        _ => "The WebDAV server answered in an unexpected way: check WEBDAV_URL.",
    })
}

pub async fn report(app: &App) -> HttpResponse {
    let mut health = checks(app);
    health.checks.push(webdav_check(app).await);
    let status = if health.status == "ok" { 200 } else { 503 };
    crate::respond::no_store(crate::respond::json(status, &serde_json::json!(health)))
}
