//! Writing attachment files on Zotero Storage: `zotero_put_attachment` (new, replaced, from base64 and from a
//! URL), `zotero_rename_attachments`, `zotero_delete_attachment`, `zotero_import_reference` with an open-access
//! PDF and a highlight on a stored PDF, against the simulator's file API (authorization, upload to its storage
//! origin, registration), with a fault injected at every step and what the library holds afterwards checked.

mod common;

use common::dav::*;
use common::files::*;
use common::*;
use serde_json::{json, Value};
use zotero_mcp_core::testing::pdf_of_pages;
use zotero_mcp_core::webdav::md5_hex;
use zotero_sim::{Fault, FaultMatch};

fn item(s: &Bench, key: &str) -> Option<Value> {
    item_data(&s.sim, key)
}

fn item_count(s: &Bench) -> usize {
    s.sim.items(LIB).len()
}

/// What Zotero Desktop reads after a sync: the stored bytes, and the item recording their md5 and name.
fn assert_stored_like_desktop(s: &Bench, key: &str, data: &[u8], filename: &str) {
    let item = item(s, key).expect("the attachment item exists");
    assert_eq!(s.sim.stored_file(LIB, key).as_deref(), Some(data), "the bytes on Zotero Storage");
    assert_eq!(item["md5"], json!(md5_hex(data)));
    assert!(item["mtime"].as_u64().is_some_and(|m| m > 0), "{item}");
    assert_eq!(item["filename"], filename);
    assert_eq!(item["linkMode"], "imported_file");
}

/// The API's requests to an item's file endpoint.
fn file_requests(s: &Bench) -> usize {
    s.sim.requests().iter().filter(|r| r.path.ends_with("/file")).count()
}

fn fault_on(method: &str, path: &str, body: Option<&str>) -> FaultMatch {
    FaultMatch {
        method: Some(method.parse().unwrap()),
        path_contains: Some(path.into()),
        body_contains: body.map(str::to_owned),
        skip: 0,
    }
}

#[tokio::test]
async fn a_pdf_sent_as_base64_is_stored_on_zotero_storage_and_reads_back() {
    let s = bench(false);
    let data = pdf();
    let result = s
        .write(
            "zotero_put_attachment",
            json!({ "parentItemKey": PARENT, "base64Data": b64(&data), "filename": "Contacts.pdf" }),
        )
        .await;
    let out = ok(&result);
    let key = out["attachmentKey"].as_str().unwrap().to_owned();
    assert_eq!(out["storedIn"], "Zotero Storage");
    assert_eq!(out["recorded"], true);
    assert_eq!(out["md5"], md5_hex(&data));
    assert!(text(&result).contains("The file is on Zotero Storage"), "{}", text(&result));
    assert_stored_like_desktop(&s, &key, &data, "Contacts.pdf");
    assert_eq!(item(&s, &key).unwrap()["parentItem"], PARENT);
    assert_key_stayed_with_the_api(&s.sim);

    let read = s.tool(
        "zotero_read_attachment",
        zotero_mcp_server::auth::Grant::read_only("owner"),
        json!({
            "itemKey": key, "fromPage": 2, "toPage": 2
        }),
    );
    let read = read.await;
    assert_eq!(ok(&read)["source"], "zotero-storage");
    assert!(ok(&read)["text"].as_str().unwrap().contains("Side chains pack"), "{read}");
}

#[tokio::test]
async fn an_html_page_is_stored_zipped_as_desktop_stores_snapshots() {
    let s = bench(false);
    let page = b"<html><body><p>A saved page about protein folding</p></body></html>";
    let result = s
        .write(
            "zotero_put_attachment",
            json!({ "parentItemKey": PARENT, "base64Data": b64(page), "filename": "page.html" }),
        )
        .await;
    let key = ok(&result)["attachmentKey"].as_str().unwrap().to_owned();
    let stored = s.sim.stored_file(LIB, &key).expect("stored");
    assert!(stored.starts_with(b"PK"), "a text/html file goes up zipped");
    assert_eq!(item(&s, &key).unwrap()["md5"], json!(md5_hex(page)), "the item's md5 is the page's, not the zip's");
    let read = s
        .tool(
            "zotero_read_attachment",
            zotero_mcp_server::auth::Grant::read_only("owner"),
            json!({ "itemKey": key, "forceFile": true }),
        )
        .await;
    assert!(ok(&read)["text"].as_str().unwrap().contains("protein folding"), "{read}");
}

