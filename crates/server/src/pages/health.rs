//! `/health`: which parts of the configuration are in place, without ever echoing a value.

use std::borrow::Cow;
use std::cell::{Cell, RefCell};
use std::rc::Rc;

use serde::Serialize;
use zotero_mcp_core::webdav::{WebDavClient, WebDavError, WebDavPolicy, WebDavSettings};
use zotero_mcp_core::zotero::{LibraryId, LibraryKind, ZoteroClient};

use crate::app::{App, McpAccess};
use crate::config::{FileStorageError, FileStoreSetting};
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
    /// What is on that must not be on a deployment (test-only switches), for whoever reads `/health` there.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
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
        warnings: test_switches_warning(config).into_iter().chain(tool_groups_warning(config)).collect(),
    }
}

/// The names in `TOOL_GROUPS` that are no group: they select nothing, so the deployment offers less than its
/// operator meant (a typo in `write` makes it read-only).
fn tool_groups_warning(config: &crate::config::Config) -> Option<String> {
    if config.tool_groups_unknown.is_empty() {
        return None;
    }
    Some(format!(
        "TOOL_GROUPS names {}, which is no tool group (the groups are read, write, files, research and admin); \
         the tools offered are those of {}.",
        config.tool_groups_unknown.join(", "),
        config.tool_groups.names()
    ))
}

/// The warning for `ENABLE_TEST_FIXTURES=1`, and whether this request was given the test-only switches (it is
/// local) or refused them (from elsewhere: the variable is probably set on a deployment).
fn test_switches_warning(config: &crate::config::Config) -> Option<String> {
    let served = if config.test_fixtures {
        "this request is local, so they are on for it"
    } else if config.test_fixtures_refused {
        "this request is not local (from another machine, or to a host name that is not loopback), so they are \
         off for it"
    } else {
        return None;
    };
    Some(format!("{} Here {served}.", crate::config::TEST_SWITCHES_WARNING))
}

/// Seconds a file store probe's answer is reused: `/health` is public, and must not let anyone make this server
/// call the user's WebDAV server, or Zotero, at will.
const PROBE_SECS: u64 = 60;

/// What a probe found: nothing to fix, or what to fix.
type ProbeOutcome = Result<(), &'static str>;

/// One probe of the file store: when it started, and its outcome once it is known. Every `/health` request
/// of the next [`PROBE_SECS`] awaits this one, including those that arrive while it is still in flight,
/// so a burst of requests sends one `PROPFIND` or key check (`tests/hardening_server.rs`): each takes the one permit in turn, and only the one
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
            Some(probe) if now.saturating_sub(probe.started) < PROBE_SECS => probe.clone(),
            _ => {
                let probe =
                    Rc::new(Probe { started: now, turn: async_lock::Semaphore::new(1), outcome: Cell::new(None) });
                *last = Some(probe.clone());
                probe
            }
        }
    })
}

/// Whether the library's files can be reached in the store the server reads them from (as
/// `RequestContext::files` chooses it): on WebDAV, whether the server answers with the configured credentials
/// and has the `zotero/` folder (a `PROPFIND`); on Zotero Storage, whether the key may read files (`GET
/// /keys/current`). At most one probe a minute per isolate, however many requests ask at once. Not required:
/// without it only attachment files are out of reach. The fix never echoes a configured value or a server's
/// answer (`/health` is public).
pub async fn files_check(app: &App) -> Check {
    let config = &app.config;
    let refused = |name, fix: &'static str| Check { name, ok: false, required: false, fix: Some(fix.into()) };
    let (name, webdav) = match config.file_store() {
        Err(FileStorageError::BadSetting(_)) => {
            return refused("files", "FILE_STORAGE must be webdav or zotero, or unset (WebDAV when WEBDAV_URL is set, else Zotero Storage).")
        }
        Err(FileStorageError::WebDavUnset) => {
            return refused("webdav", "FILE_STORAGE is webdav: set WEBDAV_URL, WEBDAV_USERNAME and WEBDAV_PASSWORD (the WebDAV folder Zotero Desktop syncs to), or unset FILE_STORAGE to use Zotero Storage.")
        }
        Ok(FileStoreSetting::WebDav(settings)) => ("webdav", Some(settings)),
        Ok(FileStoreSetting::ZoteroStorage) => ("zotero_storage", None),
    };
    if config.zotero_api_key.is_none() && webdav.is_none() {
        return refused(name, "Set ZOTERO_API_KEY: files on Zotero Storage are read with it.");
    }
    let probe = current_probe(app.platform.clock.now_secs());
    let _turn = probe.turn.acquire().await;
    let outcome = match probe.outcome.get() {
        Some(outcome) => outcome,
        None => {
            let outcome = match webdav {
                Some(settings) => probe_webdav(app, settings).await,
                None => probe_zotero_storage(app).await,
            };
            probe.outcome.set(Some(outcome));
            outcome
        }
    };
    Check { name, ok: outcome.is_ok(), required: false, fix: outcome.err().map(Cow::Borrowed) }
}

/// One `GET /keys/current`, without retries: whether the key may read the library's files.
async fn probe_zotero_storage(app: &App) -> ProbeOutcome {
    let policy =
        zotero_mcp_core::zotero::RetryPolicy { max_retries: 0, request_timeout_ms: 5_000, ..Default::default() };
    let settings = app.config.zotero_settings();
    let Ok(client) = ZoteroClient::with_policy(settings, app.platform.http.clone(), app.platform.clock.clone(), policy)
    else {
        return Err(
            "The Zotero settings are incomplete: see the zotero_api_key check, and set ZOTERO_LIBRARY_ID for a group.",
        );
    };
    let access =
        match client.key_access().await {
            Ok(access) => access,
            Err(_) => return Err(
                "Zotero did not answer the key check: check ZOTERO_API_KEY (and ZOTERO_API_BASE if set), then reload.",
            ),
        };
    // The configured library, else the key's own (as the client would look it up, without asking twice).
    let user_library = access.user_id.map(|id| LibraryId { kind: LibraryKind::User, id });
    let library = app.config.configured_library().or(user_library);
    match library.map(|library| access.rights(library).files) {
        Some(true) => Ok(()),
        _ => Err("The Zotero API key may not read files on Zotero Storage: at zotero.org/settings/keys edit it and tick \"Allow library access\" (for a group, give it access to the group), or set WEBDAV_URL if your files are on WebDAV."),
    }
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
    health.checks.push(files_check(app).await);
    let status = if health.status == "ok" { 200 } else { 503 };
    crate::respond::no_store(crate::respond::json(status, &serde_json::json!(health)))
}
