//! Zotero Storage through the HTTP surface: `items/<key>/file` on the API (download redirect, upload
//! authorization, registration) and the separate storage origin it points at.

mod common;

use common::{get, raw, send, sim, Resp, KEY, LIB, USER};
use serde_json::{json, Value};
use zotero_mcp_core::webdav::md5_hex;
use zotero_sim::{Fault, LibraryRef, Simulator};

const PDF: &[u8] = b"%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n";

/// A standalone PDF attachment (imported_file), with no file yet.
fn attachment(sim: &Simulator) -> String {
    sim.insert_item(
        LIB,
        json!({"itemType": "attachment", "linkMode": "imported_file", "title": "Paper", "contentType": "application/pdf", "filename": "paper.pdf"}),
    )
}

fn file_path(key: &str) -> String {
    format!("/users/{USER}/items/{key}/file")
}

/// `POST items/<key>/file` with a form body and the given precondition header.
fn post_form(sim: &Simulator, key: &str, precondition: Option<(&str, &str)>, form: &[(&str, &str)]) -> Resp {
    let body: String = form_urlencoded::Serializer::new(String::new()).extend_pairs(form).finish();
    let mut headers = vec![("Content-Type", "application/x-www-form-urlencoded")];
    headers.extend(precondition);
    let request = http::Request::builder()
        .method("POST")
        .uri(format!("https://api.zotero.org{}", file_path(key)))
        .header("Zotero-API-Key", KEY);
    let request = headers.iter().fold(request, |r, (n, v)| r.header(*n, *v));
    raw(sim, request.body(body.into_bytes()).unwrap())
}

fn authorize(sim: &Simulator, key: &str, precondition: Option<(&str, &str)>, bytes: &[u8]) -> Resp {
    let md5 = md5_hex(bytes);
    let size = bytes.len().to_string();
    post_form(
        sim,
        key,
        precondition,
        &[("md5", &md5), ("filename", "new.pdf"), ("filesize", &size), ("mtime", "1700000000123")],
    )
}

/// A request to an absolute URL (the storage origin), with only the headers given.
fn fetch(sim: &Simulator, method: &str, url: &str, headers: &[(&str, &str)], body: Vec<u8>) -> Resp {
    let request = headers.iter().fold(http::Request::builder().method(method).uri(url), |r, (n, v)| r.header(*n, *v));
    raw(sim, request.body(body).unwrap())
}

/// Posts prefix + bytes + suffix to the authorization's URL, as the file upload page says.
fn upload(sim: &Simulator, auth: &Value, bytes: &[u8]) -> Resp {
    let mut body = auth["prefix"].as_str().unwrap().as_bytes().to_vec();
    body.extend_from_slice(bytes);
    body.extend_from_slice(auth["suffix"].as_str().unwrap().as_bytes());
    fetch(sim, "POST", auth["url"].as_str().unwrap(), &[("Content-Type", auth["contentType"].as_str().unwrap())], body)
}

fn location(resp: &Resp) -> String {
    assert_eq!(resp.status, 302, "{}", resp.text());
    resp.header("location").unwrap()
}

fn item_data(sim: &Simulator, key: &str) -> Value {
    sim.item(LIB, key).unwrap()["data"].clone()
}

