//! CPU-bound work moved off the thread that answers requests, where the runtime has another.
//!
//! The native server runs every request on one thread; a call that computes for a second (reading a megabyte
//! manuscript) would hold up every other client and `/health` meanwhile. A Worker has one thread and nowhere
//! else to go: there the work runs inline, and the seam is not compiled in.

use std::future::Future;
use std::pin::Pin;

/// A job handed to another thread: it owns everything it reads.
pub type Job = Box<dyn FnOnce() + Send + 'static>;

/// Where CPU-bound jobs run.
pub trait Offload {
    /// Runs `job` elsewhere, resolving when it has finished; `false` when it did not run to its end (it
    /// panicked, or the runtime is shutting down).
    fn run(&self, job: Job) -> Pin<Box<dyn Future<Output = bool> + '_>>;
}

/// `work`'s result, computed through `offload` when there is one and inline otherwise; `None` when the job did
/// not finish.
pub async fn run_cpu<T: Send + 'static>(
    offload: Option<&dyn Offload>,
    work: impl FnOnce() -> T + Send + 'static,
) -> Option<T> {
    let Some(offload) = offload else { return Some(work()) };
    let (send, receive) = std::sync::mpsc::sync_channel(1);
    let finished = offload
        .run(Box::new(move || {
            // The receiver lives until the job has finished: a send cannot fail but by a panic before it.
            let _ = send.send(work());
        }))
        .await;
    if !finished {
        return None;
    }
    receive.try_recv().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stand-in runtime: the job on a thread of its own, joined.
    struct Thread;

    impl Offload for Thread {
        fn run(&self, job: Job) -> Pin<Box<dyn Future<Output = bool> + '_>> {
            let handle = std::thread::spawn(job);
            Box::pin(async move { handle.join().is_ok() })
        }
    }

    #[tokio::test]
    async fn work_runs_inline_or_elsewhere_with_the_same_result() {
        let text = "a moved string".to_owned();
        let here = std::thread::current().id();
        let inline = run_cpu(None, move || (text.len(), std::thread::current().id())).await;
        assert_eq!(inline, Some((14, here)));
        let elsewhere = run_cpu(Some(&Thread), || std::thread::current().id()).await;
        assert!(elsewhere.is_some_and(|id| id != here));
    }

    #[tokio::test]
    async fn a_job_that_panics_gives_none() {
        let outcome: Option<u8> = run_cpu(Some(&Thread), || panic!("the job failed")).await;
        assert_eq!(outcome, None);
    }
}
