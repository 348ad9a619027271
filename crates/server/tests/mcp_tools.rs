//! The registry's contract for tools, resources and prompts: generated schemas, argument errors, the write-scope
//! check, output that matches its schema.

mod common;

use common::*;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};
use zotero_mcp_server::auth::Grant;
use zotero_mcp_server::call::Session;
use zotero_mcp_server::config::ToolView;
use zotero_mcp_server::context::RequestContext;
use zotero_mcp_server::mcp::schema::{contains_ref, schema_for};
use zotero_mcp_server::mcp::{Registry, Tool, ToolError, ToolSpec};

fn context(grant: Grant) -> Session {
    let app = app();
    Session::new(grant, app.config.clone(), app.platform.clone())
}

async fn call(name: &str, arguments: Value) -> Value {
    let reply = send(&app(), modern("tools/call", json!({ "name": name, "arguments": arguments }))).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    reply.result().clone()
}

fn text_of(result: &Value) -> &str {
    result["content"][0]["text"].as_str().expect("a text block")
}

#[tokio::test]
async fn tools_list_describes_each_tool_completely() {
    // As a grant that may write sees it: fixture_write only writes, so a read-only grant is not shown it.
    let reply = send(&app(), as_writer(modern("tools/list", json!({})))).await;
    let tools = reply.result()["tools"].as_array().unwrap().clone();
    let echo = tools.iter().find(|t| t["name"] == "fixture_echo").expect("fixture_echo listed");
    assert_eq!(echo["title"], "Echo (test fixture)");
    assert_eq!(echo["annotations"]["readOnlyHint"], true);
    assert_eq!(echo["annotations"]["destructiveHint"], false);
    let input = &echo["inputSchema"];
    assert_eq!(input["type"], "object");
    assert_eq!(input["required"], json!(["text"]));
    assert_eq!(input["properties"]["text"]["maxLength"], 200, "validate bounds reach the schema");
    assert_eq!(input["properties"]["repeat"]["maximum"], 5);
    assert_eq!(input["properties"]["repeat"]["default"], 1);
    assert!(input["properties"]["text"]["description"].as_str().unwrap().contains("echo"));
    assert!(input.get("format").is_none() && input["properties"]["repeat"].get("format").is_none());
    let write = tools.iter().find(|t| t["name"] == "fixture_write").expect("fixture_write listed");
    assert_eq!(write["annotations"]["readOnlyHint"], false);
    for tool in &tools {
        for key in ["inputSchema", "outputSchema"] {
            let schema = &tool[key];
            assert_eq!(schema["type"], "object", "{} {key} root must be an object", tool["name"]);
            assert!(!contains_ref(schema), "{} {key} must not use $ref", tool["name"]);
            assert!(schema.get("$schema").is_none());
            jsonschema::draft202012::meta::validate(schema).expect("a valid 2020-12 schema");
        }
    }
}

#[tokio::test]
async fn tool_output_matches_its_advertised_schema() {
    let list = send(&app(), modern("tools/list", json!({}))).await;
    let echo = list.result()["tools"].as_array().unwrap().iter().find(|t| t["name"] == "fixture_echo").unwrap().clone();
    let result = call("fixture_echo", json!({ "text": "hé", "repeat": 3 })).await;
    assert_eq!(result.get("isError"), None);
    assert_eq!(result["structuredContent"], json!({ "echoed": "hé hé hé", "length": 8 }));
    assert_eq!(text_of(&result), "Echo: hé hé hé");
    let validator = jsonschema::draft202012::new(&echo["outputSchema"]).unwrap();
    assert!(validator.is_valid(&result["structuredContent"]));
    // And the input schema accepts what the tool accepts.
    let input = jsonschema::draft202012::new(&echo["inputSchema"]).unwrap();
    assert!(input.is_valid(&json!({ "text": "hé", "repeat": 3 })));
    assert!(!input.is_valid(&json!({ "text": "hé", "repeat": 9 })));
}

