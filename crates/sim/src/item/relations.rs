//! Relations: normalized as Zotero prints them, and read back one predicate at a time.

use serde_json::{json, Map, Value};

use super::scalar_text;

/// Relations as Zotero prints them: a string for one value, an array for several.
pub fn normalize_relations(val: &Value) -> Map<String, Value> {
    let mut out = Map::new();
    if let Value::Object(map) = val {
        for (predicate, object) in map {
            let values: Vec<String> = match object {
                Value::Array(a) => a.iter().map(scalar_text).collect(),
                other => vec![scalar_text(other)],
            };
            let mut unique: Vec<String> = Vec::new();
            for v in values.into_iter().filter(|v| !v.is_empty()) {
                if !unique.contains(&v) {
                    unique.push(v);
                }
            }
            match unique.len() {
                0 => {}
                1 => {
                    out.insert(predicate.clone(), json!(unique[0]));
                }
                _ => {
                    out.insert(predicate.clone(), json!(unique));
                }
            }
        }
    }
    out
}

/// All values of a relation predicate, whether stored as a string or an array.
pub fn relation_values(relations: &Map<String, Value>, predicate: &str) -> Vec<String> {
    match relations.get(predicate) {
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).map(str::to_string).collect(),
        _ => Vec::new(),
    }
}
