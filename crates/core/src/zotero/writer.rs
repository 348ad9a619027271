//! The writing half of the Zotero Web API client.

use std::collections::HashMap;
use std::ops::Deref;
use std::rc::Rc;

use http::Method;
use serde_json::{Map, Value};

use super::batch::{merge_batch_of, write_token, BatchResponse, WriteFailure, WriteOutcome, WriteUnknown, BATCH_SIZE};
use super::client::{ZoteroClient, ZoteroSettings};
use super::error::ZoteroError;
use super::journal::{prior_values, title_of, Change, ChangeLog, Kind, Pending, Written};
use super::key::{new_key, ObjectKey};
use super::query::Query;
use super::settle::{landed, Landed};
use super::transport::{Call, RetryPolicy};
use super::types::{FullText, ObjectKind, ZoteroObject};
use crate::platform::{Clock, HttpClient};
use crate::write_gate::WriteGate;

/// The most children of a deleted item recorded for its undo (an item with more is rare; the rest are named as
/// not restorable by the undo).
const MAX_CHILDREN_KEPT: usize = 500;

/// A Zotero client that can change the library: every read of [`ZoteroClient`] (through `Deref`) plus the
/// writes. Whoever holds only the `&ZoteroClient` it derefs to cannot write, which is how the server makes the
/// write scope a matter of types: a request context hands out this writer only to a grant with `zotero:write`.
///
/// Every write is recorded in the writer's [`ChangeLog`] (see [`super::journal`]): before an update or a delete
/// the writer reads the objects it is about to change, so their earlier state is known whoever called it. A
/// write whose earlier state cannot be read is not sent.
pub struct ZoteroWriter {
    client: ZoteroClient,
    log: ChangeLog,
    gate: WriteGate,
}

impl Deref for ZoteroWriter {
    type Target = ZoteroClient;

    fn deref(&self) -> &ZoteroClient {
        &self.client
    }
}

impl ZoteroWriter {
    pub fn new(settings: ZoteroSettings, http: Rc<dyn HttpClient>, clock: Rc<dyn Clock>) -> Result<Self, ZoteroError> {
        Self::with_policy(settings, http, clock, RetryPolicy::default())
    }

    pub fn with_policy(
        settings: ZoteroSettings,
        http: Rc<dyn HttpClient>,
        clock: Rc<dyn Clock>,
        policy: RetryPolicy,
    ) -> Result<Self, ZoteroError> {
        let client = ZoteroClient::with_policy(settings, http, clock, policy)?;
        client.remember_reads();
        Ok(Self { client, log: ChangeLog::default(), gate: WriteGate::default() })
    }

    /// A writer on Zotero Desktop's local API ([`ZoteroClient::for_desktop`]).
    pub fn for_desktop(
        base: &str,
        library: super::LibraryId,
        access: super::local::LocalApiAccess,
        http: Rc<dyn HttpClient>,
        clock: Rc<dyn Clock>,
    ) -> Self {
        let client = ZoteroClient::for_desktop(base, library, access, http, clock);
        client.remember_reads();
        Self { client, log: ChangeLog::default(), gate: WriteGate::default() }
    }

    /// This writer, each of its writes first noted in its log as about to be sent and then held at `gate` until
    /// the journal has recorded it (see [`crate::write_gate`]).
    pub fn gated(mut self, gate: WriteGate) -> Self {
        self.gate = gate;
        self
    }

    /// Notes writes about to be sent, then waits at the gate.
    async fn ahead(&self, pending: impl IntoIterator<Item = Pending>) {
        self.log.intend(pending);
        self.gate.pass().await;
    }

    /// The changes this writer has made (shared: the log taken later holds every write made through it).
    pub fn log(&self) -> &ChangeLog {
        &self.log
    }

