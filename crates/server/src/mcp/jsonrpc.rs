//! JSON-RPC 2.0 framing: what a valid incoming message is, and the error codes MCP uses.

use serde_json::{json, Map, Value};

/// Error codes, JSON-RPC's own and MCP's reserved range.
pub mod code {
    pub const PARSE_ERROR: i64 = -32700;
    pub const INVALID_REQUEST: i64 = -32600;
    pub const METHOD_NOT_FOUND: i64 = -32601;
    pub const INVALID_PARAMS: i64 = -32602;
    pub const INTERNAL_ERROR: i64 = -32603;
    /// Transport-level refusals (wrong HTTP method, media type, Accept), as the TypeScript SDK sends them.
    pub const TRANSPORT: i64 = -32000;
    /// 2026-07-28: an `MCP-*` header is missing or disagrees with the body.
    pub const HEADER_MISMATCH: i64 = -32020;
    /// 2026-07-28: the request claims a protocol revision this server does not speak.
    pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;
}

/// The most JSON values (objects, arrays and the values in them) one message may hold. Parsed, each value costs
/// 30–100 bytes however few bytes of text it took, so a 4 MiB body of two million `1,` would cost ~100 MB as
/// `serde_json::Value`s: a message over the limit is refused before it is parsed. The largest realistic call
/// (250 new items of 20 fields, 5 creators and 5 tags each) holds about 20,000. At the limit a message costs at
/// most ~27 MB while it is served (100,000 object members, measured by `tests/hostile_body_memory.rs`), one over
/// it nothing.
pub const MAX_MESSAGE_VALUES: usize = 100_000;

/// Whether JSON text holds more than `limit` values, counted without parsing or allocating: one, plus one for
/// each `,`, `[` and `{` outside strings (so an empty array or object counts twice, never less than it holds).
/// Text that is not JSON is counted all the same; the parser refuses it afterwards.
pub fn holds_more_values_than(text: &[u8], limit: usize) -> bool {
    let mut count = 1usize;
    let (mut in_string, mut escaped) = (false, false);
    for &byte in text {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b',' | b'[' | b'{' => {
                count += 1;
                if count > limit {
                    return true;
                }
            }
            _ => {}
        }
    }
    false
}

/// The refusal of a message over [`MAX_MESSAGE_VALUES`] (it was not parsed, so its id is unknown).
pub fn too_many_values() -> RpcError {
    RpcError::new(
        code::INVALID_REQUEST,
        format!(
            "Invalid Request: the message holds more than {MAX_MESSAGE_VALUES} JSON values, more than any call \
             needs; send fewer items per call"
        ),
    )
}

/// A JSON-RPC error object, before it is wrapped in a response.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
    pub data: Option<Value>,
}

impl RpcError {
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        Self { code, message: message.into(), data: None }
    }
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }
    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self::new(code::INVALID_PARAMS, message)
    }
    pub fn method_not_found(method: &str) -> Self {
        Self::new(code::METHOD_NOT_FOUND, format!("Method not found: `{method}` is not served by this server"))
    }
}

/// A parsed incoming message. `id` is `None` for notifications (and for responses, which have no method).
#[derive(Debug, Clone)]
pub struct Incoming {
    pub id: Option<Value>,
    pub method: Option<String>,
    pub params: Option<Value>,
}

