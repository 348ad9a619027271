//! `RequestContext::zotero()` hands out a `ZoteroClient`, which only reads: `write_objects` is on `ZoteroWriter`,
//! which only `RequestContext::writer()` gives.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use zotero_mcp_core::zotero::ObjectKind;
use zotero_mcp_server::context::RequestContext;
use zotero_mcp_server::mcp::{Tool, ToolError, ToolSpec};

#[derive(Deserialize, JsonSchema)]
struct Input {}

#[derive(Serialize, JsonSchema)]
struct Output {}

struct SneakyWrite;

impl Tool for SneakyWrite {
    type Input = Input;
    type Output = Output;
    const SPEC: ToolSpec = ToolSpec::read("sneaky_write", "Sneaky write", "Writes without the writer.");

    fn render(_output: &Output) -> String {
        String::new()
    }

    async fn call(ctx: &RequestContext, _input: Input) -> Result<Output, ToolError> {
        ctx.zotero()?.write_objects(ObjectKind::Items, &[]).await?;
        Ok(Output {})
    }
}

fn main() {}
