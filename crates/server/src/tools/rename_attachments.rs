//! `zotero_rename_attachments`: names stored files after their parent items with Zotero 7's filename template,
//! as a dry run unless `apply` is set.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use zotero_mcp_core::attachment::filename::{file_name_from, RenderError, Template, DEFAULT_TEMPLATE};
use zotero_mcp_core::attachment::{require_stored_file, write};
use zotero_mcp_core::join::join_all;
use zotero_mcp_core::zotero::{ObjectKey, Query, ZoteroObject};

use super::args::Key;
use super::paging::shorten_counted;
use crate::config::ToolGroup;
use crate::confirm::{listed, Proposal, HANDFUL};
use crate::context::RequestContext;
use crate::format::text::truncate;
use crate::mcp::{Tool, ToolError, ToolSpec};

/// Children read per parent item.
const MAX_CHILDREN: usize = 100;
/// Files rewritten per call. Each costs about four requests (download, upload, .prop, item) and a download's
/// memory, and a Worker on the free plan may make 50 requests per call: the rest are left for the next call,
/// which continues where this one stopped (renaming is idempotent).
pub const MAX_RENAMES_PER_CALL: usize = 5;

fn default_template() -> String {
    DEFAULT_TEMPLATE.to_owned()
}

fn default_limit() -> u32 {
    25
}

/// Arguments of `zotero_rename_attachments`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RenameAttachmentsInput {
    /// Regular items or attachments.
    #[validate(length(min = 1, max = 50))]
    pub item_keys: Option<Vec<Key>>,
    // Every top-level item of this collection.
    pub collection_key: Option<Key>,
    /// Zotero 7's: {{ firstCreator }}, {{ year }}, {{ title truncate="100" }}, any field, {{ if … }}.
    #[validate(length(min = 1, max = 2000))]
    #[serde(default = "default_template")]
    #[schemars(default = "default_template")]
    pub template: String,
    // Write the new names (needs the write scope). Without it, only the plan is shown.
    #[serde(default)]
    #[schemars(default)]
    pub apply: bool,
    // The most parent items looked at.
    #[validate(range(min = 1, max = 100))]
    #[serde(default = "default_limit")]
    #[schemars(default = "default_limit")]
    pub limit: u32,
}

/// One attachment's rename.
#[derive(Debug, Clone, Serialize, JsonSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct PlannedRename {
    pub attachment_key: String,
    pub from: String,
    pub to: String,
    /// planned (dry run), renamed, unchanged, deferred (left for the next call: at most
    /// [`MAX_RENAMES_PER_CALL`] files are rewritten per call), or `failed: <why>`.
    pub status: String,
}

/// Result of `zotero_rename_attachments`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RenameAttachmentsOutput {
    pub applied: bool,
    pub planned: Vec<PlannedRename>,
    /// How many renames were planned, when not all fit in the answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub planned_total: Option<usize>,
}

pub struct RenameAttachments;

impl Tool for RenameAttachments {
    type Input = RenameAttachmentsInput;
    type Output = RenameAttachmentsOutput;
    const SPEC: ToolSpec = ToolSpec::mixed(
        "zotero_rename_attachments",
        "Rename attachment files from item metadata",
        "Names the stored files of items (or a collection's) after their metadata with Zotero 7's filename \
         template: a dry run listing old and new names unless `apply` (write scope); 5 files per call.",
    )
    .group(ToolGroup::Files)
    .confirms()
    .idempotent()
    .ask_for_less("fewer `itemKeys`, or a smaller `limit`");

    fn shorten(output: &mut RenameAttachmentsOutput, fraction: f64) -> bool {
        shorten_counted(&mut output.planned, fraction, &mut output.planned_total)
    }

