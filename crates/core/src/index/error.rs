//! What can go wrong with the semantic index, each case saying what to do next.

use crate::platform::{AiSearchError, KvError};
use crate::zotero::ZoteroError;

use super::MAX_INSTANCE_CHARS;

#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    /// `AI_SEARCH_INSTANCE` is not an id AI Search accepts.
    #[error("AI_SEARCH_INSTANCE is `{instance}`, which AI Search does not accept as an instance id: use 1–{MAX_INSTANCE_CHARS} lowercase letters, digits and underscores, in words joined by single hyphens (e.g. zotero-items)")]
    InvalidInstance { instance: String },

    /// A call to AI Search failed. Nothing this call was to change can be assumed changed; the sync keeps its
    /// cursor, so running it again retries.
    #[error("{0}. Try again in a few minutes; if it keeps failing, check the AI_SEARCH binding and the instance in the Cloudflare dashboard (AI Search)")]
    Service(#[from] AiSearchError),

    /// A Zotero request failed (its message says what to do).
    #[error(transparent)]
    Zotero(#[from] ZoteroError),

    /// The sync cursor could not be read or written.
    #[error("the semantic index's sync state could not be stored: {0}")]
    Kv(#[from] KvError),

    /// Listing an instance's documents kept returning full pages.
    #[error("AI Search: listing {instance} did not terminate within {pages} pages, so {count} deleted item(s) could not be removed. Their documents stay searchable until a later sync removes them; if this repeats, delete the instance and let the next sync rebuild it")]
    ListingDidNotTerminate { instance: String, pages: usize, count: usize },
}