#[test]
fn download_redirects_to_a_signed_url_on_the_storage_origin_that_serves_the_file() {
    let sim = sim();
    let key = attachment(&sim);
    let md5 = sim.store_file(LIB, &key, "paper.pdf", PDF);
    assert_eq!(item_data(&sim, &key)["md5"], md5.as_str());
    let resp = get(&sim, &file_path(&key));
    let url = location(&resp);
    assert!(url.starts_with(&format!("{}/", sim.storage_origin())), "{url}");
    assert!(!url.starts_with("https://api.zotero.org"), "{url}");
    assert_eq!(resp.header("zotero-file-md5").as_deref(), Some(md5.as_str()));
    assert_eq!(resp.header("zotero-file-size"), Some(PDF.len().to_string()));
    assert_eq!(resp.header("zotero-file-compressed").as_deref(), Some("No"));
    let file = fetch(&sim, "GET", &url, &[], Vec::new());
    assert_eq!(file.status, 200, "{}", file.text());
    assert_eq!(file.body, PDF);
    assert_eq!(md5_hex(&file.body), md5);
    assert_eq!(file.header("content-type").as_deref(), Some("application/pdf"));
    // The item now links to its file, as the API shows stored files.
    let enclosure = &sim.item(LIB, &key).unwrap()["links"]["enclosure"];
    assert_eq!(enclosure["title"], "paper.pdf");
    assert_eq!(enclosure["length"], PDF.len());
    assert_eq!(enclosure["type"], "application/pdf");
    // The storage's requests are logged apart from the API's.
    assert_eq!(sim.storage_requests().len(), 1);
    assert!(sim.requests().iter().all(|r| !r.path.starts_with("/zotero-storage")));
}

#[test]
fn download_is_404_without_a_stored_file_and_400_for_an_item_that_is_no_attachment() {
    let sim = sim();
    let key = attachment(&sim);
    assert_eq!(get(&sim, &file_path(&key)).status, 404);
    assert!(sim.item(LIB, &key).unwrap()["links"].get("enclosure").is_none());
    let book = sim.insert_item(LIB, json!({"itemType": "book", "title": "B"}));
    let resp = get(&sim, &file_path(&book));
    assert_eq!((resp.status, resp.text()), (400, "Item is not an attachment".to_string()));
    assert_eq!(get(&sim, &file_path("ABCD2345")).status, 404);
}

#[test]
fn the_storage_origin_refuses_any_request_that_carries_the_api_key() {
    let sim = sim();
    let key = attachment(&sim);
    sim.store_file(LIB, &key, "paper.pdf", PDF);
    let url = location(&get(&sim, &file_path(&key)));
    let bearer = format!("Bearer {KEY}");
    for headers in [vec![("Zotero-API-Key", KEY)], vec![("Authorization", bearer.as_str())]] {
        let resp = fetch(&sim, "GET", &url, &headers, Vec::new());
        assert_eq!(resp.status, 403, "{headers:?}");
        assert!(resp.text().contains("carries a Zotero API key"), "{}", resp.text());
        assert!(!resp.body.starts_with(b"%PDF"));
    }
    let resp = fetch(&sim, "GET", &format!("{url}&key={KEY}"), &[], Vec::new());
    assert_eq!(resp.status, 403);
    assert!(resp.text().contains("key= query parameter"), "{}", resp.text());
    // An upload that carries it is refused too, before the form is read.
    let other = attachment(&sim);
    let auth = authorize(&sim, &other, Some(("If-None-Match", "*")), b"other bytes").json();
    let mut body = auth["prefix"].as_str().unwrap().as_bytes().to_vec();
    body.extend_from_slice(b"other bytes");
    body.extend_from_slice(auth["suffix"].as_str().unwrap().as_bytes());
    let ct = auth["contentType"].as_str().unwrap();
    let resp =
        fetch(&sim, "POST", auth["url"].as_str().unwrap(), &[("Content-Type", ct), ("Zotero-API-Key", KEY)], body);
    assert_eq!(resp.status, 403);
    assert!(sim.stored_file(LIB, &other).is_none());
}

#[test]
fn signed_urls_expire_and_cannot_be_guessed_or_reused_for_another_file() {
    let sim = sim();
    let key = attachment(&sim);
    sim.store_file(LIB, &key, "paper.pdf", PDF);
    let url = location(&get(&sim, &file_path(&key)));
    let (base, query) = url.split_once('?').unwrap();
    let forged = format!("{base}?{}", query.replace("Signature=", "Signature=0"));
    assert_eq!(fetch(&sim, "GET", &forged, &[], Vec::new()).status, 403);
    let other = format!("{}/zotero-storage/{}?{query}", sim.storage_origin(), md5_hex(b"another file"));
    assert_eq!(fetch(&sim, "GET", &other, &[], Vec::new()).status, 403);
    assert_eq!(fetch(&sim, "GET", base, &[], Vec::new()).status, 403);
    // Two signatures for the same file differ.
    assert_ne!(url, location(&get(&sim, &file_path(&key))));
    sim.set_signed_url_ttl(Some(0));
    let expired = fetch(&sim, "GET", &location(&get(&sim, &file_path(&key))), &[], Vec::new());
    assert_eq!(expired.status, 403);
    assert!(expired.text().contains("Request has expired"), "{}", expired.text());
}