#[tokio::test]
async fn argument_errors_name_the_argument_and_the_rule() {
    let cases = [
        (json!({}), "missing field `text`"),
        (json!({ "text": 5 }), "`text`"),
        (json!({ "text": "" }), "`text` must have between 1 and 200"),
        (json!({ "text": "ok", "repeat": 9 }), "`repeat` must be between 1 and 5"),
        (json!({ "text": "ok", "repeat": -1 }), "`repeat`"),
        (json!({ "text": "ok", "colour": "red" }), "unknown field `colour`"),
        (json!("not an object"), "must be a JSON object"),
    ];
    for (arguments, expected) in cases {
        let result = call("fixture_echo", arguments.clone()).await;
        assert_eq!(result["isError"], true, "{arguments}");
        let text = text_of(&result);
        assert!(text.contains("fixture_echo"), "{text}");
        assert!(text.contains(expected), "{arguments}: expected `{expected}` in `{text}`");
    }
}

#[tokio::test]
async fn unknown_tool_is_a_protocol_error_not_a_tool_error() {
    let reply = send(&app(), modern("tools/call", json!({ "name": "no_such_tool", "arguments": {} }))).await;
    assert_eq!((reply.status, reply.error_code()), (200, Some(-32602)));
    assert!(reply.body["error"]["message"].as_str().unwrap().contains("tools/list"));
}

#[tokio::test]
async fn write_tools_refuse_read_only_grants_before_reading_arguments() {
    let registry = zotero_mcp_server::tools::registry(&app().config);
    // Even malformed arguments get the scope answer: nothing about the call is looked at first.
    for arguments in [json!({ "note": "x" }), json!({ "wrong": 1 })] {
        let result = registry.call_tool(&context(Grant::read_only("owner")), "fixture_write", arguments).await.unwrap();
        assert_eq!(result["isError"], true);
        let text = text_of(&result);
        assert!(text.contains("zotero:write") && text.contains("Nothing was changed"), "{text}");
    }
    let allowed = registry
        .call_tool(&context(Grant::read_write("owner")), "fixture_write", json!({ "note": "x" }))
        .await
        .unwrap();
    assert_eq!(allowed["structuredContent"], json!({ "written": true }));
}

#[tokio::test]
async fn the_default_grant_is_read_only() {
    let result = call("fixture_write", json!({ "note": "x" })).await;
    assert_eq!(result["isError"], true);
}

#[tokio::test]
async fn resources_templates_and_prompts_are_served() {
    let app = app();
    let resources = send(&app, modern("resources/list", json!({}))).await;
    let listed = |list: &Value, field: &str| -> Vec<String> {
        list.as_array().unwrap().iter().map(|r| r[field].as_str().unwrap().to_owned()).collect()
    };
    assert!(listed(&resources.result()["resources"], "uri").contains(&"fixture://hello".to_owned()));
    let templates = send(&app, modern("resources/templates/list", json!({}))).await;
    assert!(
        listed(&templates.result()["resourceTemplates"], "uriTemplate").contains(&"fixture://echo/{word}".to_owned())
    );
    let read = send(&app, modern("resources/read", json!({ "uri": "fixture://echo/zotero" }))).await;
    assert_eq!(
        read.result()["contents"][0],
        json!({ "uri": "fixture://echo/zotero", "mimeType": "text/plain", "text": "zotero" })
    );

    let prompts = send(&app, modern("prompts/list", json!({}))).await;
    let fixture_prompt =
        prompts.result()["prompts"].as_array().unwrap().iter().find(|p| p["name"] == "fixture_prompt").unwrap().clone();
    assert_eq!(fixture_prompt["arguments"][0]["required"], true);
    let prompt =
        send(&app, modern("prompts/get", json!({ "name": "fixture_prompt", "arguments": { "topic": "enzymes" } })))
            .await;
    let message = &prompt.result()["messages"][0];
    assert_eq!(message["role"], "user");
    assert!(message["content"]["text"].as_str().unwrap().contains("enzymes"));
    let missing = send(&app, modern("prompts/get", json!({ "name": "fixture_prompt", "arguments": {} }))).await;
    assert_eq!(missing.error_code(), Some(-32602));
    assert!(missing.body["error"]["message"].as_str().unwrap().contains("topic"));
    let unknown = send(&app, modern("prompts/get", json!({ "name": "nope" }))).await;
    assert_eq!(unknown.error_code(), Some(-32602));
}

