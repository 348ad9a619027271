//! Write requests: batch POSTs, single-object PUT/PATCH/DELETE, multi-object DELETE, full text and tag deletion,
//! for items, collections and saved searches.
//!
//! Version rules follow the dataserver (`ApiController::checkSingleObjectWriteVersion`,
//! `Zotero_API::checkJSONObjectVersion`): a batch object with a stale `version` fails alone with 412, an
//! existing object written by key without any version fails with 428, a single-object write without a version
//! gets 428, and a stale one gets 412 with the object's version in `Last-Modified-Version`. Each successful
//! write request advances the library version once and stamps every object it changed with the new version;
//! an unchanged object keeps its version and does not advance the library's.

use serde_json::{json, Map, Value};

use crate::collection;
use crate::dates;
use crate::error::{ApiError, ApiResult};
use crate::item::{self, ItemData, WriteContext};
use crate::keys::is_valid_key;
use crate::saved_search::{self, SearchData, SearchRecord};
use crate::state::{CollectionRecord, FullText, ItemRecord, Kind, Library, State};
use crate::LibraryRef;

/// Zotero's per-request limit for batch writes.
pub const MAX_WRITE_OBJECTS: usize = 50;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ObjectType {
    Item,
    Collection,
    Search,
}

impl ObjectType {
    fn label(self) -> &'static str {
        match self {
            ObjectType::Item => "Item",
            ObjectType::Collection => "Collection",
            ObjectType::Search => "Search",
        }
    }
    fn lower(self) -> &'static str {
        match self {
            ObjectType::Item => "item",
            ObjectType::Collection => "collection",
            ObjectType::Search => "search",
        }
    }
    fn plural(self) -> &'static str {
        match self {
            ObjectType::Item => "items",
            ObjectType::Collection => "collections",
            ObjectType::Search => "searches",
        }
    }
}

/// Who is writing: recorded as the creator of new items (shown in group libraries).
#[derive(Debug, Clone)]
pub struct Writer {
    pub user_id: u64,
    pub username: String,
}

/// Zotero's JSON decoding errors.
pub fn parse_json(body: &[u8]) -> ApiResult<Value> {
    serde_json::from_slice(body).map_err(|e| {
        let msg =
            if e.is_eof() || e.is_syntax() { "Syntax error, malformed JSON" } else { "Malformed UTF-8 characters" };
        ApiError::bad_request(format!("JSON Error: {msg}"))
    })
}

/// The editable part of an uploaded object: its `data` if the whole API JSON was sent back.
fn editable(obj: &Map<String, Value>) -> Map<String, Value> {
    match obj.get("data") {
        Some(Value::Object(data)) => data.clone(),
        _ => obj.clone(),
    }
}

