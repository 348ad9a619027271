//! Prints a PDF's page texts as a JSON array of strings (the shape the scoring tools of docs/pdf.md read), and
//! the time and page count on stderr.
//!
//!     cargo run --release -p zotero-mcp-core --example pdf_text -- file.pdf [FROM TO] > out.json

use std::time::Instant;

use zotero_mcp_core::pdf::{PdfDocument, PdfLimits, TextBudget};

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: pdf_text FILE.pdf");
        std::process::exit(2);
    };
    let bytes = match std::fs::read(&path) {
        Ok(bytes) => bytes,
        Err(e) => {
            eprintln!("{path}: {e}");
            std::process::exit(2);
        }
    };
    // Natively there is no 128 MB isolate: the size gate is lifted, the stream limits stay.
    let limits = PdfLimits { max_parse_bytes: usize::MAX, ..PdfLimits::default() };
    let started = Instant::now();
    let page = |n: usize| std::env::args().nth(n).and_then(|a| a.parse::<usize>().ok());
    let result = PdfDocument::open(&bytes, &limits).and_then(|doc| {
        eprint!("{}", if doc.is_lazy() { "[lazy] " } else { "[eager] " });
        doc.text(page(2).unwrap_or(1), page(3).unwrap_or(doc.page_count()), &TextBudget::default())
    });
    let elapsed = started.elapsed().as_secs_f64() * 1000.0;
    match result {
        Ok(pages) => {
            eprintln!("{path}: {} pages in {elapsed:.1} ms", pages.len());
            println!("{}", serde_json::to_string(&pages).unwrap_or_else(|_| "[]".into()));
        }
        Err(e) => {
            eprintln!("{path}: {e} ({elapsed:.1} ms)");
            println!("[]");
            std::process::exit(1);
        }
    }
}
