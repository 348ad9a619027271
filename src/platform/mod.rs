//! The platform seams (defined in the core crate) and, on wasm, their Worker implementations.

pub use zotero_mcp_core::platform::*;

#[cfg(target_arch = "wasm32")]
pub mod worker;
