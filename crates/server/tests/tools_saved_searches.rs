//! Saved searches through the tools: listed beside the collection tree (`zotero_list_collections`) and run, or
//! searched within, by `zotero_search`'s `savedSearch`, against the simulator's demo library and its two saved
//! searches. How each condition is evaluated is tested against the simulator's own search in
//! crates/sim/tests/saved_searches.rs.

mod common;
mod library_support;

use common::*;
use library_support::*;
use serde_json::{json, Value};
use zotero_sim::LibraryRef;

const DEMO: LibraryRef = LibraryRef::User(1234567);

fn sorted(mut keys: Vec<String>) -> Vec<String> {
    keys.sort();
    keys
}

fn run_keys(result: &Value) -> Vec<String> {
    sorted(keys(&ok(result)["items"]))
}

#[tokio::test]
async fn the_saved_searches_are_listed_with_their_conditions_and_whether_they_run() {
    let sim = demo_sim();
    sim.insert_search(
        DEMO,
        json!({ "name": "Regex titles", "conditions": [
            { "condition": "title", "operator": "contains", "value": "maize" },
            { "condition": "fulltextContent/regexp", "operator": "contains", "value": "yield.*loss" },
        ] }),
    );
    let result = rpc(&sim, "zotero_list_collections", json!({})).await;
    let searches = ok(&result)["savedSearches"].as_array().unwrap().clone();
    let by_name = |name: &str| searches.iter().find(|s| s["name"] == name).cloned().unwrap_or_default();
    let heat = by_name("Maize under heat stress");
    assert_eq!(heat["key"], "HEATMAIZ");
    assert_eq!(heat["runnable"], true);
    assert_eq!(heat["conditions"][1], json!({ "condition": "tag", "operator": "is", "value": "maize" }));
    let regex = by_name("Regex titles");
    assert_eq!(regex["runnable"], false);
    let why = regex["unsupported"][0].as_str().unwrap();
    assert!(why.starts_with("fulltextContent/regexp contains"), "{why}");
    assert!(text(&result).contains("Saved searches (run one with zotero_search `savedSearch`)"), "{}", text(&result));
    assert!(text(&result).contains("- Regex titles (key: "), "{}", text(&result));
    assert!(text(&result).contains("cannot be run here"), "{}", text(&result));
    let named = rpc(&sim, "zotero_list_collections", json!({ "query": "heat" })).await;
    let names: Vec<&str> =
        ok(&named)["savedSearches"].as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["Maize under heat stress"]);
    let items = rpc(&sim, "zotero_list_collections", json!({ "collectionKey": "L8LNPSUB" })).await;
    assert!(ok(&items).get("savedSearches").is_none(), "a collection's items come without the searches");
}

#[tokio::test]
async fn a_saved_search_runs_by_key_or_by_name_and_shows_what_zotero_shows() {
    let sim = demo_sim();
    let by_name = rpc(&sim, "zotero_search", json!({ "savedSearch": "maize under HEAT stress" })).await;
    assert_eq!(run_keys(&by_name), ["9ZEFCI5U", "JCWN2VTP"], "{}", text(&by_name));
    let by_key = rpc(&sim, "zotero_search", json!({ "savedSearch": "HEATMAIZ" })).await;
    assert_eq!(run_keys(&by_key), run_keys(&by_name));
    let recent = rpc(&sim, "zotero_search", json!({ "savedSearch": "RECENTPS" })).await;
    assert_eq!(run_keys(&recent), ["8CR2RQWN", "FQDCTD9F", "Q5W3D4ZV", "RSCKVSN3"], "{}", text(&recent));
    assert!(ok(&recent).get("note").is_none(), "every row matched itself: {recent}");
    let paged = rpc(&sim, "zotero_search", json!({ "savedSearch": "RECENTPS", "limit": 3 })).await;
    assert_eq!(ok(&paged)["totalResults"], 4);
    assert_eq!(ok(&paged)["nextOffset"], 3);
    let rest = rpc(&sim, "zotero_search", json!({ "savedSearch": "RECENTPS", "limit": 3, "offset": 3 })).await;
    assert_eq!(ok(&rest)["items"].as_array().unwrap().len(), 1);
    assert!(ok(&rest)["nextOffset"].is_null());
    let mut all = keys(&ok(&paged)["items"]);
    all.extend(keys(&ok(&rest)["items"]));
    assert_eq!(sorted(all), run_keys(&recent), "the pages hold every item once");
}

