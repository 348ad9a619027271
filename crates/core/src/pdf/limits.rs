//! The limits that keep one PDF inside a 128 MB Workers isolate.
//!
//! lopdf parses a document eagerly, and WebAssembly memory never shrinks once grown, so the check comes before
//! the parse. The estimate is built from the file's size and the number of objects its cross-reference data
//! declares: measured on the corpus of docs/pdf.md (as wasm), a parse costs about one to four bytes per byte of
//! file (stream data is copied; encrypted files hold both forms) and one to three KiB per object (dictionaries
//! and their keys), on top of about 2 MB. A 10 MB paper made of a few hundred objects (figures) passes; the
//! 10 MB pgfmanual, with 66,857 objects, does not (it took 154 MB).

use super::error::{PdfError, FILE_TOO_LARGE_ADVICE};

/// Bytes per MiB, for messages.
const MIB: usize = 1024 * 1024;
/// What any parse costs before the file's own share: the reader's tables, fonts, one page's work.
const BASE_BYTES: usize = 2 * MIB;
/// Objects assumed per byte of file when its cross-reference data declares no count (a damaged file): dense,
/// so that such a file is not underestimated (real files have 70–200 bytes per object).
const FILE_BYTES_PER_OBJECT_WITHOUT_COUNT: usize = 64;
/// Where the trailer's `/Size` is looked for: the start (linearized files) and the end of the file, and the
/// cross-reference section that `startxref` points at.
const HEAD_WINDOW: usize = 4 * 1024;
const TAIL_WINDOW: usize = 64 * 1024;
const XREF_WINDOW: usize = 4 * 1024;

/// The limits of one read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PdfLimits {
    /// The largest file accepted at all.
    pub max_file_bytes: usize,
    /// How much memory a parse may be estimated to take.
    pub max_parse_bytes: usize,
    /// Memory assumed per byte of file.
    pub per_file_byte: usize,
    /// Memory assumed per object declared by the cross-reference data.
    pub per_object: usize,
    /// The most one stream may decompress to (object streams, cross-reference streams, page contents).
    pub max_stream_bytes: usize,
}

impl Default for PdfLimits {
    /// Sized for a Workers isolate (128 MB, of which the server itself and the request need some): 96 MiB of
    /// estimated parse at 4 bytes per byte of file and 3 KiB per object (the worst ratios measured); no stream
    /// above 16 MiB decompressed (lopdf grows its output buffer by doubling, so a stream stopped at the limit
    /// has briefly held up to three times it: 48 MiB at 16, 96 MiB at 32 — measured with a Flate bomb as wasm).
    fn default() -> Self {
        Self {
            max_file_bytes: 64 * MIB,
            max_parse_bytes: 96 * MIB,
            per_file_byte: 4,
            per_object: 3 * 1024,
            max_stream_bytes: 16 * MIB,
        }
    }
}

impl PdfLimits {
    /// Refuses a file larger than any read here, whatever its shape.
    pub fn check_size(&self, len: usize) -> Result<(), PdfError> {
        if len > self.max_file_bytes {
            return Err(PdfError::OverBudget {
                limit: "file size",
                detail: format!("{:.1} MB, at most {} MB", mb(len), self.max_file_bytes / MIB),
                advice: FILE_TOO_LARGE_ADVICE,
            });
        }
        Ok(())
    }

    /// Refuses a file whose whole parse (the eager loader's: encrypted or damaged files) would not fit, before
    /// anything is parsed.
    pub fn check_file(&self, bytes: &[u8]) -> Result<(), PdfError> {
        let len = bytes.len();
        self.check_size(len)?;
        let declared = declared_objects(bytes);
        let objects = declared.unwrap_or(len / FILE_BYTES_PER_OBJECT_WITHOUT_COUNT);
        let estimate = BASE_BYTES
            .saturating_add(len.saturating_mul(self.per_file_byte))
            .saturating_add(objects.saturating_mul(self.per_object));
        if estimate > self.max_parse_bytes {
            let objects = match declared {
                Some(n) => format!("{n} objects"),
                None => "no object count in its cross-reference data".to_owned(),
            };
            return Err(PdfError::OverBudget {
                limit: "memory estimate",
                detail: format!(
                    "{:.1} MB of file with {objects} would need about {} MB to read, at most {} MB here",
                    mb(len),
                    estimate / MIB,
                    self.max_parse_bytes / MIB
                ),
                advice: FILE_TOO_LARGE_ADVICE,
            });
        }
        Ok(())
    }
}

