//! Writing attachment files, in the order Zotero Desktop keeps for each store.
//!
//! **WebDAV**: the item, then `<KEY>.zip`, then `<KEY>.prop`, then the item's `md5`/`mtime`. The order is what
//! keeps a failure part-way readable. Zotero Desktop finds a file on WebDAV through its `.prop`: an item with no
//! `.prop` is "file not uploaded yet", a `.prop` without its `.zip` would be a broken download. So the archive
//! always goes first and the `.prop` second, and the item's `md5`/`mtime` last (they are bookkeeping Desktop
//! rewrites on its next sync; a file without them downloads fine).
//!
//! **Zotero Storage**: the item, then the file through the file API ([`crate::zotero_storage`]): authorization,
//! upload, registration. Registration is atomic on Zotero's side and records `md5`/`mtime` itself, so the item
//! either has its new file or keeps its old one. A rename is an item write only (Desktop renames the local file
//! and syncs the item; the stored bytes keep their md5), and a new name or type on a replaced file is patched on
//! the item after the file is registered (the registration records the new name itself; only a new content type
//! needs the `PATCH`).
//!
//! When a step fails, what can be undone is undone (a new item and its files are removed), and the error says
//! exactly what the library holds now and how to finish. Nothing is retried blindly: the only repeated request
//! is a `PATCH` refused with 412, sent again once after re-reading the item and checking it is still the same
//! file. A step whose answer was lost is never called undone: a replacement says the outcome is unknown and how
//! to tell; a new attachment's item is read back, and is complete if it records the file.

mod webdav;
mod zotero_storage;

use serde_json::{json, Map, Value};

use super::filename::valid_file_name;
use super::{guess_content_type, key_of, require_stored_file, AttachmentError};
use crate::files::{FileStoreError, FileWriter, StoreKind};
use crate::platform::Clock;
use crate::webdav::{md5_hex, ArchiveError, FileProps};
use crate::zotero::{ObjectKey, ObjectKind, ZoteroError, ZoteroObject, ZoteroWriter};

/// The largest file written, as in the TypeScript server: 40 MiB (the Worker also holds the archive).
pub const MAX_UPLOAD_BYTES: usize = 40 * 1024 * 1024;

/// One store's arms of the writes below, kept in that store's module (`webdav.rs`, `zotero_storage.rs`): the
/// order of steps is each store's own, the checks before and the item written first are shared. A new store
/// implements this in its own module and gets one arm in [`with_store`]. Called without a `dyn`: each call is
/// a `match` on the store, so the Worker carries no boxed future per step (measured: about 7 KiB of gzip).
#[allow(async_fn_in_trait)] // Single-threaded by design, as the tools: no `Send` bound is wanted.
trait StoreWrite {
    /// Which store this writes to.
    fn kind(&self) -> StoreKind;

    /// What goes up for a new file, made before the first write so that everything that can fail without
    /// writing fails first.
    fn payload(&self, filename: &str, data: Vec<u8>, mtime_ms: u64) -> Result<Vec<u8>, ArchiveError>;

    /// Stores the file of a just-created attachment item `key` (at `version`), and records it on the item.
    async fn store_new(
        &self,
        zotero: &ZoteroWriter,
        key: &ObjectKey,
        version: u64,
        payload: Vec<u8>,
        stored: StoredAttachment,
    ) -> Result<StoredAttachment, NewFileFailed>;

    /// Removes whatever of a just-created item's file reached the store (it is this call's own: discarded, not
    /// kept for the undo journal), or says what was left.
    async fn discard_new(&self, key: &ObjectKey) -> Result<(), FileStoreError>;

    /// Replaces the file of `item` (whose key is `key`) with `data`, `changes` to its item besides the file's
    /// own record; `stored` is what it will be.
    async fn replace(
        &self,
        zotero: &ZoteroWriter,
        item: &ZoteroObject,
        key: &ObjectKey,
        data: Vec<u8>,
        changes: Map<String, Value>,
        stored: StoredAttachment,
    ) -> Result<StoredAttachment, WriteError>;

    /// Renames the stored file of `item` from `current` to `filename` (already checked).
    async fn rename(
        &self,
        zotero: &ZoteroWriter,
        clock: &dyn Clock,
        item: &ZoteroObject,
        key: &ObjectKey,
        filename: String,
        current: &str,
    ) -> Result<StoredAttachment, WriteError>;

