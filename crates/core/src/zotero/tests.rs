//! The client against stubbed responses: what it sends and how it reacts to each kind of answer.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use async_trait::async_trait;
use serde_json::{json, Value};

use super::*;
use crate::platform::{HttpClient, HttpError, HttpRequest, HttpResponse};
use crate::testing::{ManualClock, StoppedClock, StubHttp};

const NOW: u64 = 1_800_000_000_000;

fn settings() -> ZoteroSettings {
    ZoteroSettings {
        api_key: "k3y".into(),
        library_kind: LibraryKind::User,
        library_id: Some("42".into()),
        base_url: Some("https://zotero.test".into()),
    }
}

fn respond(status: u16, headers: &[(&str, &str)], body: Value) -> HttpResponse {
    let mut builder = http::Response::builder().status(status);
    for (name, value) in headers {
        builder = builder.header(*name, *value);
    }
    builder.body(body.to_string().into_bytes()).unwrap()
}

fn client_with(http: Rc<StubHttp>) -> (ZoteroWriter, Rc<ManualClock>) {
    let clock = ManualClock::at(NOW);
    (ZoteroWriter::new(settings(), http, clock.clone()).unwrap(), clock)
}

fn query_of(request: &HttpRequest) -> Vec<(String, String)> {
    form_urlencoded::parse(request.uri().query().unwrap_or("").as_bytes()).into_owned().collect()
}

fn item(key: &str) -> Value {
    json!({ "key": key, "version": 3, "meta": {}, "data": { "key": key, "itemType": "book", "title": key } })
}

fn key(k: &str) -> ObjectKey {
    ObjectKey::parse(k).unwrap()
}

#[tokio::test]
async fn sends_the_api_version_key_and_a_user_agent() {
    let http = StubHttp::new(|_| Ok(respond(200, &[], item("ABCD2345"))));
    let (client, _) = client_with(http.clone());
    client.item(&key("ABCD2345")).await.unwrap();
    let request = &http.requests()[0];
    assert_eq!(request.uri().to_string(), "https://zotero.test/users/42/items/ABCD2345");
    assert_eq!(request.headers()["zotero-api-version"], "3");
    assert_eq!(request.headers()["zotero-api-key"], "k3y");
    assert!(request.headers()["user-agent"].to_str().unwrap().starts_with("zotero-mcp/"));
}

#[tokio::test]
async fn paginates_up_to_the_callers_maximum() {
    // 250 matching items; the caller wants at most 230.
    let http = StubHttp::new(|request| {
        let query: Vec<(String, String)> =
            form_urlencoded::parse(request.uri().query().unwrap_or("").as_bytes()).into_owned().collect();
        let get = |name: &str| query.iter().find(|(n, _)| n == name).map(|(_, v)| v.parse::<usize>().unwrap());
        let (start, limit) = (get("start").unwrap(), get("limit").unwrap());
        let items: Vec<Value> = (start..(start + limit).min(250)).map(|i| item(&format!("K{i:07}"))).collect();
        Ok(respond(200, &[("total-results", "250"), ("last-modified-version", "77")], Value::Array(items)))
    });
    let (client, _) = client_with(http.clone());
    let page = client.items(&Query::new().q("deep learning", QMode::Everything), 230).await.unwrap();
    assert_eq!(page.items.len(), 230);
    assert_eq!(page.total_results, Some(250));
    assert_eq!(page.library_version, 77);
    let requests = http.requests();
    let pages: Vec<(String, String)> = requests
        .iter()
        .map(|r| {
            let q = query_of(r);
            let v = |n: &str| q.iter().find(|(k, _)| k == n).unwrap().1.clone();
            (v("start"), v("limit"))
        })
        .collect();
    assert_eq!(pages, [("0".into(), "100".into()), ("100".into(), "100".into()), ("200".into(), "30".into())]);
    assert!(query_of(&requests[0]).contains(&("qmode".into(), "everything".into())));
}

