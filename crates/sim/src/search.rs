//! Listing and searching: which items, collections and tags a read request selects, and in which order.
//!
//! Mirrors `Zotero_Items::search`: filters apply to the matching item; `/top` requests then answer with each
//! match's top-level item (so a note's text finds its parent), and exclude anything whose top-level item is in
//! the trash. Text matching is case-insensitive substring matching, like MySQL's `LIKE` under Zotero's
//! case-insensitive collation.

use std::borrow::Cow;
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use crate::dates;
use crate::derived::{self, Derived, Haystack, Key, Order};
use crate::error::{ApiError, ApiResult};
use crate::item::{ItemData, Tag};
use crate::query::{search_sets, search_words, Params};
use crate::schema::Schema;
use crate::state::{CollectionRecord, ItemRecord, Library, TagMeta};

/// Which items a listing starts from.
#[derive(Debug, Clone)]
pub enum ItemScope {
    /// `/items`
    All,
    /// `/items/top`
    Top,
    /// `/items/trash`
    Trash,
    /// `/items/<key>/children`
    Children(String),
    /// `/collections/<key>/items` (`top: false`) and `/collections/<key>/items/top`.
    Collection { key: String, top: bool },
}

impl ItemScope {
    fn only_top(&self) -> bool {
        matches!(self, ItemScope::Top | ItemScope::Collection { top: true, .. })
    }
}

fn lower(s: &str) -> String {
    s.to_lowercase()
}

fn contains_ci(haystack: &str, needle_lower: &str) -> bool {
    lower(haystack).contains(needle_lower)
}

/// Whether an item has a tag with this name (any type), compared case-insensitively as Zotero does.
fn has_tag(data: &ItemData, name: &str) -> bool {
    let name = lower(name);
    data.tags.iter().any(|t| lower(&t.name) == name)
}

/// The year quick search matches: the first four characters of the item's parsed date.
fn year_of(data: &ItemData, schema: &Schema) -> Option<String> {
    let date = data.date(schema);
    (!date.is_empty()).then(|| dates::parse_date(&date).sql()[..4].to_string())
}

/// What quick search compares in an item, lowered: its title fields (a note's title too), its creators' names,
/// and its year. Empty values are left out: no word is empty, so none matches them.
fn haystack(rec: &ItemRecord, schema: &Schema, title_fields: &BTreeSet<String>) -> Haystack {
    let data = &rec.data;
    let mut titles: Vec<String> =
        title_fields.iter().map(|f| data.field(f)).filter(|v| !v.is_empty()).map(lower).collect();
    if data.item_type == "note" {
        let title = data.note_title();
        if !title.is_empty() {
            titles.push(lower(&title));
        }
    }
    let creators = data.creators.iter().map(|c| lower(&c.full_name())).filter(|n| !n.is_empty()).collect();
    Haystack { titles, creators, year: year_of(data, schema) }
}

/// Every item's [`haystack`], for the index.
fn haystacks(lib: &Library) -> HashMap<Key, Haystack> {
    let schema = Schema::get();
    let title_fields = schema.fields_for_base("title");
    lib.items
        .values()
        .filter_map(|rec| derived::key(&rec.key).map(|k| (k, haystack(rec, schema, &title_fields))))
        .collect()
}

/// Quick search: every word must match a title, a note's title, a creator's name or the year; `everything`
/// also searches stored full text. `found` is the item's text from the index, when there is one; `words` are
/// each word as given and lowered.
fn matches_q(
    lib: &Library,
    rec: &ItemRecord,
    found: Option<&Haystack>,
    words: &[(String, String)],
    everything: bool,
) -> bool {
    let own;
    let hay = match found {
        Some(hay) => hay,
        None => {
            let schema = Schema::get();
            own = haystack(rec, schema, &schema.fields_for_base("title"));
            &own
        }
    };
    let fulltext = everything.then(|| lib.fulltext.get(&rec.key).map(|f| lower(&f.content))).flatten();
    words.iter().all(|(word, w)| {
        hay.titles.iter().any(|t| t.contains(w.as_str()))
            || hay.creators.iter().any(|c| c.contains(w.as_str()))
            || hay.year.as_deref() == Some(word.as_str())
            || fulltext.as_deref().is_some_and(|t| t.contains(w.as_str()))
    })
}

