//! Writing attachment files: `zotero_put_attachment`, `zotero_rename_attachments` and `zotero_annotations`
//! create, against the simulator and the in-memory WebDAV folder (tests/common/dav.rs), with a fault injected
//! at every write step and the outcome checked: nothing half-written that Zotero Desktop would misread, and a
//! message that says what happened.

mod common;

use common::dav::*;
use common::files::*;
use common::*;
use serde_json::{json, Value};
use zotero_mcp_core::testing::pdf_of_pages;
use zotero_mcp_core::webdav::{md5_hex, unpack, FileProps, ZipLimits};
use zotero_mcp_server::auth::Grant;

fn item(s: &Bench, key: &str) -> Option<Value> {
    item_data(&s.sim, key)
}

/// Requests that changed something in Zotero.
fn zotero_writes(s: &Bench) -> usize {
    s.sim.requests().iter().filter(|r| r.method != "GET").count()
}

/// Checks what Zotero Desktop reads: the zip holds the file under the item's name, the .prop matches it, and
/// the item records the same md5/mtime.
fn assert_stored_like_desktop(s: &Bench, key: &str, data: &[u8]) {
    let item = item(s, key).expect("the attachment item exists");
    let zip = s.file(&format!("{key}.zip")).expect("the archive is on WebDAV");
    let stored = unpack(&zip, None, &ZipLimits::default()).unwrap();
    assert_eq!(stored.data, data);
    assert_eq!(stored.filename, item["filename"].as_str().unwrap());
    let prop = String::from_utf8(s.file(&format!("{key}.prop")).expect("the .prop is on WebDAV")).unwrap();
    let props = FileProps::parse(&prop).expect("a .prop Zotero reads");
    assert_eq!(props.md5, md5_hex(data));
    assert_eq!(item["md5"], json!(props.md5));
    assert_eq!(item["mtime"], json!(props.mtime_ms));
    assert_eq!(item["linkMode"], "imported_file");
}

#[tokio::test]
async fn a_pdf_sent_as_base64_becomes_a_child_attachment_zotero_desktop_reads() {
    let s = bench(true);
    let data = pdf();
    let result = s
        .write(
            "zotero_put_attachment",
            json!({ "parentItemKey": PARENT, "base64Data": b64(&data), "filename": "Side chains: a study?.pdf",
                    "tags": [{ "tag": "from-mcp" }] }),
        )
        .await;
    let out = ok(&result).clone();
    let key = out["attachmentKey"].as_str().unwrap().to_owned();
    assert_eq!(out["filename"], "Side chains a study.pdf", "characters Windows cannot store are dropped");
    assert_eq!(out["contentType"], "application/pdf");
    assert_eq!(out["bytes"], data.len());
    assert_eq!(out["md5"], md5_hex(&data));
    assert_eq!(out["recorded"], true);
    assert!(text(&result).contains(&format!("Created attachment {key}")), "{}", text(&result));
    let stored = item(&s, &key).unwrap();
    assert_eq!(stored["parentItem"], PARENT);
    assert_eq!(stored["title"], "Side chains a study.pdf");
    assert_eq!(stored["tags"], json!([{ "tag": "from-mcp" }]));
    assert_stored_like_desktop(&s, &key, &data);
    // And it reads back through the read tool.
    let read =
        s.tool("zotero_read_attachment", Grant::read_only("owner"), json!({ "itemKey": key, "fromPage": 2 })).await;
    assert!(ok(&read)["text"].as_str().unwrap().contains("rotamer library"));
}

#[tokio::test]
async fn a_standalone_attachment_can_go_into_collections_and_a_child_cannot() {
    let s = bench(true);
    let collection = s.sim.collections(LIB)[0]["key"].as_str().unwrap().to_owned();
    let result =
        s.write("zotero_put_attachment", json!({ "base64Data": b64(&pdf()), "collections": [collection] })).await;
    let key = ok(&result)["attachmentKey"].as_str().unwrap().to_owned();
    assert_eq!(item(&s, &key).unwrap()["collections"], json!([collection]));
    assert_eq!(ok(&result)["filename"], "attachment.pdf", "a PDF sent without a name is named for what it is");

    let before = zotero_writes(&s);
    let refused = s
        .write(
            "zotero_put_attachment",
            json!({ "parentItemKey": PARENT, "base64Data": b64(&pdf()), "collections": [collection] }),
        )
        .await;
    assert!(error_text(&refused).contains("cannot be put in collections"), "{}", error_text(&refused));
    assert_eq!(zotero_writes(&s), before);
}

