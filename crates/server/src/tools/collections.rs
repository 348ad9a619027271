//! Collections and tags: listing them, and filing items.

use super::mirrored::{self, MirrorOut, Mirrored};
use futures_util::future::join;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use zotero_mcp_core::zotero::{ItemScope, ObjectKind, Page, Query, SavedSearch};

use super::args::Key;
use super::items::Failure;
use super::paging::{shorten_counted, shorten_list, shorten_page, Paging};
use super::saved_searches::{self, searches_markdown, SavedSearchOut};
use crate::confirm::Proposal;
use crate::context::RequestContext;
use crate::format::collections::{collection_items_markdown, matches_markdown, tree, tree_markdown, CollectionSummary};
use crate::format::items::{summarize, ItemSummary};
use crate::mcp::{Tool, ToolError, ToolSpec};

/// Collections read for a listing; libraries rarely have more.
const MAX_COLLECTIONS: usize = 1000;

fn default_list_limit() -> u32 {
    50
}

/// Arguments of `zotero_list_collections`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ListCollectionsInput {
    // List the items of this collection instead of the collection tree.
    pub collection_key: Option<Key>,
    // Only collections whose name contains this text (case-insensitive).
    #[validate(length(min = 1, max = 200))]
    pub query: Option<String>,
    /// With collectionKey: no child attachments or notes.
    #[serde(default)]
    #[schemars(default)]
    pub top_only: bool,
    // With collectionKey: how many items to return.
    #[validate(range(min = 1, max = 100))]
    #[serde(default = "default_list_limit")]
    #[schemars(default = "default_list_limit")]
    pub limit: u32,
    // With collectionKey: skip this many items first (see `nextOffset`).
    #[validate(range(max = 100000))]
    #[serde(default)]
    #[schemars(default)]
    pub offset: u32,
}

/// Result of `zotero_list_collections`: the tree, or one collection's items.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListCollectionsOutput {
    /// The collections (all, or those matching `query`), parents before children.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub collections: Option<Vec<CollectionSummary>>,
    /// With collectionKey: the collection itself.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub collection: Option<CollectionSummary>,
    /// With collectionKey: its items.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub items: Option<Vec<ItemSummary>>,
    /// With collectionKey: pass as `offset` for the next page of items.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<u64>,
    /// With `query`: the text the collection names were matched against (trimmed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
    /// How many collections there are, when not all fit in the answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub collections_total: Option<usize>,
    /// The library mirror the collections came from (or that is still being filled: then they came from Zotero).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mirror: Option<MirrorOut>,
    /// Without collectionKey: the library's saved searches (with `query`, those whose name contains it), each
    /// with its conditions; zotero_search runs one with `savedSearch`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub saved_searches: Option<Vec<SavedSearchOut>>,
    /// How many saved searches the library has, when not all are listed (more than fit in the answer, or than
    /// the 500 changed last, which are all that is read).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub saved_searches_total: Option<usize>,
    /// With collectionKey: the `offset` this page started at. Not sent.
    #[serde(skip)]
    pub offset: usize,
}

pub struct ListCollections;

impl Tool for ListCollections {
    type Input = ListCollectionsInput;
    type Output = ListCollectionsOutput;
    const SPEC: ToolSpec = ToolSpec::read(
        "zotero_list_collections",
        "List collections, or a collection's items",
        "The collection tree (keys, paths, item counts) and the saved searches; `query` filters them by name; \
         `collectionKey` lists a collection's items. To change collections, zotero_manage_collections.",
    )
    .ask_for_less("a `query` for collection names, or one `collectionKey` with a smaller `limit` and `offset`");

    fn shorten(output: &mut ListCollectionsOutput, fraction: f64) -> bool {
        if let Some(items) = output.items.as_mut() {
            return shorten_page(items, fraction, output.offset, &mut output.next_offset);
        }
        // Both lists grow with the library (a saved search with its conditions as much as a collection), so
        // both are cut, each saying how many there were.
        let collections = match output.collections.as_mut() {
            Some(collections) => shorten_counted(collections, fraction, &mut output.collections_total),
            None => false,
        };
        let searches = match output.saved_searches.as_mut() {
            Some(searches) => shorten_counted(searches, fraction, &mut output.saved_searches_total),
            None => false,
        };
        collections || searches
    }

