//! Saved searches: how one is stored, the validation of written JSON (the rules of the dataserver's
//! `Zotero_Searches::validateJSONSearch`) and the JSON the API shows (`GET /searches` is in `routes/reads.rs`).
//!
//! The API stores and syncs saved searches but never runs them (there is no `searches/<key>/items`), so the
//! simulator does not either: a search is a name and a list of conditions, versioned like a collection.

use serde_json::{json, Map, Value};

use crate::error::{ApiError, ApiResult};

const MAX_NAME_CHARS: usize = 255;
const MAX_CONDITION_BYTES: usize = 50;
const MAX_OPERATOR_BYTES: usize = 25;
const MAX_VALUE_BYTES: usize = 255;

/// One condition as Zotero syncs it. A mode (`fulltextContent/regexp`) stays part of `condition`, as the API
/// shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchCondition {
    pub condition: String,
    pub operator: String,
    pub value: String,
}

/// A saved search's editable properties.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SearchData {
    pub name: String,
    pub conditions: Vec<SearchCondition>,
    /// In the trash (Zotero 7 syncs trashed searches like trashed collections).
    pub deleted: bool,
}

#[derive(Debug, Clone)]
pub struct SearchRecord {
    pub key: String,
    pub version: u64,
    /// Creation order, the last tie-break of a listing.
    pub seq: u64,
    pub data: SearchData,
    pub date_added: String,
    pub date_modified: String,
}

fn condition_from(value: &Value) -> ApiResult<SearchCondition> {
    let Some(object) = value.as_object() else {
        return Err(ApiError::bad_request("Search condition must be an object"));
    };
    for required in ["condition", "operator", "value"] {
        if object.get(required).is_none_or(Value::is_null) {
            return Err(ApiError::bad_request(format!("'{required}' property not provided for search condition")));
        }
    }
    let mut out = SearchCondition { condition: String::new(), operator: String::new(), value: String::new() };
    for (name, v) in object {
        let Some(text) = v.as_str() else {
            return Err(ApiError::bad_request(format!("'{name}' must be a string")));
        };
        match name.as_str() {
            "condition" => {
                if text.is_empty() {
                    return Err(ApiError::bad_request("Search condition cannot be empty"));
                }
                if text.len() > MAX_CONDITION_BYTES {
                    return Err(ApiError::bad_request(format!(
                        "Search condition cannot be longer than {MAX_CONDITION_BYTES} characters"
                    )));
                }
                out.condition = text.to_string();
            }
            "operator" => {
                if text.is_empty() {
                    return Err(ApiError::bad_request("Search operator cannot be empty"));
                }
                if text.len() > MAX_OPERATOR_BYTES {
                    return Err(ApiError::bad_request(format!(
                        "Search operator cannot be longer than {MAX_OPERATOR_BYTES} characters"
                    )));
                }
                out.operator = text.to_string();
            }
            "value" => {
                if text.len() > MAX_VALUE_BYTES {
                    return Err(ApiError::bad_request(format!(
                        "Search condition value cannot be longer than {MAX_VALUE_BYTES} characters"
                    )));
                }
                out.value = text.to_string();
            }
            other => return Err(ApiError::bad_request(format!("Invalid property '{other}' for search condition"))),
        }
    }
    Ok(out)
}

/// Validates a search's JSON and returns the search as it would be stored. `existing` is the stored search for
/// updates; `partial` keeps unmentioned properties (PATCH, or POST of an existing object).
pub fn apply(json: &Map<String, Value>, existing: Option<&SearchData>, partial: bool) -> ApiResult<SearchData> {
    let partial = partial && existing.is_some();
    if !partial {
        for required in ["name", "conditions"] {
            if json.get(required).is_none_or(Value::is_null) {
                return Err(ApiError::bad_request(format!("'{required}' property not provided")));
            }
        }
    }
    let mut out = match (existing, partial) {
        (Some(e), true) => e.clone(),
        _ => SearchData::default(),
    };
    for (key, val) in json {
        match key.as_str() {
            // Checked with the object's version (`'searchKey' property is now 'key'`).
            "key" | "version" | "searchKey" | "searchVersion" => {}
            "name" => {
                let Some(name) = val.as_str() else {
                    return Err(ApiError::bad_request("'name' must be a string"));
                };
                if name.is_empty() {
                    return Err(ApiError::bad_request("Search name cannot be empty"));
                }
                if name.chars().count() > MAX_NAME_CHARS {
                    return Err(ApiError::new(
                        413,
                        format!("Search name cannot be longer than {MAX_NAME_CHARS} characters"),
                    ));
                }
                out.name = name.to_string();
            }
            "conditions" => {
                let Some(list) = val.as_array() else {
                    return Err(ApiError::bad_request(format!("'conditions' must be an array ({})", type_name(val))));
                };
                if list.is_empty() {
                    return Err(ApiError::bad_request("'conditions' cannot be empty"));
                }
                out.conditions = list.iter().map(condition_from).collect::<ApiResult<_>>()?;
            }
            "deleted" => match val {
                Value::Bool(b) => out.deleted = *b,
                v if v == &json!(0) || v == &json!(1) => out.deleted = v == &json!(1),
                _ => return Err(ApiError::bad_request("'deleted' must be a boolean")),
            },
            other => return Err(ApiError::bad_request(format!("Invalid property '{other}'"))),
        }
    }
    Ok(out)
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::String(_) => "string",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "integer",
        Value::Object(_) => "object",
        _ => "NULL",
    }
}