#[test]
fn file_access_follows_the_key_and_keys_current_reports_it() {
    let sim = sim();
    let key = attachment(&sim);
    sim.store_file(LIB, &key, "paper.pdf", PDF);
    assert_eq!(get(&sim, "/keys/current").json()["access"]["user"]["files"], true);
    sim.set_file_access(KEY, false);
    assert_eq!(get(&sim, "/keys/current").json()["access"]["user"]["files"], false);
    assert_eq!(get(&sim, &file_path(&key)).status, 403);
    assert_eq!(authorize(&sim, &key, Some(("If-None-Match", "*")), PDF).status, 403);
    // A read-only key may download but not upload.
    sim.add_user(2, "reader", false);
    sim.add_user(USER, "reader", false);
    let resp = raw(
        &sim,
        http::Request::builder()
            .uri(format!("https://api.zotero.org{}", file_path(&key)))
            .header("Zotero-API-Key", "reader")
            .body(Vec::new())
            .unwrap(),
    );
    assert_eq!(resp.status, 302);
    // Group members have file access to the group's files; the key's JSON names no `files` for groups.
    let sim = common::sim();
    sim.add_group(9, KEY, true);
    let group = LibraryRef::Group(9);
    let gkey = sim.insert_item(group, json!({"itemType": "attachment", "linkMode": "imported_file", "contentType": "application/pdf", "filename": "g.pdf"}));
    sim.store_file(group, &gkey, "g.pdf", PDF);
    assert_eq!(get(&sim, "/keys/current").json()["access"]["groups"]["9"], json!({"library": true, "write": true}));
    assert_eq!(get(&sim, &format!("/groups/9/items/{gkey}/file")).status, 302);
}

#[test]
fn a_full_upload_authorize_post_register_round_trips_the_bytes_and_bumps_versions() {
    let sim = sim();
    let key = attachment(&sim);
    let before = sim.library_version(LIB);
    let auth = authorize(&sim, &key, Some(("If-None-Match", "*")), PDF);
    assert_eq!(auth.status, 200, "{}", auth.text());
    let auth = auth.json();
    for field in ["url", "contentType", "prefix", "suffix", "uploadKey"] {
        assert!(auth[field].is_string(), "{field} in {auth}");
    }
    assert!(auth["contentType"].as_str().unwrap().starts_with("multipart/form-data; boundary="));
    assert!(auth["url"].as_str().unwrap().starts_with(&sim.storage_origin()));
    // Authorization alone changes nothing.
    assert_eq!(sim.library_version(LIB), before);
    let stored = upload(&sim, &auth, PDF);
    assert_eq!(stored.status, 201, "{}", stored.text());
    assert_eq!(sim.library_version(LIB), before);
    let upload_key = auth["uploadKey"].as_str().unwrap();
    let registered = post_form(&sim, &key, Some(("If-None-Match", "*")), &[("upload", upload_key)]);
    assert_eq!(registered.status, 204, "{}", registered.text());
    assert_eq!(registered.version(), before + 1);
    assert_eq!(sim.library_version(LIB), before + 1);
    let item = sim.item(LIB, &key).unwrap();
    assert_eq!(item["version"], before + 1);
    assert_eq!(item["data"]["md5"], md5_hex(PDF).as_str());
    assert_eq!(item["data"]["mtime"], 1_700_000_000_123_i64);
    assert_eq!(item["data"]["filename"], "new.pdf");
    let file = fetch(&sim, "GET", &location(&get(&sim, &file_path(&key))), &[], Vec::new());
    assert_eq!(file.body, PDF);
    // Replacing it needs the current md5 in If-Match.
    let replacement = b"%PDF-1.4 replaced\n%%EOF\n";
    assert_eq!(authorize(&sim, &key, Some(("If-None-Match", "*")), replacement).status, 412);
    let md5 = md5_hex(PDF);
    let auth = authorize(&sim, &key, Some(("If-Match", &md5)), replacement).json();
    assert_eq!(upload(&sim, &auth, replacement).status, 201);
    let resp = post_form(&sim, &key, Some(("If-Match", &md5)), &[("upload", auth["uploadKey"].as_str().unwrap())]);
    assert_eq!(resp.status, 204, "{}", resp.text());
    assert_eq!(sim.library_version(LIB), before + 2);
    assert_eq!(sim.stored_file(LIB, &key).as_deref(), Some(&replacement[..]));
}

