//! `items/<key>/file`: Zotero Storage's API side, as the dataserver's `ItemsController::_handleFileRequest` and
//! the file upload documentation describe it.
//!
//! - `GET` answers 302 to a signed URL on the storage origin (never the bytes), with `Zotero-File-*` headers.
//! - `POST` with `md5, filename, filesize, mtime` authorizes an upload: `{"exists": 1}` when the bucket already
//!   holds that file (the item is updated at once), otherwise where and how to post it and an `uploadKey`.
//! - `POST` with `upload=<uploadKey>` registers the uploaded file: the item gets its `md5`, `mtime` and
//!   `filename`, and a new version.
//!
//! Both `POST`s need `If-None-Match: *` (no file yet) or `If-Match: <the item's md5>` (replacing it): 428
//! without, 412 when it does not hold, so two clients cannot overwrite each other's file unawares.

use serde_json::{json, Map, Value};

use super::{allow, lib, Caller, Req, GET, PATCH, POST};
use crate::dates;
use crate::error::{ApiError, ApiResult};
use crate::keys::is_valid_key;
use crate::query::parse_pairs;
use crate::reply::Reply;
use crate::state::{Library, State};
use crate::storage::{is_md5, random_hex, StoredFile, UploadInfo};
use crate::LibraryRef;

const MIB: f64 = 1024.0 * 1024.0;

pub(super) fn file_route(
    state: &mut State,
    req: &Req,
    caller: &Caller,
    lref: LibraryRef,
    key: &str,
) -> ApiResult<Reply> {
    if !is_valid_key(key) || !lib(state, lref)?.items.contains_key(key) {
        return Err(ApiError::not_found("Not found"));
    }
    if !caller.can_access_files(lref) {
        return Err(ApiError::forbidden("File access denied"));
    }
    allow(req, &[GET, POST, PATCH], "HEAD, GET, POST, PATCH")?;
    let l = lib(state, lref)?;
    let Some(attachment) = l.items.get(key).and_then(|r| r.data.attachment.clone()) else {
        return Err(ApiError::bad_request("Item is not an attachment"));
    };
    match req.method {
        http::Method::POST => {
            if !attachment.stores_file() {
                return Err(ApiError::bad_request("Cannot upload file for linked file/URL attachment item"));
            }
            // The dataserver's `_handleFileRequest`: `if (!$group->userCanEditFiles($this->userID))
            // $this->e403("You do not have file editing access");`, before the preconditions.
            if !l.files_editable {
                return Err(ApiError::forbidden("You do not have file editing access"));
            }
            check_precondition(req, l, key)?;
            let form = form(req);
            match form.iter().find(|(k, _)| k == "upload") {
                Some((_, upload_key)) => register(state, lref, key, upload_key),
                None => authorize(state, lref, key, &form),
            }
        }
        http::Method::PATCH => Err(ApiError::not_implemented(
            "zotero-sim does not implement partial (binary diff) uploads; upload the whole file with POST",
        )),
        _ => download(state, lref, key),
    }
}

/// 302 to a signed URL for the item's stored file; 404 when it has none.
fn download(state: &mut State, lref: LibraryRef, key: &str) -> ApiResult<Reply> {
    let l = lib(state, lref)?;
    let Some(file) = l.files.get(key).cloned() else { return Err(ApiError::not_found("Not found")) };
    let attachment = l.items.get(key).and_then(|r| r.data.attachment.clone()).unwrap_or_default();
    let content_type = if file.zip {
        "application/zip".to_string()
    } else if attachment.charset.is_empty() {
        attachment.content_type.clone()
    } else {
        format!("{}; charset={}", attachment.content_type, attachment.charset)
    };
    let url = state.storage.sign_download(&file.hash, &content_type).map_err(|e| ApiError::new(500, e.to_string()))?;
    Ok(Reply::new(302)
        .header("Location", url)
        .header("Zotero-File-Modification-Time", attachment.mtime.unwrap_or(0).to_string())
        .header("Zotero-File-MD5", file.hash)
        .header("Zotero-File-Size", file.size.to_string())
        .header("Zotero-File-Compressed", if file.zip { "Yes" } else { "No" }))
}

/// `If-Match: <md5>` must name the item's current file, `If-None-Match: *` requires it to have none.
fn check_precondition(req: &Req, l: &Library, key: &str) -> ApiResult<()> {
    let rec = l.items.get(key).ok_or_else(|| ApiError::not_found("Not found"))?;
    let current = rec.data.attachment.as_ref().and_then(|a| a.md5.clone());
    let stale = |message: &str| ApiError::precondition_failed(message).with_version(rec.version);
    match (req.header("if-match").filter(|v| !v.is_empty()), req.header("if-none-match").filter(|v| !v.is_empty())) {
        (None, None) => Err(ApiError::precondition_required("If-Match/If-None-Match header not provided")),
        (Some(etag), _) => {
            let etag = etag.trim_matches('"');
            if !is_md5(etag) {
                return Err(ApiError::bad_request("Invalid ETag in If-Match header"));
            }
            match current {
                None => Err(ApiError::precondition_failed("If-Match set but file does not exist")),
                Some(md5) if md5 != etag => Err(stale("ETag does not match current version of file")),
                Some(_) => Ok(()),
            }
        }
        (None, Some(value)) => {
            if value != "*" {
                return Err(ApiError::bad_request("Invalid value for If-None-Match header"));
            }
            match current {
                Some(_) => Err(stale("If-None-Match: * set but file exists")),
                None => Ok(()),
            }
        }
    }
}