/// The API JSON of a search: `{key, version, library, links: {self}, data}` (the dataserver gives no
/// `alternate` link for searches). `base` is the library's API URL, `/users/1` on the API origin.
pub fn to_json(rec: &SearchRecord, base: &str, library: Value, include_data: bool) -> Value {
    let mut out = Map::new();
    out.insert("key".into(), json!(rec.key));
    out.insert("version".into(), json!(rec.version));
    out.insert("library".into(), library);
    out.insert(
        "links".into(),
        json!({"self": {"href": format!("{base}/searches/{}", rec.key), "type": "application/json"}}),
    );
    if include_data {
        let conditions: Vec<Value> = rec
            .data
            .conditions
            .iter()
            .map(|c| json!({"condition": c.condition, "operator": c.operator, "value": c.value}))
            .collect();
        let mut data = Map::new();
        data.insert("key".into(), json!(rec.key));
        data.insert("version".into(), json!(rec.version));
        data.insert("name".into(), json!(rec.data.name));
        data.insert("conditions".into(), Value::Array(conditions));
        if rec.data.deleted {
            data.insert("deleted".into(), json!(true));
        }
        out.insert("data".into(), Value::Object(data));
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn a_search_needs_a_name_and_conditions() {
        let e = apply(&object(json!({"name": "x"})), None, false).unwrap_err();
        assert_eq!(e.message, "'conditions' property not provided");
        let e = apply(&object(json!({"name": "x", "conditions": []})), None, false).unwrap_err();
        assert_eq!(e.message, "'conditions' cannot be empty");
        let e = apply(&object(json!({"name": "", "conditions": [{}]})), None, false).unwrap_err();
        assert_eq!(e.message, "Search name cannot be empty");
    }

    #[test]
    fn conditions_are_three_strings() {
        let bad = json!({"name": "x", "conditions": [{"condition": "title", "operator": "is"}]});
        assert_eq!(
            apply(&object(bad), None, false).unwrap_err().message,
            "'value' property not provided for search condition"
        );
        let bad = json!({"name": "x", "conditions": [{"condition": "title", "operator": "is", "value": 3}]});
        assert_eq!(apply(&object(bad), None, false).unwrap_err().message, "'value' must be a string");
        let bad = json!({"name": "x", "conditions": [{"condition": "t", "operator": "is", "value": "", "mode": "x"}]});
        assert_eq!(
            apply(&object(bad), None, false).unwrap_err().message,
            "Invalid property 'mode' for search condition"
        );
        let good = json!({"name": "x", "conditions": [{"condition": "fulltextContent/regexp", "operator": "contains", "value": "a.b"}]});
        let data = apply(&object(good), None, false).unwrap();
        assert_eq!(data.conditions[0].condition, "fulltextContent/regexp");
    }

    #[test]
    fn a_patch_keeps_what_it_does_not_name() {
        let first = apply(
            &object(json!({"name": "x", "conditions": [{"condition": "tag", "operator": "is", "value": "a"}]})),
            None,
            false,
        )
        .unwrap();
        let renamed = apply(&object(json!({"name": "y"})), Some(&first), true).unwrap();
        assert_eq!(renamed.name, "y");
        assert_eq!(renamed.conditions, first.conditions);
        assert_eq!(
            apply(&object(json!({"nam": "y"})), Some(&first), true).unwrap_err().message,
            "Invalid property 'nam'"
        );
    }
}