#[test]
fn authorization_says_exists_when_the_storage_already_holds_the_file() {
    let sim = sim();
    let first = attachment(&sim);
    let second = attachment(&sim);
    sim.store_file(LIB, &first, "paper.pdf", PDF);
    let before = sim.library_version(LIB);
    let resp = authorize(&sim, &second, Some(("If-None-Match", "*")), PDF);
    assert_eq!(resp.status, 200, "{}", resp.text());
    assert_eq!(resp.json(), json!({"exists": 1}));
    assert_eq!(resp.version(), before + 1);
    assert_eq!(item_data(&sim, &second)["md5"], md5_hex(PDF).as_str());
    assert_eq!(sim.item(LIB, &second).unwrap()["version"], before + 1);
    assert_eq!(sim.stored_file(LIB, &second).as_deref(), Some(PDF));
    // The same file held twice counts once against the quota.
    assert_eq!(sim.storage_usage_bytes(LIB), PDF.len() as u64);
}

#[test]
fn preconditions_are_required_and_checked_against_the_items_md5() {
    let sim = sim();
    let key = attachment(&sim);
    let resp = authorize(&sim, &key, None, PDF);
    assert_eq!((resp.status, resp.text()), (428, "If-Match/If-None-Match header not provided".to_string()));
    let wrong = md5_hex(b"not it");
    assert_eq!(authorize(&sim, &key, Some(("If-Match", &wrong)), PDF).status, 412);
    let md5 = sim.store_file(LIB, &key, "paper.pdf", PDF);
    let resp = authorize(&sim, &key, Some(("If-None-Match", "*")), b"new");
    assert_eq!(resp.status, 412);
    assert_eq!(resp.version(), sim.item(LIB, &key).unwrap()["version"].as_u64().unwrap());
    let resp = authorize(&sim, &key, Some(("If-Match", &wrong)), b"new");
    assert_eq!((resp.status, resp.text()), (412, "ETag does not match current version of file".to_string()));
    assert_eq!(authorize(&sim, &key, Some(("If-Match", "nonsense")), b"new").status, 400);
    // The file changes between authorization and registration: the registration is refused.
    let auth = authorize(&sim, &key, Some(("If-Match", &md5)), b"mine").json();
    assert_eq!(upload(&sim, &auth, b"mine").status, 201);
    sim.store_file(LIB, &key, "theirs.pdf", b"theirs");
    let version = sim.library_version(LIB);
    let resp = post_form(&sim, &key, Some(("If-Match", &md5)), &[("upload", auth["uploadKey"].as_str().unwrap())]);
    assert_eq!(resp.status, 412);
    assert_eq!(sim.library_version(LIB), version);
    assert_eq!(sim.stored_file(LIB, &key).as_deref(), Some(&b"theirs"[..]));
    // Registration needs a precondition too.
    assert_eq!(post_form(&sim, &key, None, &[("upload", auth["uploadKey"].as_str().unwrap())]).status, 428);
}

