//! Shared by the CLI's tests that run the built server against zotero-sim.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

pub const BIN: &str = env!("CARGO_BIN_EXE_zotero-mcp");

/// `zotero-mcp serve --http` on a free loopback port over the simulator at `sim` (its demo key and user), with
/// its state in `data`, bearer `token`, and `settings` besides; returns the process and its `/mcp` URL. The
/// server's log is read on a thread of its own, so it never blocks on a full pipe.
pub fn serve_over_sim(sim: &str, data: &Path, token: &str, settings: &[(&str, &str)]) -> (Child, String) {
    let mut server = Command::new(BIN)
        .args(["serve", "--http", "127.0.0.1:0", "--exit-after", "120"])
        .env_clear()
        .env("ZOTERO_MCP_DATA_DIR", data)
        .env("ZOTERO_API_BASE", sim)
        .env("ZOTERO_API_KEY", "demo")
        .env("ZOTERO_LIBRARY_ID", zotero_sim::DEMO_USER_ID.to_string())
        .env("ZOTERO_MCP_TOKEN", token)
        .envs(settings.iter().copied())
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .expect("the server starts");
    let stderr = server.stderr.take().expect("stderr");
    let mut lines = BufReader::new(stderr).lines();
    let url = loop {
        let line = lines.next().expect("a line naming the address").expect("readable stderr");
        if let Some(rest) = line.split("listening on ").nth(1) {
            break rest.split_whitespace().next().expect("a URL").to_owned();
        }
    };
    std::thread::spawn(move || lines.for_each(drop));
    (server, url)
}
