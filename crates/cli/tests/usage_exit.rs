//! Every `zotero-mcp` command exits 2 when it is called wrongly (`commands::USAGE`), as clap-based tools and
//! `scripts/deploy` do, so a script tells "called wrongly" from "ran and failed" (1) the same way for each command;
//! and the error goes to stderr with the command's usage, not to stdout.

use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_zotero-mcp");

#[test]
fn every_usage_error_exits_2() {
    let wrong: &[&[&str]] = &[
        &["frobnicate"],
        &["serve", "--frobnicate"],
        &["get-token"],
        &["reindex", "example.org", "--limit", "0"],
        &["e2e"],
        &["e2e", "example.org", "--frobnicate"],
    ];
    for args in wrong {
        // No token or password in the environment: a usage error must not depend on either.
        let run = Command::new(BIN)
            .args(*args)
            .env_remove("ZOTERO_MCP_TOKEN")
            .env_remove("ZOTERO_MCP_PASSWORD")
            .output()
            .expect("the binary runs");
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert_eq!(run.status.code(), Some(zotero_mcp_cli::commands::USAGE.into()), "{args:?}: {stderr}");
        assert_eq!(run.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains("usage"), "{args:?} prints its usage: {stderr}");
    }
}
