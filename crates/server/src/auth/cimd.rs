//! Client ID Metadata Documents: a client whose id is an `https://` URL with a path publishes its metadata at
//! that URL, so it needs no registration (claude.ai, Claude Code and ChatGPT all have one).
//!
//! Fetching a URL a stranger chose is a server-side request forgery risk. The guards, in order:
//! - the URL must be `https`, without user info, fragment, whitespace, backslashes or `.`/`..` segments;
//! - a host that is a literal private, loopback, link-local or otherwise non-public address, or `localhost`,
//!   is refused here, on every runtime;
//! - in the Worker, the `global_fetch_strictly_public` compatibility flag makes `fetch` go to the public
//!   Internet only (never this zone's origin or Cloudflare-internal addresses); without the flag the feature is
//!   off and not advertised. Names that resolve to private addresses are the runtime's to stop;
//! - redirects are not followed, the document may be at most 5 KB, and the whole exchange at most 10 s.
//!
//! A valid document is cached in `CACHE_KV` for as long as its `Cache-Control` allows, at most 7 days; errors
//! are never cached, and a cached document that no longer validates is evicted and fetched again.

use serde_json::{Map, Value};
use zotero_mcp_core::net::is_public_host;
use zotero_mcp_core::net::parse_url;
use zotero_mcp_core::platform::{within, HttpError, KvError, KvWrite};

use super::client::{ClientMetadata, MetadataError};
use super::crypto::sha256_hex;
use super::storage::StoredClient;
use crate::platform::Platform;

/// Largest document accepted.
pub const MAX_DOCUMENT_BYTES: usize = 5 * 1024;
/// Longest wait for the document.
pub const FETCH_TIMEOUT_MS: u64 = 10_000;
/// Longest time a document is cached, whatever its `Cache-Control` says.
pub const MAX_CACHE_SECS: u64 = 7 * 24 * 3600;
const CACHE_PREFIX: &str = "oauth-cimd:v1:";

