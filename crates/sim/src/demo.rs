//! Seeding from a library file (`sim/demo/library.json`).
//!
//! The file holds editable JSON as the API's `data` blocks, so it can be checked against the same validation as
//! a write:
//!
//! ```json
//! {
//!   "library": {"type": "user", "id": 1234567, "name": "Demo Researcher"},
//!   "collections": [{"key": "GPXYGUKW", "name": "PhD Thesis", "parentCollection": false}],
//!   "items": [{"key": "T6W7H8UE", "itemType": "journalArticle", "title": "…", "collections": ["GPXYGUKW"]}],
//!   "fulltext": {"93WJRKG5": {"content": "…", "indexedPages": 13, "totalPages": 13}},
//!   "searches": [{"key": "HEATMAIZ", "name": "…", "conditions": [{"condition": "tag", "operator": "is", "value": "maize"}]}]
//! }
//! ```
//!
//! Objects may come in any order (parents are inserted before their children); whole API objects with a `data`
//! property are accepted too; keys starting with `_` (comments) are ignored.

use serde_json::Value;

use crate::{LibraryRef, Simulator};

/// The bundled demo library (see build.rs).
pub const DEMO_JSON: &str = include_str!(concat!(env!("OUT_DIR"), "/demo-library.json"));

fn data_of(v: &Value) -> Value {
    match v.get("data") {
        Some(d @ Value::Object(_)) => d.clone(),
        _ => v.clone(),
    }
}

/// Loads a library file into `lib`.
///
/// # Panics
/// If the file does not parse or an object is one the API would refuse: the bundled demo is part of the build,
/// and the tests load it.
pub fn load(sim: &Simulator, lib: LibraryRef, text: &str) {
    let root: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => panic!("the demo library does not parse: {e}"),
    };
    if let Some(name) = root.pointer("/library/name").and_then(Value::as_str) {
        sim.set_library_name(lib, name);
    }
    let collections: Vec<Value> =
        root.get("collections").and_then(Value::as_array).map(|a| a.iter().map(data_of).collect()).unwrap_or_default();
    insert_in_dependency_order(collections, "parentCollection", |v| {
        sim.insert_collection(lib, v);
    });

    let mut fulltext: Vec<(String, Value)> = match root.get("fulltext") {
        Some(Value::Object(map)) => map.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        Some(Value::Array(list)) => {
            list.iter().filter_map(|v| Some((v.get("key")?.as_str()?.to_string(), v.clone()))).collect()
        }
        _ => Vec::new(),
    };
    let items: Vec<Value> = root
        .get("items")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|v| {
                    let mut d = data_of(v);
                    // Full text may also sit on the attachment itself.
                    if let Some(obj) = d.as_object_mut() {
                        for name in ["fulltext", "fullText"] {
                            if let (Some(ft), Some(key)) =
                                (obj.remove(name), obj.get("key").and_then(Value::as_str).map(str::to_string))
                            {
                                let ft = if ft.is_string() { serde_json::json!({"content": ft}) } else { ft };
                                fulltext.push((key, ft));
                            }
                        }
                    }
                    d
                })
                .collect()
        })
        .unwrap_or_default();
    insert_in_dependency_order(items, "parentItem", |v| {
        sim.insert_item(lib, v);
    });

    for (key, ft) in fulltext {
        let content = ft.get("content").and_then(Value::as_str).unwrap_or("");
        let pages = |name: &str| ft.get(name).and_then(Value::as_u64).map(|n| n as u32);
        sim.set_fulltext(lib, &key, content, pages("indexedPages"), pages("totalPages"));
    }

    // Saved searches last: their conditions name collections and tags, which are all in place by now.
    for search in root.get("searches").and_then(Value::as_array).into_iter().flatten() {
        let mut data = data_of(search);
        if let Some(object) = data.as_object_mut() {
            object.retain(|name, _| !name.starts_with('_'));
        }
        sim.insert_search(lib, data);
    }
}

/// Inserts objects so that each comes after the object its `parent_prop` names.
fn insert_in_dependency_order(mut pending: Vec<Value>, parent_prop: &str, mut insert: impl FnMut(Value)) {
    let mut done: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
    let pending_keys: std::collections::BTreeSet<String> =
        pending.iter().filter_map(|v| v.get("key").and_then(Value::as_str).map(str::to_string)).collect();
    while !pending.is_empty() {
        let before = pending.len();
        let mut rest = Vec::new();
        for v in pending {
            let parent = v.get(parent_prop).and_then(Value::as_str).filter(|p| !p.is_empty()).map(str::to_string);
            let ready = match &parent {
                Some(p) => done.contains(p) || !pending_keys.contains(p),
                None => true,
            };
            if ready {
                if let Some(k) = v.get("key").and_then(Value::as_str) {
                    done.insert(k.to_string());
                }
                insert(v);
            } else {
                rest.push(v);
            }
        }
        pending = rest;
        if pending.len() == before {
            // A cycle: insert the rest as they are and let validation report it.
            for v in pending.drain(..) {
                insert(v);
            }
        }
    }
}
