//! `zotero-mcp reindex` against a fake MCP server on loopback that checks the bearer token and answers
//! `zotero_reindex` from a script: progress to completion, the backlog draining, and each way it stops short.

use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_zotero-mcp");
const TOKEN: &str = "test-token";

/// One scripted answer to a `tools/call`.
enum Answer {
    /// A successful result with this structuredContent.
    Report(Value),
    /// A result with `isError` and this text.
    ToolError(&'static str),
    /// This HTTP status with `Retry-After: 0` and no JSON-RPC message.
    Status(u16),
}

fn report(submitted: u64, remaining: u64, complete: bool, backlog: Option<u64>) -> Answer {
    Answer::Report(json!({
        "submitted": submitted,
        "removed": 0,
        "remaining": remaining,
        "backlog": backlog,
        "failed": 0,
        "complete": complete,
        "warning": null,
        "message": if complete { "Index is up to date." } else { "Sent a batch; call again." },
        "zoteroRequests": 3,
    }))
}

/// What the fake server saw.
#[derive(Default)]
struct Seen {
    /// The `arguments` of every `tools/call`, in order.
    calls: Vec<Value>,
    /// `MCP-Protocol-Version` of each `tools/call`.
    versions: Vec<Option<String>>,
    initialized: bool,
    refused: usize,
}

struct Fake {
    url: String,
    stop: Arc<AtomicBool>,
    thread: JoinHandle<Seen>,
}

impl Fake {
    /// Serves until told to stop, the script has been answered, or a minute has passed.
    fn start(script: Vec<Answer>, event_stream: bool) -> Self {
        let server = tiny_http::Server::http("127.0.0.1:0").expect("a loopback port");
        let url = format!("http://{}/mcp", server.server_addr().to_ip().expect("an IP address"));
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = stop.clone();
        let thread = std::thread::spawn(move || {
            let mut seen = Seen::default();
            let mut script = script.into_iter();
            let deadline = Instant::now() + Duration::from_secs(60);
            while !stopping.load(Ordering::Relaxed) && Instant::now() < deadline {
                let Ok(Some(request)) = server.recv_timeout(Duration::from_millis(20)) else { continue };
                if !answer(request, &mut script, &mut seen, event_stream) {
                    break;
                }
            }
            seen
        });
        Self { url, stop, thread }
    }

