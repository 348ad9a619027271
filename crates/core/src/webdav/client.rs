//! The WebDAV client: Zotero's layout on the user's own server, over the HTTP seam.
//!
//! `WEBDAV_URL` may name the folder that holds `zotero/` or `zotero/` itself; files are `<KEY>.zip` and
//! `<KEY>.prop` in it. Every request carries Basic credentials. 429 and 5xx answers are retried a bounded number
//! of times (honouring `Retry-After`); every method used is idempotent (a PUT sends the whole file), so a retry
//! cannot do twice what was meant once. A redirect is followed only within the same origin, a few times (servers
//! redirect a collection without its final slash); one to another host is an error that names it. Each attempt
//! has a deadline.

use std::rc::Rc;

use base64::Engine;
use futures_util::future::join;
use http::{Method, StatusCode};

use super::prop::FileProps;
use crate::file_changes::{kept_name, FileAction, FileChange, FileLog, StoreKind};
use crate::platform::{within, Clock, HttpClient, HttpError, HttpRequest, HttpResponse};
use crate::write_gate::WriteGate;
use crate::zotero::ObjectKey;

/// Same-origin redirects followed per request.
const MAX_REDIRECTS: usize = 3;

/// Where the files are and how to sign in.
#[derive(Clone)]
pub struct WebDavSettings {
    /// `WEBDAV_URL`: with or without the `/zotero` folder at its end.
    pub url: String,
    pub username: String,
    pub password: String,
}

impl std::fmt::Debug for WebDavSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebDavSettings").field("url", &self.url).field("username", &self.username).finish()
    }
}

/// How requests are retried and bounded.
#[derive(Debug, Clone, Copy)]
pub struct WebDavPolicy {
    /// Retries after the first attempt, for 429 and 5xx answers.
    pub max_retries: u32,
    /// The first delay without `Retry-After`; doubled on each retry.
    pub base_delay_ms: u64,
    /// The longest single wait accepted; a longer `Retry-After` fails at once with it.
    pub max_wait_ms: u64,
    /// How long one attempt may take.
    pub attempt_timeout_ms: u64,
    /// The largest archive downloaded (64 MiB: what the readers accept at all).
    pub max_download_bytes: usize,
}

/// The largest file any store hands to the readers (64 MiB): WebDAV's archives, Zotero Storage's downloads and
/// the files Zotero Desktop keeps on disk alike.
pub const MAX_DOWNLOAD_BYTES: usize = 64 * 1024 * 1024;

impl Default for WebDavPolicy {
    fn default() -> Self {
        Self {
            max_retries: 3,
            base_delay_ms: 400,
            max_wait_ms: 10_000,
            attempt_timeout_ms: 30_000,
            max_download_bytes: MAX_DOWNLOAD_BYTES,
        }
    }
}

/// What went wrong talking to the WebDAV server, each with what to do about it.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum WebDavError {
    #[error("WEBDAV_URL is not a usable http(s) URL ({reason}); set it to your WebDAV folder, e.g. https://dav.example.org/remote.php/dav/files/me/")]
    BadUrl { reason: String },
    #[error("the WebDAV server refused the credentials ({status}); check WEBDAV_USERNAME and WEBDAV_PASSWORD (many providers want an app password)")]
    Unauthorized { status: u16 },
    /// Putting a kept file back stopped between its archive and its `.prop`, and the archive there before could
    /// not be put back either.
    #[error("the earlier archive of {key} is back on WebDAV but its .prop is not ({cause}), so the .prop still describes the newer file and Zotero Desktop may take the archive for it; store the attachment's file again to make the two agree")]
    HalfRestored { key: String, cause: String },
    #[error("{name} is not on the WebDAV server; if Zotero Desktop shows the file, let it sync (Sync > Sync Attachment Files), and check that WEBDAV_URL is the folder Zotero syncs to")]
    NotFound { name: String },
    #[error("the zotero/ folder does not exist at {url}; set up file syncing to this server in Zotero Desktop first (Settings > Sync > File Syncing), or correct WEBDAV_URL")]
    MissingFolder { url: String },
    #[error("the WebDAV server could not be reached ({reason}); check WEBDAV_URL and that the server is up")]
    Unreachable { reason: String },
    #[error("the WebDAV server did not answer {method} {url} within {after_ms} ms; try again later")]
    Timeout { method: String, url: String, after_ms: u64 },
    #[error("the file on WebDAV is larger than this server reads ({limit} bytes at most); use Zotero's full-text index of it instead")]
    TooLarge { limit: usize },
    #[error("the WebDAV server is busy or failing ({status}); try again in {retry_after_secs} seconds")]
    Unavailable { status: u16, retry_after_secs: u64 },
    #[error("the WebDAV server redirected {url} to another site ({location}); set WEBDAV_URL to the address it redirects to")]
    Redirected { url: String, location: String },
    #[error("the WebDAV server answered {method} {url} with {status}{body}")]
    Server { method: String, url: String, status: u16, body: String },
}