    /// Removes what is left of `key`'s file once its item was deleted for good.
    async fn remove_file_of_deleted_item(&self, key: &ObjectKey) -> Result<(), FileLeft>;
}

/// `$call` on the store a [`FileWriter`] writes to, named `$store`: the one place that names every store.
macro_rules! with_store {
    ($files:expr, $store:ident => $call:expr) => {
        match $files {
            FileWriter::WebDav($store) => $call,
            FileWriter::ZoteroStorage($store) => $call,
        }
    };
}

impl FileWriter<'_> {
    /// Which store this writes to, as the store says.
    pub fn kind(self) -> StoreKind {
        with_store!(self, store => store.kind())
    }
}

/// Why a new attachment's file was not stored.
enum NewFileFailed {
    /// A step failed: the item made for it is removed, and the error says what the library holds.
    Undo(StepFailure),
    /// The outcome is settled already (the item read back, or kept after a Deny).
    Final(WriteError),
}

/// A file to store: its name, type and bytes.
#[derive(Debug, Clone)]
pub struct Upload {
    pub filename: String,
    /// `None`: guessed from the file name.
    pub content_type: Option<String>,
    pub data: Vec<u8>,
}

/// The new item's metadata besides its file.
#[derive(Debug, Clone, Default)]
pub struct NewAttachment {
    /// The regular item it belongs to; `None` makes a standalone attachment.
    pub parent: Option<ObjectKey>,
    /// `None`: the file name, as Zotero does.
    pub title: Option<String>,
    /// Where the file came from.
    pub url: Option<String>,
    /// Zotero tag objects (`{"tag": "…"}`).
    pub tags: Vec<Value>,
    /// Collection keys (standalone attachments only: Zotero files child items under their parent).
    pub collections: Vec<String>,
}

/// What is stored once a write has finished.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredAttachment {
    pub key: String,
    pub filename: String,
    pub content_type: String,
    pub bytes: usize,
    pub md5: String,
    pub mtime_ms: u64,
    /// Set only when the last step, an item write, failed: what happened and what finishes it (storing the same
    /// file on the attachment again). The file is complete and Zotero Desktop downloads it, but the item does not
    /// list all of it: on WebDAV its md5/mtime (or new name or type), on Zotero Storage its new content type.
    pub warning: Option<String>,
}

impl StoredAttachment {
    /// Whether the item records all of the file (see `warning`).
    pub fn recorded(&self) -> bool {
        self.warning.is_none()
    }

    /// A file stored as `props` describes it, recorded on the item unless [`record`] says otherwise.
    fn new(key: &str, filename: String, content_type: String, bytes: usize, props: &FileProps) -> Self {
        Self {
            key: key.to_owned(),
            filename,
            content_type,
            bytes,
            md5: props.md5.clone(),
            mtime_ms: props.mtime_ms,
            warning: None,
        }
    }
}

