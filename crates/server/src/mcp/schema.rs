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
        lean_input(&mut input);
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

/// The `library` argument every tool takes (the registry handles it, not the tool's input type), written once
/// here. It has no description: it is in every tool's schema a model reads, so what it takes is said once, in
/// `zotero_list_libraries`' description (which lists the values) and the server's instructions. The registry
/// takes it out of the arguments and `library::select_library` checks it, bounds included.
fn library_property() -> Value {
    json!({ "type": "string" })
}

/// An input schema as a model reads it (every tool's input schema is in the model's context on every turn;
/// `tests/catalogue_budget.rs` measures it). What serde's reading rules already give is left out, meaning is kept:
///
/// - an optional argument is a plain optional property: `Option<T>` publishes `T` (not `["T", "null"]`, no
///   `null` in its enum, no `anyOf` with a null branch, no `default: null`). `null` is still taken: the
///   registry drops a top-level `null` argument as if it were absent (`mcp::arguments`), and serde reads `null`
///   into an `Option` below it. Only a property's own nullability goes: a `null` *inside* a value where it
///   means something (`zotero_update_item`'s `fields`, where null clears a field) stays published;
/// - a choice of fixed strings is one `enum`, not a `oneOf` of constants each with a description of its own:
///   what a choice means goes in the argument's description, once;
/// - the entries of an array are described by the array's own description, not again per entry (a key's
///   pattern says what a key is);
/// - the root's description ("Arguments of …") says nothing the tool's description does not;
/// - `additionalProperties: false` is left to the server, which refuses an unknown argument by name (serde's
///   `deny_unknown_fields`), and `default: false` to the reader: a flag is off unless given.
pub fn lean_input(root: &mut Map<String, Value>) {
    root.remove("description");
    lean(root, false);
}

fn lean(schema: &mut Map<String, Value>, is_property: bool) {
    if is_property {
        drop_null(schema);
    }
    if schema.get("additionalProperties") == Some(&Value::Bool(false)) {
        schema.remove("additionalProperties");
    }
    if schema.get("default") == Some(&Value::Bool(false)) {
        schema.remove("default");
    }
    merge_string_choices(schema);
    if let Some(Value::Object(properties)) = schema.get_mut("properties") {
        for property in properties.values_mut().filter_map(Value::as_object_mut) {
            lean(property, true);
        }
    }
    if let Some(Value::Object(items)) = schema.get_mut("items") {
        items.remove("description");
        lean(items, false);
    }
    if let Some(Value::Object(additional)) = schema.get_mut("additionalProperties") {
        lean(additional, false);
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(Value::Array(branches)) = schema.get_mut(key) {
            branches.iter_mut().filter_map(Value::as_object_mut).for_each(|branch| lean(branch, false));
        }
    }
}

/// An optional property's `null`: out of its type, its enum, its `anyOf` and its default.
fn drop_null(schema: &mut Map<String, Value>) {
    if let Some(Value::Array(types)) = schema.get_mut("type") {
        types.retain(|t| t != "null");
        if types.len() == 1 {
            let only = types.remove(0);
            schema.insert("type".into(), only);
        }
    }
    if let Some(Value::Array(options)) = schema.get_mut("enum") {
        options.retain(|o| !o.is_null());
    }
    if schema.get("default").is_some_and(Value::is_null) {
        schema.remove("default");
    }
    let is_null = |branch: &Value| branch.get("type").and_then(Value::as_str) == Some("null");
    if let Some(Value::Array(branches)) = schema.get("anyOf") {
        if branches.len() == 2 && branches.iter().any(is_null) {
            let kept = branches.iter().find(|b| !is_null(b)).cloned();
            schema.remove("anyOf");
            if let Some(Value::Object(kept)) = kept {
                // The property's own keys (its description above all) win over the type's.
                for (key, value) in kept {
                    schema.entry(key).or_insert(value);
                }
            }
        }
    }
}

/// A `oneOf` whose every branch is fixed strings (a Rust enum with documented variants) as one `enum`.
fn merge_string_choices(schema: &mut Map<String, Value>) {
    let Some(Value::Array(branches)) = schema.get("oneOf") else { return };
    let mut choices = Vec::new();
    for branch in branches {
        if branch.get("type").and_then(Value::as_str) != Some("string") {
            return;
        }
        match (branch.get("const"), branch.get("enum").and_then(Value::as_array)) {
            (Some(constant @ Value::String(_)), None) => choices.push(constant.clone()),
            (None, Some(values)) if values.iter().all(Value::is_string) => choices.extend(values.iter().cloned()),
            _ => return,
        }
    }
    schema.remove("oneOf");
    schema.insert("type".into(), Value::String("string".into()));
    schema.insert("enum".into(), Value::Array(choices));
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
/// rules would call a skipped-when-empty list required (`pages` in a `mode: "info"` answer; `tests/tool_shapes.rs`).
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
