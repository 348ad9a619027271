//! Authentication ("Basics: Authentication"), keys, groups, and the type/field endpoints ("Item Types/Fields").

mod common;

use common::*;
use serde_json::json;
use zotero_sim::{LibraryRef, Simulator};

fn request(method: &str, path: &str, headers: &[(&str, &str)]) -> http::Request<Vec<u8>> {
    let mut b = http::Request::builder().method(method).uri(path);
    for (k, v) in headers {
        b = b.header(*k, *v);
    }
    b.body(Vec::new()).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn unknown_key_is_403_invalid_key() {
    let sim = sim();
    let resp = raw(&sim, request("GET", "/users/1/items", &[("Zotero-API-Key", "nope")]));
    assert_eq!(resp.status, 403);
    assert_eq!(resp.text(), "Invalid key");
}

#[test]
fn no_key_reads_are_forbidden_and_writes_need_a_key() {
    let sim = sim();
    let resp = raw(&sim, request("GET", "/users/1/items", &[]));
    assert_eq!(resp.status, 403);
    let resp = raw(&sim, request("POST", "/users/1/items", &[]));
    assert_eq!(resp.status, 403);
    assert_eq!(resp.text(), "An API key is required for write requests.");
}

#[test]
fn bearer_and_query_keys_are_accepted() {
    let sim = sim();
    assert_eq!(raw(&sim, request("GET", "/users/1/items", &[("Authorization", "Bearer testkey")])).status, 200);
    assert_eq!(raw(&sim, request("GET", "/users/1/items?key=testkey", &[])).status, 200);
    let differ = raw(&sim, request("GET", "/users/1/items?key=other", &[("Zotero-API-Key", "testkey")]));
    assert_eq!(differ.status, 400);
    assert_eq!(raw(&sim, request("GET", "/users/1/items", &[("Authorization", "Bearer a-b")])).status, 400);
}

#[test]
fn key_of_another_user_cannot_read() {
    let sim = sim();
    sim.add_user(2, "other", true);
    let resp = raw(&sim, request("GET", "/users/2/items", &[("Zotero-API-Key", KEY)]));
    assert_eq!(resp.status, 403);
    assert_eq!(raw(&sim, request("GET", "/users/99/items", &[("Zotero-API-Key", KEY)])).status, 404);
}

#[test]
fn keys_current_describes_access() {
    let sim = sim();
    sim.add_group(42, KEY, false);
    let resp = get(&sim, "/keys/current");
    assert_eq!(resp.status, 200);
    let body = resp.json();
    assert_eq!(body["key"], KEY);
    assert_eq!(body["userID"], 1);
    assert_eq!(body["access"]["user"], json!({"library": true, "files": true, "notes": true, "write": true}));
    assert_eq!(body["access"]["groups"]["42"], json!({"library": true, "write": false}));
    assert_eq!(raw(&sim, request("GET", "/keys/current", &[])).status, 403);
    assert_eq!(raw(&sim, request("GET", "/keys/nokey", &[])).status, 404);
}

/// A key made for groups: no `user` block, and `groups.all` in place of the groups one by one; it reaches its
/// user's groups with `all`'s rights and not the user library.
#[test]
fn a_key_for_all_groups_has_no_user_block_and_reaches_every_group_of_its_user() {
    let sim = sim();
    sim.add_group(42, KEY, false);
    sim.set_key_scope(KEY, false, Some(true));
    let body = get(&sim, "/keys/current").json();
    assert!(body["access"].get("user").is_none(), "{body}");
    assert_eq!(body["access"]["groups"], json!({ "all": { "library": true, "write": true } }));
    assert_eq!(get(&sim, "/users/1/items").status, 403);
    assert_eq!(get(&sim, "/groups/42/items").status, 200);
    let write = http::Request::builder()
        .method("POST")
        .uri("/groups/42/items")
        .header("Zotero-API-Key", KEY)
        .body(br#"[{"itemType": "note", "note": "x"}]"#.to_vec())
        .unwrap();
    assert_eq!(raw(&sim, write).json()["success"]["0"].as_str().map(str::len), Some(8), "`all` gives write");
    assert_eq!(get(&sim, "/users/1/groups").json().as_array().map(Vec::len), Some(1));
}

#[test]
fn group_libraries_have_their_own_versions_and_permissions() {
    let sim = sim();
    sim.add_group(42, KEY, false);
    let group = LibraryRef::Group(42);
    let key = sim.insert_item(group, json!({"itemType": "book", "title": "Group book"}));
    let resp = get(&sim, "/groups/42/items");
    assert_eq!(resp.status, 200);
    assert_eq!(keys(&resp.json()), vec![key.clone()]);
    assert_eq!(resp.json()[0]["library"]["type"], "group");
    assert_eq!(resp.version(), sim.library_version(group));
    let write = send(&sim, "POST", "/groups/42/items", &[], Some(json!([{"itemType": "book"}])));
    assert_eq!(write.status, 403);
    assert_eq!(write.text(), "Write access denied");
    let groups = get(&sim, "/users/1/groups").json();
    assert_eq!(groups[0]["id"], 42);
    assert_eq!(get(&sim, "/groups/7/items").status, 404);
}

#[test]
#[should_panic(expected = "unknown")]
fn add_group_needs_an_existing_key() {
    let sim = Simulator::new();
    sim.add_group(1, "missing", true);
}

#[test]
fn other_api_versions_are_not_implemented() {
    let sim = sim();
    let resp = raw(&sim, request("GET", "/users/1/items", &[("Zotero-API-Key", KEY), ("Zotero-API-Version", "2")]));
    assert_eq!(resp.status, 501);
    let ok = raw(&sim, request("GET", "/users/1/items", &[("Zotero-API-Key", KEY)]));
    assert_eq!(ok.header("zotero-api-version").as_deref(), Some("3"));
}

#[test]
fn item_templates_follow_the_schema() {
    let sim = sim();
    let book = get(&sim, "/items/new?itemType=book").json();
    assert_eq!(book["itemType"], "book");
    assert_eq!(book["creators"], json!([{"creatorType": "author", "firstName": "", "lastName": ""}]));
    assert_eq!(book["ISBN"], "");
    assert_eq!(book["tags"], json!([]));
    assert_eq!(book["relations"], json!({}));
    let att = get(&sim, "/items/new?itemType=attachment&linkMode=imported_file").json();
    assert_eq!(att["linkMode"], "imported_file");
    assert!(att.get("url").is_none());
    assert_eq!(att["md5"], serde_json::Value::Null);
    let link = get(&sim, "/items/new?itemType=attachment&linkMode=linked_url").json();
    assert_eq!(link["url"], "");
    assert_eq!(get(&sim, "/items/new?itemType=attachment").text(), "linkMode required for itemType=attachment");
    assert_eq!(get(&sim, "/items/new?itemType=spaceship").status, 400);
    assert_eq!(get(&sim, "/items/new").text(), "'itemType' not provided");
    // A template posted back as it is creates an item (the single empty creator is ignored).
    let report = post(&sim, "items", json!([book])).json();
    let key = report["success"]["0"].as_str().unwrap_or_default().to_string();
    assert_eq!(sim.item(LIB, &key).unwrap_or_default()["data"]["creators"], json!([]));
}

#[test]
fn type_and_field_listings() {
    let sim = sim();
    let types = get(&sim, "/itemTypes").json();
    let names: Vec<&str> =
        types.as_array().map(|a| a.iter().filter_map(|t| t["itemType"].as_str()).collect()).unwrap_or_default();
    for t in [
        "journalArticle",
        "book",
        "bookSection",
        "conferencePaper",
        "preprint",
        "thesis",
        "report",
        "webpage",
        "attachment",
        "note",
    ] {
        assert!(names.contains(&t), "{t}");
    }
    let fields = get(&sim, "/itemTypeFields?itemType=journalArticle").json();
    let first = &fields[0];
    assert_eq!(first["field"], "title");
    assert_eq!(first["localized"], "Title");
    let creators = get(&sim, "/itemTypeCreatorTypes?itemType=thesis").json();
    assert_eq!(creators[0]["creatorType"], "author");
    assert_eq!(get(&sim, "/itemTypeCreatorTypes?itemType=note").json(), json!([]));
    assert_eq!(get(&sim, "/itemTypeFields?itemType=nope").text(), "Invalid item type 'nope'");
    assert!(get(&sim, "/itemFields").json().as_array().is_some_and(|a| a.len() > 100));
}

#[test]
fn field_sets_match_zotero_schema_per_type() {
    let sim = sim();
    // Fields the schema gives each type (spot checks of base-field mappings).
    for (item_type, field) in [
        ("bookSection", "bookTitle"),
        ("conferencePaper", "proceedingsTitle"),
        ("preprint", "repository"),
        ("thesis", "university"),
        ("report", "institution"),
        ("webpage", "websiteTitle"),
    ] {
        let report = post(&sim, "items", json!([{ "itemType": item_type, field: "x" }])).json();
        assert!(report["success"]["0"].is_string(), "{item_type}.{field}: {report}");
    }
    let report = post(&sim, "items", json!([{"itemType": "webpage", "publicationTitle": "x"}])).json();
    assert_eq!(report["failed"]["0"]["message"], "'publicationTitle' is not a valid field for type 'webpage'");
}
