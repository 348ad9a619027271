//! The limits that keep one PDF inside a 128 MB Workers isolate.
//!
//! lopdf parses a document eagerly, and the memory that takes was measured at 15–35 times the file's size on
//! real files (a 1.1 MB Chinese thesis: 37 MB; the 10 MB pgfmanual: 178 MB of wasm memory). WebAssembly memory
//! never shrinks once grown, so the check comes before the parse, from the file's size.

use super::error::{PdfError, FILE_TOO_LARGE_ADVICE};

/// Bytes per MiB, for messages.
const MIB: usize = 1024 * 1024;

/// The limits of one read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PdfLimits {
    /// The largest file accepted at all.
    pub max_file_bytes: usize,
    /// How much memory a parse may be estimated to take, at [`PdfLimits::parse_factor`] times the file size.
    pub max_parse_bytes: usize,
    /// Memory per byte of file assumed for the parse: the measured typical ratio, not the worst one, so that a
    /// usual paper passes; the per-stream limit below catches the files that inflate far beyond it.
    pub parse_factor: usize,
    /// The most one stream may decompress to (object streams, cross-reference streams, page contents).
    pub max_stream_bytes: usize,
}

impl Default for PdfLimits {
    /// Sized for a Workers isolate (128 MB, of which the server itself and the request need some): 96 MiB of
    /// estimated parse at 20 bytes per byte of file, so files up to about 4.8 MB are read whole; no stream above
    /// 16 MiB decompressed (lopdf grows its output buffer by doubling, so a stream stopped at the limit has
    /// briefly held up to three times it: 48 MiB at 16, 96 MiB at 32 — measured with a Flate bomb as wasm).
    fn default() -> Self {
        Self { max_file_bytes: 64 * MIB, max_parse_bytes: 96 * MIB, parse_factor: 20, max_stream_bytes: 16 * MIB }
    }
}

impl PdfLimits {
    /// Refuses a file whose parse would not fit, before anything is parsed.
    pub fn check_file(&self, len: usize) -> Result<(), PdfError> {
        if len > self.max_file_bytes {
            return Err(PdfError::OverBudget {
                limit: "file size",
                detail: format!("{:.1} MB, at most {} MB", mb(len), self.max_file_bytes / MIB),
                advice: FILE_TOO_LARGE_ADVICE,
            });
        }
        let estimate = len.saturating_mul(self.parse_factor);
        if estimate > self.max_parse_bytes {
            return Err(PdfError::OverBudget {
                limit: "memory estimate",
                detail: format!(
                    "{:.1} MB of file would need about {} MB to read, at most {} MB here",
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

fn mb(bytes: usize) -> f64 {
    bytes as f64 / 1_000_000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_usual_paper_passes_and_a_large_manual_is_refused_before_parsing() {
        let limits = PdfLimits::default();
        assert!(limits.check_file(1_500_000).is_ok());
        assert!(limits.check_file(4_800_000).is_ok());
        let refused = limits.check_file(10_000_000).unwrap_err();
        assert!(matches!(refused, PdfError::OverBudget { limit: "memory estimate", .. }), "{refused}");
        assert!(refused.to_string().contains("full-text index"), "{refused}");
        let huge = limits.check_file(100 * MIB).unwrap_err();
        assert!(matches!(huge, PdfError::OverBudget { limit: "file size", .. }));
    }
}
