//! Bibliography feeds: `zotero_export_link` makes a secret URL, and `GET /feeds/<secret>.<ext>` serves what it
//! names, whole, to whoever has it (Overleaf, latexmk, Pandoc), with no sign-in.
//!
//! - a 250-item collection gives 250 entries in each format, under the items' own citation keys, and nothing of
//!   another collection, library, or the items' notes and attachments; from the library mirror and without one;
//! - `ETag` is the library version: `If-None-Match` gets a 304 for one request to Zotero, a change a new ETag;
//! - a revoked, expired or made-up link is the same bare 404; a link is fetched at most 120 times an hour;
//! - no answer names the Zotero key, a token or an internal address;
//! - a read-only grant cannot make a link; a group the key may only read can still be served.
//!
//! The feeds are parsed back by independent parsers (Python's bibtexparser and rispy, the CSL-JSON schema) in
//! the end-to-end suite, tests/e2e/feeds.test.mjs.

mod common;

use std::rc::Rc;

use common::*;
use serde_json::{json, Value};
use zotero_mcp_core::testing::ManualClock;
use zotero_mcp_server::app::App;
use zotero_mcp_server::platform::HttpResponse;
use zotero_sim::{LibraryRef, Simulator};

const LIB: LibraryRef = LibraryRef::User(DEMO_USER);
/// A Zotero key that would be given away if any answer named it.
const API_KEY: &str = "feedsTestApiKey0123456789";

struct Library {
    sim: Rc<Simulator>,
    app: App,
    clock: Rc<ManualClock>,
    thesis: String,
    other: String,
    chapter: String,
}

/// The demo library plus a collection "Thesis" of 250 items (a tenth with a `citationKey`, a tenth with a Better
/// BibTeX line in Extra, each with a note and half with an attachment), its subcollection "Chapter 2" of 10, and
/// "Other" of 20.
fn library(mirror: bool) -> Library {
    let sim = Rc::new(Simulator::demo_with(DEMO_USER, API_KEY));
    sim.add_demo_groups(API_KEY);
    let thesis = sim.insert_collection(LIB, json!({ "name": "Thesis" }));
    let chapter = sim.insert_collection(LIB, json!({ "name": "Chapter 2", "parentCollection": thesis }));
    let other = sim.insert_collection(LIB, json!({ "name": "Other" }));
    for i in 0..250 {
        let mut data = json!({
            "itemType": if i % 3 == 0 { "book" } else { "journalArticle" },
            "title": format!("Thesis source {i}: 50% of {{DNA}} & more"),
            "creators": [{ "creatorType": "author", "firstName": "Zoë", "lastName": format!("Müller{i}") }],
            "date": format!("{}", 1990 + i % 30), "collections": [thesis], "relations": {},
            "tags": if i % 7 == 0 { json!([{ "tag": "Core" }]) } else { json!([]) },
        });
        if i % 10 == 0 {
            data["citationKey"] = json!(format!("pinned{i}"));
        } else if i % 10 == 1 {
            data["extra"] = json!(format!("Citation Key: bbt{i}\nSome other line"));
        }
        let key = sim.insert_item(LIB, data);
        sim.insert_item(LIB, json!({ "itemType": "note", "parentItem": key, "note": "<p>read it</p>" }));
        if i % 2 == 0 {
            sim.insert_item(
                LIB,
                json!({ "itemType": "attachment", "linkMode": "linked_url", "parentItem": key,
                        "title": "Attachment title", "url": "https://example.org/a.pdf" }),
            );
        }
    }
    for i in 0..10 {
        sim.insert_item(
            LIB,
            json!({ "itemType": "journalArticle", "title": format!("Chapter two source {i}"),
                                     "creators": [], "collections": [chapter] }),
        );
    }
    for i in 0..20 {
        sim.insert_item(
            LIB,
            json!({ "itemType": "journalArticle", "title": format!("Unrelated source {i}"),
                                     "creators": [], "collections": [other] }),
        );
    }
    let mut app = app_with(&[("ZOTERO_API_KEY", API_KEY), ("ZOTERO_LIBRARY_ID", "1234567")]);
    let (platform, clock, _) = zotero_mcp_core::testing::memory_platform(1_800_000_000_000);
    app.platform.clock = platform.clock;
    app.platform.oauth_kv = platform.oauth_kv;
    app.platform.counters = platform.counters;
    app.platform.http = Rc::new(zotero_sim::InProcess(sim.clone()));
    if mirror {
        app.platform.mirror_db = Some(mirror_db());
    }
    Library { sim, app, clock, thesis, other, chapter }
}

