//! `zotero_rename_attachments` with hostile templates, through the router with the read-only test token: a
//! template whose patterns are over the limits is refused as an argument error naming the limit before anything
//! is read, one that would search too much fails per item, and a template is parsed once per call however many
//! files it names.

mod common;

use common::*;
use serde_json::{json, Value};
use zotero_mcp_core::attachment::filename::parses_on_this_thread;

/// Parents with stored PDFs in the demo library, and one of those PDFs.
const PARENTS: [&str; 2] = ["KPDKK5UT", "T6W7H8UE"];
const ATTACHMENT: &str = "UN79YVS8";

/// The review's probe: 33 copies of a pattern that compiles to 50,000 states.
fn probe() -> String {
    r#"{{ title replaceFrom="(((a?){50}){50}){20}" }}"#.repeat(33)
}

async fn call(sim: &std::rc::Rc<zotero_sim::Simulator>, arguments: Value) -> Value {
    let request = modern("tools/call", json!({ "name": "zotero_rename_attachments", "arguments": arguments }));
    let reply = send(&app_with_sim(sim.clone()), request).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    reply.result().clone()
}

#[tokio::test]
async fn the_probe_template_is_refused_before_anything_is_read() {
    let sim = demo_sim();
    let result = call(&sim, json!({ "itemKeys": PARENTS, "template": probe() })).await;
    let error = error_text(&result);
    assert!(error.contains("template: `{{ title replaceFrom="), "{error}");
    assert!(error.contains("compiles to more than 4096 bytes"), "{error}");
    assert!(error.contains("use smaller or fewer"), "{error}");
    assert!(sim.requests().is_empty(), "nothing is read for a refused template: {:?}", sim.requests().len());
}

#[tokio::test]
async fn too_many_patterns_are_refused_naming_the_limit() {
    let sim = demo_sim();
    let template = r#"{{ title match="\w+" }}"#.repeat(9);
    let error = error_text(&call(&sim, json!({ "itemKeys": PARENTS, "template": template })).await);
    assert!(error.contains("at most 8 `match` and `replaceFrom` patterns; use fewer"), "{error}");
    assert!(sim.requests().is_empty());
}

#[tokio::test]
async fn a_rendering_over_the_search_budget_fails_for_its_files_only() {
    let sim = demo_sim();
    // Each pattern is within the size limit, but eight global replacements that match every character and read
    // to the end of the title after each match search more than a rendering may.
    let slow = r#"{{ title replaceFrom="(?:(?:.*){40}x|.)" replaceTo="b" regexOpts="g" }}"#.repeat(8);
    let result = call(&sim, json!({ "itemKeys": [PARENTS[0]], "template": slow })).await;
    let planned = ok(&result)["planned"].as_array().expect("a plan").clone();
    assert!(!planned.is_empty());
    for entry in &planned {
        let status = entry["status"].as_str().unwrap_or_default();
        assert!(status.starts_with("failed: the template's patterns would search more than 10000"), "{entry}");
        assert_eq!(entry["to"], entry["from"], "nothing is proposed: {entry}");
    }
}

#[tokio::test]
async fn a_template_is_parsed_once_per_call() {
    let sim = demo_sim();
    let before = parses_on_this_thread();
    let template = r#"{{ firstCreator suffix=" - " }}{{ title replaceFrom="\s+" replaceTo="_" regexOpts="g" }}"#;
    let result = call(&sim, json!({ "itemKeys": [PARENTS[0], PARENTS[1], ATTACHMENT], "template": template })).await;
    assert_eq!(parses_on_this_thread() - before, 1, "one parse for the call");
    let planned = ok(&result)["planned"].as_array().expect("a plan").clone();
    assert!(planned.len() >= 3, "{planned:?}");
    for entry in &planned {
        assert_eq!(entry["status"], "planned", "{entry}");
        let to = entry["to"].as_str().unwrap_or_default();
        assert!(to.contains(" - ") && !to.contains("- _") && to.ends_with(".pdf"), "{entry}");
        assert!(!to.trim_end_matches(".pdf").split(" - ").nth(1).unwrap_or(" ").contains(' '), "{entry}");
    }
}