#[tokio::test]
async fn a_replacement_names_the_file_it_replaces_and_a_new_name_and_type_reach_the_item() {
    let s = bench(false);
    let old = pdf();
    let old_md5 = s.sim.store_file(LIB, ATTACHMENT, "paper.pdf", &old);
    let new = pdf_of_pages(&["A corrected version of the paper"]);
    let result = s
        .write(
            "zotero_put_attachment",
            json!({ "replaceAttachmentKey": ATTACHMENT, "base64Data": b64(&new), "filename": "Corrected.pdf" }),
        )
        .await;
    let out = ok(&result);
    assert_eq!(out["replaced"], true);
    assert_eq!(out["recorded"], true, "{out}");
    assert_stored_like_desktop(&s, ATTACHMENT, &new, "Corrected.pdf");
    let authorization = s
        .sim
        .requests()
        .into_iter()
        .find(|r| r.path.ends_with("/file") && r.method == "POST")
        .expect("an upload authorization");
    assert_eq!(authorization.header("if-match"), Some(old_md5.as_str()), "the precondition names the old file");

    // A text file over a PDF: the content type follows the new name.
    let notes = b"Plain notes about the paper";
    let result = s
        .write(
            "zotero_put_attachment",
            json!({ "replaceAttachmentKey": ATTACHMENT, "base64Data": b64(notes), "filename": "notes.txt" }),
        )
        .await;
    assert_eq!(ok(&result)["contentType"], "text/plain");
    assert_eq!(item(&s, ATTACHMENT).unwrap()["contentType"], "text/plain");
    assert_eq!(item(&s, ATTACHMENT).unwrap()["md5"], json!(md5_hex(notes)));
}

#[tokio::test]
async fn a_file_changed_meanwhile_is_not_overwritten() {
    let s = bench(false);
    let old = pdf();
    s.sim.store_file(LIB, ATTACHMENT, "paper.pdf", &old);
    // Zotero answers 412 to the authorization: another client stored a different file since it was read.
    s.sim.fail_matching(1, fault_on("POST", "/file", Some("md5=")), Fault::Status { status: 412 });
    let result = s
        .write(
            "zotero_put_attachment",
            json!({ "replaceAttachmentKey": ATTACHMENT, "base64Data": b64(&pdf_of_pages(&["x"])) }),
        )
        .await;
    let error = error_text(&result);
    assert!(error.contains("Nothing was changed") && error.contains("changed since it was read"), "{error}");
    assert_eq!(s.sim.stored_file(LIB, ATTACHMENT).as_deref(), Some(old.as_slice()));
    assert_eq!(item(&s, ATTACHMENT).unwrap()["md5"], json!(md5_hex(&old)));
}

/// The registration reaches Zotero and is applied, then the connection drops before its answer: the call cannot
/// know whether the file was replaced, and says so (never "nothing was changed"), with how to find out.
#[tokio::test]
async fn a_replacement_whose_registration_answer_is_lost_is_reported_as_unknown() {
    let s = bench(false);
    let old = pdf();
    let old_md5 = s.sim.store_file(LIB, ATTACHMENT, "paper.pdf", &old);
    let new = pdf_of_pages(&["A corrected version of the paper"]);
    s.sim.fail_matching(1, fault_on("POST", "/file", Some("upload=")), Fault::DropAnswer);
    let result =
        s.write("zotero_put_attachment", json!({ "replaceAttachmentKey": ATTACHMENT, "base64Data": b64(&new) })).await;
    let error = error_text(&result);
    assert!(!error.contains("Nothing was changed"), "{error}");
    assert!(error.contains("Whether the file was replaced is unknown"), "{error}");
    assert!(error.contains(&md5_hex(&new)) && error.contains(&old_md5), "both md5s, to tell which: {error}");
    // It was applied: the check the message describes finds the new file.
    assert_eq!(s.sim.stored_file(LIB, ATTACHMENT).as_deref(), Some(new.as_slice()));
    assert_eq!(item(&s, ATTACHMENT).unwrap()["md5"], json!(md5_hex(&new)));
}

