//! A `CACHE_KV` stand-in over another store, for the failure and concurrency paths of what the server keeps in
//! KV: writes to chosen keys refused, and every step made to wait one scheduler turn so that two calls sent
//! together interleave.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use async_trait::async_trait;
use zotero_mcp_core::platform::{KvError, KvListPage, KvStore, KvWrite};

pub struct InterposedKv {
    inner: Rc<dyn KvStore>,
    /// A write to a key containing any of these is refused (the rest reach `inner`).
    pub refused: RefCell<Vec<String>>,
    /// Each step waits one scheduler turn before it reaches `inner`.
    pub yields: Cell<bool>,
}

impl InterposedKv {
    pub fn over(inner: Rc<dyn KvStore>) -> Rc<Self> {
        Rc::new(Self { inner, refused: RefCell::default(), yields: Cell::new(false) })
    }

    async fn turn(&self) {
        if self.yields.get() {
            tokio::task::yield_now().await;
        }
    }
}

#[async_trait(?Send)]
impl KvStore for InterposedKv {
    async fn get(&self, key: &str) -> Result<Option<String>, KvError> {
        self.turn().await;
        self.inner.get(key).await
    }
    async fn put(&self, key: &str, value: &str, lifetime: KvWrite) -> Result<(), KvError> {
        self.turn().await;
        if self.refused.borrow().iter().any(|part| key.contains(part.as_str())) {
            return Err(KvError::Backend { key: key.to_owned(), reason: "the store refused the write".into() });
        }
        self.inner.put(key, value, lifetime).await
    }
    async fn delete(&self, key: &str) -> Result<(), KvError> {
        self.turn().await;
        self.inner.delete(key).await
    }
    async fn list(&self, prefix: &str, cursor: Option<&str>, limit: u32) -> Result<KvListPage, KvError> {
        self.turn().await;
        self.inner.list(prefix, cursor, limit).await
    }
}
