//! Full-text content, per "Zotero Web API Full-Text Content Requests".

mod common;

use common::*;
use serde_json::json;

fn attachment(sim: &zotero_sim::Simulator) -> String {
    let parent = create_item(sim, json!({"itemType": "book"}));
    create_item(
        sim,
        json!({"itemType": "attachment", "linkMode": "imported_file", "parentItem": parent,
               "contentType": "application/pdf", "filename": "x.pdf", "md5": "9ac415108d61f7154b9ac5546e7d6157", "mtime": 1}),
    )
}

#[test]
fn put_then_get_item_fulltext_with_its_version() {
    let sim = sim();
    let key = attachment(&sim);
    let missing = get(&sim, &format!("/users/1/items/{key}/fulltext"));
    assert_eq!(missing.status, 404);
    assert!(missing.header("last-modified-version").is_none());
    let before = sim.library_version(LIB);
    let resp = send(
        &sim,
        "PUT",
        &format!("/users/1/items/{key}/fulltext"),
        &[],
        Some(
            json!({"content": "Here is some full-text content", "indexedPages": 50, "totalPages": 50, "invalidParam": 1}),
        ),
    );
    assert_eq!(resp.status, 204);
    let version = resp.version();
    assert!(version > before);
    let got = get(&sim, &format!("/users/1/items/{key}/fulltext"));
    assert_eq!(got.status, 200);
    assert_eq!(got.version(), version);
    assert_eq!(got.json(), json!({"content": "Here is some full-text content", "indexedPages": 50, "totalPages": 50}));
    // The item itself is not modified by storing its full text.
    assert!(sim.item(LIB, &key).unwrap_or_default()["version"].as_u64().unwrap_or(0) < version);
}

#[test]
fn fulltext_put_requires_json_content_type() {
    let sim = sim();
    let key = attachment(&sim);
    let resp = send(
        &sim,
        "PUT",
        &format!("/users/1/items/{key}/fulltext"),
        &[("Content-Type", "text/plain")],
        Some(json!({"content": "x"})),
    );
    assert_eq!(resp.status, 400);
    assert_eq!(resp.text(), "Content-Type must be application/json");
}

#[test]
fn fulltext_only_for_attachments() {
    let sim = sim();
    let book = create_item(&sim, json!({"itemType": "book"}));
    let resp = send(&sim, "PUT", &format!("/users/1/items/{book}/fulltext"), &[], Some(json!({"content": "x"})));
    assert_eq!(resp.status, 404, "the API answers 404 for an item that is not an attachment");
    assert_eq!(get(&sim, "/users/1/items/AAAAAAAA/fulltext").status, 404);
}

#[test]
fn fulltext_since_lists_new_content_versions() {
    let sim = sim();
    let a = attachment(&sim);
    let b = attachment(&sim);
    send(&sim, "PUT", &format!("/users/1/items/{a}/fulltext"), &[], Some(json!({"content": "a"})));
    let v = sim.library_version(LIB);
    let resp = send(
        &sim,
        "PUT",
        &format!("/users/1/items/{b}/fulltext"),
        &[],
        Some(json!({"content": "b", "indexedChars": 1, "totalChars": 1})),
    );
    let listing = get(&sim, &format!("/users/1/fulltext?since={v}"));
    assert_eq!(listing.json(), json!({ b.clone(): resp.version() }));
    assert_eq!(listing.version(), sim.library_version(LIB));
    assert_eq!(get(&sim, "/users/1/fulltext?since=0").json().as_object().map(|o| o.len()), Some(2));
    assert_eq!(get(&sim, &format!("/users/1/items/{b}/fulltext")).json()["indexedChars"], 1);
}

#[test]
fn deleting_an_attachment_drops_its_fulltext() {
    let sim = sim();
    let a = attachment(&sim);
    sim.set_fulltext(LIB, &a, "text", None, None);
    let v = sim.library_version(LIB).to_string();
    send(&sim, "DELETE", &format!("/users/1/items/{a}"), &[("If-Unmodified-Since-Version", &v)], None);
    assert!(sim.fulltext(LIB, &a).is_none());
}
