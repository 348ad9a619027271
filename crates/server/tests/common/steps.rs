//! An HTTP seam that counts the requests a call makes and how many of them ran one after another.
//!
//! Every request waits one scheduler turn before it is passed on, so requests sent together are in flight
//! together. A request that starts while none is in flight begins a new sequential step.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use async_trait::async_trait;
use zotero_mcp_server::platform::{HttpClient, HttpError, HttpRequest, HttpResponse};

pub struct Steps {
    inner: Rc<dyn HttpClient>,
    in_flight: Cell<usize>,
    steps: Cell<usize>,
    log: RefCell<Vec<String>>,
}

impl Steps {
    pub fn over(inner: Rc<dyn HttpClient>) -> Rc<Self> {
        Rc::new(Self { inner, in_flight: Cell::new(0), steps: Cell::new(0), log: RefCell::new(Vec::new()) })
    }

    /// Starts counting afresh.
    pub fn reset(&self) {
        self.steps.set(0);
        self.log.borrow_mut().clear();
    }

    /// Requests since the last reset.
    pub fn requests(&self) -> usize {
        self.log.borrow().len()
    }

    /// Sequential steps since the last reset.
    pub fn steps(&self) -> usize {
        self.steps.get()
    }

    /// `METHOD uri` of each request since the last reset, in the order they were sent.
    pub fn log(&self) -> Vec<String> {
        self.log.borrow().clone()
    }

    /// The requests whose `METHOD uri` contains `needle`.
    pub fn count(&self, needle: &str) -> usize {
        self.log.borrow().iter().filter(|line| line.contains(needle)).count()
    }
}

#[async_trait(?Send)]
impl HttpClient for Steps {
    async fn send(&self, request: HttpRequest) -> Result<HttpResponse, HttpError> {
        if self.in_flight.get() == 0 {
            self.steps.set(self.steps.get() + 1);
        }
        self.in_flight.set(self.in_flight.get() + 1);
        self.log.borrow_mut().push(format!("{} {}", request.method(), request.uri()));
        // Everything sent in the same turn is now in flight together.
        tokio::task::yield_now().await;
        let response = self.inner.send(request).await;
        self.in_flight.set(self.in_flight.get() - 1);
        response
    }
}
