//! Deciding what a write whose answer was lost did: the writer reads the objects back and compares them with
//! what it sent and what was there before. Never by sending the write again: a blind repeat could write twice
//! (a new object) or overwrite someone else's change.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::batch::BATCH_SIZE;
use super::client::ZoteroClient;
use super::error::ZoteroError;
use super::journal::{title_of, Change, Kind, Pending};
use super::query::Query;
use super::types::{ObjectKind, ZoteroObject};

/// What a read-back says of one object a lost write sent.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Landed {
    /// Created or changed as sent.
    Written,
    /// Already as sent before the write (Zotero would have answered "unchanged").
    Unchanged,
    /// Not written: absent when it was to be created, at its earlier version when it was to be changed.
    NotWritten,
    /// Changed, but not as sent (another client wrote it meanwhile, or it was deleted): what this write did is
    /// not known.
    Unsure(&'static str),
}

/// What the object sent as `sent` became, given what was there before (`None`: nothing, it was to be created)
/// and what a read finds now (`None`: nothing).
pub(crate) fn landed(sent: &Value, before: Option<&ZoteroObject>, now: Option<&ZoteroObject>) -> Landed {
    let empty = Map::new();
    let fields = sent.as_object().unwrap_or(&empty);
    match (before, now) {
        (None, None) => Landed::NotWritten,
        // The key was this write's (a fresh random key, or one read as absent): whoever created it, it was us.
        (None, Some(_)) => Landed::Written,
        (Some(_), None) => Landed::Unsure("it no longer exists: it was deleted after the write was sent"),
        (Some(before), Some(now)) if now.version == before.version => {
            if fields_match(fields, &now.data) {
                Landed::Unchanged
            } else {
                Landed::NotWritten
            }
        }
        (Some(_), Some(now)) => {
            if fields_match(fields, &now.data) {
                Landed::Written
            } else {
                Landed::Unsure("it changed after the write was sent, but not as sent: another client may have saved it")
            }
        }
    }
}

