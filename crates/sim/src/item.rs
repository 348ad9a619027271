//! Items: the stored record, its editable JSON (`data`) and the validation Zotero applies when it is written.
//!
//! Validation follows the order and the messages of the dataserver (`Zotero_Items::validateJSONItem`, then the
//! field setters), so a client sees the same 400 text it would see from api.zotero.org, e.g.
//! `'publicationTitle' is not a valid field for type 'book'` or `Invalid property 'foo'`.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};
use zotero_mcp_core::html_text::{html_to_text, title_line};

use crate::dates;
use crate::error::{ApiError, ApiResult};
use crate::keys::is_valid_key;
use crate::schema::{is_regular_type, ItemTypeDef, Schema};

/// Link modes Zotero knows for attachments.
pub const LINK_MODES: [&str; 5] = ["imported_file", "imported_url", "linked_file", "linked_url", "embedded_image"];

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

const ANNOTATION_TYPES: [&str; 6] = ["highlight", "underline", "note", "image", "ink", "text"];
const ANNOTATION_PROPS: [&str; 8] = [
    "annotationType",
    "annotationAuthorName",
    "annotationText",
    "annotationComment",
    "annotationColor",
    "annotationPageLabel",
    "annotationSortIndex",
    "annotationPosition",
];

/// Zotero's tag length limit.
const MAX_TAG_LENGTH: usize = 255;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CreatorName {
    /// Single-field mode (`name`), e.g. an institution.
    Single(String),
    /// Two-field mode (`firstName`, `lastName`).
    Split { first: String, last: String },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Creator {
    pub creator_type: String,
    pub name: CreatorName,
}

impl Creator {
    /// The name Zotero's creator summary and sort use: the last name, or the single-field name.
    pub fn last_name(&self) -> &str {
        match &self.name {
            CreatorName::Single(n) => n,
            CreatorName::Split { last, .. } => last,
        }
    }

    /// `TRIM(CONCAT(firstName, ' ', lastName))`, what quick search matches.
    pub fn full_name(&self) -> String {
        match &self.name {
            CreatorName::Single(n) => n.clone(),
            CreatorName::Split { first, last } => format!("{first} {last}").trim().to_string(),
        }
    }

    fn to_json(&self) -> Value {
        match &self.name {
            CreatorName::Single(n) => json!({"creatorType": self.creator_type, "name": n}),
            CreatorName::Split { first, last } => {
                json!({"creatorType": self.creator_type, "firstName": first, "lastName": last})
            }
        }
    }
}

/// A tag on an item: manual (type 0) or automatic (type 1).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Tag {
    pub name: String,
    pub kind: i64,
}

/// Attachment-only properties.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Attachment {
    pub link_mode: String,
    pub content_type: String,
    pub charset: String,
    pub filename: String,
    pub md5: Option<String>,
    pub mtime: Option<i64>,
    pub path: String,
    pub last_read: Option<i64>,
}

impl Attachment {
    pub fn stores_file(&self) -> bool {
        self.link_mode.starts_with("imported_") || self.link_mode == "embedded_image"
    }
}

/// Everything editable about an item (the API's `data`, minus key and version).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ItemData {
    pub item_type: String,
    pub parent: Option<String>,
    /// Non-empty field values; every field valid for the type is printed, empty ones as `""`.
    pub fields: BTreeMap<String, String>,
    pub creators: Vec<Creator>,
    /// The HTML note of a note or attachment item.
    pub note: Option<String>,
    pub attachment: Option<Attachment>,
    /// `annotation*` properties, as given.
    pub annotation: BTreeMap<String, Value>,
    pub deleted: bool,
    pub in_publications: bool,
    pub tags: Vec<Tag>,
    pub collections: Vec<String>,
    pub relations: Map<String, Value>,
    pub date_added: String,
    pub date_modified: String,
}

impl ItemData {
    pub fn field(&self, name: &str) -> &str {
        self.fields.get(name).map(String::as_str).unwrap_or("")
    }

    pub fn is_regular(&self) -> bool {
        is_regular_type(&self.item_type)
    }

    pub fn is_attachment(&self) -> bool {
        self.item_type == "attachment"
    }

    pub fn is_embedded_image(&self) -> bool {
        self.attachment.as_ref().is_some_and(|a| a.link_mode == "embedded_image")
    }

    /// PDF, EPUB and snapshot attachments are the ones that can carry annotations.
    pub fn is_readable_attachment(&self) -> bool {
        self.attachment.as_ref().is_some_and(|a| {
            a.link_mode != "linked_url"
                && matches!(a.content_type.as_str(), "application/pdf" | "application/epub+zip" | "text/html")
        })
    }

