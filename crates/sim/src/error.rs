//! Errors as the API reports them: an HTTP status and Zotero's plain-text message.
//!
//! The same type serves request-level errors (turned into a whole response) and per-object failures in a batch
//! write (turned into a `failed` entry with `code`, `message` and optional `data`), because Zotero raises both
//! from the same validation code.

use serde_json::Value;

/// A failure with the status Zotero would answer and its message.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{status} {message}")]
pub struct ApiError {
    pub status: u16,
    pub message: String,
    /// `Last-Modified-Version` to send with the error (Zotero keeps it only on some 412s).
    pub version: Option<u64>,
    /// Extra detail for a batch `failed` entry (e.g. `{"collection": "ABCD2345"}` on a 409).
    pub data: Option<Box<Value>>,
    /// `Allow` header for a 405.
    pub allow: Option<&'static str>,
}

pub type ApiResult<T> = Result<T, ApiError>;

impl ApiError {
    pub fn new(status: u16, message: impl Into<String>) -> Self {
        Self { status, message: message.into(), version: None, data: None, allow: None }
    }
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, message)
    }
    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::new(403, message)
    }
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(404, message)
    }
    pub fn conflict(message: impl Into<String>) -> Self {
        Self::new(409, message)
    }
    pub fn precondition_failed(message: impl Into<String>) -> Self {
        Self::new(412, message)
    }
    pub fn precondition_required(message: impl Into<String>) -> Self {
        Self::new(428, message)
    }
    pub fn not_implemented(message: impl Into<String>) -> Self {
        Self::new(501, message)
    }
    pub fn method_not_allowed(allow: &'static str) -> Self {
        Self { allow: Some(allow), ..Self::new(405, "Method not allowed") }
    }
    pub fn with_version(mut self, version: u64) -> Self {
        self.version = Some(version);
        self
    }
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(Box::new(data));
        self
    }
}
