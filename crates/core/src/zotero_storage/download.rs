//! Reading a file: the API answers a redirect to a signed URL on the storage origin, followed here by hand so
//! that the key stays with the API.

use http::{header, HeaderMap, Method, StatusCode};
use url::Url;

use super::client::{api_error, header_number, Purpose, ZoteroStorage};
use super::error::ZoteroStorageError;
use crate::platform::{HttpError, HttpRequest, HttpResponse};
use crate::webdav::{md5_hex, unpack, ArchiveError};
use crate::zotero::{ObjectKey, ZoteroObject};

/// A file read from Zotero Storage, its md5 checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DownloadedFile {
    /// The name in the archive when the file was stored zipped, else the item's `filename`.
    pub filename: Option<String>,
    pub data: Vec<u8>,
    /// The md5 of `data` (32 lowercase hex digits).
    pub md5: String,
    /// The file's modification time Zotero recorded (ms since the epoch), from `Zotero-File-Modification-Time`.
    pub mtime_ms: Option<u64>,
    /// Whether Zotero stored it zipped (`Zotero-File-Compressed: Yes`, Desktop's snapshots).
    pub was_zipped: bool,
}

/// What the API's answer says about the file (the headers Desktop reads to skip a download).
struct FileHeaders {
    md5: Option<String>,
    mtime_ms: Option<u64>,
    zipped: bool,
}

impl FileHeaders {
    fn read(headers: &HeaderMap) -> Self {
        let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).map(str::trim);
        Self {
            md5: text("zotero-file-md5").filter(|v| !v.is_empty()).map(str::to_ascii_lowercase),
            mtime_ms: header_number(headers, "zotero-file-modification-time").map(|v| v as u64),
            zipped: text("zotero-file-compressed").is_some_and(|v| v.eq_ignore_ascii_case("yes")),
        }
    }
}

impl ZoteroStorage {
    /// The file of the attachment `item` (as read from the API: its `key`, `md5` and `filename`).
    ///
    /// `GET {library}/items/{key}/file` with the key; its redirect is followed here, each hop without the key or
    /// any Zotero header, https only, at most [`max_redirects`](super::StoragePolicy::max_redirects) of them, the
    /// body read up to [`max_download_bytes`](super::StoragePolicy::max_download_bytes). A zipped file is
    /// unpacked with WebDAV's archive rules. The result's md5 must be the item's (or, for an item without one, the
    /// API's `Zotero-File-MD5`). Nothing is retried.
    pub async fn download(&self, item: &ZoteroObject) -> Result<DownloadedFile, ZoteroStorageError> {
        let key = ObjectKey::parse(&item.key)
            .map_err(|e| ZoteroStorageError::Config(format!("the attachment's key: {e}")))?;
        let path = self.file_path(key.as_str());
        let limit = self.policy.max_download_bytes;
        let request = self.api_request(Method::GET, &path, &[], Vec::new())?;
        // A relative `Location` is resolved against the API's URL.
        let api_url = crate::net::parse_url(&request.uri().to_string())
            .map_err(|e| ZoteroStorageError::Config(format!("ZOTERO_API_BASE: {e}")))?;
        let response = self.fetch(request, key.as_str()).await?;
        let file = FileHeaders::read(response.headers());
        let status = response.status();
        let body = if status.is_success() {
            // The API may serve the file itself (nothing in the protocol forbids it); the limit holds either way.
            checked_body(response, key.as_str(), limit)?
        } else if is_redirect(status) {
            self.follow(api_url, &response, key.as_str()).await?
        } else {
            return Err(api_error("GET", &path, key.as_str(), Purpose::Download, &response));
        };

        let (filename, data) = if file.zipped {
            let stored = unpack(&body, item.field("filename"), &self.policy.zip_limits)
                .map_err(|e| archive_error(key.as_str(), e))?;
            (Some(stored.filename), stored.data)
        } else {
            (item.field("filename").map(str::to_owned), body)
        };
        let md5 = md5_hex(&data);
        // The item's md5 is the file's, zipped or not; the header's is of what is stored, so it can stand in
        // only for an unzipped file.
        let expected = item.field("md5").map(str::to_ascii_lowercase).or(if file.zipped { None } else { file.md5 });
        if let Some(expected) = expected.filter(|e| *e != md5) {
            return Err(ZoteroStorageError::Md5Mismatch { key: key.to_string(), expected, actual: md5 });
        }
        Ok(DownloadedFile { filename, data, md5, mtime_ms: file.mtime_ms, was_zipped: file.zipped })
    }