/// Why a metadata document could not be used. The client is told only `invalid_client`; this goes to the log.
#[derive(Debug, thiserror::Error)]
pub enum CimdError {
    #[error(
        "client metadata documents are disabled: the Worker lacks the global_fetch_strictly_public compatibility flag"
    )]
    Disabled,
    #[error("the client id `{url}` is not a usable metadata URL: {reason}")]
    BadUrl { url: String, reason: &'static str },
    #[error(
        "the client id `{url}` names a non-public host ({host}); metadata is only fetched from the public Internet"
    )]
    NonPublicHost { url: String, host: String },
    #[error("fetching {0}")]
    Fetch(#[from] HttpError),
    #[error("fetching {url} timed out after {FETCH_TIMEOUT_MS} ms")]
    Timeout { url: String },
    #[error("{url} answered HTTP {status}")]
    Status { url: String, status: u16 },
    #[error("{url} sent more than {MAX_DOCUMENT_BYTES} bytes")]
    TooLarge { url: String },
    #[error("{url} sent a document that is not {what}")]
    Malformed { url: String, what: &'static str },
    #[error("the document at {url} is not acceptable: {source}")]
    Invalid { url: String, source: MetadataError },
    #[error("the metadata cache failed: {0}")]
    Cache(#[from] KvError),
}

/// Whether a client id is to be resolved as a metadata document (an `https` URL with a path).
pub fn is_document_url(client_id: &str) -> bool {
    parse_url(client_id).is_ok_and(|u| u.scheme() == "https") && !raw_path(client_id).is_empty()
}

/// Whether this runtime's HTTP reaches only the public Internet, which the feature depends on: a document URL
/// is chosen by whoever registers, and a host name can resolve to a private address.
pub fn enabled(platform: &Platform) -> bool {
    platform.http.public_only()
}

/// The client described by the document at `url`, from the cache or fetched.
pub async fn resolve(platform: &Platform, url: &str) -> Result<StoredClient, CimdError> {
    if !enabled(platform) {
        return Err(CimdError::Disabled);
    }
    validate_url(url)?;
    let cache_key = format!("{CACHE_PREFIX}{}", sha256_hex(url));
    if let Some(cached) = platform.cache_kv.get(&cache_key).await? {
        match parse_document(url, cached.as_bytes()) {
            Ok(client) => return Ok(client),
            // Stricter rules since it was cached, or tampering: drop it and ask the origin again.
            Err(_) => platform.cache_kv.delete(&cache_key).await?,
        }
    }
    let request = http::Request::get(url)
        .header(http::header::ACCEPT, "application/json")
        .header(http::header::CACHE_CONTROL, "no-store")
        .body(Vec::new())
        .map_err(|_| CimdError::BadUrl { url: url.to_owned(), reason: "it cannot be requested" })?;
    // At most 5 KB is read: the URL is the registrant's choice, and so is how much its server sends.
    let fetch = platform.http.send_limited(request, MAX_DOCUMENT_BYTES);
    let response = match within(platform.clock.as_ref(), FETCH_TIMEOUT_MS, fetch).await {
        Some(Err(HttpError::TooLarge { .. })) => return Err(CimdError::TooLarge { url: url.to_owned() }),
        Some(result) => result?,
        None => return Err(CimdError::Timeout { url: url.to_owned() }),
    };
    if !response.status().is_success() {
        return Err(CimdError::Status { url: url.to_owned(), status: response.status().as_u16() });
    }
    let declared = response
        .headers()
        .get(http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if declared.is_some_and(|n| n > MAX_DOCUMENT_BYTES as u64) || response.body().len() > MAX_DOCUMENT_BYTES {
        return Err(CimdError::TooLarge { url: url.to_owned() });
    }
    let client = parse_document(url, response.body())?;
    if let Some(ttl) = cache_lifetime(response.headers()) {
        if let Ok(text) = std::str::from_utf8(response.body()) {
            // Caching is an optimisation: a failed write must not fail the authorization.
            if let Err(e) = platform.cache_kv.put(&cache_key, text, KvWrite::ExpiresIn(ttl)).await {
                super::log::warn(&format!("could not cache the metadata document of {url}: {e}"));
            }
        }
    }
    Ok(client)
}

fn parse_document(url: &str, body: &[u8]) -> Result<StoredClient, CimdError> {
    let malformed = |what| CimdError::Malformed { url: url.to_owned(), what };
    let text = std::str::from_utf8(body).map_err(|_| malformed("valid UTF-8"))?;
    let raw: Map<String, Value> = match serde_json::from_slice(text.as_bytes()) {
        Ok(Value::Object(map)) => map,
        Ok(_) => return Err(malformed("a JSON object")),
        Err(_) => return Err(malformed("valid JSON")),
    };
    ClientMetadata::parse(&raw)
        .and_then(|m| m.into_document_client(url, &raw))
        .map_err(|source| CimdError::Invalid { url: url.to_owned(), source })
}

/// The checks a metadata URL must pass before anything is fetched.
fn validate_url(url: &str) -> Result<(), CimdError> {
    let bad = |reason| Err(CimdError::BadUrl { url: url.to_owned(), reason });
    if url != url.trim() || url.chars().any(|c| c.is_whitespace() || c.is_control() || c == '\\') {
        return bad("it contains whitespace, control characters or backslashes");
    }
    if !url.get(..8).is_some_and(|s| s.eq_ignore_ascii_case("https://")) {
        return bad("it must be an absolute https URL");
    }
    let Ok(parsed) = parse_url(url) else { return bad("it is not a valid URL") };
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return bad("it must not contain user info");
    }
    if parsed.fragment().is_some() {
        return bad("it must not contain a fragment");
    }
    let path = raw_path(url);
    if path.is_empty() {
        return bad("it must have a path");
    }
    for segment in path.split('/') {
        let decoded = percent_decode(segment)
            .ok_or(CimdError::BadUrl { url: url.to_owned(), reason: "its path has invalid percent-encoding" })?;
        if decoded == "." || decoded == ".." {
            return bad("its path must not contain . or .. segments");
        }
    }
    // The shared address policy (zotero_mcp_core::net): literal non-public addresses and localhost names.
    let public = parsed.host().is_some_and(|host| is_public_host(&host));
    if !public {
        return Err(CimdError::NonPublicHost { url: url.to_owned(), host: parsed.host_str().unwrap_or("").to_owned() });
    }
    Ok(())
}

/// The path of a URL exactly as written: URL parsing would resolve `.`/`..` segments, which must be refused.
fn raw_path(url: &str) -> &str {
    let Some(scheme_end) = url.find("://") else { return "" };
    let rest = &url[scheme_end + 3..];
    let Some(path_start) = rest.find(['/', '?', '#']) else { return "" };
    let path = &rest[path_start..];
    if !path.starts_with('/') {
        return "";
    }
    let end = path.find(['?', '#']).unwrap_or(path.len());
    &path[..end]
}

fn percent_decode(segment: &str) -> Option<String> {
    percent_encoding::percent_decode_str(segment).decode_utf8().ok().map(|text| text.into_owned())
}

/// Seconds the document may be cached per its `Cache-Control`, or `None`. Values under the KV minimum are not
/// cached at all rather than stretched.
fn cache_lifetime(headers: &http::HeaderMap) -> Option<u64> {
    let value = headers.get(http::header::CACHE_CONTROL)?.to_str().ok()?.to_ascii_lowercase();
    let directives: Vec<(&str, Option<&str>)> = value
        .split(',')
        .map(|d| {
            let mut parts = d.splitn(2, '=');
            (parts.next().unwrap_or("").trim(), parts.next().map(|v| v.trim().trim_matches('"')))
        })
        .collect();
    if directives.iter().any(|(name, _)| matches!(*name, "no-cache" | "no-store" | "private")) {
        return None;
    }
    let seconds = |wanted: &str| {
        directives.iter().find(|(name, _)| *name == wanted).and_then(|(_, v)| v.and_then(|v| v.parse::<u64>().ok()))
    };
    let ttl = seconds("s-maxage").or_else(|| seconds("max-age"))?.min(MAX_CACHE_SECS);
    (ttl >= super::storage::KV_MIN_TTL_SECS).then_some(ttl)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_urls_need_https_and_a_path() {
        assert!(is_document_url("https://claude.ai/oauth/mcp-oauth-client-metadata"));
        assert!(!is_document_url("https://claude.ai"));
        assert!(!is_document_url("http://claude.ai/oauth/x"));
        assert!(!is_document_url("AbCdEf0123456789"));
    }

    #[test]
    fn literal_non_public_hosts_and_odd_urls_are_refused() {
        for url in [
            "https://127.0.0.1/doc",
            "https://0x7f.1/doc",
            "https://2130706433/doc",
            "https://10.1.2.3/doc",
            "https://169.254.169.254/latest",
            "https://[::1]/doc",
            "https://[::ffff:192.168.1.1]/doc",
            "https://[fe80::1]/doc",
            "https://localhost/doc",
            "https://app.localhost/doc",
            "https://100.64.0.1/doc",
        ] {
            assert!(matches!(validate_url(url), Err(CimdError::NonPublicHost { .. })), "{url}");
        }
        for url in [
            "https://user@host.example/doc",
            "https://host.example/doc#x",
            "https://host.example/a/../b",
            "https://host.example/%2e%2e/b",
            "https://host.example/a\\b",
            "http://host.example/doc",
        ] {
            assert!(matches!(validate_url(url), Err(CimdError::BadUrl { .. })), "{url}");
        }
        assert!(validate_url("https://claude.ai/oauth/claude-code-client-metadata").is_ok());
        assert!(validate_url("https://93.184.216.34/doc").is_ok());
    }

    #[test]
    fn cache_lifetime_follows_cache_control_within_bounds() {
        let h = |v: &str| {
            let mut m = http::HeaderMap::new();
            m.insert(http::header::CACHE_CONTROL, v.parse().unwrap());
            m
        };
        assert_eq!(cache_lifetime(&h("public, max-age=3600")), Some(3600));
        assert_eq!(cache_lifetime(&h("max-age=60, s-maxage=120")), Some(120));
        assert_eq!(cache_lifetime(&h("max-age=99999999")), Some(MAX_CACHE_SECS));
        assert_eq!(cache_lifetime(&h("max-age=30")), None);
        assert_eq!(cache_lifetime(&h("no-store, max-age=3600")), None);
        assert_eq!(cache_lifetime(&h("private, max-age=3600")), None);
        assert_eq!(cache_lifetime(&http::HeaderMap::new()), None);
    }
}
