//! What every route can use: the configuration, the runtime services and how `/mcp` learns who is calling.

use std::rc::Rc;

use crate::config::Config;
use crate::grant::Grant;
use crate::platform::Platform;

/// How the MCP endpoint decides who is calling.
#[derive(Clone)]
pub enum McpAccess {
    /// Bearer tokens issued by this server's own OAuth flow: the Worker, and a native HTTP server with
    /// `AUTH_PASSWORD` set.
    OAuth,
    /// One fixed bearer token, stored as its SHA-256 (hex): a native HTTP server for one person, configured with
    /// `ZOTERO_MCP_TOKEN`. Every request carrying it gets `grant`.
    StaticToken { token_sha256: String, grant: Grant },
    /// No token at all: the native server on stdio, or on loopback for its own user, where whoever can reach it
    /// already runs as that user. Every request gets the grant.
    Trusted(Grant),
}

/// The configuration, the runtime services and the access mode, shared by every route of one request.
#[derive(Clone)]
pub struct App {
    pub config: Rc<Config>,
    pub platform: Platform,
    pub access: McpAccess,
}

impl App {
    /// An app whose `/mcp` takes tokens from its own OAuth server: what the Worker runs.
    pub fn with_oauth(config: Config, platform: Platform) -> Self {
        Self { config: Rc::new(config), platform, access: McpAccess::OAuth }
    }
}
