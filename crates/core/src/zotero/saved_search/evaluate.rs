//! Running a plan: read a superset of the results from the API, within the bounds, then decide every item
//! locally, the way Zotero's `search.js` does, and group what matched as Zotero's items list shows it.

use serde_json::Value;

use super::error::SavedSearchError;
use super::family::{holds, keys_of, parent_key, CollectionTree, Family, KeySets};
use super::fulltext::{self, API_FULLTEXT_HITS};
use super::plan::{Narrowing, SearchPlan};
use super::reader::{EvaluationLimits, LocalItems, Reader, Source};
use super::rule::{Context, Rule, Test};
use crate::zotero::{ObjectKey, Query, ZoteroClient, ZoteroObject, PAGE_LIMIT};

/// A top-level item as Zotero's items list shows it for a saved search: matched itself, or shown (greyed out in
/// Zotero) only because some of its notes, attachments or annotations matched, which are listed under it.
#[derive(Debug, Clone, PartialEq)]
pub struct ResultRow {
    pub item: ZoteroObject,
    /// Whether the item itself matched.
    pub matched: bool,
    /// Its notes, attachments and annotations that matched, newest change first.
    pub children: Vec<ZoteroObject>,
}

/// What a saved search found.
#[derive(Debug, Clone, PartialEq)]
pub struct Evaluated {
    /// One row per top-level item that matched or holds a match, most recently modified first (the library
    /// listing's order), ties by key.
    pub rows: Vec<ResultRow>,
    /// Items read to decide: the candidates the API returned and the parents read for context.
    pub scanned: usize,
    /// Requests made to Zotero.
    pub requests: usize,
    /// Attachments whose full text was read for a full-text condition.
    pub fulltext_reads: usize,
}

impl Evaluated {
    /// The keys of every item that matched, in row order (a row's own key, when it matched, before its
    /// children's).
    pub fn matched_keys(&self) -> Vec<&str> {
        self.rows
            .iter()
            .flat_map(|row| {
                row.matched
                    .then_some(row.item.key.as_str())
                    .into_iter()
                    .chain(row.children.iter().map(|c| c.key.as_str()))
            })
            .collect()
    }

    /// How many items matched (rows that matched themselves, and matching children).
    pub fn matched_count(&self) -> usize {
        self.rows.iter().map(|row| usize::from(row.matched) + row.children.len()).sum()
    }
}

fn query_of(narrowing: &Narrowing) -> Query {
    let mut query = Query::new().include_trashed(narrowing.trashed);
    for (name, value) in &narrowing.params {
        query = query.param(name, value.clone());
    }
    if narrowing.no_annotations {
        query = query.item_type("-annotation");
    }
    query
}

fn modified(object: &ZoteroObject) -> &str {
    object.data.get("dateModified").and_then(Value::as_str).unwrap_or("")
}

/// The family's items (by number) most recently modified first, ties by key (the numbering's order): a counting
/// sort over the sorted distinct dates, since each `sort_by` of a new type adds kilobytes of wasm.
fn newest_first(family: &Family) -> Vec<usize> {
    let n = family.len();
    let mut stamps = Vec::with_capacity(n);
    for i in 0..n {
        stamps.push(modified(family.item(i)));
    }
    crate::sort::sort(&mut stamps);
    stamps.dedup();
    let m = stamps.len();
    let mut start = vec![0usize; m + 1];
    let mut bucket = Vec::with_capacity(n);
    for i in 0..n {
        // Newest first: the last distinct date is bucket 0.
        let b = m - 1 - stamps.binary_search(&modified(family.item(i))).unwrap_or(0);
        start[b + 1] += 1;
        bucket.push(b);
    }
    for b in 0..m {
        start[b + 1] += start[b];
    }
    let mut order = vec![0; n];
    for (i, &b) in bucket.iter().enumerate() {
        order[start[b]] = i;
        start[b] += 1;
    }
    order
}

/// The keys that are object keys (what the API can be asked for; the others name nothing it has).
fn object_keys(keys: &[String]) -> Vec<ObjectKey> {
    keys.iter().filter_map(|key| ObjectKey::parse(key).ok()).collect()
}