    fn render(output: &ListCollectionsOutput) -> String {
        match (&output.collection, &output.query) {
            (Some(collection), _) => {
                let items = output.items.as_deref().unwrap_or_default();
                collection_items_markdown(collection, items, output.next_offset)
            }
            (None, query) => {
                let collections = output.collections.as_deref().unwrap_or_default();
                let mut text = match query {
                    Some(query) => matches_markdown(query, collections),
                    None => tree_markdown(collections),
                };
                if let Some(total) = output.collections_total {
                    text.push_str(&format!(
                        "\n\n_{} of {total} collections fit in one answer; find the others with `query`._",
                        collections.len()
                    ));
                }
                if let Some(searches) = output.saved_searches.as_deref().filter(|s| !s.is_empty()) {
                    text.push_str("\n\n");
                    text.push_str(&searches_markdown(searches));
                }
                if let Some(total) = output.saved_searches_total {
                    text.push_str(&format!(
                        "\n\n_{} of {total} saved searches are listed; find one by name with `query`, or run one by its key \
                         with zotero_search `savedSearch`._",
                        output.saved_searches.as_deref().unwrap_or_default().len()
                    ));
                }
                text
            }
        }
    }

    async fn call(ctx: &RequestContext, input: ListCollectionsInput) -> Result<ListCollectionsOutput, ToolError> {
        let zotero = ctx.zotero()?;
        let paging = Paging::new(input.offset, input.limit);
        let items = async {
            match &input.collection_key {
                Some(key) => zotero
                    .item_cards(
                        ItemScope::Collection { key, top_only: input.top_only },
                        &Query::new().offset(paging.offset),
                        paging.limit,
                    )
                    .await
                    .map(Some),
                None => Ok(None),
            }
        };
        // The collections and saved searches from the library mirror where there is a complete one (every one,
        // with their counts, in no request but the mirror's check); else from Zotero, 100 a request. The tree,
        // the collection's items and the saved searches are independent: one round trip for all.
        let wants_searches = input.collection_key.is_none();
        let all = async {
            let mirror = match mirrored::collections_and_searches(ctx).await {
                Mirrored::Answer((found, searches), mirror) => {
                    let total = searches.len() as u64;
                    let searches = searches
                        .iter()
                        .take(saved_searches::MAX_SAVED_SEARCHES)
                        .filter_map(|search| serde_json::to_value(search).ok())
                        .filter_map(|json| SavedSearch::from_api(&json))
                        .collect();
                    return Ok((found, Some(mirror), (searches, Some(total))));
                }
                Mirrored::Partial(mirror) => Some(mirror),
                Mirrored::Failed(_) | Mirrored::Absent => None,
            };
            let searches = async {
                match wants_searches {
                    true => zotero.saved_searches_up_to(saved_searches::MAX_SAVED_SEARCHES).await,
                    false => Ok((Vec::new(), None)),
                }
            };
            let (live, searches) = join(zotero.collections(&Query::new(), MAX_COLLECTIONS), searches).await;
            Ok::<_, zotero_mcp_core::zotero::ZoteroError>((live?.items, mirror, searches?))
        };
        let (all, items) = join(all, items).await;
        let (all, mirror, searches) = all?;
        let summaries = tree(&all);
        if let Some(key) = &input.collection_key {
            let collection = summaries.iter().find(|c| c.key == key.as_str()).cloned().ok_or_else(|| {
                ToolError::Failed(format!(
                    "There is no collection {key} in this library. Call zotero_list_collections without arguments to see the keys."
                ))
            })?;
            // Asked for above whenever there is a collection key.
            let page = items?.unwrap_or(Page { items: Vec::new(), total_results: Some(0), library_version: 0 });
            let items: Vec<ItemSummary> = page.items.iter().map(summarize).collect();
            let next_offset = paging.next_offset(items.len(), page.total_results);
            return Ok(ListCollectionsOutput {
                collections: None,
                collection: Some(collection),
                items: Some(items),
                next_offset,
                query: None,
                collections_total: None,
                saved_searches: None,
                saved_searches_total: None,
                offset: paging.offset,
                mirror,
            });
        }
        let query = input.query.as_deref().map(str::trim).filter(|q| !q.is_empty());
        let needle = query.map(str::to_lowercase);
        let named = |name: &str| needle.as_deref().is_none_or(|needle| name.to_lowercase().contains(needle));
        let collections = summaries.into_iter().filter(|c| named(&c.name)).collect();
        let (searches, searches_total) = searches;
        // More than were read: the listing says how many the library has, as when the answer is cut.
        let saved_searches_total = searches_total
            .map(|total| usize::try_from(total).unwrap_or(usize::MAX))
            .filter(|total| *total > searches.len());
        let saved_searches = searches.iter().filter(|s| named(&s.name)).map(saved_searches::listed).collect();
        Ok(ListCollectionsOutput {
            collections: Some(collections),
            collection: None,
            items: None,
            next_offset: None,
            query: query.map(str::to_owned),
            collections_total: None,
            saved_searches: Some(saved_searches),
            saved_searches_total,
            offset: 0,
            mirror,
        })
    }
}

