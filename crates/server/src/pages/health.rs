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

pub fn report(app: &App) -> HttpResponse {
    let health = checks(app);
    let status = if health.status == "ok" { 200 } else { 503 };
    crate::respond::no_store(crate::respond::json(status, &serde_json::json!(health)))
}
