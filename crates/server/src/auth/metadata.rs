//! Discovery documents: authorization server metadata (RFC 8414) and protected resource metadata (RFC 9728).
//! Every URL derives from the request's origin, as in the TypeScript project.

use serde_json::json;

use super::client::{AUTH_METHODS, GRANT_TYPES, RESPONSE_TYPES};
use super::http_util::{json_response, request_origin};
use super::{cimd, Scope};
use crate::platform::{HttpRequest, HttpResponse, Platform};

pub const AS_METADATA_PATH: &str = "/.well-known/oauth-authorization-server";
pub const PRM_PATH: &str = "/.well-known/oauth-protected-resource";
pub const AUTHORIZE_PATH: &str = "/authorize";
pub const TOKEN_PATH: &str = "/oauth/token";
pub const REGISTER_PATH: &str = "/oauth/register";

/// Whether `path` is the protected resource metadata, at the root or for a path (`…/mcp`).
pub fn is_prm_path(path: &str) -> bool {
    path == PRM_PATH || path.strip_prefix(PRM_PATH).is_some_and(|rest| rest.starts_with('/'))
}

pub fn authorization_server(request: &HttpRequest, platform: &Platform) -> HttpResponse {
    let origin = request_origin(request);
    let scopes: Vec<&str> = [Scope::Read, Scope::Write].iter().map(|s| s.as_str()).collect();
    json_response(
        200,
        &json!({
            "issuer": origin,
            "authorization_endpoint": format!("{origin}{AUTHORIZE_PATH}"),
            "token_endpoint": format!("{origin}{TOKEN_PATH}"),
            "registration_endpoint": format!("{origin}{REGISTER_PATH}"),
            "scopes_supported": scopes,
            "response_types_supported": RESPONSE_TYPES,
            "response_modes_supported": ["query"],
            "grant_types_supported": GRANT_TYPES,
            // `none` must be listed: Claude uses metadata documents only when it is (else it falls back to DCR).
            "token_endpoint_auth_methods_supported": AUTH_METHODS,
            "revocation_endpoint": format!("{origin}{TOKEN_PATH}"),
            "code_challenge_methods_supported": ["S256"],
            "authorization_response_iss_parameter_supported": true,
            "client_id_metadata_document_supported": cimd::enabled(platform),
        }),
    )
}

/// The resource is the origin plus whatever follows the well-known prefix (`…/oauth-protected-resource/mcp`
/// describes `https://host/mcp`). No `scopes_supported`, as in the TypeScript project: clients then send no
/// scope, and the consent page offers both (see `authorize`).
pub fn protected_resource(request: &HttpRequest) -> HttpResponse {
    let origin = request_origin(request);
    let suffix = request.uri().path().strip_prefix(PRM_PATH).unwrap_or("");
    let resource = if suffix.is_empty() || suffix == "/" { origin.clone() } else { format!("{origin}{suffix}") };
    json_response(
        200,
        &json!({
            "resource": resource,
            "authorization_servers": [origin],
            "bearer_methods_supported": ["header"],
        }),
    )
}
