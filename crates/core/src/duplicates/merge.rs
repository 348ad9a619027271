//! Merging a group the way Zotero Desktop does (`Zotero.Items.merge`): the master keeps its key; the others'
//! notes and attachments move under it; it gains their tags, collections and relations, a `dc:replaces` relation
//! naming each of them (so links to a merged item still resolve), and the fields it lacks; the others go to the
//! trash. Desktop merges only items of one type, and so do we.
//!
//! The order is chosen so that a failure part-way leaves a library Zotero reads correctly, and the report says
//! exactly how far it got: children move first (a child under the master is fine whatever follows), then the
//! master is updated, and only when that succeeded are the others trashed. Nothing is retried: a 412 means
//! someone changed an item meanwhile, and the report asks for a fresh run.

use std::collections::BTreeSet;

use crate::join::join_all;
use serde_json::{json, Map, Value};

use super::group::is_candidate;
use crate::zotero::{ObjectKey, ObjectKind, ZoteroClient, ZoteroError, ZoteroObject, ZoteroWriter};

/// Children listed per merged item; a record with more is refused rather than half moved.
pub const MAX_CHILDREN: usize = 500;

/// Why a merge was refused before anything was written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MergeRefused {
    #[error("a merge needs at least two different items; give the key to keep first, then its duplicates")]
    TooFew,
    #[error("{key} is a {kind}, and only regular items are merged; give the keys of their parent items instead")]
    NotRegular { key: String, kind: String },
    #[error("{key} is in the trash; restore it in Zotero first, or leave it out")]
    Trashed { key: String },
    #[error(
        "{key} is a {kind} and {master} (the item to keep) a {master_kind}; Zotero merges only items of one type, \
         so change one item's type first or leave {key} out"
    )]
    MixedTypes { key: String, kind: String, master: String, master_kind: String },
}

/// A checked merge: the master and the items it absorbs.
#[derive(Debug, Clone, PartialEq)]
pub struct MergePlan {
    pub master: ZoteroObject,
    pub others: Vec<ZoteroObject>,
}

impl MergePlan {
    /// Checks `items` (master first) as Desktop would, before any write.
    pub fn new(items: Vec<ZoteroObject>) -> Result<Self, MergeRefused> {
        let mut seen = BTreeSet::new();
        let items: Vec<ZoteroObject> = items.into_iter().filter(|item| seen.insert(item.key.clone())).collect();
        if items.len() < 2 {
            return Err(MergeRefused::TooFew);
        }
        for item in &items {
            if item.is_trashed() {
                return Err(MergeRefused::Trashed { key: item.key.clone() });
            }
            if !is_candidate(item) {
                let kind = item.item_type().unwrap_or("non-item").to_owned();
                return Err(MergeRefused::NotRegular { key: item.key.clone(), kind });
            }
        }
        let mut items = items.into_iter();
        let Some(master) = items.next() else { return Err(MergeRefused::TooFew) };
        let others: Vec<ZoteroObject> = items.collect();
        let master_kind = master.item_type().unwrap_or_default();
        if let Some(other) = others.iter().find(|other| other.item_type() != Some(master_kind)) {
            return Err(MergeRefused::MixedTypes {
                key: other.key.clone(),
                kind: other.item_type().unwrap_or_default().to_owned(),
                master: master.key.clone(),
                master_kind: master_kind.to_owned(),
            });
        }
        Ok(MergePlan { master, others })
    }

    /// The master's fields that are empty and that a duplicate fills (the first that has it wins), in the
    /// master's field order.
    pub fn gained_fields(&self) -> Map<String, Value> {
        let mut gained = Map::new();
        for (name, value) in &self.master.data {
            if !is_plain_field(name) || !is_empty(value) {
                continue;
            }
            if let Some(filled) = self.others.iter().filter_map(|other| other.data.get(name)).find(|v| !is_empty(v)) {
                gained.insert(name.clone(), filled.clone());
            }
        }
        gained
    }

