//! The outline (bookmarks): lopdf 0.47's table of contents, which matched pdf.js's outline counts on every file
//! of the measurement corpus (docs/pdf.md), bounded here.

use lopdf::Document;

/// Entries kept at most: a real outline has hundreds (the 1,321-page pgfmanual: 1,182).
const MAX_ENTRIES: usize = 10_000;
/// Longest title kept, in characters.
const MAX_TITLE_CHARS: usize = 500;

/// One outline entry.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct OutlineEntry {
    pub title: String,
    /// 1 for top-level entries, 2 for their children, and so on.
    pub depth: usize,
    /// The 1-based page the entry opens.
    pub page: usize,
}

pub(super) fn read(doc: &Document) -> Vec<OutlineEntry> {
    // No outline, or one lopdf cannot follow, is an empty outline: the rest of the document is still readable.
    let Ok(toc) = doc.get_toc() else { return Vec::new() };
    toc.toc
        .into_iter()
        .take(MAX_ENTRIES)
        .map(|entry| OutlineEntry {
            title: clean_title(&entry.title),
            depth: entry.level.max(1),
            page: entry.page.max(1),
        })
        .collect()
}

/// Titles as a reader shows them: control characters (a stray CR, NUL padding) become spaces, runs of
/// whitespace one space, and very long ones are cut.
fn clean_title(raw: &str) -> String {
    let spaced: String = raw.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
    spaced.split_whitespace().collect::<Vec<_>>().join(" ").chars().take(MAX_TITLE_CHARS).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_lose_control_characters_and_extra_spaces() {
        assert_eq!(clean_title("  Intro\r\nduction\u{0}\u{0} "), "Intro duction");
        assert_eq!(clean_title(&"x".repeat(2000)).chars().count(), MAX_TITLE_CHARS);
    }
}
