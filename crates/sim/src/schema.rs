//! Zotero's data schema: item types, their fields (with base-field mappings) and creator types.
//!
//! The data is a trimmed copy of `schema.json` from the zotero/zotero-schema repository (the file the real API
//! serves at `/schema`): every item type with its fields and creator types, and the en-US labels. Validating against the real schema, rather than a hand-written list, is what lets a client
//! test fail here for the same reason it would fail against api.zotero.org.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

use serde::Deserialize;

/// The bundled schema file (see `sim/data/schema.json`).
const SCHEMA_JSON: &str = include_str!("../data/schema.json");

#[derive(Debug, Deserialize)]
struct RawSchema {
    version: u64,
    #[serde(rename = "itemTypes")]
    item_types: Vec<RawItemType>,
    locales: BTreeMap<String, RawLocale>,
}

#[derive(Debug, Deserialize)]
struct RawItemType {
    #[serde(rename = "itemType")]
    item_type: String,
    fields: Vec<RawField>,
    #[serde(rename = "creatorTypes")]
    creator_types: Vec<RawCreatorType>,
}

#[derive(Debug, Deserialize)]
struct RawField {
    field: String,
    #[serde(rename = "baseField")]
    base_field: Option<String>,
}

#[derive(Debug, Deserialize)]
struct RawCreatorType {
    #[serde(rename = "creatorType")]
    creator_type: String,
    #[serde(default)]
    primary: bool,
}

#[derive(Debug, Deserialize)]
struct RawLocale {
    #[serde(rename = "itemTypes")]
    item_types: BTreeMap<String, String>,
    fields: BTreeMap<String, String>,
    #[serde(rename = "creatorTypes")]
    creator_types: BTreeMap<String, String>,
}

/// One field of an item type, in schema order.
#[derive(Debug, Clone)]
pub struct FieldDef {
    pub name: String,
    /// The generic field this one stands for (e.g. `websiteTitle` → `publicationTitle`).
    pub base: Option<String>,
}

/// One item type: its fields in display order and the creator types it accepts.
#[derive(Debug, Clone)]
pub struct ItemTypeDef {
    pub name: String,
    pub fields: Vec<FieldDef>,
    pub creator_types: Vec<String>,
    pub primary_creator: Option<String>,
}

impl ItemTypeDef {
    pub fn has_field(&self, field: &str) -> bool {
        self.fields.iter().any(|f| f.name == field)
    }

    /// The type's own field for a base field (`title` for most types, `caseName` for cases), if any.
    pub fn field_for_base(&self, base: &str) -> Option<&str> {
        self.fields.iter().find(|f| f.name == base || f.base.as_deref() == Some(base)).map(|f| f.name.as_str())
    }

    pub fn accepts_creator(&self, creator_type: &str) -> bool {
        self.creator_types.iter().any(|c| c == creator_type)
    }
}

/// The parsed schema.
#[derive(Debug)]
pub struct Schema {
    pub version: u64,
    types: Vec<ItemTypeDef>,
    /// Every field name the API knows (type fields and base fields), for "Invalid property" vs "not valid for
    /// type" errors, which Zotero distinguishes.
    all_fields: BTreeSet<String>,
    all_creator_types: BTreeSet<String>,
    type_labels: BTreeMap<String, String>,
    field_labels: BTreeMap<String, String>,
    creator_labels: BTreeMap<String, String>,
}

/// Item types that are not "regular" items: they have no creators and special properties.
pub const NON_REGULAR_TYPES: [&str; 3] = ["note", "attachment", "annotation"];

impl Schema {
    /// The bundled schema, parsed once.
    pub fn get() -> &'static Schema {
        static SCHEMA: OnceLock<Schema> = OnceLock::new();
        SCHEMA.get_or_init(|| Schema::parse(SCHEMA_JSON))
    }

    fn parse(text: &str) -> Schema {
        // The file is bundled at compile time and checked by the tests, so a failure here is a build defect.
        let raw: RawSchema = match serde_json::from_str(text) {
            Ok(raw) => raw,
            Err(e) => panic!("the bundled Zotero schema (sim/data/schema.json) does not parse: {e}"),
        };
        let mut all_fields = BTreeSet::new();
        let mut all_creator_types = BTreeSet::new();
        let types = raw
            .item_types
            .into_iter()
            .map(|t| {
                for f in &t.fields {
                    all_fields.insert(f.field.clone());
                    if let Some(base) = &f.base_field {
                        all_fields.insert(base.clone());
                    }
                }
                for c in &t.creator_types {
                    all_creator_types.insert(c.creator_type.clone());
                }
                ItemTypeDef {
                    primary_creator: t.creator_types.iter().find(|c| c.primary).map(|c| c.creator_type.clone()),
                    name: t.item_type,
                    fields: t.fields.into_iter().map(|f| FieldDef { name: f.field, base: f.base_field }).collect(),
                    creator_types: t.creator_types.into_iter().map(|c| c.creator_type).collect(),
                }
            })
            .collect();
        let en = raw.locales.get("en-US");
        Schema {
            version: raw.version,
            types,
            all_fields,
            all_creator_types,
            type_labels: en.map(|l| l.item_types.clone()).unwrap_or_default(),
            field_labels: en.map(|l| l.fields.clone()).unwrap_or_default(),
            creator_labels: en.map(|l| l.creator_types.clone()).unwrap_or_default(),
        }
    }

    pub fn item_type(&self, name: &str) -> Option<&ItemTypeDef> {
        self.types.iter().find(|t| t.name == name)
    }

    pub fn item_types(&self) -> &[ItemTypeDef] {
        &self.types
    }

    pub fn is_known_field(&self, field: &str) -> bool {
        self.all_fields.contains(field)
    }

    pub fn is_creator_type(&self, creator_type: &str) -> bool {
        self.all_creator_types.contains(creator_type)
    }

    /// Every field name (sorted), for `/itemFields`.
    pub fn all_fields(&self) -> impl Iterator<Item = &String> {
        self.all_fields.iter()
    }

    /// Every field that maps to `base` in some type, plus `base` itself (e.g. all title-like fields).
    pub fn fields_for_base(&self, base: &str) -> BTreeSet<String> {
        let mut out = BTreeSet::from([base.to_string()]);
        for t in &self.types {
            for f in &t.fields {
                if f.base.as_deref() == Some(base) {
                    out.insert(f.name.clone());
                }
            }
        }
        out
    }

    pub fn type_label(&self, item_type: &str) -> String {
        self.type_labels.get(item_type).cloned().unwrap_or_else(|| item_type.to_string())
    }

    pub fn field_label(&self, field: &str) -> String {
        self.field_labels.get(field).cloned().unwrap_or_else(|| field.to_string())
    }

    pub fn creator_label(&self, creator_type: &str) -> String {
        self.creator_labels.get(creator_type).cloned().unwrap_or_else(|| creator_type.to_string())
    }
}

pub fn is_regular_type(item_type: &str) -> bool {
    !NON_REGULAR_TYPES.contains(&item_type)
}
