//! Synthetic libraries (`Simulator::synthetic`, `add_synthetic`): deterministic for a seed, with the promised
//! contents, and served with Zotero's sync semantics (`since`, `format=versions`, `If-Modified-Since-Version`,
//! `/deleted`, paging headers) at a size where the demo's few dozen items would hide mistakes.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

use common::{get, send, sim, LIB, USER};
use serde_json::Value;
use zotero_sim::Simulator;

fn synthetic(n: usize, seed: u64) -> (Simulator, zotero_sim::synthetic::Counts) {
    let s = sim();
    let counts = s.add_synthetic(LIB, n, seed).unwrap_or_else(|e| panic!("{e}"));
    (s, counts)
}

#[test]
fn the_same_seed_gives_the_same_library_and_another_seed_another() {
    let (a, _) = synthetic(600, 11);
    let (b, _) = synthetic(600, 11);
    let (c, _) = synthetic(600, 12);
    let (items_a, items_b, items_c) = (a.items(LIB), b.items(LIB), c.items(LIB));
    assert_eq!(serde_json::to_string(&items_a).ok(), serde_json::to_string(&items_b).ok());
    assert_eq!(a.collections(LIB), b.collections(LIB));
    let keys = |items: &[Value]| {
        items.iter().map(|i| i["key"].as_str().unwrap_or_default().to_string()).collect::<BTreeSet<_>>()
    };
    assert_eq!(keys(&items_a), keys(&items_b));
    assert!(keys(&items_a).is_disjoint(&keys(&items_c)), "another seed makes other keys");
    let titles = |items: &[Value]| items.iter().map(|i| i["data"]["title"].clone()).collect::<Vec<_>>();
    assert_ne!(titles(&items_a), titles(&items_c));
    assert_eq!(a.library_version(LIB), c.library_version(LIB), "the version counts batches, not data");
}

#[test]
fn a_library_holds_what_its_size_promises() {
    let n = 2_000;
    let (s, counts) = synthetic(n, 3);
    let items = s.items(LIB);
    let by_type = |t: &str| items.iter().filter(|i| i["data"]["itemType"] == t).count();
    let top: Vec<&Value> = items.iter().filter(|i| i["data"].get("parentItem").is_none()).collect();
    assert_eq!(top.len(), n);
    assert_eq!(counts.top_level, n);
    assert!(by_type("journalArticle") > n * 7 / 10, "mostly articles: {}", by_type("journalArticle"));
    assert!(by_type("book") > 0 && by_type("conferencePaper") > 0);
    assert_eq!(by_type("note"), n / 40);
    assert_eq!(by_type("attachment"), n / 25);
    assert_eq!((counts.notes, counts.attachments), (n / 40, n / 25));

    // Every top-level item is complete enough to be a real reference.
    for item in &top {
        let data = &item["data"];
        let creators = data["creators"].as_array().map_or(0, Vec::len);
        assert!((1..=4).contains(&creators), "{data}");
        assert!(!data["title"].as_str().unwrap_or_default().is_empty());
        assert!(!data["date"].as_str().unwrap_or_default().is_empty());
        assert!(!data["abstractNote"].as_str().unwrap_or_default().is_empty());
        assert!(data["DOI"].as_str().is_some_and(|d| d.starts_with("10.")), "a DOI: {data}");
    }
    let citation_keys =
        top.iter().filter(|i| i["data"]["extra"].as_str().is_some_and(|e| e.starts_with("Citation Key: "))).count();
    assert!(citation_keys > n / 10 && citation_keys < n / 2, "{citation_keys}");

    // About 2% near-duplicates: the same DOI, a title differing only in case and punctuation, far apart.
    let mut by_doi: BTreeMap<String, Vec<&Value>> = BTreeMap::new();
    for item in &top {
        if let Some(doi) = item["data"]["DOI"].as_str().filter(|d| !d.is_empty()) {
            by_doi.entry(doi.to_string()).or_default().push(item);
        }
    }
    let pairs: Vec<&Vec<&Value>> = by_doi.values().filter(|v| v.len() > 1).collect();
    assert!(pairs.iter().all(|p| p.len() == 2));
    assert_eq!(pairs.len(), counts.duplicate_pairs);
    assert!(counts.duplicate_pairs.abs_diff(n / 50) <= 1, "about 2%: {counts:?}");
    let fold = |t: &str| t.to_lowercase().chars().filter(|c| c.is_alphanumeric()).collect::<String>();
    for pair in &pairs {
        let (a, b) = (pair[0]["data"]["title"].as_str().unwrap_or(""), pair[1]["data"]["title"].as_str().unwrap_or(""));
        assert_ne!(a, b);
        assert_eq!(fold(a), fold(b));
        let versions = (pair[0]["version"].as_u64().unwrap_or(0), pair[1]["version"].as_u64().unwrap_or(0));
        assert!(versions.0.abs_diff(versions.1) >= 10, "written far apart: {versions:?}");
    }

    // A tag for every five items, shared so that counts differ; a collection for every fifty, some nested.
    let tags = get(&s, &format!("/users/{USER}/tags?limit=100"));
    assert_eq!(tags.total() as usize, n / 5);
    assert_eq!(counts.tags, n / 5);
    let counts_seen: BTreeSet<u64> =
        tags.json().as_array().into_iter().flatten().filter_map(|t| t["meta"]["numItems"].as_u64()).collect();
    assert!(counts_seen.len() > 3, "tag counts vary: {counts_seen:?}");
    let collections = s.collections(LIB);
    assert_eq!(collections.len(), n / 50);
    assert!(collections.iter().any(|c| c["data"]["parentCollection"].is_string()), "some nested");
    assert!(collections.iter().all(|c| c["meta"]["numItems"].as_u64().unwrap_or(0) > 0), "every one used");
}