    /// Item `key`, written by this call, is now at `version` after a step outside this writer (an upload's
    /// registration, which records the file on the item): its journal change is moved there, and what this
    /// call read of it is forgotten.
    pub fn item_advanced(&self, key: &ObjectKey, version: u64) {
        self.client.forget(ObjectKind::Items, key.as_str());
        self.log.advance(Kind::Item, key.as_str(), version);
    }

    /// Stores an attachment's full text. When the answer is lost, the text is read back: stored as sent, it
    /// was written; else the error says it was not, or ([`ZoteroError::OutcomeUnknown`]) that the read failed
    /// too. Never sent twice.
    pub async fn put_fulltext(&self, key: &ObjectKey, text: &FullText) -> Result<(), ZoteroError> {
        let body = serde_json::to_value(text).map_err(|e| ZoteroError::Config(e.to_string()))?;
        let call =
            Call::new(Method::PUT, self.client.library_path(&format!("/items/{key}/fulltext")).await?).json_body(&body);
        match self.client.transport.execute(&call).await {
            Ok(_) => Ok(()),
            Err(lost) if lost.may_have_landed() => match self.client.fulltext(key).await {
                Ok(Some(stored)) if stored.content == text.content => Ok(()),
                Ok(_) => Err(lost.not_applied()),
                Err(read) => Err(unknown(&call, key, &lost, &read)),
            },
            Err(error) => Err(error),
        }
    }

    /// Creates or updates objects, 50 per request, each request with a fresh write token. Objects that carry a
    /// `key` and `version` update that object only if it is still at that version (else they fail with 412). A
    /// new object (no `key`) is given a fresh key before it is sent, with version 0 (create only).
    ///
    /// When a request's answer is lost (no answer, a server error, an answer that cannot be read), the batch's
    /// objects are read back, and each is reported as written (and recorded, as an answered write is), not
    /// written, or unknown (when the read fails too); nothing is sent again.
    ///
    /// When the very first request fails and nothing of it was written, the error is returned (an
    /// [`ZoteroError::OutcomeUnknown`] when that could not be found out). When a later one fails, the outcome
    /// says which objects were written, which failed, which are unknown, and which were never sent.
    pub async fn write_objects(&self, kind: ObjectKind, objects: &[Value]) -> Result<WriteOutcome, ZoteroError> {
        let path = self.client.library_path(&format!("/{}", kind.path_segment())).await?;
        let objects = with_keys(objects)?;
        let mut outcome = WriteOutcome::default();
        for (batch_index, chunk) in objects.chunks(BATCH_SIZE).enumerate() {
            let offset = batch_index * BATCH_SIZE;
            let token = write_token().map_err(|e| {
                ZoteroError::Config(format!("no secure random source for a write token ({e}); nothing was written"))
            })?;
            // What the objects written by key were before: read first, so the change can be undone.
            let before = match self.current(kind, chunk).await {
                Ok(before) => before,
                Err(error) if batch_index == 0 => return Err(error),
                Err(error) => {
                    fail_rest(&mut outcome, &objects, offset, &error);
                    break;
                }
            };
            let call = Call::new(Method::POST, path.clone())
                .header("zotero-write-token", token)
                .json_body(&Value::Array(chunk.to_vec()));
            self.ahead(chunk.iter().filter_map(|sent| pending(kind, sent, &before))).await;
            let answered = match self.client.transport.execute(&call).await {
                Ok(reply) => reply
                    .json::<BatchResponse>()
                    .and_then(|batch| {
                        merge_batch_of(&mut outcome, offset, Some(chunk.len()), batch)
                            .map_err(|reason| reply.decode_error(reason.to_string()))
                    })
                    .map(|()| reply.last_modified_version()),
                Err(error) => Err(error),
            };
            match answered {
                Ok(version) => {
                    outcome.library_version = version;
                    let positions = offset..offset + chunk.len();
                    if positions.clone().any(|position| outcome.success.contains_key(&position)) {
                        self.log.answered(version);
                    }
                    if positions.filter_map(|position| outcome.failed.get(&position)).any(|f| f.code == 412) {
                        self.log.conflicted();
                    }
                    self.record_batch(kind, chunk, offset, &outcome, &before);
                }
                Err(error) if error.may_have_landed() => {
                    let settled = self.settle_batch(kind, chunk, offset, &before, &error, &mut outcome).await;
                    match settled {
                        Settled::All => continue,
                        Settled::None if batch_index == 0 => return Err(error.not_applied()),
                        Settled::Unknown(unknown) if batch_index == 0 => return Err(unknown),
                        Settled::Some | Settled::None | Settled::Unknown(_) => {
                            outcome.not_sent = (offset + chunk.len()..objects.len()).collect();
                            break;
                        }
                    }
                }
                Err(error) if batch_index == 0 => return Err(error),
                Err(error) => {
                    fail_rest(&mut outcome, &objects, offset, &error);
                    break;
                }
            }
        }
        Ok(outcome)
    }

