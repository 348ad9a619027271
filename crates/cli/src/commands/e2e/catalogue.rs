//! The `tools/list` check: the server lists the tools of this build, in the same order (the order is part of the
//! catalogue clients cache, and the first tool is the one the conformance suite calls). A server lists only
//! what the request can use: a read-only token is not shown the tools that only write, and a
//! deployment's `TOOL_GROUPS` may leave whole groups out; tools missing for those reasons are accepted.

use zotero_mcp_server::config::{Config, ToolGroup, ToolGroups, ToolView};
use zotero_mcp_server::tools;

/// Tools a server lists only with `ENABLE_TEST_FIXTURES=1` (local test servers): accepted after the catalogue.
const FIXTURE_PREFIX: &str = "fixture_";

/// One tool of this build's catalogue, with what decides whether a request is shown it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expected {
    pub name: String,
    pub group: ToolGroup,
    /// Every call writes: a read-only token is not shown it.
    pub only_writes: bool,
}

/// The tools this build registers, in catalogue order (what a deployment of it lists to a writing grant).
pub fn expected() -> Vec<Expected> {
    // Registration reads no setting but the fixtures flag, which an empty configuration leaves off.
    let config = Config::from_lookup(|_| None);
    let registry = tools::registry(&config);
    let writing = ToolView { groups: ToolGroups::all(), writes: true, apps: false };
    let reading = ToolView { writes: false, ..writing };
    // A tool only panels call is listed to clients that declare MCP Apps alone: this command is not one.
    registry
        .model_tool_specs()
        .into_iter()
        .map(|spec| Expected {
            name: spec.name.to_owned(),
            group: spec.group,
            only_writes: spec.listed_in(writing) && !spec.listed_in(reading),
        })
        .collect()
}

