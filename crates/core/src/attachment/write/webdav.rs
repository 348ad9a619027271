//! WebDAV's arms of the attachment writes: the item, then `<KEY>.zip`, then `<KEY>.prop`, then the item's
//! `md5`/`mtime` (the order [`super`] explains).

use futures_util::future::join;
use serde_json::{json, Map, Value};

use super::{
    patch_once_more_on_conflict, record, renamed, AttachmentError, FileLeft, NewFileFailed, StepFailure, StoreWrite,
    StoredAttachment, WriteError, STEP_PROP, STEP_RECORD, STEP_ZIP,
};
use crate::files::{FileStoreError, StoreKind};
use crate::platform::Clock;
use crate::webdav::{md5_hex, pack, unpack, ArchiveError, FileProps, WebDavWriter, ZipLimits};
use crate::zotero::{ObjectKey, ZoteroObject, ZoteroWriter};

impl StoreWrite for WebDavWriter {
    fn kind(&self) -> StoreKind {
        StoreKind::WebDav
    }

    /// The archive is made before the first write, and the file, now in it, is not held twice while uploading
    /// (a Worker has 128 MB).
    fn payload(&self, filename: &str, data: Vec<u8>, mtime_ms: u64) -> Result<Vec<u8>, ArchiveError> {
        pack(filename, &data, mtime_ms)
    }

    async fn store_new(
        &self,
        zotero: &ZoteroWriter,
        key: &ObjectKey,
        version: u64,
        payload: Vec<u8>,
        stored: StoredAttachment,
    ) -> Result<StoredAttachment, NewFileFailed> {
        let props = FileProps { mtime_ms: stored.mtime_ms, md5: stored.md5.clone() };
        upload_files(self, key, payload, &props, true).await.map_err(NewFileFailed::Undo)?;
        let changes = json!({ "md5": props.md5, "mtime": props.mtime_ms });
        Ok(record(zotero, StoreKind::WebDav, key, version, &changes, stored).await)
    }

    async fn discard_new(&self, key: &ObjectKey) -> Result<(), FileStoreError> {
        self.discard(key).await.map_err(FileStoreError::store)
    }

    async fn replace(
        &self,
        zotero: &ZoteroWriter,
        item: &ZoteroObject,
        key: &ObjectKey,
        data: Vec<u8>,
        mut changes: Map<String, Value>,
        stored: StoredAttachment,
    ) -> Result<StoredAttachment, WriteError> {
        let props = FileProps { mtime_ms: stored.mtime_ms, md5: stored.md5.clone() };
        let zip = pack(&stored.filename, &data, props.mtime_ms)?;
        drop(data);

        if let Err(e) = upload_files(self, key, zip, &props, false).await {
            let state = if e.step == STEP_ZIP {
                "Nothing was changed: the previous file is still the one stored.".to_owned()
            } else {
                "The new file's archive is on WebDAV but its .prop still describes the previous file, so Zotero \
                 Desktop keeps the copy it has. Call again with the same arguments to finish the replacement."
                    .to_owned()
            };
            return Err(WriteError::Interrupted { step: e.step, cause: e.cause, state });
        }

        changes.insert("md5".into(), json!(props.md5));
        changes.insert("mtime".into(), json!(props.mtime_ms));
        Ok(record(zotero, StoreKind::WebDav, key, item.version, &Value::Object(changes), stored).await)
    }

    /// The archive is written again with the file under its new name (same bytes, same md5 and mtime, so the
    /// `.prop` stays as it is), then the item is changed.
    async fn rename(
        &self,
        zotero: &ZoteroWriter,
        clock: &dyn Clock,
        item: &ZoteroObject,
        key: &ObjectKey,
        filename: String,
        current: &str,
    ) -> Result<StoredAttachment, WriteError> {
        let dav = self;
        // The archive and its .prop are independent reads: both go out at once.
        let (zip, props) = join(dav.get_zip(key), dav.get_prop(key)).await;
        let zip = zip
            .map_err(|e| WriteError::Invalid { reason: format!("the file could not be downloaded ({e})") })?
            .ok_or_else(|| AttachmentError::NoFileInStore { key: item.key.clone(), store: StoreKind::WebDav })?;
        let file = unpack(&zip, item.field("filename"), &ZipLimits::default())?;
        drop(zip);
        let md5 = md5_hex(&file.data);
        let props =
            props.map_err(|e| WriteError::Invalid { reason: format!("the file's .prop could not be read ({e})") })?;
        // The file keeps its time; only a file that never had one (no .prop, no mtime on the item) gets now.
        let mtime_ms = props
            .as_ref()
            .map(|p| p.mtime_ms)
            .or_else(|| item.data.get("mtime").and_then(Value::as_u64))
            .unwrap_or_else(|| clock.now_ms());
        let content_type = item.field("contentType").unwrap_or("application/octet-stream").to_owned();
        let stored_props = FileProps { mtime_ms, md5: md5.clone() };
        let stored = StoredAttachment::new(&item.key, filename.clone(), content_type, file.data.len(), &stored_props);
        if filename == current && file.filename == filename {
            return Ok(stored);
        }
        let zip = pack(&filename, &file.data, mtime_ms)?;
        dav.put_zip(key, zip).await.map_err(|e| WriteError::Interrupted {
            step: STEP_ZIP,
            cause: e.to_string(),
            state: "Nothing was changed: the file keeps its name.".into(),
        })?;
        if props.as_ref().is_none_or(|p| p.md5 != md5) {
            // The .prop was missing or described other bytes: write the one that matches what is stored now.
            dav.put_prop(key, &stored_props).await.map_err(|e| WriteError::Interrupted {
                step: STEP_PROP,
                cause: e.to_string(),
                state: "The archive now holds the file under its new name, but the item still has the old one. \
                        Call again with the same arguments to finish."
                    .into(),
            })?;
        }
        match patch_once_more_on_conflict(zotero, key, item.version, &renamed(item, &filename, current)).await {
            Ok(()) => Ok(stored),
            Err(e) => Err(WriteError::Interrupted {
                step: STEP_RECORD,
                cause: e.to_string(),
                state: format!(
                    "The archive on WebDAV holds the file as {filename}, but the item still names it {current}; \
                     Zotero Desktop keeps its own copy as it is. Call again with the same arguments to finish."
                ),
            }),
        }
    }

    /// Its `.zip` and `.prop`.
    async fn remove_file_of_deleted_item(&self, key: &ObjectKey) -> Result<(), FileLeft> {
        self.delete(key).await.map_err(|cause| FileLeft { key: key.clone(), cause: cause.to_string() })
    }
}

/// The archive, then the `.prop` (which is what makes Zotero Desktop see a new file). `new`: the attachment was
/// created by this call, so there is no earlier file for the undo journal to keep.
async fn upload_files(
    dav: &WebDavWriter,
    key: &ObjectKey,
    zip: Vec<u8>,
    props: &FileProps,
    new: bool,
) -> Result<(), StepFailure> {
    let put = if new { dav.put_new_zip(key, zip).await } else { dav.put_zip(key, zip).await };
    put.map_err(|e| StepFailure { step: STEP_ZIP, cause: e.to_string() })?;
    dav.put_prop(key, props).await.map_err(|e| StepFailure { step: STEP_PROP, cause: e.to_string() })
}