/// Whether the default order (`dateModified`, Zotero's default sort) is the one asked for.
fn by_date_modified(params: &Params) -> bool {
    matches!(params.sort.as_str(), "dateModified" | "serverDateModified")
}

/// The total and the page of a listing that filters nothing (`/items` or `/items/top` in the default order,
/// no trash, no `since`), read off the index without touching the items outside the page; `None` for any
/// other listing, which [`items`] selects.
pub fn unfiltered_page<'a>(
    lib: &'a Library,
    derived: Option<&Derived>,
    scope: &ItemScope,
    params: &Params,
) -> Option<(usize, Vec<&'a ItemRecord>)> {
    let derived = derived?;
    let unfiltered = params.q.trim().is_empty()
        && params.item_type.iter().all(|t| t.trim().is_empty())
        && params.tags.iter().all(|t| t.trim().is_empty())
        && params.item_keys.is_none()
        && !params.include_trashed
        && params.since.is_none()
        && by_date_modified(params);
    let keys = match scope {
        ItemScope::All if unfiltered => &derived.live,
        ItemScope::Top if unfiltered => &derived.live_top,
        _ => return None,
    };
    let total = keys.len();
    let start = (params.start as usize).min(total);
    let end = params.limit.map_or(total, |limit| start.saturating_add(limit as usize).min(total));
    let at = |i: usize| if params.is_desc() { total - 1 - i } else { i };
    let page = (start..end).filter_map(|i| lib.items.get(crate::derived::text(&keys[at(i)]))).collect();
    Some((total, page))
}

/// The order of `params.sort` over every item of `lib`, from the index (built on its first use in this state);
/// `None` without an index, or for `itemKeyList`, whose order is the request's own.
fn order_of(lib: &Library, derived: Option<&Derived>, params: &Params) -> Option<Arc<Order>> {
    let d = derived?;
    if params.sort == "itemKeyList" {
        return None;
    }
    d.order(&params.sort, || {
        let mut all: Vec<&ItemRecord> = lib.items.values().collect();
        sort_items(lib, &mut all, &Params { direction: "asc".into(), ..params.clone() });
        Order::of_sorted(lib, &all)
    })
}

/// The total and the page of a listing that selects by nothing but the trash and `since` (`/items`,
/// `/items/top`, `/items/trash`, in any order but `itemKeyList`): a walk along the order's entries, looking up
/// only the items on the page. A first fill's pages (`since=0`, sorted by `dateAdded`) are such listings.
/// `None` for any other listing, which [`items`] selects.
pub fn plain_page<'a>(
    lib: &'a Library,
    derived: Option<&Derived>,
    scope: &ItemScope,
    params: &Params,
) -> Option<(usize, Vec<&'a ItemRecord>)> {
    let plain = search_words(&params.q).is_empty()
        && search_sets(&params.item_type).is_empty()
        && search_sets(&params.tags).is_empty()
        && params.item_keys.is_none();
    if !plain || !matches!(scope, ItemScope::All | ItemScope::Top | ItemScope::Trash) {
        return None;
    }
    // A few changes since a recent version: selecting them by version and sorting those is cheaper than a walk
    // (and than building an order for them).
    if let (Some(d), Some(since)) = (derived, params.since) {
        let changed = d.by_version.len() - d.by_version.partition_point(|(v, _)| *v <= since);
        if changed.saturating_mul(16) < d.by_version.len() {
            return None;
        }
    }
    let order = order_of(lib, derived, params)?;
    if matches!(scope, ItemScope::Top) && !order.tops_exact {
        return None;
    }
    let selected = |e: &&derived::Entry| {
        params.since.is_none_or(|since| e.version > since)
            && match scope {
                ItemScope::Trash => e.deleted,
                ItemScope::Top => e.top && (params.include_trashed || !e.deleted),
                _ => params.include_trashed || !e.deleted,
            }
    };
    let total = order.entries.iter().filter(selected).count();
    let start = usize::try_from(params.start).unwrap_or(usize::MAX);
    let limit = params.limit.map_or(usize::MAX, |l| usize::try_from(l).unwrap_or(usize::MAX));
    let keys: Vec<Key> = if params.is_desc() {
        order.entries.iter().rev().filter(selected).skip(start).take(limit).map(|e| e.key).collect()
    } else {
        order.entries.iter().filter(selected).skip(start).take(limit).map(|e| e.key).collect()
    };
    let page = keys.iter().filter_map(|k| lib.items.get(derived::text(k))).collect();
    Some((total, page))
}

