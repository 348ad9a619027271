//! Everything one MCP request may use, built fresh for each request and dropped with it.

use std::cell::OnceCell;
use std::rc::Rc;

use zotero_mcp_core::zotero::{LibraryKind, ZoteroClient, ZoteroError, ZoteroSettings};

use crate::auth::Grant;
use crate::config::{Config, LibraryType};
use crate::platform::Platform;

/// The per-request context handed to every tool, resource and prompt handler.
pub struct RequestContext {
    /// Who is calling and with which scopes.
    pub grant: Grant,
    /// The deployment's configuration.
    pub config: Rc<Config>,
    /// The runtime services (HTTP, KV, clock).
    pub platform: Platform,
    /// Made on first use, so requests that never touch Zotero (listings, prompts) never need a key.
    zotero: OnceCell<ZoteroClient>,
}

impl RequestContext {
    pub fn new(grant: Grant, config: Rc<Config>, platform: Platform) -> Self {
        Self { grant, config, platform, zotero: OnceCell::new() }
    }

    /// The Zotero client for this request: one per request, so its limiter, backoff gate and library lookup
    /// are shared by everything the request does.
    pub fn zotero(&self) -> Result<&ZoteroClient, ZoteroError> {
        if let Some(client) = self.zotero.get() {
            return Ok(client);
        }
        let settings = ZoteroSettings {
            api_key: self.config.zotero_api_key.clone().unwrap_or_default(),
            library_kind: match self.config.zotero_library_type {
                LibraryType::User => LibraryKind::User,
                LibraryType::Group => LibraryKind::Group,
            },
            library_id: self.config.zotero_library_id.clone(),
            base_url: self.config.zotero_api_base.clone(),
        };
        let client = ZoteroClient::new(settings, self.platform.http.clone(), self.platform.clock.clone())?;
        Ok(self.zotero.get_or_init(|| client))
    }
}
