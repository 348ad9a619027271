//! `mcp::origin::check` (and `transport::admit`, which answers its refusals) on fuzzed `Origin` and `Host`.
//!
//! Input: header lines (`origin: …`, `host: …`, any others; repeats allowed), then optionally a blank line.
//! Directives: `:uri: …` the request target (default `/mcp`, so the host comes from `Host`, as behind the native
//! server; an absolute URI makes its authority the host, as on Workers), `:config: 0|1|2` which deployment:
//! 0 the defaults (no host list, origins claude.ai/claude.com/chatgpt.com), 1 `ALLOWED_HOSTS` of the loopback
//! names (the native loopback server), 2 `ALLOWED_HOSTS=zotero.example` and two custom origins.
//!
//! What must hold when a request is let through:
//! - with a host list, the request's host (or its name without the port) is on it, exactly (no prefix or suffix
//!   match: `localhost.evil.example` is not `localhost`);
//! - an `Origin` is one of the configured origins, the server's own origin, or an http(s) origin whose host is
//!   loopback by the url crate's reading and that is nothing but scheme, host and port;
//! - the answer does not depend on ASCII case or a trailing slash of the Origin;
//! - `admit` refuses exactly what `check` refuses (403, naming the origin or host), and the router adds CORS
//!   headers only for origins `check` accepts.

#![no_main]

use libfuzzer_sys::fuzz_target;
use zotero_mcp_fuzz::{block_on, config, trusted_app, Answer, RawRequest};
use zotero_mcp_server::config::Config;
use zotero_mcp_server::mcp::origin::{self, Refusal};
use zotero_mcp_server::mcp::transport;

const CONFIGS: [&[(&str, &str)]; 3] = [
    &[],
    &[("ALLOWED_HOSTS", "localhost, 127.0.0.1, [::1]")],
    &[("ALLOWED_HOSTS", "zotero.example"), ("ALLOWED_ORIGINS", "https://App.example/, https://other.example")],
];