#[test]
fn a_file_over_the_quota_is_refused_with_413_saying_how_full() {
    let sim = sim();
    sim.set_storage_quota_mb(LIB, 1);
    let kept = attachment(&sim);
    sim.store_file(LIB, &kept, "big.pdf", &vec![b'a'; 800 * 1024]);
    let key = attachment(&sim);
    let resp = authorize(&sim, &key, Some(("If-None-Match", "*")), &vec![b'b'; 400 * 1024]);
    assert_eq!(resp.status, 413, "{}", resp.text());
    // Escaped as the server escapes every error message (htmlspecialchars).
    assert_eq!(resp.text(), "File would exceed quota (1.2 &gt; 1)");
    assert_eq!(resp.header("zotero-storage-usage").as_deref(), Some("0.8"));
    assert_eq!(resp.header("zotero-storage-quota").as_deref(), Some("1"));
    assert_eq!(resp.header("zotero-storage-userid"), Some(USER.to_string()));
    assert_eq!(authorize(&sim, &key, Some(("If-None-Match", "*")), &vec![b'b'; 100 * 1024]).status, 200);
}

#[test]
fn the_storage_refuses_bytes_that_are_not_the_authorized_file_and_registration_then_fails() {
    let sim = sim();
    let key = attachment(&sim);
    let auth = authorize(&sim, &key, Some(("If-None-Match", "*")), b"the real file").json();
    let resp = upload(&sim, &auth, b"the fake file");
    assert_eq!(resp.status, 400);
    assert!(resp.text().contains("BadDigest"), "{}", resp.text());
    assert!(upload(&sim, &auth, b"short").text().contains("EntityTooSmall"));
    let version = sim.library_version(LIB);
    let resp = post_form(&sim, &key, Some(("If-None-Match", "*")), &[("upload", auth["uploadKey"].as_str().unwrap())]);
    assert_eq!((resp.status, resp.text()), (400, "Remote file not found".to_string()));
    assert_eq!(sim.library_version(LIB), version);
    assert_eq!(item_data(&sim, &key)["md5"], Value::Null);
}

#[test]
fn an_unknown_or_used_upload_key_is_refused() {
    let sim = sim();
    let key = attachment(&sim);
    let resp = post_form(&sim, &key, Some(("If-None-Match", "*")), &[("upload", "0123456789abcdef0123456789abcdef")]);
    assert_eq!((resp.status, resp.text()), (400, "Upload key not found".to_string()));
    let auth = authorize(&sim, &key, Some(("If-None-Match", "*")), PDF).json();
    upload(&sim, &auth, PDF);
    let upload_key = auth["uploadKey"].as_str().unwrap();
    assert_eq!(post_form(&sim, &key, Some(("If-None-Match", "*")), &[("upload", upload_key)]).status, 204);
    let md5 = md5_hex(PDF);
    let again = post_form(&sim, &key, Some(("If-Match", &md5)), &[("upload", upload_key)]);
    assert_eq!((again.status, again.text()), (400, "Upload key not found".to_string()));
}

#[test]
fn params_1_gives_the_form_fields_and_a_zipped_upload_keeps_the_items_own_md5() {
    let sim = sim();
    let key = attachment(&sim);
    let zip = b"PK\x03\x04 pretend zip of page.html".to_vec();
    let (zip_md5, zip_size) = (md5_hex(&zip), zip.len().to_string());
    let page_md5 = md5_hex(b"<html>page</html>");
    let form = [
        ("md5", page_md5.as_str()),
        ("filename", "page.html"),
        ("zipMD5", &zip_md5),
        ("zipFilename", "ABCD2345.zip"),
        ("filesize", &zip_size),
        ("mtime", "1700000000000"),
        ("params", "1"),
    ];
    let auth = post_form(&sim, &key, Some(("If-None-Match", "*")), &form).json();
    let params = auth["params"].as_object().unwrap();
    assert_eq!(params["key"], zip_md5.as_str());
    // Build the multipart form from the fields, as Desktop does, with the file last.
    let boundary = "testboundary";
    let mut body = Vec::new();
    for (name, value) in params {
        body.extend(
            format!(
                "--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{}\r\n",
                value.as_str().unwrap()
            )
            .bytes(),
        );
    }
    body.extend(
        format!("--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"x.zip\"\r\n\r\n").bytes(),
    );
    body.extend(&zip);
    body.extend(format!("\r\n--{boundary}--\r\n").bytes());
    let ct = format!("multipart/form-data; boundary={boundary}");
    assert_eq!(fetch(&sim, "POST", auth["url"].as_str().unwrap(), &[("Content-Type", &ct)], body).status, 201);
    let resp = post_form(&sim, &key, Some(("If-None-Match", "*")), &[("upload", auth["uploadKey"].as_str().unwrap())]);
    assert_eq!(resp.status, 204, "{}", resp.text());
    assert_eq!(item_data(&sim, &key)["md5"], page_md5.as_str());
    assert_eq!(item_data(&sim, &key)["filename"], "page.html");
    let redirect = get(&sim, &file_path(&key));
    assert_eq!(redirect.header("zotero-file-compressed").as_deref(), Some("Yes"));
    let file = fetch(&sim, "GET", &location(&redirect), &[], Vec::new());
    assert_eq!(file.header("content-type").as_deref(), Some("application/zip"));
    assert_eq!(file.body, zip);
}

