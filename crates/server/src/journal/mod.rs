//! The undo journal: what each write call changed, kept per user in `CACHE_KV` for `JOURNAL_DAYS` (30 by
//! default), so that `zotero_undo` can list it and turn it back.
//!
//! Entries are made by construction, not by tools remembering to: the writers record every change they make
//! (`zotero_mcp_core::zotero::journal`, `zotero_mcp_core::files::FileLog`), and the tool pipeline keeps a
//! call's record once the tool returns ([`crate::call::Record::keep`]), whether it succeeded or failed
//! part-way. One KV value per entry under `journal:<user>:<route>:<newest-first key>`, so a prefix listing
//! is newest first; bounded in size ([`MAX_ENTRY_BYTES`]) and count ([`MAX_ENTRIES`] per route).
//!
//! **Kept ahead of the writes.** While a call runs, what it is doing is kept under the entry's key plus
//! `:step:<n>` ([`Journal::save_step`]): step 0 is the entry as it starts, marked incomplete, stored before the
//! call's first write goes out (the writers wait for it: `zotero_mcp_core::write_gate`), with that write as
//! pending ([`Entry::pending`]); each later [`Step`] holds what landed since and the next write about to go (one
//! KV write per Zotero write batch at most: Workers KV takes about one write a second to one key, so no key is
//! rewritten per object). When the call returns, its whole entry is saved under the entry's own key and the
//! steps are removed. A call cut off (a crash, a request the platform stopped) never gets there: its steps stay,
//! and read together they are an entry with `complete: false` listing what landed and what was on its way
//! ([`Journal::recent`], [`Journal::load`]); the next write call on the route reads the latter back and names it
//! once ([`Journal::prune`] finds it, [`Journal::save`] settles it under its own key).
//!
//! **Keyed by route and library.** `<route>` is the library the call wrote and the way it reached it:
//! `users/<id>` or `groups/<id>` through the Web API, `local/users/0` or `local/groups/<id>` through Zotero
//! Desktop's local API ([`crate::context::RequestContext::route`]). The two APIs count versions apart, and an
//! undo writes with the versions its entry recorded, so an entry is listed and undone only on its own route:
//! another route's id is refused, saying where it was made ([`JournalError::OtherRoute`]).
//!
//! Entries an older version of this server wrote (`journal:<user>:<newest-first key>`, no route) cannot tell
//! a Web API change from a Zotero Desktop one, so they are no longer listed, an undo of one is refused
//! ([`JournalError::Unrouted`]), and they are removed with their kept files once past their time.

mod entry;
pub mod undo;

pub use entry::{Entry, Step};

use zotero_mcp_core::platform::{KvError, KvKey, KvStore, KvWrite};

/// Entries kept per user; the oldest go first.
pub const MAX_ENTRIES: usize = 200;
/// The largest entry kept, in bytes of JSON. Changes beyond it are counted in [`Entry::omitted`] (they cannot
/// be undone) rather than making the entry unstorable.
pub const MAX_ENTRY_BYTES: usize = 1 << 20;
/// KV keeps an entry this long past its expiry, so the prune that removes its kept files still finds it.
const GRACE_SECS: u64 = 2 * 86_400;
/// Keys sort newest first: this minus the time.
const NEWEST_FIRST: u64 = 9_999_999_999_999;

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
    /// The entry was made on another route or in another library than this call's.
    #[error("Change `{id}` was made in {there}, and this call works on {here}. {how} Nothing was changed.")]
    OtherRoute { id: String, there: String, here: String, how: String },
    /// The entry was written by an older version of this server, which did not record its route.
    #[error(
        "Change `{0}` was recorded by an earlier version of this server, which did not note whether it went \
         through the Web API or Zotero Desktop (they count versions apart), so it is not undone from here: an \
         undo with the wrong versions could overwrite a later edit. Put it back by hand in Zotero if needed. \
         Nothing was changed."
    )]
    Unrouted(String),
}

