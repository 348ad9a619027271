//! `zotero_update_item`: fields and tags of existing items, each patched with its own item's version.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use zotero_mcp_core::join::join_all;
use zotero_mcp_core::zotero::journal::title_of;
use zotero_mcp_core::zotero::{ObjectKey, ZoteroObject};

use super::args::Key;
use super::items::{
    creator_problems, failure_lines, field_text, read_items, refuse_fields, settled, stored_field, unknown_paragraph,
    CreatorIn, Failure, FieldValue, Settled, Unknown,
};
use crate::confirm::{named, Proposal, HANDFUL};
use crate::context::RequestContext;
use crate::mcp::{Tool, ToolError, ToolSpec};

/// Arguments of `zotero_update_item`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UpdateItemInput {
    /// Every change applies to each.
    #[validate(length(min = 1, max = 50))]
    pub keys: Vec<Key>,
    /// By Zotero name; null or "" clears one. A `note` is Markdown.
    #[schemars(with = "Option<BTreeMap<String, Option<FieldValue>>>")]
    pub fields: Option<Map<String, Value>>,
    /// Replaces all creators.
    #[validate(nested, length(max = 200))]
    pub creators: Option<Vec<CreatorIn>>,
    // Tags to add (kept if already present).
    #[validate(length(max = 100))]
    pub add_tags: Option<Vec<String>>,
    // Tags to remove.
    #[validate(length(max = 100))]
    pub remove_tags: Option<Vec<String>>,
    /// Replaces all tags; not with addTags/removeTags.
    #[validate(length(max = 100))]
    pub set_tags: Option<Vec<String>>,
    // Collections to file the items in.
    #[validate(length(max = 50))]
    pub add_collections: Option<Vec<Key>>,
    // Collections to take the items out of (the items stay in the library).
    #[validate(length(max = 50))]
    pub remove_collections: Option<Vec<Key>>,
    /// Not with addCollections/removeCollections.
    #[validate(length(max = 50))]
    pub set_collections: Option<Vec<Key>>,
}

/// Result of `zotero_update_item`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdateItemOutput {
    /// Items changed.
    pub updated: Vec<String>,
    /// Items left alone because they already matched.
    pub skipped: Vec<String>,
    /// Items not changed, with the reason (a changed-elsewhere conflict says to read the item again).
    pub failed: Vec<Failure>,
    /// Items whose write's answer was lost and could not be checked: read each before changing it again.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown: Vec<Unknown>,
}

pub struct UpdateItem;

impl Tool for UpdateItem {
    type Input = UpdateItemInput;
    type Output = UpdateItemOutput;
    const SPEC: ToolSpec = ToolSpec::write(
        "zotero_update_item",
        "Edit items",
        "Changes fields, creators, tags and collections of up to 50 items, each only if unchanged since read; \
         reports what changed, was skipped or failed. For a note's text, use zotero_notes.",
    )
    .confirms()
    .idempotent();

    fn render(output: &UpdateItemOutput) -> String {
        let keys = if output.updated.is_empty() { "(none)".to_owned() } else { output.updated.join(", ") };
        let mut text = format!("Updated {} item(s): {keys}", output.updated.len());
        if !output.skipped.is_empty() {
            text.push_str(&format!("\nAlready as asked (not written): {}", output.skipped.join(", ")));
        }
        if !output.failed.is_empty() {
            text.push_str(&format!("\n\nNot updated:\n{}", failure_lines(&output.failed)));
        }
        text.push_str(&unknown_paragraph(&output.unknown));
        text
    }

    /// Tag changes across more than a handful of items are asked about (each item's own edit is not).
    fn needs_confirmation(input: &UpdateItemInput) -> bool {
        let tags = input.add_tags.is_some() || input.remove_tags.is_some() || input.set_tags.is_some();
        tags && input.keys.len() > HANDFUL
    }

    async fn call(ctx: &RequestContext, input: UpdateItemInput) -> Result<UpdateItemOutput, ToolError> {
        let mut problems = Vec::new();
        creator_problems(input.creators.as_deref().unwrap_or_default(), "creators", &mut problems);
        if !problems.is_empty() {
            return Err(ToolError::invalid(problems.join("; ")));
        }
        if input.set_tags.is_some() && (input.add_tags.is_some() || input.remove_tags.is_some()) {
            return Err(ToolError::invalid(
                "`setTags` replaces every tag, so it cannot be combined with `addTags`/`removeTags`",
            ));
        }
        if input.set_collections.is_some() && (input.add_collections.is_some() || input.remove_collections.is_some()) {
            return Err(ToolError::invalid("`setCollections` replaces membership, so it cannot be combined with `addCollections`/`removeCollections`",
            ));
        }
        for (name, value) in input.fields.iter().flatten() {
            if field_text(value).is_none() {
                return Err(ToolError::invalid(format!("`fields.{name}` must be text, a number, a boolean or null")));
            }
        }
        refuse_fields(input.fields.iter().flatten().map(|(name, _)| name))?;
        let mut output =
            UpdateItemOutput { updated: Vec::new(), skipped: Vec::new(), failed: Vec::new(), unknown: Vec::new() };
        // One read for every item, then the patches together (each with its own item's version).
        let (found, missing) = read_items(ctx.zotero()?, &input.keys).await?;
        output.failed.extend(missing);
        let mut patches = Vec::new();
        for (key, item) in &found {
            let patch = item_patch(&item.data, &input);
            if patch.is_empty() {
                output.skipped.push(key.as_str().to_owned());
            } else {
                patches.push((key, item.version, Value::Object(patch)));
            }
        }
        let zotero = ctx.confirm(retagging_plan(&found, &patches, &input)).await?.writer()?;
        let results =
            join_all(patches.iter().map(|(key, version, patch)| zotero.patch_item(key, *version, patch))).await;
        for ((key, _, _), result) in patches.iter().zip(results) {
            match settled(key, &result) {
                Settled::Done => output.updated.push(key.as_str().to_owned()),
                Settled::Failed(failure) => output.failed.push(failure),
                Settled::Unknown(unknown) => output.unknown.push(unknown),
            }
        }
        Ok(output)
    }
}

