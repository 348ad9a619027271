//! `zotero_undo`: the undo journal ([`crate::journal`]) as a tool. Without `id` it lists the caller's recent
//! changes, newest first, with what each did; with `id` it turns one back, every restoring write
//! version-checked (an object changed since is named and left alone). The undo is journalled like any write,
//! so it can be undone in turn.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use zotero_mcp_core::calendar::iso_time;
use zotero_mcp_core::files::{FileAction, StoreKind};
use zotero_mcp_core::zotero::journal::Change;

use crate::call::settle_cut_off;
use crate::confirm::{named, Proposal};
use crate::context::RequestContext;
use crate::journal::undo::{self, Outcome, Undone};
use crate::journal::Entry;
use crate::mcp::{Tool, ToolError, ToolSpec};

/// Objects named per listed entry; the rest are counted.
const OBJECTS_LISTED: usize = 10;

fn default_limit() -> usize {
    10
}

/// Arguments of `zotero_undo`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UndoInput {
    /// As listed; omitted: list the changes.
    #[schemars(regex(pattern = r"^[0-9a-z]{1,10}-[0-9a-f]{4}$"))]
    pub id: Option<String>,
    // Listing: how many changes to skip (from `nextOffset`).
    #[serde(default)]
    #[schemars(default)]
    pub offset: usize,
    // Listing: how many changes to show, newest first.
    #[serde(default = "default_limit")]
    #[schemars(default = "default_limit")]
    #[validate(range(min = 1, max = 50))]
    pub limit: usize,
}

/// One object an entry changed.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChangedObject {
    pub key: String,
    /// `item` or `collection`.
    pub kind: String,
    pub title: String,
    /// `created`, `changed` (with `fields`), `trashedOrRestored`, or `deleted` (for good).
    pub change: String,
    /// For `changed`: the fields written.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub fields: Vec<String>,
}

/// One recent write call.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct JournalEntry {
    /// What `id` takes to undo it.
    pub id: String,
    /// When it was made (UTC).
    pub at: String,
    /// The tool that made it.
    pub tool: String,
    /// The library it changed (`users/<id>`, `groups/<id>`); absent for the configured one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub library: Option<String>,
    /// What it did, in a few words.
    pub summary: String,
    /// The first objects it changed.
    pub objects: Vec<ChangedObject>,
    /// Objects changed beyond those listed.
    #[serde(skip_serializing_if = "is_zero")]
    pub more_objects: usize,
    /// Files replaced or removed (attachment keys), and whether the earlier file is kept.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<String>,
    /// What undoing it cannot put back.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub limits: Vec<String>,
    /// The change this one undid, when it is an undo.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub undoes: Option<String>,
    /// The undo that turned it back already.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub undone_by: Option<String>,
    /// The call stopped before it returned (cut off, or still running): `objects` are what landed.
    #[serde(skip_serializing_if = "is_false")]
    pub incomplete: bool,
    /// Keys of objects it was writing when it stopped, not known to have landed: undoing it reads them back
    /// first, and turns back those that did.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub in_flight: Vec<String>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

fn is_false(value: &bool) -> bool {
    !*value
}

/// Result of `zotero_undo`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UndoOutput {
    /// Listing (no `id`): the recent changes, newest first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entries: Option<Vec<JournalEntry>>,
    /// Listing: the `offset` of the next page, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<usize>,
    /// Undo (`id`): the change turned back.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub undone: Option<JournalEntry>,
    /// Undo: each object and what became of it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub objects: Option<Vec<Undone>>,
    /// Undo: what was not put back and why (files, limits).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// How many days changes are kept.
    pub journal_days: u32,
}

pub struct Undo;

impl Tool for Undo {
    type Input = UndoInput;
    type Output = UndoOutput;
    const SPEC: ToolSpec = ToolSpec::write(
        "zotero_undo",
        "List or undo recent changes",
        "Lists the changes you made through this server, newest first, or with `id` undoes one, checking each \
         object against the version the change left: anything edited since is named and left alone. An undo can \
         be undone.",
    )
    .confirms();

    fn render(output: &UndoOutput) -> String {
        render(output)
    }

    /// An undo may delete what its change created (a listing changes nothing): asked whenever it would.
    fn needs_confirmation(input: &UndoInput) -> bool {
        input.id.is_some()
    }

