//! Redirect URIs: which are acceptable at all, which match a registration, and how answers are appended.

use std::net::IpAddr;

use url::{Host, Url};

/// Schemes that would run code or read local data in the browser instead of reaching a client.
const DANGEROUS_SCHEMES: &[&str] = &["javascript:", "data:", "vbscript:", "file:", "mailto:", "blob:"];

/// Whether a redirect URI may be used at all: it has a scheme, the scheme is not one of the dangerous
/// pseudo-schemes, and it contains no control characters.
pub fn is_acceptable(uri: &str) -> bool {
    let trimmed = uri.trim();
    if trimmed.chars().any(|c| c.is_control()) {
        return false;
    }
    match trimmed.find(':') {
        Some(colon) => {
            let scheme = trimmed[..=colon].to_ascii_lowercase();
            !DANGEROUS_SCHEMES.contains(&scheme.as_str())
        }
        None => false,
    }
}

/// Whether `uri` names a loopback host (`localhost`, `127.0.0.0/8`, `::1`).
pub fn is_loopback(uri: &str) -> bool {
    Url::parse(uri).ok().is_some_and(|url| host_is_loopback(&url))
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
        match (Url::parse(requested), Url::parse(candidate)) {
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
    let mut url = Url::parse(uri).ok()?;
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
    let url = Url::parse(uri).ok()?;
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
            "vbscript:x",
            "file:///etc",
            "no-scheme",
            "https://x/\ncb",
        ] {
            assert!(!is_acceptable(bad), "{bad:?}");
        }
        for good in ["https://claude.ai/api/mcp/auth_callback", "http://localhost:1234/callback", "com.example.app:/cb"]
        {
            assert!(is_acceptable(good), "{good}");
        }
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
