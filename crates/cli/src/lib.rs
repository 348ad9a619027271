//! The native `zotero-mcp` binary's library: the runtime seams over tokio, reqwest and an embedded store
//! (`native`), the stdio and HTTP front ends of the server crate, the settings, and the OAuth client behind
//! `zotero-mcp get-token`.

// Input must never take the process (or a Worker isolate) down: no `unwrap`, `expect` or `panic!` outside
// tests (clippy.toml lets tests use them). A site that truly cannot fail says why in a local `#[allow]`.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

pub mod commands;
pub mod get_token;
pub mod http_server;
pub mod native;
pub mod panel_files;
pub mod settings;
pub mod stdio;
