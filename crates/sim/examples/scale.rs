//! How the simulator's reads scale with the library: builds synthetic libraries of 1,000, 10,000 and 50,000
//! items and times the requests a syncing client makes. Run with
//! `cargo run --release -p zotero-sim --example scale` (figures in docs/simulator.md, "Large libraries").
//! Each request is repeated and the median kept; absolute figures move with the machine's load.

use std::time::{Duration, Instant};

use zotero_sim::{Simulator, DEMO_API_KEY, DEMO_USER_ID};

const SEED: u64 = 7;
const REPEAT: usize = 15;

fn request(method: &str, path_and_query: &str, headers: &[(&str, &str)]) -> http::Request<Vec<u8>> {
    let mut builder = http::Request::builder()
        .method(method)
        .uri(format!("https://api.zotero.org/users/{DEMO_USER_ID}{path_and_query}"))
        .header("Zotero-API-Version", "3")
        .header("Zotero-API-Key", DEMO_API_KEY);
    for (name, value) in headers {
        builder = builder.header(*name, *value);
    }
    match builder.body(Vec::new()) {
        Ok(r) => r,
        Err(e) => panic!("request {path_and_query}: {e}"),
    }
}

/// The median time of `REPEAT` runs of one GET, and the size of its body.
fn time_get(sim: &Simulator, path_and_query: &str) -> (Duration, usize) {
    let mut times = Vec::with_capacity(REPEAT);
    let mut size = 0;
    for _ in 0..REPEAT {
        let req = request("GET", path_and_query, &[]);
        let started = Instant::now();
        let resp = sim.handle(req);
        times.push(started.elapsed());
        assert_eq!(resp.status(), 200, "{path_and_query}: {}", String::from_utf8_lossy(resp.body()));
        size = resp.body().len();
    }
    times.sort();
    (times[REPEAT / 2], size)
}

fn header(resp: &http::Response<Vec<u8>>, name: &str) -> String {
    resp.headers().get(name).and_then(|v| v.to_str().ok()).unwrap_or_default().to_string()
}

fn ms(d: Duration) -> String {
    format!("{:.2}", d.as_secs_f64() * 1000.0)
}

fn main() {
    let sizes: Vec<usize> = match std::env::args().nth(1) {
        Some(list) => list.split(',').filter_map(|s| s.trim().parse().ok()).collect(),
        None => vec![1_000, 10_000, 50_000],
    };
    println!("zotero-sim at scale (median of {REPEAT} runs, milliseconds; seed {SEED})\n");
    let mut rows: Vec<(String, Vec<String>)> = Vec::new();
    let push = |rows: &mut Vec<(String, Vec<String>)>, label: &str, value: String| match rows
        .iter_mut()
        .find(|(l, _)| l == label)
    {
        Some((_, values)) => values.push(value),
        None => rows.push((label.to_string(), vec![value])),
    };
    for &n in &sizes {
        let started = Instant::now();
        let sim = Simulator::synthetic(n, SEED);
        let generation = started.elapsed();
        push(&mut rows, "generate the library", ms(generation));

        let version: u64 =
            header(&sim.handle(request("GET", "/items?limit=1", &[])), "last-modified-version").parse().unwrap_or(0);
        // Delete a few items, so that /deleted has something to list.
        let keys = String::from_utf8_lossy(sim.handle(request("GET", "/items/top?format=keys&limit=20", &[])).body())
            .lines()
            .collect::<Vec<_>>()
            .join(",");
        let v = version.to_string();
        let deleted =
            sim.handle(request("DELETE", &format!("/items?itemKey={keys}"), &[("If-Unmodified-Since-Version", &v)]));
        assert_eq!(deleted.status(), 204, "{}", String::from_utf8_lossy(deleted.body()));

        // The first listing after a change pays for the listings' index; the medians below do not.
        let started = Instant::now();
        let first = sim.handle(request("GET", "/items?limit=100", &[]));
        push(&mut rows, "first GET /items?limit=100 after a write", ms(started.elapsed()));
        assert_eq!(first.status(), 200);

        let deep = (n / 2 / 100) * 100;
        let since = version.saturating_sub(5);
        let ten: Vec<String> = String::from_utf8_lossy(sim.handle(request("GET", "/items?format=keys", &[])).body())
            .lines()
            .step_by((n / 10).max(1))
            .take(10)
            .map(str::to_string)
            .collect();
        // An item with children, and a collection, to list.
        let notes: serde_json::Value =
            serde_json::from_slice(sim.handle(request("GET", "/items?itemType=note&limit=1", &[])).body())
                .unwrap_or_default();
        let parent = notes[0]["data"]["parentItem"].as_str().unwrap_or_default().to_string();
        let collection =
            String::from_utf8_lossy(sim.handle(request("GET", "/collections?format=keys&limit=1", &[])).body())
                .lines()
                .next()
                .unwrap_or_default()
                .to_string();
        let cases = [
            ("GET /items?limit=100".to_string(), "/items?limit=100".to_string()),
            ("GET /items?limit=100&start=<n/2>".to_string(), format!("/items?limit=100&start={deep}")),
            ("GET /items?since=<v-5>&format=versions".to_string(), format!("/items?since={since}&format=versions")),
            (
                "GET /items/top?limit=100&sort=dateModified&direction=desc".to_string(),
                "/items/top?limit=100&sort=dateModified&direction=desc".to_string(),
            ),
            ("GET /items?itemKey=<10 keys>".to_string(), format!("/items?itemKey={}", ten.join(","))),
            ("GET /collections?limit=100".to_string(), "/collections?limit=100".to_string()),
            ("GET /tags?limit=100".to_string(), "/tags?limit=100".to_string()),
            ("GET /deleted?since=<v>".to_string(), format!("/deleted?since={version}")),
            (
                "GET /items?since=0&sort=dateAdded&limit=100 (a first fill's page)".to_string(),
                format!("/items?since=0&includeTrashed=1&sort=dateAdded&direction=asc&limit=100&start={deep}"),
            ),
            (
                "GET /items?since=<v-5>&sort=dateAdded&limit=100 (a catch-up's page)".to_string(),
                format!("/items?since={since}&includeTrashed=1&sort=dateAdded&direction=asc&limit=100"),
            ),
            (
                "GET /collections?since=0&sort=dateAdded&limit=100".to_string(),
                "/collections?since=0&sort=dateAdded&direction=asc&limit=100".to_string(),
            ),
            ("GET /items/top?limit=100&sort=title".to_string(), "/items/top?limit=100&sort=title".to_string()),
            (
                "GET /items/top?since=<v-5>&format=versions".to_string(),
                format!("/items/top?since={since}&format=versions&includeTrashed=1"),
            ),
            ("GET /items/<key>".to_string(), format!("/items/{parent}")),
            ("GET /items/<key>/children".to_string(), format!("/items/{parent}/children")),
            (
                "GET /collections/<key>/items/top?limit=100".to_string(),
                format!("/collections/{collection}/items/top?limit=100"),
            ),
            ("GET /items/top?q=<word>&limit=25".to_string(), "/items/top?q=glacier&limit=25".to_string()),
        ];
        for (label, path) in cases {
            let (time, _) = time_get(&sim, &path);
            push(&mut rows, &label, ms(time));
        }
    }
    let header_row: Vec<String> = sizes.iter().map(|n| format!("{n} items")).collect();
    println!("| request | {} |", header_row.join(" | "));
    println!("|---|{}", "---:|".repeat(sizes.len()));
    for (label, values) in rows {
        println!("| {label} | {} |", values.join(" | "));
    }
}
