//! `zotero_find_duplicates`: groups items that describe one work and, when asked, merges each group as Zotero
//! Desktop does (`zotero_mcp_core::duplicates`). A dry run unless `merge` is set; every merge needs the write
//! scope, `mergeKeys` included (upstream Q1 merged those on a read-only grant).

use super::mirrored::{self, MirrorOut, Mirrored};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use zotero_mcp_core::duplicates::{group_duplicates, merge, MergePlan, MergeReport};
use zotero_mcp_core::zotero::journal::title_of;
use zotero_mcp_core::zotero::{ObjectKey, Query, ZoteroObject};

use super::args::Key;
use super::paging::{shorten_page, Paging};
use crate::config::ToolGroup;
use crate::confirm::{Proposal, NAMED};
use crate::context::RequestContext;
use crate::format::text::truncate;
use crate::mcp::{Tool, ToolError, ToolSpec};

/// Groups merged per call. A merge costs about five requests plus one per duplicate (listing its children), a
/// scan up to twenty, and a Worker on the free plan may make 50 per call: further groups wait for the next call,
/// which finds them again.
pub const MAX_MERGES_PER_CALL: usize = 5;

fn default_scan_limit() -> u32 {
    500
}

/// Arguments of `zotero_find_duplicates`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FindDuplicatesInput {
    // Look only at this collection's top-level items.
    pub collection_key: Option<Key>,
    // Look only at items of this type, e.g. journalArticle.
    #[validate(length(min = 1, max = 100))]
    pub item_type: Option<String>,
    /// Top-level items examined, newest first, without a complete library mirror (which examines all).
    #[validate(range(min = 10, max = 2000))]
    #[serde(default = "default_scan_limit")]
    #[schemars(default = "default_scan_limit")]
    pub scan_limit: u32,
    // Merge (needs the write scope): each group's richest item is kept, and the others' notes, files, tags,
    // collections and missing fields move onto it before they go to the trash. Without it, only the plan is shown.
    #[serde(default)]
    #[schemars(default)]
    pub merge: bool,
    /// One group chosen by hand, the first key kept; merged only with merge.
    #[validate(length(min = 2, max = 20))]
    pub merge_keys: Option<Vec<Key>>,
    // Skip this many groups first (see `nextOffset`).
    #[validate(range(max = 100000))]
    #[serde(default)]
    #[schemars(default)]
    pub offset: u32,
}

/// Groups in one answer: a whole library may hold a thousand; the rest follow from `nextOffset`.
pub const GROUPS_PER_ANSWER: u32 = 50;

/// One group of duplicates.
#[derive(Debug, Clone, Serialize, JsonSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct DuplicateGroupOut {
    /// What the items share: DOI, ISBN, arXiv, title+year+creator, or explicit (mergeKeys).
    pub reason: String,
    /// The item kept first, then its duplicates.
    pub keys: Vec<String>,
    pub titles: Vec<String>,
    pub merged: bool,
    /// Fields the kept item gains (or would gain) from its duplicates.
    pub gained_fields: Vec<String>,
    /// Notes and attachments moved under the kept item.
    pub moved_children: Vec<String>,
    /// Duplicates moved to the trash.
    pub trashed: Vec<String>,
    /// Why the group was not merged, or merged only in part, and what to do.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Result of `zotero_find_duplicates`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FindDuplicatesOutput {
    /// Items examined.
    pub scanned: usize,
    pub groups: Vec<DuplicateGroupOut>,
    /// How many groups were found, when not all are in the answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub groups_total: Option<usize>,
    /// Pass as `offset` for the next groups; absent after the last.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<u64>,
    /// The `offset` these groups started at. Not sent.
    #[serde(skip)]
    pub offset: usize,
    /// The library mirror the scan came from, or that is still being filled (then the scan read Zotero directly,
    /// the newest `scanLimit` items only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mirror: Option<MirrorOut>,
    /// Why the scan did not cover the whole library, when it did not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

pub struct FindDuplicates;

impl Tool for FindDuplicates {
    type Input = FindDuplicatesInput;
    type Output = FindDuplicatesOutput;
    const SPEC: ToolSpec = ToolSpec::mixed(
        "zotero_find_duplicates",
        "Find and merge duplicate items",
        "Groups items describing one work (same DOI, ISBN or arXiv id, or title, year and first author) and names \
         the copy to keep. A dry run unless `merge` or `mergeKeys` (write scope): merged as Zotero Desktop does, \
         the others trashed.",
    )
    .group(ToolGroup::Admin)
    .confirms()
    .ask_for_less("a `collectionKey` or `itemType`, or a smaller `scanLimit`");

