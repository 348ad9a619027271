//! Duplicates: finding items that describe one work, and merging them as Zotero Desktop does (upstream-spec §9,
//! with its mistakes fixed: Q5's relation URIs, Q11's year rule, and a DOI-less copy that never met its twin).
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
