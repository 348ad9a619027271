//! Which address the native HTTP server counts a registration under: the socket's peer, loopback included, or
//! with `TRUSTED_PROXY_HEADER` set the right-most entry of that header on connections from loopback (a reverse
//! proxy on the same host).

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_zotero-mcp");

/// Starts the OAuth server (`AUTH_PASSWORD`) on 127.0.0.1 with these variables; returns it and its
/// registration URL.
fn start(name: &str, vars: &[(&str, &str)]) -> (Child, String) {
    let dir = std::env::temp_dir().join(format!("zotero-mcp-proxy-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut command = Command::new(BIN);
    command
        .args(["serve", "--http", "127.0.0.1:0", "--exit-after", "60"])
        .env_clear()
        .env("ZOTERO_MCP_DATA_DIR", &dir)
        .env("ZOTERO_API_KEY", "unused")
        .env("AUTH_PASSWORD", "a password for the test")
        .stderr(Stdio::piped())
        .stdout(Stdio::null());
    for (k, v) in vars {
        command.env(k, v);
    }
    let mut child = command.spawn().expect("the binary starts");
    let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
    let url = loop {
        let line = lines.next().expect("a line naming the address").expect("readable stderr");
        if let Some(rest) = line.split("listening on ").nth(1) {
            break rest.split_whitespace().next().expect("a URL").replace("/mcp", "/oauth/register");
        }
    };
    (child, url)
}

/// Registers a public client, sending `forwarded` as `X-Forwarded-For` when given; returns the status.
fn register(url: &str, forwarded: Option<&str>) -> u16 {
    let client = reqwest::blocking::Client::builder().timeout(Duration::from_secs(10)).build().unwrap();
    let mut request = client
        .post(url)
        .header("content-type", "application/json")
        .body(r#"{"redirect_uris":["http://127.0.0.1/cb"],"token_endpoint_auth_method":"none"}"#);
    if let Some(forwarded) = forwarded {
        request = request.header("x-forwarded-for", forwarded);
    }
    request.send().expect("an answer").status().as_u16()
}

#[test]
fn loopback_clients_are_counted_and_a_header_is_ignored_unless_configured() {
    let (mut child, url) = start("unset", &[]);
    for n in 0..10 {
        assert_eq!(register(&url, Some(&format!("203.0.113.{n}"))), 201, "registration {n}");
    }
    // Ten from 127.0.0.1, whatever the header says: the eleventh is refused.
    assert_eq!(register(&url, Some("198.51.100.200")), 429);
    assert_eq!(register(&url, None), 429);
    child.kill().ok();
    child.wait().ok();
}

#[test]
fn behind_a_trusted_proxy_each_client_is_counted_by_the_right_most_entry() {
    let (mut child, url) = start("xff", &[("TRUSTED_PROXY_HEADER", "X-Forwarded-For")]);
    for n in 0..10 {
        // What the client wrote on the left changes nothing: the proxy's own entry is the last one.
        assert_eq!(register(&url, Some(&format!("10.9.8.{n}, 203.0.113.7"))), 201, "registration {n}");
    }
    assert_eq!(register(&url, Some("203.0.113.7")), 429, "the same client, its eleventh");
    assert_eq!(register(&url, Some("203.0.113.7, 198.51.100.1")), 201, "another client");
    // A request without the header (not through the proxy) is the loopback address, with its own count.
    assert_eq!(register(&url, None), 201);
    child.kill().ok();
    child.wait().ok();
}
