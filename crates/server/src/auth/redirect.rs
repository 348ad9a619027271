//! Redirect URIs: which are acceptable at all, which match a registration, and how answers are appended.

use std::net::IpAddr;
use zotero_mcp_core::net::parse_url;

use url::{Host, Url};

/// Longest redirect URI accepted, in bytes. Real callbacks are well under 200; the bound keeps a registration
/// (and the consent page that shows where approval goes) small.
pub const MAX_URI_BYTES: usize = 2048;

/// Private-use schemes without a period that known MCP clients register, accepted by name. RFC 8252 §7.1 asks
/// for reverse-domain schemes (`com.example.app:`) so that apps do not collide, but these clients predate that:
/// Cursor registers `cursor://anysphere.cursor-mcp/oauth/callback`, and VS Code extensions (Cline among them)
/// `vscode://publisher.extension/…`. Another app claiming the scheme gets a code it cannot redeem: a public
/// client must use PKCE S256 (RFC 9700 §2.1.1), so redeeming needs its verifier, and a confidential one its
/// secret. Add to this list only for a real client, never a scheme a browser would execute.
const KNOWN_CLIENT_SCHEMES: &[&str] = &["cursor", "vscode", "vscode-insiders"];

/// Why a redirect URI is not acceptable, phrased as what to register instead; `None` when it is acceptable.
///
/// This is an allow-list (RFC 9700 §2.1, RFC 8252 §7): `https:`; `http:` only on a loopback host
/// (`127.0.0.1`, `[::1]`, `localhost`), where the code never leaves the machine; a private-use scheme in
/// reverse-domain form (containing a period, RFC 8252 §7.1) or one of [`KNOWN_CLIENT_SCHEMES`]. Everything else,
/// including `javascript:`, `data:`, `file:` and plain `http:` to another host, is refused. A fragment is
/// refused too (RFC 6749 §3.1.2): the answer is appended as a query, and a fragment would swallow it.
pub fn problem(uri: &str) -> Option<String> {
    if uri.len() > MAX_URI_BYTES {
        return Some(format!(
            "is {} bytes; at most {MAX_URI_BYTES} are accepted: register a shorter callback URL",
            uri.len()
        ));
    }
    // The URL parser would silently drop tabs and newlines and trim spaces, so the URI matched later would not
    // be the one checked here.
    if uri.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Some("contains whitespace or control characters: percent-encode them or remove them".to_owned());
    }
    let Ok(url) = parse_url(uri) else {
        return Some(
            "is not an absolute URI: give the full callback URL, such as https://app.example/callback".to_owned(),
        );
    };
    // User info names no callback; it only lets two URIs that look different match as "the same loopback
    // URI on another port" (found by fuzz/redirect_uri).
    if !url.username().is_empty() || url.password().is_some() {
        return Some("contains user info (user@host): register the callback URL without it".to_owned());
    }
    if url.fragment().is_some() {
        return Some("has a fragment (#…): register it without one (RFC 6749 §3.1.2)".to_owned());
    }
    // `Url` lowercases the scheme, so `JavaScript:` is caught as `javascript`.
    match url.scheme() {
        "https" => None,
        "http" if host_is_loopback(&url) => None,
        "http" => Some(
            "uses plain http: on a host that is not loopback: use https:, or http://127.0.0.1, http://[::1] or \
             http://localhost for an app on the user's machine (RFC 8252 §7.3)"
                .to_owned(),
        ),
        scheme if scheme.contains('.') || KNOWN_CLIENT_SCHEMES.contains(&scheme) => None,
        scheme => Some(format!(
            "uses the scheme {scheme}:, which is not accepted: use https:, loopback http:, or a private-use scheme \
             in reverse-domain form such as com.example.app:/callback (RFC 8252 §7.1)"
        )),
    }
}

/// Whether a redirect URI may be used at all (see [`problem`]). Checked at registration, for metadata
/// documents, and again at authorization, so a client stored under older rules cannot be sent elsewhere.
pub fn is_acceptable(uri: &str) -> bool {
    problem(uri).is_none()
}

/// Whether `uri` names a loopback host (`localhost`, `127.0.0.0/8`, `::1`).
pub fn is_loopback(uri: &str) -> bool {
    parse_url(uri).ok().is_some_and(|url| host_is_loopback(&url))
}

