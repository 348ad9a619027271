//! The catalogue of tools, resources and prompts, and the typed way to declare each.
//!
//! A tool is one type implementing [`Tool`]: its name, title, description, whether it writes, its typed input
//! and output, how its output reads as Markdown, and its handler, all in one place. The registry does the rest:
//! schemas, argument parsing and validation, the write-scope check, and shaping the result. Because the scope
//! check lives here and a write tool declares itself with [`Access::Write`], a write tool cannot forget it.

use std::collections::HashMap;
use std::rc::Rc;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use super::arguments::parse_arguments;
pub use super::error::ToolError;
pub use super::published::PromptArgument;
use super::published::Published;
pub use super::reply::ToolReply;
use crate::config::{ToolGroup, ToolView};
use crate::context::RequestContext;
use crate::grant::Scope;

/// Whether a tool only reads the library or may change it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Read,
    /// Needs the `zotero:write` scope; the registry checks it before the arguments are even parsed.
    Write,
    /// Reads with some actions and writes with others (one tool, an `action` argument). The registry lets every
    /// call through, so the tool itself must refuse each writing action on a grant without `zotero:write`, before
    /// doing anything else. Clients see `readOnlyHint: false`, because the tool can write.
    Mixed,
}

/// Whether a tool asks the person before its destructive calls. A destructive tool must say one way or the
/// other ([`ToolSpec::confirms`] or [`ToolSpec::destructive_without_confirmation`]), so whoever makes a tool
/// destructive decides about asking in the same line; `tests/catalogue_lists.rs` fails for one that says
/// neither, and for a tool whose `Tool::needs_confirmation` and declaration disagree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Confirmation {
    /// Nothing said: right only for a tool that is not destructive.
    Unsaid,
    /// Some calls are asked about first: the tool implements [`Tool::needs_confirmation`].
    Asks,
    /// Destructive, yet never asked about, for the reason given (shown to no client; it is for reviewers).
    NotAsked(&'static str),
}

/// The fixed facts about a tool, shown to clients in `tools/list`.
#[derive(Debug, Clone, Copy)]
pub struct ToolSpec {
    /// The stable name clients call (kept identical to the TypeScript project's where one exists).
    pub name: &'static str,
    pub title: &'static str,
    /// What the tool does and when to choose it, written for a model.
    pub description: &'static str,
    pub access: Access,
    /// Calling it twice with the same arguments has no further effect.
    pub idempotent: bool,
    /// May remove or overwrite data (only meaningful for write tools). Set only with [`Self::confirmation`].
    pub destructive: bool,
    /// Whether the destructive calls are asked about first, or why not.
    pub confirmation: Confirmation,
    /// Reaches beyond the user's own library and file store (e.g. DOI or arXiv look-ups).
    pub open_world: bool,
    /// How to ask this tool for less, naming its own arguments in backticks ("a smaller `limit`, and `offset` to
    /// page"): the advice of the refusal sent when an answer is too large and [`Tool::shorten`] cannot cut it.
    /// `tests/tool_shapes.rs` checks that every name in it is one of the tool's arguments.
    pub ask_for_less: &'static str,
    /// The group an operator offers or leaves out with `TOOL_GROUPS`: `read` for a reading or mixed tool and
    /// `write` for a writing one unless said otherwise ([`ToolSpec::group`]).
    pub group: ToolGroup,
}

