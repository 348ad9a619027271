//! The write path: an item's JSON checked property by property, then applied to the stored item or a blank one.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use super::relations::normalize_relations;
use super::validation::{validate_creators, validate_relations, validate_tags};
use super::{scalar_text, Attachment, Creator, CreatorName, ItemData, Tag, ANNOTATION_PROPS, LINK_MODES};
use crate::dates;
use crate::error::{ApiError, ApiResult};
use crate::keys::is_valid_key;
use crate::schema::{is_regular_type, ItemTypeDef, Schema};

const ANNOTATION_TYPES: [&str; 6] = ["highlight", "underline", "note", "image", "ink", "text"];

/// What the write needs to know about the library and the request, beyond the JSON.
pub struct WriteContext<'a> {
    pub existing: Option<&'a ItemData>,
    /// Partial update (PATCH, or POST of an existing object): absent properties keep their values.
    pub partial: bool,
    pub user_library: bool,
    pub now: &'a str,
}

/// A field value as a string: strings trimmed, numbers printed, `null`/`false` empty.
fn field_string(key: &str, v: &Value) -> ApiResult<String> {
    match v {
        Value::String(s) => Ok(s.trim().to_string()),
        Value::Number(n) => Ok(n.to_string()),
        Value::Bool(true) => Ok("1".into()),
        Value::Bool(false) | Value::Null => Ok(String::new()),
        Value::Array(_) | Value::Object(_) => {
            Err(ApiError::bad_request(format!("Unexpected array for property '{key}'")))
        }
    }
}