#[tokio::test]
async fn an_unsupported_search_is_refused_by_name_before_the_library_is_read() {
    let sim = demo_sim();
    sim.insert_search(
        DEMO,
        json!({ "name": "Odd", "conditions": [{ "condition": "fulltextContent/regexp", "operator": "contains", "value": "a+" }] }),
    );
    let before = sim.requests().len();
    let result = rpc(&sim, "zotero_search", json!({ "savedSearch": "odd" })).await;
    let error = error_text(&result);
    assert!(error.contains("cannot be evaluated here, so no results are given"), "{error}");
    assert!(error.contains("fulltextContent/regexp contains"), "{error}");
    let paths: Vec<String> = sim.requests()[before..].iter().map(|r| r.path.clone()).collect();
    assert!(paths.iter().all(|p| p.ends_with("/searches")), "only the listing was read: {paths:?}");
}

#[tokio::test]
async fn an_unknown_or_ambiguous_name_says_what_exists() {
    let sim = demo_sim();
    let unknown = rpc(&sim, "zotero_search", json!({ "savedSearch": "Nothing like it" })).await;
    assert!(error_text(&unknown).contains("\"Maize under heat stress\" (HEATMAIZ)"), "{unknown}");
    sim.insert_search(
        DEMO,
        json!({ "name": "Maize under heat stress", "conditions": [{ "condition": "tag", "operator": "is", "value": "maize" }] }),
    );
    let ambiguous = rpc(&sim, "zotero_search", json!({ "savedSearch": "Maize under heat stress" })).await;
    assert!(error_text(&ambiguous).contains("2 saved searches are called"), "{ambiguous}");
}

#[tokio::test]
async fn zotero_search_within_a_saved_search_finds_only_its_items() {
    let sim = demo_sim();
    // "maize" alone matches more of the library than the saved search holds.
    let everywhere = rpc(&sim, "zotero_search", json!({ "query": "maize" })).await;
    assert!(keys(&ok(&everywhere)["items"]).len() > 2, "{}", text(&everywhere));
    let scoped = rpc(&sim, "zotero_search", json!({ "query": "maize", "savedSearch": "HEATMAIZ" })).await;
    assert_eq!(sorted(keys(&ok(&scoped)["items"])), ["9ZEFCI5U", "JCWN2VTP"], "{}", text(&scoped));
    let narrower = rpc(&sim, "zotero_search", json!({ "query": "field trials", "savedSearch": "HEATMAIZ" })).await;
    assert_eq!(keys(&ok(&narrower)["items"]), ["JCWN2VTP"], "{}", text(&narrower));
}

#[tokio::test]
async fn a_saved_search_that_shows_nothing_or_too_much_is_said_so() {
    let sim = demo_sim();
    sim.insert_search(DEMO, json!({ "name": "Empty", "conditions": [{ "condition": "title", "operator": "is", "value": "no such title" }] }));
    sim.insert_search(DEMO, json!({ "name": "Everything", "conditions": [{ "condition": "title", "operator": "doesNotContain", "value": "no such title" }] }));
    let empty = rpc(&sim, "zotero_search", json!({ "query": "maize", "savedSearch": "Empty" })).await;
    assert_eq!(ok(&empty)["total"], 0);
    assert!(ok(&empty)["libraryVersion"].as_u64().unwrap() > 0);
    assert!(ok(&empty)["note"].as_str().unwrap().contains("shows no items"), "{empty}");
    let everything = rpc(&sim, "zotero_search", json!({ "query": "maize", "savedSearch": "Everything" })).await;
    let error = error_text(&everything);
    assert!(error.contains("more than the 50 a search can be limited to"), "{error}");
    assert!(error.contains("with only savedSearch (and offset) to page through its items"), "{error}");
    let alone = rpc(&sim, "zotero_search", json!({ "savedSearch": "Everything", "limit": 5 })).await;
    assert!(ok(&alone)["totalResults"].as_u64().unwrap() > 40, "alone, any size is paged: {alone}");
    assert_eq!(ok(&alone)["nextOffset"], 5);
}

/// A saved search of `count` conditions, any of them (`title contains` a word of the demo library and others).
fn many_conditions(count: usize) -> Value {
    let mut conditions = vec![json!({ "condition": "joinMode", "operator": "any", "value": "" })];
    conditions.extend((0..count).map(|n| {
        let word = if n == 0 { "maize".to_owned() } else { format!("nosuchword{n}") };
        json!({ "condition": "title", "operator": "contains", "value": word })
    }));
    json!({ "name": format!("{count} words"), "conditions": conditions })
}

