//! Notes: listing, searching, writing and trashing them with one tool, `zotero_notes`.
//!
//! Listing and searching read; create, update and delete write. The registry checks scopes per tool, so the tool
//! is declared [`ToolSpec::mixed`] and each writing action checks `zotero:write` itself before anything else.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use zotero_mcp_core::zotero::{ObjectKind, QMode, Query, ZoteroClient, ZoteroObject};

use super::args::Key;
use super::items::TagIn;
use super::paging::{shorten_page, Paging};
use crate::context::RequestContext;
use crate::format::note_html::{
    append_fragment, html_to_text, note_fragment, note_html, notes_markdown, summarize_note, NoteSummary,
};
use crate::mcp::{Tool, ToolError, ToolSpec};

/// Children read when listing one item's notes; items rarely have more.
const MAX_CHILDREN: usize = 1000;

// What `zotero_notes` does.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum NoteAction {
    /// An item's notes (with itemKey), or every note in the library, most recently changed first.
    #[default]
    List,
    /// Notes containing `query` (within one item's notes with itemKey).
    Search,
    /// A new note, on the item `itemKey` or standalone.
    Create,
    /// Replace the note `itemKey`, or add to its end with `append`.
    Update,
    /// Move the note `itemKey` to the trash (restorable in Zotero).
    Delete,
}

impl NoteAction {
    fn as_str(self) -> &'static str {
        match self {
            NoteAction::List => "list",
            NoteAction::Search => "search",
            NoteAction::Create => "create",
            NoteAction::Update => "update",
            NoteAction::Delete => "delete",
        }
    }
}

fn default_limit() -> u32 {
    25
}

/// Arguments of `zotero_notes`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NotesInput {
    #[serde(default)]
    #[schemars(default)]
    pub action: NoteAction,
    /// list/search/create: the parent item; update/delete: the note.
    pub item_key: Option<Key>,
    /// search: every word must occur.
    #[validate(length(min = 1, max = 500))]
    pub query: Option<String>,
    /// create/update: the body, in Markdown (HTML in it shows as text).
    #[validate(length(max = 200000))]
    pub note: Option<String>,
    /// create/update: a heading before the body.
    #[validate(length(min = 1, max = 1000))]
    pub title: Option<String>,
    /// update: add to the end instead of replacing.
    #[serde(default)]
    #[schemars(default)]
    pub append: bool,
    /// create/update: the note's tags (replaced on update).
    #[validate(nested, length(max = 100))]
    pub tags: Option<Vec<TagIn>>,
    /// create/update: `note` is the user's HTML (sanitized). list/search: add stored HTML.
    #[serde(default)]
    #[schemars(default)]
    pub raw: bool,
    // For list and search: how many notes to return.
    #[validate(range(min = 1, max = 100))]
    #[serde(default = "default_limit")]
    #[schemars(default = "default_limit")]
    pub limit: u32,
    // For list and search: skip this many notes first (see `nextOffset`).
    #[validate(range(max = 100000))]
    #[serde(default)]
    #[schemars(default)]
    pub offset: u32,
}

/// Result of `zotero_notes`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NotesOutput {
    pub action: NoteAction,
    /// For list and search: the notes found.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notes: Option<Vec<NoteSummary>>,
    /// For list and search: how many notes match in all, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// For list and search: pass as `offset` for the next page; absent on the last page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<u64>,
    /// For create, update and delete: the note written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note_key: Option<String>,
    /// For create, update and delete: the item the note belongs to, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_item: Option<String>,
    /// For update: true when the text was added to the end of the note, false when it replaced the note's text
    /// (or only the tags changed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub appended: Option<bool>,
    /// For delete: true when the note was already in the trash, so nothing was written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub already_trashed: Option<bool>,
    /// For list and search: the `offset` this page started at. Not sent.
    #[serde(skip)]
    pub offset: usize,
}

impl NotesOutput {
    fn listing(
        action: NoteAction,
        notes: Vec<NoteSummary>,
        total: Option<u64>,
        paging: Paging,
        next: Option<u64>,
    ) -> Self {
        Self {
            action,
            notes: Some(notes),
            total,
            next_offset: next,
            note_key: None,
            parent_item: None,
            appended: None,
            already_trashed: None,
            offset: paging.offset,
        }
    }

    /// A written note; set `appended` or `already_trashed` on the result for update and delete.
    fn written(action: NoteAction, note_key: &str, parent_item: Option<String>) -> Self {
        Self {
            action,
            notes: None,
            total: None,
            next_offset: None,
            note_key: Some(note_key.to_owned()),
            parent_item,
            appended: None,
            already_trashed: None,
            offset: 0,
        }
    }
}

pub struct Notes;

