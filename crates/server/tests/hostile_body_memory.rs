//! What a hostile `/mcp` body or stdio line costs in memory: a message is refused before it is
//! parsed when it holds more JSON values than any call needs, so two million numbers cost nothing like the
//! ~100 MB they would as `serde_json::Value`s. Memory is counted by this binary's allocator, per thread (the
//! tests run on their own threads, and a current-thread runtime keeps each request on its test's thread).

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use common::*;
use serde_json::{json, Value};
use zotero_mcp_server::auth::Grant;
use zotero_mcp_server::call::Session;
use zotero_mcp_server::mcp::jsonrpc::MAX_MESSAGE_VALUES;

struct Counting;

thread_local! {
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

fn record(delta: isize) {
    // `try_with`: the allocator also runs while a thread's locals are being torn down.
    let _ = LIVE.try_with(|live| {
        let now = live.get() + delta;
        live.set(now);
        let _ = PEAK.try_with(|peak| peak.set(peak.get().max(now)));
    });
}

// SAFETY: every call is passed to the system allocator unchanged; only sizes are recorded.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let pointer = unsafe { System.alloc(layout) };
        if !pointer.is_null() {
            record(layout.size() as isize);
        }
        pointer
    }
    unsafe fn dealloc(&self, pointer: *mut u8, layout: Layout) {
        unsafe { System.dealloc(pointer, layout) };
        record(-(layout.size() as isize));
    }
    unsafe fn realloc(&self, pointer: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let moved = unsafe { System.realloc(pointer, layout, new_size) };
        if !moved.is_null() {
            record(new_size as isize - layout.size() as isize);
        }
        moved
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Runs `work` and returns its result with the most bytes it had allocated at once on this thread.
async fn peak_of<T>(work: impl std::future::Future<Output = T>) -> (T, usize) {
    let start = LIVE.with(Cell::get);
    PEAK.with(|peak| peak.set(start));
    let out = work.await;
    (out, (PEAK.with(Cell::get) - start).max(0) as usize)
}

/// A `tools/call` whose arguments hold `count` numbers, as text (its envelope is the modern one).
fn call_with_numbers(count: usize) -> String {
    call_with(&format!("[{}]", vec!["1"; count].join(",")))
}

/// A `tools/call` whose argument `a` is the JSON text `a`.
fn call_with(a: &str) -> String {
    let mut params = json!({ "name": "zotero_search", "arguments": { "query": "x", "a": [] } });
    params["_meta"] = envelope();
    let message = json!({ "jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": params }).to_string();
    message.replacen("\"a\":[]", &format!("\"a\":{a}"), 1)
}

fn http_post(body: String) -> zotero_mcp_server::platform::HttpRequest {
    let headers = [("mcp-protocol-version", MODERN), ("mcp-method", "tools/call"), ("mcp-name", "zotero_search")];
    post_raw(body.into_bytes(), "application/json", &headers)
}

#[tokio::test]
async fn a_body_of_two_million_numbers_is_refused_for_less_than_its_own_size() {
    let app = app();
    // The catalogue is built once per thread; build it before measuring.
    send(&app, modern("tools/list", json!({}))).await;
    let body = call_with_numbers(2_000_000);
    let size = body.len();
    assert!(size > 4_000_000 - 100 && size <= 4 * 1024 * 1024, "{size}");
    let (reply, peak) = peak_of(send(&app, http_post(body))).await;
    assert_eq!((reply.status, reply.error_code()), (413, Some(-32600)), "{}", reply.text);
    assert!(reply.text.contains("send fewer items per call"), "{}", reply.text);
    assert!(peak < size / 4, "refusing a {size}-byte body allocated {peak} bytes");
}

#[tokio::test]
async fn a_stdio_line_whose_params_are_a_giant_array_is_refused_the_same_way() {
    let app = app();
    let ctx = Session::new(Grant::read_only("owner"), app.config.clone(), app.platform.clone());
    let registry = zotero_mcp_server::tools::registry(&app.config);
    let line = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":[{}]}}",
        vec!["1"; 2_000_000].join(",")
    );
    let (answer, peak) = peak_of(zotero_mcp_server::mcp::stdio::answer_line(&line, &registry, &ctx)).await;
    let answer: Value = serde_json::from_str(&answer.expect("an answer")).expect("JSON");
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
    assert!(peak < line.len() / 4, "refusing a {}-byte line allocated {peak} bytes", line.len());
}

#[tokio::test]
async fn a_large_message_under_the_limit_is_still_served() {
    let app = app();
    // Arguments with an unknown member are an argument error, answered as the tool's result: the message was
    // read and dispatched.
    let reply = send(&app, http_post(call_with_numbers(MAX_MESSAGE_VALUES - 100))).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(reply.result()["isError"], true, "{}", reply.text);
    assert!(error_text(reply.result()).contains("unknown field `a`"), "{}", reply.text);
}

/// The figures for SECURITY.md: `cargo test -p zotero-mcp-server --test hostile_body_memory -- --ignored
/// --nocapture`.
#[tokio::test]
#[ignore]
async fn print_memory_figures() {
    let app = app();
    send(&app, modern("tools/list", json!({}))).await;
    let members =
        |count: usize| format!("{{{}}}", (0..count).map(|i| format!("\"{i:x}\":0")).collect::<Vec<_>>().join(","));
    let shapes = [
        ("numbers", call_with_numbers(2_000_000)),
        ("numbers", call_with_numbers(MAX_MESSAGE_VALUES - 100)),
        ("object members", call_with(&members(MAX_MESSAGE_VALUES - 100))),
        ("numbers", call_with_numbers(10_000)),
    ];
    for (shape, body) in shapes {
        let size = body.len();
        let started = std::time::Instant::now();
        let (reply, peak) = peak_of(send(&app, http_post(body))).await;
        println!(
            "{shape}, {size} bytes: HTTP {}, peak {peak} bytes allocated ({:.1}x the body), {:?}",
            reply.status,
            peak as f64 / size as f64,
            started.elapsed()
        );
    }
}
