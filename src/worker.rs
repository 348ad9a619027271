//! The seams over workers-rs: `fetch` for HTTP, Workers KV, `Date.now()`, and the request/response conversions.

use std::rc::Rc;

use async_trait::async_trait;
use worker::{web_sys, Env, Headers, Method, RequestInit, RequestRedirect};

use zotero_mcp_core::platform::{
    Clock, HttpClient, HttpError, HttpRequest, HttpResponse, KvError, KvKey, KvListPage, KvStore, KvWrite, Platform,
    KV_BULK_READ_MAX,
};
use zotero_mcp_server::app::App;
use zotero_mcp_server::config::{Config, SetupHint};

/// Reads the configuration and binds the platform for one request.
pub fn app(env: &Env) -> worker::Result<App> {
    let lookup =
        |name: &str| env.secret(name).map(|s| s.to_string()).ok().or_else(|| env.var(name).map(|v| v.to_string()).ok());
    // Variables are Worker secrets and vars here: what a person is told to run for a missing one says so.
    let config = Config { setup: SetupHint::Worker, ..Config::from_lookup(lookup) };
    let cache_kv: Rc<dyn KvStore> = Rc::new(WorkerKv { store: env.kv("CACHE_KV")? });
    let clock: Rc<dyn Clock> = Rc::new(WorkerClock);
    let platform = Platform {
        http: Rc::new(WorkerFetch),
        oauth_kv: Rc::new(WorkerKv { store: env.kv("OAUTH_KV")? }),
        counters: crate::counters::bind(env, cache_kv.clone(), clock.clone()),
        cache_kv,
        clock,
        // Many isolates share the stores: a call's entry cannot tell its process from another.
        process_run: None,
        mirror_db: crate::mirror_db::bind(env),
        ai_search: crate::ai_search::bind(env),
        decompose: crate::text::decompose,
        panel_files: crate::panel_files::bind(env),
    };
    Ok(App::with_oauth(config, platform))
}

/// The request as the router takes it, or the 413 that refuses a body over the route's limit
/// (`router::body_limit`) before more of it is held than the limit.
pub async fn into_http_request(mut request: worker::Request) -> worker::Result<Result<HttpRequest, HttpResponse>> {
    let method = request.method();
    let body = match method {
        Method::Get | Method::Head => Vec::new(),
        _ => match read_body(&mut request).await? {
            Ok(body) => body,
            Err(refusal) => return Ok(Err(refusal)),
        },
    };
    let mut builder = http::Request::builder().method(method.as_ref()).uri(request.url()?.as_str());
    for (name, value) in request.headers().entries() {
        builder = builder.header(name, value);
    }
    builder.body(body).map(Ok).map_err(|e| worker::Error::RustError(format!("unreadable request: {e}")))
}

/// How much of an over-limit body is read and dropped before the Worker stops reading and answers anyway.
const DRAIN_LIMIT_BYTES: usize = 64 * 1024 * 1024;