    /// The master's new data: gained fields, the union of tags (a manual tag stays manual, as in Desktop) and
    /// of collections, and relations with a `dc:replaces` for each other item under `library_prefix`
    /// (`/users/1` or `/groups/2`: a group library's items are named by the group, upstream Q5).
    pub fn master_changes(&self, library_prefix: &str) -> Map<String, Value> {
        let mut changes = self.gained_fields();
        if list(&self.master, "creators").is_empty() {
            if let Some(other) = self.others.iter().find(|other| !list(other, "creators").is_empty()) {
                changes.insert("creators".into(), Value::Array(list(other, "creators")));
            }
        }

        let mut tags: Vec<Value> = list(&self.master, "tags");
        for other in &self.others {
            for tag in list(other, "tags") {
                let Some(name) = tag.get("tag").and_then(Value::as_str) else { continue };
                match tags.iter_mut().find(|known| known.get("tag").and_then(Value::as_str) == Some(name)) {
                    None => tags.push(tag.clone()),
                    Some(known) if tag_type(known) == 1 && tag_type(&tag) == 0 => *known = tag.clone(),
                    Some(_) => {}
                }
            }
        }
        changes.insert("tags".into(), Value::Array(tags));

        let mut collections: Vec<Value> = list(&self.master, "collections");
        for other in &self.others {
            for collection in list(other, "collections") {
                if !collections.contains(&collection) {
                    collections.push(collection);
                }
            }
        }
        changes.insert("collections".into(), Value::Array(collections));

        let master_uri = item_uri(library_prefix, &self.master.key);
        let mut relations: Map<String, Value> = Map::new();
        let sources = std::iter::once(&self.master).chain(&self.others);
        for item in sources {
            for (predicate, values) in relation_map(item) {
                for value in values {
                    // An item never relates to itself, and the others' relations to each other end with them.
                    let is_group_member = value == master_uri
                        || self.others.iter().any(|other| value == item_uri(library_prefix, &other.key));
                    if is_group_member && predicate != "dc:replaces" {
                        continue;
                    }
                    add_relation(&mut relations, &predicate, value);
                }
            }
        }
        for other in &self.others {
            add_relation(&mut relations, "dc:replaces", Value::String(item_uri(library_prefix, &other.key)));
        }
        changes.insert("relations".into(), Value::Object(relations));
        changes
    }
}

/// What a merge did, step by step.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MergeReport {
    pub master: String,
    /// Notes and attachments now under the master.
    pub moved_children: Vec<String>,
    /// Children that stayed where they were, with why.
    pub unmoved_children: Vec<(String, String)>,
    /// Fields the master gained (their names).
    pub gained_fields: Vec<String>,
    pub master_updated: bool,
    pub trashed: Vec<String>,
    /// Items not trashed, with why.
    pub not_trashed: Vec<(String, String)>,
    /// Why the merge stopped before the end, when it did; what the caller can do is in the message.
    pub stopped: Option<String>,
}

impl MergeReport {
    pub fn is_complete(&self) -> bool {
        self.stopped.is_none() && self.not_trashed.is_empty() && self.unmoved_children.is_empty()
    }
}

