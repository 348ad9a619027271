//! Request handling: recording, fault injection, authentication, routing by path, and the read endpoints.
//!
//! The pipeline follows the dataserver's `ApiController::init` order where a client could notice it: an API
//! key that is unknown is refused before anything else, write tokens are checked for write methods, and
//! `If-Modified-Since-Version` answers 304 for multi-object reads before the listing is computed.

use std::collections::BTreeSet;

use percent_encoding::percent_decode_str;
use serde_json::{json, Map, Value};

use crate::error::{ApiError, ApiResult};
use crate::item;
use crate::keys::{is_valid_key, Grant};
use crate::query::{self, Action, Params};
use crate::reply::Reply;
use crate::schema::{is_regular_type, Schema};
use crate::search::{self, CollectionScope, ItemScope, TagScope};
use crate::state::{Kind, Library, State, WriteToken, API_BASE, WRITE_TOKEN_SECS, WWW_BASE};
use crate::write::{self, ObjectType, Writer};
use crate::{dates, Fault, LibraryRef, RecordedRequest};

/// One incoming request, decoded.
struct Req {
    method: http::Method,
    /// Percent-decoded path segments.
    segments: Vec<String>,
    path: String,
    query: String,
    headers: http::HeaderMap,
    body: Vec<u8>,
}

impl Req {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok()).map(str::trim)
    }

    fn is_write(&self) -> bool {
        matches!(self.method, http::Method::POST | http::Method::PUT | http::Method::PATCH | http::Method::DELETE)
    }
}

/// Who is calling.
struct Caller {
    api_key: Option<String>,
    grant: Option<Grant>,
}

impl Caller {
    fn can_read(&self, lref: LibraryRef) -> bool {
        match (&self.grant, lref) {
            (Some(g), LibraryRef::User(id)) => g.user_id == id,
            (Some(g), LibraryRef::Group(id)) => g.groups.contains_key(&id),
            (None, _) => false,
        }
    }

    fn can_write(&self, lref: LibraryRef) -> bool {
        match (&self.grant, lref) {
            (Some(g), LibraryRef::User(id)) => g.user_id == id && g.user_write,
            (Some(g), LibraryRef::Group(id)) => g.groups.get(&id).copied().unwrap_or(false),
            (None, _) => false,
        }
    }
}

/// Handles one request against the state.
pub fn handle(state: &mut State, request: http::Request<Vec<u8>>) -> http::Response<Vec<u8>> {
    let (parts, body) = request.into_parts();
    let path = parts.uri.path().to_string();
    let query = parts.uri.query().unwrap_or("").to_string();
    state.requests.push(RecordedRequest {
        method: parts.method.clone(),
        path: path.clone(),
        query: query.clone(),
        headers: parts
            .headers
            .iter()
            .map(|(n, v)| (n.as_str().to_string(), String::from_utf8_lossy(v.as_bytes()).into_owned()))
            .collect(),
        body: body.clone(),
    });

    let mut backoff = None;
    match state.faults.pop_front() {
        Some(Fault::TooManyRequests { retry_after }) => {
            let mut reply = Reply::text(429, "Too many requests");
            if let Some(s) = retry_after {
                reply = reply.header("Retry-After", s.to_string());
            }
            return finish(reply, &parts.method, None);
        }
        Some(Fault::ServiceUnavailable { retry_after }) => {
            let mut reply = Reply::text(503, "Service unavailable");
            if let Some(s) = retry_after {
                reply = reply.header("Retry-After", s.to_string());
            }
            return finish(reply, &parts.method, None);
        }
        Some(Fault::Backoff { seconds }) => backoff = Some(seconds),
        None => {}
    }

    let segments: Vec<String> = path
        .split('/')
        .filter(|s| !s.is_empty())
        .map(|s| percent_decode_str(s).decode_utf8_lossy().into_owned())
        .collect();
    let req = Req { method: parts.method.clone(), segments, path, query, headers: parts.headers, body };

    if req.is_write() {
        for (lref, key) in std::mem::take(&mut state.pending_edits) {
            write::external_edit(state, lref, &key);
        }
    }

    let reply = route(state, &req).unwrap_or_else(Reply::from);
    finish(reply, &req.method, backoff)
}