/// Why a file was not written, and what the library holds now.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// Refused before anything was written.
    #[error("{reason}; nothing was written")]
    Invalid { reason: String },
    #[error("{0}; nothing was written")]
    Refused(#[from] AttachmentError),
    #[error("{0}")]
    Archive(#[from] ArchiveError),
    /// A step failed after something was written: `state` says what the library holds and what to do.
    #[error("{step} failed: {cause}. {state}")]
    Interrupted { step: &'static str, cause: String, state: String },
    /// A step was sent and its answer lost, so whether it took effect is unknown: `state` says how to find out
    /// (the md5 of attachment `key`).
    #[error("{step} failed: {cause}. {state}")]
    OutcomeUnknown { step: &'static str, cause: String, state: String, key: String },
    /// A new attachment's file could not be stored, and the item made for it could not be removed either: the
    /// library keeps item `key` without a file until it is deleted or given its file (a caller that can do either
    /// says how).
    #[error(
        "{step} failed: {cause}. The new attachment item {key} could not be removed ({reason}): Zotero shows it \
         without a file until it is deleted or given its file."
    )]
    Stranded { step: &'static str, cause: String, key: String, reason: String },
}

/// Creates a stored-file attachment: the item, then its file (on WebDAV its archive and `.prop`, then its
/// md5/mtime; on Zotero Storage the upload, whose registration records them).
pub async fn create(
    zotero: &ZoteroWriter,
    files: FileWriter<'_>,
    clock: &dyn Clock,
    upload: Upload,
    meta: NewAttachment,
) -> Result<StoredAttachment, WriteError> {
    let Upload { filename: given_name, content_type: given_type, data } = upload;
    let filename = checked_name(&given_name)?;
    check_size(data.len())?;
    if meta.parent.is_some() && !meta.collections.is_empty() {
        return Err(WriteError::Invalid {
            reason: "an attachment with a parent item is shown under its parent, so it cannot be put in collections; \
                     drop collections, or add the parent item to them instead"
                .into(),
        });
    }
    let content_type = given_type.unwrap_or_else(|| guess_content_type(&filename).to_owned());
    let mtime_ms = clock.now_ms();
    let props = FileProps { mtime_ms, md5: md5_hex(&data) };
    let bytes = data.len();
    // Everything that can fail without writing happens before the first write (WebDAV's archive is made here).
    let payload = with_store!(files, store => store.payload(&filename, data, mtime_ms))?;

    // Built here rather than from `GET /items/new` (one round trip less): the fields of Zotero's own template
    // for an `imported_file` attachment. A new attachment has no file yet, so no md5/mtime: Zotero refuses them
    // on creation and Desktop reads their absence as "not uploaded".
    let mut item = Map::new();
    item.insert("itemType".into(), json!("attachment"));
    item.insert("linkMode".into(), json!("imported_file"));
    item.insert("title".into(), json!(meta.title.clone().unwrap_or_else(|| filename.clone())));
    item.insert("accessDate".into(), json!(""));
    item.insert("note".into(), json!(""));
    item.insert("contentType".into(), json!(content_type));
    item.insert("charset".into(), json!(""));
    item.insert("filename".into(), json!(filename));
    item.insert("tags".into(), Value::Array(meta.tags.clone()));
    item.insert("collections".into(), json!(meta.collections));
    item.insert("relations".into(), json!({}));
    if let Some(parent) = &meta.parent {
        item.insert("parentItem".into(), json!(parent.as_str()));
    }
    if let Some(url) = &meta.url {
        item.insert("url".into(), json!(url));
    }
    let outcome = zotero.write_objects(ObjectKind::Items, &[Value::Object(item)]).await.map_err(|e| match &e {
        // Its answer lost and not read back: the item may exist, so "nothing was written" would be a guess.
        ZoteroError::OutcomeUnknown { keys, .. } => WriteError::OutcomeUnknown {
            step: STEP_CREATE,
            cause: e.to_string(),
            state: "No file was sent. If the item exists it has no file: delete it for good, or store the \
                        file on it"
                .into(),
            key: keys.first().cloned().unwrap_or_default(),
        },
        _ => WriteError::Invalid { reason: format!("Zotero did not create the attachment item ({e})") },
    })?;
    let Some(key) = outcome.success.get(&0).cloned() else {
        let why = outcome.failed.get(&0).map_or_else(|| "no reason given".to_owned(), |f| f.message.clone());
        return Err(WriteError::Invalid { reason: format!("Zotero refused the attachment item: {why}") });
    };
    let version = outcome.successful.get(&0).and_then(|o| o.get("version")).and_then(Value::as_u64);
    let version = version.unwrap_or(outcome.library_version);
    let object_key = ObjectKey::parse(&key).map_err(|_| WriteError::Invalid {
        reason: format!("Zotero answered with an item key that is not one ({key})"),
    })?;

    let stored = StoredAttachment::new(&key, filename, content_type, bytes, &props);
    let failure = match with_store!(files, store => store.store_new(zotero, &object_key, version, payload, stored).await)
    {
        Ok(stored) => return Ok(stored),
        Err(NewFileFailed::Final(error)) => return Err(error),
        Err(NewFileFailed::Undo(failure)) => failure,
    };
    Err(match undo_create(zotero, files, &object_key, version).await {
        Ok(state) => WriteError::Interrupted { step: failure.step, cause: failure.cause, state },
        Err(reason) => {
            WriteError::Stranded { step: failure.step, cause: failure.cause, key, reason: reason.to_string() }
        }
    })
}

/// A new attachment whose file upload went unanswered at a step that can record the file: the item, made by this
/// call, says which way it went. Reading it is not a retry. If it records this file's md5 the attachment is
/// complete (Zotero's recording is atomic), and that is the answer; if it has no file it is removed as after any
/// other failure, at the version just read. If it cannot be read, or not removed, the caller is told the item's
/// key and how to tell whether it is complete.
async fn settle_unanswered_create(
    zotero: &ZoteroWriter,
    files: FileWriter<'_>,
    key: &ObjectKey,
    step: &'static str,
    cause: String,
    stored: StoredAttachment,
) -> Result<StoredAttachment, WriteError> {
    let unknown = |cause: String, what: String| WriteError::OutcomeUnknown {
        step,
        cause,
        state: format!(
            "The new attachment item {key} is in the library, and {what}. Read it: if its md5 is {md5}, the file is \
             stored and the attachment is complete; if it has no md5, it has no file, and deleting it for good \
             leaves the library as it was before this call.",
            md5 = stored.md5
        ),
        key: key.as_str().to_owned(),
    };
    let item = match zotero.item(key).await {
        Ok(item) => item,
        Err(e) => return Err(unknown(cause, format!("whether it has its file could not be read ({e})"))),
    };
    match item.field("md5").filter(|md5| !md5.is_empty()) {
        Some(md5) if md5 == stored.md5 => {
            zotero.item_advanced(key, item.version);
            return Ok(stored);
        }
        // Not this call's file: someone else's write, which is not undone from here.
        Some(other) => {
            return Err(unknown(cause, format!("it now records another file (md5 {other}), not removed from here")))
        }
        None => {}
    }
    match undo_create(zotero, files, key, item.version).await {
        Ok(state) => {
            Err(WriteError::Interrupted { step, cause: format!("{cause}; the item, read again, had no file"), state })
        }
        // A registration still on its way may have landed between the read and the delete (which then fails
        // as stale): the file is not known to be absent, so this is not said to be an item without a file.
        Err(reason) => Err(unknown(cause, format!("it could not be removed ({reason})"))),
    }
}

/// A new attachment whose file Zotero has just recorded: the registration (or the authorization of bytes it
/// already held) raised the item's version, and the undo journal must hold that one, or undoing the creation
/// would find the item "changed since" and leave it. Zotero names the version in the answer's
/// `Last-Modified-Version` (Desktop's `zfs.js` reads it there too); without it the item is read once, and its
/// version taken only if it records this file. Reading is best effort: if it fails, the undo still refuses
/// rather than deletes blindly.
async fn registered(zotero: &ZoteroWriter, key: &ObjectKey, version: Option<u64>, md5: &str) {
    let version = match version {
        Some(version) => Some(version),
        None => match zotero.item(key).await {
            Ok(item) if item.field("md5") == Some(md5) => Some(item.version),
            _ => None,
        },
    };
    if let Some(version) = version {
        zotero.item_advanced(key, version);
    }
}

/// Replaces the file of a stored-file attachment. The file name is kept unless a new one is given (and then
/// the content type follows it, unless one is given too).
pub async fn replace(
    zotero: &ZoteroWriter,
    files: FileWriter<'_>,
    clock: &dyn Clock,
    item: &ZoteroObject,
    filename: Option<&str>,
    content_type: Option<&str>,
    data: Vec<u8>,
) -> Result<StoredAttachment, WriteError> {
    require_stored_file(item)?;
    let key = key_of(item)?;
    check_size(data.len())?;
    let current_name = item.field("filename").map(str::to_owned);
    let filename = match (filename, &current_name) {
        (Some(given), _) => checked_name(given)?,
        (None, Some(current)) => current.clone(),
        (None, None) => format!("{}.pdf", key.as_str()),
    };
    let content_type = match (content_type, item.field("contentType")) {
        (Some(given), _) => given.to_owned(),
        (None, Some(current)) if current_name.as_deref() == Some(filename.as_str()) => current.to_owned(),
        _ => guess_content_type(&filename).to_owned(),
    };
    let mtime_ms = clock.now_ms();
    let props = FileProps { mtime_ms, md5: md5_hex(&data) };
    let bytes = data.len();
    let mut changes = Map::new();
    if current_name.as_deref() != Some(filename.as_str()) {
        changes.insert("filename".into(), json!(filename));
    }
    if item.field("contentType") != Some(content_type.as_str()) {
        changes.insert("contentType".into(), json!(content_type));
    }
    let stored = StoredAttachment::new(&item.key, filename, content_type, bytes, &props);
    with_store!(files, store => store.replace(zotero, item, &key, data, changes, stored).await)
}

/// What the library holds after a registration whose answer was lost: it cannot be known from here, so it is
/// said so, with how to find out (the item's md5 tells) and what each answer means.
fn outcome_unknown(new_md5: &str, earlier_md5: &str) -> String {
    let earlier = match earlier_md5 {
        "" => "empty (the attachment had no file)".to_owned(),
        md5 => md5.to_owned(),
    };
    format!(
        "Whether the file was replaced is unknown. Read the attachment item again: if its md5 is {new_md5}, the new \
         file is stored (this call's undo journal entry lists it as replaced, the earlier file not kept); if its md5 \
         is still {earlier}, nothing was changed and the same call can be made again."
    )
}

/// Renames a stored file. On WebDAV the archive is written again with the file under its new name (same bytes,
/// same md5 and mtime, so the `.prop` stays as it is); on Zotero Storage the stored bytes do not change (a
/// download is saved under the item's name). Then the item's `filename` — and its title, when the title was just
/// the old file name — is changed.
pub async fn rename(
    zotero: &ZoteroWriter,
    files: FileWriter<'_>,
    clock: &dyn Clock,
    item: &ZoteroObject,
    new_name: &str,
) -> Result<StoredAttachment, WriteError> {
    require_stored_file(item)?;
    let key = key_of(item)?;
    let filename = checked_name(new_name)?;
    let current = item.field("filename").unwrap_or_default();
    with_store!(files, store => store.rename(zotero, clock, item, &key, filename, current).await)
}

/// Removes what is left of an attachment's file once its item was deleted for good: on WebDAV its `.zip` and
/// `.prop`; on Zotero Storage nothing, as deleting the item removed the file (and its size from the storage used).
/// An error says what was left where; nothing refers to it any more, so it only takes space.
pub async fn remove_file_of_deleted_item(files: FileWriter<'_>, key: &ObjectKey) -> Result<(), FileLeft> {
    with_store!(files, store => store.remove_file_of_deleted_item(key).await)
}

/// The file of a deleted attachment that could not be removed: it only takes space, as nothing refers to it.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{cause}; {key}.zip and {key}.prop are left in the zotero folder on WebDAV, where they only take space")]
pub struct FileLeft {
    key: ObjectKey,
    cause: String,
}

/// Why a just-created attachment item could not be removed after its file failed (it stays, without a file).
#[derive(Debug, thiserror::Error)]
enum NotRemoved {
    #[error("its deletion was sent but its answer was lost ({lost}), and it is still there")]
    AnswerLost { lost: String },
    #[error(
        "its deletion was sent but its answer was lost ({lost}), and reading it failed too ({read}), so it may \
         already be gone"
    )]
    AnswerLostUnread { lost: String, read: ZoteroError },
    #[error("{0}")]
    Refused(ZoteroError),
}

