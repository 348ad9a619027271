//! One `tools/call`, from the arguments to the reply, in the order the call is resolved: what the request may
//! call at all, the arguments parsed into the tool's input, the call's [`Plan`], its target resolved once
//! ([`RequestContext::resolve`]), the tool run, its answer fitted to what clients accept, and the record step
//! that journals what it changed.

use serde_json::Value;
use zotero_mcp_core::zotero::LibraryId;

use super::error::ToolError;
use super::published::Published;
use super::reply::ToolReply;
use super::tool::{Access, DynTool, Fitting, LIBRARY_ARGUMENT, MAX_RESULT_CHARS};
use crate::call::{Plan, Session, Unresolved};
use crate::config::ToolGroup;
use crate::confirm::Asking;
use crate::context::RequestContext;
use crate::grant::Scope;

/// How many times an answer is shortened before it is refused (each pass aims below the limit, so one or two
/// passes are the rule).
const MAX_SHORTENINGS: usize = 6;

/// An answer's size as clients count it: characters, not bytes (a Korean page is a third of its UTF-8 bytes).
fn result_chars(structured: &str, markdown: &str) -> usize {
    structured.chars().count() + markdown.chars().count()
}

impl From<Unresolved> for ToolError {
    fn from(error: Unresolved) -> Self {
        match error {
            // Zotero Desktop does not answer: said once, before the tool (every tool needs the library).
            Unresolved::Desktop(error) => ToolError::Failed(error.to_string()),
            Unresolved::Library(refused) => refused.into(),
        }
    }
}

/// Runs `tool` for `session` with `arguments`, as `asking` allows asking the person.
pub(super) async fn run_tool(
    tool: &dyn DynTool,
    published: &Published,
    session: &Session,
    arguments: Value,
    asking: Asking,
) -> ToolReply {
    let spec = tool.spec();
    #[cfg(feature = "check-outputs")]
    let checked_arguments = arguments.clone();
    let (outcome, ctx) = match resolve(tool, published, session, arguments, asking).await {
        Ok((ctx, prepared)) => (run(&ctx, prepared, spec.name).await, Some(ctx)),
        Err(error) => (Err(error), None),
    };
    #[cfg(feature = "check-outputs")]
    #[allow(clippy::panic, reason = "check-outputs is on in tests only, where a mismatch must fail the test")]
    if let (Ok((structured, _)), Some(schema)) = (&outcome, published.output_schema(spec.name)) {
        if let Some(mismatch) = super::output_check::mismatch(spec.name, &checked_arguments, structured, schema) {
            panic!("{mismatch}");
        }
    }
    let wrote = ctx.as_ref().is_some_and(RequestContext::writer_taken);
    let outcome = outcome.and_then(|(structured, markdown)| {
        // A write's result is sent whatever its size: the change is made, and asking again would repeat it.
        // The rule follows the writer, not the declared access, so a mixed tool's writes are covered too.
        // An app-only tool's answer goes to a panel, not to the model, and is bounded by the tool itself.
        if wrote || spec.app_only {
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
            return Err(ToolError::TooLarge { tool: spec.name.to_owned(), size, limit: MAX_RESULT_CHARS, advice });
        }
        Ok((structured, markdown))
    });
    // The record step: what the call changed becomes one undo journal entry, whatever the outcome (a call that
    // failed part-way may have changed something too).
    let mut notes = Vec::new();
    if let Some(ctx) = &ctx {
        notes.extend(ctx.desktop_dialogs_note());
        notes.extend(ctx.keep_journal().await);
    }
    let mut reply = match outcome {
        Ok((structured, markdown)) => ToolReply { markdown, structured: Some(structured), asks: None, meta: None },
        Err(ToolError::Unconfirmed(crate::confirm::Unconfirmed::Ask(question))) => {
            ToolReply { markdown: String::new(), structured: None, asks: Some(question), meta: None }
        }
        Err(ToolError::Unconfirmed(crate::confirm::Unconfirmed::Review(question))) => {
            let meta = Some(Box::new(serde_json::json!({ crate::confirm::REVIEW_META: question })));
            ToolReply { markdown: crate::confirm::IN_REVIEW.to_owned(), structured: None, asks: None, meta }
        }
        Err(error) => ToolReply { markdown: error.message(spec.name), structured: None, asks: None, meta: None },
    };
    for line in notes {
        reply.markdown.push_str("\n\n");
        reply.markdown.push_str(&line);
    }
    reply
}

