//! [`download`] against the in-memory HTTP stand-in: every refusal happens before a request is sent where it
//! can, and redirects are judged hop by hop.

use async_trait::async_trait;

use super::*;
use crate::platform::{HttpClient, HttpError, HttpRequest, HttpResponse};
use crate::testing::{ManualClock, PublicAddressesOnly, StubHttp};

const NOW: u64 = 1_700_000_000_000;

fn answer(status: u16, headers: &[(&str, &str)], body: &[u8]) -> HttpResponse {
    let mut builder = http::Response::builder().status(status);
    for (name, value) in headers {
        builder = builder.header(*name, *value);
    }
    builder.body(body.to_vec()).unwrap()
}

fn pdf() -> HttpResponse {
    answer(200, &[("content-type", "application/pdf")], b"%PDF-1.7")
}

async fn get(http: &dyn HttpClient, url: &str) -> Result<Download, DownloadError> {
    download(http, ManualClock::at(NOW).as_ref(), url, &DownloadPolicy::default()).await
}

async fn get_with(http: &dyn HttpClient, url: &str, policy: &DownloadPolicy) -> Result<Download, DownloadError> {
    download(http, ManualClock::at(NOW).as_ref(), url, policy).await
}

fn uris(http: &StubHttp) -> Vec<String> {
    http.requests().iter().map(|r| r.uri().to_string()).collect()
}

#[test]
fn the_default_policy_is_40_mib_5_redirects_30_s_https_only() {
    let policy = DownloadPolicy::default();
    assert_eq!(policy.max_bytes, 41_943_040);
    assert_eq!(policy.max_redirects, 5);
    assert_eq!(policy.timeout_ms, 30_000);
    assert!(!policy.allow_loopback_http);
    assert!(policy.user_agent.starts_with("zotero-mcp/"));
}

#[tokio::test]
async fn an_https_url_is_fetched_with_a_get_and_described() {
    let http = StubHttp::new(|_| {
        Ok(answer(200, &[("content-type", "Application/PDF; charset=binary"), ("content-length", "8")], b"%PDF-1.7"))
    });
    let got = get(http.as_ref(), "https://example.org/files/paper.pdf#page=2").await.unwrap();
    assert_eq!(got.bytes, b"%PDF-1.7");
    assert_eq!(got.final_url, "https://example.org/files/paper.pdf");
    assert_eq!(got.content_type.as_deref(), Some("application/pdf"));
    assert_eq!(got.filename.as_deref(), Some("paper.pdf"));
    let sent = http.requests();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].method(), "GET");
    // The fragment is for the reader and is never sent.
    assert_eq!(sent[0].uri(), "https://example.org/files/paper.pdf");
    assert!(sent[0].headers()["user-agent"].to_str().unwrap().starts_with("zotero-mcp/"));
}

#[tokio::test]
async fn http_and_other_schemes_are_refused_before_any_request() {
    let http = StubHttp::strict();
    for url in ["http://example.org/a.pdf", "ftp://example.org/a.pdf", "file:///etc/passwd", "data:,hello"] {
        let error = get(http.as_ref(), url).await.unwrap_err();
        assert!(matches!(error, DownloadError::NotHttps { .. }), "{url}: {error}");
        assert!(error.to_string().contains("base64Data"), "{error}");
    }
    for url in ["not a url", "/relative/a.pdf", "https://"] {
        let error = get(http.as_ref(), url).await.unwrap_err();
        assert!(matches!(error, DownloadError::InvalidUrl { .. }), "{url}: {error}");
    }
    assert!(http.requests().is_empty());
}