/// Items for a listing request, filtered and sorted (pagination is the caller's).
pub fn items<'a>(lib: &'a Library, scope: &ItemScope, params: &Params) -> ApiResult<Vec<&'a ItemRecord>> {
    items_with(lib, crate::derived::of(lib).as_ref().as_ref(), scope, params)
}

/// [`items`] with the library's index at hand: `itemKey` looks its keys up, `since` reads only the items
/// changed after it (where the request's other filters allow), and the default order comes from the index
/// instead of comparing dates.
pub fn items_with<'a>(
    lib: &'a Library,
    derived: Option<&Derived>,
    scope: &ItemScope,
    params: &Params,
) -> ApiResult<Vec<&'a ItemRecord>> {
    let schema = Schema::get();
    // itemType: one parameter, possibly negated, with `||` alternatives.
    let type_sets = search_sets(&params.item_type);
    if type_sets.len() > 1 {
        return Err(ApiError::bad_request("Cannot specify 'itemType' more than once"));
    }
    if let Some(set) = type_sets.first() {
        for t in &set.values {
            if schema.item_type(t).is_none() {
                return Err(ApiError::bad_request(format!("Invalid itemType '{t}'")));
            }
        }
    }
    let tag_sets = search_sets(&params.tags);
    let tag_negation = tag_sets.iter().any(|s| s.negated);
    let words: Vec<(String, String)> = search_words(&params.q)
        .into_iter()
        .map(|w| {
            let lowered = lower(&w);
            (w, lowered)
        })
        .collect();
    let everything = params.qmode == "everything";
    let only_top = scope.only_top();
    let trash_only = matches!(scope, ItemScope::Trash);
    let include_trashed = params.include_trashed || trash_only;

    // A top-level item is selected for a match among its children: reading only changed items is exact there
    // when nothing but `since` filters, for the item itself then matches whenever it changed.
    let match_filters = !words.is_empty() || !type_sets.is_empty() || !tag_sets.is_empty();
    let keyed = matches!(scope, ItemScope::All | ItemScope::Top | ItemScope::Trash);
    let changed_only = match (scope, derived) {
        (ItemScope::All | ItemScope::Trash, Some(d)) => params.since.map(|s| (s, d)),
        (ItemScope::Top, Some(d)) if !match_filters => params.since.map(|s| (s, d)),
        _ => None,
    };
    let candidates: Vec<&ItemRecord> = match (scope, &params.item_keys, changed_only) {
        (_, Some(keys), _) if keyed => {
            let mut unique: Vec<&str> = keys.iter().map(String::as_str).collect();
            unique.sort_unstable();
            unique.dedup();
            unique.into_iter().filter_map(|k| lib.items.get(k)).filter(|r| !trash_only || r.data.deleted).collect()
        }
        (_, _, Some((since, d))) => {
            let first = d.by_version.partition_point(|(v, _)| *v <= since);
            d.by_version[first..]
                .iter()
                .filter_map(|(_, k)| lib.items.get(crate::derived::text(k)))
                .filter(|r| !trash_only || r.data.deleted)
                .collect()
        }
        (ItemScope::All | ItemScope::Top, _, _) => lib.items.values().collect(),
        (ItemScope::Trash, _, _) => lib.items.values().filter(|r| r.data.deleted).collect(),
        (ItemScope::Children(key), _, _) if derived.is_some() => {
            let members = derived.map(|d| d.members(lib));
            let children = members.zip(derived::key(key)).and_then(|(m, k)| m.children.get(&k));
            children.into_iter().flatten().filter_map(|k| lib.items.get(derived::text(k))).collect()
        }
        (ItemScope::Collection { key, top }, _, _) if derived.is_some() => {
            let members = derived.map(|d| d.members(lib));
            let filed = members.zip(derived::key(key)).and_then(|(m, k)| m.in_collection.get(&k));
            let mut keys: BTreeSet<&str> = filed.into_iter().flatten().map(derived::text).collect();
            if !*top {
                let children = filed
                    .into_iter()
                    .flatten()
                    .filter_map(|k| members.and_then(|m| m.children.get(k)))
                    .flatten()
                    .map(derived::text)
                    .filter(|k| {
                        lib.items.get(*k).is_some_and(|r| matches!(r.data.item_type.as_str(), "note" | "attachment"))
                    });
                keys.extend(children.collect::<Vec<_>>());
            }
            keys.into_iter().filter_map(|k| lib.items.get(k)).collect()
        }
        (ItemScope::Children(key), _, _) => {
            lib.items.values().filter(|r| r.data.parent.as_deref() == Some(key)).collect()
        }
        (ItemScope::Collection { key, top }, _, _) => {
            let members: BTreeSet<&str> = lib
                .items
                .values()
                .filter(|r| r.data.collections.iter().any(|c| c == key))
                .map(|r| r.key.as_str())
                .collect();
            lib.items
                .values()
                .filter(|r| {
                    members.contains(r.key.as_str())
                        || (!top
                            && matches!(r.data.item_type.as_str(), "note" | "attachment")
                            && r.data.parent.as_deref().is_some_and(|p| members.contains(p)))
                })
                .collect()
        }
    };

    let hays = match (words.is_empty(), derived) {
        (false, Some(d)) => Some(d.haystacks(|| haystacks(lib))),
        _ => None,
    };
    let mut selected: Vec<&ItemRecord> = Vec::new();
    let mut seen = BTreeSet::new();
    for rec in candidates {
        let data = &rec.data;
        if !include_trashed && data.deleted {
            continue;
        }
        if !words.is_empty() {
            let found = hays.and_then(|h| derived::key(&rec.key).and_then(|k| h.get(&k)));
            if !matches_q(lib, rec, found, &words, everything) {
                continue;
            }
        }
        if let Some(set) = type_sets.first() {
            let hit = set.values.iter().any(|t| t == &data.item_type);
            if hit == set.negated || (set.negated && data.item_type == "annotation") {
                continue;
            }
        }
        if tag_sets.iter().any(|set| set.values.iter().any(|v| has_tag(data, v)) == set.negated) {
            continue;
        }
        if tag_negation && data.item_type == "annotation" {
            continue;
        }
        if let Some(keys) = &params.item_keys {
            if !keys.iter().any(|k| k == &rec.key) {
                continue;
            }
        }
        let target = if only_top { lib.top_level(rec) } else { rec };
        if only_top && !include_trashed && target.data.deleted {
            continue;
        }
        if params.since.is_some_and(|s| target.version <= s) {
            continue;
        }
        if seen.insert(target.key.as_str()) {
            selected.push(target);
        }
    }
    if let (true, Some(d)) = (by_date_modified(params), derived) {
        let mut ranked: Vec<(usize, &ItemRecord)> = selected.into_iter().map(|r| (d.rank_of(&r.key), r)).collect();
        ranked.sort_unstable_by_key(|(rank, _)| *rank);
        if params.is_desc() {
            ranked.reverse();
        }
        return Ok(ranked.into_iter().map(|(_, r)| r).collect());
    }
    // Another order kept in the index: positions compared, not values computed and compared. Worth building
    // only for a selection that is not already small.
    let order = if selected.len() > 200 { order_of(lib, derived, params) } else { None };
    if let Some(order) = order {
        let rank = |r: &ItemRecord| derived::key(&r.key).and_then(|k| order.rank.get(&k).copied()).unwrap_or(u32::MAX);
        let mut ranked: Vec<(u32, &ItemRecord)> = selected.into_iter().map(|r| (rank(r), r)).collect();
        ranked.sort_unstable_by_key(|(rank, _)| *rank);
        if params.is_desc() {
            ranked.reverse();
        }
        return Ok(ranked.into_iter().map(|(_, r)| r).collect());
    }
    sort_items(lib, &mut selected, params);
    Ok(selected)
}

