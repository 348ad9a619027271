//! Write requests, checked against "Zotero Web API Write Requests" and the dataserver's version rules.

mod common;

use common::*;
use serde_json::json;
use zotero_sim::{LibraryRef, Simulator};

#[test]
fn batch_post_creates_items_with_fresh_keys_and_reports_each_index() {
    let sim = sim();
    let before = sim.library_version(LIB);
    let resp = post(
        &sim,
        "items",
        json!([
            {"itemType": "book", "title": "One"},
            {"itemType": "book", "title": "Two", "foo": "bar"},
            {"itemType": "journalArticle", "title": "Three", "publicationTitle": "J"}
        ]),
    );
    assert_eq!(resp.status, 200);
    let report = resp.json();
    let key0 = report["success"]["0"].as_str().unwrap_or_default().to_string();
    assert_eq!(key0.len(), 8);
    assert!(key0.bytes().all(|b| b"23456789ABCDEFGHIJKLMNPQRSTUVWXYZ".contains(&b)), "{key0}");
    assert_eq!(report["successful"]["0"]["data"]["title"], "One");
    assert_eq!(report["successful"]["0"]["key"], key0.as_str());
    assert_eq!(report["failed"]["1"]["code"], 400);
    assert_eq!(report["failed"]["1"]["message"], "Invalid property 'foo'");
    assert!(report["successful"]["2"].is_object());
    assert_eq!(report["unchanged"], json!({}));
    // One write request, one new library version, stamped on every object it wrote.
    let after = resp.version();
    assert_eq!(after, before + 1);
    assert_eq!(report["successful"]["0"]["version"], after);
    assert_eq!(report["successful"]["2"]["data"]["version"], after);
}

#[test]
fn field_not_valid_for_item_type_fails_that_object_only() {
    let sim = sim();
    let resp = post(&sim, "items", json!([{"itemType": "book", "publicationTitle": "Nature"}, {"itemType": "book"}]));
    let report = resp.json();
    assert_eq!(report["failed"]["0"]["code"], 400);
    assert_eq!(report["failed"]["0"]["message"], "'publicationTitle' is not a valid field for type 'book'");
    assert!(report["success"]["1"].is_string());
    // An empty value for a field the type lacks is accepted, as on the real server.
    let resp = post(&sim, "items", json!([{"itemType": "book", "publicationTitle": ""}]));
    assert!(resp.json()["success"]["0"].is_string());
}

#[test]
fn invalid_item_type_and_creator_type_fail_with_zoteros_messages() {
    let sim = sim();
    let report = post(
        &sim,
        "items",
        json!([
            {"itemType": "spaceship"},
            {"itemType": "book", "creators": [{"creatorType": "director", "name": "X"}]},
            {"itemType": "film", "creators": [{"creatorType": "author", "name": "Allowed everywhere"}]},
            {"itemType": "book", "creators": [{"creatorType": "author", "firstName": "A"}]}
        ]),
    )
    .json();
    assert_eq!(report["failed"]["0"]["message"], "'spaceship' is not a valid itemType");
    assert_eq!(report["failed"]["1"]["message"], "'director' is not a valid creator type for item type 'book'");
    assert!(report["success"]["2"].is_string());
    assert_eq!(report["failed"]["3"]["message"], "'lastName' creator field must be set if 'firstName' is set");
}

#[test]
fn more_than_fifty_objects_is_413() {
    let sim = sim();
    let objects: Vec<_> = (0..51).map(|i| json!({"itemType": "book", "title": format!("B{i}")})).collect();
    let resp = post(&sim, "items", json!(objects));
    assert_eq!(resp.status, 413);
    assert_eq!(resp.text(), "Cannot add more than 50 items at a time");
}

#[test]
fn stale_if_unmodified_since_version_on_batch_is_412() {
    let sim = sim();
    create_item(&sim, json!({"itemType": "book"}));
    let v = sim.library_version(LIB);
    let resp = send(
        &sim,
        "POST",
        "/users/1/items",
        &[("If-Unmodified-Since-Version", &(v - 1).to_string())],
        Some(json!([{"itemType": "book"}])),
    );
    assert_eq!(resp.status, 412);
    assert_eq!(
        resp.text(),
        format!("Library has been modified since specified version (expected {}, found {v})", v - 1)
    );
    let resp = send(
        &sim,
        "POST",
        "/users/1/items",
        &[("If-Unmodified-Since-Version", &v.to_string())],
        Some(json!([{"itemType": "book"}])),
    );
    assert_eq!(resp.status, 200);
    assert!(resp.version() > v);
}

