//! `zotero_search` with `citationKey`: Better BibTeX keeps a citation key as a line of `extra`, which Zotero's
//! quick search does not reach, so the library is scanned for it.

use zotero_mcp_core::zotero::ZoteroClient;

use super::{list, server_filters, within_scope, within_years, SearchHit, SearchInput, SearchOutput};
use crate::format::items::summarize;
use crate::mcp::ToolError;

/// How far a citation-key scan reads before it gives up (20 pages of 100).
const CITATION_KEY_SCAN_LIMIT: usize = 2000;

/// Whether `extra` has a line `Citation Key: <key>` for exactly this key (case-insensitive, as BBT writes it).
pub fn has_citation_key(extra: &str, key: &str) -> bool {
    extra.lines().any(|line| {
        let line = line.trim();
        line.get(..13)
            .filter(|prefix| prefix.eq_ignore_ascii_case("citation key:"))
            .is_some_and(|_| line[13..].trim().eq_ignore_ascii_case(key))
    })
}

pub(super) async fn search_citation_key(
    zotero: &ZoteroClient,
    input: &SearchInput,
    key: &str,
    scope: Option<&[String]>,
) -> Result<SearchOutput, ToolError> {
    let query = within_scope(server_filters(input), scope);
    let page = list(zotero, input, &query, true, CITATION_KEY_SCAN_LIMIT).await?;
    let hits: Vec<SearchHit> = page
        .items
        .iter()
        .filter(|item| item.data.extra.as_deref().is_some_and(|extra| has_citation_key(extra, key)))
        .filter(|item| within_years(item, input))
        .take(input.limit as usize)
        .map(|item| SearchHit { item: summarize(item), matched_attachment: None, consumed: None })
        .collect();
    let truncated_scan = page.items.len() >= CITATION_KEY_SCAN_LIMIT
        && page.total_results.is_none_or(|total| total as usize > page.items.len());
    let note = (hits.is_empty() && truncated_scan).then(|| {
        format!(
            "The scan stopped after {CITATION_KEY_SCAN_LIMIT} items without reaching the end of the library, so \
             citation key \"{key}\" may still exist beyond it. Narrow the search with collectionKey, tags or \
             itemType to cover the rest."
        )
    });
    Ok(SearchOutput {
        total: hits.len(),
        items: hits,
        total_results: None,
        next_offset: None,
        library_version: page.library_version,
        note,
        mirror: None,
        offset: 0,
    })
}

#[cfg(test)]
mod tests {
    use super::has_citation_key;

    #[test]
    fn citation_keys_match_whole_lines_only() {
        let extra = "tex.ids: x\nCitation Key:  gu2023mamba \nPMID: 1";
        assert!(has_citation_key(extra, "gu2023mamba"));
        assert!(has_citation_key(extra, "GU2023MAMBA"));
        assert!(!has_citation_key(extra, "gu2023"));
        assert!(!has_citation_key("Original Citation Key: gu2023mamba", "gu2023mamba"));
    }
}
