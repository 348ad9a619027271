//! Protocol revisions, the server's identity and capabilities.

use serde_json::{json, Value};

/// The stateless revision whose requests carry their own `_meta` envelope.
pub const MODERN_VERSION: &str = "2026-07-28";
/// Every modern revision served.
pub const MODERN_VERSIONS: &[&str] = &[MODERN_VERSION];
/// 2025-era revisions negotiated through `initialize`, newest first. 2026-07-28 is never offered there: a
/// client that speaks it uses the envelope instead.
pub const LEGACY_VERSIONS: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// `_meta` keys of the 2026-07-28 envelope.
pub mod meta {
    pub const PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
    pub const CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
    pub const CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
    pub const LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
    pub const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
}

pub const SERVER_NAME: &str = "zotero-mcp";
pub const SERVER_TITLE: &str = "Zotero";
pub const SERVER_VERSION: &str = env!("CARGO_PKG_VERSION");

pub fn server_info() -> Value {
    json!({ "name": SERVER_NAME, "title": SERVER_TITLE, "version": SERVER_VERSION })
}

/// The same in both eras: tools, resources and prompts, none of which change during a deployment's life, so
/// no `listChanged` or subscriptions.
pub fn capabilities() -> Value {
    json!({ "tools": {}, "resources": {}, "prompts": {} })
}

/// What the server tells a model about choosing its tools, in both `initialize` and `server/discover`.
pub const INSTRUCTIONS: &str = "\
This server gives you one person's Zotero library: their references, collections, tags, notes and \
annotations, and a search that also looks inside the indexed text of their PDFs.

Choosing a tool:
- zotero_search finds items by words (titles, creators, years, and the indexed text of PDFs) and by fields (tags, \
type, collection, years, citation key). Start here; a phrase found only inside a PDF comes back on its parent \
item with the attachment named.
- zotero_get_item reads one item in full (every field, abstract, children) and can export it as BibTeX, RIS, \
CSL-JSON or a formatted citation.
- zotero_list_collections shows the collection tree or one collection's items; zotero_list_tags lists tags.
- zotero_notes reads and writes notes (Markdown in, Zotero note out); zotero_annotations lists what the \
reader highlighted and commented in the PDFs.
- zotero_create_items, zotero_update_item, zotero_delete_items and zotero_manage_collections change the library.

How to work with it:
- Every item, collection and attachment is named by an eight-character key (for example ABCD2345) that \
searches and listings return. Never invent a key.
- Every tool takes an optional `library`: users/<id> or groups/<id> as zotero_list_libraries lists them, or a \
group's name. Without it, tools work on the configured library.
- Ask for small pages; results say when more is available (nextOffset) and how to get it.
- Tools that change the library need the zotero:write scope. If a call says the connection is read-only, tell \
the user to reconnect and allow writing rather than trying another tool.
- If a write reports that an item changed elsewhere, read it again and redo the change on the fresh copy; do \
not retry blindly. Confirm with the user before deleting anything, and report exactly what was and was not \
changed.
- Deletes, merges, replaced files and large renames or retaggings may ask the user directly through a form in \
their client. If a call says the person declined, nothing was changed: do not call it again unless they ask. \
Every change can be turned back with zotero_undo.";