#[tokio::test]
async fn the_conditions_of_a_saved_search_are_counted_in_its_run_and_its_listing() {
    use zotero_mcp_server::tools::saved_searches::{LIMITS, MAX_LISTED_CONDITIONS};
    let sim = demo_sim();
    let limit = LIMITS.max_conditions;
    sim.insert_search(DEMO, many_conditions(limit));
    sim.insert_search(DEMO, many_conditions(limit + 1));

    // At the limit it runs; one more is refused before a single item is read, saying how many and the limit.
    let at_limit = rpc(&sim, "zotero_search", json!({ "savedSearch": format!("{limit} words") })).await;
    assert!(!ok(&at_limit)["items"].as_array().unwrap().is_empty(), "{at_limit}");
    let before = sim.requests().len();
    let over = error_text(&rpc(&sim, "zotero_search", json!({ "savedSearch": format!("{} words", limit + 1) })).await);
    assert!(
        over.contains(&format!("has {} conditions", limit + 1)) && over.contains(&format!("more than the {limit}")),
        "{over}"
    );
    let paths: Vec<String> = sim.requests()[before..].iter().map(|r| r.path.clone()).collect();
    assert!(paths.iter().all(|p| p.ends_with("/searches")), "only the listing was read: {paths:?}");

    // The listing shows the first conditions and how many there are, and says which search cannot run.
    let listing = rpc(&sim, "zotero_list_collections", json!({ "query": "words" })).await;
    let searches = ok(&listing)["savedSearches"].as_array().unwrap().clone();
    for search in &searches {
        assert_eq!(search["conditions"].as_array().unwrap().len(), MAX_LISTED_CONDITIONS, "{search}");
    }
    let over = searches.iter().find(|s| s["name"] == format!("{} words", limit + 1)).unwrap();
    assert_eq!(over["conditionsTotal"], limit + 2, "the join mode is a condition Zotero keeps too");
    assert_eq!(over["runnable"], false);
    assert!(over["unsupported"][0].as_str().unwrap().contains(&format!("more than the {limit}")), "{over}");
    let fits = searches.iter().find(|s| s["name"] == format!("{limit} words")).unwrap();
    assert_eq!(fits["runnable"], true);
    assert!(text(&listing).contains(&format!("of its {} conditions not listed", limit + 2)), "{}", text(&listing));
}

#[tokio::test]
async fn a_library_with_more_saved_searches_than_are_read_is_listed_in_part_and_says_how_many() {
    use zotero_mcp_server::tools::saved_searches::MAX_SAVED_SEARCHES;
    let sim = demo_sim();
    let before = sim.searches(DEMO).len();
    for n in 0..=MAX_SAVED_SEARCHES {
        let condition = json!({ "condition": "title", "operator": "contains", "value": format!("word{n}") });
        sim.insert_search(DEMO, json!({ "name": format!("Search {n}"), "conditions": [condition] }));
    }
    let total = before + MAX_SAVED_SEARCHES + 1;
    let sent = sim.requests().len();
    let listing = rpc(&sim, "zotero_list_collections", json!({ "query": "search" })).await;
    let searches_read = sim.requests()[sent..].iter().filter(|r| r.path.ends_with("/searches")).count();
    assert_eq!(searches_read, MAX_SAVED_SEARCHES.div_ceil(100), "a bounded read, a hundred a request");
    let listed: Vec<String> = ok(&listing)["savedSearches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["key"].as_str().unwrap().to_owned())
        .collect();
    assert!(listed.len() <= MAX_SAVED_SEARCHES, "{}", listed.len());
    assert_eq!(ok(&listing)["savedSearchesTotal"], total);
    assert!(text(&listing).contains(&format!("of {total} saved searches are listed")), "{}", text(&listing));
    // One beyond those read (every "Search n" read is listed, the query names them all) runs by its key.
    let unread = sim
        .searches(DEMO)
        .iter()
        .filter(|s| s["data"]["name"].as_str().is_some_and(|name| name.starts_with("Search ")))
        .filter_map(|s| s["key"].as_str().map(str::to_owned))
        .find(|key| !listed.contains(key))
        .expect("a search that was not read");
    let sent = sim.requests().len();
    let run = rpc(&sim, "zotero_search", json!({ "savedSearch": unread })).await;
    assert!(ok(&run)["items"].is_array(), "{run}");
    let asked = sim.requests()[sent..].iter().any(|r| r.path.ends_with(&format!("/searches/{unread}")));
    assert!(asked, "read by its key");
}
