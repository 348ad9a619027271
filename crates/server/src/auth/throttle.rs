//! The login throttle: failed password attempts counted per client IP in `CACHE_KV`, under the TypeScript
//! project's key (`login-attempts:<ip>`), so a lock-out survives the switch.
//!
//! After [`MAX_FAILURES`] failures in a rolling [`WINDOW_SECS`] window (every failure restarts it) the login is
//! refused with 429 even for the right password: otherwise the lock-out would tell an attacker when they guessed
//! right. Each failure also waits a little longer before answering. KV is eventually consistent, so parallel
//! guesses can overshoot the limit by a few; it slows a brute force down, and the password's strength does the
//! rest (SECURITY.md says so).

use zotero_mcp_core::platform::{KvStore, KvWrite};

use super::error::AuthError;
use crate::platform::HttpRequest;

/// Failures allowed per window.
pub const MAX_FAILURES: u32 = 8;
/// The window, restarted by every failure.
pub const WINDOW_SECS: u64 = 15 * 60;

/// How long to wait before answering a failure, given the failures before it: 400 ms, then 300 ms more each time.
pub fn failure_delay_ms(previous_failures: u32) -> u64 {
    400 + u64::from(previous_failures) * 300
}

/// The throttle of one client address.
pub struct Throttle<'a> {
    kv: &'a dyn KvStore,
    key: String,
}

impl<'a> Throttle<'a> {
    /// The caller's address is `CF-Connecting-IP`, which Cloudflare sets and overwrites on every request.
    pub fn for_request(request: &HttpRequest, kv: &'a dyn KvStore) -> Self {
        let ip = request.headers().get("cf-connecting-ip").and_then(|v| v.to_str().ok()).unwrap_or("unknown");
        Self { kv, key: format!("login-attempts:{}", ip.trim()) }
    }

    /// Failures so far in the current window.
    pub async fn failures(&self) -> Result<u32, AuthError> {
        Ok(self.kv.get(&self.key).await?.and_then(|v| v.trim().parse().ok()).unwrap_or(0))
    }

    pub fn is_locked(failures: u32) -> bool {
        failures >= MAX_FAILURES
    }

    pub async fn record_failure(&self, previous_failures: u32) -> Result<(), AuthError> {
        let count = previous_failures.saturating_add(1).to_string();
        Ok(self.kv.put(&self.key, &count, KvWrite::ExpiresIn(WINDOW_SECS)).await?)
    }

    pub async fn reset(&self) -> Result<(), AuthError> {
        Ok(self.kv.delete(&self.key).await?)
    }
}