/// Everything before the tool runs: the checks on the request alone (nothing parsed or read before them), the
/// arguments parsed, and the call's target resolved. A call its tool will ask about is refused here when it
/// could not write anyway (scope, writes off, a read-only library or Desktop), before the tool reads anything.
async fn resolve(
    tool: &dyn DynTool,
    published: &Published,
    session: &Session,
    mut arguments: Value,
    asking: Asking,
) -> Result<(RequestContext, Box<dyn super::tool::Prepared>), ToolError> {
    let spec = tool.spec();
    let view = session.tool_view();
    // A tool a request is not shown answers as clearly as a listed one it may not use.
    if !view.groups.contains(spec.group) {
        return Err(ToolError::NotOffered { tool: spec.name.to_owned(), group: spec.group.name() });
    }
    if spec.access == Access::Write && !session.grant.allows(Scope::Write) {
        return Err(ToolError::WriteScopeRequired { tool: spec.name.to_owned() });
    }
    if spec.access == Access::Write && !view.groups.contains(ToolGroup::Write) {
        return Err(ToolError::WritesOff { tool: spec.name.to_owned() });
    }
    let given = take_library(&mut arguments)?;
    let prepared = tool.prepare(arguments, published)?;
    let named = prepared.library();
    let library = match (given, named) {
        (Some(given), Some(named)) => match LibraryId::parse(&given) {
            Some(id) if id != named => return Err(library_clash(named, id)),
            _ => Some(given),
        },
        (given, named) => given.or(named.map(|named| named.path())),
    };
    let plan = Plan { tool: spec.name, access: spec.access, confirms: prepared.confirms(), library, asking };
    let ctx = RequestContext::resolve(session, plan).await?;
    // A library given by its name is known once resolved.
    if let (Some(named), Some(selected)) = (named, ctx.selected_library()) {
        if selected.id != named {
            return Err(library_clash(named, selected.id));
        }
    }
    // Write refusals the target decided (a read-only library or Desktop) are said here, before the tool
    // reads anything, for every tool that changes the library on every call and every call its tool will ask
    // about (a tool that only hands something out checks the grant itself): no tool repeats this check.
    if spec.changes_library && (spec.access == Access::Write || prepared.confirms()) {
        ctx.may_write()?;
    }
    Ok((ctx, prepared))
}

fn library_clash(named: LibraryId, given: LibraryId) -> ToolError {
    ToolError::invalid(format!("the id names library {named} but `library` is {given}; give one of them"))
}

/// Runs the tool and fits its answer.
async fn run(
    ctx: &RequestContext,
    prepared: Box<dyn super::tool::Prepared>,
    name: &str,
) -> Result<(String, String), ToolError> {
    let mut output = ctx.journaled(prepared.run(ctx)).await?;
    fit(ctx, name, output.as_mut())
}

/// Every tool's `library` argument, handled here once: taken out of the arguments (the tool's own input never
/// sees it), to choose the call's library when its target is resolved. Absent or null: the configured library.
fn take_library(arguments: &mut Value) -> Result<Option<String>, ToolError> {
    match arguments.as_object_mut().and_then(|map| map.remove(LIBRARY_ARGUMENT)) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(given)) => Ok(Some(given)),
        Some(_) => Err(crate::library::LibraryRefused::NotText.into()),
    }
}

/// Renders the answer and, while it is over [`MAX_RESULT_CHARS`], shortens it (at most [`MAX_SHORTENINGS`]
/// times); what is still too large is refused by [`run_tool`].
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
