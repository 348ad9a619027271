//! Worker-side time per `tools/call`: the full request path (router → bearer check → MCP ladder → registry →
//! tool → Zotero client → formatting → JSON) for zotero_search and zotero_get_item against the in-process
//! simulator with the demo library. The simulator's own time is measured separately and subtracted, so the
//! figure is what the Worker spends, not what Zotero would. Compare figures within one run.

#[path = "../tests/common/mod.rs"]
#[allow(unused_imports)]
mod common;

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::hint::black_box;
use std::rc::Rc;
use std::time::{Duration, Instant};

use serde_json::json;
use zotero_mcp_server::platform::{HttpClient, HttpError, HttpRequest, HttpResponse};
use zotero_sim::Simulator;

/// Calls per case; `BENCH_ITERATIONS` raises it for a profile.
fn iterations() -> u32 {
    std::env::var("BENCH_ITERATIONS").ok().and_then(|n| n.parse().ok()).unwrap_or(200)
}

/// Whether to run the case `label`: `BENCH_CASES` (labels, comma-separated) picks some, for a profile of one.
fn wanted(label: &str) -> bool {
    std::env::var("BENCH_CASES").map_or(true, |cases| cases.split(',').any(|case| case.trim() == label))
}

/// The simulator, with a stopwatch around it. Nothing here writes, so the simulator answers a request the same
/// way every time: each answer is kept after its first time and handed out again, which keeps the simulator's
/// work out of the loop (and out of a profile: `perf record` on this bench shows the Worker side only).
struct TimedSim {
    sim: Rc<Simulator>,
    answers: RefCell<HashMap<String, (http::response::Parts, Vec<u8>)>>,
    spent: Cell<Duration>,
    calls: Cell<u32>,
}

#[async_trait::async_trait(?Send)]
impl HttpClient for TimedSim {
    async fn send(&self, request: HttpRequest) -> Result<HttpResponse, HttpError> {
        let started = Instant::now();
        let key = format!("{} {}", request.method(), request.uri());
        let (parts, body) =
            self.answers.borrow_mut().entry(key).or_insert_with(|| self.sim.handle(request).into_parts()).clone();
        let response = HttpResponse::from_parts(parts, body);
        self.spent.set(self.spent.get() + started.elapsed());
        self.calls.set(self.calls.get() + 1);
        Ok(response)
    }
}

fn main() {
    // Benches are built with the tests' features; time the server as it ships, without the schema check.
    #[cfg(feature = "check-outputs")]
    zotero_mcp_server::mcp::output_check::pause();
    let runtime = tokio::runtime::Builder::new_current_thread().build().expect("runtime");
    let cases = [
        ("zotero_search", json!({ "query": "protein structure", "limit": 20 })),
        ("zotero_search (no text, 25)", json!({ "limit": 25 })),
        ("zotero_search (citation key)", json!({ "citationKey": "whitfield2021geometric" })),
        ("zotero_get_item", json!({ "key": "T6W7H8UE", "includeChildren": true })),
    ];
    let iterations = iterations();
    println!("Worker-side time per tools/call, {iterations} calls each (simulator time subtracted)");
    for (label, arguments) in cases.into_iter().filter(|(label, _)| wanted(label)) {
        let name = label.split(' ').next().unwrap_or(label);
        let timed = Rc::new(TimedSim {
            sim: common::demo_sim(),
            answers: RefCell::default(),
            spent: Cell::new(Duration::ZERO),
            calls: Cell::new(0),
        });
        let mut app = common::app_with_sim(timed.sim.clone());
        app.platform.http = timed.clone();
        let request = || common::modern("tools/call", json!({ "name": name, "arguments": arguments.clone() }));
        runtime.block_on(async {
            let reply = zotero_mcp_server::router::route(request(), &app).await;
            assert_eq!(reply.status(), 200);
        });
        timed.spent.set(Duration::ZERO);
        timed.calls.set(0);
        let started = Instant::now();
        runtime.block_on(async {
            for _ in 0..iterations {
                black_box(zotero_mcp_server::router::route(request(), &app).await);
            }
        });
        let total = started.elapsed();
        let worker = total.saturating_sub(timed.spent.get()) / iterations;
        println!(
            "  {label:<30} {:>8.1} µs/call  (+{:>7.1} µs in the simulator, {} Zotero requests per call)",
            worker.as_secs_f64() * 1e6,
            (timed.spent.get() / iterations).as_secs_f64() * 1e6,
            timed.calls.get() / iterations
        );
    }
}
