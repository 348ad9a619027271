//! The form parser (`auth::form::Params::parse_bounded`, private) through the two endpoints that read forms
//! before anyone is authenticated: the token endpoint and the consent form of `/authorize`.
//!
//! Input: header lines, a blank line, then the form body (see `zotero_mcp_fuzz::RawRequest`); without a blank
//! line the whole input is the body and the content type is the form's. Directive `:path: /authorize` posts the
//! consent form (default: `/oauth/token`).
//!
//! Every app holds a public and a confidential client and one pending code ([`KNOWN_CODE`], PKCE verifier
//! [`KNOWN_VERIFIER`]), so the fuzzer can reach every branch of the token endpoint. What must hold:
//! - token endpoint: only 200/400/401, every error a no-store OAuth error; the form limits (100 parameters) and
//!   the repeated-parameter rule are enforced; a 200 is either a revocation or the exchange of the one real
//!   code with its real verifier by its own client, and issues tokens for that grant only;
//! - consent form: only 303/400/401; a redirect (authorization) only with the right password in the form's
//!   first `password`, always to the registered redirect URI with the request's `state`, and the grant it
//!   creates never has more scope than the request asked for (`zotero:read`), whatever boxes the form ticks.

#![no_main]

use libfuzzer_sys::fuzz_target;
use base64::Engine as _;
use zotero_mcp_fuzz::{
    block_on, challenge, check_oauth_error, form_pairs, oauth_app, query, seed_oauth, Answer, OAuthFixtures,
    RawRequest, CONFIDENTIAL_CLIENT, CONFIDENTIAL_SECRET, KNOWN_CODE, KNOWN_VERIFIER, ORIGIN, PASSWORD, PUBLIC_CLIENT, PUBLIC_REDIRECT,
};
use zotero_mcp_server::auth::storage::Store;

/// `auth::form::MAX_PARAMS` (private there).
const MAX_PARAMS: usize = 100;
const FORM_TYPE: &str = "application/x-www-form-urlencoded";

thread_local! {
    static FIXTURES: OAuthFixtures = OAuthFixtures::new();
}

fuzz_target!(|data: &[u8]| {
    let mut raw = RawRequest::parse(data);
    if raw.header("content-type").is_none() && raw.headers.is_empty() {
        raw.headers.push((b"content-type".to_vec(), FORM_TYPE.as_bytes().to_vec()));
    }
    let app = oauth_app(&[]);
    FIXTURES.with(|fixtures| seed_oauth(&app, fixtures));
    if raw.directive("path") == Some("/authorize") {
        consent_form(&raw, &app);
    } else {
        token_endpoint(&raw, &app);
    }
});

/// Whether the request's content type is the form type, as the endpoints read it: the first `Content-Type`
/// header that reached the request, if it is visible ASCII, before any `;`, trimmed, in any case.
fn is_form(request: &http::Request<Vec<u8>>) -> bool {
    request
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|t| t.trim().eq_ignore_ascii_case(FORM_TYPE))
}

/// `None` without Basic authentication; `Some(None)` for a malformed one; else the decoded id and secret
/// (RFC 6749 §2.3.1: each form-urlencoded). Decoded here with `base64`, independently of the server.
fn basic_credentials(request: &http::Request<Vec<u8>>) -> Option<Option<(String, String)>> {
    let value = request.headers().get("authorization")?.to_str().ok()?;
    let (scheme, rest) = match value.find([' ', '\t']) {
        Some(i) => (&value[..i], &value[i..]),
        None => (value, ""),
    };
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let encoded = rest.trim();
    let engines = [&base64::engine::general_purpose::STANDARD, &base64::engine::general_purpose::STANDARD_NO_PAD];
    let decoded = engines.iter().find_map(|e| e.decode(encoded).ok());
    let Some(text) = decoded.and_then(|d| String::from_utf8(d).ok()) else { return Some(None) };
    let Some((id, secret)) = text.split_once(':') else { return Some(None) };
    let decode = |part: &str| form_pairs(format!("x={part}").as_bytes()).into_iter().next().map(|(_, v)| v);
    Some(decode(id).zip(decode(secret)))
}

fn first<'a>(pairs: &'a [(String, String)], name: &str) -> Option<&'a str> {
    pairs.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
}

