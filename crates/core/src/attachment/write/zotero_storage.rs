//! Zotero Storage's arms of the attachment writes (and Zotero Desktop's, which stores files by the same three
//! steps through its local API): the item, then the file through the file API ([`crate::zotero_storage`]).

use serde_json::{json, Map, Value};

use super::{
    outcome_unknown, patch_once_more_on_conflict, registered, rename_item, settle_unanswered_create, FileLeft,
    NewFileFailed, StepFailure, StoreWrite, StoredAttachment, WriteError,
};
use crate::files::{FileStoreError, FileWriter, StoreKind};
use crate::platform::Clock;
use crate::webdav::ArchiveError;
use crate::zotero::{ObjectKey, ZoteroError, ZoteroObject, ZoteroWriter};
use crate::zotero_storage::{FileUpload, Precondition, ZoteroStorageError, ZoteroStorageWriter};

const STEP_STORAGE: &str = "Storing the file on Zotero Storage";
const STEP_DESKTOP: &str = "Storing the file through Zotero Desktop's local API";

/// The file-storing step as the person knows the store: Zotero Desktop keeps the file in its data directory,
/// though the requests are the Web API's.
fn storage_step(storage: &ZoteroStorageWriter) -> &'static str {
    match storage.store_kind() {
        StoreKind::Desktop => STEP_DESKTOP,
        _ => STEP_STORAGE,
    }
}

/// Whether Zotero Desktop stores this attachment's file zipped on Zotero Storage: imported `text/*` files
/// (snapshots), as its `_isZipUpload` decides; everything written here is an imported file.
fn zipped_on_zotero_storage(content_type: &str) -> bool {
    content_type.starts_with("text/")
}

impl StoreWrite for ZoteroStorageWriter {
    fn kind(&self) -> StoreKind {
        self.store_kind()
    }

    fn payload(&self, _: &str, data: Vec<u8>, _: u64) -> Result<Vec<u8>, ArchiveError> {
        Ok(data)
    }

    async fn store_new(
        &self,
        zotero: &ZoteroWriter,
        key: &ObjectKey,
        _: u64,
        payload: Vec<u8>,
        stored: StoredAttachment,
    ) -> Result<StoredAttachment, NewFileFailed> {
        let file = FileUpload {
            filename: stored.filename.clone(),
            data: payload,
            mtime_ms: stored.mtime_ms,
            zipped: zipped_on_zotero_storage(&stored.content_type),
            precondition: Precondition::NewFile,
        };
        match self.upload(key, file).await {
            Ok(uploaded) => {
                registered(zotero, key, uploaded.version, &stored.md5).await;
                Ok(stored)
            }
            Err(e @ ZoteroStorageError::Unanswered { .. }) => {
                let step = storage_step(self);
                settle_unanswered_create(zotero, FileWriter::ZoteroStorage(self), key, step, e.to_string(), stored)
                    .await
                    .map_err(NewFileFailed::Final)
            }
            Err(ZoteroStorageError::Desktop(denied @ ZoteroError::LocalWriteDenied { .. })) => {
                // Zotero Desktop's "Allow" covered the item's write only, and the person denied the file's:
                // removing the item would be a change too, which they have just refused, so it stays, said.
                Err(NewFileFailed::Final(WriteError::Stranded {
                    step: storage_step(self),
                    cause: denied.to_string(),
                    key: key.as_str().to_owned(),
                    reason: "after a Deny zotero-mcp asks Zotero nothing more in the same call, not even to \
                             remove it"
                        .into(),
                }))
            }
            Err(e) => Err(NewFileFailed::Undo(StepFailure { step: storage_step(self), cause: e.to_string() })),
        }
    }

    /// A file that was not registered is never referred to, and deleting the item removes one that was.
    async fn discard_new(&self, _: &ObjectKey) -> Result<(), FileStoreError> {
        Ok(())
    }

