//! The login throttle: sign-in attempts counted per client address, plus one budget of failures for the whole
//! server, in the platform's attempt counters ([`Counters`]).
//!
//! - **Per address.** After [`MAX_FAILURES`] failures in a rolling [`WINDOW_SECS`] window (every attempt restarts
//!   it) sign-in is refused with 429 even for the right password: otherwise the lock-out would tell an attacker
//!   when they guessed right. An IPv6 client is counted by its /64 (configurable), the block one subscriber
//!   gets: counting single IPv6 addresses would give whoever holds a /64 2^64 × 8 guesses.
//! - **For the server.** After [`GLOBAL_MAX_FAILURES`] failures from all addresses together in the window, every
//!   sign-in is refused until the window passes, so rotating addresses buys no more than that many guesses per
//!   window. The price: someone failing on purpose can keep the owner from *authorizing a new client* for a
//!   while; connected clients keep working (their tokens do not pass through here).
//! - **Counted before checked.** An attempt is counted, for its address and for the server, in the same
//!   indivisible update that checks both limits, before the password is looked at; if it cannot be counted (the
//!   store is unreachable, KV's daily writes are used up) it is refused with 429 instead of being checked
//!   uncounted. A success then clears the address's count and gives the server's one back, so both count
//!   failures, and attempts that arrive together cannot all pass a check that none has counted yet.
//!
//! In the Worker the counts live in a Durable Object and natively in the process, where an update is one step:
//! the limits are exact however many guesses arrive at once. Without the Durable Object binding they fall back
//! to `CACHE_KV` under the TypeScript project's keys (`login-attempts:<address>`), where parallel guesses can
//! overshoot by the few that race; SECURITY.md gives the numbers. Each failure also waits a little longer
//! before answering.

use std::net::IpAddr;

use zotero_mcp_core::platform::{CounterStep, Counters, CountersError};

use super::log;
use crate::platform::HttpRequest;

/// Failures allowed per address (or IPv6 prefix) per window.
pub const MAX_FAILURES: u32 = 8;
/// Failures allowed from all addresses together per window.
pub const GLOBAL_MAX_FAILURES: u32 = 64;
/// The window, restarted by every attempt (per address and for the server).
pub const WINDOW_SECS: u64 = 15 * 60;
/// The header that carries the client's address: Cloudflare sets and overwrites `CF-Connecting-IP` on every
/// request; the native HTTP server sets it from the socket (replacing any the client sent).
pub const CLIENT_ADDRESS_HEADER: &str = "cf-connecting-ip";

/// The counter of the server's failures.
pub const GLOBAL_KEY: &str = "login-attempts:*";
/// What to wait before trying again when the counters cannot be reached.
const UNCOUNTED_RETRY_SECS: u64 = 60;

/// How long to wait before answering a failure, given the failures before it: 400 ms, then 300 ms more each time.
pub fn failure_delay_ms(previous_failures: u32) -> u64 {
    400 + u64::from(previous_failures) * 300
}

/// Why an attempt is not even checked. Always answered 429 with `Retry-After`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Locked {
    /// This address (or IPv6 prefix) used its failures.
    Address { retry_after_secs: u64 },
    /// All addresses together used the server's failures.
    Server { retry_after_secs: u64 },
    /// The attempt could not be counted, so it is not checked either.
    Uncounted,
}

impl Locked {
    /// Seconds until trying again can help.
    pub fn retry_after_secs(self) -> u64 {
        match self {
            Locked::Address { retry_after_secs } | Locked::Server { retry_after_secs } => retry_after_secs.max(1),
            Locked::Uncounted => UNCOUNTED_RETRY_SECS,
        }
    }

    /// What the sign-in page says.
    pub fn message(self) -> String {
        let minutes = self.retry_after_secs().div_ceil(60);
        let wait = format!("{minutes} minute{}", if minutes == 1 { "" } else { "s" });
        match self {
            Locked::Address { .. } => {
                format!("Too many failed sign-in attempts from your network. Try again in {wait}.")
            }
            Locked::Server { .. } => format!(
                "Too many failed sign-in attempts on this server recently. Try again in {wait}; clients that are \
                 already connected keep working."
            ),
            Locked::Uncounted => {
                "Sign-in is paused because attempts cannot be counted right now. Try again in a minute.".to_owned()
            }
        }
    }
}

/// An attempt that was counted and may be checked.
#[derive(Debug, Clone, Copy)]
pub struct Attempt {
    /// Failures from this address before this attempt, for the answer's delay.
    pub previous_failures: u32,
}

/// The throttle of one client address.
pub struct Throttle<'a> {
    counters: &'a dyn Counters,
    now_ms: u64,
    key: String,
}

impl<'a> Throttle<'a> {
    /// The throttle of the request's client, counting IPv6 clients by their `/ipv6_prefix`.
    pub fn for_request(request: &HttpRequest, counters: &'a dyn Counters, now_ms: u64, ipv6_prefix: u8) -> Self {
        let raw = request.headers().get(CLIENT_ADDRESS_HEADER).and_then(|v| v.to_str().ok()).unwrap_or("");
        Self { counters, now_ms, key: format!("login-attempts:{}", client_key(raw, ipv6_prefix)) }
    }

    /// Counts an attempt before its password is checked, or says why it must not be checked: one update that
    /// checks the address's and the server's counts and adds the attempt to both.
    pub async fn begin(&self) -> Result<Attempt, Locked> {
        let steps = [
            CounterStep::Below { key: self.key.clone(), limit: MAX_FAILURES },
            CounterStep::Below { key: GLOBAL_KEY.to_owned(), limit: GLOBAL_MAX_FAILURES },
            CounterStep::Add { key: self.key.clone(), window_secs: WINDOW_SECS, rolling: true },
            CounterStep::Add { key: GLOBAL_KEY.to_owned(), window_secs: WINDOW_SECS, rolling: true },
        ];
        match self.counters.update(&steps).await {
            Ok(report) => Ok(Attempt { previous_failures: report.before.first().copied().unwrap_or(0) }),
            Err(CountersError::Refused { step, until_ms }) => {
                let retry_after_secs = until_ms.saturating_sub(self.now_ms).div_ceil(1000);
                Err(if step == 0 { Locked::Address { retry_after_secs } } else { Locked::Server { retry_after_secs } })
            }
            Err(e @ CountersError::Unavailable(_)) => {
                log::warn(&format!("the login throttle could not count an attempt, so it was refused: {e}"));
                Err(Locked::Uncounted)
            }
        }
    }

    /// After the right password: clears the address's count and takes the attempt back from the server's, which
    /// counts failures only. (A failure needs nothing more: [`Self::begin`] counted it already.)
    pub async fn succeeded(&self) {
        let steps =
            [CounterStep::Clear { key: self.key.clone() }, CounterStep::Subtract { key: GLOBAL_KEY.to_owned() }];
        if let Err(e) = self.counters.update(&steps).await {
            log::warn(&format!("the login throttle could not clear a count after a sign-in: {e}"));
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
