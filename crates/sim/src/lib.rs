//! zotero-sim: a stateful, in-memory implementation of the parts of the Zotero Web API v3 a client uses.
//!
//! The real API cannot be reached from the test machines, so the client's tests run against this simulator. It
//! implements Zotero's documented semantics (and, where the documentation is silent, the dataserver's
//! behaviour): library and object versions, `since=`, `If-Unmodified-Since-Version` and 412/428, write tokens,
//! batch write reports, field validation against the real item-type schema, quick search, tags, the trash,
//! collections, saved searches (stored and versioned; like the API, never run), full text, `/deleted`, and Zotero
//! Storage (`items/<key>/file`: the redirect to a separate storage origin, upload authorization, the upload and
//! its registration). What it does not do (citation rendering, settings writes) it refuses with a 501 rather than
//! inventing an answer; see `docs/simulator.md`.
//!
//! A [`Simulator`] is single-threaded (`RefCell` inside): tests drive it through [`Simulator::handle`] or, as an
//! [`HttpClient`](zotero_mcp_core::platform::HttpClient), through [`InProcess`]; the `zotero-sim` binary serves
//! it over HTTP on loopback.

mod collection;
pub mod control;
mod dates;
pub mod demo;
pub mod demo_files;
pub mod demo_groups;
mod derived;
mod error;
pub mod feeds_group;
mod hold;
#[cfg(test)]
mod index_agreement;
mod item;
mod keys;
pub mod local;
mod query;
mod reply;
pub mod rng;
mod routes;
mod saved_search;
pub mod schema;
mod search;
pub mod server;
mod state;
mod storage;
pub mod synthetic;
mod write;

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use async_trait::async_trait;
use serde_json::{Map, Value};
use zotero_mcp_core::platform::{HttpClient, HttpError, HttpRequest, HttpResponse};

pub use crate::hold::Hold;
use crate::item::WriteContext;
use crate::keys::Grant;
use crate::saved_search::SearchRecord;
use crate::state::{CollectionRecord, FullText, ItemRecord, Kind, Library, State};

/// A library: a user's own or a group's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LibraryRef {
    User(u64),
    Group(u64),
}

/// A failure to inject into upcoming requests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fault {
    /// 429 Too Many Requests, with `Retry-After` when given.
    TooManyRequests { retry_after: Option<u64> },
    /// 503 Service Unavailable, with `Retry-After` when given.
    ServiceUnavailable { retry_after: Option<u64> },
    /// A normal answer that also carries `Backoff: seconds` (the server asking clients to slow down).
    Backoff { seconds: u64 },
    /// Any other error status (a 500, a 403…), with a plain-text body naming it as injected.
    Status { status: u16 },
    /// The request is applied as usual, then its answer is lost: the connection drops after the server changed
    /// its state, so the client cannot know whether it did. Through [`InProcess`] only (its `send` fails as a
    /// dropped connection does), for the API and the storage origin alike (there an upload's object is kept, as
    /// S3 keeps one whose answer never arrived).
    DropAnswer,
    /// The request is applied as usual, then answered with `status` (a 500, or a 503 without `Retry-After`)
    /// instead of its own answer: the server changed its state and said it failed, as a proxy or a crashing
    /// worker behind Zotero's load balancer can. Unlike [`Fault::DropAnswer`] this works over a socket too.
    LoseAnswer { status: u16 },
}

/// Marks an answer [`Fault::DropAnswer`] takes away after the request was applied.
#[derive(Debug, Clone, Copy)]
pub struct AnswerDropped;

/// Which requests a fault armed with [`Simulator::fail_matching`] answers: every condition given must hold.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FaultMatch {
    /// The method, e.g. `POST`.
    pub method: Option<http::Method>,
    /// A substring of the path (without the query), e.g. `/items/`.
    pub path_contains: Option<String>,
    /// A substring of the body, e.g. `"annotationType"`: singles out one write among those to the same path.
    pub body_contains: Option<String>,
    /// How many matching requests go through as usual before the fault applies: singles out a later one of
    /// requests alike (the read that checks a write, after the read that preceded it).
    pub skip: usize,
}

