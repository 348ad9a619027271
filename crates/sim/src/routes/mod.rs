//! Request handling: recording, fault injection, authentication, routing by path, and the read endpoints.
//!
//! The pipeline follows the dataserver's `ApiController::init` order where a client could notice it: an API
//! key that is unknown is refused before anything else, write tokens are checked for write methods, and
//! `If-Modified-Since-Version` answers 304 for multi-object reads before the listing is computed.
//!
//! This file holds the pipeline ([`handle`]), the top-level router and what every route shares (the decoded
//! request, the caller, method checks); the endpoints live in the submodules: [`auth`] (API keys and write
//! tokens), [`library`] (the router inside `/users/<id>` and `/groups/<id>`), [`reads`] (listings), [`writes`],
//! [`fulltext`], [`files`] (`items/<key>/file`), [`account`] (keys and groups) and [`types`] (the schema
//! endpoints). [`storage`] answers the storage origin, a host of its own ([`handle_storage`]).

mod account;
mod auth;
mod files;
mod fulltext;
mod library;
mod reads;
mod storage;
mod types;
mod writes;

use percent_encoding::percent_decode_str;

use crate::error::{ApiError, ApiResult};
use crate::keys::Grant;
use crate::reply::Reply;
use crate::schema::Schema;
use crate::state::{Library, State, WriteToken, WRITE_TOKEN_SECS};
use crate::write;
use crate::{dates, Fault, LibraryRef, RecordedRequest};

pub(crate) use self::files::{record_file, usage_bytes};

use self::account::{key_info, user_groups};
use self::auth::{authenticate, write_token};
use self::library::library_route;
use self::types::{mappings, new_item_template};

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
            (Some(g), LibraryRef::User(id)) => g.user_id == id && g.user_library,
            (Some(g), LibraryRef::Group(id)) => g.group(id).is_some(),
            (None, _) => false,
        }
    }

    /// File access: `access.user.files` for the user library; any member of a group has it for the group's files.
    fn can_access_files(&self, lref: LibraryRef) -> bool {
        match (&self.grant, lref) {
            (Some(g), LibraryRef::User(id)) => g.user_id == id && g.user_library && g.user_files,
            (Some(g), LibraryRef::Group(id)) => g.group(id).is_some(),
            (None, _) => false,
        }
    }

    fn can_write(&self, lref: LibraryRef) -> bool {
        match (&self.grant, lref) {
            (Some(g), LibraryRef::User(id)) => g.user_id == id && g.user_library && g.user_write,
            (Some(g), LibraryRef::Group(id)) => g.group(id).unwrap_or(false),
            (None, _) => false,
        }
    }
}

/// Whether a request is addressed to the storage origin (by its URI's authority or its `Host` header).
pub fn is_for_storage(state: &State, request: &http::Request<Vec<u8>>) -> bool {
    let storage = state.storage.authority();
    let authority = request.uri().authority().map(|a| a.as_str().to_string());
    let host = request.headers().get(http::header::HOST).and_then(|h| h.to_str().ok()).map(str::to_string);
    authority.or(host).is_some_and(|a| a.eq_ignore_ascii_case(storage))
}

/// Handles one request to the storage origin.
pub fn handle_storage(state: &mut State, request: http::Request<Vec<u8>>) -> http::Response<Vec<u8>> {
    storage::handle(state, request)
}

/// Handles one request against the state.
pub fn handle(state: &mut State, request: http::Request<Vec<u8>>) -> http::Response<Vec<u8>> {
    let (parts, body) = request.into_parts();
    let path = parts.uri.path().to_string();
    let query = parts.uri.query().unwrap_or("").to_string();
    state.requests.push(RecordedRequest::of(&parts, &body));

    let mut backoff = None;
    let mut drop_answer = false;
    let mut lose_answer = None;
    let matched = state.matched_faults.iter_mut().position(|(m, _, _)| m.selects(&parts.method, &path, &body));
    let fault = match matched {
        Some(index) => {
            let entry = &mut state.matched_faults[index];
            entry.1 -= 1;
            let fault = entry.2.clone();
            if entry.1 == 0 {
                state.matched_faults.remove(index);
            }
            Some(fault)
        }
        None => state.faults.pop_front(),
    };
    match fault {
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
        Some(Fault::DropAnswer) => drop_answer = true,
        Some(Fault::LoseAnswer { status }) => lose_answer = Some(status),
        Some(Fault::Status { status }) => {
            let reply = Reply::text(status, &format!("zotero-sim: injected fault (HTTP {status})"));
            return finish(reply, &parts.method, None);
        }
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
    if let Some(status) = lose_answer {
        let lost = format!("zotero-sim: injected fault (HTTP {status}, after the request was applied)");
        return finish(Reply::text(status, &lost), &req.method, backoff);
    }
    let mut response = finish(reply, &req.method, backoff);
    if drop_answer {
        response.extensions_mut().insert(crate::AnswerDropped);
    }
    response
}

/// Adds the headers every answer carries and converts to an `http::Response`.
fn finish(mut reply: Reply, method: &http::Method, backoff: Option<u64>) -> http::Response<Vec<u8>> {
    reply = reply.header("Zotero-API-Version", "3").header("Zotero-Schema-Version", Schema::get().version.to_string());
    if let Some(seconds) = backoff {
        reply = reply.header("Backoff", seconds.to_string());
    }
    reply.into_http(method, "An error occurred")
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

fn lib(state: &State, lref: LibraryRef) -> ApiResult<&Library> {
    state.libraries.get(&lref).ok_or_else(|| ApiError::not_found("Not found"))
}
