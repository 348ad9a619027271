/// Wall-clock time, in milliseconds since the Unix epoch.
///
/// A seam rather than `std::time` because `SystemTime::now()` panics on `wasm32-unknown-unknown`; the Worker
/// reads `Date.now()` instead, and tests move time by hand.
pub trait Clock {
    /// Milliseconds since 1970-01-01T00:00:00Z.
    fn now_ms(&self) -> u64;

    /// Whole seconds since the Unix epoch (the unit OAuth and KV expirations use).
    fn now_secs(&self) -> u64 {
        self.now_ms() / 1000
    }
}

/// The host's clock, for native binaries and tests.
#[cfg(not(target_arch = "wasm32"))]
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

#[cfg(not(target_arch = "wasm32"))]
impl Clock for SystemClock {
    fn now_ms(&self) -> u64 {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
    }
}