impl JournalError {
    /// Entry `id` belongs to route `there`, and this call is on `here`: where and how to undo it instead.
    fn other_route(id: &str, there: &str, here: &str) -> Self {
        let (there_local, there_library) = split_route(there);
        let (here_local, _) = split_route(here);
        let how = if there_local == here_local {
            format!("Call zotero_undo again with library set to {there_library}.")
        } else if there_local {
            "Zotero Desktop's versions are its own, so undo it from the server that reaches that Zotero Desktop \
             (`zotero-mcp serve --local`)."
                .to_owned()
        } else {
            "The Web API's versions are not Zotero Desktop's, so undo it from a server that reaches the Web API \
             (`zotero-mcp serve` without --local, or the Worker)."
                .to_owned()
        };
        Self::OtherRoute { id: id.to_owned(), there: describe_route(there), here: describe_route(here), how }
    }
}

/// Whether a route goes through Zotero Desktop's local API, and its library (`local/groups/5` → true, `groups/5`).
fn split_route(route: &str) -> (bool, &str) {
    match route.strip_prefix("local/") {
        Some(library) => (true, library),
        None => (false, route),
    }
}

/// A route for a person: `groups/5 through the Web API`, `users/0 through Zotero Desktop's local API`.
fn describe_route(route: &str) -> String {
    match split_route(route) {
        (true, library) => format!("{library} through Zotero Desktop's local API"),
        (false, library) => format!("{library} through the Web API"),
    }
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

/// The KV key of entry `id` of `user` on `route`: the time counted down, so a listing is newest first.
fn entry_key(user: &str, route: &str, id: &str) -> Result<String, JournalError> {
    Ok(format!("{}{}", prefix(user, route), entry_name(id)?))
}

/// The key of step `n` of entry `id` (see the module's documentation): the entry's key and `:step:<n>`, the
/// number padded so that a listing gives the steps in order.
fn step_key(user: &str, route: &str, id: &str, n: usize) -> Result<String, JournalError> {
    Ok(format!("{}{}", entry_key(user, route, id)?, step_suffix(n)))
}

fn step_suffix(n: usize) -> String {
    format!("{STEP}{n:04}")
}

const STEP: &str = ":step:";

/// The entry id an entry's key name stands for, and its time: the inverse of [`entry_name`].
fn id_of_name(name: &str) -> Option<(String, u64)> {
    let (countdown, random) = name.split_once('-')?;
    let at_ms = NEWEST_FIRST.checked_sub(countdown.parse().ok()?)?;
    Some((format!("{}-{random}", base36(at_ms)), at_ms))
}

/// One entry's keys in a listing: its own key (`main`, once the call returned) and the steps of a call still
/// running or cut off.
struct Group {
    /// The key name after the route: `<countdown>-<random>`.
    name: String,
    main: Option<KvKey>,
    steps: Vec<KvKey>,
}

impl Group {
    fn keys(&self) -> impl Iterator<Item = &KvKey> {
        self.main.iter().chain(&self.steps)
    }
    /// When KV lets the entry go: its own key's expiry, else its first step's.
    fn expiration(&self) -> Option<u64> {
        self.keys().next().and_then(|key| key.expiration)
    }
}

/// The keys under `prefix` (sorted), grouped by entry, newest first.
fn groups(keys: Vec<KvKey>, prefix: &str) -> Vec<Group> {
    let mut groups: Vec<Group> = Vec::new();
    for key in keys {
        let Some(rest) = key.name.strip_prefix(prefix) else { continue };
        let (name, step) = match rest.split_once(STEP) {
            Some((name, _)) => (name.to_owned(), true),
            None => (rest.to_owned(), false),
        };
        if groups.last().is_none_or(|last| last.name != name) {
            groups.push(Group { name, main: None, steps: Vec::new() });
        }
        let Some(group) = groups.last_mut() else { continue };
        if step {
            group.steps.push(key);
        } else {
            group.main = Some(key);
        }
    }
    groups
}

/// What a prune found: entries removed (their kept files go too), and calls cut off.
#[derive(Default)]
pub struct Pruned {
    pub gone: Vec<Entry>,
    /// Ids of entries whose call stopped before it returned, started longer than [`RUNNING_MS`] ago: still
    /// only in steps, never yet named.
    pub cut_off: Vec<String>,
}

/// A call whose entry has been in steps this long is taken as cut off, not still running on another request
/// (a Worker request ends within minutes; a native call's writes are paced but bounded too).
pub const RUNNING_MS: u64 = 10 * 60 * 1000;

/// The part of an entry's key after its route: `<countdown>-<random>`.
fn entry_name(id: &str) -> Result<String, JournalError> {
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
    Ok(format!("{countdown:013}-{random}"))
}

/// Every entry of `user`, whatever its route (and those of older versions, which have none).
fn user_prefix(user: &str) -> String {
    format!("journal:{user}:")
}

/// The entries of `user` on `route`.
fn prefix(user: &str, route: &str) -> String {
    format!("journal:{user}:{route}:")
}

/// Whether a key's rest after [`user_prefix`] is an entry of an older version: no route, just the countdown.
fn unrouted(rest: &str) -> bool {
    rest.bytes().next().is_some_and(|b| b.is_ascii_digit())
}

/// The journal of one user on one route and library, over a KV store.
pub struct Journal<'a> {
    pub kv: &'a dyn KvStore,
    pub user: &'a str,
    /// `users/<id>`, `groups/<id>`, `local/users/0`, `local/groups/<id>`: see the module's documentation.
    pub route: String,
    /// How long entries are kept, in days.
    pub days: u32,
}

