//! Running a plan: read a superset of the results from the API, within the bounds, then decide every item
//! locally, the way Zotero's `search.js` does, and group what matched as Zotero's items list shows it.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::error::SavedSearchError;
use super::family::{parent_key, CollectionTree, Family};
use super::fulltext;
use super::plan::{Narrowing, SearchPlan};
use super::reader::{EvaluationLimits, Reader, Source};
use super::rule::{Context, Rule, Test};
use crate::zotero::{ObjectKey, Query, ZoteroClient, ZoteroObject};

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

fn newest_first(a: &ZoteroObject, b: &ZoteroObject) -> std::cmp::Ordering {
    modified(b).cmp(modified(a)).then_with(|| a.key.cmp(&b.key))
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
        let mut reader = Reader::new(zotero, *limits, &self.name);
        let narrowing = self.narrowing();
        let recursive_collections: BTreeSet<&str> = if self.flags.recursive {
            self.rules
                .iter()
                .filter_map(|r| match &r.test {
                    Test::Collection(key) => Some(key.as_str()),
                    _ => None,
                })
                .collect()
        } else {
            BTreeSet::new()
        };
        let tree = if !recursive_collections.is_empty() || self.flags.unfiled {
            let query = Query::new().include_trashed(true);
            let (collections, _) = reader.listing(Source::Collections, &query, usize::MAX).await?;
            Some(CollectionTree::new(&collections))
        } else {
            None
        };
        let expanded: BTreeMap<String, BTreeSet<String>> = match &tree {
            Some(tree) => recursive_collections.iter().map(|k| ((*k).to_owned(), tree.with_descendants(k))).collect(),
            None => BTreeMap::new(),
        };

        let family = self.read(&mut reader, &narrowing, &expanded).await?;
        let fulltext = self.read_fulltext(&mut reader, &family, tree.as_ref(), &expanded, now_ms).await?;
        let context = Context { collections: &expanded, fulltext: &fulltext, now_ms };
        let rows = self.decide(&family, tree.as_ref(), &context);
        Ok(Evaluated { rows, scanned: reader.items, requests: reader.requests, fulltext_reads: reader.fulltext_reads })
    }

    /// The candidates and their parents.
    async fn read(
        &self,
        reader: &mut Reader<'_>,
        narrowing: &Narrowing,
        expanded: &BTreeMap<String, BTreeSet<String>>,
    ) -> Result<Family, SavedSearchError> {
        let query = query_of(narrowing);
        let mut family = Family::default();
        match &narrowing.collection {
            Some(anchor) => {
                let keys =
                    expanded.get(anchor.as_str()).cloned().unwrap_or_else(|| BTreeSet::from([anchor.to_string()]));
                for key in keys.iter().filter_map(|k| ObjectKey::parse(k).ok()) {
                    let source = Source::Collection { key: &key, top: narrowing.top };
                    let (items, _) = reader.listing(source, &query, usize::MAX).await?;
                    items.into_iter().for_each(|i| family.insert(i));
                }
            }
            None => {
                let (items, _) = reader.listing(Source::Library { top: narrowing.top }, &query, usize::MAX).await?;
                items.into_iter().for_each(|i| family.insert(i));
            }
        }
        // Parents decide whether a child is in the trash and which row shows it: read those not among the
        // candidates (an annotation's attachment, then that attachment's parent).
        for _ in 0..2 {
            let missing: Vec<ObjectKey> =
                family.missing_parents().iter().filter_map(|k| ObjectKey::parse(k).ok()).collect();
            if missing.is_empty() {
                break;
            }
            reader.by_keys(&missing).await?.into_iter().for_each(|i| family.insert(i));
        }
        family.link();
        Ok(family)
    }

    /// Each full-text phrase → the attachments that contain it. In all mode (without parents and children), an
    /// attachment every other condition rules out is not read.
    async fn read_fulltext(
        &self,
        reader: &mut Reader<'_>,
        family: &Family,
        tree: Option<&CollectionTree>,
        expanded: &BTreeMap<String, BTreeSet<String>>,
        now_ms: u64,
    ) -> Result<BTreeMap<String, BTreeSet<String>>, SavedSearchError> {
        let phrases: BTreeSet<&str> = self
            .rules
            .iter()
            .filter_map(|r| match &r.test {
                Test::FullText(phrase) => Some(phrase.as_str()),
                _ => None,
            })
            .collect();
        let mut found = BTreeMap::new();
        if phrases.is_empty() {
            return Ok(found);
        }
        let with_text: BTreeSet<String> = reader.keys_with_text().await?.into_iter().collect();
        let none = BTreeMap::new();
        let context = Context { collections: expanded, fulltext: &none, now_ms };
        let prune = self.all_must_hold() && !self.flags.extends();
        let pool: BTreeSet<String> = family
            .items
            .values()
            .filter(|i| i.item_type() == Some("attachment") && with_text.contains(&i.key))
            .filter(|i| {
                !prune
                    || (self.in_scope(family, tree, i)
                        && self
                            .rules
                            .iter()
                            .filter(|r| !matches!(r.test, Test::FullText(_)))
                            .all(|r| passes(r, i, r.has(i, &context))))
            })
            .map(|i| i.key.clone())
            .collect();
        for phrase in phrases {
            let matches = fulltext::matching(reader, &self.name, phrase, pool.clone()).await?;
            found.insert(phrase.to_owned(), matches);
        }
        Ok(found)
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
        let extend = self.flags.extends();
        // Each condition's set of items having the value (with parents/children as the flags say), as Zotero
        // builds one `IN (…)` per condition.
        let sets: Vec<BTreeSet<String>> = self
            .rules
            .iter()
            .map(|rule| {
                let has: BTreeSet<String> =
                    family.items.values().filter(|i| rule.has(i, context)).map(|i| i.key.clone()).collect();
                if extend {
                    family.extend(has, self.flags.include_parents, self.flags.include_children)
                } else {
                    has
                }
            })
            .collect();
        let matched: Vec<&ZoteroObject> = family
            .items
            .values()
            .filter(|item| self.in_scope(family, tree, item))
            .filter(|item| {
                let mut verdicts =
                    self.rules.iter().zip(&sets).map(|(rule, set)| passes(rule, item, set.contains(&item.key)));
                if self.rules.is_empty() {
                    true
                } else if self.any {
                    verdicts.any(|v| v)
                } else {
                    verdicts.all(|v| v)
                }
            })
            .collect();

        let mut rows: BTreeMap<&str, ResultRow> = BTreeMap::new();
        for item in matched {
            let top = family.top_level(item);
            let row = rows.entry(top.key.as_str()).or_insert_with(|| ResultRow {
                item: top.clone(),
                matched: false,
                children: Vec::new(),
            });
            if top.key == item.key {
                row.matched = true;
            } else {
                row.children.push(item.clone());
            }
        }
        let mut rows: Vec<ResultRow> = rows.into_values().collect();
        for row in &mut rows {
            row.children.sort_by(newest_first);
        }
        rows.sort_by(|a, b| newest_first(&a.item, &b.item));
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
    let annotation = item.item_type() == Some("annotation") && !matches!(rule.test, Test::FullText(_));
    !has && !annotation
}

fn in_publications(item: &ZoteroObject) -> bool {
    item.data.get("inPublications").is_some_and(|v| v.as_bool().unwrap_or(false) || v.as_u64().unwrap_or(0) > 0)
}
