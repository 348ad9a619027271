//! `zotero_search` with `savedSearch`: the saved search's own result a page at a time, or its items as the
//! scope another search is limited to. The search runs over the library mirror when it is complete
//! (`saved_searches::find_and_run`).

use zotero_mcp_core::zotero::{Evaluated, ItemScope, Query, SavedSearch, ZoteroClient};

use super::{SearchHit, SearchInput, SearchOutput};
use crate::format::items::summarize;
use crate::mcp::ToolError;
use crate::tools::mirrored::MirrorOut;
use crate::tools::paging::Paging;
use crate::tools::saved_searches;

/// A saved search's own result, one page of it: its rows as Zotero's items list shows them (newest change
/// first), a row shown only for its matching children saying so.
pub(super) async fn saved_search_page(
    zotero: &ZoteroClient,
    input: &SearchInput,
    name: &str,
    evaluated: &Evaluated,
    mirror: Option<MirrorOut>,
) -> Result<SearchOutput, ToolError> {
    let paging = Paging::new(input.offset, input.limit);
    let (rows, next_offset) = paging.slice(&evaluated.rows);
    let items: Vec<SearchHit> = rows
        .iter()
        .enumerate()
        .map(|(at, row)| SearchHit {
            item: summarize(&saved_searches::card(&row.item)),
            matched_attachment: None,
            consumed: Some(at + 1),
        })
        .collect();
    let shown_for_children = rows.iter().filter(|row| !row.matched).count();
    let note = (shown_for_children > 0).then(|| {
        format!(
            "{shown_for_children} of these items did not match the saved search {name:?} themselves: they are shown \
             for their notes or attachments that did, as Zotero shows them."
        )
    });
    // Over the mirror, its version; through Zotero, the version is asked for once more (one item's worth).
    let version = match &mirror {
        Some(mirror) => mirror.library_version,
        None => zotero.item_cards(ItemScope::Top, &Query::new(), 1).await?.library_version,
    };
    Ok(SearchOutput {
        total: items.len(),
        items,
        total_results: Some(evaluated.rows.len() as u64),
        next_offset,
        library_version: version,
        note,
        mirror,
        offset: paging.offset,
    })
}

/// The most items a saved search may show to serve as a scope: one request's `itemKey` list.
const MAX_SCOPE_KEYS: usize = 50;

/// The items a saved search shows, as a search's scope.
pub(super) struct SavedScope {
    pub name: String,
    /// The top-level items it shows and their children that matched.
    pub keys: Vec<String>,
}

pub(super) fn scope_of(search: &SavedSearch, evaluated: &Evaluated) -> Result<SavedScope, ToolError> {
    let mut keys: Vec<String> = Vec::new();
    for row in &evaluated.rows {
        keys.push(row.item.key.clone());
        keys.extend(row.children.iter().map(|child| child.key.clone()));
    }
    if keys.len() > MAX_SCOPE_KEYS {
        return Err(ToolError::Failed(format!(
            "The saved search {:?} shows {} items, more than the {MAX_SCOPE_KEYS} a search can be limited to. Call \
             zotero_search with only savedSearch (and offset) to page through its items, or search without it",
            search.name,
            keys.len()
        )));
    }
    Ok(SavedScope { name: search.name.clone(), keys })
}

/// The answer when the scope's saved search shows nothing: no search is sent, but the library version is read
/// (one item's worth) so the answer can still serve as a `since` mark.
pub(super) async fn nothing_in(zotero: &ZoteroClient, name: &str) -> Result<SearchOutput, ToolError> {
    let page = zotero.item_cards(ItemScope::Top, &Query::new(), 1).await?;
    Ok(SearchOutput {
        total: 0,
        items: Vec::new(),
        total_results: Some(0),
        next_offset: None,
        library_version: page.library_version,
        note: Some(format!("The saved search {name:?} shows no items, so nothing was searched.")),
        mirror: None,
        offset: 0,
    })
}
