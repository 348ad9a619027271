//! Read requests, checked against "Zotero Web API Basics" (paths, parameters, headers) and "Syncing" (versions).

mod common;

use common::*;
use serde_json::json;

fn seed(sim: &zotero_sim::Simulator) -> (String, String, String) {
    let a = create_item(
        sim,
        json!({
            "itemType": "journalArticle",
            "title": "Deep learning for proteins",
            "creators": [
                {"creatorType": "author", "firstName": "Ada", "lastName": "Lovelace"},
                {"creatorType": "author", "firstName": "Alan", "lastName": "Turing"}
            ],
            "date": "March 3, 2021",
            "publicationTitle": "Nature",
            "tags": [{"tag": "ml"}, {"tag": "proteins", "type": 1}]
        }),
    );
    let b = create_item(
        sim,
        json!({
            "itemType": "book",
            "title": "A history of clocks",
            "creators": [{"creatorType": "editor", "name": "Horology Society"}],
            "date": "1999",
            "tags": [{"tag": "history"}]
        }),
    );
    let note =
        create_item(sim, json!({"itemType": "note", "parentItem": a, "note": "<p>Reading notes on folding</p>"}));
    (a, b, note)
}

#[test]
fn item_json_has_the_api_shape() {
    let sim = sim();
    let (a, _, _) = seed(&sim);
    let resp = get(&sim, &format!("/users/1/items/{a}"));
    assert_eq!(resp.status, 200);
    assert_eq!(resp.header("content-type").as_deref(), Some("application/json"));
    let item = resp.json();
    assert_eq!(item["key"], a.as_str());
    assert_eq!(item["version"], resp.version());
    assert_eq!(item["library"]["type"], "user");
    assert_eq!(item["library"]["id"], 1);
    assert_eq!(item["links"]["self"]["href"], format!("https://api.zotero.org/users/1/items/{a}"));
    assert_eq!(item["links"]["self"]["type"], "application/json");
    assert_eq!(item["links"]["alternate"]["type"], "text/html");
    assert_eq!(item["meta"]["creatorSummary"], "Lovelace and Turing");
    assert_eq!(item["meta"]["parsedDate"], "2021-03-03");
    assert_eq!(item["meta"]["numChildren"], 1);
    let data = &item["data"];
    assert_eq!(data["key"], a.as_str());
    assert_eq!(data["version"], item["version"]);
    // Every field of the type is present, empty ones as "".
    for field in ["abstractNote", "volume", "issue", "pages", "DOI", "ISSN", "extra"] {
        assert_eq!(data[field], "", "{field}");
    }
    assert_eq!(data["tags"], json!([{"tag": "ml"}, {"tag": "proteins", "type": 1}]));
    assert_eq!(data["collections"], json!([]));
    assert_eq!(data["relations"], json!({}));
    assert!(data["dateAdded"].as_str().is_some_and(|d| d.ends_with('Z')));
    let order: Vec<&str> = data.as_object().map(|o| o.keys().map(String::as_str).collect()).unwrap_or_default();
    assert_eq!(&order[..5], ["key", "version", "itemType", "title", "creators"]);
    assert_eq!(&order[order.len() - 5..], ["tags", "collections", "relations", "dateAdded", "dateModified"]);
}

#[test]
fn child_items_link_up_and_have_no_collections() {
    let sim = sim();
    let (a, _, note) = seed(&sim);
    let item = get(&sim, &format!("/users/1/items/{note}")).json();
    assert_eq!(item["data"]["parentItem"], a.as_str());
    assert_eq!(item["links"]["up"]["href"], format!("https://api.zotero.org/users/1/items/{a}"));
    assert!(item["data"].get("collections").is_none());
    assert!(item["meta"].get("creatorSummary").is_none());
}

#[test]
fn top_excludes_children_and_children_lists_them() {
    let sim = sim();
    let (a, b, note) = seed(&sim);
    assert_eq!(get(&sim, "/users/1/items").total(), 3);
    let top = get(&sim, "/users/1/items/top");
    assert_eq!(top.total(), 2);
    let mut top_keys = keys(&top.json());
    top_keys.sort();
    let mut expected = vec![a.clone(), b];
    expected.sort();
    assert_eq!(top_keys, expected);
    assert_eq!(keys(&get(&sim, &format!("/users/1/items/{a}/children")).json()), vec![note]);
}

