//! The MCP endpoint: JSON-RPC framing, the two protocol eras, and the registry of tools, resources and prompts.

pub mod apps;
pub mod arguments;
pub mod content;
pub mod dispatch;
pub mod error;
pub mod jsonrpc;
pub mod origin;
#[cfg(feature = "check-outputs")]
pub mod output_check;
pub mod pipeline;
pub mod protocol;
pub mod published;
pub mod registry;
pub mod reply;
pub mod schema;
pub mod stdio;
pub mod tool;
pub mod transport;
pub mod uri_template;

pub use registry::{Access, CacheHint, Confirmation, Declare, Registry, Tool, ToolError, ToolSpec};
