//! Collections and tags, per "Zotero Web API Basics" (resources) and "Write Requests" (collections, tags).

mod common;

use common::*;
use serde_json::json;

#[test]
fn nested_collections_and_their_listings() {
    let sim = sim();
    let top = create_collection(&sim, json!({"name": "Thesis"}));
    let sub = create_collection(&sim, json!({"name": "Chapter 2", "parentCollection": top}));
    let other = create_collection(&sim, json!({"name": "Other"}));
    let in_top = create_item(&sim, json!({"itemType": "book", "title": "In top", "collections": [top]}));
    let in_sub = create_item(&sim, json!({"itemType": "book", "title": "In sub", "collections": [sub]}));
    let note = create_item(&sim, json!({"itemType": "note", "parentItem": in_top, "note": "n"}));

    let mut tops = keys(&get(&sim, "/users/1/collections/top").json());
    tops.sort();
    let mut expected = vec![top.clone(), other];
    expected.sort();
    assert_eq!(tops, expected);
    assert_eq!(keys(&get(&sim, &format!("/users/1/collections/{top}/collections")).json()), vec![sub.clone()]);
    assert_eq!(get(&sim, "/users/1/collections").total(), 3);

    let coll = get(&sim, &format!("/users/1/collections/{top}")).json();
    assert_eq!(coll["data"]["name"], "Thesis");
    assert_eq!(coll["data"]["parentCollection"], false);
    assert_eq!(coll["meta"]["numCollections"], 1);
    assert_eq!(coll["meta"]["numItems"], 1);
    let sub_json = get(&sim, &format!("/users/1/collections/{sub}")).json();
    assert_eq!(sub_json["data"]["parentCollection"], top.as_str());
    assert_eq!(sub_json["links"]["up"]["href"], format!("https://api.zotero.org/users/1/collections/{top}"));

    // /items in a collection includes child notes of its items; /items/top does not. Subcollections' items
    // are not included.
    let mut items = keys(&get(&sim, &format!("/users/1/collections/{top}/items")).json());
    items.sort();
    let mut expected = vec![in_top.clone(), note];
    expected.sort();
    assert_eq!(items, expected);
    assert_eq!(keys(&get(&sim, &format!("/users/1/collections/{top}/items/top")).json()), vec![in_top]);
    assert_eq!(keys(&get(&sim, &format!("/users/1/collections/{sub}/items/top")).json()), vec![in_sub]);
    assert_eq!(get(&sim, "/users/1/collections/AAAAAAAA/items").status, 404);
}

#[test]
fn deleting_a_collection_deletes_subcollections_and_keeps_items() {
    let sim = sim();
    let top = create_collection(&sim, json!({"name": "Top"}));
    let sub = create_collection(&sim, json!({"name": "Sub", "parentCollection": top}));
    let item = create_item(&sim, json!({"itemType": "book", "collections": [top]}));
    let v = sim.library_version(LIB);
    let resp = send(
        &sim,
        "DELETE",
        &format!("/users/1/collections/{top}"),
        &[("If-Unmodified-Since-Version", &v.to_string())],
        None,
    );
    assert_eq!(resp.status, 204);
    assert!(sim.collection(LIB, &sub).is_none());
    assert_eq!(sim.item(LIB, &item).unwrap_or_default()["data"]["collections"], json!([]));
    let mut deleted: Vec<String> = get(&sim, &format!("/users/1/deleted?since={v}")).json()["collections"]
        .as_array()
        .map(|a| a.iter().filter_map(|k| k.as_str().map(str::to_string)).collect())
        .unwrap_or_default();
    deleted.sort();
    let mut expected = vec![top, sub];
    expected.sort();
    assert_eq!(deleted, expected);
}

#[test]
fn collection_validation_messages() {
    let sim = sim();
    let report = post(
        &sim,
        "collections",
        json!([{"name": ""}, {"name": "x", "parentCollection": "ZZZZZZZZ"}, {"parentCollection": false}, {"name": "ok", "color": "red"}]),
    )
    .json();
    assert_eq!(report["failed"]["0"]["message"], "Collection name cannot be empty");
    assert_eq!(report["failed"]["1"]["code"], 409);
    assert_eq!(report["failed"]["1"]["message"], "Parent collection ZZZZZZZZ not found");
    assert_eq!(report["failed"]["2"]["message"], "'name' property not provided");
    assert_eq!(report["failed"]["3"]["message"], "Invalid property 'color'");
}