#[test]
fn quick_search_matches_title_creator_and_year() {
    let sim = sim();
    let (a, b, note) = seed(&sim);
    assert_eq!(keys(&get(&sim, "/users/1/items?q=proteins").json()), vec![a.clone()]);
    assert_eq!(keys(&get(&sim, "/users/1/items?q=turing").json()), vec![a.clone()]);
    assert_eq!(keys(&get(&sim, "/users/1/items?q=horology").json()), vec![b.clone()]);
    assert_eq!(keys(&get(&sim, "/users/1/items?q=1999").json()), vec![b]);
    // Words are ANDed; a quoted phrase is one word.
    assert_eq!(get(&sim, "/users/1/items?q=deep%20clocks").total(), 0);
    assert_eq!(get(&sim, "/users/1/items?q=%22history%20of%22").total(), 1);
    // A note matches by its title (first line); in /top it answers with its parent.
    assert_eq!(keys(&get(&sim, "/users/1/items?q=folding").json()), vec![note]);
    assert_eq!(keys(&get(&sim, "/users/1/items/top?q=folding").json()), vec![a]);
    // The publication title is not a quick-search field.
    assert_eq!(get(&sim, "/users/1/items?q=nature").total(), 0);
}

#[test]
fn everything_mode_also_searches_full_text() {
    let sim = sim();
    let (a, _, _) = seed(&sim);
    let att = create_item(
        &sim,
        json!({"itemType": "attachment", "linkMode": "imported_file", "parentItem": a, "contentType": "application/pdf", "filename": "a.pdf"}),
    );
    sim.set_fulltext(LIB, &att, "stochastic gradient annealing appears here", Some(3), Some(3));
    assert_eq!(get(&sim, "/users/1/items?q=annealing").total(), 0);
    assert_eq!(keys(&get(&sim, "/users/1/items?q=annealing&qmode=everything").json()), vec![att]);
    assert_eq!(keys(&get(&sim, "/users/1/items/top?q=annealing&qmode=everything").json()), vec![a]);
    assert_eq!(get(&sim, "/users/1/items?qmode=bogus").status, 400);
}

#[test]
fn tag_parameters_and_or_not() {
    let sim = sim();
    let (a, b, note) = seed(&sim);
    assert_eq!(keys(&get(&sim, "/users/1/items?tag=ml").json()), vec![a.clone()]);
    assert_eq!(keys(&get(&sim, "/users/1/items?tag=ML").json()), vec![a.clone()], "tag match is case-insensitive");
    assert_eq!(get(&sim, "/users/1/items?tag=ml&tag=history").total(), 0, "repeated tag = AND");
    assert_eq!(get(&sim, "/users/1/items?tag=ml%20%7C%7C%20history").total(), 2, "|| = OR");
    let mut not_ml = keys(&get(&sim, "/users/1/items?tag=-ml").json());
    not_ml.sort();
    let mut expected = vec![b, note];
    expected.sort();
    assert_eq!(not_ml, expected, "-tag = NOT");
}

#[test]
fn item_type_filter_with_negation_and_alternatives() {
    let sim = sim();
    let (a, b, note) = seed(&sim);
    assert_eq!(keys(&get(&sim, "/users/1/items?itemType=book").json()), vec![b.clone()]);
    assert_eq!(get(&sim, "/users/1/items?itemType=-note").total(), 2);
    assert_eq!(get(&sim, "/users/1/items?itemType=book%20%7C%7C%20note").total(), 2);
    assert_eq!(get(&sim, "/users/1/items?itemType=book&itemType=note").status, 400);
    let bad = get(&sim, "/users/1/items?itemType=spaceship");
    assert_eq!(bad.status, 400);
    assert_eq!(bad.text(), "Invalid itemType 'spaceship'");
    let by_key = get(&sim, &format!("/users/1/items?itemKey={a},{note}"));
    assert_eq!(by_key.total(), 2);
}

#[test]
fn sort_and_direction() {
    let sim = sim();
    let (a, b, _) = seed(&sim);
    let by_title = keys(&get(&sim, "/users/1/items/top?sort=title").json());
    assert_eq!(by_title, vec![b.clone(), a.clone()], "'A history…' before 'Deep…'");
    let by_title_desc = keys(&get(&sim, "/users/1/items/top?sort=title&direction=desc").json());
    assert_eq!(by_title_desc, vec![a.clone(), b.clone()]);
    let by_date = keys(&get(&sim, "/users/1/items/top?sort=date").json());
    assert_eq!(by_date, vec![a.clone(), b.clone()], "date sorts descending by default");
    let by_creator = keys(&get(&sim, "/users/1/items/top?sort=creator").json());
    assert_eq!(by_creator, vec![b.clone(), a.clone()], "Horology… before Lovelace…");
    // Default: dateModified descending, ties broken by version.
    let default = keys(&get(&sim, "/users/1/items/top").json());
    assert_eq!(default, vec![b, a]);
    assert_eq!(get(&sim, "/users/1/items?sort=numItems").status, 400);
    assert_eq!(get(&sim, "/users/1/items?sort=bogus").text(), "Invalid 'sort' value 'bogus'");
}

