//! Resource indicators (RFC 8707) and the audience check on every `/mcp` request.

use url::Url;
use zotero_mcp_core::net::parse_url;

use super::error::{AuthError, ErrorCode};
use super::storage::Resource;

/// Validates the `resource` values of a request: each an absolute `http(s)` URI without a fragment.
/// `Ok(None)` when the parameter was not sent; `Err` when it was sent but is not acceptable.
pub fn parse_param(values: &[&str]) -> Result<Option<Resource>, AuthError> {
    if values.is_empty() {
        return Ok(None);
    }
    if values.iter().all(|v| is_valid_resource(v)) {
        Ok(Resource::from_values(values.iter().map(|v| (*v).to_owned()).collect()))
    } else {
        Err(AuthError::new(
            ErrorCode::InvalidTarget,
            "The resource parameter must be a valid absolute URI without a fragment",
        ))
    }
}

fn is_valid_resource(value: &str) -> bool {
    match parse_url(value) {
        Ok(url) => matches!(url.scheme(), "http" | "https") && url.fragment().is_none(),
        Err(_) => false,
    }
}

/// The path of the MCP endpoint, the one resource this server protects.
pub const MCP_PATH: &str = "/mcp";

/// This server's protected resource for the issuer `origin`: its `/mcp` URL.
pub fn own_resource(origin: &str) -> String {
    format!("{origin}{MCP_PATH}")
}

/// Whether a token bound to `value` can work at this server: exactly the resources the audience check of a
/// request to `/mcp` at `origin` accepts (same origin; the bare origin or the `/mcp` path). A resource with a
/// query binds the token to `/mcp` with that query, which is still this server, so it is compared with such a
/// request.
pub fn is_own_resource(value: &str, origin: &str) -> bool {
    let Ok(url) = parse_url(value) else { return false };
    let request = match url.query() {
        Some(query) => format!("{}?{query}", own_resource(origin)),
        None => own_resource(origin),
    };
    audience_matches(&request, value)
}

/// Why a requested resource is refused when it is not this server's: a token for it would be useless at `/mcp`,
/// and issuing one would tell the person they connected something they did not.
pub fn not_own_description(origin: &str) -> String {
    let expected = own_resource(origin);
    format!("The resource parameter must be this server's MCP endpoint, {expected}: tokens from this server work only there. Configure the client with {expected}")
}

/// The audience of tokens issued from a grant at the token endpoint of `origin`: the requested resource (each
/// one must be this server's and have been granted, compared exactly), else the grant's own. `None` only for
/// legacy grants bound to nothing.
pub fn resolve_for_token(
    requested: &[&str],
    granted: Option<&Resource>,
    origin: &str,
) -> Result<Option<Resource>, AuthError> {
    let requested = parse_param(requested)?;
    // A grant bound to nothing allows any resource below; this keeps its tokens to this server too.
    if requested.as_ref().is_some_and(|r| !r.values().iter().all(|v| is_own_resource(v, origin))) {
        return Err(AuthError::new(ErrorCode::InvalidTarget, not_own_description(origin)));
    }
    if let Some(granted) = granted {
        if !granted.values().iter().all(|v| is_valid_resource(v)) {
            return Err(AuthError::new(
                ErrorCode::InvalidTarget,
                "The authorization grant contains an invalid resource",
            ));
        }
        if let Some(requested) = &requested {
            let allowed = granted.values();
            if !requested.values().iter().all(|r| allowed.contains(r)) {
                return Err(AuthError::new(
                    ErrorCode::InvalidTarget,
                    "Requested resource was not included in the authorization request",
                ));
            }
        }
    }
    Ok(requested.or_else(|| granted.cloned()))
}

