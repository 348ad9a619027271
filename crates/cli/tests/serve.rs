//! The `zotero-mcp serve` binary as a user starts it: who it lets in over HTTP, and the stdio loop.

#[path = "../../../tests/support/skip.rs"]
mod skip;

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_zotero-mcp");

fn data_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("zotero-mcp-serve-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// Starts `serve --http 127.0.0.1:0` with these variables; returns the child and its /mcp URL.
fn start_http(name: &str, vars: &[(&str, &str)]) -> (Child, String) {
    start_http_with(name, vars, &[])
}

/// [`start_http`] with more arguments after `serve`'s own.
fn start_http_with(name: &str, vars: &[(&str, &str)], args: &[&str]) -> (Child, String) {
    start_http_in(&data_dir(name), vars, args)
}

/// [`start_http_with`] on the data directory `dir`, as it is (a restart keeps what the last start left there).
fn start_http_in(dir: &std::path::Path, vars: &[(&str, &str)], args: &[&str]) -> (Child, String) {
    start_http_lines(dir, vars, args).0
}

/// [`start_http_in`], also returning the start-up lines up to the one naming the address.
fn start_http_lines(dir: &std::path::Path, vars: &[(&str, &str)], args: &[&str]) -> ((Child, String), Vec<String>) {
    let mut command = Command::new(BIN);
    command
        .args(["serve", "--http", "127.0.0.1:0", "--exit-after", "60"])
        .args(args)
        .env_clear()
        .env("ZOTERO_MCP_DATA_DIR", dir)
        .env("ZOTERO_API_KEY", "unused")
        .stderr(Stdio::piped())
        .stdout(Stdio::null());
    for (k, v) in vars {
        command.env(k, v);
    }
    let mut child = command.spawn().expect("the binary starts");
    let stderr = child.stderr.take().expect("stderr");
    let mut lines = BufReader::new(stderr).lines();
    let mut seen = Vec::new();
    let url = loop {
        let line = lines.next().expect("a line naming the address").expect("readable stderr");
        seen.push(line.clone());
        if let Some(rest) = line.split("listening on ").nth(1) {
            break rest.split_whitespace().next().expect("a URL").to_owned();
        }
    };
    // The lines after it (how to pass the token) are read on, so that the child never blocks on a full pipe.
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in lines.map_while(Result::ok) {
            let _ = sender.send(line);
        }
    });
    // The start-up lines after it come at once; half a second without one ends them.
    while let Ok(line) = receiver.recv_timeout(Duration::from_millis(500)) {
        seen.push(line);
    }
    ((child, url), seen)
}

fn ping(url: &str, token: Option<&str>) -> u16 {
    let client = reqwest::blocking::Client::builder().timeout(Duration::from_secs(10)).build().unwrap();
    let mut request =
        client.post(url).header("content-type", "application/json").body(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    request.send().expect("an answer").status().as_u16()
}

#[test]
fn a_server_beyond_loopback_refuses_to_start_without_credentials() {
    let output = Command::new(BIN)
        .args(["serve", "--http", "0.0.0.0:0"])
        .env_clear()
        .env("ZOTERO_MCP_DATA_DIR", data_dir("refuse"))
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("AUTH_PASSWORD") && stderr.contains("ZOTERO_MCP_TOKEN"), "{stderr}");
}

#[test]
fn a_token_server_answers_only_with_its_token() {
    let (mut child, url) = start_http("token", &[("ZOTERO_MCP_TOKEN", "s3cret-token")]);
    assert_eq!(ping(&url, None), 401);
    assert_eq!(ping(&url, Some("wrong")), 401);
    assert_eq!(ping(&url, Some("s3cret-token")), 200);
    let _ = child.kill();
}

#[test]
fn a_loopback_server_without_credentials_answers_loopback_names_only() {
    let (mut child, url) = start_http_with("open", &[], &["--no-token"]);
    assert_eq!(ping(&url, None), 200);
    // A page that rebinds its own name to 127.0.0.1 arrives with its own Host.
    let client = reqwest::blocking::Client::new();
    let rebound = client
        .post(&url)
        .header("host", "evil.example")
        .header("content-type", "application/json")
        .body(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)
        .send()
        .unwrap();
    assert_eq!(rebound.status().as_u16(), 403);
    let _ = child.kill();
}