#[tokio::test]
async fn loopback_http_is_allowed_only_with_the_flag() {
    let http = StubHttp::new(|_| Ok(pdf()));
    let loopback = [
        "http://127.0.0.1:8080/a.pdf",
        "http://127.1.2.3/a.pdf",
        "http://[::1]:9/a.pdf",
        "http://localhost:3000/a.pdf",
    ];
    for url in loopback {
        assert!(matches!(get(http.as_ref(), url).await, Err(DownloadError::NotHttps { .. })), "{url}");
    }
    assert!(matches!(get(http.as_ref(), "https://127.0.0.1/a.pdf").await, Err(DownloadError::PrivateAddress { .. })));
    assert!(http.requests().is_empty());

    let dev = DownloadPolicy { allow_loopback_http: true, ..DownloadPolicy::default() };
    for url in loopback {
        assert_eq!(get_with(http.as_ref(), url, &dev).await.unwrap().bytes, b"%PDF-1.7", "{url}");
    }
    assert!(get_with(http.as_ref(), "https://localhost/a.pdf", &dev).await.is_ok());
    // The flag opens loopback only: other private addresses and plain http elsewhere stay refused.
    for (url, private) in [
        ("http://10.0.0.1/a.pdf", false),
        ("http://example.org/a.pdf", false),
        ("http://app.localhost/a.pdf", false),
        ("https://10.0.0.1/a.pdf", true),
        ("https://[::ffff:127.0.0.1]/a.pdf", true),
        ("https://169.254.169.254/latest/meta-data/", true),
    ] {
        let error = get_with(http.as_ref(), url, &dev).await.unwrap_err();
        if private {
            assert!(matches!(error, DownloadError::PrivateAddress { .. }), "{url}: {error}");
        } else {
            assert!(matches!(error, DownloadError::NotHttps { .. }), "{url}: {error}");
        }
    }
    assert_eq!(http.requests().len(), loopback.len() + 1);
}

#[tokio::test]
async fn literal_private_addresses_and_localhost_names_are_refused() {
    let http = StubHttp::strict();
    for url in [
        "https://10.1.2.3/a.pdf",
        "https://192.168.0.10/a.pdf",
        "https://172.16.5.4/a.pdf",
        "https://169.254.169.254/latest/meta-data/",
        "https://100.64.0.1/a.pdf",
        "https://0.0.0.0/a.pdf",
        "https://127.0.0.1:8443/a.pdf",
        "https://0x7f.1/a.pdf",
        "https://2130706433/a.pdf",
        "https://[::1]/a.pdf",
        "https://[fd00::1]/a.pdf",
        "https://[fe80::1]/a.pdf",
        "https://[::ffff:127.0.0.1]/a.pdf",
        "https://[::ffff:10.0.0.1]/a.pdf",
        "https://localhost/a.pdf",
        "https://files.localhost/a.pdf",
    ] {
        let error = get(http.as_ref(), url).await.unwrap_err();
        assert!(matches!(error, DownloadError::PrivateAddress { .. }), "{url}: {error}");
        assert!(error.to_string().contains("private address"), "{error}");
    }
    assert!(http.requests().is_empty());
}

#[tokio::test]
async fn user_info_is_refused_and_not_repeated() {
    let http = StubHttp::strict();
    for url in
        ["https://user:secret@example.org/a.pdf", "https://user@example.org/a.pdf", "https://:secret@example.org/"]
    {
        let error = get(http.as_ref(), url).await.unwrap_err();
        assert!(matches!(error, DownloadError::Credentials { .. }), "{url}: {error}");
        let message = error.to_string();
        assert!(!message.contains("secret") && !message.contains("user@"), "{message}");
        assert!(message.contains("https://example.org/"), "{message}");
    }
    assert!(http.requests().is_empty());
}