/// Zotero's sort title: leading and trailing brackets and quotes stripped.
fn sort_title(title: &str) -> String {
    const LEAD: &[char] = &['[', '(', '{', '-', '"', '\'', '“', '‘', ' '];
    const TRAIL: &[char] = &[']', ')', '}', '-', '"', '\'', '”', '’', ' '];
    lower(title.trim_start_matches(LEAD).trim_end_matches(TRAIL))
}

/// The sort value of an item, and whether empty values sort first (Zotero's `emptyFirst`).
fn sort_value(lib: &Library, rec: &ItemRecord, sort: &str, params: &Params) -> (String, bool) {
    let schema = Schema::get();
    let data = &rec.data;
    match sort {
        "dateAdded" => (data.date_added.clone(), false),
        "dateModified" | "serverDateModified" => (data.date_modified.clone(), false),
        "title" => (sort_title(&data.display_title(schema)), true),
        "creator" => (lower(&data.creator_summary(schema)), false),
        "itemType" => (lower(&schema.type_label(&data.item_type)), false),
        "date" => {
            let date = data.date(schema);
            (if date.is_empty() { String::new() } else { dates::parse_date(&date).sql() }, true)
        }
        "addedBy" => match (&rec.created_by, lib.is_user()) {
            (Some((_, username)), false) => (lower(username), false),
            _ => (data.date_added.clone(), false),
        },
        "itemKeyList" => {
            let pos = params.item_keys.as_ref().and_then(|k| k.iter().position(|x| x == &rec.key)).unwrap_or(0);
            (format!("{pos:08}"), true)
        }
        field => {
            let value = match schema.item_type(&data.item_type).and_then(|t| t.field_for_base(field)) {
                Some(f) => data.field(f).to_string(),
                None => data.field(field).to_string(),
            };
            (lower(&value), false)
        }
    }
}

