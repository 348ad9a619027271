//! The redirect URI rules (`auth::redirect`, private) through Dynamic Client Registration and the authorization
//! endpoint, which are where they guard something.
//!
//! Input: redirect URIs to register, one per line; then a blank line and the redirect URI an authorization
//! request names (default: the first registered one). An input starting with `{` is instead the registration
//! body itself (any client metadata), and the authorization request uses its first redirect URI.
//!
//! What must hold:
//! - registration answers 201 or 400 (`invalid_client_metadata`/`invalid_request`, no-store, JSON);
//! - a registered client's redirect URIs are exactly the ones sent, and every one is acceptable by an
//!   independent reading with the url crate: at most 2048 bytes, no whitespace or control characters, no `#`,
//!   an absolute URL whose scheme is `https`, `http` on a loopback host, a reverse-domain private scheme or a
//!   known client's (`cursor`, `vscode`, `vscode-insiders`) — never `javascript:`, `data:`, `file:` and the like;
//! - the authorization page (GET) is shown only for a redirect URI that is acceptable and registered (exactly,
//!   or a loopback one on another port) and never reflects the URI or client name unescaped;
//! - a correct consent (POST) redirects (303) to that redirect URI — same scheme, host and path, no fragment —
//!   with `code`, `state` and `iss` in its query, and nowhere else.

#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::{json, Value};
use zotero_mcp_fuzz::{block_on, challenge, check_oauth_error, oauth_app, query, url_is_loopback, Answer, ORIGIN, PASSWORD};

const MAX_URI_BYTES: usize = 2048;
const KNOWN_CLIENT_SCHEMES: &[&str] = &["cursor", "vscode", "vscode-insiders"];
const NEVER: &[&str] = &["javascript", "data", "file", "vbscript", "blob", "about", "filesystem", "view-source"];

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (body, registered_sent, requested): (Vec<u8>, Option<Vec<Value>>, Option<String>) = if text.starts_with('{') {
        let sent = serde_json::from_slice::<Value>(data).ok().and_then(|v| v.get("redirect_uris").cloned());
        let uris = sent.as_ref().and_then(Value::as_array).cloned();
        (data.to_vec(), uris, None)
    } else {
        let (head, tail) = match text.split_once("\n\n") {
            Some((head, tail)) => (head, Some(tail.split('\n').next().unwrap_or("").to_owned())),
            None => (text.as_ref(), None),
        };
        // One URI a line; a final newline ends the last line rather than adding an empty URI.
        let head = head.strip_suffix('\n').unwrap_or(head);
        let uris: Vec<Value> = head.split('\n').map(|l| Value::String(l.to_owned())).collect();
        let body = json!({ "redirect_uris": uris, "client_name": "Fuzz <b>client</b>", "token_endpoint_auth_method": "none" });
        (body.to_string().into_bytes(), Some(uris), tail)
    };

    let app = oauth_app(&[]);
    let register = http::Request::post(format!("{ORIGIN}/oauth/register"))
        .header("content-type", "application/json")
        .body(body)
        .expect("request");
    let answer = Answer::of(block_on(zotero_mcp_server::router::route(register, &app)));
    zotero_mcp_fuzz::debug(|| format!("register {} {}", answer.status, String::from_utf8_lossy(&answer.body)));
    match answer.status {
        201 => {}
        400 => {
            let code = check_oauth_error(&answer);
            assert!(matches!(code.as_str(), "invalid_client_metadata" | "invalid_request"), "{code}");
            return;
        }
        other => panic!("registration answered {other}: {}", answer.text()),
    }
    assert_eq!(answer.header("cache-control"), Some("no-store"));
    let client = answer.json();
    let client_id = client["client_id"].as_str().expect("client_id").to_owned();
    let registered: Vec<String> = client["redirect_uris"]
        .as_array()
        .expect("a registered client has redirect_uris")
        .iter()
        .map(|v| v.as_str().expect("string").to_owned())
        .collect();
    assert!(!registered.is_empty(), "a client without redirect URIs was registered");
    if let Some(sent) = &registered_sent {
        let sent: Vec<&str> = sent.iter().filter_map(Value::as_str).collect();
        assert_eq!(registered, sent, "the registered redirect URIs differ from those sent");
    }
    for uri in &registered {
        if let Some(why) = unacceptable(uri) {
            panic!("registered redirect URI {uri:?}: {why}");
        }
    }
    if let Some(name) = client.get("client_name").and_then(Value::as_str) {
        assert!(!name.chars().any(char::is_control), "control characters in the stored client name {name:?}");
    }

    // The authorization page for the first (or the requested) redirect URI.
    let requested = requested.unwrap_or_else(|| registered[0].clone());
    let challenge = challenge();
    let query = query(&[
        ("client_id", &client_id),
        ("redirect_uri", &requested),
        ("response_type", "code"),
        ("code_challenge", &challenge),
        ("code_challenge_method", "S256"),
        ("state", "st<'\">"),
    ]);
    let url = format!("{ORIGIN}/authorize?{query}");
    let page = Answer::of(block_on(zotero_mcp_server::router::route(
        http::Request::get(&url).body(Vec::new()).expect("request"),
        &app,
    )));
    let html = page.text();
    zotero_mcp_fuzz::debug(|| format!("authorize {requested:?} -> {}", page.status));
    let shown_ok = unacceptable(&requested).is_none() && matches_registered(&requested, &registered);
    match page.status {
        200 => assert!(shown_ok, "consent page for redirect URI {requested:?}, registered {registered:?}"),
        // A client registered without the `code` response type is sent back an error, once its URI checked.
        303 => {
            assert!(shown_ok, "redirected to {requested:?}, registered {registered:?}");
            let to = check_location(answer_location(&page), &requested);
            assert!(to.query_pairs().any(|(k, _)| k == "error"), "{to}");
            return;
        }
        400 => assert!(!shown_ok || requested.is_empty(), "refused a registered redirect URI {requested:?}: {html}"),
        other => panic!("authorization page answered {other}: {html}"),
    }
    for reflected in [requested.as_str(), client.get("client_name").and_then(Value::as_str).unwrap_or("")] {
        if reflected.contains(['<', '>', '"']) {
            assert!(!html.contains(reflected), "the page reflects {reflected:?} unescaped");
        }
    }
    if page.status != 200 {
        return;
    }

    // A correct consent sends the browser to the requested redirect URI, and nowhere else.
    let consent = http::Request::post(&url)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(zotero_mcp_fuzz::query(&[("password", PASSWORD)]).into_bytes())
        .expect("request");
    let answer = Answer::of(block_on(zotero_mcp_server::router::route(consent, &app)));
    assert_eq!(answer.status, 303, "a correct consent must redirect: {}", answer.text());
    zotero_mcp_fuzz::debug(|| format!("consent -> {:?}", answer.header("location")));
    let to = check_location(answer_location(&answer), &requested);
    let location = to.as_str();
    let params: Vec<(String, String)> = to.query_pairs().into_owned().collect();
    let get = |name: &str| params.iter().filter(|(k, _)| k == name).map(|(_, v)| v.as_str()).collect::<Vec<_>>();
    assert_eq!(get("state"), ["st<'\">"], "{location}");
    assert_eq!(get("iss"), [ORIGIN], "{location}");
    assert_eq!(get("code").len(), 1, "{location}");
    assert!(get("code")[0].starts_with("owner:"), "{location}");
});

