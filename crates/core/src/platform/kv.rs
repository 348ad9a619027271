use async_trait::async_trait;

/// A failed key/value operation.
#[derive(Debug, thiserror::Error)]
pub enum KvError {
    /// The store refused the write because too many writes hit one key (Workers KV answers 429).
    #[error("the key/value store is rate limiting writes to `{key}`; wait a few seconds and try again")]
    RateLimited { key: String },
    /// Any other failure reported by the store.
    #[error("the key/value store failed on `{key}`: {reason}")]
    Backend { key: String, reason: String },
}

/// The most keys one bulk read of Workers KV takes.
pub const KV_BULK_READ_MAX: usize = 100;

/// How long a written value lives. Workers KV refuses expirations less than 60 seconds away.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum KvWrite {
    /// Kept until deleted.
    #[default]
    Forever,
    /// Expires this many seconds after the write.
    ExpiresIn(u64),
    /// Expires at this absolute time, in seconds since the Unix epoch.
    ExpiresAt(u64),
}

/// One key returned by a listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KvKey {
    pub name: String,
    /// Absolute expiry in seconds since the Unix epoch, when the key has one.
    pub expiration: Option<u64>,
}

/// One page of a prefix listing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KvListPage {
    pub keys: Vec<KvKey>,
    /// Pass back to get the next page; `None` when this page is the last.
    pub cursor: Option<String>,
}

/// A string key/value store with expiry (Workers KV in production).
///
/// Workers KV is eventually consistent: a value just written may not be visible everywhere at once, and an
/// expired value may linger briefly. Code that depends on expiry re-checks times it stored in the value.
#[async_trait(?Send)]
pub trait KvStore {
    async fn get(&self, key: &str) -> Result<Option<String>, KvError>;
    /// Several keys at once, the values in the order of `keys` (`None` for a missing key). Workers KV answers up
    /// to [`KV_BULK_READ_MAX`] keys in one round trip (its bulk get); by default the keys are read one by one,
    /// all in flight together.
    async fn get_many(&self, keys: &[&str]) -> Result<Vec<Option<String>>, KvError> {
        futures_util::future::try_join_all(keys.iter().map(|key| self.get(key))).await
    }
    async fn put(&self, key: &str, value: &str, lifetime: KvWrite) -> Result<(), KvError>;
    async fn delete(&self, key: &str) -> Result<(), KvError>;
    /// Keys starting with `prefix`, in lexicographic order, at most `limit` (Workers KV caps it at 1000).
    async fn list(&self, prefix: &str, cursor: Option<&str>, limit: u32) -> Result<KvListPage, KvError>;
}
