//! A full-text condition, decided exactly: every candidate attachment's text is read and searched. When there
//! are more candidates than may be read, the API's own full-text search (`q`, `qmode=everything`) narrows them
//! first; when even that leaves too many, the condition is refused as too broad rather than guessed.

use std::collections::BTreeSet;

use super::error::SavedSearchError;
use super::reader::{Reader, Source};
use super::text::contains_from_word_start;
use crate::zotero::{ObjectKey, QMode, Query, PAGE_LIMIT};

/// The most full-text matches the API's quick search returns (the dataserver asks its index for 150): a
/// listing that reaches it may have left matches out, so it cannot narrow exactly.
pub(super) const API_FULLTEXT_HITS: usize = 150;

/// The attachments of `pool` whose text contains `phrase` (folded) where a word starts.
pub(super) async fn matching(
    reader: &mut Reader<'_>,
    search: &str,
    phrase: &str,
    pool: BTreeSet<String>,
) -> Result<BTreeSet<String>, SavedSearchError> {
    let mut pool = pool;
    let too_broad = |candidates: String, reader: &Reader<'_>| SavedSearchError::FullTextTooBroad {
        search: search.to_owned(),
        value: phrase.to_owned(),
        candidates,
        limit: reader.fulltext_limit(),
    };
    if pool.len() > reader.fulltext_reads_left() {
        let query = Query::new().q(phrase, QMode::Everything).item_type("attachment").include_trashed(true);
        let library = Source::Library { top: false };
        let (mut found, total) = reader.listing(library, &query, PAGE_LIMIT).await?;
        if total >= API_FULLTEXT_HITS as u64 {
            return Err(too_broad(format!("{total} or more"), reader));
        }
        if (found.len() as u64) < total {
            let (more, _) = reader.listing(library, &query.clone().offset(found.len()), API_FULLTEXT_HITS).await?;
            found.extend(more);
        }
        let found: BTreeSet<String> = found.into_iter().map(|item| item.key).collect();
        pool.retain(|key| found.contains(key));
        if pool.len() > reader.fulltext_reads_left() {
            return Err(too_broad(pool.len().to_string(), reader));
        }
    }
    let keys: Vec<ObjectKey> = pool.iter().filter_map(|key| ObjectKey::parse(key).ok()).collect();
    let texts = reader.texts(&keys).await?;
    Ok(texts
        .into_iter()
        .filter(|(_, text)| text.as_ref().is_some_and(|t| contains_from_word_start(&t.content, phrase)))
        .map(|(key, _)| key)
        .collect())
}
