//! Workers KV semantics (string values, optional expiry, prefix listings with a cursor) on redb, an embedded
//! crash-safe database: one file in the user's data directory holds both stores, one table each.
//!
//! A value is stored as 8 bytes of expiry (seconds since the epoch, big-endian; 0 = never) followed by the
//! UTF-8 text. Expired values read as absent and are removed when a listing or read comes across them, as
//! Workers KV drops them lazily too. A record nobody reads again (an abandoned client registration, a spent
//! authorization code, an old cache entry) would stay in the file for ever that way, so the whole file is also
//! swept: when it is opened, and every hour while an HTTP server runs (`KvFile::sweep_every`).

use std::ops::Bound;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use redb::{Database, ReadableTable, TableDefinition, TableHandle};
use zotero_mcp_core::platform::{KvError, KvKey, KvListPage, KvStore, KvWrite};

/// The open database file.
#[derive(Clone)]
pub struct KvFile {
    db: Arc<Database>,
}

impl KvFile {
    /// Opens (or creates) the database. Fails with what to do when another server already holds it.
    ///
    /// The file holds OAuth grants, client registrations and cached library text, so only its owner may read
    /// it: a new data directory is made 0700 and the file 0600, and an existing file readable by others is
    /// narrowed to its owner (an existing directory is left as it is, with a warning).
    pub fn open(path: &Path) -> Result<Self, String> {
        if let Some(dir) = path.parent() {
            private::create_dir(dir).map_err(|e| format!("could not create {}: {e}", dir.display()))?;
        }
        let file = private::open_file(path).map_err(|e| format!("could not open {}: {e}", path.display()))?;
        let db = Database::builder().create_file(file).map_err(|e| match e {
            redb::DatabaseError::DatabaseAlreadyOpen => format!(
                "{} is in use by another zotero-mcp server. Stop that one, or give this one its own data \
                 directory with ZOTERO_MCP_DATA_DIR",
                path.display()
            ),
            other => format!("could not open {}: {other}", path.display()),
        })?;
        let file = Self { db: Arc::new(db) };
        // What expired while the server was stopped goes before it serves. A failure only leaves the records
        // where they were (reads still hide them), so it is reported and the server starts.
        if let Err(e) = file.sweep_expired(now_secs()) {
            log::warn!("{e}");
        }
        Ok(file)
    }

    /// A database in memory, gone when the process ends.
    pub fn in_memory() -> Result<Self, String> {
        let db = Database::builder()
            .create_with_backend(redb::backends::InMemoryBackend::new())
            .map_err(|e| format!("could not create an in-memory store: {e}"))?;
        Ok(Self { db: Arc::new(db) })
    }

    /// The store kept in table `name`.
    pub fn store(&self, name: &'static str) -> RedbKv {
        RedbKv { db: self.db.clone(), table: TableDefinition::new(name), now: Box::new(now_secs) }
    }

    /// Removes every record of every table that expired by `now`, in one go (batch after batch, without pausing).
    pub fn sweep_expired(&self, now: u64) -> Result<Swept, SweepError> {
        let mut sweep = Sweep::new(&self.db, now)?;
        while sweep.step(&self.db)? {}
        Ok(sweep.swept)
    }

    /// Like [`sweep_expired`](Self::sweep_expired), letting the runtime's other tasks run between batches, so
    /// that requests wait for one batch at most, never for the whole file.
    pub async fn sweep_expired_gradually(&self, now: u64) -> Result<Swept, SweepError> {
        let mut sweep = Sweep::new(&self.db, now)?;
        while sweep.step(&self.db)? {
            tokio::task::yield_now().await;
        }
        Ok(sweep.swept)
    }

    /// Sweeps the file every `period`, for ever (spawn it on the server's `LocalSet`; it ends with the runtime).
    /// The first sweep is one period after the start, since opening the file swept it.
    pub async fn sweep_every(self, period: Duration) {
        let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
        // A machine that slept owes one sweep, not one per hour it missed.
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            ticks.tick().await;
            if let Err(e) = self.sweep_expired_gradually(now_secs()).await {
                log::warn!("{e}");
            }
        }
    }
}