/// The item's new `filename`, and its title when that was just the old file name.
fn renamed(item: &ZoteroObject, filename: &str, current: &str) -> Value {
    let mut changes = Map::new();
    changes.insert("filename".into(), json!(filename));
    if item.field("title").is_none_or(|title| title == current) {
        changes.insert("title".into(), json!(filename));
    }
    Value::Object(changes)
}

/// A rename on Zotero Storage: the item write alone, as Desktop syncs it. What is stored keeps its bytes, md5
/// and mtime, which the result reports from the item (its size is not known without a download: 0).
async fn rename_item(
    zotero: &ZoteroWriter,
    item: &ZoteroObject,
    key: &ObjectKey,
    filename: String,
    current: &str,
) -> Result<StoredAttachment, WriteError> {
    let content_type = item.field("contentType").unwrap_or("application/octet-stream").to_owned();
    let props = FileProps {
        mtime_ms: item.data.get("mtime").and_then(Value::as_u64).unwrap_or_default(),
        md5: item.field("md5").unwrap_or_default().to_owned(),
    };
    let stored = StoredAttachment::new(&item.key, filename.clone(), content_type, 0, &props);
    if filename == current {
        return Ok(stored);
    }
    patch_once_more_on_conflict(zotero, key, item.version, &renamed(item, &filename, current)).await.map_err(|e| {
        WriteError::Interrupted {
            step: STEP_RECORD,
            cause: e.to_string(),
            state: "Nothing was changed: the file keeps its name.".into(),
        }
    })?;
    Ok(stored)
}

