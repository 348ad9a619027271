//! Who is calling and what they may do: the outcome of the bearer check (or, on a local server, of its
//! configuration), handed to the MCP endpoint and from there to every handler.

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
