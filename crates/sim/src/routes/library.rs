//! The router inside one library (`/users/<id>/…`, `/groups/<id>/…`): access checks, `If-Modified-Since-Version`,
//! and dispatch to the read, write and full-text endpoints; single objects (items, collections, saved searches)
//! are read or written here.

use std::collections::BTreeSet;

use serde_json::json;

use super::files::file_route;
use super::fulltext::{fulltext_item, fulltext_versions};
use super::reads::{deleted, list_collections, list_items, list_searches, list_tags, list_tags_in_items};
use super::writes::{delete_many, delete_tags, post_batch};
use super::{allow, lib, Caller, Req, DELETE, GET, PATCH, POST, PUT};
use crate::error::{ApiError, ApiResult};
use crate::keys::is_valid_key;
use crate::query::{self, Action};
use crate::reply::Reply;
use crate::search::{CollectionScope, ItemScope, TagScope};
use crate::state::{LibraryFacts, State};
use crate::write::{self, ObjectType, Writer};
use crate::LibraryRef;

pub(super) fn library_route(
    state: &mut State,
    req: &Req,
    caller: &Caller,
    lref: LibraryRef,
    rest: &[&str],
) -> ApiResult<Reply> {
    if !state.libraries.contains_key(&lref) {
        return Err(match lref {
            LibraryRef::User(id) => ApiError::not_found(format!("User {id} not found")),
            LibraryRef::Group(_) => ApiError::not_found("Not found"),
        });
    }
    let single_object_get = matches!(rest, ["items", k] | ["collections", k] | ["searches", k]
        if !matches!(*k, "top" | "trash" | "tags"))
        && !req.is_write();
    if !caller.can_read(lref) {
        // Zotero hides single objects of libraries the key cannot read.
        return Err(if single_object_get {
            ApiError::not_found("Not found")
        } else {
            ApiError::forbidden("Forbidden")
        });
    }
    if req.is_write() && !caller.can_write(lref) {
        return Err(ApiError::forbidden("Write access denied"));
    }
    let writer = Writer {
        user_id: caller.grant.as_ref().map_or(0, |g| g.user_id),
        username: caller.grant.as_ref().map(|g| state.username(g.user_id)).unwrap_or_default(),
    };

    // If-Modified-Since-Version: 304 for multi-object reads of an unchanged library.
    let multi_read = !req.is_write()
        && !single_object_get
        && matches!(rest.first(), Some(&"items" | &"collections" | &"searches" | &"settings" | &"tags"))
        && !matches!(rest, ["items", _, "fulltext"] | ["items", _, "file", ..]);
    if multi_read {
        if let Some(v) = req.header("if-modified-since-version").and_then(|v| v.parse::<u64>().ok()) {
            if lib(state, lref)?.version <= v {
                return Ok(Reply::new(304));
            }
        }
    }

    match rest {
        ["items"] => {
            allow(req, &[GET, POST, DELETE], "HEAD, GET, POST, DELETE")?;
            match req.method {
                http::Method::POST => post_batch(state, req, lref, ObjectType::Item, &writer),
                http::Method::DELETE => delete_many(state, req, lref, ObjectType::Item),
                _ => list_items(state, req, lref, ItemScope::All),
            }
        }
        ["items", "top"] => {
            allow(req, &[GET], "HEAD, GET")?;
            list_items(state, req, lref, ItemScope::Top)
        }
        ["items", "trash"] => {
            allow(req, &[GET], "HEAD, GET")?;
            list_items(state, req, lref, ItemScope::Trash)
        }
        ["items", "tags"] => list_tags_in_items(state, req, lref, ItemScope::All),
        ["items", "top", "tags"] => list_tags_in_items(state, req, lref, ItemScope::Top),
        ["items", "trash", "tags"] => list_tags_in_items(state, req, lref, ItemScope::Trash),
        ["items", key] => {
            allow(req, &[GET, PUT, PATCH, DELETE], "HEAD, GET, PUT, PATCH, DELETE")?;
            single_object(state, req, lref, ObjectType::Item, key, &writer)
        }
        ["items", key, "children"] => {
            allow(req, &[GET], "HEAD, GET")?;
            let l = lib(state, lref)?;
            let Some(rec) = l.items.get(*key) else { return Err(ApiError::not_found("Item not found")) };
            if rec.data.is_attachment() && !rec.data.is_readable_attachment() {
                return Err(ApiError::bad_request(
                    "/children can only be called on PDF, EPUB, and snapshot attachments",
                ));
            }
            list_items(state, req, lref, ItemScope::Children(key.to_string()))
        }
        ["items", key, "tags"] => {
            allow(req, &[GET], "HEAD, GET")?;
            let l = lib(state, lref)?;
            if !l.items.contains_key(*key) {
                return Err(ApiError::not_found("Not found"));
            }
            list_tags(state, req, lref, TagScope::OnItems(BTreeSet::from([key.to_string()])))
        }
        ["items", key, "fulltext"] => fulltext_item(state, req, lref, key),
        ["items", key, "file"] => file_route(state, req, caller, lref, key),
        ["items", _, "file", ..] => Err(ApiError::not_implemented(
            "zotero-sim does not implement file/view; download with GET items/<key>/file",
        )),
        ["collections"] => {
            allow(req, &[GET, POST, DELETE], "HEAD, GET, POST, DELETE")?;
            match req.method {
                http::Method::POST => post_batch(state, req, lref, ObjectType::Collection, &writer),
                http::Method::DELETE => delete_many(state, req, lref, ObjectType::Collection),
                _ => list_collections(state, req, lref, CollectionScope::All),
            }
        }
        ["collections", "top"] => {
            allow(req, &[GET], "HEAD, GET")?;
            list_collections(state, req, lref, CollectionScope::Top)
        }
        ["collections", key] => {
            allow(req, &[GET, PUT, PATCH, DELETE], "HEAD, GET, PUT, PATCH, DELETE")?;
            single_object(state, req, lref, ObjectType::Collection, key, &writer)
        }
        ["collections", key, "collections"] => {
            allow(req, &[GET], "HEAD, GET")?;
            require_collection(state, lref, key)?;
            list_collections(state, req, lref, CollectionScope::Sub(key.to_string()))
        }
        ["collections", key, "items"] => {
            allow(req, &[GET], "HEAD, GET")?;
            require_collection(state, lref, key)?;
            list_items(state, req, lref, ItemScope::Collection { key: key.to_string(), top: false })
        }
        ["collections", key, "items", "top"] => {
            allow(req, &[GET], "HEAD, GET")?;
            require_collection(state, lref, key)?;
            list_items(state, req, lref, ItemScope::Collection { key: key.to_string(), top: true })
        }
        ["collections", key, "tags"] => {
            allow(req, &[GET], "HEAD, GET")?;
            require_collection(state, lref, key)?;
            let l = lib(state, lref)?;
            let members = l
                .items
                .values()
                .filter(|r| r.data.collections.iter().any(|c| c == key))
                .map(|r| r.key.clone())
                .collect();
            list_tags(state, req, lref, TagScope::Collection(members))
        }
        ["collections", key, "items", "tags"] => {
            require_collection(state, lref, key)?;
            list_tags_in_items(state, req, lref, ItemScope::Collection { key: key.to_string(), top: false })
        }
        ["collections", key, "items", "top", "tags"] => {
            require_collection(state, lref, key)?;
            list_tags_in_items(state, req, lref, ItemScope::Collection { key: key.to_string(), top: true })
        }
        ["tags"] => {
            allow(req, &[GET, DELETE], "HEAD, GET, DELETE")?;
            if req.method == DELETE {
                delete_tags(state, req, lref)
            } else {
                list_tags(state, req, lref, TagScope::All)
            }
        }
        ["tags", name] => {
            allow(req, &[GET], "HEAD, GET")?;
            let l = lib(state, lref)?;
            let exists = l.tags.keys().any(|t| t.name == *name);
            if !exists {
                return Err(ApiError::not_found("Not found"));
            }
            let keys = l.items.values().filter(|r| r.data.tags.iter().any(|t| t.name == *name)).map(|r| r.key.clone());
            list_tags(state, req, lref, TagScope::OnItems(keys.collect()))
        }
        ["deleted"] => {
            allow(req, &[GET], "GET")?;
            deleted(state, req, lref)
        }
        ["fulltext"] => {
            allow(req, &[GET, POST], "GET, POST")?;
            if req.method == POST {
                return Err(ApiError::not_implemented(
                    "zotero-sim does not implement POST /fulltext; use PUT /items/<key>/fulltext",
                ));
            }
            fulltext_versions(state, req, lref)
        }
        ["searches"] => {
            allow(req, &[GET, POST, DELETE], "HEAD, GET, POST, DELETE")?;
            match req.method {
                http::Method::POST => post_batch(state, req, lref, ObjectType::Search, &writer),
                http::Method::DELETE => delete_many(state, req, lref, ObjectType::Search),
                _ => list_searches(state, req, lref),
            }
        }
        ["searches", key] => {
            allow(req, &[GET, PUT, PATCH, DELETE], "HEAD, GET, PUT, PATCH, DELETE")?;
            single_object(state, req, lref, ObjectType::Search, key, &writer)
        }
        ["settings", ..] => {
            if req.is_write() {
                return Err(ApiError::not_implemented("zotero-sim does not implement writing settings"));
            }
            let l = lib(state, lref)?;
            if rest.len() > 1 {
                return Err(ApiError::not_found("Not found"));
            }
            Ok(Reply::json(200, &json!({})).version(l.version))
        }
        ["publications", ..] => Err(ApiError::not_implemented("zotero-sim does not implement My Publications")),
        _ => Err(ApiError::not_found("Not found")),
    }
}

