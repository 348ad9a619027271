//! The empty item JSON `/items/new` returns for a type.

use serde_json::{json, Map, Value};

use crate::schema::{is_regular_type, ItemTypeDef};

/// The item template `/items/new` returns.
pub fn template(type_def: &ItemTypeDef, link_mode: Option<&str>, annotation_type: Option<&str>) -> Value {
    let item_type = type_def.name.as_str();
    let mut out = Map::new();
    out.insert("itemType".into(), json!(item_type));
    if let Some(mode) = link_mode {
        out.insert("linkMode".into(), json!(mode));
    }
    let embedded = link_mode == Some("embedded_image");
    let mut first = true;
    for f in &type_def.fields {
        if item_type == "attachment" && f.name == "url" && !link_mode.is_some_and(|m| m.ends_with("_url")) {
            continue;
        }
        out.insert(f.name.clone(), json!(""));
        if first && is_regular_type(item_type) {
            let creator = type_def.primary_creator.clone().unwrap_or_else(|| "author".into());
            out.insert("creators".into(), json!([{"creatorType": creator, "firstName": "", "lastName": ""}]));
            first = false;
        }
    }
    if embedded {
        out.insert("parentItem".into(), json!(""));
    } else if let Some(kind) = annotation_type {
        out.insert("parentItem".into(), json!(""));
        out.insert("annotationType".into(), json!(kind));
        if matches!(kind, "highlight" | "underline") {
            out.insert("annotationText".into(), json!(""));
        }
        out.insert("annotationComment".into(), json!(""));
        out.insert("annotationColor".into(), json!(""));
        out.insert("annotationPageLabel".into(), json!(""));
        out.insert("annotationSortIndex".into(), json!("00000|000000|00000"));
        let mut position = json!({"pageIndex": 0, "rects": []});
        if kind == "ink" {
            position = json!({"pageIndex": 0, "paths": [], "width": 2});
        } else if kind == "image" {
            position = json!({"pageIndex": 0, "rects": [], "width": 0, "height": 0});
        }
        out.insert("annotationPosition".into(), position);
    }
    if matches!(item_type, "note" | "attachment") {
        out.insert("note".into(), json!(""));
    }
    out.insert("tags".into(), json!([]));
    out.insert("collections".into(), json!([]));
    out.insert("relations".into(), json!({}));
    if let Some(mode) = link_mode {
        out.insert("contentType".into(), json!(""));
        out.insert("charset".into(), json!(""));
        if mode == "linked_file" {
            out.insert("path".into(), json!(""));
        }
        if mode.starts_with("imported_") || embedded {
            out.insert("filename".into(), json!(""));
            out.insert("md5".into(), Value::Null);
            out.insert("mtime".into(), Value::Null);
        }
        if embedded {
            for prop in ["title", "url", "accessDate", "tags", "collections", "relations", "note", "charset"] {
                out.remove(prop);
            }
        }
    } else if annotation_type.is_some() {
        out.remove("collections");
        out.remove("relations");
    }
    Value::Object(out)
}
