//! The Cloudflare Worker shell of zotero-mcp: the entry points and the workers-rs implementations of the
//! platform seams. Everything else is the runtime-free server crate (crates/server) over the core crate
//! (crates/core); natively this crate compiles to nothing.

#[cfg(target_arch = "wasm32")]
mod counters;
#[cfg(target_arch = "wasm32")]
mod worker;

/// The Worker's entry points: translate the runtime's request and bindings into ours, route, translate back.
/// This and `worker` are the only places that name workers-rs types.
#[cfg(target_arch = "wasm32")]
mod entry {
    use worker::{event, Context, Env, Request, Response, Result};

    #[event(fetch)]
    async fn fetch(request: Request, env: Env, _ctx: Context) -> Result<Response> {
        console_error_panic_hook::set_once();
        crate::worker::install_logger();
        let app = crate::worker::app(&env)?;
        let response = match crate::worker::into_http_request(request).await? {
            Ok(request) => zotero_mcp_server::router::route(request, &app).await,
            Err(refusal) => refusal,
        };
        crate::worker::into_worker_response(response)
    }
}
