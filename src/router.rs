//! The Worker's routes. Pure: an `http::Request` in, an `http::Response` out, so tests call it directly.

use std::rc::Rc;

use crate::config::Config;
use crate::pages;
use crate::platform::{HttpRequest, HttpResponse, Platform};

/// What every route can use: the configuration and the runtime services.
#[derive(Clone)]
pub struct App {
    pub config: Rc<Config>,
    pub platform: Platform,
}

/// Serves one request.
pub async fn route(request: HttpRequest, app: &App) -> HttpResponse {
    // The OAuth server: discovery metadata, registration, tokens and the authorization page. Its bearer check
    // guards `/mcp` from inside the MCP transport (`auth::grant_for_mcp_request`).
    if let Some(response) = crate::auth::route(&request, app).await {
        return response;
    }
    let path = request.uri().path();
    match path {
        "/mcp" => crate::mcp::handle(&request, app.config.clone(), app.platform.clone()).await,
        "/" if is_read(&request) => pages::landing::page(&request, &app.config),
        "/health" if is_read(&request) => pages::health::report(&app.config),
        "/" | "/health" => method_not_allowed("GET, HEAD"),
        _ => not_found(),
    }
}

fn is_read(request: &HttpRequest) -> bool {
    matches!(*request.method(), http::Method::GET | http::Method::HEAD)
}

fn method_not_allowed(allow: &'static str) -> HttpResponse {
    http::Response::builder()
        .status(405)
        .header(http::header::ALLOW, allow)
        .header(http::header::CONTENT_TYPE, "text/plain; charset=utf-8")
        .body(b"Method not allowed\n".to_vec())
        .unwrap_or_default()
}

fn not_found() -> HttpResponse {
    http::Response::builder()
        .status(404)
        .header(http::header::CONTENT_TYPE, "application/json")
        .body(br#"{"error":"not_found","message":"Nothing here. The MCP endpoint is /mcp; /health reports the configuration."}"#.to_vec())
        .unwrap_or_default()
}
