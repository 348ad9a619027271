//! Reading one item and creating items (editing them: `update_item.rs`; deleting them: `delete_items.rs`).

use std::collections::{BTreeMap, HashMap};

use futures_util::future::join3;
use zotero_mcp_core::join::join_all;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use zotero_mcp_core::zotero::{
    ItemScope, ObjectKey, ObjectKind, Query, WriteOutcome, ZoteroClient, ZoteroError, ZoteroObject, MANAGED_FIELDS,
};

use super::args::Key;
use super::paging::{shorten_list, Paging};
use crate::context::RequestContext;
use crate::format::items::{detail, item_detail_markdown, summarize_child, ChildSummary, ItemDetail};
use crate::format::note_html::note_html;
use crate::mcp::{Tool, ToolError, ToolSpec};

// ---------------------------------------------------------------------------------------------------------------
// zotero_get_item

/// Children listed by `zotero_get_item`; more are reported as `childrenTruncated`.
const MAX_CHILDREN: usize = 100;

// Zotero export formats offered by `zotero_get_item`.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum ExportFormat {
    Bibtex,
    Biblatex,
    Ris,
    Csljson,
    /// A formatted bibliography entry in a CSL `style`.
    Bib,
    /// A formatted in-text citation in a CSL `style`.
    Citation,
}

impl ExportFormat {
    fn as_str(self) -> &'static str {
        match self {
            ExportFormat::Bibtex => "bibtex",
            ExportFormat::Biblatex => "biblatex",
            ExportFormat::Ris => "ris",
            ExportFormat::Csljson => "csljson",
            ExportFormat::Bib => "bib",
            ExportFormat::Citation => "citation",
        }
    }
}

/// Arguments of `zotero_get_item`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GetItemInput {
    // The item's key.
    pub key: Key,
    // Also list its attachments, notes and annotations.
    #[serde(default)]
    #[schemars(default)]
    pub include_children: bool,
    // Also export the item in this format, produced by Zotero itself.
    pub export_format: Option<ExportFormat>,
    /// For bib and citation, e.g. apa, ieee.
    #[validate(length(min = 1, max = 200))]
    pub style: Option<String>,
    /// For bib and citation, e.g. en-US.
    #[validate(length(min = 2, max = 20))]
    pub locale: Option<String>,
}

/// Result of `zotero_get_item`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GetItemOutput {
    pub item: ItemDetail,
    /// Attachments, notes and annotations, when asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub children: Option<Vec<ChildSummary>>,
    /// True when `children` does not hold them all (over 100, or more than fit in the answer).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    #[schemars(default)]
    pub children_truncated: bool,
    /// The export, when asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub export: Option<String>,
    /// The format of `export`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub export_format: Option<ExportFormat>,
}

pub struct GetItem;

impl Tool for GetItem {
    type Input = GetItemInput;
    type Output = GetItemOutput;
    const SPEC: ToolSpec = ToolSpec::read(
        "zotero_get_item",
        "Read an item's full metadata",
        "One item's every field; with `includeChildren` its attachments, notes and annotations; with \
         `exportFormat` Zotero's BibTeX, RIS, CSL-JSON or a styled citation. For an attachment's text, \
         zotero_read_attachment.",
    )
    .ask_for_less("without `includeChildren` or `exportFormat`");

    /// Children go first (they are listed again by zotero_notes and zotero_annotations); the item stays whole.
    fn shorten(output: &mut GetItemOutput, fraction: f64) -> bool {
        let Some(children) = output.children.as_mut() else { return false };
        if shorten_list(children, fraction).is_none() {
            return false;
        }
        output.children_truncated = true;
        true
    }

    fn render(output: &GetItemOutput) -> String {
        let children = output.children.as_deref().unwrap_or_default();
        let mut markdown = item_detail_markdown(&output.item, children, output.children_truncated);
        if let (Some(format), Some(text)) = (output.export_format, &output.export) {
            markdown.push_str(&format!("\n\n## {}\n\n```\n{}\n```", format.as_str(), text.trim()));
        }
        markdown
    }

