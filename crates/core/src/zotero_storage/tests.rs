//! The file protocol against a recording HTTP stand-in: what is sent where, with which headers, in which
//! order, and what each answer becomes.

use std::rc::Rc;

use http::Response;
use serde_json::json;

use super::*;
use crate::platform::{HttpRequest, HttpResponse};
use crate::testing::{ManualClock, StubHttp};
use crate::webdav::{md5_hex, pack};
use crate::zotero::{LibraryKind, ObjectKey, ZoteroObject, ZoteroSettings};

const API_KEY: &str = "P9NiFoyLeZu2bZNvvuQPDWsd";
const API: &str = "https://api.zotero.test";
const FILE_URL: &str = "https://files.storage.test/ab/cd?X-Amz-Signature=1";

fn settings(base: &str) -> ZoteroSettings {
    ZoteroSettings {
        api_key: API_KEY.into(),
        library_kind: LibraryKind::User,
        library_id: Some("42".into()),
        base_url: Some(base.into()),
    }
}

fn reader(http: &Rc<StubHttp>, policy: StoragePolicy) -> ZoteroStorage {
    ZoteroStorage::new(&settings(API), "/users/42", http.clone(), ManualClock::at(0), policy).unwrap()
}

fn writer(http: &Rc<StubHttp>) -> ZoteroStorageWriter {
    ZoteroStorageWriter::new(&settings(API), "/users/42", http.clone(), ManualClock::at(0), StoragePolicy::default())
        .unwrap()
}

fn answer(status: u16, headers: &[(&str, &str)], body: &[u8]) -> Result<HttpResponse, crate::platform::HttpError> {
    let mut builder = Response::builder().status(status);
    for (name, value) in headers {
        builder = builder.header(*name, *value);
    }
    Ok(builder.body(body.to_vec()).unwrap())
}

fn item(md5: Option<&str>, filename: &str) -> ZoteroObject {
    serde_json::from_value(json!({
        "key": "ABCD2345", "version": 7,
        "data": { "itemType": "attachment", "linkMode": "imported_file", "filename": filename, "md5": md5 }
    }))
    .unwrap()
}

fn key() -> ObjectKey {
    ObjectKey::parse("ABCD2345").unwrap()
}

fn header<'a>(request: &'a HttpRequest, name: &str) -> Option<&'a str> {
    request.headers().get(name).map(|v| v.to_str().unwrap())
}

/// No request to the storage origin carries the key or any Zotero header.
fn assert_no_zotero_headers(request: &HttpRequest) {
    let leaked: Vec<_> = request.headers().iter().filter(|(name, _)| name.as_str().starts_with("zotero-")).collect();
    assert!(leaked.is_empty(), "{} got {leaked:?}", request.uri());
    assert!(request.headers().get("authorization").is_none());
    for (_, value) in request.headers() {
        assert!(!value.to_str().unwrap_or("").contains(API_KEY), "{}", request.uri());
    }
    assert!(!request.uri().to_string().contains(API_KEY));
}

fn redirect_to(location: &str) -> Result<HttpResponse, crate::platform::HttpError> {
    answer(302, &[("location", location), ("zotero-file-compressed", "No")], b"")
}

// ---- download ----

#[tokio::test]
async fn the_key_goes_to_the_api_and_the_redirect_is_followed_without_it() {
    let pdf = b"%PDF-1.7 the paper".to_vec();
    let http = StubHttp::strict();
    http.enqueue(answer(
        302,
        &[
            ("location", FILE_URL),
            ("zotero-file-md5", &md5_hex(&pdf)),
            ("zotero-file-modification-time", "1700000000000"),
            ("zotero-file-compressed", "No"),
        ],
        b"",
    ));
    http.enqueue(answer(200, &[("content-type", "application/pdf")], &pdf));

    let file =
        reader(&http, StoragePolicy::default()).download(&item(Some(&md5_hex(&pdf)), "paper.pdf")).await.unwrap();

    assert_eq!(file.data, pdf);
    assert_eq!(file.filename.as_deref(), Some("paper.pdf"));
    assert_eq!(file.mtime_ms, Some(1_700_000_000_000));
    assert!(!file.was_zipped);
    let sent = http.requests();
    assert_eq!(sent.len(), 2);
    assert_eq!(sent[0].uri().to_string(), "https://api.zotero.test/users/42/items/ABCD2345/file");
    assert_eq!(header(&sent[0], "zotero-api-key"), Some(API_KEY));
    assert_eq!(header(&sent[0], "zotero-api-version"), Some("3"));
    assert_eq!(sent[1].uri().to_string(), FILE_URL);
    assert_no_zotero_headers(&sent[1]);
}