impl FaultMatch {
    /// Whether the request is the one this fault answers: it matches, and the matching requests to let through
    /// first have gone (each one that matches meanwhile is counted off).
    pub(crate) fn selects(&mut self, method: &http::Method, path: &str, body: &[u8]) -> bool {
        if !self.matches(method, path, body) {
            return false;
        }
        if self.skip > 0 {
            self.skip -= 1;
            return false;
        }
        true
    }

    pub(crate) fn matches(&self, method: &http::Method, path: &str, body: &[u8]) -> bool {
        self.method.as_ref().is_none_or(|m| m == method)
            && self.path_contains.as_deref().is_none_or(|p| path.contains(p))
            && self.body_contains.as_deref().is_none_or(|b| String::from_utf8_lossy(body).contains(b))
    }
}

/// A request as the simulator received it.
#[derive(Debug, Clone)]
pub struct RecordedRequest {
    pub method: http::Method,
    /// The path, without the query.
    pub path: String,
    /// The raw query string (empty when none).
    pub query: String,
    /// Header names (lowercase, as `http` normalizes them) and values, in the order received.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl RecordedRequest {
    /// The record of a request, as its parts and body arrived.
    pub(crate) fn of(parts: &http::request::Parts, body: &[u8]) -> Self {
        Self {
            method: parts.method.clone(),
            path: parts.uri.path().to_string(),
            query: parts.uri.query().unwrap_or("").to_string(),
            headers: parts
                .headers
                .iter()
                .map(|(n, v)| (n.as_str().to_string(), String::from_utf8_lossy(v.as_bytes()).into_owned()))
                .collect(),
            body: body.to_vec(),
        }
    }

    /// A header's value (the first, if repeated); the name is matched case-insensitively.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    /// The decoded values of a query parameter, in order.
    pub fn query_values(&self, name: &str) -> Vec<String> {
        query::parse_pairs(&self.query).into_iter().filter(|(k, _)| k == name).map(|(_, v)| v).collect()
    }
}

/// The simulated Zotero API server.
pub struct Simulator {
    state: RefCell<State>,
    holds: RefCell<hold::Holds>,
    /// What each synthetic library was made with, for tests that check answers over it (`GET /_sim/synthetic`).
    synthetic: RefCell<BTreeMap<LibraryRef, synthetic::Counts>>,
}

impl Default for Simulator {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for Simulator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.state.borrow();
        f.debug_struct("Simulator")
            .field("libraries", &state.libraries.keys().collect::<Vec<_>>())
            .field("requests", &state.requests.len())
            .finish()
    }
}

/// The demo user's ID and API key.
pub const DEMO_USER_ID: u64 = 1_234_567;
pub const DEMO_API_KEY: &str = "demo";

impl Simulator {
    /// A server with no libraries and no keys.
    pub fn new() -> Self {
        Self { state: RefCell::new(State::new()), holds: RefCell::default(), synthetic: RefCell::default() }
    }

    /// User library 1234567 with API key `demo` (write access), seeded from `sim/demo/library.json`.
    pub fn demo() -> Self {
        Self::demo_with(DEMO_USER_ID, DEMO_API_KEY)
    }

    /// The demo library under another user ID and key (for the binary's `--user-id` and `--api-key`).
    pub fn demo_with(user_id: u64, api_key: &str) -> Self {
        let sim = Self::new();
        sim.add_user(user_id, api_key, true);
        demo::load(&sim, LibraryRef::User(user_id), demo::DEMO_JSON);
        sim
    }

    /// User library 1234567 with API key `demo` (write access), holding a synthetic library of `n` top-level
    /// items made from `seed` ([`synthetic`]): the same `(n, seed)` always gives the same library.
    pub fn synthetic(n: usize, seed: u64) -> Self {
        Self::synthetic_with(DEMO_USER_ID, DEMO_API_KEY, n, seed)
    }