fn sort_items(lib: &Library, items: &mut [&ItemRecord], params: &Params) {
    let mut keyed: Vec<((bool, String), u64, u64, usize)> = items
        .iter()
        .enumerate()
        .map(|(i, rec)| {
            let (value, empty_first) = sort_value(lib, rec, &params.sort, params);
            let empty_last_flag = !empty_first && value.is_empty();
            ((empty_last_flag, value), rec.version, rec.seq, i)
        })
        .collect();
    keyed.sort_by(|a, b| {
        let ord = a.0.cmp(&b.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2));
        if params.is_desc() {
            ord.reverse()
        } else {
            ord
        }
    });
    let original: Vec<&ItemRecord> = items.to_vec();
    for (slot, k) in items.iter_mut().zip(keyed) {
        *slot = original[k.3];
    }
}

/// Which collections a listing starts from.
#[derive(Debug, Clone)]
pub enum CollectionScope {
    All,
    Top,
    Sub(String),
}

pub fn collections<'a>(lib: &'a Library, scope: &CollectionScope, params: &Params) -> Vec<&'a CollectionRecord> {
    let q = lower(&params.q);
    let out: Vec<&CollectionRecord> = lib
        .collections
        .values()
        .filter(|c| match scope {
            CollectionScope::All => true,
            CollectionScope::Top => c.data.parent.is_none(),
            CollectionScope::Sub(k) => c.data.parent.as_deref() == Some(k),
        })
        .filter(|c| params.collection_keys.as_ref().is_none_or(|keys| keys.contains(&c.key)))
        .filter(|c| q.is_empty() || contains_ci(&c.data.name, &q))
        .filter(|c| params.since.is_none_or(|s| c.version > s))
        .collect();
    let value = |c: &CollectionRecord| -> String {
        match params.sort.as_str() {
            "title" => lower(&c.data.name),
            "dateAdded" => c.date_added.clone(),
            "collectionKeyList" => {
                let pos = params.collection_keys.as_ref().and_then(|k| k.iter().position(|x| x == &c.key)).unwrap_or(0);
                format!("{pos:08}")
            }
            _ => c.date_modified.clone(),
        }
    };
    // Each sort value computed once, not once per comparison.
    let mut keyed: Vec<(String, &CollectionRecord)> = out.into_iter().map(|c| (value(c), c)).collect();
    keyed.sort_by(|(va, a), (vb, b)| {
        let ord = va.cmp(vb).then(a.version.cmp(&b.version)).then(a.seq.cmp(&b.seq));
        if params.is_desc() {
            ord.reverse()
        } else {
            ord
        }
    });
    keyed.into_iter().map(|(_, c)| c).collect()
}