/// Reads a body up to the route's limit: a declared length over it is refused unread, and a stream without
/// one is cut off (and refused) as soon as it passes the limit.
async fn read_body(request: &mut worker::Request) -> worker::Result<Result<Vec<u8>, HttpResponse>> {
    use futures_util::StreamExt;

    let limit = zotero_mcp_server::router::body_limit(&request.path());
    let declared = request.headers().get("content-length")?.and_then(|v| v.trim().parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return Ok(Err(zotero_mcp_server::router::body_too_large(limit)));
    }
    if request.inner().body().is_none() {
        return Ok(Ok(Vec::new()));
    }
    if declared.is_some() {
        // A declared length within the limit frames the body: the runtime delivers exactly that many bytes, so
        // it is taken in one read rather than chunk by chunk (each chunk is a round through the JS glue).
        let body = request.bytes().await?;
        if body.len() > limit {
            return Ok(Err(zotero_mcp_server::router::body_too_large(limit)));
        }
        return Ok(Ok(body));
    }
    let mut stream = request.stream()?;
    let mut body = Vec::new();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk?;
        if body.len() + chunk.len() > limit {
            // Nothing more is kept. The rest is read and dropped (up to a bound) rather than left in the pipe:
            // a Worker that answers while its request body is still arriving leaves the runtime's connection
            // in a state `wrangler dev` reports as a restart, failing the next request.
            let mut drained = chunk.len();
            while drained < DRAIN_LIMIT_BYTES {
                match stream.next().await {
                    Some(Ok(more)) => drained += more.len(),
                    _ => break,
                }
            }
            return Ok(Err(zotero_mcp_server::router::body_too_large(limit)));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(Ok(body))
}

pub fn into_worker_response(response: HttpResponse) -> worker::Result<worker::Response> {
    let (parts, body) = response.into_parts();
    let headers = Headers::new();
    for (name, value) in &parts.headers {
        if let Ok(value) = value.to_str() {
            headers.append(name.as_str(), value)?;
        }
    }
    // A null-body status (204, 304, …) must not get even an empty body, or the runtime throws.
    let response = if body.is_empty() { worker::Response::empty()? } else { worker::Response::from_bytes(body)? };
    Ok(response.with_status(parts.status.as_u16()).with_headers(headers))
}

/// Outbound HTTP through the runtime's `fetch`. Redirects are returned, not followed.
struct WorkerFetch;

#[async_trait(?Send)]
impl HttpClient for WorkerFetch {
    async fn send(&self, request: HttpRequest) -> Result<HttpResponse, HttpError> {
        fetch(request, None).await
    }

    async fn send_limited(&self, request: HttpRequest, limit: usize) -> Result<HttpResponse, HttpError> {
        fetch(request, Some(limit)).await
    }

    /// Reads `Cloudflare.compatibilityFlags.global_fetch_strictly_public` from the Worker's global scope: with
    /// the flag, `fetch` never reaches this zone's origin or a private address.
    fn public_only(&self) -> bool {
        let get = |target: &wasm_bindgen::JsValue, name: &str| js_sys::Reflect::get(target, &name.into()).ok();
        get(&js_sys::global(), "Cloudflare")
            .and_then(|cf| get(&cf, "compatibilityFlags"))
            .and_then(|flags| get(&flags, "global_fetch_strictly_public"))
            .and_then(|flag| flag.as_bool())
            .unwrap_or(false)
    }
}

/// The request `fetch` sends. The method is set on the JavaScript `RequestInit` itself: workers-rs's `Method`
/// knows no WebDAV verbs, and its `From<String>` turns any other method into GET, so a PROPFIND went out as a GET
/// (and `/health` said the WebDAV server did not answer).
fn outbound_request(url: &str, init: &RequestInit, method: &str) -> Result<web_sys::Request, worker::Error> {
    let js_init: web_sys::RequestInit = init.into();
    js_init.set_method(method);
    Ok(web_sys::Request::new_with_str_and_init(url, &js_init)?)
}

/// The runtime's global `fetch`, its answer as the runtime's own `Response`. Not workers-rs's `Fetch`: its
/// `Response::bytes` reads a body chunk by chunk through the JS glue (a promise and a microtask per chunk), which
/// for a 60 KB Zotero page cost more than everything the tool then does with it; `arrayBuffer()` is one call.
async fn runtime_fetch(request: &web_sys::Request) -> Result<web_sys::Response, worker::Error> {
    use wasm_bindgen::JsCast;
    let global: web_sys::WorkerGlobalScope = js_sys::global().unchecked_into();
    let answer = wasm_bindgen_futures::JsFuture::from(global.fetch_with_request(request)).await?;
    Ok(answer.dyn_into::<web_sys::Response>()?)
}

/// One `fetch`, its whole body read, or at most `limit` bytes of it.
async fn fetch(request: HttpRequest, limit: Option<usize>) -> Result<HttpResponse, HttpError> {
    let url = request.uri().to_string();
    let invalid = |reason: String| HttpError::InvalidRequest { url: url.clone(), reason };
    let (parts, body) = request.into_parts();
    let headers = Headers::new();
    for (name, value) in &parts.headers {
        let value = value.to_str().map_err(|e| invalid(e.to_string()))?;
        headers.append(name.as_str(), value).map_err(|e| invalid(e.to_string()))?;
    }
    let mut init = RequestInit::new();
    init.with_headers(headers).with_redirect(RequestRedirect::Manual);
    if !body.is_empty() {
        init.with_body(Some(js_sys::Uint8Array::from(body.as_slice()).into()));
    }
    let outbound = outbound_request(&url, &init, parts.method.as_str()).map_err(|e| invalid(e.to_string()))?;
    let transport = |e: worker::Error| HttpError::Transport { url: url.clone(), reason: e.to_string() };
    let answer = runtime_fetch(&outbound).await.map_err(transport)?;
    let mut builder = http::Response::builder().status(answer.status());
    for (name, value) in Headers(answer.headers()).entries() {
        builder = builder.header(name, value);
    }
    let body = match limit {
        None => {
            let buffer = wasm_bindgen_futures::JsFuture::from(answer.array_buffer().map_err(|e| transport(e.into()))?)
                .await
                .map_err(|e| transport(e.into()))?;
            js_sys::Uint8Array::new(&buffer).to_vec()
        }
        Some(limit) => {
            use futures_util::StreamExt;
            // Chunk by chunk here, not in one read: the runtime undoes a `Content-Encoding` on the way in, so a
            // small declared length can still unpack into far more than the limit.
            let mut response = worker::Response::from(answer);
            let too_large = || HttpError::TooLarge { url: url.clone(), limit };
            let declared = response.headers().get("content-length").ok().flatten();
            if declared.and_then(|v| v.trim().parse::<u64>().ok()).is_some_and(|n| n > limit as u64) {
                return Err(too_large());
            }
            // Chunk by chunk, stopping past the limit (the rest is never read).
            let mut body = Vec::new();
            if let Ok(mut stream) = response.stream() {
                while let Some(chunk) = stream.next().await {
                    let chunk = chunk.map_err(transport)?;
                    if body.len() + chunk.len() > limit {
                        return Err(too_large());
                    }
                    body.extend_from_slice(&chunk);
                }
            }
            body
        }
    };
    builder.body(body).map_err(|e| invalid(e.to_string()))
}

/// The server's operator diagnostics (the `log` facade) on `console.log`/`console.warn`/`console.error`,
/// which `wrangler tail` and Workers Logs show.
struct ConsoleLog;

mod console {
    use wasm_bindgen::prelude::wasm_bindgen;

    #[wasm_bindgen]
    extern "C" {
        #[wasm_bindgen(js_namespace = console, js_name = log)]
        pub fn log(message: &str);
        #[wasm_bindgen(js_namespace = console, js_name = warn)]
        pub fn warn(message: &str);
        #[wasm_bindgen(js_namespace = console, js_name = error)]
        pub fn error(message: &str);
    }
}

impl log::Log for ConsoleLog {
    fn enabled(&self, metadata: &log::Metadata) -> bool {
        metadata.level() <= log::Level::Info
    }

    fn log(&self, record: &log::Record) {
        if !self.enabled(record.metadata()) {
            return;
        }
        let line = format!("{}: {}", record.target(), record.args());
        match record.level() {
            log::Level::Error => console::error(&line),
            log::Level::Warn => console::warn(&line),
            _ => console::log(&line),
        }
    }

    fn flush(&self) {}
}

/// Routes the `log` facade to the console; the first call in an isolate wins, later ones change nothing.
pub fn install_logger() {
    static LOGGER: ConsoleLog = ConsoleLog;
    if log::set_logger(&LOGGER).is_ok() {
        // Info carries the scheduled sync's one summary line; nothing logs below it.
        log::set_max_level(log::LevelFilter::Info);
    }
}

struct WorkerKv {
    store: worker::kv::KvStore,
}

fn kv_error(key: &str, error: impl std::fmt::Display) -> KvError {
    let reason = error.to_string();
    if reason.contains("429") {
        KvError::RateLimited { key: key.to_owned() }
    } else {
        KvError::Backend { key: key.to_owned(), reason }
    }
}

#[async_trait(?Send)]
impl KvStore for WorkerKv {
    async fn get(&self, key: &str) -> Result<Option<String>, KvError> {
        self.store.get(key).text().await.map_err(|e| kv_error(key, e))
    }

    /// One bulk read per [`KV_BULK_READ_MAX`] keys: a single round trip where separate reads would be several.
    async fn get_many(&self, keys: &[&str]) -> Result<Vec<Option<String>>, KvError> {
        let mut values = Vec::with_capacity(keys.len());
        for chunk in keys.chunks(KV_BULK_READ_MAX) {
            let found = self.store.get_bulk(chunk).text().await.map_err(|e| kv_error(&chunk.join(", "), e))?;
            values.extend(chunk.iter().map(|key| found.get(*key).cloned().flatten()));
        }
        Ok(values)
    }

    async fn put(&self, key: &str, value: &str, lifetime: KvWrite) -> Result<(), KvError> {
        let mut put = self.store.put(key, value).map_err(|e| kv_error(key, e))?;
        put = match lifetime {
            KvWrite::Forever => put,
            KvWrite::ExpiresIn(secs) => put.expiration_ttl(secs),
            KvWrite::ExpiresAt(at) => put.expiration(at),
        };
        put.execute().await.map_err(|e| kv_error(key, e))
    }

    async fn delete(&self, key: &str) -> Result<(), KvError> {
        self.store.delete(key).await.map_err(|e| kv_error(key, e))
    }

    async fn list(&self, prefix: &str, cursor: Option<&str>, limit: u32) -> Result<KvListPage, KvError> {
        let mut list = self.store.list().prefix(prefix.to_owned()).limit(limit.clamp(1, 1000) as u64);
        if let Some(cursor) = cursor {
            list = list.cursor(cursor.to_owned());
        }
        let page = list.execute().await.map_err(|e| kv_error(prefix, e))?;
        Ok(KvListPage {
            keys: page.keys.into_iter().map(|k| KvKey { name: k.name, expiration: k.expiration }).collect(),
            cursor: if page.list_complete { None } else { page.cursor },
        })
    }
}

struct WorkerClock;

#[async_trait(?Send)]
impl Clock for WorkerClock {
    fn now_ms(&self) -> u64 {
        worker::Date::now().as_millis()
    }

    async fn sleep(&self, ms: u64) {
        worker::Delay::from(std::time::Duration::from_millis(ms)).await;
    }
}
