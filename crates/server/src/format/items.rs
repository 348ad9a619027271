//! Items as the model reads them: structured summaries (sent as `structuredContent`) and their Markdown.
//!
//! Detail views use a deny-list, not an allow-list: every field of every item type appears unless it is listed
//! here as shown elsewhere, so a type-specific field (a thesis's `university`, a patent's `assignee`) is never lost.

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Map, Value};
use zotero_mcp_core::html_text::{html_to_text, title_line};
use zotero_mcp_core::sources::{detect, Identifier};
use zotero_mcp_core::zotero::{ItemCard, ZoteroObject};

use super::text::{collapse_whitespace, truncate, year_of};

/// Characters of a child note's text kept in a detail view's `children`.
const CHILD_NOTE_MAX: usize = 400;

/// Fields shown first in a detail view, in this order; the rest follow alphabetically.
const PREFERRED_ORDER: &[&str] = &[
    "itemType",
    "title",
    "date",
    "publicationTitle",
    "bookTitle",
    "proceedingsTitle",
    "publisher",
    "place",
    "volume",
    "issue",
    "pages",
    "edition",
    "series",
    "DOI",
    "ISBN",
    "ISSN",
    "url",
    "language",
    "archiveID",
    "callNumber",
    "rights",
    "dateAdded",
    "dateModified",
];

/// Fields that have their own place in the views (or are bookkeeping), so they are not repeated as fields.
const NOT_FIELDS: &[&str] = &[
    "key",
    "version",
    "creators",
    "tags",
    "collections",
    "relations",
    "abstractNote",
    "extra",
    "note",
    "parentItem",
    "deleted",
];

/// One item in a list.
#[derive(Debug, Clone, Serialize, JsonSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ItemSummary {
    /// The item's key, for every other tool.
    pub key: String,
    /// The item's version (changes on every edit).
    pub version: u64,
    pub item_type: String,
    pub title: Option<String>,
    /// "Smith", "Smith & Jones" or "Smith et al."
    pub creators: Option<String>,
    pub year: Option<String>,
    /// Journal, proceedings or book the item appeared in.
    pub publication: Option<String>,
    #[serde(rename = "doi")]
    pub doi: Option<String>,
    pub tags: Vec<String>,
    /// Keys of the collections the item is filed in.
    pub collections: Vec<String>,
    /// The parent item, for attachments, notes and annotations.
    pub parent_item: Option<String>,
    /// Attachments, notes and annotations below the item.
    pub num_children: Option<u64>,
    /// True when the item is in the trash.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    #[schemars(default)]
    pub in_trash: bool,
    /// Where the item opens on the web ([`web_url`]); for `search` and `fetch`, not sent by the others.
    #[serde(skip)]
    pub web_url: Option<String>,
}

/// A creator with their role.
#[derive(Debug, Clone, Serialize, JsonSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct CreatorOut {
    pub creator_type: String,
    /// "First Last", or the single-field name of an organisation.
    pub name: String,
}

/// An attachment, note or annotation below an item.
#[derive(Debug, Clone, Serialize, JsonSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ChildSummary {
    #[serde(flatten)]
    pub summary: ItemSummary,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub filename: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content_type: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link_mode: Option<String>,
    /// For attachments: whether a file has been uploaded (Zotero records its MD5).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file_uploaded: Option<bool>,
    /// For notes: the note as readable text (headings as `# `, list items as `- `), cut at about 400 characters.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Everything about one item.
#[derive(Debug, Clone, Serialize, JsonSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ItemDetail {
    pub key: String,
    pub version: u64,
    pub item_type: String,
    pub title: Option<String>,
    pub year: Option<String>,
    pub publication: Option<String>,
    #[serde(rename = "doi")]
    pub doi: Option<String>,
    pub tags: Vec<String>,
    pub collections: Vec<String>,
    pub parent_item: Option<String>,
    pub num_children: Option<u64>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    #[schemars(default)]
    pub in_trash: bool,
    /// Every other non-empty field of the item type, as text, in a stable order.
    pub fields: Map<String, Value>,
    pub creators: Vec<CreatorOut>,
    #[serde(rename = "abstract")]
    pub abstract_note: Option<String>,
    pub extra: Option<String>,
    /// For notes: the whole note as readable text (headings as `# `, list items as `- `). Notes have no title
    /// field; their first line is their title.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

