//! Why a saved search gives no results: a condition this module does not evaluate (refused before any request),
//! a library or a full-text condition too large to decide within the bounds, or Zotero itself.

use std::fmt;

use crate::zotero::ZoteroError;

/// A condition that cannot be evaluated, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unsupported {
    /// The condition as saved, with its mode (`fulltextContent/regexp`).
    pub condition: String,
    pub operator: String,
    pub reason: String,
}

/// A saved search with conditions that cannot be evaluated: every one of them is named, so the search can be
/// fixed in one go. No results are ever given for such a search, since leaving a condition out would answer a
/// different question.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct UnsupportedSearch {
    /// The search's name.
    pub search: String,
    pub conditions: Vec<Unsupported>,
}

impl fmt::Display for UnsupportedSearch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "The saved search {:?} cannot be evaluated here, so no results are given: ", self.search)?;
        for (i, c) in self.conditions.iter().enumerate() {
            write!(f, "{}`{} {}` ({})", if i == 0 { "" } else { "; " }, c.condition, c.operator, c.reason)?;
        }
        f.write_str(
            ". Open it in Zotero, or rebuild it from conditions evaluated here: title, creator (author, editor, \
             book author), tag, collection (with subcollections), item type, date, date added, date modified, \
             other item fields by name, any field (contains), note, annotation text or comment (contains), \
             full-text content (contains), Match all/any, show only top-level items, include parent and child \
             items, in the trash, unfiled, My Publications",
        )
    }
}

/// Why evaluating a supported search failed.
#[derive(Debug, thiserror::Error)]
pub enum SavedSearchError {
    /// The candidates (and the parents read for context) are more than one evaluation may read.
    #[error("Evaluating the saved search {search:?} means reading {needed} items of the library, more than the {limit} one search may read. Add a condition Zotero can narrow the library by (a collection, a tag or an item type, with Match all) or open the search in Zotero")]
    TooManyItems { search: String, needed: u64, limit: usize },

    /// The reads would take more requests than one evaluation may make.
    #[error("Evaluating the saved search {search:?} needs at least {needed} requests to Zotero, more than the {limit} one search may make. Add a condition Zotero can narrow the library by (a collection, a tag or an item type, with Match all) or open the search in Zotero")]
    TooManyRequests { search: String, needed: usize, limit: usize },

    /// A full-text condition has more candidate attachments than may be read to check them; guessing which
    /// match would give wrong results.
    #[error("The full-text condition {value:?} of the saved search {search:?} is too broad to check: {candidates} attachments could contain it, and each must be read to be sure, but at most {limit} are read for one search. Use a longer phrase, add a narrower condition (a collection, a tag, an item type, with Match all), or open the search in Zotero")]
    FullTextTooBroad { search: String, value: String, candidates: String, limit: usize },

    /// More conditions that test items than one evaluation decides (each is decided for every item read).
    #[error("The saved search {search:?} has {count} conditions that test items, more than the {limit} one search may evaluate here. Split it into smaller searches, or open it in Zotero")]
    TooManyConditions { search: String, count: usize, limit: usize },

    #[error(transparent)]
    Zotero(#[from] ZoteroError),
    /// The copy of the library the search read instead of Zotero (the library mirror) failed.
    #[error("The library mirror could not be read ({0}); try again, or run the search in Zotero")]
    Local(#[from] crate::platform::SqlError),
}