/// Every step of a new attachment's upload failing in turn: the item made for it is removed, nothing is left
/// on storage that the library refers to, and the message says so.
#[tokio::test]
async fn a_failure_at_any_upload_step_leaves_no_attachment_behind() {
    let steps: [(&str, FaultMatch); 3] = [
        ("authorization", fault_on("POST", "/file", Some("md5="))),
        ("upload", fault_on("POST", "/zotero-storage", None)),
        ("registration", fault_on("POST", "/file", Some("upload="))),
    ];
    for (step, matcher) in steps {
        let s = bench(false);
        let before = item_count(&s);
        s.sim.fail_matching(1, matcher, Fault::Status { status: 500 });
        let result =
            s.write("zotero_put_attachment", json!({ "parentItemKey": PARENT, "base64Data": b64(&pdf()) })).await;
        let error = error_text(&result);
        assert!(error.contains("Storing the file on Zotero Storage failed"), "{step}: {error}");
        assert!(error.contains("the new attachment item and any part of its file were removed"), "{step}: {error}");
        assert_eq!(item_count(&s), before, "{step}: the new item was removed");
        assert_eq!(s.sim.storage_usage_bytes(LIB), 0, "{step}: no stored file counts against the quota");
    }
}

/// A group whose File Editing is "none": Zotero refuses the upload with 403, after the attachment item was
/// created. The item is removed again (Zotero Desktop would show it as a file never uploaded), and the message
/// names the group's setting, not the key's rights.
#[tokio::test]
async fn a_group_without_file_editing_refuses_the_file_and_keeps_no_attachment_item() {
    use zotero_sim::demo_groups::{LAB_GROUP, LAB_PAPER};
    let s = bench(false);
    s.sim.add_demo_groups(DEMO_KEY);
    s.sim.set_group_file_editing(LAB_GROUP, false);
    let lab = zotero_sim::LibraryRef::Group(LAB_GROUP);
    let (before, usage) = (s.sim.items(lab).len(), s.sim.storage_usage_bytes(lab));
    let put =
        json!({ "parentItemKey": LAB_PAPER, "base64Data": b64(&pdf()), "library": format!("groups/{LAB_GROUP}") });
    let result = s.write("zotero_put_attachment", put).await;
    let error = error_text(&result);
    assert!(error.contains("You do not have file editing access") && error.contains("File Editing"), "{error}");
    assert!(!error.contains("Allow write access"), "the key's rights are not the cause: {error}");
    assert!(error.contains("the new attachment item and any part of its file were removed"), "{error}");
    assert_eq!(s.sim.items(lab).len(), before, "no attachment item without a file is left in the group");
    assert_eq!(s.sim.storage_usage_bytes(lab), usage, "nothing stored");
}

/// A full upload queue is Zotero's "Too many queued uploads" with `Retry-After`, as a 429, a 400 or a 503 (413 is
/// the quota only): each said as the queue, with when to try again, not as a rate limit or a bad request; the new
/// item is removed again.
#[tokio::test]
async fn a_full_upload_queue_says_when_to_try_again_and_keeps_no_attachment_item() {
    let s = bench(false);
    s.sim.set_upload_queue_limit(Some(0));
    let before = item_count(&s);
    for status in ["429", "400", "503"] {
        let arguments = json!({ "parentItemKey": PARENT, "base64Data": b64(&pdf()) });
        let result = s.write("zotero_put_attachment", arguments).await;
        let error = error_text(&result);
        assert!(
            error.contains("too many uploads of this account waiting") && error.contains("300 seconds"),
            "{status}: {error}"
        );
        assert!(error.contains("the new attachment item and any part of its file were removed"), "{status}: {error}");
        assert_eq!(item_count(&s), before, "{status}");
    }
    // The simulator answers a full queue with 429, 400 and 503 in turn: one of each was met.
    assert_eq!(s.sim.upload_queue_refusals(), 3);
}