    fn shorten(output: &mut FindDuplicatesOutput, fraction: f64) -> bool {
        let before = output.groups.len();
        if !shorten_page(&mut output.groups, fraction, output.offset, &mut output.next_offset) {
            return false;
        }
        output.groups_total.get_or_insert(output.offset + before);
        true
    }

    fn render(output: &FindDuplicatesOutput) -> String {
        let coverage = match (&output.mirror, &output.note) {
            (_, Some(note)) => format!("\n\n{note}"),
            (Some(mirror), None) if mirror.complete => {
                format!("\n\nThe whole library was scanned (its mirror, at version {}).", mirror.library_version)
            }
            _ => String::new(),
        };
        if output.groups.is_empty() {
            return match output.groups_total {
                Some(total) => format!(
                    "Scanned {} items: {total} duplicate group(s), none past offset {}.{coverage}",
                    output.scanned, output.offset
                ),
                None => format!("Scanned {} items; no duplicates found.{coverage}", output.scanned),
            };
        }
        let merged = output.groups.iter().filter(|g| g.merged).count();
        let mut lines = vec![format!(
            "Scanned {} items and found {} duplicate group(s){}.",
            output.scanned,
            output.groups_total.unwrap_or(output.groups.len()),
            if merged > 0 { format!(", {merged} merged") } else { String::new() }
        )];
        for group in &output.groups {
            lines.push(String::new());
            lines.push(format!("- match on {}: {}", group.reason, truncate(&group.titles[0], 120)));
            lines.push(format!("  keep: {}", group.keys[0]));
            let verb = if group.merged { "trashed" } else { "duplicates" };
            lines.push(format!("  {verb}: {}", group.keys[1..].join(", ")));
            if !group.gained_fields.is_empty() {
                let tense = if group.merged { "gained" } else { "would gain" };
                lines.push(format!("  {tense}: {}", group.gained_fields.join(", ")));
            }
            if !group.moved_children.is_empty() {
                lines.push(format!("  notes and files moved: {}", group.moved_children.join(", ")));
            }
            if let Some(note) = &group.note {
                lines.push(format!("  note: {note}"));
            }
        }
        if let Some(total) = output.groups_total {
            lines.push(String::new());
            let (first, last) = (output.offset + 1, output.offset + output.groups.len());
            lines.push(match output.next_offset {
                Some(next) => format!("Groups {first}–{last} of {total}: call again with offset {next} for more."),
                None => format!("Groups {first}–{last} of {total}."),
            });
        }
        if output.groups.iter().any(|g| !g.merged && g.note.is_none()) {
            lines.push(String::new());
            lines.push("Call again with merge=true to merge these groups, or pass mergeKeys to merge one.".into());
        }
        lines.join("\n") + &coverage
    }

    /// Merging is asked about: the person sees which copy each group keeps and what moves to it.
    fn needs_confirmation(input: &FindDuplicatesInput) -> bool {
        input.merge
    }

