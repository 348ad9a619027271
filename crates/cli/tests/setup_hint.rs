//! What the native binary tells a person whose Zotero key is missing: set the variable (environment or config
//! file), never the Worker's `wrangler secret put`.

use std::io::Write;
use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_zotero-mcp");

#[test]
fn a_native_server_without_a_key_says_to_set_the_variable_not_to_run_wrangler() {
    let data = std::env::temp_dir().join(format!("zotero-mcp-setup-hint-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&data);
    let mut child = Command::new(BIN)
        .args(["serve", "--stdio", "--read-only"])
        .env_clear()
        .env("ZOTERO_MCP_DATA_DIR", &data)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the binary starts");
    let mut stdin = child.stdin.take().expect("stdin");
    let call =
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"zotero_search","arguments":{"query":"x"}}}"#;
    writeln!(stdin, "{call}").expect("write");
    drop(stdin);
    let output = child.wait_with_output().expect("it exits when input ends");
    let _ = std::fs::remove_dir_all(&data);
    let answer: serde_json::Value = serde_json::from_slice(&output.stdout).expect("one JSON answer");
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    let message = answer["result"]["content"][0]["text"].as_str().unwrap_or_default();
    assert!(message.contains("ZOTERO_API_KEY is not set"), "{message}");
    assert!(message.contains("set ZOTERO_API_KEY in the environment or as `ZOTERO_API_KEY = \"…\"`"), "{message}");
    assert!(!message.contains("wrangler"), "{message}");
}