#[tokio::test]
async fn stops_paginating_at_a_short_page() {
    let http = StubHttp::new(|_| Ok(respond(200, &[], json!([item("AAAAAAAA"), item("BBBBBBBB")]))));
    let (client, _) = client_with(http.clone());
    let page = client.top_items(&Query::new(), 500).await.unwrap();
    assert_eq!(page.items.len(), 2);
    assert_eq!(http.requests().len(), 1);
}

#[tokio::test]
async fn batch_results_are_reindexed_across_three_batches() {
    let http = StubHttp::new(|request| {
        let objects: Vec<Value> = serde_json::from_slice(request.body()).unwrap();
        let mut success = serde_json::Map::new();
        let mut failed = serde_json::Map::new();
        for (i, object) in objects.iter().enumerate() {
            if object["title"] == "bad" {
                failed.insert(
                    i.to_string(),
                    json!({ "key": null, "code": 400, "message": "'foo' is not a valid field for type 'book'" }),
                );
            } else {
                success.insert(i.to_string(), json!(format!("N{:07}", object["n"].as_u64().unwrap())));
            }
        }
        Ok(respond(
            200,
            &[("last-modified-version", "900")],
            json!({ "success": success, "failed": failed, "unchanged": {}, "successful": {} }),
        ))
    });
    let (client, _) = client_with(http.clone());
    let objects: Vec<Value> =
        (0..120).map(|n| json!({ "itemType": "book", "title": if n == 107 { "bad" } else { "ok" }, "n": n })).collect();
    let outcome = client.write_objects(ObjectKind::Items, &objects).await.unwrap();
    assert_eq!(http.requests().len(), 3);
    assert_eq!(outcome.success.len(), 119);
    assert_eq!(outcome.success[&0], "N0000000");
    assert_eq!(outcome.success[&50], "N0000050", "index 0 of batch 2 is position 50");
    assert_eq!(outcome.success[&119], "N0000119");
    assert_eq!(outcome.failed[&107].code, 400);
    assert_eq!(outcome.library_version, 900);
    let tokens: Vec<String> =
        http.requests().iter().map(|r| r.headers()["zotero-write-token"].to_str().unwrap().to_owned()).collect();
    assert!(tokens.iter().all(|t| t.len() == 32));
    assert!(tokens[0] != tokens[1] && tokens[1] != tokens[2], "a fresh token per batch");
    let sizes: Vec<usize> =
        http.requests().iter().map(|r| serde_json::from_slice::<Vec<Value>>(r.body()).unwrap().len()).collect();
    assert_eq!(sizes, [50, 50, 20]);
}

#[tokio::test]
async fn a_later_batch_failing_reports_what_was_and_was_not_written() {
    let http = StubHttp::strict();
    http.enqueue(Ok(respond(200, &[], json!({ "success": (0..50).map(|i| (i.to_string(), json!(format!("S{i:07}")))).collect::<serde_json::Map<_, _>>() }))));
    http.enqueue(Ok(respond(413, &[], json!("Request too large"))));
    let (client, _) = client_with(http.clone());
    let objects: Vec<Value> = (0..130).map(|_| json!({ "itemType": "book" })).collect();
    let outcome = client.write_objects(ObjectKind::Items, &objects).await.unwrap();
    assert_eq!(outcome.success.len(), 50);
    assert_eq!(outcome.failed.len(), 50);
    assert_eq!(outcome.failed[&50].code, 413);
    assert_eq!(outcome.not_sent, (100..130).collect::<Vec<_>>());
    assert!(!outcome.is_complete());
    assert_eq!(http.requests().len(), 2, "nothing is sent after a failed batch");
}

