//! What listings derive from a whole library — child counts, reverse relations, collection sizes, the default
//! order, versions — computed once per state of the library instead of once per object shown.
//!
//! A page of `/items` shows `numChildren` and the reverse side of `dc:relation` for each of its items, and a
//! page of `/collections` each collection's size: computed from scratch, each is a pass over every item, so a
//! page of a 50,000-item library cost a hundred such passes. The index is built on the first listing after a
//! change and kept while the library stays as it is (`Library::cached`); `Library::touch` marks a change that
//! the library's version, sequence and sizes would not show (a write stamps the objects before it advances the
//! library's version). Single-object reads and write answers do not use it: they show one object, and keep the
//! direct computation.
//!
//! What only some listings need is built on their first use within a state, and kept with the rest: the order
//! of each `sort` asked for (`orders`), each item's children and each collection's members (`members`), and
//! the lowered text quick search compares (`haystacks`). So the pages of a first fill (`since=0`, sorted by
//! `dateAdded`) or of a listing sorted by title cost about what a page of a small library does, instead of
//! sorting the whole library for each page.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use crate::item::{item_uri, relation_values, Tag};
use std::sync::Arc;

use crate::state::{ItemRecord, Library, LibraryFacts};

/// An object key, held inline: Zotero keys are eight ASCII characters, and an index of 50,000 `String`s made
/// and dropped after every change left the allocator's free lists so fragmented that the small allocations of
/// the next pages cost several times as much.
pub type Key = [u8; 8];

/// The inline form of a key; `None` for one that is not eight bytes (no stored object has such a key: writes
/// and seeding refuse them).
pub fn key(k: &str) -> Option<Key> {
    k.as_bytes().try_into().ok()
}

/// A key back as text, for looking the object up.
pub fn text(k: &Key) -> &str {
    std::str::from_utf8(k).unwrap_or("")
}

#[derive(Debug, Default)]
pub struct Derived {
    /// Each item's position in the default order (`dateModified`, then version, then creation), ascending.
    pub rank: HashMap<Key, usize>,
    /// Keys of the items outside the trash, in the default order: `/items` with no filter.
    pub live: Vec<Key>,
    /// Keys of the top-level items outside the trash, in the default order: `/items/top` with no filter.
    pub live_top: Vec<Key>,
    /// Every item's `(version, key)`, ascending: `since` reads only what changed.
    pub by_version: Vec<(u64, Key)>,
    /// Children outside the trash, per parent key (`meta.numChildren`).
    pub num_children: HashMap<Key, usize>,
    /// Item URI → keys of the other items naming it in their `dc:relation`, in key order.
    pub related_from: HashMap<String, Vec<Key>>,
    /// Items outside the trash directly in each collection (`meta.numItems`).
    pub collection_items: HashMap<Key, usize>,
    /// Subcollections of each collection (`meta.numCollections`).
    pub subcollections: HashMap<Key, usize>,
    /// How many items carry each tag (`meta.numItems` of `/tags`).
    pub tag_counts: HashMap<Tag, usize>,
    /// `/tags` in its default order (`dateModified`, version, name, type), ascending and descending, as
    /// positions in the tag table; `None` when the table and the items' tags disagree (then the listing sorts).
    pub tag_order: Option<(Vec<u32>, Vec<u32>)>,
    /// Every item in the order of a `sort`, built the first time that sort is asked for in this state.
    orders: Mutex<HashMap<String, Arc<Order>>>,
    /// Children per parent and members per collection, built on first use.
    members: OnceLock<Members>,
    /// What quick search compares, per item, built on the first search.
    haystacks: OnceLock<HashMap<Key, Haystack>>,
}

/// An item's place in an [`Order`], with what the unfiltered listings select by, so that a page is found
/// without looking the items up.
#[derive(Debug, Clone, Copy)]
pub struct Entry {
    pub key: Key,
    pub version: u64,
    pub deleted: bool,
    /// A top-level item: no parent in the library (what `/items/top` lists).
    pub top: bool,
}

/// Every item of the library, trash included, in the ascending order of one `sort` (descending is its
/// reverse: ties are broken by version and creation, which no two items share).
#[derive(Debug, Default)]
pub struct Order {
    pub entries: Vec<Entry>,
    /// Each item's position in `entries`.
    pub rank: HashMap<Key, u32>,
    /// Whether `top` names every item's top-level ancestor: false when some chain of parents is deeper than the
    /// listings follow, and then the listings select item by item.
    pub tops_exact: bool,
}

