//! What a write changed, recorded by the writer itself so that it can be undone.
//!
//! Every write of [`super::ZoteroWriter`] appends to its [`ChangeLog`]: an object it created (key and the version
//! it got), the fields it changed with their values before (read by the writer just before the write, so no
//! caller has to remember to), and an object it deleted for good (its whole data). A tool cannot write around
//! the log: the writer is the only way to change the library. The server keeps each call's changes as one entry
//! of the undo journal; [`restoring_patch`] and [`recreated`] are how an entry is turned back.

use std::cell::RefCell;
use std::rc::Rc;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::types::ObjectKind;

/// One object's change, in the order it was made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "camelCase")]
pub enum Change {
    /// Created by the write; undone by deleting it, if it is still at `version`.
    #[serde(rename_all = "camelCase")]
    Created { kind: Kind, key: String, version: u64, title: String },
    /// Some fields changed; `before` holds each written field's value before the write (`null` for a field the
    /// object did not have). Undone by writing those values back, if the object is still at `version`.
    #[serde(rename_all = "camelCase")]
    Updated { kind: Kind, key: String, version: u64, title: String, before: Map<String, Value> },
    /// Deleted for good; `data` is the whole object as it was. Undone by creating it again under its key.
    #[serde(rename_all = "camelCase")]
    Deleted { kind: Kind, key: String, title: String, data: Map<String, Value> },
}

impl Change {
    pub fn key(&self) -> &str {
        match self {
            Change::Created { key, .. } | Change::Updated { key, .. } | Change::Deleted { key, .. } => key,
        }
    }
    pub fn kind(&self) -> Kind {
        match self {
            Change::Created { kind, .. } | Change::Updated { kind, .. } | Change::Deleted { kind, .. } => *kind,
        }
    }
    /// The object's title (or a note's first words, a collection's name) as it was, for listings.
    pub fn title(&self) -> &str {
        match self {
            Change::Created { title, .. } | Change::Updated { title, .. } | Change::Deleted { title, .. } => title,
        }
    }
}

/// The kinds of object the journal records (a serializable [`ObjectKind`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Kind {
    Item,
    Collection,
}

impl Kind {
    pub fn object_kind(self) -> ObjectKind {
        match self {
            Kind::Item => ObjectKind::Items,
            Kind::Collection => ObjectKind::Collections,
        }
    }
    pub fn of(kind: ObjectKind) -> Self {
        match kind {
            ObjectKind::Items => Kind::Item,
            ObjectKind::Collections => Kind::Collection,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Kind::Item => "item",
            Kind::Collection => "collection",
        }
    }
}

/// A write about to be sent, recorded ahead of it: the change it makes if it lands (a creation at version 0, an
/// update at the version it was sent against, a deletion with the whole object), and for an update the fields
/// sent. A call cut off while such a write was out leaves it in its journal entry; reading the object back then
/// tells whether it landed ([`super::ZoteroClient::settle_pending`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Pending {
    pub change: Change,
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub sent: Map<String, Value>,
}

/// The changes made through one writer, and the writes it is about to send, shared with whoever made the writer
/// (the request context).
#[derive(Debug, Clone, Default)]
pub struct ChangeLog(Rc<RefCell<Logged>>);

#[derive(Debug, Default)]
struct Logged {
    changes: Vec<Change>,
    pending: Vec<Pending>,
    through: WrittenThrough,
    inexact: bool,
}

/// An object as a write left it: its whole data at `version`, or `None` when it was deleted.
#[derive(Debug, Clone, PartialEq)]
pub struct Written {
    pub kind: Kind,
    pub key: String,
    pub version: u64,
    pub data: Option<Map<String, Value>>,
}

/// What a writer's writes left, for a copy of the library to apply without asking Zotero (the library mirror's
/// write-through).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WrittenThrough {
    /// Each object written, as it now is, in the order written.
    pub objects: Vec<Written>,
    /// The library version each write request that changed something answered: Zotero moves the version on by
    /// one per such request, so versions that follow one another without a gap mean no other write came between.
    pub versions: Vec<u64>,
    /// False when some write landed whose outcome is known but not exactly (read back after a lost answer, or
    /// changed again by a request the log does not see): the copy must then ask Zotero.
    pub exact: bool,
    /// Zotero refused a write as made against an older version (412): a copy that believed that version is
    /// behind, and should compare its versions with Zotero's.
    pub conflicted: bool,
}

