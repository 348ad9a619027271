//! Semantic search over Cloudflare AI Search: the runtime-free half.
//!
//! The Worker binds an AI Search namespace (`AI_SEARCH`); [`crate::platform::AiSearch`] is the seam over it.
//! This module decides everything else, compatibly with the TypeScript project so a deployment can switch
//! either way: the instance's settings ([`IndexSettings`]), what one item's document says ([`document_for`]),
//! the search request and how its chunks fold back into items ([`SemanticIndex::query`]), and the incremental
//! sync from Zotero ([`sync()`]), whose cursor lives in `CACHE_KV` under the TypeScript project's key and JSON.
//!
//! # One document per item, and how many chunks that makes
//!
//! An item's document is its metadata (title, creators, year, venue, tags, abstract: at most 6000 characters, as
//! upstream) followed, beyond the upstream, by up to [`FULL_TEXT_BUDGET_CHARS`] of the paper's text. AI Search
//! cuts documents into chunks of [`CHUNK_SIZE`] = 512 tokens (bge-m3's input ceiling) with 10% overlap; English
//! averages about 4 characters a token, so 6000 characters of text are about 3 chunks and a typical item (a
//! title and abstract of 1–2 kB, then the text) about 4. The budget is measured in Latin-equivalent characters:
//! a CJK character is about a token on its own, so it counts as 4, and a Chinese paper gets as many chunks as an
//! English one rather than four times as many.
//!
//! That number bounds the search. One search returns at most [`MAX_CHUNKS`] = 50 chunks, and several of them
//! may belong to the same item; to bring back `limit` distinct items the query asks for
//! `min(50, limit × CHUNKS_PER_ITEM)` chunks with [`CHUNKS_PER_ITEM`] = 4, so up to [`MAX_SEMANTIC_ITEMS`] =
//! ⌊50 / 4⌋ = 12 items are assured (upstream indexed metadata only: 1 chunk per item, 50 items). The tool still
//! accepts the upstream's `limit` of up to 50, for existing prompts, and says so when fewer come back. More
//! text per item would mean fewer items per search; less would find fewer passages. An item whose metadata is at
//! its cap can still make more than 4 chunks, and then a search may return fewer items than asked for.
//!
//! # Pages
//!
//! When the text comes with page breaks (a paper's PDF read from WebDAV by our PDF engine, which the sync does
//! when Zotero's full-text index has no text for it: [`sync_with_files`]), the document marks them: `[page N]` where page N
//! starts and `[p. N]` again about every [`PAGE_MARKER_EVERY_CHARS`] inside it, so every 512-token chunk holds a
//! marker and a matched passage can be placed on its page. Zotero's own full-text index has no page breaks, so
//! text from it carries no markers and its passages no page. Markers never reach a caller: passages are
//! returned without them.

mod documents;
mod error;
mod measure;
mod passage;
mod query;
mod scope;
mod service;
mod settings;
pub mod sync;

#[cfg(test)]
mod tests;

pub use self::documents::{
    document_for, document_metadata, document_name, document_text, is_indexable, item_key_of, Document, ItemText,
};
pub use self::error::IndexError;
pub use self::query::{IndexMatch, QueryOptions};
pub use self::scope::IndexScope;
pub use self::service::{Ensured, IndexStats, SemanticIndex};
pub use self::settings::{IndexSettings, DEFAULT_EMBEDDING_MODEL, DEFAULT_INSTANCE, DEFAULT_RERANKING_MODEL};
pub use self::sync::{sync, sync_with_files, SyncOptions, SyncReport};

/// The longest instance id AI Search accepts.
pub const MAX_INSTANCE_CHARS: usize = 32;
/// Tokens per chunk: bge-m3's input ceiling. Instances created here chunk at this size.
pub const CHUNK_SIZE: u64 = 512;
/// Overlap between neighbouring chunks, in percent.
pub const CHUNK_OVERLAP: u64 = 10;
/// Chunks one item's document makes, about (see the module docs).
pub const CHUNKS_PER_ITEM: usize = 4;
/// The most chunks one search returns (`max_num_results`' limit).
pub const MAX_CHUNKS: usize = 50;
/// The most items a semantic search can promise: every one of them may fill [`CHUNKS_PER_ITEM`] result slots.
pub const MAX_SEMANTIC_ITEMS: usize = MAX_CHUNKS / CHUNKS_PER_ITEM;
/// Entries per page when listing an instance's documents (the binding's limit).
pub const LIST_PAGE: usize = 50;
/// Pages a listing may take before it is declared endless.
pub const MAX_LIST_PAGES: usize = 5000;
/// Uploads in flight at once; a group is finished before the next starts.
pub const UPLOAD_CONCURRENCY: usize = 6;
/// The similarity below which the semantic search tool warns that a result may be unrelated.
pub const DEFAULT_MIN_SCORE: f64 = 0.5;
/// How many more items a narrowed semantic search asks the index for (the filters drop some afterwards).
pub const FILTER_OVERSHOOT: usize = 3;
/// Items scanned when a search looks an item up by citation key.
pub const CITATION_KEY_SCAN_LIMIT: usize = 2000;
/// Keys the sync takes from its queue per run unless told otherwise.
pub const DEFAULT_BATCH: usize = 100;
/// Keys per Zotero request when the sync reads items (Zotero's `itemKey` limit).
pub const KEY_CHUNK: usize = 50;
/// The sync cursor's key prefix in `CACHE_KV`; the instance id follows after a colon.
pub const STATE_PREFIX: &str = "aisearch:sync-state";
/// The cap on a document's metadata part, in UTF-16 code units as upstream.
pub const METADATA_CHARS: usize = 6000;
/// The cap on the abstract inside the metadata part, in UTF-16 code units as upstream.
pub const ABSTRACT_CHARS: usize = 4000;
/// Creators named in a document.
pub const MAX_CREATORS: usize = 8;
/// The paper's text appended to an item's document, in Latin-equivalent characters (a CJK character counts 4):
/// about three 512-token chunks. See the module docs for why not more.
pub const FULL_TEXT_BUDGET_CHARS: usize = 6000;
/// How far apart page markers are inside a page, in Latin-equivalent characters: well under a chunk, so every
/// chunk holds one.
pub const PAGE_MARKER_EVERY_CHARS: usize = 800;
/// About how long a returned passage is, in characters.
pub const PASSAGE_CHARS: usize = 300;