/// A listing of candidates: a collection's, or the library's (`None`), top-level items only or all.
struct Listed(Option<ObjectKey>, bool);

impl Listed {
    fn as_source(&self) -> Source<'_> {
        match &self.0 {
            Some(key) => Source::Collection { key, top: self.1 },
            None => Source::Library { top: self.1 },
        }
    }
}

/// The texts of the rules' tests of one kind (collections, full-text phrases), sorted, each once.
fn texts_of(rules: &[Rule], test: Test) -> Vec<String> {
    let mut texts = Vec::new();
    for rule in rules.iter().filter(|r| r.test == test) {
        texts.push(rule.value.clone());
    }
    crate::sort::sort(&mut texts);
    texts.dedup();
    texts
}

/// An evaluation between its reads: what was read and worked out so far. Kept in one place, and worked on by
/// plain functions, so that the `async` code (a state machine holding every value that lives across a read, all
/// of it inlined into the tool that awaits it) stays small in wasm.
struct Run<'p> {
    plan: &'p SearchPlan,
    now_ms: u64,
    narrowing: Narrowing,
    /// With `recursive` or `unfiled`: the library's collections.
    tree: Option<CollectionTree>,
    /// With `recursive`: each collection a condition names → it and its subcollections, at every depth.
    expanded: KeySets,
    family: Family,
    /// The attachments whose text may decide the full-text conditions.
    pool: Vec<String>,
    /// Each full-text phrase checked → the attachments that contain it.
    fulltext: KeySets,
}

impl<'p> Run<'p> {
    fn new(plan: &'p SearchPlan, now_ms: u64) -> Self {
        Self {
            plan,
            now_ms,
            narrowing: plan.narrowing(),
            tree: None,
            expanded: Vec::new(),
            family: Family::default(),
            pool: Vec::new(),
            fulltext: Vec::new(),
        }
    }

    /// Whether the collection tree is needed: `recursive` with a collection condition, or `unfiled`.
    fn needs_collections(&self) -> bool {
        let plan = self.plan;
        plan.flags.unfiled || (plan.flags.recursive && plan.rules.iter().any(|r| r.test == Test::Collection))
    }

    /// Takes the library's collections: the tree, and each recursive collection condition's subcollections.
    fn take_collections(&mut self, collections: Vec<ZoteroObject>) {
        let tree = CollectionTree::new(collections);
        if self.plan.flags.recursive {
            let names = texts_of(&self.plan.rules, Test::Collection);
            for name in names {
                let keys = tree.with_descendants(&name);
                self.expanded.push((name, keys));
            }
        }
        self.tree = Some(tree);
    }

    /// The listings the candidates come from: a collection's (and its subcollections' with `recursive`), or the
    /// library's.
    fn sources(&self) -> Vec<Listed> {
        let top = self.narrowing.top;
        match &self.narrowing.collection {
            Some(anchor) => match keys_of(&self.expanded, anchor.as_str()) {
                Some(keys) => object_keys(keys).into_iter().map(|key| Listed(Some(key), top)).collect(),
                None => vec![Listed(Some(anchor.clone()), top)],
            },
            None => vec![Listed(None, top)],
        }
    }

    /// Parents not read yet, which decide whether a child is in the trash and which row shows it.
    fn missing_parents(&mut self) -> Vec<ObjectKey> {
        self.family.link();
        object_keys(&self.family.missing_parents())
    }

    /// The full-text phrases to check, once every item is read.
    fn phrases(&mut self) -> Vec<String> {
        self.family.link();
        texts_of(&self.plan.rules, Test::FullText)
    }

    /// Takes the attachments with text (sorted): those whose text may decide a result, all of them or, in all
    /// mode without parents and children, those every other condition leaves in.
    fn take_keys_with_text(&mut self, with_text: &[String]) {
        let context = Context { collections: &self.expanded, fulltext: &[], now_ms: self.now_ms };
        self.pool = self.plan.pool(&self.family, self.tree.as_ref(), &context, with_text);
    }

