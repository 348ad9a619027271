//! The output-schema check can fail: a wrong answer is caught, both by `output_check::mismatch` against a
//! published schema and by `Registry::run_tool` (the `check-outputs` feature, on in these tests), which stops
//! the test that made it. Every other test only ever shows it passing.

mod common;

use common::*;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use zotero_mcp_server::auth::Grant;
use zotero_mcp_server::call::Session;
use zotero_mcp_server::context::RequestContext;
use zotero_mcp_server::mcp::output_check::mismatch;
use zotero_mcp_server::mcp::published::Published;
use zotero_mcp_server::mcp::{Registry, Tool, ToolError, ToolSpec};

#[test]
fn an_answer_outside_the_published_schema_is_named_path_by_path() {
    let published = Published::load();
    let schema = published.output_schema("zotero_changes").expect("zotero_changes publishes an output schema");
    let arguments = json!({ "limit": 2 });
    // `truncated` of the wrong type, `totals` missing, a list entry without its version.
    let wrong = json!({
        "library": "users/1",
        "changed": { "items": [{ "key": "ABCD2345" }] },
        "truncated": "no",
    });
    let found = mismatch("zotero_changes", &arguments, &wrong.to_string(), schema).expect("the answer is caught");
    assert!(found.contains("does not match its published outputSchema"), "{found}");
    assert!(found.contains("at `/truncated`"), "{found}");
    assert!(found.contains("totals"), "{found}");
    assert!(found.contains("at `/changed/items/0`"), "{found}");
    assert!(found.contains("arguments: {\"limit\":2}"), "{found}");

    let not_json = mismatch("zotero_changes", &arguments, "{not json", schema).expect("caught");
    assert!(not_json.contains("not JSON"), "{not_json}");

    let right = json!({ "library": "users/1", "changed": {}, "totals": {}, "truncated": false });
    assert_eq!(mismatch("zotero_changes", &arguments, &right.to_string(), schema), None);
}

/// `fixture_echo`'s input, answered with the wrong output type: `length` as text, which its published schema
/// says is an integer.
#[derive(Deserialize, JsonSchema)]
pub struct EchoInput {
    pub text: String,
}

#[derive(Serialize, JsonSchema)]
pub struct WrongOutput {
    pub echoed: String,
    pub length: String,
}

struct WrongEcho;

impl Tool for WrongEcho {
    type Input = EchoInput;
    type Output = WrongOutput;
    const SPEC: ToolSpec = ToolSpec::read("fixture_echo", "Echo answered wrongly", "A tool whose answer is wrong.");

    fn render(output: &WrongOutput) -> String {
        output.echoed.clone()
    }

    async fn call(_ctx: &RequestContext, input: EchoInput) -> Result<WrongOutput, ToolError> {
        Ok(WrongOutput { echoed: input.text, length: "one".into() })
    }
}

#[tokio::test]
#[should_panic(expected = "the answer of fixture_echo does not match its published outputSchema")]
async fn the_registry_stops_a_test_whose_tool_answers_outside_its_schema() {
    let app = app();
    let mut registry = Registry::new();
    registry.tool::<WrongEcho>();
    let ctx = Session::new(Grant::read_only("owner"), app.config.clone(), app.platform.clone());
    registry.call_tool(&ctx, "fixture_echo", json!({ "text": "hi" })).await;
}
