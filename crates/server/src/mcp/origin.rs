//! Which browsers and hosts may reach `/mcp`.
//!
//! MCP requires servers to check `Origin`: a web page the user visits must not be able to drive their tools.
//! Server-side clients (claude.ai's backend, ChatGPT, Claude Code) send no `Origin`, so absence is allowed.
//! Allowed otherwise: the listed origins (`ALLOWED_ORIGINS`), and unless `Config::strict_origins` is set (the
//! native server without a token) also the server's own origin and loopback origins on any port.

use url::Host;
use zotero_mcp_core::net::parse_url;

use crate::config::Config;
use crate::platform::HttpRequest;

/// Why a request was refused before it was read.
#[derive(Debug, PartialEq, Eq)]
pub enum Refusal {
    Origin(String),
    Host(String),
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Origin(o) => write!(
                f,
                "Forbidden: requests from the origin `{o}` are not allowed. Add it to ALLOWED_ORIGINS to allow it."
            ),
            Self::Host(h) => write!(f, "Forbidden: `{h}` is not one of this server's host names (ALLOWED_HOSTS)."),
        }
    }
}

/// Checks `Host` against `ALLOWED_HOSTS` (when set) and `Origin` against the allow list.
pub fn check(request: &HttpRequest, config: &Config) -> Result<(), Refusal> {
    let host = check_host(request, config)?;
    let Some(origin) = request.headers().get(http::header::ORIGIN) else {
        return Ok(());
    };
    let origin = origin.to_str().unwrap_or("").trim_end_matches('/');
    if origin_allowed(origin, &host, request, config) {
        Ok(())
    } else {
        Err(Refusal::Origin(origin.to_owned()))
    }
}

/// Checks `Host` against `ALLOWED_HOSTS` (when set), for every route: a page that rebinds its own name to this
/// server arrives with its own name as `Host`, whether it posts to `/mcp` or to the login form. Returns the host.
pub fn check_host(request: &HttpRequest, config: &Config) -> Result<String, Refusal> {
    let host = request_host(request);
    // A host is `name[:port]`; user info (`localhost:8787@evil.example`) is not part of one, and splitting such
    // a value at `:` would read the allowed name in front of the real one (found by fuzz/origin_host).
    if host.contains('@') {
        return Err(Refusal::Host(host));
    }
    if let Some(hosts) = &config.allowed_hosts {
        let name = host_name(&host);
        if !hosts.iter().any(|h| h.eq_ignore_ascii_case(&host) || h.eq_ignore_ascii_case(name)) {
            return Err(Refusal::Host(host));
        }
    }
    Ok(host)
}

fn origin_allowed(origin: &str, host: &str, request: &HttpRequest, config: &Config) -> bool {
    if config.allowed_origins.iter().any(|o| o.trim_end_matches('/').eq_ignore_ascii_case(origin)) {
        return true;
    }
    // Where being on this machine is the only credential, a page on some other loopback port (any local dev
    // server) is no more trusted than one on the Internet: only the listed origins.
    if config.strict_origins {
        return false;
    }
    // The server's own origin.
    let scheme = request.uri().scheme_str().unwrap_or("https");
    if origin.eq_ignore_ascii_case(&format!("{scheme}://{host}")) {
        return true;
    }
    // Local tools (the MCP Inspector, a dev page) on any loopback port.
    is_loopback_origin(origin)
}

/// The request's host (with port), from the URI or the `Host` header.
pub fn request_host(request: &HttpRequest) -> String {
    request
        .uri()
        .authority()
        .map(|a| a.as_str().to_owned())
        .or_else(|| request.headers().get(http::header::HOST).and_then(|h| h.to_str().ok()).map(str::to_owned))
        .unwrap_or_default()
}

/// `host:port` without the port (IPv6 literals keep their brackets).
fn host_name(authority: &str) -> &str {
    if authority.starts_with('[') {
        return authority.split_inclusive(']').next().unwrap_or(authority);
    }
    authority.split(':').next().unwrap_or(authority)
}

/// Whether `origin` is http(s) on a loopback host, any port. The host is parsed, never prefix-matched:
/// `http://127.attacker.example` or `http://localhost.attacker.example` are DNS names whoever owns them can
/// serve a page from, and this answer is echoed in `Access-Control-Allow-Origin`.
fn is_loopback_origin(origin: &str) -> bool {
    let Ok(url) = parse_url(origin) else { return false };
    // A browser's Origin is scheme, host and port; anything more is not one, so it is not trusted either.
    let bare = url.username().is_empty()
        && url.password().is_none()
        && url.path() == "/"
        && url.query().is_none()
        && url.fragment().is_none();
    if !bare || !matches!(url.scheme(), "http" | "https") {
        return false;
    }
    match url.host() {
        Some(Host::Ipv4(ip)) => ip.is_loopback(),
        Some(Host::Ipv6(ip)) => ip.is_loopback(),
        Some(Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        None => false,
    }
}
