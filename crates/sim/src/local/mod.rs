//! Zotero Desktop's local API (`http://localhost:23119/api/`), in front of a [`Simulator`]: what a client of
//! the desktop app sees, with the differences from the Web API that Zotero's own `server_localAPI.js` (and, for
//! Zotero 7, its read-only predecessor) implements. The library itself is the simulator's; this layer only
//! changes how it is reached:
//!
//! - everything lives under `/api/`; `GET /api/` answers "Nothing to see here."; the user library is `users/0`
//!   (or the user's real id), another user id is a 400;
//! - reads need no key. There is no `/keys/…` and no `/deleted` (404, "No endpoint found"), as in the builds the
//!   seed documents;
//! - a bare `items/<key>/children` leaves annotations out; `?itemType=annotation` gives them;
//! - `/fulltext` sends no `Last-Modified-Version` (its `since` is the index's own counter);
//! - every answer carries `X-Zotero-Version`; Zotero 10's also `Zotero-Server-ID`, which a write must send back
//!   (428 without, 412 for another instance) together with a *local* key from `POST /api/local/authorize`, whose
//!   dialog the simulator answers as told ([`DialogAnswer`]): "Allow" keys are spent by the first write that
//!   presents them, a missing or spent key is a 401, and more than five dialogs a minute a 429;
//! - Zotero 7 takes no writes at all: any other method than GET is "400 Endpoint does not support method";
//! - switched off (Settings → Advanced), every request is "403 Local API is not enabled";
//! - files: `GET …/items/<key>/file` redirects to the `file://` URL in the data directory; Zotero 10 stores a
//!   file by the Web API's three steps, the upload going to `/api/local/uploads/<uploadKey>` on the same origin
//!   and landing in `<data dir>/storage/<key>/<filename>` ([`upload`]). As in Zotero, an attachment has two
//!   hashes: the `md5` the local API reports is the file on disk's, while an upload's `If-Match` is checked
//!   against the *synced* hash (`attachmentSyncedHash`), which only a file sync or a local-API upload sets. The
//!   demo's files start synced (synced hash = md5) except [`NEVER_SYNCED`] (no synced hash) and
//!   [`EDITED_SINCE_SYNC`] (synced hash of an earlier version).
//!
//! Not reproduced: the local API's unbounded listings (it has no default `limit`; the simulator keeps the Web
//! API's 25 and 100) and its localized type names.

mod data_dir;
mod upload;

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::path::PathBuf;
use std::rc::Rc;

use async_trait::async_trait;
use zotero_mcp_core::platform::{HttpClient, HttpError, HttpRequest, HttpResponse};

pub use self::data_dir::{LINKED_KEY, LINKED_PHRASE};
use crate::{LibraryRef, Simulator};

/// A demo attachment of the user library whose file Zotero Desktop never synced: it has no synced hash, so an
/// upload's `If-Match` is "412 If-Match set but file does not exist" and `If-None-Match: *` is what it takes.
pub const NEVER_SYNCED: &str = "6QLHXESZ";
/// A demo attachment of the user library whose file was edited on disk since Zotero last synced it: its
/// reported `md5` (the file on disk's) is not its synced hash, so `If-Match: <md5>` is "412 ETag does not match".
pub const EDITED_SINCE_SYNC: &str = "CDSULREI";

/// Which Zotero Desktop is imitated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavour {
    /// Zotero 7: a read-only local API, no `Zotero-Server-ID`.
    Zotero7,
    /// Zotero 10: writes behind the authorization dialog, the instance named on every answer.
    Zotero10,
}

impl Flavour {
    /// The `X-Zotero-Version` it sends.
    pub fn version(self) -> &'static str {
        match self {
            Self::Zotero7 => "7.0.15",
            Self::Zotero10 => "10.0.2",
        }
    }
}

/// What the person answers in Zotero 10's authorization dialog.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DialogAnswer {
    /// "Always Allow": a key that keeps working.
    AlwaysAllow,
    /// "Allow": a key for one write.
    Allow,
    Deny,
}

/// The instance id this simulated Zotero sends (12 characters, as Zotero's).
pub const SERVER_ID: &str = "SimDesktop10";

/// How many dialogs Zotero shows in a minute before answering 429.
const AUTHORIZE_PER_MINUTE: usize = 5;

