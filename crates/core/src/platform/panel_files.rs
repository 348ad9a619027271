//! Where the server reads the MCP Apps panels' source files (`apps/panels/`) to answer `resources/read`: the
//! Worker from its static assets (so the panels cost its bundle nothing), the native server from its own copy.

use async_trait::async_trait;

/// The panels' source files, by name (`shared.css`, `bridge.js`, `evidence.html`, …).
#[async_trait(?Send)]
pub trait PanelFiles {
    /// The file's text; `Ok(None)` when there is no such file.
    async fn read(&self, name: &str) -> Result<Option<String>, PanelFilesError>;
}

/// The store of the panels' files did not answer.
#[derive(Debug, Clone, thiserror::Error)]
#[error("the panels' files could not be read ({0})")]
pub struct PanelFilesError(pub String);
