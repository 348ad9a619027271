//! Reading an attachment's text: the index, the cache, the file.

use serde::{Deserialize, Serialize};

use super::{epub, guess_content_type, key_of, require_readable_file, AttachmentError};
use crate::files::{FileStore, StoreKind};
use crate::html_text::html_to_text;
use crate::pdf::{OutlineEntry, PdfDocument, PdfLimits, TextBudget};
use crate::platform::{KvStore, KvWrite};
use crate::zotero::{ObjectKey, ZoteroClient, ZoteroObject};

/// Pages read in one call when the caller does not say (the TypeScript server's default).
pub const DEFAULT_MAX_PAGES: usize = 60;
/// How long an extracted text stays in `CACHE_KV`: a file changes only with a new MD5, which is in the key.
pub const TEXT_CACHE_TTL_SECS: u64 = 30 * 24 * 3600;

/// Which pages to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageRange {
    pub from: Option<usize>,
    pub to: Option<usize>,
    /// The most pages read; a longer range is cut and reported as truncated.
    pub max_pages: usize,
    /// The most characters of text one answer may carry, counted as JSON writes them ([`json_chars`]). Pages
    /// are kept whole while they fit; the first one that does not ends the read, reported as truncated, so the
    /// caller continues from it. `None`: no limit.
    pub max_chars: Option<usize>,
    /// The CPU milliseconds the runtime gives a request, when it is known to be too few to parse a PDF
    /// ([`PDF_PARSE_MIN_CPU_MS`]): a read that would parse one is then refused before its download, since the
    /// runtime would stop it part-way. `None`: no such limit.
    pub cpu_limit_ms: Option<u32>,
}

/// The CPU milliseconds below which a PDF is not parsed. In the Worker (`make bench`, the CPU table in
/// docs/performance.md) a first read of five pages of a 230 KB PDF took 17 ms warm and 59 ms on the main thread
/// of a fresh isolate: a page or two of a small file may fit 10 ms when the isolate is warm, none when it is cold,
/// and which it will be is not known before the call, so a limit under this is taken as too little.
pub const PDF_PARSE_MIN_CPU_MS: u32 = 20;

impl PageRange {
    /// The whole document (as far as `max_pages` and `max_chars` go).
    pub fn whole(max_pages: usize, max_chars: Option<usize>) -> Self {
        Self { from: None, to: None, max_pages, max_chars, cpu_limit_ms: None }
    }

    /// The same range, under a runtime giving each request `limit` CPU milliseconds (`None`: unknown).
    pub fn within_cpu(self, limit: Option<u32>) -> Self {
        Self { cpu_limit_ms: limit, ..self }
    }

    fn fits(&self, text: &str) -> bool {
        self.max_chars.is_none_or(|max| json_chars(text) <= max)
    }
}

/// How many characters `text` takes inside a JSON string: one per character, two for a quote, backslash,
/// newline, tab or carriage return, six for another control character.
pub fn json_chars(text: &str) -> usize {
    text.chars().map(json_cost).sum()
}

fn json_cost(c: char) -> usize {
    match c {
        '"' | '\\' | '\n' | '\t' | '\r' => 2,
        c if (c as u32) < 0x20 => 6,
        _ => 1,
    }
}

/// Where a text came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ReadSource {
    /// Zotero's full-text index (what Zotero Desktop extracted and synced).
    #[serde(rename = "zotero-index")]
    ZoteroIndex,
    /// The file itself, from WebDAV.
    #[serde(rename = "webdav")]
    WebDav,
    /// The file itself, from Zotero Storage.
    #[serde(rename = "zotero-storage")]
    ZoteroStorage,
    /// The file itself, from Zotero Desktop's data directory on this machine.
    #[serde(rename = "zotero-desktop")]
    Desktop,
}

