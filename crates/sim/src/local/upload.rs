//! An attachment's file through Zotero 10's local API: the Web API's three steps (authorize, upload, register)
//! with the upload on the local API's own origin, and the file landing where Zotero Desktop keeps it,
//! `<data dir>/storage/<key>/<filename>`. The checks and their wording are Zotero's (`handleFileWrite`,
//! `authorizeUpload`, `registerUpload`, `UploadReceiver` in `server_localAPI.js`).

use std::collections::HashMap;
use std::path::Path;

use serde_json::Value;
use zotero_mcp_core::webdav::md5_hex;

use super::{json, text, LocalApi};
use crate::LibraryRef;

/// An upload authorized and not yet registered.
pub(super) struct Pending {
    library_path: String,
    key: String,
    md5: String,
    filename: String,
    mtime: i64,
    /// The bytes, once they came (checked against `md5`).
    bytes: Option<Vec<u8>>,
}

impl LocalApi {
    /// `…/items/<key>/file`: GET redirects to the file on disk; POST authorizes or registers an upload; PATCH
    /// (a binary diff) is not supported locally.
    pub(super) fn file(
        &self,
        request: &http::Request<Vec<u8>>,
        library_path: &str,
        key: &str,
    ) -> http::Response<Vec<u8>> {
        let viewing = !library_path.ends_with("/file");
        let Some(item) = self.attachment(library_path, key) else { return text(404, "Not found") };
        let data = &item["data"];
        let stored = matches!(data["linkMode"].as_str(), Some("imported_file" | "imported_url"));
        if data["itemType"] != "attachment" || !(stored || data["linkMode"] == "linked_file") {
            return text(400, &format!("Not a file attachment: {key}"));
        }
        match *request.method() {
            http::Method::GET => self.file_url(key, data, library_path.ends_with("/url")),
            http::Method::POST if viewing => text(405, "Method not allowed for this path"),
            http::Method::POST if !stored => text(400, "Cannot upload files for non-imported attachments"),
            // `if (!Zotero.Libraries.get(libraryID).filesEditable) return [403, …, 'File editing denied'];`
            // (handleFileWrite in server_localAPI.js).
            http::Method::POST if !library_of(library_path).is_some_and(|l| self.sim.files_editable(l)) => {
                text(403, "File editing denied")
            }
            http::Method::POST => self.file_write(request, library_path, key, data),
            http::Method::PATCH => text(405, "Partial uploads are not supported by the local API"),
            _ => text(400, "Endpoint does not support method\n"),
        }
    }

    /// The attachment `key` of the library at `library_path`, as the Web API shows it.
    fn attachment(&self, library_path: &str, key: &str) -> Option<Value> {
        let library = library_of(library_path)?;
        self.sim.item(library, key)
    }

    /// Where the file is on disk, as a `file://` URL: a 302 to it, or (for `/file/view/url`) the URL itself.
    fn file_url(&self, key: &str, data: &Value, as_text: bool) -> http::Response<Vec<u8>> {
        let path = match (data["linkMode"].as_str(), &self.data_dir) {
            (Some("linked_file"), _) => data["path"].as_str().map(std::path::PathBuf::from),
            (_, Some(dir)) => data["filename"].as_str().map(|name| dir.join("storage").join(key).join(name)),
            (_, None) => None,
        };
        let Some(path) = path else { return text(404, "Not found") };
        let url = format!("file://{}", path.display());
        if as_text {
            return text(200, &url);
        }
        let mut response = text(302, "");
        if let Ok(location) = http::HeaderValue::from_str(&url) {
            response.headers_mut().insert("location", location);
        }
        response
    }

