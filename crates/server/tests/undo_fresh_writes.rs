//! Every write tool's fresh write, undone with no fault anywhere: the call is made, then
//! `zotero_undo` with the id its answer gives, and the library read from the simulator (items, collections,
//! stored files; the WebDAV folder) is what it was before, but for versions. A write made of several steps must
//! leave in its journal entry each object's version after its *last* step, or the undo finds the object
//! "changed since" and leaves it: a new upload on Zotero Storage once kept the version from the item's creation,
//! which the registration raises.
//!
//! A file replaced on Zotero Storage is the one write that cannot be put back (Zotero Storage keeps one file per
//! attachment): its undo says so and claims nothing.

mod common;

use std::collections::BTreeMap;

use common::dav::*;
use common::files::*;
use common::*;
use serde_json::{json, Map, Value};
use zotero_sim::{Fault, FaultMatch};

/// What the person sees of the library: each item's and collection's data (without what Zotero sets itself on
/// every write), the bytes each attachment has on Zotero Storage, and the WebDAV folder.
#[derive(Debug, PartialEq)]
struct Library {
    items: BTreeMap<String, Map<String, Value>>,
    collections: BTreeMap<String, Map<String, Value>>,
    stored: BTreeMap<String, Vec<u8>>,
    webdav: BTreeMap<String, Vec<u8>>,
}

fn data_of(object: &Value) -> (String, Map<String, Value>) {
    let key = object["key"].as_str().unwrap_or_default().to_owned();
    let mut data = object["data"].as_object().cloned().unwrap_or_default();
    // `dateAdded` too: an item deleted for good comes back with a new one (the journal does not send it back).
    for bookkeeping in ["version", "dateModified", "dateAdded"] {
        data.remove(bookkeeping);
    }
    (key, data)
}

fn library(b: &Bench) -> Library {
    let items: BTreeMap<_, _> = b.sim.items(LIB).iter().map(data_of).collect();
    let stored = items.keys().filter_map(|key| Some((key.clone(), b.sim.stored_file(LIB, key)?))).collect();
    Library {
        collections: b.sim.collections(LIB).iter().map(data_of).collect(),
        items,
        stored,
        // Files an undo keeps for its own undo (`<KEY>.zip.undo-<id>`) are the journal's, not Zotero's.
        webdav: b
            .folder
            .files
            .borrow()
            .iter()
            .filter(|(path, _)| !path.contains(".undo-"))
            .map(|(path, bytes)| (path.clone(), bytes.clone()))
            .collect(),
    }
}

/// What differs between two states, object by object (the whole library is too long to read in a failure).
fn differences(before: &Library, after: &Library) -> String {
    fn diff<T: PartialEq + std::fmt::Debug>(what: &str, a: &BTreeMap<String, T>, b: &BTreeMap<String, T>) -> String {
        let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
        keys.into_iter()
            .filter(|k| a.get(*k) != b.get(*k))
            .map(|k| match (a.get(k), b.get(k)) {
                (Some(x), Some(y)) => format!("{what} {k}: {x:?}\n   now {y:?}\n"),
                (x, y) => format!("{what} {k}: {} -> {}\n", x.is_some(), y.is_some()),
            })
            .collect()
    }
    [
        diff("item", &before.items, &after.items),
        diff("collection", &before.collections, &after.collections),
        diff("stored file", &before.stored, &after.stored),
        diff("webdav", &before.webdav, &after.webdav),
    ]
    .concat()
}

/// The id the answer's last line gives for undoing the call.
fn undo_id(result: &Value) -> String {
    let text = text(result);
    let line = text.lines().rev().find(|l| l.starts_with("Undo: zotero_undo")).unwrap_or_else(|| panic!("{text}"));
    line.split('"').nth(1).expect("an id in quotes").to_owned()
}

