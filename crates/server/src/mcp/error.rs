//! Why a tool call failed: the one error type every tool returns, shown to the model as an `isError` result.

use crate::config::IndexSetupError;
use crate::confirm::Unconfirmed;
use crate::context::{NotConfirmed, WriterRefused};
use crate::journal::JournalError;

/// Why a tool call failed. Every message says what went wrong and what to do next; it is shown to the model.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// An argument is missing, of the wrong type, or breaks a rule. The value is the problem only: the registry
    /// names the tool when it reports it ([`ToolError::message`]), so a handler cannot name the wrong one.
    #[error("Invalid arguments: {0}")]
    InvalidArguments(String),
    /// A write tool was called on a grant without the write scope.
    #[error(
        "`{tool}` changes the library, but this connection was authorized read-only (it lacks the `zotero:write` \
         scope). Nothing was changed. To allow changes, reconnect this server in your MCP client and tick \
         \"write\" on the consent page."
    )]
    WriteScopeRequired { tool: String },
    /// The deployment leaves the tool's group out (`TOOL_GROUPS`); it is not listed either.
    #[error(
        "`{tool}` is not offered by this server: its operator left the `{group}` tools out (TOOL_GROUPS). Nothing \
         was done. Use the tools tools/list shows, or ask the operator to add `{group}` to TOOL_GROUPS."
    )]
    NotOffered { tool: String, group: &'static str },
    /// The deployment offers no writes (`TOOL_GROUPS` without `write`), whatever the grant.
    #[error(
        "`{tool}` changes the library, but this server is read-only: its operator left `write` out of \
         TOOL_GROUPS. Nothing was changed. To allow changes, the operator adds `write` to TOOL_GROUPS."
    )]
    WritesOff { tool: String },
    /// The answer is over what clients accept (`limit`, the registry's `MAX_RESULT_CHARS`); `advice` says how to
    /// ask for less.
    #[error(
        "The result of {tool} is too large to send ({size} characters; clients accept about {limit}). Nothing was \
         sent, so nothing is lost: {advice}."
    )]
    TooLarge { tool: String, size: usize, limit: usize, advice: String },
    /// No writer for this call (a read-only group or Desktop, an unconfirmed write, an unusable store); the
    /// refusal says why and what to do.
    #[error(transparent)]
    Refused(WriterRefused),
    /// The write did not go ahead: the person is to be asked first (the pipeline answers with the question), said
    /// no, or the answer does not hold.
    #[error(transparent)]
    Unconfirmed(Unconfirmed),
    /// The semantic index's settings are unusable; the message names the setting.
    #[error(transparent)]
    IndexSetup(#[from] IndexSetupError),
    /// The undo journal could not be read or written.
    #[error(transparent)]
    Journal(#[from] JournalError),
    /// The handler failed; the message is already actionable.
    #[error("{0}")]
    Failed(String),
}

impl ToolError {
    /// An argument error: `problem` says which argument breaks which rule, and what to give instead.
    pub fn invalid(problem: impl Into<String>) -> Self {
        ToolError::InvalidArguments(problem.into())
    }

    /// The message the model is shown for a call of `tool`: an argument error names the tool, every other error
    /// is its own message.
    pub fn message(&self, tool: &str) -> String {
        match self {
            ToolError::InvalidArguments(problem) => format!("Invalid arguments for {tool}: {problem}"),
            other => other.to_string(),
        }
    }
}

impl From<WriterRefused> for ToolError {
    fn from(refused: WriterRefused) -> Self {
        match refused {
            WriterRefused::ScopeMissing { tool } => ToolError::WriteScopeRequired { tool: tool.to_owned() },
            WriterRefused::WritesOff { tool } => ToolError::WritesOff { tool: tool.to_owned() },
            refused => ToolError::Refused(refused),
        }
    }
}

impl From<NotConfirmed> for ToolError {
    fn from(refused: NotConfirmed) -> Self {
        match refused {
            NotConfirmed::Writer(refused) => refused.into(),
            NotConfirmed::Unconfirmed(unconfirmed) => ToolError::Unconfirmed(unconfirmed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The registry names the tool an argument error is about; a handler only says what is wrong.
    #[test]
    fn an_argument_error_is_reported_with_the_tools_name() {
        let error = ToolError::invalid("`fromYear` (2021) is after `toYear` (2020)");
        assert_eq!(
            error.message("zotero_search"),
            "Invalid arguments for zotero_search: `fromYear` (2021) is after `toYear` (2020)"
        );
        let other = ToolError::Failed("Zotero did not answer; try again in a minute.".into());
        assert_eq!(other.message("zotero_search"), "Zotero did not answer; try again in a minute.");
    }

    /// An answer over the limit says how large it was, that nothing is lost, and how to ask for less.
    #[test]
    fn a_result_too_large_says_how_to_ask_for_less() {
        let error = ToolError::TooLarge {
            tool: "zotero_search".into(),
            size: 130_000,
            limit: 120_000,
            advice: "ask again for less: a smaller `limit`".into(),
        };
        assert_eq!(
            error.message("zotero_search"),
            "The result of zotero_search is too large to send (130000 characters; clients accept about 120000). \
             Nothing was sent, so nothing is lost: ask again for less: a smaller `limit`."
        );
    }
}
