//! Who is calling, and what they may do.
//!
//! The OAuth 2.1 authorization server (a later addition) decides which [`Grant`] a request to `/mcp` carries.
//! Until it is in place, [`grant_for_mcp_request`] is the single seam it will replace: every request is served
//! read-only, so no deployment can be written to by an unauthenticated caller.

use crate::config::Config;
use crate::platform::HttpRequest;

/// A permission a grant can carry. The strings are the OAuth scope names the TypeScript project used, kept so
/// existing grants keep working.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scope {
    /// Search and read the library.
    Read,
    /// Create, change and delete items, collections, notes and attachments.
    Write,
}

impl Scope {
    pub const fn as_str(self) -> &'static str {
        match self {
            Scope::Read => "zotero:read",
            Scope::Write => "zotero:write",
        }
    }
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "zotero:read" => Some(Scope::Read),
            "zotero:write" => Some(Scope::Write),
            _ => None,
        }
    }
}

/// The caller's identity and permissions for one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    pub user_id: String,
    pub scopes: Vec<Scope>,
}

impl Grant {
    /// Read access only: what a request gets when nothing grants more.
    pub fn read_only(user_id: impl Into<String>) -> Self {
        Self { user_id: user_id.into(), scopes: vec![Scope::Read] }
    }
    /// Read and write access.
    pub fn read_write(user_id: impl Into<String>) -> Self {
        Self { user_id: user_id.into(), scopes: vec![Scope::Read, Scope::Write] }
    }
    pub fn allows(&self, scope: Scope) -> bool {
        self.scopes.contains(&scope)
    }
}

/// Decides the grant of a request to `/mcp`, or the response that refuses it.
///
/// This is where the bearer-token check goes. For now it grants read access to everyone.
pub fn grant_for_mcp_request(
    _request: &HttpRequest,
    config: &Config,
) -> Result<Grant, Box<crate::platform::HttpResponse>> {
    Ok(Grant::read_only(config.auth_username.clone()))
}
