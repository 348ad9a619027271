//! The items read for one evaluation and how they hang together: parents, child notes and attachments, the
//! trash as Zotero sees it (a child of a trashed item is in the trash too), and the collection tree.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::zotero::ZoteroObject;

/// The items read, by key.
#[derive(Debug, Default)]
pub(super) struct Family {
    pub items: BTreeMap<String, ZoteroObject>,
    /// Parent key → its child notes and attachments read (not annotations: Zotero's parent and child rules
    /// follow notes and attachments only).
    children: BTreeMap<String, Vec<String>>,
}

pub(super) fn parent_key(item: &ZoteroObject) -> Option<&str> {
    item.field("parentItem")
}

fn is_annotation(item: &ZoteroObject) -> bool {
    item.item_type() == Some("annotation")
}

/// A note or an attachment with a parent: what `includeParents`/`includeChildren` follow.
fn is_child_note_or_attachment(item: &ZoteroObject) -> bool {
    matches!(item.item_type(), Some("note" | "attachment")) && parent_key(item).is_some()
}

impl Family {
    pub fn insert(&mut self, item: ZoteroObject) {
        self.items.insert(item.key.clone(), item);
    }

    /// Indexes the children; called once everything is read.
    pub fn link(&mut self) {
        self.children.clear();
        for item in self.items.values().filter(|i| is_child_note_or_attachment(i)) {
            if let Some(parent) = parent_key(item) {
                self.children.entry(parent.to_owned()).or_default().push(item.key.clone());
            }
        }
    }

    /// Parent keys named by items read but not read themselves.
    pub fn missing_parents(&self) -> BTreeSet<String> {
        self.items
            .values()
            .filter_map(parent_key)
            .filter(|parent| !self.items.contains_key(*parent))
            .map(str::to_owned)
            .collect()
    }

    fn parent(&self, item: &ZoteroObject) -> Option<&ZoteroObject> {
        parent_key(item).and_then(|p| self.items.get(p))
    }

    /// In the trash as Zotero's search counts it: trashed, a child note or attachment of a trashed item, or an
    /// annotation of a trashed attachment or of an attachment of a trashed item.
    pub fn in_trash(&self, item: &ZoteroObject) -> bool {
        if item.is_trashed() {
            return true;
        }
        let Some(parent) = self.parent(item) else { return false };
        if parent.is_trashed() {
            return true;
        }
        is_annotation(item) && self.parent(parent).is_some_and(ZoteroObject::is_trashed)
    }

    /// The top-level item an item sits under (itself when it has no parent read).
    pub fn top_level<'a>(&'a self, item: &'a ZoteroObject) -> &'a ZoteroObject {
        let mut at = item;
        // Annotation → attachment → regular item is the deepest Zotero nests.
        for _ in 0..2 {
            match self.parent(at) {
                Some(parent) => at = parent,
                None => break,
            }
        }
        at
    }

    /// `keys` with, as the flags say, the parents of child notes and attachments among them and the child notes
    /// and attachments of items among them.
    pub fn extend(&self, keys: BTreeSet<String>, parents: bool, children: bool) -> BTreeSet<String> {
        let mut out = keys.clone();
        for key in &keys {
            let Some(item) = self.items.get(key) else { continue };
            if parents && is_child_note_or_attachment(item) {
                if let Some(parent) = parent_key(item) {
                    out.insert(parent.to_owned());
                }
            }
            if children {
                out.extend(self.children.get(key).into_iter().flatten().cloned());
            }
        }
        out
    }
}

/// The collections of the library: each one's parent and whether it is in the trash.
#[derive(Debug, Default)]
pub(super) struct CollectionTree {
    parents: BTreeMap<String, Option<String>>,
    trashed: BTreeSet<String>,
}

impl CollectionTree {
    pub fn new(collections: &[ZoteroObject]) -> Self {
        let mut tree = Self::default();
        for c in collections {
            let parent = c.data.get("parentCollection").and_then(Value::as_str).filter(|p| !p.is_empty());
            tree.parents.insert(c.key.clone(), parent.map(str::to_owned));
            if c.is_trashed() {
                tree.trashed.insert(c.key.clone());
            }
        }
        tree
    }

    /// The collection and every collection below it, at any depth.
    pub fn with_descendants(&self, key: &str) -> BTreeSet<String> {
        let mut out = BTreeSet::from([key.to_owned()]);
        // Each pass adds one more level; a tree deeper than the number of collections is a cycle.
        for _ in 0..=self.parents.len() {
            let before = out.len();
            for (child, parent) in &self.parents {
                if parent.as_ref().is_some_and(|p| out.contains(p)) {
                    out.insert(child.clone());
                }
            }
            if out.len() == before {
                break;
            }
        }
        out
    }

    /// Whether an item is filed: in a collection that is not in the trash. A collection the listing did not show
    /// counts as filed, since only the trash unfiles.
    pub fn files(&self, item: &ZoteroObject) -> bool {
        item.data
            .get("collections")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .any(|c| !self.trashed.contains(c))
    }
}
