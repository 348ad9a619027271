//! Attachment files: which attachment an item means, and reading its text — Zotero's own full-text index first
//! (no download), then the file from the library's file store ([`crate::files`]) through the PDF engine, as text, as HTML or as an EPUB, with the result
//! cached in `CACHE_KV` under the TypeScript server's `text:` keys (docs/attachments.md).

pub mod annotate;
mod epub;
pub mod filename;
mod pages;
mod read;
pub mod write;

use serde_json::Value;

use crate::files::{FileStore, FileStoreError, StoreKind};
use crate::pdf::PdfError;
use crate::webdav::{ArchiveError, WebDavError};
use crate::zotero::{ObjectKey, ZoteroClient, ZoteroError, ZoteroObject};

pub use self::pages::{read_pages, PagedText, PdfPage, MAX_PAGED_PAGES};
pub use self::read::{
    download, json_chars, read_outline, read_text, PageRange, ReadSource, TextRead, DEFAULT_MAX_PAGES,
    TEXT_CACHE_TTL_SECS,
};

/// Children looked at when an item's attachment is wanted.
const MAX_CHILDREN: usize = 100;

/// Why an attachment's file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum AttachmentError {
    #[error("item {key} has no stored file attachment (only files Zotero stores, not links, can be read)")]
    NoStoredFile { key: String },
    #[error("item {key} is not an attachment")]
    NotAttachment { key: String },
    #[error("attachment {key} is a {link_mode} attachment, so Zotero stores no file of it (only its link)")]
    Linked { key: String, link_mode: String },
    #[error("no file store is set up here, so attachment files cannot be read; leave FILE_STORAGE unset to read them from Zotero Storage, or set WEBDAV_URL, WEBDAV_USERNAME and WEBDAV_PASSWORD for WebDAV")]
    NoFileStore,
    #[error("no file for attachment {key} on {store}; sync Zotero Desktop so it uploads the file, then try again")]
    NoFileInStore { key: String, store: StoreKind },
    #[error("attachment {key} is {content_type}, which has no text this server can read (PDF, EPUB, HTML and text files can be read)")]
    Unsupported { key: String, content_type: String },
    #[error("attachment {key} is not a PDF, so it has no outline")]
    NotPdf { key: String },
    #[error("reading the text of PDF {key} means parsing the file, which takes more CPU than the {limit_ms} ms a request gets here (CPU_LIMIT_MS: Cloudflare's free plan), so it was not started. Its text can still be read from Zotero's full-text index: let Zotero Desktop index the PDF and sync, then read it again without fromPage/toPage. Or read it through the native server (zotero-mcp serve), or on Workers Paid raise CPU_LIMIT_MS")]
    OverCpuLimit { key: String, limit_ms: u32 },
    #[error("page {from} is past the end of this {total}-page document")]
    PastTheEnd { from: usize, total: usize },
    #[error(transparent)]
    Zotero(#[from] ZoteroError),
    #[error(transparent)]
    WebDav(#[from] WebDavError),
    /// A store's own failure ([`FileStoreError::Store`]).
    #[error(transparent)]
    Store(Box<dyn std::error::Error>),
    #[error(transparent)]
    Archive(#[from] ArchiveError),
    #[error(transparent)]
    Pdf(#[from] PdfError),
}

/// A store's error as the attachment error it is: a WebDAV or archive failure reads the same whichever path
/// met it, so callers match one variant for each (WebDAV's is taken back out of the seam's box).
impl From<FileStoreError> for AttachmentError {
    fn from(error: FileStoreError) -> Self {
        match error {
            FileStoreError::Archive(error) => Self::Archive(error),
            FileStoreError::Store(error) => match error.downcast::<WebDavError>() {
                Ok(error) => Self::WebDav(*error),
                Err(error) => Self::Store(error),
            },
        }
    }
}

/// The attachment `key` means: the item itself when it is an attachment, else its best stored-file child
/// ([`best_of`]).
pub async fn resolve(zotero: &ZoteroClient, key: &ObjectKey) -> Result<ZoteroObject, AttachmentError> {
    Ok(resolve_weighed(zotero, key).await?.0)
}

/// [`resolve`], with every stored file of the item as it was weighed (none when `key` is an attachment).
pub async fn resolve_weighed(
    zotero: &ZoteroClient,
    key: &ObjectKey,
) -> Result<(ZoteroObject, Vec<Candidate>), AttachmentError> {
    let item = zotero.item(key).await?;
    if item.field("itemType") == Some("attachment") {
        return Ok((item, Vec::new()));
    }
    let children = zotero.children(key, MAX_CHILDREN).await?;
    match best_of(zotero, children.items).await? {
        (Some(best), candidates) => Ok((best, candidates)),
        (None, _) => Err(AttachmentError::NoStoredFile { key: key.as_str().to_owned() }),
    }
}

/// At most this many PDFs of one item are measured to choose the best (each costs a full-text read).
pub const MAX_MEASURED_CANDIDATES: usize = 5;

/// One stored file of an item, as [`best_of`] weighed it.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    pub key: String,
    pub title: Option<String>,
    pub content_type: Option<String>,
    /// Characters of its text in Zotero's full-text index; `None` when not measured (not 0: unknown).
    pub chars: Option<u64>,
}

/// The best stored file among an item's `children`, and every stored file weighed. The order is a PDF before
/// an EPUB before HTML or text; among several PDFs (a paper and its supplement, or a news story about it), the
/// one with the longest text in Zotero's index, measured for up to [`MAX_MEASURED_CANDIDATES`] of them. A
/// single PDF is taken without reading anything.
pub async fn best_of(
    zotero: &ZoteroClient,
    children: Vec<ZoteroObject>,
) -> Result<(Option<ZoteroObject>, Vec<Candidate>), AttachmentError> {
    let mut stored: Vec<ZoteroObject> = children.into_iter().filter(|c| require_stored_file(c).is_ok()).collect();
    crate::sort::sort_by_key(&mut stored, |c| content_type_rank(c.field("contentType").unwrap_or_default()));
    let pdfs = stored.iter().take_while(|c| c.field("contentType") == Some("application/pdf")).count();
    let mut chars: Vec<Option<u64>> = vec![None; stored.len()];
    if pdfs > 1 {
        // One at a time: an item with several PDFs is rare, and a `join_all` over this future would link its own
        // copy of the ordered-futures machinery into the Worker. No index entry measures 0 characters; a failed
        // read measures nothing.
        for (at, candidate) in stored.iter().enumerate().take(pdfs.min(MAX_MEASURED_CANDIDATES)) {
            let Ok(key) = key_of(candidate) else { continue };
            chars[at] = match zotero.fulltext(&key).await {
                Ok(text) => Some(text.map_or(0, |t| t.content.chars().count() as u64)),
                Err(_) => None,
            };
        }
    }
    // The longest measured PDF first; Zotero's order between equals and for the rest. An insertion by hand:
    // a library sort over a new key type would link a copy of the whole sorting algorithm into the Worker.
    let rank = |at: usize| {
        (content_type_rank(stored[at].field("contentType").unwrap_or_default()), std::cmp::Reverse(chars[at]))
    };
    let mut order: Vec<usize> = Vec::with_capacity(stored.len());
    for at in 0..stored.len() {
        let place = order.iter().position(|other| rank(at) < rank(*other)).unwrap_or(order.len());
        order.insert(place, at);
    }
    let candidates = order
        .iter()
        .map(|at| Candidate {
            key: stored[*at].key.clone(),
            title: stored[*at].field("title").map(str::to_owned),
            content_type: stored[*at].field("contentType").map(str::to_owned),
            chars: chars[*at],
        })
        .collect();
    let best = order.first().map(|at| stored[*at].clone());
    Ok((best, candidates))
}

/// Checks that `item` is an attachment whose file Zotero stores (and so syncs to the library's file store):
/// `imported_file` or `imported_url`. Links (`linked_file`, `linked_url`) and embedded images have none there.
pub fn require_stored_file(item: &ZoteroObject) -> Result<(), AttachmentError> {
    if item.field("itemType") != Some("attachment") {
        return Err(AttachmentError::NotAttachment { key: item.key.clone() });
    }
    match item.field("linkMode") {
        Some("imported_file" | "imported_url") => Ok(()),
        mode => Err(AttachmentError::Linked { key: item.key.clone(), link_mode: mode.unwrap_or("unknown").to_owned() }),
    }
}

/// Checks that `item` is an attachment whose file `files` can read: a stored file, or a linked file when the
/// store reads those ([`FileStore::reads_linked_files`]: Zotero Desktop's disk).
pub fn require_readable_file(item: &ZoteroObject, files: Option<&dyn FileStore>) -> Result<(), AttachmentError> {
    let linked_readable = files.is_some_and(|store| store.reads_linked_files());
    match require_stored_file(item) {
        Err(AttachmentError::Linked { link_mode, .. }) if linked_readable && link_mode == "linked_file" => Ok(()),
        other => other,
    }
}

/// The item's key as a typed key (an attachment read from Zotero always has a valid one).
pub fn key_of(item: &ZoteroObject) -> Result<ObjectKey, AttachmentError> {
    ObjectKey::parse(&item.key).map_err(|_| AttachmentError::NotAttachment { key: item.key.clone() })
}

/// The preference among an item's files: PDF, EPUB, then text formats, then anything.
fn content_type_rank(content_type: &str) -> u8 {
    match content_type {
        "application/pdf" => 0,
        "application/epub+zip" => 1,
        "text/plain" | "text/html" | "text/markdown" => 2,
        _ => 3,
    }
}

/// A content type from a file name's extension, for attachments that do not record one.
pub fn guess_content_type(filename: &str) -> &'static str {
    let extension = filename.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase()).unwrap_or_default();
    match extension.as_str() {
        "pdf" => "application/pdf",
        "epub" => "application/epub+zip",
        "html" | "htm" | "xhtml" => "text/html",
        "txt" => "text/plain",
        "md" => "text/markdown",
        "json" => "application/json",
        "xml" => "application/xml",
        "docx" => "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        _ => "application/octet-stream",
    }
}

