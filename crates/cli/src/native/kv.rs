//! Workers KV semantics (string values, optional expiry, prefix listings with a cursor) on redb, an embedded
//! crash-safe database: one file in the user's data directory holds both stores, one table each.
//!
//! A value is stored as 8 bytes of expiry (seconds since the epoch, big-endian; 0 = never) followed by the
//! UTF-8 text. Expired values read as absent and are removed when a listing or read comes across them, as
//! Workers KV drops them lazily too.

use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;
use redb::{Database, ReadableTable, TableDefinition};
use zotero_mcp_core::platform::{KvError, KvKey, KvListPage, KvStore, KvWrite};

/// The open database file.
#[derive(Clone)]
pub struct KvFile {
    db: Arc<Database>,
}

impl KvFile {
    /// Opens (or creates) the database. Fails with what to do when another server already holds it.
    pub fn open(path: &Path) -> Result<Self, String> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| format!("could not create {}: {e}", dir.display()))?;
        }
        let db = Database::create(path).map_err(|e| match e {
            redb::DatabaseError::DatabaseAlreadyOpen => format!(
                "{} is in use by another zotero-mcp server. Stop that one, or give this one its own data \
                 directory with ZOTERO_MCP_DATA_DIR",
                path.display()
            ),
            other => format!("could not open {}: {other}", path.display()),
        })?;
        Ok(Self { db: Arc::new(db) })
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
        if keys.is_empty() {
            return Ok(());
        }
        let txn = self.db.begin_write().map_err(|e| backend(&keys[0], e))?;
        {
            let mut table = txn.open_table(self.table).map_err(|e| backend(&keys[0], e))?;
            let now = (self.now)();
            for key in keys {
                // Re-checked inside the write: a put may have renewed it since it was read.
                let expired = table
                    .get(key.as_str())
                    .map_err(|e| backend(key, e))?
                    .and_then(|v| decode(v.value()).map(|(expiry, _)| !is_live(expiry, now)))
                    .unwrap_or(false);
                if expired {
                    table.remove(key.as_str()).map_err(|e| backend(key, e))?;
                }
            }
        }
        txn.commit().map_err(|e| backend(&keys[0], e))
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