/// A request as a browser page would send it: `method` to `url`, with these headers (`host` replaces the real
/// one); the status and the `Access-Control-Allow-Origin` echoed, if any.
fn browser(method: &str, url: &str, headers: &[(&str, &str)], body: &str) -> (u16, Option<String>) {
    let client = reqwest::blocking::Client::builder().timeout(Duration::from_secs(10)).build().unwrap();
    let mut request =
        client.request(method.parse().unwrap(), url).header("content-type", "application/json").body(body.to_owned());
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.send().expect("an answer");
    let echoed = response.headers().get("access-control-allow-origin").map(|v| v.to_str().unwrap().to_owned());
    (response.status().as_u16(), echoed)
}

const PING: &str = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;

#[test]
fn a_loopback_server_without_credentials_lets_in_no_browser_page_unless_listed() {
    let (mut child, url) = start_http_with("strict-origins", &[], &["--no-token"]);
    assert_eq!(browser("POST", &url, &[], PING).0, 200, "no Origin: a local client");
    // The default list (for servers that check tokens) and any page on another loopback port are refused:
    // here being on this machine is the only credential, and both are pages the user merely visits.
    for origin in ["https://claude.ai", "https://chatgpt.com", "http://localhost:6274", "http://127.0.0.1:3000"] {
        assert_eq!(browser("POST", &url, &[("origin", origin)], PING), (403, None), "{origin}");
    }
    let _ = child.kill();

    // A listed origin may call, and reads the answer.
    let (mut child, url) =
        start_http_with("listed-origin", &[("ALLOWED_ORIGINS", "http://localhost:6274")], &["--no-token"]);
    let (status, echoed) = browser("POST", &url, &[("origin", "http://localhost:6274")], PING);
    assert_eq!((status, echoed.as_deref()), (200, Some("http://localhost:6274")));
    assert_eq!(browser("POST", &url, &[("origin", "http://localhost:3000")], PING).0, 403);
    let _ = child.kill();
}

/// The token a server made for itself, read as its owner would.
fn token_in(dir: &std::path::Path) -> String {
    std::fs::read_to_string(dir.join("http-token")).expect("the token file").trim().to_owned()
}

#[test]
fn a_loopback_server_without_credentials_makes_a_private_token_and_requires_it() {
    let dir = data_dir("own-token");
    let ((mut child, url), lines) = start_http_lines(&dir, &[], &[]);
    let path = dir.join("http-token");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).expect("the token file").permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "owner-only");
        let dir_mode = std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
        assert_eq!(dir_mode, 0o700, "the data directory is owner-only too");
        // The library mirror's SQLite file: library data, so owner-only as well.
        let mirror = std::fs::metadata(dir.join("mirror.sqlite3")).expect("the mirror's file");
        assert_eq!(mirror.permissions().mode() & 0o777, 0o600, "the mirror is owner-only");
    }
    let token = token_in(&dir);
    assert!(token.len() >= 32, "{token}");
    let said = lines.join("\n");
    assert!(said.contains(&path.display().to_string()) && said.contains("Authorization: Bearer"), "{said}");
    assert!(said.contains("claude mcp add --transport http"), "a line to paste: {said}");
    assert!(!said.contains(&token), "the token itself is never printed: {said}");
    assert_eq!(ping(&url, None), 401, "no token");
    assert_eq!(ping(&url, Some("wrong")), 401);
    assert_eq!(ping(&url, Some(&token)), 200);
    let _ = child.kill();
    let _ = child.wait();

    // The next start keeps the token, so a client set up once keeps working.
    let (mut child, url) = start_http_in(&dir, &[], &[]);
    assert_eq!(token_in(&dir), token);
    assert_eq!(ping(&url, Some(&token)), 200);
    assert_eq!(ping(&url, None), 401);
    let _ = child.kill();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn no_token_serves_without_one_and_says_who_can_call() {
    let dir = data_dir("no-token");
    let ((mut child, url), lines) = start_http_lines(&dir, &[], &["--no-token"]);
    assert_eq!(ping(&url, None), 200);
    assert!(!dir.join("http-token").exists(), "no token made");
    let said = lines.join("\n");
    assert!(said.contains("every process of every user on this machine"), "{said}");
    let _ = child.kill();

    // The flag contradicts a configured credential.
    let output = Command::new(BIN)
        .args(["serve", "--http", "127.0.0.1:0", "--no-token"])
        .env_clear()
        .env("ZOTERO_MCP_DATA_DIR", &dir)
        .env("ZOTERO_MCP_TOKEN", "s3cret-token")
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("--no-token"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Set by [`another_user_cannot_read_the_token_and_is_refused`] for the copy of this test binary it runs under
/// another uid: the token file's path and the server's URL.
const PROBE_VARS: [&str; 2] = ["ZOTERO_MCP_PROBE_TOKEN_FILE", "ZOTERO_MCP_PROBE_URL"];

#[cfg(unix)]
#[test]
fn another_user_cannot_read_the_token_and_is_refused() {
    use std::os::unix::fs::MetadataExt;
    use std::os::unix::process::CommandExt;
    // Only root can start a process as another user; elsewhere this is said, not passed over in silence.
    let euid = std::fs::metadata("/proc/self").map(|m| m.uid()).unwrap_or(u32::MAX);
    if euid != 0 {
        skip::skip(
            "another_user_cannot_read_the_token_and_is_refused",
            &format!("not root (uid {euid}), so no process of another uid can be started"),
        );
        return;
    }
    let dir = data_dir("other-user");
    let (mut child, url) = start_http_in(&dir, &[], &[]);
    let token = token_in(&dir);
    assert_eq!(ping(&url, Some(&token)), 200, "the owner gets in");
    // This test binary again, as nobody (65534, no groups): it tries to read the file, then calls the server
    // with whatever it could read.
    let probe = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "another_user_probe", "--ignored", "--nocapture", "--test-threads=1"])
        .env(PROBE_VARS[0], dir.join("http-token"))
        .env(PROBE_VARS[1], &url)
        .uid(65534)
        .gid(65534)
        .output()
        .expect("the probe starts as nobody");
    let said = String::from_utf8_lossy(&probe.stdout);
    assert!(probe.status.success(), "{said}\n{}", String::from_utf8_lossy(&probe.stderr));
    assert!(said.contains("read: denied"), "nobody could read the token file: {said}");
    assert!(said.contains("status: 401"), "{said}");
    let _ = child.kill();
    let _ = std::fs::remove_dir_all(&dir);
}