#[test]
fn deleting_the_attachment_removes_its_file() {
    let sim = sim();
    let key = attachment(&sim);
    sim.store_file(LIB, &key, "paper.pdf", PDF);
    let version = sim.library_version(LIB).to_string();
    let resp =
        send(&sim, "DELETE", &format!("/users/{USER}/items/{key}"), &[("If-Unmodified-Since-Version", &version)], None);
    assert_eq!(resp.status, 204, "{}", resp.text());
    assert_eq!(get(&sim, &file_path(&key)).status, 404);
    assert!(sim.stored_file(LIB, &key).is_none());
    assert!(sim.item(LIB, &key).is_none());
    assert_eq!(sim.storage_usage_bytes(LIB), 0);
}

/// An upload that reached the bucket and lost its answer (`Fault::DropAnswer` at the storage origin: S3 keeps the
/// object) was never registered, so Zotero does not know the file: the item has none, and the next
/// authorization asks for the upload again rather than answering `{"exists": 1}` (the dataserver looks the hash
/// up in `storageFiles`, which only a registration fills: `Zotero_Storage::addFile`).
#[test]
fn bytes_uploaded_but_never_registered_are_not_a_known_file() {
    let sim = sim();
    let key = attachment(&sim);
    let auth = authorize(&sim, &key, Some(("If-None-Match", "*")), PDF).json();
    let matcher = zotero_sim::FaultMatch { path_contains: Some("/zotero-storage/".into()), ..Default::default() };
    sim.fail_matching(1, matcher, Fault::DropAnswer);
    let mut body = auth["prefix"].as_str().unwrap().as_bytes().to_vec();
    body.extend_from_slice(PDF);
    body.extend_from_slice(auth["suffix"].as_str().unwrap().as_bytes());
    let request = http::Request::builder()
        .method("POST")
        .uri(auth["url"].as_str().unwrap())
        .header("Content-Type", auth["contentType"].as_str().unwrap())
        .body(body)
        .unwrap();
    let response = sim.handle(request);
    assert_eq!(response.status(), 201, "served: S3 stored it");
    assert!(response.extensions().get::<zotero_sim::AnswerDropped>().is_some(), "and the answer is lost");
    assert!(sim.stored_file(LIB, &key).is_none());
    assert!(item_data(&sim, &key).get("md5").is_none_or(|m| m.is_null() || m == ""));

    let other = attachment(&sim);
    let again = authorize(&sim, &other, Some(("If-None-Match", "*")), PDF);
    assert_eq!(again.status, 200, "{}", again.text());
    assert!(again.json().get("uploadKey").is_some(), "asked to upload again: {}", again.text());
    assert!(sim.stored_file(LIB, &other).is_none());
}