    async fn call(ctx: &RequestContext, input: GetItemInput) -> Result<GetItemOutput, ToolError> {
        let zotero = ctx.zotero()?;
        // The item, its children and the export are independent: one round trip for all three.
        let children = async {
            match input.include_children {
                true => zotero.item_cards(ItemScope::Children(&input.key), &Query::new(), MAX_CHILDREN).await.map(Some),
                false => Ok(None),
            }
        };
        let export = async {
            match input.export_format {
                Some(format) => zotero
                    .export(
                        std::slice::from_ref(&input.key.0),
                        format.as_str(),
                        input.style.as_deref(),
                        input.locale.as_deref(),
                    )
                    .await
                    .map(|text| Some(text).filter(|t| !t.trim().is_empty())),
                None => Ok(None),
            }
        };
        let (item, children, export) = join3(zotero.item_with_card(&input.key), children, export).await;
        let (item, card) = item?;
        let (children, children_truncated) = match children? {
            Some(page) => {
                let truncated = Paging::first(MAX_CHILDREN).next_offset(page.items.len(), page.total_results).is_some();
                (Some(page.items.iter().map(summarize_child).collect()), truncated)
            }
            None => (None, false),
        };
        let export = export?;
        Ok(GetItemOutput {
            item: detail(&item, &card),
            children,
            children_truncated,
            export_format: export.as_ref().and(input.export_format),
            export,
        })
    }
}

/// Reads `keys` in as few requests as Zotero allows (50 keys each), in the order given. Keys Zotero does not
/// know come back as failures (404), so the caller reports them beside the others instead of failing the call.
pub(super) async fn read_items(
    zotero: &ZoteroClient,
    keys: &[Key],
) -> Result<(Vec<(ObjectKey, ZoteroObject)>, Vec<Failure>), ToolError> {
    let mut unique: Vec<ObjectKey> = Vec::with_capacity(keys.len());
    for key in keys {
        if !unique.contains(&key.0) {
            unique.push(key.0.clone());
        }
    }
    let mut items = zotero.items_by_keys(&unique).await?;
    let mut found = Vec::with_capacity(unique.len());
    let mut missing = Vec::new();
    for key in unique {
        match items.iter().position(|item| item.key == key.as_str()) {
            Some(index) => found.push((key, items.swap_remove(index))),
            None => missing.push(Failure {
                what: key.as_str().to_owned(),
                code: 404,
                message: format!("There is no item {key} in this library. Check the key with zotero_search."),
            }),
        }
    }
    Ok((found, missing))
}

/// A failed request about one object, for a tool's `failed` list.
pub(super) fn failure(key: &ObjectKey, error: &ZoteroError) -> Failure {
    Failure { what: key.as_str().to_owned(), code: error.status().unwrap_or(0), message: error.to_string() }
}

/// Where one object's write went: done, not done (a [`Failure`]), or not known ([`Unknown`]). A write whose
/// answer was lost was read back by the writer, so only one that reading could not settle is unknown.
pub(super) enum Settled {
    Done,
    Failed(Failure),
    Unknown(Unknown),
}

/// The outcome of a write about one object, `key`.
pub(super) fn settled<T>(key: &ObjectKey, result: &Result<T, ZoteroError>) -> Settled {
    match result {
        Ok(_) => Settled::Done,
        Err(error) if error.is_outcome_unknown() => Settled::Unknown(unknown(key.as_str(), key.as_str(), error)),
        Err(error) => Settled::Failed(failure(key, error)),
    }
}

/// An object whose write's answer was lost, and reading it back could not tell: it may or may not be written.
#[derive(Debug, Clone, Serialize, JsonSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Unknown {
    /// Position in the request (0-based), or the key concerned.
    pub what: String,
    /// Its key: read it (zotero_get_item) to see whether the change is there before trying again.
    pub key: String,
    pub message: String,
}

fn unknown(what: &str, key: &str, why: &dyn std::fmt::Display) -> Unknown {
    Unknown {
        what: what.to_owned(),
        key: key.to_owned(),
        message: format!("{why} (check with zotero_get_item {key} before trying again)"),
    }
}

/// The objects of `outcome` whose write is unknown, labelled as [`failures_from`] labels failures.
pub fn unknown_from(outcome: &WriteOutcome, label: impl Fn(usize) -> String) -> Vec<Unknown> {
    outcome.unknown.iter().map(|(index, u)| unknown(&label(*index), &u.key, &u.message)).collect()
}

/// A batch write whose first request's answer was lost and could not be read back, as an outcome: its objects
/// unknown (in the order sent), the rest never sent. Any other error is returned as it is.
pub fn unknown_outcome(error: ZoteroError, sent: usize) -> Result<WriteOutcome, ZoteroError> {
    let ZoteroError::OutcomeUnknown { keys, .. } = &error else { return Err(error) };
    let mut outcome = WriteOutcome::default();
    for (position, key) in keys.iter().enumerate() {
        let message = error.to_string();
        outcome.unknown.insert(position, zotero_mcp_core::zotero::WriteUnknown { key: key.clone(), message });
    }
    outcome.not_sent = (keys.len()..sent).collect();
    Ok(outcome)
}