#[tokio::test]
async fn a_file_whose_md5_is_not_the_items_is_refused() {
    let http = StubHttp::strict();
    http.enqueue(redirect_to(FILE_URL));
    http.enqueue(answer(200, &[], b"not the stored bytes"));
    let expected = md5_hex(b"the stored bytes");

    let error = reader(&http, StoragePolicy::default()).download(&item(Some(&expected), "a.pdf")).await.unwrap_err();

    assert!(matches!(&error, ZoteroStorageError::Md5Mismatch { expected: e, .. } if *e == expected), "{error}");
    assert!(error.to_string().contains("does not match the item's md5"), "{error}");
}

#[tokio::test]
async fn without_an_item_md5_the_apis_md5_header_is_checked() {
    let http = StubHttp::strict();
    http.enqueue(answer(302, &[("location", FILE_URL), ("zotero-file-md5", &md5_hex(b"other"))], b""));
    http.enqueue(answer(200, &[], b"bytes"));

    let error = reader(&http, StoragePolicy::default()).download(&item(None, "a.pdf")).await.unwrap_err();

    assert!(matches!(error, ZoteroStorageError::Md5Mismatch { .. }), "{error}");
}

#[tokio::test]
async fn a_zipped_snapshot_is_unpacked_and_its_main_file_checked() {
    let html = b"<html><body>snapshot</body></html>".to_vec();
    let zip = pack("page.html", &html, 1_700_000_000_000).unwrap();
    let http = StubHttp::strict();
    http.enqueue(answer(
        302,
        &[("location", FILE_URL), ("zotero-file-compressed", "Yes"), ("zotero-file-md5", &md5_hex(&zip))],
        b"",
    ));
    http.enqueue(answer(200, &[], &zip));

    let file =
        reader(&http, StoragePolicy::default()).download(&item(Some(&md5_hex(&html)), "page.html")).await.unwrap();

    assert!(file.was_zipped);
    assert_eq!(file.data, html);
    assert_eq!(file.filename.as_deref(), Some("page.html"));
    assert_eq!(file.md5, md5_hex(&html));
}

#[tokio::test]
async fn a_zipped_answer_that_is_no_zip_says_to_sync_again() {
    let http = StubHttp::strict();
    http.enqueue(answer(302, &[("location", FILE_URL), ("zotero-file-compressed", "Yes")], b""));
    http.enqueue(answer(200, &[], b"not a zip"));

    let error = reader(&http, StoragePolicy::default()).download(&item(None, "page.html")).await.unwrap_err();

    assert!(matches!(error, ZoteroStorageError::BadArchive { .. }), "{error}");
    assert!(!error.to_string().contains("WebDAV"), "{error}");
}

#[tokio::test]
async fn a_redirect_loop_is_given_up_after_the_policy_s_hops() {
    let http = StubHttp::new(|_| redirect_to(FILE_URL));
    let policy = StoragePolicy { max_redirects: 3, ..StoragePolicy::default() };

    let error = reader(&http, policy).download(&item(None, "a.pdf")).await.unwrap_err();

    assert!(matches!(error, ZoteroStorageError::TooManyRedirects { max: 3, .. }), "{error}");
    // The API's request, then three hops; none of the hops with the key.
    let sent = http.requests();
    assert_eq!(sent.len(), 4);
    sent[1..].iter().for_each(assert_no_zotero_headers);
}

#[tokio::test]
async fn a_redirect_to_plain_http_or_with_credentials_is_not_followed() {
    for location in ["http://files.storage.test/ab", "https://user:pw@files.storage.test/ab", "ftp://x.test/a"] {
        let http = StubHttp::strict();
        http.enqueue(redirect_to(location));

        let error = reader(&http, StoragePolicy::default()).download(&item(None, "a.pdf")).await.unwrap_err();

        assert!(matches!(error, ZoteroStorageError::RefusedUrl { .. }), "{location}: {error}");
        assert_eq!(http.requests().len(), 1, "{location}");
    }
}

