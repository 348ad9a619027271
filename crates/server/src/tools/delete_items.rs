//! `zotero_delete_items`: items to the trash, or deleted for good, each only at the version it was read at, after
//! the person confirmed it where the client can ask (`crate::confirm`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use zotero_mcp_core::join::join_all;
use zotero_mcp_core::zotero::journal::title_of;
use zotero_mcp_core::zotero::{ObjectKey, ObjectKind, ZoteroObject};

use super::args::Key;
use super::items::{
    failure_lines, failures_from, read_items, settled, unknown_from, unknown_outcome, unknown_paragraph, Failure,
    Settled, Unknown,
};
use crate::confirm::{named, Proposal};
use crate::context::RequestContext;
use crate::mcp::{Tool, ToolError, ToolSpec};

/// Arguments of `zotero_delete_items`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DeleteItemsInput {
    // The items to delete, 1 to 50.
    #[validate(length(min = 1, max = 50))]
    pub keys: Vec<Key>,
    /// Delete for good, not to the trash. Cannot be undone.
    #[serde(default)]
    #[schemars(default)]
    pub permanent: bool,
}

/// Result of `zotero_delete_items`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeleteItemsOutput {
    /// Items moved to the trash, or deleted for good when `permanent`.
    pub deleted: Vec<String>,
    pub permanent: bool,
    /// Items not deleted, with the reason.
    pub failed: Vec<Failure>,
    /// Items whose deletion's answer was lost and could not be checked: read each before deleting it again.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown: Vec<Unknown>,
}

pub struct DeleteItems;

impl Tool for DeleteItems {
    type Input = DeleteItemsInput;
    type Output = DeleteItemsOutput;
    const SPEC: ToolSpec = ToolSpec::write(
        "zotero_delete_items",
        "Delete items",
        "Moves up to 50 items to the trash, or with `permanent` deletes them, each only if unchanged since read. \
         Confirm with the user first. For an attachment and its file, zotero_delete_attachment.",
    )
    .confirms()
    .idempotent();

    fn render(output: &DeleteItemsOutput) -> String {
        let keys = if output.deleted.is_empty() { "(none)".to_owned() } else { output.deleted.join(", ") };
        let verb = if output.permanent { "Permanently deleted" } else { "Moved to the trash" };
        let mut text = format!("{verb} {} item(s): {keys}", output.deleted.len());
        if !output.failed.is_empty() {
            text.push_str(&format!("\n\nNot deleted:\n{}", failure_lines(&output.failed)));
        }
        text.push_str(&unknown_paragraph(&output.unknown));
        text
    }

    fn needs_confirmation(_input: &DeleteItemsInput) -> bool {
        true
    }

    async fn call(ctx: &RequestContext, input: DeleteItemsInput) -> Result<DeleteItemsOutput, ToolError> {
        // A library the key may only read was refused by the registry before this runs (every call is asked about).
        let mut output = DeleteItemsOutput {
            deleted: Vec::new(),
            permanent: input.permanent,
            failed: Vec::new(),
            unknown: Vec::new(),
        };
        // One read for every item: each write below names its own item's version.
        let (found, missing) = read_items(ctx.zotero()?, &input.keys).await?;
        output.failed.extend(missing);
        let zotero = ctx.confirm(deletion_plan(&found, input.permanent)).await?.writer()?;
        if input.permanent {
            // One request per item with that item's own version, all together: one stale item cannot block, or
            // wrongly delete, the others (the multi-key DELETE only checks the library version).
            let results = join_all(found.iter().map(|(key, item)| zotero.delete_item(key, item.version))).await;
            for ((key, _), result) in found.iter().zip(results) {
                match settled(key, &result) {
                    Settled::Done => output.deleted.push(key.as_str().to_owned()),
                    Settled::Failed(failure) => output.failed.push(failure),
                    Settled::Unknown(unknown) => output.unknown.push(unknown),
                }
            }
            return Ok(output);
        }
        let payloads: Vec<Value> =
            found.iter().map(|(_, item)| json!({ "key": item.key, "version": item.version, "deleted": 1 })).collect();
        let order: Vec<String> = found.iter().map(|(key, _)| key.as_str().to_owned()).collect();
        if !payloads.is_empty() {
            let written = zotero.write_objects(ObjectKind::Items, &payloads).await;
            let outcome = written.or_else(|error| unknown_outcome(error, payloads.len()))?;
            output
                .deleted
                .extend(order.iter().enumerate().filter(|(i, _)| outcome.is_written(*i)).map(|(_, k)| k.clone()));
            let label = |i: usize| order.get(i).cloned().unwrap_or_else(|| format!("#{i}"));
            output.failed.extend(failures_from(&outcome, label));
            output.unknown.extend(unknown_from(&outcome, label));
        }
        Ok(output)
    }
}

/// What a deletion will do, for the person asked to allow it.
fn deletion_plan(found: &[(ObjectKey, ZoteroObject)], permanent: bool) -> Proposal {
    let children: u64 = found.iter().filter_map(|(_, item)| item.meta.get("numChildren").and_then(Value::as_u64)).sum();
    let head = if permanent {
        let with = match children {
            0 => String::new(),
            n => format!(", with their {n} notes and attachments"),
        };
        format!(
            "Delete {} item(s) for good{with}. Zotero cannot restore them from its trash (zotero_undo can \
             recreate them for a while):",
            found.len()
        )
    } else {
        format!("Move {} item(s) to the trash (restorable in Zotero):", found.len())
    };
    let items = named(found.iter().map(|(key, item)| (key.as_str(), title_of(&item.data))));
    Proposal::new(format!("{head}\n{items}")).listing(items).ask_if(!found.is_empty())
}
