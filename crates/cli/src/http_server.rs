//! `zotero-mcp serve --http ADDR`: the server crate's router on hyper, one thread, one task per connection.

use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr};
use std::rc::Rc;
use std::time::Duration;

use http_body_util::{BodyExt, Full, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use zotero_mcp_server::app::App;
use zotero_mcp_server::auth::client_address::client_address;
use zotero_mcp_server::{respond, router};

/// How the server is reached, for the absolute URLs the OAuth server derives from each request.
#[derive(Clone, Debug)]
pub struct PublicBase {
    /// `http`, or `https` behind a TLS-terminating proxy.
    pub scheme: String,
}

/// Serves on `listener` until `stop` resolves.
pub async fn serve(
    listener: TcpListener,
    app: App,
    base: PublicBase,
    stop: impl std::future::Future<Output = ()>,
) -> std::io::Result<()> {
    if let Some(name) = app.config.trusted_proxy_header.as_deref() {
        if http::HeaderName::from_bytes(name.as_bytes()).is_err() {
            eprintln!(
                "zotero-mcp: TRUSTED_PROXY_HEADER `{name}` is not a header name; client addresses are the sockets'"
            );
        }
    }
    let app = Rc::new(app);
    let base = Rc::new(base);
    tokio::pin!(stop);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => accepted?,
            () = &mut stop => return Ok(()),
        };
        let (app, base) = (app.clone(), base.clone());
        tokio::task::spawn_local(async move {
            let service = service_fn(move |request| {
                let (app, base) = (app.clone(), base.clone());
                async move { Ok::<_, Infallible>(answer(request, peer, &app, &base).await) }
            });
            let connection = http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(Duration::from_secs(30))
                .serve_connection(TokioIo::new(stream), service);
            if let Err(e) = connection.await {
                eprintln!("zotero-mcp: connection from {peer}: {e}");
            }
        });
    }
}

async fn answer(
    request: hyper::Request<Incoming>,
    peer: SocketAddr,
    app: &App,
    base: &PublicBase,
) -> hyper::Response<Full<Bytes>> {
    // The panels' static files, before anything else, as Workers static assets answer them on the Worker.
    if let Some(response) = crate::panel_files::serve(request.method(), request.uri().path()) {
        return response;
    }
    let client = client_address(peer.ip(), request.headers(), app.config.trusted_proxy_header.as_deref());
    let response = match into_http_request(request, client, base).await {
        // Test-only switches stay with requests from this machine to a loopback host (`App::for_request`).
        Ok(request) => {
            let app = app.for_request(&request);
            router::route(request, &app).await
        }
        Err(refusal) => refusal,
    };
    let (parts, body) = response.into_parts();
    hyper::Response::from_parts(parts, Full::new(Bytes::from(body)))
}

/// The request as the router takes it: an absolute URL (as the Worker sees it) and the whole body.
async fn into_http_request(
    request: hyper::Request<Incoming>,
    client: IpAddr,
    base: &PublicBase,
) -> Result<zotero_mcp_core::platform::HttpRequest, zotero_mcp_core::platform::HttpResponse> {
    let (mut parts, body) = request.into_parts();
    // The client's address, as Cloudflare gives it to the Worker, for the login throttle and the registration
    // limit: the socket's peer, never what the client claims, except that a loopback peer's `TRUSTED_PROXY_HEADER`
    // is believed (`client_address`). Behind a proxy without it every client is the proxy, which only makes the
    // limits stricter.
    if let Ok(value) = http::HeaderValue::from_str(&client.to_string()) {
        parts.headers.insert(http::HeaderName::from_static("cf-connecting-ip"), value);
    }
    // The route's limit, checked before the body is held (a declared length) and while it is read (none).
    let limit = router::body_limit(parts.uri.path());
    let declared = parts
        .headers
        .get(http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return Err(router::body_too_large(limit));
    }
    let body = match Limited::new(body, limit).collect().await {
        Ok(collected) => collected.to_bytes().to_vec(),
        Err(e) if e.downcast_ref::<http_body_util::LengthLimitError>().is_some() => {
            return Err(router::body_too_large(limit))
        }
        Err(e) => return Err(respond::text(400, format!("The request body could not be read: {e}\n"))),
    };
    let host = parts.headers.get(http::header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("").to_owned();
    if host.is_empty() {
        return Err(respond::text(400, "The request has no Host header.\n"));
    }
    let path = parts.uri.path_and_query().map(|p| p.as_str()).unwrap_or("/");
    parts.uri = match format!("{}://{host}{path}", base.scheme).parse() {
        Ok(uri) => uri,
        Err(_) => return Err(respond::text(400, "The Host header is not a valid host name.\n")),
    };
    Ok(http::Request::from_parts(parts, body))
}

/// Whether an address only this machine can reach.
pub fn is_loopback(addr: &SocketAddr) -> bool {
    addr.ip().is_loopback()
}