    /// [`Simulator::synthetic`] under another user ID and key (for the binary's `--user-id` and `--api-key`).
    pub fn synthetic_with(user_id: u64, api_key: &str, n: usize, seed: u64) -> Self {
        let sim = Self::new();
        sim.add_user(user_id, api_key, true);
        // The only failure is a library that does not exist, and add_user has just made it.
        let _ = sim.add_synthetic(LibraryRef::User(user_id), n, seed);
        sim
    }

    /// Fills an existing (empty) library with a synthetic one of `n` top-level items from `seed`, and says how
    /// many objects of each kind it made.
    pub fn add_synthetic(
        &self,
        lib: LibraryRef,
        n: usize,
        seed: u64,
    ) -> Result<synthetic::Counts, synthetic::SyntheticError> {
        let mut state = self.state.borrow_mut();
        let Some(library) = state.libraries.get_mut(&lib) else {
            return Err(synthetic::SyntheticError::UnknownLibrary(lib));
        };
        let made = synthetic::fill(library, n, seed);
        self.synthetic.borrow_mut().insert(lib, made);
        Ok(made)
    }

    /// Adds the synthetic group ([`synthetic::GROUP`], "Large Library") holding `n` top-level items from
    /// `seed`, which `api_key` (added with `add_user` first) may read and write.
    ///
    /// # Panics
    /// If `api_key` is unknown (see [`Simulator::add_group`]).
    pub fn add_synthetic_group(&self, api_key: &str, n: usize, seed: u64) -> synthetic::Counts {
        let group = LibraryRef::Group(synthetic::GROUP);
        self.add_group(synthetic::GROUP, api_key, true);
        self.set_library_name(group, synthetic::GROUP_NAME);
        // The group has just been added, so it exists.
        self.add_synthetic(group, n, seed).unwrap_or_default()
    }

    /// What each synthetic library holds, as made ([`Simulator::add_synthetic`]).
    pub fn synthetic_counts(&self) -> BTreeMap<LibraryRef, synthetic::Counts> {
        self.synthetic.borrow().clone()
    }

    /// Adds a user library (if new) and an API key for it.
    pub fn add_user(&self, user_id: u64, api_key: &str, write: bool) {
        let mut state = self.state.borrow_mut();
        let username = state.username(user_id);
        state
            .libraries
            .entry(LibraryRef::User(user_id))
            .or_insert_with(|| Library::new(LibraryRef::User(user_id), username));
        state.keys.insert(
            api_key.to_string(),
            Grant {
                user_id,
                user_write: write,
                user_files: true,
                groups: BTreeMap::new(),
                user_library: true,
                all_groups: None,
            },
        );
    }

    /// Adds a group library (if new) and gives the key, which must already exist, access to it.
    ///
    /// # Panics
    /// If `api_key` was not added with [`Simulator::add_user`] first.
    pub fn add_group(&self, group_id: u64, api_key: &str, write: bool) {
        let mut state = self.state.borrow_mut();
        let lref = LibraryRef::Group(group_id);
        state.libraries.entry(lref).or_insert_with(|| Library::new(lref, format!("Group {group_id}")));
        match state.keys.get_mut(api_key) {
            Some(grant) => {
                grant.groups.insert(group_id, write);
            }
            None => panic!("add_group: API key {api_key:?} is unknown; add its user with add_user first"),
        }
    }

    /// Sets the name a library shows (`library.name`: the username of a user library, a group's name).
    pub fn set_library_name(&self, lib: LibraryRef, name: &str) {
        let mut state = self.state.borrow_mut();
        if let LibraryRef::User(id) = lib {
            state.usernames.insert(id, name.to_string());
        }
        if let Some(l) = state.libraries.get_mut(&lib) {
            l.name = name.to_string();
        }
    }

    /// Handles one request: addressed to the storage origin's host (see [`Simulator::storage_origin`]), the
    /// storage answers it; any other host is the API, routed by path.
    pub fn handle(&self, request: http::Request<Vec<u8>>) -> http::Response<Vec<u8>> {
        let mut state = self.state.borrow_mut();
        if routes::is_for_storage(&state, &request) {
            routes::handle_storage(&mut state, request)
        } else {
            routes::handle(&mut state, request)
        }
    }