#[test]
fn stale_object_version_in_batch_fails_that_object_with_412() {
    let sim = sim();
    let key = create_item(&sim, json!({"itemType": "book", "title": "A"}));
    let current = sim.library_version(LIB);
    sim.edit_before_next_write(LIB, &key);
    let report = post(
        &sim,
        "items",
        json!([{"key": key, "version": current, "title": "B"}, {"itemType": "book", "title": "C"}]),
    )
    .json();
    assert_eq!(report["failed"]["0"]["code"], 412);
    assert_eq!(report["failed"]["0"]["key"], key.as_str());
    assert!(report["failed"]["0"]["message"].as_str().unwrap_or_default().starts_with("Item has been modified"));
    assert!(report["success"]["1"].is_string());
}

#[test]
fn existing_object_without_version_in_batch_is_428() {
    let sim = sim();
    let key = create_item(&sim, json!({"itemType": "book"}));
    let report = post(&sim, "items", json!([{"key": key, "title": "no version"}])).json();
    assert_eq!(report["failed"]["0"]["code"], 428);
    // With the library version in the header, the same object goes through.
    let v = sim.library_version(LIB).to_string();
    let resp = send(
        &sim,
        "POST",
        "/users/1/items",
        &[("If-Unmodified-Since-Version", &v)],
        Some(json!([{"key": key, "title": "no version"}])),
    );
    assert!(resp.json()["success"]["0"].is_string(), "{}", resp.text());
}

#[test]
fn missing_object_with_positive_version_is_404_and_version_zero_creates() {
    let sim = sim();
    let report = post(
        &sim,
        "items",
        json!([
            {"key": "AAAAAAAA", "version": 5, "itemType": "book"},
            {"key": "BBBBBBBB", "version": 0, "itemType": "book"}
        ]),
    )
    .json();
    assert_eq!(report["failed"]["0"]["code"], 404);
    assert_eq!(report["failed"]["0"]["message"], "Item doesn't exist (expected version 5; use 0 instead)");
    assert_eq!(report["success"]["1"], "BBBBBBBB");
}

#[test]
fn unchanged_object_goes_to_unchanged_and_keeps_versions() {
    let sim = sim();
    let key = create_item(&sim, json!({"itemType": "book", "title": "Same"}));
    let before = sim.library_version(LIB);
    let full = get(&sim, &format!("/users/1/items/{key}")).json();
    let resp = post(&sim, "items", json!([full]));
    let report = resp.json();
    assert_eq!(report["unchanged"]["0"], key.as_str());
    assert_eq!(resp.version(), before);
    assert_eq!(sim.library_version(LIB), before);
}

#[test]
fn post_of_existing_object_merges_like_patch() {
    let sim = sim();
    let key = create_item(&sim, json!({"itemType": "book", "title": "T", "publisher": "P"}));
    let v = sim.library_version(LIB);
    let report = post(&sim, "items", json!([{"key": key, "version": v, "title": "T2"}])).json();
    assert_eq!(report["successful"]["0"]["data"]["title"], "T2");
    assert_eq!(report["successful"]["0"]["data"]["publisher"], "P");
}

#[test]
fn put_replaces_and_clears_absent_fields_patch_merges() {
    let sim = sim();
    let key = create_item(&sim, json!({"itemType": "book", "title": "T", "publisher": "P", "tags": [{"tag": "x"}]}));
    let v = sim.library_version(LIB);
    let resp = send(
        &sim,
        "PATCH",
        &format!("/users/1/items/{key}"),
        &[("If-Unmodified-Since-Version", &v.to_string())],
        Some(json!({"title": "Patched"})),
    );
    assert_eq!(resp.status, 204);
    let item = sim.item(LIB, &key).unwrap_or_default();
    assert_eq!(item["data"]["title"], "Patched");
    assert_eq!(item["data"]["publisher"], "P");
    assert_eq!(item["data"]["tags"], json!([{"tag": "x"}]));

    let v = resp.version();
    let resp = send(
        &sim,
        "PUT",
        &format!("/users/1/items/{key}"),
        &[],
        Some(
            json!({"key": key, "version": v, "itemType": "book", "title": "Put", "tags": [], "collections": [], "relations": {}}),
        ),
    );
    assert_eq!(resp.status, 204, "{}", resp.text());
    let item = sim.item(LIB, &key).unwrap_or_default();
    assert_eq!(item["data"]["title"], "Put");
    assert_eq!(item["data"]["publisher"], "");
    assert_eq!(item["data"]["tags"], json!([]));
    assert_eq!(item["version"], resp.version());
}

