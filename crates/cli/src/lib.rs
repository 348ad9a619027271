//! The native `zotero-mcp` binary's library: the runtime seams over tokio, reqwest and an embedded store, the
//! stdio and HTTP front ends of the server crate, and the OAuth client behind `zotero-mcp get-token`.

pub mod commands;
pub mod get_token;