pub(super) fn unknown_lines(unknown: &[Unknown]) -> String {
    unknown.iter().map(|u| format!("- {}: {}", u.what, u.message)).collect::<Vec<_>>().join("\n")
}

/// The Markdown paragraph for objects whose write is unknown, when there are any.
pub(super) fn unknown_paragraph(unknown: &[Unknown]) -> String {
    if unknown.is_empty() {
        return String::new();
    }
    format!(
        "\n\nUnknown whether written (the answer was lost and reading back could not tell; check each before \
         trying again):\n{}",
        unknown_lines(unknown)
    )
}

// ---------------------------------------------------------------------------------------------------------------
// shared inputs

fn default_creator_type() -> String {
    "author".to_owned()
}

/// A creator: either `name` (organisations, single-field names) or `firstName`/`lastName`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreatorIn {
    /// E.g. author, editor, translator.
    #[serde(default = "default_creator_type")]
    #[schemars(default = "default_creator_type")]
    #[validate(length(min = 1, max = 64))]
    pub creator_type: String,
    #[validate(length(max = 255))]
    pub first_name: Option<String>,
    #[validate(length(max = 255))]
    pub last_name: Option<String>,
    /// Instead of firstName and lastName.
    #[validate(length(max = 255))]
    pub name: Option<String>,
}

/// The one rule about creators their schema cannot say: a single-field name or a split one, exactly one of them.
/// One sentence per creator that breaks it, each named by `path` (`items[0].creators` → `items[0].creators[1]`).
pub(super) fn creator_problems(creators: &[CreatorIn], path: &str, out: &mut Vec<String>) {
    let filled = |v: &Option<String>| v.as_deref().is_some_and(|s| !s.trim().is_empty());
    for (index, creator) in creators.iter().enumerate() {
        let split = filled(&creator.first_name) || filled(&creator.last_name);
        if filled(&creator.name) == split {
            out.push(format!(
                "`{path}[{index}]` needs either `name` or `firstName`/`lastName`, not both and not neither"
            ));
        }
    }
}

impl CreatorIn {
    pub(super) fn to_zotero(&self) -> Value {
        match &self.name {
            Some(name) if !name.trim().is_empty() => json!({ "creatorType": self.creator_type, "name": name.trim() }),
            _ => json!({
                "creatorType": self.creator_type,
                "firstName": self.first_name.as_deref().unwrap_or("").trim(),
                "lastName": self.last_name.as_deref().unwrap_or("").trim(),
            }),
        }
    }
}

/// A tag to set on an item.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TagIn {
    #[validate(length(min = 1, max = 255))]
    pub tag: String,
    /// 1: automatic.
    #[serde(rename = "type")]
    #[validate(range(max = 1))]
    pub kind: Option<u8>,
}

impl TagIn {
    /// The tag as Zotero stores it (`type` only for automatic tags).
    pub fn to_zotero(&self) -> Value {
        match self.kind {
            Some(kind) if kind > 0 => json!({ "tag": self.tag, "type": kind }),
            _ => json!({ "tag": self.tag }),
        }
    }
}

/// A field value: text, a number or a boolean (stored by Zotero as text).
pub(super) fn field_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Null => Some(String::new()),
        _ => None,
    }
}

/// A field's value as it is sent to Zotero. Zotero (Desktop, iOS, the web library) renders a `note` field as
/// HTML, so it never goes through as the caller wrote it: it is Markdown, rendered through the same whitelist
/// as `zotero_notes`, and any HTML in it (`<script>`, `<img onerror=…>`) arrives as visible text. Every item
/// type's `note` is treated so (notes, and attachments' notes). An empty value still clears the field.
pub(super) fn stored_field(name: &str, value: &Value) -> Option<String> {
    let text = field_text(value)?;
    if name == "note" && !text.trim().is_empty() {
        return Some(note_html(None, &text, false));
    }
    Some(text)
}

/// Fields that have their own argument or tool, so `fields` does not take them either: a creator list, tags or
/// collections given as one text would be refused by Zotero item by item, and an item's type is chosen once.
pub const DEDICATED_FIELDS: [&str; 5] = ["itemType", "creators", "tags", "collections", "relations"];