    /// The value of the type's title-like field (`title`, `caseName`, `subject`, `nameOfAct`…).
    pub fn title(&self, schema: &Schema) -> String {
        match schema.item_type(&self.item_type).and_then(|t| t.field_for_base("title")) {
            Some(f) => self.field(f).to_string(),
            None => String::new(),
        }
    }

    /// The free-text date, from `date` or the type's field mapped to it (`dateDecided`, `issueDate`…).
    pub fn date(&self, schema: &Schema) -> String {
        match schema.item_type(&self.item_type).and_then(|t| t.field_for_base("date")) {
            Some(f) => self.field(f).to_string(),
            None => String::new(),
        }
    }

    /// A note's title: the first line of its text, as Zotero derives it.
    pub fn note_title(&self) -> String {
        self.note.as_deref().map(note_to_title).unwrap_or_default()
    }

    /// Title for sorting and display: the title field, or a note's first line.
    pub fn display_title(&self, schema: &Schema) -> String {
        if self.item_type == "note" {
            self.note_title()
        } else {
            self.title(schema)
        }
    }

    /// `meta.creatorSummary`: primary creators, else editors, else contributors ("A", "A and B", "A et al.").
    pub fn creator_summary(&self, schema: &Schema) -> String {
        let primary = schema.item_type(&self.item_type).and_then(|t| t.primary_creator.clone());
        let candidates = [primary, Some("editor".to_string()), Some("contributor".to_string())];
        for kind in candidates.iter().flatten() {
            let names: Vec<&str> =
                self.creators.iter().filter(|c| &c.creator_type == kind).take(3).map(Creator::last_name).collect();
            match names.len() {
                0 => continue,
                1 => return names[0].to_string(),
                2 => return format!("{} and {}", names[0], names[1]),
                _ => return format!("{} et al.", names[0]),
            }
        }
        String::new()
    }

    /// The editable JSON, in the order Zotero prints it.
    pub fn to_json(&self, key: &str, version: u64, relations: &Map<String, Value>, user_library: bool) -> Value {
        let schema = Schema::get();
        let mut out = Map::new();
        out.insert("key".into(), json!(key));
        out.insert("version".into(), json!(version));
        if let Some(parent) = &self.parent {
            out.insert("parentItem".into(), json!(parent));
        }
        out.insert("itemType".into(), json!(self.item_type));
        if let Some(att) = &self.attachment {
            out.insert("linkMode".into(), json!(att.link_mode));
        }
        let type_def = schema.item_type(&self.item_type);
        let title_field = if self.is_regular() { type_def.and_then(|t| t.field_for_base("title")) } else { None };
        if self.is_regular() {
            if let Some(tf) = title_field {
                out.insert(tf.into(), json!(self.field(tf)));
            }
            out.insert("creators".into(), Value::Array(self.creators.iter().map(Creator::to_json).collect()));
        }
        let embedded = self.is_embedded_image();
        if let Some(t) = type_def {
            for f in &t.fields {
                if Some(f.name.as_str()) == title_field {
                    continue;
                }
                if embedded && matches!(f.name.as_str(), "title" | "url" | "accessDate") {
                    continue;
                }
                out.insert(f.name.clone(), json!(self.field(&f.name)));
            }
        }
        if self.item_type == "note" || (self.is_attachment() && !embedded) {
            out.insert("note".into(), json!(self.note.clone().unwrap_or_default()));
        }
        if let Some(att) = &self.attachment {
            out.insert("contentType".into(), json!(att.content_type));
            if !embedded {
                out.insert("charset".into(), json!(att.charset));
            }
            if att.stores_file() {
                out.insert("filename".into(), json!(att.filename));
                out.insert("md5".into(), json!(att.md5));
                out.insert("mtime".into(), json!(att.mtime));
            } else if att.link_mode == "linked_file" {
                out.insert("path".into(), json!(att.path));
            }
            if let (Some(lr), true) = (att.last_read, user_library) {
                out.insert("lastRead".into(), json!(lr));
            }
        }
        if self.item_type == "annotation" {
            let kind = self.annotation.get("annotationType").and_then(Value::as_str).unwrap_or("");
            for prop in ANNOTATION_PROPS {
                let value = self.annotation.get(prop).cloned().unwrap_or_else(|| json!(""));
                if prop == "annotationAuthorName" && value == json!("") {
                    continue;
                }
                if prop == "annotationText" && !matches!(kind, "highlight" | "underline") {
                    continue;
                }
                out.insert(prop.into(), value);
            }
        }
        if self.deleted {
            out.insert("deleted".into(), json!(1));
        }
        if self.in_publications {
            out.insert("inPublications".into(), json!(true));
        }
        if !embedded {
            let tags = self
                .tags
                .iter()
                .map(|t| if t.kind == 0 { json!({"tag": t.name}) } else { json!({"tag": t.name, "type": t.kind}) })
                .collect();
            out.insert("tags".into(), Value::Array(tags));
            if self.parent.is_none() {
                out.insert("collections".into(), json!(self.collections));
            }
            out.insert("relations".into(), Value::Object(relations.clone()));
        }
        out.insert("dateAdded".into(), json!(self.date_added));
        out.insert("dateModified".into(), json!(self.date_modified));
        Value::Object(out)
    }
}

