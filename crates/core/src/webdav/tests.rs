//! The WebDAV client against a stubbed HTTP seam: the request shapes and each answer a real server gives.
//! crates/cli/tests/webdav.rs runs the same client against Apache's mod_dav.

use std::rc::Rc;

use super::*;
use crate::platform::HttpError;
use crate::testing::{ManualClock, StubHttp};
use crate::zotero::ObjectKey;

const NOW: u64 = 1_700_000_000_000;

fn answer(status: u16, headers: &[(&str, &str)], body: &[u8]) -> crate::platform::HttpResponse {
    let mut builder = http::Response::builder().status(status);
    for (name, value) in headers {
        builder = builder.header(*name, *value);
    }
    builder.body(body.to_vec()).unwrap()
}

/// A writer (which reads too), so that every request shape can be tried.
fn client(http: Rc<StubHttp>, url: &str) -> (WebDavWriter, Rc<ManualClock>) {
    let clock = ManualClock::at(NOW);
    let settings = WebDavSettings { url: url.into(), username: "me".into(), password: "pässword".into() };
    (WebDavWriter::new(&settings, http, clock.clone(), WebDavPolicy::default()).unwrap(), clock)
}

fn key() -> ObjectKey {
    ObjectKey::parse("ABCD2345").unwrap()
}

#[test]
fn the_folder_is_the_zotero_one_with_or_without_it_in_the_url() {
    for url in [
        "https://dav.example.org/files/me",
        "https://dav.example.org/files/me/",
        " https://dav.example.org/files/me/zotero/ ",
    ] {
        assert_eq!(folder_url(url).unwrap(), "https://dav.example.org/files/me/zotero");
    }
    assert!(matches!(folder_url("ftp://example.org/"), Err(WebDavError::BadUrl { .. })));
    assert!(matches!(folder_url("not a url"), Err(WebDavError::BadUrl { .. })));
    let idn = folder_url("https://dav.bücher.example/zotero").unwrap_err().to_string();
    assert!(idn.contains("punycode"), "{idn}");
    let with_password = folder_url("https://me:secret@dav.example.org/").unwrap_err();
    assert!(with_password.to_string().contains("WEBDAV_USERNAME"), "{with_password}");
}

#[tokio::test]
async fn requests_carry_basic_credentials_and_name_the_files_by_key() {
    let http = StubHttp::new(|_| Ok(answer(200, &[], b"PK")));
    let (dav, _) = client(http.clone(), "https://dav.example.org/files/me/");
    assert_eq!(dav.get_zip(&key()).await.unwrap(), Some(b"PK".to_vec()));
    let sent = &http.requests()[0];
    assert_eq!(sent.method(), "GET");
    assert_eq!(sent.uri(), "https://dav.example.org/files/me/zotero/ABCD2345.zip");
    // base64("me:pässword") in UTF-8.
    assert_eq!(sent.headers()["authorization"], "Basic bWU6cMOkc3N3b3Jk");
}

#[tokio::test]
async fn a_missing_file_is_none_and_a_prop_is_parsed() {
    let http = StubHttp::new(|request| {
        Ok(if request.uri().path().ends_with(".prop") {
            answer(
                200,
                &[],
                b"<properties version=\"1\"><mtime>5</mtime><hash>0123456789abcdef0123456789abcdef</hash></properties>",
            )
        } else {
            answer(404, &[], b"Not Found")
        })
    });
    let (dav, _) = client(http, "https://dav.example.org/");
    assert_eq!(dav.get_zip(&key()).await.unwrap(), None);
    assert!(!dav.has_zip(&key()).await.unwrap());
    let props = dav.get_prop(&key()).await.unwrap().unwrap();
    assert_eq!(props.mtime_ms, 5);
}

#[tokio::test]
async fn busy_answers_are_retried_with_their_wait_then_given_up_with_it() {
    let http = StubHttp::strict();
    http.enqueue(Ok(answer(503, &[("retry-after", "2")], b"")));
    http.enqueue(Ok(answer(429, &[], b"")));
    http.enqueue(Ok(answer(201, &[], b"")));
    let (dav, clock) = client(http.clone(), "https://dav.example.org/");
    dav.put_zip(&key(), b"PK".to_vec()).await.unwrap();
    assert_eq!(clock.sleeps(), [2_000, 800]);
    assert_eq!(http.requests().len(), 3);
    assert!(http.requests().iter().all(|r| r.body() == b"PK"), "the whole file again on each attempt");

    let http = StubHttp::new(|_| Ok(answer(502, &[], b"bad gateway")));
    let (dav, clock) = client(http.clone(), "https://dav.example.org/");
    let error = dav.get_zip(&key()).await.unwrap_err();
    assert!(matches!(error, WebDavError::Unavailable { status: 502, .. }), "{error}");
    assert_eq!(clock.sleeps(), [400, 800, 1_600]);
    assert_eq!(http.requests().len(), 4);

    let http = StubHttp::new(|_| Ok(answer(503, &[("retry-after", "3600")], b"")));
    let (dav, clock) = client(http, "https://dav.example.org/");
    let error = dav.get_zip(&key()).await.unwrap_err();
    assert_eq!(error, WebDavError::Unavailable { status: 503, retry_after_secs: 3600 });
    assert!(clock.sleeps().is_empty(), "an hour is not waited for");
}