/// Carries out `plan` (see the module docs for the order). Every failure is reported, never returned: the
/// caller always learns how far the merge got.
pub async fn merge(client: &ZoteroClient, writer: &ZoteroWriter, plan: &MergePlan) -> MergeReport {
    let mut report = MergeReport { master: plan.master.key.clone(), ..MergeReport::default() };
    let prefix = match client.library_prefix().await {
        Ok(prefix) => prefix.to_owned(),
        Err(error) => {
            return stop(report, format!("the library could not be identified ({error}); nothing was changed"))
        }
    };

    // 1. Children of every other item, all read at once, then one batch write moving them all.
    let mut keys = Vec::with_capacity(plan.others.len());
    for other in &plan.others {
        match ObjectKey::parse(&other.key) {
            Ok(key) => keys.push(key),
            Err(error) => return stop(report, format!("{error}; nothing was changed")),
        }
    }
    let listed = join_all(keys.iter().map(|key| client.children(key, MAX_CHILDREN + 1))).await;
    let mut children: Vec<ZoteroObject> = Vec::new();
    for (other, listing) in plan.others.iter().zip(listed) {
        match listing {
            Ok(page) if page.items.len() > MAX_CHILDREN => {
                return stop(
                    report,
                    format!("{} has more than {MAX_CHILDREN} notes and attachments; merge it in Zotero itself. Nothing was changed", other.key),
                );
            }
            Ok(page) => children.extend(
                page.items.into_iter().filter(|child| matches!(child.item_type(), Some("note" | "attachment"))),
            ),
            Err(error) => {
                return stop(
                    report,
                    format!("the children of {} could not be listed ({error}); nothing was changed", other.key),
                );
            }
        }
    }
    if !children.is_empty() {
        let moves: Vec<Value> = children
            .iter()
            .map(|child| json!({"key": child.key, "version": child.version, "parentItem": plan.master.key}))
            .collect();
        match writer.write_objects(ObjectKind::Items, &moves).await {
            Ok(outcome) => {
                for (position, child) in children.iter().enumerate() {
                    if outcome.is_written(position) {
                        report.moved_children.push(child.key.clone());
                    } else {
                        let why = outcome
                            .failed
                            .get(&position)
                            .map(|failure| failure.message.clone())
                            .or_else(|| outcome.unknown.get(&position).map(|unknown| unknown.message.clone()))
                            .unwrap_or_else(|| "not sent after an earlier batch failed".into());
                        report.unmoved_children.push((child.key.clone(), why));
                    }
                }
            }
            // Its answer lost and not read back: the children may have moved, which is not "nothing changed".
            Err(error) if error.is_outcome_unknown() => {
                return stop(report, format!("whether the notes and attachments moved is unknown: {}", why(&error)));
            }
            Err(error) => {
                return stop(
                    report,
                    format!("no note or attachment could be moved ({}); nothing was changed", why(&error)),
                );
            }
        }
        if !report.unmoved_children.is_empty() {
            let message = "some notes or attachments could not be moved, so the master was not updated and nothing \
                           was trashed; every item is still readable in Zotero. Run the merge again: what moved \
                           stays moved";
            return stop(report, message.to_owned());
        }
    }

    // 2. The master, at the version read now (moving children may have touched it).
    let master_key = match ObjectKey::parse(&plan.master.key) {
        Ok(key) => key,
        Err(error) => return stop(report, error.to_string()),
    };
    let changes = plan.master_changes(&prefix);
    report.gained_fields = plan.gained_fields().keys().cloned().collect();
    let fresh = match client.items_by_keys(&keys_of(std::iter::once(&plan.master).chain(&plan.others))).await {
        Ok(items) => items,
        Err(error) => {
            return stop(report, after_children(format!("the items could not be read again ({})", why(&error))))
        }
    };
    let version_of = |key: &str| fresh.iter().find(|item| item.key == key).map(|item| item.version);
    let Some(master_version) = version_of(&plan.master.key) else {
        return stop(report, after_children(format!("{} is gone from the library", plan.master.key)));
    };
    if let Err(error) = writer.patch_item(&master_key, master_version, &Value::Object(changes)).await {
        return stop(report, after_children(format!("{} could not be updated ({})", plan.master.key, why(&error))));
    }
    report.master_updated = true;

    // 3. The others, into the trash, without their own merge history (the master carries it now).
    let trash: Vec<Value> = plan
        .others
        .iter()
        .filter_map(|other| {
            let version = version_of(&other.key)?;
            let mut change = json!({"key": other.key, "version": version, "deleted": 1});
            let relations = relation_map(other);
            if relations.iter().any(|(predicate, _)| predicate == "dc:replaces") {
                let kept: Map<String, Value> = relations
                    .into_iter()
                    .filter(|(predicate, _)| predicate != "dc:replaces")
                    .map(|(predicate, values)| (predicate, Value::Array(values)))
                    .collect();
                change["relations"] = Value::Object(kept);
            }
            Some(change)
        })
        .collect();
    for other in &plan.others {
        if version_of(&other.key).is_none() {
            report.not_trashed.push((other.key.clone(), "it is no longer in the library".into()));
        }
    }
    match writer.write_objects(ObjectKind::Items, &trash).await {
        Ok(outcome) => {
            for (position, change) in trash.iter().enumerate() {
                let key = change["key"].as_str().unwrap_or_default().to_owned();
                if outcome.is_written(position) {
                    report.trashed.push(key);
                } else {
                    let why = outcome
                        .failed
                        .get(&position)
                        .map(|f| f.message.clone())
                        .or_else(|| outcome.unknown.get(&position).map(|u| u.message.clone()))
                        .unwrap_or_else(|| "not sent".into());
                    report.not_trashed.push((key, why));
                }
            }
        }
        Err(error) => {
            let why = why(&error);
            for change in &trash {
                report.not_trashed.push((change["key"].as_str().unwrap_or_default().to_owned(), why.clone()));
            }
        }
    }
    if !report.not_trashed.is_empty() {
        report.stopped = Some(format!(
            "{} was updated, but {} could not be moved to the trash; move {} to the trash in Zotero (its notes and \
             files are already under {})",
            plan.master.key,
            report.not_trashed.iter().map(|(key, _)| key.as_str()).collect::<Vec<_>>().join(", "),
            if report.not_trashed.len() == 1 { "it" } else { "them" },
            plan.master.key,
        ));
    }
    report
}

