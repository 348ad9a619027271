//! Turning a journal entry back.
//!
//! Every restoring write is version-checked: an object is put back only if it is still exactly as the entry's
//! call left it (its version then). One changed since — by the person in Zotero, another device, or a later
//! call — is reported and left alone, never overwritten. The undo goes through the same writers as any write,
//! so it is journalled in turn and can itself be undone.
//!
//! An entry's changes are first folded per object (one call may change an object twice: its earliest earlier
//! state is the one to go back to), then undone newest first: what was created is deleted, what was changed
//! gets its earlier fields back, what was deleted for good is created again under its key (a parent before its
//! children), and files kept on WebDAV are put back once their attachment is.

use std::collections::{HashMap, HashSet};

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Map, Value};
use zotero_mcp_core::files::{FileAction, StoreKind};
use zotero_mcp_core::webdav::{WebDavError, WebDavWriter};
use zotero_mcp_core::zotero::journal::{recreated, restoring_patch, title_of, Change, Kind};
use zotero_mcp_core::zotero::{ObjectKey, Page, Query, ZoteroError, ZoteroObject, ZoteroWriter};

use super::Entry;

/// What became of one object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum Outcome {
    /// Its earlier fields are back.
    Restored,
    /// It was created by the call, and is deleted again.
    Removed,
    /// It was deleted for good by the call, and exists again under its key.
    Recreated,
    /// It changed after the call (or, deleted by it, exists again): left as it is.
    ChangedSince,
    /// Already as the undo would leave it (gone, or back as it was).
    AlreadyDone,
    /// Zotero refused the restoring write; the detail says why.
    Failed,
    /// The restoring write was sent, its answer was lost, and reading the object back failed too: it may or may
    /// not be restored. The entry stays undoable: undoing it again finds what is already back.
    Unknown,
}

/// One object of the entry and what the undo did with it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Undone {
    pub key: String,
    /// `item` or `collection`.
    pub kind: String,
    /// Its title (a note's first words, a collection's name) as the entry recorded it.
    pub title: String,
    pub outcome: Outcome,
    /// Why it was left alone or failed, or what else happened (a file put back).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// What an undo did, object by object, and what it could not do.
pub struct UndoReport {
    pub objects: Vec<Undone>,
    /// Sentences about files and limits (what cannot be put back, and why).
    pub notes: Vec<String>,
}

/// The net change of one object over the whole entry.
#[derive(Debug, Clone)]
enum Net {
    Created {
        version: u64,
    },
    Updated {
        version: u64,
        before: Map<String, Value>,
    },
    Deleted {
        data: Map<String, Value>,
    },
    /// Created and deleted by the same call: nothing to undo.
    Nothing,
    /// An order of changes the journal does not turn back (deleted, then created again under the same key).
    Unsupported,
}

struct Target {
    kind: Kind,
    key: String,
    title: String,
    net: Net,
}

/// Folds the entry's changes per object, in the order each object was first changed.
fn fold(changes: &[Change]) -> Vec<Target> {
    let mut targets: Vec<Target> = Vec::new();
    let mut index: HashMap<(Kind, String), usize> = HashMap::new();
    for change in changes {
        let id = (change.kind(), change.key().to_owned());
        let Some(&at) = index.get(&id) else {
            let net = match change {
                Change::Created { version, .. } => Net::Created { version: *version },
                Change::Updated { version, before, .. } => Net::Updated { version: *version, before: before.clone() },
                Change::Deleted { data, .. } => Net::Deleted { data: data.clone() },
            };
            index.insert(id, targets.len());
            targets.push(Target {
                kind: change.kind(),
                key: change.key().to_owned(),
                title: change.title().to_owned(),
                net,
            });
            continue;
        };
        let target = &mut targets[at];
        target.net = match (std::mem::replace(&mut target.net, Net::Nothing), change) {
            (Net::Created { .. }, Change::Updated { version, .. }) => Net::Created { version: *version },
            (Net::Created { .. }, Change::Deleted { .. }) => Net::Nothing,
            (Net::Updated { before: mut earliest, .. }, Change::Updated { version, before, .. }) => {
                for (field, value) in before {
                    earliest.entry(field.clone()).or_insert_with(|| value.clone());
                }
                Net::Updated { version: *version, before: earliest }
            }
            (Net::Updated { before: earliest, .. }, Change::Deleted { data, .. }) => {
                let mut data = data.clone();
                for (field, value) in earliest {
                    match value {
                        Value::Null => data.remove(&field),
                        value => data.insert(field, value),
                    };
                }
                Net::Deleted { data }
            }
            (Net::Nothing, _) => Net::Unsupported,
            _ => Net::Unsupported,
        };
    }
    targets
}

