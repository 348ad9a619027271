//! The library mirror: each library's metadata (items, collections, saved searches) kept in a SQL database and
//! in step with Zotero, so that questions about the whole library (duplicates, tags, collections, reference
//! matching) are answered from it instead of paging through the Web API 100 objects a request.
//!
//! - `crate::platform::SqlDb`: the seam to the database (Cloudflare D1 on the Worker, SQLite natively: the
//!   same SQL);
//! - [`schema`]: the tables, made by numbered migrations;
//! - [`matching`]: the keys a reference is matched on, and the items sharing one;
//! - [`feed`]: the items of a bibliography feed, a page at a time;
//! - [`store`]: writing pages of objects and the queries over them, every row keyed by its library;
//! - [`through`]: this server's own writes, applied as Zotero answered them;
//! - [`search`]: Zotero's item listing and quick search, with the Web API's semantics, over what [`derive`]
//!   keeps of each item;
//! - [`saved`]: saved searches run over it;
//! - [`sync`]: the passes that fill the mirror and keep it in step, resumable within a request budget.
//!
//! The mirror is a copy: deleting it loses nothing, it is filled again.

pub mod derive;
pub mod feed;
pub mod matching;
pub mod saved;
pub mod schema;
pub mod search;
#[cfg(not(target_arch = "wasm32"))]
pub mod sqlite;
pub mod store;
pub mod sync;
pub mod through;

pub use crate::platform::{Row, SqlDb, SqlError, Statement};
pub use sync::{
    advance, advance_telling, library_of, status, MirrorError, MirrorStatus, CALL_BUDGET, SYNCED_AT_REFRESH_MS,
};
pub use through::write_through;