    async fn call(ctx: &RequestContext, input: FindDuplicatesInput) -> Result<FindDuplicatesOutput, ToolError> {
        // A merge's write check was made by the registry before this runs (it is asked about): a read-only grant
        // learns at once that merging needs more.
        let zotero = ctx.zotero()?;

        if let Some(keys) = input.merge_keys.as_ref().filter(|keys| !keys.is_empty()) {
            let keys: Vec<ObjectKey> = keys.iter().map(|k| k.0.clone()).collect();
            let found = zotero.items_by_keys(&keys).await?;
            let missing: Vec<&str> =
                keys.iter().map(ObjectKey::as_str).filter(|k| !found.iter().any(|f| f.key == *k)).collect();
            if !missing.is_empty() {
                return Err(ToolError::invalid(format!(
                    "no item with the key {} in this library; nothing was changed",
                    missing.join(", ")
                )));
            }
            // In the caller's order: the first key is the one kept.
            let ordered: Vec<ZoteroObject> =
                keys.iter().filter_map(|key| found.iter().find(|item| item.key == key.as_str()).cloned()).collect();
            let plan = MergePlan::new(ordered).map_err(|e| ToolError::invalid(format!("{e}; nothing was changed")))?;
            let writer = merge_writer(ctx, input.merge, &[&plan]).await?;
            let group = run(zotero, writer, "explicit", plan).await;
            return Ok(FindDuplicatesOutput {
                scanned: group.keys.len(),
                groups: vec![group],
                groups_total: None,
                next_offset: None,
                offset: 0,
                mirror: None,
                note: None,
            });
        }

        let mut query = Query::new();
        if let Some(item_type) = &input.item_type {
            query = query.item_type(item_type);
        }
        let max = input.scan_limit as usize;
        // The whole library from its mirror where there is a complete one; else Zotero's newest items.
        let (mut mirror, mut note) = (None, None);
        let mirrored = match &input.collection_key {
            Some(_) => None,
            None => match mirrored::duplicate_candidates(ctx, input.item_type.as_deref()).await {
                Mirrored::Answer(found, status) => {
                    mirror = Some(status);
                    Some(found)
                }
                Mirrored::Partial(status) => {
                    note = Some(format!(
                        "The library mirror is still being filled ({} items so far), so this scan read only the \
                         newest {max} items from Zotero. Ask again later to scan the whole library.",
                        status.items
                    ));
                    mirror = Some(status);
                    None
                }
                Mirrored::Failed(why) => {
                    note = Some(format!("{why} This scan read only the newest {max} items from Zotero."));
                    None
                }
                Mirrored::Absent => None,
            },
        };
        // From the mirror: only the items that share a key with another (every group is among them), and how
        // many top-level items it examined.
        let (scanned, items) = match mirrored {
            Some((scanned, candidates)) => (scanned as usize, candidates),
            None => {
                let items = match &input.collection_key {
                    Some(collection) => zotero.collection_items(&collection.0, true, &query, max).await?.items,
                    None => zotero.top_items(&query, max).await?.items,
                };
                (items.len(), items)
            }
        };
        // Every group is planned first, so the person is asked once, about every merge this call would make.
        let mut slots = Vec::new();
        let mut merges = 0;
        let found = group_duplicates(&items);
        let paging = Paging::new(input.offset, GROUPS_PER_ANSWER);
        let total = found.len();
        let next_offset = paging.next_offset(GROUPS_PER_ANSWER as usize, Some(total as u64));
        let groups_total = (paging.offset > 0 || next_offset.is_some()).then_some(total);
        for group in found.into_iter().skip(paging.offset).take(paging.limit) {
            let reason = group.reason.label();
            let kept_type = group.items[0].item_type().map(str::to_owned);
            // Desktop merges one type at a time: copies of another type are listed, not merged.
            let (same, other): (Vec<ZoteroObject>, Vec<ZoteroObject>) =
                group.items.into_iter().partition(|item| item.item_type().map(str::to_owned) == kept_type);
            let other_note = (!other.is_empty()).then(|| {
                format!(
                    "{} {} another item type; change the type in Zotero to merge {}",
                    other.iter().map(|i| i.key.as_str()).collect::<Vec<_>>().join(", "),
                    if other.len() == 1 { "has" } else { "have" },
                    if other.len() == 1 { "it" } else { "them" },
                )
            });
            let slot = match MergePlan::new(same.clone()) {
                Ok(plan) if input.merge && merges >= MAX_MERGES_PER_CALL => {
                    let mut out = preview(reason, &plan);
                    out.note = Some(format!(
                        "deferred: at most {MAX_MERGES_PER_CALL} groups are merged per call; call again to continue"
                    ));
                    Slot::Listed(out)
                }
                Ok(plan) => {
                    if input.merge {
                        merges += 1;
                    }
                    Slot::Planned(reason, plan)
                }
                Err(refused) => {
                    let mut out = preview_of(reason, &same);
                    out.note = Some(refused.to_string());
                    Slot::Listed(out)
                }
            };
            slots.push((slot, other, other_note));
        }
        let planned: Vec<&MergePlan> = slots
            .iter()
            .filter_map(|(slot, _, _)| match slot {
                Slot::Planned(_, plan) => Some(plan),
                Slot::Listed(_) => None,
            })
            .collect();
        let writer = merge_writer(ctx, input.merge, &planned).await?;
        let mut groups = Vec::new();
        for (slot, other, other_note) in slots {
            let mut out = match slot {
                Slot::Planned(reason, plan) => run(zotero, writer, reason, plan).await,
                Slot::Listed(out) => out,
            };
            out.keys.extend(other.iter().map(|i| i.key.clone()));
            out.titles.extend(other.iter().map(|i| i.field("title").unwrap_or_default().to_owned()));
            if let Some(note) = other_note {
                out.note = Some(match out.note {
                    Some(first) => format!("{first}; {note}"),
                    None => note,
                });
            }
            groups.push(out);
        }
        Ok(FindDuplicatesOutput { scanned, groups, groups_total, next_offset, offset: paging.offset, mirror, note })
    }
}