/// How a listed catalogue differs from the expected one; empty when it matches.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Difference {
    pub missing: Vec<String>,
    pub unexpected: Vec<String>,
    /// Both lists hold the same tools, in another order.
    pub reordered: bool,
    /// Tools not listed for a reason the server gives every such request: the token may only read, or the
    /// deployment leaves their group out. Not a difference; the check says so.
    pub left_out: Vec<String>,
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
/// accepted (e2e servers run with them), and so are tools left out as a server leaves them out: every tool that
/// only writes (a read-only token, or a deployment without `write`), or every tool of a group (`TOOL_GROUPS`).
/// Anything else extra, missing or out of order is a difference.
pub fn compare(expected: &[Expected], listed: &[String]) -> Difference {
    let listed: Vec<&String> = listed.iter().filter(|n| !n.starts_with(FIXTURE_PREFIX)).collect();
    let is_listed = |name: &str| listed.iter().any(|n| n.as_str() == name);
    let absent: Vec<&Expected> = expected.iter().filter(|e| !is_listed(&e.name)).collect();
    // Writes are left out as a whole or not at all; a group, likewise.
    let writes_left_out = expected.iter().filter(|e| e.only_writes).all(|e| !is_listed(&e.name));
    let group_left_out = |group: ToolGroup| {
        expected.iter().filter(|e| e.group == group && !(writes_left_out && e.only_writes)).all(|e| !is_listed(&e.name))
    };
    let (left_out, missing): (Vec<&Expected>, Vec<&Expected>) =
        absent.into_iter().partition(|e| (e.only_writes && writes_left_out) || group_left_out(e.group));
    let names = |list: Vec<&Expected>| list.into_iter().map(|e| e.name.clone()).collect::<Vec<_>>();
    let unexpected: Vec<String> =
        listed.iter().filter(|n| !expected.iter().any(|e| &e.name == **n)).map(|n| (*n).clone()).collect();
    let common_listed: Vec<&str> =
        listed.iter().map(|n| n.as_str()).filter(|n| expected.iter().any(|e| e.name == *n)).collect();
    let common_expected: Vec<&str> = expected.iter().map(|e| e.name.as_str()).filter(|n| is_listed(n)).collect();
    Difference {
        missing: names(missing),
        unexpected,
        reordered: common_listed != common_expected,
        left_out: names(left_out),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use zotero_mcp_server::mcp::Access;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    fn entry(name: &str, group: ToolGroup, only_writes: bool) -> Expected {
        Expected { name: name.to_owned(), group, only_writes }
    }

    /// The expected catalogue is the one the server publishes (`schemas.json`, test fixtures aside, in its order),
    /// and a read-only token loses exactly the tools declared to only write.
    #[test]
    fn this_build_expects_the_published_catalogue_in_order() {
        let published: serde_json::Value =
            serde_json::from_str(include_str!("../../../../server/src/mcp/schemas.json")).unwrap_or_default();
        let config = Config::from_lookup(|_| None);
        // A tool only panels call is published too (its schemas), but not in a plain client's catalogue.
        let app_only: Vec<&str> =
            tools::registry(&config).tool_specs().iter().filter(|s| s.app_only).map(|s| s.name).collect();
        let published: Vec<&str> = published["tools"]
            .as_object()
            .map(|tools| {
                let names = tools.keys().map(String::as_str);
                names.filter(|n| !n.starts_with(FIXTURE_PREFIX) && !app_only.contains(n)).collect()
            })
            .unwrap_or_default();
        let expected = expected();
        assert_eq!(
            expected.iter().map(|e| e.name.as_str()).collect::<Vec<_>>(),
            published,
            "the registry and schemas.json differ: `UPDATE_SCHEMAS=1 cargo test -p zotero-mcp-server --test \
             published_schemas`"
        );
        for (entry, spec) in expected.iter().zip(tools::registry(&config).model_tool_specs()) {
            assert_eq!(entry.only_writes, spec.access == Access::Write, "{}", entry.name);
        }
        assert!(expected.iter().any(|e| e.only_writes) && expected.iter().any(|e| !e.only_writes));
    }

    #[test]
    fn the_same_list_matches_and_test_fixtures_after_it_are_accepted() {
        let expected = vec![entry("a", ToolGroup::Read, false), entry("b", ToolGroup::Read, false)];
        assert!(compare(&expected, &names(&["a", "b"])).is_empty());
        assert!(compare(&expected, &names(&["a", "b", "fixture_echo", "fixture_write"])).is_empty());
    }

    #[test]
    fn missing_extra_and_reordered_tools_are_named() {
        let expected: Vec<Expected> = ["a", "b", "c"].iter().map(|n| entry(n, ToolGroup::Read, false)).collect();
        let diff = compare(&expected, &names(&["a", "c", "d"]));
        assert_eq!(
            diff,
            Difference { missing: names(&["b"]), unexpected: names(&["d"]), reordered: false, left_out: vec![] }
        );
        assert_eq!(diff.describe(), "missing b; not in this build d");
        let diff = compare(&expected, &names(&["b", "a", "c"]));
        assert!(diff.reordered && diff.missing.is_empty() && diff.unexpected.is_empty());
        assert_eq!(diff.describe(), "the same tools in another order");
    }

    #[test]
    fn tools_a_server_leaves_out_for_the_token_or_its_groups_are_no_difference() {
        let expected = vec![
            entry("read", ToolGroup::Read, false),
            entry("create", ToolGroup::Write, true),
            entry("notes", ToolGroup::Read, false),
            entry("upload", ToolGroup::Files, true),
            entry("pdf", ToolGroup::Files, false),
            entry("retrieve", ToolGroup::Research, false),
        ];
        // A read-only token: every tool that only writes is left out.
        let diff = compare(&expected, &names(&["read", "notes", "pdf", "retrieve"]));
        assert!(diff.is_empty(), "{diff:?}");
        assert_eq!(diff.left_out, names(&["create", "upload"]));
        // TOOL_GROUPS=read,write: the files and research groups are left out whole.
        let diff = compare(&expected, &names(&["read", "create", "notes"]));
        assert!(diff.is_empty(), "{diff:?}");
        // One writing tool of two missing, or one tool of a listed group, is a difference.
        assert_eq!(compare(&expected, &names(&["read", "create", "notes", "pdf", "retrieve"])).missing, ["upload"]);
        assert_eq!(compare(&expected, &names(&["read", "create", "upload", "pdf", "retrieve"])).missing, ["notes"]);
    }
}