#[tokio::test]
async fn a_batch_answer_naming_an_index_outside_the_batch_is_a_decode_error() {
    let failure = json!({ "code": 400, "message": "bad" });
    let answers = [
        // Beyond any batch.
        json!({ "success": { "0": "AAAAAAAA", "1": "BBBBBBBB", "2": "CCCCCCCC" }, "failed": { "60": failure } }),
        // Beyond this one (3 sent), with a gap where object 1 should be.
        json!({ "success": { "0": "AAAAAAAA", "2": "CCCCCCCC" }, "failed": { "7": failure } }),
        // An index that would overflow when moved to the caller's positions.
        json!({ "unchanged": { "18446744073709551615": "AAAAAAAA" } }),
    ];
    for answer in answers {
        // The objects are read back (the answer cannot say what was written): here none was.
        let http = StubHttp::new({
            let answer = answer.clone();
            move |request| match *request.method() {
                http::Method::GET => Ok(respond(200, &[("last-modified-version", "5")], json!([]))),
                _ => Ok(respond(200, &[("last-modified-version", "5")], answer.clone())),
            }
        });
        let (client, _) = client_with(http.clone());
        let objects: Vec<Value> = (0..3).map(|n| json!({ "itemType": "book", "n": n })).collect();
        match client.write_objects(ObjectKind::Items, &objects).await {
            Err(ZoteroError::Decode { reason, .. }) => assert!(reason.contains("read them back"), "{reason}"),
            other => panic!("{answer}: expected a decode error, got {other:?}"),
        }
        let methods: Vec<_> = http.requests().iter().map(|r| r.method().clone()).collect();
        assert_eq!(methods, [http::Method::POST, http::Method::GET], "sent once, not retried; then read back");
    }
}

#[tokio::test]
async fn a_412_to_a_write_sent_again_after_a_503_is_checked_by_reading_after_a_429_it_is_a_conflict() {
    let item = json!({ "key": "ABCD2345", "version": 5, "data": { "title": "before" } });
    for (first, reads_back) in [(503, true), (429, false)] {
        let http = StubHttp::strict();
        http.enqueue(Ok(respond(200, &[], item.clone())));
        http.enqueue(Ok(respond(first, &[("retry-after", "1")], json!("busy"))));
        http.enqueue(Ok(respond(412, &[], json!("Item has been modified since specified version"))));
        if reads_back {
            // Still at the version sent: the earlier attempt did not land, so the 412 is a conflict after all.
            http.enqueue(Ok(respond(200, &[("last-modified-version", "5")], json!([item.clone()]))));
        }
        let (client, _) = client_with(http.clone());
        let error = client.patch_item(&key("ABCD2345"), 5, &json!({ "title": "x" })).await.unwrap_err();
        assert!(error.is_conflict(), "after a {first}: {error}");
        let methods: Vec<_> = http.requests().iter().map(|r| r.method().to_string()).collect();
        let expected: &[&str] = if reads_back { &["GET", "PATCH", "PATCH", "GET"] } else { &["GET", "PATCH", "PATCH"] };
        assert_eq!(methods, expected, "after a {first}");
    }
}

#[tokio::test]
async fn a_412_is_a_conflict_and_is_sent_once() {
    // The writer reads the item first (its fields before the change, for the undo journal), then patches.
    let http = StubHttp::new(|request| {
        Ok(match *request.method() {
            http::Method::GET => {
                respond(200, &[], json!({ "key": "ABCD2345", "version": 5, "data": { "title": "before" } }))
            }
            _ => respond(412, &[], json!("Item has been modified since specified version")),
        })
    });
    let (client, clock) = client_with(http.clone());
    let error = client.patch_item(&key("ABCD2345"), 5, &json!({ "title": "x" })).await.unwrap_err();
    assert!(error.is_conflict(), "{error}");
    assert!(error.to_string().contains("Read the item or collection again"));
    let patches: Vec<_> = http.requests().into_iter().filter(|r| r.method() == http::Method::PATCH).collect();
    assert_eq!(patches.len(), 1, "sent once, not retried");
    assert_eq!(patches[0].headers()["if-unmodified-since-version"], "5");
    assert!(client.log().take().is_empty(), "a refused write records nothing");
    assert!(clock.sleeps().is_empty());
}

#[tokio::test]
async fn a_429_with_retry_after_waits_then_succeeds() {
    let http = StubHttp::new(|_| Ok(respond(200, &[], item("ABCD2345"))));
    http.enqueue(Ok(respond(429, &[("retry-after", "7")], json!("Too many requests"))));
    let (client, clock) = client_with(http.clone());
    let found = client.item(&key("ABCD2345")).await.unwrap();
    assert_eq!(found.key, "ABCD2345");
    assert_eq!(http.requests().len(), 2);
    assert_eq!(clock.sleeps(), [7_000]);
}