impl ToolSpec {
    /// A read-only tool over the user's own library.
    pub const fn read(name: &'static str, title: &'static str, description: &'static str) -> Self {
        Self {
            name,
            title,
            description,
            access: Access::Read,
            idempotent: true,
            destructive: false,
            confirmation: Confirmation::Unsaid,
            open_world: false,
            ask_for_less: "",
            group: ToolGroup::Read,
        }
    }
    /// A tool that changes the library. Not idempotent and not destructive unless said otherwise.
    pub const fn write(name: &'static str, title: &'static str, description: &'static str) -> Self {
        Self {
            name,
            title,
            description,
            access: Access::Write,
            idempotent: false,
            destructive: false,
            confirmation: Confirmation::Unsaid,
            open_world: false,
            ask_for_less: "",
            group: ToolGroup::Write,
        }
    }
    /// A tool whose reading actions work on any grant and whose writing actions check `zotero:write` themselves
    /// ([`Access::Mixed`]). Use only when the scope depends on an argument; otherwise use `read` or `write`.
    pub const fn mixed(name: &'static str, title: &'static str, description: &'static str) -> Self {
        Self {
            name,
            title,
            description,
            access: Access::Mixed,
            idempotent: false,
            destructive: false,
            confirmation: Confirmation::Unsaid,
            open_world: false,
            ask_for_less: "",
            group: ToolGroup::Read,
        }
    }
    pub const fn idempotent(mut self) -> Self {
        self.idempotent = true;
        self
    }
    /// Destructive, and the calls [`Tool::needs_confirmation`] picks are asked about before they write.
    pub const fn confirms(mut self) -> Self {
        self.destructive = true;
        self.confirmation = Confirmation::Asks;
        self
    }
    /// Destructive, and never asked about: `why` says why a question would not help (there is no plain
    /// `destructive()`, so that a destructive tool cannot leave the question open).
    pub const fn destructive_without_confirmation(mut self, why: &'static str) -> Self {
        self.destructive = true;
        self.confirmation = Confirmation::NotAsked(why);
        self
    }
    pub const fn open_world(mut self) -> Self {
        self.open_world = true;
        self
    }
    /// See [`ToolSpec::ask_for_less`].
    pub const fn ask_for_less(mut self, advice: &'static str) -> Self {
        self.ask_for_less = advice;
        self
    }
    /// Puts the tool in another group than its access implies (`TOOL_GROUPS`).
    pub const fn group(mut self, group: ToolGroup) -> Self {
        self.group = group;
        self
    }
    /// Whether `view` lists this tool: its group is offered, and a tool whose every call writes is shown only
    /// to a request that may write (a read-only grant is not shown tools it can only fail with: `tests/tool_groups.rs`).
    pub fn listed_in(&self, view: ToolView) -> bool {
        view.lists(self.group, self.access == Access::Write)
    }

    fn annotations(&self) -> Value {
        json!({
            "title": self.title,
            "readOnlyHint": self.access == Access::Read,
            "destructiveHint": self.destructive,
            "idempotentHint": self.idempotent,
            "openWorldHint": self.open_world,
        })
    }
}

/// A tool, declared once with typed input and output.
#[allow(async_fn_in_trait)] // Worker futures are single-threaded by design; `Send` is never needed.
pub trait Tool: 'static {
    /// The arguments. Doc comments become schema descriptions; `#[validate(length(..))]`/`range(..)` bounds
    /// appear in the published schema, which is enforced before the handler runs (`mcp::arguments`).
    type Input: DeserializeOwned + JsonSchema;
    /// The structured result, sent as `structuredContent`. Its schema must be an object.
    type Output: Serialize + JsonSchema;

    const SPEC: ToolSpec;

    /// The Markdown shown to clients that ignore `structuredContent`.
    fn render(output: &Self::Output) -> String;

    /// Cuts an answer too large to send to about `fraction` (between 0 and 1) of its size, keeping the first
    /// entries whole and saying where the rest is (`nextOffset`, `truncated`, a note), so the caller continues
    /// instead of asking again blindly. Returns false when nothing is left to cut; the registry then refuses the
    /// answer with [`ToolSpec::ask_for_less`]. Tools whose answers grow with the library implement it.
    fn shorten(_output: &mut Self::Output, _fraction: f64) -> bool {
        false
    }

    /// Whether this call is a destructive write the person is asked to confirm first (deleting, merging, renaming
    /// many files, replacing a file, changing many items' tags). A tool that implements it is declared with
    /// [`ToolSpec::confirms`] (`tests/catalogue_lists.rs` checks both ways). When it says so, the request context refuses the
    /// tool a writer until [`RequestContext::confirm`] has passed: the tool describes what will change in a
    /// [`crate::confirm::Plan`] and confirms it before taking the writer, so it cannot write past the question.
    fn needs_confirmation(_input: &Self::Input) -> bool {
        false
    }

    async fn call(ctx: &RequestContext, input: Self::Input) -> Result<Self::Output, ToolError>;
}

/// The largest tool result sent, in characters of JSON plus Markdown (claude.ai's limit is about 150 000).
pub const MAX_RESULT_CHARS: usize = 120_000;

/// The most characters of document text one answer carries: the text goes out twice (in `structuredContent`
/// and in the Markdown), and the rest of the answer needs room too.
pub const MAX_TEXT_CHARS: usize = (MAX_RESULT_CHARS - 6_000) / 2;

