//! The catalogue: every tool, resource and prompt this server offers, in a fixed order, and how each is listed.
//! A tool is declared in one type ([`Tool`], `super::tool`); running it is the pipeline's (`super::pipeline`),
//! reading a resource or rendering a prompt is `super::content`'s.

use std::rc::Rc;

use serde_json::Value;

use super::content::Contents;
pub use super::content::{
    CacheHint, LookupError, NoVariables, Prompt, PromptMessage, PromptSpec, Resource, ResourceContents, ResourceSpec,
};
pub use super::error::ToolError;
use super::pipeline;
pub use super::published::PromptArgument;
use super::published::Published;
pub use super::reply::ToolReply;
use super::tool::{describe, DynTool, Typed};
pub use super::tool::{Access, Confirmation, Tool, ToolSpec, LIBRARY_ARGUMENT, MAX_RESULT_CHARS, MAX_TEXT_CHARS};
use crate::call::Session;
use crate::config::ToolView;
use crate::confirm::Asking;

/// Where the catalogue's declarations go: the runtime [`Registry`], or the generator of `schemas.json`
/// ([`super::schema::SchemaCollector`], run natively by a test). One list of declarations serves both, and the
/// generator's code (schemars and every type's `JsonSchema`) is reached only from that test, so it is not linked
/// into the Worker.
pub trait Declare {
    fn tool<T: Tool>(&mut self) -> &mut Self;
    /// A resource; a URI with `{…}` is a template.
    fn resource<T: Resource>(&mut self) -> &mut Self;
    fn prompt<T: Prompt>(&mut self) -> &mut Self;
}

impl Declare for Registry {
    fn tool<T: Tool>(&mut self) -> &mut Self {
        Registry::tool::<T>(self)
    }
    fn resource<T: Resource>(&mut self) -> &mut Self {
        Registry::resource::<T>(self)
    }
    fn prompt<T: Prompt>(&mut self) -> &mut Self {
        Registry::prompt::<T>(self)
    }
}

/// Everything this server offers, in a fixed order (clients may cache `tools/list`; it must not vary).
#[derive(Default)]
pub struct Registry {
    tools: Vec<Rc<dyn DynTool>>,
    /// The schemas clients are shown, read from `schemas.json` on first use and kept with the registry.
    published: std::cell::OnceCell<Published>,
    /// `tools/list`'s entries, rendered (schemas and all) on first use and kept with the registry.
    described_tools: std::cell::OnceCell<Vec<Value>>,
    /// The entries one view lists ([`ToolView`]: the deployment's tool groups, and whether the request may
    /// write), as JSON text (up to ~80 KB), serialized on a view's first listing and kept with the registry,
    /// which lives as long as the isolate: a deployment has one set of groups, so two texts at most.
    tools_json: std::cell::RefCell<Vec<(ToolView, Rc<str>)>>,
    contents: Contents,
}

impl Registry {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn tool<T: Tool>(&mut self) -> &mut Self {
        debug_assert!(self.find_tool(T::SPEC.name).is_none(), "tool {} registered twice", T::SPEC.name);
        self.tools.push(Rc::new(Typed::<T>(std::marker::PhantomData)));
        self
    }

    /// Adds a resource; a URI with `{…}` is a template.
    pub fn resource<T: Resource>(&mut self) -> &mut Self {
        self.contents.resource::<T>();
        self
    }

    pub fn prompt<T: Prompt>(&mut self) -> &mut Self {
        self.contents.prompt::<T>();
        self
    }

    fn find_tool(&self, name: &str) -> Option<&Rc<dyn DynTool>> {
        self.tools.iter().find(|t| t.spec().name == name)
    }

