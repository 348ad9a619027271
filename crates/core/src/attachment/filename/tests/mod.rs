//! Tests of the filename templates, by area. The helpers here build the items they render.

use serde_json::json;

use super::*;

mod check_template;
mod conditions;
mod file_names;
mod limits;
mod modifiers;
mod variables;

/// The parent item of most tests.
fn paper() -> Value {
    json!({
        "key": "AAAA1111",
        "version": 3,
        "itemType": "journalArticle",
        "title": "Attention Is All You Need",
        "date": "2017-06-12",
        "publicationTitle": "NeurIPS",
        "creators": [
            {"creatorType": "author", "firstName": "Ashish", "lastName": "Vaswani"},
            {"creatorType": "author", "firstName": "Noam", "lastName": "Shazeer"},
            {"creatorType": "editor", "firstName": "Some", "lastName": "Editor"}
        ],
        "extra": "Citation Key: vaswani2017attention"
    })
}

/// `base` with some fields replaced.
fn with(mut base: Value, changes: Value) -> Value {
    if let (Some(item), Some(changes)) = (base.as_object_mut(), changes.as_object()) {
        for (k, v) in changes {
            item.insert(k.clone(), v.clone());
        }
    }
    base
}

fn data(item: &Value) -> &Map<String, Value> {
    item.as_object().expect("test items are objects")
}

fn r(template: &str, item: &Value) -> String {
    render(template, data(item), None)
}

fn build(item: &Value, current: &str) -> Option<String> {
    build_renamed_filename(data(item), current, DEFAULT_TEMPLATE, None)
}

fn authors(names: &[&str]) -> Value {
    let creators: Vec<Value> =
        names.iter().map(|n| json!({"creatorType": "author", "firstName": "X", "lastName": n})).collect();
    with(paper(), json!({ "creators": creators }))
}
