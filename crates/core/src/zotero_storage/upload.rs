//! Storing a file: authorization, the upload to the storage origin, registration (Zotero's documented
//! three steps, in Desktop's order), with one precondition throughout.

use http::Method;
use serde::Deserialize;

use super::client::{api_error, header_number, Purpose, ZoteroStorage, ZoteroStorageWriter};
use super::error::{UnansweredStep, ZoteroStorageError};
use crate::platform::HttpResponse;
use crate::webdav::{md5_hex, pack};
use crate::zotero::ObjectKey;

/// The most read of an API or storage answer during an upload: a small JSON or XML document.
const ANSWER_LIMIT: usize = 1024 * 1024;

/// Which file the upload replaces: Zotero stores it only if that is still so (412 otherwise).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Precondition {
    /// The attachment has no file yet (`If-None-Match: *`).
    NewFile,
    /// It has the file with this md5, the item's `md5` as last read (`If-Match: <md5>`).
    Replaces(String),
}

/// A file to store on an attachment item that already exists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileUpload {
    /// The file's name (the item's `filename`).
    pub filename: String,
    pub data: Vec<u8>,
    /// Its modification time, ms since the epoch.
    pub mtime_ms: u64,
    /// Store it zipped, as Desktop does for imported `text/*` attachments (snapshots): one entry, `filename`.
    pub zipped: bool,
    pub precondition: Precondition,
}

/// What Zotero now records for the attachment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UploadedFile {
    /// The file's md5 (of `data`, never of the zip), now the item's `md5`.
    pub md5: String,
    /// Now the item's `mtime`.
    pub mtime_ms: u64,
    /// The bytes that went to storage (the zip's size for a zipped file).
    pub filesize: u64,
    /// The item's new version (`Last-Modified-Version`), when Zotero sent it.
    pub version: Option<u64>,
    /// Zotero already had these bytes (`{"exists": 1}`): recorded on the item without an upload.
    pub already_stored: bool,
}

/// The authorization's answer without `params=1`: where to POST, and what goes around the file.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Authorization {
    url: String,
    content_type: String,
    prefix: String,
    suffix: String,
    upload_key: String,
}

impl ZoteroStorageWriter {
    /// Stores `file` on the attachment `key`: `POST {library}/items/{key}/file` with `md5`, `filename`,
    /// `filesize`, `mtime` (and `zipMD5`, `zipFilename` for a zipped one) under the precondition; if Zotero
    /// answers `{"exists": 1}` that is all. Else the prefix, the bytes and the suffix go to the URL Zotero named
    /// with its content type and no key, and `upload=<uploadKey>` registers them under the same precondition.
    ///
    /// The authorization and the registration follow the one retry rule of every Zotero step safe to repeat
    /// (429/503 sent again after `Retry-After`, within the item writes' bound: see `post_form`); nothing else is
    /// retried. A refusal, or any failure of the upload to storage, leaves the item as it was (the uploaded
    /// bytes, if any, are never referred to); a 412 says the file changed meanwhile, and the caller reads again.
    /// A lost answer to either POST to the API is [`ZoteroStorageError::Unanswered`]: the registration records
    /// the file, and so does the authorization of bytes Zotero already holds; so is a 412 to a step sent again.
    ///
    /// A replaced file is recorded in [`ZoteroStorageWriter::log`] as not kept: Zotero Storage holds one file per
    /// attachment, so the earlier one is gone once the new one is registered.
    ///
    /// `file` is taken by value: its bytes become the upload's body (the prefix and suffix written around them in
    /// the same buffer), so a 40 MiB file is never held twice over while it is sent.
    pub async fn upload(&self, key: &ObjectKey, file: FileUpload) -> Result<UploadedFile, ZoteroStorageError> {
        let replaces = matches!(file.precondition, Precondition::Replaces(_));
        self.gate.pass().await;
        let uploaded = self.store(key, file).await;
        // A registration (or an authorization of bytes Zotero already holds) whose answer was lost may have
        // replaced the file: the journal records it as replaced (the earlier file not kept), which is true if it
        // did and harmless if it did not.
        let maybe_replaced = matches!(uploaded, Err(ZoteroStorageError::Unanswered { .. }));
        if replaces && (uploaded.is_ok() || maybe_replaced) {
            self.record_not_kept(key, crate::file_changes::FileAction::Replaced);
        }
        uploaded
    }