impl Tool for Notes {
    type Input = NotesInput;
    type Output = NotesOutput;
    // Mixed: list and search work on read-only grants; create, update and delete check `zotero:write` in
    // `call`. Destructive, because update replaces a note's text and delete trashes it.
    const SPEC: ToolSpec = ToolSpec::mixed(
        "zotero_notes",
        "Read and write notes",
        "Notes as text: `list` and `search`; with the write scope, `create` from Markdown, `update` (or `append`) \
         and `delete` (to the trash). `raw` only for HTML the user gave. For PDF highlights, zotero_annotations.",
    )
    .destructive_without_confirmation(
        "one note a call: delete moves it to the trash and update replaces one note's text, both restorable \
         (the trash, zotero_undo), so a question each time would cost the person more than it protects",
    )
    .ask_for_less("a smaller `limit` and `offset` to page, or without `raw`");

    fn shorten(output: &mut NotesOutput, fraction: f64) -> bool {
        let offset = output.offset;
        match output.notes.as_mut() {
            Some(notes) => shorten_page(notes, fraction, offset, &mut output.next_offset),
            None => false,
        }
    }

    fn render(output: &NotesOutput) -> String {
        let Some(notes) = &output.notes else {
            return written_markdown(output);
        };
        let mut text = notes_markdown(notes);
        if let Some(total) = output.total.filter(|t| *t as usize > notes.len()) {
            text = format!("{} of {total} notes.\n\n{text}", notes.len());
        }
        if let Some(next) = output.next_offset {
            text.push_str(&format!("\n\n_More notes: call again with offset {next}._"));
        }
        text
    }

    async fn call(ctx: &RequestContext, input: NotesInput) -> Result<NotesOutput, ToolError> {
        match input.action {
            NoteAction::List | NoteAction::Search => read(ctx, &input).await,
            NoteAction::Create => create(ctx, &input).await,
            NoteAction::Update => update(ctx, &input).await,
            NoteAction::Delete => delete(ctx, &input).await,
        }
    }
}

/// The one-line report of a create, update or delete, from the output's fields.
fn written_markdown(output: &NotesOutput) -> String {
    let key = output.note_key.as_deref().unwrap_or("(unknown)");
    match output.action {
        NoteAction::Create => match &output.parent_item {
            Some(parent) => format!("Created note {key} on item {parent}"),
            None => format!("Created note {key} (standalone)"),
        },
        NoteAction::Update if output.appended == Some(true) => format!("Appended to note {key}"),
        NoteAction::Update => format!("Updated note {key}"),
        NoteAction::Delete if output.already_trashed == Some(true) => {
            format!("Note {key} is already in the trash; nothing changed")
        }
        NoteAction::Delete => format!("Moved note {key} to the trash (restorable in Zotero)"),
        // Listings always carry `notes`; this only covers an output built without them.
        NoteAction::List | NoteAction::Search => "_No notes._".to_owned(),
    }
}

fn tags_json(tags: &[TagIn]) -> Value {
    Value::Array(tags.iter().map(TagIn::to_zotero).collect())
}

/// An item's notes, not in the trash, in Zotero's order.
async fn child_notes(zotero: &ZoteroClient, parent: &Key) -> Result<Vec<ZoteroObject>, ToolError> {
    let children = zotero.children(parent, MAX_CHILDREN).await?;
    Ok(children.items.into_iter().filter(|c| c.item_type() == Some("note") && !c.is_trashed()).collect())
}

async fn read(ctx: &RequestContext, input: &NotesInput) -> Result<NotesOutput, ToolError> {
    let searching = input.action == NoteAction::Search;
    let query = input.query.as_deref().map(str::trim).filter(|q| searching && !q.is_empty());
    if searching && query.is_none() {
        return Err(ToolError::invalid("`search` needs `query`, the text to look for"));
    }
    let zotero = ctx.zotero()?;
    let paging = Paging::new(input.offset, input.limit);
    let summarize = |n: &ZoteroObject| summarize_note(n, input.raw);
    if let Some(parent) = &input.item_key {
        // One item's notes: read them all and page here (the children listing has no note filter).
        let mut notes = child_notes(zotero, parent).await?;
        if let Some(query) = query {
            let words: Vec<String> = query.split_whitespace().map(str::to_lowercase).collect();
            notes.retain(|n| {
                let text = html_to_text(n.field("note").unwrap_or_default()).to_lowercase();
                words.iter().all(|w| text.contains(w.as_str()))
            });
        }
        let (page, next_offset) = paging.slice(&notes);
        let page = page.iter().map(summarize).collect();
        return Ok(NotesOutput::listing(input.action, page, Some(notes.len() as u64), paging, next_offset));
    }
    let mut request = Query::new().item_type("note");
    request = match query {
        Some(text) => request.q(text, QMode::Everything),
        None => request.sort("dateModified", true),
    };
    let page = zotero.items(&request.offset(paging.offset), paging.limit).await?;
    let next_offset = paging.next_offset(page.items.len(), page.total_results);
    let notes = page.items.iter().map(summarize).collect();
    Ok(NotesOutput::listing(input.action, notes, page.total_results, paging, next_offset))
}

