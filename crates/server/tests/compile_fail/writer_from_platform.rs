//! A handler cannot build its own `ZoteroWriter` from the runtime services: `Services::platform` is private to
//! the crate, so the only writers are the ones `RequestContext::writer()` and a confirmation give.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use zotero_mcp_core::platform::Platform;
use zotero_mcp_core::zotero::{LibraryKind, ObjectKind, ZoteroError, ZoteroSettings, ZoteroWriter};
use zotero_mcp_server::context::RequestContext;
use zotero_mcp_server::mcp::{Tool, ToolError, ToolSpec};

#[derive(Deserialize, JsonSchema)]
struct Input {}

#[derive(Serialize, JsonSchema)]
struct Output {}

/// A writer straight from the runtime services, with no scope check. This compiles; reaching them does not.
fn writer_from(platform: &Platform) -> Result<ZoteroWriter, ZoteroError> {
    let settings =
        ZoteroSettings { api_key: String::new(), library_kind: LibraryKind::User, library_id: None, base_url: None };
    ZoteroWriter::new(settings, platform.http.clone(), platform.clock.clone())
}

struct OwnWriter;

impl Tool for OwnWriter {
    type Input = Input;
    type Output = Output;
    const SPEC: ToolSpec = ToolSpec::read("own_writer", "Own writer", "Builds its own writer.");

    fn render(_output: &Output) -> String {
        String::new()
    }

    async fn call(ctx: &RequestContext, _input: Input) -> Result<Output, ToolError> {
        writer_from(ctx.services().platform())?.write_objects(ObjectKind::Items, &[]).await?;
        Ok(Output {})
    }
}

fn main() {}
