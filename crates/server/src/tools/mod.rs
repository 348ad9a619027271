//! The tools, resources and prompts this server offers, one module per group.
//!
//! To add a tool: declare a type implementing [`crate::mcp::Tool`] in the module of its group (typed input with
//! doc comments and `#[validate]` bounds, typed output, `SPEC`, `render`, `call`), then register it below.
//! Write tools use `ToolSpec::write`, and the registry refuses them on read-only grants.

pub mod annotations;
pub mod args;
pub mod collections;
pub mod fixtures;
pub mod items;
pub mod notes;
pub mod paging;
pub mod resources;
pub mod search;

use crate::config::Config;
use crate::mcp::Registry;

/// The catalogue for this deployment. Built per request; registration is cheap (no schema is generated until
/// a client lists the tools).
pub fn registry(config: &Config) -> Registry {
    let mut registry = Registry::new();
    registry
        .tool::<search::ZoteroSearch>()
        .tool::<items::GetItem>()
        .tool::<items::CreateItems>()
        .tool::<items::UpdateItem>()
        .tool::<items::DeleteItems>()
        .tool::<collections::ListCollections>()
        .tool::<collections::ManageCollections>()
        .tool::<collections::ListTags>();
    registry.tool::<notes::Notes>();
    registry.tool::<annotations::Annotations>();
    resources::register(&mut registry);
    if config.test_fixtures {
        fixtures::register(&mut registry);
    }
    registry
}

impl From<zotero_mcp_core::zotero::ZoteroError> for crate::mcp::ToolError {
    fn from(error: zotero_mcp_core::zotero::ZoteroError) -> Self {
        crate::mcp::ToolError::Failed(error.to_string())
    }
}