/// Zotero's `noteToTitle`: the first line of the note's text, at most 80 characters. The text comes from the core
/// crate's converter, the one the MCP server reads notes with, so a note is titled here as the server shows it
/// (block ends and `<br>` end lines, entities are decoded, scripts and styles are not text).
pub fn note_to_title(html: &str) -> String {
    let text = html_to_text(html);
    title_line(&text).chars().take(80).collect()
}

/// The URI Zotero uses for an item in relations: `http://zotero.org/users/1/items/ABCD2345`.
pub fn item_uri(library_path: &str, key: &str) -> String {
    format!("http://zotero.org{library_path}/items/{key}")
}

/// What the write needs to know about the library and the request, beyond the JSON.
pub struct WriteContext<'a> {
    pub existing: Option<&'a ItemData>,
    /// Partial update (PATCH, or POST of an existing object): absent properties keep their values.
    pub partial: bool,
    pub user_library: bool,
    pub now: &'a str,
}

/// PHP-ish rendering of a scalar for error messages.
fn scalar_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Bool(true) => "1".into(),
        Value::Bool(false) | Value::Null => String::new(),
        other => other.to_string(),
    }
}

fn is_numeric(v: &Value) -> bool {
    match v {
        Value::Number(_) => true,
        Value::String(s) => s.trim().parse::<f64>().is_ok(),
        _ => false,
    }
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

fn validate_tags(val: &Value) -> ApiResult<()> {
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

fn validate_relations(val: &Value) -> ApiResult<()> {
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
pub fn is_zotero_item_uri(uri: &str) -> bool {
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

fn validate_creators(val: &Value, item_type: &str, is_new: bool) -> ApiResult<()> {
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

/// Relations as Zotero prints them: a string for one value, an array for several.
pub fn normalize_relations(val: &Value) -> Map<String, Value> {
    let mut out = Map::new();
    if let Value::Object(map) = val {
        for (predicate, object) in map {
            let values: Vec<String> = match object {
                Value::Array(a) => a.iter().map(scalar_text).collect(),
                other => vec![scalar_text(other)],
            };
            let mut unique: Vec<String> = Vec::new();
            for v in values.into_iter().filter(|v| !v.is_empty()) {
                if !unique.contains(&v) {
                    unique.push(v);
                }
            }
            match unique.len() {
                0 => {}
                1 => {
                    out.insert(predicate.clone(), json!(unique[0]));
                }
                _ => {
                    out.insert(predicate.clone(), json!(unique));
                }
            }
        }
    }
    out
}

/// All values of a relation predicate, whether stored as a string or an array.
pub fn relation_values(relations: &Map<String, Value>, predicate: &str) -> Vec<String> {
    match relations.get(predicate) {
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).map(str::to_string).collect(),
        _ => Vec::new(),
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn note_titles_are_the_first_line() {
        assert_eq!(note_to_title("<p>First &amp; best</p><p>second</p>"), "First & best");
        assert_eq!(note_to_title("<h1>Heading</h1>\n<p>x</p>"), "Heading");
        assert_eq!(note_to_title("<script>x()</script>line&nbsp;one<br/>line two"), "line one");
        assert_eq!(note_to_title("<ul><li>first item</li></ul>"), "first item");
        assert_eq!(note_to_title(&format!("<p>{}</p>", "长".repeat(100))), "长".repeat(80));
    }

    #[test]
    fn recognizes_item_uris() {
        assert!(is_zotero_item_uri("http://zotero.org/users/1/items/ABCD2345"));
        assert!(is_zotero_item_uri("http://zotero.org/groups/12/publications/items/ABCD2345"));
        assert!(!is_zotero_item_uri("https://zotero.org/users/1/items/ABCD2345"));
        assert!(!is_zotero_item_uri("http://zotero.org/users/x/items/ABCD2345"));
    }
}
