use async_trait::async_trait;
use zotero_mcp_core::platform::Clock;

/// The system clock, waiting on tokio's timer: a wait yields to the runtime instead of blocking the thread,
/// so a deadline (`platform::within`) can cancel a slow request while other work goes on.
#[derive(Debug, Default, Clone, Copy)]
pub struct TokioClock;

#[async_trait(?Send)]
impl Clock for TokioClock {
    fn now_ms(&self) -> u64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
            .unwrap_or(0)
    }

    async fn sleep(&self, ms: u64) {
        tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
    }
}
