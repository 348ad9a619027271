//! Writes whose answer is lost (the connection drops after Zotero applied them, or Zotero answers 500/503 after
//! applying them): the tools find out by reading back, name what landed as done, journal it so that zotero_undo
//! turns it back, and say "unknown" (with how to check) only when the read-back fails too.

mod common;

use common::dav::{bench, Bench};
use common::*;
use serde_json::{json, Value};
use zotero_sim::{Fault, FaultMatch, LibraryRef};

const LIB: LibraryRef = LibraryRef::User(DEMO_USER);
const PARENT: &str = "KPDKK5UT";

/// The faults that apply a write and lose its answer.
fn losing_faults() -> [Fault; 3] {
    [Fault::DropAnswer, Fault::LoseAnswer { status: 500 }, Fault::LoseAnswer { status: 503 }]
}

fn on(method: &str, skip: usize) -> FaultMatch {
    FaultMatch {
        method: method.parse().ok(),
        path_contains: Some(format!("users/{DEMO_USER}/items")),
        body_contains: None,
        skip,
    }
}

/// The id the answer's last line gives for undoing the call.
fn undo_id(result: &Value) -> String {
    let text = text(result);
    let line = text.lines().rev().find(|l| l.starts_with("Undo: zotero_undo")).unwrap_or_else(|| panic!("{text}"));
    line.split('"').nth(1).expect("an id in quotes").to_owned()
}

fn title(b: &Bench, key: &str) -> Value {
    b.sim.item(LIB, key).map(|item| item["data"]["title"].clone()).unwrap_or(Value::Null)
}

#[tokio::test]
async fn created_items_whose_answer_is_lost_are_reported_created_and_undone() {
    for fault in losing_faults() {
        let b = bench(false);
        let before = b.sim.items(LIB).len();
        b.sim.fail_matching(1, on("POST", 0), fault.clone());
        let items = json!([
            { "itemType": "book", "title": "Landed anyway" },
            { "itemType": "note", "parentItem": PARENT, "fields": { "note": "A child note" } },
        ]);
        let result = b.write("zotero_create_items", json!({ "items": items })).await;
        let out = ok(&result);
        let created: Vec<String> =
            out["created"].as_array().unwrap().iter().map(|k| k.as_str().unwrap().to_owned()).collect();
        assert_eq!(created.len(), 2, "{fault:?}: {out}");
        assert_eq!(out["failed"], json!([]), "{fault:?}: {out}");
        assert!(out.get("unknown").is_none(), "{fault:?}: {out}");
        assert_eq!(title(&b, &created[0]), "Landed anyway");
        assert_eq!(b.sim.item(LIB, &created[1]).unwrap()["data"]["parentItem"], PARENT);
        assert!(!text(&result).contains("Not created"), "{}", text(&result));
        assert_eq!(b.sim.items(LIB).len(), before + 2, "{fault:?}: written once");

        let undone = b.write("zotero_undo", json!({ "id": undo_id(&result) })).await;
        let objects = ok(&undone)["objects"].as_array().unwrap().clone();
        assert!(objects.iter().all(|o| o["outcome"] == "removed"), "{fault:?}: {undone}");
        assert!(created.iter().all(|key| b.sim.item(LIB, key).is_none()), "{fault:?}: both gone");
    }
}

#[tokio::test]
async fn an_update_whose_answer_is_lost_is_reported_updated_and_undone() {
    for fault in losing_faults() {
        let b = bench(false);
        let old = title(&b, PARENT);
        b.sim.fail_matching(1, on("PATCH", 0), fault.clone());
        let result =
            b.write("zotero_update_item", json!({ "keys": [PARENT], "fields": { "title": "New title" } })).await;
        let out = ok(&result);
        assert_eq!(out["updated"], json!([PARENT]), "{fault:?}: {out}");
        assert_eq!(out["failed"], json!([]), "{fault:?}: {out}");
        assert!(!text(&result).contains("Not updated"), "{}", text(&result));
        assert_eq!(title(&b, PARENT), "New title");

        let undone = b.write("zotero_undo", json!({ "id": undo_id(&result) })).await;
        assert_eq!(ok(&undone)["objects"][0]["outcome"], "restored", "{fault:?}: {undone}");
        assert_eq!(title(&b, PARENT), old);
    }
}

#[tokio::test]
async fn an_update_zotero_refused_with_a_server_error_is_reported_not_updated() {
    let b = bench(false);
    let old = title(&b, PARENT);
    b.sim.fail_matching(1, on("PATCH", 0), Fault::Status { status: 500 });
    let result = b.write("zotero_update_item", json!({ "keys": [PARENT], "fields": { "title": "New title" } })).await;
    let out = ok(&result);
    assert_eq!(out["updated"], json!([]), "{out}");
    assert_eq!(out["failed"][0]["what"], PARENT, "{out}");
    assert!(text(&result).contains("Not updated"), "{}", text(&result));
    assert_eq!(title(&b, PARENT), old);
}