fn token_endpoint(raw: &RawRequest, app: &zotero_mcp_server::app::App) {
    let request = raw.build(http::Method::POST, &format!("{ORIGIN}/oauth/token"));
    let basic = basic_credentials(&request);
    let form = is_form(&request);
    let answer = Answer::of(block_on(zotero_mcp_server::router::route(request, app)));
    zotero_mcp_fuzz::debug(|| format!("token {} {}", answer.status, String::from_utf8_lossy(&answer.body)));
    let pairs = form_pairs(&raw.body);
    let form_ok = form && pairs.len() <= MAX_PARAMS;
    match answer.status {
        200 => {}
        400 | 401 => {
            let code = check_oauth_error(&answer);
            if !form || pairs.len() > MAX_PARAMS {
                assert_eq!(code, "invalid_request", "a form that is refused as a whole is invalid_request");
                assert_eq!(answer.status, 400);
            }
            if answer.status == 401 {
                assert_eq!(code, "invalid_client", "only client authentication failures are 401");
            }
        }
        other => panic!("token endpoint answered {other}: {}", String::from_utf8_lossy(&answer.body)),
    }
    if form_ok {
        let mut seen = std::collections::HashSet::new();
        let repeated = pairs.iter().any(|(k, _)| k != "resource" && !seen.insert(k.as_str()));
        if repeated {
            assert_eq!(answer.status, 400, "a repeated parameter must be refused");
            assert_eq!(check_oauth_error(&answer), "invalid_request");
        }
    }
    if answer.status != 200 {
        return;
    }
    // Success: the form must have been read, unrepeated, and be one of the two requests that can succeed here.
    assert!(form_ok, "200 for a form the endpoint must refuse");
    let grant_type = first(&pairs, "grant_type").filter(|g| !g.is_empty());
    assert_eq!(answer.header("cache-control"), Some("no-store"), "token endpoint answers must be no-store");
    match grant_type {
        None => {
            // RFC 7009: revocation answers 200 with no body whatever the token, once the client is authenticated.
            assert!(first(&pairs, "token").is_some_and(|t| !t.is_empty()), "200 without a grant type or token");
            assert!(answer.body.is_empty(), "a revocation answered with a body: {}", answer.text());
            // Only an authenticated client may revoke: the public one by id, the confidential one by secret.
            let public = basic.is_none()
                && first(&pairs, "client_id") == Some(PUBLIC_CLIENT)
                && first(&pairs, "client_secret").is_none();
            let confidential = match &basic {
                Some(Some((id, secret))) => {
                    id == CONFIDENTIAL_CLIENT && secret == CONFIDENTIAL_SECRET && first(&pairs, "client_id").is_none()
                }
                Some(None) => false,
                None => {
                    first(&pairs, "client_id") == Some(CONFIDENTIAL_CLIENT)
                        && first(&pairs, "client_secret") == Some(CONFIDENTIAL_SECRET)
                }
            };
            assert!(public || confidential, "revocation by an unauthenticated client: {basic:?} {pairs:?}");
        }
        Some("authorization_code") => {
            let body = answer.json();
            assert_eq!(first(&pairs, "code"), Some(KNOWN_CODE), "tokens for a code that was never issued");
            assert_eq!(first(&pairs, "code_verifier"), Some(KNOWN_VERIFIER), "tokens without the PKCE verifier");
            assert!(basic.is_none(), "the public client cannot authenticate with Basic");
            assert_eq!(first(&pairs, "client_id"), Some(PUBLIC_CLIENT), "tokens for another client's code");
            assert_eq!(first(&pairs, "client_secret"), None, "the public client has no secret");
            let token = body["access_token"].as_str().expect("access_token");
            assert!(token.starts_with("owner:fuzzgrant000000:"), "token for another grant: {token}");
            assert_eq!(body["token_type"], "bearer");
            let scope = body["scope"].as_str().expect("scope");
            assert!(scope.split(' ').all(|s| s.is_empty() || s == "zotero:read"), "scope widened: {scope}");
        }
        Some(other) => panic!("200 for grant type {other:?} with no refresh token in existence: {}", answer.text()),
    }
}

fn consent_form(raw: &RawRequest, app: &zotero_mcp_server::app::App) {
    let challenge = challenge();
    let query = query(&[
        ("client_id", PUBLIC_CLIENT),
        ("redirect_uri", PUBLIC_REDIRECT),
        ("response_type", "code"),
        ("code_challenge", &challenge),
        ("code_challenge_method", "S256"),
        ("state", "fuzz-state"),
        ("scope", "zotero:read"),
    ]);
    let request = raw.build(http::Method::POST, &format!("{ORIGIN}/authorize?{query}"));
    let form = is_form(&request);
    let answer = Answer::of(block_on(zotero_mcp_server::router::route(request, app)));
    zotero_mcp_fuzz::debug(|| format!("consent {} {:?}", answer.status, answer.header("location")));
    let pairs = form_pairs(&raw.body);
    let password_ok = first(&pairs, "password") == Some(PASSWORD);
    let accepted = form && pairs.len() <= MAX_PARAMS && password_ok;
    match answer.status {
        303 => {
            assert!(accepted, "authorized without the password: {:?}", String::from_utf8_lossy(&raw.body));
            let location = answer.header("location").expect("a 303 has a Location");
            let url = url::Url::parse(location).expect("Location is a URL");
            assert!(location.starts_with(&format!("{PUBLIC_REDIRECT}?")), "redirected elsewhere: {location}");
            assert!(url.fragment().is_none());
            let params: Vec<(String, String)> = url.query_pairs().into_owned().collect();
            assert_eq!(first(&params, "state"), Some("fuzz-state"));
            assert_eq!(first(&params, "iss"), Some(ORIGIN));
            let code = first(&params, "code").expect("a code");
            let (user, rest) = code.split_once(':').expect("code format");
            assert_eq!(user, "owner");
            let grant_id = rest.split(':').next().expect("grant id");
            let grant = block_on(Store::new(app.platform.oauth_kv.as_ref()).grant("owner", grant_id))
                .expect("store")
                .expect("the code's grant is stored");
            assert_eq!(grant.client_id, PUBLIC_CLIENT);
            assert_eq!(grant.scope, ["zotero:read"], "the consent form widened the scope");
            assert_eq!(grant.redirect_uri.as_deref(), Some(PUBLIC_REDIRECT));
        }
        400 | 401 => {
            assert!(!accepted, "refused ({}) a correct consent form", answer.status);
            let page = answer.text();
            assert!(answer.header("content-type").is_some_and(|t| t.starts_with("text/html")), "{page}");
            assert!(!page.contains(PASSWORD), "the page shows the password");
            if answer.status == 401 {
                assert!(form && pairs.len() <= MAX_PARAMS && !password_ok);
            }
        }
        other => panic!("consent form answered {other}: {}", String::from_utf8_lossy(&answer.body)),
    }
}
