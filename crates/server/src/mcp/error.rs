//! Why a tool call failed: the one error type every tool returns, shown to the model as an `isError` result.

use crate::context::WriterRefused;

/// Why a tool call failed. Every message says what went wrong and what to do next; it is shown to the model.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ToolError {
    /// An argument is missing, of the wrong type, or breaks a rule.
    #[error("Invalid arguments for {tool}: {problem}")]
    InvalidArguments { tool: String, problem: String },
    /// A write tool was called on a grant without the write scope.
    #[error(
        "`{tool}` changes the library, but this connection was authorized read-only (it lacks the `zotero:write` \
         scope). Nothing was changed. To allow changes, reconnect this server in your MCP client and tick \
         \"write\" on the consent page."
    )]
    WriteScopeRequired { tool: String },
    /// The handler failed; the message is already actionable.
    #[error("{0}")]
    Failed(String),
}

impl From<WriterRefused> for ToolError {
    fn from(refused: WriterRefused) -> Self {
        match refused {
            WriterRefused::ScopeMissing { tool } => ToolError::WriteScopeRequired { tool: tool.to_owned() },
            WriterRefused::Zotero(error) => ToolError::Failed(error.to_string()),
            WriterRefused::Files(error) => ToolError::Failed(error.to_string()),
            refused @ WriterRefused::ReadOnlyLibrary { .. } => ToolError::Failed(refused.to_string()),
        }
    }
}