#[tokio::test]
async fn over_quota_says_how_full_and_what_to_do() {
    let s = bench(false);
    s.sim.set_storage_quota_mb(LIB, 1);
    let before = item_count(&s);
    // 1.2 MB: Zotero counts in tenths of a megabyte.
    let mut large = pdf();
    large.resize(1_200_000, b' ');
    let result = s.write("zotero_put_attachment", json!({ "parentItemKey": PARENT, "base64Data": b64(&large) })).await;
    let error = error_text(&result);
    assert!(
        error.contains("does not fit on Zotero Storage") && error.contains("zotero.org/settings/storage"),
        "{error}"
    );
    assert!(error.contains("quota are used"), "{error}");
    assert_eq!(item_count(&s), before);
}

#[tokio::test]
async fn a_rename_changes_the_item_only_and_uploads_nothing() {
    let s = bench(false);
    let data = pdf();
    s.sim.store_file(LIB, ATTACHMENT, "paper.pdf", &data);
    let before = item(&s, ATTACHMENT).unwrap();

    let plan = s.write("zotero_rename_attachments", json!({ "itemKeys": [PARENT] })).await;
    let planned = &ok(&plan)["planned"][0];
    assert_eq!(planned["status"], "planned");
    let to = planned["to"].as_str().unwrap().to_owned();
    assert_eq!(item(&s, ATTACHMENT).unwrap()["filename"], "paper.pdf", "a dry run changes nothing");

    let applied = s.write("zotero_rename_attachments", json!({ "itemKeys": [PARENT], "apply": true })).await;
    assert_eq!(ok(&applied)["planned"][0]["status"], "renamed", "{applied}");
    let after = item(&s, ATTACHMENT).unwrap();
    assert_eq!(after["filename"], json!(to));
    assert_eq!(after["md5"], before["md5"], "the stored bytes are the same");
    assert!(s.sim.storage_requests().is_empty(), "nothing was downloaded or uploaded");
    assert_eq!(file_requests(&s), 0);
    assert_eq!(s.sim.stored_file(LIB, ATTACHMENT).as_deref(), Some(data.as_slice()));
}

#[tokio::test]
async fn an_attachment_without_its_file_is_not_renamed_as_though_it_had_one() {
    // The attachment item exists, but no file was ever registered for it (an upload cut off after its first step).
    let s = bench(false);
    let empty = s.sim.insert_item(
        LIB,
        json!({ "itemType": "attachment", "linkMode": "imported_file", "title": "cut.pdf", "filename": "cut.pdf",
                "contentType": "application/pdf", "parentItem": PARENT }),
    );
    let applied = s
        .write(
            "zotero_rename_attachments",
            json!({ "itemKeys": [empty], "template": "renamed {{ title }}", "apply": true }),
        )
        .await;
    let said = serde_json::to_string(&applied).unwrap();
    assert!(said.contains("has no stored file"), "{said}");
    assert_eq!(item(&s, &empty).unwrap()["filename"], "cut.pdf", "nothing renamed");
}

#[tokio::test]
async fn deleting_for_good_removes_the_file_with_the_item() {
    let s = bench(false);
    s.sim.store_file(LIB, ATTACHMENT, "paper.pdf", &pdf());
    assert!(s.sim.storage_usage_bytes(LIB) > 0);
    let trashed = s.write("zotero_delete_attachment", json!({ "attachmentKey": ATTACHMENT })).await;
    assert!(ok(&trashed)["note"].as_str().unwrap().contains("stays where it is stored"), "{trashed}");
    assert!(s.sim.stored_file(LIB, ATTACHMENT).is_some(), "the trash keeps the file");

    let deleted = s.write("zotero_delete_attachment", json!({ "attachmentKey": ATTACHMENT, "permanent": true })).await;
    let out = ok(&deleted);
    assert_eq!(out["filesRemoved"], true);
    assert!(out["note"].as_str().unwrap().contains("with its file on Zotero Storage"), "{out}");
    assert!(item(&s, ATTACHMENT).is_none());
    assert_eq!(s.sim.stored_file(LIB, ATTACHMENT), None);
    assert_eq!(s.sim.storage_usage_bytes(LIB), 0);
}

#[tokio::test]
async fn an_imported_reference_gets_its_open_access_pdf_on_zotero_storage() {
    let s = bench(false);
    let pdf = s.serve_plos();
    let result = s.write("zotero_import_reference", json!({ "identifier": PLOS_DOI })).await;
    let out = ok(&result);
    let key = out["attachmentKey"].as_str().unwrap_or_else(|| panic!("no PDF attached: {out}")).to_owned();
    assert_eq!(s.sim.stored_file(LIB, &key).as_deref(), Some(pdf.as_slice()));
    assert_eq!(item(&s, &key).unwrap()["md5"], json!(md5_hex(&pdf)));
    assert_key_stayed_with_the_api(&s.sim);
}