/// Makes the write `tool(arguments)`, checks it changed the library, undoes it, and checks every object of the
/// entry was undone (removed, restored or created again, none "changed since" or failed) and the library is as
/// before. Returns the write's answer.
async fn undone_as_before(b: &Bench, tool: &str, arguments: Value) -> Value {
    let before = library(b);
    let written = b.write(tool, arguments.clone()).await;
    assert!(written["isError"] != true, "{tool} {arguments}: {written}");
    assert_ne!(library(b), before, "{tool} {arguments} changed nothing: {written}");

    let undone = b.write("zotero_undo", json!({ "id": undo_id(&written) })).await;
    let objects = ok(&undone)["objects"].as_array().cloned().unwrap_or_default();
    assert!(!objects.is_empty(), "{tool}: the undo named nothing: {undone}");
    for object in &objects {
        let outcome = object["outcome"].as_str().unwrap_or_default();
        assert!(
            ["removed", "restored", "recreated"].contains(&outcome),
            "{tool} {arguments}: {} was {outcome}, not undone: {}",
            object["key"],
            text(&undone)
        );
    }
    let after = library(b);
    assert!(after == before, "{tool} {arguments}: after the undo {}\n{}", differences(&before, &after), text(&undone));
    written
}

#[tokio::test]
async fn item_and_collection_writes_are_undone() {
    let b = bench(false);
    undone_as_before(
        &b,
        "zotero_create_items",
        json!({ "items": [{ "itemType": "book", "title": "Written by mistake", "tags": [{ "tag": "x" }] }] }),
    )
    .await;
    undone_as_before(
        &b,
        "zotero_update_item",
        json!({ "keys": [PARENT], "fields": { "title": "A new title" }, "addTags": ["later"] }),
    )
    .await;
    undone_as_before(&b, "zotero_delete_items", json!({ "keys": [PARENT] })).await;
    undone_as_before(&b, "zotero_delete_items", json!({ "keys": [PARENT], "permanent": true })).await;

    let made =
        undone_as_before(&b, "zotero_manage_collections", json!({ "action": "create", "name": "Reading" })).await;
    assert!(ok(&made)["collectionKey"].is_string() || text(&made).contains("Reading"), "{made}");
    let kept = b.sim.insert_collection(LIB, json!({ "name": "Kept" }));
    let other = b.sim.insert_collection(LIB, json!({ "name": "Other" }));
    for arguments in [
        json!({ "action": "rename", "collectionKey": kept, "name": "Renamed" }),
        json!({ "action": "move", "collectionKey": kept, "parentCollection": other }),
        json!({ "action": "addItems", "collectionKey": kept, "itemKeys": [PARENT] }),
        json!({ "action": "delete", "collectionKey": kept }),
    ] {
        undone_as_before(&b, "zotero_manage_collections", arguments).await;
    }
    b.write("zotero_manage_collections", json!({ "action": "addItems", "collectionKey": kept, "itemKeys": [PARENT] }))
        .await;
    undone_as_before(
        &b,
        "zotero_manage_collections",
        json!({ "action": "removeItems", "collectionKey": kept, "itemKeys": [PARENT] }),
    )
    .await;
}

#[tokio::test]
async fn note_and_annotation_writes_are_undone() {
    let b = bench(false);
    b.sim.store_file(LIB, ATTACHMENT, "paper.pdf", &pdf());
    undone_as_before(&b, "zotero_notes", json!({ "action": "create", "itemKey": PARENT, "note": "A remark" })).await;
    let note = b.sim.insert_item(LIB, json!({ "itemType": "note", "note": "<p>Mine</p>", "parentItem": PARENT }));
    undone_as_before(
        &b,
        "zotero_notes",
        json!({ "action": "update", "itemKey": note, "note": "More", "append": true }),
    )
    .await;
    undone_as_before(&b, "zotero_notes", json!({ "action": "delete", "itemKey": note })).await;
    undone_as_before(
        &b,
        "zotero_annotations",
        json!({ "action": "create", "itemKey": ATTACHMENT, "text": "Side chains pack without any rotamer library" }),
    )
    .await;
}

