//! `zotero_read_attachment` and `zotero_delete_attachment` against the Zotero simulator (the demo library) and
//! an in-memory WebDAV folder (tests/common/dav.rs).

#![allow(async_fn_in_trait)]

mod common;

use common::dav::*;
use common::*;
use serde_json::{json, Value};
use zotero_mcp_core::testing::pdf_of_pages;
use zotero_mcp_server::app::App;
use zotero_mcp_server::auth::Grant;
use zotero_mcp_server::call::Session;
use zotero_sim::LibraryRef;

/// A paper's PDF attachment with an entry in Zotero's full-text index (parent T6W7H8UE).
const INDEXED: &str = "93WJRKG5";
/// One without (parent KPDKK5UT).
const NOT_INDEXED: &str = "UN79YVS8";

type Setup = Bench;

fn setup(webdav: bool) -> Setup {
    bench(webdav)
}

/// `zotero_read_attachment`, with a chosen grant or read-only.
trait Reads {
    async fn call(&self, grant: Grant, arguments: Value) -> Value;
    async fn read(&self, arguments: Value) -> Value;
}

impl Reads for Bench {
    async fn call(&self, grant: Grant, arguments: Value) -> Value {
        self.tool("zotero_read_attachment", grant, arguments).await
    }

    async fn read(&self, arguments: Value) -> Value {
        self.call(Grant::read_only("owner"), arguments).await
    }
}

fn three_pages() -> Vec<u8> {
    pdf_of_pages(&["Residue contacts emerge early", "Side chains pack without rotamers", "Equivariance is the key"])
}

#[tokio::test]
async fn a_whole_document_comes_from_zoteros_index_without_touching_webdav() {
    let s = setup(true);
    // The parent item's key: its PDF is chosen.
    let result = s.read(json!({ "itemKey": "T6W7H8UE" })).await;
    let out = ok(&result);
    assert_eq!(out["attachmentKey"], INDEXED);
    assert_eq!(out["source"], "zotero-index");
    assert!(!out["text"].as_str().unwrap().is_empty());
    assert!(text(&result).contains("from Zotero's full-text index"));
    assert!(s.dav_requests().is_empty());
}

/// The core says the archive is over its limit and to read what Zotero indexed; the tool names the search that
/// does (the core names no tool: `crates/core/tests/no_server_words.rs`).
#[tokio::test]
async fn an_archive_over_the_limit_points_to_the_search_over_zoteros_index() {
    let s = setup(true);
    let mut bomb = b"%PDF-1.4\n".to_vec();
    bomb.resize(4 * 1024 * 1024, 0);
    s.upload(NOT_INDEXED, "paper.pdf", &bomb);
    let error = error_text(&s.read(json!({ "itemKey": NOT_INDEXED })).await);
    assert!(error.contains("the attachment's zip on WebDAV is over this server's limit"), "{error}");
    assert!(
        error.ends_with("read the text Zotero indexed instead (zotero_search finds words in indexed files)"),
        "{error}"
    );
}

#[tokio::test]
async fn a_page_range_reads_the_file_once_and_then_the_cache() {
    let s = setup(true);
    s.upload(NOT_INDEXED, "Marchetti et al. - 2022.pdf", &three_pages());
    let result = s.read(json!({ "itemKey": "KPDKK5UT", "fromPage": 2, "toPage": 3 })).await;
    let out = ok(&result);
    assert_eq!(out["source"], "webdav");
    assert_eq!(out["totalPages"], 3);
    assert_eq!(out["pages"], json!([2, 3]));
    assert_eq!(out["text"], "Side chains pack without rotamers\n\nEquivariance is the key");
    assert!(text(&result).contains("read: 2–3"), "{}", text(&result));
    assert_eq!(s.dav_requests(), ["GET /files/zotero/UN79YVS8.zip"]);
    // The same range again: from the cache, no download.
    let again = s.read(json!({ "itemKey": NOT_INDEXED, "fromPage": 2, "toPage": 3 })).await;
    assert_eq!(ok(&again)["text"], out["text"]);
    assert_eq!(s.dav_requests().len(), 1);
}

/// The demo's settings with WebDAV and `CPU_LIMIT_MS`, as on Cloudflare's free plan.
fn free_plan_config(limit: &str) -> std::rc::Rc<zotero_mcp_server::config::Config> {
    let vars = [
        ("ZOTERO_API_KEY", DEMO_KEY),
        ("ZOTERO_LIBRARY_ID", "1234567"),
        ("WEBDAV_URL", DAV),
        ("WEBDAV_USERNAME", "me"),
        ("WEBDAV_PASSWORD", "dav-pass"),
        ("CPU_LIMIT_MS", limit),
    ];
    app_with(&vars).config
}

