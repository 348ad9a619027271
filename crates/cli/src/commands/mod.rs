//! The subcommands of `zotero-mcp`, each a function from its arguments to an exit code.

pub mod get_token;
pub mod reindex;
pub mod serve;