/// The generator stores records directly, for speed: every one must be what the API would store for its JSON.
#[test]
fn generated_objects_pass_the_api_validation() {
    let (s, _) = synthetic(400, 17);
    let fresh = sim();
    let strip = |v: &Value| {
        let mut data = v["data"].as_object().cloned().unwrap_or_default();
        for name in ["version", "dateAdded", "dateModified"] {
            data.remove(name);
        }
        data
    };
    // A key-based create says version 0, as a syncing client does.
    let as_new = |v: &Value| {
        let mut data = strip(v);
        data.insert("version".into(), serde_json::json!(0));
        Value::Object(data)
    };
    let mut pending: Vec<Value> = s.collections(LIB).iter().map(as_new).collect();
    let mut made: BTreeSet<String> = BTreeSet::new();
    while !pending.is_empty() {
        let (ready, rest): (Vec<Value>, Vec<Value>) =
            pending.into_iter().partition(|c| c["parentCollection"].as_str().is_none_or(|p| made.contains(p)));
        assert!(!ready.is_empty(), "a collection cycle");
        for chunk in ready.chunks(50) {
            let r = common::post(&fresh, "collections", Value::Array(chunk.to_vec()));
            assert_eq!(r.json()["failed"], serde_json::json!({}), "{}", r.text());
        }
        made.extend(ready.iter().filter_map(|c| c["key"].as_str().map(str::to_string)));
        pending = rest;
    }
    let items = s.items(LIB);
    let (top, children): (Vec<&Value>, Vec<&Value>) = items.iter().partition(|i| i["data"].get("parentItem").is_none());
    for group in [top, children] {
        let objects: Vec<Value> = group.iter().map(|i| as_new(i)).collect();
        for chunk in objects.chunks(50) {
            let r = common::post(&fresh, "items", Value::Array(chunk.to_vec()));
            assert_eq!(r.json()["failed"], serde_json::json!({}), "{}", r.text());
        }
    }
    for item in &items {
        let key = item["key"].as_str().unwrap_or_default();
        let again = fresh.item(LIB, key).unwrap_or_else(|| panic!("{key} not written"));
        assert_eq!(strip(&again), strip(item), "{key} reads back as written");
        assert_eq!(again["meta"], item["meta"], "{key}");
    }
}

