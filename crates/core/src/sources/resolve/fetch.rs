//! The one way the sources make a request: a GET with `Accept` and the settings' `User-Agent`, one attempt, a time
//! limit through the clock, and a cap on the body, so a slow or endless answer costs the import a bounded wait and
//! bounded memory. Retrying is the person's decision: an import is interactive, and the error says what to try.

use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};

use super::{ResolveError, Source, SourceSettings};
use crate::platform::{within, Clock, HttpClient, HttpError, HttpResponse};

/// The largest body read from a metadata API. A CrossRef work with a thousand references is about 1 MiB.
pub(super) const MAX_BODY: usize = 2 * 1024 * 1024;

/// What a DOI may keep unencoded in a URL path: letters, digits, `-._~`, the `/` between prefix and suffix, and
/// `()`, `:`, which DOIs use and servers pass through. `;` is encoded: CrossRef's Jetty would otherwise cut a
/// SICI DOI (`…2.0.co;2`) at it as a path parameter; `[`, `]`, `#`, `?`, `%`, `<`, `>` and spaces are encoded too.
const DOI_PATH: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~')
    .remove(b'/')
    .remove(b'(')
    .remove(b')')
    .remove(b':');

/// A query value: everything but letters, digits and `-._~` encoded, `/` kept (old arXiv ids have one).
const QUERY_VALUE: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~').remove(b'/');

pub(super) fn doi_path(doi: &str) -> String {
    utf8_percent_encode(doi, DOI_PATH).to_string()
}

pub(super) fn query_value(value: &str) -> String {
    utf8_percent_encode(value, QUERY_VALUE).to_string()
}

/// A base URL from the settings without a trailing `/`, so `{base}/works/…` has one slash.
pub(super) fn base(url: &str) -> &str {
    url.trim_end_matches('/')
}

/// Sends one GET and returns the response, whatever its status; `what` names the record in error messages.
pub(super) async fn get(
    http: &dyn HttpClient,
    clock: &dyn Clock,
    settings: &SourceSettings,
    source: Source,
    what: &str,
    url: &str,
    accept: &str,
) -> Result<HttpResponse, ResolveError> {
    let request = http::Request::get(url)
        .header(http::header::ACCEPT, accept)
        .header(http::header::USER_AGENT, settings.user_agent.as_str())
        .body(Vec::new())
        .map_err(|error| ResolveError::Transport {
            service: source,
            what: what.to_owned(),
            reason: format!("the request could not be built: {error}"),
        })?;
    match within(clock, settings.timeout_ms, http.send_limited(request, MAX_BODY)).await {
        None => Err(ResolveError::Timeout { service: source, what: what.to_owned(), after_ms: settings.timeout_ms }),
        Some(Ok(response)) => Ok(response),
        Some(Err(HttpError::Timeout { after_ms, .. })) => {
            Err(ResolveError::Timeout { service: source, what: what.to_owned(), after_ms })
        }
        Some(Err(HttpError::TooLarge { limit, .. })) => {
            Err(ResolveError::TooLarge { service: source, what: what.to_owned(), limit })
        }
        Some(Err(
            error @ (HttpError::Transport { .. } | HttpError::InvalidRequest { .. } | HttpError::NotPublic { .. }),
        )) => Err(ResolveError::Transport { service: source, what: what.to_owned(), reason: error.to_string() }),
    }
}

/// The body of a 2xx response; a 404 is `Ok(None)` (the caller knows which sources to name), anything else an
/// upstream status error.
pub(super) fn body_unless_missing(
    source: Source,
    what: &str,
    response: HttpResponse,
) -> Result<Option<Vec<u8>>, ResolveError> {
    let status = response.status();
    if status == http::StatusCode::NOT_FOUND {
        return Ok(None);
    }
    if !status.is_success() {
        return Err(ResolveError::Status { service: source, what: what.to_owned(), status: status.as_u16() });
    }
    Ok(Some(response.into_body()))
}

/// The body as JSON, or an `Unparseable` error naming the source.
pub(super) fn json(source: Source, what: &str, body: &[u8]) -> Result<serde_json::Value, ResolveError> {
    serde_json::from_slice(body).map_err(|error| ResolveError::Unparseable {
        service: source,
        what: what.to_owned(),
        reason: format!("not JSON: {error}"),
    })
}

/// The object at `pointer` (`/message`, `/data/attributes`) of a JSON document, or an `Unparseable` error naming
/// what is missing.
pub(super) fn object_at<'a>(
    source: Source,
    what: &str,
    document: &'a serde_json::Value,
    pointer: &str,
) -> Result<&'a serde_json::Value, ResolveError> {
    document.pointer(pointer).filter(|value| value.is_object()).ok_or_else(|| ResolveError::Unparseable {
        service: source,
        what: what.to_owned(),
        reason: format!("no `{}` object", pointer.trim_start_matches('/').replace('/', ".")),
    })
}

/// The body as UTF-8 text, or an `Unparseable` error.
pub(super) fn text(source: Source, what: &str, body: &[u8]) -> Result<String, ResolveError> {
    String::from_utf8(body.to_vec()).map_err(|_| ResolveError::Unparseable {
        service: source,
        what: what.to_owned(),
        reason: "not UTF-8 text".into(),
    })
}
