//! The Cloudflare Worker shell of zotero-mcp: the entry points and the workers-rs implementations of the
//! platform seams. Everything else is the runtime-free server crate (crates/server) over the core crate
//! (crates/core); natively this crate compiles to nothing.

#[cfg(target_arch = "wasm32")]
mod ai_search;
#[cfg(target_arch = "wasm32")]
mod counters;
#[cfg(target_arch = "wasm32")]
mod mirror_db;
#[cfg(target_arch = "wasm32")]
mod panel_files;
/// Public for `tests/fold_wasm.rs`.
#[cfg(target_arch = "wasm32")]
pub mod text;
#[cfg(target_arch = "wasm32")]
mod worker;

/// The Worker's entry points: translate the runtime's request and bindings into ours, route, translate back.
/// This and `worker` are the only places that name workers-rs types.
#[cfg(target_arch = "wasm32")]
mod entry {
    use worker::{event, Context, Env, Request, Response, Result, ScheduleContext, ScheduledEvent};

    #[event(fetch)]
    async fn fetch(request: Request, env: Env, _ctx: Context) -> Result<Response> {
        console_error_panic_hook::set_once();
        crate::worker::install_logger();
        let app = crate::worker::app(&env)?;
        let response = match crate::worker::into_http_request(request).await? {
            Ok(request) => {
                // Test-only switches stay with local requests (`wrangler dev` on loopback): a deployment that has
                // ENABLE_TEST_FIXTURES set by mistake serves the Internet without them.
                let app = app.for_request(&request);
                if app.config.test_fixtures && request.uri().path().starts_with("/__fixtures/trap") {
                    trap_for_test(request.uri().path().ends_with("/after-await")).await;
                }
                zotero_mcp_server::router::route(request, &app).await
            }
            Err(refusal) => refusal,
        };
        crate::worker::into_worker_response(response)
    }

    /// A Rust panic, which aborts the wasm instance: src/entry.mjs must serve the next request from a fresh one
    /// (tests/e2e/worker-entry/). Only with `ENABLE_TEST_FIXTURES=1` and for a local request
    /// (`App::for_request`); `after_await` panics in a later poll, as a panic part-way through a tool would.
    #[allow(clippy::panic, reason = "the test fixture's whole point is a panic")]
    async fn trap_for_test(after_await: bool) {
        if after_await {
            worker::Delay::from(std::time::Duration::from_millis(1)).await;
        }
        panic!("test fixture: a trap in the wasm instance");
    }

    /// The cron (`[triggers] crons` in wrangler.toml): brings the semantic index up to date with the library.
    /// The run continues after this returns (`wait_until`); it logs its own summary and never throws away
    /// progress (crates/server/src/jobs.rs).
    #[event(scheduled)]
    async fn scheduled(_event: ScheduledEvent, env: Env, ctx: ScheduleContext) {
        console_error_panic_hook::set_once();
        crate::worker::install_logger();
        match crate::worker::app(&env) {
            Ok(app) => ctx.wait_until(async move {
                // The outcomes are logged by the jobs; nothing waits for them here. The library mirror takes
                // what the semantic index left of the invocation's requests.
                let run = zotero_mcp_server::jobs::sync_semantic_index(&app).await;
                let _ = zotero_mcp_server::jobs::advance_mirror(&app, run.requests).await;
            }),
            Err(error) => {
                log::error!(target: "sync", "ai search sync failed: the Worker's bindings could not be read: {error}")
            }
        }
    }
}