/// The answer to a connection check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebDavHealth {
    /// The folder the files are in (`…/zotero`).
    pub folder: String,
}

/// A client for one WebDAV folder, for reading. Changing files takes a [`WebDavWriter`], which the server hands
/// out only to requests allowed to write (as with the Zotero client and writer).
pub struct WebDavClient {
    http: Rc<dyn HttpClient>,
    clock: Rc<dyn Clock>,
    folder: String,
    authorization: String,
    policy: WebDavPolicy,
}

impl WebDavClient {
    pub fn new(
        settings: &WebDavSettings,
        http: Rc<dyn HttpClient>,
        clock: Rc<dyn Clock>,
        policy: WebDavPolicy,
    ) -> Result<Self, WebDavError> {
        let folder = folder_url(&settings.url)?;
        let credentials = format!("{}:{}", settings.username, settings.password);
        let authorization = format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(credentials));
        Ok(Self { http, clock, folder, authorization, policy })
    }

    /// The folder the files are in.
    pub fn folder(&self) -> &str {
        &self.folder
    }

    /// Checks that the server answers, accepts the credentials and has the `zotero/` folder (`PROPFIND`, depth 0).
    pub async fn check(&self) -> Result<WebDavHealth, WebDavError> {
        let url = format!("{}/", self.folder);
        let body =
            br#"<?xml version="1.0" encoding="utf-8"?><propfind xmlns="DAV:"><prop><resourcetype/></prop></propfind>"#;
        let response = self
            .request(
                Method::from_bytes(b"PROPFIND").unwrap_or(Method::OPTIONS),
                &url,
                Some(("depth", "0")),
                body.to_vec(),
            )
            .await?;
        match response.status().as_u16() {
            200..=299 => Ok(WebDavHealth { folder: self.folder.clone() }),
            404 | 409 => Err(WebDavError::MissingFolder { url: self.folder.clone() }),
            _ => Err(self.unexpected("PROPFIND", &url, &response)),
        }
    }

    /// The attachment's archive, or `None` when the server does not have it.
    pub async fn get_zip(&self, key: &ObjectKey) -> Result<Option<Vec<u8>>, WebDavError> {
        self.get(&format!("{}.zip", key.as_str())).await
    }

    /// What the attachment's `.prop` file says, or `None` when there is none (or it is not one).
    pub async fn get_prop(&self, key: &ObjectKey) -> Result<Option<FileProps>, WebDavError> {
        let Some(bytes) = self.get(&format!("{}.prop", key.as_str())).await? else { return Ok(None) };
        Ok(FileProps::parse(&String::from_utf8_lossy(&bytes)))
    }

    /// Whether the attachment's archive is there (`HEAD`).
    pub async fn has_zip(&self, key: &ObjectKey) -> Result<bool, WebDavError> {
        let url = self.file_url(&format!("{}.zip", key.as_str()));
        let response = self.request(Method::HEAD, &url, None, Vec::new()).await?;
        match response.status().as_u16() {
            200..=299 => Ok(true),
            404 => Ok(false),
            _ => Err(self.unexpected("HEAD", &url, &response)),
        }
    }

    async fn get(&self, name: &str) -> Result<Option<Vec<u8>>, WebDavError> {
        let url = self.file_url(name);
        let response = self.request(Method::GET, &url, None, Vec::new()).await?;
        match response.status().as_u16() {
            200..=299 => Ok(Some(response.into_body())),
            404 => Ok(None),
            _ => Err(self.unexpected("GET", &url, &response)),
        }
    }

    async fn put(&self, name: &str, body: Vec<u8>, content_type: &'static str) -> Result<(), WebDavError> {
        let url = self.file_url(name);
        let response = self.request(Method::PUT, &url, Some(("content-type", content_type)), body).await?;
        match response.status().as_u16() {
            200..=299 => Ok(()),
            // A PUT into a folder that does not exist: 409 by the standard, 404 on some servers.
            404 | 409 => Err(WebDavError::MissingFolder { url: self.folder.clone() }),
            _ => Err(self.unexpected("PUT", &url, &response)),
        }
    }

    fn file_url(&self, name: &str) -> String {
        format!("{}/{name}", self.folder)
    }

    /// One request with its retries, redirects and deadline. Statuses other than 401/403, 429 and 5xx are the
    /// caller's to read.
    async fn request(
        &self,
        method: Method,
        url: &str,
        header: Option<(&'static str, &str)>,
        body: Vec<u8>,
    ) -> Result<HttpResponse, WebDavError> {
        let mut url = url.to_owned();
        let mut attempt = 0u32;
        let mut redirects = 0usize;
        loop {
            let mut builder =
                http::Request::builder().method(method.clone()).uri(&url).header("authorization", &self.authorization);
            if let Some((name, value)) = header {
                builder = builder.header(name, value);
            }
            let request: HttpRequest =
                builder.body(body.clone()).map_err(|e| WebDavError::BadUrl { reason: e.to_string() })?;
            let timeout = self.policy.attempt_timeout_ms;
            let sent = if method == Method::GET {
                within(self.clock.as_ref(), timeout, self.http.send_limited(request, self.policy.max_download_bytes))
                    .await
            } else {
                within(self.clock.as_ref(), timeout, self.http.send(request)).await
            };
            let response = match sent {
                None => return Err(WebDavError::Timeout { method: method.to_string(), url, after_ms: timeout }),
                Some(Err(HttpError::TooLarge { limit, .. })) => return Err(WebDavError::TooLarge { limit }),
                Some(Err(e)) => return Err(WebDavError::Unreachable { reason: e.to_string() }),
                Some(Ok(response)) => response,
            };
            let status = response.status().as_u16();
            match status {
                401 | 403 => return Err(WebDavError::Unauthorized { status }),
                301 | 302 | 303 | 307 | 308 => {
                    let location = response
                        .headers()
                        .get(http::header::LOCATION)
                        .and_then(|l| l.to_str().ok())
                        .unwrap_or_default()
                        .to_owned();
                    let next = same_origin_target(&url, &location)
                        .ok_or_else(|| WebDavError::Redirected { url: url.clone(), location: location.clone() })?;
                    redirects += 1;
                    if redirects > MAX_REDIRECTS {
                        return Err(WebDavError::Redirected { url, location });
                    }
                    url = next;
                }
                429 | 500..=599 => {
                    let wait = retry_after_ms(&response).unwrap_or(self.policy.base_delay_ms << attempt.min(16));
                    if attempt >= self.policy.max_retries || wait > self.policy.max_wait_ms {
                        return Err(WebDavError::Unavailable { status, retry_after_secs: wait.div_ceil(1000).max(1) });
                    }
                    self.clock.sleep(wait).await;
                    attempt += 1;
                }
                _ => return Ok(response),
            }
        }
    }

    fn unexpected(&self, method: &str, url: &str, response: &HttpResponse) -> WebDavError {
        let text: String = String::from_utf8_lossy(response.body()).chars().take(300).collect();
        let text = text.trim();
        WebDavError::Server {
            method: method.to_owned(),
            url: url.to_owned(),
            status: response.status().as_u16(),
            body: if text.is_empty() { String::new() } else { format!(": {text}") },
        }
    }
}

