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
    /// The `http::Response`, without a body where HTTP has none (HEAD, 204, 304). `fallback` is the 500's body
    /// should a header not be one `http` accepts.
    pub fn into_http(mut self, method: &http::Method, fallback: &'static str) -> http::Response<Vec<u8>> {
        if matches!(self.status, 204 | 304) || *method == http::Method::HEAD {
            self.body.clear();
        }
        let mut builder = http::Response::builder().status(self.status);
        for (name, value) in &self.headers {
            builder = builder.header(name.as_str(), value.as_str());
        }
        builder.body(self.body).unwrap_or_else(|_| {
            let mut response = http::Response::new(fallback.as_bytes().to_vec());
            *response.status_mut() = http::StatusCode::INTERNAL_SERVER_ERROR;
            response
        })
    }

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