/// Adds the headers every answer carries and converts to an `http::Response`.
fn finish(mut reply: Reply, method: &http::Method, backoff: Option<u64>) -> http::Response<Vec<u8>> {
    reply = reply.header("Zotero-API-Version", "3").header("Zotero-Schema-Version", Schema::get().version.to_string());
    if let Some(seconds) = backoff {
        reply = reply.header("Backoff", seconds.to_string());
    }
    if matches!(reply.status, 204 | 304) || *method == http::Method::HEAD {
        reply.body.clear();
    }
    let mut builder = http::Response::builder().status(reply.status);
    for (name, value) in &reply.headers {
        builder = builder.header(name.as_str(), value.as_str());
    }
    builder.body(reply.body).unwrap_or_else(|_| {
        let mut fallback = http::Response::new(b"An error occurred".to_vec());
        *fallback.status_mut() = http::StatusCode::INTERNAL_SERVER_ERROR;
        fallback
    })
}

/// The API key from `Zotero-API-Key`, `?key=` or `Authorization: Bearer`, checked as Zotero checks it.
fn authenticate(state: &State, req: &Req) -> ApiResult<Caller> {
    let mut key = req.header("zotero-api-key").filter(|k| !k.is_empty()).map(str::to_string);
    let query_key = query::parse_pairs(&req.query).into_iter().find(|(k, _)| k == "key").map(|(_, v)| v);
    if let Some(qk) = query_key {
        match &key {
            None => key = Some(qk),
            Some(k) if *k != qk => {
                return Err(ApiError::bad_request("Zotero-API-Key header and 'key' parameter differ"))
            }
            Some(_) => {}
        }
    }
    if key.is_none() {
        if let Some(auth) = req.header("authorization") {
            if auth.len() >= 6 && auth[..6].eq_ignore_ascii_case("bearer") {
                let token = auth[6..].trim_start();
                let ok =
                    auth[6..].starts_with(' ') && !token.is_empty() && token.bytes().all(|b| b.is_ascii_alphanumeric());
                if !ok {
                    return Err(ApiError::bad_request("Invalid Authorization header format"));
                }
                key = Some(token.to_string());
            }
        }
    }
    let Some(key) = key else {
        if req.is_write() {
            return Err(ApiError::forbidden("An API key is required for write requests."));
        }
        return Ok(Caller { api_key: None, grant: None });
    };
    let Some(grant) = state.keys.get(&key).cloned() else {
        return Err(ApiError::forbidden("Invalid key"));
    };
    Ok(Caller { api_key: Some(key), grant: Some(grant) })
}

/// `Zotero-Write-Token`: 5–32 characters, refused with 412 when already used successfully in the last 12 hours.
fn write_token(state: &mut State, req: &Req, caller: &Caller) -> ApiResult<Option<(String, String)>> {
    let Some(token) = req.header("zotero-write-token").filter(|t| !t.is_empty()) else { return Ok(None) };
    if !(5..=32).contains(&token.len()) {
        return Err(ApiError::bad_request("Write token must be 5-32 characters in length"));
    }
    let Some(api_key) = caller.api_key.clone() else {
        return Err(ApiError::bad_request("Write token cannot be used without an API key"));
    };
    let now = dates::unix_now();
    state.write_tokens.retain(|_, t| t.expires_at > now);
    let id = (api_key, token.to_string());
    if state.write_tokens.contains_key(&id) {
        return Err(ApiError::precondition_failed("Write token already used"));
    }
    Ok(Some(id))
}

fn route(state: &mut State, req: &Req) -> ApiResult<Reply> {
    if !matches!(
        req.method,
        http::Method::GET
            | http::Method::HEAD
            | http::Method::POST
            | http::Method::PUT
            | http::Method::PATCH
            | http::Method::DELETE
            | http::Method::OPTIONS
    ) {
        return Err(ApiError::not_implemented("Method is not implemented"));
    }
    if let Some(v) = req.header("zotero-api-version") {
        if v != "3" {
            return Err(ApiError::not_implemented(format!(
                "zotero-sim implements only API version 3 (Zotero-API-Version: {v} requested)"
            )));
        }
    }
    if req.method == http::Method::OPTIONS {
        // CORS preflight: the real API answers it before authentication.
        return Ok(Reply::new(200));
    }
    let caller = authenticate(state, req)?;
    let token = if req.is_write() { write_token(state, req, &caller)? } else { None };
    let segs: Vec<&str> = req.segments.iter().map(String::as_str).collect();
    let reply = match segs.as_slice() {
        [] => Ok(Reply::text(200, "Nothing to see here.")),
        ["itemTypes"] | ["itemFields"] | ["itemTypeFields"] | ["itemTypeCreatorTypes"] | ["creatorFields"] => {
            mappings(req, segs[0])
        }
        ["items", "new"] => new_item_template(req),
        ["keys", key] => key_info(state, req, &caller, key),
        ["users", id, rest @ ..] | ["groups", id, rest @ ..] => {
            let Ok(id) = id.parse::<u64>() else {
                let what = if segs[0] == "users" { "user" } else { "group" };
                return Err(ApiError::bad_request(format!("Invalid {what} ID")));
            };
            let lref = if segs[0] == "users" { LibraryRef::User(id) } else { LibraryRef::Group(id) };
            if segs[0] == "users" && matches!(rest, ["groups"]) {
                return user_groups(state, req, &caller, id);
            }
            if segs[0] == "users" && matches!(rest, ["keys", _]) {
                return key_info(state, req, &caller, rest[1]);
            }
            library_route(state, req, &caller, lref, rest)
        }
        _ => Err(ApiError::not_found("Not found")),
    }?;
    if let Some(id) = token {
        if (200..300).contains(&reply.status) {
            state.write_tokens.insert(id, WriteToken { expires_at: dates::unix_now() + WRITE_TOKEN_SECS });
        }
    }
    Ok(reply)
}