// What `zotero_manage_collections` does.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub enum CollectionAction {
    Create,
    Rename,
    /// Change the parent (or move to the top level with no parentCollection).
    Move,
    Delete,
    AddItems,
    RemoveItems,
}

/// Arguments of `zotero_manage_collections`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ManageCollectionsInput {
    pub action: CollectionAction,
    /// For create and rename.
    #[validate(length(min = 1, max = 255))]
    pub name: Option<String>,
    /// For create and move; absent: the top level.
    pub parent_collection: Option<Key>,
    /// For every action but create.
    pub collection_key: Option<Key>,
    /// For addItems and removeItems.
    #[validate(length(min = 1, max = 50))]
    pub item_keys: Option<Vec<Key>>,
}

/// Result of `zotero_manage_collections`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ManageCollectionsOutput {
    pub action: CollectionAction,
    pub collection_key: String,
    /// For addItems/removeItems: the items changed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[schemars(default)]
    pub affected: Vec<String>,
    /// For addItems/removeItems: items already as asked.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[schemars(default)]
    pub unchanged: Vec<String>,
    /// Items that could not be changed, with the reason.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[schemars(default)]
    pub failed: Vec<Failure>,
    /// Items whose write's answer was lost and could not be checked: read each before changing it again.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[schemars(default)]
    pub unknown: Vec<super::items::Unknown>,
    /// The collection's name: for create and rename the name asked for, for move and delete its name when the
    /// action was made. Absent for addItems and removeItems.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// For rename: the name before.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub previous_name: Option<String>,
    /// For create and move: the parent collection; absent at the top level.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_collection: Option<String>,
    /// False when nothing was written: a rename to the current name, or addItems/removeItems with every item
    /// already as asked (or failed).
    pub changed: bool,
}

pub struct ManageCollections;

impl Tool for ManageCollections {
    type Input = ManageCollectionsInput;
    type Output = ManageCollectionsOutput;
    const SPEC: ToolSpec = ToolSpec::write(
        "zotero_manage_collections",
        "Create, rename, move or delete collections; file items",
        "Creates, renames, moves or deletes a collection (subcollections go too, items stay), or adds items to or \
         removes them from one, each only if unchanged since read. To list them, zotero_list_collections.",
    )
    .confirms();

    fn render(output: &ManageCollectionsOutput) -> String {
        manage_markdown(output)
    }

    /// Deleting a collection is asked about (Zotero deletes it for good, with its subcollections).
    fn needs_confirmation(input: &ManageCollectionsInput) -> bool {
        input.action == CollectionAction::Delete
    }