#[tokio::test]
async fn on_the_free_plan_a_pdf_parse_is_refused_before_its_download_and_the_index_and_cache_still_serve() {
    let mut s = setup(true);
    s.upload(NOT_INDEXED, "Marchetti et al. - 2022.pdf", &three_pages());
    // A range read before the limit was set is cached.
    let cached = s.read(json!({ "itemKey": NOT_INDEXED, "fromPage": 1, "toPage": 1 })).await;
    ok(&cached);
    assert_eq!(s.dav_requests().len(), 1);

    s.app.config = free_plan_config("10");
    // Another range would parse the file: refused, with what to do, before anything is downloaded.
    let refused = s.read(json!({ "itemKey": NOT_INDEXED, "fromPage": 2, "toPage": 3 })).await;
    let message = error_text(&refused);
    assert!(message.contains("10 ms") && message.contains("CPU_LIMIT_MS"), "{message}");
    assert!(message.contains("Zotero's full-text index") && message.contains("zotero-mcp serve"), "{message}");
    assert_eq!(s.dav_requests().len(), 1, "no download was started");
    // The cached range, and a whole document Zotero has indexed, are still served.
    let again = s.read(json!({ "itemKey": NOT_INDEXED, "fromPage": 1, "toPage": 1 })).await;
    assert_eq!(ok(&again)["text"], ok(&cached)["text"]);
    let indexed = s.read(json!({ "itemKey": INDEXED })).await;
    assert_eq!(ok(&indexed)["source"], "zotero-index");
    assert_eq!(s.dav_requests().len(), 1);

    // A limit a parse fits in (a paid plan's) reads the file.
    s.app.config = free_plan_config("30000");
    let read = s.read(json!({ "itemKey": NOT_INDEXED, "fromPage": 2, "toPage": 3 })).await;
    assert_eq!(ok(&read)["pages"], json!([2, 3]));
    assert_eq!(s.dav_requests().len(), 2);
}

#[tokio::test]
async fn max_pages_cuts_a_long_read_and_says_where_to_go_on() {
    let s = setup(true);
    s.upload(NOT_INDEXED, "paper.pdf", &three_pages());
    let result = s.read(json!({ "itemKey": NOT_INDEXED, "maxPages": 2 })).await;
    let out = ok(&result);
    assert_eq!(out["pages"], json!([1, 2]));
    assert_eq!(out["truncated"], true);
    assert!(text(&result).contains("fromPage: 3"), "{}", text(&result));
    let past = s.read(json!({ "itemKey": NOT_INDEXED, "fromPage": 9 })).await;
    assert!(error_text(&past).contains("past the end of this 3-page document"));
}

#[tokio::test]
async fn force_file_reads_the_file_even_when_the_index_has_the_text() {
    let s = setup(true);
    s.upload(INDEXED, "Whitfield.pdf", &three_pages());
    let out = s.read(json!({ "itemKey": INDEXED, "forceFile": true })).await;
    assert_eq!(ok(&out)["source"], "webdav");
    assert!(ok(&out)["text"].as_str().unwrap().starts_with("Residue contacts emerge early"));
}

#[tokio::test]
async fn missing_configuration_files_and_links_get_errors_that_say_what_to_do() {
    // Without WEBDAV_URL files are read from Zotero Storage (tools_zotero_storage.rs), where this one is not.
    let unconfigured = setup(false);
    let error = error_text(&unconfigured.read(json!({ "itemKey": NOT_INDEXED, "fromPage": 1 })).await);
    assert!(error.contains("on Zotero Storage; sync Zotero Desktop"), "{error}");

    let s = setup(true);
    let error = error_text(&s.read(json!({ "itemKey": NOT_INDEXED })).await);
    assert!(error.contains("sync Zotero Desktop"), "{error}");
    // A web link: no file is stored anywhere.
    let error = error_text(&s.read(json!({ "itemKey": "EZGBEA9I", "forceFile": true })).await);
    assert!(error.contains("linked_url"), "{error}");
    // A note-only item has no file at all.
    let error = error_text(&s.read(json!({ "itemKey": "CMPQJ7EP" })).await);
    assert!(error.contains("no stored file attachment"), "{error}");
}