/// The form fields, from the body and the query (PHP's `$_REQUEST`).
fn form(req: &Req) -> Vec<(String, String)> {
    let mut pairs = parse_pairs(&String::from_utf8_lossy(&req.body));
    pairs.extend(parse_pairs(&req.query));
    pairs
}

/// Upload authorization: validate what the client says of the file, check the quota, then either `exists` or
/// where to send it.
fn authorize(state: &mut State, lref: LibraryRef, key: &str, form: &[(String, String)]) -> ApiResult<Reply> {
    let field = |name: &str| form.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str()).filter(|v| !v.is_empty());
    let md5 = field("md5").ok_or_else(|| ApiError::bad_request("MD5 hash not provided"))?;
    if !is_md5(md5) {
        return Err(ApiError::bad_request("Invalid MD5 hash"));
    }
    let filename = field("filename").ok_or_else(|| ApiError::bad_request("Filename not provided"))?;
    // A zipped upload (Desktop's snapshots): the object is the ZIP; the item keeps its own file's md5 and name.
    let (hash, object_name, zip, item_hash, item_filename) = match (field("zipMD5"), field("zipFilename")) {
        (Some(zip_md5), Some(zip_name)) => {
            if !is_md5(zip_md5) {
                return Err(ApiError::bad_request("Invalid ZIP MD5 hash"));
            }
            (zip_md5, zip_name, true, Some(md5.to_string()), Some(filename.to_string()))
        }
        (Some(_), None) => return Err(ApiError::bad_request("ZIP filename not provided")),
        (None, Some(_)) => return Err(ApiError::bad_request("ZIP MD5 hash not provided")),
        (None, None) => (md5, filename, field("zip").is_some(), None, None),
    };
    let mtime = field("mtime").ok_or_else(|| ApiError::bad_request("File modification time not provided"))?;
    let mtime: i64 = mtime.parse().map_err(|_| ApiError::bad_request("Invalid file modification time"))?;
    let size = form
        .iter()
        .find(|(k, _)| k == "filesize")
        .map(|(_, v)| v.as_str())
        .ok_or_else(|| ApiError::bad_request("File size not provided"))?;
    let size: u64 = size.parse().map_err(|_| ApiError::bad_request("Invalid file size"))?;
    let plain = |v: Option<&str>, extra: &[u8]| {
        v.filter(|v| v.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || extra.contains(&b)))
            .map(str::to_string)
    };
    let info = UploadInfo {
        hash: hash.to_string(),
        filename: object_name.to_string(),
        zip,
        item_hash,
        item_filename,
        size,
        mtime,
        content_type: plain(field("contentType"), b"/"),
        charset: plain(field("charset"), b""),
    };

    let l = lib(state, lref)?;
    let usage = usage_bytes(l);
    let requested_mb = round1((usage + size) as f64 / MIB);
    if requested_mb > l.quota_mb as f64 {
        let mut err = Reply::from(ApiError::new(
            413,
            format!("File would exceed quota ({} > {})", php_number(requested_mb), l.quota_mb),
        ))
        .header("Zotero-Storage-Usage", php_number(round1(usage as f64 / MIB)))
        .header("Zotero-Storage-Quota", l.quota_mb.to_string());
        if let LibraryRef::User(id) = lref {
            err = err.header("Zotero-Storage-UserID", id.to_string());
        }
        return Ok(err);
    }

    // Only a file Zotero registered before counts (its `storageFiles` table), not bytes merely in the bucket.
    let known = state.storage.registered.contains(&info.hash).then(|| state.storage.objects.get(&info.hash));
    if let Some(existing) = known.flatten() {
        if existing.len() as u64 != info.size {
            return Err(ApiError::bad_request("Specified file size incorrect for known file"));
        }
        let version = record_file(state, lref, key, &info)?;
        return Ok(Reply::json(200, &json!({"exists": 1})).version(version));
    }

    // A full queue, as the dataserver answers an API client (`ItemsController::_handleFileRequest`:
    // `header('Retry-After: ' . Zotero_Storage::$uploadQueueTimeout)`, then "Too many queued uploads" as a 429, a
    // 400 or a 503, `rand(0, 1)` deciding; 413 is for the old HTTP-auth sync client only). Taken in turn here.
    if state.storage.queue_limit.is_some_and(|limit| state.storage.queued.len() >= limit) {
        let status = [429, 400, 503][state.storage.queue_refusals % 3];
        state.storage.queue_refusals += 1;
        return Ok(Reply::from(ApiError::new(status, "Too many queued uploads")).header("Retry-After", "300"));
    }
    let random = |n| random_hex(n).map_err(|e| ApiError::new(500, e.to_string()));
    let upload_key = random(16)?;
    let policy = state.storage.sign_upload(&info.hash, info.size).map_err(|e| ApiError::new(500, e.to_string()))?;
    let params = upload_params(&info.hash, &policy);
    let url = state.storage.upload_url();
    state.storage.queued.insert(upload_key.clone(), info);
    let body = if field("params") == Some("1") {
        let params: Map<String, Value> = params.into_iter().map(|(k, v)| (k.to_string(), json!(v))).collect();
        json!({"url": url, "params": params, "uploadKey": upload_key})
    } else {
        let boundary = format!("---------------------------{}", random(16)?);
        let mut prefix = String::new();
        for (name, value) in &params {
            prefix.push_str(&format!(
                "--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n"
            ));
        }
        prefix.push_str(&format!("--{boundary}\r\nContent-Disposition: form-data; name=\"file\"\r\n\r\n"));
        json!({
            "url": url,
            "contentType": format!("multipart/form-data; boundary={boundary}"),
            "prefix": prefix,
            "suffix": format!("\r\n--{boundary}--"),
            "uploadKey": upload_key,
        })
    };
    Ok(Reply::json(200, &body))
}

