//! Fault injection, request recording, concurrent-edit simulation, and the in-process `HttpClient`.

mod common;

use std::rc::Rc;

use common::*;
use serde_json::json;
use zotero_mcp_core::platform::HttpClient;
use zotero_sim::{Fault, InProcess};

#[test]
fn too_many_requests_carries_retry_after_then_recovers() {
    let sim = sim();
    sim.fail_next(2, Fault::TooManyRequests { retry_after: Some(3) });
    let first = get(&sim, "/users/1/items");
    assert_eq!(first.status, 429);
    assert_eq!(first.header("retry-after").as_deref(), Some("3"));
    assert_eq!(get(&sim, "/users/1/items").status, 429);
    assert_eq!(get(&sim, "/users/1/items").status, 200);
}

#[test]
fn service_unavailable_with_and_without_retry_after() {
    let sim = sim();
    sim.fail_next(1, Fault::ServiceUnavailable { retry_after: None });
    sim.fail_next(1, Fault::ServiceUnavailable { retry_after: Some(10) });
    let a = get(&sim, "/users/1/items");
    assert_eq!(a.status, 503);
    assert!(a.header("retry-after").is_none());
    let b = get(&sim, "/users/1/items");
    assert_eq!(b.header("retry-after").as_deref(), Some("10"));
}

#[test]
fn backoff_is_a_normal_answer_with_a_backoff_header() {
    let sim = sim();
    sim.fail_next(1, Fault::Backoff { seconds: 5 });
    let resp = get(&sim, "/users/1/items");
    assert_eq!(resp.status, 200);
    assert_eq!(resp.header("backoff").as_deref(), Some("5"));
    assert!(get(&sim, "/users/1/items").header("backoff").is_none());
}

#[test]
fn faulted_writes_change_nothing() {
    let sim = sim();
    sim.fail_next(1, Fault::ServiceUnavailable { retry_after: Some(1) });
    let resp = post(&sim, "items", json!([{"itemType": "book"}]));
    assert_eq!(resp.status, 503);
    assert_eq!(sim.library_version(LIB), 0);
}

#[test]
fn requests_are_recorded_with_path_query_and_headers() {
    let sim = sim();
    get(&sim, "/users/1/items?limit=5&tag=a%20b");
    let recorded = sim.requests();
    assert_eq!(recorded.len(), 1);
    let r = &recorded[0];
    assert_eq!(r.method, http::Method::GET);
    assert_eq!(r.path, "/users/1/items");
    assert_eq!(r.query, "limit=5&tag=a%20b");
    assert_eq!(r.query_values("tag"), ["a b"]);
    assert_eq!(r.header("zotero-api-key"), Some(KEY));
}

#[test]
fn edit_before_next_write_applies_once_before_a_write_not_a_read() {
    let sim = sim();
    let key = create_item(&sim, json!({"itemType": "book"}));
    let v = sim.library_version(LIB);
    sim.edit_before_next_write(LIB, &key);
    get(&sim, "/users/1/items");
    assert_eq!(sim.library_version(LIB), v, "reads do not trigger the edit");
    let resp = send(
        &sim,
        "PATCH",
        &format!("/users/1/items/{key}"),
        &[("If-Unmodified-Since-Version", &v.to_string())],
        Some(json!({"title": "x"})),
    );
    assert_eq!(resp.status, 412);
    // Retrying with the fresh version succeeds: the edit happened once.
    let fresh = resp.version().to_string();
    let resp = send(
        &sim,
        "PATCH",
        &format!("/users/1/items/{key}"),
        &[("If-Unmodified-Since-Version", &fresh)],
        Some(json!({"title": "x"})),
    );
    assert_eq!(resp.status, 204);
}

#[tokio::test]
async fn in_process_client_serves_requests_without_a_socket() {
    let sim = Rc::new(sim());
    sim.insert_item(LIB, json!({"itemType": "book", "title": "Via client"}));
    let client = InProcess(Rc::clone(&sim));
    let request = http::Request::builder()
        .uri("https://api.zotero.org/users/1/items")
        .header("Zotero-API-Key", KEY)
        .header("Zotero-API-Version", "3")
        .body(Vec::new())
        .unwrap_or_else(|e| panic!("{e}"));
    let response = client.send(request).await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(response.status(), 200);
    let body: serde_json::Value = serde_json::from_slice(response.body()).unwrap_or_default();
    assert_eq!(body[0]["data"]["title"], "Via client");
    assert_eq!(sim.requests().len(), 1);
}
