//! PDF reading in the core crate: open a document within limits, and read what describes it (info, outline,
//! page labels). Runtime-free: it works on bytes, so the Worker, the native server and the tests share it.
//!
//! Built on lopdf 0.47 (its parser, decryption, object streams and decompression limit). Text extraction, page
//! ranges and quote location build on [`PdfDocument`]; docs/pdf.md records the engine
//! decision and its measurements.

mod error;
mod info;
mod lazy;
mod limits;
mod outline;
mod quote;
mod text;

pub use self::error::{PdfError, FILE_TOO_LARGE_ADVICE, TOO_LARGE_ADVICE};
pub use self::info::{PageLabelStyle, PdfInfo};
pub use self::limits::PdfLimits;
pub use self::outline::OutlineEntry;
pub use self::quote::{QuoteLocation, MIN_QUOTE_CHARS};
pub use self::text::{CharBox, PageLayout, TextBudget};

use std::sync::{Mutex, MutexGuard};

use lopdf::{Document, LoadOptions};

use self::lazy::LazyFile;

/// How far into a file the `%PDF-` header may start (some producers put junk before it; readers allow 1 KB).
const HEADER_WINDOW: usize = 1024;

/// An opened PDF.
pub struct PdfDocument {
    /// The objects read so far: all of them when the file was loaded eagerly, else what has been asked for.
    doc: Mutex<Document>,
    /// Where further objects come from, for a file read lazily.
    lazy: Option<Mutex<LazyFile>>,
    /// Page object ids in page order (1-based page `n` is `pages[n - 1]`).
    pages: Vec<lopdf::ObjectId>,
    encrypted: bool,
    limits: PdfLimits,
}

impl std::fmt::Debug for PdfDocument {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PdfDocument")
            .field("pages", &self.pages.len())
            .field("encrypted", &self.encrypted)
            .field("lazy", &self.lazy.is_some())
            .finish()
    }
}

impl PdfDocument {
    /// Opens `bytes` as a PDF within `limits`. Encrypted files open when their user password is empty (the
    /// usual "protected against editing" files); any other password is [`PdfError::PasswordRequired`].
    pub fn open(bytes: &[u8], limits: &PdfLimits) -> Result<Self, PdfError> {
        let window = &bytes[..bytes.len().min(HEADER_WINDOW)];
        if !window.windows(5).any(|w| w == b"%PDF-") {
            return Err(PdfError::NotPdf);
        }
        limits.check_size(bytes.len())?;
        Self::open_owned(bytes.to_vec(), limits)
    }

    /// [`Self::open`] for bytes the caller no longer needs: a file read lazily keeps them instead of a copy (a
    /// downloaded attachment is then held once, not twice).
    pub fn open_owned(bytes: Vec<u8>, limits: &PdfLimits) -> Result<Self, PdfError> {
        Self::open_with(bytes, limits, true)
    }

    fn open_with(bytes: Vec<u8>, limits: &PdfLimits, lazily: bool) -> Result<Self, PdfError> {
        let window = &bytes[..bytes.len().min(HEADER_WINDOW)];
        let Some(start) = window.windows(5).position(|w| w == b"%PDF-") else { return Err(PdfError::NotPdf) };
        limits.check_size(bytes.len())?;
        let bytes = if lazily {
            match Self::open_lazily(bytes, start, limits) {
                Ok(opened) => return Ok(opened),
                Err(bytes) => bytes,
            }
        } else {
            bytes
        };
        let bytes = bytes.as_slice();
        limits.check_file(bytes)?;
        let options = LoadOptions { max_decompressed_size: Some(limits.max_stream_bytes), ..LoadOptions::default() };
        let doc = Document::load_mem_with_options(bytes, options).map_err(|e| load_error(e, limits))?;
        let encrypted = doc.was_encrypted() || doc.is_encrypted();
        if doc.is_encrypted() && !doc.was_encrypted() {
            // Declares encryption but no key was set up: the empty password did not open it.
            return Err(PdfError::PasswordRequired);
        }
        // A page tree that lists a node twice (or contains itself) yields the same page more than once; each
        // page counts once, in the order it first appears.
        let mut seen = std::collections::HashSet::new();
        let pages: Vec<lopdf::ObjectId> = doc.get_pages().into_values().filter(|id| seen.insert(*id)).collect();
        if pages.is_empty() {
            return Err(PdfError::Damaged { reason: "no pages could be found".into() });
        }
        Ok(Self { doc: Mutex::new(doc), lazy: None, pages, encrypted, limits: *limits })
    }

