//! Everything one MCP request may use, built fresh for each request and dropped with it.

use std::rc::Rc;

use crate::auth::Grant;
use crate::config::Config;
use crate::platform::Platform;

/// The per-request context handed to every tool, resource and prompt handler.
pub struct RequestContext {
    /// Who is calling and with which scopes.
    pub grant: Grant,
    /// The deployment's configuration.
    pub config: Rc<Config>,
    /// The runtime services (HTTP, KV, clock).
    pub platform: Platform,
}