    /// Finds out what a batch whose answer was lost (`lost`) did, by reading its objects back: each written one is
    /// recorded and reported as an answered write would be, the others as failed with `lost`, or, when the read
    /// fails too, as unknown.
    async fn settle_batch(
        &self,
        kind: ObjectKind,
        chunk: &[Value],
        offset: usize,
        before: &HashMap<String, ZoteroObject>,
        lost: &ZoteroError,
        outcome: &mut WriteOutcome,
    ) -> Settled {
        let keys: Vec<&str> = chunk.iter().filter_map(|object| object.get("key").and_then(Value::as_str)).collect();
        let now = match self.read_back(kind, &keys).await {
            Ok(now) => now,
            Err(read) => {
                let unknown = ZoteroError::OutcomeUnknown {
                    request: format!("POST /{}", kind.path_segment()),
                    keys: keys.iter().map(|key| (*key).to_owned()).collect(),
                    lost: lost.to_string(),
                    read: format!("reading them back failed too ({read})"),
                };
                for (index, object) in chunk.iter().enumerate() {
                    let key = object.get("key").and_then(Value::as_str).unwrap_or_default().to_owned();
                    outcome.unknown.insert(offset + index, WriteUnknown { key, message: unknown.to_string() });
                }
                return Settled::Unknown(unknown);
            }
        };
        outcome.library_version = outcome.library_version.max(now.1);
        let (mut written, mut not_written) = (0, 0);
        for (index, sent) in chunk.iter().enumerate() {
            let position = offset + index;
            let key = sent.get("key").and_then(Value::as_str).unwrap_or_default();
            let found = now.0.get(key);
            match landed(sent, before.get(key), found) {
                Landed::Written => {
                    written += 1;
                    outcome.success.insert(position, key.to_owned());
                    // Read back: the version the write answered is not known, only the object's now.
                    self.log.inexact();
                    if let Some(found) = found {
                        if let Ok(stored) = serde_json::to_value(found) {
                            outcome.successful.insert(position, stored);
                        }
                        self.record_written(kind, key, sent, before.get(key), found.version, found);
                    }
                }
                Landed::Unchanged => {
                    written += 1;
                    outcome.unchanged.insert(position, key.to_owned());
                }
                Landed::NotWritten => {
                    not_written += 1;
                    let failure = WriteFailure {
                        key: Some(key.to_owned()),
                        code: lost.status().unwrap_or(0),
                        message: format!("not written (read back after: {lost})"),
                    };
                    outcome.failed.insert(position, failure);
                }
                Landed::Unsure(why) => {
                    let message = format!(
                        "unknown whether written: the answer was lost ({lost}) and, read back, {why}. Read {key} \
                         again before writing it"
                    );
                    outcome.unknown.insert(position, WriteUnknown { key: key.to_owned(), message });
                }
            }
        }
        if written == chunk.len() {
            Settled::All
        } else if written == 0 && not_written == chunk.len() {
            Settled::None
        } else {
            Settled::Some
        }
    }