#[tokio::test]
async fn a_503_without_retry_after_backs_off_exponentially_and_gives_up() {
    let http = StubHttp::new(|_| Ok(respond(503, &[], json!("Service unavailable"))));
    let (client, clock) = client_with(http.clone());
    let error = client.item(&key("ABCD2345")).await.unwrap_err();
    assert!(matches!(error, ZoteroError::Unavailable { status: 503, .. }), "{error}");
    assert_eq!(http.requests().len(), 5, "one attempt and four retries");
    assert_eq!(clock.sleeps(), [500, 1_000, 2_000, 4_000]);
}

#[tokio::test]
async fn a_retry_after_longer_than_we_hold_a_request_fails_at_once_with_the_wait() {
    let http = StubHttp::new(|_| Ok(respond(429, &[("retry-after", "3600")], json!("slow down"))));
    let (client, clock) = client_with(http.clone());
    let error = client.item(&key("ABCD2345")).await.unwrap_err();
    assert!(error.to_string().contains("3600 seconds"), "{error}");
    assert_eq!(http.requests().len(), 1);
    assert!(clock.sleeps().is_empty());
}

#[tokio::test]
async fn other_errors_are_not_retried_and_say_what_failed() {
    let http = StubHttp::new(|_| Ok(respond(500, &[], json!("An error occurred"))));
    let (client, _) = client_with(http.clone());
    let error = client.item(&key("ABCD2345")).await.unwrap_err();
    assert_eq!(http.requests().len(), 1);
    let message = error.to_string();
    assert!(message.contains("GET /users/42/items/ABCD2345 failed with 500"), "{message}");
    assert!(message.contains("An error occurred"));
}

#[tokio::test]
async fn a_backoff_header_delays_the_next_request() {
    let http = StubHttp::new(|_| Ok(respond(200, &[], item("ABCD2345"))));
    http.enqueue(Ok(respond(200, &[("backoff", "12")], item("ABCD2345"))));
    let (client, clock) = client_with(http.clone());
    client.item(&key("ABCD2345")).await.unwrap();
    assert!(clock.sleeps().is_empty(), "the answer carrying Backoff is itself used");
    client.item(&key("ABCD2345")).await.unwrap();
    assert_eq!(clock.sleeps(), [12_000]);
    client.item(&key("ABCD2345")).await.unwrap();
    assert_eq!(clock.sleeps(), [12_000], "once the backoff has passed, no more waiting");
}

#[tokio::test]
async fn a_group_library_needs_an_id() {
    let settings = ZoteroSettings { library_kind: LibraryKind::Group, library_id: None, ..settings() };
    let error = ZoteroClient::new(settings, StubHttp::strict(), ManualClock::at(NOW)).err().unwrap();
    assert!(matches!(error, ZoteroError::Unset { variable: "ZOTERO_LIBRARY_ID", .. }), "{error:?}");
    let message = error.to_string();
    assert!(message.contains("ZOTERO_LIBRARY_ID") && message.contains("group"), "{message}");
    assert!(!message.contains("wrangler"), "how to set it is the shell's to say: {message}");
}

#[tokio::test]
async fn a_missing_key_is_a_configuration_error() {
    let settings = ZoteroSettings { api_key: " ".into(), ..settings() };
    let error = ZoteroClient::new(settings, StubHttp::strict(), ManualClock::at(NOW)).err().unwrap();
    // Core names what is missing; how to set it (a Worker secret, an environment variable) is the shell's.
    assert!(matches!(error, ZoteroError::Unset { variable: "ZOTERO_API_KEY", .. }), "{error:?}");
    let message = error.to_string();
    assert!(message.contains("ZOTERO_API_KEY is not set") && !message.contains("wrangler"), "{message}");
}

