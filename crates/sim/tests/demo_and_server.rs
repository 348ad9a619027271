//! The bundled demo library and the `zotero-sim` binary.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;
use zotero_sim::{LibraryRef, Simulator, DEMO_API_KEY, DEMO_USER_ID};

fn demo_get(sim: &Simulator, path: &str) -> (u16, Value, http::HeaderMap) {
    let request = http::Request::builder()
        .uri(path)
        .header("Zotero-API-Key", DEMO_API_KEY)
        .body(Vec::new())
        .unwrap_or_else(|e| panic!("{e}"));
    let (parts, body) = sim.handle(request).into_parts();
    (parts.status.as_u16(), serde_json::from_slice(&body).unwrap_or(Value::Null), parts.headers)
}

fn total(headers: &http::HeaderMap) -> u64 {
    headers.get("total-results").and_then(|v| v.to_str().ok()).and_then(|v| v.parse().ok()).unwrap_or(0)
}

#[test]
fn demo_library_loads_and_validates() {
    let sim = Simulator::demo();
    let lib = LibraryRef::User(DEMO_USER_ID);
    assert!(sim.library_version(lib) > 0);
    let (status, _, headers) = demo_get(&sim, "/users/1234567/items");
    assert_eq!(status, 200);
    assert!(total(&headers) > 0);
    let (status, collections, _) = demo_get(&sim, "/users/1234567/collections?limit=100");
    assert_eq!(status, 200);
    assert!(collections.as_array().is_some_and(|c| !c.is_empty()));
    let (_, item, _) = demo_get(&sim, "/users/1234567/items?limit=1");
    assert_eq!(item[0]["library"]["id"], DEMO_USER_ID);
}

fn keys(sim: &Simulator, path: &str) -> Vec<String> {
    let (status, body, _) = demo_get(sim, path);
    assert_eq!(status, 200, "{path}");
    body.as_array()
        .map(|a| a.iter().filter_map(|o| o["key"].as_str().map(str::to_string)).collect())
        .unwrap_or_default()
}

/// The facts the demo file documents in its `_notes`.
#[test]
fn demo_facts_hold_through_the_api() {
    let sim = Simulator::demo();
    // "stochastic gradient annealing" exists only in the full text of attachment ZJ6BP9I4.
    let phrase = "%22stochastic%20gradient%20annealing%22";
    assert_eq!(keys(&sim, &format!("/users/1234567/items?q={phrase}")), Vec::<String>::new());
    assert_eq!(keys(&sim, &format!("/users/1234567/items?q={phrase}&qmode=everything")), ["ZJ6BP9I4"]);
    assert_eq!(keys(&sim, &format!("/users/1234567/items/top?q={phrase}&qmode=everything")), ["AIHLBG3Z"]);
    let (status, content, _) = demo_get(&sim, "/users/1234567/items/ZJ6BP9I4/fulltext");
    assert_eq!(status, 200);
    assert!(content["indexedPages"].as_u64().is_some());
    // The trash.
    let mut trash = keys(&sim, "/users/1234567/items/trash");
    trash.sort();
    assert_eq!(trash, ["36P5CMPH", "E9JFRBGW"]);
    // The related pair is visible from both sides.
    let (_, a, _) = demo_get(&sim, "/users/1234567/items/BMTDL3F8");
    let (_, b, _) = demo_get(&sim, "/users/1234567/items/FQDCTD9F");
    let rel = |v: &Value| v["data"]["relations"]["dc:relation"].to_string();
    assert!(rel(&a).contains("FQDCTD9F"), "{}", rel(&a));
    assert!(rel(&b).contains("BMTDL3F8"), "{}", rel(&b));
}

fn http_get(addr: &str, path: &str, key: &str) -> String {
    let mut stream = TcpStream::connect(addr).unwrap_or_else(|e| panic!("connect {addr}: {e}"));
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap_or_default();
    let request = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nZotero-API-Key: {key}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).unwrap_or_else(|e| panic!("write: {e}"));
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap_or_default();
    response
}

#[test]
fn binary_serves_the_demo_on_loopback_and_exits_by_itself() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_zotero-sim"))
        .args(["--listen", "127.0.0.1:0", "--demo", "--api-key", "secret", "--exit-after", "20"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn: {e}"));
    let stdout = child.stdout.take().unwrap_or_else(|| panic!("no stdout"));
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line).unwrap_or_default();
    let addr = line
        .trim()
        .strip_prefix("zotero-sim listening on http://")
        .unwrap_or_else(|| panic!("unexpected first line: {line:?}"))
        .to_string();
    let ok = http_get(&addr, "/users/1234567/items?limit=1", "secret");
    assert!(ok.starts_with("HTTP/1.1 200"), "{ok}");
    assert!(ok.to_ascii_lowercase().contains("last-modified-version:"), "{ok}");
    let denied = http_get(&addr, "/users/1234567/items", "demo");
    assert!(denied.starts_with("HTTP/1.1 403"), "{denied}");
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn binary_exits_after_the_given_time() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_zotero-sim"))
        .args(["--listen", "127.0.0.1:0", "--exit-after", "1"])
        .stdout(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn: {e}"));
    let start = std::time::Instant::now();
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            assert!(status.success());
            break;
        }
        if start.elapsed() > Duration::from_secs(15) {
            let _ = child.kill();
            panic!("zotero-sim did not exit after --exit-after 1");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn binary_refuses_non_loopback_addresses() {
    let output = Command::new(env!("CARGO_BIN_EXE_zotero-sim"))
        .args(["--listen", "0.0.0.0:0", "--exit-after", "1"])
        .output()
        .unwrap_or_else(|e| panic!("run: {e}"));
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("loopback"));
}