#[test]
fn versions_and_dates_follow_the_modelled_batches() {
    let (s, counts) = synthetic(1_000, 5);
    let version = s.library_version(LIB);
    assert_eq!(version, counts.version);
    assert_eq!(version, 1 + 1_000 / 50, "one write for the collections, one per 50 items");
    let items = s.items(LIB);
    let mut by_version: Vec<(u64, String)> = items
        .iter()
        .map(|i| (i["version"].as_u64().unwrap_or(0), i["data"]["dateModified"].as_str().unwrap_or("").to_string()))
        .collect();
    by_version.sort();
    for w in by_version.windows(2) {
        if w[0].0 < w[1].0 {
            assert!(w[0].1 < w[1].1, "a later version is modified later: {w:?}");
        }
    }
    let first = &by_version[0].1;
    let last = &by_version[by_version.len() - 1].1;
    assert!(first[..4] < last[..4], "spread over years: {first} .. {last}");
}

#[test]
fn since_versions_304_and_deleted_after_writes_and_deletes() {
    let (s, _) = synthetic(2_000, 9);
    let v0 = s.library_version(LIB);
    let path = |p: &str| format!("/users/{USER}{p}");

    // The last batch of items, all at once as versions: not paged, whatever the size.
    let latest = get(&s, &path(&format!("/items?since={}&format=versions", v0 - 1)));
    assert_eq!(latest.status, 200);
    let map = latest.json();
    let map = map.as_object().cloned().unwrap_or_default();
    assert!(map.len() >= 50 && map.values().all(|v| v.as_u64() == Some(v0)), "{}", map.len());
    assert_eq!(latest.total() as usize, map.len());
    let all_versions = get(&s, &path("/items?since=0&format=versions")).json();
    assert_eq!(all_versions.as_object().map_or(0, |m| m.len()), 2_000 + 2_000 / 40 + 2_000 / 25);

    // Nothing changed since v0: 304 with no body on every multi-object read.
    let v = v0.to_string();
    for p in ["/items", "/items/top", "/collections", "/searches", "/tags"] {
        let r = send(&s, "GET", &path(p), &[("If-Modified-Since-Version", &v)], None);
        assert_eq!(r.status, 304, "{p}");
        assert!(r.body.is_empty());
    }

    // A write and deletes.
    let some: Vec<String> =
        get(&s, &path("/items/top?format=keys&limit=3")).text().lines().map(str::to_string).collect();
    let coll = get(&s, &path("/collections?format=keys&limit=1")).text().trim().to_string();
    let tag = get(&s, &path("/tags?limit=1")).json()[0]["tag"].as_str().unwrap_or_default().to_string();
    let r = send(
        &s,
        "PATCH",
        &path(&format!("/items/{}", some[0])),
        &[("If-Unmodified-Since-Version", &v)],
        Some(serde_json::json!({"title": "Edited"})),
    );
    assert_eq!(r.status, 204, "{}", r.text());
    let v1 = s.library_version(LIB);
    let r = send(
        &s,
        "DELETE",
        &path(&format!("/items?itemKey={}", some[1..].join(","))),
        &[("If-Unmodified-Since-Version", &v1.to_string())],
        None,
    );
    assert_eq!(r.status, 204, "{}", r.text());
    let v2 = s.library_version(LIB);
    let r = send(
        &s,
        "DELETE",
        &path(&format!("/collections?collectionKey={coll}")),
        &[("If-Unmodified-Since-Version", &v2.to_string())],
        None,
    );
    assert_eq!(r.status, 204, "{}", r.text());
    let v3 = s.library_version(LIB);
    let encoded: String = form_urlencoded::byte_serialize(tag.as_bytes()).collect();
    let r = send(
        &s,
        "DELETE",
        &path(&format!("/tags?tag={encoded}")),
        &[("If-Unmodified-Since-Version", &v3.to_string())],
        None,
    );
    assert_eq!(r.status, 204, "{}", r.text());
    let v4 = s.library_version(LIB);
    assert!(v0 < v1 && v1 < v2 && v2 < v3 && v3 < v4);

    let changed = get(&s, &path(&format!("/items?since={v0}&format=versions"))).json();
    let changed = changed.as_object().cloned().unwrap_or_default();
    assert!(changed.contains_key(&some[0]), "the edited item");
    assert!(!changed.contains_key(&some[1]), "deleted items are in /deleted, not here");
    let top = get(&s, &path(&format!("/items/top?since={v0}&format=keys"))).text();
    assert!(top.lines().any(|k| k == some[0]));

    let deleted = get(&s, &path(&format!("/deleted?since={v0}")));
    assert_eq!(deleted.version(), v4);
    let d = deleted.json();
    let listed = |kind: &str| {
        d[kind].as_array().into_iter().flatten().filter_map(Value::as_str).map(str::to_string).collect::<Vec<_>>()
    };
    assert!(some[1..].iter().all(|k| listed("items").contains(k)), "{d}");
    assert_eq!(listed("collections"), vec![coll]);
    assert_eq!(listed("tags"), vec![tag]);
    let later = get(&s, &path(&format!("/deleted?since={v3}"))).json();
    assert_eq!(later["items"], serde_json::json!([]));
    assert_eq!(later["collections"], serde_json::json!([]));

    // The old version now sees a change; the new one does not.
    let r = send(&s, "GET", &path("/items"), &[("If-Modified-Since-Version", &v)], None);
    assert_eq!(r.status, 200);
    let r = send(&s, "GET", &path("/items"), &[("If-Modified-Since-Version", &v4.to_string())], None);
    assert_eq!(r.status, 304);
}

