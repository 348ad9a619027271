//! Argument types shared by the tools.

use std::borrow::Cow;

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use zotero_mcp_core::zotero::ObjectKey;

/// A Zotero item or collection key as a tool argument: validated while the arguments are parsed, so a malformed
/// key is reported as an argument error (naming the argument and the value) before any request is made.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Key(pub ObjectKey);

impl Key {
    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }
}

impl std::ops::Deref for Key {
    type Target = ObjectKey;
    fn deref(&self) -> &ObjectKey {
        &self.0
    }
}

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        ObjectKey::parse(text.trim()).map(Key).map_err(serde::de::Error::custom)
    }
}

impl std::fmt::Display for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Key {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl JsonSchema for Key {
    fn schema_name() -> Cow<'static, str> {
        "ZoteroKey".into()
    }
    fn inline_schema() -> bool {
        true
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        // No description: the pattern says what a key is, and a model reads this schema in every tool that
        // takes a key (`tests/catalogue_budget.rs` measures that cost); the argument's own doc comment says which object it names.
        json_schema!({
            "type": "string",
            "pattern": crate::mcp::arguments::KEY_PATTERN,
        })
    }
}

/// Turns a list of keys into the core type.
pub fn object_keys(keys: &[Key]) -> Vec<ObjectKey> {
    keys.iter().map(|k| k.0.clone()).collect()
}
