//! Deciding what a write whose answer was lost did: the writer reads the objects back and compares them with
//! what it sent and what was there before. Never by sending the write again: a blind repeat could write twice
//! (a new object) or overwrite someone else's change.

use serde_json::{Map, Value};

use super::types::ZoteroObject;

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

fn tag_set(value: &Value) -> std::collections::BTreeSet<(String, u64)> {
    let tags = value.as_array().map(Vec::as_slice).unwrap_or_default();
    tags.iter()
        .filter_map(|tag| {
            let name = tag.get("tag")?.as_str()?.to_owned();
            Some((name, tag.get("type").and_then(Value::as_u64).unwrap_or(0)))
        })
        .collect()
}

fn string_set(value: &Value) -> std::collections::BTreeSet<String> {
    let items = value.as_array().map(Vec::as_slice).unwrap_or_default();
    items.iter().filter_map(Value::as_str).map(str::to_owned).collect()
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

    #[test]
    fn fields_compare_as_zotero_stores_them() {
        let stored = json!({ "deleted": true, "collections": ["B", "A"], "extra": "" });
        let stored = stored.as_object().unwrap();
        let sent = json!({ "deleted": 1, "collections": ["A", "B"], "extra": null, "parentItem": false });
        assert!(fields_match(sent.as_object().unwrap(), stored));
        assert!(!fields_match(json!({ "deleted": 0 }).as_object().unwrap(), stored));
    }
}
