//! The seams between the library logic and the runtime it runs in.
//!
//! Futures returned by these traits are not `Send`: a Worker is single-threaded wasm, and the JavaScript
//! objects behind the real implementations cannot cross threads anyway.

mod ai_search;
mod clock;
mod counters;
mod http;
mod kv;
#[cfg(not(target_arch = "wasm32"))]
mod offload;
mod panel_files;
mod sql;

pub use self::ai_search::{AiSearch, AiSearchError};
pub use self::clock::{within, Clock};
pub use self::counters::{
    apply_steps, CountRow, CounterReport, CounterRows, CounterStep, Counters, CountersError, KvCounters, MemoryCounters,
};
pub use self::http::{HttpClient, HttpError, HttpRequest, HttpResponse};
pub use self::kv::{KvError, KvKey, KvListPage, KvStore, KvWrite, KV_BULK_READ_MAX};
#[cfg(not(target_arch = "wasm32"))]
pub use self::offload::{run_cpu, Job, Offload};
pub use self::panel_files::{PanelFiles, PanelFilesError};
pub use self::sql::{Row, SqlDb, SqlError, Statement};

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
    /// Attempt counts of the login throttle and the registration limit, and the single use of a confirmation's
    /// answer (taken once, indivisibly): exact where the runtime allows it
    /// (a Durable Object, one process), else in `CACHE_KV`.
    pub counters: Rc<dyn Counters>,
    /// Wall-clock time.
    pub clock: Rc<dyn Clock>,
    /// This server process's run (a random id made at start), where the stores are the process's own: the
    /// native server holds its data file alone, so an undo journal entry another run left incomplete was cut
    /// off, however recent. `None` on the Worker (many isolates share its stores) and in tests that say nothing.
    pub process_run: Option<String>,
    /// The library mirror's database (`crate::mirror`): SQLite in the native server's data directory; `None`
    /// where there is none (tools then read Zotero live, as before).
    pub mirror_db: Option<Rc<dyn SqlDb>>,
    /// Cloudflare AI Search (`AI_SEARCH`), when the deployment binds it; semantic search is off without it.
    pub ai_search: Option<Rc<dyn AiSearch>>,
    /// Unicode compatibility decomposition (NFKD) with the combining marks dropped, for folding words as Zotero
    /// does (`zotero_retrieve`). The Worker asks its JavaScript engine, which holds the Unicode tables already (a
    /// Rust copy would add about 60 KiB of gzip to its bundle); natively [`decompose_with_tables`].
    pub decompose: Decompose,
    /// The MCP Apps panels' source files: the Worker's static assets (`ASSETS`). `None` natively, where the
    /// server has its own copy, and on a Worker deployed without the binding (its panels then cannot be read).
    pub panel_files: Option<Rc<dyn PanelFiles>>,
    /// Where CPU-bound work runs off the request thread (`RequestContext::off_thread`): natively a thread of the
    /// runtime's blocking pool, so `/health` and other clients are answered meanwhile; `None` runs it inline. A
    /// Worker has no other thread, and this field is not compiled for it.
    #[cfg(not(target_arch = "wasm32"))]
    pub offload: Option<Rc<dyn Offload>>,
}

/// See [`Platform::decompose`].
pub type Decompose = fn(&str) -> String;

/// [`Platform::decompose`] with Rust's Unicode tables (the `unicode-normalization` crate), character by
/// character: the marks canonical reordering would move are all dropped, so decomposing each character alone
/// gives the same letters as NFKD of the whole text, and ASCII skips the tables.
#[cfg(not(target_arch = "wasm32"))]
pub fn decompose_with_tables(text: &str) -> String {
    use unicode_normalization::char::{decompose_compatible, is_combining_mark};
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            decompose_compatible(c, |d| {
                if !is_combining_mark(d) {
                    out.push(d);
                }
            });
        }
    }
    out
}