    fn finish(self) -> Seen {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.join().expect("the fake server")
    }
}

/// Answers one request; false when the script has run out.
fn answer(
    mut request: tiny_http::Request,
    script: &mut impl Iterator<Item = Answer>,
    seen: &mut Seen,
    event_stream: bool,
) -> bool {
    let header = |request: &tiny_http::Request, name: &str| {
        request
            .headers()
            .iter()
            .find(|h| h.field.as_str().as_str().eq_ignore_ascii_case(name))
            .map(|h| h.value.as_str().to_owned())
    };
    let respond = |request: tiny_http::Request, status: u16, body: String, content_type: &str| {
        let response = tiny_http::Response::from_string(body)
            .with_status_code(status)
            .with_header(tiny_http::Header::from_bytes("Content-Type", content_type).unwrap())
            .with_header(tiny_http::Header::from_bytes("Retry-After", "0").unwrap());
        let _ = request.respond(response);
    };
    if header(&request, "Authorization").as_deref() != Some(&format!("Bearer {TOKEN}")) {
        seen.refused += 1;
        let body = json!({ "error": "invalid_token", "error_description": "Missing or invalid access token" });
        let response = tiny_http::Response::from_string(body.to_string()).with_status_code(401).with_header(
            tiny_http::Header::from_bytes(
                "WWW-Authenticate",
                "Bearer error=\"invalid_token\", error_description=\"Missing or invalid access token\"",
            )
            .unwrap(),
        );
        let _ = request.respond(response);
        return true;
    }
    let mut body = String::new();
    let _ = request.as_reader().read_to_string(&mut body);
    let message: Value = serde_json::from_str(&body).expect("a JSON-RPC message");
    let id = message["id"].clone();
    let result = match message["method"].as_str() {
        Some("initialize") => {
            assert_eq!(message["params"]["protocolVersion"], "2025-11-25");
            json!({
                "protocolVersion": "2025-11-25",
                "capabilities": { "tools": {} },
                "serverInfo": { "name": "fake", "version": "0" },
            })
        }
        Some("notifications/initialized") => {
            seen.initialized = true;
            respond(request, 202, String::new(), "text/plain");
            return true;
        }
        Some("tools/call") => {
            assert_eq!(message["params"]["name"], "zotero_reindex");
            seen.calls.push(message["params"]["arguments"].clone());
            seen.versions.push(header(&request, "MCP-Protocol-Version"));
            match script.next() {
                None => return false,
                Some(Answer::Status(status)) => {
                    respond(request, status, "busy".into(), "text/plain");
                    return true;
                }
                Some(Answer::ToolError(text)) => {
                    json!({ "content": [{ "type": "text", "text": text }], "isError": true })
                }
                Some(Answer::Report(report)) => json!({
                    "content": [{ "type": "text", "text": report["message"] }],
                    "structuredContent": report,
                    "isError": false,
                }),
            }
        }
        other => panic!("unexpected method {other:?}"),
    };
    let reply = json!({ "jsonrpc": "2.0", "id": id, "result": result }).to_string();
    if event_stream {
        respond(request, 200, format!("event: message\ndata: {reply}\n\n"), "text/event-stream");
    } else {
        respond(request, 200, reply, "application/json");
    }
    true
}

/// Runs `zotero-mcp reindex <url> --token … --poll-secs 0 <args>` against the fake server.
fn reindex(fake: &Fake, args: &[&str]) -> (Output, String, String) {
    let output = Command::new(BIN)
        .args(["reindex", &fake.url, "--token", TOKEN, "--poll-secs", "0", "--timeout-secs", "10"])
        .args(args)
        .env_remove("ZOTERO_MCP_TOKEN")
        .env_remove("ZOTERO_MCP_PASSWORD")
        .stdin(Stdio::null())
        .output()
        .expect("the binary runs");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    (output, stdout, stderr)
}

fn sending_then_draining() -> Vec<Answer> {
    vec![
        report(100, 200, false, Some(0)),
        report(100, 100, false, Some(40)),
        report(100, 0, true, Some(5)),
        report(0, 0, true, Some(2)),
        report(0, 0, true, Some(0)),
    ]
}

#[test]
fn it_sends_until_complete_then_waits_for_the_backlog() {
    let fake = Fake::start(sending_then_draining(), false);
    let (output, stdout, stderr) = reindex(&fake, &["--full", "--limit", "100"]);
    let seen = fake.finish();
    assert_eq!(output.status.code(), Some(0), "stdout:\n{stdout}\nstderr:\n{stderr}");

    assert!(seen.initialized);
    assert_eq!(seen.calls.len(), 5);
    assert_eq!(seen.calls[0], json!({ "full": true, "limit": 100 }), "--full goes with the first call only");
    assert!(seen.calls[1..].iter().all(|a| *a == json!({ "limit": 100 })), "{:?}", seen.calls);
    assert!(seen.versions.iter().all(|v| v.as_deref() == Some("2025-11-25")), "{:?}", seen.versions);

    let lines: Vec<&str> = stdout.lines().collect();
    let line = |prefix: &str| {
        lines.iter().find(|l| l.starts_with(prefix)).unwrap_or_else(|| panic!("no `{prefix}` line in:\n{stdout}"))
    };
    assert!(line("call 1: sent 100 (100 so far), 200 remaining, ").contains(" items/s, ETA "));
    assert!(line("call 2: sent 100 (200 so far), 100 remaining, ").contains("ETA "));
    assert!(line("call 3: sent 100 (300 so far), 0 remaining, ").ends_with("ETA 0s"));
    assert!(line("All changes sent: 300 items in ").ends_with("Index is up to date."));
    assert!(line("indexing [").contains(" 5 of 5 documents left"), "{stdout}");
    let drained: Vec<&&str> = lines.iter().filter(|l| l.starts_with("indexing [")).collect();
    assert_eq!(drained.len(), 3, "a plain line per check when stdout is not a terminal:\n{stdout}");
    assert!(drained[1].contains(" 60% 2 of 5 documents left"), "{stdout}");
    assert!(drained[2].contains("100% 0 of 5 documents left"), "{stdout}");
    assert!(!stdout.contains('\r'), "no in-place redraws without a terminal");
    assert_eq!(lines.last().copied(), Some("Done: AI Search has indexed everything."));
}

#[test]
fn event_stream_answers_work_and_a_warning_is_shown() {
    let mut script = sending_then_draining();
    script[0] = Answer::Report(json!({
        "submitted": 100, "removed": 2, "remaining": 200, "backlog": null, "failed": null, "complete": false,
        "warning": "The instance's chunk size is 512; documents are built for 256.", "message": "Sent.",
        "zoteroRequests": 3,
    }));
    let fake = Fake::start(script, true);
    let (output, stdout, stderr) = reindex(&fake, &[]);
    let seen = fake.finish();
    assert_eq!(output.status.code(), Some(0), "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert_eq!(seen.calls[0], json!({}), "no --full, no limit: no arguments");
    assert!(stdout.contains("call 1: sent 100 (100 so far, 2 removed), 200 remaining"), "{stdout}");
    assert_eq!(stderr.matches("warning: The instance's chunk size is 512").count(), 1, "{stderr}");
}

#[test]
fn calls_that_move_nothing_stop_the_run() {
    let script = (0..10).map(|_| report(0, 200, false, Some(0))).collect();
    let fake = Fake::start(script, false);
    let (output, stdout, stderr) = reindex(&fake, &["--stall-calls", "3"]);
    let seen = fake.finish();
    assert_eq!(output.status.code(), Some(1), "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert_eq!(seen.calls.len(), 3);
    assert!(stderr.contains("no progress in 3 calls in a row: 200 items stay queued"), "{stderr}");
    assert!(stderr.contains("run again"), "{stderr}");
}

#[test]
fn an_unbound_ai_search_exits_4() {
    let unbound = Answer::Report(json!({
        "submitted": 0, "removed": 0, "remaining": 0, "backlog": 0, "failed": 0, "complete": true, "warning": null,
        "message": "AI Search is not bound, so semantic search is disabled.", "zoteroRequests": 0,
    }));
    let fake = Fake::start(vec![unbound], false);
    let (output, _, stderr) = reindex(&fake, &[]);
    fake.finish();
    assert_eq!(output.status.code(), Some(4), "{stderr}");
    assert!(stderr.contains("AI Search is not bound to this deployment"), "{stderr}");
    assert!(stderr.contains("AI_SEARCH binding"), "{stderr}");
}

#[test]
fn a_tool_error_stops_the_run_with_its_message() {
    let fake = Fake::start(
        vec![report(100, 100, false, None), Answer::ToolError("Zotero API error: HTTP 403 Forbidden (check the key).")],
        false,
    );
    let (output, stdout, stderr) = reindex(&fake, &[]);
    fake.finish();
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stdout.contains("call 1: sent 100 (100 so far), 100 remaining"), "{stdout}");
    assert!(
        stderr.contains("zotero_reindex failed: Zotero API error: HTTP 403 Forbidden (check the key)."),
        "{stderr}"
    );
    assert!(stderr.contains("run again (without --full) to continue"), "{stderr}");
}

#[test]
fn documents_that_failed_to_index_exit_3_with_the_count() {
    let done = Answer::Report(json!({
        "submitted": 10, "removed": 0, "remaining": 0, "backlog": 0, "failed": 4, "complete": true, "warning": null,
        "message": "Index is up to date.", "zoteroRequests": 2,
    }));
    let fake = Fake::start(vec![done], false);
    let (output, _, stderr) = reindex(&fake, &[]);
    fake.finish();
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("AI Search failed to index 4 document(s)"), "{stderr}");
}

#[test]
fn a_backlog_that_does_not_drain_in_time_stops_the_run() {
    let fake = Fake::start(vec![report(3, 0, true, Some(5)), report(0, 0, true, Some(5))], false);
    let (output, stdout, stderr) = reindex(&fake, &["--max-wait-mins", "0"]);
    fake.finish();
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stdout.contains("5 of 5 documents left"), "{stdout}");
    assert!(stderr.contains("AI Search still had 5 documents to index"), "{stderr}");
}