    async fn call(ctx: &RequestContext, input: UndoInput) -> Result<UndoOutput, ToolError> {
        let journal = ctx.journal().await?.ok_or_else(|| {
            ToolError::Failed(
                "This server keeps no undo journal (JOURNAL_DAYS is 0), so there is nothing to list or undo. Ask \
                 whoever runs it to set JOURNAL_DAYS (30 by default)."
                    .into(),
            )
        })?;
        let days = journal.days;
        let now_ms = ctx.services().clock().now_ms();
        let Some(id) = input.id else {
            let (entries, more) = journal.recent(now_ms, input.offset, input.limit).await?;
            let mut entries: Vec<JournalEntry> = entries.iter().map(listed).collect();
            // Calls cut off first (not yet undone): what they left half-done is what most needs a decision.
            zotero_mcp_core::sort::sort_by_key(&mut entries, |entry| !entry.incomplete || entry.undone_by.is_some());
            return Ok(UndoOutput {
                entries: Some(entries),
                next_offset: more.then_some(input.offset + input.limit),
                undone: None,
                objects: None,
                notes: Vec::new(),
                journal_days: days,
            });
        };
        // Only this route's and library's entry: another's is refused saying where it was made.
        let mut entry = journal.load(&id).await?;
        if let Some(by) = &entry.undone_by {
            return Err(ToolError::Failed(format!(
                "Change {id} was already undone by {by}. To redo it, undo {by}. Nothing was changed."
            )));
        }
        // A call cut off while writes were on their way: read them back, so those that landed are undone too.
        let mut unread = None;
        if !entry.pending.is_empty() {
            match settle_cut_off(&mut entry, ctx.zotero()?).await {
                Ok(()) => {
                    let _ = journal.save(&mut entry).await;
                }
                Err(error) => unread = Some(error),
            }
        }
        // Deleting what the change created is as final as any permanent delete: the person is asked first.
        // An undo that only writes earlier fields back or creates again goes ahead unasked.
        let confirmed = ctx.confirm(undo_plan(&entry)).await?;
        ctx.undoing(&id);
        let writer = confirmed.writer()?;
        // Files kept to put back, or a new attachment's file to remove with it.
        let keeps_webdav_files =
            entry.files.iter().any(|f| f.store == StoreKind::WebDav && (f.kept || f.action == FileAction::Created));
        let dav = if keeps_webdav_files { ctx.kept_files_writer() } else { None };
        let report = undo::undo(&entry, writer, dav).await;
        let mut notes = report.notes;
        if !entry.pending.is_empty() {
            let keys: Vec<&str> = entry.pending.iter().map(|p| p.change.key()).collect();
            let why = unread.map(|error| format!(" (reading them back failed: {error})")).unwrap_or_default();
            notes.push(format!(
                "Not known whether {id} also wrote {}{why}: read them, and turn back by hand what it changed.",
                keys.join(", ")
            ));
        }
        let left: Vec<&str> =
            report.objects.iter().filter(|o| o.outcome == Outcome::ChangedSince).map(|o| o.key.as_str()).collect();
        if !left.is_empty() {
            notes.insert(
                0,
                format!(
                    "Left as they are, because they changed after {id}: {}. Read them and redo by hand what still \
                     needs undoing.",
                    left.join(", ")
                ),
            );
        }
        let anything_undone = report
            .objects
            .iter()
            .any(|o| matches!(o.outcome, Outcome::Restored | Outcome::Removed | Outcome::Recreated));
        if anything_undone {
            entry.undone_by = Some(ctx.journal_id().to_owned());
            if let Err(error) = journal.save(&mut entry).await {
                notes.push(format!("The journal could not mark {id} as undone ({error}); do not undo it twice."));
            }
        }
        Ok(UndoOutput {
            entries: None,
            next_offset: None,
            undone: Some(listed(&entry)),
            objects: Some(report.objects),
            notes,
            journal_days: days,
        })
    }
}

/// The question before an undo: what it would delete for good, by name. Asked only when that is anything.
fn undo_plan(entry: &Entry) -> Proposal {
    let removals = undo::removals(entry);
    let others = entry.changes.len().saturating_sub(removals.len());
    let rest = match others {
        0 => String::new(),
        n => format!("\nIts other {n} change(s) are turned back as well."),
    };
    let objects = named(removals.iter().map(|(_, key, title)| (key.as_str(), title.clone())));
    let summary = format!(
        "Undo {} ({}, {}): delete for good the {} object(s) it created:\n{objects}\nAn item that has notes or \
         attachments added since is left as it is.{rest}",
        entry.id,
        entry.tool,
        iso_time(entry.at_ms),
        removals.len(),
    );
    Proposal::new(summary).listing(objects).ask_if(!removals.is_empty())
}