#[test]
fn put_of_existing_item_requires_tags_relations_and_collections() {
    let sim = sim();
    let key = create_item(&sim, json!({"itemType": "book"}));
    let v = sim.library_version(LIB).to_string();
    let resp = send(
        &sim,
        "PUT",
        &format!("/users/1/items/{key}"),
        &[("If-Unmodified-Since-Version", &v)],
        Some(json!({"itemType": "book", "title": "x"})),
    );
    assert_eq!(resp.status, 400);
    assert_eq!(resp.text(), "'tags' property not provided");
}

#[test]
fn single_object_write_without_version_is_428() {
    let sim = sim();
    let key = create_item(&sim, json!({"itemType": "book"}));
    let resp = send(&sim, "PATCH", &format!("/users/1/items/{key}"), &[], Some(json!({"title": "x"})));
    assert_eq!(resp.status, 428);
    assert_eq!(
        resp.text(),
        "Either If-Unmodified-Since-Version or object version property must be provided for key-based writes"
    );
    let resp = send(&sim, "DELETE", &format!("/users/1/items/{key}"), &[], None);
    assert_eq!(resp.status, 428);
    assert_eq!(resp.text(), "If-Unmodified-Since-Version must be provided for delete requests");
}

#[test]
fn stale_if_unmodified_since_version_is_412() {
    let sim = sim();
    let key = create_item(&sim, json!({"itemType": "book"}));
    let old = sim.library_version(LIB);
    sim.edit_before_next_write(LIB, &key);
    let resp = send(
        &sim,
        "PATCH",
        &format!("/users/1/items/{key}"),
        &[("If-Unmodified-Since-Version", &old.to_string())],
        Some(json!({"title": "x"})),
    );
    assert_eq!(resp.status, 412);
    // The 412 carries the object's current version, so the client knows what to fetch.
    let current = sim.item(LIB, &key).unwrap_or_default()["version"].as_u64().unwrap_or(0);
    assert!(current > old);
    assert_eq!(resp.version(), current);
    assert_eq!(
        resp.text(),
        format!("Item has been modified since specified version (expected {old}, found {current})")
    );
    // DELETE with the stale version is refused too; with the current one it works.
    let resp = send(
        &sim,
        "DELETE",
        &format!("/users/1/items/{key}"),
        &[("If-Unmodified-Since-Version", &old.to_string())],
        None,
    );
    assert_eq!(resp.status, 412);
    let resp = send(
        &sim,
        "DELETE",
        &format!("/users/1/items/{key}"),
        &[("If-Unmodified-Since-Version", &current.to_string())],
        None,
    );
    assert_eq!(resp.status, 204);
    assert!(sim.item(LIB, &key).is_none());
}

#[test]
fn header_and_json_versions_must_agree() {
    let sim = sim();
    let key = create_item(&sim, json!({"itemType": "book"}));
    let v = sim.library_version(LIB);
    let resp = send(
        &sim,
        "PATCH",
        &format!("/users/1/items/{key}"),
        &[("If-Unmodified-Since-Version", &v.to_string())],
        Some(json!({"version": v - 1, "title": "x"})),
    );
    assert_eq!(resp.status, 400);
    assert!(resp.header("last-modified-version").is_none(), "400s carry no version");
}

#[test]
fn patch_of_missing_object_needs_version_zero() {
    let sim = sim();
    let resp = send(&sim, "PATCH", "/users/1/items/TPMBJWVH", &[], Some(json!({"itemType": "book"})));
    assert_eq!(resp.status, 404);
    let resp = send(
        &sim,
        "PATCH",
        "/users/1/items/TPMBJWVH",
        &[("If-Unmodified-Since-Version", "123")],
        Some(json!({"itemType": "book"})),
    );
    assert_eq!(resp.status, 412);
    let resp = send(
        &sim,
        "PATCH",
        "/users/1/items/TPMBJWVH",
        &[("If-Unmodified-Since-Version", "0")],
        Some(json!({"itemType": "book"})),
    );
    assert_eq!(resp.status, 204);
    assert!(sim.item(LIB, "TPMBJWVH").is_some());
}

#[test]
fn json_key_must_match_url_key() {
    let sim = sim();
    let key = create_item(&sim, json!({"itemType": "book"}));
    let v = sim.library_version(LIB);
    let resp =
        send(&sim, "PATCH", &format!("/users/1/items/{key}"), &[], Some(json!({"key": "AAAAAAAA", "version": v})));
    assert_eq!(resp.status, 409);
}