    async fn call(ctx: &RequestContext, input: ManageCollectionsInput) -> Result<ManageCollectionsOutput, ToolError> {
        let needs = ToolError::invalid;
        // A deletion is asked about first, from the collection as read (read once: the delete uses it too).
        let (mut read_for_deletion, confirmed) = match (input.action, &input.collection_key) {
            (CollectionAction::Delete, Some(key)) => {
                let current = ctx.zotero()?.collection(key).await?;
                let confirmed = ctx.confirm(collection_deletion_plan(&current)).await?;
                (Some(current), Some(confirmed))
            }
            _ => (None, None),
        };
        let zotero = ctx.writer_after(confirmed)?;
        let done = |collection_key: String| ManageCollectionsOutput {
            action: input.action,
            collection_key,
            affected: Vec::new(),
            unchanged: Vec::new(),
            failed: Vec::new(),
            unknown: Vec::new(),
            name: None,
            previous_name: None,
            parent_collection: None,
            changed: true,
        };
        match input.action {
            CollectionAction::Create => {
                let name = input.name.as_deref().ok_or_else(|| needs("`create` needs `name`"))?;
                let mut body = json!({ "name": name });
                if let Some(parent) = &input.parent_collection {
                    body["parentCollection"] = json!(parent.as_str());
                }
                let outcome = zotero.write_objects(ObjectKind::Collections, &[body]).await?;
                match (outcome.success.get(&0), outcome.failed.get(&0)) {
                    (Some(key), _) => Ok(ManageCollectionsOutput {
                        name: Some(name.to_owned()),
                        parent_collection: input.parent_collection.as_ref().map(Key::to_string),
                        ..done(key.clone())
                    }),
                    (None, Some(f)) => {
                        Err(ToolError::Failed(format!("Zotero refused the collection: {} {}", f.code, f.message)))
                    }
                    (None, None) => Err(ToolError::Failed(
                        "Zotero did not confirm the new collection; list collections to check".into(),
                    )),
                }
            }
            CollectionAction::Rename | CollectionAction::Move | CollectionAction::Delete => {
                let key = input.collection_key.as_ref().ok_or_else(|| needs("this action needs `collectionKey`"))?;
                let current = match read_for_deletion.take() {
                    Some(current) => current,
                    None => zotero.collection(key).await?,
                };
                let old_name = current.field("name").unwrap_or("(unnamed)").to_owned();
                match input.action {
                    CollectionAction::Rename => {
                        let name = input.name.as_deref().ok_or_else(|| needs("`rename` needs `name`"))?;
                        let changed = name != old_name;
                        if changed {
                            zotero.patch_collection(key, current.version, &json!({ "name": name })).await?;
                        }
                        Ok(ManageCollectionsOutput {
                            name: Some(name.to_owned()),
                            previous_name: Some(old_name),
                            changed,
                            ..done(key.to_string())
                        })
                    }
                    CollectionAction::Move => {
                        if input.parent_collection.as_ref().is_some_and(|p| p.as_str() == key.as_str()) {
                            return Err(needs("a collection cannot be its own parent"));
                        }
                        let parent =
                            input.parent_collection.as_ref().map(|p| json!(p.as_str())).unwrap_or(json!(false));
                        zotero.patch_collection(key, current.version, &json!({ "parentCollection": parent })).await?;
                        Ok(ManageCollectionsOutput {
                            name: Some(old_name),
                            parent_collection: input.parent_collection.as_ref().map(Key::to_string),
                            ..done(key.to_string())
                        })
                    }
                    _ => {
                        zotero.delete_collection(key, current.version).await?;
                        Ok(ManageCollectionsOutput { name: Some(old_name), ..done(key.to_string()) })
                    }
                }
            }
            CollectionAction::AddItems | CollectionAction::RemoveItems => {
                let key = input
                    .collection_key
                    .as_ref()
                    .ok_or_else(|| needs("this action needs `collectionKey` and `itemKeys`"))?;
                let item_keys = input
                    .item_keys
                    .as_ref()
                    .ok_or_else(|| needs("this action needs `collectionKey` and `itemKeys`"))?;
                let adding = input.action == CollectionAction::AddItems;
                // The collection check (when adding: fail clearly on a wrong key instead of filing items into
                // nothing) and one read of every item go out together.
                let check = async {
                    match adding {
                        true => zotero.collection(key).await.map(|_| ()),
                        false => Ok(()),
                    }
                };
                let (checked, read) = join(check, super::items::read_items(zotero, item_keys)).await;
                checked?;
                let (found, missing) = read?;
                let mut output = done(key.to_string());
                output.failed.extend(missing);
                let mut payloads = Vec::new();
                let mut order = Vec::new();
                for (_, item) in found {
                    let mut collections: Vec<String> = item
                        .data
                        .get("collections")
                        .and_then(Value::as_array)
                        .map(|c| c.iter().filter_map(Value::as_str).map(str::to_owned).collect())
                        .unwrap_or_default();
                    let present = collections.iter().any(|c| c == key.as_str());
                    if present == adding {
                        output.unchanged.push(item.key.clone());
                        continue;
                    }
                    if adding {
                        collections.push(key.to_string());
                    } else {
                        collections.retain(|c| c != key.as_str());
                    }
                    payloads.push(json!({ "key": item.key, "version": item.version, "collections": collections }));
                    order.push(item.key.clone());
                }
                if !payloads.is_empty() {
                    let written = zotero.write_objects(ObjectKind::Items, &payloads).await;
                    let outcome = written.or_else(|error| super::items::unknown_outcome(error, payloads.len()))?;
                    output.affected.extend(
                        order.iter().enumerate().filter(|(i, _)| outcome.is_written(*i)).map(|(_, k)| k.clone()),
                    );
                    let label = |i: usize| order.get(i).cloned().unwrap_or_else(|| format!("#{i}"));
                    output.failed.extend(super::items::failures_from(&outcome, label));
                    output.unknown.extend(super::items::unknown_from(&outcome, label));
                }
                output.changed = !output.affected.is_empty();
                Ok(output)
            }
        }
    }
}