    fn rows(&self) -> Vec<ResultRow> {
        let context = Context { collections: &self.expanded, fulltext: &self.fulltext, now_ms: self.now_ms };
        self.plan.decide(&self.family, self.tree.as_ref(), &context)
    }
}

impl SearchPlan {
    /// Runs the search over the library `zotero` reads. `now_ms` is the time relative dates ("in the last 7
    /// days", "today") count from. Fails, rather than answering from part of the library, when deciding needs
    /// more than `limits` allows.
    pub async fn evaluate(
        &self,
        zotero: &ZoteroClient,
        limits: &EvaluationLimits,
        now_ms: u64,
    ) -> Result<Evaluated, SavedSearchError> {
        self.evaluate_over(zotero, None, limits, now_ms).await
    }

    /// As [`Self::evaluate`], reading the items from `local` (the library mirror) where it can answer, and only
    /// full text from Zotero.
    pub async fn evaluate_over(
        &self,
        zotero: &ZoteroClient,
        local: Option<&dyn LocalItems>,
        limits: &EvaluationLimits,
        now_ms: u64,
    ) -> Result<Evaluated, SavedSearchError> {
        // Counted before anything is read: the conditions are known, and each costs every item read.
        self.check_size(limits)?;
        let mut reader = Reader::new(zotero, local, *limits, &self.name);
        let mut run = Run::new(self, now_ms);
        if run.needs_collections() {
            let query = Query::new().include_trashed(true);
            let (collections, _) = reader.listing(Source::Collections, &query, usize::MAX).await?;
            run.take_collections(collections);
        }
        // The candidates, then the parents not among them (an annotation's attachment, then its parent).
        let query = query_of(&run.narrowing);
        for listed in &run.sources() {
            let (items, _) = reader.listing(listed.as_source(), &query, usize::MAX).await?;
            run.family.add(items);
        }
        for _ in 0..2 {
            let missing = run.missing_parents();
            if missing.is_empty() {
                break;
            }
            let items = reader.by_keys(&missing).await?;
            run.family.add(items);
        }
        let phrases = run.phrases();
        if !phrases.is_empty() {
            let with_text = reader.keys_with_text().await?;
            run.take_keys_with_text(&with_text);
        }
        for phrase in phrases {
            // When there are more candidates than may be read, the API's own full-text search narrows them first;
            // when even that leaves too many, the condition is refused as too broad.
            let mut pool = run.pool.clone();
            if pool.len() > reader.fulltext_reads_left() {
                // Its first page, refused at the API's own cap, then the rest.
                let query = fulltext::query(&phrase);
                let mut found = Vec::new();
                for first in [true, false] {
                    let (query, cap) = if first {
                        (query.clone(), PAGE_LIMIT)
                    } else {
                        (query.clone().offset(found.len()), API_FULLTEXT_HITS)
                    };
                    let (more, total) = reader.listing(Source::Library { top: false }, &query, cap).await?;
                    found.extend(more);
                    if first && total >= API_FULLTEXT_HITS as u64 {
                        return Err(fulltext::too_broad(&reader, &phrase, format!("{total} or more")));
                    }
                    if found.len() as u64 >= total {
                        break;
                    }
                }
                fulltext::narrow(&mut pool, found);
                if pool.len() > reader.fulltext_reads_left() {
                    return Err(fulltext::too_broad(&reader, &phrase, pool.len().to_string()));
                }
            }
            let texts = reader.texts(&object_keys(&pool)).await?;
            let matches = fulltext::containing(texts, &phrase);
            run.fulltext.push((phrase, matches));
        }
        Ok(Evaluated {
            rows: run.rows(),
            scanned: reader.items,
            requests: reader.requests,
            fulltext_reads: reader.fulltext_reads,
        })
    }

