//! Response constructors that cannot fail: every header value here is known to be valid, so there is no
//! builder whose error could turn into an empty 200.

use http::header::{HeaderName, HeaderValue, CACHE_CONTROL, CONTENT_TYPE};
use http::StatusCode;
use serde_json::Value;

use crate::platform::HttpResponse;

/// A response with this status and body and no headers. A status outside 100–999 becomes 500, which no caller
/// here produces (they pass constants).
pub fn with_body(status: u16, body: Vec<u8>) -> HttpResponse {
    let mut response = http::Response::new(body);
    *response.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    response
}

/// A status with no body (202, 204, …).
pub fn empty(status: u16) -> HttpResponse {
    with_body(status, Vec::new())
}

/// A JSON body.
pub fn json(status: u16, body: &Value) -> HttpResponse {
    typed(status, "application/json", body.to_string().into_bytes())
}

/// A body of the given media type (a static string, so always a valid header value).
pub fn typed(status: u16, content_type: &'static str, body: Vec<u8>) -> HttpResponse {
    let mut response = with_body(status, body);
    response.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

/// Plain text.
pub fn text(status: u16, body: impl Into<String>) -> HttpResponse {
    typed(status, "text/plain; charset=utf-8", body.into().into_bytes())
}

/// An HTML page: never cached, never framed, no referrer, no script (a CSP that allows only inline style).
pub fn html(status: u16, body: String) -> HttpResponse {
    let mut response = typed(status, "text/html; charset=utf-8", body.into_bytes());
    let headers = response.headers_mut();
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(http::header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    headers.insert(http::header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(
        http::header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static("default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'"),
    );
    response
}

/// A 303 to `location`, uncached and without a referrer. A location that is not a valid header value (which
/// validated redirect URIs never are) is answered 400 rather than sent half-formed.
pub fn see_other(location: &str) -> HttpResponse {
    let Ok(value) = HeaderValue::from_str(location) else {
        return text(400, "The redirect address contains characters that cannot be sent in a Location header.\n");
    };
    let mut response = empty(303);
    let headers = response.headers_mut();
    headers.insert(http::header::LOCATION, value);
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(http::header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    response
}

/// Adds a header whose value is a static string.
pub fn with_header(mut response: HttpResponse, name: HeaderName, value: &'static str) -> HttpResponse {
    response.headers_mut().insert(name, HeaderValue::from_static(value));
    response
}

/// Marks a response as never to be stored by any cache.
pub fn no_store(response: HttpResponse) -> HttpResponse {
    with_header(response, CACHE_CONTROL, "no-store")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constructors_keep_status_type_and_body() {
        let r = json(401, &serde_json::json!({ "error": "x" }));
        assert_eq!(r.status(), 401);
        assert_eq!(r.headers()[CONTENT_TYPE], "application/json");
        assert_eq!(r.body(), br#"{"error":"x"}"#);
        assert_eq!(empty(204).body().len(), 0);
        assert_eq!(with_body(7, Vec::new()).status(), 500);
    }
}