#[tokio::test]
async fn bad_input_is_refused_before_anything_is_written() {
    let s = bench(true);
    let cases = [
        (json!({ "parentItemKey": PARENT }), "sourceUrl or as base64Data"),
        (json!({ "base64Data": b64(&pdf()), "sourceUrl": "https://files.example/a.pdf" }), "not both"),
        (json!({ "base64Data": "%%% not base64 %%%" }), "not valid base64"),
        (json!({ "base64Data": b64(b"plain words") }), "give a filename"),
        (
            json!({ "base64Data": b64(b"plain words"), "contentType": "application/pdf", "filename": "a.pdf" }),
            "not a PDF",
        ),
        (json!({ "base64Data": b64(&pdf()), "contentType": "pdf" }), "not a MIME type"),
        (json!({ "base64Data": b64(&pdf()), "filename": "..." }), "not a usable file name"),
        (json!({ "replaceAttachmentKey": ATTACHMENT, "base64Data": b64(&pdf()), "title": "x" }), "only apply to a new"),
    ];
    for (arguments, expected) in cases {
        let error = error_text(&s.write("zotero_put_attachment", arguments.clone()).await);
        assert!(error.contains(expected), "{arguments}: {error}");
    }
    assert_eq!(zotero_writes(&s), 0);
    assert!(s.dav_requests().iter().all(|r| !r.starts_with("PUT")), "{:?}", s.dav_requests());
}

#[tokio::test]
async fn a_read_only_grant_or_no_webdav_writes_nothing() {
    let s = bench(true);
    let result = s.tool("zotero_put_attachment", Grant::read_only("owner"), json!({ "base64Data": b64(&pdf()) })).await;
    assert!(error_text(&result).contains("zotero:write"));
    // Files forced to WebDAV, which is not configured.
    let unconfigured = bench_with(false, &[("FILE_STORAGE", "webdav")]);
    let result = unconfigured.write("zotero_put_attachment", json!({ "base64Data": b64(&pdf()) })).await;
    assert!(error_text(&result).contains("WEBDAV_URL"));
    assert_eq!(zotero_writes(&s) + zotero_writes(&unconfigured), 0);
    assert!(s.dav_requests().is_empty());
}

#[tokio::test]
async fn replacing_keeps_the_name_and_type_unless_new_ones_are_given() {
    let s = bench(true);
    let before = item(&s, ATTACHMENT).unwrap();
    let data = pdf_of_pages(&["A corrected version of the paper"]);
    let result =
        s.write("zotero_put_attachment", json!({ "replaceAttachmentKey": ATTACHMENT, "base64Data": b64(&data) })).await;
    let out = ok(&result);
    assert_eq!(out["filename"], before["filename"], "Q4: the stored name is kept, not attachment.pdf");
    assert_eq!(out["replaced"], true);
    assert!(text(&result).starts_with(&format!("Replaced the file of attachment {ATTACHMENT}")));
    let after = item(&s, ATTACHMENT).unwrap();
    assert_eq!(after["filename"], before["filename"]);
    assert_eq!(after["contentType"], "application/pdf");
    assert_eq!(after["title"], before["title"]);
    assert_stored_like_desktop(&s, ATTACHMENT, &data);

    let epub = b"PK\x03\x04 pretend epub";
    let result = s
        .write(
            "zotero_put_attachment",
            json!({ "replaceAttachmentKey": ATTACHMENT, "base64Data": b64(epub), "filename": "The book.epub" }),
        )
        .await;
    assert_eq!(ok(&result)["contentType"], "application/epub+zip", "a new name brings its type");
    let after = item(&s, ATTACHMENT).unwrap();
    assert_eq!(after["filename"], "The book.epub");
    assert_eq!(after["contentType"], "application/epub+zip");
    assert_stored_like_desktop(&s, ATTACHMENT, epub);
}