fn allow(req: &Req, methods: &[http::Method], allow_header: &'static str) -> ApiResult<()> {
    if methods.contains(&req.method) || (req.method == http::Method::HEAD && methods.contains(&http::Method::GET)) {
        Ok(())
    } else {
        Err(ApiError::method_not_allowed(allow_header))
    }
}

const GET: http::Method = http::Method::GET;
const POST: http::Method = http::Method::POST;
const PUT: http::Method = http::Method::PUT;
const PATCH: http::Method = http::Method::PATCH;
const DELETE: http::Method = http::Method::DELETE;

fn library_route(state: &mut State, req: &Req, caller: &Caller, lref: LibraryRef, rest: &[&str]) -> ApiResult<Reply> {
    if !state.libraries.contains_key(&lref) {
        return Err(match lref {
            LibraryRef::User(id) => ApiError::not_found(format!("User {id} not found")),
            LibraryRef::Group(_) => ApiError::not_found("Not found"),
        });
    }
    let single_object_get =
        matches!(rest, ["items", k] | ["collections", k] if !matches!(*k, "top" | "trash" | "tags")) && !req.is_write();
    if !caller.can_read(lref) {
        // Zotero hides single objects of libraries the key cannot read.
        return Err(if single_object_get {
            ApiError::not_found("Not found")
        } else {
            ApiError::forbidden("Forbidden")
        });
    }
    if req.is_write() && !caller.can_write(lref) {
        return Err(ApiError::forbidden("Write access denied"));
    }
    let writer = Writer {
        user_id: caller.grant.as_ref().map_or(0, |g| g.user_id),
        username: caller.grant.as_ref().map(|g| state.username(g.user_id)).unwrap_or_default(),
    };

    // If-Modified-Since-Version: 304 for multi-object reads of an unchanged library.
    let multi_read = !req.is_write()
        && !single_object_get
        && matches!(rest.first(), Some(&"items" | &"collections" | &"searches" | &"settings" | &"tags"))
        && !matches!(rest, ["items", _, "fulltext"]);
    if multi_read {
        if let Some(v) = req.header("if-modified-since-version").and_then(|v| v.parse::<u64>().ok()) {
            if lib(state, lref)?.version <= v {
                return Ok(Reply::new(304));
            }
        }
    }

    match rest {
        ["items"] => {
            allow(req, &[GET, POST, DELETE], "HEAD, GET, POST, DELETE")?;
            match req.method {
                http::Method::POST => post_batch(state, req, lref, ObjectType::Item, &writer),
                http::Method::DELETE => delete_many(state, req, lref, ObjectType::Item),
                _ => list_items(state, req, lref, ItemScope::All),
            }
        }
        ["items", "top"] => {
            allow(req, &[GET], "HEAD, GET")?;
            list_items(state, req, lref, ItemScope::Top)
        }
        ["items", "trash"] => {
            allow(req, &[GET], "HEAD, GET")?;
            list_items(state, req, lref, ItemScope::Trash)
        }
        ["items", "tags"] => list_tags_in_items(state, req, lref, ItemScope::All),
        ["items", "top", "tags"] => list_tags_in_items(state, req, lref, ItemScope::Top),
        ["items", "trash", "tags"] => list_tags_in_items(state, req, lref, ItemScope::Trash),
        ["items", key] => {
            allow(req, &[GET, PUT, PATCH, DELETE], "HEAD, GET, PUT, PATCH, DELETE")?;
            single_object(state, req, lref, ObjectType::Item, key, &writer)
        }
        ["items", key, "children"] => {
            allow(req, &[GET], "HEAD, GET")?;
            let l = lib(state, lref)?;
            let Some(rec) = l.items.get(*key) else { return Err(ApiError::not_found("Item not found")) };
            if rec.data.is_attachment() && !rec.data.is_readable_attachment() {
                return Err(ApiError::bad_request(
                    "/children can only be called on PDF, EPUB, and snapshot attachments",
                ));
            }
            list_items(state, req, lref, ItemScope::Children(key.to_string()))
        }
        ["items", key, "tags"] => {
            allow(req, &[GET], "HEAD, GET")?;
            let l = lib(state, lref)?;
            if !l.items.contains_key(*key) {
                return Err(ApiError::not_found("Not found"));
            }
            list_tags(state, req, lref, TagScope::OnItems(BTreeSet::from([key.to_string()])))
        }
        ["items", key, "fulltext"] => fulltext_item(state, req, lref, key),
        ["items", _, "file", ..] => Err(ApiError::not_implemented(
            "zotero-sim does not implement file storage (files live on the user's WebDAV server)",
        )),
        ["collections"] => {
            allow(req, &[GET, POST, DELETE], "HEAD, GET, POST, DELETE")?;
            match req.method {
                http::Method::POST => post_batch(state, req, lref, ObjectType::Collection, &writer),
                http::Method::DELETE => delete_many(state, req, lref, ObjectType::Collection),
                _ => list_collections(state, req, lref, CollectionScope::All),
            }
        }
        ["collections", "top"] => {
            allow(req, &[GET], "HEAD, GET")?;
            list_collections(state, req, lref, CollectionScope::Top)
        }
        ["collections", key] => {
            allow(req, &[GET, PUT, PATCH, DELETE], "HEAD, GET, PUT, PATCH, DELETE")?;
            single_object(state, req, lref, ObjectType::Collection, key, &writer)
        }
        ["collections", key, "collections"] => {
            allow(req, &[GET], "HEAD, GET")?;
            require_collection(state, lref, key)?;
            list_collections(state, req, lref, CollectionScope::Sub(key.to_string()))
        }
        ["collections", key, "items"] => {
            allow(req, &[GET], "HEAD, GET")?;
            require_collection(state, lref, key)?;
            list_items(state, req, lref, ItemScope::Collection { key: key.to_string(), top: false })
        }
        ["collections", key, "items", "top"] => {
            allow(req, &[GET], "HEAD, GET")?;
            require_collection(state, lref, key)?;
            list_items(state, req, lref, ItemScope::Collection { key: key.to_string(), top: true })
        }
        ["collections", key, "tags"] => {
            allow(req, &[GET], "HEAD, GET")?;
            require_collection(state, lref, key)?;
            let l = lib(state, lref)?;
            let members = l
                .items
                .values()
                .filter(|r| r.data.collections.iter().any(|c| c == key))
                .map(|r| r.key.clone())
                .collect();
            list_tags(state, req, lref, TagScope::Collection(members))
        }
        ["collections", key, "items", "tags"] => {
            require_collection(state, lref, key)?;
            list_tags_in_items(state, req, lref, ItemScope::Collection { key: key.to_string(), top: false })
        }
        ["collections", key, "items", "top", "tags"] => {
            require_collection(state, lref, key)?;
            list_tags_in_items(state, req, lref, ItemScope::Collection { key: key.to_string(), top: true })
        }
        ["tags"] => {
            allow(req, &[GET, DELETE], "HEAD, GET, DELETE")?;
            if req.method == DELETE {
                delete_tags(state, req, lref)
            } else {
                list_tags(state, req, lref, TagScope::All)
            }
        }
        ["tags", name] => {
            allow(req, &[GET], "HEAD, GET")?;
            let l = lib(state, lref)?;
            let exists = l.tags.keys().any(|t| t.name == *name);
            if !exists {
                return Err(ApiError::not_found("Not found"));
            }
            let keys = l.items.values().filter(|r| r.data.tags.iter().any(|t| t.name == *name)).map(|r| r.key.clone());
            list_tags(state, req, lref, TagScope::OnItems(keys.collect()))
        }
        ["deleted"] => {
            allow(req, &[GET], "GET")?;
            deleted(state, req, lref)
        }
        ["fulltext"] => {
            allow(req, &[GET, POST], "GET, POST")?;
            if req.method == POST {
                return Err(ApiError::not_implemented(
                    "zotero-sim does not implement POST /fulltext; use PUT /items/<key>/fulltext",
                ));
            }
            fulltext_versions(state, req, lref)
        }
        ["searches", ..] | ["settings", ..] => {
            if req.is_write() {
                return Err(ApiError::not_implemented(format!("zotero-sim does not implement writing {}", rest[0])));
            }
            let l = lib(state, lref)?;
            let body = if rest[0] == "searches" && rest.len() == 1 { json!([]) } else { json!({}) };
            if rest.len() > 1 {
                return Err(ApiError::not_found("Not found"));
            }
            let mut reply = Reply::json(200, &body).version(l.version);
            if rest[0] == "searches" {
                reply = reply.header("Total-Results", "0");
            }
            Ok(reply)
        }
        ["publications", ..] => Err(ApiError::not_implemented("zotero-sim does not implement My Publications")),
        _ => Err(ApiError::not_found("Not found")),
    }
}

