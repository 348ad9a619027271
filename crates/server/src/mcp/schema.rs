//! JSON Schemas for tool inputs and outputs, generated from the Rust types so they cannot drift from the code.
//!
//! Generation runs natively, in `tests/published_schemas.rs`, which writes (or checks) `schemas.json`; the
//! server reads that file ([`super::published`]) and never calls into this module, so none of it reaches the
//! Worker's wasm.
//!
//! Every schema is a self-contained JSON Schema 2020-12 object: sub-schemas are inlined because several MCP
//! clients cannot follow `$ref`, and the root is always `"type": "object"` because 2025-era clients require it.

use schemars::generate::{Contract, SchemaSettings};
use schemars::JsonSchema;
use serde_json::{json, Map, Value};

use super::registry::{Declare, Prompt, Resource, Tool};

/// Collects the schemas of every declared tool and the arguments of every prompt: the content of `schemas.json`.
#[derive(Default)]
pub struct SchemaCollector {
    tools: Map<String, Value>,
    prompts: Map<String, Value>,
}

impl Declare for SchemaCollector {
    fn tool<T: Tool>(&mut self) -> &mut Self {
        let mut input = schema_for::<T::Input>();
        if let Some(properties) = input.get_mut("properties").and_then(Value::as_object_mut) {
            properties.insert(super::registry::LIBRARY_ARGUMENT.to_owned(), library_property());
        }
        let schemas = json!({
            "inputSchema": input,
            "outputSchema": output_schema_for::<T::Output>(),
        });
        self.tools.insert(T::SPEC.name.to_owned(), schemas);
        self
    }

    fn resource<T: Resource>(&mut self) -> &mut Self {
        self
    }

    fn prompt<T: Prompt>(&mut self) -> &mut Self {
        let schema = schema_for::<T::Arguments>();
        let required: Vec<&str> =
            schema["required"].as_array().map(|r| r.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
        let arguments: Vec<Value> = schema["properties"]
            .as_object()
            .map(|properties| {
                properties
                    .iter()
                    .map(|(name, property)| {
                        json!({
                            "name": name,
                            "description": property["description"].as_str().unwrap_or_default(),
                            "required": required.contains(&name.as_str()),
                        })
                    })
                    .collect()
            })
            .unwrap_or_default();
        let mut arguments = arguments;
        arguments.push(json!({
            "name": super::registry::LIBRARY_ARGUMENT,
            "description": "The library to work on: users/<id> or groups/<id>, or a group's name. Default: the configured library.",
            "required": false,
        }));
        self.prompts.insert(T::SPEC.name.to_owned(), Value::Array(arguments));
        self
    }
}

/// The `library` argument every tool takes (the registry handles it, not the tool's input type).
fn library_property() -> Value {
    json!({
        "type": ["string", "null"],
        "description": "The library to work on: users/<id> or groups/<id> (as zotero_list_libraries lists them), or a \
                        group's name. Default: the configured library.",
        "minLength": 1,
        "maxLength": 200,
    })
}

impl SchemaCollector {
    /// The file's text: one line per tool and per prompt, each compact, in declaration order. Compact because
    /// the Worker embeds the file (pretty printing doubled it); a line each so a diff still shows what changed.
    pub fn to_json(&self) -> String {
        let section = |name: &str, entries: &Map<String, Value>| {
            let lines: Vec<String> =
                entries.iter().map(|(key, value)| format!("{}:{}", Value::String(key.clone()), value)).collect();
            format!("\"{name}\":{{\n{}\n}}", lines.join(",\n"))
        };
        format!("{{{},\n{}}}\n", section("tools", &self.tools), section("prompts", &self.prompts))
    }
}

/// The schema of `T` as arguments are read (serde's deserializing rules: a field with a default may be left
/// out), inlined, without the `$schema` and `title` noise at the root.
pub fn schema_for<T: JsonSchema>() -> Map<String, Value> {
    generate::<T>(Contract::Deserialize)
}

/// The schema of `T` as results are written (serde's serializing rules): a field is required exactly when every
/// answer has it, so `#[serde(skip_serializing_if = ..)]` makes it optional and an `Option` without it is
/// required and may be `null`. Validating clients check `structuredContent` against this; the deserializing
/// rules would call a skipped-when-empty list required (issue 34: `pages` in a `mode: "info"` answer).
pub fn output_schema_for<T: JsonSchema>() -> Map<String, Value> {
    generate::<T>(Contract::Serialize)
}

fn generate<T: JsonSchema>(contract: Contract) -> Map<String, Value> {
    let generator = SchemaSettings::draft2020_12()
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
            s.contract = contract;
        })
        .into_generator();
    let schema = generator.into_root_schema_for::<T>();
    let mut object = match schema.to_value() {
        Value::Object(map) => map,
        // `true`/`false` schemas: a tool with no arguments. Spell it out as an empty object schema.
        _ => Map::new(),
    };
    strip_rust_formats(&mut object);
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

/// schemars labels integers with Rust widths (`"format": "uint32"`), which are not JSON Schema formats; client
/// validators warn about every one. The bounds they imply are already in `minimum`/`maximum` where they matter.
fn strip_rust_formats(map: &mut Map<String, Value>) {
    const RUST_FORMATS: &[&str] = &[
        "int", "uint", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "int128", "uint128",
        "float", "double",
    ];
    if map.get("format").and_then(Value::as_str).is_some_and(|f| RUST_FORMATS.contains(&f)) {
        map.remove("format");
    }
    for value in map.values_mut() {
        match value {
            Value::Object(inner) => strip_rust_formats(inner),
            Value::Array(items) => items.iter_mut().filter_map(Value::as_object_mut).for_each(strip_rust_formats),
            _ => {}
        }
    }
}