    /// The objects `keys` as Zotero holds them now (trashed ones included), read afresh, and the library version.
    async fn read_back(
        &self,
        kind: ObjectKind,
        keys: &[&str],
    ) -> Result<(HashMap<String, ZoteroObject>, u64), ZoteroError> {
        let joined = keys.join(",");
        let page = match kind {
            ObjectKind::Items => {
                let query = Query::new().param("itemKey", joined).include_trashed(true);
                self.client.items(&query, keys.len()).await?
            }
            ObjectKind::Collections => {
                self.client.collections(&Query::new().param("collectionKey", joined), keys.len()).await?
            }
        };
        let found = page.items.into_iter().map(|object| (object.key.clone(), object)).collect();
        Ok((found, page.library_version))
    }

    /// Records what one written batch changed: an object sent by the key of an object read before is an update
    /// of the fields sent, any other written object a creation.
    fn record_batch(
        &self,
        kind: ObjectKind,
        chunk: &[Value],
        offset: usize,
        outcome: &WriteOutcome,
        before: &HashMap<String, ZoteroObject>,
    ) {
        for (index, sent) in chunk.iter().enumerate() {
            let position = offset + index;
            let Some(key) = outcome.success.get(&position) else { continue };
            let stored = outcome.successful.get(&position);
            let version = stored
                .and_then(|object| object.get("version"))
                .and_then(Value::as_u64)
                .unwrap_or(outcome.library_version);
            match stored.and_then(|object| serde_json::from_value::<ZoteroObject>(object.clone()).ok()) {
                // Zotero's answer is the object as now stored: a later write of this call knows it exactly.
                Some(object) => self.record_written(kind, key, sent, before.get(key), version, &object),
                None => {
                    let data = stored.and_then(|o| o.get("data")).and_then(Value::as_object).or(sent.as_object());
                    self.log.push(record(kind, key, sent, before.get(key), version, data));
                    // What the object now is was not answered: a copy of the library must ask.
                    self.log.inexact();
                    self.client.forget(kind, key);
                }
            }
        }
    }

    /// Records one object written as `sent` (created, or updated when `before` was there), now stored as
    /// `stored` at `version`, and remembers it as read.
    fn record_written(
        &self,
        kind: ObjectKind,
        key: &str,
        sent: &Value,
        before: Option<&ZoteroObject>,
        version: u64,
        stored: &ZoteroObject,
    ) {
        self.log.push(record(kind, key, sent, before, version, Some(&stored.data)));
        self.log.wrote(Written { kind: Kind::of(kind), key: key.to_owned(), version, data: Some(stored.data.clone()) });
        self.client.remember(kind, [stored]);
    }

    /// The objects of `kind` about to be written by key, as they are before the write: as read earlier in this
    /// call when that was at the version the write names, else read now (one request per batch), trashed ones
    /// included. An object that does not exist is not in the map (the write creates it).
    async fn current(&self, kind: ObjectKind, chunk: &[Value]) -> Result<HashMap<String, ZoteroObject>, ZoteroError> {
        let mut known = HashMap::new();
        let mut unknown = Vec::new();
        for object in chunk {
            let Some(key) = object.get("key").and_then(Value::as_str) else { continue };
            let version = object.get("version").and_then(Value::as_u64);
            match version.and_then(|version| self.client.recall(kind, key, version)) {
                Some(before) => {
                    known.insert(key.to_owned(), before);
                }
                // Version 0 asks Zotero to create the object: there is nothing before it.
                None if version == Some(0) => {}
                None => unknown.push(key),
            }
        }
        if unknown.is_empty() {
            return Ok(known);
        }
        let joined = unknown.join(",");
        let found = match kind {
            ObjectKind::Items => {
                let query = Query::new().param("itemKey", joined).include_trashed(true);
                self.client.items(&query, unknown.len()).await?.items
            }
            ObjectKind::Collections => {
                self.client.collections(&Query::new().param("collectionKey", joined), unknown.len()).await?.items
            }
        };
        known.extend(found.into_iter().map(|object| (object.key.clone(), object)));
        Ok(known)
    }