async fn create(ctx: &RequestContext, input: &NotesInput) -> Result<NotesOutput, ToolError> {
    let zotero = ctx.writer()?;
    let body = input.note.as_deref().unwrap_or_default();
    let title = input.title.as_deref().map(str::trim).filter(|t| !t.is_empty());
    if body.trim().is_empty() && title.is_none() {
        return Err(ToolError::invalid("`create` needs `note` (the body, in Markdown) and optionally `title`"));
    }
    let mut payload = json!({
        "itemType": "note",
        "note": note_html(title, body, input.raw),
        "tags": tags_json(input.tags.as_deref().unwrap_or_default()),
    });
    if let Some(parent) = &input.item_key {
        payload["parentItem"] = json!(parent.as_str());
    }
    let outcome = zotero.write_objects(ObjectKind::Items, &[payload]).await?;
    let parent = input.item_key.as_ref().map(|k| k.as_str().to_owned());
    match (outcome.success.get(&0), outcome.failed.get(&0)) {
        (Some(key), _) => Ok(NotesOutput::written(NoteAction::Create, key, parent)),
        (None, Some(failure)) => {
            Err(ToolError::Failed(format!("Zotero did not create the note: {} {}", failure.code, failure.message)))
        }
        (None, None) => Err(ToolError::Failed(
            "Zotero did not confirm the new note; list the notes to check before creating it again".into(),
        )),
    }
}

/// The note `key`, or an error saying what to use for other items.
async fn read_note(zotero: &ZoteroClient, key: &Key, action: NoteAction) -> Result<ZoteroObject, ToolError> {
    let item = zotero.item(key).await?;
    match item.item_type() {
        Some("note") => Ok(item),
        other => {
            let instead = match action {
                NoteAction::Delete => "use zotero_delete_items for other items",
                _ => "use zotero_update_item for other items",
            };
            Err(ToolError::Failed(format!(
                "{key} is {}, not a note, so `{}` cannot change it: {instead}. To find an item's notes, call \
                 zotero_notes with action \"list\" and itemKey {key}.",
                other.map_or_else(|| "not an item".to_owned(), |t| format!("a {t}")),
                action.as_str(),
            )))
        }
    }
}

async fn update(ctx: &RequestContext, input: &NotesInput) -> Result<NotesOutput, ToolError> {
    let zotero = ctx.writer()?;
    let key = input
        .item_key
        .as_ref()
        .ok_or_else(|| ToolError::invalid("`update` needs `itemKey` (the note's key) and `note`"))?;
    let title = input.title.as_deref().map(str::trim).filter(|t| !t.is_empty());
    let body = input.note.as_deref();
    if body.is_none() && title.is_none() && input.tags.is_none() {
        return Err(ToolError::invalid("`update` needs `note` (the new text, in Markdown), `title` or `tags`"));
    }
    let current = read_note(zotero, key, NoteAction::Update).await?;
    let mut patch = Map::new();
    if body.is_some() || title.is_some() {
        let body = body.unwrap_or_default();
        let html = if input.append {
            append_fragment(current.field("note").unwrap_or_default(), &note_fragment(title, body, input.raw))
        } else {
            note_html(title, body, input.raw)
        };
        patch.insert("note".into(), Value::String(html));
    }
    if let Some(tags) = &input.tags {
        patch.insert("tags".into(), tags_json(tags));
    }
    zotero
        .patch_item(key, current.version, &Value::Object(patch))
        .await
        .map_err(|e| ToolError::Failed(format!("Note {key} was not updated: {e}")))?;
    let parent = current.field("parentItem").map(str::to_owned);
    let mut output = NotesOutput::written(NoteAction::Update, key.as_str(), parent);
    output.appended = Some(input.append && (body.is_some() || title.is_some()));
    Ok(output)
}

