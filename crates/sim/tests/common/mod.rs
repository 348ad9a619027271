//! Helpers shared by the simulator's tests: a library with a write key, and one-line requests.
#![allow(dead_code)]

use serde_json::Value;
use zotero_sim::{LibraryRef, Simulator};

pub const USER: u64 = 1;
pub const KEY: &str = "testkey";
pub const LIB: LibraryRef = LibraryRef::User(USER);

/// A simulator with user 1 (key `testkey`, write access).
pub fn sim() -> Simulator {
    let sim = Simulator::new();
    sim.add_user(USER, KEY, true);
    sim
}

/// A response, decoded for assertions.
#[derive(Debug)]
pub struct Resp {
    pub status: u16,
    pub headers: http::HeaderMap,
    pub body: Vec<u8>,
}

impl Resp {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("body is not JSON ({e}): {}", String::from_utf8_lossy(&self.body)))
    }
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
    pub fn header(&self, name: &str) -> Option<String> {
        self.headers.get(name).and_then(|v| v.to_str().ok()).map(str::to_string)
    }
    pub fn version(&self) -> u64 {
        self.header("last-modified-version")
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no Last-Modified-Version in {:?}", self.headers))
    }
    pub fn total(&self) -> u64 {
        self.header("total-results").and_then(|v| v.parse().ok()).unwrap_or_else(|| panic!("no Total-Results"))
    }
}

/// Sends a request with the test key and `Zotero-API-Version: 3`, plus `headers`.
pub fn send(sim: &Simulator, method: &str, path: &str, headers: &[(&str, &str)], body: Option<Value>) -> Resp {
    let mut builder = http::Request::builder()
        .method(method)
        .uri(format!("https://api.zotero.org{path}"))
        .header("Zotero-API-Version", "3")
        .header("Zotero-API-Key", KEY);
    let mut has_content_type = false;
    for (name, value) in headers {
        has_content_type |= name.eq_ignore_ascii_case("content-type");
        builder = builder.header(*name, *value);
    }
    let bytes = match body {
        Some(v) => {
            if !has_content_type {
                builder = builder.header("Content-Type", "application/json");
            }
            serde_json::to_vec(&v).unwrap_or_default()
        }
        None => Vec::new(),
    };
    let request = builder.body(bytes).unwrap_or_else(|e| panic!("bad test request: {e}"));
    raw(sim, request)
}

/// Sends a request exactly as built.
pub fn raw(sim: &Simulator, request: http::Request<Vec<u8>>) -> Resp {
    let response = sim.handle(request);
    let (parts, body) = response.into_parts();
    Resp { status: parts.status.as_u16(), headers: parts.headers, body }
}

pub fn get(sim: &Simulator, path: &str) -> Resp {
    send(sim, "GET", path, &[], None)
}

/// POSTs a batch to `/users/1/<what>` and returns the write report.
pub fn post(sim: &Simulator, what: &str, objects: Value) -> Resp {
    send(sim, "POST", &format!("/users/{USER}/{what}"), &[], Some(objects))
}

/// Creates one item through the API and returns its key.
pub fn create_item(sim: &Simulator, data: Value) -> String {
    let resp = post(sim, "items", Value::Array(vec![data]));
    assert_eq!(resp.status, 200, "{}", resp.text());
    let report = resp.json();
    report["success"]["0"].as_str().map(str::to_string).unwrap_or_else(|| panic!("item not created: {report}"))
}

/// Creates one collection through the API and returns its key.
pub fn create_collection(sim: &Simulator, data: Value) -> String {
    let resp = post(sim, "collections", Value::Array(vec![data]));
    assert_eq!(resp.status, 200, "{}", resp.text());
    let report = resp.json();
    report["success"]["0"].as_str().map(str::to_string).unwrap_or_else(|| panic!("collection not created: {report}"))
}

/// Keys of a JSON listing, in order.
pub fn keys(listing: &Value) -> Vec<String> {
    listing
        .as_array()
        .unwrap_or_else(|| panic!("not a listing: {listing}"))
        .iter()
        .map(|o| o["key"].as_str().unwrap_or_default().to_string())
        .collect()
}