#[test]
fn collection_put_patch_and_versions() {
    let sim = sim();
    let key = create_collection(&sim, json!({"name": "Old"}));
    let v = sim.library_version(LIB);
    let resp =
        send(&sim, "PATCH", &format!("/users/1/collections/{key}"), &[], Some(json!({"name": "New", "version": v})));
    assert_eq!(resp.status, 204);
    assert_eq!(sim.collection(LIB, &key).unwrap_or_default()["data"]["name"], "New");
    let resp =
        send(&sim, "PUT", &format!("/users/1/collections/{key}"), &[], Some(json!({"name": "Again", "version": v})));
    assert_eq!(resp.status, 412);
    let since = get(&sim, &format!("/users/1/collections?format=versions&since={v}")).json();
    assert_eq!(since, json!({ key: sim.library_version(LIB) }));
}

#[test]
fn tags_list_types_and_item_counts() {
    let sim = sim();
    create_item(&sim, json!({"itemType": "book", "tags": [{"tag": "climate"}, {"tag": "auto", "type": 1}]}));
    create_item(&sim, json!({"itemType": "book", "tags": [{"tag": "climate"}, {"tag": "crops"}]}));
    let resp = get(&sim, "/users/1/tags?sort=title");
    assert_eq!(resp.total(), 3);
    let tags = resp.json();
    let names: Vec<&str> =
        tags.as_array().map(|a| a.iter().filter_map(|t| t["tag"].as_str()).collect()).unwrap_or_default();
    assert_eq!(names, ["auto", "climate", "crops"]);
    assert_eq!(tags[0]["meta"]["type"], 1);
    assert_eq!(tags[1]["meta"]["numItems"], 2);
    assert_eq!(tags[1]["links"]["self"]["href"], "https://api.zotero.org/users/1/tags/climate");
    let by_count = get(&sim, "/users/1/tags?sort=numItems&direction=desc").json();
    assert_eq!(by_count[0]["tag"], "climate");
    // q with qmode=contains (default) and startswith.
    assert_eq!(get(&sim, "/users/1/tags?q=rop").total(), 1);
    assert_eq!(get(&sim, "/users/1/tags?q=rop&qmode=startswith").total(), 0);
    assert_eq!(get(&sim, "/users/1/tags?q=cli&qmode=startswith").total(), 1);
    assert_eq!(get(&sim, "/users/1/tags?tagType=1").total(), 1);
}

#[test]
fn tags_of_an_item_and_of_a_collection() {
    let sim = sim();
    let coll = create_collection(&sim, json!({"name": "C"}));
    let a = create_item(&sim, json!({"itemType": "book", "tags": [{"tag": "x"}, {"tag": "y"}], "collections": [coll]}));
    create_item(&sim, json!({"itemType": "book", "tags": [{"tag": "x"}, {"tag": "z"}]}));
    assert_eq!(get(&sim, &format!("/users/1/items/{a}/tags")).total(), 2);
    let in_coll = get(&sim, &format!("/users/1/collections/{coll}/tags")).json();
    let x = in_coll.as_array().and_then(|a| a.iter().find(|t| t["tag"] == "x")).cloned().unwrap_or_default();
    assert_eq!(x["meta"]["numItems"], 1, "counted within the collection");
    assert_eq!(get(&sim, "/users/1/items/tags?itemTag=z").total(), 2, "tags of the items tagged z: x and z");
}

#[test]
fn tags_since_uses_the_tags_own_version() {
    let sim = sim();
    create_item(&sim, json!({"itemType": "book", "tags": [{"tag": "foo"}]}));
    let v = sim.library_version(LIB);
    create_item(&sim, json!({"itemType": "book", "tags": [{"tag": "bar"}, {"tag": "foo"}]}));
    let tags = get(&sim, &format!("/users/1/tags?since={v}")).json();
    assert_eq!(tags.as_array().map(Vec::len), Some(1));
    assert_eq!(tags[0]["tag"], "bar");
}

#[test]
fn deleting_tags_needs_the_library_version_and_logs_them() {
    let sim = sim();
    let a = create_item(&sim, json!({"itemType": "book", "tags": [{"tag": "old"}, {"tag": "keep"}]}));
    let resp = send(&sim, "DELETE", "/users/1/tags?tag=old", &[], None);
    assert_eq!(resp.status, 428);
    let v = sim.library_version(LIB);
    let resp = send(&sim, "DELETE", "/users/1/tags?tag=old", &[("If-Unmodified-Since-Version", &v.to_string())], None);
    assert_eq!(resp.status, 204);
    assert_eq!(sim.item(LIB, &a).unwrap_or_default()["data"]["tags"], json!([{"tag": "keep"}]));
    assert_eq!(get(&sim, &format!("/users/1/deleted?since={v}")).json()["tags"], json!(["old"]));
}
