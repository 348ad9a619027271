//! The record step of a call: what its writers logged becomes one undo journal entry once the tool has
//! returned, whether it succeeded or failed part-way.

use std::cell::{Cell, RefCell};

use zotero_mcp_core::zotero::ObjectKey;

use super::Target;
use crate::grant::Grant;
use crate::journal::{self, Entry, Journal};

/// What a call did that outlives it: whether it took a writer, the entry it undoes, its journal entry's id.
pub struct Record {
    tool: &'static str,
    journal_id: String,
    /// A writer was handed out: from then on the result reports a change that was (or may have been) made, so
    /// it is sent whatever its size, and the writers' logs are journaled.
    writer_taken: Cell<bool>,
    /// The entry this call undoes, when it is `zotero_undo`.
    undoes: RefCell<Option<String>>,
}

impl Record {
    /// A call's record, its journal id made from the time (`now_ms`).
    pub fn new(tool: &'static str, now_ms: u64) -> Self {
        Self { tool, journal_id: journal::new_id(now_ms), writer_taken: Cell::new(false), undoes: RefCell::new(None) }
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

    /// Records what the call changed as one undo journal entry: every change made through the target's
    /// writers, which log them themselves. Returns a line for the answer: how to undo, or why it cannot be.
    pub async fn keep(&self, target: &Target, grant: &Grant) -> Option<String> {
        if !self.writer_taken.get() {
            return None;
        }
        let changes = target.zotero().map(|writer| writer.log().take()).unwrap_or_default();
        let files = target.logged_files();
        if changes.is_empty() && files.is_empty() {
            return None;
        }
        let journal = match journal_of(target, grant).await {
            Ok(Some(journal)) => journal,
            Ok(None) => return None,
            Err(error) => {
                return Some(format!(
                    "This change could not be recorded for undo ({error}); zotero_undo cannot turn it back."
                ))
            }
        };
        let now_ms = target.services().clock().now_ms();
        let mut entry = Entry {
            id: self.journal_id.clone(),
            at_ms: now_ms,
            tool: self.tool.to_owned(),
            library: target.selected_library().map(|selected| selected.id.to_string()),
            route: None,
            changes,
            files,
            omitted: 0,
            undoes: self.undoes.borrow_mut().take(),
            undone_by: None,
        };
        let saved = journal.save(&mut entry).await;
        // Entries past their time go, with the files they kept (best effort: a file left only takes space).
        if let Ok(gone) = journal.prune(now_ms).await {
            for old in gone {
                for file in old.files.iter().filter(|f| f.kept) {
                    if let (Some(dav), Ok(key)) = (target.webdav_store(), ObjectKey::parse(&file.key)) {
                        let _ = dav.forget_kept(&key, &old.id).await;
                    }
                }
            }
        }
        let days = journal.days;
        Some(match saved {
            Ok(()) => format!("Undo: zotero_undo with id \"{}\" turns this change back (kept {days} days).", entry.id),
            Err(error) => {
                format!("This change could not be recorded for undo ({error}); zotero_undo cannot turn it back.")
            }
        })
    }
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