/// How many times an answer is shortened before it is refused (each pass aims below the limit, so one or two
/// passes are the rule).
const MAX_SHORTENINGS: usize = 6;

/// An answer's size as clients count it: characters, not bytes (a Korean page is a third of its UTF-8 bytes).
fn result_chars(structured: &str, markdown: &str) -> usize {
    structured.chars().count() + markdown.chars().count()
}

/// Every tool's `library` argument, handled here once: taken out of the arguments (the tool's own input never
/// sees it) and the call's library chosen from it ([`RequestContext::select_library`]). Absent or null: the
/// configured library, with no request made.
async fn take_library(ctx: &RequestContext, mut arguments: Value) -> Result<Value, ToolError> {
    let given = match arguments.as_object_mut().and_then(|map| map.remove(LIBRARY_ARGUMENT)) {
        None | Some(Value::Null) => return Ok(arguments),
        Some(Value::String(given)) => given,
        Some(_) => return Err(crate::library::LibraryRefused::NotText.into()),
    };
    ctx.select_library(&given).await?;
    Ok(arguments)
}

/// The library part of a resource URI, `zotero://groups/<id>/…` or `zotero://users/<id>/…`, and the URI without
/// it; `None` for a URI of the configured library (which has none).
fn split_library(uri: &str) -> Option<(&str, String)> {
    let rest = uri.strip_prefix("zotero://")?;
    let (kind, after) = rest.split_once('/')?;
    let (id, tail) = after.split_once('/')?;
    if !matches!(kind, "users" | "groups") || id.is_empty() || !id.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((&rest[..kind.len() + 1 + id.len()], format!("zotero://{tail}")))
}

/// The name of the argument every tool takes to work on another library than the configured one.
pub const LIBRARY_ARGUMENT: &str = "library";

/// The object-safe face of a [`Tool`], so tools of different types share one registry.
#[async_trait(?Send)]
trait DynTool {
    fn spec(&self) -> &ToolSpec;
    fn describe(&self, published: &Published) -> Value;
    /// `published` gives the input schema, read only to locate an argument that does not parse.
    async fn call(
        &self,
        ctx: &RequestContext,
        arguments: Value,
        published: &Published,
    ) -> Result<(String, String), ToolError>;
}

/// A tool's `tools/list` entry. Not generic: written once, not once per tool.
fn describe(spec: &ToolSpec, published: &Published) -> Value {
    let (input, output) = published.tool(spec.name);
    let mut tool = json!({
        "name": spec.name,
        "title": spec.title,
        "description": spec.description,
        "inputSchema": input,
    });
    if let Some(output) = output {
        tool["outputSchema"] = output;
    }
    tool["annotations"] = spec.annotations();
    tool
}

struct Typed<T>(std::marker::PhantomData<T>);

#[async_trait(?Send)]
impl<T: Tool> DynTool for Typed<T> {
    fn spec(&self) -> &ToolSpec {
        &T::SPEC
    }

    fn describe(&self, published: &Published) -> Value {
        describe(&T::SPEC, published)
    }

    async fn call(
        &self,
        ctx: &RequestContext,
        arguments: Value,
        published: &Published,
    ) -> Result<(String, String), ToolError> {
        let input: T::Input = parse_arguments(arguments, published.input_schema(T::SPEC.name))?;
        if T::needs_confirmation(&input) {
            // A call that will be asked about is refused here, before the tool reads anything, when it could not
            // write anyway (scope, writes off, a read-only library or Desktop): no tool repeats this check.
            ctx.may_write()?;
            ctx.expect_confirmation();
        }
        let mut output = Fitted::<T>(T::call(ctx, input).await?);
        fit(ctx, T::SPEC.name, &mut output)
    }
}

/// A tool's answer as [`fit`] handles it: the generic part is only what needs the type (rendering, serializing,
/// shortening), so the loop around it is written once, not once per tool (~3 KiB of the Worker's gzip size).
trait Fitting {
    /// The structured answer as JSON text (`None` when it does not serialize), and its Markdown.
    fn answer(&self) -> (Option<String>, String);
    /// [`Tool::shorten`].
    fn shorten(&mut self, fraction: f64) -> bool;
}

struct Fitted<T: Tool>(T::Output);

