//! The demo's group libraries (`zotero-sim --demo-groups`, `make dev`, the e2e suites): a group the demo key may
//! change, "Protein Lab" ([`LAB_GROUP`]), with a paper whose PDF is on Zotero Storage, a note, a collection and a
//! saved search ([`LAB_SEARCH`]); and a group it may only read, "Reading Group" ([`READING_GROUP`]), with a book.
//! Keys are fixed so tests can name them.

use serde_json::json;

use crate::{LibraryRef, Simulator};

/// The group the demo key may write.
pub const LAB_GROUP: u64 = 100_001;
/// The group the demo key may only read.
pub const READING_GROUP: u64 = 100_002;
/// The lab's paper, its PDF attachment (on Zotero Storage) and its note.
pub const LAB_PAPER: &str = "LABPAPER";
pub const LAB_PDF: &str = "LABPDF22";
pub const LAB_NOTE: &str = "LABN2TE3";
/// The reading group's book.
pub const READING_BOOK: &str = "RDGBK234";
/// The lab's saved search: journal articles whose title mentions folding (finds [`LAB_PAPER`]).
pub const LAB_SEARCH: &str = "LABSRCH2";

/// The PDF of the lab's paper: the apa7 sample of the demo files (LPPL, demo/files/LICENSES.md).
const LAB_PDF_BYTES: &[u8] = include_bytes!("../demo/files/shortsample.pdf");

impl Simulator {
    /// Adds the demo's two groups and gives `api_key` (added with `add_user` first) access to them: read and
    /// write to the lab, read only to the reading group.
    ///
    /// # Panics
    /// If `api_key` is unknown (see [`Simulator::add_group`]).
    pub fn add_demo_groups(&self, api_key: &str) {
        let lab = LibraryRef::Group(LAB_GROUP);
        self.add_group(LAB_GROUP, api_key, true);
        self.set_library_name(lab, "Protein Lab");
        let meeting = self.insert_collection(lab, json!({ "key": "LABMEET2", "name": "Lab meeting" }));
        self.insert_item(
            lab,
            json!({
                "key": LAB_PAPER, "itemType": "journalArticle", "title": "Folding intermediates seen by the lab",
                "creators": [{ "creatorType": "author", "firstName": "Ada", "lastName": "Weiss" }],
                "date": "2024", "collections": [meeting], "tags": [{ "tag": "folding" }]
            }),
        );
        self.insert_item(
            lab,
            json!({
                "key": LAB_PDF, "itemType": "attachment", "linkMode": "imported_file", "parentItem": LAB_PAPER,
                "title": "Full Text PDF", "contentType": "application/pdf", "filename": "Weiss - 2024.pdf"
            }),
        );
        self.store_file(lab, LAB_PDF, "Weiss - 2024.pdf", LAB_PDF_BYTES);
        self.insert_item(
            lab,
            json!({ "key": LAB_NOTE, "itemType": "note", "parentItem": LAB_PAPER, "note": "<p>Discussed on Monday</p>" }),
        );

        self.insert_search(
            lab,
            json!({
                "key": LAB_SEARCH, "name": "Folding papers",
                "conditions": [
                    { "condition": "title", "operator": "contains", "value": "folding" },
                    { "condition": "itemType", "operator": "is", "value": "journalArticle" }
                ]
            }),
        );

        let reading = LibraryRef::Group(READING_GROUP);
        self.add_group(READING_GROUP, api_key, false);
        self.set_library_name(reading, "Reading Group");
        self.insert_item(
            reading,
            json!({ "key": READING_BOOK, "itemType": "book", "title": "A reading group's folding classic", "date": "1999" }),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_groups_hold_their_items_and_the_lab_s_pdf() {
        let sim = Simulator::demo();
        sim.add_demo_groups(crate::DEMO_API_KEY);
        assert_eq!(sim.items(LibraryRef::Group(LAB_GROUP)).len(), 3);
        assert_eq!(sim.stored_file(LibraryRef::Group(LAB_GROUP), LAB_PDF).as_deref(), Some(LAB_PDF_BYTES));
        assert!(sim.item(LibraryRef::Group(READING_GROUP), READING_BOOK).is_some());
        assert_eq!(sim.search(LibraryRef::Group(LAB_GROUP), LAB_SEARCH).unwrap()["data"]["name"], "Folding papers");
    }
}