    /// Handles one request as the storage origin, whatever its host (the server's storage listener).
    pub fn handle_storage(&self, request: http::Request<Vec<u8>>) -> http::Response<Vec<u8>> {
        routes::handle_storage(&mut self.state.borrow_mut(), request)
    }

    /// Seeds an item from its editable JSON (`data`), validated as the API validates a write. Returns its key
    /// (a fresh one when `data` has none) and advances the library version.
    ///
    /// # Panics
    /// If the library does not exist or the JSON would be refused by the API (the message says why).
    pub fn insert_item(&self, lib: LibraryRef, data: Value) -> String {
        match self.try_insert_item(lib, data) {
            Ok(key) => key,
            Err(e) => panic!("insert_item: {e}"),
        }
    }

    fn try_insert_item(&self, lref: LibraryRef, data: Value) -> Result<String, String> {
        let mut state = self.state.borrow_mut();
        let Value::Object(mut json) = data else { return Err("item data must be a JSON object".into()) };
        if let Some(Value::Object(inner)) = json.get("data") {
            json = inner.clone();
        }
        // The seeded object gets the library version of its insertion, whatever the JSON says.
        json.remove("version");
        let key = match json.get("key").and_then(Value::as_str) {
            Some(k) if keys::is_valid_key(k) => k.to_string(),
            Some(k) => return Err(format!("'{k}' is not a valid item key")),
            None => state.fresh_key(lref),
        };
        let now = dates::now_iso();
        let username = match lref {
            LibraryRef::User(id) => state.username(id),
            LibraryRef::Group(_) => String::new(),
        };
        let lib = state.libraries.get_mut(&lref).ok_or("unknown library")?;
        let existing = lib.items.get(&key).map(|r| r.data.clone());
        let ctx = WriteContext { existing: existing.as_ref(), partial: false, user_library: lib.is_user(), now: &now };
        let item = item::apply(&json, &ctx).map_err(|e| e.message)?;
        if let Some(parent) = &item.parent {
            if !lib.items.contains_key(parent) {
                return Err(format!("parent item {parent} of {key} does not exist (insert parents first)"));
            }
        }
        for c in &item.collections {
            if !lib.collections.contains_key(c) {
                return Err(format!("collection {c} of item {key} does not exist (insert collections first)"));
            }
        }
        let version = lib.version + 1;
        lib.version = version;
        lib.unlog_delete(Kind::Item, &key);
        let seq = lib.next_seq();
        let created_by = match lref {
            LibraryRef::User(id) => Some((id, username)),
            LibraryRef::Group(_) => None,
        };
        lib.items.insert(key.clone(), ItemRecord { key: key.clone(), version, seq, data: item, created_by });
        lib.refresh_tags(version, &now);
        Ok(key)
    }

    /// Seeds a collection from its editable JSON (`name`, optional `parentCollection`, `key`).
    ///
    /// # Panics
    /// If the library does not exist or the JSON would be refused by the API.
    pub fn insert_collection(&self, lib: LibraryRef, data: Value) -> String {
        match self.try_insert_collection(lib, data) {
            Ok(key) => key,
            Err(e) => panic!("insert_collection: {e}"),
        }
    }