impl<T: Tool> Fitting for Fitted<T> {
    fn answer(&self) -> (Option<String>, String) {
        // Straight to text, once: no `Value` tree in between (see `ToolReply`).
        (serde_json::to_string(&self.0).ok(), T::render(&self.0))
    }
    fn shorten(&mut self, fraction: f64) -> bool {
        T::shorten(&mut self.0, fraction)
    }
}

/// Renders the answer and, while it is over [`MAX_RESULT_CHARS`], shortens it (at most [`MAX_SHORTENINGS`]
/// times); what is still too large is refused by [`Registry::run_tool`].
fn fit(ctx: &RequestContext, name: &str, output: &mut dyn Fitting) -> Result<(String, String), ToolError> {
    let mut passes = 0;
    loop {
        let (text, markdown) = match output.answer() {
            (Some(text), markdown) if text.starts_with('{') => (text, markdown),
            _ => {
                return Err(ToolError::Failed(format!(
                    "Output validation error: {name} produced a result that is not a JSON object. This is a bug \
                     in the server; please report it."
                )))
            }
        };
        // A write's answer is never shortened: it reports what was changed (see `run_tool`).
        let size = result_chars(&text, &markdown);
        if size <= MAX_RESULT_CHARS || ctx.writer_taken() || passes == MAX_SHORTENINGS {
            return Ok((text, markdown));
        }
        // Aim a tenth under the limit: entries differ in size, and the Markdown shrinks with them.
        let fraction = MAX_RESULT_CHARS as f64 / size as f64 * 0.9;
        if !output.shorten(fraction) {
            return Ok((text, markdown));
        }
        passes += 1;
    }
}

/// One piece of content returned by `resources/read`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceContents {
    pub uri: String,
    pub mime_type: String,
    pub text: String,
}

/// How long a client may reuse a result, and whether it may share it across users (2026-07-28 cache hints).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheHint {
    pub ttl_ms: u64,
    pub public: bool,
}

impl CacheHint {
    /// Do not reuse: the default for anything that reflects the library's current state.
    pub const NONE: CacheHint = CacheHint { ttl_ms: 0, public: false };
    pub const fn private(ttl_ms: u64) -> Self {
        Self { ttl_ms, public: false }
    }
    pub const fn public(ttl_ms: u64) -> Self {
        Self { ttl_ms, public: true }
    }
}

/// A fixed-URI resource, or a family of them described by an RFC 6570 template (`zotero://item/{key}`).
#[derive(Debug, Clone, Copy)]
pub struct ResourceSpec {
    /// A URI, or a URI template with `{name}` expressions.
    pub uri: &'static str,
    pub name: &'static str,
    pub title: &'static str,
    pub description: &'static str,
    pub mime_type: &'static str,
    pub cache: CacheHint,
}

/// Why a resource or prompt could not be served. Sent as a JSON-RPC error (-32602).
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum LookupError {
    #[error("Resource not found: no resource has the URI `{0}`. List the available ones with resources/list and resources/templates/list")]
    ResourceNotFound(String),
    #[error("Prompt not found: {0}")]
    PromptNotFound(String),
    #[error("{0}")]
    InvalidParams(String),
    #[error("{0}")]
    Failed(String),
}

/// A resource (or a template of them), declared once like a tool: its spec, the typed values of its URI
/// template, and its handler.
#[allow(async_fn_in_trait)] // Single-threaded by design, as for tools.
pub trait Resource: 'static {
    /// The values of the URI template's `{expressions}`, by name ([`NoVariables`] for a fixed URI). A value that
    /// does not parse (a malformed item key) is an invalid-params error naming it, before the handler runs.
    type Variables: DeserializeOwned;

    const SPEC: ResourceSpec;

    async fn read(
        ctx: &RequestContext,
        uri: &str,
        variables: Self::Variables,
    ) -> Result<Vec<ResourceContents>, LookupError>;
}

/// The variables of a fixed-URI resource: none.
#[derive(Debug, Deserialize)]
pub struct NoVariables {}

/// A prompt template the user can pick in their client, declared once like a tool.
#[allow(async_fn_in_trait)]
pub trait Prompt: 'static {
    /// The arguments, a struct of strings or of types that parse from one. Its fields become `prompts/list`'s
    /// arguments: the doc comment is the description, and a field that is not an `Option` is required.
    type Arguments: DeserializeOwned + JsonSchema;

    const SPEC: PromptSpec;

    /// Renders the prompt. Required arguments are present and not blank by the time this runs.
    async fn render(ctx: &RequestContext, arguments: Self::Arguments) -> Result<Vec<PromptMessage>, LookupError>;
}