fn lib(state: &State, lref: LibraryRef) -> ApiResult<&Library> {
    state.libraries.get(&lref).ok_or_else(|| ApiError::not_found("Not found"))
}

fn require_collection(state: &State, lref: LibraryRef, key: &str) -> ApiResult<()> {
    if lib(state, lref)?.collections.contains_key(key) {
        Ok(())
    } else {
        Err(ApiError::not_found("Collection not found"))
    }
}

/// `checkLibraryIfUnmodifiedSinceVersion`: returns whether the header was given (and passed).
fn check_library_version(state: &State, req: &Req, lref: LibraryRef, required: bool) -> ApiResult<bool> {
    let Some(raw) = req.header("if-unmodified-since-version") else {
        if required {
            return Err(ApiError::precondition_required("If-Unmodified-Since-Version not provided"));
        }
        return Ok(false);
    };
    let Ok(version) = raw.parse::<u64>() else {
        return Err(ApiError::bad_request("Invalid If-Unmodified-Since-Version value"));
    };
    let current = lib(state, lref)?.version;
    if current > version {
        return Err(ApiError::precondition_failed(format!(
            "Library has been modified since specified version (expected {version}, found {current})"
        )));
    }
    Ok(true)
}

fn post_batch(state: &mut State, req: &Req, lref: LibraryRef, kind: ObjectType, writer: &Writer) -> ApiResult<Reply> {
    let checked = check_library_version(state, req, lref, false)?;
    if req.body.is_empty() {
        return Err(ApiError::bad_request("POST data not provided"));
    }
    let (report, version) = write::post_batch(state, lref, kind, &req.body, checked, writer)?;
    Ok(Reply::json(200, &report).version(version))
}