async fn make_link(app: &App, arguments: Value) -> (String, Value) {
    let result = call_tool(app, "zotero_export_link", arguments).await;
    let out = ok(&result).clone();
    let url = out["url"].as_str().unwrap_or_else(|| panic!("a url: {out}")).to_owned();
    (url, out)
}

async fn get(app: &App, path: &str, headers: &[(&str, &str)]) -> HttpResponse {
    let mut request = http::Request::get(format!("http://127.0.0.1:8787{path}"));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    zotero_mcp_server::router::route(request.body(Vec::new()).expect("a request"), app).await
}

fn body(response: &HttpResponse) -> String {
    String::from_utf8(response.body().clone()).expect("UTF-8")
}

fn header<'a>(response: &'a HttpResponse, name: &str) -> &'a str {
    response.headers().get(name).and_then(|v| v.to_str().ok()).unwrap_or("")
}

/// The entries of a feed, by format: BibTeX and BibLaTeX entries start a line with `@`, RIS ends each with
/// `ER  -`, CSL-JSON is one array.
fn entries(format: &str, text: &str) -> usize {
    match format {
        "csljson" => serde_json::from_str::<Vec<Value>>(text).expect("a JSON array").len(),
        "ris" => text.lines().filter(|line| line.starts_with("ER  -")).count(),
        _ => text.lines().filter(|line| line.starts_with('@')).count(),
    }
}

#[tokio::test]
async fn a_collection_of_250_items_is_served_whole_under_its_items_citation_keys_in_every_format() {
    for mirror in [true, false] {
        let lib = library(mirror);
        for (format, content_type) in [
            ("bibtex", "application/x-bibtex; charset=utf-8"),
            ("biblatex", "application/x-bibtex; charset=utf-8"),
            ("csljson", "application/vnd.citationstyles.csl+json; charset=utf-8"),
            ("ris", "application/x-research-info-systems; charset=utf-8"),
        ] {
            let (url, out) = make_link(&lib.app, json!({ "collection": "Thesis", "format": format })).await;
            assert_eq!(out["links"][0]["collection"], lib.thesis.as_str(), "{out}");
            let extension = if format == "csljson" {
                ".json"
            } else if format == "ris" {
                ".ris"
            } else {
                ".bib"
            };
            assert!(url.starts_with("/feeds/") && url.ends_with(extension), "{url}");
            let response = get(&lib.app, &url, &[]).await;
            let text = body(&response);
            assert_eq!(response.status(), 200, "{format} (mirror: {mirror}): {text}");
            assert_eq!(header(&response, "content-type"), content_type);
            assert_eq!(header(&response, "cache-control"), "no-store");
            assert_eq!(entries(format, &text), 250, "{format} (mirror: {mirror})");
            for i in (0..250).step_by(10) {
                assert!(text.contains(&format!("pinned{i}")), "{format}: pinned{i}");
                assert!(text.contains(&format!("bbt{}", i + 1)), "{format}: bbt{}", i + 1);
            }
            for absent in ["Unrelated source", "Chapter two source", "read it", "Attachment title"] {
                assert!(!text.contains(absent), "{format} (mirror: {mirror}) serves {absent:?}");
            }
        }
        // With its subcollection: 260.
        let (url, _) = make_link(&lib.app, json!({ "collection": lib.thesis, "includeSubcollections": true })).await;
        let text = body(&get(&lib.app, &url, &[]).await);
        assert_eq!(entries("bibtex", &text), 260, "mirror: {mirror}");
        assert!(text.contains("Chapter two source 3"));
        assert!(!text.contains("Unrelated source"));
    }
}

