//! The record step of a call: what its writers logged becomes one undo journal entry once the tool has
//! returned, whether it succeeded or failed part-way. While the tool runs, the entry is kept ahead of its
//! writes in steps ([`Record::flush`], driven by [`crate::context::RequestContext::journaled`]): each write
//! waits until the step saying what it is about to send (and what landed before it) is stored, so a call cut
//! off before it returns still leaves an entry saying what landed, and what was on its way, which a read-back
//! settles ([`settle_cut_off`]; `crate::journal`).

use std::cell::{Cell, RefCell};

use zotero_mcp_core::mirror;
use zotero_mcp_core::zotero::{ObjectKey, PendingOutcome, ZoteroClient, ZoteroError};

use super::Target;
use crate::grant::Grant;
use crate::journal::{self, Entry, Journal, Step};

/// What a call did that outlives it: whether it took a writer, the entry it undoes, its journal entry's id.
pub struct Record {
    tool: &'static str,
    journal_id: String,
    /// A writer was handed out: from then on the result reports a change that was (or may have been) made, so
    /// it is sent whatever its size, and the writers' logs are journaled.
    writer_taken: Cell<bool>,
    /// The entry this call undoes, when it is `zotero_undo`.
    undoes: RefCell<Option<String>>,
    /// How much of the entry is saved ahead of the call's return.
    ahead: RefCell<Ahead>,
}

/// The entry saved while the call runs: the step keys written, how many of the writer's changes, noted writes
/// and file changes they hold, and whether to stop trying (no journal, or KV refused: the record step still
/// says so when the tool returns).
#[derive(Default)]
struct Ahead {
    steps: Vec<String>,
    landed: usize,
    pending: usize,
    files: usize,
    given_up: bool,
}

/// Calls cut off that one answer names; more wait for the next write call.
const CUT_OFF_NAMED: usize = 3;
/// Objects named per call cut off.
const OBJECTS_NAMED: usize = 5;

impl Record {
    /// A call's record, its journal id made from the time (`now_ms`).
    pub fn new(tool: &'static str, now_ms: u64) -> Self {
        Self {
            tool,
            journal_id: journal::new_id(now_ms),
            writer_taken: Cell::new(false),
            undoes: RefCell::new(None),
            ahead: RefCell::default(),
        }
    }

    pub fn journal_id(&self) -> &str {
        &self.journal_id
    }

    pub fn writer_taken(&self) -> bool {
        self.writer_taken.get()
    }

    pub(crate) fn take_writer(&self) {
        self.writer_taken.set(true);
    }

    /// Marks the call as the undo of entry `id` (its own entry then says so).
    pub fn undoing(&self, id: &str) {
        *self.undoes.borrow_mut() = Some(id.to_owned());
    }

    /// Whether the call has something to save before its next write goes out: it took a writer and has saved no
    /// step yet (the entry that says what it is about to do), or something was logged since its last step.
    pub(crate) fn unsaved(&self, target: &Target) -> bool {
        let ahead = self.ahead.borrow();
        if !self.writer_taken.get() || ahead.given_up {
            return false;
        }
        let logged = target
            .zotero()
            .is_ok_and(|writer| writer.log().len() > ahead.landed || writer.log().pending_len() > ahead.pending);
        ahead.steps.is_empty() || logged || target.files_logged() > ahead.files
    }

    /// Whether something landed (an object or a file changed) since the last step: worth saving while the call
    /// waits on something else, so a listing of a call cut off later shows it without reading it back.
    pub(crate) fn landed_unsaved(&self, target: &Target) -> bool {
        let ahead = self.ahead.borrow();
        if !self.writer_taken.get() || ahead.given_up {
            return false;
        }
        target.zotero().is_ok_and(|writer| writer.log().len() > ahead.landed) || target.files_logged() > ahead.files
    }

    /// Whether saving ahead was given up (no journal, or KV refused): writes no longer wait for it.
    pub(crate) fn given_up(&self) -> bool {
        self.ahead.borrow().given_up
    }