    fn try_insert_collection(&self, lref: LibraryRef, data: Value) -> Result<String, String> {
        let mut state = self.state.borrow_mut();
        let Value::Object(mut json) = data else { return Err("collection data must be a JSON object".into()) };
        if let Some(Value::Object(inner)) = json.get("data") {
            json = inner.clone();
        }
        json.remove("version");
        let key = match json.get("key").and_then(Value::as_str) {
            Some(k) if keys::is_valid_key(k) => k.to_string(),
            Some(k) => return Err(format!("'{k}' is not a valid collection key")),
            None => state.fresh_key(lref),
        };
        let lib = state.libraries.get_mut(&lref).ok_or("unknown library")?;
        let data = collection::apply(&json, None, false).map_err(|e| e.message)?;
        if let Some(parent) = &data.parent {
            if !lib.collections.contains_key(parent) {
                return Err(format!("parent collection {parent} of {key} does not exist (insert parents first)"));
            }
        }
        let now = dates::now_iso();
        let version = lib.version + 1;
        lib.version = version;
        lib.unlog_delete(Kind::Collection, &key);
        let seq = lib.next_seq();
        lib.collections.insert(
            key.clone(),
            CollectionRecord { key: key.clone(), version, seq, data, date_added: now.clone(), date_modified: now },
        );
        Ok(key)
    }

    /// Seeds a saved search from its editable JSON (`name`, `conditions`, optional `key`).
    ///
    /// # Panics
    /// If the library does not exist or the JSON would be refused by the API.
    pub fn insert_search(&self, lib: LibraryRef, data: Value) -> String {
        match self.try_insert_search(lib, data) {
            Ok(key) => key,
            Err(e) => panic!("insert_search: {e}"),
        }
    }

    fn try_insert_search(&self, lref: LibraryRef, data: Value) -> Result<String, String> {
        let mut state = self.state.borrow_mut();
        let Value::Object(mut json) = data else { return Err("search data must be a JSON object".into()) };
        if let Some(Value::Object(inner)) = json.get("data") {
            json = inner.clone();
        }
        json.remove("version");
        let key = match json.get("key").and_then(Value::as_str) {
            Some(k) if keys::is_valid_key(k) => k.to_string(),
            Some(k) => return Err(format!("'{k}' is not a valid search key")),
            None => state.fresh_key(lref),
        };
        let lib = state.libraries.get_mut(&lref).ok_or("unknown library")?;
        let data = saved_search::apply(&json, None, false).map_err(|e| e.message)?;
        let now = dates::now_iso();
        let version = lib.version + 1;
        lib.version = version;
        lib.unlog_delete(Kind::Search, &key);
        let seq = lib.next_seq();
        lib.searches.insert(
            key.clone(),
            SearchRecord { key: key.clone(), version, seq, data, date_added: now.clone(), date_modified: now },
        );
        Ok(key)
    }

    /// Stores full-text content for an attachment (advances the library version, as a PUT would).
    pub fn set_fulltext(
        &self,
        lib: LibraryRef,
        key: &str,
        content: &str,
        indexed_pages: Option<u32>,
        total_pages: Option<u32>,
    ) {
        let mut state = self.state.borrow_mut();
        if let Some(l) = state.libraries.get_mut(&lib) {
            let version = l.version + 1;
            l.version = version;
            l.fulltext.insert(
                key.to_string(),
                FullText {
                    content: content.to_string(),
                    indexed_pages: indexed_pages.map(i64::from),
                    total_pages: total_pages.map(i64::from),
                    indexed_chars: None,
                    total_chars: None,
                    version,
                },
            );
        }
    }

    /// An item's API JSON (`{key, version, library, links, meta, data}`), as `GET …/items/<key>` returns it.
    pub fn item(&self, lib: LibraryRef, key: &str) -> Option<Value> {
        let state = self.state.borrow();
        let l = state.libraries.get(&lib)?;
        l.items.get(key).map(|r| l.item_json(r, true))
    }

    /// Every item's API JSON, in key order.
    pub fn items(&self, lib: LibraryRef) -> Vec<Value> {
        let state = self.state.borrow();
        state.libraries.get(&lib).map_or_else(Vec::new, |l| l.items.values().map(|r| l.item_json(r, true)).collect())
    }

    /// Every collection's API JSON, in key order.
    pub fn collections(&self, lib: LibraryRef) -> Vec<Value> {
        let state = self.state.borrow();
        state
            .libraries
            .get(&lib)
            .map_or_else(Vec::new, |l| l.collections.values().map(|r| l.collection_json(r, true)).collect())
    }