#[tokio::test]
async fn fixtures_are_absent_unless_enabled() {
    let production = app_with(&[("ENABLE_TEST_FIXTURES", "0")]);
    let reply = send(&production, modern("tools/list", json!({}))).await;
    assert!(reply.result()["tools"]
        .as_array()
        .unwrap()
        .iter()
        .all(|t| !t["name"].as_str().unwrap().starts_with("fixture_")));
}

/// A deliberately broken tool: its output is a list, which no MCP client accepts as structuredContent.
struct ListMaker;

#[derive(Deserialize, JsonSchema)]
struct NoInput {}

impl Tool for ListMaker {
    type Input = NoInput;
    type Output = Vec<String>;
    const SPEC: ToolSpec = ToolSpec::read("list_maker", "List maker", "Returns a list.");
    fn render(output: &Vec<String>) -> String {
        output.join(", ")
    }
    async fn call(_ctx: &RequestContext, _input: NoInput) -> Result<Vec<String>, ToolError> {
        Ok(vec!["a".into()])
    }
}

#[tokio::test]
async fn output_that_is_not_an_object_is_reported_not_sent() {
    let mut registry = Registry::new();
    registry.tool::<ListMaker>();
    let result = registry.call_tool(&context(Grant::read_only("owner")), "list_maker", json!({})).await.unwrap();
    assert_eq!(result["isError"], true);
    assert!(text_of(&result).starts_with("Output validation error"));
    assert!(result.get("structuredContent").is_none());
}

#[test]
fn schemas_inline_nested_types() {
    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct Creator {
        first: String,
        last: String,
    }
    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct Item {
        creators: Vec<Creator>,
        parent: Option<Box<Creator>>,
    }
    let schema = Value::Object(schema_for::<Item>());
    assert!(!contains_ref(&schema), "{schema}");
    assert_eq!(schema["properties"]["creators"]["items"]["properties"]["last"]["type"], "string");
}

/// A tool whose answer is far larger than any client accepts.
struct Flood;

#[derive(Deserialize, JsonSchema)]
struct FloodInput {}

#[derive(serde::Serialize, JsonSchema)]
struct FloodOutput {
    text: String,
}

impl Tool for Flood {
    type Input = FloodInput;
    type Output = FloodOutput;
    const SPEC: ToolSpec = ToolSpec::read("flood", "Flood", "Returns too much.").ask_for_less("a smaller `size`");
    fn render(output: &FloodOutput) -> String {
        output.text.clone()
    }
    async fn call(_ctx: &RequestContext, _input: FloodInput) -> Result<FloodOutput, ToolError> {
        Ok(FloodOutput { text: "x".repeat(200_000) })
    }
}

#[tokio::test]
async fn oversized_results_say_so_instead_of_being_cut_by_the_client() {
    let mut registry = Registry::new();
    registry.tool::<Flood>();
    let result = registry.call_tool(&context(Grant::read_only("owner")), "flood", json!({})).await.unwrap();
    assert_eq!(result["isError"], true);
    let message = text_of(&result);
    assert!(message.contains("too large") && message.contains("a smaller `size`"), "{message}");
}

// ---- the size guard follows the writer ----

#[derive(Deserialize, JsonSchema)]
struct BigInput {
    /// Whether to take the writer before answering.
    write: bool,
}

#[derive(serde::Serialize, JsonSchema)]
struct BigOutput {
    text: String,
}

/// A mixed tool whose answer is larger than any client takes.
struct Big;

impl Tool for Big {
    type Input = BigInput;
    type Output = BigOutput;
    const SPEC: ToolSpec = ToolSpec::mixed("big", "Big", "Answers with 200 000 characters, writing first when asked.");

    fn render(output: &BigOutput) -> String {
        output.text.clone()
    }