    fn file_write(
        &self,
        request: &http::Request<Vec<u8>>,
        library_path: &str,
        key: &str,
        data: &Value,
    ) -> http::Response<Vec<u8>> {
        let form: HashMap<String, String> = form_urlencoded::parse(request.body()).into_owned().collect();
        if form.is_empty() {
            return text(400, "Content-Type must be application/x-www-form-urlencoded");
        }
        let Some(library) = library_of(library_path) else { return text(404, "Not found") };
        // Zotero checks the preconditions against the synced hash, not the file on disk's md5 that it reports:
        // `let currentSyncedMD5 = item.attachmentSyncedHash || null;` (server_localAPI.js, authorizeUpload and
        // registerUpload).
        let synced = self.synced_hash(library, key);
        let if_match = super::header(request, "if-match").map(|v| v.trim_matches('"').to_owned());
        let if_none_match = super::header(request, "if-none-match").map(str::to_owned);
        if let Some(upload_key) = form.get("upload") {
            return self.register(library_path, key, upload_key, synced, if_match, if_none_match);
        }
        if if_match.is_none() && if_none_match.is_none() {
            return text(428, "If-Match/If-None-Match header not provided");
        }
        if let Some(expected) = &if_match {
            if expected.len() != 32 || !expected.bytes().all(|b| b.is_ascii_hexdigit()) {
                return text(400, "Invalid If-Match header");
            }
            match &synced {
                None => return text(412, "If-Match set but file does not exist"),
                Some(current) if current != expected => {
                    return text(412, "ETag does not match current version of file")
                }
                Some(_) => {}
            }
        }
        if let Some(value) = &if_none_match {
            if value != "*" {
                return text(400, "Invalid value for If-None-Match header");
            }
            if synced.is_some() {
                return text(412, "If-None-Match: * set but file exists");
            }
        }
        let md5 = form.get("md5").map(|m| m.to_ascii_lowercase()).unwrap_or_default();
        if md5.len() != 32 || !md5.bytes().all(|b| b.is_ascii_hexdigit()) {
            return text(400, "MD5 hash not provided");
        }
        let Some(filename) = form.get("filename").filter(|f| !f.is_empty()) else {
            return text(400, "File name not provided");
        };
        if filename.contains(['/', '\\']) || filename == "." || filename == ".." {
            return text(400, "Invalid file name");
        }
        match form.get("filesize").map(|s| s.parse::<u64>()) {
            None => return text(400, "File size not provided"),
            Some(Err(_)) => return text(400, "Invalid file size value"),
            Some(Ok(_)) => {}
        }
        let mtime = match form.get("mtime").map(|s| s.parse::<i64>()) {
            None => return text(400, "File modification time not provided"),
            Some(Ok(mtime)) if mtime >= 0 => mtime,
            Some(_) => return text(400, "Invalid mtime value"),
        };
        if mtime > 0 && mtime < 10_000_000_000 {
            return text(400, "mtime must be provided in milliseconds, not seconds");
        }
        // "If the local file already matches the requested MD5, no upload is needed" (authorizeUpload): the
        // file on disk becomes the synced one.
        if data["md5"].as_str() == Some(md5.as_str()) {
            self.set_synced_hash(library, key, Some(&md5));
            return json(200, &serde_json::json!({ "exists": 1 }));
        }
        let upload_key = match crate::storage::random_hex(16) {
            Ok(k) => k,
            Err(e) => return text(500, &e.to_string()),
        };
        let host = super::header(request, "host")
            .map(str::to_owned)
            .or_else(|| request.uri().authority().map(|a| a.to_string()))
            .unwrap_or_else(|| "localhost:23119".to_owned());
        let content_type = form
            .get("contentType")
            .cloned()
            .or_else(|| data["contentType"].as_str().map(str::to_owned))
            .unwrap_or_else(|| "application/octet-stream".into());
        self.uploads.borrow_mut().insert(
            upload_key.clone(),
            Pending {
                library_path: library_path.to_owned(),
                key: key.to_owned(),
                md5,
                filename: filename.clone(),
                mtime,
                bytes: None,
            },
        );
        json(
            200,
            &serde_json::json!({
                "url": format!("http://{host}/api/local/uploads/{upload_key}"),
                "uploadKey": upload_key,
                "contentType": content_type,
                "prefix": "",
                "suffix": "",
            }),
        )
    }

