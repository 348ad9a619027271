//! `zotero-mcp e2e` against the real native server (`zotero-mcp serve --http` with a static token) over the
//! Zotero simulator's HTTP server, each test with its own pair: every read-only step passes; the whole `--write`
//! cycle passes with the files on the simulator's Zotero Storage; a `--write` run whose file store cannot be used
//! (forced to WebDAV, none configured) fails at the attachment and deletes the item it created; a Zotero failure
//! injected through the simulator's control endpoint into the clean-up is reported as a clean-up failure. The
//! full cycle with WebDAV runs in scripts/e2e.sh against both runtimes.

mod common;

use common::BIN;
use std::process::{Child, Command, Output, Stdio};

use serde_json::Value;

const TOKEN: &str = "e2e-command-test-token";

/// A simulator and a native server in front of it; the server is killed when dropped (the simulator's thread
/// stops by its own deadline).
struct Servers {
    sim: String,
    base: String,
    server: Child,
}

impl Drop for Servers {
    fn drop(&mut self) {
        let _ = self.server.kill();
        let _ = self.server.wait();
    }
}

fn start(name: &str) -> Servers {
    start_with(name, &[])
}

/// [`start`], the server given more settings.
fn start_with(name: &str, settings: &[(&str, &str)]) -> Servers {
    let sim = zotero_sim::server::start_demo_on_loopback().expect("zotero-sim started");
    let data = std::env::temp_dir().join(format!("zotero-mcp-e2e-command-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&data);
    let (server, url) = common::serve_over_sim(&sim, &data, TOKEN, settings);
    Servers { sim, base: url.trim_end_matches("/mcp").to_owned(), server }
}

fn e2e(args: &[&str]) -> Output {
    Command::new(BIN)
        .arg("e2e")
        .args(args)
        .env_remove("ZOTERO_MCP_TOKEN")
        .env_remove("ZOTERO_MCP_PASSWORD")
        .stdin(Stdio::null())
        .output()
        .expect("zotero-mcp e2e runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The keys of the items under the scratch tag, trash included, as the simulator holds them.
fn scratch_items(sim: &str) -> String {
    let url = format!("{sim}/users/{}/items?tag=zotero-mcp-e2e&includeTrashed=1&format=keys", zotero_sim::DEMO_USER_ID);
    let client = reqwest::blocking::Client::new();
    client.get(url).header("zotero-api-key", "demo").send().and_then(|r| r.text()).expect("the simulator answers")
}

#[test]
fn every_read_only_step_passes_against_a_native_server() {
    let servers = start("read");
    let run = e2e(&[&servers.base, "--token", TOKEN]);
    let out = text(&run.stdout);
    assert_eq!(run.status.code(), Some(0), "{out}\n{}", text(&run.stderr));
    for line in [
        "✓ sign-in",
        "✓ metadata: protected resource",
        "– metadata: authorization server",
        "✓ server/discover (2026-07-28)",
        "✓ initialize (2025-06-18)",
        "✓ tools/list",
        "✓ search",
        "✓ item read",
        "✓ collections",
        "✓ semantic search",
        "✓ /health",
    ] {
        assert!(out.lines().any(|l| l.starts_with(line)), "no line `{line}` in:\n{out}");
    }
    assert!(out.contains("not served: the server takes a static token"), "{out}");
    assert!(out.contains("AI Search is not bound"), "{out}");
    assert!(out.contains("Zotero Storage: ok"), "{out}");
    assert!(
        out.trim_end().lines().last().is_some_and(|l| l.starts_with("PASSED: 10 passed, 0 failed, 1 skipped")),
        "{out}"
    );
}

#[test]
fn the_whole_write_cycle_passes_with_files_on_zotero_storage() {
    let servers = start("zotero-storage");
    let run = e2e(&[&servers.base, "--token", TOKEN, "--write"]);
    let out = text(&run.stdout);
    assert_eq!(run.status.code(), Some(0), "{out}\n{}", text(&run.stderr));
    for line in ["✓ write: attach PDF", "✓ write: read back", "✓ write: highlight"] {
        assert!(out.lines().any(|l| l.starts_with(line)), "no line `{line}` in:\n{out}");
    }
    assert!(out.contains("bytes on Zotero Storage") && out.contains("page 1 from Zotero Storage"), "{out}");
    assert_eq!(scratch_items(&servers.sim).trim(), "", "what the run created is gone, trash included");
}

#[test]
fn a_failed_write_step_is_named_and_what_the_run_created_is_deleted() {
    // Files forced to WebDAV, which this server has not: the attachment step fails after the item was created.
    let servers = start_with("write", &[("FILE_STORAGE", "webdav")]);
    let run = e2e(&[&servers.base, "--token", TOKEN, "--write", "--json"]);
    assert_eq!(run.status.code(), Some(1), "{}", text(&run.stderr));
    let report: Value = serde_json::from_slice(&run.stdout).expect("one JSON document on stdout");
    let failed: Vec<&str> = report["steps"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|s| s["ok"] == false)
        .filter_map(|s| s["name"].as_str())
        .collect();
    assert_eq!(failed, ["write: attach PDF"], "{report:#}");
    let item = report["scratch"]["item"].as_str().expect("the item it created");
    assert_eq!(report["cleanup"][0]["name"], format!("cleanup: delete item {item}"));
    assert_eq!(report["cleanup"][0]["ok"], true);
    assert_eq!((report["summary"]["ok"].clone(), report["summary"]["cleanupFailed"].clone()), (false.into(), 0.into()));
    assert_eq!(scratch_items(&servers.sim).trim(), "", "the scratch item is gone, trash included");
}

#[test]
fn a_clean_up_that_fails_is_reported_and_fails_the_run() {
    let servers = start_with("cleanup", &[("FILE_STORAGE", "webdav")]);
    // Zotero refuses every delete (the control endpoint of zotero-sim --control): the item stays, and says so.
    let fault = r#"{"method":"DELETE","pathContains":"/items/","status":500,"times":20}"#;
    let armed = reqwest::blocking::Client::new()
        .post(format!("{}/_sim/fail", servers.sim))
        .header("content-type", "application/json")
        .body(fault)
        .send()
        .expect("the control endpoint answers");
    assert_eq!(armed.status().as_u16(), 200);
    let run = e2e(&[&servers.base, "--token", TOKEN, "--write", "--no-sweep", "--retries", "0"]);
    let out = text(&run.stdout);
    assert_eq!(run.status.code(), Some(1), "{out}");
    assert!(out.contains("✗ write: attach PDF"), "{out}");
    let cleanup = out.lines().find(|l| l.contains("cleanup: delete item")).unwrap_or_default();
    assert!(cleanup.starts_with('✗'), "{out}");
    assert!(out.contains("still in the library (tag zotero-mcp-e2e)"), "{out}");
    assert_eq!(scratch_items(&servers.sim).lines().count(), 1, "the one scratch item is left, as reported");
}

#[test]
fn usage_errors_exit_2_and_help_exits_0() {
    let run = e2e(&[]);
    assert_eq!(run.status.code(), Some(2));
    assert!(text(&run.stderr).contains("the server is missing"), "{}", text(&run.stderr));
    let run = e2e(&["example.org", "--frobnicate"]);
    assert_eq!(run.status.code(), Some(2));
    let run = e2e(&["--help"]);
    assert_eq!(run.status.code(), Some(0));
    assert!(text(&run.stdout).contains("Exit status:"), "{}", text(&run.stdout));
}
