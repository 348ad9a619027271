//! The feeds group (`zotero-sim --feeds-group`, zotero_sim::feeds_group): what the API serves of it is what
//! the plan given to the end-to-end test says, and an edit through the control endpoint moves its versions.

mod common;

use std::collections::{BTreeMap, BTreeSet};

use common::{raw, Resp};
use serde_json::{json, Value};
use zotero_sim::feeds_group::{self, CHAPTER_2, CORE_SEARCH, GROUP, OTHER, THESIS};
use zotero_sim::{control, LibraryRef, Simulator, DEMO_API_KEY};

const FEEDS: LibraryRef = LibraryRef::Group(GROUP);

fn with_group() -> Simulator {
    let sim = Simulator::demo();
    sim.add_demo_groups(DEMO_API_KEY);
    sim.add_feeds_group(DEMO_API_KEY);
    sim
}

fn get(sim: &Simulator, path: &str) -> Resp {
    let request = http::Request::builder()
        .uri(format!("https://api.zotero.org/groups/{GROUP}{path}"))
        .header("Zotero-API-Key", DEMO_API_KEY)
        .header("Zotero-API-Version", "3")
        .body(Vec::new())
        .unwrap();
    raw(sim, request)
}

fn control(sim: &Simulator, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
    let mut builder = http::Request::builder().method(method).uri(path);
    if body.is_some() {
        builder = builder.header("content-type", "application/json");
    }
    let bytes = body.map(|b| b.to_string().into_bytes()).unwrap_or_default();
    let response = control::handle(sim, &builder.body(bytes).unwrap());
    (response.status().as_u16(), serde_json::from_slice(response.body()).unwrap())
}

/// Every regular (not note, not attachment) top-level item the API lists at `path`, by key.
fn regular_keys(sim: &Simulator, path: &str) -> BTreeSet<String> {
    let mut keys = BTreeSet::new();
    for start in (0..1000).step_by(100) {
        let page = get(sim, &format!("{path}{}limit=100&start={start}", if path.contains('?') { '&' } else { '?' }));
        assert_eq!(page.status, 200, "{path}: {}", page.text());
        let listed = page.json();
        let listed = listed.as_array().unwrap();
        for item in listed {
            if !matches!(item["data"]["itemType"].as_str(), Some("note" | "attachment")) {
                keys.insert(item["key"].as_str().unwrap().to_string());
            }
        }
        if listed.len() < 100 {
            break;
        }
    }
    keys
}

#[test]
fn the_api_serves_what_the_plan_says() {
    let sim = with_group();
    let plan = feeds_group::plan();
    let planned = |collection: &str| -> BTreeSet<String> {
        plan.items.iter().filter(|i| i.collection == collection).map(|i| i.key.clone()).collect()
    };
    let thesis = regular_keys(&sim, &format!("/collections/{THESIS}/items/top"));
    assert_eq!(thesis, planned(THESIS), "the trashed article is not listed outside the trash");
    assert_eq!(thesis.len(), 250);
    assert_eq!(regular_keys(&sim, &format!("/collections/{CHAPTER_2}/items/top")), planned(CHAPTER_2));
    assert_eq!(regular_keys(&sim, &format!("/collections/{OTHER}/items/top")).len(), 20);
    assert_eq!(regular_keys(&sim, "/items/top").len(), 280);
    // The subcollection is under "Thesis", and the saved search is stored.
    assert_eq!(get(&sim, &format!("/collections/{CHAPTER_2}")).json()["data"]["parentCollection"], THESIS);
    assert_eq!(get(&sim, &format!("/searches/{CORE_SEARCH}")).json()["data"]["name"], "Core reading");
    // Each planned item reads back with its title and pinned key where it was pinned.
    for item in &plan.items {
        let data = &sim.item(FEEDS, &item.key).unwrap()["data"];
        assert_eq!(data["title"], item.title.as_str(), "{}", item.key);
        assert_eq!(data["itemType"], item.item_type);
        if let Some(pinned) = &item.citation_key {
            let field = data["citationKey"].as_str().unwrap_or_default();
            let extra = data["extra"].as_str().unwrap_or_default();
            assert!(field == pinned || extra.contains(&format!("Citation Key: {pinned}")), "{}: {data}", item.key);
        }
    }
    // What no feed may show is there: children, standalone note and link, the trashed article.
    let whys: BTreeSet<&str> = plan.left_out.iter().map(|o| o.why).collect();
    assert_eq!(whys, BTreeSet::from(["attachment", "note", "trashed"]));
    for object in &plan.left_out {
        assert!(sim.item(FEEDS, &object.key).is_some(), "{}", object.key);
    }
    let trash = regular_keys(&sim, "/items/trash");
    assert_eq!(trash.len(), 1);
    // The key may read the group but not write it.
    let request = http::Request::builder()
        .uri("https://api.zotero.org/keys/current")
        .header("Zotero-API-Key", DEMO_API_KEY)
        .body(Vec::new())
        .unwrap();
    let keys = raw(&sim, request).json();
    assert_eq!(keys["access"]["groups"][GROUP.to_string()], json!({ "library": true, "write": false }), "{keys}");
}

