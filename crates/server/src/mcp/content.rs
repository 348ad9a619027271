//! Resources and prompts: how each is declared (a type implementing [`Resource`] or [`Prompt`]) and how the
//! catalogue lists, reads and renders them. Each read or rendering is a reading call on the library its URI or
//! its `library` argument names, resolved like a tool's.

use std::collections::HashMap;
use std::rc::Rc;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use super::published::{PromptArgument, Published};
use super::tool::LIBRARY_ARGUMENT;
use crate::call::Session;
use crate::context::RequestContext;

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

struct TypedResource<T>(std::marker::PhantomData<T>);

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
impl<T: Resource> DynResource for TypedResource<T> {
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

struct TypedPrompt<T>(std::marker::PhantomData<T>);

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
impl<T: Prompt> DynPrompt for TypedPrompt<T> {
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

/// The resources, resource templates and prompts a registry offers, in registration order.
#[derive(Default)]
pub(super) struct Contents {
    resources: Vec<Rc<dyn DynResource>>,
    templates: Vec<Rc<dyn DynResource>>,
    prompts: Vec<Rc<dyn DynPrompt>>,
}

impl Contents {
    /// Adds a resource; a URI with `{…}` is a template.
    pub(super) fn resource<T: Resource>(&mut self) {
        let resource: Rc<dyn DynResource> = Rc::new(TypedResource::<T>(std::marker::PhantomData));
        if T::SPEC.uri.contains('{') {
            self.templates.push(resource);
        } else {
            self.resources.push(resource);
        }
    }

    pub(super) fn prompt<T: Prompt>(&mut self) {
        self.prompts.push(Rc::new(TypedPrompt::<T>(std::marker::PhantomData)));
    }

    pub(super) fn list_resources(&self) -> Vec<Value> {
        self.resources
            .iter()
            .map(|r| {
                let s = r.spec();
                json!({ "uri": s.uri, "name": s.name, "title": s.title, "description": s.description, "mimeType": s.mime_type })
            })
            .collect()
    }

    pub(super) fn list_resource_templates(&self) -> Vec<Value> {
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
    pub(super) async fn read_resource(
        &self,
        session: &Session,
        uri: &str,
    ) -> Result<(Vec<ResourceContents>, CacheHint), LookupError> {
        let (library, matched) = match split_library(uri) {
            Some((library, rest)) => (Some(library.to_owned()), rest),
            None => (None, uri.to_owned()),
        };
        let matched = matched.as_str();
        let ctx = &crate::context::reading(session, "resources/read", library)
            .await
            .map_err(|e| LookupError::InvalidParams(e.to_string()))?;
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

    pub(super) fn list_prompts(&self, published: &Published) -> Vec<Value> {
        self.prompts
            .iter()
            .map(|p| {
                let s = p.spec();
                let arguments = published.prompt_arguments(s.name);
                json!({ "name": s.name, "title": s.title, "description": s.description, "arguments": arguments })
            })
            .collect()
    }

    pub(super) async fn get_prompt(
        &self,
        session: &Session,
        published: &Published,
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
        let library = values.remove(LIBRARY_ARGUMENT);
        let ctx = &crate::context::reading(session, "prompts/get", library)
            .await
            .map_err(|e| LookupError::InvalidParams(e.to_string()))?;
        let spec = prompt.spec();
        let declared = published.prompt_arguments(spec.name);
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
