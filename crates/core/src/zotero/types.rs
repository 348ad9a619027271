//! The shapes Zotero returns. Item data stays a JSON map: every item type has its own field set, and the tools
//! need all of them (rendering uses a deny-list, not an allow-list), so a fixed struct would lose fields.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The fields of an item that are Zotero's record of the object, not part of the work it describes: which object
/// it is (`key`), which of its states (`version`), when it was added and last changed, and whether it is in the
/// trash. Caller-given item data never carries them into a write: `POST /items` with an existing `key` and its
/// `version` writes over that item (a "create" that replaces a paper, files and all), and the others would rewrite
/// the library's history or trash items behind the tools that ask first. Zotero's editable JSON includes them
/// (sync clients send them back), so the API itself does not refuse them: this list is where we do.
pub const MANAGED_FIELDS: [&str; 5] = ["key", "version", "dateAdded", "dateModified", "deleted"];

/// An item or a collection as the API returns it: `{key, version, meta, data, …}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ZoteroObject {
    pub key: String,
    pub version: u64,
    #[serde(default)]
    pub meta: Map<String, Value>,
    #[serde(default)]
    pub data: Map<String, Value>,
}

impl ZoteroObject {
    /// A string field of `data`, when present and non-empty.
    pub fn field(&self, name: &str) -> Option<&str> {
        self.data.get(name).and_then(Value::as_str).filter(|s| !s.is_empty())
    }
    /// Whether the object is in the trash (`deleted` is 1 or true).
    pub fn is_trashed(&self) -> bool {
        self.data.get("deleted").is_some_and(|d| d.as_bool().unwrap_or(false) || d.as_u64().unwrap_or(0) > 0)
    }

    /// `data.itemType` (items only).
    pub fn item_type(&self) -> Option<&str> {
        self.field("itemType")
    }
}

/// One page or several pages of a listing.
#[derive(Debug, Clone, PartialEq)]
pub struct Page<T> {
    pub items: Vec<T>,
    /// `Total-Results` of the listing, when Zotero sent it: how many match in all, beyond what was fetched.
    pub total_results: Option<u64>,
    /// The library version the listing reflects.
    pub library_version: u64,
}

/// A tag with how it was added and how many items carry it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Tag {
    pub tag: String,
    /// 0 = added by the user, 1 = automatic (imported or extracted).
    pub kind: u8,
    pub num_items: u64,
}

/// Stored full text of an attachment.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FullText {
    pub content: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub indexed_pages: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_pages: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub indexed_chars: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_chars: Option<u64>,
}

/// `format=versions`: each object's version, and the library's.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Versions {
    pub versions: BTreeMap<String, u64>,
    pub library_version: u64,
}

/// `/deleted?since=`: keys removed since a version.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
pub struct Deleted {
    #[serde(default)]
    pub items: Vec<String>,
    #[serde(default)]
    pub collections: Vec<String>,
    #[serde(default)]
    pub searches: Vec<String>,
    #[serde(default)]
    pub tags: Vec<String>,
    #[serde(skip)]
    pub library_version: u64,
}

/// Which kind of object a batch write creates or updates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ObjectKind {
    Items,
    Collections,
}

impl ObjectKind {
    pub fn path_segment(self) -> &'static str {
        match self {
            ObjectKind::Items => "items",
            ObjectKind::Collections => "collections",
        }
    }
}