/// A group found by a scan: merged (or previewed) when its plan holds, else only listed with why.
enum Slot {
    Planned(&'static str, MergePlan),
    Listed(DuplicateGroupOut),
}

/// The writer for `plans` once the person allowed them (`merge`), or none for a dry run.
async fn merge_writer<'a>(
    ctx: &'a RequestContext,
    merge: bool,
    plans: &[&MergePlan],
) -> Result<Option<&'a zotero_mcp_core::zotero::ZoteroWriter>, ToolError> {
    if !merge {
        return Ok(None);
    }
    Ok(Some(ctx.confirm(merging_plan(plans)).await?.writer()?))
}

/// What the merges will do, group by group: the copy kept, the copies trashed, and what moves to the kept one.
fn merging_plan(plans: &[&MergePlan]) -> Proposal {
    let title = |item: &ZoteroObject| title_of(&item.data);
    let mut lines = vec![format!(
        "Merge {} group(s) of duplicates. In each, the first item is kept; the others move to the trash after their \
         notes, files, tags, collections and missing fields move onto it:",
        plans.len()
    )];
    for plan in plans.iter().take(NAMED) {
        let children: u64 =
            plan.others.iter().filter_map(|item| item.meta.get("numChildren").and_then(Value::as_u64)).sum();
        let gained: Vec<String> = plan.gained_fields().keys().cloned().collect();
        lines.push(format!("- keep \u{201c}{}\u{201d} ({})", title(&plan.master), plan.master.key));
        for other in &plan.others {
            lines.push(format!("  - trash \u{201c}{}\u{201d} ({})", title(other), other.key));
        }
        let mut moves = Vec::new();
        if children > 0 {
            moves.push(format!("{children} note(s) and attachment(s) move to the kept item"));
        }
        if !gained.is_empty() {
            moves.push(format!("it gains {}", gained.join(", ")));
        }
        if !moves.is_empty() {
            lines.push(format!("  - {}", moves.join("; ")));
        }
    }
    if plans.len() > NAMED {
        lines.push(format!("- \u{2026} and {} more group(s)", plans.len() - NAMED));
    }
    Proposal::new(lines.join("\n")).ask_if(!plans.is_empty())
}

/// Merges `plan` when a writer is given, else describes it.
async fn run(
    zotero: &zotero_mcp_core::zotero::ZoteroClient,
    writer: Option<&zotero_mcp_core::zotero::ZoteroWriter>,
    reason: &str,
    plan: MergePlan,
) -> DuplicateGroupOut {
    let Some(writer) = writer else { return preview(reason, &plan) };
    let report = merge(zotero, writer, &plan).await;
    merged(reason, &plan, report)
}

fn preview(reason: &str, plan: &MergePlan) -> DuplicateGroupOut {
    let mut out =
        preview_of(reason, &std::iter::once(plan.master.clone()).chain(plan.others.clone()).collect::<Vec<_>>());
    out.gained_fields = plan.gained_fields().keys().cloned().collect();
    out
}

fn preview_of(reason: &str, items: &[ZoteroObject]) -> DuplicateGroupOut {
    DuplicateGroupOut {
        reason: reason.to_owned(),
        keys: items.iter().map(|i| i.key.clone()).collect(),
        titles: items.iter().map(|i| i.field("title").unwrap_or_default().to_owned()).collect(),
        merged: false,
        gained_fields: Vec::new(),
        moved_children: Vec::new(),
        trashed: Vec::new(),
        note: None,
    }
}

fn merged(reason: &str, plan: &MergePlan, report: MergeReport) -> DuplicateGroupOut {
    let mut out = preview(reason, plan);
    out.merged = report.master_updated && report.not_trashed.is_empty();
    out.gained_fields = if report.master_updated { report.gained_fields } else { Vec::new() };
    out.moved_children = report.moved_children;
    out.trashed = report.trashed;
    out.note = report.stopped.map(|why| format!("the merge stopped: {why}"));
    out
}