fn delete_many(state: &mut State, req: &Req, lref: LibraryRef, kind: ObjectType) -> ApiResult<Reply> {
    check_library_version(state, req, lref, false)?;
    let params = query::parse(&req.query, Action::Other, false)?;
    let keys = match kind {
        ObjectType::Item => params.item_keys,
        ObjectType::Collection => params.collection_keys,
    }
    .unwrap_or_default();
    let version = write::delete_many(state, lref, kind, &keys)?;
    Ok(Reply::new(204).version(version))
}

fn delete_tags(state: &mut State, req: &Req, lref: LibraryRef) -> ApiResult<Reply> {
    check_library_version(state, req, lref, true)?;
    let pairs = query::parse_pairs(&req.query);
    let names: Vec<String> = pairs
        .iter()
        .filter(|(k, _)| k == "tag")
        .flat_map(|(_, v)| v.split(" || ").map(str::to_string).collect::<Vec<_>>())
        .collect();
    let version = write::delete_tags(state, lref, &names)?;
    Ok(Reply::new(204).version(version))
}

fn single_object(
    state: &mut State,
    req: &Req,
    lref: LibraryRef,
    kind: ObjectType,
    key: &str,
    writer: &Writer,
) -> ApiResult<Reply> {
    if !is_valid_key(key) {
        return Err(ApiError::not_found("Not found"));
    }
    match req.method {
        http::Method::PUT | http::Method::PATCH => {
            let w = write::SingleWrite {
                kind,
                key,
                method: &req.method,
                body: &req.body,
                header_version: req.header("if-unmodified-since-version"),
            };
            let version = write::put_object(state, lref, &w, writer)?;
            Ok(Reply::new(204).version(version))
        }
        http::Method::DELETE => {
            let version = write::delete_object(state, lref, kind, key, req.header("if-unmodified-since-version"))?;
            Ok(Reply::new(204).version(version))
        }
        _ => {
            let params = query::parse(
                &req.query,
                if kind == ObjectType::Item { Action::Items } else { Action::Collections },
                true,
            )?;
            let l = lib(state, lref)?;
            let include_data = params.include.iter().any(|i| i == "data");
            match kind {
                ObjectType::Item => {
                    let Some(rec) = l.items.get(key) else { return Err(ApiError::not_found("Item does not exist")) };
                    Ok(Reply::json(200, &l.item_json(rec, include_data)).version(rec.version))
                }
                ObjectType::Collection => {
                    let Some(rec) = l.collections.get(key) else {
                        return Err(ApiError::not_found("Collection not found"));
                    };
                    Ok(Reply::json(200, &l.collection_json(rec, include_data)).version(rec.version))
                }
            }
        }
    }
}

