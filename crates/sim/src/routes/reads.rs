//! The multi-object read endpoints: item, collection, saved-search and tag listings and `/deleted`.

use serde_json::{json, Map, Value};

use super::{allow, lib, Req, GET};
use crate::error::{ApiError, ApiResult};
use crate::query::{self, Action, Params};
use crate::reply::Reply;
use crate::saved_search::SearchRecord;
use crate::search::{self, CollectionScope, ItemScope, TagScope};
use crate::state::{Kind, LibraryFacts, State, API_BASE};
use crate::LibraryRef;

/// The common tail of listings: `Total-Results`, `Link`, `Last-Modified-Version` and the body for the format.
pub(super) fn listing(
    req: &Req,
    params: &Params,
    version: u64,
    total: usize,
    keys: Vec<String>,
    versions: Vec<(String, u64)>,
    entries: Vec<Value>,
) -> Reply {
    let reply = match params.format.as_str() {
        "keys" => {
            let mut text = keys.join("\n");
            text.push('\n');
            Reply::text(200, &text)
        }
        "versions" => {
            let map: Map<String, Value> = versions.into_iter().map(|(k, v)| (k, json!(v))).collect();
            Reply::json(200, &Value::Object(map))
        }
        _ => Reply::json(200, &Value::Array(entries)),
    };
    reply
        .header("Total-Results", total.to_string())
        .header("Link", query::link_header(&req.path, params, total as u64))
        .version(version)
}

pub(super) fn list_items(state: &State, req: &Req, lref: LibraryRef, scope: ItemScope) -> ApiResult<Reply> {
    let params = query::parse(&req.query, Action::Items, false)?;
    let l = lib(state, lref)?;
    let derived = crate::derived::of(l);
    let derived = derived.as_ref().as_ref();
    // Page first, then build JSON for the page alone.
    let quick = search::unfiltered_page(l, derived, &scope, &params)
        .or_else(|| search::plain_page(l, derived, &scope, &params));
    let (total, page) = match quick {
        Some(found) => found,
        None => {
            let all = search::items_with(l, derived, &scope, &params)?;
            (all.len(), search::page(&all, &params))
        }
    };
    let include_data = params.include.iter().any(|i| i == "data");
    let keys = page.iter().map(|r| r.key.clone()).collect();
    let versions = page.iter().map(|r| (r.key.clone(), r.version)).collect();
    let entries = if params.format == "json" {
        page.iter().map(|r| l.item_json_with(r, include_data, derived.map(|d| d as &dyn LibraryFacts))).collect()
    } else {
        Vec::new()
    };
    Ok(listing(req, &params, l.version, total, keys, versions, entries))
}

pub(super) fn list_collections(state: &State, req: &Req, lref: LibraryRef, scope: CollectionScope) -> ApiResult<Reply> {
    let params = query::parse(&req.query, Action::Collections, false)?;
    let l = lib(state, lref)?;
    let all = search::collections(l, &scope, &params);
    let page = search::page(&all, &params);
    let include_data = params.include.iter().any(|i| i == "data");
    let keys = page.iter().map(|r| r.key.clone()).collect();
    let versions = page.iter().map(|r| (r.key.clone(), r.version)).collect();
    let derived = crate::derived::of(l);
    let derived = derived.as_ref().as_ref();
    let entries = if params.format == "json" {
        page.iter().map(|r| l.collection_json_with(r, include_data, derived.map(|d| d as &dyn LibraryFacts))).collect()
    } else {
        Vec::new()
    };
    Ok(listing(req, &params, l.version, all.len(), keys, versions, entries))
}

/// `GET <prefix>/searches`: every saved search (the trashed ones too, as for collections), paged.
pub(super) fn list_searches(state: &State, req: &Req, lref: LibraryRef) -> ApiResult<Reply> {
    let params = query::parse(&req.query, Action::Searches, false)?;
    let l = lib(state, lref)?;
    let all = select_searches(l.searches.values(), &params);
    let page = search::page(&all, &params);
    let include_data = params.include.iter().any(|i| i == "data");
    let keys = page.iter().map(|r| r.key.clone()).collect();
    let versions = page.iter().map(|r| (r.key.clone(), r.version)).collect();
    let entries = if params.format == "json" {
        page.iter().map(|r| l.search_json(r, include_data)).collect()
    } else {
        Vec::new()
    };
    Ok(listing(req, &params, l.version, all.len(), keys, versions, entries))
}