#[tokio::test]
async fn a_highlight_is_placed_on_a_pdf_read_from_zotero_storage() {
    let s = bench(false);
    s.sim.store_file(LIB, ATTACHMENT, "paper.pdf", &pdf());
    let result = s
        .write(
            "zotero_annotations",
            json!({ "action": "create", "itemKey": ATTACHMENT, "text": "Side chains pack without any rotamer library" }),
        )
        .await;
    let created = &ok(&result)["created"];
    assert_eq!(created["page"], 2, "{result}");
    assert_eq!(created["attachmentKey"], ATTACHMENT);
    assert_key_stayed_with_the_api(&s.sim);
}

/// The new attachment's key, given the library's item keys before the call.
fn new_key(s: &Bench, before: &[String]) -> Option<String> {
    item_keys(s).into_iter().find(|k| !before.contains(k))
}

fn item_keys(s: &Bench) -> Vec<String> {
    s.sim.items(LIB).iter().filter_map(|i| i["key"].as_str().map(str::to_owned)).collect()
}

/// Zotero refuses the registration (its rate limit with `Retry-After` or a 503 on every attempt the retry
/// bound allows, a 403 when file writing was taken away meanwhile): the file is not recorded, so the old one is
/// still the attachment's, and a new attachment's item is removed again. The message says so, and when to try
/// again.
#[tokio::test]
async fn a_registration_refused_keeps_the_old_file_and_says_when_to_try_again() {
    // Five: the first attempt and the four retries of the bound (`RetryPolicy::max_retries`).
    let refusals = [
        (Fault::TooManyRequests { retry_after: Some(30) }, 5, "Try again in 30 seconds"),
        (Fault::ServiceUnavailable { retry_after: None }, 5, "Try again in 60 seconds"),
        (Fault::Status { status: 403 }, 1, "may not store files in this library (403"),
    ];
    for (fault, times, said) in refusals {
        let s = bench(false);
        let old = pdf();
        s.sim.store_file(LIB, ATTACHMENT, "paper.pdf", &old);
        s.sim.fail_matching(times, fault_on("POST", "/file", Some("upload=")), fault.clone());
        let new = pdf_of_pages(&["A corrected version"]);
        let result = s
            .write("zotero_put_attachment", json!({ "replaceAttachmentKey": ATTACHMENT, "base64Data": b64(&new) }))
            .await;
        let error = error_text(&result);
        assert!(error.contains(said), "{fault:?}: {error}");
        assert!(error.contains("Nothing was changed: the previous file is still the one stored"), "{fault:?}: {error}");
        assert_eq!(s.sim.stored_file(LIB, ATTACHMENT).as_deref(), Some(old.as_slice()), "{fault:?}");
        assert_eq!(item(&s, ATTACHMENT).unwrap()["md5"], json!(md5_hex(&old)), "{fault:?}");

        // The same bytes: they reached the bucket above but were never registered, so they are uploaded again.
        let before = item_count(&s);
        s.sim.fail_matching(times, fault_on("POST", "/file", Some("upload=")), fault.clone());
        let result =
            s.write("zotero_put_attachment", json!({ "parentItemKey": PARENT, "base64Data": b64(&new) })).await;
        let error = error_text(&result);
        assert!(error.contains(said), "{fault:?}: {error}");
        assert!(error.contains("the new attachment item and any part of its file were removed"), "{fault:?}: {error}");
        assert_eq!(item_count(&s), before, "{fault:?}");
    }
}