/// The other user's side of [`another_user_cannot_read_the_token_and_is_refused`] (ignored: run only by it).
#[test]
#[ignore = "run by another_user_cannot_read_the_token_and_is_refused under another uid"]
fn another_user_probe() {
    let (Ok(path), Ok(url)) = (std::env::var(PROBE_VARS[0]), std::env::var(PROBE_VARS[1])) else {
        println!("another_user_probe: nothing to do outside its test");
        return;
    };
    let token = match std::fs::read_to_string(&path) {
        Ok(text) => {
            println!("read: ok");
            Some(text.trim().to_owned())
        }
        Err(e) => {
            println!("read: denied ({e})");
            None
        }
    };
    println!("status: {}", ping(&url, token.as_deref()));
}

#[test]
fn a_token_server_keeps_the_default_origins() {
    let (mut child, url) = start_http("token-origins", &[("ZOTERO_MCP_TOKEN", "s3cret-token")]);
    let auth = ("authorization", "Bearer s3cret-token");
    for origin in ["https://claude.ai", "http://localhost:6274"] {
        assert_eq!(browser("POST", &url, &[auth, ("origin", origin)], PING).0, 200, "{origin}");
    }
    let _ = child.kill();
}

#[test]
fn an_oauth_server_on_loopback_answers_loopback_names_only_on_every_route() {
    let (mut child, url) =
        start_http_with("oauth-hosts", &[("AUTH_PASSWORD", "pw")], &["--public-url", "https://mcp.example.org"]);
    // The address printed has the public scheme; the server itself speaks plain http behind its proxy.
    let url = url.replacen("https://", "http://", 1);
    let base = url.trim_end_matches("/mcp");
    let metadata = format!("{base}/.well-known/oauth-authorization-server");
    assert_eq!(browser("GET", &metadata, &[], "").0, 200);
    assert_eq!(browser("GET", &metadata, &[("host", "mcp.example.org")], "").0, 200, "the --public-url host");
    // A page that rebinds evil.example to 127.0.0.1 arrives with its own Host: it can neither reach /mcp nor
    // post guesses to the login form (each would count against the owner's attempts).
    let evil = [("host", "evil.example")];
    assert_eq!(browser("GET", &metadata, &evil, "").0, 403);
    assert_eq!(browser("POST", &url, &evil, PING).0, 403);
    let login = format!("{base}/authorize");
    assert_eq!(browser("POST", &login, &[("host", "evil.example:8787")], "password=guess").0, 403);
    let _ = child.kill();

    // ALLOWED_HOSTS, when set, is the list.
    let (mut child, url) = start_http("oauth-hosts-set", &[("AUTH_PASSWORD", "pw"), ("ALLOWED_HOSTS", "evil.example")]);
    let metadata = format!("{}/.well-known/oauth-authorization-server", url.trim_end_matches("/mcp"));
    assert_eq!(browser("GET", &metadata, &[("host", "evil.example")], "").0, 200);
    assert_eq!(browser("GET", &metadata, &[], "").0, 403);
    let _ = child.kill();
}