#[tokio::test]
async fn generated_keys_are_unique_and_stay_when_an_unrelated_item_is_added() {
    let lib = library(true);
    let (url, _) = make_link(&lib.app, json!({ "collection": "Thesis" })).await;
    let keys = |text: &str| -> Vec<String> {
        text.lines()
            .filter_map(|line| line.strip_prefix('@'))
            .filter_map(|rest| rest.split_once('{').map(|(_, key)| key.trim_end_matches(',').to_owned()))
            .collect()
    };
    let before = keys(&body(&get(&lib.app, &url, &[]).await));
    let unique: std::collections::BTreeSet<&String> = before.iter().collect();
    assert_eq!(unique.len(), 250, "every key unique");
    sim_add_to(&lib, &lib.thesis, "An unrelated newcomer");
    let after = keys(&body(&get(&lib.app, &url, &[]).await));
    assert_eq!(after.len(), 251);
    for key in &before {
        assert!(after.contains(key), "{key} changed when an unrelated item was added");
    }
}

fn sim_add_to(lib: &Library, collection: &str, title: &str) -> String {
    lib.sim.insert_item(
        LIB,
        json!({ "itemType": "journalArticle", "title": title,
                "creators": [{ "creatorType": "author", "firstName": "Q", "lastName": "Newcomer" }],
                "date": "2031", "collections": [collection] }),
    )
}

#[tokio::test]
async fn an_unchanged_library_is_answered_304_for_one_request_and_a_change_gives_a_new_etag() {
    for mirror in [true, false] {
        let lib = library(mirror);
        let (url, _) = make_link(&lib.app, json!({ "collection": "Thesis", "format": "biblatex" })).await;
        let first = get(&lib.app, &url, &[]).await;
        let etag = header(&first, "etag").to_owned();
        assert_eq!(etag, format!("\"{}\"", lib.sim.library_version(LIB)));

        let before = lib.sim.requests().len();
        let again = get(&lib.app, &url, &[("if-none-match", &etag)]).await;
        assert_eq!(again.status(), 304);
        assert!(again.body().is_empty());
        assert_eq!(lib.sim.requests().len() - before, 1, "one freshness request (mirror: {mirror})");

        sim_add_to(&lib, &lib.thesis, "A newly added source");
        let changed = get(&lib.app, &url, &[("if-none-match", &etag)]).await;
        assert_eq!(changed.status(), 200);
        assert_ne!(header(&changed, "etag"), etag);
        assert!(body(&changed).contains("A newly added source"));
    }
}

#[tokio::test]
async fn a_revoked_an_expired_and_a_made_up_link_are_the_same_bare_404() {
    let lib = library(true);
    let (url, out) = make_link(&lib.app, json!({ "label": "Overleaf thesis" })).await;
    let (expiring, _) = make_link(&lib.app, json!({ "expiresInDays": 1, "format": "ris" })).await;
    assert_eq!(get(&lib.app, &url, &[]).await.status(), 200);
    let made_up = get(&lib.app, "/feeds/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA.bib", &[]).await;
    assert_eq!(made_up.status(), 404);

    // Listed without its secret; revoked by its id.
    let listed = call_tool(&lib.app, "zotero_export_link", json!({ "action": "list" })).await;
    let listed = ok(&listed).clone();
    assert_eq!(listed["links"].as_array().map(Vec::len), Some(2), "{listed}");
    let secret = url.trim_start_matches("/feeds/").trim_end_matches(".bib");
    assert!(!listed.to_string().contains(secret), "a listing never shows a secret");
    let id = out["links"][0]["id"].as_str().expect("an id");
    let revoked = call_tool(&lib.app, "zotero_export_link", json!({ "action": "revoke", "id": id })).await;
    assert_eq!(ok(&revoked)["links"][0]["label"], "Overleaf thesis");
    let gone = get(&lib.app, &url, &[]).await;
    assert_eq!((gone.status().as_u16(), body(&gone)), (404, body(&made_up)));

    // The same URL with another format's ending serves nothing either.
    let renamed = expiring.replace(".ris", ".bib");
    assert_eq!(get(&lib.app, &renamed, &[]).await.status(), 404);
    assert_eq!(get(&lib.app, &expiring, &[]).await.status(), 200);
    lib.clock.advance_secs(86_400);
    let expired = get(&lib.app, &expiring, &[]).await;
    assert_eq!((expired.status().as_u16(), body(&expired)), (404, body(&made_up)));
}