#[tokio::test]
async fn a_redirect_to_a_private_address_is_refused_after_the_public_hop() {
    let http = StubHttp::new(|_| Ok(answer(302, &[("location", "https://169.254.169.254/latest/meta-data/")], b"")));
    let error = get(http.as_ref(), "https://example.org/a.pdf").await.unwrap_err();
    let DownloadError::RefusedRedirect { from, reason } = &error else { panic!("{error}") };
    assert_eq!(from, "https://example.org/a.pdf");
    assert!(matches!(**reason, DownloadError::PrivateAddress { .. }), "{error}");
    assert_eq!(uris(&http), ["https://example.org/a.pdf"]);

    // Nor may a redirect drop to plain http, or carry credentials.
    for location in ["http://example.org/a.pdf", "https://u:p@example.org/a.pdf", "http://127.0.0.1/a.pdf"] {
        let http = StubHttp::new(move |_| Ok(answer(301, &[("location", location)], b"")));
        let error = get(http.as_ref(), "https://example.org/a.pdf").await.unwrap_err();
        assert!(matches!(error, DownloadError::RefusedRedirect { .. }), "{location}: {error}");
        assert_eq!(http.requests().len(), 1);
    }
}

#[tokio::test]
async fn every_hop_asks_the_runtime_for_public_addresses_only() {
    let marked = |http: &StubHttp| {
        http.requests().iter().map(|r| r.extensions().get::<PublicAddressesOnly>().is_some()).collect::<Vec<_>>()
    };
    let http = StubHttp::new(|request| {
        Ok(match request.uri().path() {
            "/a.pdf" => answer(302, &[("location", "https://cdn.example.net/b.pdf")], b""),
            _ => pdf(),
        })
    });
    get(http.as_ref(), "https://example.org/a.pdf").await.unwrap();
    assert_eq!(marked(&http), [true, true], "the first request and the redirect");

    // A loopback file server a test allowed is the one exception (its name must resolve to loopback).
    let allowed = DownloadPolicy { allow_loopback_http: true, ..DownloadPolicy::default() };
    let http = StubHttp::new(|_| Ok(pdf()));
    get_with(http.as_ref(), "http://localhost:8000/a.pdf", &allowed).await.unwrap();
    get_with(http.as_ref(), "https://example.org/a.pdf", &allowed).await.unwrap();
    assert_eq!(marked(&http), [false, true]);
}

#[tokio::test]
async fn a_name_resolving_only_to_private_addresses_is_refused_clearly() {
    // What the native client answers for a marked request whose host resolves to 127.0.0.1 only.
    let http = StubHttp::new(|request| {
        Ok(match request.uri().host() {
            Some("example.org") => answer(302, &[("location", "https://rebound.example/x.pdf")], b""),
            _ => return Err(HttpError::NotPublic { url: request.uri().to_string(), host: "rebound.example".into() }),
        })
    });
    for url in ["https://rebound.example/a.pdf", "https://example.org/a.pdf"] {
        let error = get(http.as_ref(), url).await.unwrap_err();
        assert!(
            matches!(error, DownloadError::ResolvesPrivate { ref host, .. } if host == "rebound.example"),
            "{error}"
        );
        let message = error.to_string();
        assert!(message.contains("resolves only to private addresses") && message.contains("base64Data"), "{message}");
    }
}

#[tokio::test]
async fn a_redirect_loop_stops_at_the_limit() {
    let http = StubHttp::new(|_| Ok(answer(302, &[("location", "/again")], b"")));
    let error = get(http.as_ref(), "https://example.org/start").await.unwrap_err();
    assert!(matches!(error, DownloadError::TooManyRedirects { max: 5, .. }), "{error}");
    assert!(error.to_string().contains("more than 5"), "{error}");
    // The first request and five redirects followed.
    assert_eq!(http.requests().len(), 6);

    // Exactly the limit is fine.
    let http = StubHttp::new(|request| {
        let hop: u32 = request.uri().path().trim_start_matches("/hop").parse().unwrap_or(0);
        Ok(if hop < 5 { answer(307, &[("location", &format!("/hop{}", hop + 1))], b"") } else { pdf() })
    });
    let got = get(http.as_ref(), "https://example.org/hop0").await.unwrap();
    assert_eq!(got.final_url, "https://example.org/hop5");
    assert_eq!(got.filename, None);

    let none = DownloadPolicy { max_redirects: 0, ..DownloadPolicy::default() };
    let http = StubHttp::new(|_| Ok(answer(301, &[("location", "https://example.com/a.pdf")], b"")));
    assert!(matches!(
        get_with(http.as_ref(), "https://example.org/a.pdf", &none).await,
        Err(DownloadError::TooManyRedirects { max: 0, .. })
    ));
}

