//! Attachment files read from Zotero Storage through the file-store seam: `zotero_read_attachment` (text,
//! outline, info) against the simulator's file API, whose storage origin refuses any request carrying the API
//! key, and how `FILE_STORAGE` and `WEBDAV_URL` choose the store.

mod common;

use common::files::assert_key_stayed_with_the_api;
use common::*;
use serde_json::{json, Value};
use zotero_mcp_core::testing::pdf_of_pages;
use zotero_mcp_server::auth::Grant;
use zotero_mcp_server::call::Session;
use zotero_sim::LibraryRef;

/// A PDF attachment of the demo library without an entry in Zotero's full-text index (parent KPDKK5UT).
const ATTACHMENT: &str = "UN79YVS8";
const LIB: LibraryRef = LibraryRef::User(1_234_567);

fn app_and_sim(vars: &[(&str, &str)]) -> (zotero_mcp_server::app::App, std::rc::Rc<zotero_sim::Simulator>) {
    let mut all = vec![("ZOTERO_API_KEY", DEMO_KEY), ("ZOTERO_LIBRARY_ID", "1234567")];
    all.extend_from_slice(vars);
    let mut app = app_with(&all);
    let sim = demo_sim();
    app.platform.http = std::rc::Rc::new(zotero_sim::InProcess(sim.clone()));
    (app, sim)
}

async fn read(app: &zotero_mcp_server::app::App, arguments: Value) -> Value {
    let ctx = Session::new(Grant::read_only("owner"), app.config.clone(), app.platform.clone());
    zotero_mcp_server::tools::registry(&app.config)
        .call_tool(&ctx, "zotero_read_attachment", arguments)
        .await
        .expect("the tool exists")
}

fn three_pages() -> Vec<u8> {
    pdf_of_pages(&["Residue contacts emerge early", "The second page", "The third page"])
}

#[tokio::test]
async fn without_webdav_a_paper_is_read_from_zotero_storage_page_by_page() {
    let (app, sim) = app_and_sim(&[]);
    sim.store_file(LIB, ATTACHMENT, "paper.pdf", &three_pages());
    let result = read(&app, json!({ "itemKey": ATTACHMENT, "fromPage": 2, "toPage": 3 })).await;
    let out = ok(&result);
    assert_eq!(out["source"], "zotero-storage");
    assert_eq!(out["pages"], json!([2, 3]));
    assert!(out["text"].as_str().unwrap().starts_with("The second page"), "{out}");
    assert!(text(&result).contains("Zotero Storage"), "{}", text(&result));
    assert_key_stayed_with_the_api(&sim);

    let outline = read(&app, json!({ "itemKey": ATTACHMENT, "mode": "outline" })).await;
    assert_eq!(ok(&outline)["outline"], json!([]));
}

#[tokio::test]
async fn info_says_whether_zotero_storage_has_the_file_without_downloading_it() {
    let (app, sim) = app_and_sim(&[]);
    let before = read(&app, json!({ "itemKey": ATTACHMENT, "mode": "info" })).await;
    assert_eq!(ok(&before)["file"]["onWebDav"], false);
    assert_eq!(ok(&before)["file"]["storedIn"], "Zotero Storage");

    sim.store_file(LIB, ATTACHMENT, "paper.pdf", &three_pages());
    let after = read(&app, json!({ "itemKey": ATTACHMENT, "mode": "info" })).await;
    assert_eq!(ok(&after)["file"]["onWebDav"], true);
    assert!(text(&after).contains("- on Zotero Storage: yes"), "{}", text(&after));
    assert!(sim.storage_requests().is_empty(), "info downloaded the file");
}

#[tokio::test]
async fn a_missing_file_or_a_key_without_file_access_says_what_to_do() {
    let (app, sim) = app_and_sim(&[]);
    let missing = error_text(&read(&app, json!({ "itemKey": ATTACHMENT, "fromPage": 1 })).await);
    assert!(missing.contains("Zotero Storage") && missing.contains("sync Zotero Desktop"), "{missing}");

    sim.store_file(LIB, ATTACHMENT, "paper.pdf", &three_pages());
    sim.set_file_access(DEMO_KEY, false);
    let denied = error_text(&read(&app, json!({ "itemKey": ATTACHMENT, "fromPage": 1 })).await);
    assert!(denied.contains("Allow library access"), "{denied}");
}

#[tokio::test]
async fn file_storage_chooses_the_store_and_a_wrong_setting_is_named() {
    // Forced to WebDAV without a WebDAV server: the error names the settings, and nothing is read.
    let (app, sim) = app_and_sim(&[("FILE_STORAGE", "webdav")]);
    sim.store_file(LIB, ATTACHMENT, "paper.pdf", &three_pages());
    let error = error_text(&read(&app, json!({ "itemKey": ATTACHMENT, "fromPage": 1 })).await);
    assert!(error.contains("FILE_STORAGE is webdav, but WEBDAV_URL is not set"), "{error}");
    assert!(sim.storage_requests().is_empty());

    // Forced to Zotero Storage although WEBDAV_URL is set: read from Zotero Storage.
    let (app, sim) = app_and_sim(&[("FILE_STORAGE", "zotero"), ("WEBDAV_URL", "https://dav.test/files")]);
    sim.store_file(LIB, ATTACHMENT, "paper.pdf", &three_pages());
    let result = read(&app, json!({ "itemKey": ATTACHMENT, "fromPage": 1, "toPage": 1 })).await;
    assert_eq!(ok(&result)["source"], "zotero-storage");

    let (app, _) = app_and_sim(&[("FILE_STORAGE", "dropbox")]);
    let error = error_text(&read(&app, json!({ "itemKey": ATTACHMENT, "fromPage": 1 })).await);
    assert!(error.contains("FILE_STORAGE is \"dropbox\"; set it to webdav or zotero"), "{error}");
}

/// The `zotero_storage` check of `/health`. The probe's answer is kept per thread (per isolate on the
/// Worker), and each test runs on its own thread.
async fn storage_check(app: &zotero_mcp_server::app::App) -> Value {
    let request = http::Request::get("https://zotero.example/health").body(Vec::new()).unwrap();
    let reply = send(app, request).await;
    reply.body["checks"].as_array().unwrap().iter().find(|c| c["name"] == "zotero_storage").cloned().unwrap()
}

#[tokio::test]
async fn health_checks_the_key_s_file_access_once_a_minute() {
    let (app, sim) = app_and_sim(&[]);
    let check = storage_check(&app).await;
    assert_eq!(check["ok"], true, "{check}");
    storage_check(&app).await;
    let key_checks = sim.requests().iter().filter(|r| r.path == "/keys/current").count();
    assert_eq!(key_checks, 1, "the second /health within the minute reuses the answer");
    // The landing page says the same, from the same probe.
    let landing = send(&app, http::Request::get("https://zotero.example/").body(Vec::new()).unwrap()).await;
    assert!(landing.text.contains("Attachment files: read from Zotero Storage with this key."), "{}", landing.text);
}

#[tokio::test]
async fn health_says_which_permission_a_key_without_file_access_lacks() {
    let (app, sim) = app_and_sim(&[]);
    sim.set_file_access(DEMO_KEY, false);
    let check = storage_check(&app).await;
    assert_eq!(check["ok"], false);
    assert_eq!(check["required"], false);
    assert!(check["fix"].as_str().unwrap().contains("Allow library access"), "{check}");
    assert!(!check.to_string().contains(DEMO_KEY));
}