fn listed(entry: &Entry) -> JournalEntry {
    let objects = entry.changes.iter().take(OBJECTS_LISTED).map(changed_object).collect();
    JournalEntry {
        id: entry.id.clone(),
        at: iso_time(entry.at_ms),
        tool: entry.tool.clone(),
        library: entry.library.clone(),
        summary: entry.summary(),
        objects,
        more_objects: entry.changes.len().saturating_sub(OBJECTS_LISTED),
        files: entry
            .files
            .iter()
            .map(|f| match f.action {
                FileAction::Created => format!("{} ({}, new file)", f.key, f.store.name()),
                _ => {
                    format!("{} ({}, earlier file {})", f.key, f.store.name(), if f.kept { "kept" } else { "not kept" })
                }
            })
            .collect(),
        limits: entry.limits(),
        undoes: entry.undoes.clone(),
        undone_by: entry.undone_by.clone(),
        incomplete: !entry.complete,
        in_flight: entry.pending.iter().map(|p| p.change.key().to_owned()).collect(),
    }
}

fn changed_object(change: &Change) -> ChangedObject {
    let (label, fields) = match change {
        Change::Created { .. } => ("created", Vec::new()),
        Change::Updated { before, .. } if before.contains_key("deleted") => ("trashedOrRestored", Vec::new()),
        Change::Updated { before, .. } => ("changed", before.keys().cloned().collect()),
        Change::Deleted { .. } => ("deleted", Vec::new()),
    };
    ChangedObject {
        key: change.key().to_owned(),
        kind: change.kind().name().to_owned(),
        title: change.title().to_owned(),
        change: label.to_owned(),
        fields,
    }
}

fn render(output: &UndoOutput) -> String {
    let mut lines = Vec::new();
    if let Some(entries) = &output.entries {
        if entries.is_empty() {
            lines.push(format!(
                "No changes in the undo journal (it keeps {} days of changes made through this server).",
                output.journal_days
            ));
        }
        for entry in entries {
            lines.push(entry_line(entry));
        }
        if let Some(next) = output.next_offset {
            lines.push(format!("\nMore changes: call again with offset={next}."));
        }
        if !entries.is_empty() {
            lines.push("\nUndo one with zotero_undo and its id.".into());
        }
    }
    if let (Some(entry), Some(objects)) = (&output.undone, &output.objects) {
        lines.push(format!("Undid {} ({}, {}): {}", entry.id, entry.tool, entry.at, entry.summary));
        for object in objects {
            let verb = match object.outcome {
                Outcome::Restored => "restored",
                Outcome::Removed => "removed (it had been created)",
                Outcome::Recreated => "created again",
                Outcome::ChangedSince => "LEFT AS IT IS",
                Outcome::AlreadyDone => "already as before",
                Outcome::Failed => "FAILED",
                Outcome::Unknown => "UNKNOWN whether undone",
            };
            let detail = object.detail.as_deref().map(|d| format!(": {d}")).unwrap_or_default();
            lines.push(format!("- {} {} \"{}\" — {verb}{detail}", object.kind, object.key, object.title));
        }
    }
    for note in &output.notes {
        lines.push(format!("\nNote: {note}"));
    }
    lines.join("\n")
}

fn entry_line(entry: &JournalEntry) -> String {
    let mut line = format!("- {} · {} · {}: {}", entry.id, entry.at, entry.tool, entry.summary);
    if entry.incomplete {
        line.push_str(
            " — INCOMPLETE: the call stopped before it returned (cut off, or still running); what it wrote is \
             listed. Undo it, or finish what it left",
        );
    }
    if let Some(library) = &entry.library {
        line.push_str(&format!(" (in {library})"));
    }
    if let Some(by) = &entry.undone_by {
        line.push_str(&format!(" — undone by {by}"));
    }
    if let Some(of) = &entry.undoes {
        line.push_str(&format!(" — the undo of {of}"));
    }
    for object in &entry.objects {
        let fields = if object.fields.is_empty() { String::new() } else { format!(" ({})", object.fields.join(", ")) };
        line.push_str(&format!("\n  - {} {} \"{}\": {}{fields}", object.kind, object.key, object.title, object.change));
    }
    if entry.more_objects > 0 {
        line.push_str(&format!("\n  - and {} more", entry.more_objects));
    }
    if !entry.in_flight.is_empty() {
        line.push_str(&format!(
            "\n  - on their way when it stopped, not known to have landed: {} (undoing it reads them back first)",
            entry.in_flight.join(", ")
        ));
    }
    for file in &entry.files {
        line.push_str(&format!("\n  - file of {file}"));
    }
    for limit in &entry.limits {
        line.push_str(&format!("\n  - {limit}"));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_utc() {
        assert_eq!(iso_time(0), "1970-01-01T00:00:00Z");
        assert_eq!(iso_time(1_764_820_800_000 + 3_723_000), "2025-12-04T05:02:03Z");
    }
}