/// The fields that actually differ from the item's current data.
fn item_patch(data: &Map<String, Value>, input: &UpdateItemInput) -> Map<String, Value> {
    let mut patch = Map::new();
    for (name, value) in input.fields.iter().flatten() {
        let wanted = stored_field(name, value).unwrap_or_default();
        let current = data.get(name).and_then(field_text).unwrap_or_default();
        if wanted != current {
            patch.insert(name.clone(), Value::String(wanted));
        }
    }
    if let Some(creators) = &input.creators {
        let wanted = Value::Array(creators.iter().map(CreatorIn::to_zotero).collect());
        if data.get("creators") != Some(&wanted) {
            patch.insert("creators".into(), wanted);
        }
    }
    let current_tags: Vec<Value> = data.get("tags").and_then(Value::as_array).cloned().unwrap_or_default();
    let tag_name = |t: &Value| t.get("tag").and_then(Value::as_str).unwrap_or_default().to_owned();
    let new_tags: Option<Vec<Value>> = if let Some(set) = &input.set_tags {
        Some(set.iter().map(|t| json!({ "tag": t })).collect())
    } else if input.add_tags.is_some() || input.remove_tags.is_some() {
        let remove = input.remove_tags.clone().unwrap_or_default();
        let mut tags: Vec<Value> = current_tags.iter().filter(|t| !remove.contains(&tag_name(t))).cloned().collect();
        for add in input.add_tags.iter().flatten() {
            if !tags.iter().any(|t| &tag_name(t) == add) {
                tags.push(json!({ "tag": add }));
            }
        }
        Some(tags)
    } else {
        None
    };
    if let Some(tags) = new_tags {
        let names = |list: &[Value]| {
            let mut n: Vec<String> = list.iter().map(tag_name).collect();
            zotero_mcp_core::sort::sort(&mut n);
            n
        };
        if names(&tags) != names(&current_tags) {
            patch.insert("tags".into(), Value::Array(tags));
        }
    }
    let current: Vec<String> = data
        .get("collections")
        .and_then(Value::as_array)
        .map(|c| c.iter().filter_map(Value::as_str).map(str::to_owned).collect())
        .unwrap_or_default();
    let new_collections: Option<Vec<String>> = if let Some(set) = &input.set_collections {
        Some(set.iter().map(|k| k.as_str().to_owned()).collect())
    } else if input.add_collections.is_some() || input.remove_collections.is_some() {
        let remove: Vec<&str> = input.remove_collections.iter().flatten().map(Key::as_str).collect();
        let mut keys: Vec<String> = current.iter().filter(|k| !remove.contains(&k.as_str())).cloned().collect();
        for add in input.add_collections.iter().flatten() {
            if !keys.iter().any(|k| k == add.as_str()) {
                keys.push(add.as_str().to_owned());
            }
        }
        Some(keys)
    } else {
        None
    };
    if let Some(collections) = new_collections {
        let (mut a, mut b) = (collections.clone(), current.clone());
        zotero_mcp_core::sort::sort(&mut a);
        zotero_mcp_core::sort::sort(&mut b);
        if a != b {
            patch.insert("collections".into(), json!(collections));
        }
    }
    patch
}

/// What a tag change over many items will do: asked about when it retags more than a handful of them.
fn retagging_plan(
    found: &[(ObjectKey, ZoteroObject)],
    patches: &[(&ObjectKey, u64, Value)],
    input: &UpdateItemInput,
) -> Proposal {
    let retagged: Vec<&ObjectKey> =
        patches.iter().filter(|(_, _, patch)| patch.get("tags").is_some()).map(|(key, _, _)| *key).collect();
    let quoted = |tags: &[String]| tags.iter().map(|t| format!("\u{201c}{t}\u{201d}")).collect::<Vec<_>>().join(", ");
    let mut what = Vec::new();
    if let Some(set) = &input.set_tags {
        what.push(if set.is_empty() {
            "remove every tag".to_owned()
        } else {
            format!("replace every tag with {}", quoted(set))
        });
    }
    if let Some(add) = input.add_tags.as_deref().filter(|a| !a.is_empty()) {
        what.push(format!("add {}", quoted(add)));
    }
    if let Some(remove) = input.remove_tags.as_deref().filter(|r| !r.is_empty()) {
        what.push(format!("remove {}", quoted(remove)));
    }
    let others =
        patches.iter().filter(|(_, _, patch)| patch.as_object().is_some_and(|p| p.keys().any(|k| k != "tags"))).count();
    let also = match others {
        0 => String::new(),
        n => format!(" The same call also changes other fields of {n} item(s)."),
    };
    let items = named(
        found.iter().filter(|(key, _)| retagged.contains(&key)).map(|(key, item)| (key.as_str(), title_of(&item.data))),
    );
    Proposal::new(format!("Change the tags of {} item(s): {}.{also}\n{items}", retagged.len(), what.join("; ")))
        .listing(items)
        .ask_if(retagged.len() > HANDFUL)
}
