//! What can go wrong with a file on Zotero Storage, each case with what to do next.

use crate::platform::HttpError;

#[derive(thiserror::Error)]
pub enum ZoteroStorageError {
    /// The settings cannot work (a base URL that is not one, a library prefix that is not `/users/<n>` or
    /// `/groups/<n>`).
    #[error("Zotero Storage is not configured correctly: {0}")]
    Config(String),

    /// The download answered 404: Zotero has no file for the attachment (Desktop has not uploaded it yet, or the
    /// attachment is a link).
    #[error(
        "no file on Zotero Storage for attachment {key}; if Zotero Desktop shows the file, sync Zotero Desktop \
         (with \"Sync attachment files in My Library using Zotero\" on, Settings > Sync > File Syncing) and try \
         again"
    )]
    NoFile { key: String },

    /// The upload's authorization or registration answered 404.
    #[error(
        "Zotero has no attachment item {key} to store a file on (404); nothing was stored. Create the attachment \
         item first, or check the key"
    )]
    ItemNotFound { key: String },

    /// A 403 to the download: the key may not read files.
    #[error(
        "the Zotero API key may not read this library's files (403{body}). At zotero.org/settings/keys edit the \
         key and tick \"Allow library access\" (file access comes with it), or give it access to the group"
    )]
    ReadDenied { body: String },

    /// A 403 to the upload: the key (or, in a group, the user) may not change files.
    #[error(
        "the Zotero API key may not store files in this library (403{body}); nothing was stored. At \
         zotero.org/settings/keys edit the key and tick \"Allow write access\" (personal library) or give it \
         Read/Write access to the group; in a group, its File Editing setting must also include you"
    )]
    WriteDenied { body: String },

    /// A 403 to the upload in a group whose File Editing setting leaves you out (Web API: "You do not have file
    /// editing access"; Zotero Desktop's local API: "File editing denied"). The key's rights do not change it.
    #[error(
        "the group's File Editing setting does not let you store or change files in this library (403{body}); \
         nothing was stored. A group admin can change it at zotero.org/groups (the group's Settings > Members \
         Settings > File Editing); meanwhile, keep the file in your own library (library users/<id>)"
    )]
    FileEditingDenied { body: String },

    /// 412: the file on Zotero Storage is not the one the precondition named (someone stored another, or
    /// removed it, since the attachment was read). Never retried.
    #[error(
        "the file of attachment {key} on Zotero Storage changed since it was read (Zotero answered 412{}); \
         nothing was stored. Read the attachment again and redo the upload against its current md5 (or as a new \
         file if it has none)",
        at_version(.version)
    )]
    Changed { key: String, version: Option<u64> },

    /// Zotero Desktop refused a replacement whose `If-Match` (the md5 it reports, the file on disk's) is not the
    /// hash of the file as last synced: the file was edited since Zotero last synced it, or replaced since it
    /// was read. Its local API does not tell the synced hash, so nothing here can name it.
    #[error(
        "Zotero Desktop refused to replace the file of attachment {key} (412): it checks a replacement against \
         the file as Zotero last synced it, and the file on disk (md5 {md5}) is not that one; nothing was stored. \
         Read the attachment again: if its md5 changed, someone replaced the file meanwhile, so decide again. If \
         not, the file was edited since Zotero last synced it: let Zotero Desktop sync its files (Sync, with \
         \"Sync attachment files\" on in Settings > Sync), then call again; or replace the file in Zotero Desktop"
    )]
    DesktopNotSynced { key: String, md5: String },

    /// 428: an upload without `If-Match`/`If-None-Match`. This client always sends one, so this is a bug here.
    #[error(
        "Zotero refused to store the file of attachment {key} without a precondition (428); nothing was stored. \
         This is a bug in this server: report it, and add the file in Zotero Desktop meanwhile"
    )]
    PreconditionRequired { key: String },

    /// 413 with the library owner's usage and quota (megabytes, as Zotero reports them).
    #[error(
        "the file ({size_mb:.1} MB) does not fit on Zotero Storage{}; nothing was stored. Free space by deleting \
         attachments (and emptying the trash) in Zotero, upgrade the storage plan at \
         https://www.zotero.org/settings/storage (a group's files count against its owner's), or sync files \
         with WebDAV instead",
        fullness(.usage_mb, .quota_mb)
    )]
    OverQuota { size_mb: f64, usage_mb: Option<f64>, quota_mb: Option<f64> },

    /// Zotero's queue of pending uploads for this account is full ("429 Too many queued uploads" with
    /// `Retry-After`; 413 or 400 with `Retry-After` read the same way).
    #[error("Zotero Storage has too many uploads of this account waiting; nothing was stored. Try again in {retry_after_secs} seconds")]
    UploadQueueFull { retry_after_secs: u64 },

    /// 429 or 503. Not retried here: the caller says when to try again.
    #[error(
        "Zotero is rate limiting or temporarily unavailable ({method} {path} answered {status}); nothing was \
         stored by this request. Try again in {} seconds",
        retry_after_secs.unwrap_or(60)
    )]
    RateLimited { method: &'static str, path: String, status: u16, retry_after_secs: Option<u64> },

    /// Any other status from the Zotero API.
    #[error("Zotero API {method} {path} failed with {status}{body}; nothing was stored. Check the attachment in Zotero and try again")]
    Api { method: &'static str, path: String, status: u16, body: String },

    /// A redirect without `Location`.
    #[error(
        "Zotero Storage answered {status} (a redirect) without a Location for attachment {key}'s file; try again later"
    )]
    RedirectWithoutLocation { key: String, status: u16 },

    /// Redirects beyond the policy's count (a loop, or a chain too long).
    #[error(
        "the link to attachment {key}'s file on Zotero Storage redirected more than {max} times, so it was not \
         followed; try again later"
    )]
    TooManyRedirects { key: String, max: u32 },

    /// A storage URL (a redirect's target, the upload URL) this client does not send to.
    #[error(
        "Zotero Storage named a URL this server does not send to ({url}: {reason}); nothing was sent there. Try \
         again; if it persists, check ZOTERO_API_BASE"
    )]
    RefusedUrl { url: String, reason: &'static str },

    /// The storage origin answered a download with an error status.
    #[error(
        "Zotero Storage's file server answered {status} for attachment {key}'s file (its signed link may have \
         expired); try again: each attempt asks Zotero for a fresh link"
    )]
    DownloadFailed { key: String, status: u16 },

    /// The storage origin refused the upload. The item was not told about it, so it is as it was.
    #[error(
        "the upload of attachment {key}'s file to Zotero Storage failed ({status}{body}); nothing was recorded on \
         the item, so the library is as it was. Try again"
    )]
    UploadFailed { key: String, status: u16, body: String },

    /// Over the policy's download size.
    #[error(
        "attachment {key}'s file on Zotero Storage is larger than this server reads ({limit} bytes at most); use \
         Zotero's full-text index of it instead"
    )]
    TooLarge { key: String, limit: usize },

    /// The downloaded file's md5 is not the item's.
    #[error(
        "the file downloaded from Zotero Storage for attachment {key} does not match the item's md5 (expected \
         {expected}, got {actual}), so it was not used; try again, and if it persists let Zotero Desktop sync the \
         file again"
    )]
    Md5Mismatch { key: String, expected: String, actual: String },

    /// A zipped file (a snapshot) that could not be unpacked.
    #[error(
        "the zipped file Zotero Storage holds for attachment {key} could not be unpacked ({detail}); open the item \
         in Zotero Desktop and let it sync the file again"
    )]
    BadArchive { key: String, detail: String },

    /// A zipped file over the archive limits.
    #[error("the zipped file Zotero Storage holds for attachment {key} is over this server's limit ({detail}); read the text Zotero indexed instead")]
    ArchiveOverLimit { key: String, detail: String },

    /// A file to be stored zipped that could not be zipped.
    #[error(
        "could not zip the file of attachment {key} for upload ({detail}); nothing was uploaded. Upload it unzipped"
    )]
    Pack { key: String, detail: String },

    /// An md5 given as the upload's precondition that is not one.
    #[error("`{value}` is not an md5 (32 hex digits); pass the attachment's `md5` field as Zotero returned it")]
    BadMd5 { value: String },

    /// No answer in time. A write that timed out is not retried: it may have arrived.
    #[error("{url} did not answer within {after_ms} ms; try again later (read the attachment first: an upload may have arrived)")]
    Timeout { url: String, after_ms: u64 },

    /// A step that can record the file on the item was sent but its answer never came (the connection
    /// dropped, or no answer in time): Zotero may have applied it. The registration records the file; so does
    /// the authorization when Zotero already holds these bytes (its `{"exists": 1}` path calls
    /// `Zotero_Storage::updateFileItemInfo` before answering, `ItemsController::_handleFileRequest`). Also a step
    /// refused with 412 after it was sent again (following a 429/503), which the first attempt may have caused.
    /// Never retried blindly: the caller finds out from the item's md5.
    #[error(
        "the {step} of the new file on attachment {key} (md5 {md5}) was sent, but its answer was lost ({cause}): \
         Zotero may or may not have recorded the file on the item"
    )]
    Unanswered { step: UnansweredStep, key: String, md5: String, cause: String },

    /// An answer that does not have the documented shape.
    #[error("Zotero answered {what} with something this server cannot read ({reason}); nothing was stored. Try again")]
    Decode { what: &'static str, reason: String },

    /// No response at all.
    #[error(transparent)]
    Transport(#[from] HttpError),

    /// Zotero Desktop's local API refused or did not answer (its dialog denied, not running, …).
    #[error(transparent)]
    Desktop(#[from] crate::zotero::ZoteroError),
}

/// Which of the upload's requests went unanswered ([`ZoteroStorageError::Unanswered`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnansweredStep {
    /// The first POST: it records the file itself when Zotero already holds the bytes.
    Authorization,
    /// The last POST, `upload=<uploadKey>`.
    Registration,
}

impl std::fmt::Display for UnansweredStep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            UnansweredStep::Authorization => "upload authorization",
            UnansweredStep::Registration => "registration",
        })
    }
}

fn at_version(version: &Option<u64>) -> String {
    version.map(|v| format!(", the item is now at version {v}")).unwrap_or_default()
}

fn fullness(usage: &Option<f64>, quota: &Option<f64>) -> String {
    match (usage, quota) {
        (Some(usage), Some(quota)) => format!(": {usage:.1} MB of the {quota:.1} MB quota are used"),
        _ => String::new(),
    }
}

/// Debug shows the message: a derived Debug would link f64's shortest formatter for `OverQuota`'s megabytes
/// (about 2 KiB of the Worker's gzip budget) only to print what Display already says.
impl std::fmt::Debug for ZoteroStorageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self, f)
    }
}