#[tokio::test]
async fn an_update_that_cannot_be_read_back_is_unknown_and_says_how_to_check() {
    let b = bench(false);
    b.sim.fail_matching(1, on("PATCH", 0), Fault::DropAnswer);
    // The tool's own read goes through; the read that checks the write fails.
    b.sim.fail_matching(1, on("GET", 1), Fault::Status { status: 500 });
    let result = b.write("zotero_update_item", json!({ "keys": [PARENT], "fields": { "title": "New title" } })).await;
    let out = ok(&result);
    assert_eq!((out["updated"].clone(), out["failed"].clone()), (json!([]), json!([])), "{out}");
    assert_eq!(out["unknown"][0]["key"], PARENT, "{out}");
    let said = text(&result);
    assert!(said.contains("Unknown whether written") && said.contains(&format!("zotero_get_item {PARENT}")), "{said}");
    assert!(!said.contains("Not updated"), "{said}");
}

#[tokio::test]
async fn items_trashed_or_deleted_with_the_answer_lost_are_reported_deleted_and_undone() {
    for fault in losing_faults() {
        for permanent in [false, true] {
            let b = bench(false);
            let key = b.sim.insert_item(LIB, json!({ "itemType": "book", "title": "To go" }));
            let method = if permanent { "DELETE" } else { "POST" };
            b.sim.fail_matching(1, on(method, 0), fault.clone());
            let result = b.write("zotero_delete_items", json!({ "keys": [key], "permanent": permanent })).await;
            let out = ok(&result);
            assert_eq!(out["deleted"], json!([key]), "{fault:?} permanent={permanent}: {out}");
            assert_eq!(out["failed"], json!([]), "{fault:?} permanent={permanent}: {out}");
            assert!(!text(&result).contains("Not deleted"), "{}", text(&result));

            let undone = b.write("zotero_undo", json!({ "id": undo_id(&result) })).await;
            let outcome = ok(&undone)["objects"][0]["outcome"].clone();
            assert!(outcome == "restored" || outcome == "recreated", "{fault:?} permanent={permanent}: {undone}");
            let item = b.sim.item(LIB, &key).unwrap_or_else(|| panic!("{key} is back"));
            assert!(item["data"].get("deleted").is_none(), "out of the trash: {item}");
        }
    }
}

#[tokio::test]
async fn a_note_and_a_collection_written_with_the_answer_lost_are_reported_done_and_undone() {
    for fault in losing_faults() {
        let b = bench(false);
        b.sim.fail_matching(1, on("POST", 0), fault.clone());
        let result =
            b.write("zotero_notes", json!({ "action": "create", "itemKey": PARENT, "note": "Kept after all" })).await;
        let key = ok(&result)["noteKey"].as_str().unwrap_or_else(|| panic!("{fault:?}: {result}")).to_owned();
        assert_eq!(b.sim.item(LIB, &key).unwrap()["data"]["parentItem"], PARENT);
        let undone = b.write("zotero_undo", json!({ "id": undo_id(&result) })).await;
        assert_eq!(ok(&undone)["objects"][0]["outcome"], "removed", "{fault:?}: {undone}");
        assert!(b.sim.item(LIB, &key).is_none());

        let collection = b.sim.collections(LIB)[0]["key"].as_str().unwrap().to_owned();
        let old = b.sim.collection(LIB, &collection).unwrap()["data"]["name"].clone();
        let collections = FaultMatch { path_contains: Some("/collections/".into()), ..on("PATCH", 0) };
        b.sim.fail_matching(1, collections, fault.clone());
        let renamed = b
            .write(
                "zotero_manage_collections",
                json!({ "action": "rename", "collectionKey": collection, "name": "Renamed anyway" }),
            )
            .await;
        assert_eq!(ok(&renamed)["changed"], true, "{fault:?}: {renamed}");
        let undone = b.write("zotero_undo", json!({ "id": undo_id(&renamed) })).await;
        assert_eq!(ok(&undone)["objects"][0]["outcome"], "restored", "{fault:?}: {undone}");
        assert_eq!(b.sim.collection(LIB, &collection).unwrap()["data"]["name"], old);
    }
}

#[tokio::test]
async fn an_undo_whose_write_cannot_be_read_back_says_unknown_not_failed() {
    let b = bench(false);
    let old = title(&b, PARENT);
    let changed = b.write("zotero_update_item", json!({ "keys": [PARENT], "fields": { "title": "New title" } })).await;
    let id = undo_id(&changed);
    // The undo's restoring write lands but its answer is lost, and the read that checks it fails too.
    b.sim.fail_matching(1, on("POST", 0), Fault::DropAnswer);
    b.sim.fail_matching(1, on("GET", UNDO_READS_BEFORE_CHECK), Fault::Status { status: 500 });
    let undone = b.write("zotero_undo", json!({ "id": id })).await;
    let objects = ok(&undone)["objects"].as_array().unwrap().clone();
    assert_eq!(objects[0]["outcome"], "unknown", "{undone}");
    assert!(text(&undone).contains("UNKNOWN whether undone"), "{}", text(&undone));
    assert!(!text(&undone).contains("not sent"), "{}", text(&undone));
    // It did land, which "failed" would have denied.
    assert_eq!(title(&b, PARENT), old);
}

/// Reads the undo makes before its restoring write (the object's current state), after which the check's read
/// comes.
const UNDO_READS_BEFORE_CHECK: usize = 1;