/// One rule for every Zotero step safe to repeat: the authorization and the registration, under their
/// precondition, are sent again after a 429 or 503 as item writes are, and the upload completes (a full queue's
/// wait, 300 s, is past the bound: `a_full_upload_queue_says_when_to_try_again_and_keeps_no_attachment_item`).
#[tokio::test]
async fn an_authorization_or_registration_refused_once_for_a_while_is_sent_again_and_the_file_stored() {
    for (body, fault) in [
        (Some("md5="), Fault::ServiceUnavailable { retry_after: Some(2) }),
        (Some("upload="), Fault::TooManyRequests { retry_after: Some(2) }),
        (None, Fault::ServiceUnavailable { retry_after: None }),
    ] {
        let s = bench(false);
        let old = pdf();
        s.sim.store_file(LIB, ATTACHMENT, "paper.pdf", &old);
        s.sim.fail_matching(1, fault_on("POST", "/file", body), fault.clone());
        let new = pdf_of_pages(&["A corrected version"]);
        let result = s
            .write("zotero_put_attachment", json!({ "replaceAttachmentKey": ATTACHMENT, "base64Data": b64(&new) }))
            .await;
        assert_eq!(ok(&result)["replaced"], true, "{fault:?}: {result}");
        assert_eq!(s.sim.stored_file(LIB, ATTACHMENT).as_deref(), Some(new.as_slice()), "{fault:?}");

        let before = item_count(&s);
        s.sim.fail_matching(1, fault_on("POST", "/file", body), fault.clone());
        let result =
            s.write("zotero_put_attachment", json!({ "parentItemKey": PARENT, "base64Data": b64(&old) })).await;
        let key = ok(&result)["attachmentKey"].as_str().map(str::to_owned).unwrap_or_else(|| panic!("{result}"));
        assert_stored_like_desktop(&s, &key, &old, "attachment.pdf");
        assert_eq!(item_count(&s), before + 1, "{fault:?}");
    }
}

/// Zotero records a file at the authorization itself when it already holds the bytes (`{"exists": 1}`), so an
/// authorization whose answer is lost may have replaced the file: that is said as unknown, with how to tell,
/// never as "nothing was changed".
#[tokio::test]
async fn a_replacement_whose_authorization_answer_is_lost_is_reported_as_unknown() {
    let s = bench(false);
    let new = pdf_of_pages(&["The same PDF, already in another item"]);
    let elsewhere = s.write("zotero_put_attachment", json!({ "parentItemKey": PARENT, "base64Data": b64(&new) })).await;
    ok(&elsewhere);
    let old = pdf();
    let old_md5 = s.sim.store_file(LIB, ATTACHMENT, "paper.pdf", &old);
    let authorization = fault_on("POST", &format!("/items/{ATTACHMENT}/file"), Some("md5="));
    s.sim.fail_matching(1, authorization, Fault::DropAnswer);
    let result =
        s.write("zotero_put_attachment", json!({ "replaceAttachmentKey": ATTACHMENT, "base64Data": b64(&new) })).await;
    let error = error_text(&result);
    assert!(!error.contains("Nothing was changed"), "{error}");
    assert!(error.contains("upload authorization") && error.contains("answer was lost"), "{error}");
    assert!(error.contains("Whether the file was replaced is unknown"), "{error}");
    assert!(error.contains(&md5_hex(&new)) && error.contains(&old_md5), "both md5s, to tell which: {error}");
    assert!(error.contains(&format!("itemKey={ATTACHMENT}")), "the read that tells: {error}");
    // Zotero did record it: the check the message describes finds the new file.
    assert_eq!(item(&s, ATTACHMENT).unwrap()["md5"], json!(md5_hex(&new)));
    assert_eq!(s.sim.stored_file(LIB, ATTACHMENT).as_deref(), Some(new.as_slice()));
}