#[tokio::test]
async fn replacing_refuses_what_has_no_stored_file() {
    let s = bench(true);
    for key in [PARENT, "EZGBEA9I"] {
        let result =
            s.write("zotero_put_attachment", json!({ "replaceAttachmentKey": key, "base64Data": b64(&pdf()) })).await;
        let error = error_text(&result);
        assert!(error.contains("nothing was written"), "{key}: {error}");
    }
    assert_eq!(zotero_writes(&s), 0);
}

// ---- faults at every step of a new attachment ----

async fn put_new(s: &Bench) -> Value {
    s.write("zotero_put_attachment", json!({ "parentItemKey": PARENT, "base64Data": b64(&pdf()), "filename": "x.pdf" }))
        .await
}

/// Attachment items under PARENT other than the one the demo library has.
fn new_children(s: &Bench) -> Vec<Value> {
    s.sim
        .items(LIB)
        .into_iter()
        .map(|i| i["data"].clone())
        .filter(|d| d["parentItem"] == PARENT && d["key"] != ATTACHMENT && d["itemType"] == "attachment")
        .collect()
}

#[tokio::test]
async fn when_zotero_refuses_the_item_nothing_is_uploaded() {
    let s = bench(true);
    s.fail("POST", "/items", 400, 1);
    let error = error_text(&put_new(&s).await);
    assert!(error.contains("nothing was written"), "{error}");
    assert!(new_children(&s).is_empty());
    assert!(s.dav_requests().is_empty());
}

#[tokio::test]
async fn when_the_archive_upload_fails_the_new_item_is_removed() {
    let s = bench(true);
    s.fail("PUT", ".zip", 403, 1);
    let error = error_text(&put_new(&s).await);
    assert!(error.contains("Uploading the file's archive"), "{error}");
    assert!(error.contains("Nothing was kept"), "{error}");
    assert!(new_children(&s).is_empty(), "the item was rolled back");
    assert!(s.folder.files.borrow().keys().all(|k| k.contains(ATTACHMENT)), "no stray files");
}

#[tokio::test]
async fn when_the_prop_upload_fails_the_item_and_archive_are_removed() {
    let s = bench(true);
    s.fail("PUT", ".prop", 403, 1);
    let error = error_text(&put_new(&s).await);
    assert!(error.contains("Uploading the file's .prop"), "{error}");
    assert!(error.contains("Nothing was kept"), "{error}");
    assert!(new_children(&s).is_empty());
    assert!(s.folder.files.borrow().is_empty(), "the archive uploaded first was deleted");
}

#[tokio::test]
async fn when_the_rollback_fails_too_the_message_says_how_to_finish() {
    let s = bench(true);
    s.fail("PUT", ".zip", 403, 1);
    s.fail("DELETE", "/items/", 500, 1);
    let error = error_text(&put_new(&s).await);
    let left = new_children(&s);
    assert_eq!(left.len(), 1, "the item could not be removed");
    let key = left[0]["key"].as_str().unwrap();
    // The core says the item is left without its file; the tool names the two calls that finish it.
    assert!(error.contains(&format!("The new attachment item {key} could not be removed")), "{error}");
    assert!(error.contains("zotero_delete_attachment (permanent=true)"), "{error}");
    assert!(error.contains(&format!("zotero_put_attachment with replaceAttachmentKey={key}")), "{error}");
    assert!(left[0]["md5"].is_null(), "no md5: Zotero Desktop reads it as not uploaded yet");
}

#[tokio::test]
async fn when_recording_the_checksum_fails_the_file_is_kept_and_the_result_says_so() {
    let s = bench(true);
    s.fail("PATCH", "/items/", 500, 1);
    let result = put_new(&s).await;
    let out = ok(&result);
    assert_eq!(out["recorded"], false);
    assert!(text(&result).contains("Zotero Desktop will download it"), "{}", text(&result));
    let key = out["attachmentKey"].as_str().unwrap();
    let warning = out["warning"].as_str().unwrap();
    assert!(warning.contains(&format!("zotero_put_attachment with replaceAttachmentKey={key}")), "{warning}");
    assert!(item(&s, key).unwrap()["md5"].is_null());
    assert!(s.file(&format!("{key}.zip")).is_some() && s.file(&format!("{key}.prop")).is_some());
}