#[test]
fn reused_write_token_is_412() {
    let sim = sim();
    let headers = [("Zotero-Write-Token", "19a4f01ad623aa7214f82347e3711f56")];
    let first = send(&sim, "POST", "/users/1/items", &headers, Some(json!([{"itemType": "book"}])));
    assert_eq!(first.status, 200);
    let second = send(&sim, "POST", "/users/1/items", &headers, Some(json!([{"itemType": "book"}])));
    assert_eq!(second.status, 412);
    assert_eq!(second.text(), "Write token already used");
    let short = send(&sim, "POST", "/users/1/items", &[("Zotero-Write-Token", "abc")], Some(json!([])));
    assert_eq!(short.status, 400);
}

#[test]
fn failed_request_does_not_store_its_write_token() {
    let sim = sim();
    let headers = [("Zotero-Write-Token", "abcdefabcdefabcdefabcdefabcdef12")];
    let bad = send(&sim, "POST", "/users/1/items", &headers, Some(json!({"not": "an array"})));
    assert_eq!(bad.status, 400);
    let good = send(&sim, "POST", "/users/1/items", &headers, Some(json!([{"itemType": "book"}])));
    assert_eq!(good.status, 200);
}

#[test]
fn missing_collection_or_parent_is_409_for_that_object() {
    let sim = sim();
    let report = post(
        &sim,
        "items",
        json!([
            {"itemType": "book", "collections": ["ZZZZZZZZ"]},
            {"itemType": "note", "note": "<p>hi</p>", "parentItem": "YYYYYYYY"}
        ]),
    )
    .json();
    assert_eq!(report["failed"]["0"]["code"], 409);
    assert_eq!(report["failed"]["0"]["message"], "Collection ZZZZZZZZ not found");
    assert_eq!(report["failed"]["0"]["data"]["collection"], "ZZZZZZZZ");
    assert_eq!(report["failed"]["1"]["code"], 409);
    assert_eq!(report["failed"]["1"]["message"], "Parent item YYYYYYYY not found");
}

#[test]
fn children_created_after_parent_in_same_batch() {
    let sim = sim();
    let report = post(
        &sim,
        "items",
        json!([
            {"key": "PARENT23", "version": 0, "itemType": "book", "title": "P"},
            {"itemType": "note", "parentItem": "PARENT23", "note": "<p>child</p>"},
            {"itemType": "book", "parentItem": "PARENT23"}
        ]),
    )
    .json();
    assert!(report["success"]["1"].is_string(), "{report}");
    assert_eq!(report["failed"]["2"]["message"], "Child item must be note, attachment, or annotation");
    let children = get(&sim, "/users/1/items/PARENT23/children").json();
    assert_eq!(children.as_array().map(Vec::len), Some(1));
    assert_eq!(sim.item(LIB, "PARENT23").unwrap_or_default()["meta"]["numChildren"], 1);
}

#[test]
fn child_items_cannot_be_in_collections() {
    let sim = sim();
    let coll = create_collection(&sim, json!({"name": "C"}));
    let parent = create_item(&sim, json!({"itemType": "book"}));
    let report = post(&sim, "items", json!([{"itemType": "note", "parentItem": parent, "collections": [coll]}])).json();
    assert_eq!(report["failed"]["0"]["message"], "Child items cannot be assigned to collections");
}

#[test]
fn multi_delete_removes_items_and_their_children_and_logs_them() {
    let sim = sim();
    let a = create_item(&sim, json!({"itemType": "book"}));
    let b = create_item(&sim, json!({"itemType": "book"}));
    let note = create_item(&sim, json!({"itemType": "note", "parentItem": a, "note": "x"}));
    let since = sim.library_version(LIB);
    let resp = send(
        &sim,
        "DELETE",
        &format!("/users/1/items?itemKey={a},{b}"),
        &[("If-Unmodified-Since-Version", &since.to_string())],
        None,
    );
    assert_eq!(resp.status, 204);
    assert!(resp.version() > since);
    let deleted = get(&sim, &format!("/users/1/deleted?since={since}")).json();
    let mut items: Vec<String> =
        deleted["items"].as_array().unwrap_or(&vec![]).iter().filter_map(|v| v.as_str().map(str::to_string)).collect();
    items.sort();
    let mut expected = vec![a, b, note];
    expected.sort();
    assert_eq!(items, expected);
    assert_eq!(deleted["collections"], json!([]));
    // A stale library version refuses the whole deletion.
    let resp = send(&sim, "DELETE", "/users/1/items?itemKey=AAAAAAAA", &[("If-Unmodified-Since-Version", "1")], None);
    assert_eq!(resp.status, 412);
}