const STEP_ZIP: &str = "Uploading the file's archive (.zip) to WebDAV";
const STEP_PROP: &str = "Uploading the file's .prop to WebDAV";
const STEP_RECORD: &str = "Recording the file on the Zotero item";
const STEP_CREATE: &str = "Creating the attachment item";

/// The step that failed and why.
struct StepFailure {
    step: &'static str,
    cause: String,
}

/// Removes a just-created item and whatever of its file reached the store ([`remove_file_of_deleted_item`]: on
/// Zotero Storage a file that was not registered is never referred to, and deleting the item removes one that
/// was): what the library holds after, or why the item could not be removed (it stays, without a file).
async fn undo_create(
    zotero: &ZoteroWriter,
    files: FileWriter<'_>,
    key: &ObjectKey,
    version: u64,
) -> Result<String, NotRemoved> {
    // The file is this call's own: discarded, not kept for the undo journal.
    let removed = with_store!(files, store => store.discard_new(key).await);
    let item = match zotero.delete_item(key, version).await {
        // Sent, and no answer: the item may be gone already. A read tells (Zotero answers 404 for a deleted
        // item), where a second DELETE would be a blind retry.
        Err(ZoteroError::Transport(lost)) => match zotero.item(key).await {
            Err(e) if e.status() == Some(404) => Ok(version),
            Ok(_) => Err(NotRemoved::AnswerLost { lost: lost.to_string() }),
            Err(read) => Err(NotRemoved::AnswerLostUnread { lost: lost.to_string(), read }),
        },
        other => other.map_err(NotRemoved::Refused),
    };
    match (item, removed) {
        (Ok(_), Ok(())) => {
            Ok("Nothing was kept: the new attachment item and any part of its file were removed.".into())
        }
        (Ok(_), Err(left)) => Ok(format!(
            "The new attachment item was removed; its partial files could not be ({left}). They are not linked \
             to any item."
        )),
        (Err(e), _) => Err(e),
    }
}

