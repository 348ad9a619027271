//! `/health`: which parts of the configuration are in place, without ever echoing a value.

use serde::Serialize;

use crate::config::Config;
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

pub fn checks(config: &Config) -> Health {
    let check = |name, ok, required, fix| Check { name, ok, required, fix: (!ok).then_some(fix) };
    let checks = vec![
        check("zotero_api_key", config.zotero_api_key.is_some(), true, "Set it: wrangler secret put ZOTERO_API_KEY (a key from zotero.org/settings/keys)."),
        check("auth_password", config.auth_password.is_some(), true, "Set it: wrangler secret put AUTH_PASSWORD (the password for the login page)."),
        check("webdav", config.webdav.is_some(), false, "Attachments are unavailable. Set WEBDAV_URL, WEBDAV_USERNAME and WEBDAV_PASSWORD with wrangler secret put."),
        check("ai_search", config.ai_search_bound, false, "Semantic search is unavailable. Add the AI_SEARCH binding (ai_search_namespaces) to wrangler.toml."),
    ];
    let usable = checks.iter().all(|c| c.ok || !c.required);
    Health {
        status: if usable { "ok" } else { "misconfigured" },
        name: crate::mcp::protocol::SERVER_NAME,
        version: crate::mcp::protocol::SERVER_VERSION,
        checks,
    }
}

pub fn report(config: &Config) -> HttpResponse {
    let health = checks(config);
    let status = if health.status == "ok" { 200 } else { 503 };
    http::Response::builder()
        .status(status)
        .header(http::header::CONTENT_TYPE, "application/json")
        .header(http::header::CACHE_CONTROL, "no-store")
        .body(serde_json::to_vec_pretty(&health).unwrap_or_default())
        .unwrap_or_default()
}