    /// Whether the file is read lazily (for tests and figures).
    pub fn is_lazy(&self) -> bool {
        self.lazy.is_some()
    }

    /// The same as [`Self::open`] but always with lopdf's eager loader, for tests that compare the two paths.
    #[cfg(test)]
    pub(crate) fn open_eagerly(bytes: &[u8], limits: &PdfLimits) -> Result<Self, PdfError> {
        Self::open_with(bytes.to_vec(), limits, false)
    }

    /// The lazy path: the cross-reference data and the page tree now, the rest when asked for. `None` sends the
    /// file to the eager loader (encrypted, damaged, or a page tree that does not load as declared).
    fn open_lazily(bytes: Vec<u8>, start: usize, limits: &PdfLimits) -> Result<Self, Vec<u8>> {
        let version: String = bytes
            .iter()
            .skip(start + 5)
            .take_while(|b| b.is_ascii_digit() || **b == b'.')
            .take(8)
            .map(|&b| char::from(b))
            .collect();
        let (file, doc) = LazyFile::open(bytes, start, version, limits.max_stream_bytes)?;
        let mut seen = std::collections::HashSet::new();
        let pages: Vec<lopdf::ObjectId> = doc.get_pages().into_values().filter(|id| seen.insert(*id)).collect();
        if pages.is_empty() {
            return Err(file.into_bytes());
        }
        Ok(Self { doc: Mutex::new(doc), lazy: Some(Mutex::new(file)), pages, encrypted: false, limits: *limits })
    }