#[tokio::test]
async fn a_link_serves_only_what_it_names() {
    let lib = library(true);
    let (other, _) = make_link(&lib.app, json!({ "collection": lib.other })).await;
    let text = body(&get(&lib.app, &other, &[]).await);
    assert_eq!(entries("bibtex", &text), 20);
    assert!(!text.contains("Thesis source"));

    // A group's link serves the group, not the personal library; a collection of the personal library is not
    // found in the group.
    let (group, out) = make_link(&lib.app, json!({ "library": "groups/100001" })).await;
    assert_eq!(out["links"][0]["library"], "groups/100001");
    let text = body(&get(&lib.app, &group, &[]).await);
    assert_eq!(entries("bibtex", &text), 1, "{text}");
    assert!(text.contains("Folding intermediates seen by the lab"));
    let refused =
        call_tool(&lib.app, "zotero_export_link", json!({ "library": "groups/100001", "collection": lib.thesis }))
            .await;
    assert_eq!(refused["isError"], true, "{refused}");

    // A group the key may only read can be served: nothing in it changes.
    let (reading, _) = make_link(&lib.app, json!({ "library": "groups/100002", "format": "csljson" })).await;
    assert_eq!(entries("csljson", &body(&get(&lib.app, &reading, &[]).await)), 1);

    // A saved search serves its results.
    let (search, _) = make_link(&lib.app, json!({ "library": "groups/100001", "savedSearch": "Folding papers" })).await;
    assert_eq!(entries("bibtex", &body(&get(&lib.app, &search, &[]).await)), 1);
}

#[tokio::test]
async fn no_answer_names_the_zotero_key_a_token_or_an_internal_address() {
    let lib = library(true);
    let result = call_tool(&lib.app, "zotero_export_link", json!({ "collection": "Thesis" })).await;
    let (url, _) = make_link(&lib.app, json!({ "collection": lib.chapter })).await;
    let mut answers = vec![result.to_string()];
    for response in [get(&lib.app, &url, &[]).await, get(&lib.app, "/feeds/nothing.bib", &[]).await] {
        answers.push(body(&response));
        answers.push(format!("{:?}", response.headers()));
    }
    // A failing Zotero is answered with a fixed text too, a saved search's read included.
    let (search, _) = make_link(&lib.app, json!({ "library": "groups/100001", "savedSearch": "Folding papers" })).await;
    for url in [&url, &search] {
        lib.sim.fail_next(50, zotero_sim::Fault::Status { status: 500 });
        let failing = get(&lib.app, url, &[]).await;
        assert_eq!(failing.status(), 503);
        answers.push(body(&failing));
        lib.sim.clear_faults();
    }
    // Without a mirror, the saved search's own reads failing (after the library's version was read).
    let live = library(false);
    let (search, _) =
        make_link(&live.app, json!({ "library": "groups/100001", "savedSearch": "Folding papers" })).await;
    let fault = zotero_sim::FaultMatch {
        method: None,
        path_contains: Some("/groups/100001/items".into()),
        body_contains: None,
        skip: 1,
    };
    live.sim.fail_matching(50, fault, zotero_sim::Fault::Status { status: 500 });
    let failing = get(&live.app, &search, &[]).await;
    assert_eq!(failing.status(), 503);
    assert!(body(&failing).contains("could not be read just now"), "{}", body(&failing));
    answers.push(body(&failing));
    for answer in answers {
        for secret in
            [API_KEY, TEST_TOKEN, WRITE_TOKEN, "Bearer", "api.zotero.org", "users/1234567/items", "groups/100001"]
        {
            assert!(!answer.contains(secret), "{secret:?} in {answer}");
        }
    }
}