/// How many records one step of a sweep looks at: it reads them in one read transaction and removes the
/// expired ones in one write transaction, the disk write included. The slowest step measured took 11-36 ms
/// (`sweep_timings`, an ignored test below), which is how long it can keep a request waiting.
const SWEEP_BATCH: usize = 1_000;

/// What a sweep found.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Swept {
    /// Records removed because they had expired.
    pub removed: u64,
    /// Records left in place: live ones, and any this code cannot read (a read reports those).
    pub kept: u64,
}

/// A sweep that could not finish. Nothing is lost: the records it did not reach stay, still hidden from reads.
#[derive(Debug, thiserror::Error)]
#[error(
    "could not remove expired records from the key/value database ({place}): {source}; reads still hide them, \
     and the next sweep (at the next start, or within the hour while serving over HTTP) tries again"
)]
pub struct SweepError {
    place: String,
    source: Box<redb::Error>,
}

impl SweepError {
    fn listing(source: impl Into<redb::Error>) -> Self {
        Self { place: "listing its tables".to_owned(), source: boxed(source) }
    }

    fn in_table(table: &str, source: Box<redb::Error>) -> Self {
        Self { place: format!("table {table}"), source }
    }
}

/// redb's errors are large; boxed, a `Result` stays small on the common path.
fn boxed(e: impl Into<redb::Error>) -> Box<redb::Error> {
    Box::new(e.into())
}

/// A sweep in progress: the tables still to visit (the current one last) and the last key visited in it.
struct Sweep {
    tables: Vec<String>,
    after: Option<String>,
    now: u64,
    swept: Swept,
}

impl Sweep {
    fn new(db: &Database, now: u64) -> Result<Self, SweepError> {
        let txn = db.begin_read().map_err(SweepError::listing)?;
        let tables = txn.list_tables().map_err(SweepError::listing)?.map(|t| t.name().to_owned()).collect();
        Ok(Self { tables, after: None, now, swept: Swept::default() })
    }

    /// Looks at the next batch of records and removes the expired ones; false once every table is done.
    fn step(&mut self, db: &Database) -> Result<bool, SweepError> {
        let Some(name) = self.tables.last() else { return Ok(false) };
        let fail = |e| SweepError::in_table(name, e);
        let table = TableDefinition::<&str, &[u8]>::new(name);
        let mut expired = Vec::new();
        let mut seen = 0;
        let mut last = None;
        {
            let txn = db.begin_read().map_err(|e| fail(boxed(e)))?;
            let records = match txn.open_table(table) {
                Ok(records) => records,
                // Gone since the sweep listed it: nothing left to remove there.
                Err(redb::TableError::TableDoesNotExist(_)) => {
                    self.tables.pop();
                    self.after = None;
                    return Ok(!self.tables.is_empty());
                }
                Err(e) => return Err(fail(boxed(e))),
            };
            let from = self.after.as_deref().map_or(Bound::Unbounded, Bound::Excluded);
            for entry in records.range::<&str>((from, Bound::Unbounded)).map_err(|e| fail(boxed(e)))? {
                let (key, record) = entry.map_err(|e| fail(boxed(e)))?;
                seen += 1;
                match decode(record.value()) {
                    Some((expiry, _)) if !is_live(expiry, self.now) => expired.push(key.value().to_owned()),
                    _ => self.swept.kept += 1,
                }
                if seen == SWEEP_BATCH {
                    last = Some(key.value().to_owned());
                    break;
                }
            }
        }
        let removed = remove_expired(db, table, &expired, self.now).map_err(fail)?;
        self.swept.removed += removed as u64;
        // A record renewed between the two transactions is still there: count it as kept.
        self.swept.kept += (expired.len() - removed) as u64;
        self.after = last;
        if self.after.is_none() {
            self.tables.pop();
        }
        Ok(!self.tables.is_empty())
    }
}