fn stop(mut report: MergeReport, why: String) -> MergeReport {
    report.stopped = Some(why);
    report
}

fn after_children(why: String) -> String {
    format!(
        "{why}; the notes and attachments already moved stay under the master, nothing else was changed or \
         trashed. Run the merge again"
    )
}

fn why(error: &ZoteroError) -> String {
    match error {
        ZoteroError::Conflict { .. } => "an item changed in Zotero meanwhile".into(),
        other => other.to_string(),
    }
}

fn keys_of<'a>(items: impl Iterator<Item = &'a ZoteroObject>) -> Vec<ObjectKey> {
    items.filter_map(|item| ObjectKey::parse(&item.key).ok()).collect()
}

/// `http://zotero.org/users/1/items/ABCD2345`: how Zotero names an item in relations.
pub fn item_uri(library_prefix: &str, key: &str) -> String {
    format!("http://zotero.org{library_prefix}/items/{key}")
}

/// Fields merged by value: strings of the item's own fields, not bookkeeping or structure.
fn is_plain_field(name: &str) -> bool {
    !matches!(
        name,
        "key"
            | "version"
            | "itemType"
            | "dateAdded"
            | "dateModified"
            | "creators"
            | "tags"
            | "collections"
            | "relations"
            | "deleted"
            | "parentItem"
    )
}

fn is_empty(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::String(text) => text.trim().is_empty(),
        Value::Array(list) => list.is_empty(),
        Value::Object(map) => map.is_empty(),
        _ => false,
    }
}

fn list(item: &ZoteroObject, name: &str) -> Vec<Value> {
    item.data.get(name).and_then(Value::as_array).cloned().unwrap_or_default()
}

fn tag_type(tag: &Value) -> u64 {
    tag.get("type").and_then(Value::as_u64).unwrap_or(0)
}

/// An item's relations as predicate → values (Zotero prints one value as a string, several as an array).
fn relation_map(item: &ZoteroObject) -> Vec<(String, Vec<Value>)> {
    let mut out = Vec::new();
    if let Some(Value::Object(relations)) = item.data.get("relations") {
        for (predicate, values) in relations {
            let values: Vec<Value> = match values {
                Value::Array(list) => list.iter().filter(|v| v.is_string()).cloned().collect(),
                Value::String(_) => vec![values.clone()],
                _ => Vec::new(),
            };
            if !values.is_empty() {
                out.push((predicate.clone(), values));
            }
        }
    }
    out
}

fn add_relation(relations: &mut Map<String, Value>, predicate: &str, value: Value) {
    let entry = relations.entry(predicate.to_owned()).or_insert_with(|| Value::Array(Vec::new()));
    if let Value::Array(list) = entry {
        if !list.contains(&value) {
            list.push(value);
        }
    }
}