/// The report of `zotero_manage_collections`, from the output's fields only.
fn manage_markdown(output: &ManageCollectionsOutput) -> String {
    let key = &output.collection_key;
    let name = output.name.as_deref().unwrap_or("(unnamed)");
    let mut text = match output.action {
        CollectionAction::Create => format!("Created collection \"{name}\" (key: {key})"),
        CollectionAction::Rename if !output.changed => {
            format!("Collection {key} is already called \"{name}\"; nothing changed")
        }
        CollectionAction::Rename => {
            let before = output.previous_name.as_deref().unwrap_or("(unnamed)");
            format!("Renamed {key} from \"{before}\" to \"{name}\"")
        }
        CollectionAction::Move => match &output.parent_collection {
            Some(parent) => format!("Moved \"{name}\" ({key}) into {parent}"),
            None => format!("Moved \"{name}\" ({key}) to the top level"),
        },
        CollectionAction::Delete => format!(
            "Deleted collection \"{name}\" ({key}) and its subcollections. The items it held remain in the library."
        ),
        CollectionAction::AddItems | CollectionAction::RemoveItems => {
            let (verb, prep) =
                if output.action == CollectionAction::AddItems { ("Added", "to") } else { ("Removed", "from") };
            let mut text = format!("{verb} {} item(s) {prep} {key}", output.affected.len());
            if !output.unchanged.is_empty() {
                text.push_str(&format!("; already as asked: {}", output.unchanged.join(", ")));
            }
            text
        }
    };
    if !output.failed.is_empty() {
        let lines: Vec<String> =
            output.failed.iter().map(|f| format!("- {}: {} {}", f.what, f.code, f.message)).collect();
        text.push_str(&format!("\n\nNot changed:\n{}", lines.join("\n")));
    }
    text.push_str(&super::items::unknown_paragraph(&output.unknown));
    text
}

fn default_tag_limit() -> u32 {
    200
}

/// Arguments of `zotero_list_tags`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ListTagsInput {
    // Only tags containing this text.
    #[validate(length(min = 1, max = 200))]
    pub query: Option<String>,
    // How many tags to return.
    #[validate(range(min = 1, max = 1000))]
    #[serde(default = "default_tag_limit")]
    #[schemars(default = "default_tag_limit")]
    pub limit: u32,
}

/// One tag.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TagOut {
    pub tag: String,
    /// How many items carry it.
    pub num_items: u64,
    /// True for tags added automatically (imported or extracted), false for tags the user added.
    pub automatic: bool,
}

/// Result of `zotero_list_tags`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListTagsOutput {
    pub tags: Vec<TagOut>,
    /// How many tags match in all, when more exist than were returned.
    pub total_results: Option<u64>,
    /// True when no more tags fit in the answer.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub cut: bool,
    /// The library mirror the tags came from, by name (or that is still being filled: then they came from Zotero).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mirror: Option<MirrorOut>,
}