#[tokio::test]
async fn relative_locations_are_resolved_against_the_current_url() {
    let http = StubHttp::new(|request| {
        Ok(match request.uri().to_string().as_str() {
            "https://example.org/a/b/doc" => answer(301, &[("location", "../files/Paper%20One.pdf?x=1")], b""),
            "https://example.org/a/files/Paper%20One.pdf?x=1" => {
                answer(303, &[("location", "//cdn.example.net/store/x.pdf")], b"")
            }
            "https://cdn.example.net/store/x.pdf" => answer(308, &[("location", "final.pdf")], b""),
            "https://cdn.example.net/store/final.pdf" => pdf(),
            other => panic!("unexpected {other}"),
        })
    });
    let got = get(http.as_ref(), "https://example.org/a/b/doc").await.unwrap();
    assert_eq!(got.final_url, "https://cdn.example.net/store/final.pdf");
    assert_eq!(got.filename.as_deref(), Some("final.pdf"));
    assert_eq!(http.requests().len(), 4);
}

#[tokio::test]
async fn a_redirect_without_location_and_other_statuses_are_errors() {
    for (status, headers) in [(302, vec![]), (307, vec![("location", " ")])] {
        let http = StubHttp::new(move |_| Ok(answer(status, &headers, b"")));
        let error = get(http.as_ref(), "https://example.org/a.pdf").await.unwrap_err();
        assert!(matches!(error, DownloadError::RedirectWithoutLocation { .. }), "{status}: {error}");
    }
    for status in [300, 304, 404, 403, 500] {
        let http = StubHttp::new(move |_| Ok(answer(status, &[("location", "/b.pdf")], b"")));
        let error = get(http.as_ref(), "https://example.org/a.pdf").await.unwrap_err();
        assert!(matches!(error, DownloadError::Status { status: s, .. } if s == status), "{status}: {error}");
        assert!(error.to_string().contains(&format!("answered HTTP {status}")), "{error}");
        assert_eq!(http.requests().len(), 1);
    }
}

#[tokio::test]
async fn bodies_over_the_cap_are_refused_declared_or_not() {
    // Declared over the cap: the runtimes' clients refuse before reading, and so does the check after them.
    let http = StubHttp::new(|_| Ok(answer(200, &[("content-length", "41943041")], b"%PDF")));
    let error = get(http.as_ref(), "https://example.org/big.pdf").await.unwrap_err();
    assert!(matches!(error, DownloadError::TooLarge { limit: 41_943_040, .. }), "{error}");
    assert!(error.to_string().contains("larger than the 41943040-byte limit"), "{error}");

    // The client's own refusal is reported the same way.
    let http = StubHttp::new(|r| Err(HttpError::TooLarge { url: r.uri().to_string(), limit: 41_943_040 }));
    let error = get(http.as_ref(), "https://example.org/big.pdf").await.unwrap_err();
    assert!(matches!(error, DownloadError::TooLarge { limit: 41_943_040, .. }), "{error}");

    // Undeclared: the stand-in's send_limited reads and then refuses, like a streaming client past the cap.
    let small = DownloadPolicy { max_bytes: 1024, ..DownloadPolicy::default() };
    let http = StubHttp::new(|_| Ok(answer(200, &[], &[b'a'; 1025])));
    let error = get_with(http.as_ref(), "https://example.org/big.pdf", &small).await.unwrap_err();
    assert!(matches!(error, DownloadError::TooLarge { limit: 1024, .. }), "{error}");
    assert!(error.to_string().contains("1024-byte limit"), "{error}");
    let http = StubHttp::new(|_| Ok(answer(200, &[], &[b'a'; 1024])));
    assert_eq!(get_with(http.as_ref(), "https://example.org/ok.pdf", &small).await.unwrap().bytes.len(), 1024);
}