#[tokio::test]
async fn credentials_folders_and_transport_failures_get_their_own_errors() {
    let (dav, _) = client(StubHttp::new(|_| Ok(answer(401, &[], b""))), "https://dav.example.org/");
    let error = dav.get_zip(&key()).await.unwrap_err();
    assert_eq!(error, WebDavError::Unauthorized { status: 401 });
    assert!(error.to_string().contains("WEBDAV_PASSWORD"));

    let (dav, _) = client(StubHttp::new(|_| Ok(answer(409, &[], b"Conflict"))), "https://dav.example.org/");
    let error = dav.put_prop(&key(), &FileProps { mtime_ms: 1, md5: "0".repeat(32) }).await.unwrap_err();
    assert!(matches!(error, WebDavError::MissingFolder { .. }), "{error}");

    let (dav, _) = client(StubHttp::new(|_| Ok(answer(404, &[], b""))), "https://dav.example.org/");
    assert!(matches!(dav.check().await, Err(WebDavError::MissingFolder { .. })));

    let down = StubHttp::new(|r| Err(HttpError::Transport { url: r.uri().to_string(), reason: "refused".into() }));
    let (dav, _) = client(down, "https://dav.example.org/");
    assert!(matches!(dav.get_zip(&key()).await, Err(WebDavError::Unreachable { .. })));

    let big = StubHttp::new(|r| Err(HttpError::TooLarge { url: r.uri().to_string(), limit: 9 }));
    let (dav, _) = client(big, "https://dav.example.org/");
    assert_eq!(dav.get_zip(&key()).await, Err(WebDavError::TooLarge { limit: 9 }));
}

#[tokio::test]
async fn redirects_are_followed_on_the_same_site_only() {
    let http = StubHttp::strict();
    http.enqueue(Ok(answer(301, &[("location", "/dav/zotero/")], b"")));
    http.enqueue(Ok(answer(207, &[], b"<multistatus/>")));
    let (dav, _) = client(http.clone(), "https://dav.example.org/dav");
    assert_eq!(dav.check().await.unwrap().folder, "https://dav.example.org/dav/zotero");
    let sent = http.requests();
    assert_eq!(sent[0].method(), "PROPFIND");
    assert_eq!(sent[0].headers()["depth"], "0");
    assert_eq!(sent[1].uri(), "https://dav.example.org/dav/zotero/");

    let away = StubHttp::new(|_| Ok(answer(302, &[("location", "https://elsewhere.example.com/x")], b"")));
    let (dav, _) = client(away, "https://dav.example.org/");
    let error = dav.get_zip(&key()).await.unwrap_err();
    assert!(matches!(error, WebDavError::Redirected { ref location, .. } if location.contains("elsewhere")), "{error}");

    let looping = StubHttp::new(|_| Ok(answer(307, &[("location", "/zotero/ABCD2345.zip")], b"")));
    let (dav, _) = client(looping.clone(), "https://dav.example.org/");
    assert!(matches!(dav.get_zip(&key()).await, Err(WebDavError::Redirected { .. })));
    assert_eq!(looping.requests().len(), 4);
}

#[tokio::test]
async fn delete_removes_both_files_and_tolerates_ones_already_gone() {
    let http = StubHttp::strict();
    http.enqueue(Ok(answer(204, &[], b"")));
    http.enqueue(Ok(answer(404, &[], b"")));
    let (dav, _) = client(http.clone(), "https://dav.example.org/");
    dav.delete(&key()).await.unwrap();
    let paths: Vec<String> = http.requests().iter().map(|r| format!("{} {}", r.method(), r.uri().path())).collect();
    assert_eq!(paths, ["DELETE /zotero/ABCD2345.zip", "DELETE /zotero/ABCD2345.prop"]);
}