impl ReadSource {
    /// The name answers give it (the serde name): `zotero-index`, `webdav`, `zotero-storage` or `zotero-desktop`.
    pub fn name(self) -> &'static str {
        match self {
            Self::ZoteroIndex => "zotero-index",
            Self::WebDav => "webdav",
            Self::ZoteroStorage => "zotero-storage",
            Self::Desktop => "zotero-desktop",
        }
    }

    /// What a text read from a file of `store` says it came from.
    pub(super) fn file_in(store: StoreKind) -> Self {
        match store {
            StoreKind::WebDav => Self::WebDav,
            StoreKind::ZoteroStorage => Self::ZoteroStorage,
            StoreKind::Desktop => Self::Desktop,
        }
    }
}

/// An attachment's text, with the pages it covers. Stored in the cache as this JSON (the TypeScript server's
/// shape, so a deployment that switches keeps its cache).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextRead {
    pub source: ReadSource,
    #[serde(default)]
    pub total_pages: Option<u64>,
    /// The pages read, for a paged format; empty otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pages: Vec<usize>,
    /// Whether more was asked for than was read (`max_pages`, or the text budget `max_chars`).
    #[serde(default)]
    pub truncated: bool,
    /// The text ends inside a page or a document without pages, cut at the text budget: the rest of that
    /// page (or document) is not in this answer. Not stored: a cut read is never cached.
    #[serde(skip)]
    pub cut: bool,
    pub text: String,
    /// Whether the answer came from the cache (not stored).
    #[serde(skip)]
    pub from_cache: bool,
}

/// The text of `attachment` (already resolved): Zotero's index when the whole document is wanted and
/// `force_file` is not set, else the cached or freshly extracted file.
pub async fn read_text(
    zotero: &ZoteroClient,
    files: Option<&dyn FileStore>,
    cache: &dyn KvStore,
    attachment: &ZoteroObject,
    range: PageRange,
    force_file: bool,
) -> Result<TextRead, AttachmentError> {
    let key = key_of(attachment)?;
    if range.from.is_none() && range.to.is_none() && !force_file {
        if let Some(indexed) = zotero.fulltext(&key).await? {
            if !indexed.content.trim().is_empty() {
                let read = TextRead {
                    source: ReadSource::ZoteroIndex,
                    total_pages: indexed.total_pages,
                    pages: Vec::new(),
                    truncated: false,
                    cut: false,
                    text: indexed.content,
                    from_cache: false,
                };
                // Zotero's index has no page breaks, so an index text longer than one answer cannot be
                // continued; the file, read by pages, can. Only when there is no file to read is it cut.
                let file_readable = files.is_some() && is_readable_pdf(files, attachment);
                if range.fits(&read.text) || !file_readable {
                    return Ok(cut_to_fit(read, range.max_chars));
                }
            }
        }
    }
    require_readable_file(attachment, files)?;
    let cache_key = cache_key(attachment, range);
    if let Ok(Some(hit)) = cache.get(&cache_key).await {
        if let Ok(mut read) = serde_json::from_slice::<TextRead>(hit.as_bytes()) {
            // A read cached under another budget (or by the TypeScript server, which has none) may not fit.
            if range.fits(&read.text) {
                read.from_cache = true;
                return Ok(read);
            }
        }
    }
    if let Some(limit) = range.cpu_limit_ms.filter(|limit| *limit < PDF_PARSE_MIN_CPU_MS) {
        if attachment.field("contentType") == Some("application/pdf") {
            return Err(AttachmentError::OverCpuLimit { key: key.to_string(), limit_ms: limit });
        }
    }
    let (store, filename, data) = fetch(files, attachment, &key).await?;
    let content_type =
        attachment.field("contentType").map_or_else(|| guess_content_type(&filename).to_owned(), str::to_owned);
    let read = extract(&attachment.key, &content_type, data, range, ReadSource::file_in(store))?;
    // A cut text is not cached: the TypeScript server shares these keys and would serve it as whole.
    if !read.cut {
        if let Ok(json) = serde_json::to_string(&read) {
            // A cache that cannot be written costs the next call a download, nothing else.
            let _ = cache.put(&cache_key, &json, KvWrite::ExpiresIn(TEXT_CACHE_TTL_SECS)).await;
        }
    }
    Ok(read)
}

