//! In-memory stand-ins for the platform seams, for tests of this crate and of the crates above it.
//!
//! They behave like the real services where a test could notice: the KV store expires values, refuses
//! expirations Workers KV would refuse, lists in key order with cursors; the HTTP stand-in records every request.

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, VecDeque};
use std::rc::Rc;

use async_trait::async_trait;

use crate::platform::{
    Clock, HttpClient, HttpError, HttpRequest, HttpResponse, KvError, KvKey, KvListPage, KvStore, KvWrite,
};

/// A clock that only moves when told to, or when something sleeps on it (the sleep returns at once and the
/// clock jumps ahead). Every sleep is recorded, so tests can assert how long code waited.
#[derive(Debug)]
pub struct ManualClock {
    now_ms: Cell<u64>,
    sleeps: RefCell<Vec<u64>>,
}

impl ManualClock {
    pub fn at(now_ms: u64) -> Rc<Self> {
        Rc::new(Self { now_ms: Cell::new(now_ms), sleeps: RefCell::default() })
    }
    pub fn advance_secs(&self, secs: u64) {
        self.advance_ms(secs * 1000);
    }
    pub fn advance_ms(&self, ms: u64) {
        self.now_ms.set(self.now_ms.get() + ms);
    }
    /// Every sleep so far, in milliseconds, in order.
    pub fn sleeps(&self) -> Vec<u64> {
        self.sleeps.borrow().clone()
    }
}

#[async_trait(?Send)]
impl Clock for ManualClock {
    fn now_ms(&self) -> u64 {
        self.now_ms.get()
    }

    async fn sleep(&self, ms: u64) {
        self.sleeps.borrow_mut().push(ms);
        self.advance_ms(ms);
    }
}

/// Workers KV's smallest accepted expiration distance, in seconds.
pub const KV_MIN_TTL_SECS: u64 = 60;

/// An in-memory KV store with Workers KV's expiry rules.
pub struct MemoryKv {
    clock: Rc<dyn Clock>,
    entries: RefCell<BTreeMap<String, (String, Option<u64>)>>,
}

impl MemoryKv {
    pub fn new(clock: Rc<dyn Clock>) -> Rc<Self> {
        Rc::new(Self { clock, entries: RefCell::new(BTreeMap::new()) })
    }

    /// The names of the live keys, for assertions.
    pub fn keys(&self) -> Vec<String> {
        let now = self.clock.now_secs();
        self.entries
            .borrow()
            .iter()
            .filter(|(_, (_, exp))| exp.is_none_or(|e| e > now))
            .map(|(k, _)| k.clone())
            .collect()
    }
}

#[async_trait(?Send)]
impl KvStore for MemoryKv {
    async fn get(&self, key: &str) -> Result<Option<String>, KvError> {
        let now = self.clock.now_secs();
        let mut entries = self.entries.borrow_mut();
        match entries.get(key) {
            Some((_, Some(exp))) if *exp <= now => {
                entries.remove(key);
                Ok(None)
            }
            Some((value, _)) => Ok(Some(value.clone())),
            None => Ok(None),
        }
    }

    async fn put(&self, key: &str, value: &str, lifetime: KvWrite) -> Result<(), KvError> {
        let now = self.clock.now_secs();
        let expiration = match lifetime {
            KvWrite::Forever => None,
            KvWrite::ExpiresIn(secs) => Some(now + secs),
            KvWrite::ExpiresAt(at) => Some(at),
        };
        if let Some(exp) = expiration {
            if exp < now + KV_MIN_TTL_SECS {
                return Err(KvError::Backend {
                    key: key.to_owned(),
                    reason: format!("expiration must be at least {KV_MIN_TTL_SECS} seconds in the future"),
                });
            }
        }
        self.entries.borrow_mut().insert(key.to_owned(), (value.to_owned(), expiration));
        Ok(())
    }

    async fn delete(&self, key: &str) -> Result<(), KvError> {
        self.entries.borrow_mut().remove(key);
        Ok(())
    }

