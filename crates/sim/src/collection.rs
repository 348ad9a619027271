//! Collections: validation of written JSON, as `Zotero_Collections::validateJSONCollection` does it.

use serde_json::{json, Map, Value};

use crate::error::{ApiError, ApiResult};
use crate::item::normalize_relations;
use crate::keys::is_valid_key;
use crate::state::CollectionData;

const COLLECTION_PREDICATES: [&str; 2] = ["owl:sameAs", "mendeleyDB:remoteFolderUUID"];
const MAX_NAME_LENGTH: usize = 255;

fn is_collection_uri(uri: &str) -> bool {
    let Some(rest) = uri.strip_prefix("http://zotero.org/") else { return false };
    let mut parts = rest.split('/');
    let kind = parts.next();
    let id = parts.next().unwrap_or("");
    let mut next = parts.next();
    if next == Some("publications") {
        next = parts.next();
    }
    let key = parts.next().unwrap_or("");
    matches!(kind, Some("users" | "groups"))
        && !id.is_empty()
        && id.bytes().all(|b| b.is_ascii_digit())
        && next == Some("collections")
        && key.len() == 8
        && parts.next().is_none()
}

/// Validates a collection's JSON and returns the collection as it would be stored. `existing` is the stored
/// collection for updates; `partial` keeps unmentioned properties (PATCH, or POST of an existing object).
pub fn apply(json: &Map<String, Value>, existing: Option<&CollectionData>, partial: bool) -> ApiResult<CollectionData> {
    let partial = partial && existing.is_some();
    if !partial && json.get("name").is_none_or(Value::is_null) {
        return Err(ApiError::bad_request("'name' property not provided"));
    }
    for (key, val) in json {
        match key.as_str() {
            "key" | "version" => {}
            "collectionKey" | "collectionVersion" => {}
            "name" => {
                let Some(name) = val.as_str() else {
                    return Err(ApiError::bad_request("'name' must be a string"));
                };
                if name.is_empty() {
                    return Err(ApiError::bad_request("Collection name cannot be empty"));
                }
                if name.chars().count() > MAX_NAME_LENGTH {
                    let short: String = name.chars().take(50).collect();
                    return Err(ApiError::new(413, format!("Collection name '{short}…' too long"))
                        .with_data(json!({"value": short})));
                }
            }
            "parent" => return Err(ApiError::bad_request("'parent' property is now 'parentCollection'")),
            "parentCollection" => {
                let ok = match val {
                    Value::String(s) => s.is_empty() || is_valid_key(s),
                    Value::Bool(false) | Value::Null => true,
                    _ => false,
                };
                if !ok {
                    let kind = match val {
                        Value::String(_) => "string",
                        Value::Bool(_) => "boolean",
                        Value::Number(_) => "integer",
                        Value::Array(_) => "array",
                        _ => "object",
                    };
                    return Err(ApiError::bad_request(format!(
                        "'parentCollection' must be a collection key or FALSE ({kind})"
                    )));
                }
            }
            "relations" => {
                let map = match val {
                    Value::Object(m) => m.clone(),
                    Value::Array(a) if a.is_empty() => Map::new(),
                    _ => return Err(ApiError::bad_request("'relations' property must be an object")),
                };
                for (predicate, object) in &map {
                    if !COLLECTION_PREDICATES.contains(&predicate.as_str()) {
                        return Err(ApiError::bad_request(format!("Unsupported predicate '{predicate}'")));
                    }
                    if predicate == "mendeleyDB:remoteFolderUUID" {
                        continue;
                    }
                    let values: Vec<&Value> = match object {
                        Value::Array(a) => a.iter().collect(),
                        other => vec![other],
                    };
                    if values.iter().any(|v| !v.as_str().is_some_and(is_collection_uri)) {
                        return Err(ApiError::bad_request(
                            "'relations' values currently must be Zotero collection URIs",
                        ));
                    }
                }
            }
            "deleted" => {
                if !matches!(val, Value::Bool(_)) && val != &json!(0) && val != &json!(1) {
                    return Err(ApiError::bad_request("'deleted' must be a boolean"));
                }
            }
            other => return Err(ApiError::bad_request(format!("Invalid property '{other}'"))),
        }
    }

    let mut out = match (existing, partial) {
        (Some(e), true) => e.clone(),
        _ => CollectionData::default(),
    };
    if let Some(name) = json.get("name").and_then(Value::as_str) {
        out.name = name.to_string();
    }
    match json.get("parentCollection") {
        Some(Value::String(s)) if !s.is_empty() => out.parent = Some(s.clone()),
        Some(_) => out.parent = None,
        None if !partial => out.parent = None,
        None => {}
    }
    if let Some(rel) = json.get("relations") {
        out.relations = normalize_relations(rel);
    }
    match json.get("deleted") {
        Some(v) => out.deleted = v == &json!(true) || v == &json!(1),
        None if !partial => out.deleted = false,
        None => {}
    }
    Ok(out)
}