fn require_collection(state: &State, lref: LibraryRef, key: &str) -> ApiResult<()> {
    if lib(state, lref)?.collections.contains_key(key) {
        Ok(())
    } else {
        Err(ApiError::not_found("Collection not found"))
    }
}

fn single_object(
    state: &mut State,
    req: &Req,
    lref: LibraryRef,
    kind: ObjectType,
    key: &str,
    writer: &Writer,
) -> ApiResult<Reply> {
    if !is_valid_key(key) {
        return Err(ApiError::not_found("Not found"));
    }
    match req.method {
        http::Method::PUT | http::Method::PATCH => {
            let w = write::SingleWrite {
                kind,
                key,
                method: &req.method,
                body: &req.body,
                header_version: req.header("if-unmodified-since-version"),
            };
            let version = write::put_object(state, lref, &w, writer)?;
            Ok(Reply::new(204).version(version))
        }
        http::Method::DELETE => {
            let version = write::delete_object(state, lref, kind, key, req.header("if-unmodified-since-version"))?;
            Ok(Reply::new(204).version(version))
        }
        _ => {
            let action = match kind {
                ObjectType::Item => Action::Items,
                ObjectType::Collection => Action::Collections,
                ObjectType::Search => Action::Searches,
            };
            let params = query::parse(&req.query, action, true)?;
            let l = lib(state, lref)?;
            let include_data = params.include.iter().any(|i| i == "data");
            match kind {
                ObjectType::Item => {
                    let Some(rec) = l.items.get(key) else { return Err(ApiError::not_found("Item does not exist")) };
                    // Its child count and reverse relations from the listings' index when one is current: computed
                    // directly, each is a pass over the whole library.
                    let derived = crate::derived::current(l);
                    let facts = derived.as_deref().and_then(Option::as_ref).map(|d| d as &dyn LibraryFacts);
                    Ok(Reply::json(200, &l.item_json_with(rec, include_data, facts)).version(rec.version))
                }
                ObjectType::Collection => {
                    let Some(rec) = l.collections.get(key) else {
                        return Err(ApiError::not_found("Collection not found"));
                    };
                    let derived = crate::derived::current(l);
                    let facts = derived.as_deref().and_then(Option::as_ref).map(|d| d as &dyn LibraryFacts);
                    Ok(Reply::json(200, &l.collection_json_with(rec, include_data, facts)).version(rec.version))
                }
                ObjectType::Search => {
                    let Some(rec) = l.searches.get(key) else { return Err(ApiError::not_found("Search not found")) };
                    Ok(Reply::json(200, &l.search_json(rec, include_data)).version(rec.version))
                }
            }
        }
    }
}
