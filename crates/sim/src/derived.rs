//! What listings derive from a whole library — child counts, reverse relations, collection sizes, the default
//! order, versions — computed once per state of the library instead of once per object shown.
//!
//! A page of `/items` shows `numChildren` and the reverse side of `dc:relation` for each of its items, and a
//! page of `/collections` each collection's size: computed from scratch, each is a pass over every item, so a
//! page of a 50,000-item library cost a hundred such passes. The index is built on the first listing after a
//! change and kept while the library stays as it is (`Library::derived`); `Library::touch` marks a change that
//! the library's version, sequence and sizes would not show (a write stamps the objects before it advances the
//! library's version). Single-object reads and write answers do not use it: they show one object, and keep the
//! direct computation.

use std::collections::HashMap;

use crate::item::{item_uri, relation_values};
use crate::state::{ItemRecord, Library};

/// What identifies one state of a library: any change moves one of these.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    pub version: u64,
    pub seq: u64,
    pub items: usize,
    pub collections: usize,
    pub changes: u64,
}

#[derive(Debug, Default)]
pub struct Derived {
    /// Every item's key in the default order (`dateModified`, then version, then creation), ascending.
    pub order: Vec<String>,
    /// Position of each item in `order`.
    pub rank: HashMap<String, usize>,
    /// Keys of the items outside the trash, in `order`'s order: `/items` with no filter.
    pub live: Vec<String>,
    /// Keys of the top-level items outside the trash, in `order`'s order: `/items/top` with no filter.
    pub live_top: Vec<String>,
    /// Every item's `(version, key)`, ascending: `since` reads only what changed.
    pub by_version: Vec<(u64, String)>,
    /// Children outside the trash, per parent key (`meta.numChildren`).
    pub num_children: HashMap<String, usize>,
    /// Item URI → keys of the other items naming it in their `dc:relation`, in key order.
    pub related_from: HashMap<String, Vec<String>>,
    /// Items outside the trash directly in each collection (`meta.numItems`).
    pub collection_items: HashMap<String, usize>,
    /// Subcollections of each collection (`meta.numCollections`).
    pub subcollections: HashMap<String, usize>,
}

impl Derived {
    pub fn build(lib: &Library) -> Self {
        let mut sorted: Vec<&ItemRecord> = lib.items.values().collect();
        sorted.sort_by(|a, b| {
            let (da, db) = (&a.data.date_modified, &b.data.date_modified);
            (da.is_empty(), da, a.version, a.seq).cmp(&(db.is_empty(), db, b.version, b.seq))
        });
        let order: Vec<String> = sorted.iter().map(|r| r.key.clone()).collect();
        let rank = order.iter().enumerate().map(|(i, k)| (k.clone(), i)).collect();
        let live = sorted.iter().filter(|r| !r.data.deleted).map(|r| r.key.clone()).collect();
        let live_top = sorted
            .iter()
            .filter(|r| !r.data.deleted && r.data.parent.as_deref().is_none_or(|p| !lib.items.contains_key(p)))
            .map(|r| r.key.clone())
            .collect();
        let mut by_version: Vec<(u64, String)> = lib.items.values().map(|r| (r.version, r.key.clone())).collect();
        by_version.sort();

        let mut num_children: HashMap<String, usize> = HashMap::new();
        let mut related_from: HashMap<String, Vec<String>> = HashMap::new();
        let mut collection_items: HashMap<String, usize> = HashMap::new();
        let path = lib.path();
        for rec in lib.items.values() {
            if let (Some(parent), false) = (&rec.data.parent, rec.data.deleted) {
                *num_children.entry(parent.clone()).or_default() += 1;
            }
            let mine = item_uri(&path, &rec.key);
            for uri in relation_values(&rec.data.relations, "dc:relation") {
                if uri != mine {
                    let from = related_from.entry(uri).or_default();
                    if from.last() != Some(&rec.key) {
                        from.push(rec.key.clone());
                    }
                }
            }
            if !rec.data.deleted {
                for (i, c) in rec.data.collections.iter().enumerate() {
                    if !rec.data.collections[..i].contains(c) {
                        *collection_items.entry(c.clone()).or_default() += 1;
                    }
                }
            }
        }
        let mut subcollections: HashMap<String, usize> = HashMap::new();
        for c in lib.collections.values() {
            if let Some(parent) = &c.data.parent {
                *subcollections.entry(parent.clone()).or_default() += 1;
            }
        }
        Self { order, rank, live, live_top, by_version, num_children, related_from, collection_items, subcollections }
    }
}