/// Writes whose answer was lost after Zotero applied them (the connection dropped, or Zotero answered 500 or
/// 503): found written by reading back, journaled as answered ones are, and undone to the library as before.
#[tokio::test]
async fn writes_whose_answer_was_lost_are_undone() {
    for fault in [Fault::DropAnswer, Fault::LoseAnswer { status: 500 }, Fault::LoseAnswer { status: 503 }] {
        let b = bench(false);
        b.sim.store_file(LIB, ATTACHMENT, "paper.pdf", &pdf());
        let lose = |method: &str, body: Option<&str>| {
            let matcher = FaultMatch {
                method: method.parse().ok(),
                path_contains: Some("/items".into()),
                body_contains: body.map(str::to_owned),
                skip: 0,
            };
            b.sim.fail_matching(1, matcher, fault.clone());
        };
        lose("POST", Some("annotationType"));
        undone_as_before(
            &b,
            "zotero_annotations",
            json!({ "action": "create", "itemKey": ATTACHMENT, "text": "Side chains pack without any rotamer library" }),
        )
        .await;
        lose("POST", None);
        undone_as_before(&b, "zotero_notes", json!({ "action": "create", "itemKey": PARENT, "note": "A remark" }))
            .await;
        lose("PATCH", None);
        undone_as_before(&b, "zotero_update_item", json!({ "keys": [PARENT], "addTags": ["lost-answer"] })).await;
        b.sim.clear_faults();
    }
}

#[tokio::test]
async fn a_merge_is_undone() {
    let b = bench(false);
    let rich = b.sim.insert_item(
        LIB,
        json!({"itemType": "journalArticle", "title": "Urban heat islands and street trees", "date": "2020-03-01",
               "DOI": "10.1016/j.uclim.2020.100001",
               "creators": [{"creatorType": "author", "firstName": "Ana", "lastName": "Silva"}]}),
    );
    let poor = b.sim.insert_item(
        LIB,
        json!({"itemType": "journalArticle", "title": "Urban Heat Islands and Street Trees.", "date": "March 2020",
               "DOI": "https://doi.org/10.1016/J.UCLIM.2020.100001", "volume": "31",
               "creators": [{"creatorType": "author", "firstName": "A.", "lastName": "Silva"}]}),
    );
    b.sim.insert_item(LIB, json!({"itemType": "note", "note": "<p>My notes</p>", "parentItem": poor}));
    undone_as_before(&b, "zotero_find_duplicates", json!({ "mergeKeys": [rich, poor], "merge": true })).await;
}

/// The registration raises the new attachment's version past the one its creation
/// answered, and the undo's DELETE, version-checked against the latter, was refused (412, "changed since").
#[tokio::test]
async fn a_new_upload_on_zotero_storage_is_undone() {
    let b = bench(false);
    let put = undone_as_before(
        &b,
        "zotero_put_attachment",
        json!({ "parentItemKey": PARENT, "base64Data": b64(&pdf()), "filename": "Contacts.pdf" }),
    )
    .await;
    assert_eq!(ok(&put)["storedIn"], "Zotero Storage", "{put}");
    // A snapshot is stored zipped: the same three steps, another body.
    undone_as_before(
        &b,
        "zotero_put_attachment",
        json!({ "parentItemKey": PARENT, "base64Data": b64(b"<html><body>Saved</body></html>"),
                "filename": "page.html" }),
    )
    .await;
    // Zotero refuses to list the children of a text attachment (it cannot have any): that is no reason to keep it.
    undone_as_before(
        &b,
        "zotero_put_attachment",
        json!({ "parentItemKey": PARENT, "base64Data": b64(b"Plain notes"), "filename": "notes.txt" }),
    )
    .await;
}

#[tokio::test]
async fn attachment_writes_on_zotero_storage_are_undone() {
    let b = bench(false);
    b.sim.store_file(LIB, ATTACHMENT, "paper.pdf", &pdf());
    undone_as_before(
        &b,
        "zotero_rename_attachments",
        json!({ "itemKeys": [PARENT], "template": "{{ year }} renamed", "apply": true }),
    )
    .await;
    undone_as_before(&b, "zotero_delete_attachment", json!({ "attachmentKey": ATTACHMENT })).await;
    // Deleted for good: an_attachment_deleted_for_good_on_zotero_storage_comes_back_said_to_be_without_its_file.
}

