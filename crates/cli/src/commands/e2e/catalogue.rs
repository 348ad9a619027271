//! The `tools/list` check: the server lists exactly the tools of this build, in the same order (the order is
//! part of the catalogue clients cache, and the first tool is the one the conformance suite calls).

use zotero_mcp_server::config::Config;
use zotero_mcp_server::tools;

/// Tools a server lists only with `ENABLE_TEST_FIXTURES=1` (local test servers): accepted after the catalogue.
const FIXTURE_PREFIX: &str = "fixture_";

/// The tool names this build registers, in catalogue order (what a deployment of it lists).
pub fn expected() -> Vec<String> {
    // Registration reads no setting but the fixtures flag, which an empty configuration leaves off.
    let config = Config::from_lookup(|_| None);
    tools::registry(&config).tool_names().into_iter().map(str::to_owned).collect()
}

/// How a listed catalogue differs from the expected one; empty when it matches.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Difference {
    pub missing: Vec<String>,
    pub unexpected: Vec<String>,
    /// Both lists hold the same tools, in another order.
    pub reordered: bool,
}

impl Difference {
    pub fn is_empty(&self) -> bool {
        self.missing.is_empty() && self.unexpected.is_empty() && !self.reordered
    }

    /// One sentence naming what differs.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if !self.missing.is_empty() {
            parts.push(format!("missing {}", self.missing.join(", ")));
        }
        if !self.unexpected.is_empty() {
            parts.push(format!("not in this build {}", self.unexpected.join(", ")));
        }
        if self.reordered {
            parts.push("the same tools in another order".to_owned());
        }
        parts.join("; ")
    }
}

/// Compares the names a server listed with the expected ones. Test-fixture tools after the catalogue are
/// accepted (e2e servers run with them); anything else extra, missing or out of order is a difference.
pub fn compare(expected: &[String], listed: &[String]) -> Difference {
    let listed: Vec<&String> = listed.iter().filter(|n| !n.starts_with(FIXTURE_PREFIX)).collect();
    let missing: Vec<String> = expected.iter().filter(|n| !listed.contains(n)).cloned().collect();
    let unexpected: Vec<String> = listed.iter().filter(|n| !expected.contains(n)).map(|n| (*n).clone()).collect();
    let common_listed: Vec<&String> = listed.iter().copied().filter(|n| expected.contains(n)).collect();
    let common_expected: Vec<&String> = expected.iter().filter(|n| listed.contains(n)).collect();
    Difference { missing, unexpected, reordered: common_listed != common_expected }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn this_build_lists_the_twenty_two_tools_of_the_readme_in_order() {
        assert_eq!(
            expected(),
            names(&[
                "zotero_search",
                "zotero_semantic_search",
                "zotero_get_item",
                "zotero_create_items",
                "zotero_update_item",
                "zotero_delete_items",
                "zotero_list_collections",
                "zotero_manage_collections",
                "zotero_list_tags",
                "zotero_notes",
                "zotero_annotations",
                "zotero_read_attachment",
                "zotero_put_attachment",
                "zotero_delete_attachment",
                "zotero_rename_attachments",
                "zotero_import_reference",
                "zotero_reindex",
                "zotero_find_duplicates",
                "zotero_list_libraries",
                "zotero_changes",
                "zotero_retrieve",
                "zotero_check_references",
                "zotero_undo",
                "search",
                "fetch",
            ])
        );
    }

    #[test]
    fn the_same_list_matches_and_test_fixtures_after_it_are_accepted() {
        let expected = names(&["a", "b", "c"]);
        assert!(compare(&expected, &names(&["a", "b", "c"])).is_empty());
        assert!(compare(&expected, &names(&["a", "b", "c", "fixture_echo", "fixture_write"])).is_empty());
    }

    #[test]
    fn missing_extra_and_reordered_tools_are_named() {
        let expected = names(&["a", "b", "c"]);
        let diff = compare(&expected, &names(&["a", "c", "d"]));
        assert_eq!(diff, Difference { missing: names(&["b"]), unexpected: names(&["d"]), reordered: false });
        assert_eq!(diff.describe(), "missing b; not in this build d");
        let diff = compare(&expected, &names(&["b", "a", "c"]));
        assert!(diff.reordered && diff.missing.is_empty() && diff.unexpected.is_empty());
        assert_eq!(diff.describe(), "the same tools in another order");
    }
}