/// The common tail of listings: `Total-Results`, `Link`, `Last-Modified-Version` and the body for the format.
fn listing(
    req: &Req,
    params: &Params,
    version: u64,
    total: usize,
    keys: Vec<String>,
    versions: Vec<(String, u64)>,
    entries: Vec<Value>,
) -> Reply {
    let reply = match params.format.as_str() {
        "keys" => {
            let mut text = keys.join("\n");
            text.push('\n');
            Reply::text(200, &text)
        }
        "versions" => {
            let map: Map<String, Value> = versions.into_iter().map(|(k, v)| (k, json!(v))).collect();
            Reply::json(200, &Value::Object(map))
        }
        _ => Reply::json(200, &Value::Array(entries)),
    };
    reply
        .header("Total-Results", total.to_string())
        .header("Link", query::link_header(&req.path, params, total as u64))
        .version(version)
}

fn list_items(state: &State, req: &Req, lref: LibraryRef, scope: ItemScope) -> ApiResult<Reply> {
    let params = query::parse(&req.query, Action::Items, false)?;
    let l = lib(state, lref)?;
    let all = search::items(l, &scope, &params)?;
    let page = search::page(&all, &params);
    let include_data = params.include.iter().any(|i| i == "data");
    let keys = page.iter().map(|r| r.key.clone()).collect();
    let versions = page.iter().map(|r| (r.key.clone(), r.version)).collect();
    let entries =
        if params.format == "json" { page.iter().map(|r| l.item_json(r, include_data)).collect() } else { Vec::new() };
    Ok(listing(req, &params, l.version, all.len(), keys, versions, entries))
}

fn list_collections(state: &State, req: &Req, lref: LibraryRef, scope: CollectionScope) -> ApiResult<Reply> {
    let params = query::parse(&req.query, Action::Collections, false)?;
    let l = lib(state, lref)?;
    let all = search::collections(l, &scope, &params);
    let page = search::page(&all, &params);
    let include_data = params.include.iter().any(|i| i == "data");
    let keys = page.iter().map(|r| r.key.clone()).collect();
    let versions = page.iter().map(|r| (r.key.clone(), r.version)).collect();
    let entries = if params.format == "json" {
        page.iter().map(|r| l.collection_json(r, include_data)).collect()
    } else {
        Vec::new()
    };
    Ok(listing(req, &params, l.version, all.len(), keys, versions, entries))
}

/// Tags of the items a listing would return: `itemQ`, `itemQMode`, `itemTag`, `itemType`, `itemKey` and
/// `includeTrashed` select the items, the other parameters the tags.
fn list_tags_in_items(state: &State, req: &Req, lref: LibraryRef, scope: ItemScope) -> ApiResult<Reply> {
    allow(req, &[GET], "HEAD, GET")?;
    let params = query::parse(&req.query, Action::Tags, false)?;
    let mut item_params = params.clone();
    item_params.q = params.item_q.clone();
    item_params.qmode = params.item_qmode.clone();
    item_params.tags = params.item_tags.clone();
    item_params.since = None;
    item_params.sort = "dateModified".into();
    let l = lib(state, lref)?;
    let keys = search::items(l, &scope, &item_params)?.into_iter().map(|r| r.key.clone()).collect();
    list_tags(state, req, lref, TagScope::OnItems(keys))
}

fn list_tags(state: &State, req: &Req, lref: LibraryRef, scope: TagScope) -> ApiResult<Reply> {
    let params = query::parse(&req.query, Action::Tags, false)?;
    let l = lib(state, lref)?;
    let all = search::tags(l, &scope, &params);
    let page = search::page(&all, &params);
    let base = format!("{API_BASE}{}", l.path());
    let www = l.www_url();
    let entries = page
        .iter()
        .map(|e| {
            let encoded: String = form_urlencoded::byte_serialize(e.tag.name.as_bytes()).collect();
            json!({
                "tag": e.tag.name,
                "links": {
                    "self": {"href": format!("{base}/tags/{encoded}"), "type": "application/json"},
                    "alternate": {"href": format!("{www}/tags/{encoded}"), "type": "text/html"}
                },
                "meta": {"type": e.tag.kind, "numItems": e.num_items}
            })
        })
        .collect();
    Ok(listing(req, &params, l.version, all.len(), Vec::new(), Vec::new(), entries))
}