async fn delete(ctx: &RequestContext, input: &NotesInput) -> Result<NotesOutput, ToolError> {
    let zotero = ctx.writer()?;
    let key = input.item_key.as_ref().ok_or_else(|| ToolError::invalid("`delete` needs `itemKey` (the note's key)"))?;
    let current = read_note(zotero, key, NoteAction::Delete).await?;
    let parent = current.field("parentItem").map(str::to_owned);
    let mut output = NotesOutput::written(NoteAction::Delete, key.as_str(), parent);
    // Trashing twice would only bump the note's version; say so instead, as a fact the caller can check.
    let already_trashed = current.is_trashed();
    output.already_trashed = Some(already_trashed);
    if !already_trashed {
        zotero
            .patch_item(key, current.version, &json!({ "deleted": 1 }))
            .await
            .map_err(|e| ToolError::Failed(format!("Note {key} was not moved to the trash: {e}")))?;
    }
    Ok(output)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::arguments::parse_arguments;

    fn parse(arguments: Value) -> Result<NotesInput, ToolError> {
        let published = crate::mcp::published::Published::load();
        parse_arguments::<NotesInput>(arguments, published.input_schema("zotero_notes"))
    }

    #[test]
    fn defaults_to_listing_25() {
        let input = parse(json!({})).expect("empty arguments are a listing");
        assert_eq!(input.action, NoteAction::List);
        assert_eq!(input.limit, 25);
        assert_eq!(input.offset, 0);
        assert!(!input.append && !input.raw);
    }

    #[test]
    fn checks_bounds_and_keys() {
        assert!(parse(json!({ "limit": 0 })).is_err());
        assert!(parse(json!({ "limit": 101 })).is_err());
        assert!(parse(json!({ "itemKey": "not-a-key" })).is_err());
        assert!(parse(json!({ "action": "purge" })).is_err());
        assert!(parse(json!({ "tags": [{ "tag": "" }] })).is_err());
        assert!(parse(json!({ "unknown": 1 })).is_err());
        assert!(parse(
            json!({ "action": "create", "itemKey": "ABCD2345", "note": "x", "tags": [{ "tag": "t", "type": 1 }] })
        )
        .is_ok());
    }

    #[test]
    fn tags_keep_their_type() {
        let tags = vec![TagIn { tag: "a".into(), kind: None }, TagIn { tag: "b".into(), kind: Some(1) }];
        assert_eq!(tags_json(&tags), json!([{ "tag": "a" }, { "tag": "b", "type": 1 }]));
    }

    #[test]
    fn recognises_trashed_notes() {
        let mut note = ZoteroObject { key: "ABCD2345".into(), version: 1, meta: Map::new(), data: Map::new() };
        assert!(!note.is_trashed());
        note.data.insert("deleted".into(), json!(1));
        assert!(note.is_trashed());
        note.data.insert("deleted".into(), json!(true));
        assert!(note.is_trashed());
    }

    #[test]
    fn renders_listings_and_writes() {
        let note = NoteSummary {
            key: "ABCD2345".into(),
            parent_item: Some("WXYZ6789".into()),
            title: "Plan".into(),
            text: "# Plan\n\n- a".into(),
            truncated: false,
            html: None,
            tags: vec!["todo".into()],
            date_modified: Some("2024-01-02T03:04:05Z".into()),
        };
        let listing = NotesOutput::listing(NoteAction::List, vec![note], Some(3), Paging::first(1), Some(1));
        let text = Notes::render(&listing);
        assert!(text.starts_with("1 of 3 notes."), "{text}");
        assert!(text.contains("### ABCD2345 (on WXYZ6789) · modified 2024-01-02T03:04:05Z · tags: todo"), "{text}");
        assert!(text.contains("# Plan\n\n- a"), "{text}");
        assert!(text.ends_with("call again with offset 1._"), "{text}");
        assert_eq!(
            Notes::render(&NotesOutput::listing(NoteAction::Search, vec![], Some(0), Paging::first(20), None)),
            "_No notes._"
        );
        let written = NotesOutput::written(NoteAction::Create, "ABCD2345", None);
        assert_eq!(Notes::render(&written), "Created note ABCD2345 (standalone)");
        assert_eq!(serde_json::to_value(&written).unwrap(), json!({ "action": "create", "noteKey": "ABCD2345" }));
    }

    #[test]
    fn renders_writes_from_their_fields_only() {
        let mut deleted = NotesOutput::written(NoteAction::Delete, "ABCD2345", Some("WXYZ6789".into()));
        deleted.already_trashed = Some(true);
        assert_eq!(Notes::render(&deleted), "Note ABCD2345 is already in the trash; nothing changed");
        assert_eq!(
            serde_json::to_value(&deleted).unwrap(),
            json!({ "action": "delete", "noteKey": "ABCD2345", "parentItem": "WXYZ6789", "alreadyTrashed": true })
        );
        deleted.already_trashed = Some(false);
        assert_eq!(Notes::render(&deleted), "Moved note ABCD2345 to the trash (restorable in Zotero)");
        let mut updated = NotesOutput::written(NoteAction::Update, "ABCD2345", None);
        updated.appended = Some(true);
        assert_eq!(Notes::render(&updated), "Appended to note ABCD2345");
        updated.appended = Some(false);
        assert_eq!(Notes::render(&updated), "Updated note ABCD2345");
        let created = NotesOutput::written(NoteAction::Create, "ABCD2345", Some("WXYZ6789".into()));
        assert_eq!(Notes::render(&created), "Created note ABCD2345 on item WXYZ6789");
    }
}