/// Zotero Desktop's local API over a simulator's library.
pub struct LocalApi {
    sim: Rc<Simulator>,
    flavour: Flavour,
    /// The simulator's user library and the Web API key this layer reads it with.
    user_id: u64,
    web_key: String,
    enabled: Cell<bool>,
    dialog: Cell<DialogAnswer>,
    /// Answers for the next dialogs, in turn, before `dialog` answers the rest.
    next_answers: RefCell<std::collections::VecDeque<DialogAnswer>>,
    /// Local keys issued, with whether each is remembered ("Always Allow").
    keys: RefCell<HashMap<String, bool>>,
    /// When each dialog was shown (seconds, for the rate limit).
    dialogs: RefCell<Vec<u64>>,
    /// Requests as they arrived, before any rewriting (method, path with query, headers).
    requests: RefCell<Vec<LocalRequest>>,
    data_dir: Option<PathBuf>,
    uploads: RefCell<HashMap<String, upload::Pending>>,
    /// Synced hashes that are not the file's `md5` (`None`: never synced); any other stored file's is its md5.
    synced: RefCell<HashMap<(LibraryRef, String), Option<String>>>,
}

/// One request to the local API, as sent.
#[derive(Debug, Clone)]
pub struct LocalRequest {
    pub method: String,
    /// The path and query, e.g. `/api/users/0/items?limit=3`.
    pub target: String,
    pub headers: http::HeaderMap,
}

impl LocalApi {
    /// The local API of `sim`'s user library `user_id`, read with the Web API key `web_key`.
    pub fn new(sim: Rc<Simulator>, flavour: Flavour, user_id: u64, web_key: &str) -> Self {
        let local = Self {
            sim,
            flavour,
            user_id,
            web_key: web_key.to_owned(),
            enabled: Cell::new(true),
            dialog: Cell::new(DialogAnswer::AlwaysAllow),
            next_answers: RefCell::new(std::collections::VecDeque::new()),
            keys: RefCell::new(HashMap::new()),
            dialogs: RefCell::new(Vec::new()),
            requests: RefCell::new(Vec::new()),
            data_dir: None,
            uploads: RefCell::new(HashMap::new()),
            synced: RefCell::new(HashMap::new()),
        };
        let library = LibraryRef::User(user_id);
        local.set_synced_hash(library, NEVER_SYNCED, None);
        // The handout as it was when last synced; the file on disk has been edited since.
        let earlier = zotero_mcp_core::webdav::md5_hex(b"the seminar handout as last synced");
        local.set_synced_hash(library, EDITED_SINCE_SYNC, Some(&earlier));
        local
    }

    /// Sets attachment `key`'s synced hash (`attachmentSyncedHash`): `None` for a file never synced.
    pub fn set_synced_hash(&self, library: LibraryRef, key: &str, md5: Option<&str>) {
        self.synced.borrow_mut().insert((library, key.to_owned()), md5.map(str::to_owned));
    }

    /// Attachment `key`'s synced hash: the one set, else the item's `md5` (a file synced as it is).
    pub fn synced_hash(&self, library: LibraryRef, key: &str) -> Option<String> {
        if let Some(set) = self.synced.borrow().get(&(library, key.to_owned())) {
            return set.clone();
        }
        let item = self.sim.item(library, key)?;
        item["data"]["md5"].as_str().filter(|m| !m.is_empty()).map(str::to_owned)
    }

    /// Lays the library's files out in `dir` as Zotero's data directory ([`data_dir`]): `storage/<KEY>/<file>`
    /// for every demo file, a `zotero.sqlite`, and one linked file outside it ([`LINKED_KEY`]).
    pub fn with_data_dir(mut self, dir: PathBuf) -> Result<Self, String> {
        data_dir::lay_out(&self.sim, self.user_id, &dir)?;
        self.data_dir = Some(dir);
        Ok(self)
    }

    pub fn simulator(&self) -> &Rc<Simulator> {
        &self.sim
    }

    pub fn flavour(&self) -> Flavour {
        self.flavour
    }

    /// Switches the local API on or off (Zotero's Settings → Advanced).
    pub fn set_enabled(&self, enabled: bool) {
        self.enabled.set(enabled);
    }

