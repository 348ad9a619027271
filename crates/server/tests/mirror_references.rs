//! `zotero_check_references` matching from the library mirror: over a library far larger than a call could read
//! from Zotero, references are matched by DOI, citation key and title in one call once the mirror is complete
//! (one request to find it in step); while it fills, nothing is checked and the answer says how far it is; and
//! over the demo library the mirror's answers are the live path's.

mod common;

use std::collections::BTreeSet;
use std::rc::Rc;

use common::*;
use serde_json::{json, Value};
use zotero_mcp_server::app::App;
use zotero_sim::{LibraryRef, Simulator};

const LIB: LibraryRef = LibraryRef::User(DEMO_USER);

async fn check(app: &App, text: &str, format: &str) -> Value {
    let arguments =
        json!({ "text": text, "format": format, "checkRegistry": false, "checkSupport": false, "limit": 60 });
    ok(&call_tool(app, "zotero_check_references", arguments).await).clone()
}

fn field<'a>(item: &'a Value, name: &str) -> Option<&'a str> {
    item["data"][name].as_str().filter(|value| !value.is_empty())
}

/// Top-level regular items outside the trash.
fn regular(sim: &Simulator) -> Vec<Value> {
    sim.items(LIB)
        .into_iter()
        .filter(|item| {
            !matches!(field(item, "itemType"), Some("note" | "attachment" | "annotation"))
                && item["data"]["deleted"] != true
        })
        .collect()
}

