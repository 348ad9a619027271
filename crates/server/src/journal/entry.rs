//! One journal entry: what a write call changed, and how it reads in a listing (its summary, the objects it
//! names, what an undo of it cannot bring back).

use serde::{Deserialize, Serialize};
use zotero_mcp_core::files::{FileAction, FileChange, StoreKind};
use zotero_mcp_core::zotero::journal::{Change, Pending};

use super::step_suffix;

/// One write call's changes.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    /// `<time in ms, base 36>-<4 hex digits>`: what `zotero_undo` takes.
    pub id: String,
    pub at_ms: u64,
    /// The tool that made the changes.
    pub tool: String,
    /// The library written (`users/<id>` or `groups/<id>`), or `None` for the configured one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub library: Option<String>,
    /// The route and library written (`users/<id>`, `groups/<id>`, `local/users/0`…), set by [`Journal::save`];
    /// `None` in entries of older versions, which did not record it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub route: Option<String>,
    pub changes: Vec<Change>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<FileChange>,
    /// Changes left out because the entry was over [`MAX_ENTRY_BYTES`]: these cannot be undone.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub omitted: usize,
    /// The entry this one undid, when it was made by `zotero_undo`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub undoes: Option<String>,
    /// The `zotero_undo` entry that undid this one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub undone_by: Option<String>,
    /// Whether the call returned: `false` for one cut off part-way, whose `changes` are what landed before it
    /// stopped. Entries of older versions have no such field and read as complete.
    #[serde(default = "complete", skip_serializing_if = "is_true")]
    pub complete: bool,
    /// Writes the call had sent, or was about to send, when it was cut off, not known to have landed: reading
    /// the objects back tells ([`crate::call::settle_cut_off`]), and what landed then joins `changes`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pending: Vec<Pending>,
    /// The run of the server process that made it, where a process's store is its own (the native server):
    /// a call left in steps by another run is cut off, not still running ([`super::Journal::prune`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<String>,
    /// The step keys this entry was read from (a call still running or cut off): [`Journal::save`] removes
    /// them once the entry is under its own key.
    #[serde(skip)]
    pub steps: Vec<String>,
}

/// A step of a running call's entry after the first: the changes that landed since the step before, the writes
/// noted as about to be sent since, and every file changed so far (a file's record is completed after it is
/// first made, so the newest list stands for all).
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Step {
    #[serde(default)]
    pub changes: Vec<Change>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pending: Vec<Pending>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<FileChange>,
}

impl Step {
    /// A step as stored; an earlier version's is a bare list of the changes that landed.
    fn parse(text: &str) -> Option<Self> {
        serde_json::from_slice(text.as_bytes()).ok().or_else(|| {
            serde_json::from_slice::<Vec<Change>>(text.as_bytes())
                .ok()
                .map(|changes| Step { changes, ..Step::default() })
        })
    }

    pub fn is_empty(&self) -> bool {
        self.changes.is_empty() && self.pending.is_empty() && self.files.is_empty()
    }
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

fn complete() -> bool {
    true
}

fn is_true(value: &bool) -> bool {
    *value
}

impl Entry {
    /// A new entry `id` of `tool` at `at_ms`, nothing in it yet.
    pub fn new(id: String, at_ms: u64, tool: &str) -> Self {
        Self {
            id,
            at_ms,
            tool: tool.to_owned(),
            library: None,
            route: None,
            changes: Vec::new(),
            files: Vec::new(),
            omitted: 0,
            undoes: None,
            undone_by: None,
            complete: true,
            pending: Vec::new(),
            run: None,
            steps: Vec::new(),
        }
    }

    /// The entry of a call still running or cut off, read from its steps (`(key, value)`, in key order): step 0
    /// is the entry as it started, each later one a [`Step`]. A write noted as about to be sent that a later
    /// step shows landed is no longer pending. A step KV has not shown yet, or step 0 missing, still leaves an
    /// entry naming what is known.
    pub(super) fn from_steps(id: &str, at_ms: u64, steps: Vec<(String, Option<String>)>) -> Self {
        let mut entry: Option<Entry> = None;
        let mut later = Vec::new();
        let mut keys = Vec::new();
        for (key, text) in steps {
            let Some(text) = text else { continue };
            if key.ends_with(&step_suffix(0)) {
                entry = serde_json::from_slice(text.as_bytes()).ok();
            } else if let Some(step) = Step::parse(&text) {
                later.push(step);
            }
            keys.push(key);
        }
        let mut entry = entry.unwrap_or_else(|| Entry::new(id.to_owned(), at_ms, "an unrecorded tool"));
        entry.id = id.to_owned();
        entry.complete = false;
        let first = Step {
            changes: std::mem::take(&mut entry.changes),
            pending: std::mem::take(&mut entry.pending),
            files: std::mem::take(&mut entry.files),
        };
        for step in std::iter::once(first).chain(later) {
            for change in step.changes {
                entry.pending.retain(|p| !(p.change.kind() == change.kind() && p.change.key() == change.key()));
                entry.changes.push(change);
            }
            entry.pending.extend(step.pending);
            if !step.files.is_empty() {
                entry.files = step.files;
            }
        }
        entry.steps = keys;
        entry
    }

