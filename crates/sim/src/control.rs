//! The control endpoint of `zotero-sim --control`: fault injection from outside the process, for end-to-end
//! tests that drive the simulator through a server (`scripts/e2e.sh` fails one step of `zotero-mcp e2e --write`
//! this way). Off unless asked for; see docs/simulator.md.
//!
//! `POST /_sim/fail` with `{"method", "pathContains", "bodyContains", "status", "times", "retryAfter",
//! "afterApplying"}` arms [`Simulator::fail_matching`] (`afterApplying: true`: the request is applied, then
//! answered with `status`, [`Fault::LoseAnswer`]); `DELETE /_sim/fail` drops every armed fault. `POST /_sim/hold`
//! with `{"method", "pathContains", "bodyContains", "skip", "afterApplying"}` holds the next request it selects
//! (before applying it, or after with its answer kept back) until `POST /_sim/release`; `GET /_sim/hold` says how
//! many are held, so a test knows when to cut the caller off. `GET /_sim/synthetic` says what each synthetic
//! library holds (`synthetic::Counts`: duplicate pairs, tags, collections), and `GET /_sim/requests?after=N` the
//! requests answered after the first `N`. `GET /_sim/feeds` gives the plan of the feeds group
//! ([`crate::feeds_group`], 404 without `--feeds-group`), and `POST /_sim/touch` with `{"library", "key",
//! "fields"}` edits an item as another client would (the fields given, which it must have already, are set; its
//! version and the library's advance). Only requests a browser could not
//! send without a CORS preflight are taken (JSON bodies, no `Origin`), and the simulator grants no preflight, so
//! a web page cannot reach it even on loopback.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::json;

use crate::{Fault, FaultMatch, LibraryRef, Simulator};

/// Where the control endpoint lives; nothing of the Zotero API starts with it.
pub const PREFIX: &str = "/_sim/";

/// The body of `POST /_sim/fail`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct FailRequest {
    method: Option<String>,
    path_contains: Option<String>,
    body_contains: Option<String>,
    status: u16,
    #[serde(default = "one")]
    times: usize,
    retry_after: Option<u64>,
    #[serde(default)]
    after_applying: bool,
}

fn one() -> usize {
    1
}

/// Answers a request under [`PREFIX`].
pub fn handle(sim: &Simulator, request: &http::Request<Vec<u8>>) -> http::Response<Vec<u8>> {
    if request.headers().contains_key(http::header::ORIGIN) {
        return answer(403, json!({ "error": "the control endpoint takes no requests from web pages (Origin set)" }));
    }
    match (request.method().as_str(), request.uri().path()) {
        ("POST", "/_sim/fail") => {
            if !is_json(request) {
                return answer(415, json!({ "error": "send the fault as JSON (Content-Type: application/json)" }));
            }
            match arm(sim, request.body()) {
                Ok(armed) => answer(200, json!({ "armed": armed })),
                Err(problem) => answer(400, json!({ "error": problem })),
            }
        }
        ("POST", "/_sim/hold") => {
            if !is_json(request) {
                return answer(415, json!({ "error": "send the hold as JSON (Content-Type: application/json)" }));
            }
            match hold(sim, request.body()) {
                Ok(armed) => answer(200, json!({ "holding": armed })),
                Err(problem) => answer(400, json!({ "error": problem })),
            }
        }
        ("GET", "/_sim/hold") => answer(200, json!({ "held": sim.held() })),
        ("GET", "/_sim/synthetic") => answer(200, synthetic(sim)),
        ("GET", "/_sim/feeds") if sim.has_feeds_group() => answer(200, crate::feeds_group::manifest()),
        ("GET", "/_sim/feeds") => {
            answer(404, json!({ "error": "no feeds group here: start zotero-sim with --feeds-group" }))
        }
        ("POST", "/_sim/touch") => {
            if !is_json(request) {
                return answer(415, json!({ "error": "send the edit as JSON (Content-Type: application/json)" }));
            }
            match touch(sim, request.body()) {
                Ok(done) => answer(200, done),
                Err(problem) => answer(400, json!({ "error": problem })),
            }
        }
        ("GET", "/_sim/requests") => answer(200, requests(sim, request.uri().query().unwrap_or_default())),
        ("POST", "/_sim/release") => answer(200, json!({ "released": sim.release_holds() })),
        ("DELETE", "/_sim/fail") => {
            sim.clear_faults();
            answer(200, json!({ "cleared": true }))
        }
        _ => answer(
            404,
            json!({ "error": "unknown control request: POST /_sim/fail {method, pathContains, bodyContains, status, \
                              times, retryAfter, afterApplying}, DELETE /_sim/fail, POST /_sim/hold {method, \
                              pathContains, bodyContains, skip, afterApplying}, GET /_sim/hold, POST /_sim/release, GET \
                              /_sim/synthetic, GET /_sim/feeds, POST /_sim/touch {library, key, fields} or GET \
                              /_sim/requests?after=N" }),
        ),
    }
}

