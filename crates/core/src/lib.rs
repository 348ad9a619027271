//! The runtime-agnostic core of zotero-mcp.
//!
//! Nothing here knows about Cloudflare Workers. Everything that touches the outside world goes through the
//! platform seams in [`platform`] (an HTTP client, a key/value store with expiry, a clock), which the Worker
//! implements over its bindings and tests implement in memory. That keeps every piece of library logic testable
//! with a plain `cargo test` on the host.

// Input must never take the process (or a Worker isolate) down: no `unwrap`, `expect` or `panic!` outside
// tests (clippy.toml lets tests use them). A site that truly cannot fail says why in a local `#[allow]`.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

pub mod attachment;
pub mod bibliography;
pub mod calendar;
pub mod desktop;
pub mod duplicates;
pub mod file_changes;
pub mod files;
pub mod html_text;
pub mod index;
pub mod join;
pub mod mirror;
pub mod net;
pub mod pdf;
pub mod platform;
pub mod refcheck;
pub mod retrieve;
pub mod sort;
pub mod sources;
pub mod webdav;
pub mod write_gate;
pub mod zotero;
pub mod zotero_storage;

#[cfg(any(test, feature = "testing"))]
pub mod testing;