/// Removes those of `keys` that are still expired at `now` from `table`, in one write transaction (none when
/// there is nothing to remove), and says how many it removed.
fn remove_expired(
    db: &Database,
    table: TableDefinition<&str, &[u8]>,
    keys: &[String],
    now: u64,
) -> Result<usize, Box<redb::Error>> {
    if keys.is_empty() {
        return Ok(0);
    }
    let txn = db.begin_write().map_err(boxed)?;
    let mut removed = 0;
    {
        let mut table = txn.open_table(table).map_err(boxed)?;
        for key in keys {
            // Re-checked inside the write: a put may have renewed it since it was read.
            let expired = table
                .get(key.as_str())
                .map_err(boxed)?
                .and_then(|v| decode(v.value()).map(|(expiry, _)| !is_live(expiry, now)))
                .unwrap_or(false);
            if expired {
                table.remove(key.as_str()).map_err(boxed)?;
                removed += 1;
            }
        }
    }
    txn.commit().map_err(boxed)?;
    Ok(removed)
}

/// Files only their owner can read. Elsewhere than Unix the platform's defaults apply.
pub(super) mod private {
    use std::fs::{File, OpenOptions};
    use std::path::Path;

    /// Creates `dir` and any missing parents, owner-only (0700) where this process creates them. An existing
    /// directory that others can enter is reported, not changed: it may be one the user shares on purpose.
    pub fn create_dir(dir: &Path) -> std::io::Result<()> {
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
            builder.mode(0o700);
            if let Ok(meta) = std::fs::metadata(dir) {
                let mode = meta.permissions().mode() & 0o777;
                if mode & 0o077 != 0 {
                    eprintln!(
                        "zotero-mcp: {} can be listed by other users (mode {mode:o}); the database in it is \
                         owner-only, and `chmod 700 {}` hides the directory too",
                        dir.display(),
                        dir.display()
                    );
                }
            }
        }
        builder.create(dir)
    }

    /// Opens (or creates) the database file, owner-only: created 0600, and an existing one loses its group and
    /// other bits.
    pub fn open_file(path: &Path) -> std::io::Result<File> {
        let mut options = OpenOptions::new();
        options.read(true).write(true).create(true).truncate(false);
        #[cfg(unix)]
        {
            use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
            options.mode(0o600);
            let file = options.open(path)?;
            let mode = file.metadata()?.permissions().mode() & 0o777;
            if mode & 0o077 != 0 {
                // A file an earlier version made 0644: others could read the grants and cached text until now.
                let narrowed = mode & 0o700;
                file.set_permissions(std::fs::Permissions::from_mode(narrowed))?;
                eprintln!("zotero-mcp: {} was mode {mode:o}; it is now {narrowed:o} (owner only)", path.display());
            }
            Ok(file)
        }
        #[cfg(not(unix))]
        options.open(path)
    }
}

fn now_secs() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

/// One key/value store (one table).
pub struct RedbKv {
    db: Arc<Database>,
    table: TableDefinition<'static, &'static str, &'static [u8]>,
    now: Box<dyn Fn() -> u64>,
}

fn backend(key: &str, error: impl std::fmt::Display) -> KvError {
    KvError::Backend { key: key.to_owned(), reason: error.to_string() }
}

/// Splits a stored record into (expiry, text); `None` for a record this code did not write.
fn decode(record: &[u8]) -> Option<(u64, &str)> {
    let (expiry, text) = record.split_first_chunk::<8>()?;
    Some((u64::from_be_bytes(*expiry), std::str::from_utf8(text).ok()?))
}

fn is_live(expiry: u64, now: u64) -> bool {
    expiry == 0 || expiry > now
}

impl RedbKv {
    /// A store whose clock is `now` (tests move it to expire values).
    pub fn with_clock(mut self, now: impl Fn() -> u64 + 'static) -> Self {
        self.now = Box::new(now);
        self
    }

    fn remove_expired(&self, keys: &[String]) -> Result<(), KvError> {
        let Some(first) = keys.first() else { return Ok(()) };
        remove_expired(&self.db, self.table, keys, (self.now)()).map(drop).map_err(|e| backend(first, e))
    }
}

#[async_trait(?Send)]
impl KvStore for RedbKv {
    async fn get(&self, key: &str) -> Result<Option<String>, KvError> {
        let txn = self.db.begin_read().map_err(|e| backend(key, e))?;
        let table = match txn.open_table(self.table) {
            Ok(table) => table,
            Err(redb::TableError::TableDoesNotExist(_)) => return Ok(None),
            Err(e) => return Err(backend(key, e)),
        };
        let Some(record) = table.get(key).map_err(|e| backend(key, e))? else {
            return Ok(None);
        };
        match decode(record.value()) {
            Some((expiry, text)) if is_live(expiry, (self.now)()) => Ok(Some(text.to_owned())),
            Some(_) => {
                drop(record);
                drop(table);
                drop(txn);
                self.remove_expired(&[key.to_owned()])?;
                Ok(None)
            }
            None => Err(backend(key, "the stored record is damaged; delete the data directory's kv.redb to reset")),
        }
    }