fn text(data: &Map<String, Value>, name: &str) -> Option<String> {
    match data.get(name)? {
        Value::String(s) if !s.trim().is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// "Smith", "Smith & Jones", "Smith et al." from every creator's last name (or single-field name), whatever
/// their role.
pub fn creator_summary(names: &[String]) -> Option<String> {
    match names {
        [] => None,
        [one] => Some(one.clone()),
        [a, b] => Some(format!("{a} & {b}")),
        [first, ..] => Some(format!("{first} et al.")),
    }
}

/// The title to show for an item in a detail view: its title field, or for a note its first line, or a
/// placeholder.
pub fn display_title(detail: &ItemDetail) -> String {
    let raw = match (&detail.title, &detail.note) {
        (Some(title), _) => title.as_str(),
        (None, Some(note)) => title_line(note),
        (None, None) => "",
    };
    let title = collapse_whitespace(raw);
    if title.is_empty() {
        "(untitled)".to_owned()
    } else {
        truncate(&title, 160)
    }
}

/// The summary of an item in a list, from its card.
pub fn summarize(item: &ItemCard) -> ItemSummary {
    let data = &item.data;
    ItemSummary {
        key: item.key.clone(),
        version: item.version,
        item_type: data.item_type.clone().unwrap_or_else(|| "item".into()),
        title: data.title.clone(),
        creators: creator_summary(&data.creators),
        year: data.date.as_deref().and_then(year_of),
        publication: data.publication_title.clone(),
        doi: data.doi.clone(),
        tags: data.tags.clone(),
        collections: data.collections.clone(),
        parent_item: data.parent_item.clone(),
        num_children: item.meta.num_children,
        in_trash: data.deleted,
        web_url: web_url(item),
    }
}

/// Where an item opens on the web, for a reader without Zotero: its DOI's link, else its own web address, else
/// its page in the zotero.org web library (`zotero://` links open nowhere on the web, so they are never given).
pub fn web_url(item: &ItemCard) -> Option<String> {
    let doi = item.data.doi.as_deref().and_then(|doi| match detect(doi) {
        Ok(Identifier::Doi(doi)) => Some(doi),
        _ => None,
    });
    if let Some(doi) = doi {
        // A DOI suffix may hold `#`, `?` or `%`, which would end or change the link's path.
        let path = doi.replace('%', "%25").replace('#', "%23").replace('?', "%3F");
        return Some(format!("https://doi.org/{path}"));
    }
    let own = item.data.url.as_deref().map(str::trim);
    if let Some(url) = own.filter(|u| u.starts_with("https://") || u.starts_with("http://")) {
        return Some(url.to_owned());
    }
    item.web_page().map(str::to_owned)
}

/// The summary of a child (attachment, note or annotation) in a detail view, from its card.
pub fn summarize_child(item: &ItemCard) -> ChildSummary {
    let data = &item.data;
    let is_attachment = item.item_type() == Some("attachment");
    let is_note = item.item_type() == Some("note");
    ChildSummary {
        summary: summarize(item),
        filename: data.filename.clone(),
        content_type: data.content_type.clone(),
        link_mode: data.link_mode.clone(),
        file_uploaded: is_attachment.then_some(data.md5.is_some()),
        note: if is_note { data.note.as_deref().map(|n| truncate(&html_to_text(n), CHILD_NOTE_MAX)) } else { None },
    }
}

/// The non-empty fields of an item, in the detail order.
pub fn detail_fields(data: &Map<String, Value>) -> Map<String, Value> {
    let mut fields = Map::new();
    let mut push = |name: &str| {
        if NOT_FIELDS.contains(&name) || fields.contains_key(name) {
            return;
        }
        let value = match data.get(name) {
            Some(Value::String(s)) if !s.is_empty() => s.clone(),
            Some(Value::Number(n)) => n.to_string(),
            Some(Value::Bool(b)) => b.to_string(),
            _ => return,
        };
        fields.insert(name.to_owned(), Value::String(value));
    };
    for name in PREFERRED_ORDER {
        push(name);
    }
    let mut rest: Vec<&String> = data.keys().filter(|k| !PREFERRED_ORDER.contains(&k.as_str())).collect();
    zotero_mcp_core::sort::sort(&mut rest);
    for name in rest {
        push(name);
    }
    fields
}

pub fn creators(data: &Map<String, Value>) -> Vec<CreatorOut> {
    data.get("creators")
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .map(|c| {
                    let get = |k: &str| c.get(k).and_then(Value::as_str).unwrap_or("").trim().to_owned();
                    let name = match get("name") {
                        n if !n.is_empty() => n,
                        _ => format!("{} {}", get("firstName"), get("lastName")).trim().to_owned(),
                    };
                    CreatorOut {
                        creator_type: c.get("creatorType").and_then(Value::as_str).unwrap_or("author").to_owned(),
                        name,
                    }
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The detail view of `item`; `card` is the same item read as a card ([`ZoteroClient::item_with_card`]), which
/// gives the fields a summary shows.
///
/// [`ZoteroClient::item_with_card`]: zotero_mcp_core::zotero::ZoteroClient::item_with_card
pub fn detail(item: &ZoteroObject, card: &ItemCard) -> ItemDetail {
    let s = summarize(card);
    let data = &item.data;
    ItemDetail {
        key: s.key,
        version: s.version,
        item_type: s.item_type,
        title: s.title,
        year: s.year,
        publication: s.publication,
        doi: s.doi,
        tags: s.tags,
        collections: s.collections,
        parent_item: s.parent_item,
        num_children: s.num_children,
        in_trash: s.in_trash,
        fields: detail_fields(data),
        creators: creators(data),
        abstract_note: text(data, "abstractNote"),
        extra: text(data, "extra"),
        note: (item.item_type() == Some("note")).then(|| html_to_text(item.field("note").unwrap_or_default())),
    }
}

/// `- **Title** — Smith et al. · 2021 · journalArticle · Nature`, then the key line.
pub fn item_line(summary: &ItemSummary, title: &str, extra_tail: &[String]) -> String {
    let mut bits = Vec::new();
    if let Some(c) = &summary.creators {
        bits.push(c.clone());
    }
    if let Some(y) = &summary.year {
        bits.push(y.clone());
    }
    bits.push(summary.item_type.clone());
    if let Some(p) = &summary.publication {
        bits.push(truncate(p, 60));
    }
    let mut tail = vec![format!("key: {}", summary.key)];
    if let Some(doi) = &summary.doi {
        tail.push(format!("doi: {doi}"));
    }
    if let Some(n) = summary.num_children.filter(|n| *n > 0) {
        tail.push(format!("children: {n}"));
    }
    if summary.in_trash {
        tail.push("in trash".into());
    }
    tail.extend(extra_tail.iter().cloned());
    format!("- **{title}** — {}\n  {}", bits.join(" · "), tail.join(" · "))
}

/// A Markdown list of items, or a note that there are none.
pub fn item_list(items: &[(ItemSummary, String, Vec<String>)]) -> String {
    if items.is_empty() {
        return "_No matching items._".to_owned();
    }
    items.iter().map(|(s, title, tail)| item_line(s, title, tail)).collect::<Vec<_>>().join("\n")
}

/// One child line in a detail view, from its summary only.
pub fn child_line(child: &ChildSummary) -> String {
    let summary = &child.summary;
    match summary.item_type.as_str() {
        "note" => {
            // The summary keeps the note's line breaks; a list line needs them collapsed.
            let text = collapse_whitespace(child.note.as_deref().unwrap_or_default());
            format!("note {}: {}", summary.key, truncate(&text, 120))
        }
        "attachment" => {
            let mut parts = vec![format!("attachment {}", summary.key)];
            parts.push(child.content_type.clone().unwrap_or_else(|| "unknown type".into()));
            parts.extend(child.link_mode.clone());
            parts.extend(child.filename.clone());
            parts.push(if child.file_uploaded == Some(true) {
                "file uploaded".into()
            } else {
                "no file uploaded yet".into()
            });
            parts.join(" · ")
        }
        other => format!("{other} {}: {}", summary.key, truncate(summary.title.as_deref().unwrap_or_default(), 100)),
    }
}

/// The Markdown detail view of an item and its children, made from the structured detail alone.
pub fn item_detail_markdown(detail: &ItemDetail, children: &[ChildSummary], children_truncated: bool) -> String {
    let mut lines = vec![format!("# {}", display_title(detail)), String::new()];
    lines.push(format!("- key: {} (version {})", detail.key, detail.version));
    for (name, value) in &detail.fields {
        lines.push(format!("- {name}: {}", value.as_str().unwrap_or_default()));
    }
    if !detail.creators.is_empty() {
        lines.push("- creators:".into());
        for c in &detail.creators {
            lines.push(format!("  - {}: {}", c.creator_type, c.name));
        }
    }
    if !detail.tags.is_empty() {
        lines.push(format!("- tags: {}", detail.tags.join(", ")));
    }
    if !detail.collections.is_empty() {
        lines.push(format!("- collections: {}", detail.collections.join(", ")));
    }
    if let Some(parent) = &detail.parent_item {
        lines.push(format!("- parent item: {parent}"));
    }
    if let Some(extra) = &detail.extra {
        lines.push(format!("- extra: {}", extra.replace('\n', "; ")));
    }
    if detail.in_trash {
        lines.push("- in trash: yes".into());
    }
    if let Some(abstract_note) = &detail.abstract_note {
        lines.extend([String::new(), "## Abstract".into(), abstract_note.clone()]);
    }
    if let Some(note) = detail.note.as_deref().filter(|n| !n.is_empty()) {
        lines.extend([String::new(), "## Note".into(), String::new(), note.to_owned()]);
    }
    if !children.is_empty() {
        lines.extend([String::new(), "## Children".into()]);
        lines.extend(children.iter().map(|c| format!("- {}", child_line(c))));
        if children_truncated {
            lines.push(format!("- _… only the first {} children are listed._", children.len()));
        }
    }
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// An item as the API sends it, read in full and as a card.
    fn object(data: Value) -> (ZoteroObject, ItemCard) {
        let item = json!({ "key": "ABCD2345", "version": 4, "meta": { "numChildren": 2 }, "data": data });
        (serde_json::from_value(item.clone()).unwrap(), serde_json::from_value(item).unwrap())
    }

    #[test]
    fn creator_summaries_follow_zotero() {
        let creators_of =
            |creators: Value| summarize(&object(json!({ "itemType": "book", "creators": creators })).1).creators;
        let one = creators_of(json!([{ "lastName": "Smith", "firstName": "A" }]));
        let two = creators_of(json!([{ "lastName": "Smith" }, { "name": "WHO" }]));
        let three = creators_of(json!([{ "lastName": "Smith" }, { "lastName": "Li" }, { "lastName": "Wu" }]));
        assert_eq!(one.as_deref(), Some("Smith"));
        assert_eq!(two.as_deref(), Some("Smith & WHO"));
        assert_eq!(three.as_deref(), Some("Smith et al."));
        assert_eq!(creators_of(json!([])), None);
    }

    #[test]
    fn detail_keeps_type_specific_fields_in_a_stable_order() {
        let item = object(json!({
            "itemType": "thesis", "title": "On Rice", "university": "Fudan", "thesisType": "PhD", "date": "2020",
            "abstractNote": "About rice.", "extra": "Citation Key: li2020", "tags": [{ "tag": "agronomy" }],
            "creators": [{ "creatorType": "author", "firstName": "Ming", "lastName": "Li" }], "numPages": 212,
        }));
        let d = detail(&item.0, &item.1);
        let names: Vec<&String> = d.fields.keys().collect();
        assert_eq!(names, ["itemType", "title", "date", "numPages", "thesisType", "university"]);
        assert_eq!(d.fields["numPages"], "212");
        assert_eq!(d.creators[0].name, "Ming Li");
        let md = item_detail_markdown(&d, &[], false);
        assert!(md.starts_with("# On Rice"));
        assert!(md.contains("- university: Fudan"));
        assert!(md.contains("## Abstract\nAbout rice."));
    }

    #[test]
    fn detail_markdown_comes_from_the_structured_detail() {
        let note = object(json!({
            "itemType": "note", "parentItem": "WXYZ6789",
            "note": "<div><h1>Plan &amp; aims</h1><p>First</p><ul><li>a</li></ul><script>x()</script></div>",
        }));
        let d = detail(&note.0, &note.1);
        assert_eq!(d.note.as_deref(), Some("# Plan & aims\n\nFirst\n\n- a"));
        let attachment = object(json!({
            "itemType": "attachment", "title": "Full Text PDF", "contentType": "application/pdf",
            "linkMode": "imported_file", "filename": "paper.pdf", "md5": "abc",
        }));
        let children = [summarize_child(&note.1), summarize_child(&attachment.1)];
        let md = item_detail_markdown(&d, &children, true);
        assert!(md.starts_with("# Plan & aims\n"), "{md}");
        assert!(md.contains("- parent item: WXYZ6789"), "{md}");
        assert!(md.contains("## Note\n\n# Plan & aims\n\nFirst\n\n- a"), "{md}");
        assert!(md.contains("- note ABCD2345: # Plan & aims First - a"), "{md}");
        assert!(
            md.contains("- attachment ABCD2345 · application/pdf · imported_file · paper.pdf · file uploaded"),
            "{md}"
        );
        assert!(md.ends_with("only the first 2 children are listed._"), "{md}");
        let untitled = object(json!({ "itemType": "book" }));
        let untitled = detail(&untitled.0, &untitled.1);
        assert!(item_detail_markdown(&untitled, &[], false).starts_with("# (untitled)"));
    }
}