    /// Saves the next step of the call's entry: the entry itself, marked incomplete, when none is saved yet;
    /// then what landed and what is about to be sent since. One KV write, however many objects it holds.
    pub(crate) async fn flush(&self, target: &Target, grant: &Grant) {
        let journal = match journal_of(target, grant).await {
            Ok(Some(journal)) => journal,
            _ => return self.ahead.borrow_mut().given_up = true,
        };
        let (n, landed, pending, files) = {
            let ahead = self.ahead.borrow();
            (ahead.steps.len(), ahead.landed, ahead.pending, ahead.files)
        };
        let mut step = Step::default();
        if let Ok(writer) = target.zotero() {
            step.changes = writer.log().since(landed);
            step.pending = writer.log().pending_since(pending);
        }
        let files_now = target.files_logged();
        if files_now > files {
            step.files = target.files_so_far();
        }
        let mut entry = Entry::new(self.journal_id.clone(), target.services().clock().now_ms(), self.tool);
        entry.library = target.selected_library().map(|selected| selected.id.to_string());
        entry.undoes = self.undoes.borrow().clone();
        entry.run = target.services().platform().process_run.clone();
        let saved = journal.save_step(&entry, n, &step).await;
        let mut ahead = self.ahead.borrow_mut();
        match saved {
            Ok(key) => {
                ahead.steps.push(key);
                ahead.landed = landed + step.changes.len();
                ahead.pending = pending + step.pending.len();
                ahead.files = files_now;
            }
            Err(_) => ahead.given_up = true,
        }
    }

    /// Records what the call changed as one undo journal entry: every change made through the target's
    /// writers, which log them themselves, replacing the steps kept while it ran. Returns lines for the answer:
    /// how to undo, or why it cannot be; and earlier calls on the route that were cut off, named once.
    pub async fn keep(&self, target: &Target, grant: &Grant) -> Vec<String> {
        if !self.writer_taken.get() {
            return Vec::new();
        }
        write_through(target).await;
        let changes = target.zotero().map(|writer| writer.log().take()).unwrap_or_default();
        let files = target.logged_files();
        let steps = std::mem::take(&mut self.ahead.borrow_mut().steps);
        // A call that changed nothing and saved nothing ahead costs no journal request (nor the route's lookup).
        if changes.is_empty() && files.is_empty() && steps.is_empty() {
            return Vec::new();
        }
        let journal = match journal_of(target, grant).await {
            Ok(Some(journal)) => journal,
            Ok(None) => return Vec::new(),
            Err(_) if changes.is_empty() && files.is_empty() => return Vec::new(),
            Err(error) => {
                return vec![format!(
                    "This change could not be recorded for undo ({error}); zotero_undo cannot turn it back."
                )]
            }
        };
        let now_ms = target.services().clock().now_ms();
        if changes.is_empty() && files.is_empty() {
            // Nothing changed: the entry saved ahead goes (best effort: one left is named as cut off later).
            for key in steps {
                let _ = journal.kv.delete(&key).await;
            }
            return Vec::new();
        }
        let mut entry = Entry {
            library: target.selected_library().map(|selected| selected.id.to_string()),
            changes,
            files,
            undoes: self.undoes.borrow_mut().take(),
            steps,
            ..Entry::new(self.journal_id.clone(), now_ms, self.tool)
        };
        let days = journal.days;
        let mut lines = vec![match journal.save(&mut entry).await {
            Ok(()) => format!("Undo: zotero_undo with id \"{}\" turns this change back (kept {days} days).", entry.id),
            Err(error) => {
                format!("This change could not be recorded for undo ({error}); zotero_undo cannot turn it back.")
            }
        }];
        // Entries past their time go, with the files they kept (best effort: a file left only takes space).
        let this_run = target.services().platform().process_run.as_deref();
        if let Ok(pruned) = journal.prune(now_ms, &self.journal_id, this_run).await {
            for old in pruned.gone {
                for file in old.files.iter().filter(|f| f.kept) {
                    if let (Some(dav), Ok(key)) = (target.webdav_store(), ObjectKey::parse(&file.key)) {
                        let _ = dav.forget_kept(&key, &old.id).await;
                    }
                }
            }
            let client = target.zotero().ok().map(|writer| &**writer);
            for id in pruned.cut_off.iter().take(CUT_OFF_NAMED) {
                lines.extend(name_cut_off(&journal, client, id).await);
            }
        }
        lines
    }
}

