//! Duplicates: finding items that describe one work, and merging them as Zotero Desktop does, where the
//! TypeScript server did not: the relation URIs Zotero writes, Zotero's year rule, and a DOI-less copy compared
//! with its twin.
//!
//! [`group_duplicates`] needs no I/O; [`merge()`] writes through the [`ZoteroWriter`](crate::zotero::ZoteroWriter)
//! only a caller with the write capability holds.

mod fingerprint;
mod group;
mod merge;

#[cfg(test)]
mod tests;

pub use self::fingerprint::{normalise_title, same_work, Fingerprints, Reason, MIN_TITLE_CHARS};
pub use self::group::{group_duplicates, is_candidate, richness, sort_by_richness, DuplicateGroup};
pub use self::merge::{item_uri, merge, MergePlan, MergeRefused, MergeReport, MAX_CHILDREN};