    /// One object as it is before a write made at `version`: as read earlier in this call, else read now.
    async fn before(&self, kind: ObjectKind, key: &ObjectKey, version: u64) -> Result<ZoteroObject, ZoteroError> {
        match self.client.recall(kind, key.as_str(), version) {
            Some(object) => Ok(object),
            None => self.one(kind, key).await,
        }
    }

    /// One object as Zotero holds it now, for the record of a change to it.
    async fn one(&self, kind: ObjectKind, key: &ObjectKey) -> Result<ZoteroObject, ZoteroError> {
        match kind {
            ObjectKind::Items => self.client.item(key).await,
            ObjectKind::Collections => self.client.collection(key).await,
        }
    }

    /// Changes some fields of an item, only if it is still at `version`. Returns the new library version.
    pub async fn patch_item(&self, key: &ObjectKey, version: u64, changes: &Value) -> Result<u64, ZoteroError> {
        self.patch(ObjectKind::Items, key, version, changes).await
    }

    /// Changes a collection (name, parent), only if it is still at `version`.
    pub async fn patch_collection(&self, key: &ObjectKey, version: u64, changes: &Value) -> Result<u64, ZoteroError> {
        self.patch(ObjectKind::Collections, key, version, changes).await
    }

    async fn patch(
        &self,
        kind: ObjectKind,
        key: &ObjectKey,
        version: u64,
        changes: &Value,
    ) -> Result<u64, ZoteroError> {
        let prior = self.before(kind, key, version).await?;
        let rest = format!("/{}/{key}", kind.path_segment());
        let call = Call::new(Method::PATCH, self.client.library_path(&rest).await?)
            .header("if-unmodified-since-version", version.to_string())
            .json_body(changes);
        let sent = changes.as_object().cloned().unwrap_or_default();
        let about = record(kind, key.as_str(), changes, Some(&prior), version, None);
        self.ahead([Pending { change: about, sent }]).await;
        let written = match self.client.transport.execute(&call).await {
            Ok(reply) => {
                self.client.forget(kind, key.as_str());
                let version = reply.last_modified_version();
                // The object as it now is: what it was with the fields sent over it, at the version answered.
                let mut data = prior.data.clone();
                if let Some(fields) = changes.as_object() {
                    data.extend(fields.iter().map(|(field, value)| (field.clone(), value.clone())));
                }
                self.log.wrote(Written {
                    kind: Kind::of(kind),
                    key: key.as_str().to_owned(),
                    version,
                    data: Some(data),
                });
                self.log.answered(version);
                version
            }
            Err(lost) if lost.may_have_landed() => {
                // Read back (the read is remembered: it is the object as it now is).
                let now =
                    self.read_back(kind, &[key.as_str()]).await.map_err(|read| unknown(&call, key, &lost, &read))?;
                match landed(changes, Some(&prior), now.0.get(key.as_str())) {
                    Landed::Written => {
                        self.log.inexact();
                        now.0.get(key.as_str()).map_or(now.1, |object| object.version)
                    }
                    Landed::NotWritten | Landed::Unchanged => return Err(lost.not_applied()),
                    Landed::Unsure(why) => return Err(unsure(&call, key, &lost, why)),
                }
            }
            Err(error) => {
                if error.status() == Some(412) {
                    self.log.conflicted();
                }
                return Err(error);
            }
        };
        let empty = Map::new();
        self.log.push(Change::Updated {
            kind: Kind::of(kind),
            key: key.as_str().to_owned(),
            version: written,
            title: title_of(&prior.data),
            before: prior_values(&prior.data, changes.as_object().unwrap_or(&empty)),
        });
        Ok(written)
    }

