//! `zotero-mcp`: the zotero-mcp server as a native program. See `zotero-mcp --help`.

// Input must never take the process (or a Worker isolate) down: no `unwrap`, `expect` or `panic!` outside
// tests (clippy.toml lets tests use them). A site that truly cannot fail says why in a local `#[allow]`.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::process::ExitCode;

use zotero_mcp_cli::commands;

const HELP: &str = "\
zotero-mcp: an MCP server for a Zotero library.

usage: zotero-mcp <command> [options]

commands:
  serve --stdio            serve MCP on stdin/stdout (for Claude Desktop, Claude Code and other local clients)
  serve --http [ADDR]      serve MCP over Streamable HTTP (default 127.0.0.1:8787)
  get-token <server-url>   sign in to a zotero-mcp server and print an OAuth access token
  reindex <server>         fill a deployed server's semantic index (AI Search) and wait until it is indexed
  e2e <server>             check a running server end to end (read-only; --write adds a write cycle)
  help                     this text

`zotero-mcp <command> --help` describes each command.";

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let command = args.next();
    let rest: Vec<String> = args.collect();
    match command.as_deref() {
        Some("serve") => commands::serve::main(rest),
        Some("get-token") => commands::get_token::main(rest),
        Some("reindex") => commands::reindex::main(rest),
        Some("e2e") => commands::e2e::main(rest),
        None | Some("help" | "-h" | "--help") => {
            println!("{HELP}");
            ExitCode::SUCCESS
        }
        Some("-V" | "--version") => {
            println!("zotero-mcp {}", env!("CARGO_PKG_VERSION"));
            ExitCode::SUCCESS
        }
        Some(other) => {
            eprintln!("zotero-mcp: unknown command `{other}`\n\n{HELP}");
            commands::usage()
        }
    }
}