#[tokio::test]
async fn beside_a_loopback_api_the_storage_may_be_plain_http_on_loopback() {
    let http = StubHttp::strict();
    http.enqueue(redirect_to("http://127.0.0.1:9/storage/ABCD2345"));
    http.enqueue(answer(200, &[], b"bytes"));
    let storage = ZoteroStorage::new(
        &settings("http://127.0.0.1:8/"),
        "/users/42",
        http.clone(),
        ManualClock::at(0),
        StoragePolicy::default(),
    )
    .unwrap();

    let file = storage.download(&item(Some(&md5_hex(b"bytes")), "a.pdf")).await.unwrap();

    assert_eq!(file.data, b"bytes");
    assert_eq!(http.requests()[0].uri().to_string(), "http://127.0.0.1:8/users/42/items/ABCD2345/file");
    // But not to another host over http, and never an http API elsewhere.
    let http = StubHttp::strict();
    http.enqueue(redirect_to("http://files.storage.test/a"));
    let storage = ZoteroStorage::new(
        &settings("http://127.0.0.1:8"),
        "/users/42",
        http.clone(),
        ManualClock::at(0),
        StoragePolicy::default(),
    )
    .unwrap();
    assert!(matches!(storage.download(&item(None, "a.pdf")).await, Err(ZoteroStorageError::RefusedUrl { .. })));
    let refused = ZoteroStorage::new(
        &settings("http://api.example"),
        "/users/42",
        http,
        ManualClock::at(0),
        StoragePolicy::default(),
    );
    assert!(matches!(refused, Err(ZoteroStorageError::Config(_))));
}

#[tokio::test]
async fn a_file_over_the_size_limit_is_refused() {
    let http = StubHttp::strict();
    http.enqueue(redirect_to(FILE_URL));
    http.enqueue(answer(200, &[], &[0u8; 2048]));
    let policy = StoragePolicy { max_download_bytes: 1024, ..StoragePolicy::default() };

    let error = reader(&http, policy).download(&item(None, "a.pdf")).await.unwrap_err();

    assert!(matches!(error, ZoteroStorageError::TooLarge { limit: 1024, .. }), "{error}");
    // The default is the WebDAV reader's.
    assert_eq!(StoragePolicy::default().max_download_bytes, crate::webdav::WebDavPolicy::default().max_download_bytes);
}

#[tokio::test]
async fn a_missing_file_says_to_sync_zotero_desktop() {
    let http = StubHttp::strict();
    http.enqueue(answer(404, &[], b"Not found"));

    let error = reader(&http, StoragePolicy::default()).download(&item(None, "a.pdf")).await.unwrap_err();

    assert!(matches!(error, ZoteroStorageError::NoFile { .. }), "{error}");
    let message = error.to_string();
    assert!(message.contains("no file on Zotero Storage for attachment ABCD2345"), "{message}");
    assert!(message.contains("sync Zotero Desktop"), "{message}");
}

#[tokio::test]
async fn download_statuses_become_errors_that_say_what_to_do() {
    type Case = (Result<HttpResponse, crate::platform::HttpError>, fn(&ZoteroStorageError) -> bool);
    let cases: Vec<Case> = vec![
        (answer(403, &[], b"Forbidden"), |e| matches!(e, ZoteroStorageError::ReadDenied { .. })),
        (answer(429, &[("retry-after", "7")], b""), |e| {
            matches!(e, ZoteroStorageError::RateLimited { status: 429, retry_after_secs: Some(7), .. })
        }),
        (answer(500, &[], b"oops"), |e| matches!(e, ZoteroStorageError::Api { status: 500, .. })),
    ];
    for (response, expected) in cases {
        let http = StubHttp::strict();
        http.enqueue(response);
        let error = reader(&http, StoragePolicy::default()).download(&item(None, "a.pdf")).await.unwrap_err();
        assert!(expected(&error), "{error}");
        assert_eq!(http.requests().len(), 1, "not retried: {error}");
    }
    // The storage origin's own refusal (an expired link).
    let http = StubHttp::strict();
    http.enqueue(redirect_to(FILE_URL));
    http.enqueue(answer(403, &[], b"<Error>AccessDenied</Error>"));
    let error = reader(&http, StoragePolicy::default()).download(&item(None, "a.pdf")).await.unwrap_err();
    assert!(matches!(error, ZoteroStorageError::DownloadFailed { status: 403, .. }), "{error}");
    assert!(error.to_string().contains("try again"), "{error}");
}