#[test]
fn pagination_headers_total_results_and_link() {
    let sim = sim();
    for i in 0..7 {
        create_item(&sim, json!({"itemType": "book", "title": format!("Book {i}")}));
    }
    let resp = get(&sim, "/users/1/items?limit=3&start=3");
    assert_eq!(resp.total(), 7);
    assert_eq!(resp.json().as_array().map(Vec::len), Some(3));
    let link = resp.header("link").unwrap_or_default();
    assert!(link.contains("<https://api.zotero.org/users/1/items?limit=3>; rel=\"first\""), "{link}");
    assert!(link.contains("<https://api.zotero.org/users/1/items?limit=3>; rel=\"prev\""), "{link}");
    assert!(link.contains("<https://api.zotero.org/users/1/items?limit=3&start=6>; rel=\"next\""), "{link}");
    assert!(link.contains("<https://api.zotero.org/users/1/items?limit=3&start=6>; rel=\"last\""), "{link}");
    assert!(link.contains("<https://www.zotero.org/users/1/items>; rel=\"alternate\""), "{link}");
    // Default page size 25, maximum 100.
    let all = get(&sim, "/users/1/items?limit=1000");
    assert_eq!(all.json().as_array().map(Vec::len), Some(7));
    assert!(!all.header("link").unwrap_or_default().contains("rel=\"next\""));
}

#[test]
fn format_keys_and_versions_with_since() {
    let sim = sim();
    let a = create_item(&sim, json!({"itemType": "book"}));
    let after_a = sim.library_version(LIB);
    let b = create_item(&sim, json!({"itemType": "book"}));
    let keys_resp = get(&sim, "/users/1/items?format=keys");
    assert_eq!(keys_resp.header("content-type").as_deref(), Some("text/plain; charset=utf-8"));
    let mut listed: Vec<String> = keys_resp.text().lines().map(str::to_string).collect();
    listed.sort();
    let mut expected = vec![a.clone(), b.clone()];
    expected.sort();
    assert_eq!(listed, expected);
    let versions = get(&sim, &format!("/users/1/items?format=versions&since={after_a}")).json();
    assert_eq!(versions, json!({ b.clone(): sim.library_version(LIB) }));
    assert_eq!(get(&sim, &format!("/users/1/items/{a}?format=versions")).status, 400);
}

#[test]
fn if_modified_since_version_is_304_when_library_unchanged() {
    let sim = sim();
    create_item(&sim, json!({"itemType": "book"}));
    let v = sim.library_version(LIB).to_string();
    let resp = send(&sim, "GET", "/users/1/items", &[("If-Modified-Since-Version", &v)], None);
    assert_eq!(resp.status, 304);
    assert!(resp.body.is_empty());
    create_item(&sim, json!({"itemType": "book"}));
    let resp = send(&sim, "GET", "/users/1/items", &[("If-Modified-Since-Version", &v)], None);
    assert_eq!(resp.status, 200);
}

#[test]
fn every_read_carries_last_modified_version() {
    let sim = sim();
    let (a, _, _) = seed(&sim);
    let v = sim.library_version(LIB);
    for path in
        ["/users/1/items", "/users/1/items/top", "/users/1/collections", "/users/1/tags", "/users/1/deleted?since=0"]
    {
        assert_eq!(get(&sim, path).version(), v, "{path}");
    }
    let item_version = sim.item(LIB, &a).unwrap_or_default()["version"].as_u64().unwrap_or(0);
    assert_eq!(get(&sim, &format!("/users/1/items/{a}")).version(), item_version);
}

#[test]
fn exports_the_simulator_cannot_render_are_501() {
    let sim = sim();
    for q in ["format=bibtex", "format=ris", "format=bib", "include=bib", "include=citation", "format=csljson"] {
        let resp = get(&sim, &format!("/users/1/items?{q}"));
        assert_eq!(resp.status, 501, "{q}");
        assert!(resp.text().starts_with("zotero-sim does not implement"), "{q}: {}", resp.text());
    }
    assert_eq!(get(&sim, "/users/1/items?format=nonsense").status, 400);
}

#[test]
fn unknown_item_is_404_and_invalid_key_is_404() {
    let sim = sim();
    assert_eq!(get(&sim, "/users/1/items/AAAAAAAA").status, 404);
    assert_eq!(get(&sim, "/users/1/items/not-a-key").status, 404);
    assert_eq!(get(&sim, "/users/1/nothing").status, 404);
    assert_eq!(send(&sim, "PUT", "/users/1/items/top", &[], Some(json!({}))).status, 405);
}
