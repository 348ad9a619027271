//! The login throttle: sign-in attempts counted per client address in `CACHE_KV`, under the TypeScript
//! project's key (`login-attempts:<address>`), so a lock-out survives the switch, plus one budget of failures
//! for the whole server.
//!
//! - **Per address.** After [`MAX_FAILURES`] failures in a rolling [`WINDOW_SECS`] window (every attempt restarts
//!   it) sign-in is refused with 429 even for the right password: otherwise the lock-out would tell an attacker
//!   when they guessed right. An IPv6 client is counted by its /64 (configurable), the block one subscriber
//!   gets: counting single IPv6 addresses would give whoever holds a /64 2^64 × 8 guesses.
//! - **For the server.** After [`GLOBAL_MAX_FAILURES`] failures from all addresses together in the window, every
//!   sign-in is refused until the window passes, so rotating addresses buys no more than that many guesses per
//!   window. The price: someone failing on purpose can keep the owner from *authorizing a new client* for a
//!   while; connected clients keep working (their tokens do not pass through here).
//! - **Counted before checked.** An attempt is written to KV before the password is looked at; if that write is
//!   refused (KV's daily write budget, a rate limit), the attempt is refused with 429 instead of being checked
//!   uncounted. A success clears the address's count.
//!
//! KV is eventually consistent and has no atomic increment, so parallel guesses can overshoot a limit by the few
//! that race; SECURITY.md gives the numbers. Each failure also waits a little longer before answering.

use std::net::IpAddr;

use zotero_mcp_core::platform::{KvStore, KvWrite};

use super::log;
use crate::platform::HttpRequest;

/// Failures allowed per address (or IPv6 prefix) per window.
pub const MAX_FAILURES: u32 = 8;
/// Failures allowed from all addresses together per window.
pub const GLOBAL_MAX_FAILURES: u32 = 64;
/// The window, restarted by every attempt (per address) and every failure (for the server).
pub const WINDOW_SECS: u64 = 15 * 60;
/// The header that carries the client's address: Cloudflare sets and overwrites `CF-Connecting-IP` on every
/// request; the native HTTP server sets it from the socket (replacing any the client sent).
pub const CLIENT_ADDRESS_HEADER: &str = "cf-connecting-ip";

const GLOBAL_KEY: &str = "login-attempts:*";

/// How long to wait before answering a failure, given the failures before it: 400 ms, then 300 ms more each time.
pub fn failure_delay_ms(previous_failures: u32) -> u64 {
    400 + u64::from(previous_failures) * 300
}

/// Why an attempt is not even checked. Always answered 429 with `Retry-After`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Locked {
    /// This address (or IPv6 prefix) used its failures.
    Address,
    /// All addresses together used the server's failures.
    Server,
    /// The attempt could not be counted, so it is not checked either.
    Uncounted,
}

impl Locked {
    /// Seconds until trying again can help.
    pub fn retry_after_secs(self) -> u64 {
        match self {
            Locked::Address | Locked::Server => WINDOW_SECS,
            Locked::Uncounted => 60,
        }
    }

    /// What the sign-in page says.
    pub fn message(self) -> &'static str {
        match self {
            Locked::Address => "Too many failed sign-in attempts from your network. Try again in 15 minutes.",
            Locked::Server => {
                "Too many failed sign-in attempts on this server recently. Try again in 15 minutes; clients that \
                 are already connected keep working."
            }
            Locked::Uncounted => {
                "Sign-in is paused because attempts cannot be counted right now. Try again in a minute."
            }
        }
    }
}

/// An attempt that was counted and may be checked.
#[derive(Debug, Clone, Copy)]
pub struct Attempt {
    /// Failures from this address before this attempt, for the answer's delay.
    pub previous_failures: u32,
    global_failures: u32,
}

/// The throttle of one client address.
pub struct Throttle<'a> {
    kv: &'a dyn KvStore,
    key: String,
}

impl<'a> Throttle<'a> {
    /// The throttle of the request's client, counting IPv6 clients by their `/ipv6_prefix`.
    pub fn for_request(request: &HttpRequest, kv: &'a dyn KvStore, ipv6_prefix: u8) -> Self {
        let raw = request.headers().get(CLIENT_ADDRESS_HEADER).and_then(|v| v.to_str().ok()).unwrap_or("");
        Self { kv, key: format!("login-attempts:{}", client_key(raw, ipv6_prefix)) }
    }

