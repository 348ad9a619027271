//! The items read for one evaluation and how they hang together: parents, child notes and attachments, the
//! trash as Zotero sees it (a child of a trashed item is in the trash too), and the collection tree.
//!
//! Objects are looked up through a sorted `Vec<String>` of their keys (`sort_unstable`, `binary_search`), not a
//! `BTreeMap`: the Worker's wasm already holds that sort, and each map or set type would add its own kilobytes.

use serde_json::Value;

use crate::zotero::ZoteroObject;

/// Where `key` is in `keys`, which are sorted.
pub(super) fn find(keys: &[String], key: &str) -> Result<usize, usize> {
    keys.binary_search_by(|k| k.as_str().cmp(key))
}

/// Whether the sorted `keys` hold `key`.
pub(super) fn holds(keys: &[String], key: &str) -> bool {
    find(keys, key).is_ok()
}

/// Each name (a collection, a full-text phrase) with the sorted keys it stands for.
pub(super) type KeySets = Vec<(String, Vec<String>)>;

/// The keys `name` stands for in `sets`.
pub(super) fn keys_of<'a>(sets: &'a [(String, Vec<String>)], name: &str) -> Option<&'a [String]> {
    sets.iter().find(|(n, _)| n == name).map(|(_, keys)| keys.as_slice())
}

/// An array of an item's (`tags`, `creators`, `collections`), empty when it has none.
pub(super) fn array<'a>(item: &'a ZoteroObject, name: &str) -> &'a [Value] {
    item.data.get(name).and_then(Value::as_array).map_or(&[], Vec::as_slice)
}

/// Objects by key, each key once (the last object read under a key counts, as a map's insert would), numbered
/// `0..len()` in key order.
#[derive(Debug, Default)]
pub(super) struct Keyed {
    objects: Vec<ZoteroObject>,
    /// Every key, sorted.
    keys: Vec<String>,
    /// For each key, where its object is in `objects`.
    at: Vec<usize>,
}

impl Keyed {
    fn new(objects: Vec<ZoteroObject>) -> Self {
        let mut keyed = Self { objects, ..Self::default() };
        keyed.index();
        keyed
    }

    fn index(&mut self) {
        let mut keys = Vec::with_capacity(self.objects.len());
        for object in &self.objects {
            keys.push(object.key.clone());
        }
        crate::sort::sort(&mut keys);
        keys.dedup();
        let mut at = vec![0; keys.len()];
        for (i, object) in self.objects.iter().enumerate() {
            if let Ok(k) = find(&keys, &object.key) {
                at[k] = i;
            }
        }
        self.keys = keys;
        self.at = at;
    }

    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// The `n`th object in key order.
    pub fn nth(&self, n: usize) -> &ZoteroObject {
        &self.objects[self.at[n]]
    }

    /// The number of the object with this key.
    pub fn number(&self, key: &str) -> Option<usize> {
        find(&self.keys, key).ok()
    }

    pub fn get(&self, key: &str) -> Option<&ZoteroObject> {
        self.number(key).map(|n| self.nth(n))
    }
}

/// The items read, by key.
#[derive(Debug, Default)]
pub(super) struct Family {
    pub items: Keyed,
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
    /// Adds an item read; [`Family::link`] makes it found.
    #[cfg(test)]
    pub fn insert(&mut self, item: ZoteroObject) {
        self.items.objects.push(item);
    }

    /// Adds items read; [`Family::link`] makes them found.
    pub fn add(&mut self, items: Vec<ZoteroObject>) {
        self.items.objects.extend(items);
    }

    /// Indexes what was inserted (a later item under a key already read replaces it).
    pub fn link(&mut self) {
        self.items.index();
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// The `n`th item in key order.
    pub fn item(&self, n: usize) -> &ZoteroObject {
        self.items.nth(n)
    }

    /// Parent keys named by items read but not read themselves, sorted (items must be linked).
    pub fn missing_parents(&self) -> Vec<String> {
        let mut missing = Vec::new();
        for parent in (0..self.len()).filter_map(|n| parent_key(self.item(n))) {
            if self.items.number(parent).is_none() {
                missing.push(parent.to_owned());
            }
        }
        crate::sort::sort(&mut missing);
        missing.dedup();
        missing
    }

    fn parent(&self, item: &ZoteroObject) -> Option<usize> {
        parent_key(item).and_then(|p| self.items.number(p))
    }

    /// In the trash as Zotero's search counts it: trashed, a child note or attachment of a trashed item, or an
    /// annotation of a trashed attachment or of an attachment of a trashed item.
    pub fn in_trash(&self, item: &ZoteroObject) -> bool {
        if item.is_trashed() {
            return true;
        }
        let Some(parent) = self.parent(item).map(|n| self.item(n)) else { return false };
        if parent.is_trashed() {
            return true;
        }
        is_annotation(item) && self.parent(parent).is_some_and(|n| self.item(n).is_trashed())
    }

    /// The number of the top-level item the `n`th item sits under (itself when it has no parent read).
    pub fn top_level(&self, n: usize) -> usize {
        let mut at = n;
        // Annotation → attachment → regular item is the deepest Zotero nests.
        for _ in 0..2 {
            match self.parent(self.item(at)) {
                Some(parent) => at = parent,
                None => break,
            }
        }
        at
    }

    /// `has` (one flag per item) with, as the flags say, the parents of child notes and attachments having it and
    /// the child notes and attachments of items having it.
    pub fn extend(&self, has: Vec<bool>, parents: bool, children: bool) -> Vec<bool> {
        let mut out = has.clone();
        for n in 0..self.len() {
            let item = self.item(n);
            if !is_child_note_or_attachment(item) {
                continue;
            }
            let Some(parent) = self.parent(item) else { continue };
            if parents && has[n] {
                out[parent] = true;
            }
            if children && has[parent] {
                out[n] = true;
            }
        }
        out
    }
}

/// The collections of the library: each one's parent and whether it is in the trash.
#[derive(Debug, Default)]
pub(super) struct CollectionTree {
    collections: Keyed,
}

fn parent_collection(collection: &ZoteroObject) -> Option<&str> {
    collection.data.get("parentCollection").and_then(Value::as_str).filter(|p| !p.is_empty())
}

impl CollectionTree {
    pub fn new(collections: Vec<ZoteroObject>) -> Self {
        Self { collections: Keyed::new(collections) }
    }

    /// The collection and every collection below it, at any depth, sorted.
    pub fn with_descendants(&self, key: &str) -> Vec<String> {
        let all = &self.collections;
        let mut inside = vec![false; all.len()];
        // Each pass adds one more level; it stops when a pass adds nothing (a cycle adds nothing twice).
        loop {
            let mut grew = false;
            for n in 0..all.len() {
                let c = all.nth(n);
                if !inside[n]
                    && (c.key == key
                        || parent_collection(c).is_some_and(|p| p == key || all.number(p).is_some_and(|p| inside[p])))
                {
                    inside[n] = true;
                    grew = true;
                }
            }
            if !grew {
                break;
            }
        }
        let mut out = vec![key.to_owned()];
        for n in (0..all.len()).filter(|n| inside[*n]) {
            out.push(all.nth(n).key.clone());
        }
        crate::sort::sort(&mut out);
        out.dedup();
        out
    }

    /// Whether an item is filed: in a collection that is not in the trash. A collection the listing did not show
    /// counts as filed, since only the trash unfiles.
    pub fn files(&self, item: &ZoteroObject) -> bool {
        array(item, "collections")
            .iter()
            .filter_map(Value::as_str)
            .any(|c| !self.collections.get(c).is_some_and(ZoteroObject::is_trashed))
    }
}