/// `GET /_sim/synthetic`: what each synthetic library holds (its duplicate pairs, tags, collections…), so a
/// test through a server can check a whole-library answer against what the simulator planted.
fn synthetic(sim: &Simulator) -> serde_json::Value {
    let libraries: Vec<serde_json::Value> = sim
        .synthetic_counts()
        .into_iter()
        .map(|(lib, counts)| {
            let path = match lib {
                crate::LibraryRef::User(id) => format!("users/{id}"),
                crate::LibraryRef::Group(id) => format!("groups/{id}"),
            };
            let mut entry = serde_json::to_value(counts).unwrap_or_default();
            if let Some(fields) = entry.as_object_mut() {
                fields.insert("library".into(), json!(path));
            }
            entry
        })
        .collect();
    json!({ "libraries": libraries })
}

/// `GET /_sim/requests?after=N`: how many API requests the simulator has answered (`last`), and the method, path
/// and query of each after the first `N` (none without `after`): what a test through a server counts of one call.
fn requests(sim: &Simulator, query: &str) -> serde_json::Value {
    let after = crate::query::parse_pairs(query)
        .into_iter()
        .find(|(name, _)| name == "after")
        .and_then(|(_, value)| value.parse().ok())
        .unwrap_or(usize::MAX);
    let (last, since) = sim.requests_after(after);
    let listed: Vec<serde_json::Value> =
        since.iter().map(|r| json!({ "method": r.method.as_str(), "path": r.path, "query": r.query })).collect();
    json!({ "last": last, "requests": listed })
}

/// The body of `POST /_sim/touch`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TouchRequest {
    /// `users/<id>` or `groups/<id>`.
    library: String,
    key: String,
    #[serde(default)]
    fields: BTreeMap<String, String>,
}

fn touch(sim: &Simulator, body: &[u8]) -> Result<serde_json::Value, String> {
    let request: TouchRequest = serde_json::from_slice(body)
        .map_err(|e| format!("not an edit ({e}): expected {{\"library\", \"key\", \"fields\"}}"))?;
    let library = parse_library(&request.library)?;
    let version = sim.edit_elsewhere(library, &request.key, &request.fields)?;
    Ok(json!({ "library": request.library, "key": request.key, "version": version }))
}

/// `users/<id>` or `groups/<id>`.
fn parse_library(path: &str) -> Result<LibraryRef, String> {
    let problem = || format!("`{path}` is not a library: users/<id> or groups/<id>");
    let (kind, id) = path.trim_matches('/').split_once('/').ok_or_else(problem)?;
    let id: u64 = id.parse().map_err(|_| problem())?;
    match kind {
        "users" => Ok(LibraryRef::User(id)),
        "groups" => Ok(LibraryRef::Group(id)),
        _ => Err(problem()),
    }
}