// ---- upload ----

fn authorization() -> Result<HttpResponse, crate::platform::HttpError> {
    let body = json!({
        "url": "https://upload.storage.test/",
        "contentType": "multipart/form-data; boundary=b0undary",
        "prefix": "--b0undary\r\nContent-Disposition: form-data; name=\"file\"\r\n\r\n",
        "suffix": "\r\n--b0undary--",
        "uploadKey": "a1b2c3d4e5f6",
    });
    answer(200, &[("content-type", "application/json")], body.to_string().as_bytes())
}

fn upload_of(data: &[u8], precondition: Precondition) -> FileUpload {
    FileUpload {
        filename: "paper.pdf".into(),
        data: data.to_vec(),
        mtime_ms: 1_700_000_000_000,
        zipped: false,
        precondition,
    }
}

fn form(request: &HttpRequest) -> Vec<(String, String)> {
    form_urlencoded::parse(request.body()).into_owned().collect()
}

#[tokio::test]
async fn a_new_file_is_authorized_uploaded_and_registered_in_that_order() {
    let pdf = b"%PDF-1.7 new".to_vec();
    let http = StubHttp::strict();
    http.enqueue(authorization());
    http.enqueue(answer(201, &[], b""));
    http.enqueue(answer(204, &[("last-modified-version", "812")], b""));

    let stored = writer(&http).upload(&key(), upload_of(&pdf, Precondition::NewFile)).await.unwrap();

    assert_eq!(
        stored,
        UploadedFile {
            md5: md5_hex(&pdf),
            mtime_ms: 1_700_000_000_000,
            filesize: pdf.len() as u64,
            version: Some(812),
            already_stored: false,
        }
    );
    let sent = http.requests();
    assert_eq!(sent.len(), 3);
    let file_url = "https://api.zotero.test/users/42/items/ABCD2345/file";

    let authorize = &sent[0];
    assert_eq!((authorize.method().as_str(), authorize.uri().to_string().as_str()), ("POST", file_url));
    assert_eq!(header(authorize, "zotero-api-key"), Some(API_KEY));
    assert_eq!(header(authorize, "content-type"), Some("application/x-www-form-urlencoded"));
    assert_eq!(header(authorize, "if-none-match"), Some("*"));
    assert_eq!(header(authorize, "if-match"), None);
    let fields = form(authorize);
    let field = |name: &str| fields.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str());
    assert_eq!(field("md5"), Some(md5_hex(&pdf).as_str()));
    assert_eq!(field("filename"), Some("paper.pdf"));
    assert_eq!(field("filesize"), Some(pdf.len().to_string().as_str()));
    assert_eq!(field("mtime"), Some("1700000000000"));
    assert_eq!(field("params"), None);

    let upload = &sent[1];
    assert_eq!((upload.method().as_str(), upload.uri().to_string().as_str()), ("POST", "https://upload.storage.test/"));
    assert_eq!(header(upload, "content-type"), Some("multipart/form-data; boundary=b0undary"));
    let mut expected_body = b"--b0undary\r\nContent-Disposition: form-data; name=\"file\"\r\n\r\n".to_vec();
    expected_body.extend_from_slice(&pdf);
    expected_body.extend_from_slice(b"\r\n--b0undary--");
    assert_eq!(upload.body(), &expected_body);
    assert_no_zotero_headers(upload);

    let register = &sent[2];
    assert_eq!((register.method().as_str(), register.uri().to_string().as_str()), ("POST", file_url));
    assert_eq!(header(register, "zotero-api-key"), Some(API_KEY));
    assert_eq!(header(register, "if-none-match"), Some("*"));
    assert_eq!(form(register), [("upload".to_owned(), "a1b2c3d4e5f6".to_owned())]);
}