#[tokio::test]
async fn a_read_only_grant_cannot_make_a_link() {
    let lib = library(false);
    let session = zotero_mcp_server::call::Session::new(
        zotero_mcp_server::auth::Grant::read_only("owner"),
        lib.app.config.clone(),
        lib.app.platform.clone(),
    );
    let registry = zotero_mcp_server::tools::registry(&lib.app.config);
    let refused = registry.call_tool(&session, "zotero_export_link", json!({})).await.expect("the tool exists");
    assert_eq!(refused["isError"], true, "{refused}");
    assert!(error_text(&refused).contains("zotero:write"), "{}", error_text(&refused));
    let listed = call_tool(&lib.app, "zotero_export_link", json!({ "action": "list" })).await;
    assert_eq!(ok(&listed)["links"], json!([]), "nothing was made");
}

#[tokio::test]
async fn a_link_is_fetched_at_most_120_times_an_hour() {
    let lib = library(true);
    let (url, _) = make_link(&lib.app, json!({ "collection": lib.chapter })).await;
    for _ in 0..120 {
        assert_eq!(get(&lib.app, &url, &[("if-none-match", "*")]).await.status(), 304);
    }
    let refused = get(&lib.app, &url, &[]).await;
    assert_eq!(refused.status(), 429);
    assert!(header(&refused, "retry-after").parse::<u64>().is_ok_and(|secs| secs > 0 && secs <= 3600));
    lib.clock.advance_secs(3600);
    assert_eq!(get(&lib.app, &url, &[]).await.status(), 200);
}

#[tokio::test]
async fn a_library_of_several_mirror_pages_is_served_whole_once_filled_and_refused_whole_without_a_mirror() {
    for mirror in [true, false] {
        let lib = library(mirror);
        let big = lib.sim.insert_collection(LIB, json!({ "name": "Big" }));
        for i in 0..4100 {
            lib.sim.insert_item(
                LIB,
                json!({ "itemType": "journalArticle", "title": format!("Big source {i}"), "creators": [],
                        "collections": [big] }),
            );
        }
        let (url, _) = make_link(&lib.app, json!({ "collection": "Big", "format": "csljson" })).await;
        let mut answers = Vec::new();
        let served = loop {
            let response = get(&lib.app, &url, &[]).await;
            if response.status() != 503 || response.headers().get("retry-after").is_none() || answers.len() >= 10 {
                break response;
            }
            answers.push((header(&response, "retry-after").to_owned(), body(&response)));
        };
        if mirror {
            // The mirror fills call by call: until it is complete, the feed says to come back, never serves part.
            assert!(!answers.is_empty(), "a library of 4,500 items is not mirrored in one call");
            for (retry_after, text) in &answers {
                assert_eq!(retry_after, "300");
                assert!(text.contains("still copying the library"), "{text}");
            }
            assert_eq!(served.status(), 200, "{}", body(&served));
            let entries: Vec<Value> = serde_json::from_str(&body(&served)).expect("one JSON array");
            assert_eq!(entries.len(), 4100, "three pages of the mirror, each entry once");
            let ids: std::collections::BTreeSet<&str> = entries.iter().filter_map(|e| e["id"].as_str()).collect();
            assert_eq!(ids.len(), 4100);
        } else {
            assert!(answers.is_empty());
            assert_eq!(served.status(), 503);
            let text = body(&served);
            assert!(text.contains("4000") && text.contains("MIRROR_DB"), "{text}");
        }
    }
}