    /// How the person will answer the next authorization dialogs.
    pub fn answer_dialogs(&self, answer: DialogAnswer) {
        self.dialog.set(answer);
    }

    /// How the person will answer the next dialogs, one answer each in turn; later dialogs are answered as
    /// [`Self::answer_dialogs`] says (a person who allowed the first write of a call and denied the second).
    pub fn answer_next_dialogs(&self, answers: &[DialogAnswer]) {
        self.next_answers.borrow_mut().extend(answers.iter().copied());
    }

    /// How many authorization dialogs were shown.
    pub fn dialogs_shown(&self) -> usize {
        self.dialogs.borrow().len()
    }

    /// Every request received, in order.
    pub fn requests(&self) -> Vec<LocalRequest> {
        self.requests.borrow().clone()
    }

    /// Answers one request.
    pub fn handle(&self, request: http::Request<Vec<u8>>) -> http::Response<Vec<u8>> {
        let target = request.uri().path_and_query().map_or("/", |p| p.as_str()).to_owned();
        self.requests.borrow_mut().push(LocalRequest {
            method: request.method().to_string(),
            target,
            headers: request.headers().clone(),
        });
        let mut response = self.answer(request);
        let headers = response.headers_mut();
        headers.insert("x-zotero-version", http::HeaderValue::from_static(self.flavour.version()));
        if self.flavour == Flavour::Zotero10 {
            headers.insert("zotero-server-id", http::HeaderValue::from_static(SERVER_ID));
        }
        response
    }

    fn answer(&self, request: http::Request<Vec<u8>>) -> http::Response<Vec<u8>> {
        let path = request.uri().path().to_owned();
        let Some(rest) = path.strip_prefix("/api").filter(|r| r.is_empty() || r.starts_with('/')) else {
            return text(404, "No endpoint found\n");
        };
        let is_write = !matches!(*request.method(), http::Method::GET | http::Method::HEAD);
        if self.flavour == Flavour::Zotero7 && is_write {
            // Zotero 7's endpoints all declare GET only; its HTTP server refuses the rest before the local API.
            return text(400, "Endpoint does not support method\n");
        }
        if !self.enabled.get() {
            return text(403, "Local API is not enabled");
        }
        if let Some(upload_key) = rest.strip_prefix("/local/uploads/") {
            // Where the bytes of a Zotero 10 upload go: like S3, it asks for no Zotero header.
            return self.receive_upload(upload_key, request.body());
        }
        if let Some(refused) = self.check_server_id(&request, is_write) {
            return refused;
        }
        if rest.is_empty() || rest == "/" {
            return text(200, "Nothing to see here.");
        }
        if rest == "/local/authorize" {
            return self.authorize(&request);
        }
        let Some(library_path) = self.library_path(rest) else {
            return text(404, "No endpoint found\n");
        };
        let library_path = match library_path {
            Ok(path) => path,
            Err(refused) => return refused,
        };
        if is_write {
            if let Some(refused) = self.authenticate(&request) {
                return refused;
            }
        }
        if let Some(key) = file_of(&library_path) {
            return self.file(&request, &library_path, key);
        }
        self.forward(request, &library_path)
    }

    /// `Zotero-Server-ID`: another instance's is a 412; a write without one a 428 (Zotero 10 only).
    fn check_server_id(&self, request: &http::Request<Vec<u8>>, is_write: bool) -> Option<http::Response<Vec<u8>>> {
        if self.flavour != Flavour::Zotero10 {
            return None;
        }
        match header(request, "zotero-server-id") {
            Some(given) if given != SERVER_ID => Some(text(412, "Zotero-Server-ID does not match this server")),
            None if is_write => Some(text(428, "Zotero-Server-ID not provided")),
            _ => None,
        }
    }

