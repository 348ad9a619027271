//! The checks of tags, relations and creators a write makes, with Zotero's messages.

use serde_json::{json, Map, Value};

use super::scalar_text;
use crate::error::{ApiError, ApiResult};
use crate::schema::{is_regular_type, Schema};

/// Relation predicates the API accepts on items.
const ITEM_PREDICATES: [&str; 10] = [
    "owl:sameAs",
    "dc:replaces",
    "dc:relation",
    "mendeleyDB:documentUUID",
    "mendeleyDB:remoteDocumentUUID",
    "mendeleyDB:fileHash",
    "mendeleyDB:annotationUUID",
    "mendeleyDB:relatedDocumentUUID",
    "mendeleyDB:remoteFolderUUID",
    "mendeleyDB:remoteAnnotationUUID",
];

/// Predicates whose values need not be Zotero URIs.
const EXTERNAL_PREDICATES: [&str; 7] = [
    "mendeleyDB:documentUUID",
    "mendeleyDB:remoteDocumentUUID",
    "mendeleyDB:fileHash",
    "mendeleyDB:annotationUUID",
    "mendeleyDB:remoteFolderUUID",
    "mendeleyDB:relatedDocumentUUID",
    "mendeleyDB:remoteAnnotationUUID",
];

/// Zotero's tag length limit.
const MAX_TAG_LENGTH: usize = 255;

fn is_numeric(v: &Value) -> bool {
    match v {
        Value::Number(_) => true,
        Value::String(s) => s.trim().parse::<f64>().is_ok(),
        _ => false,
    }
}

pub(super) fn validate_tags(val: &Value) -> ApiResult<()> {
    let Some(list) = val.as_array() else {
        return Err(ApiError::bad_request("'tags' property must be an array"));
    };
    for tag in list {
        let Some(obj) = tag.as_object() else {
            return Err(ApiError::bad_request("Tag must be an object"));
        };
        if obj.is_empty() {
            return Err(ApiError::bad_request("Tag object is empty"));
        }
        for (k, v) in obj {
            match k.as_str() {
                "tag" => {
                    if v.is_array() || v.is_object() || v.is_null() {
                        return Err(ApiError::bad_request("Invalid tag name"));
                    }
                    let name = scalar_text(v);
                    if name.trim().chars().count() > MAX_TAG_LENGTH {
                        let short: String = name.chars().take(50).collect();
                        return Err(
                            ApiError::new(413, format!("Tag '{short}…' too long")).with_data(json!({"tag": name}))
                        );
                    }
                }
                "type" => {
                    if !is_numeric(v) {
                        return Err(ApiError::bad_request(format!("Invalid tag type '{}'", scalar_text(v))));
                    }
                }
                other => return Err(ApiError::bad_request(format!("Invalid tag property '{other}'"))),
            }
        }
    }
    Ok(())
}

pub(super) fn validate_relations(val: &Value) -> ApiResult<()> {
    let map = match val {
        Value::Object(m) => m.clone(),
        Value::Array(a) if a.is_empty() => Map::new(),
        _ => return Err(ApiError::bad_request("'relations' property must be an object")),
    };
    for (predicate, object) in &map {
        if !ITEM_PREDICATES.contains(&predicate.as_str()) {
            return Err(ApiError::bad_request(format!("Unsupported predicate '{predicate}'")));
        }
        if EXTERNAL_PREDICATES.contains(&predicate.as_str()) {
            continue;
        }
        let values: Vec<&Value> = match object {
            Value::Array(a) => a.iter().collect(),
            other => vec![other],
        };
        for uri in values {
            if !uri.as_str().is_some_and(is_zotero_item_uri) {
                return Err(ApiError::bad_request("'relations' values currently must be Zotero item URIs"));
            }
        }
    }
    Ok(())
}