#[test]
fn the_plan_mixes_types_pins_and_collisions_and_is_the_same_every_time() {
    let plan = feeds_group::plan();
    assert_eq!(serde_json::to_value(&plan).unwrap(), serde_json::to_value(feeds_group::plan()).unwrap());
    let types: BTreeSet<&str> = plan.items.iter().map(|i| i.item_type).collect();
    assert!(types.len() >= 8, "{types:?}");
    let pinned: Vec<&str> = plan.items.iter().filter_map(|i| i.citation_key.as_deref()).collect();
    let distinct: BTreeSet<String> = pinned.iter().map(|k| k.to_lowercase()).collect();
    assert_eq!(distinct.len(), pinned.len(), "pinned keys differ even ignoring case");
    assert!(pinned.len() >= 50, "{}", pinned.len());
    assert!(plan.items.iter().any(|i| i.overridden_key.is_some()));
    // Three unpinned items share first author, year and first title word; a fourth pins that key.
    let muller = plan.items.iter().filter(|i| i.first_creator.as_deref() == Some("Müller") && i.year == Some(2020));
    let muller: Vec<_> = muller.filter(|i| i.title.starts_with("Deep ")).collect();
    assert!(muller.len() >= 4, "{}", muller.len());
    assert!(muller.iter().any(|i| i.citation_key.as_deref() == Some("Muller2020Deep")));
    // Every LaTeX special character is in some title.
    for special in ['%', '&', '_', '#', '$', '{', '}'] {
        assert!(plan.items.iter().any(|i| i.title.contains(special)), "{special}");
    }
    assert!(plan.items.iter().any(|i| i.year.is_none()), "an undated item");
    let core: BTreeMap<&str, usize> = plan.items.iter().filter(|i| i.core).fold(BTreeMap::new(), |mut by, i| {
        *by.entry(i.collection).or_default() += 1;
        by
    });
    assert_eq!(core.len(), 3, "the saved search finds items of each collection: {core:?}");
}

#[test]
fn the_control_endpoint_gives_the_plan_and_edits_an_item_as_another_client_would() {
    let without = Simulator::demo();
    assert_eq!(control(&without, "GET", "/_sim/feeds", None).0, 404);
    let sim = with_group();
    let (status, manifest) = control(&sim, "GET", "/_sim/feeds", None);
    assert_eq!(status, 200);
    assert_eq!(manifest["library"], "groups/100004");
    assert_eq!(manifest["plan"]["items"].as_array().map(Vec::len), Some(280));
    let key = manifest["plan"]["items"][0]["key"].as_str().unwrap().to_string();

    let before = get(&sim, "/items/top?limit=1").version();
    let item_before = sim.item(FEEDS, &key).unwrap()["version"].as_u64().unwrap();
    let edit = json!({ "library": "groups/100004", "key": key, "fields": { "title": "Edited elsewhere" } });
    let (status, answer) = control(&sim, "POST", "/_sim/touch", Some(edit));
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["version"], before + 1);
    let item = sim.item(FEEDS, &key).unwrap();
    assert_eq!(item["version"], before + 1);
    assert!(item_before < before + 1);
    assert_eq!(item["data"]["title"], "Edited elsewhere");
    // ?since= sees the edit, as a client syncing would.
    let since = get(&sim, &format!("/items?since={before}&format=keys"));
    assert_eq!(since.text().trim(), key);

    let (status, _) = control(&sim, "POST", "/_sim/touch", Some(json!({ "library": "groups/100004", "key": key })));
    assert_eq!(status, 200, "no fields: the versions alone move");
    assert_eq!(sim.library_version(FEEDS), before + 2);
    for (body, problem) in [
        (json!({ "library": "groups/100004", "key": key, "fields": { "bogus": "x" } }), "has no field `bogus`"),
        (json!({ "library": "groups/100004", "key": "NOPE2345" }), "no item NOPE2345"),
        (json!({ "library": "teams/4", "key": key }), "not a library"),
    ] {
        let (status, answer) = control(&sim, "POST", "/_sim/touch", Some(body));
        assert_eq!(status, 400);
        assert!(answer["error"].as_str().unwrap().contains(problem), "{answer}");
    }
    assert_eq!(sim.library_version(FEEDS), before + 2, "a refused edit changes nothing");
}

#[test]
fn the_command_line_adds_the_group() {
    let args = ["--listen", "127.0.0.1:0", "--demo", "--demo-groups", "--feeds-group"].map(String::from);
    let command_line = zotero_sim::server::parse_args(args).unwrap();
    assert!(command_line.feeds_group);
    assert!(command_line.simulator().has_feeds_group());
    let plain = zotero_sim::server::parse_args(["--listen", "127.0.0.1:0", "--demo"].map(String::from)).unwrap();
    assert!(!plain.simulator().has_feeds_group());
}