#[tokio::test]
async fn outline_and_info_modes() {
    let s = setup(true);
    s.upload(NOT_INDEXED, "paper.pdf", &three_pages());
    let outline = s.read(json!({ "itemKey": NOT_INDEXED, "mode": "outline" })).await;
    assert_eq!(ok(&outline)["outline"], json!([]));
    assert_eq!(text(&outline), "_The PDF of attachment UN79YVS8 has no outline._");

    let before = s.dav_requests().len();
    let info = s.read(json!({ "itemKey": NOT_INDEXED, "mode": "info" })).await;
    let file = &ok(&info)["file"];
    assert_eq!(file["contentType"], "application/pdf");
    assert_eq!(file["parentItem"], "KPDKK5UT");
    assert_eq!(file["onWebDav"], true);
    assert!(text(&info).contains("- on WebDAV: yes"), "{}", text(&info));
    let elsewhere = s.read(json!({ "itemKey": "3AJKNSWV", "mode": "info" })).await;
    assert_eq!(ok(&elsewhere)["file"]["onWebDav"], false);
    // Info downloads nothing: it only asks whether the archive is there.
    assert!(s.dav_requests()[before..].iter().all(|r| r.starts_with("HEAD ")), "{:?}", s.dav_requests());
}

#[tokio::test]
async fn writing_the_index_back_needs_the_write_scope_and_a_whole_pdf_read() {
    let s = setup(true);
    let pdf = three_pages();
    s.upload(NOT_INDEXED, "paper.pdf", &pdf);
    let refused = s.read(json!({ "itemKey": NOT_INDEXED, "writeBackIndex": true })).await;
    assert!(error_text(&refused).contains("zotero:write"));
    assert!(s.dav_requests().is_empty(), "refused before anything was read");

    let written = s.call(Grant::read_write("owner"), json!({ "itemKey": NOT_INDEXED, "writeBackIndex": true })).await;
    assert!(text(&written).contains("written to Zotero's full-text index"), "{}", text(&written));
    let indexed = s.sim.fulltext(LibraryRef::User(DEMO_USER), NOT_INDEXED).expect("the simulator has it now");
    assert!(indexed["content"].as_str().unwrap().contains("Equivariance is the key"), "{indexed}");
    assert_eq!(indexed["totalPages"], 3);
}

#[tokio::test]
async fn an_index_write_whose_answer_is_lost_is_read_back_and_reported_written() {
    let s = setup(true);
    s.upload(NOT_INDEXED, "paper.pdf", &three_pages());
    let put = zotero_sim::FaultMatch {
        method: "PUT".parse().ok(),
        path_contains: Some("/fulltext".into()),
        body_contains: None,
        skip: 0,
    };
    s.sim.fail_matching(1, put, zotero_sim::Fault::LoseAnswer { status: 500 });
    let written = s.call(Grant::read_write("owner"), json!({ "itemKey": NOT_INDEXED, "writeBackIndex": true })).await;
    assert!(text(&written).contains("written to Zotero's full-text index"), "{}", text(&written));
    assert!(s.sim.fulltext(LibraryRef::User(DEMO_USER), NOT_INDEXED).is_some(), "stored once, as the answer says");
}

#[tokio::test]
async fn health_says_whether_webdav_answers_without_echoing_its_address() {
    let health = |app: &App| {
        let request = http::Request::get("https://zotero.example/health").body(Vec::new()).unwrap();
        let app = app.clone();
        async move {
            let reply = send(&app, request).await;
            reply.body["checks"].as_array().unwrap().iter().find(|c| c["name"] == "webdav").cloned().unwrap()
        }
    };
    let s = setup(true);
    let check = health(&s.app).await;
    assert_eq!(check["ok"], true, "{check}");
    assert_eq!(s.dav_requests(), ["PROPFIND /files/zotero/"]);

    // Files forced to WebDAV without a WebDAV server: the check says which settings are missing.
    let unconfigured = bench_with(false, &[("FILE_STORAGE", "webdav")]);
    let check = health(&unconfigured.app).await;
    assert_eq!((check["ok"].clone(), check["required"].clone()), (json!(false), json!(false)));
    assert!(check["fix"].as_str().unwrap().contains("WEBDAV_URL"));
}

#[tokio::test]
async fn the_attachment_resources_read_the_index_and_pages() {
    let s = setup(true);
    s.upload(NOT_INDEXED, "paper.pdf", &three_pages());
    let ctx = Session::new(Grant::read_only("owner"), s.app.config.clone(), s.app.platform.clone());
    let registry = zotero_mcp_server::tools::registry(&s.app.config);
    let (whole, _) = registry.read_resource(&ctx, "zotero://attachment/T6W7H8UE").await.unwrap();
    assert!(!whole[0].text.is_empty(), "the index's text");
    let (pages, _) =
        registry.read_resource(&ctx, &format!("zotero://attachment/{NOT_INDEXED}/pages/2-3")).await.unwrap();
    assert_eq!(pages[0].text, "Side chains pack without rotamers\n\nEquivariance is the key");
    let (one, _) = registry.read_resource(&ctx, &format!("zotero://attachment/{NOT_INDEXED}/pages/1")).await.unwrap();
    assert_eq!(one[0].text, "Residue contacts emerge early");
    let bad = registry.read_resource(&ctx, &format!("zotero://attachment/{NOT_INDEXED}/pages/5-2")).await.unwrap_err();
    assert!(bad.to_string().contains("FROM-TO"), "{bad}");
}