    async fn list(&self, prefix: &str, cursor: Option<&str>, limit: u32) -> Result<KvListPage, KvError> {
        let now = self.clock.now_secs();
        let limit = limit.clamp(1, 1000) as usize;
        let entries = self.entries.borrow();
        let mut keys: Vec<KvKey> = entries
            .range(prefix.to_owned()..)
            .take_while(|(k, _)| k.starts_with(prefix))
            // The cursor is the last key of the previous page.
            .filter(|(k, _)| cursor.is_none_or(|c| k.as_str() > c))
            .filter(|(_, (_, exp))| exp.is_none_or(|e| e > now))
            .map(|(k, (_, exp))| KvKey { name: k.clone(), expiration: *exp })
            .take(limit + 1)
            .collect();
        let cursor = if keys.len() > limit {
            keys.truncate(limit);
            keys.last().map(|k| k.name.clone())
        } else {
            None
        };
        Ok(KvListPage { keys, cursor })
    }
}

type Responder = Box<dyn Fn(&HttpRequest) -> Result<HttpResponse, HttpError>>;

/// The mark [`StubHttp`] puts on a request it was sent with
/// [`HttpClient::send_public_limited`](crate::platform::HttpClient::send_public_limited), so tests can see which
/// requests had to stay on the public Internet. A runtime never sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PublicAddressesOnly;

/// An HTTP client that answers from a function or a queue, and records what it was asked.
pub struct StubHttp {
    queued: RefCell<VecDeque<Result<HttpResponse, HttpError>>>,
    fallback: Responder,
    requests: RefCell<Vec<HttpRequest>>,
}

impl StubHttp {
    /// Answers every request with `respond`, unless a queued answer is waiting.
    pub fn new(respond: impl Fn(&HttpRequest) -> Result<HttpResponse, HttpError> + 'static) -> Rc<Self> {
        Rc::new(Self {
            queued: RefCell::new(VecDeque::new()),
            fallback: Box::new(respond),
            requests: RefCell::default(),
        })
    }

    /// A stub that fails every request it has no queued answer for, so an unexpected call is loud.
    pub fn strict() -> Rc<Self> {
        Self::new(|req| {
            Err(HttpError::Transport { url: req.uri().to_string(), reason: "unexpected request in test".into() })
        })
    }

    /// Answer the next request with this, before falling back to the function.
    pub fn enqueue(&self, answer: Result<HttpResponse, HttpError>) {
        self.queued.borrow_mut().push_back(answer);
    }

    /// Every request sent so far, in order.
    pub fn requests(&self) -> Vec<HttpRequest> {
        self.requests.borrow().clone()
    }
}

#[async_trait(?Send)]
impl HttpClient for StubHttp {
    async fn send(&self, request: HttpRequest) -> Result<HttpResponse, HttpError> {
        let answer = match self.queued.borrow_mut().pop_front() {
            Some(answer) => answer,
            None => (self.fallback)(&request),
        };
        self.requests.borrow_mut().push(request);
        answer
    }

    async fn send_public_limited(&self, mut request: HttpRequest, limit: usize) -> Result<HttpResponse, HttpError> {
        request.extensions_mut().insert(PublicAddressesOnly);
        self.send_limited(request, limit).await
    }

    /// The stand-in plays the Worker's `fetch` under `global_fetch_strictly_public`, the production setting;
    /// the literal-address checks of the callers are tested against it.
    fn public_only(&self) -> bool {
        true
    }
}

/// A clock whose timers never fire, stopped at `.0` ms: [`ManualClock`] ends every wait at once, so a request
/// that takes a scheduler turn (concurrency tests) would lose the race against its own deadline.
pub struct StoppedClock(pub u64);

#[async_trait(?Send)]
impl Clock for StoppedClock {
    fn now_ms(&self) -> u64 {
        self.0
    }
    async fn sleep(&self, _ms: u64) {
        std::future::pending::<()>().await
    }
}

/// A [`Platform`](crate::platform::Platform) made of the stand-ins above, with the clock at `now_ms`.
pub fn memory_platform(now_ms: u64) -> (crate::platform::Platform, Rc<ManualClock>, Rc<StubHttp>) {
    let clock = ManualClock::at(now_ms);
    let http = StubHttp::strict();
    let platform = crate::platform::Platform {
        http: http.clone(),
        oauth_kv: MemoryKv::new(clock.clone()),
        cache_kv: MemoryKv::new(clock.clone()),
        counters: crate::platform::MemoryCounters::new(clock.clone()),
        clock: clock.clone(),
        ai_search: None,
        process_run: None,
        mirror_db: None,
        decompose: crate::platform::decompose_with_tables,
        panel_files: None,
        #[cfg(not(target_arch = "wasm32"))]
        offload: None,
    };
    (platform, clock, http)
}