    /// Records that `key`'s file went with its attachment, deleted for good: Zotero Storage (and Desktop) delete
    /// the file with the item and keep no copy, so the journal can only say the file will not come back.
    pub fn record_removed_with_item(&self, key: &ObjectKey) {
        self.record_not_kept(key, crate::file_changes::FileAction::Removed);
    }

    /// One change to `key`'s file for the journal; this store never keeps the earlier file.
    fn record_not_kept(&self, key: &ObjectKey, action: crate::file_changes::FileAction) {
        self.log.push(crate::file_changes::FileChange {
            key: key.as_str().to_owned(),
            store: self.store_kind(),
            action,
            kept: false,
            left: None,
        });
    }

    async fn store(&self, key: &ObjectKey, file: FileUpload) -> Result<UploadedFile, ZoteroStorageError> {
        let storage: &ZoteroStorage = self;
        let FileUpload { filename, data, mtime_ms, zipped, precondition } = file;
        let mut precondition = match &precondition {
            Precondition::NewFile => ("if-none-match", "*".to_owned()),
            Precondition::Replaces(md5) => {
                let md5 = md5.trim().to_ascii_lowercase();
                if md5.len() != 32 || !md5.bytes().all(|b| b.is_ascii_hexdigit()) {
                    return Err(ZoteroStorageError::BadMd5 { value: md5.chars().take(40).collect() });
                }
                ("if-match", md5)
            }
        };
        let md5 = md5_hex(&data);
        let mut form = form_urlencoded::Serializer::new(String::new());
        form.append_pair("md5", &md5).append_pair("filename", &filename);
        // Zotero Desktop keeps the file itself, never an archive: its local API stores the bytes it is sent.
        let body = if zipped && storage.caps().file_archives {
            let zip = pack(&filename, &data, mtime_ms)
                .map_err(|e| ZoteroStorageError::Pack { key: key.to_string(), detail: e.to_string() })?;
            drop(data);
            form.append_pair("zipMD5", &md5_hex(&zip)).append_pair("zipFilename", &format!("{key}.zip"));
            zip
        } else {
            data
        };
        let filesize = body.len() as u64;
        form.append_pair("filesize", &filesize.to_string()).append_pair("mtime", &mtime_ms.to_string());
        let path = storage.file_path(key.as_str());
        let purpose = Purpose::Upload { filesize };

        // Sent, and no answer: Zotero may have acted on it before the connection dropped.
        let unanswered = |step, e: ZoteroStorageError| match e {
            ZoteroStorageError::Transport(_) | ZoteroStorageError::Timeout { .. } => {
                ZoteroStorageError::Unanswered { step, key: key.to_string(), md5: md5.clone(), cause: e.to_string() }
            }
            other => other,
        };
        // A step refused. A 412 after the step was sent again may be the earlier attempt's own doing (a 429 or
        // 503 that Zotero gave after recording the file): whether it landed is checked, never assumed.
        let refused = |step, repeated: bool, answer: &HttpResponse| match answer.status().as_u16() {
            412 if repeated => ZoteroStorageError::Unanswered {
                step,
                key: key.to_string(),
                md5: md5.clone(),
                cause: "Zotero answered 429 or 503, and when the step was sent again it was refused as stale \
                        (412), which the first attempt may have caused"
                    .into(),
            },
            // A server error other than 503 (whose Retry-After says it was turned away) may come after the step
            // was acted on: the answer is lost, not a refusal.
            code @ (500..=502 | 504..=599) => ZoteroStorageError::Unanswered {
                step,
                key: key.to_string(),
                md5: md5.clone(),
                cause: format!("Zotero answered {code}, which a server may give after acting on the request"),
            },
            _ => api_error("POST", &path, key.as_str(), purpose, answer),
        };

        // 1. Authorization. When Zotero already holds these bytes it records them on the item right here and
        // answers `{"exists": 1}` (`ItemsController::_handleFileRequest` → `Zotero_Storage::updateFileItemInfo`),
        // so a lost answer leaves the outcome as unknown as a lost registration does.
        let form = form.finish();
        let (mut answer, mut repeated) = self
            .post_form(&path, form.clone(), &precondition)
            .await
            .map_err(|e| unanswered(UnansweredStep::Authorization, e))?;
        if storage.caps().if_match_synced_hash
            && precondition.0 == "if-match"
            && answer.status() == http::StatusCode::PRECONDITION_FAILED
        {
            // Zotero Desktop reports the md5 of the file on disk but checks `If-Match` against the hash of the
            // file as last synced (`let currentSyncedMD5 = item.attachmentSyncedHash || null;`, authorizeUpload
            // in server_localAPI.js), which only a file sync or a local-API upload sets.
            if says(&answer, "If-Match set but file does not exist") {
                // No synced hash: a file never synced. Zotero takes it as a new file, as its own sync client asks
                // again after this 412 (zfs.js); `If-None-Match: *` still fails if a sync records one meanwhile.
                precondition = ("if-none-match", "*".to_owned());
                (answer, repeated) = self
                    .post_form(&path, form, &precondition)
                    .await
                    .map_err(|e| unanswered(UnansweredStep::Authorization, e))?;
            } else if says(&answer, "ETag does not match current version of file") {
                // A synced hash other than the md5 read: the file was edited on disk since Zotero last synced it
                // (or replaced since it was read). The synced hash cannot be read through the local API.
                return Err(ZoteroStorageError::DesktopNotSynced { key: key.to_string(), md5: precondition.1 });
            }
        }
        if !answer.status().is_success() {
            return Err(refused(UnansweredStep::Authorization, repeated, &answer));
        }
        let json: serde_json::Value = serde_json::from_slice(answer.body())
            .map_err(|e| ZoteroStorageError::Decode { what: "the upload authorization", reason: e.to_string() })?;
        let exists = json.get("exists").is_some_and(|v| v.as_u64() == Some(1) || v.as_bool() == Some(true));
        if exists {
            return Ok(UploadedFile { md5, mtime_ms, filesize, version: version_of(&answer), already_stored: true });
        }
        let authorization: Authorization = serde_json::from_value(json)
            .map_err(|e| ZoteroStorageError::Decode { what: "the upload authorization", reason: e.to_string() })?;

        // 2. The upload, to the storage origin: no key, no Zotero header.
        let target = storage.storage_url(None, &authorization.url)?;
        let payload = framed(&authorization.prefix, body, &authorization.suffix);
        let request =
            ZoteroStorage::storage_request(Method::POST, &target, Some(&authorization.content_type), payload)?;
        let stored = storage.send(request, ANSWER_LIMIT, storage.policy.transfer_timeout_ms).await?;
        if !stored.status().is_success() {
            let text: String = String::from_utf8_lossy(stored.body()).chars().take(300).collect();
            let body = if text.trim().is_empty() { String::new() } else { format!(": {}", text.trim()) };
            return Err(ZoteroStorageError::UploadFailed {
                key: key.to_string(),
                status: stored.status().as_u16(),
                body,
            });
        }

        // 3. Registration, under the same precondition.
        let mut form = form_urlencoded::Serializer::new(String::new());
        form.append_pair("upload", &authorization.upload_key);
        let (registered, repeated) = self
            .post_form(&path, form.finish(), &precondition)
            .await
            .map_err(|e| unanswered(UnansweredStep::Registration, e))?;
        if !registered.status().is_success() {
            return Err(refused(UnansweredStep::Registration, repeated, &registered));
        }
        Ok(UploadedFile { md5, mtime_ms, filesize, version: version_of(&registered), already_stored: false })
    }

