//! JSON Schemas for tool inputs and outputs, generated from the Rust types so they cannot drift from the code.
//!
//! Every schema is a self-contained JSON Schema 2020-12 object: sub-schemas are inlined because several MCP
//! clients cannot follow `$ref`, and the root is always `"type": "object"` because 2025-era clients require it.

use schemars::generate::SchemaSettings;
use schemars::JsonSchema;
use serde_json::{Map, Value};

/// The schema of `T`, inlined, without the `$schema` and `title` noise at the root.
pub fn schema_for<T: JsonSchema>() -> Map<String, Value> {
    let generator = SchemaSettings::draft2020_12()
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
        })
        .into_generator();
    let schema = generator.into_root_schema_for::<T>();
    let mut object = match schema.to_value() {
        Value::Object(map) => map,
        // `true`/`false` schemas: a tool with no arguments. Spell it out as an empty object schema.
        _ => Map::new(),
    };
    object.remove("title");
    object.remove("$schema");
    object.entry("type").or_insert_with(|| Value::String("object".into()));
    if object.get("type").and_then(Value::as_str) == Some("object") {
        object.entry("properties").or_insert_with(|| Value::Object(Map::new()));
    }
    object
}

/// Whether a schema (or any schema inside it) refers to another with `$ref`.
pub fn contains_ref(value: &Value) -> bool {
    match value {
        Value::Object(map) => map.contains_key("$ref") || map.contains_key("$defs") || map.values().any(contains_ref),
        Value::Array(items) => items.iter().any(contains_ref),
        _ => false,
    }
}