/// A small PDF with one page per string (Helvetica, one line each, words separated by spaces), for tests of the
/// attachment tools. Lines longer than about 90 characters run off the page, which does not matter to a reader.
pub fn pdf_of_pages(pages: &[&str]) -> Vec<u8> {
    use lopdf::{dictionary, Document, Object, Stream};
    let mut doc = Document::with_version("1.7");
    let pages_id = doc.new_object_id();
    let font = doc.add_object(dictionary! { "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica" });
    let mut kids = Vec::new();
    for text in pages {
        let escaped = text.replace('\\', "\\\\").replace('(', "\\(").replace(')', "\\)");
        let content = format!("BT /F1 11 Tf 72 720 Td ({escaped}) Tj ET");
        let content_id = doc.add_object(Stream::new(dictionary! {}, content.into_bytes()));
        kids.push(Object::Reference(doc.add_object(dictionary! {
            "Type" => "Page", "Parent" => pages_id, "Contents" => content_id,
            "MediaBox" => vec![0.into(), 0.into(), 612.into(), 792.into()],
            "Resources" => dictionary! { "Font" => dictionary! { "F1" => font } },
        })));
    }
    let count = kids.len() as i64;
    doc.objects
        .insert(pages_id, Object::Dictionary(dictionary! { "Type" => "Pages", "Kids" => kids, "Count" => count }));
    let catalog = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
    doc.trailer.set("Root", catalog);
    let mut bytes = Vec::new();
    // A document built here always saves; an empty file would only make the test using it fail clearly.
    let _ = doc.save_to(&mut bytes);
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn memory_kv_expires_values_and_refuses_short_ttls() {
        let clock = ManualClock::at(1_000_000);
        let kv = MemoryKv::new(clock.clone());
        kv.put("a", "1", KvWrite::ExpiresIn(60)).await.unwrap();
        assert_eq!(kv.get("a").await.unwrap().as_deref(), Some("1"));
        clock.advance_secs(60);
        assert_eq!(kv.get("a").await.unwrap(), None);
        assert!(kv.put("b", "1", KvWrite::ExpiresIn(59)).await.is_err());
    }

    #[tokio::test]
    async fn several_keys_come_back_in_the_order_asked_with_the_missing_ones_empty() {
        let kv = MemoryKv::new(ManualClock::at(0));
        kv.put("token:a", "t", KvWrite::Forever).await.unwrap();
        kv.put("grant:a", "g", KvWrite::Forever).await.unwrap();
        let values = kv.get_many(&["grant:a", "grant:b", "token:a", "grant:a"]).await.unwrap();
        assert_eq!(values, [Some("g".to_owned()), None, Some("t".to_owned()), Some("g".to_owned())]);
        assert!(kv.get_many(&[]).await.unwrap().is_empty());
    }

    #[tokio::test]
    async fn memory_kv_lists_by_prefix_in_pages() {
        let kv = MemoryKv::new(ManualClock::at(0));
        for key in ["grant:a", "grant:b", "grant:c", "token:a"] {
            kv.put(key, "x", KvWrite::Forever).await.unwrap();
        }
        let first = kv.list("grant:", None, 2).await.unwrap();
        let names: Vec<_> = first.keys.iter().map(|k| k.name.as_str()).collect();
        assert_eq!(names, ["grant:a", "grant:b"]);
        let second = kv.list("grant:", first.cursor.as_deref(), 2).await.unwrap();
        assert_eq!(second.keys.len(), 1);
        assert_eq!(second.keys[0].name, "grant:c");
        assert_eq!(second.cursor, None);
    }

    #[tokio::test]
    async fn stub_http_records_requests_and_serves_queue_first() {
        let http = StubHttp::new(|_| Ok(http::Response::builder().status(204).body(Vec::new()).unwrap()));
        http.enqueue(Ok(http::Response::builder().status(429).body(Vec::new()).unwrap()));
        let req = || http::Request::get("https://api.example/x").body(Vec::new()).unwrap();
        assert_eq!(http.send(req()).await.unwrap().status(), 429);
        assert_eq!(http.send(req()).await.unwrap().status(), 204);
        assert_eq!(http.requests().len(), 2);
    }
}

// The in-memory AI Search namespace lives in testing/ai_search.rs (this file stays the module's root).
mod ai_search;
pub use self::ai_search::{AiSearchCall, MemoryAiSearch, StoredDocument};
