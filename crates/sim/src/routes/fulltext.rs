//! The full-text endpoints: `/fulltext` (versions since) and `/items/<key>/fulltext` (read and write).

use serde_json::{json, Map, Value};

use super::{allow, lib, Req, GET, PUT};
use crate::error::{ApiError, ApiResult};
use crate::query::{self, Action};
use crate::reply::Reply;
use crate::state::State;
use crate::write;
use crate::LibraryRef;

pub(super) fn fulltext_versions(state: &State, req: &Req, lref: LibraryRef) -> ApiResult<Reply> {
    let params = query::parse(&req.query, Action::FullText, false)?;
    let l = lib(state, lref)?;
    let since = params.since.unwrap_or(0);
    let map: Map<String, Value> =
        l.fulltext.iter().filter(|(_, f)| f.version > since).map(|(k, f)| (k.clone(), json!(f.version))).collect();
    Ok(Reply::json(200, &Value::Object(map)).version(l.version))
}

pub(super) fn fulltext_item(state: &mut State, req: &Req, lref: LibraryRef, key: &str) -> ApiResult<Reply> {
    allow(req, &[GET, PUT], "GET, PUT")?;
    let l = lib(state, lref)?;
    let is_text_attachment =
        l.items.get(key).is_some_and(|r| r.data.attachment.as_ref().is_some_and(|a| a.link_mode != "linked_url"));
    if !is_text_attachment {
        // The API answers 404 both for a missing item and for one that is not a (file) attachment.
        return Err(ApiError::not_found("Not found"));
    }
    if req.method == PUT {
        let content_type = req.header("content-type").unwrap_or("");
        if content_type != "application/json" && !content_type.eq_ignore_ascii_case("application/json; charset=UTF-8") {
            return Err(ApiError::bad_request("Content-Type must be application/json"));
        }
        let version = write::put_fulltext(state, lref, key, &req.body)?;
        return Ok(Reply::new(204).version(version));
    }
    let Some(ft) = l.fulltext.get(key) else { return Err(ApiError::not_found("Not found")) };
    let mut body = Map::new();
    body.insert("content".into(), json!(ft.content));
    for (name, value) in [
        ("indexedChars", ft.indexed_chars),
        ("totalChars", ft.total_chars),
        ("indexedPages", ft.indexed_pages),
        ("totalPages", ft.total_pages),
    ] {
        if let Some(v) = value.filter(|v| *v != 0) {
            body.insert(name.into(), json!(v));
        }
    }
    Ok(Reply::json(200, &Value::Object(body)).version(ft.version))
}