/// Why `fields.<name>` is refused, in the same words for `zotero_create_items` and `zotero_update_item`; `None`
/// when the field may be set. The one place both tools ask, so a field refused by one is refused by the other.
pub fn field_refusal(name: &str) -> Option<String> {
    if MANAGED_FIELDS.contains(&name) {
        return Some(format!(
            "`fields.{name}` is Zotero's own record of the item and cannot be set by a call: zotero_create_items \
             always makes new items, zotero_update_item changes the items named in `keys`, and \
             zotero_delete_items moves items to the trash. Nothing was written"
        ));
    }
    DEDICATED_FIELDS
        .contains(&name)
        .then(|| format!("`fields.{name}` cannot be set here; use the dedicated argument or tool. Nothing was written"))
}

/// The first refused field of `fields`, as an argument error.
pub(super) fn refuse_fields<'a>(fields: impl IntoIterator<Item = &'a String>) -> Result<(), ToolError> {
    match fields.into_iter().find_map(|name| field_refusal(name)) {
        Some(why) => Err(ToolError::invalid(why)),
        None => Ok(()),
    }
}

/// One object Zotero refused, for the caller.
#[derive(Debug, Clone, Serialize, JsonSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Failure {
    /// Position in the request (0-based), or the key concerned.
    pub what: String,
    /// Zotero's code (400 invalid, 412 changed elsewhere, …), or 0 when nothing was sent.
    pub code: u16,
    pub message: String,
}

pub fn failures_from(outcome: &WriteOutcome, label: impl Fn(usize) -> String) -> Vec<Failure> {
    let mut failures: Vec<Failure> = outcome
        .failed
        .iter()
        .map(|(index, f)| Failure { what: label(*index), code: f.code, message: f.message.clone() })
        .collect();
    failures.extend(outcome.not_sent.iter().map(|index| Failure {
        what: label(*index),
        code: 0,
        message: "not sent, because an earlier batch of this request failed; nothing was written for it".into(),
    }));
    failures
}

pub(super) fn failure_lines(failures: &[Failure]) -> String {
    failures.iter().map(|f| format!("- {}: {} {}", f.what, f.code, f.message)).collect::<Vec<_>>().join("\n")
}

// ---------------------------------------------------------------------------------------------------------------
// zotero_create_items

/// One new item.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NewItem {
    /// E.g. journalArticle, book, note, webpage.
    #[validate(length(min = 1, max = 64))]
    pub item_type: String,
    #[validate(length(max = 10000))]
    pub title: Option<String>,
    #[validate(nested, length(max = 200))]
    pub creators: Option<Vec<CreatorIn>>,
    #[validate(nested, length(max = 200))]
    pub tags: Option<Vec<TagIn>>,
    // Collections to file the item in.
    #[validate(length(max = 50))]
    pub collections: Option<Vec<Key>>,
    /// For a note or attachment.
    pub parent_item: Option<Key>,
    /// Other fields by Zotero name (date, DOI, publicationTitle, abstractNote, extra…). A `note` is Markdown.
    #[schemars(with = "Option<BTreeMap<String, FieldValue>>")]
    pub fields: Option<Map<String, Value>>,
}

// A field value as accepted from callers.
#[derive(JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)] // Only its schema is used.
pub(super) enum FieldValue {
    Text(String),
    Number(f64),
    Flag(bool),
}

/// Arguments of `zotero_create_items`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateItemsInput {
    // The items to create, 1 to 250 (sent to Zotero 50 at a time; each item's outcome is reported).
    #[validate(nested, length(min = 1, max = 250))]
    pub items: Vec<NewItem>,
}

/// Result of `zotero_create_items`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreateItemsOutput {
    /// Keys of the new items, in the order they were given.
    pub created: Vec<String>,
    /// Items Zotero found identical to existing ones (nothing written).
    pub unchanged: Vec<String>,
    /// Items that were not created, each with the reason.
    pub failed: Vec<Failure>,
    /// Items whose write's answer was lost and could not be checked: read each before creating it again.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown: Vec<Unknown>,
}

pub struct CreateItems;

impl Tool for CreateItems {
    type Input = CreateItemsInput;
    type Output = CreateItemsOutput;
    const SPEC: ToolSpec = ToolSpec::write(
        "zotero_create_items",
        "Create items",
        "Creates up to 250 items of any type (notes too) with creators, tags, collections and fields; reports \
         each new key or Zotero's refusal. To add a work by DOI, ISBN, arXiv id or BibTeX, use \
         zotero_import_reference.",
    );

    fn render(output: &CreateItemsOutput) -> String {
        let keys = if output.created.is_empty() { "(none)".to_owned() } else { output.created.join(", ") };
        let mut text = format!("Created {} item(s): {keys}", output.created.len());
        if !output.failed.is_empty() {
            text.push_str(&format!("\n\nNot created:\n{}", failure_lines(&output.failed)));
        }
        text.push_str(&unknown_paragraph(&output.unknown));
        text
    }