fn answer_location(answer: &Answer) -> &str {
    answer.header("location").expect("a 303 has a Location")
}

/// The Location goes to the requested redirect URI (scheme, user, host, port, path), without a fragment.
fn check_location(location: &str, requested: &str) -> url::Url {
    let to = url::Url::parse(location).unwrap_or_else(|e| panic!("Location {location:?} is not a URL: {e}"));
    let from = url::Url::parse(requested).expect("an accepted redirect URI parses");
    assert_eq!(
        (to.scheme(), to.username(), to.host_str(), to.port(), to.path()),
        (from.scheme(), from.username(), from.host_str(), from.port(), from.path()),
        "redirected to {location}, not to {requested}"
    );
    assert!(to.fragment().is_none(), "a fragment in {location}");
    to
}

/// Why a redirect URI must never be registered, by the url crate and RFC 6749/8252/9700; `None` if acceptable.
fn unacceptable(uri: &str) -> Option<&'static str> {
    if uri.len() > MAX_URI_BYTES {
        return Some("longer than 2048 bytes");
    }
    if uri.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Some("whitespace or control characters");
    }
    if uri.contains('#') {
        return Some("a fragment");
    }
    let Ok(url) = url::Url::parse(uri) else { return Some("not an absolute URL") };
    // User info names no callback, and would let two different URIs match as one loopback URI on two ports.
    if !url.username().is_empty() || url.password().is_some() {
        return Some("user info");
    }
    let scheme = url.scheme();
    if NEVER.contains(&scheme) {
        return Some("a scheme a browser would run or read locally");
    }
    // The text's own scheme is the one parsed (no leniency before it).
    if !uri.get(..scheme.len()).is_some_and(|s| s.eq_ignore_ascii_case(scheme)) || uri.as_bytes().get(scheme.len()) != Some(&b':') {
        return Some("the parsed scheme is not the text's");
    }
    match scheme {
        "https" => None,
        "http" if url_is_loopback(&url) => None,
        "http" => Some("plain http to a host that is not loopback"),
        s if s.contains('.') || KNOWN_CLIENT_SCHEMES.contains(&s) => None,
        _ => Some("a scheme that is neither https, loopback http nor a private-use one"),
    }
}

/// RFC 8252 §7.3 matching: exact, or both loopback http(s) differing at most in the port.
fn matches_registered(requested: &str, registered: &[String]) -> bool {
    registered.iter().any(|r| {
        if r == requested {
            return true;
        }
        let (Ok(a), Ok(b)) = (url::Url::parse(requested), url::Url::parse(r)) else { return false };
        let query = |u: &url::Url| u.query().filter(|q| !q.is_empty()).map(str::to_owned);
        url_is_loopback(&a)
            && url_is_loopback(&b)
            && a.scheme() == b.scheme()
            && a.host_str() == b.host_str()
            && a.path() == b.path()
            && query(&a) == query(&b)
            && same_user(&a, &b)
    })
}

fn same_user(a: &url::Url, b: &url::Url) -> bool {
    a.username() == b.username() && a.password() == b.password()
}