    fn render(output: &RenameAttachmentsOutput) -> String {
        let renamed = output.planned.iter().filter(|p| p.status == "renamed").count();
        let deferred = output.planned.iter().filter(|p| p.status == "deferred").count();
        let mut lines = vec![if output.applied && deferred > 0 {
            format!(
                "Renamed {renamed} of {} attachment(s); {deferred} deferred (at most {MAX_RENAMES_PER_CALL} files \
                 are rewritten per call): call again with the same arguments to continue.",
                output.planned.len()
            )
        } else if output.applied {
            format!("Renamed {renamed} of {} attachment(s).", output.planned.len())
        } else {
            format!("Dry run over {} attachment(s); call again with apply=true to rename them.", output.planned.len())
        }];
        if let Some(total) = output.planned_total {
            lines.push(format!("Only {} of the {total} planned renames fit in one answer.", output.planned.len()));
        }
        if output.planned.is_empty() {
            lines.push("_No stored-file attachments were found for these items._".into());
        } else {
            lines.push(String::new());
        }
        for p in &output.planned {
            let from = if p.from.is_empty() { "(no name)" } else { &p.from };
            lines.push(format!("- {}: {from} → {} [{}]", p.attachment_key, p.to, p.status));
        }
        lines.join("\n")
    }

    /// Applying is asked about when it renames more than a handful of files (a dry run changes nothing).
    fn needs_confirmation(input: &RenameAttachmentsInput) -> bool {
        input.apply
    }

    async fn call(ctx: &RequestContext, input: RenameAttachmentsInput) -> Result<RenameAttachmentsOutput, ToolError> {
        // Parsed (its patterns compiled) once for the whole call, and refused whole when over a limit.
        let template = Template::checked(&input.template).map_err(|e| ToolError::invalid(format!("template: {e}")))?;
        let zotero = ctx.zotero()?;
        let limit = input.limit as usize;
        let mut not_found = Vec::new();
        let parents: Vec<ZoteroObject> = match (&input.item_keys, &input.collection_key) {
            (Some(keys), _) if !keys.is_empty() => {
                let keys: Vec<ObjectKey> = keys.iter().map(|k| k.0.clone()).take(limit).collect();
                let found = zotero.items_by_keys(&keys).await?;
                not_found = keys.into_iter().filter(|k| !found.iter().any(|f| f.key == k.as_str())).collect();
                found
            }
            (_, Some(collection)) => zotero.collection_items(collection, true, &Query::new(), limit).await?.items,
            _ => {
                return Err(ToolError::invalid("pass itemKeys or collectionKey to choose which items' files to rename"))
            }
        };
        let pairs = attachments_with_parents(zotero, parents.into_iter().take(limit).collect()).await?;

        // Every rename is planned first, so the person is asked once about all that this call would rename.
        let mut planned = Vec::new();
        let mut renames: Vec<(usize, ZoteroObject, String)> = Vec::new();
        let mut deferred = 0;
        // Each parent is rendered once, however many files it has.
        let mut renderings: Vec<(String, Result<String, RenderError>)> = Vec::new();
        for (attachment, parent) in pairs {
            let from = attachment.field("filename").unwrap_or_default().to_owned();
            let rendered = parent.as_ref().map(|p| rendering_of(&template, p, &mut renderings));
            let proposed = match rendered {
                Some(Err(e)) => {
                    planned.push(PlannedRename {
                        attachment_key: attachment.key.clone(),
                        to: from.clone(),
                        from,
                        status: format!("failed: {e}"),
                    });
                    continue;
                }
                Some(Ok(rendered)) => file_name_from(&rendered, &from),
                None => None,
            };
            let mut entry = PlannedRename {
                attachment_key: attachment.key.clone(),
                from: from.clone(),
                to: proposed.clone().unwrap_or_else(|| from.clone()),
                status: "unchanged".into(),
            };
            match proposed {
                Some(to) if to == from => {}
                None => {}
                Some(_) if !input.apply => entry.status = "planned".into(),
                Some(_) if renames.len() >= MAX_RENAMES_PER_CALL => {
                    deferred += 1;
                    entry.status = "deferred".into();
                }
                Some(to) => renames.push((planned.len(), attachment, to)),
            }
            planned.push(entry);
        }
        if input.apply {
            let confirmed = ctx.confirm(renaming_plan(&planned, &renames, deferred)).await?;
            let (zotero, files) = (confirmed.writer()?, confirmed.file_writer().await?);
            for (at, attachment, to) in &renames {
                let status = match write::rename(zotero, files, ctx.services().clock(), attachment, to).await {
                    Ok(_) => "renamed".into(),
                    Err(e) => format!("failed: {}", truncate(&e.to_string(), 300)),
                };
                if let Some(entry) = planned.get_mut(*at) {
                    entry.status = status;
                }
            }
        }
        planned.extend(not_found.into_iter().map(|key| PlannedRename {
            attachment_key: key.as_str().to_owned(),
            from: String::new(),
            to: String::new(),
            status: "failed: no item with this key in the library".into(),
        }));
        Ok(RenameAttachmentsOutput { applied: input.apply, planned, planned_total: None })
    }
}

