//! The subcommands of `zotero-mcp`, each a function from its arguments to an exit code.

pub mod e2e;
pub mod get_token;
pub(crate) mod mcp_client;
pub mod reindex;
pub mod serve;
