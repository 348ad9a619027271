//! The multi-object write endpoints: batch `POST`, `DELETE` by keys and tag deletion.

use super::{lib, Req};
use crate::error::{ApiError, ApiResult};
use crate::query::{self, Action};
use crate::reply::Reply;
use crate::state::State;
use crate::write::{self, ObjectType, Writer};
use crate::LibraryRef;

/// `checkLibraryIfUnmodifiedSinceVersion`: returns whether the header was given (and passed).
fn check_library_version(state: &State, req: &Req, lref: LibraryRef, required: bool) -> ApiResult<bool> {
    let Some(raw) = req.header("if-unmodified-since-version") else {
        if required {
            return Err(ApiError::precondition_required("If-Unmodified-Since-Version not provided"));
        }
        return Ok(false);
    };
    let Ok(version) = raw.parse::<u64>() else {
        return Err(ApiError::bad_request("Invalid If-Unmodified-Since-Version value"));
    };
    let current = lib(state, lref)?.version;
    if current > version {
        return Err(ApiError::precondition_failed(format!(
            "Library has been modified since specified version (expected {version}, found {current})"
        )));
    }
    Ok(true)
}

pub(super) fn post_batch(
    state: &mut State,
    req: &Req,
    lref: LibraryRef,
    kind: ObjectType,
    writer: &Writer,
) -> ApiResult<Reply> {
    let checked = check_library_version(state, req, lref, false)?;
    if req.body.is_empty() {
        return Err(ApiError::bad_request("POST data not provided"));
    }
    let (report, version) = write::post_batch(state, lref, kind, &req.body, checked, writer)?;
    Ok(Reply::json(200, &report).version(version))
}

pub(super) fn delete_many(state: &mut State, req: &Req, lref: LibraryRef, kind: ObjectType) -> ApiResult<Reply> {
    check_library_version(state, req, lref, false)?;
    let params = query::parse(&req.query, Action::Other, false)?;
    let keys = match kind {
        ObjectType::Item => params.item_keys,
        ObjectType::Collection => params.collection_keys,
        ObjectType::Search => params.search_keys,
    }
    .unwrap_or_default();
    let version = write::delete_many(state, lref, kind, &keys)?;
    Ok(Reply::new(204).version(version))
}

pub(super) fn delete_tags(state: &mut State, req: &Req, lref: LibraryRef) -> ApiResult<Reply> {
    check_library_version(state, req, lref, true)?;
    let pairs = query::parse_pairs(&req.query);
    let names: Vec<String> = pairs
        .iter()
        .filter(|(k, _)| k == "tag")
        .flat_map(|(_, v)| v.split(" || ").map(str::to_string).collect::<Vec<_>>())
        .collect();
    let version = write::delete_tags(state, lref, &names)?;
    Ok(Reply::new(204).version(version))
}