pub struct ListTags;

impl Tool for ListTags {
    type Input = ListTagsInput;
    type Output = ListTagsOutput;
    const SPEC: ToolSpec = ToolSpec::read(
        "zotero_list_tags",
        "List tags",
        "The library's tags with how many items carry each, optionally only those containing `query`. Filter \
         items by tag with zotero_search's `tags`; change an item's tags with zotero_update_item.",
    )
    .ask_for_less("a smaller `limit`, or a `query` the tags contain");

    fn shorten(output: &mut ListTagsOutput, fraction: f64) -> bool {
        let shown = output.tags.len() as u64;
        if shorten_list(&mut output.tags, fraction).is_none() {
            return false;
        }
        output.total_results = Some(output.total_results.unwrap_or(shown).max(shown));
        output.cut = true;
        true
    }

    fn render(output: &ListTagsOutput) -> String {
        if output.tags.is_empty() {
            return "_No tags._".to_owned();
        }
        let mut text = output
            .tags
            .iter()
            .map(|t| if t.num_items > 0 { format!("- {} ({})", t.tag, t.num_items) } else { format!("- {}", t.tag) })
            .collect::<Vec<_>>()
            .join("\n");
        if let Some(total) = output.total_results.filter(|t| *t as usize > output.tags.len()) {
            let advice = if output.cut {
                "no more fit in one answer: narrow with `query`"
            } else {
                "raise `limit` or narrow with `query`"
            };
            text.push_str(&format!("\n\n_{} of {total} tags shown; {advice}._", output.tags.len()));
        }
        text
    }

    async fn call(ctx: &RequestContext, input: ListTagsInput) -> Result<ListTagsOutput, ToolError> {
        let zotero = ctx.zotero()?;
        let text = input.query.as_deref().map(str::trim).filter(|q| !q.is_empty());
        let out = |tag: zotero_mcp_core::zotero::Tag| TagOut {
            tag: tag.tag,
            num_items: tag.num_items,
            automatic: tag.kind == 1,
        };
        // Every tag from a complete library mirror, by name, in no request but the mirror's check; else a page of
        // Zotero's (100 a request), in its order.
        let mirror = match mirrored::tags(ctx).await {
            Mirrored::Answer(mut tags, mirror) => {
                if let Some(needle) = text.map(str::to_lowercase) {
                    tags.retain(|tag| tag.tag.to_lowercase().contains(&needle));
                }
                zotero_mcp_core::sort::sort_by(&mut tags, |a, b| {
                    a.tag.to_lowercase().cmp(&b.tag.to_lowercase()).then(a.kind.cmp(&b.kind))
                });
                let total = tags.len() as u64;
                tags.truncate(input.limit as usize);
                return Ok(ListTagsOutput {
                    tags: tags.into_iter().map(out).collect(),
                    total_results: Some(total),
                    cut: false,
                    mirror: Some(mirror),
                });
            }
            Mirrored::Partial(mirror) => Some(mirror),
            Mirrored::Failed(_) | Mirrored::Absent => None,
        };
        let mut query = Query::new();
        if let Some(text) = text {
            query = query.param("q", text).param("qmode", "contains");
        }
        let page = zotero.tags(&query, input.limit as usize).await?;
        Ok(ListTagsOutput {
            tags: page.items.into_iter().map(out).collect(),
            total_results: page.total_results,
            cut: false,
            mirror,
        })
    }
}

/// What deleting a collection will do, for the person asked to allow it.
fn collection_deletion_plan(collection: &zotero_mcp_core::zotero::ZoteroObject) -> Proposal {
    let count = |name: &str| collection.meta.get(name).and_then(Value::as_u64).unwrap_or(0);
    let subcollections = match count("numCollections") {
        0 => String::new(),
        n => format!(", with its {n} subcollection(s)"),
    };
    Proposal::new(format!(
        "Delete the collection \u{201c}{}\u{201d} ({}) for good{subcollections}. Its {} item(s) stay in the library.",
        collection.field("name").unwrap_or("(unnamed)"),
        collection.key,
        count("numItems"),
    ))
}