    /// Every saved search's API JSON, in key order.
    pub fn searches(&self, lib: LibraryRef) -> Vec<Value> {
        let state = self.state.borrow();
        state
            .libraries
            .get(&lib)
            .map_or_else(Vec::new, |l| l.searches.values().map(|r| l.search_json(r, true)).collect())
    }

    /// A saved search's API JSON.
    pub fn search(&self, lib: LibraryRef, key: &str) -> Option<Value> {
        let state = self.state.borrow();
        let l = state.libraries.get(&lib)?;
        l.searches.get(key).map(|r| l.search_json(r, true))
    }

    /// A collection's API JSON.
    pub fn collection(&self, lib: LibraryRef, key: &str) -> Option<Value> {
        let state = self.state.borrow();
        let l = state.libraries.get(&lib)?;
        l.collections.get(key).map(|r| l.collection_json(r, true))
    }

    /// The library's current version (0 for an unknown library).
    pub fn library_version(&self, lib: LibraryRef) -> u64 {
        self.state.borrow().libraries.get(&lib).map_or(0, |l| l.version)
    }

    /// Every request handled so far, in order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.state.borrow().requests.clone()
    }

    /// How many requests have been recorded, and the requests after the first `after` of them (a test's
    /// count of what one call sent, without copying the whole log).
    pub fn requests_after(&self, after: usize) -> (usize, Vec<RecordedRequest>) {
        let state = self.state.borrow();
        (state.requests.len(), state.requests.get(after..).map(<[_]>::to_vec).unwrap_or_default())
    }

    /// Answers the next `count` requests with `fault` (after recording them).
    pub fn fail_next(&self, count: usize, fault: Fault) {
        let mut state = self.state.borrow_mut();
        for _ in 0..count {
            state.faults.push_back(fault.clone());
        }
    }

    /// Answers the next `count` requests that `matcher` selects with `fault` (after recording them); others are
    /// served as usual. Checked before the faults of [`Simulator::fail_next`]; several are tried in the order armed.
    /// This is how a test outside the process (`zotero-sim --control`, `POST /_sim/fail`) fails one step of a
    /// longer exchange while the requests around it go through.
    pub fn fail_matching(&self, count: usize, matcher: FaultMatch, fault: Fault) {
        if count > 0 {
            self.state.borrow_mut().matched_faults.push((matcher, count, fault));
        }
    }

    /// Drops every fault armed and not yet used, by [`Simulator::fail_next`] or [`Simulator::fail_matching`].
    pub fn clear_faults(&self) {
        let mut state = self.state.borrow_mut();
        state.faults.clear();
        state.matched_faults.clear();
    }

    /// Simulates another client: just before the next write request is handled, the object is saved elsewhere
    /// (its version and the library version advance), so a write naming the old version is stale.
    pub fn edit_before_next_write(&self, lib: LibraryRef, key: &str) {
        self.state.borrow_mut().pending_edits.push((lib, key.to_string()));
    }

    /// Full-text content stored for an item, for assertions.
    pub fn fulltext(&self, lib: LibraryRef, key: &str) -> Option<Value> {
        let state = self.state.borrow();
        let ft = state.libraries.get(&lib)?.fulltext.get(key)?;
        let mut out = Map::new();
        out.insert("content".into(), Value::String(ft.content.clone()));
        for (name, v) in [
            ("indexedPages", ft.indexed_pages),
            ("totalPages", ft.total_pages),
            ("indexedChars", ft.indexed_chars),
            ("totalChars", ft.total_chars),
        ] {
            if let Some(v) = v {
                out.insert(name.into(), Value::from(v));
            }
        }
        out.insert("version".into(), Value::from(ft.version));
        Some(Value::Object(out))
    }
}

/// Zotero Storage: seeding, settings and inspection (the endpoints are in `routes/files.rs` and
/// `routes/storage.rs`; see docs/simulator.md).
impl Simulator {
    /// `scheme://host[:port]` of the storage origin that download and upload URLs point at
    /// (`https://storage.zotero-sim.invalid` unless set).
    pub fn storage_origin(&self) -> String {
        self.state.borrow().storage.origin.clone()
    }