    async fn call(ctx: &RequestContext, input: BigInput) -> Result<BigOutput, ToolError> {
        if input.write {
            ctx.writer()?;
        }
        Ok(BigOutput { text: "x".repeat(200_000) })
    }
}

#[tokio::test]
async fn an_oversized_result_is_refused_unless_the_call_took_the_writer() {
    let mut registry = Registry::new();
    registry.tool::<Big>();
    let read = registry.call_tool(&context(Grant::read_write("owner")), "big", json!({ "write": false })).await;
    let read = read.expect("tool exists");
    assert_eq!(read["isError"], true);
    assert!(text_of(&read).contains("too large"), "{}", text_of(&read));
    let wrote = registry.call_tool(&context(Grant::read_write("owner")), "big", json!({ "write": true })).await;
    let wrote = wrote.expect("tool exists");
    assert!(wrote.get("isError").is_none(), "a (possible) write's result is always sent");
    assert_eq!(wrote["structuredContent"]["text"].as_str().map(str::len), Some(200_000));
    let refused = registry.call_tool(&context(Grant::read_only("owner")), "big", json!({ "write": true })).await;
    let refused = refused.expect("tool exists");
    assert_eq!(refused["isError"], true);
    assert!(text_of(&refused).contains("read-only"), "the writer is refused by scope: {}", text_of(&refused));
}

#[test]
fn the_spliced_tools_list_is_what_the_general_path_makes() {
    use zotero_mcp_server::mcp::dispatch::{finish, Era, CATALOGUE_CACHE};
    use zotero_mcp_server::mcp::jsonrpc::result_message;
    use zotero_mcp_server::mcp::transport::tools_list_message;

    let config =
        zotero_mcp_server::config::Config::from_lookup(|name| (name == "ENABLE_TEST_FIXTURES").then(|| "1".to_owned()));
    let registry = zotero_mcp_server::tools::registry(&config);
    let id = json!("req-7");
    for writes in [true, false] {
        let view = ToolView { groups: config.tool_groups, writes, apps: false };
        for era in [Era::Modern, Era::Legacy] {
            let general =
                result_message(&id, finish(era, json!({ "tools": registry.list_tools(view) }), Some(CATALOGUE_CACHE)));
            let spliced = tools_list_message(era, &id, &registry, view);
            assert_eq!(spliced, general.to_string(), "{era:?}: the same text, keys in the same order");
            let parsed: Value = serde_json::from_str(&spliced).expect("valid JSON");
            assert!(parsed["result"]["tools"].as_array().is_some_and(|t| t.len() > 15), "fixtures included");
        }
        // Serialized once per view and isolate, not per request.
        assert!(std::rc::Rc::ptr_eq(&registry.tools_json(view), &registry.tools_json(view)));
    }
}

#[tokio::test]
async fn a_spliced_tool_answer_is_what_the_general_path_makes() {
    use zotero_mcp_server::mcp::dispatch::{answer_message, finish, Answer, Era};
    use zotero_mcp_server::mcp::jsonrpc::result_message;

    let mut registry = Registry::new();
    registry.tool::<Flood>();
    let ctx = context(Grant::read_only("owner"));
    let echo = zotero_mcp_server::tools::registry(&app().config)
        .run_tool(&ctx, "fixture_echo", json!({ "text": "a \"quoted\" line\n", "repeat": 2 }), Default::default())
        .await
        .expect("fixture_echo exists");
    let failed = registry.run_tool(&ctx, "flood", json!({}), Default::default()).await.expect("flood exists");
    assert!(echo.structured.as_deref().is_some_and(|s| s.starts_with('{')) && failed.structured.is_none());
    let id = json!(12);
    for reply in [echo, failed] {
        for era in [Era::Modern, Era::Legacy] {
            let general = result_message(&id, finish(era, reply.to_value(), None));
            let spliced = answer_message(era, &id, Answer::Tool(reply.clone()), None);
            let parsed: Value = serde_json::from_str(&spliced).expect("valid JSON");
            assert_eq!(parsed, general, "{era:?}: the same message");
        }
    }
}