/// One entry of a tag listing.
#[derive(Debug, Clone)]
pub struct TagEntry<'a> {
    pub tag: &'a Tag,
    pub num_items: usize,
    pub version: u64,
    pub date_modified: &'a str,
}

/// Which tags a listing covers.
#[derive(Debug, Clone)]
pub enum TagScope {
    /// `/tags`
    All,
    /// Tags on a set of items (`/items/<key>/tags`, `/items/top/tags`, `/collections/<key>/items/tags`…).
    OnItems(BTreeSet<String>),
    /// `/collections/<key>/tags`: tags of the collection's items, counted within it.
    Collection(BTreeSet<String>),
}

/// How many items carry each tag, over `items`.
fn count_tags<'a>(items: impl Iterator<Item = &'a ItemRecord>) -> HashMap<&'a Tag, usize> {
    let mut counts: HashMap<&Tag, usize> = HashMap::new();
    for rec in items {
        for t in &rec.data.tags {
            *counts.entry(t).or_default() += 1;
        }
    }
    counts
}

/// The total and the page of `/tags` with no filter in its default order, read off the index; `None` for any
/// other tag listing, which [`tags`] selects and sorts.
pub fn unfiltered_tags_page<'a>(
    lib: &'a Library,
    derived: Option<&'a Derived>,
    scope: &TagScope,
    params: &Params,
) -> Option<(usize, Vec<TagEntry<'a>>)> {
    let d = derived?;
    let (ascending, descending) = d.tag_order.as_ref()?;
    let unfiltered = matches!(scope, TagScope::All)
        && !matches!(params.sort.as_str(), "title" | "numItems")
        && params.tags.is_empty()
        && params.q.is_empty()
        && search_sets(&params.tag_type).is_empty()
        && params.since.is_none();
    if !unfiltered {
        return None;
    }
    let order = if params.is_desc() { descending } else { ascending };
    let total = order.len();
    let start = (params.start as usize).min(total);
    let end = params.limit.map_or(total, |limit| start.saturating_add(limit as usize).min(total));
    let table: Vec<(&Tag, &TagMeta)> = lib.tags.iter().collect();
    let page = order[start..end]
        .iter()
        .filter_map(|&i| table.get(i as usize))
        .map(|(t, meta)| TagEntry {
            tag: t,
            num_items: d.tag_counts.get(*t).copied().unwrap_or(0),
            version: meta.version,
            date_modified: meta.date_modified.as_str(),
        })
        .collect();
    Some((total, page))
}