fn deleted(state: &State, req: &Req, lref: LibraryRef) -> ApiResult<Reply> {
    let pairs = query::parse_pairs(&req.query);
    let since = pairs.iter().rev().find(|(k, _)| k == "since" || k == "newer").map(|(_, v)| v.clone());
    let Some(since) = since else {
        return Err(ApiError::bad_request("'since' parameter must be provided"));
    };
    let Ok(since) = since.trim().parse::<u64>() else {
        return Err(ApiError::bad_request("Invalid value for 'since' parameter"));
    };
    let l = lib(state, lref)?;
    let keys = |kind: Kind| -> Vec<String> {
        l.deleted.iter().filter(|d| d.kind == kind && d.version > since).map(|d| d.key.clone()).collect()
    };
    let body = json!({
        "collections": keys(Kind::Collection),
        "items": keys(Kind::Item),
        "searches": keys(Kind::Search),
        "tags": keys(Kind::Tag),
        "settings": keys(Kind::Setting),
    });
    Ok(Reply::json(200, &body).version(l.version))
}

fn fulltext_versions(state: &State, req: &Req, lref: LibraryRef) -> ApiResult<Reply> {
    let params = query::parse(&req.query, Action::FullText, false)?;
    let l = lib(state, lref)?;
    let since = params.since.unwrap_or(0);
    let map: Map<String, Value> =
        l.fulltext.iter().filter(|(_, f)| f.version > since).map(|(k, f)| (k.clone(), json!(f.version))).collect();
    Ok(Reply::json(200, &Value::Object(map)).version(l.version))
}

fn fulltext_item(state: &mut State, req: &Req, lref: LibraryRef, key: &str) -> ApiResult<Reply> {
    allow(req, &[GET, PUT], "GET, PUT")?;
    let l = lib(state, lref)?;
    let is_text_attachment =
        l.items.get(key).is_some_and(|r| r.data.attachment.as_ref().is_some_and(|a| a.link_mode != "linked_url"));
    if !is_text_attachment {
        // The API answers 404 both for a missing item and for one that is not a (file) attachment.
        return Err(ApiError::not_found("Not found"));
    }
    if req.method == PUT {
        let content_type = req.header("content-type").unwrap_or("");
        if content_type != "application/json" && !content_type.eq_ignore_ascii_case("application/json; charset=UTF-8") {
            return Err(ApiError::bad_request("Content-Type must be application/json"));
        }
        let version = write::put_fulltext(state, lref, key, &req.body)?;
        return Ok(Reply::new(204).version(version));
    }
    let Some(ft) = l.fulltext.get(key) else { return Err(ApiError::not_found("Not found")) };
    let mut body = Map::new();
    body.insert("content".into(), json!(ft.content));
    for (name, value) in [
        ("indexedChars", ft.indexed_chars),
        ("totalChars", ft.total_chars),
        ("indexedPages", ft.indexed_pages),
        ("totalPages", ft.total_pages),
    ] {
        if let Some(v) = value.filter(|v| *v != 0) {
            body.insert(name.into(), json!(v));
        }
    }
    Ok(Reply::json(200, &Value::Object(body)).version(ft.version))
}

fn key_info(state: &State, req: &Req, caller: &Caller, key: &str) -> ApiResult<Reply> {
    allow(req, &[GET], "GET")?;
    let key = if key == "current" {
        match &caller.api_key {
            Some(k) => k.clone(),
            None => return Err(ApiError::forbidden("Forbidden")),
        }
    } else {
        key.to_string()
    };
    let Some(grant) = state.keys.get(&key) else {
        return Err(ApiError::not_found(format!("Key '{key}' not found")));
    };
    let mut access = Map::new();
    access.insert("user".into(), json!({"library": true, "files": true, "notes": true, "write": grant.user_write}));
    if !grant.groups.is_empty() {
        let groups: Map<String, Value> =
            grant.groups.iter().map(|(id, write)| (id.to_string(), json!({"library": true, "write": write}))).collect();
        access.insert("groups".into(), Value::Object(groups));
    }
    let body = json!({
        "key": key,
        "userID": grant.user_id,
        "username": state.username(grant.user_id),
        "displayName": "",
        "access": access,
    });
    Ok(Reply::json(200, &body))
}