#[test]
fn deleted_requires_since() {
    let sim = sim();
    let resp = get(&sim, "/users/1/deleted");
    assert_eq!(resp.status, 400);
    assert_eq!(resp.text(), "'since' parameter must be provided");
}

#[test]
fn trash_flag_moves_item_to_trash_and_back() {
    let sim = sim();
    let key = create_item(&sim, json!({"itemType": "book", "title": "Trashed"}));
    let v = sim.library_version(LIB).to_string();
    let resp = send(
        &sim,
        "PATCH",
        &format!("/users/1/items/{key}"),
        &[("If-Unmodified-Since-Version", &v)],
        Some(json!({"deleted": 1})),
    );
    assert_eq!(resp.status, 204);
    assert_eq!(sim.item(LIB, &key).unwrap_or_default()["data"]["deleted"], 1);
    assert_eq!(get(&sim, "/users/1/items").total(), 0);
    assert_eq!(keys(&get(&sim, "/users/1/items/trash").json()), vec![key.clone()]);
    assert_eq!(get(&sim, "/users/1/items?includeTrashed=1").total(), 1);
    let v = resp.version().to_string();
    send(
        &sim,
        "PATCH",
        &format!("/users/1/items/{key}"),
        &[("If-Unmodified-Since-Version", &v)],
        Some(json!({"deleted": 0})),
    );
    assert!(sim.item(LIB, &key).unwrap_or_default()["data"].get("deleted").is_none());
}

#[test]
fn read_only_key_cannot_write() {
    let sim = Simulator::new();
    sim.add_user(7, "ro", false);
    let request = http::Request::builder()
        .method("POST")
        .uri("/users/7/items")
        .header("Zotero-API-Key", "ro")
        .body(serde_json::to_vec(&json!([{"itemType": "book"}])).unwrap_or_default())
        .unwrap_or_else(|e| panic!("{e}"));
    let resp = raw(&sim, request);
    assert_eq!(resp.status, 403);
    assert_eq!(resp.text(), "Write access denied");
    assert_eq!(sim.library_version(LibraryRef::User(7)), 0);
}

#[test]
fn date_modified_advances_on_change_and_date_added_is_kept() {
    let sim = sim();
    let report = post(
        &sim,
        "items",
        json!([{"itemType": "book", "dateAdded": "2020-01-01T00:00:00Z", "dateModified": "2020-01-02T00:00:00Z"}]),
    )
    .json();
    let key = report["success"]["0"].as_str().unwrap_or_default().to_string();
    let data = &report["successful"]["0"]["data"];
    assert_eq!(data["dateAdded"], "2020-01-01T00:00:00Z");
    assert_eq!(data["dateModified"], "2020-01-02T00:00:00Z");
    let v = sim.library_version(LIB).to_string();
    send(
        &sim,
        "PATCH",
        &format!("/users/1/items/{key}"),
        &[("If-Unmodified-Since-Version", &v)],
        Some(json!({"title": "new"})),
    );
    let item = sim.item(LIB, &key).unwrap_or_default();
    assert_eq!(item["data"]["dateAdded"], "2020-01-01T00:00:00Z");
    assert_ne!(item["data"]["dateModified"], "2020-01-02T00:00:00Z");
}

#[test]
fn related_items_are_bidirectional() {
    let sim = sim();
    let a = create_item(&sim, json!({"itemType": "book"}));
    let b = create_item(
        &sim,
        json!({"itemType": "book", "relations": {"dc:relation": format!("http://zotero.org/users/1/items/{a}")}}),
    );
    let a_json = sim.item(LIB, &a).unwrap_or_default();
    assert_eq!(a_json["data"]["relations"]["dc:relation"], format!("http://zotero.org/users/1/items/{b}"));
    // Sending A's JSON back (with the implied relation) changes nothing.
    let resp = post(&sim, "items", json!([a_json["data"]]));
    assert_eq!(resp.json()["unchanged"]["0"], a.as_str());
    let bad =
        post(&sim, "items", json!([{"itemType": "book", "relations": {"dc:relation": "https://example.com"}}])).json();
    assert_eq!(bad["failed"]["0"]["message"], "'relations' values currently must be Zotero item URIs");
}
