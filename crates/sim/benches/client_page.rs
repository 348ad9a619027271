//! How much a Zotero client call costs on top of the work Zotero itself does: a 100-item page read through
//! `ZoteroClient::items` (request building, limiter, JSON parse into `ZoteroObject`s) against the in-process
//! simulator, next to the simulator answering the same request alone. Prints calls per second for both and the
//! client's overhead per call. Absolute numbers vary by machine; compare the two lines of one run.

use std::hint::black_box;
use std::rc::Rc;
use std::time::Instant;

use serde_json::json;
use zotero_mcp_core::testing::ManualClock;
use zotero_mcp_core::zotero::{LibraryKind, Query, ZoteroClient, ZoteroSettings};
use zotero_sim::{InProcess, LibraryRef, Simulator};

const USER: u64 = 1;
const ITERATIONS: u32 = 300;

fn main() {
    let sim = Rc::new(Simulator::new());
    sim.add_user(USER, "bench-key", true);
    for i in 0..100 {
        sim.insert_item(
            LibraryRef::User(USER),
            json!({
                "itemType": "journalArticle",
                "title": format!("A reasonably long article title number {i} about protein folding"),
                "creators": [{ "creatorType": "author", "firstName": "Ada", "lastName": format!("Author{i}") }],
                "date": "2021-05-01", "publicationTitle": "Journal of Benchmarks", "DOI": format!("10.1000/{i}"),
                "abstractNote": "An abstract of a few sentences. ".repeat(8),
                "tags": [{ "tag": "bench" }, { "tag": format!("t{i}") }],
            }),
        );
    }
    let settings = ZoteroSettings {
        api_key: "bench-key".into(),
        library_kind: LibraryKind::User,
        library_id: Some(USER.to_string()),
        base_url: None,
    };
    let client = ZoteroClient::new(settings, Rc::new(InProcess(sim.clone())), ManualClock::at(0)).expect("client");
    let runtime = tokio::runtime::Builder::new_current_thread().build().expect("runtime");

    // Warm up both paths.
    runtime.block_on(async {
        let page = client.items(&Query::new(), 100).await.expect("page");
        assert_eq!(page.items.len(), 100);
    });
    let raw_request = || {
        http::Request::get("https://api.zotero.org/users/1/items?start=0&limit=100")
            .header("zotero-api-key", "bench-key")
            .header("zotero-api-version", "3")
            .body(Vec::new())
            .expect("request")
    };

    let started = Instant::now();
    for _ in 0..ITERATIONS {
        black_box(sim.handle(raw_request()));
    }
    let simulator_only = started.elapsed() / ITERATIONS;

    let started = Instant::now();
    runtime.block_on(async {
        for _ in 0..ITERATIONS {
            black_box(client.items(&Query::new(), 100).await.expect("page"));
        }
    });
    let through_client = started.elapsed() / ITERATIONS;

    let per_second = |d: std::time::Duration| 1.0 / d.as_secs_f64();
    println!("100-item page, {ITERATIONS} iterations");
    println!(
        "  simulator alone:        {:>8.1} µs/call  {:>8.0} calls/s",
        simulator_only.as_secs_f64() * 1e6,
        per_second(simulator_only)
    );
    println!(
        "  through ZoteroClient:   {:>8.1} µs/call  {:>8.0} calls/s",
        through_client.as_secs_f64() * 1e6,
        per_second(through_client)
    );
    println!(
        "  client overhead:        {:>8.1} µs/call  ({:.2}× the simulator's own time)",
        through_client.saturating_sub(simulator_only).as_secs_f64() * 1e6,
        through_client.as_secs_f64() / simulator_only.as_secs_f64()
    );
}