/// A new attachment whose file upload loses an answer at a step that may have recorded the file: the item made
/// by the call is read back. Recorded: the attachment is complete and the call says so (not "removed", not an
/// item left "without a file"). Not recorded: it is removed as after any failure.
#[tokio::test]
async fn a_new_attachment_whose_answer_is_lost_is_read_back_and_reported_as_it_is() {
    // The registration applied, its answer lost.
    let s = bench(false);
    let data = pdf();
    s.sim.fail_matching(1, fault_on("POST", "/file", Some("upload=")), Fault::DropAnswer);
    let result = s
        .write(
            "zotero_put_attachment",
            json!({ "parentItemKey": PARENT, "base64Data": b64(&data), "filename": "Contacts.pdf" }),
        )
        .await;
    let out = ok(&result);
    assert_eq!(out["recorded"], true, "{out}");
    let key = out["attachmentKey"].as_str().unwrap().to_owned();
    assert_stored_like_desktop(&s, &key, &data, "Contacts.pdf");

    // The authorization of bytes Zotero already holds, applied, its answer lost.
    let s = bench(false);
    let first = s
        .write(
            "zotero_put_attachment",
            json!({ "parentItemKey": PARENT, "base64Data": b64(&data), "filename": "Contacts.pdf" }),
        )
        .await;
    ok(&first);
    s.sim.fail_matching(1, fault_on("POST", "/file", Some("md5=")), Fault::DropAnswer);
    let result = s
        .write(
            "zotero_put_attachment",
            json!({ "parentItemKey": PARENT, "base64Data": b64(&data), "filename": "Contacts.pdf" }),
        )
        .await;
    let key = ok(&result)["attachmentKey"].as_str().unwrap().to_owned();
    assert_stored_like_desktop(&s, &key, &data, "Contacts.pdf");

    // The authorization of new bytes, its answer lost: nothing was recorded, and the item is removed.
    let s = bench(false);
    let before = item_count(&s);
    s.sim.fail_matching(1, fault_on("POST", "/file", Some("md5=")), Fault::DropAnswer);
    let result = s
        .write(
            "zotero_put_attachment",
            json!({ "parentItemKey": PARENT, "base64Data": b64(&data), "filename": "Contacts.pdf" }),
        )
        .await;
    let error = error_text(&result);
    assert!(error.contains("answer was lost") && error.contains("had no file"), "{error}");
    assert!(error.contains("the new attachment item and any part of its file were removed"), "{error}");
    assert_eq!(item_count(&s), before);
}

/// The upload to the storage origin goes through and its answer is lost (or it fails outright): the file was
/// never registered, so the item keeps its old file, and Zotero never refers to the uploaded bytes.
#[tokio::test]
async fn an_upload_to_storage_that_fails_or_loses_its_answer_changes_nothing() {
    for fault in [Fault::DropAnswer, Fault::Status { status: 403 }] {
        let s = bench(false);
        let old = pdf();
        s.sim.store_file(LIB, ATTACHMENT, "paper.pdf", &old);
        s.sim.fail_matching(1, fault_on("POST", "/zotero-storage", None), fault.clone());
        let new = pdf_of_pages(&["A corrected version"]);
        let result = s
            .write("zotero_put_attachment", json!({ "replaceAttachmentKey": ATTACHMENT, "base64Data": b64(&new) }))
            .await;
        let error = error_text(&result);
        assert!(error.contains("Nothing was changed: the previous file is still the one stored"), "{fault:?}: {error}");
        assert!(!s.sim.requests().iter().any(|r| String::from_utf8_lossy(&r.body).contains("upload=")), "{fault:?}");
        assert_eq!(s.sim.stored_file(LIB, ATTACHMENT).as_deref(), Some(old.as_slice()), "{fault:?}");
        assert_eq!(item(&s, ATTACHMENT).unwrap()["md5"], json!(md5_hex(&old)), "{fault:?}");
    }
}

/// The file is replaced and registered (with its new name), then the `PATCH` of its new content type fails: the
/// call succeeds with `recorded: false` and says exactly what the item lacks and the call that records it.
#[tokio::test]
async fn a_new_type_not_recorded_after_the_file_is_replaced_is_said_with_how_to_finish() {
    let s = bench(false);
    s.sim.store_file(LIB, ATTACHMENT, "paper.pdf", &pdf());
    assert_eq!(item(&s, ATTACHMENT).unwrap()["contentType"], "application/pdf");
    s.sim.fail_matching(1, fault_on("PATCH", &format!("/items/{ATTACHMENT}"), None), Fault::Status { status: 500 });
    let notes = b"Plain notes about the paper";
    let result = s
        .write(
            "zotero_put_attachment",
            json!({ "replaceAttachmentKey": ATTACHMENT, "base64Data": b64(notes), "filename": "notes.txt" }),
        )
        .await;
    let out = ok(&result);
    assert_eq!((out["replaced"].clone(), out["recorded"].clone()), (json!(true), json!(false)), "{out}");
    let warning = out["warning"].as_str().unwrap();
    assert!(warning.contains("The file was replaced"), "{warning}");
    assert!(warning.contains("content type is still application/pdf, not text/plain"), "{warning}");
    assert!(!warning.contains("file name") || warning.contains("file name notes.txt"), "{warning}");
    assert!(warning.contains(&format!("replaceAttachmentKey={ATTACHMENT}, the same file and contentType=text/plain")));
    assert!(text(&result).contains("content type is still application/pdf"), "{}", text(&result));
    // What the warning says is what the library holds (the text file stored zipped, as Desktop stores `text/*`).
    let after = item(&s, ATTACHMENT).unwrap();
    assert_eq!(after["md5"], json!(md5_hex(notes)));
    assert_eq!(after["filename"], "notes.txt");
    assert_eq!(after["contentType"], "application/pdf");
}

