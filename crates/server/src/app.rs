//! What every route can use: the configuration, the runtime services and how `/mcp` learns who is calling.

use std::borrow::Cow;
use std::net::IpAddr;
use std::rc::Rc;

use crate::config::Config;
use crate::grant::Grant;
use crate::platform::{HttpRequest, Platform};

/// How the MCP endpoint decides who is calling.
#[derive(Clone)]
pub enum McpAccess {
    /// Bearer tokens issued by this server's own OAuth flow: the Worker, and a native HTTP server with
    /// `AUTH_PASSWORD` set.
    OAuth,
    /// One fixed bearer token, stored as its SHA-256 (hex): a native HTTP server for one person, configured with
    /// `ZOTERO_MCP_TOKEN`. Every request carrying it gets `grant`.
    StaticToken { token_sha256: String, grant: Grant },
    /// No token at all: the native server on stdio, or on loopback for its own user, where whoever can reach it
    /// already runs as that user. Every request gets the grant.
    Trusted(Grant),
}

/// The configuration, the runtime services and the access mode, shared by every route of one request.
#[derive(Clone)]
pub struct App {
    pub config: Rc<Config>,
    pub platform: Platform,
    pub access: McpAccess,
}

impl App {
    /// An app whose `/mcp` takes tokens from its own OAuth server: what the Worker runs.
    pub fn with_oauth(config: Config, platform: Platform) -> Self {
        Self { config: Rc::new(config), platform, access: McpAccess::OAuth }
    }

    /// The app one HTTP request is served with: this one, unless test-only switches are on
    /// (`ENABLE_TEST_FIXTURES=1`) and the request is not local ([`is_local_request`]); then a copy without them.
    /// Both shells call it before routing (the Worker before its panicking test route too), so a test variable
    /// set on a deployment by mistake gives nobody elsewhere a fixture tool, a panic, unlimited registration or
    /// downloads from the server's own machine. (stdio needs no check: its client started the process.)
    pub fn for_request(&self, request: &HttpRequest) -> Cow<'_, App> {
        if !self.config.test_fixtures || is_local_request(request) {
            return Cow::Borrowed(self);
        }
        Cow::Owned(App { config: Rc::new(self.config.without_test_switches()), ..self.clone() })
    }
}

/// The header with the client's address: Cloudflare sets (and overwrites) `CF-Connecting-IP` on every request
/// to a Worker; the native server sets it from the socket (`auth::throttle` reads the same header).
const CLIENT_ADDRESS: &str = "cf-connecting-ip";

/// Whether a request is local: made on this machine to a server on it. Both must hold:
/// - the URL's host is `localhost` or a loopback address. A deployed Worker is reached under its own domain
///   (Cloudflare routes by it, so a request cannot name loopback and still arrive), and a native server behind a
///   reverse proxy is asked for the proxy's public name; `wrangler dev` and a loopback native server are asked
///   for `127.0.0.1` or `localhost`.
/// - the client's address, when the request carries one, is loopback: a native server listening on a public
///   address may be asked for `localhost` by anyone who writes that `Host`, but the socket tells where they are.
///
/// Under `wrangler dev` the address may be absent; the host alone then decides, which there means the request
/// reached the developer's loopback listener.
pub fn is_local_request(request: &HttpRequest) -> bool {
    let local_host = request.uri().host().is_some_and(|host| {
        let host = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(host);
        host.eq_ignore_ascii_case("localhost") || host.parse::<IpAddr>().is_ok_and(is_loopback)
    });
    let local_client = match request.headers().get(CLIENT_ADDRESS) {
        None => true,
        Some(value) => value.to_str().ok().and_then(client_address).is_some_and(is_loopback),
    };
    local_host && local_client
}

/// The address in a `CF-Connecting-IP` value: a bare address, or with a port (`127.0.0.1:54321`, `[::1]:54321`),
/// which is how workerd's `clientIp` (copied into the header under `wrangler dev`) has been seen to read.
fn client_address(value: &str) -> Option<IpAddr> {
    let value = value.trim();
    value.parse::<IpAddr>().ok().or_else(|| value.parse::<std::net::SocketAddr>().ok().map(|socket| socket.ip()))
}

/// A loopback address, IPv4-mapped ones included.
fn is_loopback(address: IpAddr) -> bool {
    match address {
        IpAddr::V4(v4) => v4.is_loopback(),
        IpAddr::V6(v6) => v6.is_loopback() || v6.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(url: &str, client: Option<&str>) -> HttpRequest {
        let mut builder = http::Request::get(url);
        if let Some(client) = client {
            builder = builder.header(CLIENT_ADDRESS, client);
        }
        builder.body(Vec::new()).unwrap()
    }

    #[test]
    fn a_request_is_local_only_from_loopback_to_a_loopback_host() {
        for (url, client) in [
            ("http://127.0.0.1:8787/mcp", None),
            ("http://127.0.0.1:8787/mcp", Some("127.0.0.1")),
            ("http://localhost:8787/__fixtures/trap", Some("::1")),
            ("http://LOCALHOST/mcp", Some("::ffff:127.0.0.1")),
            ("http://[::1]:8787/mcp", Some("127.0.0.2")),
            ("http://127.0.0.1:8787/mcp", Some("127.0.0.1:54321")),
            ("http://127.0.0.1:8787/mcp", Some("[::1]:54321")),
        ] {
            assert!(is_local_request(&request(url, client)), "{url} from {client:?}");
        }
        for (url, client) in [
            // A deployment's own name: the Worker in production, or a native server behind a proxy.
            ("https://zotero.example/mcp", None),
            ("https://zotero.example/mcp", Some("127.0.0.1")),
            // Loopback named by someone elsewhere: the native server on a public address.
            ("http://localhost:8787/mcp", Some("203.0.113.7")),
            ("http://127.0.0.1/mcp", Some("2001:db8::1")),
            ("http://127.0.0.1/mcp", Some("not an address")),
            ("http://127.0.0.1/mcp", Some("203.0.113.7:54321")),
            ("http://localhost.evil.example/mcp", Some("127.0.0.1")),
            ("http://0.0.0.0/mcp", None),
        ] {
            assert!(!is_local_request(&request(url, client)), "{url} from {client:?}");
        }
    }
}