// ---- zotero_delete_attachment ----

impl Setup {
    async fn delete(&self, grant: Grant, arguments: Value) -> Value {
        self.tool("zotero_delete_attachment", grant, arguments).await
    }

    fn has(&self, key: &str) -> bool {
        self.folder.files.borrow().contains_key(&format!("/files/zotero/{key}.zip"))
    }

    fn zotero_writes(&self) -> usize {
        self.sim.requests().iter().filter(|r| r.method != "GET").count()
    }
}

#[tokio::test]
async fn deleting_refuses_read_only_grants_and_anything_but_a_stored_file() {
    let s = setup(true);
    s.upload(NOT_INDEXED, "paper.pdf", &three_pages());
    let refused = s.delete(Grant::read_only("owner"), json!({ "attachmentKey": NOT_INDEXED })).await;
    assert!(error_text(&refused).contains("zotero:write"));
    // A regular item (Q2: the TypeScript server deleted whatever key it was given) and a web link.
    let regular = s.delete(Grant::read_write("owner"), json!({ "attachmentKey": "KPDKK5UT" })).await;
    assert!(error_text(&regular).contains("not an attachment"), "{regular}");
    let link = s.delete(Grant::read_write("owner"), json!({ "attachmentKey": "EZGBEA9I" })).await;
    assert!(error_text(&link).contains("linked_url"), "{link}");
    assert_eq!(s.zotero_writes(), 0);
    assert!(s.has(NOT_INDEXED));
    assert!(s.dav_requests().is_empty());
}

#[tokio::test]
async fn by_default_an_attachment_goes_to_the_trash_and_keeps_its_file() {
    let s = setup(true);
    s.upload(NOT_INDEXED, "paper.pdf", &three_pages());
    let result = s.delete(Grant::read_write("owner"), json!({ "attachmentKey": NOT_INDEXED })).await;
    let out = ok(&result);
    assert_eq!(out["permanent"], false);
    assert_eq!(out["filesRemoved"], Value::Null);
    assert_eq!(s.sim.item(LibraryRef::User(DEMO_USER), NOT_INDEXED).unwrap()["data"]["deleted"], json!(1));
    assert!(s.has(NOT_INDEXED), "the file stays for a restore");
    assert!(text(&result).contains("trash"));
}

#[tokio::test]
async fn a_permanent_delete_removes_the_item_then_its_files() {
    let s = setup(true);
    s.upload(NOT_INDEXED, "paper.pdf", &three_pages());
    s.folder.files.borrow_mut().insert(format!("/files/zotero/{NOT_INDEXED}.prop"), b"<properties/>".to_vec());
    let result = s.delete(Grant::read_write("owner"), json!({ "attachmentKey": NOT_INDEXED, "permanent": true })).await;
    assert_eq!(ok(&result)["filesRemoved"], true);
    assert!(s.sim.item(LibraryRef::User(DEMO_USER), NOT_INDEXED).is_none());
    // Gone from where Zotero Desktop looks, moved aside (under names its orphan purge skips) for the undo journal.
    let mut names: Vec<String> = s.folder.files.borrow().keys().cloned().collect();
    names.sort();
    assert_eq!(names.len(), 2, "{names:?}");
    assert!(names[0].starts_with(&format!("/files/zotero/{NOT_INDEXED}.prop.undo-")), "{names:?}");
    assert!(names[1].starts_with(&format!("/files/zotero/{NOT_INDEXED}.zip.undo-")), "{names:?}");
    assert_eq!(
        s.dav_requests(),
        [format!("MOVE /files/zotero/{NOT_INDEXED}.zip"), format!("MOVE /files/zotero/{NOT_INDEXED}.prop")]
    );
}

#[tokio::test]
async fn when_webdav_fails_after_the_item_is_gone_the_answer_says_so() {
    let s = setup(true);
    s.upload(NOT_INDEXED, "paper.pdf", &three_pages());
    s.folder.failing_deletes.set(true);
    let result = s.delete(Grant::read_write("owner"), json!({ "attachmentKey": NOT_INDEXED, "permanent": true })).await;
    let out = ok(&result);
    assert_eq!(out["filesRemoved"], false);
    assert!(s.sim.item(LibraryRef::User(DEMO_USER), NOT_INDEXED).is_none(), "the item is deleted first");
    let note = out["note"].as_str().unwrap();
    assert!(note.contains("was not removed") && note.contains(&format!("{NOT_INDEXED}.zip")), "{note}");
}