#[test]
fn a_refused_token_says_how_to_get_one() {
    let fake = Fake::start(vec![], false);
    let output = Command::new(BIN)
        .args(["reindex", &fake.url, "--poll-secs", "0", "--timeout-secs", "10"])
        .env("ZOTERO_MCP_TOKEN", "stale-token")
        .stdin(Stdio::null())
        .output()
        .expect("the binary runs");
    let seen = fake.finish();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert_eq!(seen.refused, 1, "the token came from ZOTERO_MCP_TOKEN and was sent once");
    assert!(stderr.contains("refused the access token (HTTP 401: Missing or invalid access token)"), "{stderr}");
    assert!(stderr.contains("scripts/get-token"), "{stderr}");
}

#[test]
fn a_busy_server_is_asked_again_within_the_retries() {
    let fake = Fake::start(vec![Answer::Status(503), report(5, 0, true, Some(0))], false);
    let (output, stdout, stderr) = reindex(&fake, &["--retries", "1"]);
    let seen = fake.finish();
    assert_eq!(output.status.code(), Some(0), "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert_eq!(seen.calls.len(), 2);
    assert!(stderr.contains("HTTP 503 from the server; retrying in 0 s (1 of 1)"), "{stderr}");

    let fake = Fake::start(vec![Answer::Status(503)], false);
    let (output, _, stderr) = reindex(&fake, &["--retries", "0"]);
    fake.finish();
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("tools/call failed: HTTP 503"), "{stderr}");
}