fuzz_target!(|data: &[u8]| {
    let raw = RawRequest::parse(&with_head(data));
    let which = raw.directive("config").and_then(|c| c.trim().parse::<usize>().ok()).unwrap_or(0) % CONFIGS.len();
    let vars = CONFIGS[which];
    let config = config(vars);
    let uri = raw.directive("uri").filter(|u| u.parse::<http::Uri>().is_ok()).unwrap_or("/mcp").to_owned();
    let request = raw.build(http::Method::POST, &uri);
    let verdict = origin::check(&request, &config);

    // admit answers exactly the refusals of check.
    match (&verdict, transport::admit(&request, &config)) {
        (Ok(()), Ok(())) => {}
        (Err(refusal), Err(response)) => {
            assert_eq!(response.status(), 403);
            let text = String::from_utf8(response.into_body()).expect("utf-8");
            let named = match refusal {
                Refusal::Origin(o) | Refusal::Host(o) => o,
            };
            let body: serde_json::Value = serde_json::from_str(&text).expect("json");
            let message = body.pointer("/error/message").and_then(|m| m.as_str()).expect("message");
            assert!(message.contains(named.as_str()), "the refusal must name what was refused: {message}");
        }
        (Ok(()), Err(response)) => panic!("admit refused ({}) what check accepted", response.status()),
        (Err(refusal), Ok(())) => panic!("admit let through what check refused: {refusal:?}"),
    }

    let host = origin::request_host(&request);
    zotero_mcp_fuzz::debug(|| format!("config {which} host {host:?} origin {:?} -> {verdict:?}", request.headers().get("origin")));
    if let Some(hosts) = &config.allowed_hosts {
        if verdict.is_ok() {
            let name = host_name(&host);
            assert!(
                hosts.iter().any(|h| h.eq_ignore_ascii_case(&host) || h.eq_ignore_ascii_case(name)),
                "host {host:?} (name {name:?}) let through, not in {hosts:?}"
            );
            // Read as a URL authority by the url crate, the host must name a listed host too, with no user
            // part: what a client would connect to is what was checked.
            if let Ok(url) = url::Url::parse(&format!("http://{host}/")) {
                let listed = hosts.iter().any(|h| {
                    h.eq_ignore_ascii_case(&host)
                        || url::Url::parse(&format!("http://{h}/")).is_ok_and(|u| u.host_str() == url.host_str())
                });
                let userinfo = !url.username().is_empty() || url.password().is_some();
                assert!(
                    listed && !userinfo,
                    "host {host:?} let through, but it reads as {:?} (user {:?})",
                    url.host_str(),
                    url.username()
                );
            }
        }
    }
    // A host with user info (`localhost:8787@evil.example`) is no host name: refused whatever the configuration.
    if host.contains('@') {
        assert_eq!(verdict, Err(Refusal::Host(host.clone())), "a host with user info was let through");
    }
    // A Host refusal does not depend on the Origin: it comes first.
    if let Err(Refusal::Host(refused)) = &verdict {
        assert_eq!(refused, &host);
    }

    let origin_header = request.headers().get("origin").cloned();
    if let (Ok(()), Some(value)) = (&verdict, &origin_header) {
        let origin = value.to_str().unwrap_or("").trim_end_matches('/');
        let scheme = request.uri().scheme_str().unwrap_or("https");
        let configured = config.allowed_origins.iter().any(|o| o.trim_end_matches('/').eq_ignore_ascii_case(origin));
        let own = origin.eq_ignore_ascii_case(&format!("{scheme}://{host}"));
        assert!(
            configured || own || loopback_origin(origin),
            "origin {origin:?} let through (host {host:?}, uri {uri:?}, config {which})"
        );
    }
    if let (Some(value), false) = (&origin_header, matches!(verdict, Err(Refusal::Host(_)))) {
        // Case and trailing slashes do not change the answer.
        for variant in variants(value.as_bytes()) {
            let Ok(variant_value) = http::HeaderValue::from_bytes(&variant) else { continue };
            let mut other = raw.build(http::Method::POST, &uri);
            other.headers_mut().insert("origin", variant_value);
            assert_eq!(
                origin::check(&other, &config).is_ok(),
                verdict.is_ok(),
                "Origin {:?} and {:?} are answered differently",
                String::from_utf8_lossy(value.as_bytes()),
                String::from_utf8_lossy(&variant)
            );
        }
    }

    // Through the router: CORS only for an accepted origin, and then that very origin.
    if request.uri().path() != "/mcp" {
        return;
    }
    let app = {
        let mut app = trusted_app(vars);
        app.config = std::rc::Rc::new(Config::clone(&config));
        app
    };
    let answer = Answer::of(block_on(zotero_mcp_server::router::route(raw.build(http::Method::POST, &uri), &app)));
    match answer.headers.get("access-control-allow-origin") {
        Some(allowed) => {
            assert!(verdict.is_ok(), "CORS for a refused request");
            assert_eq!(Some(allowed), origin_header.as_ref());
        }
        None => assert!(verdict.is_err() || origin_header.is_none(), "no CORS for an accepted origin"),
    }
    if verdict.is_err() {
        assert_eq!(answer.status, 403);
    }
});

/// Inputs that hold no blank line are all header lines.
fn with_head(data: &[u8]) -> Vec<u8> {
    let mut data = data.to_vec();
    if zotero_mcp_fuzz::find(&data, b"\n\n").is_none() {
        data.extend_from_slice(b"\n\n");
    }
    data
}

/// The host name of `host[:port]`, with IPv6 literals in brackets, by the url crate when it can read it.
fn host_name(host: &str) -> &str {
    if host.starts_with('[') {
        return host.split_inclusive(']').next().unwrap_or(host);
    }
    host.split(':').next().unwrap_or(host)
}

/// A browser-shaped origin on a loopback host, judged by the url crate: http(s), no user, no path beyond `/`,
/// no query or fragment, and a host that is `localhost`, in 127.0.0.0/8 or `::1`.
fn loopback_origin(origin: &str) -> bool {
    let Ok(url) = url::Url::parse(origin) else { return false };
    matches!(url.scheme(), "http" | "https")
        && url.username().is_empty()
        && url.password().is_none()
        && url.path() == "/"
        && url.query().is_none()
        && url.fragment().is_none()
        && zotero_mcp_fuzz::url_is_loopback(&url)
    // The text need not be canonical: `http:/127.00` reads as http://127.0.0.0 and is let through. Browsers only
    // send canonical origins, and the CORS answer echoes the text, which matches no page's origin; so leniency
    // here lets no page in. (Found by this target as a false alarm of a stricter check; kept in regressions.)
}

/// The Origin in other ASCII case and with a trailing slash.
fn variants(value: &[u8]) -> Vec<Vec<u8>> {
    let mut slash = value.to_vec();
    slash.push(b'/');
    vec![value.to_ascii_uppercase(), value.to_ascii_lowercase(), slash]
}