/// Records the file on the item as the last step: md5/mtime on WebDAV (with any other changes), a new name or
/// type on Zotero Storage (whose registration recorded the rest). A failure here leaves a complete, downloadable
/// file, so it is reported in the result rather than undone.
async fn record(
    zotero: &ZoteroWriter,
    store: StoreKind,
    key: &ObjectKey,
    version: u64,
    changes: &Value,
    mut stored: StoredAttachment,
) -> StoredAttachment {
    if let Err(e) = patch_once_more_on_conflict(zotero, key, version, changes).await {
        let missing = match (changes.get("md5").is_some(), changes.get("filename").is_some()) {
            (true, true) => "its new checksum or file name",
            (true, false) => "its new checksum",
            (false, true) => "its new file name",
            (false, false) => "its new content type",
        };
        stored.warning = Some(format!(
            "{STEP_RECORD} failed ({e}). The file is complete on {store} and Zotero Desktop will download it, but \
             the item does not list {missing}. Storing the same file on attachment {key} again records it."
        ));
    }
    stored
}

/// `PATCH` at `version`; when Zotero answers 412 (the item changed meanwhile, e.g. Desktop synced), re-read it
/// and, if it is still a stored-file attachment, send the same changes once more at its new version.
async fn patch_once_more_on_conflict(
    zotero: &ZoteroWriter,
    key: &ObjectKey,
    version: u64,
    changes: &Value,
) -> Result<(), ZoteroError> {
    match zotero.patch_item(key, version, changes).await {
        Ok(_) => Ok(()),
        Err(e) if e.status() == Some(412) => {
            let fresh = zotero.item(key).await?;
            if require_stored_file(&fresh).is_err() || fresh.is_trashed() {
                return Err(e);
            }
            zotero.patch_item(key, fresh.version, changes).await.map(|_| ())
        }
        Err(e) => Err(e),
    }
}

/// A file name Zotero Desktop can store on every platform, or why there is none.
fn checked_name(raw: &str) -> Result<String, WriteError> {
    let name = valid_file_name(raw);
    if name == "_" && raw.trim() != "_" {
        return Err(WriteError::Invalid {
            reason: format!("{raw:?} is not a usable file name; give a name such as paper.pdf"),
        });
    }
    Ok(name)
}

fn check_size(bytes: usize) -> Result<(), WriteError> {
    if bytes == 0 {
        return Err(WriteError::Invalid { reason: "the file is empty".into() });
    }
    if bytes > MAX_UPLOAD_BYTES {
        return Err(WriteError::Invalid {
            reason: format!("the file is {bytes} bytes, over the {MAX_UPLOAD_BYTES}-byte limit"),
        });
    }
    Ok(())
}