/// Saved searches of many kinds over the [`library`]: each narrowed (a tag, an item type, a collection) or not.
fn saved_searches(lib: &Library) -> Vec<(String, Value)> {
    let recursive = json!([{ "condition": "collection", "operator": "is", "value": lib.thesis },
                           { "condition": "recursive", "operator": "true", "value": "" }]);
    vec![
        ("books", json!([{ "condition": "itemType", "operator": "is", "value": "book" }])),
        ("thesis", json!([{ "condition": "collection", "operator": "is", "value": lib.thesis }])),
        ("thesis and below", recursive),
        ("titled", json!([{ "condition": "title", "operator": "contains", "value": "source 1" }])),
        (
            "any",
            json!([{ "condition": "creator", "operator": "contains", "value": "Müller12" },
                       { "condition": "title", "operator": "contains", "value": "Chapter two" },
                       { "condition": "joinMode", "operator": "any", "value": "" }]),
        ),
        ("notes say", json!([{ "condition": "note", "operator": "contains", "value": "read it" }])),
        (
            "old articles",
            json!([{ "condition": "itemType", "operator": "is", "value": "journalArticle" },
                                { "condition": "date", "operator": "isBefore", "value": "1995" },
                                { "condition": "noChildren", "operator": "true", "value": "" }]),
        ),
        (
            "core",
            json!([{ "condition": "tag", "operator": "is", "value": "core" },
                        { "condition": "itemType", "operator": "is", "value": "book" }]),
        ),
        ("nothing", json!([{ "condition": "tag", "operator": "is", "value": "no such tag" }])),
    ]
    .into_iter()
    .map(|(name, conditions)| (name.to_owned(), conditions))
    .collect()
}

#[tokio::test]
async fn a_saved_search_s_feed_from_the_mirror_is_zotero_s_own_for_one_request() {
    let live = library(false);
    let mirrored = library(true);
    for (name, conditions) in saved_searches(&live) {
        for lib in [&live, &mirrored] {
            // The same collections in both libraries are named by key: the two were built alike.
            let conditions = serde_json::to_string(&conditions).expect("JSON").replace(&live.thesis, &lib.thesis);
            let conditions: Value = serde_json::from_str(&conditions).expect("JSON");
            lib.sim.insert_search(LIB, json!({ "name": name, "conditions": conditions }));
        }
        let (live_url, _) = make_link(&live.app, json!({ "savedSearch": name, "format": "csljson" })).await;
        let (mirror_url, _) = make_link(&mirrored.app, json!({ "savedSearch": name, "format": "csljson" })).await;
        let from_zotero = get(&live.app, &live_url, &[]).await;
        // Once to fill the mirror, then again: one request to Zotero (the mirror's check) decides the search.
        get(&mirrored.app, &mirror_url, &[]).await;
        let before = mirrored.sim.requests().len();
        let from_mirror = get(&mirrored.app, &mirror_url, &[]).await;
        assert_eq!(mirrored.sim.requests().len() - before, 1, "{name}: {:?}", &mirrored.sim.requests()[before..]);
        assert_eq!(from_zotero.status(), 200, "{name}: {}", body(&from_zotero));
        let titles = |response: &HttpResponse| -> std::collections::BTreeSet<String> {
            let entries: Vec<Value> = serde_json::from_str(&body(response)).expect("one JSON array");
            entries.iter().filter_map(|e| e["title"].as_str().map(str::to_owned)).collect()
        };
        let (zotero_titles, mirror_titles) = (titles(&from_zotero), titles(&from_mirror));
        assert_eq!(zotero_titles.is_empty(), name == "nothing", "{name}: {zotero_titles:?}");
        assert_eq!(mirror_titles, zotero_titles, "{name}");
    }
}

#[tokio::test]
async fn without_a_mirror_a_collection_tree_too_large_to_read_is_refused_not_served_in_part() {
    let lib = library(false);
    for i in 0..2000 {
        lib.sim.insert_collection(LIB, json!({ "name": format!("Shelf {i}") }));
    }
    let (url, _) = make_link(&lib.app, json!({ "collection": lib.thesis, "includeSubcollections": true })).await;
    let refused = get(&lib.app, &url, &[]).await;
    assert_eq!(refused.status(), 503, "{}", body(&refused));
    assert!(body(&refused).contains("more than 2000 collections"), "{}", body(&refused));
    // Without its subcollections the collection is still served.
    let (url, _) = make_link(&lib.app, json!({ "collection": lib.thesis })).await;
    assert_eq!(entries("bibtex", &body(&get(&lib.app, &url, &[]).await)), 250);
}
