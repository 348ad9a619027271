//! The PDF reader (`zotero_mcp_core::pdf`): open, info, outline, page labels and the text layer, on any bytes.
//!
//! Input: a file (the seeds are small PDFs made by `fuzz/seeds/pdf_text/make.sh`-style tools or taken from
//! real files; libFuzzer mutates them into broken ones). Limits are small, so that one input costs little.
//!
//! What must hold: no panic, no stack overflow, no unbounded allocation (libFuzzer's -rss_limit_mb catches
//! that); every error is one of the typed ones; on success the page count is at least 1, the text has one
//! string per page asked for, no string holds a control character other than `\n`, and page labels and the
//! outline point at pages that exist.

#![no_main]

use libfuzzer_sys::fuzz_target;
use zotero_mcp_core::pdf::{PdfDocument, PdfError, PdfLimits, TextBudget};

fuzz_target!(|data: &[u8]| {
    let limits = PdfLimits {
        max_file_bytes: 1024 * 1024,
        max_parse_bytes: 64 * 1024 * 1024,
        per_file_byte: 4,
        per_object: 3 * 1024,
        max_stream_bytes: 4 * 1024 * 1024,
    };
    let doc = match PdfDocument::open(data, &limits) {
        Ok(doc) => doc,
        Err(PdfError::NotPdf | PdfError::Damaged { .. } | PdfError::PasswordRequired | PdfError::OverBudget { .. }) => {
            return
        }
        Err(other) => panic!("open gave an error it should not: {other}"),
    };
    let pages = doc.page_count();
    assert!(pages >= 1);
    let info = doc.info();
    assert_eq!(info.page_count, pages);
    for entry in doc.outline() {
        assert!(entry.depth >= 1 && entry.page.is_none_or(|p| (1..=pages).contains(&p)), "{entry:?}");
    }
    for page in 1..=pages.min(3) {
        let _ = doc.page_label(page);
    }
    let budget = TextBudget { max_operators: 200_000, max_decoded_bytes: 16 * 1024 * 1024 };
    let last = pages.min(5);
    match doc.text(1, last, &budget) {
        Ok(texts) => {
            assert_eq!(texts.len(), last, "one string per page asked for");
            for text in texts {
                assert!(!text.chars().any(|c| c.is_control() && c != '\n'), "{text:?}");
            }
        }
        Err(PdfError::NoTextLayer | PdfError::OverBudget { .. }) => {}
        Err(other) => panic!("text gave an error it should not: {other}"),
    }
});
