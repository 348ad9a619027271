//! Feed links as stored: each one a capability (the secret in its URL), kept only as the SHA-256 of that secret
//! under `feed:<hash>` in `OAUTH_KV`, beside the OAuth records (the other secrets this server keeps hashed). The
//! record says exactly what the link serves; nothing in it, or in the URL, names a key or a token.
//!
//! A link is found by the hash of what is presented, so a wrong secret costs one KV read and finds nothing; it
//! is listed and revoked by its `id`, the first 16 hex digits of the hash, which does not open it.

use serde::{Deserialize, Serialize};
use zotero_mcp_core::bibliography::Format;
use zotero_mcp_core::platform::{KvError, KvStore, KvWrite};

use crate::auth::crypto::{random_string, sha256_hex};

const KEY_PREFIX: &str = "feed:";
/// Characters of a link's secret: 32 of 64 symbols, 192 bits.
pub const SECRET_LEN: usize = 32;
/// Hex digits of the hash that name a link in listings.
const ID_LEN: usize = 16;
/// The most links kept at once: a listing reads them all.
pub const MAX_LINKS: usize = 100;

/// What a link serves.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FeedLink {
    /// The library (`users/<id>`, `groups/<id>`).
    pub library: String,
    /// A collection of it; none for the whole library (or a saved search).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collection: Option<String>,
    /// With the items of the collection's subcollections, at any depth.
    #[serde(default)]
    pub subcollections: bool,
    /// A saved search of it, whose results are served.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub saved_search: Option<String>,
    /// What it names, as the person knows it: the collection's or saved search's name, or the library's.
    pub name: String,
    /// `bibtex`, `biblatex`, `csljson` or `ris`.
    pub format: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// When it was made and when it stops working (ms since the Unix epoch).
    pub created_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_ms: Option<u64>,
}

impl FeedLink {
    pub fn format(&self) -> Option<Format> {
        Format::parse(&self.format)
    }

    /// Whether it has expired at `now_ms`.
    pub fn expired(&self, now_ms: u64) -> bool {
        self.expires_ms.is_some_and(|expires| now_ms >= expires)
    }
}

/// A link just made: its secret, shown this once, and its id.
pub struct Minted {
    pub secret: String,
    pub id: String,
}

/// A stored link with its id.
pub struct Listed {
    pub id: String,
    pub link: FeedLink,
}

/// Why the link store could not be used.
#[derive(Debug, thiserror::Error)]
pub enum LinkStoreError {
    #[error("the link store (OAUTH_KV) could not be reached: {0}; try again in a minute")]
    Store(#[from] KvError),
    #[error("no secure random numbers were available; try again")]
    Random,
    #[error(
        "{MAX_LINKS} feed links exist already; revoke some (zotero_export_link with action \"list\", then \
         \"revoke\") before making another"
    )]
    TooMany,
}

/// The feed links in `kv`.
pub struct LinkStore<'a> {
    pub kv: &'a dyn KvStore,
}

impl LinkStore<'_> {
    /// Stores `link` under a new secret.
    pub async fn mint(&self, link: &FeedLink) -> Result<Minted, LinkStoreError> {
        if self.names().await?.len() >= MAX_LINKS {
            return Err(LinkStoreError::TooMany);
        }
        let secret = random_string(SECRET_LEN).map_err(|_| LinkStoreError::Random)?;
        let hash = sha256_hex(&secret);
        let lifetime = match link.expires_ms {
            // KV forgets the record a day after it stops working; until then it is refused as expired.
            Some(expires) => KvWrite::ExpiresAt(expires / 1000 + 24 * 3600),
            None => KvWrite::Forever,
        };
        let key = format!("{KEY_PREFIX}{hash}");
        let record =
            serde_json::to_string(link).map_err(|e| KvError::Backend { key: key.clone(), reason: e.to_string() })?;
        self.kv.put(&key, &record, lifetime).await?;
        Ok(Minted { secret, id: hash[..ID_LEN].to_owned() })
    }

    /// The link `secret` opens, if any (expired or not: the caller decides).
    pub async fn open(&self, secret: &str) -> Result<Option<FeedLink>, LinkStoreError> {
        if secret.len() != SECRET_LEN {
            return Ok(None);
        }
        let stored = self.kv.get(&format!("{KEY_PREFIX}{}", sha256_hex(secret))).await?;
        Ok(stored.and_then(|record| serde_json::from_str(&record).ok()))
    }

    /// Every stored link, oldest first.
    pub async fn list(&self) -> Result<Vec<Listed>, LinkStoreError> {
        let names = self.names().await?;
        let keys: Vec<&str> = names.iter().map(String::as_str).collect();
        let mut listed = Vec::new();
        for chunk in keys.chunks(zotero_mcp_core::platform::KV_BULK_READ_MAX) {
            let records = self.kv.get_many(chunk).await?;
            for (name, record) in chunk.iter().zip(records) {
                let Some(link) = record.and_then(|r| serde_json::from_str::<FeedLink>(&r).ok()) else { continue };
                let id = name.trim_start_matches(KEY_PREFIX).chars().take(ID_LEN).collect();
                listed.push(Listed { id, link });
            }
        }
        listed.sort_by_key(|l| l.link.created_ms);
        Ok(listed)
    }

    /// Revokes the link `id` names; false when none does.
    pub async fn revoke(&self, id: &str) -> Result<bool, LinkStoreError> {
        let id = id.trim().to_ascii_lowercase();
        if id.len() != ID_LEN || !id.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Ok(false);
        }
        let names = self.names().await?;
        let Some(name) = names.iter().find(|name| name[KEY_PREFIX.len()..].starts_with(&id)) else { return Ok(false) };
        self.kv.delete(name).await?;
        Ok(true)
    }

    async fn names(&self) -> Result<Vec<String>, KvError> {
        let mut names = Vec::new();
        let mut cursor: Option<String> = None;
        // Bounded: a page of keys per request, and more than MAX_LINKS are never kept.
        for _ in 0..4 {
            let page = self.kv.list(KEY_PREFIX, cursor.as_deref(), 1000).await?;
            names.extend(page.keys.into_iter().map(|key| key.name));
            match page.cursor {
                Some(next) => cursor = Some(next),
                None => break,
            }
        }
        Ok(names)
    }
}