/// The fixed facts about a prompt (its arguments come from [`Prompt::Arguments`]).
#[derive(Debug, Clone, Copy)]
pub struct PromptSpec {
    pub name: &'static str,
    pub title: &'static str,
    pub description: &'static str,
}

/// One message of a rendered prompt.
#[derive(Debug, Clone, PartialEq)]
pub struct PromptMessage {
    pub role: &'static str,
    pub text: String,
}

/// Turns string values into a typed value, naming the value that does not fit.
fn parse_strings<T: DeserializeOwned>(values: &HashMap<String, String>, what: &str) -> Result<T, LookupError> {
    let object: Map<String, Value> = values.iter().map(|(k, v)| (k.clone(), Value::String(v.clone()))).collect();
    T::deserialize(&Value::Object(object)).map_err(|e| {
        let message = e.to_string();
        // Every value here is a string and serde's messages echo the value; name the one echoed (a key that
        // does not parse says "`abc` is not a Zotero key"), or the only one there is.
        let mut echoed = values.iter().filter(|(_, v)| !v.is_empty() && message.contains(v.as_str()));
        let named = match (echoed.next(), echoed.next()) {
            (Some((name, _)), None) => Some(name),
            _ if values.len() == 1 => values.keys().next(),
            _ => None,
        };
        let place = named.map(|name| format!(" `{name}`")).unwrap_or_default();
        LookupError::InvalidParams(format!("{what}{place}: {message}"))
    })
}

/// The object-safe face of a [`Resource`].
#[async_trait(?Send)]
trait DynResource {
    fn spec(&self) -> &ResourceSpec;
    async fn read(
        &self,
        ctx: &RequestContext,
        uri: &str,
        variables: &HashMap<String, String>,
    ) -> Result<Vec<ResourceContents>, LookupError>;
}

#[async_trait(?Send)]
impl<T: Resource> DynResource for Typed<T> {
    fn spec(&self) -> &ResourceSpec {
        &T::SPEC
    }

    async fn read(
        &self,
        ctx: &RequestContext,
        uri: &str,
        variables: &HashMap<String, String>,
    ) -> Result<Vec<ResourceContents>, LookupError> {
        let variables = parse_strings(variables, "in the resource URI, the value of")?;
        T::read(ctx, uri, variables).await
    }
}

/// The object-safe face of a [`Prompt`].
#[async_trait(?Send)]
trait DynPrompt {
    fn spec(&self) -> &PromptSpec;
    async fn render(
        &self,
        ctx: &RequestContext,
        arguments: &HashMap<String, String>,
        declared: &[PromptArgument],
    ) -> Result<Vec<PromptMessage>, LookupError>;
}

#[async_trait(?Send)]
impl<T: Prompt> DynPrompt for Typed<T> {
    fn spec(&self) -> &PromptSpec {
        &T::SPEC
    }