#[test]
fn the_stdio_server_answers_each_line_and_exits_when_input_ends() {
    let mut child = Command::new(BIN)
        .args(["serve", "--stdio", "--read-only"])
        .env_clear()
        .env("ZOTERO_MCP_DATA_DIR", data_dir("stdio"))
        .env("ZOTERO_API_KEY", "unused")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"2025-06-18","capabilities":{{}},"clientInfo":{{"name":"t","version":"1"}}}}}}"#).unwrap();
    writeln!(stdin, r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#).unwrap();
    writeln!(stdin, "not json").unwrap();
    writeln!(stdin, r#"{{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{{"_meta":{{"io.modelcontextprotocol/protocolVersion":"1999-01-01","io.modelcontextprotocol/clientCapabilities":{{}}}}}}}}"#).unwrap();
    drop(stdin);
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success());
    let answers: Vec<serde_json::Value> =
        String::from_utf8(output.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(answers.len(), 3, "one answer per request, none for the notification: {answers:?}");
    let by_id = |id: serde_json::Value| answers.iter().find(|a| a["id"] == id).cloned().unwrap();
    assert_eq!(by_id(1.into())["result"]["serverInfo"]["name"], "zotero-mcp");
    assert_eq!(by_id(serde_json::Value::Null)["error"]["code"], -32700);
    assert_eq!(by_id(2.into())["error"]["code"], -32022, "an unsupported modern version is refused");
}

#[test]
fn an_http_server_on_zotero_desktop_serves_its_library_and_files() {
    use zotero_sim::local::Flavour;
    use zotero_sim::server::{LocalOptions, Options};

    let port = std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map(|a| a.port()).unwrap();
    let zotero_dir = data_dir("http-local-zotero");
    let options = Options {
        listen: format!("127.0.0.1:{port}"),
        demo: true,
        api_key: "demo".into(),
        user_id: zotero_sim::DEMO_USER_ID,
        exit_after: Some(60),
        control: false,
        storage_listen: None,
        demo_files_on_zotero_storage: false,
        storage_origin: None,
        demo_groups: false,
        local: Some(LocalOptions {
            flavour: Flavour::Zotero10,
            data_dir: Some(zotero_dir.clone()),
            disabled: false,
            dialog: zotero_sim::local::DialogAnswer::AlwaysAllow,
        }),
    };
    std::thread::spawn(move || zotero_sim::server::run(&options));
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(std::time::Instant::now() < deadline, "zotero-sim did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    while !zotero_dir.join("zotero.sqlite").exists() {
        assert!(std::time::Instant::now() < deadline, "the data directory was not laid out");
        std::thread::sleep(Duration::from_millis(20));
    }
    let local_url = format!("http://127.0.0.1:{port}/api");
    let zotero_dir_text = zotero_dir.display().to_string();
    let vars = [
        ("ZOTERO_MCP_TOKEN", "desktop-token"),
        ("ZOTERO_LOCAL_URL", local_url.as_str()),
        ("ZOTERO_DATA_DIR", zotero_dir_text.as_str()),
        ("HOME", zotero_dir_text.as_str()),
    ];
    let (mut child, url) = start_http_with("http-local", &vars, &["--local"]);
    let client = reqwest::blocking::Client::builder().timeout(Duration::from_secs(30)).build().unwrap();
    let call = |name: &str, arguments: serde_json::Value| -> serde_json::Value {
        let body = serde_json::json!({
            "jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": { "name": name, "arguments": arguments, "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientInfo": { "name": "serve-test", "version": "1" },
                "io.modelcontextprotocol/clientCapabilities": {} } }
        });
        let answer = client
            .post(&url)
            .bearer_auth("desktop-token")
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", "tools/call")
            .header("mcp-name", name)
            .body(body.to_string())
            .send()
            .expect("an answer");
        assert_eq!(answer.status().as_u16(), 200);
        let text = answer.text().expect("a body");
        serde_json::from_str::<serde_json::Value>(&text).expect("JSON")["result"].clone()
    };
    let read = call("zotero_read_attachment", serde_json::json!({ "itemKey": "A6JVMAK4", "fromPage": 1, "toPage": 1 }));
    assert_eq!(read["structuredContent"]["source"], "zotero-desktop", "{read}");
    let libraries = call("zotero_list_libraries", serde_json::json!({}));
    assert_eq!(libraries["structuredContent"]["libraries"][0]["library"], "users/0", "{libraries}");
    let _ = child.kill();
    let _ = std::fs::remove_dir_all(&zotero_dir);
}

