//! Resource indicators (RFC 8707) and the audience check on every `/mcp` request.

use url::Url;

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
    match Url::parse(value) {
        Ok(url) => matches!(url.scheme(), "http" | "https") && url.fragment().is_none(),
        Err(_) => false,
    }
}

/// The audience of tokens issued from a grant: the requested resource (each one must have been granted,
/// compared exactly), else the grant's own. `None` only for legacy grants bound to nothing.
pub fn resolve_for_token(requested: &[&str], granted: Option<&Resource>) -> Result<Option<Resource>, AuthError> {
    let requested = parse_param(requested)?;
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
    let (Ok(request), Ok(audience)) = (Url::parse(request_url), Url::parse(audience)) else {
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
        let granted = Resource::One("https://z.example/mcp".into());
        assert_eq!(resolve_for_token(&[], Some(&granted)).unwrap(), Some(granted.clone()));
        assert!(resolve_for_token(&["https://z.example/mcp"], Some(&granted)).is_ok());
        assert!(resolve_for_token(&["https://evil.example/mcp"], Some(&granted)).is_err());
        assert_eq!(resolve_for_token(&[], None).unwrap(), None);
    }
}