/// Whether a request to `request_url` is within a token's `audience`: same origin; the audience's query, if
/// it has one, must be the request's; an origin-only audience (Claude Code sometimes sends the bare origin)
/// covers every path; otherwise the path must equal the audience's or continue it after a `/`.
pub fn audience_matches(request_url: &str, audience: &str) -> bool {
    let (Ok(request), Ok(audience)) = (parse_url(request_url), parse_url(audience)) else {
        return false;
    };
    if request.origin() != audience.origin() {
        return false;
    }
    let query = |u: &Url| u.query().filter(|q| !q.is_empty()).map(str::to_owned);
    if let Some(wanted) = query(&audience) {
        if query(&request).as_deref() != Some(wanted.as_str()) {
            return false;
        }
    }
    let path = audience.path();
    if path.is_empty() || path == "/" {
        return true;
    }
    request.path() == path || request.path().strip_prefix(path).is_some_and(|rest| rest.starts_with('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn audiences_match_on_origin_and_path_boundaries() {
        assert!(audience_matches("https://z.example/mcp", "https://z.example/mcp"));
        assert!(audience_matches("https://z.example/mcp", "https://z.example"));
        assert!(audience_matches("https://z.example/mcp", "https://Z.EXAMPLE:443/"));
        assert!(audience_matches("https://z.example/mcp/x", "https://z.example/mcp"));
        assert!(!audience_matches("https://z.example/mcpx", "https://z.example/mcp"));
        assert!(!audience_matches("https://z.example/mcp", "https://z.example/mcp/"));
        assert!(!audience_matches("https://z.example/mcp", "https://other.example/mcp"));
        assert!(!audience_matches("http://z.example/mcp", "https://z.example/mcp"));
        assert!(!audience_matches("https://z.example/mcp", "https://z.example/mcp?tenant=a"));
        assert!(audience_matches("https://z.example/mcp?tenant=a", "https://z.example/mcp?tenant=a"));
    }

    #[test]
    fn resources_must_be_absolute_http_uris_without_fragments() {
        assert!(parse_param(&["https://z.example/mcp"]).unwrap().is_some());
        assert!(parse_param(&[]).unwrap().is_none());
        for bad in ["", "/mcp", "https://z.example/mcp#x", "urn:x", "ftp://z.example/"] {
            assert!(parse_param(&[bad]).is_err(), "{bad}");
        }
    }

    #[test]
    fn token_resources_must_have_been_granted() {
        let origin = "https://z.example";
        let granted = Resource::One("https://z.example/mcp".into());
        assert_eq!(resolve_for_token(&[], Some(&granted), origin).unwrap(), Some(granted.clone()));
        assert!(resolve_for_token(&["https://z.example/mcp"], Some(&granted), origin).is_ok());
        assert!(resolve_for_token(&["https://evil.example/mcp"], Some(&granted), origin).is_err());
        assert!(resolve_for_token(&["https://z.example"], Some(&granted), origin).is_err(), "not granted");
        assert_eq!(resolve_for_token(&[], None, origin).unwrap(), None);
    }

    #[test]
    fn a_grant_bound_to_nothing_still_yields_tokens_only_for_this_server() {
        let origin = "https://z.example";
        let own = resolve_for_token(&["https://z.example/mcp"], None, origin).unwrap();
        assert_eq!(own, Some(Resource::One("https://z.example/mcp".into())));
        assert!(resolve_for_token(&["https://evil.example/mcp"], None, origin).is_err());
        assert!(resolve_for_token(&["https://z.example/mcp", "https://evil.example/mcp"], None, origin).is_err());
    }

    #[test]
    fn own_resources_are_what_the_mcp_audience_check_accepts() {
        let origin = "https://z.example";
        for own in [
            "https://z.example/mcp",
            "https://z.example",
            "https://z.example/",
            "https://Z.EXAMPLE:443/mcp",
            "https://z.example/mcp?tenant=a",
        ] {
            assert!(is_own_resource(own, origin), "{own}");
        }
        for foreign in [
            "https://evil.example/mcp",
            "http://z.example/mcp",
            "https://z.example:8443/mcp",
            "https://z.example/mcp/",
            "https://z.example/mcpx",
            "https://z.example/sse",
            "https://z.example.evil.example/mcp",
            "not a url",
        ] {
            assert!(!is_own_resource(foreign, origin), "{foreign}");
        }
    }
}