    /// The objects it changed, as `KEY "title"`, the first `limit` of them (and how many more).
    pub fn objects_named(&self, limit: usize) -> String {
        let mut named: Vec<String> =
            self.changes.iter().take(limit).map(|c| format!("{} \"{}\"", c.key(), c.title())).collect();
        if self.changes.len() > limit {
            named.push(format!("{} more", self.changes.len() - limit));
        }
        named.join(", ")
    }

    /// What the entry did, in a few words: "created 1 item, changed 3 items, moved 2 items to the trash".
    pub fn summary(&self) -> String {
        let mut created = Counts::default();
        let mut changed = Counts::default();
        let mut trashed = Counts::default();
        let mut deleted = Counts::default();
        for change in &self.changes {
            let counts = match change {
                Change::Created { .. } => &mut created,
                Change::Updated { before, .. } if before.contains_key("deleted") => &mut trashed,
                Change::Updated { .. } => &mut changed,
                Change::Deleted { .. } => &mut deleted,
            };
            counts.add(change.kind().name());
        }
        let mut parts = Vec::new();
        created.describe("created", &mut parts);
        changed.describe("changed", &mut parts);
        trashed.describe("moved into or out of the trash", &mut parts);
        deleted.describe("deleted for good", &mut parts);
        let replaced = self.files.iter().filter(|f| f.action == FileAction::Replaced).count();
        let removed = self.files.iter().filter(|f| f.action == FileAction::Removed).count();
        if replaced > 0 {
            parts.push(format!("replaced {replaced} file{}", plural(replaced)));
        }
        if removed > 0 {
            parts.push(format!("removed {removed} file{}", plural(removed)));
        }
        if parts.is_empty() {
            return "no change".into();
        }
        parts.join(", ")
    }

    /// What cannot be undone about this entry, in sentences (empty when all of it can).
    pub fn limits(&self) -> Vec<String> {
        let mut limits = Vec::new();
        if self.omitted > 0 {
            limits.push(format!(
                "{} change{} of this call were too large to keep and cannot be undone.",
                self.omitted,
                plural(self.omitted)
            ));
        }
        for (store, why) in [
            (StoreKind::ZoteroStorage, "Zotero Storage holds one file per attachment"),
            (StoreKind::Desktop, "Zotero Desktop replaced it in its data directory"),
        ] {
            let lost = |action: FileAction| -> Vec<&str> {
                let lost = self.files.iter().filter(|f| !f.kept && f.store == store && f.action == action);
                lost.map(|f| f.key.as_str()).collect()
            };
            let replaced = lost(FileAction::Replaced);
            if !replaced.is_empty() {
                limits.push(format!(
                    "The earlier file of {} is not kept: {why}, so undoing restores the attachment's fields but not \
                     the earlier file.",
                    replaced.join(", ")
                ));
            }
            let removed = lost(FileAction::Removed);
            if !removed.is_empty() {
                limits.push(format!(
                    "The file of {} went with its attachment and is not kept, so undoing brings the attachment back \
                     without its file: store the file again with zotero_put_attachment (replaceAttachmentKey).",
                    removed.join(", ")
                ));
            }
        }
        limits
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

#[derive(Default)]
struct Counts {
    items: usize,
    collections: usize,
}

impl Counts {
    fn add(&mut self, kind: &str) {
        if kind == "collection" {
            self.collections += 1;
        } else {
            self.items += 1;
        }
    }
    fn describe(&self, verb: &str, parts: &mut Vec<String>) {
        let mut objects = Vec::new();
        if self.items > 0 {
            objects.push(format!("{} item{}", self.items, plural(self.items)));
        }
        if self.collections > 0 {
            objects.push(format!("{} collection{}", self.collections, plural(self.collections)));
        }
        if !objects.is_empty() {
            parts.push(format!("{verb} {}", objects.join(" and ")));
        }
    }
}
