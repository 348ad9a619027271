//! What each MCP method does, once the transport has decided the request is well formed.

use serde_json::{json, Map, Value};

use super::jsonrpc::{prepend_member, result_message, result_message_text, RpcError};
use super::protocol::{self, LEGACY_VERSIONS, MODERN_VERSIONS};
use super::registry::{CacheHint, LookupError, Registry, ToolReply};
use crate::call::Session;
use crate::confirm::Asking;

/// Which protocol era a request belongs to; it decides the result's shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Era {
    /// 2026-07-28: per-request envelope, `resultType`, cache hints.
    Modern,
    /// 2025-era stateless Streamable HTTP: `initialize`, plain results.
    Legacy,
}

/// Methods served in each era. Anything else is "method not found".
pub fn is_served(era: Era, method: &str) -> bool {
    const COMMON: &[&str] = &[
        "tools/list",
        "tools/call",
        "resources/list",
        "resources/templates/list",
        "resources/read",
        "prompts/list",
        "prompts/get",
    ];
    COMMON.contains(&method)
        || match era {
            Era::Modern => method == "server/discover",
            Era::Legacy => matches!(method, "initialize" | "ping"),
        }
}

/// Cache hints for the catalogues, which only change when the server is redeployed.
pub const CATALOGUE_CACHE: CacheHint = CacheHint::public(3_600_000);

/// A method's result: a JSON value, or a tool's reply with its structured part already JSON text.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    Value(Value),
    Tool(ToolReply),
}

/// Runs one request. The result is the method's own; era-specific decoration is added by [`finish`] (through
/// [`answer_message`]). The params are taken, so a tool's arguments are moved to it, never copied.
pub async fn dispatch(
    method: &str,
    params: Option<Value>,
    registry: &Registry,
    session: &Session,
) -> Result<(Answer, Option<CacheHint>), RpcError> {
    let (result, cache) = match method {
        "tools/call" => {
            let mut params = params.unwrap_or(Value::Null);
            let name = required_str(&params, "name", "the tool to call")?.to_owned();
            let modern = params.get("_meta").and_then(|m| m.get(protocol::meta::PROTOCOL_VERSION)).is_some();
            // Only a tool that asks before it writes reads the answer, or needs the digest of its arguments (a file in
            // base64 can be megabytes): every other call skips both.
            let asking = match registry.asks_before_writing(&name) {
                true => Asking::from_params(&params, protocol::meta::CLIENT_CAPABILITIES, modern, session.apps()),
                false => Asking::default(),
            };
            let arguments = params.get_mut("arguments").map(Value::take).unwrap_or(Value::Null);
            let name = name.as_str();
            return match registry.run_tool(session, name, arguments, asking).await {
                Some(reply) => Ok((Answer::Tool(reply), None)),
                None => Err(RpcError::invalid_params(format!(
                    "Tool `{name}` not found. Call tools/list to see the tools this server offers."
                ))),
            };
        }
        _ => dispatch_value(method, params.as_ref(), registry, session).await?,
    };
    Ok((Answer::Value(result), cache))
}

/// The whole JSON-RPC message of a successful answer, as text. A tool's structured result is spliced in as the
/// text it already is, not parsed and serialized again.
pub fn answer_message(era: Era, id: &Value, answer: Answer, cache: Option<CacheHint>) -> String {
    match answer {
        Answer::Value(result) => result_message(id, finish(era, result, cache)).to_string(),
        // Only a 2026-07-28 request is ever asked with a form (`Asking::from_params`), so only its era gets this
        // shape; a question for the review panel is an ordinary result.
        Answer::Tool(ToolReply { asks: Some(question), .. }) => {
            let mut question = *question;
            if let Some(object) = question.as_object_mut() {
                object.insert("_meta".into(), json!({ protocol::meta::SERVER_INFO: protocol::server_info() }));
            }
            result_message(id, question).to_string()
        }
        Answer::Tool(reply) => {
            let envelope = finish(era, reply.envelope(), cache).to_string();
            let result = match &reply.structured {
                Some(structured) => prepend_member(&envelope, "structuredContent", structured),
                None => envelope,
            };
            result_message_text(id, &result)
        }
    }
}