/// What undoing `entry` would delete for good: the objects its call created (and did not delete again), as
/// `(kind, key, title)`, in the entry's order. The undo asks before it deletes any.
pub fn removals(entry: &Entry) -> Vec<(&'static str, String, String)> {
    fold(&entry.changes)
        .into_iter()
        .filter(|t| matches!(t.net, Net::Created { .. }))
        .map(|t| (t.kind.name(), t.key, t.title))
        .collect()
}

/// Undoes `entry` through `writer` (and `dav`, where its files are kept).
pub async fn undo(entry: &Entry, writer: &ZoteroWriter, dav: Option<&WebDavWriter>) -> UndoReport {
    let targets = fold(&entry.changes);
    let created: HashSet<&str> =
        targets.iter().filter(|t| matches!(t.net, Net::Created { .. })).map(|t| t.key.as_str()).collect();
    let mut objects = Vec::new();
    // Newest first, runs of the same kind of step together (one batch request per run).
    let mut reversed: Vec<&Target> = targets.iter().rev().collect();
    while !reversed.is_empty() {
        let step = step_of(reversed[0]);
        let run = reversed.iter().take_while(|t| step_of(t) == step && t.kind == reversed[0].kind).count();
        let batch: Vec<&Target> = reversed.drain(..run).collect();
        match step {
            Step::Delete => objects.extend(delete_created(writer, &batch, &created).await),
            Step::Patch => objects.extend(restore_fields(writer, &batch).await),
            Step::Recreate => {
                // Parents before their children: a child's parent must exist when it is created.
                let (parents, children): (Vec<&Target>, Vec<&Target>) =
                    batch.into_iter().partition(|t| !matches!(&t.net, Net::Deleted { data } if has_parent(data)));
                objects.extend(recreate(writer, &parents).await);
                objects.extend(recreate(writer, &children).await);
            }
            Step::Skip => objects.extend(batch.into_iter().filter_map(skipped)),
        }
    }
    let mut notes = Vec::new();
    restore_files(entry, dav, &mut objects, &mut notes).await;
    notes.extend(entry.limits());
    UndoReport { objects, notes }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Delete,
    Patch,
    Recreate,
    Skip,
}

fn step_of(target: &Target) -> Step {
    match target.net {
        Net::Created { .. } => Step::Delete,
        Net::Updated { .. } => Step::Patch,
        Net::Deleted { .. } => Step::Recreate,
        Net::Nothing | Net::Unsupported => Step::Skip,
    }
}

fn has_parent(data: &Map<String, Value>) -> bool {
    data.get("parentItem").and_then(Value::as_str).is_some_and(|p| !p.is_empty())
}

fn undone(target: &Target, outcome: Outcome, detail: Option<String>) -> Undone {
    Undone {
        key: target.key.clone(),
        kind: target.kind.name().to_owned(),
        title: target.title.clone(),
        outcome,
        detail,
    }
}

fn skipped(target: &Target) -> Option<Undone> {
    match target.net {
        Net::Nothing => None,
        _ => Some(undone(
            target,
            Outcome::Failed,
            Some(
                "the call deleted it and created it again under the same key; the journal cannot turn that back".into(),
            ),
        )),
    }
}

const CHANGED_SINCE: &str =
    "it was changed after that call (in Zotero, on another device or by a later call), so it was \
                             left as it is; compare it with the entry's earlier state before changing it by hand";

