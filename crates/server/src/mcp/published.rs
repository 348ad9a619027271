//! The schemas clients are shown, as published in `schemas.json`.
//!
//! The file is generated from the Rust types ([`super::schema`], by `tests/published_schemas.rs`, which fails
//! when the two differ), so the schemas still cannot drift from the code; the server itself only reads it. That
//! keeps schemars and the `JsonSchema` code of every type out of the Worker (about 230 KB of wasm) and spares an
//! isolate's first `tools/list` from building them.

use serde::Serialize;
use serde_json::{json, Map, Value};

/// The generated file, embedded.
const SCHEMAS_JSON: &str = include_str!("schemas.json");

/// `schemas.json`, read: each tool's input and output schema and each prompt's arguments, by name.
pub struct Published {
    tools: Map<String, Value>,
    prompts: Map<String, Value>,
}

impl Published {
    /// Reads the embedded file. A file that does not parse (only a hand edit can do that; the test catches it)
    /// leaves every schema permissive rather than taking the server down.
    pub fn load() -> Self {
        Self::parse(SCHEMAS_JSON).unwrap_or_else(|| {
            log::error!("schemas.json does not parse; tools are listed with permissive schemas");
            Self { tools: Map::new(), prompts: Map::new() }
        })
    }

    fn parse(text: &str) -> Option<Self> {
        let Value::Object(mut root) = serde_json::from_slice(text.as_bytes()).ok()? else {
            return None;
        };
        let Some(Value::Object(tools)) = root.remove("tools") else {
            return None;
        };
        let Some(Value::Object(prompts)) = root.remove("prompts") else {
            return None;
        };
        Some(Self { tools, prompts })
    }

    /// A tool's input schema and, when it has one, its output schema. A tool missing from the file (declared
    /// after the file was last generated) gets a schema that accepts any object, and no output schema.
    pub fn tool(&self, name: &str) -> (Value, Option<Value>) {
        match self.tools.get(name) {
            Some(entry) => {
                (entry.get("inputSchema").cloned().unwrap_or_else(any_object), entry.get("outputSchema").cloned())
            }
            None => {
                log::warn!("tool {name} has no schema in schemas.json; regenerate it (AGENTS.md)");
                (any_object(), None)
            }
        }
    }

    /// A tool's input schema, when the file has it.
    pub fn input_schema(&self, name: &str) -> Option<&Value> {
        self.tools.get(name)?.get("inputSchema")
    }

    /// A tool's output schema, when the file has one.
    pub fn output_schema(&self, name: &str) -> Option<&Value> {
        self.tools.get(name)?.get("outputSchema")
    }

    /// A prompt's arguments as `prompts/list` shows them.
    pub fn prompt_arguments(&self, name: &str) -> Vec<PromptArgument> {
        let Some(Value::Array(arguments)) = self.prompts.get(name) else {
            return Vec::new();
        };
        arguments
            .iter()
            .filter_map(|argument| {
                Some(PromptArgument {
                    name: argument.get("name")?.as_str()?.to_owned(),
                    description: argument.get("description").and_then(Value::as_str).unwrap_or_default().to_owned(),
                    required: argument.get("required").and_then(Value::as_bool).unwrap_or(false),
                })
            })
            .collect()
    }
}

/// A declared prompt argument, as `prompts/list` shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PromptArgument {
    pub name: String,
    pub description: String,
    pub required: bool,
}

fn any_object() -> Value {
    json!({ "type": "object", "properties": {} })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_file_parses() {
        assert!(Published::parse(SCHEMAS_JSON).is_some());
    }

    #[test]
    fn a_tool_missing_from_the_file_accepts_any_object() {
        let published = Published::parse(r#"{"tools": {}, "prompts": {}}"#).unwrap();
        assert_eq!(published.tool("nope"), (any_object(), None));
        assert!(published.prompt_arguments("nope").is_empty());
    }
}
