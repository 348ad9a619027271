//! `src/mcp/schemas.json` is what clients are shown; it must be exactly what the Rust types generate.
//!
//! The server reads the file rather than running schemars (which would add ~230 KB to the Worker), so this test
//! is what keeps the two from drifting. After changing a tool's input or output type, a prompt's arguments, or
//! the catalogue, regenerate the file with
//! `UPDATE_SCHEMAS=1 cargo test -p zotero-mcp-server --test published_schemas` and commit it.

use std::path::Path;

#[test]
fn schemas_json_is_what_the_types_generate() {
    let generated = zotero_mcp_server::tools::generate_schemas();
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/mcp/schemas.json");
    if std::env::var_os("UPDATE_SCHEMAS").is_some() {
        std::fs::write(&path, &generated).expect("write schemas.json");
        return;
    }
    let stored = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        stored == generated,
        "src/mcp/schemas.json is out of date with the tools' types. Regenerate it with \
         `UPDATE_SCHEMAS=1 cargo test -p zotero-mcp-server --test published_schemas` and commit the result."
    );
}

#[test]
fn every_declared_tool_and_prompt_is_in_the_file() {
    let generated: serde_json::Value =
        serde_json::from_str(&zotero_mcp_server::tools::generate_schemas()).expect("generated JSON parses");
    let tools = generated["tools"].as_object().expect("tools");
    for name in ["zotero_search", "zotero_find_duplicates", "fixture_echo"] {
        assert!(tools.contains_key(name), "{name} missing");
    }
    for (name, entry) in tools {
        assert_eq!(entry["inputSchema"]["type"], "object", "{name}");
        assert_eq!(entry["outputSchema"]["type"], "object", "{name}");
    }
    assert!(generated["prompts"].as_object().is_some_and(|p| !p.is_empty()));
}