/// The number of objects the file's trailer (or cross-reference stream) declares with `/Size`: the largest
/// found where trailers sit. `None` when there is none (a damaged file, which lopdf may still repair).
fn declared_objects(bytes: &[u8]) -> Option<usize> {
    let mut windows = vec![&bytes[..bytes.len().min(HEAD_WINDOW)], &bytes[bytes.len().saturating_sub(TAIL_WINDOW)..]];
    if let Some(at) = super::lazy::startxref(bytes).filter(|at| *at < bytes.len()) {
        windows.push(&bytes[at..bytes.len().min(at.saturating_add(XREF_WINDOW))]);
    }
    windows.into_iter().flat_map(sizes).max()
}

/// Every `/Size <integer>` in `window` (a function's `/Size [ … ]` array is not one).
fn sizes(window: &[u8]) -> Vec<usize> {
    let mut found = Vec::new();
    let mut rest = window;
    while let Some(at) = rest.windows(5).position(|w| w == b"/Size") {
        let after = &rest[at + 5..];
        let digits: String = after
            .iter()
            .skip_while(|b| b.is_ascii_whitespace())
            .take_while(|b| b.is_ascii_digit())
            .take(9)
            .map(|&b| char::from(b))
            .collect();
        if let Ok(n) = digits.parse() {
            found.push(n);
        }
        rest = after;
    }
    found
}

fn mb(bytes: usize) -> f64 {
    bytes as f64 / 1_000_000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `len` bytes of a PDF whose trailer declares `objects` (none when `None`).
    fn file(len: usize, objects: Option<usize>) -> Vec<u8> {
        let trailer = match objects {
            Some(n) => format!("trailer\n<< /Size {n} /Root 1 0 R >>\nstartxref\n9\n%%EOF\n"),
            None => "startxref\n9\n%%EOF\n".to_owned(),
        };
        let mut bytes = b"%PDF-1.7\n".to_vec();
        bytes.resize(len - trailer.len(), b' ');
        bytes.extend_from_slice(trailer.as_bytes());
        bytes
    }

    #[test]
    fn a_paper_of_figures_passes_and_a_manual_of_many_objects_is_refused_before_parsing() {
        let limits = PdfLimits::default();
        assert!(limits.check_file(&file(1_500_000, Some(500))).is_ok());
        // 10 MB of figures in a few hundred objects: about 45 MB to read.
        assert!(limits.check_file(&file(10_000_000, Some(600))).is_ok());
        // pgfmanual's shape: 10 MB and 66,857 objects.
        let refused = limits.check_file(&file(10_000_000, Some(66_857))).unwrap_err();
        assert!(matches!(refused, PdfError::OverBudget { limit: "memory estimate", .. }), "{refused}");
        assert!(refused.to_string().contains("66857 objects"), "{refused}");
        assert!(refused.to_string().contains("full-text index"), "{refused}");
        // Without a declared count the file is assumed dense.
        assert!(limits.check_file(&file(4_000_000, None)).is_err());
        assert!(limits.check_file(&file(100_000, None)).is_ok());
        let huge = limits.check_file(&file(100 * MIB, Some(10))).unwrap_err();
        assert!(matches!(huge, PdfError::OverBudget { limit: "file size", .. }));
    }

    #[test]
    fn the_object_count_is_read_where_trailers_are() {
        assert_eq!(declared_objects(&file(200_000, Some(1234))), Some(1234));
        // A cross-reference stream far from the end, found through startxref; a sampled function's
        // `/Size [ … ]` is not a count.
        let mut bytes = b"%PDF-1.5\n<< /FunctionType 0 /Size [ 255 ] >>\n".to_vec();
        let xref_at = bytes.len() + 100_000;
        bytes.resize(xref_at, b' ');
        bytes.extend_from_slice(b"7 0 obj << /Type /XRef /Size 66857 /W [1 3 1] >> stream\n");
        bytes.resize(bytes.len() + 100_000, 0);
        bytes.extend_from_slice(format!("endstream endobj\nstartxref\n{xref_at}\n%%EOF\n").as_bytes());
        assert_eq!(declared_objects(&bytes), Some(66857));
        assert_eq!(declared_objects(b"%PDF-1.4 nothing"), None);
    }
}