/// `/users/<id>/groups`: the groups the key can see.
fn user_groups(state: &State, req: &Req, caller: &Caller, user_id: u64) -> ApiResult<Reply> {
    allow(req, &[GET], "HEAD, GET")?;
    let params = query::parse(&req.query, Action::Other, false)?;
    let grant =
        caller.grant.as_ref().filter(|g| g.user_id == user_id).ok_or_else(|| ApiError::forbidden("Forbidden"))?;
    let groups: Vec<&Library> =
        grant.groups.keys().filter_map(|id| state.libraries.get(&LibraryRef::Group(*id))).collect();
    let versions = groups
        .iter()
        .filter_map(|g| match g.lref {
            LibraryRef::Group(id) => Some((id.to_string(), g.version)),
            LibraryRef::User(_) => None,
        })
        .collect();
    let entries = groups
        .iter()
        .map(|g| {
            let id = match g.lref {
                LibraryRef::Group(id) | LibraryRef::User(id) => id,
            };
            json!({
                "id": id,
                "version": g.version,
                "links": {
                    "self": {"href": format!("{API_BASE}/groups/{id}"), "type": "application/json"},
                    "alternate": {"href": format!("{WWW_BASE}/groups/{id}"), "type": "text/html"}
                },
                "meta": {"numItems": g.items.len()},
                "data": {
                    "id": id,
                    "version": g.version,
                    "name": g.name,
                    "owner": user_id,
                    "type": "Private",
                    "description": "",
                    "url": "",
                    "libraryEditing": "members",
                    "libraryReading": "members",
                    "fileEditing": "members"
                }
            })
        })
        .collect();
    let version = groups.iter().map(|g| g.version).max().unwrap_or(0);
    let total = groups.len();
    Ok(listing(req, &params, version, total, Vec::new(), versions, entries))
}

fn mappings(req: &Req, which: &str) -> ApiResult<Reply> {
    allow(req, &[GET], "GET")?;
    let schema = Schema::get();
    let pairs = query::parse_pairs(&req.query);
    let item_type_param = pairs.iter().find(|(k, _)| k == "itemType").map(|(_, v)| v.clone());
    let type_def = || -> ApiResult<&'static crate::schema::ItemTypeDef> {
        let Some(t) = item_type_param.clone().filter(|t| !t.is_empty()) else {
            return Err(ApiError::bad_request("'itemType' not provided"));
        };
        schema
            .item_type(&t)
            .filter(|d| d.name != "annotation")
            .ok_or_else(|| ApiError::bad_request(format!("Invalid item type '{t}'")))
    };
    let body: Value = match which {
        "itemTypes" => schema
            .item_types()
            .iter()
            .filter(|t| t.name != "annotation")
            .map(|t| json!({"itemType": t.name, "localized": schema.type_label(&t.name)}))
            .collect(),
        "itemFields" => schema.all_fields().map(|f| json!({"field": f, "localized": schema.field_label(f)})).collect(),
        "itemTypeFields" => type_def()?
            .fields
            .iter()
            .map(|f| json!({"field": f.name, "localized": schema.field_label(&f.name)}))
            .collect(),
        "itemTypeCreatorTypes" => {
            let t = type_def()?;
            if !is_regular_type(&t.name) {
                json!([])
            } else {
                t.creator_types
                    .iter()
                    .map(|c| json!({"creatorType": c, "localized": schema.creator_label(c)}))
                    .collect()
            }
        }
        _ => json!([
            {"field": "firstName", "localized": "First"},
            {"field": "lastName", "localized": "Last"},
            {"field": "name", "localized": "Name"}
        ]),
    };
    Ok(Reply::json(200, &body))
}

fn new_item_template(req: &Req) -> ApiResult<Reply> {
    allow(req, &[GET], "GET")?;
    let schema = Schema::get();
    let pairs = query::parse_pairs(&req.query);
    let param = |name: &str| pairs.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()).filter(|v| !v.is_empty());
    let Some(item_type) = param("itemType") else {
        return Err(ApiError::bad_request("'itemType' not provided"));
    };
    let mut link_mode = None;
    let mut annotation_type = None;
    if item_type == "attachment" {
        let Some(mode) = param("linkMode") else {
            return Err(ApiError::bad_request("linkMode required for itemType=attachment"));
        };
        if !item::LINK_MODES.contains(&mode.as_str()) {
            return Err(ApiError::bad_request(format!("Invalid linkMode '{mode}'")));
        }
        link_mode = Some(mode);
    } else if item_type == "annotation" {
        let Some(kind) = param("annotationType") else {
            return Err(ApiError::bad_request("annotationType required for itemType=annotation"));
        };
        if !matches!(kind.as_str(), "highlight" | "note" | "image" | "ink" | "underline" | "text") {
            return Err(ApiError::bad_request(format!("Invalid annotationType '{kind}'")));
        }
        annotation_type = Some(kind);
    }
    let Some(type_def) = schema.item_type(&item_type) else {
        return Err(ApiError::bad_request(format!("Invalid item type '{item_type}'")));
    };
    Ok(Reply::json(200, &item::template(type_def, link_mode.as_deref(), annotation_type.as_deref())))
}