impl ChangeLog {
    pub(crate) fn push(&self, change: Change) {
        self.0.borrow_mut().changes.push(change);
    }
    /// Notes writes about to be sent (see [`Pending`]); what lands is [`Self::push`]ed as usual.
    pub(crate) fn intend(&self, pending: impl IntoIterator<Item = Pending>) {
        self.0.borrow_mut().pending.extend(pending);
    }
    /// Notes an object as a write left it (see [`WrittenThrough`]).
    pub(crate) fn wrote(&self, written: Written) {
        self.0.borrow_mut().through.objects.push(written);
    }
    /// Notes the library version a write request that changed something answered.
    pub(crate) fn answered(&self, version: u64) {
        self.0.borrow_mut().through.versions.push(version);
    }
    /// Notes that something landed whose outcome is not known exactly.
    pub(crate) fn inexact(&self) {
        self.0.borrow_mut().inexact = true;
    }
    /// Notes that Zotero refused a write as made against an older version (412).
    pub(crate) fn conflicted(&self) {
        self.0.borrow_mut().through.conflicted = true;
    }
    /// Takes what the writes left, for a copy of the library (see [`WrittenThrough`]).
    pub fn take_written(&self) -> WrittenThrough {
        let mut logged = self.0.borrow_mut();
        let mut through = std::mem::take(&mut logged.through);
        through.exact = !std::mem::take(&mut logged.inexact);
        through
    }
    /// Takes every change recorded so far, oldest first (and forgets the writes noted as about to be sent: the
    /// caller taking the changes knows how each ended).
    pub fn take(&self) -> Vec<Change> {
        let mut logged = self.0.borrow_mut();
        logged.pending.clear();
        std::mem::take(&mut logged.changes)
    }
    pub fn is_empty(&self) -> bool {
        self.0.borrow().changes.is_empty()
    }
    /// How many changes are recorded (and not yet taken).
    pub fn len(&self) -> usize {
        self.0.borrow().changes.len()
    }
    /// A copy of the changes from the `from`-th on, oldest first, leaving them recorded: what landed since the
    /// caller last looked, for a journal kept while the call is still running.
    pub fn since(&self, from: usize) -> Vec<Change> {
        self.0.borrow().changes.get(from..).map(<[Change]>::to_vec).unwrap_or_default()
    }
    /// How many writes were noted as about to be sent.
    pub fn pending_len(&self) -> usize {
        self.0.borrow().pending.len()
    }
    /// A copy of the writes noted as about to be sent from the `from`-th on.
    pub fn pending_since(&self, from: usize) -> Vec<Pending> {
        self.0.borrow().pending.get(from..).map(<[Pending]>::to_vec).unwrap_or_default()
    }
    /// Moves the newest change recorded for an object created or updated here to `version`: a later step of the
    /// same call changed it through a request this log does not see (the file API's registration raises the
    /// attachment item's version). An undo checks the object against the version the call left it at, so one
    /// kept from an earlier step would read as "changed since" though nobody touched it. Returns whether a change
    /// was moved (an object this log holds nothing for, or only a deletion of, is left alone).
    pub(crate) fn advance(&self, kind: Kind, key: &str, version: u64) -> bool {
        let mut logged = self.0.borrow_mut();
        logged.inexact = true;
        let newest = logged.changes.iter_mut().rev().find(|change| change.kind() == kind && change.key() == key);
        match newest {
            Some(Change::Created { version: at, .. } | Change::Updated { version: at, .. }) => {
                *at = (*at).max(version);
                true
            }
            _ => false,
        }
    }
}

/// Fields that are bookkeeping, never written back: Zotero sets them itself.
const NOT_RESTORED: &[&str] = &["key", "version", "dateAdded", "dateModified"];