/// A server that never answers.
struct Hanging;

#[async_trait(?Send)]
impl HttpClient for Hanging {
    async fn send(&self, _request: HttpRequest) -> Result<HttpResponse, HttpError> {
        std::future::pending().await
    }
}

#[tokio::test]
async fn a_hop_that_does_not_answer_times_out() {
    let clock = ManualClock::at(NOW);
    let error =
        download(&Hanging, clock.as_ref(), "https://example.org/a.pdf", &DownloadPolicy::default()).await.unwrap_err();
    assert!(matches!(error, DownloadError::Timeout { after_ms: 30_000, .. }), "{error}");
    assert!(error.to_string().contains("did not answer within 30000 ms"), "{error}");
    assert_eq!(clock.sleeps(), [30_000]);

    let http = StubHttp::new(|r| Err(HttpError::Timeout { url: r.uri().to_string(), after_ms: 10 }));
    assert!(matches!(get(http.as_ref(), "https://example.org/a.pdf").await, Err(DownloadError::Timeout { .. })));

    let down = StubHttp::new(|r| Err(HttpError::Transport { url: r.uri().to_string(), reason: "refused".into() }));
    let error = get(down.as_ref(), "https://example.org/a.pdf").await.unwrap_err();
    assert!(matches!(error, DownloadError::Http(HttpError::Transport { .. })), "{error}");
}

/// The file name the download reports for a `Content-Disposition` (if any) at `url`.
async fn filename(disposition: Option<&'static str>, url: &str) -> Option<String> {
    let http = StubHttp::new(move |_| {
        let headers: Vec<_> = disposition.map(|d| ("content-disposition", d)).into_iter().collect();
        Ok(answer(200, &headers, b"%PDF"))
    });
    get(http.as_ref(), url).await.unwrap().filename
}