    /// Whether Zotero stores a file for the attachment `key`: the API's answer alone (a redirect or the file
    /// means yes, 404 no), its redirect not followed, so nothing is downloaded.
    pub async fn file_exists(&self, key: &ObjectKey) -> Result<bool, ZoteroStorageError> {
        let path = self.file_path(key.as_str());
        let request = self.api_request(Method::GET, &path, &[], Vec::new())?;
        let response = self.fetch(request, key.as_str()).await?;
        let status = response.status();
        if status.is_success() || is_redirect(status) {
            return Ok(true);
        }
        if status == StatusCode::NOT_FOUND {
            return Ok(false);
        }
        Err(api_error("GET", &path, key.as_str(), Purpose::Download, &response))
    }

    /// Follows the API's redirect hop by hand to the storage origin and reads the file there.
    async fn follow(&self, api_url: Url, first: &HttpResponse, key: &str) -> Result<Vec<u8>, ZoteroStorageError> {
        let limit = self.policy.max_download_bytes;
        let mut current = api_url;
        let mut location = location_of(first, key)?;
        let mut redirects = 0;
        loop {
            if redirects >= self.policy.max_redirects {
                return Err(ZoteroStorageError::TooManyRedirects {
                    key: key.to_owned(),
                    max: self.policy.max_redirects,
                });
            }
            redirects += 1;
            let target = self.storage_url(Some(&current), &location)?;
            let request = Self::storage_request(Method::GET, &target, None, Vec::new())?;
            let response = self.fetch(request, key).await?;
            let status = response.status();
            if status.is_success() {
                return checked_body(response, key, limit);
            }
            if !is_redirect(status) {
                return Err(ZoteroStorageError::DownloadFailed { key: key.to_owned(), status: status.as_u16() });
            }
            location = location_of(&response, key)?;
            current = target;
        }
    }

    /// One GET of a file hop, within the transfer deadline and the size limit.
    async fn fetch(&self, request: HttpRequest, key: &str) -> Result<HttpResponse, ZoteroStorageError> {
        let limit = self.policy.max_download_bytes;
        self.send(request, limit, self.policy.transfer_timeout_ms).await.map_err(|e| match e {
            ZoteroStorageError::Transport(HttpError::TooLarge { .. }) => {
                ZoteroStorageError::TooLarge { key: key.to_owned(), limit }
            }
            other => other,
        })
    }
}

/// 301/302/303/307/308: the ones that say where the file is.
fn is_redirect(status: StatusCode) -> bool {
    matches!(status.as_u16(), 301 | 302 | 303 | 307 | 308)
}

fn location_of(response: &HttpResponse, key: &str) -> Result<String, ZoteroStorageError> {
    response
        .headers()
        .get(header::LOCATION)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).trim().to_owned())
        .filter(|v| !v.is_empty())
        .ok_or(ZoteroStorageError::RedirectWithoutLocation { key: key.to_owned(), status: response.status().as_u16() })
}

/// The body, refused when it (or its declared length) is over the limit: a client may check only after reading
/// (the trait's default), and a declared length over the cap means a cut file.
fn checked_body(response: HttpResponse, key: &str, limit: usize) -> Result<Vec<u8>, ZoteroStorageError> {
    let declared = header_number(response.headers(), "content-length");
    if declared.is_some_and(|n| n > limit as f64) || response.body().len() > limit {
        return Err(ZoteroStorageError::TooLarge { key: key.to_owned(), limit });
    }
    Ok(response.into_body())
}

/// The archive's reason, in words about Zotero Storage (its own messages speak of WebDAV).
fn archive_error(key: &str, error: ArchiveError) -> ZoteroStorageError {
    let key = key.to_owned();
    match error {
        ArchiveError::OverLimit { detail } => ZoteroStorageError::ArchiveOverLimit { key, detail },
        ArchiveError::NotAZip { detail } | ArchiveError::Unsupported { detail } | ArchiveError::Pack { detail } => {
            ZoteroStorageError::BadArchive { key, detail }
        }
        ArchiveError::NoFile { names } => {
            ZoteroStorageError::BadArchive { key, detail: format!("it holds no file, only {names}") }
        }
    }
}
