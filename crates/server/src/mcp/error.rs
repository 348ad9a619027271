//! Why a tool call failed: the one error type every tool returns, shown to the model as an `isError` result.

use serde_json::Value;

use crate::config::IndexSetupError;
use crate::confirm::Unconfirmed;
use crate::context::{NotConfirmed, WriterRefused};

/// Why a tool call failed. Every message says what went wrong and what to do next; it is shown to the model.
#[derive(Debug, thiserror::Error, PartialEq)]
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
    /// The handler failed; the message is already actionable.
    #[error("{0}")]
    Failed(String),
    /// Not an error: the person must confirm the change first. The value is the `input_required` result the
    /// client is sent instead of a tool result (`crate::confirm`).
    #[error("The person must confirm this change first; nothing was changed.")]
    InputRequired(Box<Value>),
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
            WriterRefused::Zotero(error) => ToolError::Failed(error.to_string()),
            WriterRefused::Files(error) => ToolError::Failed(error.to_string()),
            refused @ (WriterRefused::ReadOnlyLibrary { .. }
            | WriterRefused::Unconfirmed { .. }
            | WriterRefused::ReadOnlyDesktop { .. }) => ToolError::Failed(refused.to_string()),
        }
    }
}

impl From<IndexSetupError> for ToolError {
    fn from(error: IndexSetupError) -> Self {
        ToolError::Failed(error.to_string())
    }
}

impl From<NotConfirmed> for ToolError {
    fn from(refused: NotConfirmed) -> Self {
        match refused {
            NotConfirmed::Writer(refused) => refused.into(),
            NotConfirmed::Unconfirmed(Unconfirmed::Ask(question)) => ToolError::InputRequired(question),
            NotConfirmed::Unconfirmed(other) => ToolError::Failed(other.to_string()),
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
}
