//! A full-text condition, decided exactly: every candidate attachment's text is read and searched. When there
//! are more candidates than may be read, the API's own full-text search (`q`, `qmode=everything`) narrows them
//! first; when even that leaves too many, the condition is refused as too broad rather than guessed. The reads
//! are made by `SearchPlan::evaluate` (one `async` function, which keeps the wasm small); here are the steps
//! between them.

use super::error::SavedSearchError;
use super::family::holds;
use super::reader::Reader;
use super::text::contains_from_word_start;
use crate::zotero::{FullText, QMode, Query, ZoteroObject};

/// The most full-text matches the API's quick search returns (the dataserver asks its index for 150): a
/// listing that reaches it may have left matches out, so it cannot narrow exactly.
pub(super) const API_FULLTEXT_HITS: usize = 150;

/// The API's full-text search for `phrase`: attachments, the trash included.
pub(super) fn query(phrase: &str) -> Query {
    Query::new().q(phrase, QMode::Everything).item_type("attachment").include_trashed(true)
}

/// The refusal of a phrase with `candidates` attachments that could contain it.
pub(super) fn too_broad(reader: &Reader<'_>, phrase: &str, candidates: String) -> SavedSearchError {
    SavedSearchError::FullTextTooBroad {
        search: reader.search.to_owned(),
        value: phrase.to_owned(),
        candidates,
        limit: reader.fulltext_limit(),
    }
}

/// Keeps in `pool` (sorted keys) the attachments the API's search `found`.
pub(super) fn narrow(pool: &mut Vec<String>, found: Vec<ZoteroObject>) {
    let mut keys = Vec::with_capacity(found.len());
    for item in found {
        keys.push(item.key);
    }
    crate::sort::sort(&mut keys);
    pool.retain(|key| holds(&keys, key));
}

/// The attachments whose text contains `phrase` (folded) where a word starts, in the order read.
pub(super) fn containing(texts: Vec<(String, Option<FullText>)>, phrase: &str) -> Vec<String> {
    let mut found = Vec::new();
    for (key, text) in texts {
        if text.is_some_and(|t| contains_from_word_start(&t.content, phrase)) {
            found.push(key);
        }
    }
    found
}
