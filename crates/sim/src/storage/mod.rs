//! Zotero Storage: the file side of the API, as the dataserver keeps it.
//!
//! Zotero keeps file bytes in an S3 bucket under their MD5 (one object per distinct file, shared by every item
//! and library that holds it) and, per item, a row saying which object is the item's file (`storageFileItems`).
//! The API never serves bytes itself: a download answers a redirect to a short-lived signed URL on the bucket's
//! origin, and an upload is authorized by the API, sent straight to the bucket, then registered with the API.
//! This module is that bucket and its signatures; `routes/storage.rs` answers HTTP on the storage origin, and
//! `routes/files.rs` the API's `items/<key>/file` endpoints.
//!
//! The storage origin is a different host from the API on purpose: a client that follows the redirect with its
//! Zotero API key still attached would leak the key to a third party (S3), so the simulated storage refuses any
//! request that carries one.

pub mod multipart;

use std::collections::{HashMap, HashSet};

use crate::dates;
use crate::RecordedRequest;

/// Where the storage answers in process unless told otherwise: a host that can never resolve (`.invalid`), so
/// only the simulator answers it and nothing leaves the machine by mistake.
pub const DEFAULT_ORIGIN: &str = "https://storage.zotero-sim.invalid";
/// The bucket's path on the storage origin (path-style S3 URLs: `/<bucket>/<object key>`).
pub const BUCKET_PATH: &str = "/zotero-storage";
/// Zotero signs download URLs for 60 seconds (`Zotero_Storage::getDownloadURL($item, 60)`).
pub const DOWNLOAD_TTL_SECS: u64 = 60;
/// … and upload policies for an hour (`$s3PresignedRequestTTL`).
pub const UPLOAD_TTL_SECS: u64 = 3600;
/// Zotero's free storage, in MB (`Zotero_Storage::$defaultQuota`).
pub const DEFAULT_QUOTA_MB: u64 = 300;

/// The file an attachment item has on Zotero Storage (a `storageFileItems` row with its `storageFiles` facts).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredFile {
    /// The bucket object's key: the MD5 of the stored bytes (of the ZIP when `zip`).
    pub hash: String,
    pub size: u64,
    /// Whether the stored object is a ZIP of the item's file (Desktop's snapshots).
    pub zip: bool,
}

/// What an upload authorization recorded, until the upload is registered (a `storageUploadQueue` row).
#[derive(Debug, Clone)]
pub struct UploadInfo {
    /// The object's MD5 and name (the ZIP's for a zipped upload).
    pub hash: String,
    pub filename: String,
    pub zip: bool,
    /// For a zipped upload, the item's own file MD5 and name, which the item gets on registration.
    pub item_hash: Option<String>,
    pub item_filename: Option<String>,
    pub size: u64,
    pub mtime: i64,
    pub content_type: Option<String>,
    pub charset: Option<String>,
}

/// A signed download URL's grant.
#[derive(Debug, Clone)]
pub struct SignedDownload {
    pub hash: String,
    pub expires_at: u64,
    pub content_type: String,
}

/// A signed upload policy: what the bucket accepts with it, and until when.
#[derive(Debug, Clone)]
pub struct UploadPolicy {
    pub hash: String,
    pub size: u64,
    pub expires_at: u64,
}