    /// Deletes one item permanently, only if it is still at its own `version` (one request per item, so one
    /// stale item cannot block the others).
    pub async fn delete_item(&self, key: &ObjectKey, version: u64) -> Result<u64, ZoteroError> {
        self.delete(ObjectKind::Items, key, version, false).await
    }

    /// [`Self::delete_item`] for an item the caller has just found to have no children, those in the trash
    /// included (the undo's own check): its children are not listed again.
    pub async fn delete_childless_item(&self, key: &ObjectKey, version: u64) -> Result<u64, ZoteroError> {
        self.delete(ObjectKind::Items, key, version, true).await
    }

    pub async fn delete_collection(&self, key: &ObjectKey, version: u64) -> Result<u64, ZoteroError> {
        self.delete(ObjectKind::Collections, key, version, false).await
    }

    async fn delete(
        &self,
        kind: ObjectKind,
        key: &ObjectKey,
        version: u64,
        childless: bool,
    ) -> Result<u64, ZoteroError> {
        let prior = self.before(kind, key, version).await?;
        // Zotero deletes an item's notes, attachments and annotations with it: they are recorded too, first, so
        // that an undo creates the parent again before them.
        // Those in the trash go with it too, and `meta.numChildren` leaves them out, so it cannot spare the read.
        let children = match (kind, prior.item_type()) {
            (ObjectKind::Items, Some(item_type)) if item_type != "note" && !childless => {
                self.client.children_with_trashed(key, MAX_CHILDREN_KEPT).await?.items
            }
            _ => Vec::new(),
        };
        let rest = format!("/{}/{key}", kind.path_segment());
        let call = Call::new(Method::DELETE, self.client.library_path(&rest).await?)
            .header("if-unmodified-since-version", version.to_string());
        let deleted = |object: &ZoteroObject, kind: ObjectKind| Pending {
            change: Change::Deleted {
                kind: Kind::of(kind),
                key: object.key.clone(),
                title: title_of(&object.data),
                data: object.data.clone(),
            },
            sent: Map::new(),
        };
        let mut about: Vec<Pending> = children.iter().map(|child| deleted(child, ObjectKind::Items)).collect();
        about.push(deleted(&prior, kind));
        self.ahead(about).await;
        let written = match self.client.transport.execute(&call).await {
            Ok(reply) => {
                let version = reply.last_modified_version();
                self.log.answered(version);
                version
            }
            Err(lost) if lost.may_have_landed() => {
                let now =
                    self.read_back(kind, &[key.as_str()]).await.map_err(|read| unknown(&call, key, &lost, &read))?;
                if now.0.contains_key(key.as_str()) {
                    return Err(lost.not_applied());
                }
                self.log.inexact();
                now.1
            }
            Err(error) => {
                if error.status() == Some(412) {
                    self.log.conflicted();
                }
                return Err(error);
            }
        };
        self.client.forget(kind, key.as_str());
        let gone = |kind: ObjectKind, key: &str| Written {
            kind: Kind::of(kind),
            key: key.to_owned(),
            version: written,
            data: None,
        };
        for child in &children {
            self.log.wrote(gone(ObjectKind::Items, &child.key));
        }
        self.log.wrote(gone(kind, key.as_str()));
        for child in children {
            self.log.push(Change::Deleted {
                kind: Kind::Item,
                title: title_of(&child.data),
                key: child.key,
                data: child.data,
            });
        }
        self.log.push(Change::Deleted {
            kind: Kind::of(kind),
            key: key.as_str().to_owned(),
            title: title_of(&prior.data),
            data: prior.data,
        });
        Ok(written)
    }
}

/// The error for a write to `key` whose answer was lost (`lost`) and whose read-back failed too (`read`).
fn unknown(call: &Call, key: &ObjectKey, lost: &ZoteroError, read: &ZoteroError) -> ZoteroError {
    ZoteroError::OutcomeUnknown {
        request: format!("{} {}", call.method, call.path),
        keys: vec![key.as_str().to_owned()],
        lost: lost.to_string(),
        read: format!("reading it back failed too ({read})"),
    }
}