/// Validates one item's JSON against Zotero's rules and returns the item as it would be stored.
///
/// `json` is the editable JSON (`data`), already checked for key and version. Existence checks that need the
/// library (parent item, collections) are left to the caller, which has it.
pub fn apply(json: &Map<String, Value>, ctx: &WriteContext<'_>) -> ApiResult<ItemData> {
    let schema = Schema::get();
    if matches!(json.get("items"), Some(Value::Array(_))) {
        return Err(ApiError::bad_request("An 'items' array is not valid for single-item updates"));
    }
    let existing = ctx.existing;
    let is_new = existing.is_none();
    let partial = ctx.partial && !is_new;

    // Whether the item is (or becomes) a child, as validateJSONItem works it out.
    let parent_prop = json.get("parentItem");
    let parent_is_false = matches!(parent_prop, Some(Value::Bool(false)));
    let mut is_child = existing.is_some_and(|e| e.parent.is_some());
    if is_child {
        let unparented = if partial { parent_is_false } else { parent_prop.is_none() || parent_is_false };
        if unparented {
            is_child = false;
        } else if partial
            && parent_prop.is_none()
            && json.get("collections").and_then(Value::as_array).is_some_and(|c| !c.is_empty())
        {
            // Zotero treats `collections` on a child as an implicit `parentItem: false`.
            is_child = false;
        }
    } else if parent_prop.is_some_and(|p| !p.is_null() && !parent_is_false) {
        is_child = true;
    }
    let implicit_unparent = existing.is_some_and(|e| e.parent.is_some())
        && partial
        && parent_prop.is_none()
        && json.get("collections").and_then(Value::as_array).is_some_and(|c| !c.is_empty());

    // Required properties.
    let required: &[&str] = if partial {
        &[]
    } else if json.get("itemType").and_then(Value::as_str) == Some("attachment") {
        &["linkMode"]
    } else if is_new {
        &["itemType"]
    } else if is_child {
        &["itemType", "tags", "relations"]
    } else {
        &["itemType", "tags", "relations", "collections"]
    };
    for prop in required {
        if json.get(*prop).is_none_or(Value::is_null) {
            return Err(ApiError::bad_request(format!("'{prop}' property not provided")));
        }
    }

    let item_type: String = match json.get("itemType") {
        Some(Value::String(t)) => t.clone(),
        Some(_) => return Err(ApiError::bad_request("'itemType' must be a string")),
        None => existing.map(|e| e.item_type.clone()).unwrap_or_default(),
    };
    let link_mode_now: Option<String> = json
        .get("linkMode")
        .and_then(Value::as_str)
        .map(str::to_lowercase)
        .or_else(|| existing.and_then(|e| e.attachment.as_ref()).map(|a| a.link_mode.clone()));

    // Property-by-property validation, in the JSON's order like Zotero.
    for (key, val) in json {
        match key.as_str() {
            "key" | "version" => {}
            "itemKey" | "itemVersion" => return Err(ApiError::bad_request(format!("Invalid property '{key}'"))),
            "parentItem" => {
                if !matches!(val, Value::Bool(false)) {
                    let ok = val.as_str().is_some_and(is_valid_key);
                    if !ok {
                        return Err(ApiError::bad_request("'parentItem' must be a valid item key or false"));
                    }
                    if json.get("key").and_then(Value::as_str) == val.as_str() {
                        return Err(ApiError::bad_request(format!(
                            "Item {} cannot be a child of itself\n\nCheck your database integrity from the \
                             Advanced → Files and Folders pane of the Zotero preferences.",
                            scalar_text(val)
                        )));
                    }
                }
            }
            "itemType" => {
                if schema.item_type(&item_type).is_none() {
                    return Err(ApiError::bad_request(format!("'{item_type}' is not a valid itemType")));
                }
                if is_child && !matches!(item_type.as_str(), "note" | "attachment" | "annotation") {
                    return Err(ApiError::bad_request("Child item must be note, attachment, or annotation"));
                }
            }
            "tags" => validate_tags(val)?,
            "collections" => {
                let Some(list) = val.as_array() else {
                    return Err(ApiError::bad_request("'collections' property must be an array"));
                };
                if is_child && !list.is_empty() {
                    return Err(ApiError::bad_request("Child items cannot be assigned to collections"));
                }
                for k in list {
                    if !k.as_str().is_some_and(is_valid_key) {
                        return Err(ApiError::bad_request(format!(
                            "'{}' is not a valid collection key",
                            scalar_text(k)
                        )));
                    }
                }
            }
            "relations" => validate_relations(val)?,
            "creators" => validate_creators(val, &item_type, is_new)?,
            "note" => {
                if !matches!(item_type.as_str(), "note" | "attachment") {
                    return Err(ApiError::bad_request("'note' property is valid only for note and attachment items"));
                }
                if item_type == "attachment"
                    && link_mode_now.as_deref() == Some("embedded_image")
                    && val.as_str() != Some("")
                {
                    return Err(ApiError::bad_request("'note' property is not valid for embedded images"));
                }
            }
            "attachments" | "notes" => {
                return Err(ApiError::bad_request(format!("'{key}' property is no longer supported")));
            }
            "deleted" => {
                if !matches!(val, Value::Bool(_)) && val != &json!(0) && val != &json!(1) {
                    return Err(ApiError::bad_request("'deleted' must be a boolean"));
                }
            }
            "inPublications" => {
                if truthy(val) {
                    if !ctx.user_library {
                        return Err(ApiError::bad_request("Group items cannot be added to My Publications"));
                    }
                    if !is_child && matches!(item_type.as_str(), "note" | "attachment") {
                        return Err(ApiError::bad_request(
                            "Top-level notes and attachments cannot be added to My Publications",
                        ));
                    }
                    if item_type == "attachment" && link_mode_now.as_deref() == Some("linked_file") {
                        return Err(ApiError::bad_request(
                            "Linked-file attachments cannot be added to My Publications",
                        ));
                    }
                }
            }
            "linkMode" => {
                let mode = val.as_str().map(str::to_lowercase).unwrap_or_default();
                if !LINK_MODES.contains(&mode.as_str()) {
                    return Err(ApiError::bad_request(format!("'{}' is not a valid linkMode", scalar_text(val))));
                }
                if let Some(att) = existing.and_then(|e| e.attachment.as_ref()) {
                    if att.link_mode != mode {
                        return Err(ApiError::bad_request("Cannot change attachment linkMode"));
                    }
                }
            }
            "contentType" | "charset" | "filename" | "md5" | "mtime" | "path" => {
                if item_type != "attachment" {
                    return Err(ApiError::bad_request(format!("'{key}' is valid only for attachment items")));
                }
                let mode = link_mode_now.clone().unwrap_or_default();
                match key.as_str() {
                    "filename" | "md5" | "mtime" if !mode.starts_with("imported_") && mode != "embedded_image" => {
                        return Err(ApiError::bad_request(format!(
                            "'{key}' is valid only for imported and embedded-image attachments"
                        )));
                    }
                    "path" if mode != "linked_file" => {
                        return Err(ApiError::bad_request(format!(
                            "'{key}' is valid only for linked file attachment items"
                        )));
                    }
                    "charset" if mode == "embedded_image" && val.as_str().is_some_and(|s| !s.is_empty()) => {
                        return Err(ApiError::bad_request(format!("'{key}' is not valid for embedded images")));
                    }
                    "md5" => {
                        if let Some(s) = val.as_str().filter(|s| !s.is_empty()) {
                            let hex =
                                s.len() == 32 && s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
                            if !hex {
                                return Err(ApiError::bad_request(format!("'{s}' is not a valid MD5 hash")));
                            }
                        }
                    }
                    _ => {}
                }
            }
            "lastRead" => {
                if item_type != "attachment" {
                    return Err(ApiError::bad_request("'lastRead' is valid only for attachment items"));
                }
                if !ctx.user_library {
                    return Err(ApiError::bad_request("'lastRead' is valid only for user library items"));
                }
                let clear = matches!(val, Value::Null | Value::Bool(false)) || val == &json!("");
                if !clear && !val.is_i64() && !val.is_u64() {
                    return Err(ApiError::bad_request("'lastRead' must be a Unix timestamp integer"));
                }
            }
            k if ANNOTATION_PROPS.contains(&k) => {
                if item_type != "annotation" {
                    return Err(ApiError::bad_request(format!("'{k}' is valid only for annotation items")));
                }
                let kind = json
                    .get("annotationType")
                    .and_then(Value::as_str)
                    .map(str::to_string)
                    .or_else(|| {
                        existing
                            .and_then(|e| e.annotation.get("annotationType"))
                            .and_then(Value::as_str)
                            .map(str::to_string)
                    })
                    .unwrap_or_default();
                if k == "annotationType" && !ANNOTATION_TYPES.contains(&kind.as_str()) {
                    return Err(ApiError::bad_request(format!("Invalid annotationType '{kind}'")));
                }
                if k == "annotationText" && !matches!(kind.as_str(), "highlight" | "underline") {
                    return Err(ApiError::bad_request(
                        "'annotationText' can only be set for highlight and underline annotations",
                    ));
                }
                // As the dataserver checks them: the sort index of a PDF annotation is `PPPPP|OOOOOO|TTTTT`,
                // and the position is a JSON object sent as a string (at most 65,535 characters).
                if k == "annotationSortIndex" {
                    let index = val.as_str().unwrap_or("");
                    let parts: Vec<&str> = index.split('|').collect();
                    let digits = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_digit());
                    let pdf = parts.len() == 3 && digits(parts[0], 5) && digits(parts[1], 6) && digits(parts[2], 5);
                    let epub = parts.len() == 2 && digits(parts[0], 5) && digits(parts[1], 8);
                    if !(index.is_empty() || pdf || epub) {
                        return Err(ApiError::bad_request(format!("Invalid sortIndex '{index}'")));
                    }
                }
                if k == "annotationPosition" {
                    let text =
                        val.as_str().ok_or_else(|| ApiError::bad_request("'annotationPosition' must be a string"))?;
                    if text.chars().count() > 65_535 {
                        return Err(ApiError::bad_request("'annotationPosition' must be 65535 characters or less"));
                    }
                    if !serde_json::from_str::<Value>(text).is_ok_and(|v| v.is_object()) {
                        return Err(ApiError::bad_request("'annotationPosition' must be a JSON object"));
                    }
                }
                if k == "annotationColor" {
                    let color = val.as_str().unwrap_or("");
                    let ok = color.is_empty()
                        || (color.len() == 7
                            && color.starts_with('#')
                            && color[1..].bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)));
                    if !ok {
                        return Err(ApiError::bad_request("Invalid annotationColor"));
                    }
                }
            }
            "accessDate" => {
                let s = scalar_text(val);
                if dates::normalize_access_date(&s).is_none() {
                    return Err(ApiError::bad_request(format!(
                        "'accessDate' must be in ISO 8601 or UTC 'YYYY-MM-DD[ hh:mm:ss]' format or \
                         'CURRENT_TIMESTAMP' ({s})"
                    )));
                }
            }
            "dateAdded" | "dateModified" => {
                let s = scalar_text(val);
                if dates::normalize_timestamp(&s).is_none() {
                    return Err(ApiError::bad_request(format!(
                        "'{key}' must be in ISO 8601 or UTC 'YYYY-MM-DD hh:mm:ss' format ({s})"
                    )));
                }
            }
            other => {
                if !schema.is_known_field(other) {
                    return Err(ApiError::bad_request(format!("Invalid property '{other}'")));
                }
                if val.is_array() {
                    return Err(ApiError::bad_request(format!("Unexpected array for property '{other}'")));
                }
            }
        }
    }

    let Some(type_def) = schema.item_type(&item_type) else {
        return Err(ApiError::bad_request(format!("'{item_type}' is not a valid itemType")));
    };
    build(json, ctx, type_def, partial, implicit_unparent)
}

fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty() && s != "0",
        Value::Array(a) => !a.is_empty(),
        Value::Object(_) => true,
    }
}

/// An empty item of a type, as a full (PUT) write starts from.
fn blank(type_def: &ItemTypeDef, link_mode: Option<String>) -> ItemData {
    let item_type = type_def.name.clone();
    ItemData {
        note: matches!(item_type.as_str(), "note" | "attachment").then(String::new),
        attachment: (item_type == "attachment")
            .then(|| Attachment { link_mode: link_mode.unwrap_or_default(), ..Attachment::default() }),
        item_type,
        ..ItemData::default()
    }
}

/// Applies validated JSON on top of the existing item (partial) or a blank one (full).
fn build(
    json: &Map<String, Value>,
    ctx: &WriteContext<'_>,
    type_def: &ItemTypeDef,
    partial: bool,
    implicit_unparent: bool,
) -> ApiResult<ItemData> {
    let link_mode = json.get("linkMode").and_then(Value::as_str).map(str::to_lowercase);
    let mut item = match (ctx.existing, partial) {
        (Some(existing), true) => {
            let mut item = existing.clone();
            if item.item_type != type_def.name {
                change_type(&mut item, type_def);
            }
            item
        }
        (Some(existing), false) => {
            let mut item = blank(
                type_def,
                link_mode.clone().or_else(|| existing.attachment.as_ref().map(|a| a.link_mode.clone())),
            );
            item.date_added = existing.date_added.clone();
            item.date_modified = existing.date_modified.clone();
            item
        }
        (None, _) => {
            let mut item = blank(type_def, link_mode.clone());
            item.date_added = ctx.now.to_string();
            item.date_modified = ctx.now.to_string();
            item
        }
    };
    if implicit_unparent {
        item.parent = None;
    }
    if !partial {
        // A full write clears what it does not mention, including the parent and the trash flag.
        item.parent = None;
    }

    for (key, val) in json {
        match key.as_str() {
            "key" | "version" | "itemType" => {}
            "parentItem" => item.parent = val.as_str().map(str::to_string),
            "linkMode" => {
                if let Some(att) = item.attachment.as_mut() {
                    att.link_mode = val.as_str().map(str::to_lowercase).unwrap_or_default();
                }
            }
            "creators" => {
                let mut creators = Vec::new();
                for c in val.as_array().into_iter().flatten() {
                    let text = |k: &str| c.get(k).map(scalar_text).unwrap_or_default().trim().to_string();
                    let creator_type = text("creatorType");
                    let name = if c.get("name").is_some() {
                        CreatorName::Single(text("name"))
                    } else {
                        CreatorName::Split { first: text("firstName"), last: text("lastName") }
                    };
                    let empty = match &name {
                        CreatorName::Single(n) => n.is_empty(),
                        CreatorName::Split { first, last } => first.is_empty() && last.is_empty(),
                    };
                    if empty {
                        continue;
                    }
                    creators.push(Creator { creator_type, name });
                }
                item.creators = creators;
            }
            "tags" => {
                let mut tags: Vec<Tag> = Vec::new();
                for t in val.as_array().into_iter().flatten() {
                    let name = t.get("tag").map(scalar_text).unwrap_or_default().trim().to_string();
                    if name.is_empty() {
                        continue;
                    }
                    let kind =
                        t.get("type").map(scalar_text).and_then(|s| s.trim().parse::<f64>().ok()).unwrap_or(0.0) as i64;
                    let tag = Tag { name, kind };
                    if !tags.contains(&tag) {
                        tags.push(tag);
                    }
                }
                item.tags = tags;
            }
            "collections" => {
                let mut keys: Vec<String> = Vec::new();
                for k in val.as_array().into_iter().flatten().filter_map(Value::as_str) {
                    if !keys.iter().any(|x| x == k) {
                        keys.push(k.to_string());
                    }
                }
                item.collections = keys;
            }
            "relations" => item.relations = normalize_relations(val),
            "note" => item.note = Some(scalar_text(val)),
            "deleted" => item.deleted = truthy(val),
            "inPublications" => item.in_publications = truthy(val),
            "contentType" | "charset" | "filename" | "path" => {
                if let Some(att) = item.attachment.as_mut() {
                    let s = scalar_text(val).trim().to_string();
                    match key.as_str() {
                        "contentType" => att.content_type = s,
                        "charset" => att.charset = s,
                        "filename" => att.filename = s,
                        _ => att.path = s,
                    }
                }
            }
            "md5" => {
                if let Some(att) = item.attachment.as_mut() {
                    // Zotero ignores an empty md5 rather than clearing the stored one.
                    if let Some(s) = val.as_str().filter(|s| !s.is_empty()) {
                        att.md5 = Some(s.to_string());
                    }
                }
            }
            "mtime" => {
                if let Some(att) = item.attachment.as_mut() {
                    if let Some(n) = val.as_i64().or_else(|| val.as_str().and_then(|s| s.parse().ok())) {
                        if n != 0 {
                            att.mtime = Some(n);
                        }
                    }
                }
            }
            "lastRead" => {
                if let Some(att) = item.attachment.as_mut() {
                    att.last_read = val.as_i64();
                }
            }
            k if ANNOTATION_PROPS.contains(&k) => {
                item.annotation.insert(k.to_string(), val.clone());
            }
            "dateAdded" => {
                if let Some(ts) = dates::normalize_timestamp(&scalar_text(val)) {
                    item.date_added = ts;
                }
            }
            "dateModified" => {
                if let Some(ts) = dates::normalize_timestamp(&scalar_text(val)) {
                    item.date_modified = ts;
                }
            }
            field => {
                let mut value = field_string(field, val)?;
                if field == "accessDate" {
                    value = dates::normalize_access_date(&value).unwrap_or_default();
                }
                if value.is_empty() {
                    item.fields.remove(field);
                    continue;
                }
                if !type_def.has_field(field) {
                    return Err(ApiError::bad_request(format!(
                        "'{field}' is not a valid field for type '{}'",
                        type_def.name
                    )));
                }
                item.fields.insert(field.to_string(), value);
            }
        }
    }
    if item.item_type == "annotation" {
        for prop in ["annotationComment", "annotationColor", "annotationPageLabel", "annotationSortIndex"] {
            item.annotation.entry(prop.to_string()).or_insert_with(|| json!(""));
        }
    }
    Ok(item)
}

/// Moves fields across an item-type change: same-name fields stay, base-mapped ones follow their base, the rest
/// is dropped (as Zotero does when a type no longer has a field).
fn change_type(item: &mut ItemData, new_type: &ItemTypeDef) {
    let schema = Schema::get();
    let old_type = schema.item_type(&item.item_type);
    let mut fields = BTreeMap::new();
    for (name, value) in &item.fields {
        if new_type.has_field(name) {
            fields.insert(name.clone(), value.clone());
            continue;
        }
        let base = old_type.and_then(|t| t.fields.iter().find(|f| &f.name == name)).and_then(|f| f.base.clone());
        let base = base.unwrap_or_else(|| name.clone());
        if let Some(target) = new_type.field_for_base(&base) {
            fields.insert(target.to_string(), value.clone());
        }
    }
    item.fields = fields;
    item.item_type = new_type.name.clone();
    if !is_regular_type(&new_type.name) {
        item.creators.clear();
    }
}