/// Zotero Storage deletes a file with its attachment and keeps no copy: the undo brings the attachment back and
/// says its file did not come with it, and the file can be stored again on it.
#[tokio::test]
async fn an_attachment_deleted_for_good_on_zotero_storage_comes_back_said_to_be_without_its_file() {
    let b = bench(false);
    b.sim.store_file(LIB, ATTACHMENT, "paper.pdf", &pdf());
    let deleted = b.write("zotero_delete_attachment", json!({ "attachmentKey": ATTACHMENT, "permanent": true })).await;
    let listed = text(&b.write("zotero_undo", json!({})).await).to_owned();
    assert!(listed.contains(&format!("The file of {ATTACHMENT} went with its attachment")), "{listed}");
    let undone = b.write("zotero_undo", json!({ "id": undo_id(&deleted) })).await;
    let said = text(&undone).to_owned();
    assert!(said.contains("without its file") && said.contains("replaceAttachmentKey"), "{said}");
    assert!(b.sim.item(LIB, ATTACHMENT).is_some(), "the attachment is back: {said}");
    let again = b
        .write("zotero_put_attachment", json!({ "replaceAttachmentKey": ATTACHMENT, "base64Data": b64(&pdf()) }))
        .await;
    assert_eq!(ok(&again)["replaced"], true, "the file can be stored again: {again}");
    assert_eq!(b.sim.stored_file(LIB, ATTACHMENT), Some(pdf()));
}

/// The import creates the item, then an attachment whose file is uploaded: both go.
#[tokio::test]
async fn an_import_with_its_pdf_on_zotero_storage_is_undone() {
    let b = bench(false);
    b.serve_plos();
    let imported = undone_as_before(&b, "zotero_import_reference", json!({ "identifier": PLOS_DOI })).await;
    assert!(text(&imported).contains("Attached PDF"), "the PDF was stored: {}", text(&imported));
}

/// Zotero Storage keeps one file per attachment, so a replaced file cannot be put back: the undo claims nothing
/// it did not do, and the journal said so before.
#[tokio::test]
async fn a_replacement_on_zotero_storage_is_not_claimed_undone() {
    let b = bench(false);
    b.sim.store_file(LIB, ATTACHMENT, "paper.pdf", &pdf());
    let new = zotero_mcp_core::testing::pdf_of_pages(&["The new file"]);
    let replaced =
        b.write("zotero_put_attachment", json!({ "replaceAttachmentKey": ATTACHMENT, "base64Data": b64(&new) })).await;
    assert_eq!(ok(&replaced)["replaced"], true, "{replaced}");
    let undone = b.write("zotero_undo", json!({ "id": undo_id(&replaced) })).await;
    let said = text(&undone).to_owned();
    assert!(said.contains("Zotero Storage holds one file"), "{said}");
    let objects = ok(&undone)["objects"].as_array().cloned().unwrap_or_default();
    assert!(objects.iter().all(|o| o["outcome"] != "restored"), "{said}");
    assert_eq!(b.sim.stored_file(LIB, ATTACHMENT), Some(new), "the new file stays, as the undo says");
}

#[tokio::test]
async fn attachment_writes_on_webdav_are_undone() {
    let b = bench(true);
    let earlier = pdf();
    b.upload(ATTACHMENT, "paper.pdf", &earlier);
    b.folder.files.borrow_mut().insert(
        format!("/files/zotero/{ATTACHMENT}.prop"),
        b"<properties version=\"1\"><mtime>1</mtime><hash>x</hash></properties>".to_vec(),
    );
    undone_as_before(
        &b,
        "zotero_put_attachment",
        json!({ "parentItemKey": PARENT, "base64Data": b64(&pdf()), "filename": "Contacts.pdf" }),
    )
    .await;
    let new = zotero_mcp_core::testing::pdf_of_pages(&["The new file"]);
    undone_as_before(
        &b,
        "zotero_put_attachment",
        json!({ "replaceAttachmentKey": ATTACHMENT, "base64Data": b64(&new) }),
    )
    .await;
    undone_as_before(
        &b,
        "zotero_rename_attachments",
        json!({ "itemKeys": [PARENT], "template": "{{ year }} renamed", "apply": true }),
    )
    .await;
    undone_as_before(&b, "zotero_delete_attachment", json!({ "attachmentKey": ATTACHMENT, "permanent": true })).await;
    b.serve_plos();
    undone_as_before(&b, "zotero_import_reference", json!({ "identifier": PLOS_DOI })).await;
}