#[tokio::test]
async fn a_replacement_names_the_old_md5_when_authorizing_and_registering() {
    let old = md5_hex(b"old");
    let http = StubHttp::strict();
    http.enqueue(authorization());
    http.enqueue(answer(201, &[], b""));
    http.enqueue(answer(204, &[("last-modified-version", "9")], b""));

    writer(&http).upload(&key(), upload_of(b"new", Precondition::Replaces(old.to_uppercase()))).await.unwrap();

    let sent = http.requests();
    for request in [&sent[0], &sent[2]] {
        assert_eq!(header(request, "if-match"), Some(old.as_str()));
        assert_eq!(header(request, "if-none-match"), None);
    }
}

#[tokio::test]
async fn a_replacement_with_something_that_is_no_md5_sends_nothing() {
    let http = StubHttp::strict();
    let error = writer(&http).upload(&key(), upload_of(b"x", Precondition::Replaces("abc\r\nx".into()))).await;
    assert!(matches!(error, Err(ZoteroStorageError::BadMd5 { .. })));
    assert!(http.requests().is_empty());
}

#[tokio::test]
async fn bytes_zotero_already_holds_are_recorded_without_an_upload() {
    let http = StubHttp::strict();
    http.enqueue(answer(200, &[("last-modified-version", "55")], br#"{"exists":1}"#));

    let stored = writer(&http).upload(&key(), upload_of(b"same", Precondition::NewFile)).await.unwrap();

    assert!(stored.already_stored);
    assert_eq!(stored.version, Some(55));
    assert_eq!(http.requests().len(), 1);
}

#[tokio::test]
async fn a_zipped_upload_names_the_zip_and_sends_it() {
    let html = b"<html>snapshot</html>".to_vec();
    let http = StubHttp::strict();
    http.enqueue(authorization());
    http.enqueue(answer(201, &[], b""));
    http.enqueue(answer(204, &[("last-modified-version", "3")], b""));
    let file = FileUpload { filename: "page.html".into(), zipped: true, ..upload_of(&html, Precondition::NewFile) };

    let stored = writer(&http).upload(&key(), file).await.unwrap();

    let sent = http.requests();
    let fields = form(&sent[0]);
    let field = |name: &str| fields.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone());
    assert_eq!(field("md5"), Some(md5_hex(&html)), "the main file's md5, as Desktop sends it");
    assert_eq!(field("filename").as_deref(), Some("page.html"));
    assert_eq!(field("zipFilename").as_deref(), Some("ABCD2345.zip"));
    let prefix_len = "--b0undary\r\nContent-Disposition: form-data; name=\"file\"\r\n\r\n".len();
    let zip = &sent[1].body()[prefix_len..sent[1].body().len() - "\r\n--b0undary--".len()];
    assert_eq!(field("zipMD5"), Some(md5_hex(zip)));
    assert_eq!(field("filesize"), Some(zip.len().to_string()));
    assert_eq!(crate::webdav::unpack(zip, None, &Default::default()).unwrap().data, html);
    assert_eq!(stored.md5, md5_hex(&html));
}

#[tokio::test]
async fn authorization_statuses_become_errors_that_say_what_to_do() {
    type Check = fn(&ZoteroStorageError, &str) -> bool;
    let cases: Vec<(Result<HttpResponse, _>, Check)> = vec![
        (answer(403, &[], b"Write access denied"), |e, m| {
            matches!(e, ZoteroStorageError::WriteDenied { .. }) && m.contains("Allow write access")
        }),
        // The group's setting, not the key (Web API, then Zotero Desktop's local API).
        (answer(403, &[], b"You do not have file editing access"), |e, m| {
            matches!(e, ZoteroStorageError::FileEditingDenied { .. }) && m.contains("File Editing")
        }),
        (answer(403, &[], b"File editing denied"), |e, _| matches!(e, ZoteroStorageError::FileEditingDenied { .. })),
        (answer(404, &[], b"Not found"), |e, _| matches!(e, ZoteroStorageError::ItemNotFound { .. })),
        (answer(412, &[("last-modified-version", "99")], b"ETag does not match current version of file"), |e, m| {
            matches!(e, ZoteroStorageError::Changed { version: Some(99), .. })
                && m.contains("Read the attachment again")
        }),
        (
            answer(
                413,
                &[("zotero-storage-usage", "299.5"), ("zotero-storage-quota", "300")],
                b"File would exceed quota (300.2 > 300)",
            ),
            |e, m| {
                matches!(e, ZoteroStorageError::OverQuota { quota_mb: Some(q), .. } if *q == 300.0)
                    && m.contains("299.5 MB of the 300.0 MB quota")
                    && m.contains("zotero.org/settings/storage")
                    && m.contains("WebDAV")
            },
        ),
        (answer(413, &[("retry-after", "1800")], b"Too many queued uploads"), |e, m| {
            matches!(e, ZoteroStorageError::UploadQueueFull { retry_after_secs: 1800 }) && m.contains("1800 seconds")
        }),
        // What the dataserver answers an API client whose queue is full.
        (answer(429, &[("retry-after", "300")], b"Too many queued uploads"), |e, m| {
            matches!(e, ZoteroStorageError::UploadQueueFull { retry_after_secs: 300 }) && m.contains("300 seconds")
        }),
        // The dataserver picks 429, 400 or 503 at random for a full queue; each is the queue, with its wait.
        (answer(503, &[("retry-after", "300")], b"Too many queued uploads"), |e, m| {
            matches!(e, ZoteroStorageError::UploadQueueFull { retry_after_secs: 300 }) && m.contains("300 seconds")
        }),
        (answer(400, &[("retry-after", "300")], b"Too many queued uploads"), |e, m| {
            matches!(e, ZoteroStorageError::UploadQueueFull { retry_after_secs: 300 }) && m.contains("300 seconds")
        }),
        (answer(428, &[], b"If-Match/If-None-Match header not provided"), |e, _| {
            matches!(e, ZoteroStorageError::PreconditionRequired { .. })
        }),
        // A full queue's wait is past the retry bound (30 s): said at once, with the wait.
        (answer(429, &[("retry-after", "300")], b""), |e, m| {
            matches!(e, ZoteroStorageError::RateLimited { retry_after_secs: Some(300), .. })
                && m.contains("300 seconds")
        }),
    ];
    for (response, expected) in cases {
        let http = StubHttp::strict();
        http.enqueue(response);
        let error = writer(&http).upload(&key(), upload_of(b"x", Precondition::NewFile)).await.unwrap_err();
        assert!(expected(&error, &error.to_string()), "{error}");
        // Nothing retried, nothing uploaded.
        assert_eq!(http.requests().len(), 1, "{error}");
    }
}

fn writer_on(http: &Rc<StubHttp>, clock: Rc<ManualClock>) -> ZoteroStorageWriter {
    ZoteroStorageWriter::new(&settings(API), "/users/42", http.clone(), clock, StoragePolicy::default()).unwrap()
}

/// The authorization and the registration are safe to repeat (their `If-None-Match`/`If-Match` makes a second
/// one that lands impossible), so they follow the rule of every Zotero step safe to repeat: a 429 or 503 is
/// waited out (`Retry-After`, else a doubling delay) and the step sent again, the same request.
#[tokio::test]
async fn a_rate_limited_authorization_or_registration_is_sent_again_after_the_wait() {
    let pdf = b"%PDF-1.7 new".to_vec();
    let http = StubHttp::strict();
    let clock = ManualClock::at(0);
    http.enqueue(answer(503, &[("retry-after", "2")], b"Service Unavailable"));
    http.enqueue(authorization());
    http.enqueue(answer(201, &[], b""));
    http.enqueue(answer(429, &[("retry-after", "3")], b""));
    http.enqueue(answer(204, &[("last-modified-version", "812")], b""));

    let stored = writer_on(&http, clock.clone()).upload(&key(), upload_of(&pdf, Precondition::NewFile)).await.unwrap();

    assert_eq!(stored.version, Some(812));
    assert_eq!(clock.sleeps(), vec![2_000, 3_000], "each wait as Zotero asked");
    let requests = http.requests();
    assert_eq!(requests.len(), 5);
    assert_eq!((form(&requests[0]), header(&requests[0], "if-none-match")), (form(&requests[1]), Some("*")));
    assert_eq!((form(&requests[3]), header(&requests[3], "if-none-match")), (form(&requests[4]), Some("*")));
}

/// The bound is the item writes' ([`crate::zotero::RetryPolicy`]): four retries, no wait over 30 s. Past it the
/// refusal is reported with its wait, as before.
#[tokio::test]
async fn an_upload_step_is_retried_within_the_item_writes_bound() {
    let limited = |status: u16, retry_after: Option<&str>| {
        let headers: Vec<(&str, &str)> = retry_after.iter().map(|r| ("retry-after", *r)).collect();
        answer(status, &headers, b"")
    };
    // Always refused: five attempts, four waits, then the error.
    for (status, retry_after, waits) in [
        (429, Some("12"), vec![12_000; 4]),
        (503, None, vec![500, 1_000, 2_000, 4_000]),
        (503, Some("30"), vec![30_000; 4]),
    ] {
        let http = StubHttp::strict();
        let clock = ManualClock::at(0);
        for _ in 0..5 {
            http.enqueue(limited(status, retry_after));
        }
        let writer = writer_on(&http, clock.clone());
        let error = writer.upload(&key(), upload_of(b"x", Precondition::NewFile)).await.unwrap_err();
        assert!(matches!(error, ZoteroStorageError::RateLimited { status: s, .. } if s == status), "{error}");
        assert_eq!(http.requests().len(), 5, "{error}");
        assert_eq!(clock.sleeps(), waits, "{status} {retry_after:?}");
    }
    // A wait over the bound is not waited at all.
    let http = StubHttp::strict();
    let clock = ManualClock::at(0);
    http.enqueue(limited(503, Some("31")));
    let error = writer_on(&http, clock.clone()).upload(&key(), upload_of(b"x", Precondition::NewFile)).await;
    assert!(matches!(error, Err(ZoteroStorageError::RateLimited { retry_after_secs: Some(31), .. })), "{error:?}");
    assert_eq!((http.requests().len(), clock.sleeps()), (1, vec![]));
}

/// A registration sent again and refused as stale may have been recorded by its first attempt (a 503 given
/// after the file was recorded): that is an unknown outcome for the caller to check, not "changed elsewhere".
#[tokio::test]
async fn a_registration_refused_as_stale_after_a_retry_is_an_unknown_outcome() {
    let http = StubHttp::strict();
    http.enqueue(authorization());
    http.enqueue(answer(201, &[], b""));
    http.enqueue(answer(503, &[("retry-after", "1")], b""));
    http.enqueue(answer(412, &[("last-modified-version", "813")], b"If-None-Match: * set but file exists"));

    let error = writer(&http).upload(&key(), upload_of(b"x", Precondition::NewFile)).await.unwrap_err();

    assert!(
        matches!(
            error,
            ZoteroStorageError::Unanswered { step: crate::zotero_storage::UnansweredStep::Registration, .. }
        ),
        "{error}"
    );
    assert!(error.to_string().contains("may or may not have recorded the file"), "{error}");
}

#[tokio::test]
async fn a_refused_upload_is_not_registered() {
    let http = StubHttp::strict();
    http.enqueue(authorization());
    http.enqueue(answer(403, &[], b"<Error><Code>AccessDenied</Code></Error>"));

    let error = writer(&http).upload(&key(), upload_of(b"x", Precondition::NewFile)).await.unwrap_err();

    assert!(matches!(error, ZoteroStorageError::UploadFailed { status: 403, .. }), "{error}");
    assert!(error.to_string().contains("the library is as it was"), "{error}");
    assert_eq!(http.requests().len(), 2);
}

#[tokio::test]
async fn an_upload_url_that_is_not_https_gets_nothing() {
    let http = StubHttp::strict();
    let body =
        json!({"url": "http://upload.storage.test/", "contentType": "x", "prefix": "", "suffix": "", "uploadKey": "k"});
    http.enqueue(answer(200, &[], body.to_string().as_bytes()));

    let error = writer(&http).upload(&key(), upload_of(b"x", Precondition::NewFile)).await.unwrap_err();

    assert!(matches!(error, ZoteroStorageError::RefusedUrl { .. }), "{error}");
    assert_eq!(http.requests().len(), 1);
}

#[tokio::test]
async fn a_registration_refused_as_changed_is_reported_not_retried() {
    let http = StubHttp::strict();
    http.enqueue(authorization());
    http.enqueue(answer(201, &[], b""));
    http.enqueue(answer(412, &[("last-modified-version", "13")], b"If-None-Match: * set but file exists"));

    let error = writer(&http).upload(&key(), upload_of(b"x", Precondition::NewFile)).await.unwrap_err();

    assert!(matches!(error, ZoteroStorageError::Changed { version: Some(13), .. }), "{error}");
    assert_eq!(http.requests().len(), 3);
    assert_eq!(header(&http.requests()[2], "if-none-match"), Some("*"));
}

#[test]
fn the_library_must_be_a_user_or_group_path() {
    for bad in ["/users/", "/users/4x", "users/4", "/groups/1/items", "/publications/1"] {
        let made =
            ZoteroStorage::new(&settings(API), bad, StubHttp::strict(), ManualClock::at(0), StoragePolicy::default());
        assert!(matches!(made, Err(ZoteroStorageError::Config(_))), "{bad}");
    }
    let made = ZoteroStorage::new(
        &settings(API),
        "/groups/9",
        StubHttp::strict(),
        ManualClock::at(0),
        StoragePolicy::default(),
    );
    assert!(!format!("{:?}", made.unwrap()).contains(API_KEY));
}

#[tokio::test]
async fn a_registration_whose_answer_is_lost_is_unknown_and_recorded_as_a_possible_replacement() {
    let http = StubHttp::strict();
    http.enqueue(authorization());
    http.enqueue(answer(201, &[], b""));
    let reset = "connection reset by peer".to_owned();
    http.enqueue(Err(crate::platform::HttpError::Transport {
        url: format!("{API}/users/42/items/ABCD2345/file"),
        reason: reset,
    }));
    let writer = writer(&http);
    let error = writer.upload(&key(), upload_of(b"new", Precondition::Replaces(md5_hex(b"old")))).await.unwrap_err();
    assert!(
        matches!(&error, ZoteroStorageError::Unanswered { step: UnansweredStep::Registration, md5, .. }
            if *md5 == md5_hex(b"new")),
        "{error}"
    );
    assert!(error.to_string().contains("may or may not have recorded the file"), "{error}");
    assert_eq!(writer.log().take().len(), 1, "the journal hears of the file that may have been replaced");
}

/// The authorization records the file itself when Zotero already holds the bytes (`{"exists": 1}`), so its lost
/// answer is as unknown as a lost registration, not a failure before anything was stored; nothing is sent again.
#[tokio::test]
async fn an_authorization_whose_answer_is_lost_is_unknown_and_not_sent_again() {
    for lost in [
        Err(crate::platform::HttpError::Transport {
            url: format!("{API}/users/42/items/ABCD2345/file"),
            reason: "connection reset by peer".into(),
        }),
        Err(crate::platform::HttpError::Timeout {
            url: format!("{API}/users/42/items/ABCD2345/file"),
            after_ms: 30_000,
        }),
    ] {
        let http = StubHttp::strict();
        http.enqueue(lost);
        let writer = writer(&http);
        let replaces = Precondition::Replaces(md5_hex(b"old"));
        let error = writer.upload(&key(), upload_of(b"new", replaces)).await.unwrap_err();
        assert!(
            matches!(&error, ZoteroStorageError::Unanswered { step: UnansweredStep::Authorization, .. }),
            "{error}"
        );
        assert!(error.to_string().starts_with("the upload authorization of the new file"), "{error}");
        assert_eq!(http.requests().len(), 1, "not retried");
        assert_eq!(writer.log().take().len(), 1, "the journal hears of the file that may have been replaced");
    }
}

#[test]
fn the_upload_body_is_the_files_buffer_with_prefix_and_suffix_around_it() {
    let body = super::upload::framed("<<", b"file".to_vec(), ">>");
    assert_eq!(body, b"<<file>>");
}