#[tokio::test]
async fn the_user_library_is_looked_up_once_for_concurrent_callers() {
    let http = StubHttp::new(|request| {
        if request.uri().path() == "/keys/current" {
            Ok(respond(200, &[], json!({ "key": "k3y", "userID": 999, "username": "me" })))
        } else {
            Ok(respond(200, &[], item("ABCD2345")))
        }
    });
    let settings = ZoteroSettings { library_id: None, ..settings() };
    let client = ZoteroClient::new(settings, http.clone(), ManualClock::at(NOW)).unwrap();
    let (first, second) = (key("ABCD2345"), key("BCDE3456"));
    let (a, b) = futures::join!(client.item(&first), client.item(&second));
    a.unwrap();
    b.unwrap();
    let paths: Vec<String> = http.requests().iter().map(|r| r.uri().path().to_owned()).collect();
    assert_eq!(paths.iter().filter(|p| *p == "/keys/current").count(), 1, "{paths:?}");
    assert!(paths.iter().any(|p| p == "/users/999/items/BCDE3456"));
}

#[tokio::test]
async fn a_404_full_text_is_none_and_deletes_carry_each_items_version() {
    let http = StubHttp::strict();
    http.enqueue(Ok(respond(404, &[], json!("Not found"))));
    // The item as it was, for the undo journal, then its children, the trashed included (`numChildren` counts
    // only the others, so it cannot spare the read): none.
    let before =
        json!({ "key": "BCDE3456", "version": 30, "meta": { "numChildren": 0 }, "data": { "itemType": "book" } });
    http.enqueue(Ok(respond(200, &[], before)));
    http.enqueue(Ok(respond(200, &[("total-results", "0"), ("last-modified-version", "30")], json!([]))));
    http.enqueue(Ok(respond(204, &[("last-modified-version", "31")], Value::Null)));
    let (client, _) = client_with(http.clone());
    assert_eq!(client.fulltext(&key("ABCD2345")).await.unwrap(), None);
    assert_eq!(client.delete_item(&key("BCDE3456"), 30).await.unwrap(), 31);
    assert_eq!(http.requests().len(), 4, "the full text, the item before, its children, the delete");
    assert!(http.requests()[2].uri().to_string().contains("includeTrashed=1"), "the trashed children too");
    let delete = &http.requests()[3];
    assert_eq!(delete.method(), http::Method::DELETE);
    assert_eq!(delete.headers()["if-unmodified-since-version"], "30");
}

/// An HTTP client whose answers take a scheduler turn, so several can be in flight; it records the peak.
struct SlowHttp {
    in_flight: Cell<usize>,
    peak: Cell<usize>,
}

#[async_trait(?Send)]
impl HttpClient for SlowHttp {
    async fn send(&self, _request: HttpRequest) -> Result<HttpResponse, HttpError> {
        self.in_flight.set(self.in_flight.get() + 1);
        self.peak.set(self.peak.get().max(self.in_flight.get()));
        for _ in 0..3 {
            tokio::task::yield_now().await;
        }
        self.in_flight.set(self.in_flight.get() - 1);
        Ok(respond(200, &[], item("ABCD2345")))
    }
}

#[tokio::test]
async fn at_most_four_requests_are_in_flight() {
    let http = Rc::new(SlowHttp { in_flight: Cell::new(0), peak: Cell::new(0) });
    let client = ZoteroClient::new(settings(), http.clone(), Rc::new(StoppedClock(NOW))).unwrap();
    let key = key("ABCD2345");
    let calls = (0..10).map(|_| client.item(&key));
    let results = futures::future::join_all(calls).await;
    assert!(results.iter().all(Result::is_ok));
    assert_eq!(http.peak.get(), MAX_IN_FLIGHT);
}

/// A listing of `total` items, answered a scheduler turn late; it records the most requests in flight at once,
/// and sends `Total-Results` only when `counted`.
struct PagedHttp {
    total: usize,
    counted: bool,
    in_flight: Cell<usize>,
    peak: Cell<usize>,
    starts: RefCell<Vec<usize>>,
}

