//! The tools, resources and prompts this server offers, one module per group.
//!
//! To add a tool: declare a type implementing [`crate::mcp::Tool`] in the module of its group (typed input with
//! doc comments and `#[validate]` bounds, typed output, `SPEC`, `render`, `call`), then register it below.
//! Write tools use `ToolSpec::write`, and the registry refuses them on read-only grants.

pub mod annotations;
pub mod args;
pub mod attachment_file;
pub mod attachments;
pub mod changes;
pub mod check_references;
pub mod collections;
pub mod connector;
pub mod delete_items;
pub mod duplicates;
pub mod export_link;
pub mod fixtures;
pub mod import_reference;
pub mod items;
pub mod libraries;
pub mod mirrored;
pub mod next_step;
pub mod notes;
pub mod paging;
pub mod put_attachment;
pub mod rename_attachments;
pub mod resources;
pub mod retrieve;
pub mod saved_searches;
pub mod search;
pub mod semantic;
pub mod undo;
pub mod update_item;

use std::cell::RefCell;
use std::rc::Rc;

use crate::config::Config;
use crate::mcp::schema::SchemaCollector;
use crate::mcp::{Declare, Registry};

thread_local! {
    /// The catalogues built so far in this isolate (or process), by whether test fixtures are on. A catalogue is
    /// the same for every request of a deployment (it is not user state), and it keeps what it has rendered
    /// (`tools/list` with its schemas), so only an isolate's first request pays for that.
    static BUILT: RefCell<Vec<(bool, Rc<Registry>)>> = const { RefCell::new(Vec::new()) };
}

/// The catalogue for this deployment, built once per isolate. Keyed by the only setting registration reads;
/// a registration that comes to depend on another setting must add it to the key.
pub fn registry(config: &Config) -> Rc<Registry> {
    let fixtures = config.test_fixtures;
    BUILT.with(|built| {
        if let Some((_, registry)) = built.borrow().iter().find(|(f, _)| *f == fixtures) {
            return registry.clone();
        }
        let registry = Rc::new(build(fixtures));
        built.borrow_mut().push((fixtures, registry.clone()));
        registry
    })
}

fn build(test_fixtures: bool) -> Registry {
    let mut registry = Registry::new();
    declare(&mut registry, test_fixtures);
    registry
}

/// The text of `src/mcp/schemas.json`: the schemas of every tool and the arguments of every prompt, test fixtures
/// included, generated from their types. Called natively by `tests/published_schemas.rs` only, so the generator
/// never reaches the Worker.
pub fn generate_schemas() -> String {
    let mut collector = SchemaCollector::default();
    declare(&mut collector, true);
    collector.to_json()
}

/// The catalogue, in the order clients see it.
fn declare(registry: &mut impl Declare, test_fixtures: bool) {
    registry
        .tool::<search::ZoteroSearch>()
        .tool::<semantic::SemanticSearch>()
        .tool::<items::GetItem>()
        .tool::<items::CreateItems>()
        .tool::<update_item::UpdateItem>()
        .tool::<delete_items::DeleteItems>()
        .tool::<collections::ListCollections>()
        .tool::<collections::ManageCollections>()
        .tool::<collections::ListTags>();
    registry.tool::<notes::Notes>();
    registry.tool::<annotations::Annotations>();
    registry.tool::<attachments::ReadAttachment>();
    registry.tool::<put_attachment::PutAttachment>();
    registry.tool::<attachments::DeleteAttachment>();
    registry.tool::<rename_attachments::RenameAttachments>();
    registry.tool::<import_reference::ImportReference>();
    registry.tool::<semantic::Reindex>();
    registry.tool::<duplicates::FindDuplicates>();
    registry.tool::<libraries::ListLibraries>();
    registry.tool::<changes::Changes>();
    registry.tool::<retrieve::Retrieve>();
    registry.tool::<check_references::CheckReferences>();
    registry.tool::<undo::Undo>();
    registry.tool::<export_link::ExportLink>();
    registry.tool::<connector::Search>().tool::<connector::Fetch>();
    registry.tool::<attachment_file::AttachmentFile>();
    resources::register(registry);
    if test_fixtures {
        fixtures::register(registry);
    }
}

/// These core errors already say what to do next: a tool reports them as they are.
macro_rules! failed_with_message {
    ($($error:ty),*) => {$(
        impl From<$error> for crate::mcp::ToolError {
            fn from(error: $error) -> Self {
                crate::mcp::ToolError::Failed(error.to_string())
            }
        }
    )*};
}

failed_with_message!(
    zotero_mcp_core::webdav::WebDavError,
    crate::context::FilesUnavailable,
    crate::library::LibraryRefused
);

/// A write whose outcome is unknown is reported with the tool that reads the objects back.
impl From<zotero_mcp_core::zotero::ZoteroError> for crate::mcp::ToolError {
    fn from(error: zotero_mcp_core::zotero::ZoteroError) -> Self {
        use next_step::NextStep;
        crate::mcp::ToolError::Failed(error.with_next_step())
    }
}

/// A file that cannot be read here is reported with the tool that reads its words another way.
impl From<zotero_mcp_core::attachment::AttachmentError> for crate::mcp::ToolError {
    fn from(error: zotero_mcp_core::attachment::AttachmentError) -> Self {
        use next_step::NextStep;
        crate::mcp::ToolError::Failed(error.with_next_step())
    }
}
