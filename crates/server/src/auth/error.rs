//! The OAuth error model: one typed error per failure, turned into the JSON answer RFC 6749 §5.2 prescribes.
//!
//! Descriptions are for the client's developer and never contain secrets; what only the operator should see
//! (storage failures, why a metadata document was refused) goes to the log and the client gets a generic answer.

use zotero_mcp_core::platform::KvError;

use super::crypto::CryptoError;
use super::http_util::{json_response, no_store};
use crate::platform::HttpResponse;

/// The `error` codes this server answers with (RFC 6749, 6750, 7009, 7591, 8707).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorCode {
    InvalidRequest,
    InvalidClient,
    InvalidGrant,
    UnauthorizedClient,
    UnsupportedGrantType,
    UnsupportedResponseType,
    InvalidScope,
    InvalidTarget,
    InvalidToken,
    InvalidClientMetadata,
    AccessDenied,
    ServerError,
    TemporarilyUnavailable,
}

impl ErrorCode {
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::InvalidRequest => "invalid_request",
            Self::InvalidClient => "invalid_client",
            Self::InvalidGrant => "invalid_grant",
            Self::UnauthorizedClient => "unauthorized_client",
            Self::UnsupportedGrantType => "unsupported_grant_type",
            Self::UnsupportedResponseType => "unsupported_response_type",
            Self::InvalidScope => "invalid_scope",
            Self::InvalidTarget => "invalid_target",
            Self::InvalidToken => "invalid_token",
            Self::InvalidClientMetadata => "invalid_client_metadata",
            Self::AccessDenied => "access_denied",
            Self::ServerError => "server_error",
            Self::TemporarilyUnavailable => "temporarily_unavailable",
        }
    }
}

/// Anything that stops an OAuth request.
#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    /// A refusal the client caused and can act on; sent as is.
    #[error("{code:?}: {description}")]
    OAuth { code: ErrorCode, description: String, status: u16, headers: Vec<(&'static str, String)> },
    /// The store failed. The client learns only that it may retry.
    #[error(transparent)]
    Storage(#[from] KvError),
    /// A stored record does not parse: corruption, or a format this version does not know.
    #[error("the stored record `{key}` is unreadable: {reason}")]
    Corrupt { key: String, reason: String },
    #[error(transparent)]
    Crypto(#[from] CryptoError),
}

impl AuthError {
    /// A 400 with this code and description.
    pub fn new(code: ErrorCode, description: impl Into<String>) -> Self {
        Self::OAuth { code, description: description.into(), status: 400, headers: Vec::new() }
    }
    pub fn invalid_request(description: impl Into<String>) -> Self {
        Self::new(ErrorCode::InvalidRequest, description)
    }
    pub fn invalid_grant(description: impl Into<String>) -> Self {
        Self::new(ErrorCode::InvalidGrant, description)
    }
    /// Sets the HTTP status (a no-op on the non-OAuth variants).
    pub fn with_status(mut self, new_status: u16) -> Self {
        if let Self::OAuth { status, .. } = &mut self {
            *status = new_status;
        }
        self
    }
    pub fn with_header(mut self, name: &'static str, value: impl Into<String>) -> Self {
        if let Self::OAuth { headers, .. } = &mut self {
            headers.push((name, value.into()));
        }
        self
    }

    /// The JSON error answer, `no-store`. Internal failures are logged and answered generically.
    pub fn into_response(self) -> HttpResponse {
        match self {
            Self::OAuth { code, description, status, headers } => {
                let body = serde_json::json!({ "error": code.as_str(), "error_description": description });
                let mut response = no_store(json_response(status, &body));
                for (name, value) in headers {
                    if let Ok(value) = http::HeaderValue::from_str(&value) {
                        response.headers_mut().insert(name, value);
                    }
                }
                response
            }
            Self::Storage(KvError::RateLimited { .. }) => {
                super::log::warn(&self.to_string());
                Self::new(ErrorCode::TemporarilyUnavailable, "The authorization server is busy; retry in 30 seconds.")
                    .with_status(429)
                    .with_header("retry-after", "30")
                    .into_response()
            }
            other => {
                super::log::warn(&other.to_string());
                Self::new(ErrorCode::ServerError, "The authorization server failed to complete the request; try again.")
                    .with_status(500)
                    .into_response()
            }
        }
    }
}