/// The bucket and the signatures it honours.
#[derive(Debug)]
pub struct Storage {
    /// `scheme://host[:port]` of the storage origin.
    pub origin: String,
    /// Object key (an MD5) → bytes.
    pub objects: HashMap<String, Vec<u8>>,
    /// The hashes of files registered at least once: the dataserver's `storageFiles` rows, which only a
    /// registration adds (`Zotero_Storage::addFile`) and which an authorization looks a file up in
    /// (`getLocalFileInfo`, `getFileByHash`) to answer `{"exists": 1}`. An object uploaded to the bucket and
    /// never registered is not among them, so its next authorization asks for the upload again.
    pub registered: HashSet<String>,
    /// Signature → download grant.
    pub downloads: HashMap<String, SignedDownload>,
    /// Policy → what it allows.
    pub policies: HashMap<String, UploadPolicy>,
    /// Upload key → the authorization it came from.
    pub queued: HashMap<String, UploadInfo>,
    /// How many authorized uploads may wait at once before the next authorization is "429 Too many queued
    /// uploads" (`None`: no limit). Zotero's rule is more than `uploadQueueLimit` (10) queued in the last
    /// `uploadQueueTimeout` (300 s) (`Zotero_Storage::queueUpload`), i.e. a limit of 11 here.
    pub queue_limit: Option<usize>,
    /// How many authorizations a full queue has refused: the dataserver picks the refusal's status at random
    /// among 429, 400 and 503; the simulator takes them in that order, so each is seen within three.
    pub queue_refusals: usize,
    /// Tests may shorten every signature's life (0 = expired at once).
    pub ttl_override: Option<u64>,
    /// Every request the storage origin received, apart from the API's log.
    pub requests: Vec<RecordedRequest>,
}

impl Default for Storage {
    fn default() -> Self {
        Self {
            origin: DEFAULT_ORIGIN.to_string(),
            objects: HashMap::new(),
            registered: HashSet::new(),
            downloads: HashMap::new(),
            policies: HashMap::new(),
            queued: HashMap::new(),
            queue_limit: None,
            queue_refusals: 0,
            ttl_override: None,
            requests: Vec::new(),
        }
    }
}

/// Why the simulator could not sign a URL.
#[derive(Debug, thiserror::Error)]
#[error("zotero-sim could not draw random bytes for a signature ({0}); try the request again")]
pub struct NoRandomness(String);

impl Storage {
    /// The authority (`host[:port]`) of the storage origin, to tell its requests from the API's.
    pub fn authority(&self) -> &str {
        let rest = self.origin.split_once("://").map_or(self.origin.as_str(), |(_, r)| r);
        rest.trim_end_matches('/')
    }

    fn expiry(&self, ttl: u64) -> u64 {
        dates::unix_now() + self.ttl_override.unwrap_or(ttl)
    }

    /// A signed, expiring URL for the object `hash`, served with `content_type`.
    pub fn sign_download(&mut self, hash: &str, content_type: &str) -> Result<String, NoRandomness> {
        let signature = random_hex(16)?;
        let expires_at = self.expiry(DOWNLOAD_TTL_SECS);
        self.downloads.insert(
            signature.clone(),
            SignedDownload { hash: hash.to_string(), expires_at, content_type: content_type.to_string() },
        );
        Ok(format!("{}{BUCKET_PATH}/{hash}?Expires={expires_at}&Signature={signature}", self.origin))
    }

    /// A signed upload policy for one object of exactly `size` bytes with MD5 `hash`.
    pub fn sign_upload(&mut self, hash: &str, size: u64) -> Result<String, NoRandomness> {
        let policy = random_hex(24)?;
        let expires_at = self.expiry(UPLOAD_TTL_SECS);
        self.policies.insert(policy.clone(), UploadPolicy { hash: hash.to_string(), size, expires_at });
        Ok(policy)
    }

    /// The URL uploads are posted to (the bucket's root, as S3's POST Object takes them).
    pub fn upload_url(&self) -> String {
        format!("{}{BUCKET_PATH}/", self.origin)
    }
}

/// `n` random bytes as lowercase hex: signatures and upload keys must not be guessable.
pub fn random_hex(n: usize) -> Result<String, NoRandomness> {
    let mut bytes = vec![0u8; n];
    getrandom::fill(&mut bytes).map_err(|e| NoRandomness(e.to_string()))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Whether `s` is an MD5 as Zotero writes them: 32 lowercase hex digits.
pub fn is_md5(s: &str) -> bool {
    s.len() == 32 && s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}
