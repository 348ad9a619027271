//! Feed links as stored: each one a capability (the secret in its URL), kept only as the SHA-256 of that secret
//! under `feed:<hash>` in `OAUTH_KV`, beside the OAuth records (the other secrets this server keeps hashed). The
//! record says exactly what the link serves; nothing in it, or in the URL, names a key or a token.
//!
//! A link is found by the hash of what is presented, so a wrong secret costs one KV read and finds nothing; it
//! is listed and revoked by its `id`, the first 16 hex digits of the hash, which does not open it.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use zotero_mcp_core::bibliography::Format;
use zotero_mcp_core::platform::{KvError, KvStore, KvWrite};

/// The path feeds are served under (`GET /feeds/<secret>.<ext>`).
pub const PREFIX: &str = "/feeds/";
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

    /// The file name ending its URL (`bib`, `json`, `ris`).
    pub fn extension(&self) -> &'static str {
        self.format().map_or("bib", Format::extension)
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
        let secret = random_secret()?;
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
        Ok(stored.and_then(|record| serde_json::from_slice(record.as_bytes()).ok()))
    }

    /// Every stored link, oldest first.
    pub async fn list(&self) -> Result<Vec<Listed>, LinkStoreError> {
        let names = self.names().await?;
        let keys: Vec<&str> = names.iter().map(String::as_str).collect();
        let mut listed = Vec::new();
        for chunk in keys.chunks(zotero_mcp_core::platform::KV_BULK_READ_MAX) {
            let records = self.kv.get_many(chunk).await?;
            for (name, record) in chunk.iter().zip(records) {
                let Some(link) = record.and_then(|r| serde_json::from_slice::<FeedLink>(r.as_bytes()).ok()) else {
                    continue;
                };
                let id = name.trim_start_matches(KEY_PREFIX).chars().take(ID_LEN).collect();
                listed.push(Listed { id, link });
            }
        }
        zotero_mcp_core::sort::sort_by_key(&mut listed, |l| l.link.created_ms);
        Ok(listed)
    }

    /// Revokes the link `id` names, and says what it served; `None` when no link has that id.
    pub async fn revoke(&self, id: &str) -> Result<Option<Listed>, LinkStoreError> {
        let id = id.trim().to_ascii_lowercase();
        if id.len() != ID_LEN || !id.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Ok(None);
        }
        let names = self.names().await?;
        let Some(name) = names.iter().find(|name| name.trim_start_matches(KEY_PREFIX).starts_with(&id)) else {
            return Ok(None);
        };
        let Some(link) = self.kv.get(name).await?.and_then(|record| serde_json::from_slice(record.as_bytes()).ok())
        else {
            return Ok(None);
        };
        self.kv.delete(name).await?;
        Ok(Some(Listed { id, link }))
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

/// URL-safe characters of a secret: 64 symbols, 6 bits each.
const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// [`SECRET_LEN`] characters from the platform's CSPRNG (`crypto.getRandomValues` on Workers).
fn random_secret() -> Result<String, LinkStoreError> {
    let mut bytes = [0u8; SECRET_LEN];
    getrandom::fill(&mut bytes).map_err(|_| LinkStoreError::Random)?;
    Ok(bytes.iter().map(|b| char::from(ALPHABET[usize::from(*b % 64)])).collect())
}

/// Lowercase hex SHA-256: how a secret is stored and counted, never the secret itself.
pub fn sha256_hex(value: &str) -> String {
    Sha256::digest(value.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_is_32_url_safe_characters_and_never_the_same_twice() {
        let (a, b) = (random_secret().unwrap(), random_secret().unwrap());
        assert_eq!(a.len(), SECRET_LEN);
        assert!(a.bytes().all(|c| ALPHABET.contains(&c)));
        assert_ne!(a, b);
        assert_eq!(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    }
}
