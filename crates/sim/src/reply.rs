//! Building HTTP responses the way the API shapes them.

use serde_json::Value;

use crate::error::ApiError;
use crate::write::escape_message;

/// A response under construction.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Reply {
    pub fn new(status: u16) -> Self {
        Self { status, headers: Vec::new(), body: Vec::new() }
    }

    pub fn json(status: u16, value: &Value) -> Self {
        let body = serde_json::to_vec_pretty(value).unwrap_or_default();
        Self::new(status).header("Content-Type", "application/json").body(body)
    }

    /// Zotero answers errors and some plain values with a text body.
    pub fn text(status: u16, text: &str) -> Self {
        Self::new(status).header("Content-Type", "text/plain; charset=utf-8").body(text.as_bytes().to_vec())
    }

    pub fn header(mut self, name: &str, value: impl Into<String>) -> Self {
        self.headers.push((name.to_string(), value.into()));
        self
    }

    pub fn body(mut self, body: Vec<u8>) -> Self {
        self.body = body;
        self
    }

    pub fn version(self, version: u64) -> Self {
        self.header("Last-Modified-Version", version.to_string())
    }
}

impl From<ApiError> for Reply {
    fn from(e: ApiError) -> Self {
        let mut reply = Reply::text(e.status, &escape_message(&e.message));
        if let Some(v) = e.version {
            reply = reply.version(v);
        }
        if let Some(allow) = e.allow {
            reply = reply.header("Allow", allow);
        }
        reply
    }
}
