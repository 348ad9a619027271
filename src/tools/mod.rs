//! The tools, resources and prompts this server offers, one module per group.
//!
//! To add a tool: declare a type implementing [`crate::mcp::Tool`] in the module of its group (typed input with
//! doc comments and `#[validate]` bounds, typed output, `SPEC`, `render`, `call`), then register it below.
//! Write tools use `ToolSpec::write`, and the registry refuses them on read-only grants.

pub mod fixtures;

use crate::config::Config;
use crate::mcp::Registry;

/// The catalogue for this deployment. Built per request; registration is cheap (no schema is generated until
/// a client lists the tools).
pub fn registry(config: &Config) -> Registry {
    let mut registry = Registry::new();
    if config.test_fixtures {
        fixtures::register(&mut registry);
    }
    registry
}