    /// Moves the storage origin (the server sets its storage listener's address here). URLs signed before
    /// keep the old origin.
    pub fn set_storage_origin(&self, origin: &str) {
        self.state.borrow_mut().storage.origin = origin.trim_end_matches('/').to_string();
    }

    /// Shapes the key as one made for groups: `user_library: false` takes its user library away (no `user` block
    /// in `/keys/current`, 403 there); `all_groups: Some(write)` gives it `access.groups.all`, every group of
    /// its user (those added with [`Simulator::add_group`]) with that write access, listed as `all` only.
    ///
    /// # Panics
    /// If `api_key` was not added with [`Simulator::add_user`] first.
    pub fn set_key_scope(&self, api_key: &str, user_library: bool, all_groups: Option<bool>) {
        match self.state.borrow_mut().keys.get_mut(api_key) {
            Some(grant) => {
                grant.user_library = user_library;
                grant.all_groups = all_groups;
            }
            None => panic!("set_key_scope: API key {api_key:?} is unknown; add its user with add_user first"),
        }
    }

    /// Grants or withdraws the key's file access to its user library (`access.user.files`).
    ///
    /// # Panics
    /// If `api_key` was not added with [`Simulator::add_user`] first.
    pub fn set_file_access(&self, api_key: &str, files: bool) {
        match self.state.borrow_mut().keys.get_mut(api_key) {
            Some(grant) => grant.user_files = files,
            None => panic!("set_file_access: API key {api_key:?} is unknown; add its user with add_user first"),
        }
    }

    /// Sets a group's file editing: `false` is Zotero's `fileEditing: "none"`, and every upload to the group is
    /// refused (Web API: "403 You do not have file editing access"; local API: "403 File editing denied").
    ///
    /// # Panics
    /// If the group was not added with [`Simulator::add_group`] first.
    pub fn set_group_file_editing(&self, group_id: u64, editable: bool) {
        match self.state.borrow_mut().libraries.get_mut(&LibraryRef::Group(group_id)) {
            Some(library) => library.files_editable = editable,
            None => panic!("set_group_file_editing: group {group_id} is unknown; add it with add_group first"),
        }
    }

    /// Whether files may be stored in the library (always in a user library; in a group, its file editing).
    pub fn files_editable(&self, lib: LibraryRef) -> bool {
        self.state.borrow().libraries.get(&lib).is_some_and(|l| l.files_editable)
    }

    /// How many authorized uploads may wait (not yet registered) before the next authorization is answered
    /// "Too many queued uploads" with `Retry-After: 300` (as 429, 400 and 503 in turn: Zotero picks one at
    /// random); `None` (the default) for no limit.
    pub fn set_upload_queue_limit(&self, limit: Option<usize>) {
        self.state.borrow_mut().storage.queue_limit = limit;
    }

    /// How many upload authorizations a full queue has refused (as 429, 400 and 503 in turn).
    pub fn upload_queue_refusals(&self) -> usize {
        self.state.borrow().storage.queue_refusals
    }

    /// The library's storage quota in MB (Zotero's free plan, 300, by default).
    pub fn set_storage_quota_mb(&self, lib: LibraryRef, mb: u64) {
        if let Some(l) = self.state.borrow_mut().libraries.get_mut(&lib) {
            l.quota_mb = mb;
        }
    }

    /// The bytes the library's stored files take, each distinct file once.
    pub fn storage_usage_bytes(&self, lib: LibraryRef) -> u64 {
        self.state.borrow().libraries.get(&lib).map_or(0, routes::usage_bytes)
    }

    /// How long signed download URLs and upload policies stay valid, in seconds, instead of Zotero's (60 s for a
    /// download, an hour for an upload); `Some(0)` makes them expire at once. `None` restores Zotero's.
    pub fn set_signed_url_ttl(&self, seconds: Option<u64>) {
        self.state.borrow_mut().storage.ttl_override = seconds;
    }

