//! The client: where the API is, the key, and the two kinds of request it sends. An API request carries the
//! key and Zotero's headers; a storage request (to the origin Zotero names) carries neither.

use std::rc::Rc;

use async_trait::async_trait;
use http::{HeaderMap, Method};
use url::Url;

use super::error::ZoteroStorageError;
use crate::file_changes::StoreKind;
use crate::net::{is_loopback_host, join_url, parse_url};
use crate::platform::{within, Clock, HttpClient, HttpError, HttpRequest, HttpResponse};
use crate::webdav::{WebDavPolicy, ZipLimits};
use crate::zotero::{Capabilities, ZoteroSettings, DEFAULT_BASE_URL};

const USER_AGENT: &str = concat!("zotero-mcp/", env!("CARGO_PKG_VERSION"), " (+https://github.com/zotero-mcp)");

/// Limits of the requests. The sizes are the WebDAV reader's, so a file reads the same from either store.
#[derive(Debug, Clone, Copy)]
pub struct StoragePolicy {
    /// The largest body read from the storage origin ([`WebDavPolicy`]'s `max_download_bytes`).
    pub max_download_bytes: usize,
    /// What a zipped file (a snapshot) may hold, as on WebDAV.
    pub zip_limits: ZipLimits,
    /// Redirects followed per download, the API's own included.
    pub max_redirects: u32,
    /// How long one API request may take.
    pub request_timeout_ms: u64,
    /// How long one transfer to or from the storage origin may take.
    pub transfer_timeout_ms: u64,
    /// When an upload's authorization or registration answered 429/503 is sent again: the item writes' rule
    /// ([`crate::zotero::RetryPolicy`]; its timeout is not used here).
    pub retry: crate::zotero::RetryPolicy,
}

impl Default for StoragePolicy {
    fn default() -> Self {
        Self {
            max_download_bytes: WebDavPolicy::default().max_download_bytes,
            zip_limits: ZipLimits::default(),
            max_redirects: 3,
            request_timeout_ms: 30_000,
            transfer_timeout_ms: 120_000,
            retry: crate::zotero::RetryPolicy::default(),
        }
    }
}

/// What differs between the servers that store files by Zotero's three steps: zotero.org ([`WebApi`]) and
/// Zotero Desktop's local API (its backend in `desktop.rs`). A backend adds its credentials, names its store,
/// says what it can do, and may wrap a form POST to the API.
#[async_trait(?Send)]
pub(super) trait Backend {
    /// Where the files end up, as the journal and messages name it.
    fn store(&self) -> StoreKind;

    /// What this server can do.
    fn caps(&self) -> Capabilities;

    /// `builder` with this server's credentials, for a request that `writes` or not.
    fn credentials(&self, writes: bool, builder: http::request::Builder) -> http::request::Builder;

    /// One form POST to the API for an upload step, with whatever this server asks around it.
    async fn post_form(
        &self,
        storage: &ZoteroStorage,
        path: &str,
        form: &str,
        precondition: &(&'static str, String),
    ) -> Result<HttpResponse, ZoteroStorageError> {
        storage.post_form_plain(path, form, precondition).await
    }
}

/// zotero.org's Web API: the key on every API request, nothing around a send.
struct WebApi {
    api_key: String,
}

#[async_trait(?Send)]
impl Backend for WebApi {
    fn store(&self) -> StoreKind {
        StoreKind::ZoteroStorage
    }

    fn caps(&self) -> Capabilities {
        Capabilities::WEB_API
    }