    async fn put(&self, key: &str, value: &str, lifetime: KvWrite) -> Result<(), KvError> {
        let now = (self.now)();
        let expiry = match lifetime {
            KvWrite::Forever => 0,
            // Workers KV refuses lifetimes under 60 s; the same rule keeps both runtimes alike.
            KvWrite::ExpiresIn(secs) if secs < 60 => {
                return Err(backend(key, format!("expiration_ttl must be at least 60 seconds (got {secs})")))
            }
            KvWrite::ExpiresIn(secs) => now.saturating_add(secs),
            KvWrite::ExpiresAt(at) if at < now.saturating_add(60) => {
                return Err(backend(key, "expiration must be at least 60 seconds in the future"))
            }
            KvWrite::ExpiresAt(at) => at,
        };
        let mut record = Vec::with_capacity(8 + value.len());
        record.extend_from_slice(&expiry.to_be_bytes());
        record.extend_from_slice(value.as_bytes());
        let txn = self.db.begin_write().map_err(|e| backend(key, e))?;
        {
            let mut table = txn.open_table(self.table).map_err(|e| backend(key, e))?;
            table.insert(key, record.as_slice()).map_err(|e| backend(key, e))?;
        }
        txn.commit().map_err(|e| backend(key, e))
    }

    async fn delete(&self, key: &str) -> Result<(), KvError> {
        let txn = self.db.begin_write().map_err(|e| backend(key, e))?;
        {
            let mut table = txn.open_table(self.table).map_err(|e| backend(key, e))?;
            table.remove(key).map_err(|e| backend(key, e))?;
        }
        txn.commit().map_err(|e| backend(key, e))
    }

