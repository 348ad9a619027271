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
//! - the body is read with [`HttpClient::send_limited`](crate::platform::HttpClient::send_limited), so a
//!   server cannot make us read more than the cap, and each hop has a deadline.
//!
//! **Host names are not resolved here.** A public-looking name may resolve to a private address (DNS
//! rebinding, or simply an internal name). What stops that depends on the runtime, which
//! [`HttpClient::public_only`](crate::platform::HttpClient::public_only) reports:
//! - on the Worker, the `global_fetch_strictly_public` compatibility flag makes `fetch` go to the public
//!   Internet only, whatever a name resolves to (and never to this zone's own origin): `public_only()` is true;
//! - natively (reqwest) names are resolved by the system resolver when the request is sent, and nothing here
//!   sees the address: `public_only()` is false and only the literal checks above apply. The native server is
//!   run by its user on their own machine and network, so a name that resolves to a private address there
//!   reaches only what that user could reach anyway; a deployment that must not should use the Worker or an
//!   egress proxy. Pinning the resolved address would need a resolver hook in the client, which the HTTP seam
//!   does not have.

mod address;
mod download;

pub use self::address::{is_loopback_host, is_public_host, is_public_ip};
pub use self::download::{download, Download, DownloadError, DownloadPolicy};

#[cfg(test)]
mod tests;