#[test]
fn walking_the_pages_of_a_large_library_returns_every_item_once() {
    let (s, _) = synthetic(2_000, 21);
    let mut url = format!("https://api.zotero.org/users/{USER}/items/top?limit=100");
    let mut seen: Vec<String> = Vec::new();
    let mut pages = 0;
    loop {
        let path = url.trim_start_matches("https://api.zotero.org").to_string();
        let r = get(&s, &path);
        assert_eq!(r.status, 200);
        assert_eq!(r.total(), 2_000);
        pages += 1;
        seen.extend(common::keys(&r.json()));
        let link = r.header("link").unwrap_or_default();
        if pages == 1 {
            assert!(link.contains("start=1900>; rel=\"last\""), "{link}");
        }
        let next = link
            .split(", ")
            .find(|l| l.ends_with("rel=\"next\""))
            .map(|l| l.trim_start_matches('<').split('>').next().unwrap_or_default().to_string());
        match next {
            Some(n) => url = n,
            None => break,
        }
    }
    assert_eq!(pages, 20);
    let unique: BTreeSet<&String> = seen.iter().collect();
    assert_eq!((seen.len(), unique.len()), (2_000, 2_000));
}

#[test]
fn twenty_thousand_items_generate_quickly_even_in_a_debug_build() {
    let started = Instant::now();
    let s = Simulator::synthetic(20_000, 1);
    let took = started.elapsed();
    assert!(took.as_secs_f64() < 2.0, "generating 20,000 items took {took:?}");
    let r = get(&s, &format!("/users/{}/items/top?limit=1", zotero_sim::DEMO_USER_ID));
    assert_eq!(r.status, 403, "the synthetic library keeps the demo's key, not the tests' one");
}