#[test]
fn help_and_bad_arguments() {
    let help = Command::new(BIN).args(["reindex", "--help"]).output().expect("the binary runs");
    assert!(help.status.success());
    let text = String::from_utf8_lossy(&help.stdout);
    assert!(text.contains("Resumable") && text.contains("Exit status"), "{text}");

    let bad = Command::new(BIN).args(["reindex", "example.org", "--limit", "0"]).output().expect("the binary runs");
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--limit: `0` is not a number from 1 to 2000"));
}

/// The real thing on the other side: `zotero-mcp serve --http` with its OAuth server. No password flag, so
/// the command signs in as get-token does (ZOTERO_MCP_PASSWORD), over the server's real transport; the native
/// server has no AI Search, so the tool says it is not bound.
#[test]
fn it_signs_in_to_a_real_server_and_reports_the_missing_binding() {
    use std::io::{BufRead, BufReader};

    let data = std::env::temp_dir().join(format!("zotero-mcp-reindex-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&data);
    let mut server = Command::new(BIN)
        .args(["serve", "--http", "127.0.0.1:0", "--exit-after", "60"])
        .env_clear()
        .env("ZOTERO_MCP_DATA_DIR", &data)
        .env("ZOTERO_API_KEY", "unused")
        .env("AUTH_PASSWORD", "reindex-password")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the server starts");
    let mut lines = BufReader::new(server.stderr.take().expect("stderr")).lines();
    let url = loop {
        let line = lines.next().expect("a line naming the address").expect("readable stderr");
        if let Some(rest) = line.split("listening on ").nth(1) {
            break rest.split_whitespace().next().expect("a URL").to_owned();
        }
    };
    let output = Command::new(BIN)
        .args(["reindex", &url, "--poll-secs", "0", "--timeout-secs", "20"])
        .env_remove("ZOTERO_MCP_TOKEN")
        .env_remove("ZOTERO_MCP_USERNAME")
        .env("ZOTERO_MCP_PASSWORD", "reindex-password")
        .stdin(Stdio::null())
        .output()
        .expect("the binary runs");
    let _ = server.kill();
    let _ = server.wait();
    let _ = std::fs::remove_dir_all(&data);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(4), "{stderr}");
    assert!(stderr.contains(&format!("Signed in to {url} (zotero:read zotero:write)")), "{stderr}");
    assert!(stderr.contains("AI Search is not bound to this deployment"), "{stderr}");
}
