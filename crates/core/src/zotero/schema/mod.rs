//! Which fields and creator types each Zotero item type has: the importers set only what Zotero accepts (a
//! write with a field the type lacks is refused). The table is Zotero's own schema, generated from the one the
//! simulator validates with, and a test fails when they differ (crates/sim/tests/core_schema_table.rs).

// Generated (one item type per line): rustfmt would reflow it, and the test that compares it with the schema
// would then fail.
#[rustfmt::skip]
mod table;

use self::table::ITEM_TYPES;

fn entry(item_type: &str) -> Option<&'static (&'static str, &'static [&'static str], &'static [&'static str])> {
    ITEM_TYPES.iter().find(|(name, _, _)| *name == item_type)
}

/// Whether Zotero knows this item type (`journalArticle`, `book`, … and `note`, `attachment`, `annotation`).
pub fn is_item_type(item_type: &str) -> bool {
    entry(item_type).is_some()
}

/// Whether `item_type` has `field` (its own name for it: `publisher` is `company` on software).
pub fn has_field(item_type: &str, field: &str) -> bool {
    entry(item_type).is_some_and(|(_, fields, _)| fields.contains(&field))
}

/// The creator types of `item_type`, the primary one first (empty for an unknown type).
pub fn creator_types(item_type: &str) -> &'static [&'static str] {
    entry(item_type).map_or(&[], |(_, _, creators)| creators)
}

/// Whether `item_type` takes creators of `creator_type`.
pub fn has_creator_type(item_type: &str, creator_type: &str) -> bool {
    creator_types(item_type).contains(&creator_type)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_from_zoteros_schema() {
        assert!(has_field("journalArticle", "publicationTitle"));
        assert!(!has_field("book", "publicationTitle"));
        assert!(has_field("computerProgram", "company"));
        assert!(!has_field("computerProgram", "publisher"));
        assert_eq!(creator_types("computerProgram").first(), Some(&"programmer"));
        assert!(has_creator_type("bookSection", "bookAuthor"));
        assert!(!has_creator_type("computerProgram", "editor"));
        assert!(!is_item_type("article"));
    }
}