#[test]
fn injected_faults_answer_the_file_endpoints_and_change_nothing() {
    let sim = sim();
    let key = attachment(&sim);
    sim.fail_next(1, Fault::TooManyRequests { retry_after: Some(2) });
    let resp = authorize(&sim, &key, Some(("If-None-Match", "*")), PDF);
    assert_eq!((resp.status, resp.header("retry-after")), (429, Some("2".to_string())));
    // A matched fault reaches the storage origin too.
    let auth = authorize(&sim, &key, Some(("If-None-Match", "*")), PDF).json();
    let matcher = zotero_sim::FaultMatch { path_contains: Some("/zotero-storage/".into()), ..Default::default() };
    sim.fail_matching(1, matcher, Fault::Status { status: 500 });
    assert_eq!(upload(&sim, &auth, PDF).status, 500);
    assert!(sim.stored_file(LIB, &key).is_none());
    assert_eq!(upload(&sim, &auth, PDF).status, 201);
}

#[test]
fn the_demo_files_can_be_put_on_zotero_storage() {
    let sim = Simulator::demo();
    let demo = LibraryRef::User(zotero_sim::DEMO_USER_ID);
    let md5_before = sim.item(demo, "Z36ESMED").unwrap()["data"]["md5"].clone();
    assert_eq!(sim.store_demo_files(demo), Ok(21));
    // A real file keeps the md5 the library records; a made PDF's item takes its file's.
    assert_eq!(sim.item(demo, "Z36ESMED").unwrap()["data"]["md5"], md5_before);
    let made = sim.stored_file(demo, "93WJRKG5").unwrap();
    assert!(made.starts_with(b"%PDF-"));
    assert_eq!(sim.item(demo, "93WJRKG5").unwrap()["data"]["md5"], md5_hex(&made).as_str());
}

/// One HTTP/1.0 request over a socket; the whole answer as text (lossy: enough for status, headers, magic).
fn socket_get(addr: &str, path: &str, headers: &[(&str, &str)]) -> String {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(addr).unwrap_or_else(|e| panic!("connect {addr}: {e}"));
    let extra: String = headers.iter().map(|(n, v)| format!("{n}: {v}\r\n")).collect();
    write!(stream, "GET {path} HTTP/1.0\r\nHost: {addr}\r\n{extra}Connection: close\r\n\r\n").unwrap();
    let mut out = Vec::new();
    stream.read_to_end(&mut out).unwrap();
    String::from_utf8_lossy(&out).into_owned()
}

#[test]
fn the_binary_serves_the_demo_files_from_a_storage_origin_on_its_own_loopback_port() {
    use std::io::BufRead;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_zotero-sim"))
        .args(["--listen", "127.0.0.1:0", "--demo", "--demo-files-on-zotero-storage", "--exit-after", "20"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let mut line = || lines.next().unwrap().unwrap();
    let api = line().strip_prefix("zotero-sim listening on http://").unwrap().to_string();
    let storage = line().strip_prefix("zotero-sim storage listening on http://").unwrap().to_string();
    assert_ne!(api, storage);
    let redirect = socket_get(&api, "/users/1234567/items/A6JVMAK4/file", &[("Zotero-API-Key", "demo")]);
    let status =
        |answer: &str| answer.lines().next().unwrap_or_default().split(' ').nth(1).unwrap_or_default().to_string();
    assert_eq!(status(&redirect), "302", "{redirect}");
    let url = redirect
        .lines()
        .find_map(|l| l.strip_prefix("Location: ").or_else(|| l.strip_prefix("location: ")))
        .unwrap_or_else(|| panic!("no Location in {redirect}"))
        .trim()
        .to_string();
    let path = url.strip_prefix(&format!("http://{storage}")).unwrap_or_else(|| panic!("{url} is not on {storage}"));
    let file = socket_get(&storage, path, &[]);
    assert!(status(&file) == "200" && file.contains("%PDF-"), "{}", &file[..200.min(file.len())]);
    let refused = socket_get(&storage, path, &[("Zotero-API-Key", "demo")]);
    assert_eq!(status(&refused), "403", "{refused}");
    let _ = child.kill();
    let _ = child.wait();
}
