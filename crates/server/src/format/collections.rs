//! Collections as a tree with full paths.

use std::collections::{BTreeMap, HashSet};

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;
use zotero_mcp_core::zotero::ZoteroObject;

use super::items::{item_list, ItemSummary};

/// One collection.
#[derive(Debug, Clone, Serialize, JsonSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct CollectionSummary {
    pub key: String,
    pub version: u64,
    pub name: String,
    /// The parent collection's key, or null at the top level.
    pub parent_collection: Option<String>,
    /// Names from the top level down to this collection, joined by " / ".
    pub path: String,
    /// Items directly in the collection, when Zotero said.
    pub num_items: Option<u64>,
    /// Subcollections directly below it, when Zotero said.
    pub num_collections: Option<u64>,
}

fn name_of(c: &ZoteroObject) -> String {
    c.field("name").unwrap_or("(unnamed)").to_owned()
}

fn parent_of(c: &ZoteroObject) -> Option<String> {
    c.data.get("parentCollection").and_then(Value::as_str).filter(|p| !p.is_empty()).map(str::to_owned)
}

/// Summaries in tree order (parents before children, siblings by name), each with its full path. Collections
/// whose parent is missing (or that sit in a cycle) come last, as top-level entries.
pub fn tree(collections: &[ZoteroObject]) -> Vec<CollectionSummary> {
    let mut children: BTreeMap<Option<String>, Vec<&ZoteroObject>> = BTreeMap::new();
    let keys: HashSet<&str> = collections.iter().map(|c| c.key.as_str()).collect();
    for c in collections {
        let parent = parent_of(c).filter(|p| keys.contains(p.as_str()));
        children.entry(parent).or_default().push(c);
    }
    for list in children.values_mut() {
        zotero_mcp_core::sort::sort_by_key(list, |c| (name_of(c).to_lowercase(), c.key.clone()));
    }
    let mut out = Vec::with_capacity(collections.len());
    let mut seen = HashSet::new();
    let mut stack: Vec<(&ZoteroObject, String)> =
        children.get(&None).map(|roots| roots.iter().rev().map(|c| (*c, name_of(c))).collect()).unwrap_or_default();
    while let Some((collection, path)) = stack.pop() {
        if !seen.insert(collection.key.clone()) {
            continue;
        }
        if let Some(kids) = children.get(&Some(collection.key.clone())) {
            for kid in kids.iter().rev() {
                stack.push((kid, format!("{path} / {}", name_of(kid))));
            }
        }
        out.push(summary(collection, path));
    }
    for c in collections {
        if !seen.contains(&c.key) {
            out.push(summary(c, name_of(c)));
        }
    }
    out
}

fn summary(c: &ZoteroObject, path: String) -> CollectionSummary {
    CollectionSummary {
        key: c.key.clone(),
        version: c.version,
        name: name_of(c),
        parent_collection: parent_of(c),
        path,
        num_items: c.meta.get("numItems").and_then(Value::as_u64),
        num_collections: c.meta.get("numCollections").and_then(Value::as_u64),
    }
}

/// An indented Markdown tree.
pub fn tree_markdown(collections: &[CollectionSummary]) -> String {
    if collections.is_empty() {
        return "_No collections._".to_owned();
    }
    collections
        .iter()
        .map(|c| {
            let depth = c.path.matches(" / ").count();
            let count = c.num_items.filter(|n| *n > 0).map(|n| format!(", {n} items")).unwrap_or_default();
            format!("{}- {} (key: {}{count})", "  ".repeat(depth), c.name, c.key)
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The collections whose name matched `query`, one line each with path and key, or a note that none did.
pub fn matches_markdown(query: &str, matches: &[CollectionSummary]) -> String {
    if matches.is_empty() {
        return format!("_No collection name contains \"{query}\"._");
    }
    matches.iter().map(|c| format!("- {} (key: {})", c.path, c.key)).collect::<Vec<_>>().join("\n")
}

/// One page of a collection's items under the collection's path, with how to get the next page.
pub fn collection_items_markdown(
    collection: &CollectionSummary,
    items: &[ItemSummary],
    next_offset: Option<u64>,
) -> String {
    let rows: Vec<_> =
        items.iter().map(|s| (s.clone(), s.title.clone().unwrap_or_else(|| "(untitled)".into()), vec![])).collect();
    let mut markdown = format!("# {}\n\nkey: {}\n\n{}", collection.path, collection.key, item_list(&rows));
    if let Some(next) = next_offset {
        markdown.push_str(&format!("\n\n_More items: call again with offset {next}._"));
    }
    markdown
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn c(key: &str, name: &str, parent: Value) -> ZoteroObject {
        serde_json::from_value(json!({ "key": key, "version": 1, "meta": { "numItems": 2 },
            "data": { "key": key, "name": name, "parentCollection": parent } }))
        .unwrap()
    }

    #[test]
    fn builds_paths_depth_first_with_sorted_siblings() {
        let all = [
            c("CCCCCCCC", "Methods", json!("AAAAAAAA")),
            c("AAAAAAAA", "Thesis", json!(false)),
            c("BBBBBBBB", "Background", json!("AAAAAAAA")),
            c("DDDDDDDD", "Archive", json!(false)),
            c("EEEEEEEE", "Orphan", json!("ZZZZZZZZ")),
        ];
        let t = tree(&all);
        let paths: Vec<&str> = t.iter().map(|c| c.path.as_str()).collect();
        assert_eq!(paths, ["Archive", "Orphan", "Thesis", "Thesis / Background", "Thesis / Methods"]);
        let md = tree_markdown(&t);
        assert!(md.contains("\n  - Background (key: BBBBBBBB, 2 items)"));
    }
}