    async fn render(
        &self,
        ctx: &RequestContext,
        arguments: &HashMap<String, String>,
        declared: &[PromptArgument],
    ) -> Result<Vec<PromptMessage>, LookupError> {
        // A blank required argument counts as missing: clients often send the empty string for an untouched
        // field, and "review the collection ``" helps nobody.
        for argument in declared.iter().filter(|a| a.required) {
            if arguments.get(&argument.name).is_none_or(|v| v.trim().is_empty()) {
                return Err(LookupError::InvalidParams(format!(
                    "prompt `{}` needs the argument `{}` ({})",
                    T::SPEC.name,
                    argument.name,
                    argument.description
                )));
            }
        }
        let typed = parse_strings(arguments, &format!("prompt `{}`, argument", T::SPEC.name))?;
        T::render(ctx, typed).await
    }
}

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
    resources: Vec<Rc<dyn DynResource>>,
    templates: Vec<Rc<dyn DynResource>>,
    prompts: Vec<Rc<dyn DynPrompt>>,
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
        let resource: Rc<dyn DynResource> = Rc::new(Typed::<T>(std::marker::PhantomData));
        if T::SPEC.uri.contains('{') {
            self.templates.push(resource);
        } else {
            self.resources.push(resource);
        }
        self
    }

    pub fn prompt<T: Prompt>(&mut self) -> &mut Self {
        self.prompts.push(Rc::new(Typed::<T>(std::marker::PhantomData)));
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

    fn published(&self) -> &Published {
        self.published.get_or_init(Published::load)
    }

    /// `tools/list`'s entries, rendered on first use.
    fn described(&self) -> &Vec<Value> {
        self.described_tools.get_or_init(|| {
            let published = self.published();
            self.tools.iter().map(|t| t.describe(published)).collect()
        })
    }

    /// `tools/list`'s entries for one view, in catalogue order.
    pub fn list_tools(&self, view: ToolView) -> Vec<Value> {
        self.tools
            .iter()
            .zip(self.described())
            .filter(|(t, _)| t.spec().listed_in(view))
            .map(|(_, d)| d.clone())
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

    /// Runs a tool. `None` means no tool has that name (a protocol error, not a tool error).
    pub async fn run_tool(&self, ctx: &RequestContext, name: &str, arguments: Value) -> Option<ToolReply> {
        let tool = self.find_tool(name)?;
        let spec = tool.spec();
        ctx.enter_tool(spec.name);
        #[cfg(feature = "check-outputs")]
        let checked_arguments = arguments.clone();
        let view = ctx.tool_view();
        // A tool a request is not shown answers as clearly as a listed one it may not use: nothing is parsed
        // or read first.
        let outcome = if !view.groups.contains(spec.group) {
            Err(ToolError::NotOffered { tool: name.to_owned(), group: spec.group.name() })
        } else if spec.access == Access::Write && !ctx.grant.allows(Scope::Write) {
            Err(ToolError::WriteScopeRequired { tool: name.to_owned() })
        } else if spec.access == Access::Write && !view.groups.contains(ToolGroup::Write) {
            Err(ToolError::WritesOff { tool: name.to_owned() })
        } else if let Err(error) = ctx.reach_desktop(spec.access != Access::Read).await {
            // Zotero Desktop does not answer: said once, before the tool (every tool needs the library).
            Err(ToolError::Failed(error.to_string()))
        } else {
            match take_library(ctx, arguments).await {
                Ok(arguments) => tool.call(ctx, arguments, self.published()).await,
                Err(error) => Err(error),
            }
        };
        #[cfg(feature = "check-outputs")]
        #[allow(clippy::panic, reason = "check-outputs is on in tests only, where a mismatch must fail the test")]
        if let (Ok((structured, _)), Some(schema)) = (&outcome, self.published().output_schema(spec.name)) {
            if let Some(mismatch) = super::output_check::mismatch(name, &checked_arguments, structured, schema) {
                panic!("{mismatch}");
            }
        }
        let outcome = outcome.and_then(|(structured, markdown)| {
            // A write's result is sent whatever its size: the change is made, and asking again would repeat it.
            // The rule follows the writer, not the declared access, so a mixed tool's writes are covered too.
            if ctx.writer_taken() {
                return Ok((structured, markdown));
            }
            // Clients cut (or refuse) oversized results without saying so: claude.ai at ~150k characters, Claude
            // Code at ~25k tokens. Saying so here lets the model ask for less instead of reading a torn result.
            let size = result_chars(&structured, &markdown);
            if size > MAX_RESULT_CHARS {
                let advice = match spec.ask_for_less {
                    "" => "ask again for less".to_owned(),
                    advice => format!("ask again for less: {advice}"),
                };
                return Err(ToolError::TooLarge { tool: name.to_owned(), size, limit: MAX_RESULT_CHARS, advice });
            }
            Ok((structured, markdown))
        });
        // What the call changed becomes one undo journal entry, whatever the outcome: a call that failed
        // part-way may have changed something too.
        let undo_line = ctx.keep_journal().await;
        let mut reply = match outcome {
            Ok((structured, markdown)) => ToolReply { markdown, structured: Some(structured), asks: None },
            Err(ToolError::InputRequired(question)) => {
                ToolReply { markdown: String::new(), structured: None, asks: Some(question) }
            }
            Err(error) => ToolReply { markdown: error.message(spec.name), structured: None, asks: None },
        };
        for line in [ctx.desktop_dialogs_note(), undo_line].into_iter().flatten() {
            reply.markdown.push_str("\n\n");
            reply.markdown.push_str(&line);
        }
        Some(reply)
    }

    /// [`Registry::run_tool`], its reply as the JSON value of a `tools/call` result.
    pub async fn call_tool(&self, ctx: &RequestContext, name: &str, arguments: Value) -> Option<Value> {
        Some(self.run_tool(ctx, name, arguments).await?.to_value())
    }

    pub fn list_resources(&self) -> Vec<Value> {
        self.resources
            .iter()
            .map(|r| {
                let s = r.spec();
                json!({ "uri": s.uri, "name": s.name, "title": s.title, "description": s.description, "mimeType": s.mime_type })
            })
            .collect()
    }

    pub fn list_resource_templates(&self) -> Vec<Value> {
        self.templates
            .iter()
            .map(|r| {
                let s = r.spec();
                json!({ "uriTemplate": s.uri, "name": s.name, "title": s.title, "description": s.description, "mimeType": s.mime_type })
            })
            .collect()
    }

    /// Reads a resource by URI: fixed URIs first, then templates in registration order. A URI of another library
    /// than the configured one names it first (`zotero://groups/<id>/item/{key}`), as tools take `library`.
    pub async fn read_resource(
        &self,
        ctx: &RequestContext,
        uri: &str,
    ) -> Result<(Vec<ResourceContents>, CacheHint), LookupError> {
        let unprefixed;
        let matched = match split_library(uri) {
            Some((library, rest)) => {
                ctx.select_library(library).await.map_err(|e| LookupError::InvalidParams(e.to_string()))?;
                unprefixed = rest;
                unprefixed.as_str()
            }
            None => uri,
        };
        if let Some(resource) = self.resources.iter().find(|r| r.spec().uri == matched) {
            let contents = resource.read(ctx, uri, &HashMap::new()).await?;
            return Ok((contents, resource.spec().cache));
        }
        for template in &self.templates {
            if let Some(variables) = super::uri_template::match_template(template.spec().uri, matched) {
                let contents = template.read(ctx, uri, &variables).await?;
                return Ok((contents, template.spec().cache));
            }
        }
        Err(LookupError::ResourceNotFound(uri.to_owned()))
    }

    pub fn list_prompts(&self) -> Vec<Value> {
        self.prompts
            .iter()
            .map(|p| {
                let s = p.spec();
                let arguments = self.published().prompt_arguments(s.name);
                json!({ "name": s.name, "title": s.title, "description": s.description, "arguments": arguments })
            })
            .collect()
    }

    pub async fn get_prompt(
        &self,
        ctx: &RequestContext,
        name: &str,
        arguments: Option<&Value>,
    ) -> Result<Value, LookupError> {
        let prompt =
            self.prompts.iter().find(|p| p.spec().name == name).ok_or_else(|| {
                LookupError::PromptNotFound(format!("no prompt is called `{name}`; see prompts/list"))
            })?;
        let mut values: HashMap<String, String> = HashMap::new();
        if let Some(arguments) = arguments {
            let Some(object) = arguments.as_object() else {
                return Err(LookupError::InvalidParams("prompt `arguments` must be an object of strings".into()));
            };
            for (key, value) in object {
                let Some(text) = value.as_str() else {
                    return Err(LookupError::InvalidParams(format!("prompt argument `{key}` must be a string")));
                };
                values.insert(key.clone(), text.to_owned());
            }
        }
        if let Some(library) = values.remove(LIBRARY_ARGUMENT) {
            ctx.select_library(&library).await.map_err(|e| LookupError::InvalidParams(e.to_string()))?;
        }
        let spec = prompt.spec();
        let declared = self.published().prompt_arguments(spec.name);
        let mut messages = prompt.render(ctx, &values, &declared).await?;
        // A prompt's steps call tools: in another library, each of those calls must name it too.
        if let (Some(selected), Some(first)) = (ctx.selected_library(), messages.first_mut()) {
            first.text.push_str(&format!(
                "\n\nThis is about library {}: pass `\"library\": \"{}\"` to every tool you call for it.",
                selected.id, selected.id
            ));
        }
        let mut result = Map::new();
        result.insert("description".into(), Value::String(spec.description.into()));
        result.insert(
            "messages".into(),
            Value::Array(
                messages
                    .into_iter()
                    .map(|m| json!({ "role": m.role, "content": { "type": "text", "text": m.text } }))
                    .collect(),
            ),
        );
        Ok(Value::Object(result))
    }
}