/// `tools/list` of the server at `url` with the token, asked for under `host`: the tool names.
fn tool_names(url: &str, token: &str, host: &str) -> Vec<String> {
    let client = reqwest::blocking::Client::builder().timeout(Duration::from_secs(10)).build().unwrap();
    let body = client
        .post(url)
        .bearer_auth(token)
        .header("host", host)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#)
        .send()
        .expect("an answer")
        .text()
        .expect("a body");
    let answer: serde_json::Value = serde_json::from_str(&body).unwrap_or_else(|e| panic!("not JSON ({e}): {body}"));
    let tools = answer["result"]["tools"].as_array().unwrap_or_else(|| panic!("no tools: {answer}"));
    tools.iter().map(|tool| tool["name"].as_str().unwrap_or_default().to_owned()).collect()
}

#[test]
fn test_fixtures_are_warned_of_at_start_and_kept_from_requests_for_another_host() {
    // A token server keeps no Host list of its own, so a proxy's public name reaches it: as behind a reverse proxy.
    let dir = data_dir("fixtures");
    let vars = [("ZOTERO_MCP_TOKEN", "s3cret-token"), ("ENABLE_TEST_FIXTURES", "1")];
    let ((mut child, url), lines) = start_http_lines(&dir, &vars, &[]);
    let said = lines.join("\n");
    assert!(said.contains("warning: ENABLE_TEST_FIXTURES=1 is set"), "{said}");
    let port = url.split(':').nth(2).and_then(|rest| rest.split('/').next()).expect("a port").to_owned();

    let local = tool_names(&url, "s3cret-token", &format!("127.0.0.1:{port}"));
    assert!(local.iter().any(|name| name == "fixture_echo"), "{local:?}");
    let proxied = tool_names(&url, "s3cret-token", "zotero.example");
    assert!(!proxied.iter().any(|name| name.starts_with("fixture_")), "{proxied:?}");
    assert!(proxied.iter().any(|name| name == "zotero_search"), "{proxied:?}");
    let _ = child.kill();

    let ((mut quiet, _), lines) = start_http_lines(&data_dir("no-fixtures"), &vars[..1], &[]);
    assert!(!lines.join("\n").contains("ENABLE_TEST_FIXTURES"), "{lines:?}");
    let _ = quiet.kill();
}

#[test]
fn a_read_only_server_lists_no_tool_that_only_writes_and_tool_groups_come_from_the_settings() {
    let token = [("ZOTERO_MCP_TOKEN", "s3cret-token")];
    let ((mut child, url), _) = start_http_lines(&data_dir("read-only-list"), &token, &["--read-only"]);
    let reading = tool_names(&url, "s3cret-token", "127.0.0.1");
    let _ = child.kill();
    assert!(reading.contains(&"zotero_notes".to_owned()), "a tool with reading modes stays: {reading:?}");
    for only_writes in ["zotero_create_items", "zotero_put_attachment", "zotero_import_reference", "zotero_undo"] {
        assert!(!reading.contains(&only_writes.to_owned()), "{only_writes}: {reading:?}");
    }

    // TOOL_GROUPS from the config file, as from the environment: the Worker's names.
    let dir = data_dir("tool-groups");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("config.toml");
    std::fs::write(&file, "TOOL_GROUPS = \"read, files\"\n").unwrap();
    let ((mut child, url), _) = start_http_lines(&dir, &token, &["--config", file.to_str().unwrap()]);
    let offered = tool_names(&url, "s3cret-token", "127.0.0.1");
    let _ = child.kill();
    assert!(offered.contains(&"zotero_read_attachment".to_owned()), "{offered:?}");
    assert!(!offered.contains(&"zotero_create_items".to_owned()), "write is not offered: {offered:?}");
    assert!(!offered.contains(&"zotero_retrieve".to_owned()), "research is not offered: {offered:?}");
    let _ = std::fs::remove_dir_all(&dir);
}
