//! Who is calling, and what they may do: the OAuth 2.1 authorization server in front of `/mcp`.
//!
//! It is a port of the security model of `@cloudflare/workers-oauth-provider` 0.10.3, which the TypeScript
//! project used, down to the bytes in `OAUTH_KV`: a deployment of that project can be replaced by this one
//! without anyone authorizing again. Every piece is a plain function over the platform seams (KV, clock,
//! HTTP), tested natively.
//!
//! | module | what it holds |
//! |---|---|
//! | [`metadata`] | RFC 8414 and RFC 9728 discovery documents |
//! | `register` | Dynamic Client Registration (RFC 7591) |
//! | `cimd` | Client ID Metadata Documents, with the SSRF guard |
//! | `client` | client metadata rules shared by both, and client lookup |
//! | `authorize` | the authorization endpoint: validation, password, code issue |
//! | `consent` | the login and consent page |
//! | [`client_address`] | which address a native request is counted under (the socket, or a trusted proxy's header) |
//! | `throttle` | the per-IP login failure throttle in `CACHE_KV` |
//! | `token` | the token endpoint: code exchange, refresh |
//! | `rotation` | refresh-token rotation and reuse detection (RFC 9700 §4.14.2) |
//! | `revoke` | token revocation (RFC 7009) |
//! | [`bearer`] | the bearer check on `/mcp` |
//! | `resource` | resource indicators and audience matching (RFC 8707) |
//! | `redirect` | redirect URI rules (exact, loopback any port, allow-listed schemes, no fragments) |
//! | [`crypto`] | hashing, AES-GCM props, AES-KW key wrapping, PKCE |
//! | [`storage`] | the KV records and keys |
//! | `cors`, `error`, `form`, `http_util`, `log` | plumbing |
//!
//! SECURITY.md describes the trust model; docs/oauth.md the flows.

mod authorize;
pub mod bearer;
mod cimd;
mod client;
pub mod client_address;
mod client_name;
mod consent;
mod cors;
pub mod crypto;
mod error;
mod form;
pub(crate) mod http_util;
pub(crate) mod log;
mod lookup;
pub mod metadata;
mod redirect;
mod register;
mod resource;
mod revoke;
mod rotation;
pub mod storage;
mod throttle;
mod token;

use crate::app::{App, McpAccess};
pub use crate::grant::{Grant, Scope};
use crate::platform::{HttpRequest, HttpResponse};

/// Decides the grant of a request to `/mcp`, or the 401 response that refuses it. Under OAuth the bearer token
/// must be one this server issued (or the TypeScript deployment before it), unexpired, unrevoked, and meant for
/// this URL; under a static token it must be that token; a trusted server grants what it was configured with.
pub async fn grant_for_mcp_request(request: &HttpRequest, app: &App) -> Result<Grant, Box<HttpResponse>> {
    match &app.access {
        McpAccess::OAuth => bearer::authenticate(request, &app.platform).await,
        McpAccess::StaticToken { token_sha256, grant } => match bearer::presented_token(request) {
            Some(token) if crypto::matches_hash(token, token_sha256) => Ok(grant.clone()),
            _ => Err(Box::new(bearer::static_token_refusal())),
        },
        McpAccess::Trusted(grant) => Ok(grant.clone()),
    }
}

/// Serves the OAuth routes; `None` when the path is not one of them.
///
/// | path | what |
/// |---|---|
/// | `/.well-known/oauth-authorization-server` | server metadata |
/// | `/.well-known/oauth-protected-resource[/…]` | resource metadata |
/// | `/oauth/register` | client registration |
/// | `/oauth/token` | tokens and revocation |
/// | `/authorize` | the login and consent page |
pub async fn route(request: &HttpRequest, app: &App) -> Option<HttpResponse> {
    let path = request.uri().path();
    let is_api = path == metadata::AS_METADATA_PATH
        || metadata::is_prm_path(path)
        || path == metadata::TOKEN_PATH
        || path == metadata::REGISTER_PATH;
    if is_api && request.method() == http::Method::OPTIONS {
        return Some(cors::preflight(request));
    }
    let response = match path {
        metadata::AS_METADATA_PATH => metadata::authorization_server(request, &app.platform),
        p if metadata::is_prm_path(p) => metadata::protected_resource(request),
        metadata::TOKEN_PATH => {
            token::handle(request, &app.platform).await.unwrap_or_else(error::AuthError::into_response)
        }
        metadata::REGISTER_PATH => {
            register::register(request, app).await.unwrap_or_else(error::AuthError::into_response)
        }
        metadata::AUTHORIZE_PATH => return Some(authorize::handle(request, app).await),
        _ => return None,
    };
    Some(cors::with_cors(response, request))
}