    /// The upload under `If-Match` the item's md5 (or `If-None-Match: *` when it has no file yet), whose
    /// registration records the new md5/mtime and file name; then, when the type changes, it is written on the
    /// item too (Desktop syncs it as an item change; this client does not send `contentType` with the
    /// authorization, so the file API leaves the type as it was). That `PATCH` failing leaves a complete file
    /// under its new name with the old type: said in the result's warning, with the call that finishes it.
    async fn replace(
        &self,
        zotero: &ZoteroWriter,
        item: &ZoteroObject,
        key: &ObjectKey,
        data: Vec<u8>,
        changes: Map<String, Value>,
        stored: StoredAttachment,
    ) -> Result<StoredAttachment, WriteError> {
        let storage = self;
        let precondition = match item.field("md5").filter(|md5| !md5.is_empty()) {
            Some(md5) => Precondition::Replaces(md5.to_owned()),
            None => Precondition::NewFile,
        };
        let file = FileUpload {
            filename: stored.filename.clone(),
            data,
            mtime_ms: stored.mtime_ms,
            zipped: zipped_on_zotero_storage(&stored.content_type),
            precondition,
        };
        let earlier_md5 = item.field("md5").unwrap_or_default().to_owned();
        let uploaded = storage.upload(key, file).await.map_err(|e| match &e {
            ZoteroStorageError::Unanswered { md5, .. } => WriteError::OutcomeUnknown {
                step: storage_step(storage),
                state: outcome_unknown(md5, &earlier_md5),
                cause: e.to_string(),
                key: key.as_str().to_owned(),
            },
            _ => WriteError::Interrupted {
                step: storage_step(storage),
                cause: e.to_string(),
                state: "Nothing was changed: the previous file is still the one stored.".into(),
            },
        })?;
        // The registration recorded the file's name with its md5 and mtime (the dataserver's
        // `Zotero_Storage::updateFileItemInfo` sets `attachmentFilename`; Zotero Desktop's `registerUpload` too),
        // so only a new content type is left to write on the item.
        let Some(new_type) = changes.get("contentType").and_then(Value::as_str).map(str::to_owned) else {
            return Ok(stored);
        };
        let version = uploaded.version.unwrap_or(item.version);
        let patch = json!({ "contentType": new_type });
        let mut stored = stored;
        if let Err(e) = patch_once_more_on_conflict(zotero, key, version, &patch).await {
            let store = storage.store_kind();
            let old_type = item.field("contentType").filter(|t| !t.is_empty()).unwrap_or("none");
            stored.warning = Some(format!(
                "The file was replaced, but recording its content type on the item failed ({e}). The new file is \
                 on {store} and the item records it (md5 {md5}, file name {name}), so Zotero Desktop downloads \
                 it; only the item's content type is still {old_type}, not {new_type}. Storing the same file on \
                 attachment {key} again with content type {new_type} records it.",
                md5 = stored.md5,
                name = stored.filename,
            ));
        }
        Ok(stored)
    }

    /// The stored bytes do not change (a download is saved under the item's name): the item write alone, as
    /// Desktop syncs it.
    async fn rename(
        &self,
        zotero: &ZoteroWriter,
        _: &dyn Clock,
        item: &ZoteroObject,
        key: &ObjectKey,
        filename: String,
        current: &str,
    ) -> Result<StoredAttachment, WriteError> {
        if !self.caps().file_renames {
            // Zotero Desktop's local API would record the new name without renaming the file on disk, leaving
            // the attachment pointing at a file that is not there.
            return Err(WriteError::Invalid {
                reason: "Zotero Desktop renames a stored file itself: in Zotero, right-click the attachment and \
                         choose \"Rename File from Parent Metadata\" (or rename it in the attachment pane). \
                         Through its local API the name would change without the file on disk, so nothing was \
                         changed"
                    .into(),
            });
        }
        if item.field("md5").is_none_or(str::is_empty) {
            // Zotero Storage records a file's md5 on its item when the file is registered: without one the item
            // has no file (an upload that never finished), and renaming it would describe a file that is not
            // there.
            return Err(WriteError::Invalid {
                reason: format!(
                    "attachment {key} has no stored file (Zotero Storage records none for it: an upload that never \
                     finished), so there is nothing to rename. Upload its file again as a replacement of {key}, or \
                     delete the empty attachment"
                ),
            });
        }
        rename_item(zotero, item, key, filename, current).await
    }

    /// Nothing to remove: deleting the item removed the file (and its size from the storage used); the journal
    /// is told the file will not come back.
    async fn remove_file_of_deleted_item(&self, key: &ObjectKey) -> Result<(), FileLeft> {
        self.record_removed_with_item(key);
        Ok(())
    }
}