    /// The names of the registered tools, in order.
    pub fn tool_names(&self) -> Vec<&'static str> {
        self.tools.iter().map(|t| t.spec().name).collect()
    }

    /// The registered tools' specs, in order.
    pub fn tool_specs(&self) -> Vec<ToolSpec> {
        self.tools.iter().map(|t| *t.spec()).collect()
    }

    /// The specs of the tools a model is offered, in order: all but those only panels call
    /// ([`ToolSpec::app_only`]), which a client without MCP Apps never sees and a host keeps from the model.
    pub fn model_tool_specs(&self) -> Vec<ToolSpec> {
        self.tools.iter().map(|t| *t.spec()).filter(|s| !s.app_only).collect()
    }

    /// Whether the tool named so asks the person before some of its writes ([`ToolSpec::confirms`]).
    pub fn asks_before_writing(&self, name: &str) -> bool {
        self.find_tool(name).is_some_and(|t| t.spec().confirmation == Confirmation::Asks)
    }

    fn published(&self) -> &Published {
        self.published.get_or_init(Published::load)
    }

    /// `tools/list`'s entries, rendered on first use.
    fn described(&self) -> &Vec<Value> {
        self.described_tools.get_or_init(|| {
            let published = self.published();
            self.tools.iter().map(|t| describe(t.spec(), published)).collect()
        })
    }

    /// `tools/list`'s entries for one view, in catalogue order.
    pub fn list_tools(&self, view: ToolView) -> Vec<Value> {
        self.tools
            .iter()
            .zip(self.described())
            .filter(|(t, _)| t.spec().listed_in(view))
            .map(|(t, d)| {
                let mut entry = d.clone();
                if view.apps {
                    let spec = t.spec();
                    let meta = match (spec.app_only, spec.panel) {
                        (true, _) => Some(super::apps::app_only_meta()),
                        (false, Some(panel)) => Some(super::apps::tool_meta(panel)),
                        (false, None) => None,
                    };
                    if let (Some(meta), Some(object)) = (meta, entry.as_object_mut()) {
                        object.insert("_meta".into(), meta);
                    }
                }
                entry
            })
            .collect()
    }

    /// `tools/list`'s `tools` array for one view as JSON text, serialized on the view's first listing and kept
    /// with the registry, so the HTTP transport sends it without building or serializing it again.
    pub fn tools_json(&self, view: ToolView) -> Rc<str> {
        if let Some((_, text)) = self.tools_json.borrow().iter().find(|(v, _)| *v == view) {
            return text.clone();
        }
        let text: Rc<str> = serde_json::to_string(&self.list_tools(view)).unwrap_or_else(|_| "[]".to_owned()).into();
        self.tools_json.borrow_mut().push((view, text.clone()));
        text
    }

    /// Runs a tool (`super::pipeline`), as `asking` allows asking the person. `None` means no tool has that
    /// name (a protocol error, not a tool error).
    pub async fn run_tool(&self, session: &Session, name: &str, arguments: Value, asking: Asking) -> Option<ToolReply> {
        // A tool only panels call does not exist for a client that did not declare MCP Apps.
        let tool = self.find_tool(name).filter(|t| session.apps() || !t.spec().app_only)?;
        Some(pipeline::run_tool(tool.as_ref(), self.published(), session, arguments, asking).await)
    }

    /// [`Registry::run_tool`] for a client that cannot be asked, its reply as the JSON value of a `tools/call`
    /// result.
    pub async fn call_tool(&self, session: &Session, name: &str, arguments: Value) -> Option<Value> {
        Some(self.run_tool(session, name, arguments, Asking::default()).await?.to_value())
    }

    pub fn list_resources(&self) -> Vec<Value> {
        self.contents.list_resources()
    }

    pub fn list_resource_templates(&self) -> Vec<Value> {
        self.contents.list_resource_templates()
    }

    /// Reads a resource by URI: fixed URIs first, then templates in registration order. A URI of another library
    /// than the configured one names it first (`zotero://groups/<id>/item/{key}`), as tools take `library`.
    pub async fn read_resource(
        &self,
        session: &Session,
        uri: &str,
    ) -> Result<(Vec<ResourceContents>, CacheHint), LookupError> {
        self.contents.read_resource(session, uri).await
    }

    pub fn list_prompts(&self) -> Vec<Value> {
        self.contents.list_prompts(self.published())
    }

    pub async fn get_prompt(
        &self,
        session: &Session,
        name: &str,
        arguments: Option<&Value>,
    ) -> Result<Value, LookupError> {
        self.contents.get_prompt(session, self.published(), name, arguments).await
    }
}
