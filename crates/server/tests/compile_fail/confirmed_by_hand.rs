//! A tool whose call is asked about cannot skip the question: the writer of such a call comes from a
//! `Confirmed`, which only `RequestContext::confirm` makes (its field is private).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use zotero_mcp_core::zotero::ObjectKind;
use zotero_mcp_server::context::{Confirmed, RequestContext};
use zotero_mcp_server::mcp::{Tool, ToolError, ToolSpec};

#[derive(Deserialize, JsonSchema)]
struct Input {}

#[derive(Serialize, JsonSchema)]
struct Output {}

struct Unasked;

impl Tool for Unasked {
    type Input = Input;
    type Output = Output;
    const SPEC: ToolSpec = ToolSpec::write("unasked", "Unasked", "Deletes without asking.").confirms();

    fn render(_output: &Output) -> String {
        String::new()
    }

    fn needs_confirmation(_input: &Input) -> bool {
        true
    }

    async fn call(ctx: &RequestContext, _input: Input) -> Result<Output, ToolError> {
        let confirmed = Confirmed { ctx };
        confirmed.writer()?.write_objects(ObjectKind::Items, &[]).await?;
        Ok(Output {})
    }
}

fn main() {}
