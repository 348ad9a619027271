//! Fetching URLs that someone else chose (a model's `sourceUrl`, a client's metadata document): the
//! public-address policy and a guarded download.
//!
//! Such a fetch is server-side request forgery surface: the URL could name the cloud metadata service, the
//! operator's own network, or a host that redirects there. The guards, each applied to the first URL and again
//! to every redirect target:
//! - `https` only (plain `http` only to a loopback host, and only when a test or development setup asks for it);
//! - no user info: credentials in a URL would be sent to wherever it points, and logged on the way;
//! - the host as written must be public ([`is_public_host`]): literal private, loopback, link-local, CGNAT,
//!   reserved and similar addresses are refused, as are `localhost` and `*.localhost`;
//! - redirects are followed here, one hop at a time, never by the HTTP client (both runtimes' clients return
//!   them: the Worker's `fetch` with `redirect: "manual"`, reqwest with `redirect::Policy::none()`), and only a
//!   few of them;
//! - the body is read with a cap ([`HttpClient::send_limited`](crate::platform::HttpClient::send_limited)),
//!   so a server cannot make us read more than it, and each hop has a deadline.
//!
//! **Host names are not resolved here**, but every request a download sends goes out through
//! [`HttpClient::send_public_limited`](crate::platform::HttpClient::send_public_limited) (except one to a
//! loopback host a test setup allowed), and the runtime keeps its promise where the name is resolved, so the
//! check and the connection use the same address:
//! - on the Worker, the `global_fetch_strictly_public` compatibility flag makes every `fetch` go to the public
//!   Internet only, whatever a name resolves to (and never to this zone's own origin), so the default method
//!   (plain `send_limited`) keeps it, and `public_only()` is true;
//! - natively, those requests go through a client whose resolver drops every address [`is_public_ip`]
//!   refuses; a name left with none (a rebinding domain, an internal name, the machine's own name in
//!   `/etc/hosts`) fails with [`HttpError::NotPublic`](crate::platform::HttpError::NotPublic) before any
//!   connection. Other requests (Zotero, the user's own WebDAV server, which may well be on their LAN) use
//!   the system resolver as before.

mod address;
mod download;

pub use self::address::{is_loopback_host, is_public_host, is_public_ip};
pub use self::download::{download, Download, DownloadError, DownloadPolicy};

/// Why a URL was not read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UrlError {
    #[error(
        "the host name `{0}` is not plain ASCII; write an international domain name in its ASCII (punycode) form, \
         e.g. xn--bcher-kva.example for bücher.example"
    )]
    NotAsciiHost(String),
    #[error("{0}")]
    Invalid(#[from] url::ParseError),
}

/// Parses a URL. Every URL the server reads goes through here or [`join_url`] (clippy's `disallowed-methods`
/// keeps it so), because the build has no Unicode IDNA tables: `idna_adapter` 1.0, chosen in the workspace
/// Cargo.toml because the tables cost the Worker ~110 KiB gzip. A Unicode host is refused here with a message
/// that says what to write instead, before url could reach the adapter (whose debug build asserts on it).
pub fn parse_url(text: &str) -> Result<url::Url, UrlError> {
    check_host(authority(text))?;
    #[allow(clippy::disallowed_methods)] // this is the wrapper
    url::Url::parse(text).map_err(UrlError::from)
}

/// Resolves `reference` (a redirect's `Location`, say) against `base`, with [`parse_url`]'s host rule.
pub fn join_url(base: &url::Url, reference: &str) -> Result<url::Url, UrlError> {
    // Only a reference with a scheme or starting with `//` names a host; a path is joined as it is.
    let trimmed = reference.trim_start_matches(|c: char| c <= ' ');
    if scheme_end(trimmed).is_some() || trimmed.starts_with("//") || trimmed.starts_with("\\\\") {
        check_host(authority(trimmed))?;
    }
    #[allow(clippy::disallowed_methods)] // this is the wrapper
    base.join(reference).map_err(UrlError::from)
}

/// A host (with any user info and port) must be ASCII, and must not spell a non-ASCII byte in percent-encoding.
fn check_host(authority: &str) -> Result<(), UrlError> {
    let encoded_high_byte = authority
        .as_bytes()
        .windows(2)
        .any(|w| w[0] == b'%' && matches!(w[1], b'8'..=b'9' | b'a'..=b'f' | b'A'..=b'F'));
    if authority.is_ascii() && !encoded_high_byte {
        Ok(())
    } else {
        Err(UrlError::NotAsciiHost(authority.chars().take(80).collect()))
    }
}

/// The text between the scheme (and the slashes after it) and the path, query or fragment: what url reads as
/// user info, host and port. Leading spaces and control characters are skipped, as url does.
fn authority(text: &str) -> &str {
    let text = text.trim_start_matches(|c: char| c <= ' ');
    let rest = scheme_end(text).map_or(text, |end| &text[end + 1..]);
    let rest = rest.trim_start_matches(['/', '\\']);
    rest.split(['/', '\\', '?', '#']).next().unwrap_or("")
}

/// Where `text`'s scheme ends (the index of its `:`), if it starts with one.
fn scheme_end(text: &str) -> Option<usize> {
    let end = text.find(':')?;
    let scheme = &text[..end];
    let mut chars = scheme.chars();
    let first = chars.next()?;
    (first.is_ascii_alphabetic() && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))
        .then_some(end)
}

#[cfg(test)]
mod tests;
