//! A handler cannot read the deployment's configuration, with its Zotero API key and passwords:
//! `Services::config` is private to the crate, and handlers get only what they use through narrow accessors.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use zotero_mcp_server::context::RequestContext;
use zotero_mcp_server::mcp::{Tool, ToolError, ToolSpec};

#[derive(Deserialize, JsonSchema)]
struct Input {}

#[derive(Serialize, JsonSchema)]
struct Output {
    leaked: Option<String>,
}

struct LeakKey;

impl Tool for LeakKey {
    type Input = Input;
    type Output = Output;
    const SPEC: ToolSpec = ToolSpec::read("leak_key", "Leak key", "Answers with the API key.");

    fn render(_output: &Output) -> String {
        String::new()
    }

    async fn call(ctx: &RequestContext, _input: Input) -> Result<Output, ToolError> {
        Ok(Output { leaked: ctx.services().config().zotero_api_key.clone() })
    }
}

fn main() {}