/// Deletes what the call created, each only if it is still at the version the call left it with.
async fn delete_created(writer: &ZoteroWriter, batch: &[&Target], created: &HashSet<&str>) -> Vec<Undone> {
    // One read for the whole run (50 keys a request): the writer then knows each object as it is, and what
    // children it has, without a read per object. A failed read only costs those reads back.
    let keys: Vec<ObjectKey> = batch.iter().filter_map(|t| ObjectKey::parse(&t.key).ok()).collect();
    // Each item's `meta.numChildren` as read now; an item missing here (the read failed, or Zotero does not
    // count children for its type) has its children listed before it is deleted.
    let mut child_counts: HashMap<String, u64> = HashMap::new();
    match batch.first().map(|t| t.kind) {
        Some(Kind::Item) => {
            if let Ok(items) = writer.items_by_keys(&keys).await {
                for item in items {
                    if let Some(count) = item.meta.get("numChildren").and_then(Value::as_u64) {
                        child_counts.insert(item.key, count);
                    }
                }
            }
            // `numChildren` leaves out children in the trash, which Zotero deletes with their parent all the
            // same. A child added after the call, or trashed since, has a later version than the call left:
            // one listing of what changed since (the trash included) finds them; a parent of one is counted as
            // unknown. When that listing fails or is cut short, every item's children are listed instead.
            let since = batch
                .iter()
                .filter_map(|t| if let Net::Created { version } = t.net { Some(version) } else { None })
                .min();
            let query = Query::new().since(since.unwrap_or(0)).include_trashed(true);
            match writer.items(&query, CHANGED_SCANNED).await {
                Ok(page) if page.total_results.is_none_or(|total| total as usize <= page.items.len()) => {
                    for item in page.items.iter().filter(|item| is_trashed(&item.data)) {
                        if let Some(parent) = item.data.get("parentItem").and_then(Value::as_str) {
                            child_counts.remove(parent);
                        }
                    }
                }
                _ => child_counts.clear(),
            }
        }
        Some(Kind::Collection) => {
            for chunk in keys.chunks(zotero_mcp_core::zotero::BATCH_SIZE) {
                let joined = chunk.iter().map(ObjectKey::as_str).collect::<Vec<_>>().join(",");
                let query = Query::new().param("collectionKey", joined);
                let _ = writer.collections(&query, chunk.len()).await;
            }
        }
        None => {}
    }
    let mut done = Vec::new();
    for target in batch {
        let Net::Created { version } = target.net else { continue };
        let Ok(key) = ObjectKey::parse(&target.key) else {
            done.push(undone(target, Outcome::Failed, Some("the journal holds a malformed key".into())));
            continue;
        };
        if target.kind == Kind::Item && child_counts.get(&target.key) != Some(&0) {
            // Adding a note or a file to an item leaves the item's version as it was, so the version check
            // below would let Zotero delete them with it. The children the call created were deleted before
            // it (newest first); whatever is left is the person's, or changed since, and keeps the item.
            match writer.children_with_trashed(&key, CHILDREN_NAMED).await {
                Ok(children) if !children.items.is_empty() => {
                    done.push(kept_for_children(target, &children, created));
                    continue;
                }
                Ok(_) => {}
                // Zotero refuses to list the children of an attachment that cannot have any (one that is not a
                // PDF, EPUB or snapshot, such as a text file): nothing would go with it.
                Err(error) if error.status() == Some(400) => {}
                Err(error) if error.status() == Some(404) => {
                    done.push(undone(target, Outcome::AlreadyDone, Some("it is already gone".into())));
                    continue;
                }
                Err(error) => {
                    done.push(undone(
                        target,
                        Outcome::Failed,
                        Some(format!(
                            "its notes and attachments could not be listed ({error}), so it was not deleted (they \
                             would have gone with it); delete it by hand with zotero_delete_items once you have \
                             checked them"
                        )),
                    ));
                    continue;
                }
            }
        }
        let result = match target.kind {
            // Its children, trashed ones included, were found to be none just above.
            Kind::Item => writer.delete_childless_item(&key, version).await,
            Kind::Collection => writer.delete_collection(&key, version).await,
        };
        done.push(match result {
            Ok(_) => undone(target, Outcome::Removed, None),
            Err(error) => refused(target, &error),
        });
    }
    done
}

/// The most objects changed since a run of creations read to find children in the trash; beyond it, each
/// item's children are listed one by one.
const CHANGED_SCANNED: usize = 100;

/// Zotero writes `deleted` as `1` or `true`.
fn is_trashed(data: &Map<String, Value>) -> bool {
    let deleted = data.get("deleted");
    deleted == Some(&Value::Bool(true)) || deleted.and_then(Value::as_u64) == Some(1)
}

/// How many of an item's remaining children are named when it is kept for them (the rest are counted).
const CHILDREN_NAMED: usize = 10;

/// An item the call created, left in place because it has children now: deleting it would delete them too.
fn kept_for_children(target: &Target, children: &Page<ZoteroObject>, created: &HashSet<&str>) -> Undone {
    let total = children.total_results.map_or(children.items.len(), |n| n as usize).max(children.items.len());
    let mut named: Vec<String> = children
        .items
        .iter()
        .map(|child| {
            let whose =
                if created.contains(child.key.as_str()) { ", made by that change but changed since" } else { "" };
            let trashed = if is_trashed(&child.data) { ", in the trash" } else { "" };
            format!("\u{201c}{}\u{201d} ({}{whose}{trashed})", title_of(&child.data), child.key)
        })
        .collect();
    if total > named.len() {
        named.push(format!("and {} more", total - named.len()));
    }
    undone(
        target,
        Outcome::ChangedSince,
        Some(format!(
            "it has {total} note(s) or attachment(s) that this undo did not remove: {}. Deleting it would delete \
             them with it, so it was left as it is. To remove it anyway, move what you want to keep to another item \
             (zotero_update_item with parentItem) and delete it with zotero_delete_items",
            named.join(", ")
        )),
    )
}

