use std::future::Future;
use std::pin::pin;
use std::task::Poll;

use async_trait::async_trait;

/// Wall-clock time and waiting.
///
/// A seam rather than `std::time` because `SystemTime::now()` panics on `wasm32-unknown-unknown` and there is no
/// thread to sleep on: the Worker reads `Date.now()` and waits with a runtime timer, while tests use a clock that
/// moves only when told to (so a "30 second" retry costs a test nothing and can be asserted exactly).
#[async_trait(?Send)]
pub trait Clock {
    /// Milliseconds since 1970-01-01T00:00:00Z.
    fn now_ms(&self) -> u64;

    /// Whole seconds since the Unix epoch (the unit OAuth and KV expirations use).
    fn now_secs(&self) -> u64 {
        self.now_ms() / 1000
    }

    /// Waits this many milliseconds.
    async fn sleep(&self, ms: u64);
}

/// Runs `work`, giving up after `ms` milliseconds of `clock`. The work is polled first, so an answer that is
/// already there always wins; `None` means the time ran out (the work is dropped, which cancels a fetch).
pub async fn within<T>(clock: &dyn Clock, ms: u64, work: impl Future<Output = T>) -> Option<T> {
    let mut work = pin!(work);
    let mut timer = pin!(clock.sleep(ms));
    std::future::poll_fn(|cx| {
        if let Poll::Ready(value) = work.as_mut().poll(cx) {
            return Poll::Ready(Some(value));
        }
        if timer.as_mut().poll(cx).is_ready() {
            return Poll::Ready(None);
        }
        Poll::Pending
    })
    .await
}