/// A [`WebDavClient`] that may also change files: upload and delete.
pub struct WebDavWriter {
    client: WebDavClient,
    /// The undo journal entry the earlier files are kept for (`None`: not kept), and what was kept.
    journal: Option<String>,
    log: FileLog,
    gate: WriteGate,
}

impl std::ops::Deref for WebDavWriter {
    type Target = WebDavClient;
    fn deref(&self) -> &WebDavClient {
        &self.client
    }
}

impl WebDavWriter {
    pub fn new(
        settings: &WebDavSettings,
        http: Rc<dyn HttpClient>,
        clock: Rc<dyn Clock>,
        policy: WebDavPolicy,
    ) -> Result<Self, WebDavError> {
        Ok(Self {
            client: WebDavClient::new(settings, http, clock, policy)?,
            journal: None,
            log: FileLog::default(),
            gate: WriteGate::default(),
        })
    }

    /// Keeps every file this writer replaces or removes beside it, for the undo journal entry `entry`
    /// ([`kept_name`]), and records it in [`Self::log`].
    pub fn keeping_for(mut self, entry: &str) -> Self {
        self.journal = Some(entry.to_owned());
        self
    }

    /// This writer, each of its changes held at `gate` until the journal has recorded what came before it (an
    /// earlier file kept aside is recorded before the file that replaces it goes out).
    pub fn gated(mut self, gate: WriteGate) -> Self {
        self.gate = gate;
        self
    }