fn version_number(v: &Value) -> Option<u64> {
    match v {
        Value::Number(n) => n.as_u64().or_else(|| n.as_f64().filter(|f| *f >= 0.0).map(|f| f as u64)),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// `processJSONObjectKey`: the key in the JSON must be valid and, for a single-object write, match the URL.
fn object_key(kind: ObjectType, json: &Map<String, Value>, url_key: Option<&str>) -> ApiResult<Option<String>> {
    match json.get("key") {
        None | Some(Value::Null) => Ok(url_key.map(str::to_string)),
        Some(Value::String(k)) => {
            if !is_valid_key(k) {
                return Err(ApiError::bad_request(format!("'{k}' is not a valid {} key", kind.lower())));
            }
            if let Some(url) = url_key {
                if url != k {
                    return Err(ApiError::conflict(format!(
                        "'key' property in JSON does not match {} key of request",
                        kind.lower()
                    )));
                }
            }
            Ok(Some(k.clone()))
        }
        Some(_) => Err(ApiError::bad_request("'key' must be a string")),
    }
}

/// `checkJSONObjectVersion` for batch objects (and the JSON `version` of single writes).
fn check_object_version(
    kind: ObjectType,
    json: &Map<String, Value>,
    has_key: bool,
    current: Option<u64>,
    require_version: bool,
) -> ApiResult<()> {
    let old_key = format!("{}Key", kind.lower());
    let old_version = format!("{}Version", kind.lower());
    if json.contains_key(&old_key) {
        return Err(ApiError::bad_request(format!("'{old_key}' property is now 'key'")));
    }
    if json.contains_key(&old_version) {
        return Err(ApiError::bad_request(format!("'{old_version}' property is now 'version'")));
    }
    match json.get("version").filter(|v| !v.is_null()) {
        Some(v) => {
            let Some(version) = version_number(v) else {
                return Err(ApiError::bad_request("'version' must be an integer"));
            };
            if !has_key {
                return Err(ApiError::bad_request(format!(
                    "'version' is valid only if {} key is provided",
                    kind.lower()
                )));
            }
            let found = current.unwrap_or(0);
            if found > version {
                return Err(ApiError::precondition_failed(format!(
                    "{} has been modified since specified version (expected {version}, found {found})",
                    kind.label()
                )));
            }
            if version > 0 && current.is_none() {
                return Err(ApiError::not_found(format!(
                    "{} doesn't exist (expected version {version}; use 0 instead)",
                    kind.label()
                )));
            }
        }
        None => {
            if require_version && has_key && json.contains_key("key") {
                return Err(ApiError::precondition_required(
                    "Either If-Unmodified-Since-Version or 'version' property must be provided for 'key'-based writes",
                ));
            }
        }
    }
    Ok(())
}

/// Checks that depend on the rest of the library: parent and collections must exist and fit.
fn check_item_links(lib: &Library, key: &str, data: &ItemData) -> ApiResult<()> {
    if let Some(parent) = &data.parent {
        let Some(parent_rec) = lib.items.get(parent).filter(|_| parent != key) else {
            if parent == key {
                return Err(ApiError::bad_request(format!("Item {key} cannot be a child of itself")));
            }
            return Err(
                ApiError::conflict(format!("Parent item {parent} not found")).with_data(json!({"parentItem": parent}))
            );
        };
        let p = &parent_rec.data;
        let fits = match data.item_type.as_str() {
            "annotation" => p.is_attachment() && !p.is_embedded_image(),
            "attachment" if data.is_embedded_image() => p.item_type == "note" || p.is_regular(),
            _ => p.is_regular(),
        };
        if !fits {
            return Err(ApiError::conflict("Parent item cannot be a note or attachment")
                .with_data(json!({"parentItem": parent})));
        }
    } else if data.item_type == "annotation" {
        return Err(ApiError::bad_request("Annotation must have a parent item"));
    }
    for c in &data.collections {
        if !lib.collections.contains_key(c) {
            return Err(ApiError::conflict(format!("Collection {c} not found")).with_data(json!({"collection": c})));
        }
    }
    Ok(())
}

/// An item write that passed every check, waiting to be stored.
struct PreparedItem {
    key: String,
    data: ItemData,
    changed: bool,
    created: bool,
}

/// Validates one item write. `url_key` is set for single-object writes.
fn prepare_item(
    state: &mut State,
    lref: LibraryRef,
    raw: &Map<String, Value>,
    url_key: Option<&str>,
    require_version: bool,
    partial: bool,
    now: &str,
) -> ApiResult<PreparedItem> {
    let json = editable(raw);
    let key = object_key(ObjectType::Item, &json, url_key)?;
    let lib = state.libraries.get(&lref).ok_or_else(|| ApiError::not_found("Not found"))?;
    let existing = key.as_deref().and_then(|k| lib.items.get(k));
    check_object_version(ObjectType::Item, &json, key.is_some(), existing.map(|r| r.version), require_version)?;
    let ctx = WriteContext { existing: existing.map(|r| &r.data), partial, user_library: lib.is_user(), now };
    let mut data = item::apply(&json, &ctx)?;
    let key = match key {
        Some(k) => k,
        None => state.fresh_key(lref),
    };
    let lib = state.libraries.get(&lref).ok_or_else(|| ApiError::not_found("Not found"))?;
    let existing = lib.items.get(&key);
    // Reverse `dc:relation` values are implied by the other item; sending them back is not a change.
    if let Some(rec) = existing {
        let implied: Vec<String> = lib
            .effective_relations(rec, None)
            .get("dc:relation")
            .map(|v| item::relation_values(&Map::from_iter([("dc:relation".to_string(), v.clone())]), "dc:relation"))
            .unwrap_or_default();
        let own = item::relation_values(&rec.data.relations, "dc:relation");
        let mut mine: Vec<String> = item::relation_values(&data.relations, "dc:relation");
        mine.retain(|uri| own.contains(uri) || !implied.contains(uri));
        match mine.len() {
            0 => {
                data.relations.remove("dc:relation");
            }
            1 => {
                data.relations.insert("dc:relation".into(), json!(mine[0]));
            }
            _ => {
                data.relations.insert("dc:relation".into(), json!(mine));
            }
        }
    }
    check_item_links(lib, &key, &data)?;
    let changed = match existing {
        Some(rec) => rec.data != data,
        None => true,
    };
    if changed {
        let date_modified_given = json
            .get("dateModified")
            .and_then(Value::as_str)
            .and_then(dates::normalize_timestamp)
            .is_some_and(|d| existing.is_none_or(|rec| rec.data.date_modified != d));
        if !date_modified_given {
            data.date_modified = now.to_string();
        }
    }
    Ok(PreparedItem { created: existing.is_none(), key, data, changed })
}

fn commit_item(lib: &mut Library, p: PreparedItem, version: u64, writer: &Writer) {
    if !p.changed {
        return;
    }
    lib.touch();
    if p.created {
        lib.unlog_delete(Kind::Item, &p.key);
        let seq = lib.next_seq();
        lib.items.insert(
            p.key.clone(),
            ItemRecord {
                key: p.key,
                version,
                seq,
                data: p.data,
                created_by: Some((writer.user_id, writer.username.clone())),
            },
        );
    } else if let Some(rec) = lib.items.get_mut(&p.key) {
        rec.data = p.data;
        rec.version = version;
    }
}

struct PreparedCollection {
    key: String,
    data: CollectionData2,
    changed: bool,
    created: bool,
}

type CollectionData2 = crate::state::CollectionData;

fn prepare_collection(
    state: &mut State,
    lref: LibraryRef,
    raw: &Map<String, Value>,
    url_key: Option<&str>,
    require_version: bool,
    partial: bool,
) -> ApiResult<PreparedCollection> {
    let json = editable(raw);
    let key = object_key(ObjectType::Collection, &json, url_key)?;
    let lib = state.libraries.get(&lref).ok_or_else(|| ApiError::not_found("Not found"))?;
    let existing = key.as_deref().and_then(|k| lib.collections.get(k));
    check_object_version(ObjectType::Collection, &json, key.is_some(), existing.map(|r| r.version), require_version)?;
    let data = collection::apply(&json, existing.map(|r| &r.data), partial)?;
    let key = match key {
        Some(k) => k,
        None => state.fresh_key(lref),
    };
    let lib = state.libraries.get(&lref).ok_or_else(|| ApiError::not_found("Not found"))?;
    if let Some(parent) = &data.parent {
        if !lib.collections.contains_key(parent) && parent != &key {
            return Err(ApiError::conflict(format!("Parent collection {parent} not found"))
                .with_data(json!({"collection": parent})));
        }
        if lib.collection_is_descendant(parent, &key) {
            return Err(ApiError::bad_request(format!("Cannot move collection {key} into itself or a subcollection")));
        }
    }
    let existing = lib.collections.get(&key);
    let changed = existing.is_none_or(|rec| rec.data != data);
    Ok(PreparedCollection { created: existing.is_none(), key, data, changed })
}

fn commit_collection(lib: &mut Library, p: PreparedCollection, version: u64, now: &str) {
    if !p.changed {
        return;
    }
    lib.touch();
    if p.created {
        lib.unlog_delete(Kind::Collection, &p.key);
        let seq = lib.next_seq();
        lib.collections.insert(
            p.key.clone(),
            CollectionRecord {
                key: p.key,
                version,
                seq,
                data: p.data,
                date_added: now.to_string(),
                date_modified: now.to_string(),
            },
        );
    } else if let Some(rec) = lib.collections.get_mut(&p.key) {
        rec.data = p.data;
        rec.version = version;
        rec.date_modified = now.to_string();
    }
}

struct PreparedSearch {
    key: String,
    data: SearchData,
    changed: bool,
    created: bool,
}

fn prepare_search(
    state: &mut State,
    lref: LibraryRef,
    raw: &Map<String, Value>,
    url_key: Option<&str>,
    require_version: bool,
    partial: bool,
) -> ApiResult<PreparedSearch> {
    let json = editable(raw);
    let key = object_key(ObjectType::Search, &json, url_key)?;
    let lib = state.libraries.get(&lref).ok_or_else(|| ApiError::not_found("Not found"))?;
    let existing = key.as_deref().and_then(|k| lib.searches.get(k));
    check_object_version(ObjectType::Search, &json, key.is_some(), existing.map(|r| r.version), require_version)?;
    let data = saved_search::apply(&json, existing.map(|r| &r.data), partial)?;
    let key = match key {
        Some(k) => k,
        None => state.fresh_key(lref),
    };
    let lib = state.libraries.get(&lref).ok_or_else(|| ApiError::not_found("Not found"))?;
    let existing = lib.searches.get(&key);
    let changed = existing.is_none_or(|rec| rec.data != data);
    Ok(PreparedSearch { created: existing.is_none(), key, data, changed })
}

fn commit_search(lib: &mut Library, p: PreparedSearch, version: u64, now: &str) {
    if !p.changed {
        return;
    }
    if p.created {
        lib.unlog_delete(Kind::Search, &p.key);
        let seq = lib.next_seq();
        lib.searches.insert(
            p.key.clone(),
            SearchRecord {
                key: p.key,
                version,
                seq,
                data: p.data,
                date_added: now.to_string(),
                date_modified: now.to_string(),
            },
        );
    } else if let Some(rec) = lib.searches.get_mut(&p.key) {
        rec.data = p.data;
        rec.version = version;
        rec.date_modified = now.to_string();
    }
}

/// HTML-escapes a message the way Zotero's `htmlspecialchars(…, ENT_COMPAT)` does in write reports.
pub fn escape_message(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// `POST <prefix>/items` or `/collections`: the write report and the library version after it.
pub fn post_batch(
    state: &mut State,
    lref: LibraryRef,
    kind: ObjectType,
    body: &[u8],
    header_checked: bool,
    writer: &Writer,
) -> ApiResult<(Value, u64)> {
    let json = parse_json(body)?;
    let Value::Array(objects) = json else {
        return Err(ApiError::bad_request("Uploaded data must be a JSON array"));
    };
    if objects.len() > MAX_WRITE_OBJECTS {
        return Err(ApiError::new(
            413,
            format!("Cannot add more than {MAX_WRITE_OBJECTS} {} at a time", kind.plural()),
        ));
    }
    let now = dates::now_iso();
    let new_version = state.libraries.get(&lref).map_or(1, |l| l.version + 1);
    let mut successful = Map::new();
    let mut success = Map::new();
    let mut unchanged = Map::new();
    let mut failed = Map::new();
    let mut any_change = false;
    for (i, obj) in objects.iter().enumerate() {
        let index = i.to_string();
        let Some(map) = obj.as_object() else {
            failed.insert(
                index.clone(),
                json!({"code": 400, "message": format!(
                    "Invalid value for index {i} in uploaded data; expected JSON {} object", kind.lower()
                )}),
            );
            continue;
        };
        let given_key = editable(map).get("key").and_then(Value::as_str).map(str::to_string);
        let outcome = match kind {
            ObjectType::Item => prepare_item(state, lref, map, None, !header_checked, true, &now).map(|p| {
                let (key, changed) = (p.key.clone(), p.changed);
                if let Some(lib) = state.libraries.get_mut(&lref) {
                    commit_item(lib, p, new_version, writer);
                }
                (key, changed)
            }),
            ObjectType::Collection => prepare_collection(state, lref, map, None, !header_checked, true).map(|p| {
                let (key, changed) = (p.key.clone(), p.changed);
                if let Some(lib) = state.libraries.get_mut(&lref) {
                    commit_collection(lib, p, new_version, &now);
                }
                (key, changed)
            }),
            ObjectType::Search => prepare_search(state, lref, map, None, !header_checked, true).map(|p| {
                let (key, changed) = (p.key.clone(), p.changed);
                if let Some(lib) = state.libraries.get_mut(&lref) {
                    commit_search(lib, p, new_version, &now);
                }
                (key, changed)
            }),
        };
        match outcome {
            Ok((key, true)) => {
                any_change = true;
                success.insert(index.clone(), json!(key));
                if let Some(lib) = state.libraries.get(&lref) {
                    let full = match kind {
                        ObjectType::Item => lib.items.get(&key).map(|r| lib.item_json(r, true)),
                        ObjectType::Collection => lib.collections.get(&key).map(|r| lib.collection_json(r, true)),
                        ObjectType::Search => lib.searches.get(&key).map(|r| lib.search_json(r, true)),
                    };
                    if let Some(full) = full {
                        successful.insert(index, full);
                    }
                }
            }
            Ok((key, false)) => {
                unchanged.insert(index, json!(key));
            }
            Err(e) => {
                let mut entry = Map::new();
                if let Some(k) = given_key {
                    entry.insert("key".into(), json!(k));
                }
                entry.insert("code".into(), json!(e.status));
                entry.insert("message".into(), json!(escape_message(&e.message)));
                if let Some(data) = e.data {
                    entry.insert("data".into(), *data);
                }
                failed.insert(index, Value::Object(entry));
            }
        }
    }
    let lib = state.libraries.get_mut(&lref).ok_or_else(|| ApiError::not_found("Not found"))?;
    if any_change {
        lib.version = new_version;
        lib.refresh_tags(new_version, &now);
    }
    let report = json!({"successful": successful, "success": success, "unchanged": unchanged, "failed": failed});
    Ok((report, lib.version))
}

/// The version a single-object write must match (`checkSingleObjectWriteVersion`), from the header or the JSON.
fn single_object_version(
    kind: ObjectType,
    method: &http::Method,
    header: Option<&str>,
    json: Option<&Map<String, Value>>,
    current: Option<u64>,
) -> ApiResult<()> {
    let header_version = match header {
        None => None,
        Some(h) => match h.trim().parse::<u64>() {
            Ok(v) => Some(v),
            Err(_) => return Err(ApiError::bad_request(format!("Invalid If-Unmodified-Since-Version value '{h}'"))),
        },
    };
    let prop_version = match json.map(editable).and_then(|j| j.get("version").cloned()).filter(|v| !v.is_null()) {
        None => None,
        Some(v) => match version_number(&v) {
            Some(n) => Some(n),
            None => {
                let text = v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string());
                return Err(ApiError::bad_request(format!("Invalid JSON 'version' property value '{text}'")));
            }
        },
    };
    if *method == http::Method::DELETE && header_version.is_none() {
        return Err(ApiError::precondition_required(
            "If-Unmodified-Since-Version must be provided for delete requests",
        ));
    }
    if let (Some(h), Some(p)) = (header_version, prop_version) {
        if h != p {
            return Err(ApiError::bad_request(format!(
                "If-Unmodified-Since-Version value does not match JSON 'version' property ({h} != {p})"
            )));
        }
    }
    let version = header_version.or(prop_version);
    let Some(current) = current else {
        if *method == http::Method::PATCH && version.is_none() {
            return Err(ApiError::not_found(format!(
                "{} not found (to create, use If-Unmodified-Since-Version: 0, JSON 'version' 0, or PUT method)",
                kind.label()
            )));
        }
        if let Some(v) = version.filter(|v| *v > 0) {
            return Err(ApiError::precondition_failed(format!("{} not found (expected version {v})", kind.label())));
        }
        return Ok(());
    };
    let Some(version) = version else {
        return Err(ApiError::precondition_required(
            "Either If-Unmodified-Since-Version or object version property must be provided for key-based writes",
        ));
    };
    if current > version {
        return Err(ApiError::precondition_failed(format!(
            "{} has been modified since specified version (expected {version}, found {current})",
            kind.label()
        ))
        .with_version(current));
    }
    Ok(())
}

/// A `PUT`/`PATCH` of one object.
pub struct SingleWrite<'a> {
    pub kind: ObjectType,
    pub key: &'a str,
    pub method: &'a http::Method,
    pub body: &'a [u8],
    /// `If-Unmodified-Since-Version`, as sent.
    pub header_version: Option<&'a str>,
}

/// `PUT`/`PATCH <prefix>/items/<key>`, `/collections/<key>` or `/searches/<key>`: returns the library version to
/// report.
pub fn put_object(state: &mut State, lref: LibraryRef, w: &SingleWrite<'_>, writer: &Writer) -> ApiResult<u64> {
    let SingleWrite { kind, key, method, body, header_version } = *w;
    if body.is_empty() {
        return Err(ApiError::bad_request(format!("{method} data not provided")));
    }
    let json = parse_json(body)?;
    let Value::Object(map) = json else {
        return Err(ApiError::bad_request(format!(
            "Invalid {} object (found {})",
            kind.lower(),
            if json.is_array() { "array" } else { "scalar" }
        )));
    };
    let lib = state.libraries.get(&lref).ok_or_else(|| ApiError::not_found("Not found"))?;
    let current = match kind {
        ObjectType::Item => lib.items.get(key).map(|r| r.version),
        ObjectType::Collection => lib.collections.get(key).map(|r| r.version),
        ObjectType::Search => lib.searches.get(key).map(|r| r.version),
    };
    single_object_version(kind, method, header_version, Some(&map), current)?;
    let partial = *method == http::Method::PATCH;
    let now = dates::now_iso();
    let new_version = lib.version + 1;
    let changed = match kind {
        ObjectType::Item => {
            let p = prepare_item(state, lref, &map, Some(key), false, partial, &now)?;
            let changed = p.changed;
            if let Some(lib) = state.libraries.get_mut(&lref) {
                commit_item(lib, p, new_version, writer);
            }
            changed
        }
        ObjectType::Collection => {
            let p = prepare_collection(state, lref, &map, Some(key), false, partial)?;
            let changed = p.changed;
            if let Some(lib) = state.libraries.get_mut(&lref) {
                commit_collection(lib, p, new_version, &now);
            }
            changed
        }
        ObjectType::Search => {
            let p = prepare_search(state, lref, &map, Some(key), false, partial)?;
            let changed = p.changed;
            if let Some(lib) = state.libraries.get_mut(&lref) {
                commit_search(lib, p, new_version, &now);
            }
            changed
        }
    };
    let lib = state.libraries.get_mut(&lref).ok_or_else(|| ApiError::not_found("Not found"))?;
    if changed {
        lib.version = new_version;
        lib.refresh_tags(new_version, &now);
    }
    Ok(lib.version)
}

/// `DELETE <prefix>/items/<key>`, `/collections/<key>` or `/searches/<key>`.
pub fn delete_object(
    state: &mut State,
    lref: LibraryRef,
    kind: ObjectType,
    key: &str,
    header_version: Option<&str>,
) -> ApiResult<u64> {
    let lib = state.libraries.get_mut(&lref).ok_or_else(|| ApiError::not_found("Not found"))?;
    let current = match kind {
        ObjectType::Item => lib.items.get(key).map(|r| r.version),
        ObjectType::Collection => lib.collections.get(key).map(|r| r.version),
        ObjectType::Search => lib.searches.get(key).map(|r| r.version),
    };
    single_object_version(kind, &http::Method::DELETE, header_version, None, current)?;
    let new_version = lib.version + 1;
    let deleted = match kind {
        ObjectType::Item => lib.delete_item(key, new_version),
        ObjectType::Collection => lib.delete_collection(key, new_version),
        ObjectType::Search => lib.delete_search(key, new_version),
    };
    if deleted {
        lib.version = new_version;
        lib.refresh_tags(new_version, &dates::now_iso());
    }
    Ok(lib.version)
}

/// `DELETE <prefix>/items?itemKey=…`, `/collections?collectionKey=…` or `/searches?searchKey=…` (library version
/// already checked).
pub fn delete_many(state: &mut State, lref: LibraryRef, kind: ObjectType, keys: &[String]) -> ApiResult<u64> {
    let lib = state.libraries.get_mut(&lref).ok_or_else(|| ApiError::not_found("Not found"))?;
    let new_version = lib.version + 1;
    let mut any = false;
    for key in keys {
        any |= match kind {
            ObjectType::Item => lib.delete_item(key, new_version),
            ObjectType::Collection => lib.delete_collection(key, new_version),
            ObjectType::Search => lib.delete_search(key, new_version),
        };
    }
    if any {
        lib.version = new_version;
        lib.refresh_tags(new_version, &dates::now_iso());
    }
    Ok(lib.version)
}

/// `DELETE <prefix>/tags?tag=a || b`: removes the tags from every item (each item changed gets the new
/// version) and logs them for `/deleted`.
pub fn delete_tags(state: &mut State, lref: LibraryRef, names: &[String]) -> ApiResult<u64> {
    let lib = state.libraries.get_mut(&lref).ok_or_else(|| ApiError::not_found("Not found"))?;
    let new_version = lib.version + 1;
    let lowered: Vec<String> = names.iter().map(|n| n.to_lowercase()).collect();
    let mut any = false;
    lib.touch();
    for rec in lib.items.values_mut() {
        let before = rec.data.tags.len();
        rec.data.tags.retain(|t| !lowered.contains(&t.name.to_lowercase()));
        if rec.data.tags.len() != before {
            rec.version = new_version;
            rec.data.date_modified = dates::now_iso();
            any = true;
        }
    }
    if any {
        for name in names {
            lib.log_delete(Kind::Tag, name, new_version);
        }
        lib.version = new_version;
        lib.refresh_tags(new_version, &dates::now_iso());
    }
    Ok(lib.version)
}

/// `PUT <prefix>/items/<key>/fulltext`.
pub fn put_fulltext(state: &mut State, lref: LibraryRef, key: &str, body: &[u8]) -> ApiResult<u64> {
    let json = parse_json(body)?;
    let Value::Object(map) = json else {
        return Err(ApiError::bad_request("Full-text content must be a JSON object"));
    };
    let lib = state.libraries.get_mut(&lref).ok_or_else(|| ApiError::not_found("Not found"))?;
    let content = match map.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    };
    let int = |name: &str| map.get(name).and_then(|v| v.as_i64().or_else(|| v.as_str()?.trim().parse().ok()));
    let new_version = lib.version + 1;
    lib.fulltext.insert(
        key.to_string(),
        FullText {
            content,
            indexed_pages: int("indexedPages"),
            total_pages: int("totalPages"),
            indexed_chars: int("indexedChars"),
            total_chars: int("totalChars"),
            version: new_version,
        },
    );
    lib.version = new_version;
    Ok(new_version)
}

/// Another client's edit, for `edit_before_next_write`: the object gets a new version (and `dateModified`), as
/// if saved elsewhere, so the next write that names the old version is stale.
pub fn external_edit(state: &mut State, lref: LibraryRef, key: &str) {
    let Some(lib) = state.libraries.get_mut(&lref) else { return };
    let new_version = lib.version + 1;
    let now = dates::now_iso();
    lib.touch();
    if let Some(rec) = lib.items.get_mut(key) {
        rec.version = new_version;
        rec.data.date_modified = now;
    } else if let Some(rec) = lib.collections.get_mut(key) {
        rec.version = new_version;
        rec.date_modified = now;
    } else if let Some(rec) = lib.searches.get_mut(key) {
        rec.version = new_version;
        rec.date_modified = now;
    } else {
        return;
    }
    lib.version = new_version;
}
