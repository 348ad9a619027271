//! How a tool is declared: one type implementing [`Tool`] holds its name, title, description, whether it writes,
//! its typed input and output, how its output reads as Markdown, and its handler. The registry lists it
//! (`super::registry`); the pipeline runs it (`super::pipeline`): parsing and validating the arguments, the write
//! checks, resolving the call's target, shaping the result and recording what it changed. A write tool declares
//! itself with [`Access::Write`] and gets its scope checked there, so it cannot forget it.

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};
use zotero_mcp_core::zotero::LibraryId;

use super::apps::Panel;
use super::arguments::parse_arguments;
use super::error::ToolError;
use super::published::Published;
pub use crate::call::Access;
use crate::config::{ToolGroup, ToolView};
use crate::context::RequestContext;

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
    /// A write tool changes the library, so a library the key may only read (or a read-only Desktop) refuses it
    /// before it runs; false for one that needs the write scope but changes only what the server derives from
    /// the library ([`ToolSpec::changes_only_derived_data`]).
    pub changes_library: bool,
    /// The MCP Apps panel a host shows beside this tool's answers, for a client that declared the extension
    /// (`super::apps`); a tool that asks to confirm shows the review panel ([`ToolSpec::confirms`]).
    pub panel: Option<Panel>,
    /// Called by panels only: listed (marked for the app alone) to a client that declared the extension, and
    /// its answer, meant for the panel rather than the model, is not held to [`MAX_RESULT_CHARS`].
    pub app_only: bool,
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
            changes_library: false,
            panel: None,
            app_only: false,
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
            changes_library: true,
            panel: None,
            app_only: false,
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
            changes_library: true,
            panel: None,
            app_only: false,
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
        self.panel = Some(Panel::Review);
        self
    }
    /// Shows `panel` beside its answers (to a client that declared MCP Apps).
    pub const fn panel(mut self, panel: Panel) -> Self {
        self.panel = Some(panel);
        self
    }
    /// See [`ToolSpec::app_only`].
    pub const fn app_only(mut self) -> Self {
        self.app_only = true;
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
    /// A write tool that changes only what the server derives from the library (the semantic index): it needs the
    /// write scope, but a library the key may only read does not refuse it.
    pub const fn changes_only_derived_data(mut self) -> Self {
        self.changes_library = false;
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
        view.lists(self.group, self.access == Access::Write) && (view.apps || !self.app_only)
    }

    pub(super) fn annotations(&self) -> Value {
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
    /// [`crate::confirm::Proposal`] and confirms it before taking the writer, so it cannot write past the question.
    fn needs_confirmation(_input: &Self::Input) -> bool {
        false
    }

    /// The library the input itself names, beside the `library` argument (`fetch`'s ids carry theirs): the call
    /// works there, and a `library` argument naming another is refused before anything is read.
    fn library(_input: &Self::Input) -> Option<LibraryId> {
        None
    }

    async fn call(ctx: &RequestContext, input: Self::Input) -> Result<Self::Output, ToolError>;
}

/// The largest tool result sent, in characters of JSON plus Markdown (claude.ai's limit is about 150 000).
pub const MAX_RESULT_CHARS: usize = 120_000;

/// The most characters of document text one answer carries: the text goes out twice (in `structuredContent`
/// and in the Markdown), and the rest of the answer needs room too.
pub const MAX_TEXT_CHARS: usize = (MAX_RESULT_CHARS - 6_000) / 2;

/// The name of the argument every tool takes to work on another library than the configured one.
pub const LIBRARY_ARGUMENT: &str = "library";

/// The object-safe face of a [`Tool`], so tools of different types share one registry.
pub(super) trait DynTool {
    fn spec(&self) -> &ToolSpec;
    /// Parses and validates the arguments into the tool's input, ready to run. `published` gives the input
    /// schema, read only to locate an argument that does not parse.
    fn prepare(&self, arguments: Value, published: &Published) -> Result<Box<dyn Prepared>, ToolError>;
}

/// One call's parsed input, with the tool that runs it.
#[async_trait(?Send)]
pub(super) trait Prepared {
    /// Whether the tool asks the person before this call's write ([`Tool::needs_confirmation`]).
    fn confirms(&self) -> bool;
    /// The library the input names ([`Tool::library`]).
    fn library(&self) -> Option<LibraryId>;
    /// Runs the tool; its answer, for the pipeline to render and fit.
    async fn run(self: Box<Self>, ctx: &RequestContext) -> Result<Box<dyn Fitting>, ToolError>;
}

/// A tool's `tools/list` entry. Not generic: written once, not once per tool.
pub(super) fn describe(spec: &ToolSpec, published: &Published) -> Value {
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

pub(super) struct Typed<T>(pub(super) std::marker::PhantomData<T>);

impl<T: Tool> DynTool for Typed<T> {
    fn spec(&self) -> &ToolSpec {
        &T::SPEC
    }

    fn prepare(&self, arguments: Value, published: &Published) -> Result<Box<dyn Prepared>, ToolError> {
        let input: T::Input = parse_arguments(arguments, published.input_schema(T::SPEC.name))?;
        Ok(Box::new(Input::<T>(input)))
    }
}

struct Input<T: Tool>(T::Input);

#[async_trait(?Send)]
impl<T: Tool> Prepared for Input<T> {
    fn confirms(&self) -> bool {
        T::needs_confirmation(&self.0)
    }

    fn library(&self) -> Option<LibraryId> {
        T::library(&self.0)
    }

    async fn run(self: Box<Self>, ctx: &RequestContext) -> Result<Box<dyn Fitting>, ToolError> {
        Ok(Box::new(Fitted::<T>(T::call(ctx, self.0).await?)))
    }
}

/// A tool's answer as the pipeline fits it: the generic part is only what needs the type (rendering,
/// serializing, shortening), so the loop around it is written once, not once per tool (~3 KiB of the Worker's
/// gzip size).
pub(super) trait Fitting {
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