/// What a refused single-object write means for the undo.
fn refused(target: &Target, error: &ZoteroError) -> Undone {
    match error.status() {
        Some(412) => undone(target, Outcome::ChangedSince, Some(CHANGED_SINCE.into())),
        Some(404) => undone(target, Outcome::AlreadyDone, Some("it is already gone".into())),
        _ => undone(target, Outcome::Failed, Some(error.to_string())),
    }
}

/// Writes the earlier fields back, in one batch per 50, each object only if still at its version.
async fn restore_fields(writer: &ZoteroWriter, batch: &[&Target]) -> Vec<Undone> {
    let payloads: Vec<Value> = batch
        .iter()
        .filter_map(|target| match &target.net {
            Net::Updated { version, before } => {
                let mut patch = restoring_patch(before);
                patch.insert("key".into(), Value::String(target.key.clone()));
                patch.insert("version".into(), Value::from(*version));
                Some(Value::Object(patch))
            }
            _ => None,
        })
        .collect();
    batch_write(writer, batch, &payloads, Outcome::Restored, CHANGED_SINCE).await
}

/// Creates again, under their keys, the objects the call deleted for good.
async fn recreate(writer: &ZoteroWriter, batch: &[&Target]) -> Vec<Undone> {
    if batch.is_empty() {
        return Vec::new();
    }
    let payloads: Vec<Value> = batch
        .iter()
        .filter_map(|target| match &target.net {
            Net::Deleted { data } => Some(recreated(&target.key, data)),
            _ => None,
        })
        .collect();
    batch_write(
        writer,
        batch,
        &payloads,
        Outcome::Recreated,
        "an object with its key exists again, so it was left as it is",
    )
    .await
}

async fn batch_write(
    writer: &ZoteroWriter,
    batch: &[&Target],
    payloads: &[Value],
    success: Outcome,
    stale: &str,
) -> Vec<Undone> {
    let Some(kind) = batch.first().map(|t| t.kind.object_kind()) else { return Vec::new() };
    let outcome = match writer.write_objects(kind, payloads).await {
        Ok(outcome) => outcome,
        Err(error) => {
            // Sent, its answer lost and not read back: whether it landed is not known, which is not a refusal.
            let outcome = match error {
                zotero_mcp_core::zotero::ZoteroError::OutcomeUnknown { .. } => Outcome::Unknown,
                _ => Outcome::Failed,
            };
            return batch.iter().map(|target| undone(target, outcome, Some(error.to_string()))).collect();
        }
    };
    batch
        .iter()
        .enumerate()
        .map(|(position, target)| {
            if outcome.success.contains_key(&position) {
                undone(target, success, None)
            } else if outcome.unchanged.contains_key(&position) {
                undone(target, Outcome::AlreadyDone, Some("it was already as it had been".into()))
            } else if let Some(unknown) = outcome.unknown.get(&position) {
                undone(target, Outcome::Unknown, Some(unknown.message.clone()))
            } else if let Some(failure) = outcome.failed.get(&position) {
                match failure.code {
                    412 => undone(target, Outcome::ChangedSince, Some(stale.to_owned())),
                    code => undone(
                        target,
                        Outcome::Failed,
                        Some(format!("Zotero refused it ({code}: {})", failure.message)),
                    ),
                }
            } else {
                undone(target, Outcome::Failed, Some("not sent: an earlier request of the undo failed".into()))
            }
        })
        .collect()
}