#[tokio::test]
async fn a_stale_version_when_recording_is_read_again_and_sent_once_more() {
    let s = bench(true);
    s.fail("PATCH", "/items/", 412, 1);
    let result = put_new(&s).await;
    assert_eq!(ok(&result)["recorded"], true);
    let key = ok(&result)["attachmentKey"].as_str().unwrap();
    assert_stored_like_desktop(&s, key, &pdf());
}

#[tokio::test]
async fn a_replacement_whose_prop_fails_says_to_call_again() {
    let s = bench(true);
    s.upload(ATTACHMENT, "old.pdf", &pdf());
    let before = item(&s, ATTACHMENT).unwrap();
    s.fail("PUT", ".prop", 403, 1);
    let new = pdf_of_pages(&["new"]);
    let args = json!({ "replaceAttachmentKey": ATTACHMENT, "base64Data": b64(&new) });
    let error = error_text(&s.write("zotero_put_attachment", args.clone()).await);
    assert!(error.contains("Call again with the same arguments"), "{error}");
    assert_eq!(item(&s, ATTACHMENT).unwrap()["md5"], before["md5"], "the item still describes the old file");
    ok(&s.write("zotero_put_attachment", args).await);
    assert_stored_like_desktop(&s, ATTACHMENT, &new);
}

// ---- sourceUrl ----

#[tokio::test]
async fn a_file_is_downloaded_from_a_public_url() {
    let s = bench(true);
    let data = pdf();
    s.serve("files.example/papers/Side%20chains.pdf", 200, &[("content-type", "application/pdf")], &data);
    s.serve("files.example/go", 302, &[("location", "/papers/Side%20chains.pdf")], b"");
    let result = s
        .write("zotero_put_attachment", json!({ "parentItemKey": PARENT, "sourceUrl": "https://files.example/go" }))
        .await;
    let out = ok(&result);
    assert_eq!(out["filename"], "Side chains.pdf", "named after the URL it came from");
    let key = out["attachmentKey"].as_str().unwrap();
    assert_eq!(item(&s, key).unwrap()["url"], "https://files.example/go");
    assert_stored_like_desktop(&s, key, &data);
}

#[tokio::test]
async fn private_addresses_plain_http_and_oversized_files_are_refused() {
    let s = bench(true);
    s.serve("files.example/to-metadata", 302, &[("location", "https://169.254.169.254/latest/meta-data")], b"");
    s.serve("files.example/huge.pdf", 200, &[("content-length", "99999999999")], b"");
    let cases = [
        ("http://files.example/a.pdf", "https"),
        ("https://10.1.2.3/a.pdf", "private"),
        ("https://localhost/a.pdf", "localhost"),
        ("http://127.0.0.1:9/a.pdf", "https"),
        ("https://files.example/to-metadata", "169.254.169.254"),
        ("https://files.example/huge.pdf", "41943040"),
        ("https://files.example/missing.pdf", "404"),
    ];
    for (url, expected) in cases {
        let error = error_text(&s.write("zotero_put_attachment", json!({ "sourceUrl": url })).await);
        assert!(error.to_lowercase().contains(&expected.to_lowercase()), "{url}: {error}");
        assert!(error.contains("Nothing was written"), "{url}: {error}");
    }
    assert_eq!(zotero_writes(&s), 0);
    assert!(s.dav_requests().is_empty());
}

// ---- rename ----