    async fn list(&self, prefix: &str, cursor: Option<&str>, limit: u32) -> Result<KvListPage, KvError> {
        let limit = limit.clamp(1, 1000) as usize;
        let now = (self.now)();
        let mut keys = Vec::new();
        let mut expired = Vec::new();
        let mut more = false;
        {
            let txn = self.db.begin_read().map_err(|e| backend(prefix, e))?;
            let table = match txn.open_table(self.table) {
                Ok(table) => table,
                Err(redb::TableError::TableDoesNotExist(_)) => return Ok(KvListPage::default()),
                Err(e) => return Err(backend(prefix, e)),
            };
            // The cursor is the last key of the previous page; the next page starts just after it.
            let start = cursor.filter(|c| c.starts_with(prefix)).unwrap_or(prefix);
            for entry in table.range(start..).map_err(|e| backend(prefix, e))? {
                let (name, record) = entry.map_err(|e| backend(prefix, e))?;
                let name = name.value();
                if !name.starts_with(prefix) {
                    break;
                }
                if cursor == Some(name) {
                    continue;
                }
                let Some((expiry, _)) = decode(record.value()) else { continue };
                if !is_live(expiry, now) {
                    expired.push(name.to_owned());
                    continue;
                }
                if keys.len() == limit {
                    more = true;
                    break;
                }
                keys.push(KvKey { name: name.to_owned(), expiration: (expiry != 0).then_some(expiry) });
            }
        }
        self.remove_expired(&expired)?;
        let cursor = if more { keys.last().map(|k| k.name.clone()) } else { None };
        Ok(KvListPage { keys, cursor })
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;
    use std::rc::Rc;

    use super::*;

    fn store(dir: &Path, clock: Rc<Cell<u64>>) -> RedbKv {
        KvFile::open(&dir.join("kv.redb")).unwrap().store("oauth_kv").with_clock(move || clock.get())
    }

    fn temp_dir(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("zotero-mcp-kv-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    #[tokio::test]
    async fn values_expire_and_listings_page_by_prefix() {
        let dir = temp_dir("expire");
        let clock = Rc::new(Cell::new(1_000));
        let kv = store(&dir, clock.clone());
        assert_eq!(kv.get("missing").await.unwrap(), None);
        kv.put("grant:a", "1", KvWrite::Forever).await.unwrap();
        kv.put("grant:b", "2", KvWrite::ExpiresIn(60)).await.unwrap();
        kv.put("grant:c", "3", KvWrite::ExpiresAt(5_000)).await.unwrap();
        kv.put("token:x", "4", KvWrite::Forever).await.unwrap();
        assert_eq!(kv.get("grant:b").await.unwrap().as_deref(), Some("2"));

        let first = kv.list("grant:", None, 2).await.unwrap();
        assert_eq!(first.keys.iter().map(|k| k.name.as_str()).collect::<Vec<_>>(), ["grant:a", "grant:b"]);
        assert_eq!(first.keys[1].expiration, Some(1_060));
        let second = kv.list("grant:", first.cursor.as_deref(), 2).await.unwrap();
        assert_eq!(second.keys.iter().map(|k| k.name.as_str()).collect::<Vec<_>>(), ["grant:c"]);
        assert_eq!(second.cursor, None);

        clock.set(1_061);
        assert_eq!(kv.get("grant:b").await.unwrap(), None, "expired");
        let all = kv.list("grant:", None, 10).await.unwrap();
        assert_eq!(all.keys.iter().map(|k| k.name.as_str()).collect::<Vec<_>>(), ["grant:a", "grant:c"]);
        kv.delete("grant:a").await.unwrap();
        assert_eq!(kv.get("grant:a").await.unwrap(), None);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[tokio::test]
    async fn lifetimes_under_a_minute_are_refused_as_on_workers_kv() {
        let dir = temp_dir("ttl");
        let kv = store(&dir, Rc::new(Cell::new(1_000)));
        assert!(kv.put("k", "v", KvWrite::ExpiresIn(59)).await.is_err());
        assert!(kv.put("k", "v", KvWrite::ExpiresAt(1_030)).await.is_err());
        assert_eq!(kv.get("k").await.unwrap(), None, "nothing written");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[cfg(unix)]
    #[test]
    fn the_data_directory_and_database_are_readable_by_their_owner_only() {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        let dir = temp_dir("private").join("nested");
        let path = dir.join("kv.redb");
        drop(KvFile::open(&path).unwrap());
        assert_eq!(mode(&dir), 0o700, "a new data directory");
        assert_eq!(mode(&path), 0o600, "a new database");

        // A database an earlier version left world-readable is narrowed when the server starts.
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        drop(KvFile::open(&path).unwrap());
        assert_eq!(mode(&path), 0o600, "an existing database");
        let _ = std::fs::remove_dir_all(dir.parent().unwrap());
    }

    /// Writes records as `put` stores them, all in one transaction (thousands of `put`s would each wait for
    /// the disk).
    fn insert_raw(file: &KvFile, table: &str, records: impl IntoIterator<Item = (String, u64, String)>) {
        let txn = file.db.begin_write().unwrap();
        {
            let mut table = txn.open_table(TableDefinition::<&str, &[u8]>::new(table)).unwrap();
            for (key, expiry, text) in records {
                let mut record = expiry.to_be_bytes().to_vec();
                record.extend_from_slice(text.as_bytes());
                table.insert(key.as_str(), record.as_slice()).unwrap();
            }
        }
        txn.commit().unwrap();
    }

    /// Every key stored in `table`, expired or not: what is in the file, not what a read shows.
    fn stored_keys(file: &KvFile, table: &str) -> Vec<String> {
        let txn = file.db.begin_read().unwrap();
        let table = match txn.open_table(TableDefinition::<&str, &[u8]>::new(table)) {
            Ok(table) => table,
            Err(redb::TableError::TableDoesNotExist(_)) => return Vec::new(),
            Err(e) => panic!("{e}"),
        };
        table.iter().unwrap().map(|entry| entry.unwrap().0.value().to_owned()).collect()
    }

    fn stored_count(file: &KvFile, table: &str) -> u64 {
        use redb::ReadableTableMetadata;
        let txn = file.db.begin_read().unwrap();
        txn.open_table(TableDefinition::<&str, &[u8]>::new(table)).map_or(0, |t| t.len().unwrap())
    }

    #[tokio::test]
    async fn a_sweep_removes_expired_records_from_every_table_and_keeps_live_ones() {
        let dir = temp_dir("sweep");
        let clock = Rc::new(Cell::new(1_000));
        let file = KvFile::open(&dir.join("kv.redb")).unwrap();
        let now = clock.clone();
        let oauth = file.store("oauth_kv").with_clock(move || now.get());
        let now = clock.clone();
        let cache = file.store("cache_kv").with_clock(move || now.get());
        oauth.put("client:abandoned", "{}", KvWrite::ExpiresIn(86_400)).await.unwrap();
        oauth.put("grant:u:g", "{}", KvWrite::Forever).await.unwrap();
        oauth.put("token:u:g:t", "{}", KvWrite::ExpiresIn(3_600)).await.unwrap();
        cache.put("cimd:a", "{}", KvWrite::ExpiresIn(60)).await.unwrap();
        cache.put("cimd:b", "{}", KvWrite::ExpiresAt(10_000)).await.unwrap();
        // Enough records in a third table to take three batches, live and expired alternating, so that a key
        // skipped or visited twice at a batch's edge shows.
        let n = 2 * SWEEP_BATCH + 500;
        insert_raw(
            &file,
            "more_kv",
            (0..n).map(|i| (format!("k:{i:05}"), if i % 2 == 0 { 0 } else { 1_060 }, "v".into())),
        );

        clock.set(1_000 + 3_600 + 1);
        let swept = file.sweep_expired(clock.get()).unwrap();
        assert_eq!(swept, Swept { removed: 2 + n as u64 / 2, kept: 3 + n as u64 / 2 });
        assert_eq!(stored_keys(&file, "oauth_kv"), ["client:abandoned", "grant:u:g"]);
        assert_eq!(stored_keys(&file, "cache_kv"), ["cimd:b"]);
        let more = stored_keys(&file, "more_kv");
        assert_eq!(more, (0..n).step_by(2).map(|i| format!("k:{i:05}")).collect::<Vec<_>>());
        assert_eq!(oauth.get("grant:u:g").await.unwrap().as_deref(), Some("{}"), "live records still read");

        // A day later the abandoned registration goes too; a second sweep of a clean file removes nothing.
        clock.set(1_000 + 86_400 + 1);
        assert_eq!(file.sweep_expired(clock.get()).unwrap().removed, 2, "the registration and cimd:b");
        assert_eq!(stored_keys(&file, "oauth_kv"), ["grant:u:g"]);
        assert_eq!(file.sweep_expired(clock.get()).unwrap(), Swept { removed: 0, kept: 1 + n as u64 / 2 });
        drop((oauth, cache, file));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[tokio::test]
    async fn opening_the_file_sweeps_what_expired_while_the_server_was_stopped() {
        let dir = temp_dir("sweep-open");
        {
            let file = KvFile::open(&dir.join("kv.redb")).unwrap();
            // Written at a clock of 1,000 s: by the real clock these expired long ago.
            let oauth = file.store("oauth_kv").with_clock(|| 1_000);
            oauth.put("client:abandoned", "{}", KvWrite::ExpiresIn(86_400)).await.unwrap();
            oauth.put("grant:u:g", "{}", KvWrite::Forever).await.unwrap();
            file.store("cache_kv").with_clock(|| 1_000).put("c", "{}", KvWrite::ExpiresIn(60)).await.unwrap();
        }
        let file = KvFile::open(&dir.join("kv.redb")).unwrap();
        assert_eq!(stored_keys(&file, "oauth_kv"), ["grant:u:g"]);
        assert_eq!(stored_keys(&file, "cache_kv"), Vec::<String>::new());
        drop(file);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[tokio::test]
    async fn values_written_after_a_sweep_read_back_and_survive_reopening() {
        let dir = temp_dir("sweep-write");
        let clock = Rc::new(Cell::new(1_000));
        {
            let file = KvFile::open(&dir.join("kv.redb")).unwrap();
            let now = clock.clone();
            let oauth = file.store("oauth_kv").with_clock(move || now.get());
            let big = "x".repeat(20_000);
            for i in 0..50 {
                oauth.put(&format!("client:{i}"), &big, KvWrite::ExpiresIn(60)).await.unwrap();
            }
            oauth.put("grant:kept", "old", KvWrite::Forever).await.unwrap();
            clock.set(1_061);
            assert_eq!(file.sweep_expired(clock.get()).unwrap().removed, 50);
            assert_eq!(oauth.get("client:3").await.unwrap(), None);

            // The pages the sweep freed are written again: the same key, new keys, and a value larger than any.
            // (An expiry in 2096: the real clock of the sweep at the reopening below must not reach it.)
            oauth.put("client:3", "again", KvWrite::ExpiresAt(4_000_000_000)).await.unwrap();
            let bigger = "y".repeat(100_000);
            for i in 0..20 {
                oauth.put(&format!("new:{i}"), &bigger, KvWrite::Forever).await.unwrap();
            }
            assert_eq!(oauth.get("client:3").await.unwrap().as_deref(), Some("again"));
            assert_eq!(oauth.get("new:7").await.unwrap().as_deref(), Some(bigger.as_str()));
            assert_eq!(oauth.get("grant:kept").await.unwrap().as_deref(), Some("old"));
        }
        let file = KvFile::open(&dir.join("kv.redb")).unwrap();
        let oauth = file.store("oauth_kv").with_clock(move || clock.get());
        assert_eq!(oauth.get("client:3").await.unwrap().as_deref(), Some("again"));
        assert_eq!(oauth.get("new:19").await.unwrap().map(|v| v.len()), Some(100_000));
        assert_eq!(oauth.list("new:", None, 100).await.unwrap().keys.len(), 20);
        drop((oauth, file));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[tokio::test]
    async fn a_serving_process_sweeps_periodically_between_other_tasks() {
        let file = KvFile::in_memory().unwrap();
        // Expired at 1 s since the epoch, by the real clock the periodic sweep reads.
        insert_raw(&file, "oauth_kv", (0..3 * SWEEP_BATCH).map(|i| (format!("client:{i:05}"), 1, String::new())));
        insert_raw(&file, "oauth_kv", [("grant:kept".to_owned(), 0, String::new())]);
        let local = tokio::task::LocalSet::new();
        local
            .run_until(async {
                tokio::task::spawn_local(file.clone().sweep_every(Duration::from_millis(20)));
                // Another task runs between the sweep's batches: it sees the table part-swept.
                let seen = Rc::new(std::cell::RefCell::new(Vec::new()));
                let log = seen.clone();
                let watched = file.clone();
                tokio::task::spawn_local(async move {
                    loop {
                        let count = stored_count(&watched, "oauth_kv");
                        if log.borrow().last() != Some(&count) {
                            log.borrow_mut().push(count);
                        }
                        tokio::task::yield_now().await;
                    }
                });
                for _ in 0..100 {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    if stored_count(&file, "oauth_kv") == 1 {
                        break;
                    }
                }
                assert_eq!(stored_keys(&file, "oauth_kv"), ["grant:kept"]);
                let seen = seen.borrow();
                assert!(seen.iter().any(|&n| n > 1 && n < 3 * SWEEP_BATCH as u64 + 1), "counts seen: {seen:?}");
            })
            .await;
    }

    /// The cost of a sweep and what it does to the file's size. Run with
    /// `cargo test -p zotero-mcp-cli --release --lib sweep_timings -- --ignored --nocapture`
    /// (`SWEEP_VALUE_BYTES` sets the size of each value, 1024 by default).
    #[test]
    #[ignore = "prints figures"]
    fn sweep_timings() {
        fn cpu_ms() -> f64 {
            // The thread's time on a CPU (Linux); 0 elsewhere.
            let stat = std::fs::read_to_string("/proc/thread-self/schedstat").unwrap_or_default();
            stat.split_whitespace().next().and_then(|n| n.parse::<f64>().ok()).unwrap_or(0.0) / 1e6
        }
        let bytes: usize = std::env::var("SWEEP_VALUE_BYTES").ok().and_then(|v| v.parse().ok()).unwrap_or(1024);
        let value = "v".repeat(bytes);
        let dir = temp_dir("sweep-timings");
        let write = |file: &KvFile, keys: std::ops::Range<usize>, expiry: &dyn Fn(usize) -> u64| {
            for chunk in keys.collect::<Vec<_>>().chunks(1_000) {
                insert_raw(
                    file,
                    "oauth_kv",
                    chunk.iter().map(|&i| (format!("client:{i:06}"), expiry(i), value.clone())),
                );
            }
        };
        // A file of 10,000 expired and 10,000 live records, alternating: they share the B-tree's pages.
        let filled = |name: &str| {
            let path = dir.join(name);
            let file = KvFile::open(&path).unwrap();
            write(&file, 0..20_000, &|i| if i % 2 == 0 { 1_000 } else { 0 });
            (file, path)
        };
        let state = |file: &KvFile, path: &Path| {
            let stats = file.db.begin_write().unwrap().stats().unwrap();
            format!(
                "file {:.1} MB, pages in use {:.1} MB, data {:.1} MB",
                std::fs::metadata(path).unwrap().len() as f64 / 1e6,
                (stats.allocated_pages() * stats.page_size() as u64) as f64 / 1e6,
                stats.stored_bytes() as f64 / 1e6
            )
        };

        let (file, path) = filled("swept.redb");
        println!("{bytes} B values, 10,000 expired + 10,000 live: {}", state(&file, &path));
        let (wall, cpu) = (std::time::Instant::now(), cpu_ms());
        let mut sweep = Sweep::new(&file.db, 2_000).unwrap();
        let (mut slowest, mut steps) = (Duration::ZERO, 0);
        loop {
            let step = std::time::Instant::now();
            let more = sweep.step(&file.db).unwrap();
            (slowest, steps) = (slowest.max(step.elapsed()), steps + 1);
            if !more {
                break;
            }
        }
        assert_eq!(sweep.swept, Swept { removed: 10_000, kept: 10_000 });
        println!(
            "sweep: {:.0} ms wall, {:.0} ms CPU, {steps} steps of <= {SWEEP_BATCH} records, slowest step {:.1} ms",
            wall.elapsed().as_secs_f64() * 1e3,
            cpu_ms() - cpu,
            slowest.as_secs_f64() * 1e3
        );
        println!("after the sweep: {}", state(&file, &path));
        let (wall, cpu) = (std::time::Instant::now(), cpu_ms());
        assert_eq!(file.sweep_expired(2_000).unwrap().removed, 0);
        println!(
            "a sweep finding nothing to remove (10,000 live): {:.1} ms wall, {:.1} ms CPU",
            wall.elapsed().as_secs_f64() * 1e3,
            cpu_ms() - cpu
        );
        write(&file, 100_000..110_000, &|_| 0);
        println!("then 10,000 new records: {}", state(&file, &path));
        write(&file, 110_000..120_000, &|_| 0);
        println!("then 10,000 more: {}", state(&file, &path));

        let (file, path) = filled("unswept.redb");
        write(&file, 100_000..120_000, &|_| 0);
        println!("the same 20,000 new records without the sweep: {}", state(&file, &path));

        let (mut file, path) = filled("compacted.redb");
        file.sweep_expired(2_000).unwrap();
        let start = std::time::Instant::now();
        let db = Arc::get_mut(&mut file.db).unwrap();
        while db.compact().unwrap() {}
        println!("swept, then compacted ({:.0} ms): {}", start.elapsed().as_secs_f64() * 1e3, state(&file, &path));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[tokio::test]
    async fn values_survive_reopening_and_a_second_server_is_told_the_file_is_taken() {
        let dir = temp_dir("reopen");
        {
            let file = KvFile::open(&dir.join("kv.redb")).unwrap();
            file.store("cache_kv").put("k", "kept", KvWrite::Forever).await.unwrap();
            let Err(second) = KvFile::open(&dir.join("kv.redb")) else { panic!("opened twice") };
            assert!(second.contains("ZOTERO_MCP_DATA_DIR"), "{second}");
        }
        let file = KvFile::open(&dir.join("kv.redb")).unwrap();
        assert_eq!(file.store("cache_kv").get("k").await.unwrap().as_deref(), Some("kept"));
        assert_eq!(file.store("oauth_kv").get("k").await.unwrap(), None, "tables are separate");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