impl Journal<'_> {
    /// Stores `entry`, cut to [`MAX_ENTRY_BYTES`] (changes beyond it counted in `omitted`).
    pub async fn save(&self, entry: &mut Entry) -> Result<(), JournalError> {
        entry.route = Some(self.route.clone());
        let corrupt = |id: &str, e: serde_json::Error| JournalError::Corrupt(id.to_owned(), e.to_string());
        let mut text = serde_json::to_string(&entry).map_err(|e| corrupt(&entry.id, e))?;
        if text.len() > MAX_ENTRY_BYTES {
            // The newest changes go first, as many as the excess takes, from sizes measured once: dropping one
            // at a time and serializing the whole entry again each time is quadratic (minutes of CPU for a few
            // MB in a debug build, far past a Worker's CPU limit).
            let mut excess = text.len() - MAX_ENTRY_BYTES;
            let mut keep = entry.changes.len();
            while excess > 0 && keep > 0 {
                keep -= 1;
                let size = serde_json::to_string(&entry.changes[keep]).map_err(|e| corrupt(&entry.id, e))?.len();
                // Its comma goes with it.
                excess = excess.saturating_sub(size + 1);
            }
            entry.omitted += entry.changes.len() - keep;
            entry.changes.truncate(keep);
            text = serde_json::to_string(&entry).map_err(|e| corrupt(&entry.id, e))?;
            // The count of omitted changes adds a few digits of its own.
            while text.len() > MAX_ENTRY_BYTES && entry.changes.pop().is_some() {
                entry.omitted += 1;
                text = serde_json::to_string(&entry).map_err(|e| corrupt(&entry.id, e))?;
            }
        }
        self.kv.put(&entry_key(self.user, &self.route, &entry.id)?, &text, self.lifetime()).await?;
        // The entry is under its own key now: the steps it was kept in while its call ran are not needed. One
        // left behind (KV unreachable a moment) is harmless: an entry's own key wins over its steps, and they
        // expire with it.
        for key in std::mem::take(&mut entry.steps) {
            let _ = self.kv.delete(&key).await;
        }
        Ok(())
    }

    /// Saves step `n` of a running call's entry (see the module's documentation): for step 0, `entry` as it
    /// starts (marked incomplete, holding `step`: what landed so far and what it is about to send); for a later
    /// one, `step` alone. Returns the step's key, for [`Entry::steps`].
    pub async fn save_step(&self, entry: &Entry, n: usize, step: &Step) -> Result<String, JournalError> {
        let corrupt = |e: serde_json::Error| JournalError::Corrupt(entry.id.clone(), e.to_string());
        let text = if n == 0 {
            let mut started = entry.clone();
            started.route = Some(self.route.clone());
            started.complete = false;
            started.changes = step.changes.clone();
            started.pending = step.pending.clone();
            started.files = step.files.clone();
            serde_json::to_string(&started).map_err(corrupt)?
        } else {
            serde_json::to_string(step).map_err(corrupt)?
        };
        let key = step_key(self.user, &self.route, &entry.id, n)?;
        self.kv.put(&key, &text, self.lifetime()).await?;
        Ok(key)
    }

    /// Removes steps `0..count` of entry `id`: for a call that took a writer and changed nothing.
    pub async fn drop_steps(&self, id: &str, count: usize) -> Result<(), JournalError> {
        for n in 0..count {
            self.kv.delete(&step_key(self.user, &self.route, id, n)?).await?;
        }
        Ok(())
    }

    fn lifetime(&self) -> KvWrite {
        KvWrite::ExpiresIn(u64::from(self.days) * 86_400 + GRACE_SECS)
    }

    /// Entry `id` of this route; another route's, or one of an older version, is refused saying so.
    pub async fn load(&self, id: &str) -> Result<Entry, JournalError> {
        let key = entry_key(self.user, &self.route, id)?;
        let Some(text) = self.kv.get(&key).await? else {
            // A call still running or cut off: its entry is in steps.
            let steps: Vec<String> =
                self.keys(&format!("{key}{STEP}")).await?.into_iter().map(|key| key.name).collect();
            if steps.is_empty() {
                return Err(self.elsewhere(id).await?);
            }
            let at_ms = entry_name(id).ok().and_then(|name| id_of_name(&name)).map_or(0, |(_, at)| at);
            let mut entry = Entry::from_steps(id, at_ms, self.read(steps).await?);
            entry.route = Some(self.route.clone());
            return Ok(entry);
        };
        let entry: Entry =
            serde_json::from_slice(text.as_bytes()).map_err(|e| JournalError::Corrupt(id.to_owned(), e.to_string()))?;
        // The key says the route; an entry saying another (a value copied between keys) is not trusted either.
        match entry.route.as_deref() {
            Some(route) if route == self.route => Ok(entry),
            Some(route) => Err(JournalError::other_route(id, route, &self.route)),
            None => Err(JournalError::Unrouted(id.to_owned())),
        }
    }

    /// Why entry `id` is not in this route's journal: it is another route's, an older version's, or unknown.
    /// Only asked when an undo names an id the route lacks, so the listing it costs is rare.
    async fn elsewhere(&self, id: &str) -> Result<JournalError, JournalError> {
        let name = entry_name(id)?;
        let user = user_prefix(self.user);
        let first_step = step_suffix(0);
        for key in self.keys(&user).await? {
            let Some(rest) = key.name.strip_prefix(&user) else { continue };
            // A call on another route still in steps (running, or cut off).
            let rest = rest.strip_suffix(first_step.as_str()).unwrap_or(rest);
            if rest == name {
                return Ok(JournalError::Unrouted(id.to_owned()));
            }
            match rest.strip_suffix(&name).and_then(|route| route.strip_suffix(':')) {
                // Listed here but not read a moment ago: KV has not caught up; it is not another route's.
                Some(route) if route == self.route => break,
                Some(route) => return Ok(JournalError::other_route(id, route, &self.route)),
                None => {}
            }
        }
        Ok(JournalError::NotFound(id.to_owned()))
    }

    /// Up to `limit` entries, newest first, not yet expired at `now_ms`, from the `offset`-th on; and whether
    /// more follow. An entry still in steps (its call running or cut off) is read from them, `complete: false`.
    pub async fn recent(&self, now_ms: u64, offset: usize, limit: usize) -> Result<(Vec<Entry>, bool), JournalError> {
        let prefix = prefix(self.user, &self.route);
        let groups = groups(self.keys(&prefix).await?, &prefix);
        let page: Vec<&Group> = groups.iter().skip(offset).take(limit + 1).collect();
        // One read for the page: each entry's own key, or its steps when it has none yet.
        let wanted: Vec<String> = page
            .iter()
            .flat_map(|group| match &group.main {
                Some(main) => vec![main.name.clone()],
                None => group.steps.iter().map(|step| step.name.clone()).collect(),
            })
            .collect();
        let mut texts = self.read(wanted).await?.into_iter();
        let mut entries = Vec::new();
        for group in page {
            if group.main.is_some() {
                if let Some(entry) =
                    texts.next().and_then(|(_, text)| serde_json::from_slice::<Entry>(text?.as_bytes()).ok())
                {
                    entries.push(entry);
                }
                continue;
            }
            let steps: Vec<(String, Option<String>)> = texts.by_ref().take(group.steps.len()).collect();
            if let Some((id, at_ms)) = id_of_name(&group.name) {
                entries.push(Entry::from_steps(&id, at_ms, steps));
            }
        }
        let mut entries: Vec<Entry> = entries.into_iter().filter(|entry| !self.expired(entry, now_ms)).collect();
        let more = entries.len() > limit;
        entries.truncate(limit);
        Ok((entries, more))
    }

    /// Removes this route's entries past their time and those beyond [`MAX_ENTRIES`], and older versions'
    /// entries past their time; returns them, so that the files they kept can be removed too, with the calls cut
    /// off on this route ([`Pruned::cut_off`], but never `running`, the caller's own). Only the entries removed
    /// are read: the listing's expiry times tell which they are. One listing of the user's whole journal, as
    /// before routes: other routes' entries are left to their own route's writes.
    ///
    /// `this_run` is the server process's run when its store is its own ([`Entry::run`]): a call left in steps
    /// by another run is cut off however recent (its process is gone), which costs a read of its first step.
    pub async fn prune(&self, now_ms: u64, running: &str, this_run: Option<&str>) -> Result<Pruned, JournalError> {
        let user = user_prefix(self.user);
        let own = prefix(self.user, &self.route);
        let keys = self.keys(&user).await?;
        let now_secs = now_ms / 1000;
        let past_time = |expiration: Option<u64>| expiration.is_some_and(|at| at.saturating_sub(GRACE_SECS) < now_secs);
        let mut pruned = Pruned::default();
        let (own_keys, other): (Vec<KvKey>, Vec<KvKey>) = keys.into_iter().partition(|key| key.name.starts_with(&own));
        for (index, group) in groups(own_keys, &own).into_iter().enumerate() {
            if index >= MAX_ENTRIES || past_time(group.expiration()) {
                if let Some(main) = &group.main {
                    if let Some(entry) = self
                        .kv
                        .get(&main.name)
                        .await?
                        .and_then(|text| serde_json::from_slice::<Entry>(text.as_bytes()).ok())
                    {
                        pruned.gone.push(entry);
                    }
                }
                for key in group.keys() {
                    self.kv.delete(&key.name).await?;
                }
                continue;
            }
            if group.main.is_some() {
                continue;
            }
            if let Some((id, at_ms)) = id_of_name(&group.name) {
                if id != running
                    && (at_ms.saturating_add(RUNNING_MS) < now_ms || self.left_by_another_run(&group, this_run).await)
                {
                    pruned.cut_off.push(id);
                }
            }
        }
        for key in other {
            if !key.name.strip_prefix(&user).is_some_and(unrouted) || !past_time(key.expiration) {
                continue;
            }
            if let Some(entry) =
                self.kv.get(&key.name).await?.and_then(|text| serde_json::from_slice::<Entry>(text.as_bytes()).ok())
            {
                pruned.gone.push(entry);
            }
            self.kv.delete(&key.name).await?;
        }
        Ok(pruned)
    }

    /// The values of `keys`, each with its key, in order.
    async fn read(&self, keys: Vec<String>) -> Result<Vec<(String, Option<String>)>, JournalError> {
        let names: Vec<&str> = keys.iter().map(String::as_str).collect();
        let texts = self.kv.get_many(&names).await?;
        Ok(keys.into_iter().zip(texts).collect())
    }

    fn expired(&self, entry: &Entry, now_ms: u64) -> bool {
        entry.at_ms + u64::from(self.days) * 86_400_000 < now_ms
    }

    /// This route's entries' key names after the route, newest first.
    #[cfg(test)]
    async fn names(&self) -> Result<Vec<String>, JournalError> {
        let prefix = prefix(self.user, &self.route);
        Ok(groups(self.keys(&prefix).await?, &prefix).into_iter().map(|group| group.name).collect())
    }

    /// The KV keys under `prefix`, sorted.
    /// Whether the call whose steps are `group` was started by a run other than `this_run` (`None`: not known).
    async fn left_by_another_run(&self, group: &Group, this_run: Option<&str>) -> bool {
        let Some(this_run) = this_run else { return false };
        let first = group.steps.iter().find(|key| key.name.ends_with(&step_suffix(0)));
        let started = match first {
            Some(key) => self.kv.get(&key.name).await.ok().flatten(),
            None => None,
        };
        let run =
            started.and_then(|text| serde_json::from_slice::<Entry>(text.as_bytes()).ok()).and_then(|entry| entry.run);
        run.as_deref() != Some(this_run)
    }

    async fn keys(&self, prefix: &str) -> Result<Vec<KvKey>, JournalError> {
        let mut keys = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..4 {
            let page = self.kv.list(prefix, cursor.as_deref(), 1000).await?;
            keys.extend(page.keys);
            match page.cursor {
                Some(next) => cursor = Some(next),
                None => break,
            }
        }
        zotero_mcp_core::sort::sort_by(&mut keys, |a, b| a.name.cmp(&b.name));
        Ok(keys)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use zotero_mcp_core::zotero::journal::Change;

    #[test]
    fn ids_map_to_keys_that_list_newest_first() {
        let older = new_id(1_700_000_000_000);
        let newer = new_id(1_800_000_000_000);
        let key = |id: &str| entry_key("owner", "groups/5", id).unwrap_or_default();
        let (older, newer) = (key(&older), key(&newer));
        assert!(newer < older, "{newer} should sort before {older}");
        assert!(newer.starts_with("journal:owner:groups/5:"));
        for bad in ["", "abc", "zzzzzzzzzzzz-0000", "m3k9x2ab-XYZW", "m3k9x2ab-12345", "-1234"] {
            assert!(matches!(entry_key("owner", "users/1", bad), Err(JournalError::BadId(_))), "{bad}");
        }
    }

    #[test]
    fn an_older_versions_key_is_told_from_a_routed_one() {
        let name = entry_name(&new_id(1_700_000_000_000)).unwrap_or_default();
        assert!(unrouted(&name));
        for route in ["users/1", "groups/5", "local/users/0"] {
            assert!(!unrouted(&format!("{route}:{name}")), "{route}");
        }
    }

    fn entry(id: String, at_ms: u64, changes: Vec<Change>) -> Entry {
        Entry { changes, ..Entry::new(id, at_ms, "zotero_create_items") }
    }

    fn created(n: usize, title: &str) -> Change {
        use zotero_mcp_core::zotero::journal::Kind;
        Change::Created { kind: Kind::Item, key: format!("K{n:07}"), version: 1, title: title.to_owned() }
    }

    #[tokio::test]
    async fn an_entry_over_the_size_limit_keeps_what_fits_and_names_the_rest_as_not_undoable() {
        let now = 1_800_000_000_000;
        let kv = zotero_mcp_core::testing::MemoryKv::new(zotero_mcp_core::testing::ManualClock::at(now));
        let journal = Journal { kv: kv.as_ref(), user: "owner", route: "users/1".into(), days: 30 };
        // About 2 MiB of changes: half of them fit.
        let title = "t".repeat(1000);
        let mut big = entry(new_id(now), now, (0..2_000).map(|n| created(n, &title)).collect());
        let started = std::time::Instant::now();
        journal.save(&mut big).await.unwrap_or_else(|e| panic!("{e}"));
        // Cutting one change at a time, the entry serialized again each time, took 100 s here (debug build).
        assert!(started.elapsed().as_secs() < 20, "cut in {:?}", started.elapsed());
        assert!(
            big.omitted > 0 && big.changes.len() + big.omitted == 2_000,
            "{} kept, {}",
            big.changes.len(),
            big.omitted
        );
        let stored = kv.get(&entry_key("owner", "users/1", &big.id).unwrap_or_default()).await.ok().flatten();
        let stored = stored.unwrap_or_default();
        assert!(stored.len() <= MAX_ENTRY_BYTES && stored.len() > MAX_ENTRY_BYTES - 2_000, "{}", stored.len());
        let loaded = journal.load(&big.id).await.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(loaded.omitted, big.omitted);
        assert!(loaded.limits()[0].contains("cannot be undone"), "{:?}", loaded.limits());
    }

    #[tokio::test]
    async fn beyond_the_count_the_oldest_entries_go() {
        let now = 1_800_000_000_000;
        let kv = zotero_mcp_core::testing::MemoryKv::new(zotero_mcp_core::testing::ManualClock::at(now));
        let journal = Journal { kv: kv.as_ref(), user: "owner", route: "users/1".into(), days: 30 };
        let mut ids = Vec::new();
        for n in 0..MAX_ENTRIES as u64 + 3 {
            // One a second, oldest first.
            let at = now - (MAX_ENTRIES as u64 + 3 - n) * 1000;
            let mut one = entry(new_id(at), at, vec![created(n as usize, "a book")]);
            journal.save(&mut one).await.unwrap_or_else(|e| panic!("{e}"));
            ids.push(one.id);
        }
        let gone: Vec<String> =
            journal.prune(now, "", None).await.unwrap_or_default().gone.into_iter().map(|e| e.id).collect();
        assert_eq!(gone, ids[..3].iter().rev().cloned().collect::<Vec<_>>(), "the three oldest, newest first");
        let (kept, more) = journal.recent(now, 0, 50).await.unwrap_or_default();
        assert_eq!(kept[0].id, ids[ids.len() - 1]);
        assert!(more);
        assert_eq!(journal.names().await.unwrap_or_default().len(), MAX_ENTRIES);
    }

    #[tokio::test]
    async fn a_running_call_is_kept_in_steps_until_it_returns() {
        let now = 1_800_000_000_000;
        let kv = zotero_mcp_core::testing::MemoryKv::new(zotero_mcp_core::testing::ManualClock::at(now));
        let journal = Journal { kv: kv.as_ref(), user: "owner", route: "users/1".into(), days: 30 };
        let id = new_id(now);
        let started = Entry::new(id.clone(), now, "zotero_create_items");
        let mut steps = Vec::new();
        for (n, landed) in
            [vec![], vec![created(1, "one")], vec![created(2, "two"), created(3, "three")]].into_iter().enumerate()
        {
            steps.push(
                journal
                    .save_step(&started, n, &Step { changes: landed, ..Step::default() })
                    .await
                    .unwrap_or_else(|e| panic!("{e}")),
            );
        }
        let own = entry_key("owner", "users/1", &id).unwrap_or_default();
        assert_eq!(steps, (0..3).map(|n| format!("{own}:step:000{n}")).collect::<Vec<_>>());

        // Listed and loaded as one entry, incomplete, with what landed, in order.
        let keys = |entry: &Entry| entry.changes.iter().map(|c| c.key().to_owned()).collect::<Vec<_>>();
        let (listed, more) = journal.recent(now, 0, 10).await.unwrap_or_else(|e| panic!("{e}"));
        assert!(!more);
        assert_eq!(listed.len(), 1, "one entry, not one per step");
        assert!(!listed[0].complete);
        assert_eq!((listed[0].id.as_str(), listed[0].tool.as_str()), (id.as_str(), "zotero_create_items"));
        assert_eq!(keys(&listed[0]), ["K0000001", "K0000002", "K0000003"]);
        let loaded = journal.load(&id).await.unwrap_or_else(|e| panic!("{e}"));
        assert!(!loaded.complete);
        assert_eq!(keys(&loaded), keys(&listed[0]));
        assert_eq!(loaded.steps, steps);

        // Named as cut off only once it has run longer than any call does, and never by itself.
        async fn cut_off(journal: &Journal<'_>, at: u64, running: &str) -> Vec<String> {
            journal.prune(at, running, None).await.unwrap_or_default().cut_off
        }
        assert!(cut_off(&journal, now + 1_000, "").await.is_empty());
        assert_eq!(cut_off(&journal, now + RUNNING_MS + 1, "").await, std::slice::from_ref(&id));
        assert!(cut_off(&journal, now + RUNNING_MS + 1, &id).await.is_empty());

        // The call returns: its whole entry under its own key, the steps gone.
        let mut done = Entry { changes: loaded.changes.clone(), steps: loaded.steps.clone(), ..started };
        journal.save(&mut done).await.unwrap_or_else(|e| panic!("{e}"));
        let page = kv.list("journal:owner:", None, 100).await.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(page.keys.iter().map(|k| k.name.as_str()).collect::<Vec<_>>(), [own.as_str()]);
        let (listed, _) = journal.recent(now, 0, 10).await.unwrap_or_else(|e| panic!("{e}"));
        assert!(listed[0].complete);
        assert_eq!(keys(&listed[0]), ["K0000001", "K0000002", "K0000003"]);
        assert!(cut_off(&journal, now + RUNNING_MS + 1, "").await.is_empty());
    }

    #[test]
    fn an_entry_of_an_older_version_reads_as_complete() {
        let old = r#"{"id":"m3k9x2ab-7f3c","atMs":1,"tool":"zotero_create_items","changes":[]}"#;
        let entry: Entry = serde_json::from_str(old).unwrap_or_else(|e| panic!("{e}"));
        assert!(entry.complete);
        // A complete entry is written as older versions wrote it; an incomplete one says so.
        assert!(!serde_json::to_string(&entry).unwrap_or_default().contains("complete"));
        let cut = Entry { complete: false, ..entry };
        assert!(serde_json::to_string(&cut).unwrap_or_default().contains(r#""complete":false"#));
    }
}