#[async_trait(?Send)]
impl HttpClient for PagedHttp {
    async fn send(&self, request: HttpRequest) -> Result<HttpResponse, HttpError> {
        let query = query_of(&request);
        let get = |name: &str| query.iter().find(|(n, _)| n == name).map(|(_, v)| v.parse::<usize>().unwrap());
        let (start, limit) = (get("start").unwrap(), get("limit").unwrap());
        self.starts.borrow_mut().push(start);
        self.in_flight.set(self.in_flight.get() + 1);
        self.peak.set(self.peak.get().max(self.in_flight.get()));
        tokio::task::yield_now().await;
        self.in_flight.set(self.in_flight.get() - 1);
        let items: Vec<Value> = (start..(start + limit).min(self.total)).map(|i| item(&format!("K{i:07}"))).collect();
        let total = self.total.to_string();
        let headers: &[(&str, &str)] = if self.counted { &[("total-results", total.as_str())] } else { &[] };
        Ok(respond(200, headers, Value::Array(items)))
    }
}

fn paged(total: usize, counted: bool) -> Rc<PagedHttp> {
    Rc::new(PagedHttp { total, counted, in_flight: Cell::new(0), peak: Cell::new(0), starts: RefCell::new(Vec::new()) })
}

#[tokio::test]
async fn pages_after_the_first_go_out_together_in_order() {
    let http = paged(1_050, true);
    let client = ZoteroClient::new(settings(), http.clone(), Rc::new(StoppedClock(NOW))).unwrap();
    let page = client.top_items(&Query::new(), 2_000).await.unwrap();
    let keys: Vec<String> = page.items.iter().map(|i| i.key.clone()).collect();
    let expected: Vec<String> = (0..1_050).map(|i| format!("K{i:07}")).collect();
    assert_eq!(keys, expected, "every item once, in Zotero's order");
    assert_eq!(page.total_results, Some(1_050));
    assert_eq!(
        *http.starts.borrow(),
        (0..11).map(|p| p * 100).collect::<Vec<_>>(),
        "no page asked twice or past the end"
    );
    assert_eq!(http.peak.get(), MAX_IN_FLIGHT, "the first page alone, then the rest four at a time");
}

#[tokio::test]
async fn a_listing_from_an_offset_stops_at_the_callers_maximum() {
    let http = paged(1_000, true);
    let client = ZoteroClient::new(settings(), http.clone(), Rc::new(StoppedClock(NOW))).unwrap();
    let page = client.top_items(&Query::new().param("start", "150"), 320).await.unwrap();
    assert_eq!(page.items.len(), 320);
    assert_eq!(page.items[0].key, "K0000150");
    assert_eq!(page.items[319].key, "K0000469");
    assert_eq!(*http.starts.borrow(), [150, 250, 350, 450]);
}

#[tokio::test]
async fn without_a_total_the_pages_are_read_one_after_another() {
    let http = paged(250, false);
    let client = ZoteroClient::new(settings(), http.clone(), Rc::new(StoppedClock(NOW))).unwrap();
    let page = client.top_items(&Query::new(), 2_000).await.unwrap();
    assert_eq!(page.items.len(), 250);
    assert_eq!(*http.starts.borrow(), [0, 100, 200], "until the short page");
    assert_eq!(http.peak.get(), 1);
}

#[tokio::test]
async fn exports_refuse_unknown_formats_before_any_request() {
    let http = StubHttp::strict();
    let (client, _) = client_with(http.clone());
    let error = client.export(&[key("ABCD2345")], "docx", None, None).await.unwrap_err();
    assert!(error.to_string().contains("bibtex"));
    assert!(http.requests().is_empty());
}

/// An HTTP client whose answer never comes.
struct SilentHttp;

#[async_trait(?Send)]
impl HttpClient for SilentHttp {
    async fn send(&self, _request: HttpRequest) -> Result<HttpResponse, HttpError> {
        std::future::pending().await
    }
}