#[tokio::test]
async fn renaming_is_a_dry_run_until_applied() {
    let s = bench(true);
    let data = pdf();
    let old = item(&s, ATTACHMENT).unwrap()["filename"].as_str().unwrap().to_owned();
    s.upload(ATTACHMENT, &old, &data);
    let template = r#"{{ firstCreator suffix="_" }}{{ year }}"#;
    let dry = s
        .tool(
            "zotero_rename_attachments",
            Grant::read_only("owner"),
            json!({ "itemKeys": [PARENT], "template": template }),
        )
        .await;
    let planned = ok(&dry)["planned"].clone();
    assert_eq!(
        planned,
        json!([{ "attachmentKey": ATTACHMENT, "from": old, "to": "Marchetti et al._2022.pdf", "status": "planned" }])
    );
    assert!(text(&dry).contains("apply=true"), "{}", text(&dry));
    assert_eq!(zotero_writes(&s), 0);
    assert!(s.dav_requests().is_empty(), "a dry run does not download");

    let refused = s
        .tool(
            "zotero_rename_attachments",
            Grant::read_only("owner"),
            json!({ "itemKeys": [PARENT], "template": template, "apply": true }),
        )
        .await;
    assert!(error_text(&refused).contains("zotero:write"));

    let applied = s
        .write("zotero_rename_attachments", json!({ "itemKeys": [PARENT], "template": template, "apply": true }))
        .await;
    assert_eq!(ok(&applied)["planned"][0]["status"], "renamed", "{}", text(&applied));
    let after = item(&s, ATTACHMENT).unwrap();
    assert_eq!(after["filename"], "Marchetti et al._2022.pdf");
    assert_eq!(after["title"], "Full Text PDF", "a title that was not the file name is kept");
    let zip = s.file(&format!("{ATTACHMENT}.zip")).unwrap();
    let stored = unpack(&zip, None, &ZipLimits::default()).unwrap();
    assert_eq!((stored.filename.as_str(), stored.data), ("Marchetti et al._2022.pdf", data));

    let again = s
        .write("zotero_rename_attachments", json!({ "itemKeys": [ATTACHMENT], "template": template, "apply": true }))
        .await;
    assert_eq!(ok(&again)["planned"][0]["status"], "unchanged", "the attachment itself, named after its parent");
}

#[tokio::test]
async fn renaming_reports_bad_templates_and_unknown_keys() {
    let s = bench(true);
    let bad = s
        .tool(
            "zotero_rename_attachments",
            Grant::read_only("owner"),
            json!({ "itemKeys": [PARENT], "template": "{{ if year }}{{ year }}" }),
        )
        .await;
    assert!(error_text(&bad).contains("Invalid arguments"), "{}", error_text(&bad));
    let none = s.tool("zotero_rename_attachments", Grant::read_only("owner"), json!({})).await;
    assert!(error_text(&none).contains("itemKeys or collectionKey"));
    let unknown =
        s.tool("zotero_rename_attachments", Grant::read_only("owner"), json!({ "itemKeys": ["ZZZZZZZZ"] })).await;
    assert!(ok(&unknown)["planned"][0]["status"].as_str().unwrap().contains("no item"));
}

// ---- annotations ----

#[tokio::test]
async fn a_quoted_passage_becomes_a_highlight_in_the_right_place() {
    let s = bench(true);
    s.upload(ATTACHMENT, "paper.pdf", &pdf());
    let result = s
        .write(
            "zotero_annotations",
            json!({ "action": "create", "itemKey": PARENT, "text": "side chains PACK without", "comment": "key claim",
                    "color": "#5FB236" }),
        )
        .await;
    let created = ok(&result)["created"].clone();
    assert_eq!(created["page"], 2);
    assert_eq!(created["attachmentKey"], ATTACHMENT);
    assert_eq!(created["text"], "Side chains pack without");
    let key = created["annotationKey"].as_str().unwrap();
    let stored = item(&s, key).unwrap();
    assert_eq!(stored["parentItem"], ATTACHMENT);
    assert_eq!(stored["annotationType"], "highlight");
    assert_eq!(stored["annotationColor"], "#5fb236");
    assert_eq!(stored["annotationPageLabel"], "2");
    assert_eq!(stored["annotationComment"], "key claim");
    let position: Value = serde_json::from_str(stored["annotationPosition"].as_str().unwrap()).unwrap();
    assert_eq!(position["pageIndex"], 1);
    assert_eq!(position["rects"].as_array().unwrap().len(), 1);
    assert!(stored["annotationSortIndex"].as_str().unwrap().starts_with("00001|000000|"));
    // It lists like any other annotation.
    let list = s.tool("zotero_annotations", Grant::read_only("owner"), json!({ "itemKey": PARENT })).await;
    assert!(ok(&list)["annotations"].as_array().unwrap().iter().any(|a| a["key"] == key));
}

