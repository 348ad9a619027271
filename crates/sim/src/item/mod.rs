//! Items: the stored record, its editable JSON (`data`) and the validation Zotero applies when it is written.
//!
//! Validation follows the order and the messages of the dataserver (`Zotero_Items::validateJSONItem`, then the
//! field setters), so a client sees the same 400 text it would see from api.zotero.org, e.g.
//! `'publicationTitle' is not a valid field for type 'book'` or `Invalid property 'foo'`.
//!
//! This file holds the item types; the write path is in `write`, the property checks it makes in `validation`,
//! relation values in `relations` and the `/items/new` template in `template`.

mod relations;
mod template;
mod validation;
mod write;

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};
use zotero_mcp_core::html_text::{html_to_text, title_line};

use crate::schema::{is_regular_type, Schema};

pub use relations::{normalize_relations, relation_values};
pub use template::template;
pub use write::{apply, WriteContext};

/// Link modes Zotero knows for attachments.
pub const LINK_MODES: [&str; 5] = ["imported_file", "imported_url", "linked_file", "linked_url", "embedded_image"];

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
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
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

/// PHP-ish rendering of a scalar for error messages.
fn scalar_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Bool(true) => "1".into(),
        Value::Bool(false) | Value::Null => String::new(),
        other => other.to_string(),
    }
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
}
