//! The native `zotero-mcp` binary's library: the runtime seams over tokio, reqwest and an embedded store
//! (`native`), the stdio and HTTP front ends of the server crate, the settings, and the OAuth client behind
//! `zotero-mcp get-token`.

pub mod commands;
pub mod get_token;
pub mod http_server;
pub mod native;
pub mod settings;
pub mod stdio;