    /// Counts an attempt before its password is checked, or says why it must not be checked.
    pub async fn begin(&self) -> Result<Attempt, Locked> {
        let address = self.count(&self.key).await?;
        if address >= MAX_FAILURES {
            return Err(Locked::Address);
        }
        let global = self.count(GLOBAL_KEY).await?;
        if global >= GLOBAL_MAX_FAILURES {
            return Err(Locked::Server);
        }
        let written = self.kv.put(&self.key, &(address + 1).to_string(), KvWrite::ExpiresIn(WINDOW_SECS)).await;
        if let Err(e) = written {
            log::warn(&format!("the login throttle could not count an attempt, so it was refused: {e}"));
            return Err(Locked::Uncounted);
        }
        Ok(Attempt { previous_failures: address, global_failures: global })
    }

    /// Records that the attempt failed: the address's count stays (it was counted in [`Self::begin`]), the
    /// server's goes up.
    pub async fn failed(&self, attempt: Attempt) {
        let global = attempt.global_failures.saturating_add(1).to_string();
        if let Err(e) = self.kv.put(GLOBAL_KEY, &global, KvWrite::ExpiresIn(WINDOW_SECS)).await {
            // The address's count, which did get written, still limits this client.
            log::warn(&format!("the login throttle could not count a failure for the server: {e}"));
        }
    }

    /// Clears the address's count after the right password.
    pub async fn succeeded(&self) {
        if let Err(e) = self.kv.delete(&self.key).await {
            log::warn(&format!("the login throttle could not clear a count after a sign-in: {e}"));
        }
    }

    /// A stored count; a store that cannot be read is treated as unable to count.
    async fn count(&self, key: &str) -> Result<u32, Locked> {
        match self.kv.get(key).await {
            Ok(value) => Ok(value.and_then(|v| v.trim().parse().ok()).unwrap_or(0)),
            Err(e) => {
                log::warn(&format!("the login throttle could not read `{key}`, so sign-in was refused: {e}"));
                Err(Locked::Uncounted)
            }
        }
    }
}

/// The part of a client address that names one client: an IPv4 address whole, an IPv6 address cut to its
/// first `ipv6_prefix` bits (an IPv4-mapped IPv6 address counts as the IPv4 address). Anything unparsable
/// shares the key `unknown`.
pub fn client_key(raw: &str, ipv6_prefix: u8) -> String {
    match raw.trim().parse::<IpAddr>() {
        Ok(IpAddr::V4(v4)) => v4.to_string(),
        Ok(IpAddr::V6(v6)) => match v6.to_ipv4_mapped() {
            Some(v4) => v4.to_string(),
            None => {
                let bits = u32::from(ipv6_prefix.clamp(1, 128));
                let mask = if bits == 128 { u128::MAX } else { !(u128::MAX >> bits) };
                let prefix = std::net::Ipv6Addr::from(u128::from(v6) & mask);
                format!("{prefix}/{bits}")
            }
        },
        Err(_) => "unknown".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipv6_clients_are_counted_by_prefix_and_ipv4_whole() {
        assert_eq!(client_key("203.0.113.7", 64), "203.0.113.7");
        assert_eq!(client_key(" 2001:db8:1:2:aaaa:bbbb:cccc:dddd ", 64), "2001:db8:1:2::/64");
        assert_eq!(client_key("2001:db8:1:2:ffff::1", 64), client_key("2001:db8:1:2::9", 64), "one /64, one key");
        assert_ne!(client_key("2001:db8:1:3::1", 64), client_key("2001:db8:1:2::1", 64));
        assert_eq!(client_key("2001:db8:1:2:aaaa::1", 48), "2001:db8:1::/48");
        assert_eq!(client_key("2001:db8::1", 128), "2001:db8::1/128");
        assert_eq!(client_key("::ffff:198.51.100.9", 64), "198.51.100.9");
        assert_eq!(client_key("", 64), "unknown");
        assert_eq!(client_key("not an address", 64), "unknown");
    }
}
