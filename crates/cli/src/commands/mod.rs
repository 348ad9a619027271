//! The subcommands of `zotero-mcp`, each a function from its arguments to an exit code.

pub mod e2e;
pub mod get_token;
pub(crate) mod mcp_client;
pub mod reindex;
pub mod serve;

use std::process::ExitCode;

/// The exit status of every usage error (an unknown command, a bad or missing argument), whatever the command: 2,
/// as clap-based tools and `scripts/deploy` use, so a script tells "called wrongly" from "ran and failed" (1) the
/// same way for each. `crates/cli/tests/usage_exit.rs` holds every command to it.
pub const USAGE: u8 = 2;

/// [`USAGE`] as the process's exit code.
pub fn usage() -> ExitCode {
    ExitCode::from(USAGE)
}