impl Order {
    /// The order of `sorted` (every item of `lib`, already sorted); `None` if some key is not eight bytes.
    pub fn of_sorted(lib: &Library, sorted: &[&ItemRecord]) -> Option<Self> {
        let mut entries = Vec::with_capacity(sorted.len());
        let mut rank = HashMap::with_capacity(sorted.len());
        let mut tops_exact = true;
        for (at, rec) in sorted.iter().enumerate() {
            let own = key(&rec.key)?;
            let top = !is_child(lib, rec);
            if !top && is_child(lib, lib.top_level(rec)) {
                tops_exact = false;
            }
            entries.push(Entry { key: own, version: rec.version, deleted: rec.data.deleted, top });
            rank.insert(own, u32::try_from(at).ok()?);
        }
        Some(Self { entries, rank, tops_exact })
    }
}

/// Whether the item's parent is in the library (an item whose parent is gone lists as top-level).
fn is_child(lib: &Library, rec: &ItemRecord) -> bool {
    rec.data.parent.as_deref().is_some_and(|p| lib.items.contains_key(p))
}

/// Children and collection members, trash included.
#[derive(Debug, Default)]
pub struct Members {
    /// Each parent's children, in key order.
    pub children: HashMap<Key, Vec<Key>>,
    /// The items filed directly in each collection, in key order.
    pub in_collection: HashMap<Key, Vec<Key>>,
}

/// An item's text as quick search compares it, lowered once: its title fields (and a note's title), its
/// creators' names, and its year.
#[derive(Debug, Default, Clone)]
pub struct Haystack {
    pub titles: Vec<String>,
    pub creators: Vec<String>,
    pub year: Option<String>,
}

impl Derived {
    /// The index of `lib`; `None` if some key is not eight bytes, and the listings then compute everything
    /// directly.
    pub fn build(lib: &Library) -> Option<Self> {
        let mut sorted: Vec<(&ItemRecord, Key)> =
            lib.items.values().map(|r| key(&r.key).map(|k| (r, k))).collect::<Option<_>>()?;
        sorted.sort_by(|(a, _), (b, _)| {
            let (da, db) = (&a.data.date_modified, &b.data.date_modified);
            (da.is_empty(), da, a.version, a.seq).cmp(&(db.is_empty(), db, b.version, b.seq))
        });
        let rank = sorted.iter().enumerate().map(|(i, (_, k))| (*k, i)).collect();
        let live = sorted.iter().filter(|(r, _)| !r.data.deleted).map(|(_, k)| *k).collect();
        let live_top = sorted
            .iter()
            .filter(|(r, _)| !r.data.deleted && r.data.parent.as_deref().is_none_or(|p| !lib.items.contains_key(p)))
            .map(|(_, k)| *k)
            .collect();
        let mut by_version: Vec<(u64, Key)> = sorted.iter().map(|(r, k)| (r.version, *k)).collect();
        by_version.sort_unstable();

        let mut num_children: HashMap<Key, usize> = HashMap::new();
        let mut related_from: HashMap<String, Vec<Key>> = HashMap::new();
        let mut collection_items: HashMap<Key, usize> = HashMap::new();
        let mut tag_counts: HashMap<Tag, usize> = HashMap::new();
        let path = lib.path();
        // In key order, so that reverse relations come out in the order the direct computation gives.
        for rec in lib.items.values() {
            let own = key(&rec.key)?;
            if let (Some(parent), false) = (&rec.data.parent, rec.data.deleted) {
                if let Some(parent) = key(parent) {
                    *num_children.entry(parent).or_default() += 1;
                }
            }
            let relations = relation_values(&rec.data.relations, "dc:relation");
            if !relations.is_empty() {
                let mine = item_uri(&path, &rec.key);
                for uri in relations {
                    if uri != mine {
                        let from = related_from.entry(uri).or_default();
                        if from.last() != Some(&own) {
                            from.push(own);
                        }
                    }
                }
            }
            for t in &rec.data.tags {
                match tag_counts.get_mut(t) {
                    Some(n) => *n += 1,
                    None => {
                        tag_counts.insert(t.clone(), 1);
                    }
                }
            }
            if !rec.data.deleted {
                for (i, c) in rec.data.collections.iter().enumerate() {
                    if let (false, Some(c)) = (rec.data.collections[..i].contains(c), key(c)) {
                        *collection_items.entry(c).or_default() += 1;
                    }
                }
            }
        }
        let mut subcollections: HashMap<Key, usize> = HashMap::new();
        for c in lib.collections.values() {
            if let Some(parent) = c.data.parent.as_deref().and_then(key) {
                *subcollections.entry(parent).or_default() += 1;
            }
        }
        Some(Self {
            rank,
            live,
            live_top,
            by_version,
            num_children,
            related_from,
            collection_items,
            tag_order: tag_order(lib, &tag_counts),
            subcollections,
            tag_counts,
            orders: Mutex::default(),
            members: OnceLock::new(),
            haystacks: OnceLock::new(),
        })
    }