    /// The path below `/api` as the simulator's Web API names it (`/users/<id>/…`, `/groups/<id>/…`), `None`
    /// for what the local API does not serve, or the refusal of another user's library.
    fn library_path(&self, rest: &str) -> Option<Result<String, http::Response<Vec<u8>>>> {
        let segments: Vec<&str> = rest.trim_start_matches('/').split('/').collect();
        let served = match segments.as_slice() {
            // No /keys: the local API has no Web API keys; no /deleted in the builds the seed documents.
            ["keys", ..] | [_, _, "deleted"] => false,
            ["users" | "groups", id, ..] => id.bytes().all(|b| b.is_ascii_digit()) && !id.is_empty(),
            ["itemTypes" | "itemFields" | "itemTypeFields" | "itemTypeCreatorTypes" | "creatorFields" | "schema"] => {
                true
            }
            ["items", "new"] => true,
            _ => false,
        };
        if !served {
            return None;
        }
        if let ["users", id, tail @ ..] = segments.as_slice() {
            let id: u64 = id.parse().ok()?;
            if id != 0 && id != self.user_id {
                return Some(Err(text(
                    400,
                    &format!(
                        "Only data for the logged-in user is available locally -- use userID 0 or {}",
                        self.user_id
                    ),
                )));
            }
            let mut path = format!("/users/{}", self.user_id);
            for segment in tail {
                path.push('/');
                path.push_str(segment);
            }
            return Some(Ok(path));
        }
        Some(Ok(rest.to_owned()))
    }

    /// A write's local key: in `Zotero-API-Key`, `?key=` or a bearer token. A key for one write ("Allow") is
    /// spent here, whatever then happens to the write.
    fn authenticate(&self, request: &http::Request<Vec<u8>>) -> Option<http::Response<Vec<u8>>> {
        let query_key = request.uri().query().and_then(|q| {
            form_urlencoded::parse(q.as_bytes()).find(|(name, _)| name == "key").map(|(_, value)| value.into_owned())
        });
        let bearer = header(request, "authorization")
            .and_then(|v| v.strip_prefix("Bearer ").map(|k| k.trim().to_owned()))
            .filter(|k| !k.is_empty() && k.bytes().all(|b| b.is_ascii_alphanumeric()));
        let given = header(request, "zotero-api-key").map(str::to_owned).or(query_key).or(bearer);
        let Some(given) = given.filter(|k| !k.is_empty()) else {
            let mut refused = text(401, "API key required -- POST /api/local/authorize to obtain one");
            refused.headers_mut().insert(
                "www-authenticate",
                http::HeaderValue::from_static("Zotero-API-Key realm=\"Zotero Local API\""),
            );
            return Some(refused);
        };
        let mut keys = self.keys.borrow_mut();
        match keys.get(&given).copied() {
            None => Some(text(401, "Invalid or expired API key")),
            Some(true) => None,
            Some(false) => {
                keys.remove(&given);
                None
            }
        }
    }

    /// `POST /api/local/authorize {"appName": …}`: the dialog, answered as [`Self::answer_dialogs`] says.
    fn authorize(&self, request: &http::Request<Vec<u8>>) -> http::Response<Vec<u8>> {
        if request.method() != http::Method::POST {
            return text(400, "Endpoint does not support method\n");
        }
        let body: serde_json::Value = serde_json::from_slice(request.body()).unwrap_or_default();
        if body["appName"].as_str().is_none_or(|name| name.trim().is_empty()) {
            return text(400, "appName is required");
        }
        let now = crate::dates::unix_now();
        {
            let mut dialogs = self.dialogs.borrow_mut();
            let recent: Vec<u64> = dialogs.iter().copied().filter(|t| now.saturating_sub(*t) < 60).collect();
            if recent.len() >= AUTHORIZE_PER_MINUTE {
                let wait = 60 - now.saturating_sub(recent[0]);
                let mut refused = text(429, "Too many authorization requests");
                if let Ok(value) = http::HeaderValue::from_str(&wait.max(1).to_string()) {
                    refused.headers_mut().insert("retry-after", value);
                }
                return refused;
            }
            dialogs.push(now);
        }
        let answer = self.next_answers.borrow_mut().pop_front().unwrap_or(self.dialog.get());
        let remember = match answer {
            DialogAnswer::Deny => return json(403, &serde_json::json!({ "denied": true })),
            DialogAnswer::AlwaysAllow => true,
            DialogAnswer::Allow => false,
        };
        let key = match crate::storage::random_hex(16) {
            Ok(key) => key,
            Err(e) => return text(500, &e.to_string()),
        };
        self.keys.borrow_mut().insert(key.clone(), remember);
        json(200, &serde_json::json!({ "key": key, "remember": remember }))
    }