impl Simulator {
    /// An edit by another client: sets `fields` of the item (each one it has already, so the item stays valid)
    /// and advances its version and the library's, as a write would. Returns the new library version.
    pub fn edit_elsewhere(&self, lib: LibraryRef, key: &str, fields: &BTreeMap<String, String>) -> Result<u64, String> {
        let mut state = self.state.borrow_mut();
        let library = state.libraries.get_mut(&lib).ok_or_else(|| format!("no library {lib:?} here"))?;
        let item = library.items.get_mut(key).ok_or_else(|| format!("no item {key} in {lib:?}"))?;
        if let Some(unknown) = fields.keys().find(|name| !item.data.fields.contains_key(*name)) {
            return Err(format!("item {key} has no field `{unknown}` to change (only fields it has can be set)"));
        }
        for (name, value) in fields {
            item.data.fields.insert(name.clone(), value.clone());
        }
        crate::write::external_edit(&mut state, lib, key);
        Ok(state.libraries.get(&lib).map_or(0, |l| l.version))
    }
}

fn is_json(request: &http::Request<Vec<u8>>) -> bool {
    request
        .headers()
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().to_ascii_lowercase().starts_with("application/json"))
}

/// The body of `POST /_sim/hold`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct HoldRequest {
    method: Option<String>,
    path_contains: Option<String>,
    body_contains: Option<String>,
    #[serde(default)]
    skip: usize,
    #[serde(default)]
    after_applying: bool,
}

fn hold(sim: &Simulator, body: &[u8]) -> Result<serde_json::Value, String> {
    let request: HoldRequest = serde_json::from_slice(body).map_err(|e| {
        format!("not a hold ({e}): expected {{\"method\", \"pathContains\", \"bodyContains\", \"skip\", \"afterApplying\"}}")
    })?;
    let method = parse_method(request.method.as_deref())?;
    let matcher = FaultMatch {
        method,
        path_contains: request.path_contains.clone(),
        body_contains: request.body_contains.clone(),
        skip: request.skip,
    };
    // The server answers for the hold by polling it; the handle itself is not needed here.
    let _ = sim.hold_matching(matcher, request.after_applying);
    Ok(json!({
        "method": request.method.map(|m| m.to_ascii_uppercase()),
        "pathContains": request.path_contains,
        "bodyContains": request.body_contains,
        "skip": request.skip,
        "afterApplying": request.after_applying,
    }))
}

fn parse_method(method: Option<&str>) -> Result<Option<http::Method>, String> {
    method
        .map(|m| {
            http::Method::from_bytes(m.to_ascii_uppercase().as_bytes()).map_err(|_| format!("`{m}` is not a method"))
        })
        .transpose()
}

fn arm(sim: &Simulator, body: &[u8]) -> Result<serde_json::Value, String> {
    let request: FailRequest = serde_json::from_slice(body).map_err(|e| {
        format!("not a fault ({e}): expected {{\"method\", \"pathContains\", \"bodyContains\", \"status\", \"times\", \"afterApplying\"}}")
    })?;
    if !(400..=599).contains(&request.status) {
        return Err(format!("status {} is not an error status (400-599)", request.status));
    }
    if request.times == 0 {
        return Err("times must be at least 1".into());
    }
    let method = parse_method(request.method.as_deref())?;
    if request.after_applying && request.retry_after.is_some() {
        return Err("retryAfter goes with a refusal, not with afterApplying (the request is applied)".into());
    }
    let fault = match request.status {
        status if request.after_applying => Fault::LoseAnswer { status },
        429 => Fault::TooManyRequests { retry_after: request.retry_after },
        503 => Fault::ServiceUnavailable { retry_after: request.retry_after },
        status => Fault::Status { status },
    };
    let matcher = FaultMatch {
        method,
        path_contains: request.path_contains.clone(),
        body_contains: request.body_contains.clone(),
        skip: 0,
    };
    sim.fail_matching(request.times, matcher, fault);
    Ok(json!({
        "method": request.method.map(|m| m.to_ascii_uppercase()),
        "pathContains": request.path_contains,
        "bodyContains": request.body_contains,
        "status": request.status,
        "times": request.times,
        "afterApplying": request.after_applying,
    }))
}

fn answer(status: u16, body: serde_json::Value) -> http::Response<Vec<u8>> {
    let mut response = http::Response::new(body.to_string().into_bytes());
    *response.status_mut() = http::StatusCode::from_u16(status).unwrap_or(http::StatusCode::INTERNAL_SERVER_ERROR);
    response.headers_mut().insert(http::header::CONTENT_TYPE, http::HeaderValue::from_static("application/json"));
    response
}