fn is_readable_pdf(files: Option<&dyn FileStore>, attachment: &ZoteroObject) -> bool {
    require_readable_file(attachment, files).is_ok() && attachment.field("contentType") == Some("application/pdf")
}

/// A text without pages, cut at the budget when it is longer (at the last paragraph or line break before the
/// limit when there is one in its second half, else at a character), and marked as cut.
fn cut_to_fit(mut read: TextRead, max_chars: Option<usize>) -> TextRead {
    let Some(max) = max_chars else { return read };
    if json_chars(&read.text) <= max {
        return read;
    }
    let end = prefix_within(&read.text, max);
    // A byte scan, not `rfind("\n\n")`: a reverse substring search links a searcher of its own into the Worker.
    let bytes = &read.text.as_bytes()[..end];
    let paragraph = bytes.windows(2).rposition(|w| w == b"\n\n");
    let line = bytes.iter().rposition(|b| *b == b'\n');
    let end = [paragraph, line].into_iter().flatten().find(|at| *at >= end / 2).unwrap_or(end);
    read.text.truncate(end);
    read.truncated = true;
    read.cut = true;
    read
}

/// The byte length of the longest prefix of `text` whose [`json_chars`] is at most `max`.
fn prefix_within(text: &str, max: usize) -> usize {
    let mut spent = 0;
    for (at, c) in text.char_indices() {
        spent += json_cost(c);
        if spent > max {
            return at;
        }
    }
    text.len()
}

/// The outline of `attachment`'s PDF.
pub async fn read_outline(
    files: Option<&dyn FileStore>,
    attachment: &ZoteroObject,
) -> Result<Vec<OutlineEntry>, AttachmentError> {
    let key = key_of(attachment)?;
    require_readable_file(attachment, files)?;
    let (filename, data) = download(files, attachment, &key).await?;
    let content_type = attachment.field("contentType").unwrap_or_else(|| guess_content_type(&filename));
    if content_type != "application/pdf" {
        return Err(AttachmentError::NotPdf { key: attachment.key.clone() });
    }
    Ok(PdfDocument::open_owned(data, &PdfLimits::default())?.outline())
}

/// `text:<attachment>:<md5 or version>:<from>-<to>:<max pages>`, the TypeScript server's key.
fn cache_key(attachment: &ZoteroObject, range: PageRange) -> String {
    let revision = attachment.field("md5").map_or_else(|| attachment.version.to_string(), str::to_owned);
    let from = range.from.unwrap_or(1);
    let to = range.to.map_or_else(|| "end".to_owned(), |t| t.to_string());
    format!("text:{}:{revision}:{from}-{to}:{}", attachment.key, range.max_pages)
}

/// The stored file of `attachment` from the library's file store (`None`: the library has none set up): its
/// name and bytes.
pub async fn download(
    files: Option<&dyn FileStore>,
    attachment: &ZoteroObject,
    key: &ObjectKey,
) -> Result<(String, Vec<u8>), AttachmentError> {
    let (_, filename, data) = fetch(files, attachment, key).await?;
    Ok((filename, data))
}

/// [`download`], also saying which store the file came from.
pub(super) async fn fetch(
    files: Option<&dyn FileStore>,
    attachment: &ZoteroObject,
    key: &ObjectKey,
) -> Result<(StoreKind, String, Vec<u8>), AttachmentError> {
    let store = files.ok_or(AttachmentError::NoFileStore)?;
    let stored = store
        .fetch(attachment, key)
        .await?
        .ok_or_else(|| AttachmentError::NoFileInStore { key: attachment.key.clone(), store: store.kind() })?;
    let filename = attachment.field("filename").map_or(stored.filename, str::to_owned);
    Ok((store.kind(), filename, stored.data))
}