/// Puts back the files the call replaced or removed, where they were kept and their attachment was undone.
async fn restore_files(entry: &Entry, dav: Option<&WebDavWriter>, objects: &mut [Undone], notes: &mut Vec<String>) {
    for file in entry.files.iter().rev() {
        if file.store != StoreKind::WebDav || !(file.kept || file.action == FileAction::Created) {
            // Zotero Storage and Zotero Desktop keep no earlier file: the entry's limits say so.
            continue;
        }
        let attachment = objects.iter_mut().find(|o| o.key == file.key && o.kind == "item");
        let Ok(key) = ObjectKey::parse(&file.key) else {
            notes.push(format!("The journal names a file by a malformed key ({}); it was left alone.", file.key));
            continue;
        };
        if file.action == FileAction::Created {
            remove_created_file(dav, &key, attachment, notes).await;
            continue;
        }
        if let Some(attachment) = &attachment {
            if !matches!(attachment.outcome, Outcome::Restored | Outcome::Recreated | Outcome::AlreadyDone) {
                notes.push(format!("The earlier file of {} was left where it is kept, like its attachment.", file.key));
                continue;
            }
        }
        let Some(dav) = dav else {
            notes.push(format!(
                "The earlier file of {} is kept on WebDAV, but WebDAV is not this library's store now; it was not put back.",
                file.key
            ));
            continue;
        };
        if let Some(left) = &file.left {
            // The item's version guards its fields, not the file: another WebDAV client, or an upload whose item
            // update never came, changes the file alone. Put back only over the file this change left.
            match dav.get_prop(&key).await {
                Ok(Some(now)) if now.md5 != *left => {
                    notes.push(format!(
                        "The file of {} changed since (WebDAV now holds md5 {}, not the {} this change stored): it \
                         was left as it is, and the earlier file stays kept until the entry expires.",
                        file.key, now.md5, left
                    ));
                    continue;
                }
                Ok(_) => {}
                Err(error) => {
                    notes.push(format!(
                        "The file of {} was not put back: whether it changed since could not be read ({error}).",
                        file.key
                    ));
                    continue;
                }
            }
        }
        let what = match file.action {
            FileAction::Replaced | FileAction::Created => "the earlier file",
            FileAction::Removed => "the file",
        };
        match dav.restore_kept(&key, &entry.id).await {
            Ok(true) => match attachment {
                Some(attachment) => attachment.detail = Some(format!("{what} is back on WebDAV")),
                None => notes.push(format!("{what} of {} is back on WebDAV.", file.key)),
            },
            Ok(false) => {
                notes.push(format!("The kept copy of the file of {} is gone; the file was not put back.", file.key))
            }
            // The archive and its .prop disagree: the tool that stores the file again is named here, not in core.
            Err(error @ WebDavError::HalfRestored { .. }) => notes.push(format!(
                "The file of {key} could not be put back ({error}): call zotero_put_attachment with \
                 replaceAttachmentKey={key} and the file.",
                key = file.key
            )),
            Err(error) => notes.push(format!("The file of {} could not be put back ({error}).", file.key)),
        }
    }
}

/// The file of an attachment the entry's call created: it goes once its item is gone (nothing would refer to
/// it), and stays with an item that stays.
async fn remove_created_file(
    dav: Option<&WebDavWriter>,
    key: &ObjectKey,
    attachment: Option<&mut Undone>,
    notes: &mut Vec<String>,
) {
    let gone = attachment.as_ref().is_none_or(|a| matches!(a.outcome, Outcome::Removed | Outcome::AlreadyDone));
    if !gone {
        return;
    }
    let Some(dav) = dav else {
        notes.push(format!(
            "The file of {key} stays on WebDAV, which is not this library's store now; Zotero Desktop's \
             \"Purge Orphaned Attachment Files\" removes it."
        ));
        return;
    };
    match (dav.discard(key).await, attachment) {
        (Ok(()), Some(attachment)) => attachment.detail = Some("its file is gone from WebDAV too".into()),
        (Ok(()), None) => {}
        (Err(error), _) => notes.push(format!(
            "The file of {key} could not be removed from WebDAV ({error}); no item refers to it, and Zotero \
             Desktop's \"Purge Orphaned Attachment Files\" removes it."
        )),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn map(value: Value) -> Map<String, Value> {
        value.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn an_object_changed_twice_goes_back_to_its_first_state() {
        let changes = vec![
            Change::Updated {
                kind: Kind::Item,
                key: "AAAA2222".into(),
                version: 5,
                title: "T".into(),
                before: map(json!({"title": "First"})),
            },
            Change::Created { kind: Kind::Item, key: "BBBB3333".into(), version: 5, title: "N".into() },
            Change::Updated {
                kind: Kind::Item,
                key: "AAAA2222".into(),
                version: 7,
                title: "T".into(),
                before: map(json!({"title": "Second", "tags": []})),
            },
            Change::Deleted { kind: Kind::Item, key: "BBBB3333".into(), title: "N".into(), data: map(json!({})) },
        ];
        let targets = fold(&changes);
        assert_eq!(targets.len(), 2);
        match &targets[0].net {
            Net::Updated { version, before } => {
                assert_eq!(*version, 7);
                assert_eq!(before, &map(json!({"title": "First", "tags": []})));
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(targets[1].net, Net::Nothing));
    }
}