/// What applying will rename now, and how many more files the same selection leaves for later calls (a call
/// renames at most [`MAX_RENAMES_PER_CALL`]): asked about when the job is more than a handful of files, so a
/// mass rename is asked about call by call, each question naming exactly the files it renames.
fn renaming_plan(planned: &[PlannedRename], renames: &[(usize, ZoteroObject, String)], deferred: usize) -> Proposal {
    let lines = renames.iter().filter_map(|(at, _, _)| planned.get(*at)).map(|entry| {
        let from = if entry.from.is_empty() { "(no name)" } else { &entry.from };
        format!("\u{201c}{from}\u{201d} \u{2192} \u{201c}{}\u{201d} ({})", entry.to, entry.attachment_key)
    });
    let later = match deferred {
        0 => String::new(),
        n => format!(" {n} more file(s) of this selection wait for later calls, which ask again."),
    };
    let lines = listed(lines);
    Proposal::new(format!(
        "Rename {} attachment file(s), in Zotero and in the file store.{later}\n{lines}",
        renames.len(),
    ))
    .listing(lines)
    .ask_if(renames.len() + deferred > HANDFUL)
}

/// `parent` rendered with `template`, from `done` when it was rendered already (one rendering per parent).
fn rendering_of(
    template: &Template,
    parent: &ZoteroObject,
    done: &mut Vec<(String, Result<String, RenderError>)>,
) -> Result<String, RenderError> {
    if let Some((_, rendered)) = done.iter().find(|(key, _)| *key == parent.key) {
        return rendered.clone();
    }
    let summary = parent.meta.get("creatorSummary").and_then(|v| v.as_str());
    let rendered = template.render(&parent.data, summary);
    done.push((parent.key.clone(), rendered.clone()));
    rendered
}

/// Each stored-file attachment of `items` with the regular item it is named after: an attachment given itself
/// is named after its parent (read in one request with the others); a regular item's stored files (its
/// children, all read together) after it. A standalone attachment has no parent: it is listed unchanged.
async fn attachments_with_parents(
    zotero: &zotero_mcp_core::zotero::ZoteroClient,
    items: Vec<ZoteroObject>,
) -> Result<Vec<(ZoteroObject, Option<ZoteroObject>)>, ToolError> {
    let (attachments, regular): (Vec<ZoteroObject>, Vec<ZoteroObject>) =
        items.into_iter().partition(|i| i.item_type() == Some("attachment"));
    let missing: Vec<ObjectKey> = attachments
        .iter()
        .filter_map(|a| a.field("parentItem"))
        .filter(|p| !regular.iter().any(|r| r.key == *p))
        .filter_map(|p| ObjectKey::parse(p).ok())
        .collect();
    let parents = if missing.is_empty() { Vec::new() } else { zotero.items_by_keys(&missing).await? };
    let keys: Vec<ObjectKey> = regular.iter().filter_map(|r| ObjectKey::parse(&r.key).ok()).collect();
    let children = join_all(keys.iter().map(|k| zotero.children(k, MAX_CHILDREN))).await;
    let mut pairs = Vec::new();
    for attachment in attachments.into_iter().filter(|a| require_stored_file(a).is_ok()) {
        let parent = attachment
            .field("parentItem")
            .and_then(|p| regular.iter().chain(parents.iter()).find(|r| r.key == p).cloned());
        pairs.push((attachment, parent));
    }
    for (parent, children) in regular.iter().zip(children) {
        for child in children?.items.into_iter().filter(|c| require_stored_file(c).is_ok()) {
            pairs.push((child, Some(parent.clone())));
        }
    }
    Ok(pairs)
}