#[tokio::test]
async fn a_request_that_never_answers_times_out_and_is_not_retried() {
    let clock = ManualClock::at(NOW);
    let client = ZoteroClient::new(settings(), Rc::new(SilentHttp), clock.clone()).unwrap();
    let error = client.item(&key("ABCD2345")).await.unwrap_err();
    assert!(matches!(error, ZoteroError::Transport(HttpError::Timeout { after_ms: 30_000, .. })), "{error}");
    assert_eq!(clock.sleeps(), [30_000]);
}

// ---- Zotero Desktop's local API ----

fn desktop_with(http: Rc<StubHttp>, key: Option<&str>) -> (ZoteroWriter, Rc<local::LocalKey>) {
    let keys = Rc::new(local::LocalKey::with(key.map(str::to_owned)));
    let access =
        local::LocalApiAccess { server_id: Some("srv123456789".into()), key: keys.clone(), call: Rc::default() };
    let library = LibraryId { kind: LibraryKind::User, id: 0 };
    let writer = ZoteroWriter::for_desktop("http://localhost:23119/api", library, access, http, ManualClock::at(NOW));
    (writer, keys)
}

fn created(key: &str) -> Value {
    json!({ "successful": { "0": item(key) }, "success": { "0": key }, "unchanged": {}, "failed": {} })
}

#[test]
fn a_client_says_what_its_server_can_do() {
    let web = ZoteroClient::new(settings(), StubHttp::new(|_| unreachable!()), ManualClock::at(NOW)).unwrap();
    assert_eq!(web.caps(), Capabilities::WEB_API);
    let (desktop, _) = desktop_with(StubHttp::new(|_| unreachable!()), None);
    assert_eq!(desktop.caps(), local::CAPABILITIES);
    assert!(!desktop.caps().deletions && !desktop.caps().annotation_children && !desktop.caps().file_renames);
}

#[tokio::test]
async fn a_desktop_read_sends_no_key_and_names_the_instance() {
    let http = StubHttp::new(|_| Ok(respond(200, &[], item("ABCD2345"))));
    let (client, keys) = desktop_with(http.clone(), Some("local-key"));
    client.item(&key("ABCD2345")).await.unwrap();
    let request = &http.requests()[0];
    assert_eq!(request.uri().to_string(), "http://localhost:23119/api/users/0/items/ABCD2345");
    assert!(request.headers().get("zotero-api-key").is_none(), "a read carries no key");
    assert_eq!(request.headers()["zotero-server-id"], "srv123456789");
    assert_eq!(keys.asked(), 0);
}