/// The error for a write to `key` whose answer was lost and whose read-back cannot tell (`why`).
fn unsure(call: &Call, key: &ObjectKey, lost: &ZoteroError, why: &str) -> ZoteroError {
    ZoteroError::OutcomeUnknown {
        request: format!("{} {}", call.method, call.path),
        keys: vec![key.as_str().to_owned()],
        lost: lost.to_string(),
        read: format!("read back, {why}"),
    }
}

/// How much of a batch whose answer was lost was found written.
enum Settled {
    /// All of it (or it was already so).
    All,
    /// Some of it; the rest not, or not known.
    Some,
    /// None of it.
    None,
    /// Not known: the read-back failed (this error says so).
    Unknown(ZoteroError),
}

/// The change recorded for `key`, written as `sent` at `version`: an update of the fields sent when `before` was
/// there, else a creation titled from `data` (the object as stored, or as sent).
fn record(
    kind: ObjectKind,
    key: &str,
    sent: &Value,
    before: Option<&ZoteroObject>,
    version: u64,
    data: Option<&Map<String, Value>>,
) -> Change {
    let kind = Kind::of(kind);
    match (before, sent.as_object()) {
        (Some(prior), Some(fields)) => Change::Updated {
            kind,
            key: key.to_owned(),
            version,
            title: title_of(&prior.data),
            before: prior_values(&prior.data, fields),
        },
        _ => Change::Created { kind, key: key.to_owned(), version, title: data.map(title_of).unwrap_or_default() },
    }
}

/// What writing `sent` (by key) records if it lands: an update of what `before` holds under its key, else a
/// creation. `None` for an object without a key (none is sent: [`with_keys`] gives each one).
fn pending(kind: ObjectKind, sent: &Value, before: &HashMap<String, ZoteroObject>) -> Option<Pending> {
    let key = sent.get("key").and_then(Value::as_str)?;
    let prior = before.get(key);
    let version = prior.map_or(0, |prior| prior.version);
    let fields = sent.as_object();
    let change = record(kind, key, sent, prior, version, fields);
    let sent = match prior {
        Some(_) => fields.cloned().unwrap_or_default(),
        None => Map::new(),
    };
    Some(Pending { change, sent })
}

/// `objects` with a fresh key (and version 0: create only) on each new object, so that a write whose answer
/// is lost can be read back by key.
fn with_keys(objects: &[Value]) -> Result<Vec<Value>, ZoteroError> {
    objects
        .iter()
        .map(|object| match object {
            Value::Object(fields) if !fields.contains_key("key") => {
                let key = new_key().map_err(|e| {
                    ZoteroError::Config(format!("no secure random source for a new key ({e}); nothing was written"))
                })?;
                let mut fields = fields.clone();
                fields.insert("key".into(), Value::String(key));
                fields.insert("version".into(), Value::from(0));
                Ok(Value::Object(fields))
            }
            other => Ok(other.clone()),
        })
        .collect()
}

/// Marks the objects from `offset` on as not written after a request of the write failed as a whole: this
/// batch's as failed with the error, the rest as never sent.
fn fail_rest(outcome: &mut WriteOutcome, objects: &[Value], offset: usize, error: &ZoteroError) {
    let status = error.status().unwrap_or(0);
    let message = error.to_string();
    let end = (offset + BATCH_SIZE).min(objects.len());
    for (index, object) in objects.iter().enumerate().take(end).skip(offset) {
        let key = object.get("key").and_then(Value::as_str).map(str::to_owned);
        outcome.failed.insert(index, WriteFailure { key, code: status, message: message.clone() });
    }
    outcome.not_sent = (end..objects.len()).collect();
}