fn host_is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        Some(Host::Ipv4(ip)) => IpAddr::V4(ip).is_loopback(),
        Some(Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

/// Whether `requested` matches one of the `registered` URIs: exactly, or, when both are loopback URIs, in
/// everything but the port (RFC 8252 §7.3: native apps listen on whatever port is free; Claude Code registers
/// `http://localhost/callback` and comes back on a random port).
pub fn matches_registered(requested: &str, registered: &[String]) -> bool {
    registered.iter().any(|candidate| {
        if requested == candidate {
            return true;
        }
        match (parse_url(requested), parse_url(candidate)) {
            (Ok(a), Ok(b)) if host_is_loopback(&a) && host_is_loopback(&b) => {
                let query = |u: &Url| u.query().filter(|q| !q.is_empty()).map(str::to_owned);
                a.scheme() == b.scheme()
                    && a.host_str() == b.host_str()
                    && a.path() == b.path()
                    && query(&a) == query(&b)
            }
            _ => false,
        }
    })
}

/// `uri` with `params` set in its query (replacing same-named ones, keeping the rest).
pub fn with_params(uri: &str, params: &[(&str, &str)]) -> Option<String> {
    let mut url = parse_url(uri).ok()?;
    let kept: Vec<(String, String)> = url
        .query_pairs()
        .filter(|(k, _)| !params.iter().any(|(name, _)| k == name))
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    {
        let mut query = url.query_pairs_mut();
        query.clear();
        query.extend_pairs(kept);
        query.extend_pairs(params.iter().filter(|(_, v)| !v.is_empty()));
    }
    Some(url.to_string())
}

/// The host (with port) of a redirect URI, for the consent page.
pub fn display_host(uri: &str) -> Option<String> {
    let url = parse_url(uri).ok()?;
    let host = url.host_str()?.to_owned();
    Some(match url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dangerous_schemes_and_control_characters_are_refused() {
        for bad in [
            "javascript:alert(1)",
            "JavaScript:alert(1)",
            " data:text/html,x",
            "data:text/html,x",
            "vbscript:x",
            "file:///etc",
            "blob:https://x/1",
            "about:blank",
            "no-scheme",
            "https://x/\ncb",
            "https://x/cb ",
        ] {
            assert!(!is_acceptable(bad), "{bad:?}");
        }
    }

    #[test]
    fn only_https_loopback_http_and_private_use_schemes_are_allowed() {
        for good in [
            "https://claude.ai/api/mcp/auth_callback",
            "https://chatgpt.com/connector_platform_oauth_redirect",
            "http://localhost:1234/callback",
            "http://localhost/callback",
            "http://127.0.0.1/get-token-callback",
            "http://127.0.0.1:33418/",
            "http://[::1]:8080/cb",
            "com.example.app:/cb",
            "com.example.app://callback?x=1",
            "cursor://anysphere.cursor-mcp/oauth/callback",
            "vscode://saoudrizwan.claude-dev/mcp-auth",
        ] {
            assert_eq!(problem(good), None, "{good}");
        }
        let refused = [
            ("http://client.example/callback", "https:"),
            ("http://192.168.1.10/cb", "not loopback"),
            ("http://localhost.evil.example/cb", "not loopback"),
            ("ftp://files.example/cb", "scheme ftp:"),
            ("myapp://callback", "reverse-domain"),
            ("mailto:someone@example.com", "scheme mailto:"),
            ("https://claude.ai/cb#", "fragment"),
            ("https://claude.ai/cb#frag", "fragment"),
            ("com.example.app:/cb#x", "fragment"),
            ("/relative/callback", "absolute URI"),
            ("http://evil@127.0.0.1:4000/cb", "user info"),
            ("https://user:pass@app.example/cb", "user info"),
        ];
        for (uri, says) in refused {
            let problem = problem(uri).unwrap_or_else(|| panic!("{uri} was accepted"));
            assert!(problem.contains(says), "{uri}: {problem}");
        }
        let long = format!("https://app.example/{}", "a".repeat(MAX_URI_BYTES));
        assert!(problem(&long).is_some_and(|p| p.contains("at most 2048")));
        let just_fits = format!("https://app.example/{}", "a".repeat(MAX_URI_BYTES - 20));
        assert_eq!(just_fits.len(), MAX_URI_BYTES);
        assert_eq!(problem(&just_fits), None);
    }

    #[test]
    fn loopback_redirects_match_on_any_port_and_nothing_else_does() {
        let registered = vec!["http://localhost/callback".to_owned(), "http://127.0.0.1/callback".to_owned()];
        assert!(matches_registered("http://localhost:53123/callback", &registered));
        assert!(matches_registered("http://127.0.0.1:9/callback", &registered));
        assert!(!matches_registered("http://localhost:53123/other", &registered));
        assert!(!matches_registered("https://localhost:53123/callback", &registered));
        assert!(!matches_registered("http://localhost.evil.example/callback", &registered));
        let https = vec!["https://claude.ai/api/mcp/auth_callback".to_owned()];
        assert!(matches_registered("https://claude.ai/api/mcp/auth_callback", &https));
        assert!(!matches_registered("https://claude.ai:444/api/mcp/auth_callback", &https));
        assert!(!matches_registered("https://claude.ai/api/mcp/auth_callback/", &https));
    }

    #[test]
    fn params_are_appended_and_replace_same_names() {
        let uri = with_params("https://c.example/cb?x=1&state=old", &[("code", "a:b:c"), ("state", "s")]).unwrap();
        assert_eq!(uri, "https://c.example/cb?x=1&code=a%3Ab%3Ac&state=s");
    }
}