/// The keys of the items carrying `doi` (a near-duplicate shares its original's).
fn keys_with_doi(items: &[Value], doi: &str) -> BTreeSet<String> {
    items
        .iter()
        .filter(|item| field(item, "DOI").is_some_and(|d| d.eq_ignore_ascii_case(doi)))
        .map(|item| item["key"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[tokio::test]
async fn references_are_matched_across_a_large_library_in_one_call_once_its_mirror_is_complete() {
    let sim = Rc::new(Simulator::synthetic(3_000, 11));
    let app = app_with_mirror(sim.clone());
    let items = regular(&sim);
    // 20 DOIs spread over the whole library (the oldest and the newest included), and one no item has.
    let cited: Vec<&str> =
        items.iter().step_by(items.len() / 20).take(20).filter_map(|item| field(item, "DOI")).collect();
    assert_eq!(cited.len(), 20);
    let text = format!("{}\n10.9999/not.in.this.library", cited.join("\n"));

    // 3,000 items are 30 pages and more: the first call fills what its requests allow and checks nothing.
    let first = check(&app, &text, "identifiers").await;
    assert_eq!(first["mirror"]["complete"], false, "{first}");
    assert!(first["references"].as_array().unwrap().is_empty(), "nothing is checked over part of a library");
    assert!(first["stopped"].as_str().unwrap().contains("still being filled"), "{first}");
    let mut filled = first["mirror"]["items"].as_u64().unwrap();
    assert!(filled > 0);
    let mut answer = first;
    for _ in 0..10 {
        answer = check(&app, &text, "identifiers").await;
        if answer["mirror"]["complete"] == true {
            break;
        }
        let now = answer["mirror"]["items"].as_u64().unwrap();
        assert!(now > filled, "the fill goes on where it stopped: {filled} then {now}");
        filled = now;
    }
    assert_eq!(answer["mirror"]["complete"], true, "{answer}");

    // Once it is complete: one call, every reference answered, each matched to an item with its DOI.
    let answer = check(&app, &text, "identifiers").await;
    assert_eq!(answer["requests"], 1, "one request finds the mirror in step: {answer}");
    assert_eq!(answer["counts"]["matched"], 20, "{answer}");
    assert!(answer.get("nextCursor").is_none());
    assert_eq!(answer["libraryItems"], answer["mirror"]["items"]);
    let reports = answer["references"].as_array().unwrap();
    for (report, doi) in reports.iter().zip(&cited) {
        assert_eq!(report["matchedBy"], "doi", "{report}");
        let expected = keys_with_doi(&items, doi);
        let mut found: BTreeSet<String> = report["alsoMatching"]
            .as_array()
            .map(|keys| keys.iter().filter_map(Value::as_str).map(str::to_owned).collect())
            .unwrap_or_default();
        found.insert(report["itemKey"].as_str().unwrap().to_owned());
        assert_eq!(found, expected, "every copy of {doi} and nothing else");
    }
    assert_ne!(reports[20]["outcome"], "matched", "{}", reports[20]);
}

#[tokio::test]
async fn a_citation_key_and_a_title_without_identifiers_are_found_in_the_mirror() {
    let sim = Rc::new(Simulator::synthetic(400, 5));
    let app = app_with_mirror(sim.clone());
    let items = regular(&sim);
    let with_key = items
        .iter()
        .find(|item| field(item, "extra").is_some_and(|extra| extra.starts_with("Citation Key: ")))
        .expect("a synthetic item with a citation key");
    let citation_key = field(with_key, "extra").unwrap().trim_start_matches("Citation Key: ").lines().next().unwrap();
    // An item whose title, year and first author a .bib gives in other case and punctuation, without its DOI.
    let by_title = items.iter().rev().find(|item| field(item, "DOI").is_some() && item["key"] != with_key["key"]);
    let by_title = by_title.expect("an item");
    let title = field(by_title, "title").unwrap().to_uppercase();
    let year = &field(by_title, "date").unwrap()[..4];
    let last = by_title["data"]["creators"][0]["lastName"].as_str().unwrap();
    let bib = format!(
        "@article{{{citation_key},\n  title = {{Something else entirely}},\n  year = {{1999}}\n}}\n\n\
         @article{{other2024,\n  title = {{{title}!}},\n  author = {{{last}, Q.}},\n  year = {{{year}}}\n}}\n"
    );
    let mut answer = check(&app, &bib, "bibtex").await;
    for _ in 0..5 {
        if answer["mirror"]["complete"] == true {
            break;
        }
        answer = check(&app, &bib, "bibtex").await;
    }
    let reports = answer["references"].as_array().expect("checked");
    assert_eq!(reports.len(), 2, "{answer}");
    assert_eq!(reports[0]["matchedBy"], "citationKey", "{}", reports[0]);
    assert_eq!(reports[0]["itemKey"], with_key["key"]);
    assert_eq!(reports[1]["matchedBy"], "title", "{}", reports[1]);
    let title_keys: BTreeSet<String> = std::iter::once(&reports[1]["itemKey"])
        .chain(reports[1]["alsoMatching"].as_array().into_iter().flatten())
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect();
    assert!(title_keys.contains(by_title["key"].as_str().unwrap()), "{}", reports[1]);
}

/// The outcome, key and how of each reference: what a user reads off a check.
fn verdicts(answer: &Value) -> Vec<(Value, Value, Value)> {
    let reports = answer["references"].as_array().cloned().unwrap_or_default();
    reports.iter().map(|r| (r["outcome"].clone(), r["itemKey"].clone(), r["matchedBy"].clone())).collect()
}

#[tokio::test]
async fn over_the_demo_library_the_mirror_matches_as_zotero_read_live_does() {
    let sim = demo_sim();
    let mut bib = String::new();
    for (at, item) in regular(&sim).iter().enumerate() {
        let title = field(item, "title").unwrap_or("Untitled");
        let year = field(item, "date").map_or("", |date| &date[..date.len().min(4)]);
        let last = item["data"]["creators"][0]["lastName"].as_str().unwrap_or("Anon");
        let doi = field(item, "DOI").filter(|_| at % 2 == 0).map(|doi| format!("  doi = {{{doi}}},\n"));
        bib.push_str(&format!(
            "@article{{ref{at},\n  title = {{{title}}},\n  author = {{{last}, A.}},\n{}  year = {{{year}}}\n}}\n\n",
            doi.unwrap_or_default()
        ));
    }
    bib.push_str("@article{absent,\n  title = {A work this library has never heard of at all},\n  year = {2001}\n}\n");
    let live = check(&app_with_sim(sim.clone()), &bib, "bibtex").await;
    assert!(live.get("mirror").is_none());
    let mirrored = check(&app_with_mirror(sim.clone()), &bib, "bibtex").await;
    assert_eq!(mirrored["mirror"]["complete"], true, "the demo library fills in one call: {mirrored}");
    assert!(live["counts"]["matched"].as_u64().unwrap() >= 10, "{live}");
    assert_eq!(verdicts(&mirrored), verdicts(&live));
}

#[tokio::test]
async fn a_failing_mirror_leaves_the_check_to_zotero_and_says_so() {
    let sim = demo_sim();
    let doi = regular(&sim).iter().find_map(|item| field(item, "DOI").map(str::to_owned)).expect("a DOI");
    let mut app = app_with_sim(sim);
    app.platform.mirror_db = Some(Rc::new(UnreachableMirror));
    let answer = check(&app, &doi, "identifiers").await;
    assert_eq!(answer["counts"]["matched"], 1, "{answer}");
    assert!(answer.get("mirror").is_none());
    assert!(answer["note"].as_str().unwrap().contains("read from Zotero instead"), "{answer}");
}

#[tokio::test]
async fn each_library_is_matched_against_its_own_mirror_only() {
    let sim = demo_sim();
    sim.add_group(777, DEMO_KEY, true);
    let group = LibraryRef::Group(777);
    sim.insert_item(
        group,
        json!({ "itemType": "journalArticle", "title": "Only in the group", "DOI": "10.7777/group.only" }),
    );
    let personal_doi = regular(&sim).iter().find_map(|item| field(item, "DOI").map(str::to_owned)).expect("a DOI");
    let app = app_with_mirror(sim.clone());
    let ask = |doi: &str, library: Option<&str>| {
        let mut arguments = json!({ "text": doi, "format": "identifiers", "checkRegistry": false });
        if let Some(library) = library {
            arguments["library"] = json!(library);
        }
        let app = &app;
        async move { ok(&call_tool(app, "zotero_check_references", arguments).await).clone() }
    };
    let in_group = ask("10.7777/group.only", Some("groups/777")).await;
    assert_eq!(in_group["counts"]["matched"], 1, "{in_group}");
    assert_eq!(in_group["mirror"]["items"], 1, "the group's mirror holds the group's one item");
    let personal_in_group = ask(&personal_doi, Some("groups/777")).await;
    assert_eq!(personal_in_group["counts"]["matched"], 0, "{personal_in_group}");
    let group_in_personal = ask("10.7777/group.only", None).await;
    assert_eq!(group_in_personal["counts"]["matched"], 0, "{group_in_personal}");
    assert!(group_in_personal["mirror"]["items"].as_u64().unwrap() > 1);
    assert_eq!(ask(&personal_doi, None).await["counts"]["matched"], 1);
}

#[tokio::test]
async fn the_most_references_a_call_takes_are_matched_in_one_query() {
    // `limit` takes at most 60: every one of them, as DOIs and as titles, selects its candidates in one query.
    let sim = Rc::new(Simulator::synthetic(3_000, 11));
    let app = app_with_mirror(sim.clone());
    let items = regular(&sim);
    let mut bib = String::new();
    for (at, item) in items.iter().step_by(items.len() / 60).take(60).enumerate() {
        let title = field(item, "title").unwrap_or("Untitled");
        let doi = field(item, "DOI").unwrap_or("10.9999/none");
        bib.push_str(&format!("@article{{ref{at},\n  title = {{{title}}},\n  doi = {{{doi}}}\n}}\n\n"));
    }
    let mut answer = check(&app, &bib, "bibtex").await;
    for _ in 0..10 {
        if answer["mirror"]["complete"] == true {
            break;
        }
        answer = check(&app, &bib, "bibtex").await;
    }
    let answer = check(&app, &bib, "bibtex").await;
    assert_eq!(answer["references"].as_array().map(Vec::len), Some(60), "{answer}");
    assert_eq!(answer["counts"]["matched"], 60, "{answer}");
    assert_eq!(answer["requests"], 1);
}