/// A line naming call `id`, cut off before it returned, with what landed (what it was sending read back first,
/// through `client`); its entry is then settled under its own key (still marked incomplete, listed and undone
/// like any other), so it is named once.
async fn name_cut_off(journal: &Journal<'_>, client: Option<&ZoteroClient>, id: &str) -> Option<String> {
    let mut entry = journal.load(id).await.ok()?;
    // A listing a moment behind (Workers KV's is, for up to a minute) may show the steps of a call that has
    // since returned: its own key says so.
    if entry.complete {
        return None;
    }
    if let Some(client) = client {
        // Unread, what it was sending stays pending: named as not known, and read back by an undo.
        let _ = settle_cut_off(&mut entry, client).await;
    }
    let tool = &entry.tool;
    let mut line = if entry.changes.is_empty() && entry.files.is_empty() {
        format!("An earlier call of {tool} (id \"{id}\") was cut off before any of its writes landed.")
    } else {
        format!(
            "An earlier call of {tool} (id \"{id}\") was cut off after writing: {} ({}). These are in the library: \
             do not write them again. Finish what it left undone, or undo it with zotero_undo id \"{id}\".",
            entry.summary(),
            entry.objects_named(OBJECTS_NAMED)
        )
    };
    if !entry.pending.is_empty() {
        let keys: Vec<&str> = entry.pending.iter().take(OBJECTS_NAMED).map(|p| p.change.key()).collect();
        line.push_str(&format!(
            " Not known whether it also wrote {}{}: read them before writing them.",
            keys.join(", "),
            match entry.pending.len().saturating_sub(OBJECTS_NAMED) {
                0 => String::new(),
                more => format!(" and {more} more"),
            }
        ));
    }
    journal.save(&mut entry).await.ok()?;
    Some(line)
}

/// Finds out what the writes a cut-off call was sending did (its [`Entry::pending`]), by reading the objects
/// back through `client`: those that landed join its changes (so an undo turns them back too), those that did
/// not are dropped, those a read cannot decide stay pending.
pub async fn settle_cut_off(entry: &mut Entry, client: &ZoteroClient) -> Result<(), ZoteroError> {
    if entry.pending.is_empty() {
        return Ok(());
    }
    let outcomes = client.settle_pending(&entry.pending).await?;
    let mut unsure = Vec::new();
    for (pending, outcome) in std::mem::take(&mut entry.pending).into_iter().zip(outcomes) {
        match outcome {
            PendingOutcome::Landed(change) => entry.changes.push(change),
            PendingOutcome::NotWritten => {}
            PendingOutcome::Unsure(_) => unsure.push(pending),
        }
    }
    entry.pending = unsure;
    Ok(())
}

/// The caller's undo journal on the target's route and library; `None` when `JOURNAL_DAYS` is 0.
pub async fn journal_of<'a>(
    target: &'a Target,
    grant: &'a Grant,
) -> Result<Option<Journal<'a>>, zotero_mcp_core::zotero::ZoteroError> {
    let days = target.services().config().journal_days;
    if days == 0 {
        return Ok(None);
    }
    Ok(Some(Journal {
        kv: target.services().platform().cache_kv.as_ref(),
        user: &grant.user_id,
        route: target.route().await?,
        days,
    }))
}

/// What the call wrote goes into the library mirror, where there is one, as Zotero answered it: the next call
/// sees it without asking. The mirror is a copy: when this fails, the next pass reads the writes from Zotero.
async fn write_through(target: &Target) {
    let Ok(writer) = target.zotero() else { return };
    let written = writer.log().take_written();
    let Some(db) = target.services().platform().mirror_db.as_deref() else { return };
    if !writer.caps().deletions {
        // Zotero Desktop: no mirror is kept of a library its local API reads whole (`tools::mirrored`).
        return;
    }
    if let Ok(library) = mirror::library_of(writer).await {
        let _ = mirror::write_through(db, &library, &written).await;
    }
}