pub fn tags<'a>(
    lib: &'a Library,
    derived: Option<&'a Derived>,
    scope: &TagScope,
    params: &Params,
) -> Vec<TagEntry<'a>> {
    // Counts over the whole library (what Zotero reports even for scoped listings), from the index when there
    // is one; the scope's own counts from its items alone.
    let local: HashMap<&Tag, usize> = if derived.is_some() { HashMap::new() } else { count_tags(lib.items.values()) };
    let total = |t: &Tag| match derived {
        Some(d) => d.tag_counts.get(t).copied().unwrap_or(0),
        None => local.get(t).copied().unwrap_or(0),
    };
    let in_scope: Vec<(&Tag, usize)> = match (scope, derived) {
        (TagScope::All, Some(d)) => d.tag_counts.iter().map(|(t, n)| (t, *n)).collect(),
        (TagScope::All, None) => local.iter().map(|(t, n)| (*t, *n)).collect(),
        (TagScope::OnItems(keys) | TagScope::Collection(keys), _) => {
            count_tags(keys.iter().filter_map(|k| lib.items.get(k))).into_iter().collect()
        }
    };
    // Each tag's version and date: walking the tag table alongside beats looking each tag up in it, and the
    // table holds exactly the tags items carry (refresh_tags), which the lengths confirm.
    let with_meta: Vec<(&Tag, usize, Option<&TagMeta>)> = match (scope, derived) {
        (TagScope::All, Some(d)) if d.tag_counts.len() == lib.tags.len() => lib
            .tags
            .iter()
            .map(|(t, meta)| (t, d.tag_counts.get(t).copied().unwrap_or(0), Some(meta)))
            .filter(|(_, n, _)| *n > 0)
            .collect(),
        _ => in_scope.into_iter().map(|(t, n)| (t, n, lib.tags.get(t))).collect(),
    };
    let names: Vec<String> = params.tags.first().map(|t| t.split(" || ").map(lower).collect()).unwrap_or_default();
    let q = lower(&params.q);
    let type_sets = search_sets(&params.tag_type);
    // Each name lowered once, for the filters and the sort.
    let mut out: Vec<(Cow<'a, str>, TagEntry<'a>)> = with_meta
        .into_iter()
        .map(|(t, scoped_count, meta)| {
            // Most names are lowercase already: lowering them would only allocate a copy.
            let name = if t.name.chars().all(|c| c.is_lowercase() || !c.is_alphabetic()) {
                Cow::Borrowed(t.name.as_str())
            } else {
                Cow::Owned(lower(&t.name))
            };
            (name, t, scoped_count, meta)
        })
        .filter(|(name, _, _, _)| names.is_empty() || names.iter().any(|n| n == name))
        .filter(|(name, _, _, _)| {
            q.is_empty() || if params.qmode == "startswith" { name.starts_with(&q) } else { name.contains(&q) }
        })
        .filter(|(_, t, _, _)| {
            type_sets.iter().all(|set| set.values.iter().any(|v| v.trim() == t.kind.to_string()) != set.negated)
        })
        .map(|(name, t, scoped_count, meta)| {
            let entry = TagEntry {
                tag: t,
                num_items: match scope {
                    TagScope::Collection(_) => scoped_count,
                    _ => total(t),
                },
                version: meta.map_or(0, |m| m.version),
                date_modified: meta.map_or("", |m| m.date_modified.as_str()),
            };
            (name, entry)
        })
        .filter(|(_, e)| params.since.is_none_or(|s| e.version > s))
        .collect();
    out.sort_unstable_by(|(an, a), (bn, b)| {
        let name = an.cmp(bn).then(a.tag.kind.cmp(&b.tag.kind));
        let ord = match params.sort.as_str() {
            "title" => name,
            "numItems" => a.num_items.cmp(&b.num_items).then(name),
            _ => a.date_modified.cmp(b.date_modified).then(a.version.cmp(&b.version)).then(name),
        };
        let ord = if params.is_desc() { ord.reverse() } else { ord };
        // Ties keep the tags' own order, whichever the direction, as a stable sort of the tag table did.
        ord.then_with(|| a.tag.cmp(b.tag))
    });
    out.into_iter().map(|(_, e)| e).collect()
}

/// Applies `start` and `limit`.
pub fn page<T: Clone>(all: &[T], params: &Params) -> Vec<T> {
    let start = (params.start as usize).min(all.len());
    let end = match params.limit {
        Some(limit) => start.saturating_add(limit as usize).min(all.len()),
        None => all.len(),
    };
    all[start..end].to_vec()
}