/// Text out of a file by its content type.
fn extract(
    key: &str,
    content_type: &str,
    data: Vec<u8>,
    range: PageRange,
    source: ReadSource,
) -> Result<TextRead, AttachmentError> {
    let whole = |text: String| {
        let read = TextRead {
            source,
            total_pages: None,
            pages: Vec::new(),
            truncated: false,
            cut: false,
            text,
            from_cache: false,
        };
        cut_to_fit(read, range.max_chars)
    };
    match content_type {
        "application/pdf" => pdf_text(data, range, source),
        "application/epub+zip" => Ok(whole(epub::text(&data)?)),
        "text/html" | "application/xhtml+xml" => Ok(whole(html_to_text(&String::from_utf8_lossy(&data)))),
        t if t.starts_with("text/") || t == "application/json" || t == "application/xml" => {
            Ok(whole(String::from_utf8_lossy(&data).into_owned()))
        }
        other => Err(AttachmentError::Unsupported { key: key.to_owned(), content_type: other.to_owned() }),
    }
}

fn pdf_text(data: Vec<u8>, range: PageRange, source: ReadSource) -> Result<TextRead, AttachmentError> {
    let doc = PdfDocument::open_owned(data, &PdfLimits::default())?;
    let total = doc.page_count();
    let from = range.from.unwrap_or(1).max(1);
    if from > total {
        return Err(AttachmentError::PastTheEnd { from, total });
    }
    let requested_to = range.to.unwrap_or(total).min(total);
    let mut read = TextRead {
        source,
        total_pages: Some(total as u64),
        pages: Vec::new(),
        truncated: false,
        cut: false,
        text: String::new(),
        from_cache: false,
    };
    if requested_to < from {
        return Ok(read);
    }
    let to = requested_to.min(from + range.max_pages.max(1) - 1);
    let texts = doc.text(from, to, &TextBudget::default())?;
    // Whole pages while they fit the budget; the page separator counts too.
    let mut kept = Vec::new();
    let mut spent = 0;
    for text in texts.iter().map(|t| t.trim()) {
        let cost = json_chars(text) + if kept.is_empty() { 0 } else { 4 };
        if range.max_chars.is_some_and(|max| spent + cost > max) {
            break;
        }
        spent += cost;
        kept.push(text);
    }
    let last = from + kept.len().max(1) - 1;
    if kept.is_empty() {
        // One page is already over the budget: its beginning, cut, so the read still moves on.
        let first = texts.first().map_or("", |t| t.trim());
        let mut cut = cut_to_fit(TextRead { text: first.to_owned(), ..read.clone() }, range.max_chars);
        cut.pages = vec![from];
        cut.truncated = true;
        return Ok(cut);
    }
    read.text = kept.join("\n\n");
    read.pages = (from..=last).collect();
    read.truncated = last < requested_to;
    Ok(read)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_chars_counts_what_escaping_adds() {
        assert_eq!(json_chars("abc"), 3);
        assert_eq!(json_chars("a\"b\\c\nd"), 10);
        assert_eq!(json_chars("\u{1}"), 6);
        assert_eq!(json_chars("한국어"), 3, "characters, not UTF-8 bytes");
    }

    fn index_read(text: &str) -> TextRead {
        TextRead {
            source: ReadSource::ZoteroIndex,
            total_pages: None,
            pages: Vec::new(),
            truncated: false,
            cut: false,
            text: text.to_owned(),
            from_cache: false,
        }
    }

    #[test]
    fn a_text_over_the_budget_is_cut_at_a_paragraph_and_marked() {
        let text = format!("{}\n\n{}", "a".repeat(60), "b".repeat(60));
        let cut = cut_to_fit(index_read(&text), Some(100));
        assert_eq!((cut.text.as_str(), cut.truncated, cut.cut), ("a".repeat(60).as_str(), true, true));
        let whole = cut_to_fit(index_read(&text), Some(200));
        assert_eq!((whole.text.len(), whole.truncated, whole.cut), (122, false, false));
        // No break in the second half: cut at a character boundary, never inside one.
        let korean = "가".repeat(50);
        let cut = cut_to_fit(index_read(&korean), Some(20));
        assert_eq!(cut.text.chars().count(), 20);
    }
}
