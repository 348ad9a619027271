//! Holding a call's writes until its journal has recorded what each is about to do.
//!
//! A server that keeps an undo journal ahead of the writes (so a call cut off part-way still leaves a record of
//! what landed and what it was sending) needs every write to wait for the record: the first write of a call goes
//! out only once the entry saying what the call is about to do is stored, and each later one once what landed
//! before it (and what it is about to send) is. The writers of the Zotero API and of the file stores call
//! [`WriteGate::pass`] just before they send a change; whoever keeps the journal [`WriteGate::hold`]s the gate,
//! watches [`WriteGate::waiting`], stores the record, then [`WriteGate::admit`]s the writes that were waiting when
//! it started. A gate nobody holds lets every write through at once (tests, tools run outside a server).
//!
//! Each write takes a ticket in order; admitting "up to ticket n" lets exactly the writes whose record was
//! already there when the journal began storing go, so a write that arrives while a record is being stored
//! waits for the next one.

use std::cell::RefCell;
use std::future::poll_fn;
use std::rc::Rc;
use std::task::{Poll, Waker};

/// Shared by a call's writers and its journal (cloning shares it).
#[derive(Debug, Clone, Default)]
pub struct WriteGate(Rc<RefCell<Gate>>);

#[derive(Debug, Default)]
struct Gate {
    holding: bool,
    /// Tickets handed out: the next write's ticket.
    issued: u64,
    /// Writes with a ticket below this may go.
    admitted: u64,
    wakers: Vec<Waker>,
}

impl WriteGate {
    /// From now on each write waits until it is admitted.
    pub fn hold(&self) {
        self.0.borrow_mut().holding = true;
    }

    /// Lets every write through, now and later (the journal cannot be kept: the call goes on without it).
    pub fn release(&self) {
        let mut gate = self.0.borrow_mut();
        gate.holding = false;
        gate.admitted = gate.issued;
        wake(&mut gate);
    }

    /// Whether a write is waiting to be admitted.
    pub fn waiting(&self) -> bool {
        let gate = self.0.borrow();
        gate.holding && gate.admitted < gate.issued
    }

    /// The tickets handed out so far: what [`Self::admit`] takes once the record of everything logged until now
    /// is stored.
    pub fn issued(&self) -> u64 {
        self.0.borrow().issued
    }

    /// Lets the writes with a ticket below `upto` go.
    pub fn admit(&self, upto: u64) {
        let mut gate = self.0.borrow_mut();
        gate.admitted = gate.admitted.max(upto.min(gate.issued));
        wake(&mut gate);
    }

    /// Waits until this write may be sent: at once when nobody holds the gate.
    pub async fn pass(&self) {
        let ticket = {
            let mut gate = self.0.borrow_mut();
            if !gate.holding {
                return;
            }
            gate.issued += 1;
            gate.issued - 1
        };
        poll_fn(|cx| {
            let mut gate = self.0.borrow_mut();
            if !gate.holding || gate.admitted > ticket {
                return Poll::Ready(());
            }
            gate.wakers.push(cx.waker().clone());
            Poll::Pending
        })
        .await;
    }
}

fn wake(gate: &mut Gate) {
    for waker in gate.wakers.drain(..) {
        waker.wake();
    }
}

#[cfg(test)]
mod tests {
    use std::future::Future;
    use std::pin::pin;
    use std::task::{Context, Poll, Waker};

    use super::*;

    fn poll_once<F: Future>(future: std::pin::Pin<&mut F>) -> Poll<F::Output> {
        future.poll(&mut Context::from_waker(Waker::noop()))
    }

    #[test]
    fn a_gate_nobody_holds_lets_writes_through() {
        let gate = WriteGate::default();
        assert!(poll_once(pin!(gate.pass())).is_ready());
        assert!(!gate.waiting());
    }

    #[test]
    fn a_held_gate_admits_only_the_writes_recorded_before() {
        let gate = WriteGate::default();
        gate.hold();
        let mut first = pin!(gate.pass());
        assert!(poll_once(first.as_mut()).is_pending());
        assert!(gate.waiting());
        let upto = gate.issued();
        // A second write arrives while the record of the first is being stored: it waits for the next record.
        let mut second = pin!(gate.pass());
        assert!(poll_once(second.as_mut()).is_pending());
        gate.admit(upto);
        assert!(poll_once(first.as_mut()).is_ready());
        assert!(poll_once(second.as_mut()).is_pending());
        assert!(gate.waiting());
        gate.release();
        assert!(poll_once(second.as_mut()).is_ready());
        assert!(!gate.waiting());
    }
}