/// `http://zotero.org/(users|groups)/<digits>/(publications/)?items/<8 chars>`.
fn is_zotero_item_uri(uri: &str) -> bool {
    let Some(rest) = uri.strip_prefix("http://zotero.org/") else { return false };
    let Some((kind, rest)) = rest.split_once('/') else { return false };
    if kind != "users" && kind != "groups" {
        return false;
    }
    let Some((id, rest)) = rest.split_once('/') else { return false };
    if id.is_empty() || !id.bytes().all(|b| b.is_ascii_digit()) {
        return false;
    }
    let rest = rest.strip_prefix("publications/").unwrap_or(rest);
    let Some(key) = rest.strip_prefix("items/") else { return false };
    key.len() == 8 && key.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
}

pub(super) fn validate_creators(val: &Value, item_type: &str, is_new: bool) -> ApiResult<()> {
    let schema = Schema::get();
    let Some(list) = val.as_array() else {
        return Err(ApiError::bad_request("'creators' property must be an array"));
    };
    for creator in list {
        let Some(obj) = creator.as_object() else {
            return Err(ApiError::bad_request("creator object must contain 'creatorType'"));
        };
        if !obj.contains_key("creatorType") {
            return Err(ApiError::bad_request("creator object must contain 'creatorType'"));
        }
        let blank = |k: &str| obj.get(k).is_none_or(|v| scalar_text(v).trim().is_empty());
        if blank("name") && blank("firstName") && blank("lastName") {
            // Zotero ignores the single nameless creator of an item template on creation.
            if list.len() == 1 && is_new {
                continue;
            }
            return Err(ApiError::bad_request("creator object must contain 'firstName'/'lastName' or 'name'"));
        }
        for (k, v) in obj {
            match k.as_str() {
                "creatorType" => {
                    let ct = scalar_text(v);
                    if !schema.is_creator_type(&ct) {
                        return Err(ApiError::bad_request(format!("'{ct}' is not a valid creator type")));
                    }
                    let valid = schema.item_type(item_type).is_some_and(|t| t.accepts_creator(&ct));
                    // Zotero accepts `author` on every regular type.
                    if !(valid || (ct == "author" && is_regular_type(item_type))) {
                        return Err(ApiError::bad_request(format!(
                            "'{ct}' is not a valid creator type for item type '{item_type}'"
                        )));
                    }
                }
                "firstName" => {
                    if !obj.contains_key("lastName") {
                        return Err(ApiError::bad_request(
                            "'lastName' creator field must be set if 'firstName' is set",
                        ));
                    }
                    if obj.contains_key("name") {
                        return Err(ApiError::bad_request(
                            "'firstName' and 'name' creator fields are mutually exclusive",
                        ));
                    }
                }
                "lastName" => {
                    if !obj.contains_key("firstName") {
                        return Err(ApiError::bad_request(
                            "'firstName' creator field must be set if 'lastName' is set",
                        ));
                    }
                    if obj.contains_key("name") {
                        return Err(ApiError::bad_request(
                            "'lastName' and 'name' creator fields are mutually exclusive",
                        ));
                    }
                }
                "name" => {
                    if obj.contains_key("firstName") {
                        return Err(ApiError::bad_request(
                            "'firstName' and 'name' creator fields are mutually exclusive",
                        ));
                    }
                    if obj.contains_key("lastName") {
                        return Err(ApiError::bad_request(
                            "'lastName' and 'name' creator fields are mutually exclusive",
                        ));
                    }
                }
                other => return Err(ApiError::bad_request(format!("Invalid creator property '{other}'"))),
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognizes_item_uris() {
        assert!(is_zotero_item_uri("http://zotero.org/users/1/items/ABCD2345"));
        assert!(is_zotero_item_uri("http://zotero.org/groups/12/publications/items/ABCD2345"));
        assert!(!is_zotero_item_uri("https://zotero.org/users/1/items/ABCD2345"));
        assert!(!is_zotero_item_uri("http://zotero.org/users/x/items/ABCD2345"));
    }
}