    /// The document, with what `need` loads first when the file is read lazily.
    fn doc_with(&self, need: impl FnOnce(&mut LazyFile, &mut Document)) -> MutexGuard<'_, Document> {
        // A panic while holding the lock cannot leave the document half-changed in a way that matters to a
        // reader: objects are only ever added whole.
        let mut doc = self.doc.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(lazy) = &self.lazy {
            let mut file = lazy.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            need(&mut file, &mut doc);
        }
        doc
    }

    /// How many pages the document has.
    pub fn page_count(&self) -> usize {
        self.pages.len()
    }

    /// Whether the file was encrypted (and opened with the empty password).
    pub fn was_encrypted(&self) -> bool {
        self.encrypted
    }

    /// What the document says about itself.
    pub fn info(&self) -> PdfInfo {
        info::read(&self.doc_with(|_, _| {}), self.pages.len(), self.encrypted)
    }

    /// The outline (bookmarks), in document order, with the page each entry opens.
    pub fn outline(&self) -> Vec<OutlineEntry> {
        outline::read(&self.doc_with(LazyFile::need_outline), &self.pages)
    }

    /// The text of pages `from..=to` (1-based, clamped to the document), one string per page, in the order the
    /// content draws it. [`PdfError::NoTextLayer`] when none of them has any text but the document has images:
    /// a scan, which needs OCR.
    pub fn text(&self, from: usize, to: usize, budget: &TextBudget) -> Result<Vec<String>, PdfError> {
        Ok(self.extract(from, to, budget, false)?.into_iter().map(|page| page.text).collect())
    }

    /// The same as [`Self::text`], with where each character was drawn (for quote location).
    pub fn layout(&self, from: usize, to: usize, budget: &TextBudget) -> Result<Vec<PageLayout>, PdfError> {
        self.extract(from, to, budget, true)
    }

    fn extract(
        &self,
        from: usize,
        to: usize,
        budget: &TextBudget,
        keep_boxes: bool,
    ) -> Result<Vec<PageLayout>, PdfError> {
        let first = from.max(1) - 1;
        let end = to.min(self.pages.len());
        if first >= end {
            return Ok(Vec::new());
        }
        let doc = self.doc_with(|file, doc| file.need_pages(doc, &self.pages[first..end]));
        let pages = text::extract(&doc, &self.pages, first..end, &self.limits, budget, keep_boxes)?;
        if pages.iter().all(|p| p.text.trim().is_empty()) && text::has_images(&doc, &self.pages[first..end]) {
            return Err(PdfError::NoTextLayer);
        }
        Ok(pages)
    }

    /// Where `quote` is: on `page` (1-based) when given, else the first page that has it exactly (or, failing
    /// that, the page with the nearest match). `None` when it is nowhere near, or shorter than
    /// [`MIN_QUOTE_CHARS`] letters.
    pub fn locate(
        &self,
        quote: &str,
        page: Option<usize>,
        budget: &TextBudget,
    ) -> Result<Option<QuoteLocation>, PdfError> {
        let (from, to) = match page {
            Some(page) => (page, page),
            None => (1, self.pages.len()),
        };
        let layouts = self.layout(from, to, budget)?;
        Ok(quote::locate(&layouts, from.max(1), quote))
    }

    /// The visible area of 1-based page `page` (`[x1, y1, x2, y2]` of its CropBox, else MediaBox, inherited
    /// from the page tree as PDF allows), when the page declares one that makes sense.
    pub fn page_box(&self, page: usize) -> Option<[f64; 4]> {
        let id = *self.pages.get(page.checked_sub(1)?)?;
        let doc = self.doc_with(|_, _| {});
        let mut node = doc.get_dictionary(id).ok()?;
        // A page tree is shallow; the bound stops a Parent loop.
        for _ in 0..32 {
            for name in [&b"CropBox"[..], b"MediaBox"] {
                if let Some(rect) = node.get(name).ok().and_then(|o| rect_of(&doc, o)) {
                    return Some(rect);
                }
            }
            let parent = node.get(b"Parent").ok()?.as_reference().ok()?;
            node = doc.get_dictionary(parent).ok()?;
        }
        None
    }

    /// The label of 1-based page `page` as the document numbers it ("iv", "A-3"), when it has page labels.
    pub fn page_label(&self, page: usize) -> Option<String> {
        info::page_label(&self.doc_with(|_, _| {}), page)
    }
}

/// A rectangle object as `[x1, y1, x2, y2]` with x1 < x2 and y1 < y2, or `None` when it is not four numbers.
fn rect_of(doc: &Document, object: &lopdf::Object) -> Option<[f64; 4]> {
    let array = doc.dereference(object).ok()?.1.as_array().ok()?;
    let numbers: Vec<f64> = array
        .iter()
        .filter_map(|o| doc.dereference(o).ok().and_then(|(_, o)| o.as_float().ok().map(f64::from)))
        .collect();
    let [a, b, c, d] = numbers[..] else { return None };
    let rect = [a.min(c), b.min(d), a.max(c), b.max(d)];
    (rect[2] > rect[0] && rect[3] > rect[1] && rect.iter().all(|v| v.is_finite())).then_some(rect)
}

/// Maps a load failure to what the caller can act on.
fn load_error(error: lopdf::Error, limits: &PdfLimits) -> PdfError {
    use lopdf::{DecompressError, Error};
    match error {
        Error::InvalidPassword | Error::Decryption(_) => PdfError::PasswordRequired,
        Error::Decompress(DecompressError::MemoryLimitExceeded { .. }) => PdfError::OverBudget {
            limit: "decompressed stream size",
            detail: format!("a stream inflates to more than {} MB", limits.max_stream_bytes / (1024 * 1024)),
            advice: FILE_TOO_LARGE_ADVICE,
        },
        other => PdfError::Damaged { reason: other.to_string() },
    }
}

#[cfg(test)]
mod tests;
