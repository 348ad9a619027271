//! The undo journal: what each write call changed, kept per user in `CACHE_KV` for `JOURNAL_DAYS` (30 by
//! default), so that `zotero_undo` can list it and turn it back.
//!
//! Entries are made by construction, not by tools remembering to: the writers record every change they make
//! (`zotero_mcp_core::zotero::journal`, `zotero_mcp_core::files::FileLog`), and the registry keeps a call's
//! record once the tool returns ([`crate::context::RequestContext::keep_journal`]), whether it succeeded or
//! failed part-way. One KV value per entry under `journal:<user>:<newest-first key>`, so a prefix listing is
//! newest first; bounded in size ([`MAX_ENTRY_BYTES`]) and count ([`MAX_ENTRIES`]).

pub mod undo;

use serde::{Deserialize, Serialize};
use zotero_mcp_core::files::{FileAction, FileChange, StoreKind};
use zotero_mcp_core::platform::{KvError, KvKey, KvStore, KvWrite};
use zotero_mcp_core::zotero::journal::Change;

/// Entries kept per user; the oldest go first.
pub const MAX_ENTRIES: usize = 200;
/// The largest entry kept, in bytes of JSON. Changes beyond it are counted in [`Entry::omitted`] (they cannot
/// be undone) rather than making the entry unstorable.
pub const MAX_ENTRY_BYTES: usize = 1 << 20;
/// KV keeps an entry this long past its expiry, so the prune that removes its kept files still finds it.
const GRACE_SECS: u64 = 2 * 86_400;
/// Keys sort newest first: this minus the time.
const NEWEST_FIRST: u64 = 9_999_999_999_999;

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
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl Entry {
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
            let lost: Vec<&str> =
                self.files.iter().filter(|f| !f.kept && f.store == store).map(|f| f.key.as_str()).collect();
            if !lost.is_empty() {
                limits.push(format!(
                    "The earlier file of {} is not kept: {why}, so undoing restores the attachment's fields but not \
                     the earlier file.",
                    lost.join(", ")
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

/// Why the journal could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    #[error("the undo journal could not be reached ({0}); try again in a moment")]
    Kv(#[from] KvError),
    #[error(
        "`{0}` is not an undo journal id (they look like `m3k9x2ab-7f3c`): call zotero_undo without `id` to list \
         the recent changes and their ids"
    )]
    BadId(String),
    #[error("the undo journal holds no change `{0}` for you: it may have expired. Call zotero_undo without `id` to list the recent ones")]
    NotFound(String),
    #[error("the undo journal entry `{0}` is unreadable ({1}); it cannot be undone")]
    Corrupt(String, String),
}

/// A new entry id for a call starting at `now_ms`.
pub fn new_id(now_ms: u64) -> String {
    let mut random = [0u8; 2];
    // Two random bytes only tell apart calls of the same millisecond: a clock-only id is still usable.
    let _ = getrandom::fill(&mut random);
    format!("{}-{:02x}{:02x}", base36(now_ms), random[0], random[1])
}

fn base36(mut n: u64) -> String {
    const DIGITS: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut out = Vec::new();
    loop {
        out.push(DIGITS[(n % 36) as usize]);
        n /= 36;
        if n == 0 {
            break;
        }
    }
    out.reverse();
    String::from_utf8(out).unwrap_or_default()
}

/// The KV key of entry `id` of `user`: the time counted down, so a listing is newest first.
fn entry_key(user: &str, id: &str) -> Result<String, JournalError> {
    let bad = || JournalError::BadId(id.chars().take(40).collect());
    let (time, random) = id.split_once('-').ok_or_else(bad)?;
    if time.is_empty()
        || time.len() > 10
        || random.len() != 4
        || !random.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
    {
        return Err(bad());
    }
    let at_ms = u64::from_str_radix(time, 36).map_err(|_| bad())?;
    let countdown = NEWEST_FIRST.checked_sub(at_ms).ok_or_else(bad)?;
    Ok(format!("{}{countdown:013}-{random}", prefix(user)))
}

fn prefix(user: &str) -> String {
    format!("journal:{user}:")
}

/// The journal of one user, over a KV store.
pub struct Journal<'a> {
    pub kv: &'a dyn KvStore,
    pub user: &'a str,
    /// How long entries are kept, in days.
    pub days: u32,
}

impl Journal<'_> {
    /// Stores `entry`, cut to [`MAX_ENTRY_BYTES`] (changes beyond it counted in `omitted`).
    pub async fn save(&self, entry: &mut Entry) -> Result<(), JournalError> {
        let mut text =
            serde_json::to_string(&entry).map_err(|e| JournalError::Corrupt(entry.id.clone(), e.to_string()))?;
        while text.len() > MAX_ENTRY_BYTES && entry.changes.pop().is_some() {
            entry.omitted += 1;
            text = serde_json::to_string(&entry).map_err(|e| JournalError::Corrupt(entry.id.clone(), e.to_string()))?;
        }
        let ttl = u64::from(self.days) * 86_400 + GRACE_SECS;
        self.kv.put(&entry_key(self.user, &entry.id)?, &text, KvWrite::ExpiresIn(ttl)).await?;
        Ok(())
    }

    /// Entry `id`.
    pub async fn load(&self, id: &str) -> Result<Entry, JournalError> {
        let text =
            self.kv.get(&entry_key(self.user, id)?).await?.ok_or_else(|| JournalError::NotFound(id.to_owned()))?;
        let entry: Entry =
            serde_json::from_str(&text).map_err(|e| JournalError::Corrupt(id.to_owned(), e.to_string()))?;
        Ok(entry)
    }

    /// Up to `limit` entries, newest first, not yet expired at `now_ms`, from the `offset`-th on; and whether
    /// more follow.
    pub async fn recent(&self, now_ms: u64, offset: usize, limit: usize) -> Result<(Vec<Entry>, bool), JournalError> {
        let names = self.names().await?;
        let wanted: Vec<&str> = names.iter().skip(offset).take(limit + 1).map(String::as_str).collect();
        let texts = self.kv.get_many(&wanted).await?;
        let mut entries: Vec<Entry> = texts
            .into_iter()
            .flatten()
            .filter_map(|text| serde_json::from_str::<Entry>(&text).ok())
            .filter(|entry| !self.expired(entry, now_ms))
            .collect();
        let more = entries.len() > limit;
        entries.truncate(limit);
        Ok((entries, more))
    }

    /// Removes the entries past their time and those beyond [`MAX_ENTRIES`]; returns them, so that the files
    /// they kept can be removed too. Only those entries are read: the listing's expiry times tell which they are.
    pub async fn prune(&self, now_ms: u64) -> Result<Vec<Entry>, JournalError> {
        let keys = self.keys().await?;
        let now_secs = now_ms / 1000;
        let mut gone = Vec::new();
        for (index, key) in keys.iter().enumerate() {
            let past_time = key.expiration.is_some_and(|at| at.saturating_sub(GRACE_SECS) < now_secs);
            if index < MAX_ENTRIES && !past_time {
                continue;
            }
            if let Some(entry) =
                self.kv.get(&key.name).await?.and_then(|text| serde_json::from_str::<Entry>(&text).ok())
            {
                gone.push(entry);
            }
            self.kv.delete(&key.name).await?;
        }
        Ok(gone)
    }

    fn expired(&self, entry: &Entry, now_ms: u64) -> bool {
        entry.at_ms + u64::from(self.days) * 86_400_000 < now_ms
    }

    /// Every entry's KV key, newest first (a few pages at most: the count is bounded by the prune).
    async fn names(&self) -> Result<Vec<String>, JournalError> {
        Ok(self.keys().await?.into_iter().map(|key| key.name).collect())
    }

    async fn keys(&self) -> Result<Vec<KvKey>, JournalError> {
        let prefix = prefix(self.user);
        let mut keys = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..4 {
            let page = self.kv.list(&prefix, cursor.as_deref(), 1000).await?;
            keys.extend(page.keys);
            match page.cursor {
                Some(next) => cursor = Some(next),
                None => break,
            }
        }
        keys.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(keys)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_map_to_keys_that_list_newest_first() {
        let older = new_id(1_700_000_000_000);
        let newer = new_id(1_800_000_000_000);
        let (older, newer) =
            (entry_key("owner", &older).unwrap_or_default(), entry_key("owner", &newer).unwrap_or_default());
        assert!(newer < older, "{newer} should sort before {older}");
        assert!(newer.starts_with("journal:owner:"));
        for bad in ["", "abc", "zzzzzzzzzzzz-0000", "m3k9x2ab-XYZW", "m3k9x2ab-12345", "-1234"] {
            assert!(matches!(entry_key("owner", bad), Err(JournalError::BadId(_))), "{bad}");
        }
    }
}