/// The values `fields` had in `before` (a field it lacked is `null`), for [`Change::Updated`].
pub(crate) fn prior_values(before: &Map<String, Value>, fields: &Map<String, Value>) -> Map<String, Value> {
    fields
        .keys()
        .filter(|field| !NOT_RESTORED.contains(&field.as_str()))
        .map(|field| (field.clone(), before.get(field).cloned().unwrap_or(Value::Null)))
        .collect()
}

/// The patch that puts an [`Change::Updated`] object's fields back: each field's earlier value, and for a field
/// it did not have, the empty value of its kind (Zotero has no "remove this field"): `deleted: false` takes an
/// item out of the trash, `parentItem: false` makes it top-level again, an empty list or string clears.
pub fn restoring_patch(before: &Map<String, Value>) -> Map<String, Value> {
    before
        .iter()
        .map(|(field, value)| {
            let value = match (field.as_str(), value) {
                (_, Value::Null) => empty_value(field),
                (_, value) => value.clone(),
            };
            (field.clone(), value)
        })
        .collect()
}

fn empty_value(field: &str) -> Value {
    match field {
        "deleted" | "parentItem" | "parentCollection" | "inPublications" => Value::Bool(false),
        "tags" | "collections" | "creators" => Value::Array(Vec::new()),
        "relations" => Value::Object(Map::new()),
        _ => Value::String(String::new()),
    }
}

/// The object a [`Change::Deleted`] deleted, as a creation request: its data under its key, version 0 (Zotero
/// creates an object under a given key when no object has it).
pub fn recreated(key: &str, data: &Map<String, Value>) -> Value {
    let mut object: Map<String, Value> = data
        .iter()
        .filter(|(field, _)| !NOT_RESTORED.contains(&field.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    object.insert("key".into(), Value::String(key.to_owned()));
    object.insert("version".into(), Value::from(0));
    Value::Object(object)
}

/// What a listing calls an object: its title, a note's first words, a collection's name, else its type.
pub fn title_of(data: &Map<String, Value>) -> String {
    let text = |name: &str| data.get(name).and_then(Value::as_str).map(str::trim).filter(|s| !s.is_empty());
    if let Some(title) = text("title").or_else(|| text("name")) {
        return shorten(title);
    }
    if let Some(note) = text("note") {
        return shorten(&crate::html_text::note_title(note));
    }
    text("itemType").unwrap_or("untitled").to_owned()
}

fn shorten(text: &str) -> String {
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match text.char_indices().nth(80) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text,
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
    fn a_field_the_object_lacked_is_put_back_empty() {
        let before = prior_values(
            &map(json!({"title": "Old", "key": "K", "version": 3})),
            &map(json!({"title": "New", "deleted": 1, "parentItem": "ABCD2345", "tags": [{"tag": "x"}], "version": 3})),
        );
        assert_eq!(before, map(json!({"title": "Old", "deleted": null, "parentItem": null, "tags": null})));
        let patch = restoring_patch(&before);
        assert_eq!(patch, map(json!({"title": "Old", "deleted": false, "parentItem": false, "tags": []})));
    }

    #[test]
    fn a_deleted_object_is_created_again_under_its_key() {
        let data = map(json!({"key": "ABCD2345", "version": 9, "itemType": "note", "note": "<p>Hi</p>",
                              "dateModified": "2020-01-01T00:00:00Z"}));
        assert_eq!(
            recreated("ABCD2345", &data),
            json!({"key": "ABCD2345", "version": 0, "itemType": "note", "note": "<p>Hi</p>"})
        );
        assert_eq!(title_of(&data), "Hi");
    }

    #[test]
    fn changes_round_trip_as_json() {
        let change = Change::Updated {
            kind: Kind::Item,
            key: "ABCD2345".into(),
            version: 12,
            title: "A paper".into(),
            before: map(json!({"title": "Old"})),
        };
        let text = serde_json::to_string(&change).unwrap_or_default();
        assert!(text.contains("\"op\":\"updated\""), "{text}");
        assert_eq!(serde_json::from_str::<Change>(&text).ok(), Some(change));
    }
}