    /// Sends the request on to the simulator's Web API, as the library's reader.
    fn forward(&self, request: http::Request<Vec<u8>>, library_path: &str) -> http::Response<Vec<u8>> {
        let (parts, body) = request.into_parts();
        let mut pairs: Vec<(String, String)> = parts
            .uri
            .query()
            .map(|q| form_urlencoded::parse(q.as_bytes()).into_owned().filter(|(name, _)| name != "key").collect())
            .unwrap_or_default();
        let children = library_path.ends_with("/children") && parts.method == http::Method::GET;
        if children && !pairs.iter().any(|(name, _)| name == "itemType") {
            // Annotations hang off the attachment and come only when asked for by type.
            pairs.push(("itemType".into(), "-annotation".into()));
        }
        let mut uri = format!("https://api.zotero.org{library_path}");
        if !pairs.is_empty() {
            uri.push('?');
            uri.push_str(&form_urlencoded::Serializer::new(String::new()).extend_pairs(&pairs).finish());
        }
        let mut builder = http::Request::builder().method(parts.method).uri(uri);
        for (name, value) in &parts.headers {
            if !matches!(name.as_str(), "zotero-api-key" | "zotero-server-id" | "authorization" | "host") {
                builder = builder.header(name, value);
            }
        }
        let Ok(inner) = builder.header("zotero-api-key", &self.web_key).body(body) else {
            return text(400, "Bad request");
        };
        let deleting = (inner.method() == http::Method::DELETE).then(|| upload::library_of(library_path)).flatten();
        let before: Vec<String> = match deleting {
            Some(library) => {
                self.sim.items(library).iter().filter_map(|i| i["key"].as_str().map(str::to_owned)).collect()
            }
            None => Vec::new(),
        };
        let mut response = self.sim.handle(inner);
        if let (Some(library), true, Some(dir)) = (deleting, response.status().is_success(), &self.data_dir) {
            // Zotero erases a deleted attachment's folder (`Item._eraseData`), its children's with it.
            for key in before.iter().filter(|key| self.sim.item(library, key).is_none()) {
                let _ = std::fs::remove_dir_all(dir.join("storage").join(key));
            }
        }
        if library_path.ends_with("/fulltext") {
            // The full-text listing's `since` is the index's own counter: Zotero sends no library version.
            response.headers_mut().remove("last-modified-version");
        }
        response
    }
}

/// The attachment key of `…/items/<key>/file` (and `/file/view`, `/file/view/url`).
fn file_of(library_path: &str) -> Option<&str> {
    let segments: Vec<&str> = library_path.split('/').collect();
    let at = segments.iter().position(|s| *s == "items")?;
    match &segments[at + 1..] {
        [key, "file", rest @ ..] if rest.len() <= 2 => Some(key),
        _ => None,
    }
}

fn header<'a>(request: &'a http::Request<Vec<u8>>, name: &str) -> Option<&'a str> {
    request.headers().get(name).and_then(|v| v.to_str().ok()).map(str::trim).filter(|v| !v.is_empty())
}

fn text(status: u16, body: &str) -> http::Response<Vec<u8>> {
    respond(status, "text/plain", body.as_bytes().to_vec())
}

fn json(status: u16, body: &serde_json::Value) -> http::Response<Vec<u8>> {
    respond(status, "application/json", body.to_string().into_bytes())
}

fn respond(status: u16, content_type: &'static str, body: Vec<u8>) -> http::Response<Vec<u8>> {
    let mut response = http::Response::new(body);
    *response.status_mut() = http::StatusCode::from_u16(status).unwrap_or(http::StatusCode::INTERNAL_SERVER_ERROR);
    let headers = response.headers_mut();
    headers.insert("content-type", http::HeaderValue::from_static(content_type));
    headers.insert("zotero-api-version", http::HeaderValue::from_static("3"));
    response
}

/// The local API as an [`HttpClient`]: requests go straight to [`LocalApi::handle`], no socket involved.
#[derive(Clone)]
pub struct InProcessLocal(pub Rc<LocalApi>);

#[async_trait(?Send)]
impl HttpClient for InProcessLocal {
    async fn send(&self, request: HttpRequest) -> Result<HttpResponse, HttpError> {
        Ok(self.0.handle(request))
    }
}