/// A new attachment's upload fails and removing the item made for it fails too: the caller is told the leftover
/// item's key, that it has no file, and the two calls that finish.
#[tokio::test]
async fn a_new_attachment_that_cannot_be_removed_after_a_failure_is_named() {
    let s = bench(false);
    let before = item_keys(&s);
    // A refusal (a 5xx may come after the registration was acted on: that one is checked, not taken as a "no").
    s.sim.fail_matching(1, fault_on("POST", "/file", Some("upload=")), Fault::Status { status: 403 });
    s.sim.fail_matching(1, fault_on("DELETE", "/items/", None), Fault::Status { status: 500 });
    let result = s.write("zotero_put_attachment", json!({ "parentItemKey": PARENT, "base64Data": b64(&pdf()) })).await;
    let error = error_text(&result);
    let key = new_key(&s, &before).expect("the item could not be removed, so it is there");
    assert!(error.contains(&format!("The new attachment item {key} could not be removed")), "{error}");
    assert!(error.contains("without a file"), "{error}");
    assert!(error.contains("zotero_delete_attachment") && error.contains(&format!("replaceAttachmentKey={key}")));
    let md5 = item(&s, &key).unwrap()["md5"].clone();
    assert!(md5.is_null() || md5 == "", "it has no file, as said: {md5}");
}

/// The removal of a new attachment's item after a failed upload is applied but its answer lost: the item is read
/// (Zotero answers 404 for it now), not deleted again, and the call says nothing was kept rather than naming an
/// item that is gone.
#[tokio::test]
async fn a_removal_whose_answer_is_lost_is_checked_by_reading_not_by_deleting_again() {
    let s = bench(false);
    let before = item_count(&s);
    s.sim.fail_matching(1, fault_on("POST", "/file", Some("upload=")), Fault::Status { status: 500 });
    s.sim.fail_matching(1, fault_on("DELETE", "/items/", None), Fault::DropAnswer);
    let result = s.write("zotero_put_attachment", json!({ "parentItemKey": PARENT, "base64Data": b64(&pdf()) })).await;
    let error = error_text(&result);
    assert!(error.contains("the new attachment item and any part of its file were removed"), "{error}");
    assert!(!error.contains("could not be removed"), "{error}");
    assert_eq!(item_count(&s), before);
    let deletes = s.sim.requests().iter().filter(|r| r.method == "DELETE").count();
    assert_eq!(deletes, 1, "the DELETE is not sent again");
}

/// A replacement whose registration Zotero applied and then answered with a server error: the file was
/// replaced, so the call must not say that nothing changed; it says the outcome is not known and how to check.
#[tokio::test]
async fn a_replacement_registered_then_answered_with_a_server_error_is_not_called_unchanged() {
    let s = bench(false);
    s.sim.store_file(LIB, ATTACHMENT, "paper.pdf", &pdf());
    s.sim.fail_matching(1, fault_on("POST", "/file", Some("upload=")), Fault::LoseAnswer { status: 500 });
    let notes = b"Plain notes about the paper";
    let result = s
        .write(
            "zotero_put_attachment",
            json!({ "replaceAttachmentKey": ATTACHMENT, "base64Data": b64(notes), "filename": "notes.txt" }),
        )
        .await;
    let said = text(&result);
    assert_eq!(item(&s, ATTACHMENT).unwrap()["md5"], json!(md5_hex(notes)), "the new file is stored");
    assert!(!said.contains("Nothing was changed"), "{said}");
    assert!(said.contains(&md5_hex(notes)), "the answer names the md5 to check for: {said}");
}