    /// The attachments with text (`with_text`, sorted) whose full text may decide a result: all of them, or in
    /// all mode without parents and children those every other condition leaves in. Sorted.
    fn pool(
        &self,
        family: &Family,
        tree: Option<&CollectionTree>,
        context: &Context<'_>,
        with_text: &[String],
    ) -> Vec<String> {
        let prune = self.all_must_hold() && !self.flags.extends();
        let mut pool = Vec::new();
        for n in 0..family.len() {
            let item = family.item(n);
            let mut keep = item.item_type() == Some("attachment") && holds(with_text, &item.key);
            if keep && prune {
                keep = self.in_scope(family, tree, item);
                for rule in self.rules.iter().filter(|r| r.test != Test::FullText) {
                    keep = keep && passes(rule, item, rule.has(item, context));
                }
            }
            if keep {
                pool.push(item.key.clone());
            }
        }
        pool
    }

    /// Whether the flags let an item be a result at all: the trash, top-level only, unfiled, My Publications.
    fn in_scope(&self, family: &Family, tree: Option<&CollectionTree>, item: &ZoteroObject) -> bool {
        let f = &self.flags;
        if !f.include_deleted && family.in_trash(item) != f.deleted {
            return false;
        }
        let child = parent_key(item).is_some() || item.item_type() == Some("annotation");
        if (f.no_children || f.unfiled) && child {
            return false;
        }
        if f.unfiled && (tree.is_some_and(|t| t.files(item)) || in_publications(item)) {
            return false;
        }
        !f.publications || in_publications(item)
    }

    /// Which items match, grouped under their top-level items.
    pub(super) fn decide(
        &self,
        family: &Family,
        tree: Option<&CollectionTree>,
        context: &Context<'_>,
    ) -> Vec<ResultRow> {
        let n = family.len();
        let f = &self.flags;
        // Each condition's set of items having the value (with parents/children as the flags say), as Zotero
        // builds one `IN (…)` per condition: one flag per item, by number.
        let mut sets: Vec<Vec<bool>> = Vec::with_capacity(self.rules.len());
        for rule in &self.rules {
            let mut has = Vec::with_capacity(n);
            for i in 0..n {
                has.push(rule.has(family.item(i), context));
            }
            sets.push(if f.extends() { family.extend(has, f.include_parents, f.include_children) } else { has });
        }
        // Which items match, and the top-level item each sits under, which shows it in a row.
        let (mut matched, mut top, mut shown) = (vec![false; n], vec![0; n], vec![false; n]);
        for i in 0..n {
            let item = family.item(i);
            let passed = self.rules.iter().zip(&sets).filter(|(rule, set)| passes(rule, item, set[i])).count();
            let enough = if self.any && !self.rules.is_empty() { passed > 0 } else { passed == self.rules.len() };
            matched[i] = enough && self.in_scope(family, tree, item);
            top[i] = family.top_level(i);
            shown[top[i]] |= matched[i];
        }

        // One row per top-level item over a match, newest first, and under it the matching children, newest first.
        let order = newest_first(family);
        let mut row_of = vec![0; n];
        let mut rows: Vec<ResultRow> = Vec::new();
        for &i in order.iter().filter(|i| shown[**i]) {
            row_of[i] = rows.len();
            rows.push(ResultRow { item: family.item(i).clone(), matched: false, children: Vec::new() });
        }
        for &i in order.iter().filter(|i| matched[**i]) {
            let row = &mut rows[row_of[top[i]]];
            if top[i] == i {
                row.matched = true;
            } else {
                row.children.push(family.item(i).clone());
            }
        }
        rows
    }
}

/// Whether an item passes a rule, given whether it has the value: a negated rule takes what lacks it, but never
/// an annotation (Zotero leaves annotations out of every negated condition, full text aside: that one Zotero
/// applies after the query, to every item).
fn passes(rule: &Rule, item: &ZoteroObject, has: bool) -> bool {
    if !rule.negated {
        return has;
    }
    let annotation = item.item_type() == Some("annotation") && rule.test != Test::FullText;
    !has && !annotation
}

fn in_publications(item: &ZoteroObject) -> bool {
    item.data.get("inPublications").is_some_and(|v| v.as_bool().unwrap_or(false) || v.as_u64().unwrap_or(0) > 0)
}
