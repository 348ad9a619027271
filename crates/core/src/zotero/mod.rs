//! A client for the Zotero Web API v3 that follows Zotero's rules for well-behaved clients: object versions
//! on every write (412 is a typed conflict, never retried), 50-object batches with per-object results, at most
//! four requests in flight, `Backoff` and `Retry-After` honoured, keys validated before they reach a URL.

mod batch;
mod card;
mod client;
mod error;
pub mod journal;
mod key;
mod library;
pub mod local;
mod query;
pub mod saved_search;
pub mod schema;
mod settle;
mod transport;
mod types;
mod writer;
mod year;

#[cfg(test)]
mod tests;

pub use batch::{WriteFailure, WriteOutcome, WriteUnknown, BATCH_SIZE};
pub use card::{CardData, CardMeta, ItemCard};
pub use client::{GroupInfo, ItemScope, ZoteroClient, ZoteroSettings, DEFAULT_BASE_URL, EXPORT_FORMATS, PAGE_LIMIT};
pub use error::ZoteroError;
pub use key::{KeyError, ObjectKey};
pub use library::{KeyAccess, LibraryId, LibraryKind, LibraryRights};
pub use query::{QMode, Query};
pub use saved_search::{
    Evaluated, EvaluationLimits, ListingSource, LocalItems, ResultRow, SavedSearch, SavedSearchError, SearchCondition,
    SearchPlan, Unsupported, UnsupportedSearch,
};
pub use settle::PendingOutcome;
pub(crate) use transport::{retry_after_ms, retry_wait};
pub use transport::{Capabilities, RetryPolicy, MAX_IN_FLIGHT};
pub use types::{Deleted, FullText, ObjectKind, Page, Tag, Versions, ZoteroObject, MANAGED_FIELDS};
pub use writer::ZoteroWriter;
pub use year::year_of;
