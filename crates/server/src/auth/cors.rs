//! CORS for the OAuth and metadata routes, as workers-oauth-provider does it: browser-based MCP clients (the
//! Inspector, web apps) run discovery, registration and the token exchange from a page, so these answers reflect
//! the caller's `Origin`. None of them carries ambient credentials (no cookies), so reflecting is safe; `/mcp`
//! has its own Origin allow list in `mcp::origin`.

use super::http_util::empty_response;
use crate::platform::{HttpRequest, HttpResponse};

/// Adds the CORS headers when the request has an `Origin`.
pub fn with_cors(mut response: HttpResponse, request: &HttpRequest) -> HttpResponse {
    let Some(origin) = request.headers().get(http::header::ORIGIN).cloned() else {
        return response;
    };
    let headers = response.headers_mut();
    headers.insert(http::header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
    headers.insert(http::header::ACCESS_CONTROL_ALLOW_METHODS, http::HeaderValue::from_static("*"));
    // `Authorization` must be named: the `*` wildcard does not cover it.
    headers.insert(http::header::ACCESS_CONTROL_ALLOW_HEADERS, http::HeaderValue::from_static("Authorization, *"));
    // Discovery reads `WWW-Authenticate`; back-off reads `Retry-After`. Neither is readable cross-origin unless exposed.
    headers.insert(
        http::header::ACCESS_CONTROL_EXPOSE_HEADERS,
        http::HeaderValue::from_static("WWW-Authenticate, Retry-After"),
    );
    headers.insert(http::header::ACCESS_CONTROL_MAX_AGE, http::HeaderValue::from_static("86400"));
    headers.append(http::header::VARY, http::HeaderValue::from_static("Origin"));
    response
}

/// The answer to a preflight on an OAuth route.
pub fn preflight(request: &HttpRequest) -> HttpResponse {
    with_cors(empty_response(204), request)
}