    /// The files this writer replaced or removed.
    pub fn log(&self) -> &FileLog {
        &self.log
    }

    /// Uploads the archive (`PUT`; servers answer 201 for a new file, 204 or 200 for a replaced one). An archive
    /// already there is first kept for the journal (a copy, `.prop` too), so the replacement can be undone.
    pub async fn put_zip(&self, key: &ObjectKey, zip: Vec<u8>) -> Result<(), WebDavError> {
        self.gate.pass().await;
        self.keep(key, FileAction::Replaced, Method::from_bytes(b"COPY").unwrap_or(Method::PUT)).await?;
        self.put_new_zip(key, zip).await
    }

    /// [`Self::put_zip`] for the attachment an item created by this same call: there is no earlier file to keep.
    pub async fn put_new_zip(&self, key: &ObjectKey, zip: Vec<u8>) -> Result<(), WebDavError> {
        self.gate.pass().await;
        self.client.put(&format!("{}.zip", key.as_str()), zip, "application/zip").await?;
        if self.journal.is_some() && !self.log.has(key.as_str()) {
            // Recorded so that undoing the attachment's creation takes its file too.
            let (key, store) = (key.as_str().to_owned(), StoreKind::WebDav);
            self.log.push(FileChange { key, store, action: FileAction::Created, kept: false, left: None });
        }
        Ok(())
    }

    /// Keeps the archive and `.prop` of `key` under the journal's names, by `COPY` (before a replacement) or
    /// `MOVE` (instead of a removal). Returns whether an archive was there. Nothing is kept without a journal,
    /// or when this call already kept the file (the first earlier file is the one to go back to).
    async fn keep(&self, key: &ObjectKey, action: FileAction, method: Method) -> Result<bool, WebDavError> {
        let Some(entry) = &self.journal else { return Ok(false) };
        if self.log.has(key.as_str()) {
            return Ok(true);
        }
        let kept = |suffix: &'static str| {
            let method = method.clone();
            async move {
                let name = format!("{}.{suffix}", key.as_str());
                let url = self.client.file_url(&name);
                let destination = self.client.file_url(&kept_name(&name, entry));
                let response =
                    self.client.request(method.clone(), &url, Some(("destination", &destination)), Vec::new()).await?;
                match response.status().as_u16() {
                    200..=299 => Ok(true),
                    404 => Ok(false),
                    _ => Err(self.client.unexpected(method.as_str(), &url, &response)),
                }
            }
        };
        // The two are independent: both go out at once.
        let (zip, prop) = join(kept("zip"), kept("prop")).await;
        let (zip, _) = (zip?, prop?);
        if zip {
            let key = key.as_str().to_owned();
            self.log.push(FileChange { key, store: StoreKind::WebDav, action, kept: true, left: None });
        }
        Ok(zip)
    }

    /// Puts back the archive and `.prop` kept for the journal entry `entry` (the kept copies stay until the
    /// entry expires). `false` when no archive was kept.
    /// The file there now is kept in turn when this writer has a journal, so the restore can be undone too.
    ///
    /// The archive goes first, then its `.prop`. Zotero Desktop trusts the `.prop`'s hash, so an earlier archive
    /// under the newer file's `.prop` would pass for the newer file: when the `.prop` cannot follow, the archive
    /// there before is put back from the copy just kept, and when even that fails the error says so.
    pub async fn restore_kept(&self, key: &ObjectKey, entry: &str) -> Result<bool, WebDavError> {
        let copy = Method::from_bytes(b"COPY").unwrap_or(Method::PUT);
        let kept_now = self.keep(key, FileAction::Replaced, copy.clone()).await?;
        let copy_to = |from: String, to: String| {
            let copy = copy.clone();
            async move {
                let (url, destination) = (self.client.file_url(&from), self.client.file_url(&to));
                let response = self.client.request(copy, &url, Some(("destination", &destination)), Vec::new()).await?;
                match response.status().as_u16() {
                    200..=299 => Ok(true),
                    404 => Ok(false),
                    _ => Err(self.client.unexpected("COPY", &url, &response)),
                }
            }
        };
        let (zip, prop) = (format!("{}.zip", key.as_str()), format!("{}.prop", key.as_str()));
        if !copy_to(kept_name(&zip, entry), zip.clone()).await? {
            return Ok(false);
        }
        let Err(error) = copy_to(kept_name(&prop, entry), prop).await else { return Ok(true) };
        let rolled_back = match (&self.journal, kept_now) {
            (Some(own), true) => copy_to(kept_name(&zip, own), zip).await.unwrap_or(false),
            _ => false,
        };
        Err(match rolled_back {
            true => error,
            false => WebDavError::HalfRestored { key: key.as_str().to_owned(), cause: error.to_string() },
        })
    }

    /// Removes the files kept for the journal entry `entry` (the entry expired). Files already gone are fine.
    pub async fn forget_kept(&self, key: &ObjectKey, entry: &str) -> Result<(), WebDavError> {
        for suffix in ["zip", "prop"] {
            let url = self.client.file_url(&kept_name(&format!("{}.{suffix}", key.as_str()), entry));
            let response = self.client.request(Method::DELETE, &url, None, Vec::new()).await?;
            if !response.status().is_success() && response.status() != StatusCode::NOT_FOUND {
                return Err(self.client.unexpected("DELETE", &url, &response));
            }
        }
        Ok(())
    }

    /// Uploads the `.prop` file, noting the md5 it names for the journal ([`FileChange::left`]).
    pub async fn put_prop(&self, key: &ObjectKey, props: &FileProps) -> Result<(), WebDavError> {
        let body = props.render().into_bytes();
        self.gate.pass().await;
        self.client.put(&format!("{}.prop", key.as_str()), body, "text/xml; charset=utf-8").await?;
        self.log.note_left(key.as_str(), &props.md5);
        Ok(())
    }

    /// Removes the archive and the `.prop` file, both at once: callers delete the item first, or it never recorded
    /// the file, so no order between the two leaves a half-file that anything refers to. Files already gone are
    /// not an error.
    pub async fn delete(&self, key: &ObjectKey) -> Result<(), WebDavError> {
        self.gate.pass().await;
        // With a journal the files are moved aside instead, so the delete can be undone.
        if self.journal.is_some()
            && self.keep(key, FileAction::Removed, Method::from_bytes(b"MOVE").unwrap_or(Method::DELETE)).await?
        {
            return Ok(());
        }
        self.discard(key).await
    }

    /// Removes the archive and `.prop` without keeping them: for the files of an attachment this same call
    /// created and is taking back after a failure (nothing earlier to go back to).
    pub async fn discard(&self, key: &ObjectKey) -> Result<(), WebDavError> {
        let remove = |name: String| async move {
            let url = self.client.file_url(&name);
            let response = self.client.request(Method::DELETE, &url, None, Vec::new()).await?;
            if response.status().is_success() || response.status() == StatusCode::NOT_FOUND {
                Ok(())
            } else {
                Err(self.client.unexpected("DELETE", &url, &response))
            }
        };
        let (zip, prop) = join(remove(format!("{}.zip", key.as_str())), remove(format!("{}.prop", key.as_str()))).await;
        zip.and(prop)
    }
}