    /// A form POST to the API with the precondition header, under the one retry rule of every Zotero step safe
    /// to repeat ([`crate::zotero::retry_wait`]): the precondition makes the authorization and the registration
    /// so. The dataserver checks `If-Match`/`If-None-Match` before either (`ItemsController::_handleFileRequest`),
    /// so a repeat of one that landed is refused with 412 and never records a file twice; and the upload key
    /// stays queued until a registration uses it (`Zotero_S3::getUploadInfo`). A 429 or 503 (Zotero's rate
    /// limit, or a full upload queue, whose cure is the wait) is sent again after its `Retry-After`, within the
    /// item writes' bound; past it the answer is returned for the caller to report with its wait.
    ///
    /// Also returns whether the POST was sent more than once: a 412 then may be the earlier attempt's own doing.
    async fn post_form(
        &self,
        path: &str,
        form: String,
        precondition: &(&'static str, String),
    ) -> Result<(HttpResponse, bool), ZoteroStorageError> {
        let mut attempt = 0;
        loop {
            let answer = self.post_form_once(path, form.clone(), precondition).await?;
            if !matches!(answer.status().as_u16(), 429 | 503) {
                return Ok((answer, attempt > 0));
            }
            let retry_after = crate::zotero::retry_after_ms(answer.headers(), self.clock.now_ms());
            match crate::zotero::retry_wait(&self.policy.retry, retry_after, attempt) {
                Ok(wait) => {
                    self.clock.sleep(wait).await;
                    attempt += 1;
                }
                Err(_) => return Ok((answer, attempt > 0)),
            }
        }
    }

    /// One form POST, as the server asks (Zotero Desktop wants a local key on each).
    async fn post_form_once(
        &self,
        path: &str,
        form: String,
        precondition: &(&'static str, String),
    ) -> Result<HttpResponse, ZoteroStorageError> {
        let storage: &ZoteroStorage = self;
        self.backend.post_form(storage, path, &form, precondition).await
    }
}

impl ZoteroStorage {
    /// One form POST to the API with the precondition header, sent once.
    pub(super) async fn post_form_plain(
        &self,
        path: &str,
        form: &str,
        precondition: &(&'static str, String),
    ) -> Result<HttpResponse, ZoteroStorageError> {
        let headers = [
            ("content-type", "application/x-www-form-urlencoded".to_owned()),
            (precondition.0, precondition.1.clone()),
        ];
        let request = self.api_request(Method::POST, path, &headers, form.as_bytes().to_vec())?;
        self.send(request, ANSWER_LIMIT, self.policy.request_timeout_ms).await
    }
}

/// `prefix` + `body` + `suffix` in `body`'s own buffer: the file is moved up by the prefix's length within it
/// rather than copied into a new one. Growing the buffer may move it once (natively a large buffer is remapped,
/// not copied), so at most the file and its copy exist for a moment, never the three a fresh buffer built
/// beside a kept original and a clone of it cost (a 40 MiB upload added 120 MB at its peak).
pub(super) fn framed(prefix: &str, mut body: Vec<u8>, suffix: &str) -> Vec<u8> {
    let (prefix, suffix) = (prefix.as_bytes(), suffix.as_bytes());
    let len = body.len();
    body.reserve_exact(prefix.len() + suffix.len());
    body.resize(len + prefix.len(), 0);
    body.copy_within(..len, prefix.len());
    body[..prefix.len()].copy_from_slice(prefix);
    body.extend_from_slice(suffix);
    body
}

/// Whether an answer's text says `message` (Zotero's refusals are plain text).
fn says(response: &HttpResponse, message: &str) -> bool {
    String::from_utf8_lossy(response.body()).contains(message)
}

fn version_of(response: &HttpResponse) -> Option<u64> {
    header_number(response.headers(), "last-modified-version").map(|v| v as u64)
}
