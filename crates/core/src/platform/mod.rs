//! The seams between the library logic and the runtime it runs in.
//!
//! Futures returned by these traits are not `Send`: a Worker is single-threaded wasm, and the JavaScript
//! objects behind the real implementations cannot cross threads anyway.

mod ai_search;
mod clock;
mod counters;
mod http;
mod kv;

pub use self::ai_search::{AiSearch, AiSearchError};
pub use self::clock::{within, Clock};
pub use self::counters::{
    apply_steps, CountRow, CounterReport, CounterRows, CounterStep, Counters, CountersError, KvCounters, MemoryCounters,
};
pub use self::http::{HttpClient, HttpError, HttpRequest, HttpResponse};
pub use self::kv::{KvError, KvKey, KvListPage, KvStore, KvWrite, KV_BULK_READ_MAX};

use std::rc::Rc;

/// Every runtime service a request may use, bundled so one value can be handed down.
#[derive(Clone)]
pub struct Platform {
    /// Outbound HTTP (Zotero, WebDAV, reference sources).
    pub http: Rc<dyn HttpClient>,
    /// OAuth clients, grants and tokens (`OAUTH_KV`).
    pub oauth_kv: Rc<dyn KvStore>,
    /// Caches and the index sync cursor (`CACHE_KV`).
    pub cache_kv: Rc<dyn KvStore>,
    /// Attempt counts of the login throttle and the registration limit: exact where the runtime allows it
    /// (a Durable Object, one process), else in `CACHE_KV`.
    pub counters: Rc<dyn Counters>,
    /// Wall-clock time.
    pub clock: Rc<dyn Clock>,
    /// Cloudflare AI Search (`AI_SEARCH`), when the deployment binds it; semantic search is off without it.
    pub ai_search: Option<Rc<dyn AiSearch>>,
}
