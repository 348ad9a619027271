//! Fault injection, request recording, concurrent-edit simulation, and the in-process `HttpClient`.

mod common;

use std::rc::Rc;

use common::*;
use serde_json::json;
use zotero_mcp_core::platform::HttpClient;
use zotero_sim::{control, Fault, FaultMatch, InProcess};

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
fn a_matched_fault_answers_only_the_requests_it_selects_as_often_as_asked() {
    let sim = sim();
    let annotation = FaultMatch {
        method: Some(http::Method::POST),
        path_contains: Some("/items".into()),
        body_contains: Some("annotationType".into()),
        skip: 0,
    };
    sim.fail_matching(1, annotation, Fault::Status { status: 500 });
    // Reads and other writes to the same path go through.
    assert_eq!(get(&sim, "/users/1/items").status, 200);
    assert_eq!(post(&sim, "items", json!([{"itemType": "book"}])).status, 200);
    let version = sim.library_version(LIB);
    let failed = post(&sim, "items", json!([{"itemType": "annotation", "annotationType": "highlight"}]));
    assert_eq!(failed.status, 500);
    assert!(failed.text().contains("injected fault"), "{}", failed.text());
    assert_eq!(sim.library_version(LIB), version, "a faulted write changes nothing");
    // Used up: the same request now reaches the API (which has its own opinion of an annotation without parent).
    let again = post(&sim, "items", json!([{"itemType": "annotation", "annotationType": "highlight"}]));
    assert_ne!(again.status, 500);
}

#[test]
fn matched_faults_come_before_the_queue_and_can_be_cleared() {
    let sim = sim();
    sim.fail_next(1, Fault::ServiceUnavailable { retry_after: None });
    let deletes = FaultMatch { method: Some(http::Method::DELETE), ..FaultMatch::default() };
    sim.fail_matching(2, deletes, Fault::Status { status: 403 });
    assert_eq!(send(&sim, "DELETE", "/users/1/items/ABCD2345", &[], None).status, 403);
    assert_eq!(get(&sim, "/users/1/items").status, 503, "the queued fault is still next for other requests");
    sim.clear_faults();
    assert_ne!(send(&sim, "DELETE", "/users/1/items/ABCD2345", &[], None).status, 403);
}

#[test]
fn a_matched_fault_can_let_the_first_matching_requests_through() {
    let sim = sim();
    let reads = FaultMatch { method: Some(http::Method::GET), skip: 2, ..FaultMatch::default() };
    sim.fail_matching(1, reads, Fault::Status { status: 500 });
    assert_eq!(get(&sim, "/users/1/items").status, 200);
    assert_eq!(post(&sim, "items", json!([{"itemType": "book"}])).status, 200, "not a match: not counted");
    assert_eq!(get(&sim, "/users/1/items").status, 200);
    assert_eq!(get(&sim, "/users/1/items").status, 500, "the third read");
    assert_eq!(get(&sim, "/users/1/items").status, 200);
}

#[test]
fn a_lost_answer_applies_the_write_then_answers_the_error_status() {
    for status in [500, 503] {
        let sim = sim();
        let books = FaultMatch { method: Some(http::Method::POST), ..FaultMatch::default() };
        sim.fail_matching(1, books, Fault::LoseAnswer { status });
        let lost = post(&sim, "items", json!([{"itemType": "book", "title": "Landed"}]));
        assert_eq!(lost.status, status);
        assert!(lost.header("retry-after").is_none());
        assert!(lost.text().contains("after the request was applied"), "{}", lost.text());
        assert_eq!(sim.library_version(LIB), 1, "the write was applied");
        assert!(sim.items(LIB).iter().any(|item| item["data"]["title"] == "Landed"));
    }
}

fn control_request(method: &str, body: &str, headers: &[(&str, &str)]) -> http::Response<Vec<u8>> {
    let mut builder = http::Request::builder().method(method).uri("/_sim/fail");
    for (name, value) in headers {
        builder = builder.header(*name, *value);
    }
    control::handle(&sim_ref(), &builder.body(body.as_bytes().to_vec()).unwrap())
}

thread_local! {
    static CONTROLLED: Rc<zotero_sim::Simulator> = Rc::new(sim());
}

fn sim_ref() -> Rc<zotero_sim::Simulator> {
    CONTROLLED.with(Rc::clone)
}

#[test]
fn the_control_endpoint_arms_faults_from_json_and_refuses_what_a_web_page_could_send() {
    let json_type = [("content-type", "application/json")];
    let armed =
        control_request("POST", r#"{"method":"patch","pathContains":"/items/","status":500,"times":2}"#, &json_type);
    assert_eq!(armed.status(), 200);
    let body: serde_json::Value = serde_json::from_slice(armed.body()).unwrap();
    assert_eq!(body["armed"]["method"], "PATCH");
    assert_eq!(body["armed"]["times"], 2);
    let sim = sim_ref();
    let patch =
        || send(&sim, "PATCH", "/users/1/items/ABCD2345", &[("If-Unmodified-Since-Version", "0")], Some(json!({})));
    assert_eq!(patch().status, 500);
    assert_eq!(patch().status, 500);
    assert_ne!(patch().status, 500);

    // Without a JSON type, with an Origin, or with a bad fault: refused, nothing armed.
    assert_eq!(control_request("POST", r#"{"status":500}"#, &[("content-type", "text/plain")]).status(), 415);
    let from_page = [("content-type", "application/json"), ("origin", "https://evil.example")];
    assert_eq!(control_request("POST", r#"{"status":500}"#, &from_page).status(), 403);
    assert_eq!(control_request("POST", r#"{"status":200}"#, &json_type).status(), 400);
    assert_eq!(control_request("POST", r#"{"status":500,"times":0}"#, &json_type).status(), 400);
    assert_eq!(control_request("POST", r#"{"status":500,"colour":"red"}"#, &json_type).status(), 400);
    assert_eq!(get(&sim, "/users/1/items").status, 200);

    // 429 and 503 carry Retry-After as the queued faults do; DELETE drops what is armed.
    assert_eq!(control_request("POST", r#"{"status":429,"retryAfter":7}"#, &json_type).status(), 200);
    assert_eq!(control_request("DELETE", "", &[]).status(), 200);
    assert_eq!(get(&sim, "/users/1/items").status, 200);
    assert_eq!(control_request("POST", r#"{"status":429,"retryAfter":7}"#, &json_type).status(), 200);
    let limited = get(&sim, "/users/1/items");
    assert_eq!((limited.status, limited.header("retry-after").as_deref()), (429, Some("7")));

    // afterApplying: the request is applied, then answered with the status.
    let lost = r#"{"method":"post","pathContains":"/items","status":503,"afterApplying":true}"#;
    let armed = control_request("POST", lost, &json_type);
    assert_eq!(armed.status(), 200);
    let body: serde_json::Value = serde_json::from_slice(armed.body()).unwrap();
    assert_eq!(body["armed"]["afterApplying"], true);
    let version = sim.library_version(LIB);
    assert_eq!(post(&sim, "items", json!([{"itemType": "book"}])).status, 503);
    assert_eq!(sim.library_version(LIB), version + 1, "applied before the 503");
    let both = r#"{"status":503,"retryAfter":3,"afterApplying":true}"#;
    assert_eq!(control_request("POST", both, &json_type).status(), 400);
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