    async fn call(ctx: &RequestContext, input: CreateItemsInput) -> Result<CreateItemsOutput, ToolError> {
        let mut problems = Vec::new();
        for (index, item) in input.items.iter().enumerate() {
            creator_problems(
                item.creators.as_deref().unwrap_or_default(),
                &format!("items[{index}].creators"),
                &mut problems,
            );
        }
        if !problems.is_empty() {
            return Err(ToolError::invalid(problems.join("; ")));
        }
        // Before anything is read: with `key` and `version` a "new" item would be written over an existing one.
        refuse_fields(input.items.iter().flat_map(|item| item.fields.iter().flatten().map(|(name, _)| name)))?;
        let zotero = ctx.writer()?;
        // One template per distinct type, all requested together.
        let mut types: Vec<&str> = Vec::new();
        for item in &input.items {
            if !types.contains(&item.item_type.as_str()) {
                types.push(&item.item_type);
            }
        }
        let fetched = join_all(types.iter().map(|t| zotero.template(t, None))).await;
        // `None`: Zotero knows no such type.
        let mut templates: HashMap<String, Option<Map<String, Value>>> = HashMap::new();
        for (item_type, result) in types.iter().zip(fetched) {
            // Zotero answers 400 for an unknown type: that fails the items of that type only. Any other failure
            // means no template can be read, so nothing is written.
            let template = match result {
                Ok(template) => Some(template),
                Err(ZoteroError::Api { status: 400, .. }) => None,
                Err(other) => return Err(ToolError::Failed(format!("Could not read Zotero's item template: {other}"))),
            };
            templates.insert((*item_type).to_owned(), template);
        }
        let mut payloads = Vec::new();
        let mut positions = Vec::new();
        let mut failed = Vec::new();
        let label = |i: usize, item: &NewItem| format!("#{i} {}", item.title.as_deref().unwrap_or(&item.item_type));
        for (index, item) in input.items.iter().enumerate() {
            match &templates[&item.item_type] {
                Some(template) => {
                    payloads.push(build_new_item(template, item)?);
                    positions.push(index);
                }
                None => failed.push(Failure {
                    what: label(index, item),
                    code: 400,
                    message: format!("`{}` is not a Zotero item type", item.item_type),
                }),
            }
        }
        let mut created = Vec::new();
        let mut unchanged = Vec::new();
        let mut unknown = Vec::new();
        if !payloads.is_empty() {
            let written = zotero.write_objects(ObjectKind::Items, &payloads).await;
            let outcome = written.or_else(|error| unknown_outcome(error, payloads.len()))?;
            created.extend(outcome.success.values().cloned());
            unchanged.extend(outcome.unchanged.values().cloned());
            // `i` comes from Zotero's answer: one that names no object sent is labelled by its number rather than
            // looked up (which would panic). `positions` holds indexes of `input.items`, so those are safe.
            let labelled = |i: usize| match positions.get(i) {
                Some(&position) => label(position, &input.items[position]),
                None => format!("#{i}"),
            };
            failed.extend(failures_from(&outcome, labelled));
            unknown.extend(unknown_from(&outcome, labelled));
        }
        Ok(CreateItemsOutput { created, unchanged, failed, unknown })
    }
}

fn build_new_item(template: &Map<String, Value>, item: &NewItem) -> Result<Value, ToolError> {
    let mut payload = template.clone();
    payload.insert("itemType".into(), json!(item.item_type));
    if let Some(title) = &item.title {
        payload.insert("title".into(), json!(title));
    }
    if let Some(creators) = &item.creators {
        payload.insert("creators".into(), Value::Array(creators.iter().map(CreatorIn::to_zotero).collect()));
    }
    if let Some(tags) = &item.tags {
        payload.insert("tags".into(), Value::Array(tags.iter().map(TagIn::to_zotero).collect()));
    }
    if let Some(collections) = &item.collections {
        payload.insert("collections".into(), json!(collections.iter().map(Key::as_str).collect::<Vec<_>>()));
    }
    if let Some(parent) = &item.parent_item {
        payload.insert("parentItem".into(), json!(parent.as_str()));
    }
    for (name, value) in item.fields.iter().flatten() {
        let text = stored_field(name, value)
            .ok_or_else(|| ToolError::invalid(format!("`fields.{name}` must be text, a number or a boolean")))?;
        payload.insert(name.clone(), Value::String(text));
    }
    Ok(Value::Object(payload))
}