/// Listings read counts, relations and the default order from an index kept per state of the library: after
/// writes, trashing and relating, every listed object must still be what reading it alone shows, and the
/// index's shortcuts must select what the general filter selects.
#[test]
fn listings_agree_with_single_reads_and_the_general_path_after_changes() {
    let (s, _) = synthetic(1_500, 4);
    let path = |p: &str| format!("/users/{USER}{p}");
    let keys: Vec<String> =
        get(&s, &path("/items/top?format=keys&limit=6")).text().lines().map(str::to_string).collect();
    let v = s.library_version(LIB).to_string();
    let uri = |k: &str| format!("http://zotero.org/users/{USER}/items/{k}");
    let r = send(
        &s,
        "PATCH",
        &path(&format!("/items/{}", keys[0])),
        &[("If-Unmodified-Since-Version", &v)],
        Some(serde_json::json!({"relations": {"dc:relation": uri(&keys[1])}})),
    );
    assert_eq!(r.status, 204, "{}", r.text());
    let v = s.library_version(LIB).to_string();
    let r = send(
        &s,
        "PATCH",
        &path(&format!("/items/{}", keys[2])),
        &[("If-Unmodified-Since-Version", &v)],
        Some(serde_json::json!({"deleted": 1})),
    );
    assert_eq!(r.status, 204, "{}", r.text());
    common::create_item(&s, serde_json::json!({"itemType": "note", "parentItem": keys[3], "note": "<p>More</p>"}));
    let coll = get(&s, &path("/collections?format=keys&limit=1")).text().trim().to_string();
    common::create_item(&s, serde_json::json!({"itemType": "book", "title": "Filed", "collections": [coll]}));

    for listing in ["/items?limit=100", "/items/top?limit=100&start=700", "/items?limit=100&direction=asc&start=1400"] {
        let fast = get(&s, &path(listing));
        let general = get(&s, &path(&format!("{listing}&itemType=-annotation")));
        assert_eq!(fast.total(), general.total(), "{listing}");
        assert_eq!(common::keys(&fast.json()), common::keys(&general.json()), "{listing}");
        for item in fast.json().as_array().into_iter().flatten() {
            let key = item["key"].as_str().unwrap_or_default();
            assert_eq!(Some(item), s.item(LIB, key).as_ref(), "{listing}: {key}");
        }
    }
    let top = common::keys(&get(&s, &path("/items/top?limit=100")).json());
    assert!(top.contains(&keys[0]) && !top.contains(&keys[2]), "edited first, trashed gone");
    let related = get(&s, &path(&format!("/items?itemKey={}", keys[1]))).json();
    assert_eq!(related[0]["data"]["relations"]["dc:relation"], serde_json::json!(uri(&keys[0])));
    let parent = get(&s, &path("/items/top?limit=100")).json();
    let parent = parent.as_array().into_iter().flatten().find(|i| i["key"] == keys[3].as_str()).cloned();
    assert_eq!(
        parent.map(|p| p["meta"]["numChildren"].clone()),
        s.item(LIB, &keys[3]).map(|p| p["meta"]["numChildren"].clone())
    );
    let trash = get(&s, &path("/items/trash?format=keys")).text();
    assert_eq!(trash.trim(), keys[2]);
    // Two tags differing only in case, written together: they tie on everything but the name's case.
    let r = common::post(
        &s,
        "items",
        serde_json::json!([
            {"itemType": "book", "title": "Case A", "tags": [{"tag": "Maize"}, {"tag": "maize"}]},
            {"itemType": "book", "title": "Case B", "tags": [{"tag": "maize"}]},
        ]),
    );
    assert_eq!(r.status, 200, "{}", r.text());
    for listing in ["/tags?limit=100", "/tags?limit=100&direction=asc&start=250", "/tags?limit=100&direction=asc"] {
        let fast = get(&s, &path(listing)).json();
        let general = get(&s, &path(&format!("{listing}&tagType=0"))).json();
        assert_eq!(fast, general, "{listing}");
    }
    let mut tag_counts: BTreeMap<String, u64> = BTreeMap::new();
    for item in s.items(LIB) {
        for t in item["data"]["tags"].as_array().into_iter().flatten() {
            *tag_counts.entry(t["tag"].as_str().unwrap_or_default().to_string()).or_default() += 1;
        }
    }
    for listing in
        ["/tags?limit=100", "/tags?limit=100&sort=title&start=200", "/tags?limit=100&sort=numItems&direction=desc"]
    {
        let r = get(&s, &path(listing));
        assert_eq!(r.total() as usize, tag_counts.len(), "{listing}");
        let tags = r.json();
        let page: Vec<(String, u64)> = tags
            .as_array()
            .into_iter()
            .flatten()
            .map(|t| (t["tag"].as_str().unwrap_or_default().to_string(), t["meta"]["numItems"].as_u64().unwrap_or(0)))
            .collect();
        assert_eq!(page.len(), 100);
        for (name, count) in &page {
            assert_eq!(tag_counts.get(name), Some(count), "{listing}: {name}");
        }
        if listing.contains("numItems") {
            assert!(page.windows(2).all(|w| w[0].1 >= w[1].1), "{listing}: most used first");
        }
        if listing.contains("title") {
            assert!(page.windows(2).all(|w| w[0].0.to_lowercase() <= w[1].0.to_lowercase()), "{listing}");
        }
    }
    for c in get(&s, &path("/collections?limit=100")).json().as_array().into_iter().flatten() {
        let key = c["key"].as_str().unwrap_or_default();
        assert_eq!(Some(c), s.collection(LIB, key).as_ref(), "{key}");
    }
}