/// Every method but `tools/call`, whose results are JSON values.
async fn dispatch_value(
    method: &str,
    params: Option<&Value>,
    registry: &Registry,
    session: &Session,
) -> Result<(Value, Option<CacheHint>), RpcError> {
    let empty = Value::Object(Map::new());
    let params = params.unwrap_or(&empty);
    reject_cursor(method, params)?;
    let catalogue = |key: &str, items: Vec<Value>| Ok((json!({ key: items }), Some(CATALOGUE_CACHE)));
    match method {
        "initialize" => {
            let requested = params.get("protocolVersion").and_then(Value::as_str);
            let version = requested.filter(|v| LEGACY_VERSIONS.contains(v)).unwrap_or(LEGACY_VERSIONS[0]);
            Ok((
                json!({
                    "protocolVersion": version,
                    "capabilities": protocol::capabilities(),
                    "serverInfo": protocol::server_info(),
                    "instructions": protocol::INSTRUCTIONS,
                }),
                None,
            ))
        }
        "ping" => Ok((json!({}), None)),
        "server/discover" => Ok((
            json!({
                "supportedVersions": MODERN_VERSIONS,
                "capabilities": protocol::capabilities(),
                "instructions": protocol::INSTRUCTIONS,
            }),
            Some(CATALOGUE_CACHE),
        )),
        "tools/list" => catalogue("tools", registry.list_tools(session.tool_view())),
        "resources/list" => {
            let mut resources = registry.list_resources();
            if session.apps() {
                resources.extend(super::apps::list_resources());
            }
            catalogue("resources", resources)
        }
        "resources/templates/list" => catalogue("resourceTemplates", registry.list_resource_templates()),
        "prompts/list" => catalogue("prompts", registry.list_prompts()),
        "resources/read" => {
            let uri = required_str(params, "uri", "the resource URI")?;
            // A client that did not declare MCP Apps finds no panel, as before panels existed.
            if let Some(panel) = super::apps::Panel::from_uri(uri).filter(|_| session.apps()) {
                // A panel names the address its files come from, which only an HTTP request has.
                let Some(origin) = session.services().origin() else {
                    return Err(lookup_error(LookupError::ResourceNotFound(uri.to_owned())));
                };
                let files = session.services().platform().panel_files.clone();
                let contents = super::apps::read_resource(panel, origin, files.as_deref())
                    .await
                    .map_err(|e| lookup_error(LookupError::Failed(e.to_string())))?;
                return Ok((json!({ "contents": [contents] }), Some(CATALOGUE_CACHE)));
            }
            let (contents, cache) = registry.read_resource(session, uri).await.map_err(lookup_error)?;
            Ok((json!({ "contents": contents }), Some(cache)))
        }
        "prompts/get" => {
            let name = required_str(params, "name", "the prompt name")?;
            let result = registry.get_prompt(session, name, params.get("arguments")).await.map_err(lookup_error)?;
            Ok((result, None))
        }
        other => Err(RpcError::method_not_found(other)),
    }
}

/// Shapes a result for its era: modern results are stamped `resultType: "complete"`, carry the server's
/// identity in `_meta`, and cacheable ones carry `ttlMs`/`cacheScope`; legacy results stay as they were.
pub fn finish(era: Era, mut result: Value, cache: Option<CacheHint>) -> Value {
    if era == Era::Legacy {
        return result;
    }
    let Some(object) = result.as_object_mut() else {
        return result;
    };
    object.insert("resultType".into(), json!("complete"));
    let meta = object.entry("_meta").or_insert_with(|| json!({}));
    if let Some(meta) = meta.as_object_mut() {
        meta.insert(protocol::meta::SERVER_INFO.into(), protocol::server_info());
    }
    if let Some(cache) = cache {
        object.insert("ttlMs".into(), json!(cache.ttl_ms));
        object.insert("cacheScope".into(), json!(if cache.public { "public" } else { "private" }));
    }
    result
}

/// Every list fits in one page, so the only valid cursor is none: a client sending one has a stale or
/// invented cursor, which the spec says is an invalid-params error.
pub(super) fn reject_cursor(method: &str, params: &Value) -> Result<(), RpcError> {
    if method.ends_with("/list") && params.get("cursor").is_some_and(|c| !c.is_null()) {
        return Err(RpcError::invalid_params("Invalid cursor: this server returns every list in one page"));
    }
    Ok(())
}

fn required_str<'a>(params: &'a Value, key: &str, what: &str) -> Result<&'a str, RpcError> {
    params
        .get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| RpcError::invalid_params(format!("`params.{key}` ({what}) is required and must be a string")))
}

fn lookup_error(error: LookupError) -> RpcError {
    match error {
        LookupError::Failed(message) => RpcError::new(super::jsonrpc::code::INTERNAL_ERROR, message),
        // SEP-2164: the missing URI travels in `data` so clients need not parse the message.
        LookupError::ResourceNotFound(ref uri) => {
            let data = json!({ "uri": uri });
            RpcError::invalid_params(error.to_string()).with_data(data)
        }
        other => RpcError::invalid_params(other.to_string()),
    }
}