#[tokio::test]
async fn annotations_that_cannot_be_placed_are_not_written() {
    let s = bench(true);
    s.upload(ATTACHMENT, "paper.pdf", &pdf());
    let cases = [
        (json!({ "action": "create", "itemKey": PARENT, "text": "words that are nowhere in it" }), "not found"),
        (
            json!({ "action": "create", "itemKey": PARENT, "text": "words that are nowhere in it" }),
            "as the page's text has it, at least a few words (read the page with zotero_read_attachment); nothing \
             was written",
        ),
        (json!({ "action": "create", "itemKey": PARENT, "text": "Residue contacts", "page": 2 }), "on page 2"),
        (json!({ "action": "create", "itemKey": PARENT, "type": "note", "comment": "x" }), "needs `page`"),
        (json!({ "action": "create", "itemKey": PARENT, "type": "note", "page": 9 }), "out of range"),
        (json!({ "action": "create", "itemKey": PARENT }), "needs `text`"),
        (
            json!({ "action": "create", "itemKey": PARENT, "text": "Residue", "color": "yellow" }),
            "`color` must match the pattern ^#[0-9a-fA-F]{6}$",
        ),
    ];
    for (arguments, expected) in cases {
        let error = error_text(&s.write("zotero_annotations", arguments.clone()).await);
        assert!(error.contains(expected), "{arguments}: {error}");
    }
    assert_eq!(zotero_writes(&s), 0);
    let read_only = s
        .tool(
            "zotero_annotations",
            Grant::read_only("owner"),
            json!({ "action": "create", "itemKey": PARENT, "text": "Residue contacts" }),
        )
        .await;
    assert!(error_text(&read_only).contains("zotero:write"));
}

#[tokio::test]
async fn a_note_goes_on_the_page_asked_for() {
    let s = bench(true);
    s.upload(ATTACHMENT, "paper.pdf", &pdf());
    let result = s
        .write(
            "zotero_annotations",
            json!({ "action": "create", "itemKey": ATTACHMENT, "type": "note", "page": 2, "comment": "Check the methods" }),
        )
        .await;
    let key = ok(&result)["created"]["annotationKey"].as_str().unwrap().to_owned();
    let stored = item(&s, &key).unwrap();
    assert_eq!(stored["annotationType"], "note");
    assert_eq!(stored["annotationComment"], "Check the methods");
    assert!(stored["annotationSortIndex"].as_str().unwrap().starts_with("00001|"));
}

#[tokio::test]
async fn a_large_rename_is_done_a_few_files_per_call_and_continued_by_calling_again() {
    let s = bench(true);
    s.upload(ATTACHMENT, "old.pdf", &pdf());
    for n in 0..6 {
        let put = s
            .write(
                "zotero_put_attachment",
                json!({ "parentItemKey": PARENT, "base64Data": b64(&pdf()), "filename": format!("copy {n}.pdf") }),
            )
            .await;
        ok(&put);
    }
    let args = json!({ "itemKeys": [PARENT], "template": "{{ year }}", "apply": true });
    let first = s.write("zotero_rename_attachments", args.clone()).await;
    let statuses: Vec<String> =
        ok(&first)["planned"].as_array().unwrap().iter().map(|p| p["status"].as_str().unwrap().to_owned()).collect();
    assert_eq!(statuses.len(), 7);
    assert_eq!(statuses.iter().filter(|s| *s == "renamed").count(), 5, "{statuses:?}");
    assert_eq!(statuses.iter().filter(|s| *s == "deferred").count(), 2, "{statuses:?}");
    assert!(text(&first).contains("call again"), "{}", text(&first));
    let second = s.write("zotero_rename_attachments", args).await;
    let statuses: Vec<&str> =
        ok(&second)["planned"].as_array().unwrap().iter().map(|p| p["status"].as_str().unwrap()).collect();
    assert_eq!(statuses.iter().filter(|s| **s == "renamed").count(), 2, "{statuses:?}");
    assert_eq!(statuses.iter().filter(|s| **s == "unchanged").count(), 5, "{statuses:?}");
    assert!(new_children(&s).iter().all(|c| c["filename"] == "2022.pdf"));
}

#[test]
fn the_largest_base64_file_fits_in_a_request() {
    // Its text, a third larger, plus room for the rest of a tools/call message, within the 4 MiB body (and stdio
    // line): a limit the transport refuses first would never be reached.
    let encoded = zotero_mcp_server::tools::put_attachment::MAX_BASE64_BYTES.div_ceil(3) * 4;
    assert!(encoded + 64 * 1024 <= zotero_mcp_server::router::body_limit("/mcp"), "{encoded} bytes of base64");
}