#[test]
fn a_synthetic_group_beside_the_demo_says_what_it_planted() {
    let s = Simulator::demo();
    let made = s.add_synthetic_group(zotero_sim::DEMO_API_KEY, 1_000, 3);
    let group = zotero_sim::LibraryRef::Group(zotero_sim::synthetic::GROUP);
    assert_eq!(made.top_level, 1_000);
    assert!(made.duplicate_pairs >= 15, "{made:?}");
    // The key reaches the group, under its name, beside the demo library.
    let request = http::Request::builder()
        .uri("https://api.zotero.org/keys/current")
        .header("Zotero-API-Key", zotero_sim::DEMO_API_KEY)
        .body(Vec::new())
        .unwrap();
    let keys: Value = serde_json::from_slice(s.handle(request).body()).unwrap();
    assert_eq!(keys["access"]["groups"][zotero_sim::synthetic::GROUP.to_string()]["write"], true, "{keys}");
    assert!(s.items(zotero_sim::LibraryRef::User(zotero_sim::DEMO_USER_ID)).len() > 30);
    // What the control endpoint tells a test through a server.
    let request = http::Request::builder().method("GET").uri("/_sim/synthetic").body(Vec::new()).unwrap();
    let answer: Value = serde_json::from_slice(zotero_sim::control::handle(&s, &request).body()).unwrap();
    let listed = &answer["libraries"][0];
    assert_eq!(listed["library"], format!("groups/{}", zotero_sim::synthetic::GROUP));
    assert_eq!(listed["duplicatePairs"], made.duplicate_pairs);
    assert_eq!(listed["tags"], made.tags);
    assert_eq!(listed["collections"], made.collections);
    assert_eq!(s.synthetic_counts().get(&group), Some(&made));
    // And what a call sent: the requests after a count taken before it.
    let count = |after: usize| {
        let request = http::Request::builder().uri(format!("/_sim/requests?after={after}")).body(Vec::new()).unwrap();
        serde_json::from_slice::<Value>(zotero_sim::control::handle(&s, &request).body()).unwrap()
    };
    let request = http::Request::builder().uri("/_sim/requests").body(Vec::new()).unwrap();
    let now: Value = serde_json::from_slice(zotero_sim::control::handle(&s, &request).body()).unwrap();
    assert_eq!(now["requests"], serde_json::json!([]), "only the count without `after`");
    let before = now["last"].as_u64().unwrap_or_default() as usize;
    assert!(before >= 1, "the key's read above");
    let request = http::Request::builder()
        .uri(format!("https://api.zotero.org/groups/{}/items/top?limit=1", zotero_sim::synthetic::GROUP))
        .header("Zotero-API-Key", zotero_sim::DEMO_API_KEY)
        .body(Vec::new())
        .unwrap();
    assert_eq!(s.handle(request).status(), 200);
    let sent = count(before);
    assert_eq!(sent["last"], before + 1);
    assert_eq!(sent["requests"][0]["path"], format!("/groups/{}/items/top", zotero_sim::synthetic::GROUP));
    assert_eq!(sent["requests"][0]["query"], "limit=1");
    assert_eq!(sent["requests"].as_array().map(Vec::len), Some(1));
}
