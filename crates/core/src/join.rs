//! Waiting on many futures at once through one shared loop. `futures_util::future::join_all` is compiled again
//! for every future type it is given (its state, its polling and, past 30 futures, a whole `FuturesOrdered`), and
//! every call site's futures are a type of their own: here the polling is compiled once, over boxed futures that
//! put their outputs in place, and a call adds only that small wrapper. The outputs come back in the order given,
//! as `join_all`'s do; every future is polled on the first poll, in order, so requests start as they did.

use std::future::Future;
use std::pin::Pin;
use std::task::Poll;

/// Runs every future at once and returns their outputs in the order given (`futures_util::future::join_all`).
pub async fn join_all<F: Future>(futures: impl IntoIterator<Item = F>) -> Vec<F::Output> {
    let futures: Vec<F> = futures.into_iter().collect();
    let mut outputs: Vec<Option<F::Output>> = futures.iter().map(|_| None).collect();
    let tasks: Vec<Task<'_>> = outputs
        .iter_mut()
        .zip(futures)
        .map(|(slot, future)| -> Task<'_> { Box::pin(async move { *slot = Some(future.await) }) })
        .collect();
    run_all(tasks).await;
    outputs.into_iter().flatten().collect()
}

type Task<'a> = Pin<Box<dyn Future<Output = ()> + 'a>>;

/// The one polling loop: each wake-up polls every task not yet finished, until all have.
async fn run_all(mut tasks: Vec<Task<'_>>) {
    let mut finished = vec![false; tasks.len()];
    std::future::poll_fn(move |cx| {
        let mut pending = false;
        for (task, finished) in tasks.iter_mut().zip(finished.iter_mut()) {
            if !*finished {
                if task.as_mut().poll(cx).is_ready() {
                    *finished = true;
                } else {
                    pending = true;
                }
            }
        }
        if pending {
            Poll::Pending
        } else {
            Poll::Ready(())
        }
    })
    .await;
}

#[cfg(test)]
mod tests {
    use super::join_all;
    use std::cell::RefCell;

    #[tokio::test]
    async fn outputs_come_in_the_order_given_and_all_start_at_once() {
        let started = RefCell::new(Vec::new());
        let outputs = join_all((0..40).map(|i| {
            let started = &started;
            async move {
                started.borrow_mut().push(i);
                // Later futures finish first: the outputs still come back in the order given.
                for _ in 0..(40 - i) {
                    tokio::task::yield_now().await;
                }
                i * 2
            }
        }))
        .await;
        assert_eq!(outputs, (0..40).map(|i| i * 2).collect::<Vec<_>>());
        assert_eq!(*started.borrow(), (0..40).collect::<Vec<_>>());
        assert!(join_all(Vec::<std::future::Ready<u8>>::new()).await.is_empty());
    }
}