/// `WEBDAV_URL` as the folder the files are in: trimmed, without trailing slashes, ending in `/zotero`.
pub fn folder_url(raw: &str) -> Result<String, WebDavError> {
    let trimmed = raw.trim().trim_end_matches('/');
    let parsed = crate::net::parse_url(trimmed).map_err(|e| WebDavError::BadUrl { reason: e.to_string() })?;
    if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none() {
        return Err(WebDavError::BadUrl { reason: format!("{} is not an http(s) address", parsed.scheme()) });
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(WebDavError::BadUrl {
            reason: "it carries a user name or password; put those in WEBDAV_USERNAME and WEBDAV_PASSWORD".into(),
        });
    }
    if trimmed.ends_with("/zotero") {
        Ok(trimmed.to_owned())
    } else {
        Ok(format!("{trimmed}/zotero"))
    }
}

/// Where a redirect from `from` to `location` goes, when that is the same scheme, host and port.
fn same_origin_target(from: &str, location: &str) -> Option<String> {
    let base = crate::net::parse_url(from).ok()?;
    let target = crate::net::join_url(&base, location).ok()?;
    (target.origin() == base.origin()).then(|| target.to_string())
}

/// `Retry-After` in milliseconds: whole seconds (an HTTP date is read as "a while": the base delay).
fn retry_after_ms(response: &HttpResponse) -> Option<u64> {
    let value = response.headers().get(http::header::RETRY_AFTER)?.to_str().ok()?.trim();
    value.parse::<u64>().ok().map(|secs| secs.saturating_mul(1000))
}
