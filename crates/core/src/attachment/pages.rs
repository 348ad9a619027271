//! A PDF attachment's text page by page, each page with its number and its label: what a reader that cites
//! pages needs (`fetch`). Zotero's full-text index has no page breaks, so this always reads the file; the
//! pages are cached under their own key beside the whole-text cache, so only the first reader downloads.

use super::read::{fetch, TEXT_CACHE_TTL_SECS};
use super::{key_of, require_readable_file, AttachmentError, ReadSource};
use crate::files::FileStore;
use crate::pdf::{PdfDocument, PdfLimits, TextBudget};
use crate::platform::{KvStore, KvWrite};
use crate::zotero::ZoteroObject;

/// The most pages one read extracts (a longer document is read this far, and says so).
pub const MAX_PAGED_PAGES: usize = 600;
/// Pages cached only below this size (KV takes 25 MiB a value; a huge book is read again instead).
const MAX_CACHED: usize = 8 * 1024 * 1024;

/// One page of a PDF.
#[derive(Debug, Clone, PartialEq)]
pub struct PdfPage {
    /// 1-based, as a viewer counts pages.
    pub number: usize,
    /// The page's own label where the document gives labels ("iv", "A-3"), when it differs from `number`.
    pub label: Option<String>,
    pub text: String,
}

/// A PDF's text by pages.
#[derive(Debug, Clone, PartialEq)]
pub struct PagedText {
    pub source: ReadSource,
    pub total_pages: usize,
    /// From page 1 on; fewer than `total_pages` when the document is longer than [`MAX_PAGED_PAGES`].
    pub pages: Vec<PdfPage>,
}

/// The pages of `attachment`'s stored PDF (already resolved), from the cache or the file store.
pub async fn read_pages(
    files: Option<&dyn FileStore>,
    cache: &dyn KvStore,
    attachment: &ZoteroObject,
) -> Result<PagedText, AttachmentError> {
    require_readable_file(attachment, files)?;
    let key = key_of(attachment)?;
    if attachment.field("contentType").is_some_and(|t| t != "application/pdf") {
        return Err(AttachmentError::NotPdf { key: attachment.key.clone() });
    }
    let cache_key = cache_key(attachment);
    if let Ok(Some(hit)) = cache.get(&cache_key).await {
        if let Some(paged) = PagedText::decode(&hit) {
            return Ok(paged);
        }
    }
    let (store, _, data) = fetch(files, attachment, &key).await?;
    let doc = PdfDocument::open_owned(data, &PdfLimits::default())?;
    let total = doc.page_count();
    let last = total.min(MAX_PAGED_PAGES);
    let texts = if last == 0 { Vec::new() } else { doc.text(1, last, &TextBudget::default())? };
    let pages = texts
        .into_iter()
        .enumerate()
        .map(|(at, text)| {
            let number = at + 1;
            let label = doc.page_label(number).filter(|label| *label != number.to_string());
            // A form feed separates cached pages; inside a page it is only a page break the PDF drew.
            PdfPage { number, label, text: text.trim().replace(SEPARATOR, " ") }
        })
        .collect();
    let paged = PagedText { source: ReadSource::file_in(store), total_pages: total, pages };
    let encoded = paged.encode();
    if encoded.len() <= MAX_CACHED {
        // A cache that cannot be written costs the next call a download, nothing else.
        let _ = cache.put(&cache_key, &encoded, KvWrite::ExpiresIn(TEXT_CACHE_TTL_SECS)).await;
    }
    Ok(paged)
}

/// Between cached pages (and after the header): a form feed, which no page text keeps.
const SEPARATOR: char = '\u{c}';

impl PagedText {
    /// `<source> <total pages>`, then each page as `<label>\n<text>`, all separated by form feeds. Plain text,
    /// not JSON: a serde reader for these two types cost the Worker more than this.
    fn encode(&self) -> String {
        let mut out = format!("{} {}", self.source.name(), self.total_pages);
        for page in &self.pages {
            out.push(SEPARATOR);
            out.push_str(page.label.as_deref().unwrap_or_default());
            out.push('\n');
            out.push_str(&page.text);
        }
        out
    }

    /// [`Self::encode`] read back; `None` for anything else (the entry is then read again from the file).
    fn decode(text: &str) -> Option<Self> {
        let mut parts = text.split(SEPARATOR);
        let (source, total) = parts.next()?.split_once(' ')?;
        let source = match source {
            "zotero-storage" => ReadSource::ZoteroStorage,
            "webdav" => ReadSource::WebDav,
            _ => return None,
        };
        let mut pages = Vec::new();
        for (at, part) in parts.enumerate() {
            let (label, text) = part.split_once('\n')?;
            let label = (!label.is_empty()).then(|| label.to_owned());
            pages.push(PdfPage { number: at + 1, label, text: text.to_owned() });
        }
        Some(Self { source, total_pages: total.parse().ok()?, pages })
    }
}

/// `pages:<key>:<md5>`: a new file has a new MD5, so a stale entry is never read.
fn cache_key(attachment: &ZoteroObject) -> String {
    let revision = attachment.field("md5").map_or_else(|| attachment.version.to_string(), str::to_owned);
    format!("pages:{}:{revision}", attachment.key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cached_pages_read_back_as_they_were_written() {
        let paged = PagedText {
            source: ReadSource::ZoteroStorage,
            total_pages: 700,
            pages: vec![
                PdfPage { number: 1, label: Some("i".into()), text: "Preface\nline two".into() },
                PdfPage { number: 2, label: None, text: String::new() },
                PdfPage { number: 3, label: None, text: "Body".into() },
            ],
        };
        assert_eq!(PagedText::decode(&paged.encode()), Some(paged));
        assert_eq!(PagedText::decode("{\"json\": true}"), None);
        assert_eq!(PagedText::decode("webdav x"), None);
    }
}