    /// Gives an attachment a file on Zotero Storage, as a completed upload would: the bytes go into the bucket
    /// and the item gets their `md5`, `filename` and an `mtime` of now, with a new version. Returns the md5.
    ///
    /// # Panics
    /// If the library or item does not exist or the item is not a stored-file attachment.
    pub fn store_file(&self, lib: LibraryRef, key: &str, filename: &str, bytes: &[u8]) -> String {
        let now_ms = i64::try_from(dates::unix_now()).unwrap_or(i64::MAX / 1000) * 1000;
        self.store_file_with_mtime(lib, key, filename, bytes, now_ms)
    }

    /// [`Simulator::store_file`] with the file's modification time (milliseconds since the epoch).
    ///
    /// # Panics
    /// As [`Simulator::store_file`].
    pub fn store_file_with_mtime(
        &self,
        lib: LibraryRef,
        key: &str,
        filename: &str,
        bytes: &[u8],
        mtime: i64,
    ) -> String {
        let mut state = self.state.borrow_mut();
        let stores = state
            .libraries
            .get(&lib)
            .and_then(|l| l.items.get(key))
            .and_then(|r| r.data.attachment.as_ref())
            .is_some_and(|a| a.stores_file());
        if !stores {
            panic!("store_file: {key} is not a stored-file attachment of {lib:?} (imported_file, imported_url)");
        }
        let md5 = zotero_mcp_core::webdav::md5_hex(bytes);
        state.storage.objects.insert(md5.clone(), bytes.to_vec());
        let info = storage::UploadInfo {
            hash: md5.clone(),
            filename: filename.to_string(),
            zip: false,
            item_hash: None,
            item_filename: None,
            size: bytes.len() as u64,
            mtime,
            content_type: None,
            charset: None,
        };
        if let Err(e) = routes::record_file(&mut state, lib, key, &info) {
            panic!("store_file: {e}");
        }
        md5
    }

    /// The bytes of an attachment's file on Zotero Storage, if it has one.
    pub fn stored_file(&self, lib: LibraryRef, key: &str) -> Option<Vec<u8>> {
        let state = self.state.borrow();
        let file = state.libraries.get(&lib)?.files.get(key)?;
        state.storage.objects.get(&file.hash).cloned()
    }

    /// Every request the storage origin received, in order (the API's are in [`Simulator::requests`]).
    pub fn storage_requests(&self) -> Vec<RecordedRequest> {
        self.state.borrow().storage.requests.clone()
    }

    /// Puts the demo library's files on Zotero Storage ([`demo_files::demo_files`]: the real files of the "Demo
    /// files" collection and a made PDF for every other PDF attachment); the made PDFs' items take their
    /// files' md5, as an upload would. Returns how many files were stored.
    pub fn store_demo_files(&self, lib: LibraryRef) -> Result<usize, String> {
        let files = demo_files::demo_files()?;
        for f in &files {
            self.store_file_with_mtime(lib, &f.key, &f.filename, &f.bytes, f.mtime);
        }
        Ok(files.len())
    }
}

/// The simulator as an [`HttpClient`]: requests go straight to [`Simulator::handle`], no socket involved.
#[derive(Clone)]
pub struct InProcess(pub Rc<Simulator>);

#[async_trait(?Send)]
impl HttpClient for InProcess {
    async fn send(&self, request: HttpRequest) -> Result<HttpResponse, HttpError> {
        let url = request.uri().to_string();
        let held = self.0.take_hold(&request);
        if let Some((hold, false)) = &held {
            hold.released().await;
        }
        let response = self.0.handle(request);
        if let Some((hold, true)) = &held {
            hold.released().await;
        }
        if response.extensions().get::<AnswerDropped>().is_some() {
            let reason = "the connection closed before the answer arrived (zotero-sim: injected, after the request \
                          was applied)";
            return Err(HttpError::Transport { url, reason: reason.into() });
        }
        Ok(response)
    }
}
