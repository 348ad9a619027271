//! zotero-mcp: a remote MCP server for a Zotero library, running on Cloudflare Workers.
//!
//! Everything but the Worker entry points and `platform` (the bindings) is plain Rust that builds and is tested
//! on the host. A request goes `router` → `mcp` (transport ladder, dispatch, registry) → `tools` → the core crate.

pub mod auth;
pub mod config;
pub mod context;
pub mod format;
pub mod mcp;
pub mod pages;
pub mod router;
pub mod tools;

pub mod platform;

/// The Worker's entry points: translate the runtime's request and bindings into ours, route, translate back.
/// This and `platform` are the only places that name workers-rs types.
#[cfg(target_arch = "wasm32")]
mod entry {
    use worker::{event, Context, Env, Request, Response, Result};

    #[event(fetch)]
    async fn fetch(request: Request, env: Env, _ctx: Context) -> Result<Response> {
        console_error_panic_hook::set_once();
        let app = crate::platform::worker::app(&env)?;
        let request = crate::platform::worker::into_http_request(request).await?;
        let response = crate::router::route(request, &app).await;
        crate::platform::worker::into_worker_response(response)
    }
}
