//! The account endpoints: `/keys/<key>` (what a key may do) and `/users/<id>/groups`.

use serde_json::{json, Map, Value};

use super::reads::listing;
use super::{allow, Caller, Req, GET};
use crate::error::{ApiError, ApiResult};
use crate::query::{self, Action};
use crate::reply::Reply;
use crate::state::{Library, State, API_BASE, WWW_BASE};
use crate::LibraryRef;

pub(super) fn key_info(state: &State, req: &Req, caller: &Caller, key: &str) -> ApiResult<Reply> {
    allow(req, &[GET], "GET")?;
    let key = if key == "current" {
        match &caller.api_key {
            Some(k) => k.clone(),
            None => return Err(ApiError::forbidden("Forbidden")),
        }
    } else {
        key.to_string()
    };
    let Some(grant) = state.keys.get(&key) else {
        return Err(ApiError::not_found(format!("Key '{key}' not found")));
    };
    let mut access = Map::new();
    if grant.user_library {
        access.insert(
            "user".into(),
            json!({"library": true, "files": grant.user_files, "notes": true, "write": grant.user_write}),
        );
    }
    if let Some(write) = grant.all_groups {
        // A key for all groups names none of them (the dataserver's `access.groups.all`).
        access.insert("groups".into(), json!({ "all": { "library": true, "write": write } }));
    } else if !grant.groups.is_empty() {
        let groups: Map<String, Value> =
            grant.groups.iter().map(|(id, write)| (id.to_string(), json!({"library": true, "write": write}))).collect();
        access.insert("groups".into(), Value::Object(groups));
    }
    let body = json!({
        "key": key,
        "userID": grant.user_id,
        "username": state.username(grant.user_id),
        "displayName": "",
        "access": access,
    });
    Ok(Reply::json(200, &body))
}

/// `/users/<id>/groups`: the groups the key can see.
pub(super) fn user_groups(state: &State, req: &Req, caller: &Caller, user_id: u64) -> ApiResult<Reply> {
    allow(req, &[GET], "HEAD, GET")?;
    let params = query::parse(&req.query, Action::Other, false)?;
    let grant =
        caller.grant.as_ref().filter(|g| g.user_id == user_id).ok_or_else(|| ApiError::forbidden("Forbidden"))?;
    let groups: Vec<&Library> =
        grant.groups.keys().filter_map(|id| state.libraries.get(&LibraryRef::Group(*id))).collect();
    let versions = groups
        .iter()
        .filter_map(|g| match g.lref {
            LibraryRef::Group(id) => Some((id.to_string(), g.version)),
            LibraryRef::User(_) => None,
        })
        .collect();
    let entries = groups
        .iter()
        .map(|g| {
            let id = match g.lref {
                LibraryRef::Group(id) | LibraryRef::User(id) => id,
            };
            json!({
                "id": id,
                "version": g.version,
                "links": {
                    "self": {"href": format!("{API_BASE}/groups/{id}"), "type": "application/json"},
                    "alternate": {"href": format!("{WWW_BASE}/groups/{id}"), "type": "text/html"}
                },
                "meta": {"numItems": g.items.len()},
                "data": {
                    "id": id,
                    "version": g.version,
                    "name": g.name,
                    "owner": user_id,
                    "type": "Private",
                    "description": "",
                    "url": "",
                    "libraryEditing": "members",
                    "libraryReading": "members",
                    "fileEditing": if g.files_editable { "members" } else { "none" }
                }
            })
        })
        .collect();
    let version = groups.iter().map(|g| g.version).max().unwrap_or(0);
    let total = groups.len();
    Ok(listing(req, &params, version, total, Vec::new(), versions, entries))
}