/// The searches a listing selects (`since`, `searchKey`), in its order: `dateModified` unless `sort` says
/// `title` or `dateAdded`, then version and creation, as the dataserver breaks ties.
fn select_searches<'a>(all: impl Iterator<Item = &'a SearchRecord>, params: &Params) -> Vec<&'a SearchRecord> {
    let mut out: Vec<&SearchRecord> = all
        .filter(|s| params.since.is_none_or(|since| s.version > since))
        .filter(|s| params.search_keys.as_ref().is_none_or(|keys| keys.contains(&s.key)))
        .collect();
    let position =
        |s: &SearchRecord| params.search_keys.as_ref().and_then(|keys| keys.iter().position(|k| k == &s.key));
    out.sort_by(|a, b| {
        let by_field = match params.sort.as_str() {
            "title" => a.data.name.to_lowercase().cmp(&b.data.name.to_lowercase()),
            "dateAdded" => a.date_added.cmp(&b.date_added),
            "searchKeyList" => position(a).cmp(&position(b)),
            _ => a.date_modified.cmp(&b.date_modified),
        };
        let ord = by_field.then(a.version.cmp(&b.version)).then(a.seq.cmp(&b.seq));
        if params.is_desc() {
            ord.reverse()
        } else {
            ord
        }
    });
    out
}

/// Tags of the items a listing would return: `itemQ`, `itemQMode`, `itemTag`, `itemType`, `itemKey` and
/// `includeTrashed` select the items, the other parameters the tags.
pub(super) fn list_tags_in_items(state: &State, req: &Req, lref: LibraryRef, scope: ItemScope) -> ApiResult<Reply> {
    allow(req, &[GET], "HEAD, GET")?;
    let params = query::parse(&req.query, Action::Tags, false)?;
    let mut item_params = params.clone();
    item_params.q = params.item_q.clone();
    item_params.qmode = params.item_qmode.clone();
    item_params.tags = params.item_tags.clone();
    item_params.since = None;
    item_params.sort = "dateModified".into();
    let l = lib(state, lref)?;
    let keys = search::items(l, &scope, &item_params)?.into_iter().map(|r| r.key.clone()).collect();
    list_tags(state, req, lref, TagScope::OnItems(keys))
}

pub(super) fn list_tags(state: &State, req: &Req, lref: LibraryRef, scope: TagScope) -> ApiResult<Reply> {
    let params = query::parse(&req.query, Action::Tags, false)?;
    let l = lib(state, lref)?;
    let derived = crate::derived::of(l);
    let derived = derived.as_ref().as_ref();
    let (total, page) = match search::unfiltered_tags_page(l, derived, &scope, &params) {
        Some(found) => found,
        None => {
            let all = search::tags(l, derived, &scope, &params);
            (all.len(), search::page(&all, &params))
        }
    };
    let base = format!("{API_BASE}{}", l.path());
    let www = l.www_url();
    let entries = page
        .iter()
        .map(|e| {
            let encoded: String = form_urlencoded::byte_serialize(e.tag.name.as_bytes()).collect();
            json!({
                "tag": e.tag.name,
                "links": {
                    "self": {"href": format!("{base}/tags/{encoded}"), "type": "application/json"},
                    "alternate": {"href": format!("{www}/tags/{encoded}"), "type": "text/html"}
                },
                "meta": {"type": e.tag.kind, "numItems": e.num_items}
            })
        })
        .collect();
    Ok(listing(req, &params, l.version, total, Vec::new(), Vec::new(), entries))
}

pub(super) fn deleted(state: &State, req: &Req, lref: LibraryRef) -> ApiResult<Reply> {
    let pairs = query::parse_pairs(&req.query);
    let since = pairs.iter().rev().find(|(k, _)| k == "since" || k == "newer").map(|(_, v)| v.clone());
    let Some(since) = since else {
        return Err(ApiError::bad_request("'since' parameter must be provided"));
    };
    let Ok(since) = since.trim().parse::<u64>() else {
        return Err(ApiError::bad_request("Invalid value for 'since' parameter"));
    };
    let l = lib(state, lref)?;
    let keys = |kind: Kind| -> Vec<String> {
        l.deleted.iter().filter(|d| d.kind == kind && d.version > since).map(|d| d.key.clone()).collect()
    };
    let body = json!({
        "collections": keys(Kind::Collection),
        "items": keys(Kind::Item),
        "searches": keys(Kind::Search),
        "tags": keys(Kind::Tag),
        "settings": keys(Kind::Setting),
    });
    Ok(Reply::json(200, &body).version(l.version))
}
