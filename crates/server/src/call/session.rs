//! One request as the MCP layer receives it: who calls, and the services its calls share.

use std::rc::Rc;

use super::Services;
use crate::config::{Config, ToolGroup, ToolView};
use crate::grant::{Grant, Scope};
use crate::platform::Platform;

/// Who calls and with which scopes, and what the request's calls share. Each call is resolved from it
/// (`RequestContext::resolve`).
pub struct Session {
    pub grant: Grant,
    services: Rc<Services>,
    /// The client declared MCP Apps (`crate::mcp::apps`), as the transport read it off the request.
    apps: std::cell::Cell<bool>,
}

impl Session {
    pub fn new(grant: Grant, config: Rc<Config>, platform: Platform) -> Self {
        Self { grant, services: Rc::new(Services::new(config, platform)), apps: Default::default() }
    }

    /// A session of a request that reached this server at `origin` (scheme and host), for links it hands out.
    pub fn at(grant: Grant, config: Rc<Config>, platform: Platform, origin: String) -> Self {
        Self { grant, services: Rc::new(Services::new(config, platform).with_origin(origin)), apps: Default::default() }
    }

    pub fn services(&self) -> &Rc<Services> {
        &self.services
    }

    /// Which tools this request is shown and may call: the deployment's `TOOL_GROUPS`, and whether it may
    /// write (the grant's `zotero:write` and the `write` group both).
    pub fn tool_view(&self) -> ToolView {
        let groups = self.services.config().tool_groups;
        ToolView {
            groups,
            writes: self.grant.allows(Scope::Write) && groups.contains(ToolGroup::Write),
            apps: self.apps.get(),
        }
    }

    /// Whether the client declared MCP Apps (set by the transport before the request is dispatched).
    pub fn apps(&self) -> bool {
        self.apps.get()
    }

    /// Records that the client declared MCP Apps.
    pub fn set_apps(&self, declared: bool) {
        self.apps.set(declared);
    }

    /// How many outbound requests this request has sent, by every call.
    pub fn requests_sent(&self) -> usize {
        self.services.requests_sent()
    }
}