    fn credentials(&self, _: bool, builder: http::request::Builder) -> http::request::Builder {
        builder.header("zotero-api-key", &self.api_key)
    }
}

/// Reads files from Zotero Storage. Storing them takes a [`ZoteroStorageWriter`], which the server hands out
/// only to requests allowed to write (as with the Zotero and WebDAV clients).
pub struct ZoteroStorage {
    pub(super) http: Rc<dyn HttpClient>,
    pub(super) clock: Rc<dyn Clock>,
    /// The API's base URL, without a trailing slash.
    base: String,
    /// Whether storage URLs may be plain http: only when the API itself is plain http on a loopback host (the
    /// simulator), whose storage origin is then on loopback too.
    local: bool,
    /// `/users/<n>` or `/groups/<n>`.
    library: String,
    pub(super) policy: StoragePolicy,
    /// The server on the other end: zotero.org unless made for Zotero Desktop (`desktop.rs`), which stores
    /// files by the same three steps.
    pub(super) backend: Box<dyn Backend>,
}

impl std::fmt::Debug for ZoteroStorage {
    // Never the key.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ZoteroStorage").field("base", &self.base).field("library", &self.library).finish()
    }
}

impl ZoteroStorage {
    /// A client for the library at `library_prefix` (what [`crate::zotero::ZoteroClient::library_prefix`]
    /// answers), with the key and base URL of `settings`.
    pub fn new(
        settings: &ZoteroSettings,
        library_prefix: &str,
        http: Rc<dyn HttpClient>,
        clock: Rc<dyn Clock>,
        policy: StoragePolicy,
    ) -> Result<Self, ZoteroStorageError> {
        let api_key = settings.api_key.trim();
        if api_key.is_empty() {
            return Err(ZoteroStorageError::Config(
                "ZOTERO_API_KEY is not set; create a key at zotero.org/settings/keys".into(),
            ));
        }
        let raw = settings.base_url.as_deref().map(str::trim).filter(|s| !s.is_empty()).unwrap_or(DEFAULT_BASE_URL);
        let base = parse_url(raw).map_err(|e| ZoteroStorageError::Config(format!("ZOTERO_API_BASE: {e}")))?;
        let local = base.scheme() == "http" && base.host().is_some_and(|h| is_loopback_host(&h));
        if base.scheme() != "https" && !local {
            return Err(ZoteroStorageError::Config(format!(
                "ZOTERO_API_BASE must be an https URL (plain http only on a loopback host), not `{raw}`"
            )));
        }
        let valid_library = library_prefix
            .strip_prefix("/users/")
            .or_else(|| library_prefix.strip_prefix("/groups/"))
            .is_some_and(|id| !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()));
        if !valid_library {
            return Err(ZoteroStorageError::Config(format!(
                "the library must be /users/<number> or /groups/<number>, not `{library_prefix}`"
            )));
        }
        Ok(Self {
            http,
            clock,
            base: raw.trim_end_matches('/').to_owned(),
            local,
            library: library_prefix.to_owned(),
            policy,
            backend: Box::new(WebApi { api_key: api_key.to_owned() }),
        })
    }

    /// Where the files end up: Zotero Storage, or Zotero Desktop's data directory through its local API.
    pub fn store_kind(&self) -> StoreKind {
        self.backend.store()
    }

    /// What the server on the other end can do ([`crate::zotero::ZoteroClient::caps`]).
    pub fn caps(&self) -> Capabilities {
        crate::zotero::local::possible(self.backend.caps())
    }

    /// The API's base URL, without a trailing slash.
    pub(super) fn base(&self) -> &str {
        &self.base
    }

    /// The HTTP client and clock, for a backend that sends requests of its own around a step.
    pub(super) fn platform(&self) -> (&dyn HttpClient, &dyn Clock) {
        (self.http.as_ref(), self.clock.as_ref())
    }

    /// The path of an item's file below the base URL: `/users/1/items/ABCD2345/file`.
    pub(super) fn file_path(&self, key: &str) -> String {
        format!("{}/items/{key}/file", self.library)
    }

    /// An API request: Zotero's headers and the key, to the API's origin only.
    pub(super) fn api_request(
        &self,
        method: Method,
        path: &str,
        headers: &[(&'static str, String)],
        body: Vec<u8>,
    ) -> Result<HttpRequest, ZoteroStorageError> {
        let url = format!("{}{path}", self.base);
        let writes = method != Method::GET;
        let mut builder = http::Request::builder()
            .method(method)
            .uri(&url)
            .header("zotero-api-version", "3")
            .header("user-agent", USER_AGENT);
        builder = self.backend.credentials(writes, builder);
        for (name, value) in headers {
            builder = builder.header(*name, value);
        }
        builder.body(body).map_err(|e| HttpError::InvalidRequest { url, reason: e.to_string() }.into())
    }

    /// A storage request: no key, no Zotero header, nothing but what the storage origin asked for.
    pub(super) fn storage_request(
        method: Method,
        url: &Url,
        content_type: Option<&str>,
        body: Vec<u8>,
    ) -> Result<HttpRequest, ZoteroStorageError> {
        let mut builder = http::Request::builder().method(method).uri(url.as_str()).header("user-agent", USER_AGENT);
        if let Some(content_type) = content_type {
            builder = builder.header("content-type", content_type);
        }
        builder.body(body).map_err(|e| HttpError::InvalidRequest { url: url.to_string(), reason: e.to_string() }.into())
    }

    /// A URL Zotero named (a redirect's `Location`, the upload URL), resolved against `base` and checked: https
    /// (plain http only beside a loopback API), and no user info, which would be sent along.
    pub(super) fn storage_url(&self, base: Option<&Url>, text: &str) -> Result<Url, ZoteroStorageError> {
        let shown: String = text.chars().take(200).collect();
        let refused = |reason| ZoteroStorageError::RefusedUrl { url: shown.clone(), reason };
        let mut url = match base {
            Some(base) => join_url(base, text.trim()),
            None => parse_url(text.trim()),
        }
        .map_err(|_| refused("not a URL"))?;
        url.set_fragment(None);
        let plain_http_ok = self.local && url.host().is_some_and(|h| is_loopback_host(&h));
        match url.scheme() {
            "https" => {}
            "http" if plain_http_ok => {}
            _ => return Err(refused("not https")),
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(refused("it carries credentials"));
        }
        Ok(url)
    }

    /// Sends `request` within `timeout_ms`, reading at most `limit` bytes of the answer.
    pub(super) async fn send(
        &self,
        request: HttpRequest,
        limit: usize,
        timeout_ms: u64,
    ) -> Result<HttpResponse, ZoteroStorageError> {
        let url = request.uri().to_string();
        match within(self.clock.as_ref(), timeout_ms, self.http.send_limited(request, limit)).await {
            Some(Ok(response)) => Ok(response),
            Some(Err(e)) => Err(e.into()),
            None => Err(ZoteroStorageError::Timeout { url, after_ms: timeout_ms }),
        }
    }
}

/// A [`ZoteroStorage`] that may also store files.
pub struct ZoteroStorageWriter {
    pub(super) storage: ZoteroStorage,
    /// The files this writer replaced (never kept: see [`ZoteroStorageWriter::upload`]).
    pub(super) log: crate::file_changes::FileLog,
    /// Where an upload waits until the journal has recorded what the call wrote before it (see
    /// [`crate::write_gate`]).
    pub(super) gate: crate::write_gate::WriteGate,
}

impl std::ops::Deref for ZoteroStorageWriter {
    type Target = ZoteroStorage;
    fn deref(&self) -> &ZoteroStorage {
        &self.storage
    }
}

impl ZoteroStorageWriter {
    /// As [`ZoteroStorage::new`].
    pub fn new(
        settings: &ZoteroSettings,
        library_prefix: &str,
        http: Rc<dyn HttpClient>,
        clock: Rc<dyn Clock>,
        policy: StoragePolicy,
    ) -> Result<Self, ZoteroStorageError> {
        Ok(Self {
            storage: ZoteroStorage::new(settings, library_prefix, http, clock, policy)?,
            log: crate::file_changes::FileLog::default(),
            gate: crate::write_gate::WriteGate::default(),
        })
    }

    /// This writer, each upload held at `gate` until the journal has recorded what came before it (the
    /// attachment item a new file belongs to is recorded before its file is sent).
    pub fn gated(mut self, gate: crate::write_gate::WriteGate) -> Self {
        self.gate = gate;
        self
    }

    /// The files this writer replaced.
    pub fn log(&self) -> &crate::file_changes::FileLog {
        &self.log
    }
}

/// Which file request an API answer is to: a 403 or 404 means something else to each.
#[derive(Debug, Clone, Copy)]
pub(super) enum Purpose {
    Download,
    /// An upload's authorization or registration, of a body of `filesize` bytes.
    Upload {
        filesize: u64,
    },
}

/// What an error status of the Zotero API means for the file request at `path`.
pub(super) fn api_error(
    method: &'static str,
    path: &str,
    key: &str,
    purpose: Purpose,
    response: &HttpResponse,
) -> ZoteroStorageError {
    let writing = matches!(purpose, Purpose::Upload { .. });
    let status = response.status().as_u16();
    let headers = response.headers();
    let text: String = String::from_utf8_lossy(response.body()).chars().take(300).collect();
    let body = if text.trim().is_empty() { String::new() } else { format!(": {}", text.trim()) };
    let retry_after = header_number(headers, "retry-after").map(|secs| secs.max(0.0).ceil() as u64);
    let key = key.to_owned();
    match status {
        404 if writing => ZoteroStorageError::ItemNotFound { key },
        404 => ZoteroStorageError::NoFile { key },
        // The group's File Editing setting, not the key: the dataserver's "You do not have file editing access",
        // the local API's "File editing denied".
        403 if writing && text.to_ascii_lowercase().contains("file editing") => {
            ZoteroStorageError::FileEditingDenied { body }
        }
        403 if writing => ZoteroStorageError::WriteDenied { body },
        403 => ZoteroStorageError::ReadDenied { body },
        412 => ZoteroStorageError::Changed {
            key,
            version: header_number(headers, "last-modified-version").map(|v| v as u64),
        },
        428 => ZoteroStorageError::PreconditionRequired { key },
        // A full upload queue: the dataserver answers an API client "Too many queued uploads" with `Retry-After`,
        // as a 429, a 400 or a 503 chosen at random (`ItemsController::_handleFileRequest`: `if (rand(0, 1))
        // e429 … else if (rand(0, 1)) e400 … else e503`; 413 with it is for its old HTTP-auth client). A 429 or
        // 503 without that text is the API's rate limit, below.
        429 | 503 if writing && text.contains("Too many queued uploads") => {
            ZoteroStorageError::UploadQueueFull { retry_after_secs: retry_after.unwrap_or(300) }
        }
        413 | 400 if retry_after.is_some() => {
            ZoteroStorageError::UploadQueueFull { retry_after_secs: retry_after.unwrap_or(60) }
        }
        413 => ZoteroStorageError::OverQuota {
            size_mb: match purpose {
                Purpose::Upload { filesize } => filesize as f64 / (1024.0 * 1024.0),
                Purpose::Download => 0.0,
            },
            usage_mb: header_number(headers, "zotero-storage-usage"),
            quota_mb: header_number(headers, "zotero-storage-quota"),
        },
        429 | 503 => {
            ZoteroStorageError::RateLimited { method, path: path.to_owned(), status, retry_after_secs: retry_after }
        }
        _ => ZoteroStorageError::Api { method, path: path.to_owned(), status, body },
    }
}

/// A header read as a number (`Retry-After` in seconds; an HTTP date is not read, and the caller's default
/// applies).
pub(super) fn header_number(headers: &HeaderMap, name: &str) -> Option<f64> {
    headers.get(name)?.to_str().ok()?.trim().parse::<f64>().ok().filter(|n| n.is_finite())
}