/// The POST Object form fields S3 checks against the policy (Zotero's `generateUploadPOSTParams`, less the
/// AWS credential fields the simulated bucket does not need).
fn upload_params(hash: &str, policy: &str) -> Vec<(&'static str, String)> {
    use base64::Engine as _;
    let raw: Vec<u8> = (0..16).filter_map(|i| u8::from_str_radix(hash.get(2 * i..2 * i + 2)?, 16).ok()).collect();
    vec![
        ("key", hash.to_string()),
        ("acl", "private".to_string()),
        ("Content-MD5", base64::engine::general_purpose::STANDARD.encode(raw)),
        ("success_action_status", "201".to_string()),
        ("policy", policy.to_string()),
    ]
}

/// Registration: the upload key must be one authorized and not yet used, and its object must be in the bucket.
fn register(state: &mut State, lref: LibraryRef, key: &str, upload_key: &str) -> ApiResult<Reply> {
    if upload_key.is_empty() {
        return Err(ApiError::bad_request("Upload key not provided"));
    }
    let Some(info) = state.storage.queued.get(upload_key).cloned() else {
        return Err(ApiError::bad_request("Upload key not found"));
    };
    if !state.storage.objects.contains_key(&info.hash) {
        return Err(ApiError::bad_request("Remote file not found"));
    }
    let version = record_file(state, lref, key, &info)?;
    state.storage.queued.remove(upload_key);
    Ok(Reply::new(204).version(version))
}

/// Makes the object `info.hash` the item's file and updates the item as the dataserver's
/// `updateFileItemInfo` does: `filename`, `md5`, `mtime` (and `contentType`/`charset` when given), a new
/// library version that the item takes. Returns that version.
pub(crate) fn record_file(state: &mut State, lref: LibraryRef, key: &str, info: &UploadInfo) -> ApiResult<u64> {
    let l = state.libraries.get_mut(&lref).ok_or_else(|| ApiError::not_found("Not found"))?;
    let version = l.version + 1;
    l.touch();
    let rec = l.items.get_mut(key).ok_or_else(|| ApiError::not_found("Not found"))?;
    let Some(attachment) = rec.data.attachment.as_mut() else {
        return Err(ApiError::bad_request("Item is not an attachment"));
    };
    // Zotero 4 sent no item filename with a ZIP; the item then keeps the one it has.
    if !info.zip || info.item_filename.is_some() {
        attachment.filename = info.item_filename.clone().unwrap_or_else(|| info.filename.clone());
    }
    attachment.md5 = Some(info.item_hash.clone().unwrap_or_else(|| info.hash.clone()));
    attachment.mtime = Some(info.mtime);
    if let Some(ct) = &info.content_type {
        attachment.content_type = ct.clone();
    }
    if let Some(cs) = &info.charset {
        attachment.charset = cs.clone();
    }
    rec.version = version;
    rec.data.date_modified = dates::now_iso();
    l.version = version;
    l.files.insert(key.to_string(), StoredFile { hash: info.hash.clone(), size: info.size, zip: info.zip });
    state.storage.registered.insert(info.hash.clone());
    Ok(version)
}

/// The bytes a library's files take, each distinct file once (the dataserver's `storageUsage`).
pub(crate) fn usage_bytes(l: &Library) -> u64 {
    let mut seen = std::collections::BTreeMap::new();
    for f in l.files.values() {
        seen.insert(f.hash.as_str(), f.size);
    }
    seen.values().sum()
}

fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

/// A number as PHP prints a float: `1.5`, but `2` rather than `2.0`.
fn php_number(x: f64) -> String {
    let s = format!("{x:.1}");
    s.strip_suffix(".0").map_or(s.clone(), str::to_string)
}
