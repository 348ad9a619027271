//! The zotero-mcp server, free of any runtime: the OAuth 2.1 authorization server, the stateless MCP endpoint
//! (both protocol eras), the tools, their Markdown renderings, the pages and the router that joins them.
//!
//! It is generic over the platform seams of the core crate (HTTP out, key/value stores, a clock), so the same
//! code runs in the Cloudflare Worker (the root crate implements the seams over workers-rs) and in the native
//! `zotero-mcp` binary (crates/cli implements them over reqwest, tokio and an embedded store). A request goes
//! `router` → `auth` (bearer check) → `mcp` (transport ladder, dispatch, registry) → `tools` → the core crate.

// Input must never take the process (or a Worker isolate) down: no `unwrap`, `expect` or `panic!` outside
// tests (clippy.toml lets tests use them). A site that truly cannot fail says why in a local `#[allow]`.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

pub mod app;
pub mod auth;
pub mod call;
pub mod config;
pub mod confirm;
pub mod context;
pub mod feeds;
pub mod format;
pub mod grant;
pub mod jobs;
pub mod journal;
pub mod library;
pub mod mcp;
pub mod pages;
pub mod respond;
pub mod router;
pub mod tools;

/// The platform seams, re-exported so the server's modules and its callers name one path.
pub use zotero_mcp_core::platform;
