//! Saved searches: listed by the Web API, evaluated here, since the API stores them but never runs them.
//!
//! [`SearchPlan::new`] checks every condition of a [`SavedSearch`] first and refuses the whole search, naming
//! each condition it cannot evaluate ([`UnsupportedSearch`]), rather than return results for part of it.
//! [`SearchPlan::evaluate`] then reads a superset of the results from the API and decides every item locally,
//! following Zotero 9's `search.js`:
//!
//! - **Each condition is a set of items** having the value; `isNot`/`doesNotContain` take every item outside it
//!   except annotations. Conditions match items at any level: a child note, attachment or annotation matches
//!   by itself (its parent does not, unless `includeParentsAndChildren`/`includeParents` says a child's match
//!   counts for its parent; `includeChildren` the other way; both follow notes and attachments, not
//!   annotations). `joinMode any` needs one condition, anything else all of them.
//! - **Flags**: the trash is left out unless `deleted` (only the trash, children of trashed items included) or
//!   `includeDeleted`; `noChildren` keeps top-level items; `recursive` makes a collection condition cover its
//!   subcollections; `unfiled` keeps top-level items in no collection (outside the trash) and not in My
//!   Publications; `publications` keeps My Publications.
//! - **Text** is compared ignoring case only (Zotero 9's `LIKE`): `is` is the whole value, `contains` anywhere,
//!   `beginsWith` the start. A field condition reads the fields standing for it too (`publicationTitle` reads a
//!   book section's `bookTitle`), a creator condition `first last`, `anyField contains` every field, tag, note
//!   text and creator. Notes are read as text, without their markup.
//! - **Dates** are compared as Zotero stores them, `YYYY-MM-DD` text: see `dates.rs` for the granularity (an
//!   item's `date` is Zotero's parsed date; timestamps are cut to their UTC day).
//! - **Full text** (`fulltextContent contains`) is decided by reading each candidate attachment's text: the
//!   phrase must be in it, starting where a word starts, ignoring case. Candidates are the attachments read
//!   that have indexed text (in all mode, only those every other condition leaves in); when they are more than
//!   may be read, the API's own full-text search narrows them, and when that is not enough the condition is
//!   refused as too broad. Unlike Zotero, which adds full-text matches after its query, a full-text condition
//!   here obeys the flags (the trash, `noChildren`) like every other.
//!
//! What the API is asked for: in all mode, a positive `collection is` condition becomes that collection's
//! listing (and its subcollections' with `recursive`), `tag is` and `itemType is` query parameters, and
//! `noChildren` the top-level listing; otherwise the whole library. Everything read is bounded
//! ([`EvaluationLimits`]) and over the bounds the evaluation fails with what it would have needed.
//!
//! The result ([`Evaluated`]) is grouped as Zotero's items list shows a saved search: one [`ResultRow`] per
//! top-level item that matched or holds matching children, the children under it.

mod dates;
mod error;
mod evaluate;
mod family;
// Generated from Zotero's schema (crates/sim/tests/saved_searches.rs checks it): rustfmt would reflow it.
#[rustfmt::skip]
mod fields;
mod fulltext;
mod listing;
mod model;
mod plan;
mod reader;
mod rule;
mod text;

#[cfg(test)]
mod tests;

pub use error::{SavedSearchError, Unsupported, UnsupportedSearch};
pub use evaluate::{Evaluated, ResultRow};
pub use model::{SavedSearch, SearchCondition};
pub use plan::SearchPlan;
pub use reader::{EvaluationLimits, LocalItems, Source as ListingSource};

/// The fields that stand for the base field `base` in some item type (`publicationTitle`: a book section's
/// `bookTitle`, …), from Zotero's schema; empty for a field no other stands for.
pub(crate) fn fields_standing_for(base: &str) -> &'static [&'static str] {
    fields::BASE_FIELDS.iter().find(|(name, _)| *name == base).map_or(&[], |(_, fields)| fields)
}
