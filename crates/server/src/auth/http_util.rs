//! Small response and request helpers shared by the OAuth routes.

use crate::platform::{HttpRequest, HttpResponse};
use zotero_mcp_core::net::parse_url;

pub use crate::respond::{empty as empty_response, json as json_response};

/// Marks a response uncacheable: tokens, codes and errors must never sit in a shared cache (RFC 6749 §5.1).
pub fn no_store(mut response: HttpResponse) -> HttpResponse {
    let headers = response.headers_mut();
    headers.insert(http::header::CACHE_CONTROL, http::HeaderValue::from_static("no-store"));
    headers.insert(http::header::PRAGMA, http::HeaderValue::from_static("no-cache"));
    response
}

pub fn header(request: &HttpRequest, name: impl http::header::AsHeaderName) -> Option<&str> {
    request.headers().get(name).and_then(|v| v.to_str().ok())
}

/// The origin the request was addressed to (`scheme://host[:port]`): the issuer, the resource and every URL in
/// the metadata derive from it, as in the TypeScript project. Production pins the host (one custom domain,
/// `workers_dev = false`), so a client cannot steer it.
pub fn request_origin(request: &HttpRequest) -> String {
    normalized_origin(&raw_origin(request))
}

/// `scheme://host[:port]` as the request names it, not yet normalized: cheap enough for every request, for
/// [`normalized_origin`] to finish when a link is actually made.
pub fn raw_origin(request: &HttpRequest) -> String {
    let scheme = request.uri().scheme_str().unwrap_or("https");
    let host = request
        .uri()
        .authority()
        .map(|a| a.as_str().to_owned())
        .or_else(|| header(request, http::header::HOST).map(str::to_owned))
        .unwrap_or_default();
    format!("{scheme}://{host}")
}

/// [`raw_origin`] as an origin: the URL parser drops a default port and lowercases the host, as WHATWG URL
/// `origin` does.
pub fn normalized_origin(raw: &str) -> String {
    match parse_url(&format!("{raw}/")) {
        Ok(url) => url.origin().ascii_serialization(),
        Err(_) => raw.to_owned(),
    }
}

/// The request URL as an absolute string (`origin` + path + query).
pub fn request_url(request: &HttpRequest) -> String {
    let path_and_query = request.uri().path_and_query().map(|p| p.as_str()).unwrap_or("/");
    format!("{}{}", request_origin(request), path_and_query)
}
