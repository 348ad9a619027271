//! The offload seam over tokio's blocking pool: CPU-bound work (reading a long manuscript) runs on one of its
//! threads while the server's single request thread keeps answering.

use std::future::Future;
use std::pin::Pin;

use tokio::sync::Semaphore;
use zotero_mcp_core::platform::{Job, Offload};

/// Jobs that run at once; the others wait their turn. Each may hold a megabyte manuscript and what is read from
/// it, so many callers at once must not mean as many threads and copies (one thread answered them in turn before).
const JOBS_AT_ONCE: usize = 2;

/// [`Offload`] on `tokio::task::spawn_blocking`, which a current-thread runtime has too.
pub struct BlockingPool {
    turns: Semaphore,
}

impl BlockingPool {
    pub fn new() -> Self {
        BlockingPool { turns: Semaphore::new(JOBS_AT_ONCE) }
    }
}

impl Default for BlockingPool {
    fn default() -> Self {
        Self::new()
    }
}

impl Offload for BlockingPool {
    fn run(&self, job: Job) -> Pin<Box<dyn Future<Output = bool> + '_>> {
        Box::pin(async move {
            // The semaphore is never closed; without a turn the job would run unbounded, so it is refused.
            let Ok(_turn) = self.turns.acquire().await else { return false };
            tokio::task::spawn_blocking(job).await.is_ok()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use zotero_mcp_core::platform::run_cpu;

    #[tokio::test(flavor = "current_thread")]
    async fn the_work_runs_on_another_thread_of_a_single_threaded_runtime() {
        let here = std::thread::current().id();
        let text = "x".repeat(10);
        let (len, there) = run_cpu(Some(&BlockingPool::new()), move || (text.len(), std::thread::current().id()))
            .await
            .expect("the job finishes");
        assert_eq!(len, 10);
        assert_ne!(there, here);
    }
}