/// A JSON value's string, or null.
fn string_or_null(item: &ZoteroObject, field: &str) -> Value {
    item.field(field).map_or(Value::Null, |s| Value::String(s.to_owned()))
}

/// What Zotero records about an attachment's file, as the info mode reports it.
pub fn file_facts(item: &ZoteroObject) -> Value {
    serde_json::json!({
        "filename": string_or_null(item, "filename"),
        "contentType": string_or_null(item, "contentType"),
        "linkMode": string_or_null(item, "linkMode"),
        "md5": string_or_null(item, "md5"),
        "mtime": item.data.get("mtime").cloned().unwrap_or(Value::Null),
        "title": string_or_null(item, "title"),
        "parentItem": string_or_null(item, "parentItem"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_types_are_ranked_and_guessed() {
        assert!(content_type_rank("application/pdf") < content_type_rank("application/epub+zip"));
        assert!(content_type_rank("text/html") < content_type_rank("image/png"));
        assert_eq!(guess_content_type("Paper.PDF"), "application/pdf");
        assert_eq!(guess_content_type("book.epub"), "application/epub+zip");
        assert_eq!(guess_content_type("noext"), "application/octet-stream");
    }

    #[test]
    fn a_webdav_failure_comes_out_of_the_stores_box_as_itself() {
        let boxed = FileStoreError::store(WebDavError::Unauthorized { status: 401 });
        assert!(matches!(
            AttachmentError::from(boxed),
            AttachmentError::WebDav(WebDavError::Unauthorized { status: 401 })
        ));
        let other = FileStoreError::store(std::fmt::Error);
        assert!(matches!(AttachmentError::from(other), AttachmentError::Store(_)));
    }
}
