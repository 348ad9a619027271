//! `/health`: which parts of the configuration are in place, without ever echoing a value.

use serde::Serialize;

use crate::app::{App, McpAccess};
use crate::platform::HttpResponse;

#[derive(Debug, Serialize)]
pub struct Check {
    pub name: &'static str,
    pub ok: bool,
    /// Whether the server is unusable without it (the others disable one feature).
    pub required: bool,
    /// What to do when it is not ok.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<&'static str>,
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
    let check = |name, ok, required, fix| Check { name, ok, required, fix: (!ok).then_some(fix) };
    let mut checks = vec![check(
        "zotero_api_key",
        config.zotero_api_key.is_some(),
        true,
        "Set ZOTERO_API_KEY (a key from zotero.org/settings/keys): `wrangler secret put ZOTERO_API_KEY` on Workers, the environment or config file natively.",
    )];
    // The login page needs a password only where this server issues its own tokens.
    if matches!(app.access, McpAccess::OAuth) {
        checks.push(check(
            "auth_password",
            config.auth_password.is_some(),
            true,
            "Set AUTH_PASSWORD (the password of the login page): `wrangler secret put AUTH_PASSWORD` on Workers, the environment or config file natively.",
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

thread_local! {
    /// The last probe: when (seconds), and whether it answered or what to fix.
    static LAST_PROBE: std::cell::Cell<Option<(u64, Result<(), &'static str>)>> = const { std::cell::Cell::new(None) };
}

/// Whether the WebDAV server answers with the configured credentials and has the `zotero/` folder (a `PROPFIND`,
/// at most once a minute per isolate). Not required: without it only attachment files are out of reach. The fix
/// never echoes the URL or the server's answer (`/health` is public).
pub async fn webdav_check(app: &App) -> Check {
    use zotero_mcp_core::webdav::{WebDavClient, WebDavError, WebDavPolicy};
    let Some(settings) = &app.config.webdav else {
        return Check {
            name: "webdav",
            ok: false,
            required: false,
            fix: Some("Set WEBDAV_URL, WEBDAV_USERNAME and WEBDAV_PASSWORD to read attachment files (the WebDAV folder Zotero Desktop syncs to)."),
        };
    };
    let now = app.platform.clock.now_secs();
    let cached = LAST_PROBE.with(|last| last.get()).filter(|(at, _)| now.saturating_sub(*at) < WEBDAV_PROBE_SECS);
    let outcome = match cached {
        Some((_, outcome)) => outcome,
        None => {
            let policy = WebDavPolicy { max_retries: 0, attempt_timeout_ms: 5_000, ..WebDavPolicy::default() };
            let outcome = match WebDavClient::new(settings, app.platform.http.clone(), app.platform.clock.clone(), policy) {
                Err(_) => Err("WEBDAV_URL is not an http(s) URL of a folder."),
                Ok(client) => client.check().await.map(|_| ()).map_err(|e| match e {
                    WebDavError::Unauthorized { .. } => "The WebDAV server refused the sign-in: check WEBDAV_USERNAME and WEBDAV_PASSWORD (many providers want an app password).",
                    WebDavError::MissingFolder { .. } => "There is no zotero/ folder at WEBDAV_URL: set up file syncing to this server in Zotero Desktop, or correct WEBDAV_URL.",
                    WebDavError::BadUrl { .. } => "WEBDAV_URL is not an http(s) URL of a folder.",
                    WebDavError::Redirected { .. } => "The WebDAV server redirects to another site: set WEBDAV_URL to the address it redirects to.",
                    WebDavError::Unreachable { .. } | WebDavError::Timeout { .. } => "The WebDAV server does not answer: check WEBDAV_URL and that the server is up.",
                    _ => "The WebDAV server answered in an unexpected way: check WEBDAV_URL.",
                }),
            };
            LAST_PROBE.with(|last| last.set(Some((now, outcome))));
            outcome
        }
    };
    Check { name: "webdav", ok: outcome.is_ok(), required: false, fix: outcome.err() }
}

pub async fn report(app: &App) -> HttpResponse {
    let mut health = checks(app);
    health.checks.push(webdav_check(app).await);
    let status = if health.status == "ok" { 200 } else { 503 };
    crate::respond::no_store(crate::respond::json(status, &serde_json::json!(health)))
}