    /// The order of `sort`, from `build` the first time it is asked for (`None` when `build` cannot make one).
    pub fn order(&self, sort: &str, build: impl FnOnce() -> Option<Order>) -> Option<Arc<Order>> {
        if let Some(found) = self.orders.lock().ok().and_then(|orders| orders.get(sort).cloned()) {
            return Some(found);
        }
        let order = Arc::new(build()?);
        if let Ok(mut orders) = self.orders.lock() {
            orders.insert(sort.to_string(), Arc::clone(&order));
        }
        Some(order)
    }

    /// Children per parent and members per collection of `lib` (the library this index was built from).
    pub fn members(&self, lib: &Library) -> &Members {
        self.members.get_or_init(|| {
            let mut members = Members::default();
            for rec in lib.items.values() {
                let Some(own) = key(&rec.key) else { continue };
                if let Some(parent) = rec.data.parent.as_deref().and_then(key) {
                    members.children.entry(parent).or_default().push(own);
                }
                for (i, c) in rec.data.collections.iter().enumerate() {
                    if let (false, Some(c)) = (rec.data.collections[..i].contains(c), key(c)) {
                        members.in_collection.entry(c).or_default().push(own);
                    }
                }
            }
            members
        })
    }

    /// What quick search compares, per item, from `build` on the first search.
    pub fn haystacks(&self, build: impl FnOnce() -> HashMap<Key, Haystack>) -> &HashMap<Key, Haystack> {
        self.haystacks.get_or_init(build)
    }

    /// The item's position in the default order.
    pub fn rank_of(&self, item: &str) -> usize {
        key(item).and_then(|k| self.rank.get(&k).copied()).unwrap_or(usize::MAX)
    }
}

/// The index of `lib` as it is now: built on the first listing after a change, then kept (`None` when the
/// library holds a key the index cannot).
pub fn of(lib: &Library) -> Arc<Option<Derived>> {
    lib.cached(Derived::build)
}

/// The index of `lib` if one was built for it as it is now, without building one: a single object's read uses
/// it when a listing has paid for it, and otherwise computes its counts directly.
pub fn current(lib: &Library) -> Option<Arc<Option<Derived>>> {
    lib.cached_now()
}

impl LibraryFacts for Derived {
    fn children_of(&self, item: &str) -> usize {
        key(item).and_then(|k| self.num_children.get(&k).copied()).unwrap_or(0)
    }

    fn related_from(&self, uri: &str) -> Vec<&str> {
        self.related_from.get(uri).into_iter().flatten().map(text).collect()
    }

    fn collection_counts(&self, collection: &str) -> (usize, usize) {
        let k = key(collection);
        let count = |map: &HashMap<Key, usize>| k.and_then(|k| map.get(&k).copied()).unwrap_or(0);
        (count(&self.collection_items), count(&self.subcollections))
    }
}

/// The tag table's positions in `/tags`'s default order, both directions; ties in both keep the table's own
/// order, as the listing's sort does.
fn tag_order(lib: &Library, counts: &HashMap<Tag, usize>) -> Option<(Vec<u32>, Vec<u32>)> {
    if counts.len() != lib.tags.len() || lib.tags.keys().any(|t| !counts.contains_key(t)) {
        return None;
    }
    let rows: Vec<(&str, u64, String, i64)> =
        lib.tags.iter().map(|(t, m)| (m.date_modified.as_str(), m.version, t.name.to_lowercase(), t.kind)).collect();
    let primary = |a: u32, b: u32| {
        let (x, y) = (&rows[a as usize], &rows[b as usize]);
        x.0.cmp(y.0).then(x.1.cmp(&y.1)).then(x.2.cmp(&y.2)).then(x.3.cmp(&y.3))
    };
    let positions = 0..u32::try_from(rows.len()).ok()?;
    let mut ascending: Vec<u32> = positions.clone().collect();
    ascending.sort_by(|a, b| primary(*a, *b).then(a.cmp(b)));
    let mut descending: Vec<u32> = positions.collect();
    descending.sort_by(|a, b| primary(*a, *b).reverse().then(a.cmp(b)));
    Some((ascending, descending))
}