#[tokio::test]
async fn the_file_name_comes_from_content_disposition_then_the_url() {
    let url = "https://example.org/download/12345";
    let cases: &[(Option<&'static str>, Option<&str>)] = &[
        // RFC 8187 beats the plain parameter, wherever it stands.
        (Some("attachment; filename=\"plain.pdf\"; filename*=UTF-8''%C3%BCber%20Paper.pdf"), Some("über Paper.pdf")),
        (Some("attachment; filename*=utf-8'en'%E2%82%AC.pdf; filename=\"EUR.pdf\""), Some("€.pdf")),
        (Some("attachment; filename*=ISO-8859-1''%E9t%E9.pdf"), Some("été.pdf")),
        // An unknown charset or broken UTF-8 falls back to the plain parameter.
        (Some("attachment; filename*=KOI8-R''%C1.pdf; filename=\"fallback.pdf\""), Some("fallback.pdf")),
        (Some("attachment; filename*=UTF-8''%FF.pdf; filename=fallback.pdf"), Some("fallback.pdf")),
        (
            Some("attachment; filename=\"quoted \\\"name\\\"; with semicolon.pdf\"; size=3"),
            Some("quoted \"name\"; with semicolon.pdf"),
        ),
        (Some("inline; FILENAME=token.pdf"), Some("token.pdf")),
        (Some("attachment;filename=\"no-dot\""), Some("no-dot")),
        // A name is never a path.
        (Some("attachment; filename=\"../../etc/passwd\""), Some("passwd")),
        (Some("attachment; filename=\"C:\\\\Users\\\\x\\\\evil.pdf\""), Some("evil.pdf")),
        (Some("attachment; filename*=UTF-8''..%2F..%2Fa%0Ab.pdf"), Some("ab.pdf")),
        // No usable name: the URL's segment has no dot either.
        (Some("attachment"), None),
        (Some("attachment; filename=\"\""), None),
        (Some("attachment; filename=\"..\""), None),
        (None, None),
    ];
    for (disposition, expected) in cases {
        assert_eq!(filename(*disposition, url).await.as_deref(), *expected, "{disposition:?}");
    }
    // Without Content-Disposition: the last path segment, percent-decoded, if it has a dot.
    assert_eq!(
        filename(None, "https://example.org/d/My%20Paper%E2%82%AC.pdf?dl=1").await.as_deref(),
        Some("My Paper€.pdf")
    );
    assert_eq!(filename(None, "https://example.org/d/a%2Fb.pdf").await.as_deref(), Some("b.pdf"));
    assert_eq!(filename(None, "https://example.org/d/").await, None);
    assert_eq!(filename(None, "https://example.org").await, None);
    assert_eq!(
        filename(Some("attachment; filename=\"\""), "https://example.org/x/report.pdf").await.as_deref(),
        Some("report.pdf")
    );
}

#[tokio::test]
async fn the_media_type_is_lowercased_without_parameters() {
    for (header, expected) in
        [(Some("TEXT/HTML; charset=UTF-8"), Some("text/html")), (Some(" ; x=y"), None), (None, None)]
    {
        let http = StubHttp::new(move |_| {
            let headers: Vec<_> = header.map(|h| ("content-type", h)).into_iter().collect();
            Ok(answer(200, &headers, b"x"))
        });
        let got = get(http.as_ref(), "https://example.org/a").await.unwrap();
        assert_eq!(got.content_type.as_deref(), expected, "{header:?}");
    }
}

#[tokio::test]
async fn errors_show_long_urls_cut_short() {
    let long = format!("data:application/pdf;base64,{}", "A".repeat(100_000));
    let error = get(StubHttp::strict().as_ref(), &long).await.unwrap_err();
    assert!(error.to_string().len() < 600, "{}", error.to_string().len());
}

#[tokio::test]
async fn an_international_domain_name_must_be_written_in_ascii() {
    // The build has no Unicode IDNA tables (idna_adapter 1.0): the error says what to write instead.
    let http = StubHttp::strict();
    let error = get(http.as_ref(), "https://bücher.example/paper.pdf").await.unwrap_err();
    let text = error.to_string();
    assert!(text.contains("`bücher.example` is not plain ASCII") && text.contains("punycode"), "{text}");
    assert!(uris(&http).is_empty(), "nothing was fetched");
    // Its ASCII form is an ordinary host name.
    let parsed = parse_url("https://xn--bcher-kva.example/paper.pdf").expect("punycode host");
    assert_eq!(parsed.host_str(), Some("xn--bcher-kva.example"));
    // Other mistakes keep url's own reason.
    assert_eq!(parse_url("https://").unwrap_err().to_string(), "empty host");
}

#[test]
fn hosts_are_found_wherever_url_would_read_one() {
    for text in [
        "https://bücher.example/",
        "  https://Bücher.example",
        "https:bücher.example/x",
        "HTTPS:\\\\bücher.example",
        "https://user@bücher.example:8443/x?y#z",
        "https://b%C3%BCcher.example/",
    ] {
        assert!(matches!(parse_url(text), Err(UrlError::NotAsciiHost(_))), "{text}");
    }
    // Unicode outside the host is url's business, as before.
    assert!(parse_url("https://example.org/bücher/ß.pdf?q=é#ü").is_ok());
    let base = parse_url("https://example.org/a/b").unwrap();
    assert_eq!(join_url(&base, "bücher.pdf").unwrap().path(), "/a/b%C3%BCcher.pdf");
    assert!(matches!(join_url(&base, "//bücher.example/x"), Err(UrlError::NotAsciiHost(_))));
    assert!(matches!(join_url(&base, "https://Bücher.example/x"), Err(UrlError::NotAsciiHost(_))));
}
