//! The schema endpoints: `/itemTypes`, `/itemFields`, `/itemTypeFields`, `/itemTypeCreatorTypes`,
//! `/creatorFields` and the `/items/new` template.

use serde_json::{json, Value};

use super::{allow, Req, GET};
use crate::error::{ApiError, ApiResult};
use crate::item;
use crate::query;
use crate::reply::Reply;
use crate::schema::{is_regular_type, Schema};

pub(super) fn mappings(req: &Req, which: &str) -> ApiResult<Reply> {
    allow(req, &[GET], "GET")?;
    let schema = Schema::get();
    let pairs = query::parse_pairs(&req.query);
    let item_type_param = pairs.iter().find(|(k, _)| k == "itemType").map(|(_, v)| v.clone());
    let type_def = || -> ApiResult<&'static crate::schema::ItemTypeDef> {
        let Some(t) = item_type_param.clone().filter(|t| !t.is_empty()) else {
            return Err(ApiError::bad_request("'itemType' not provided"));
        };
        schema
            .item_type(&t)
            .filter(|d| d.name != "annotation")
            .ok_or_else(|| ApiError::bad_request(format!("Invalid item type '{t}'")))
    };
    let body: Value = match which {
        "itemTypes" => schema
            .item_types()
            .iter()
            .filter(|t| t.name != "annotation")
            .map(|t| json!({"itemType": t.name, "localized": schema.type_label(&t.name)}))
            .collect(),
        "itemFields" => schema.all_fields().map(|f| json!({"field": f, "localized": schema.field_label(f)})).collect(),
        "itemTypeFields" => type_def()?
            .fields
            .iter()
            .map(|f| json!({"field": f.name, "localized": schema.field_label(&f.name)}))
            .collect(),
        "itemTypeCreatorTypes" => {
            let t = type_def()?;
            if !is_regular_type(&t.name) {
                json!([])
            } else {
                t.creator_types
                    .iter()
                    .map(|c| json!({"creatorType": c, "localized": schema.creator_label(c)}))
                    .collect()
            }
        }
        _ => json!([
            {"field": "firstName", "localized": "First"},
            {"field": "lastName", "localized": "Last"},
            {"field": "name", "localized": "Name"}
        ]),
    };
    Ok(Reply::json(200, &body))
}

pub(super) fn new_item_template(req: &Req) -> ApiResult<Reply> {
    allow(req, &[GET], "GET")?;
    let schema = Schema::get();
    let pairs = query::parse_pairs(&req.query);
    let param = |name: &str| pairs.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()).filter(|v| !v.is_empty());
    let Some(item_type) = param("itemType") else {
        return Err(ApiError::bad_request("'itemType' not provided"));
    };
    let mut link_mode = None;
    let mut annotation_type = None;
    if item_type == "attachment" {
        let Some(mode) = param("linkMode") else {
            return Err(ApiError::bad_request("linkMode required for itemType=attachment"));
        };
        if !item::LINK_MODES.contains(&mode.as_str()) {
            return Err(ApiError::bad_request(format!("Invalid linkMode '{mode}'")));
        }
        link_mode = Some(mode);
    } else if item_type == "annotation" {
        let Some(kind) = param("annotationType") else {
            return Err(ApiError::bad_request("annotationType required for itemType=annotation"));
        };
        if !matches!(kind.as_str(), "highlight" | "note" | "image" | "ink" | "underline" | "text") {
            return Err(ApiError::bad_request(format!("Invalid annotationType '{kind}'")));
        }
        annotation_type = Some(kind);
    }
    let Some(type_def) = schema.item_type(&item_type) else {
        return Err(ApiError::bad_request(format!("Invalid item type '{item_type}'")));
    };
    Ok(Reply::json(200, &item::template(type_def, link_mode.as_deref(), annotation_type.as_deref())))
}
