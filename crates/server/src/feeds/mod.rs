//! Bibliography feeds: `GET /feeds/<secret>.<ext>` serves a library, a collection or a saved search as one
//! BibTeX, BibLaTeX, CSL-JSON or RIS file, for Overleaf ("New file → From external URL"), latexmk, Pandoc and
//! Quarto, which cannot sign in. The secret in the URL is the only credential (a capability:
//! [`crate::feed_links`]), so every refusal is the same bare 404, whether the link never existed, was revoked or
//! expired.
//!
//! - the whole scope is served, never a page of it: from the library mirror where the runtime has one, else read
//!   live within the request's budget, and when neither can answer whole, a 503 that says when to come back;
//! - `ETag` is the library version, so `If-None-Match` is answered 304 after one freshness request;
//! - each link may be fetched [`PER_HOUR`] times an hour;
//! - nothing in an answer names the Zotero key, a token or an internal address: a failure reading Zotero is
//!   answered with a fixed text, and its cause goes to the server's log.

mod scope;

use http::header::{HeaderValue, ETAG, IF_NONE_MATCH, RETRY_AFTER};
use zotero_mcp_core::platform::{CounterStep, CountersError};

use crate::app::App;
use crate::feed_links::{sha256_hex, LinkStore, PREFIX};
use crate::platform::{HttpRequest, HttpResponse};
use crate::respond;
use scope::NotNow;

/// Fetches allowed per link per hour: Overleaf refreshes on demand and a build tool once a build.
pub const PER_HOUR: u32 = 120;

/// Serves `GET`/`HEAD /feeds/<secret>.<ext>`; `None` for any other path.
pub async fn route(request: &HttpRequest, app: &App) -> Option<HttpResponse> {
    let name = request.uri().path().strip_prefix(PREFIX)?;
    if !matches!(*request.method(), http::Method::GET | http::Method::HEAD) {
        return Some(respond::with_header(
            respond::text(405, "Method not allowed\n"),
            http::header::ALLOW,
            "GET, HEAD",
        ));
    }
    let response = serve(request, app, name).await;
    // Never cached by anything in between (the URL is a credential), never sniffed, never sent on as a referrer.
    let mut response = respond::no_store(response);
    let headers = response.headers_mut();
    headers.insert(http::header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    headers.insert(http::header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    if *request.method() == http::Method::HEAD {
        response.body_mut().clear();
    }
    Some(response)
}

async fn serve(request: &HttpRequest, app: &App, name: &str) -> HttpResponse {
    let Some((secret, extension)) = name.rsplit_once('.') else { return not_found() };
    let store = LinkStore { kv: app.platform.oauth_kv.as_ref() };
    let now_ms = app.platform.clock.now_ms();
    let link = match store.open(secret).await {
        Ok(Some(link)) => link,
        Ok(None) => return not_found(),
        Err(error) => return unavailable(&format!("feed link store: {error}"), 60),
    };
    let Some(format) = link.format().filter(|f| f.extension() == extension && !link.expired(now_ms)) else {
        return not_found();
    };
    if let Some(refused) = over_limit(app, secret).await {
        return refused;
    }
    let ctx = match scope::open(app, &link).await {
        Ok(ctx) => ctx,
        Err(error) => return unavailable(&error.to_string(), 300),
    };
    let source = match scope::source(&ctx).await {
        Ok(source) => source,
        Err(not_now) => return refusal(not_now),
    };
    let etag = format!("\"{}\"", source.version());
    if matches_etag(request, &etag) {
        return with_etag(respond::empty(304), &etag);
    }
    match scope::write(&ctx, &source, &link, format).await {
        Ok(body) => with_etag(respond::typed(200, format.content_type(), body.into_bytes()), &etag),
        Err(not_now) => refusal(not_now),
    }
}

fn refusal(not_now: NotNow) -> HttpResponse {
    match not_now {
        NotNow::Filling(retry_after_secs) => filling(retry_after_secs),
        NotNow::TooLarge(why) => respond::text(503, format!("This feed cannot be served whole here: {why}.\n")),
        NotNow::Gone => not_found(),
        NotNow::Failed(cause) => unavailable(&cause, 300),
    }
}

/// Counts the fetch against the link's hourly allowance; a 429 when it is used up.
async fn over_limit(app: &App, secret: &str) -> Option<HttpResponse> {
    // Counted under the secret's hash: the counters never hold a secret.
    let key = format!("feed-fetches:{}", sha256_hex(secret));
    let steps = [
        CounterStep::Below { key: key.clone(), limit: PER_HOUR },
        CounterStep::Add { key, window_secs: 3600, rolling: false },
    ];
    match app.platform.counters.update(&steps).await {
        Ok(_) => None,
        Err(CountersError::Refused { until_ms, .. }) => {
            let wait = until_ms.saturating_sub(app.platform.clock.now_ms()).div_ceil(1000).max(1);
            let mut response = respond::text(
                429,
                format!("This feed link was fetched {PER_HOUR} times in the last hour. Try again in {wait} seconds.\n"),
            );
            if let Ok(value) = HeaderValue::from_str(&wait.to_string()) {
                response.headers_mut().insert(RETRY_AFTER, value);
            }
            Some(response)
        }
        // An uncounted fetch is still served: the allowance guards Zotero's rate, not a secret.
        Err(CountersError::Unavailable(_)) => None,
    }
}

fn matches_etag(request: &HttpRequest, etag: &str) -> bool {
    request
        .headers()
        .get_all(IF_NONE_MATCH)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .any(|value| value.split(',').map(str::trim).any(|tag| tag == "*" || tag.trim_start_matches("W/") == etag))
}

fn with_etag(mut response: HttpResponse, etag: &str) -> HttpResponse {
    if let Ok(value) = HeaderValue::from_str(etag) {
        response.headers_mut().insert(ETAG, value);
    }
    response
}

/// The one answer to a link that does not serve: unknown, revoked, expired or of another format.
fn not_found() -> HttpResponse {
    respond::text(404, "Not found\n")
}

fn filling(retry_after_secs: u64) -> HttpResponse {
    let minutes = retry_after_secs.div_ceil(60);
    let mut response = respond::text(
        503,
        format!(
            "This server is still copying the library, so it cannot serve the whole feed yet. Try again in about \
             {minutes} minute(s).\n"
        ),
    );
    if let Ok(value) = HeaderValue::from_str(&retry_after_secs.to_string()) {
        response.headers_mut().insert(RETRY_AFTER, value);
    }
    response
}

/// A failure reading the library or the link store: logged here, answered with a fixed text.
fn unavailable(cause: &str, retry_after_secs: u64) -> HttpResponse {
    crate::auth::log::warn(&format!("feed not served: {cause}"));
    let mut response =
        respond::text(503, "The library could not be read just now. Try again in a few minutes.\n".to_owned());
    if let Ok(value) = HeaderValue::from_str(&retry_after_secs.to_string()) {
        response.headers_mut().insert(RETRY_AFTER, value);
    }
    response
}