impl Incoming {
    /// Reads one message, or says why it is not a valid JSON-RPC 2.0 request, notification or response.
    /// On failure the id is returned too when it was readable, so the error can echo it.
    pub fn from_value(value: Value) -> Result<Self, Box<(RpcError, Value)>> {
        let Value::Object(mut object) = value else {
            return Err(Box::new((
                RpcError::new(code::INVALID_REQUEST, "Invalid Request: the body must be one JSON-RPC object"),
                Value::Null,
            )));
        };
        let id = object.remove("id");
        // Only an id the client can recognise is echoed: a number beyond 64 bits (or a fraction) reads back as
        // another number, so any refusal of such a message, whatever its other faults, carries a null id
        // (found by fuzz/jsonrpc_stdio).
        let echo_id = match &id {
            Some(v @ Value::String(_)) => v.clone(),
            Some(Value::Number(n)) if n.as_i64().is_some() || n.as_u64().is_some() => Value::Number(n.clone()),
            _ => Value::Null,
        };
        let invalid = |why: &str| {
            Box::new((RpcError::new(code::INVALID_REQUEST, format!("Invalid Request: {why}")), echo_id.clone()))
        };
        if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
            return Err(invalid("`jsonrpc` must be \"2.0\""));
        }
        if let Some(id) = &id {
            if !matches!(id, Value::String(_) | Value::Number(_)) {
                return Err(invalid("`id` must be a string or a number"));
            }
            // MCP ids are strings or integers. An integer beyond 64 bits is read as a float and would be echoed
            // as another number, so the client could not match the answer (found by fuzz/jsonrpc_stdio).
            if let Value::Number(n) = id {
                if n.as_i64().is_none() && n.as_u64().is_none() {
                    return Err(Box::new((
                        RpcError::new(
                            code::INVALID_REQUEST,
                            "Invalid Request: a numeric `id` must be an integer that fits in 64 bits; use a string id",
                        ),
                        Value::Null,
                    )));
                }
            }
        }
        let method = match object.remove("method") {
            Some(Value::String(m)) => Some(m),
            Some(_) => return Err(invalid("`method` must be a string")),
            None if object.contains_key("result") || object.contains_key("error") => None,
            None => return Err(invalid("`method` is missing")),
        };
        let params = object.remove("params");
        if let Some(p) = &params {
            if !p.is_object() {
                return Err(Box::new((RpcError::invalid_params("`params` must be an object"), echo_id)));
            }
        }
        Ok(Self { id, method, params })
    }

    /// `params._meta`, when present and an object.
    pub fn meta(&self) -> Option<&Map<String, Value>> {
        self.params.as_ref()?.get("_meta")?.as_object()
    }

    /// A string member of `params`.
    pub fn param_str(&self, name: &str) -> Option<&str> {
        self.params.as_ref()?.get(name)?.as_str()
    }
}

/// A success response.
pub fn result_message(id: &Value, result: Value) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "result": result })
}

/// [`result_message`] as text, around a result that is already JSON text: the same keys in the same order.
pub fn result_message_text(id: &Value, result: &str) -> String {
    format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{result}}}")
}

/// A JSON object's text with `"name": value` added as its first member, `value` being JSON text already. Text
/// that is not an object comes back unchanged.
pub fn prepend_member(object: &str, name: &str, value: &str) -> String {
    let name = Value::from(name);
    match object.strip_prefix('{') {
        Some("}") => format!("{{{name}:{value}}}"),
        Some(rest) => format!("{{{name}:{value},{rest}"),
        None => object.to_owned(),
    }
}

/// An error response.
pub fn error_message(id: &Value, error: &RpcError) -> Value {
    let mut body = json!({ "code": error.code, "message": error.message });
    if let Some(data) = &error.data {
        body["data"] = data.clone();
    }
    json!({ "jsonrpc": "2.0", "id": id, "error": body })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_counted_outside_strings() {
        let text = br#"{"a":[1,2,{"b":"x,[{\",y"}],"c":[]}"#;
        // The object, the array under a, 1, 2, the inner object, its string and the empty array under c
        // (counted twice): 8, whatever the string holds.
        assert!(holds_more_values_than(text, 7));
        assert!(!holds_more_values_than(text, 8));
        assert!(!holds_more_values_than(b"7", 1));
        let numbers = format!("[{}1]", "1,".repeat(1000));
        assert!(holds_more_values_than(numbers.as_bytes(), 1000));
        assert!(!holds_more_values_than(numbers.as_bytes(), 1002));
    }

    #[test]
    fn a_member_is_prepended_to_object_text() {
        assert_eq!(prepend_member(r#"{"a":1}"#, "b", "[2]"), r#"{"b":[2],"a":1}"#);
        assert_eq!(prepend_member("{}", "b", "{}"), r#"{"b":{}}"#);
        assert_eq!(prepend_member("[1]", "b", "2"), "[1]");
        let spliced = result_message_text(&json!("x"), &prepend_member(r#"{"a":1}"#, "b\"", "true"));
        let general = result_message(&json!("x"), json!({ "b\"": true, "a": 1 }));
        assert_eq!(spliced, general.to_string());
    }
}
