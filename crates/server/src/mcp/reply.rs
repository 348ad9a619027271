//! A tool call's answer as the registry hands it to the transports: Markdown, the structured result already as
//! JSON text, or instead the question of a confirmation (`crate::confirm`).

use serde_json::{json, Value};

/// A tool's answer: its Markdown, and its structured result already as JSON text.
///
/// The structured result is serialized once, straight from the tool's output type. Building it as a `Value`
/// first and serializing that twice (once to measure it, once to send it) was a fifth of the server's own time
/// on a `zotero_get_item` or a 25-item search; [`super::dispatch::answer_message`] splices the text
/// into the JSON-RPC message instead.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolReply {
    /// The text content: the Markdown rendering, or the error message.
    pub markdown: String,
    /// The `structuredContent` object as JSON text; `None` when the call failed (`isError`).
    pub structured: Option<String>,
    /// Instead of a result: the `input_required` result asking the person to confirm (`crate::confirm`).
    pub asks: Option<Box<Value>>,
    /// The result's `_meta`: a question for the review panel of MCP Apps (`crate::confirm::REVIEW_META`).
    pub meta: Option<Box<Value>>,
}

impl ToolReply {
    /// The result without `structuredContent`: the text content, and `isError` for a failure.
    pub fn envelope(&self) -> Value {
        let content = json!([{ "type": "text", "text": self.markdown }]);
        let mut result = match self.structured {
            Some(_) => json!({ "content": content }),
            None => json!({ "content": content, "isError": true }),
        };
        if let (Some(meta), Some(object)) = (&self.meta, result.as_object_mut()) {
            object.insert("_meta".into(), (**meta).clone());
        }
        result
    }

    /// The whole `tools/call` result as a JSON value.
    pub fn to_value(&self) -> Value {
        if let Some(question) = &self.asks {
            return (**question).clone();
        }
        let mut result = self.envelope();
        let structured =
            self.structured.as_deref().and_then(|text| serde_json::from_slice::<Value>(text.as_bytes()).ok());
        if let (Some(object), Some(structured)) = (result.as_object_mut(), structured) {
            object.insert("structuredContent".into(), structured);
        }
        result
    }
}