#[tokio::test]
async fn a_desktop_write_asks_zotero_for_a_key_once_and_keeps_it() {
    let http = StubHttp::new(|request| match request.uri().path() {
        "/api/local/authorize" => Ok(respond(200, &[], json!({ "key": "K1", "remember": true }))),
        _ => Ok(respond(200, &[("last-modified-version", "8")], created("NEWK2345"))),
    });
    let (writer, keys) = desktop_with(http.clone(), None);
    let book = json!({ "itemType": "book", "title": "T" });
    writer.write_objects(ObjectKind::Items, std::slice::from_ref(&book)).await.unwrap();
    writer.write_objects(ObjectKind::Items, &[book]).await.unwrap();
    let paths: Vec<String> = http.requests().iter().map(|r| r.uri().path().to_owned()).collect();
    assert_eq!(paths, ["/api/local/authorize", "/api/users/0/items", "/api/users/0/items"]);
    let asked = &http.requests()[0];
    assert_eq!(asked.headers()["zotero-server-id"], "srv123456789");
    assert_eq!(String::from_utf8_lossy(asked.body()), r#"{"appName":"zotero-mcp"}"#);
    for write in &http.requests()[1..] {
        assert_eq!(write.headers()["zotero-api-key"], "K1");
        assert_eq!(write.headers()["zotero-server-id"], "srv123456789");
    }
    assert_eq!((keys.asked(), keys.get().as_deref()), (1, Some("K1")));
}

#[tokio::test]
async fn a_spent_key_is_replaced_once_and_the_write_sent_again() {
    let writes = Rc::new(Cell::new(0));
    let seen = writes.clone();
    let http = StubHttp::new(move |request| match request.uri().path() {
        "/api/local/authorize" => Ok(respond(200, &[], json!({ "key": "FRESH", "remember": false }))),
        _ => {
            seen.set(seen.get() + 1);
            match request.headers().get("zotero-api-key").map(|v| v.to_str().unwrap_or_default().to_owned()) {
                Some(k) if k == "FRESH" => Ok(respond(200, &[("last-modified-version", "9")], created("NEWK2345"))),
                _ => Ok(respond(401, &[], json!("Invalid or missing key"))),
            }
        }
    });
    let (writer, keys) = desktop_with(http.clone(), Some("SPENT"));
    let outcome = writer.write_objects(ObjectKind::Items, &[json!({ "itemType": "book", "title": "T" })]).await;
    assert!(outcome.is_ok(), "{:?}", outcome.err());
    assert_eq!(writes.get(), 2, "refused once (before any change), sent once more");
    assert_eq!(keys.asked(), 1);
}

#[tokio::test]
async fn a_denied_dialog_writes_nothing_and_says_so() {
    let http = StubHttp::new(|request| match request.uri().path() {
        "/api/local/authorize" => Ok(respond(403, &[], json!({ "denied": true }))),
        _ => Ok(respond(200, &[], created("NEWK2345"))),
    });
    let (writer, _) = desktop_with(http.clone(), None);
    let refused = writer.write_objects(ObjectKind::Items, &[json!({ "itemType": "book" })]).await.unwrap_err();
    assert!(matches!(refused, ZoteroError::LocalWriteDenied { part_way: false }), "{refused}");
    assert!(refused.to_string().contains("Deny"), "{refused}");
    assert_eq!(http.requests().len(), 1, "only the question was sent");
}

#[tokio::test]
async fn a_desktop_that_is_not_running_or_switched_off_says_where_to_switch_it_on() {
    let down = StubHttp::new(|request| {
        Err(HttpError::Transport { url: request.uri().to_string(), reason: "connection refused".into() })
    });
    let (client, _) = desktop_with(down, None);
    let error = client.item(&key("ABCD2345")).await.unwrap_err();
    assert!(matches!(error, ZoteroError::DesktopUnreachable { .. }), "{error}");
    assert!(error.to_string().contains("Start Zotero"), "{error}");
    let off = StubHttp::new(|_| {
        Ok(http::Response::builder().status(403).body(b"Local API is not enabled".to_vec()).unwrap())
    });
    let (client, _) = desktop_with(off, None);
    let error = client.item(&key("ABCD2345")).await.unwrap_err();
    assert!(matches!(error, ZoteroError::LocalApiOff { .. }), "{error}");
    assert!(error.to_string().contains("Allow other applications"), "{error}");
}

#[tokio::test]
async fn another_zotero_instance_is_refused_not_read_as_a_conflict() {
    let http = StubHttp::new(|_| {
        Ok(http::Response::builder().status(412).body(b"Zotero-Server-ID does not match this server".to_vec()).unwrap())
    });
    let (client, _) = desktop_with(http, Some("K"));
    let error = client.item(&key("ABCD2345")).await.unwrap_err();
    assert!(matches!(error, ZoteroError::DesktopChanged { .. }), "{error}");
}

#[tokio::test]
async fn desktop_children_ask_for_annotations_by_type() {
    let http = StubHttp::new(|request| {
        let annotations = request.uri().query().is_some_and(|q| q.contains("itemType=annotation"));
        let listed = if annotations { json!([item("ANNO2345")]) } else { json!([item("NOTE2345")]) };
        Ok(respond(200, &[("total-results", "1")], listed))
    });
    let (client, _) = desktop_with(http.clone(), None);
    let page = client.children(&key("ATTA2345"), 50).await.unwrap();
    let keys: Vec<&str> = page.items.iter().map(|i| i.key.as_str()).collect();
    assert_eq!(keys, ["NOTE2345", "ANNO2345"]);
    assert_eq!(page.total_results, Some(2));
    assert_eq!(http.requests().len(), 2);
}
