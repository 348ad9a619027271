//! The routes. Pure: an `http::Request` in, an `http::Response` out, so tests call it directly and both
//! runtimes (the Worker, the native HTTP server) serve the same answers.

use crate::app::App;
use crate::call::Session;
use crate::pages;
use crate::platform::{HttpRequest, HttpResponse};
use crate::respond;

pub use crate::app::McpAccess;

/// Serves one request.
pub async fn route(request: HttpRequest, app: &App) -> HttpResponse {
    // `ALLOWED_HOSTS` guards every route (`/mcp` answers its refusal in JSON-RPC, in its own checks): a page that
    // rebinds its name to this server could otherwise post to the login form and spend the owner's attempts.
    if request.uri().path() != "/mcp" {
        if let Err(refusal) = crate::mcp::origin::check_host(&request, &app.config) {
            return respond::text(403, format!("{refusal}\n"));
        }
    }
    // The OAuth server: discovery metadata, registration, tokens and the authorization page. Only a server
    // that issues its own tokens has it.
    if matches!(app.access, McpAccess::OAuth) {
        if let Some(response) = crate::auth::route(&request, app).await {
            return response;
        }
    }
    if let Some(response) = crate::feeds::route(&request, app).await {
        return response;
    }
    let path = request.uri().path();
    match path {
        "/mcp" => mcp(&request, app).await,
        "/" if is_read(&request) => pages::landing::page(&request, app).await,
        "/health" if is_read(&request) => pages::health::report(app).await,
        "/" | "/health" => method_not_allowed("GET, HEAD"),
        _ => not_found(),
    }
}

/// `/mcp`: the transport's own checks first (Origin/Host, method), then who is calling, then the request.
async fn mcp(request: &HttpRequest, app: &App) -> HttpResponse {
    let response = match crate::mcp::transport::admit(request, &app.config) {
        Err(refusal) => *refusal,
        Ok(()) => match crate::auth::grant_for_mcp_request(request, app).await {
            Ok(grant) => {
                let registry = crate::tools::registry(&app.config);
                let origin = crate::auth::http_util::raw_origin(request);
                let session = Session::at(grant, app.config.clone(), app.platform.clone(), origin);
                crate::mcp::transport::serve_post(request, &registry, &session).await
            }
            Err(refusal) => *refusal,
        },
    };
    // CORS headers only for an origin the check let through: a refusal is not for the page to read.
    if crate::mcp::origin::check(request, &app.config).is_ok() {
        crate::mcp::transport::with_cors(response, request)
    } else {
        response
    }
}

/// The largest request body a route reads. The shells check it before reading anything: a declared
/// `Content-Length` above it is answered 413 at once, and a body without one is read only up to it. WebAssembly
/// memory never shrinks once grown, so a body must be refused before it is held, not after.
pub fn body_limit(path: &str) -> usize {
    use crate::auth::metadata::{AUTHORIZE_PATH, REGISTER_PATH, TOKEN_PATH};
    match path {
        // The largest legitimate call: 250 new items, or a long note, in one tools/call.
        "/mcp" => 4 * 1024 * 1024,
        // A client's metadata; RFC 7591 records are a few hundred bytes.
        REGISTER_PATH => 16 * 1024,
        // A token request or the consent form: a handful of short fields.
        TOKEN_PATH | AUTHORIZE_PATH => 64 * 1024,
        // Everything else takes no body; a small one still gets its 404 or 405.
        _ => 16 * 1024,
    }
}

/// The answer to a body over [`body_limit`].
pub fn body_too_large(limit: usize) -> HttpResponse {
    respond::text(413, format!("The request body is larger than this endpoint accepts ({limit} bytes).\n"))
}

fn is_read(request: &HttpRequest) -> bool {
    matches!(*request.method(), http::Method::GET | http::Method::HEAD)
}

fn method_not_allowed(allow: &'static str) -> HttpResponse {
    respond::with_header(respond::text(405, "Method not allowed\n"), http::header::ALLOW, allow)
}

fn not_found() -> HttpResponse {
    respond::json(
        404,
        &serde_json::json!({
            "error": "not_found",
            "message": "Nothing here. The MCP endpoint is /mcp; /health reports the configuration.",
        }),
    )
}
