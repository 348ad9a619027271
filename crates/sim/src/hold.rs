//! Holding a request until the test says: [`Simulator::hold_matching`] catches the next request a matcher
//! selects and keeps its answer (and, unless armed to apply it first, the request itself) until
//! [`Hold::release`], so a test can stop a multi-step write at a chosen step and cut it off there (drop the call,
//! kill the server) with nothing left to timing.
//!
//! In process, [`crate::InProcess`] awaits the hold; over a socket the server parks the connection and answers
//! it once released (`POST /_sim/hold`, `GET /_sim/hold`, `POST /_sim/release`; see docs/simulator.md).

use std::cell::RefCell;
use std::future::poll_fn;
use std::rc::Rc;
use std::task::{Poll, Waker};

use crate::{FaultMatch, Simulator};

#[derive(Debug, Default)]
struct Gate {
    caught: bool,
    released: bool,
    waker: Option<Waker>,
}

/// A hold armed by [`Simulator::hold_matching`]: whether it caught its request, and its release.
#[derive(Debug, Clone, Default)]
pub struct Hold(Rc<RefCell<Gate>>);

impl Hold {
    /// Whether the request was caught and is held now (not yet released).
    pub fn is_holding(&self) -> bool {
        let gate = self.0.borrow();
        gate.caught && !gate.released
    }

    /// Whether a request was caught (held now or released since).
    pub fn caught(&self) -> bool {
        self.0.borrow().caught
    }

    /// Lets the held request go on (or, if none was caught yet, the next one the hold would catch).
    pub fn release(&self) {
        let waker = {
            let mut gate = self.0.borrow_mut();
            gate.released = true;
            gate.waker.take()
        };
        if let Some(waker) = waker {
            waker.wake();
        }
    }

    pub(crate) fn catch(&self) {
        self.0.borrow_mut().caught = true;
    }

    pub(crate) fn is_released(&self) -> bool {
        self.0.borrow().released
    }

    /// Resolves once released.
    pub(crate) async fn released(&self) {
        poll_fn(|cx| {
            let mut gate = self.0.borrow_mut();
            if gate.released {
                Poll::Ready(())
            } else {
                gate.waker = Some(cx.waker().clone());
                Poll::Pending
            }
        })
        .await;
    }
}

/// An armed hold waiting for its request.
#[derive(Debug)]
pub(crate) struct Armed {
    pub matcher: FaultMatch,
    pub after_applying: bool,
    pub hold: Hold,
}

/// Holds taken by requests, and every hold armed so far (to release them all).
#[derive(Debug, Default)]
pub(crate) struct Holds {
    pub armed: Vec<Armed>,
    pub all: Vec<Hold>,
}

impl Simulator {
    /// Holds the next request `matcher` selects until the returned [`Hold`] is released: before it is applied,
    /// or (`after_applying`) after, with its answer kept back. Once only; arm again for another.
    pub fn hold_matching(&self, matcher: FaultMatch, after_applying: bool) -> Hold {
        let hold = Hold::default();
        let mut holds = self.holds.borrow_mut();
        holds.armed.push(Armed { matcher, after_applying, hold: hold.clone() });
        holds.all.push(hold.clone());
        hold
    }

    /// Releases every hold armed so far (those still waiting for a request are dropped); returns how many
    /// requests were held and are now let go.
    pub fn release_holds(&self) -> usize {
        let mut holds = self.holds.borrow_mut();
        holds.armed.clear();
        let all = std::mem::take(&mut holds.all);
        drop(holds);
        let mut released = 0;
        for hold in all {
            if hold.is_holding() {
                released += 1;
            }
            hold.release();
        }
        released
    }

    /// How many requests are held now.
    pub fn held(&self) -> usize {
        self.holds.borrow().all.iter().filter(|h| h.is_holding()).count()
    }

    /// The hold (and whether it applies the request first) that catches this request, if one is armed for it.
    pub(crate) fn take_hold(&self, request: &http::Request<Vec<u8>>) -> Option<(Hold, bool)> {
        let mut holds = self.holds.borrow_mut();
        let path = request.uri().path();
        let index = holds.armed.iter_mut().position(|a| a.matcher.selects(request.method(), path, request.body()))?;
        let armed = holds.armed.remove(index);
        armed.hold.catch();
        Some((armed.hold, armed.after_applying))
    }
}