/// What a write noted as about to be sent (a [`Pending`] of a call cut off while it was out) did, read back.
#[derive(Debug, Clone, PartialEq)]
pub enum PendingOutcome {
    /// It landed: the change, at the version the object is now at (an undo checks against it).
    Landed(Change),
    /// It did not land, or changed nothing.
    NotWritten,
    /// The object changed, but not as sent (or was deleted since): what the write did is not known; the reason.
    Unsure(&'static str),
}

impl ZoteroClient {
    /// Finds out, by reading the objects back (50 per request, trashed ones included), what each of `pending`
    /// did; one outcome per write, in order. Never sends a write.
    pub async fn settle_pending(&self, pending: &[Pending]) -> Result<Vec<PendingOutcome>, ZoteroError> {
        let mut now: HashMap<(Kind, String), ZoteroObject> = HashMap::new();
        for kind in [Kind::Item, Kind::Collection] {
            let keys: Vec<&str> = pending.iter().filter(|p| p.change.kind() == kind).map(|p| p.change.key()).collect();
            for chunk in keys.chunks(BATCH_SIZE) {
                let joined = chunk.join(",");
                let page = match kind.object_kind() {
                    ObjectKind::Items => {
                        self.items(&Query::new().param("itemKey", joined).include_trashed(true), chunk.len()).await?
                    }
                    ObjectKind::Collections => {
                        self.collections(&Query::new().param("collectionKey", joined), chunk.len()).await?
                    }
                };
                now.extend(page.items.into_iter().map(|object| ((kind, object.key.clone()), object)));
            }
        }
        Ok(pending.iter().map(|p| pending_outcome(p, now.get(&(p.change.kind(), p.change.key().to_owned())))).collect())
    }
}

/// What `pending` did, given the object as read now (`None`: absent).
pub(crate) fn pending_outcome(pending: &Pending, now: Option<&ZoteroObject>) -> PendingOutcome {
    match (&pending.change, now) {
        // The key was the write's own (a fresh random one): whoever created it, it was this write.
        (Change::Created { kind, key, .. }, Some(now)) => PendingOutcome::Landed(Change::Created {
            kind: *kind,
            key: key.clone(),
            version: now.version,
            title: title_of(&now.data),
        }),
        (Change::Created { .. }, None) | (Change::Deleted { .. }, Some(_)) => PendingOutcome::NotWritten,
        (Change::Deleted { .. }, None) => PendingOutcome::Landed(pending.change.clone()),
        (Change::Updated { .. }, None) => {
            PendingOutcome::Unsure("it no longer exists: it was deleted after the write was sent")
        }
        (Change::Updated { version, .. }, Some(now)) if now.version == *version => PendingOutcome::NotWritten,
        (Change::Updated { kind, key, title, before, .. }, Some(now)) => {
            if fields_match(&pending.sent, &now.data) {
                PendingOutcome::Landed(Change::Updated {
                    kind: *kind,
                    key: key.clone(),
                    version: now.version,
                    title: title.clone(),
                    before: before.clone(),
                })
            } else {
                PendingOutcome::Unsure(
                    "it changed after the write was sent, but not as sent: another client may have saved it",
                )
            }
        }
    }
}

/// Whether every field of `sent` (but the bookkeeping Zotero sets itself) has the value sent in `stored`, read
/// as Zotero stores it: an empty value and an absent field are the same, `deleted` is a flag, and tags and
/// collections are sets.
pub(crate) fn fields_match(sent: &Map<String, Value>, stored: &Map<String, Value>) -> bool {
    sent.iter()
        .filter(|(field, _)| !matches!(field.as_str(), "key" | "version" | "dateAdded" | "dateModified"))
        .all(|(field, value)| same(field, value, stored.get(field).unwrap_or(&Value::Null)))
}

fn same(field: &str, sent: &Value, stored: &Value) -> bool {
    if sent == stored || (blank(sent) && blank(stored)) {
        return true;
    }
    match field {
        "deleted" => flag(sent) == flag(stored),
        "tags" => tag_set(sent) == tag_set(stored),
        "collections" => string_set(sent) == string_set(stored),
        _ => false,
    }
}

/// Nothing: what Zotero stores for a cleared field.
fn blank(value: &Value) -> bool {
    match value {
        Value::Null | Value::Bool(false) => true,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        Value::Number(_) | Value::Bool(true) => false,
    }
}

fn flag(value: &Value) -> bool {
    match value {
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_u64().is_some_and(|n| n != 0),
        Value::String(s) => s == "1" || s == "true",
        _ => false,
    }
}

/// The tags as a set: sorted, each once (a sorted `Vec` rather than a `BTreeSet`, whose collecting brings a sort
/// of its own into the wasm: `crate::sort`).
fn tag_set(value: &Value) -> Vec<(String, u64)> {
    let tags = value.as_array().map(Vec::as_slice).unwrap_or_default();
    let mut set: Vec<(String, u64)> = tags
        .iter()
        .filter_map(|tag| {
            let name = tag.get("tag")?.as_str()?.to_owned();
            Some((name, tag.get("type").and_then(Value::as_u64).unwrap_or(0)))
        })
        .collect();
    crate::sort::sort(&mut set);
    set.dedup();
    set
}

/// The strings as a set, sorted, each once (as [`tag_set`]).
fn string_set(value: &Value) -> Vec<String> {
    let items = value.as_array().map(Vec::as_slice).unwrap_or_default();
    let mut set: Vec<String> = items.iter().filter_map(Value::as_str).map(str::to_owned).collect();
    crate::sort::sort(&mut set);
    set.dedup();
    set
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(version: u64, data: Value) -> ZoteroObject {
        serde_json::from_value(json!({ "key": "ABCD2345", "version": version, "data": data })).unwrap()
    }

    #[test]
    fn a_created_object_is_written_when_its_key_exists() {
        let sent = json!({ "key": "ABCD2345", "version": 0, "itemType": "note", "note": "x" });
        assert_eq!(landed(&sent, None, None), Landed::NotWritten);
        assert_eq!(landed(&sent, None, Some(&object(5, json!({ "note": "x" })))), Landed::Written);
    }

    #[test]
    fn an_update_is_written_when_the_version_moved_and_the_fields_are_as_sent() {
        let sent = json!({ "key": "ABCD2345", "version": 4, "title": "New", "tags": [{ "tag": "a" }] });
        let before = object(4, json!({ "title": "Old", "tags": [] }));
        let as_sent = object(6, json!({ "title": "New", "tags": [{ "tag": "a", "type": 0 }] }));
        let other = object(6, json!({ "title": "Other", "tags": [] }));
        assert_eq!(landed(&sent, Some(&before), Some(&as_sent)), Landed::Written);
        assert_eq!(landed(&sent, Some(&before), Some(&before)), Landed::NotWritten);
        assert!(matches!(landed(&sent, Some(&before), Some(&other)), Landed::Unsure(_)));
        assert!(matches!(landed(&sent, Some(&before), None), Landed::Unsure(_)));
        let same = object(4, json!({ "title": "New", "tags": [{ "tag": "a" }] }));
        assert_eq!(landed(&sent, Some(&same), Some(&same)), Landed::Unchanged);
    }

    fn pending(change: Change, sent: Value) -> Pending {
        Pending { change, sent: sent.as_object().cloned().unwrap_or_default() }
    }

    #[test]
    fn a_pending_write_is_settled_by_what_is_there_now() {
        let created = pending(
            Change::Created { kind: Kind::Item, key: "ABCD2345".into(), version: 0, title: String::new() },
            json!({}),
        );
        let now = object(7, json!({ "title": "Made" }));
        let landed = Change::Created { kind: Kind::Item, key: "ABCD2345".into(), version: 7, title: "Made".into() };
        assert_eq!(pending_outcome(&created, Some(&now)), PendingOutcome::Landed(landed));
        assert_eq!(pending_outcome(&created, None), PendingOutcome::NotWritten);

        let before = json!({ "title": "Old" }).as_object().cloned().unwrap();
        let change = |version| Change::Updated {
            kind: Kind::Item,
            key: "ABCD2345".into(),
            version,
            title: "Old".into(),
            before: before.clone(),
        };
        let updated = pending(change(4), json!({ "title": "New" }));
        assert_eq!(pending_outcome(&updated, Some(&object(4, json!({ "title": "Old" })))), PendingOutcome::NotWritten);
        let as_sent = object(6, json!({ "title": "New" }));
        assert_eq!(pending_outcome(&updated, Some(&as_sent)), PendingOutcome::Landed(change(6)));
        assert!(matches!(
            pending_outcome(&updated, Some(&object(6, json!({ "title": "Else" })))),
            PendingOutcome::Unsure(_)
        ));
        assert!(matches!(pending_outcome(&updated, None), PendingOutcome::Unsure(_)));

        let data = json!({ "title": "Gone" }).as_object().cloned().unwrap();
        let deleted = pending(
            Change::Deleted { kind: Kind::Item, key: "ABCD2345".into(), title: "Gone".into(), data },
            json!({}),
        );
        assert_eq!(pending_outcome(&deleted, None), PendingOutcome::Landed(deleted.change.clone()));
        assert_eq!(pending_outcome(&deleted, Some(&now)), PendingOutcome::NotWritten);
    }

    #[test]
    fn fields_compare_as_zotero_stores_them() {
        let stored = json!({ "deleted": true, "collections": ["B", "A"], "extra": "" });
        let stored = stored.as_object().unwrap();
        let sent = json!({ "deleted": 1, "collections": ["A", "B"], "extra": null, "parentItem": false });
        assert!(fields_match(sent.as_object().unwrap(), stored));
        assert!(!fields_match(json!({ "deleted": 0 }).as_object().unwrap(), stored));
    }
}