    /// `POST /api/local/uploads/<uploadKey>`: the bytes, checked against the md5 the authorization named.
    pub(super) fn receive_upload(&self, upload_key: &str, body: &[u8]) -> http::Response<Vec<u8>> {
        let mut uploads = self.uploads.borrow_mut();
        let Some(pending) = uploads.get_mut(upload_key) else {
            return text(404, "Unknown or expired upload key");
        };
        let actual = md5_hex(body);
        if actual != pending.md5 {
            let expected = pending.md5.clone();
            uploads.remove(upload_key);
            return text(400, &format!("File MD5 does not match expected (got {actual}, expected {expected})"));
        }
        pending.bytes = Some(body.to_vec());
        text(201, "")
    }

    /// Registration: the preconditions again, then the file moves into `storage/<key>/` and the item records
    /// its name, md5 and time.
    fn register(
        &self,
        library_path: &str,
        key: &str,
        upload_key: &str,
        synced: Option<String>,
        if_match: Option<String>,
        if_none_match: Option<String>,
    ) -> http::Response<Vec<u8>> {
        // Refusals that leave the pending upload in place, as Zotero's do.
        let refusal = match self.uploads.borrow().get(upload_key) {
            None => Some("Invalid or expired upload key"),
            Some(p) if p.library_path != library_path || p.key != key => Some("Upload key does not match item"),
            Some(p) if p.bytes.is_none() => Some("File contents were not uploaded"),
            Some(_) => None,
        };
        if let Some(refusal) = refusal {
            return text(400, refusal);
        }
        // From here the upload is used up, whatever the preconditions say.
        let Some(Pending { filename, mtime, md5, bytes: Some(bytes), .. }) =
            self.uploads.borrow_mut().remove(upload_key)
        else {
            return text(400, "File contents were not uploaded");
        };
        if let Some(expected) = if_match {
            if synced.as_deref() != Some(expected.as_str()) {
                return text(412, "ETag does not match current version of file");
            }
        }
        if if_none_match.as_deref() == Some("*") && synced.is_some() {
            return text(412, "If-None-Match: * set but file exists");
        }
        let Some(library) = library_of(library_path) else { return text(404, "Not found") };
        if let Some(dir) = &self.data_dir {
            if let Err(e) = place(&dir.join("storage").join(key), &filename, &bytes) {
                return text(500, &format!("Upload failed: {e}"));
            }
        }
        self.sim.store_file_with_mtime(library, key, &filename, &bytes, mtime);
        // `item.attachmentSyncedHash = upload.md5;` (registerUpload): the file just stored is the synced one.
        self.set_synced_hash(library, key, Some(&md5));
        let mut response = text(204, "");
        let version = self.sim.library_version(library).to_string();
        if let Ok(value) = http::HeaderValue::from_str(&version) {
            response.headers_mut().insert("last-modified-version", value);
        }
        response
    }
}

/// Writes the file into the attachment's storage folder. As Zotero's `registerUpload`, a file of another name
/// already there stays (the item now names the new one).
fn place(folder: &Path, filename: &str, bytes: &[u8]) -> std::io::Result<()> {
    std::fs::create_dir_all(folder)?;
    std::fs::write(folder.join(filename), bytes)
}

/// The library of a Web API path (`/users/<id>/…`, `/groups/<id>/…`).
pub(super) fn library_of(library_path: &str) -> Option<LibraryRef> {
    let mut segments = library_path.trim_start_matches('/').split('/');
    let kind = segments.next()?;
    let id: u64 = segments.next()?.parse().ok()?;
    match kind {
        "users" => Some(LibraryRef::User(id)),
        "groups" => Some(LibraryRef::Group(id)),
        _ => None,
    }
}
