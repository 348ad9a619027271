//! The PDF engine as a WebAssembly module for `make bench-pdf` (scripts/bench-pdf.sh): built for
//! `wasm32-unknown-unknown`, bound with `wasm-bindgen --target nodejs`, and driven from Node (the V8 of Workers)
//! by tests/bench/pdf/engine.mjs beside pdf.js. Natively this example is empty.
//!
//! Every export opens the file itself, so a call's time includes the parse, as a tool call's would.
#![cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]

#[cfg(target_arch = "wasm32")]
mod exports {
    use serde_json::json;
    use wasm_bindgen::prelude::wasm_bindgen;
    use zotero_mcp_core::pdf::{PdfDocument, PdfError, PdfLimits, TextBudget};

    /// The Worker's limits, or (`gate` false) the same with the size gate lifted, to score every file's text.
    fn limits(gate: bool) -> PdfLimits {
        let limits = PdfLimits::default();
        if gate {
            limits
        } else {
            PdfLimits { max_file_bytes: usize::MAX, max_parse_bytes: usize::MAX, ..limits }
        }
    }

    /// A short status for the figures table: which typed error, or "ok".
    fn status(error: &PdfError) -> String {
        let kind = match error {
            PdfError::NotPdf => "not-pdf",
            PdfError::Damaged { .. } => "damaged",
            PdfError::PasswordRequired => "password",
            PdfError::NoTextLayer => "no-text-layer",
            PdfError::OverBudget { limit, .. } => return format!("over-budget: {limit}"),
        };
        kind.to_owned()
    }

    fn reply(result: Result<serde_json::Value, PdfError>) -> String {
        match result {
            Ok(value) => json!({ "status": "ok", "result": value }).to_string(),
            Err(error) => json!({ "status": status(&error), "message": error.to_string() }).to_string(),
        }
    }

    /// The text of pages `from..=to` (0 for the last page) as a JSON array of page strings.
    #[wasm_bindgen]
    pub fn text(bytes: &[u8], from: u32, to: u32, gate: bool) -> String {
        reply(PdfDocument::open(bytes, &limits(gate)).and_then(|doc| {
            let to = if to == 0 { doc.page_count() } else { to as usize };
            Ok(json!(doc.text(from as usize, to, &TextBudget::default())?))
        }))
    }

    /// How many outline entries the document has.
    #[wasm_bindgen]
    pub fn outline_count(bytes: &[u8], gate: bool) -> String {
        reply(PdfDocument::open(bytes, &limits(gate)).map(|doc| json!(doc.outline().len())))
    }

    /// Locates each of `quotes` (a JSON array of `{"quote": …, "page": n}`) on its page: one result per quote,
    /// `null` when not found.
    #[wasm_bindgen]
    pub fn locate(bytes: &[u8], quotes: &str, gate: bool) -> String {
        let Ok(quotes) = serde_json::from_str::<Vec<serde_json::Value>>(quotes) else {
            return json!({ "status": "bad-input" }).to_string();
        };
        reply(PdfDocument::open(bytes, &limits(gate)).map(|doc| {
            let found: Vec<serde_json::Value> = quotes
                .iter()
                .map(|q| {
                    let quote = q["quote"].as_str().unwrap_or_default();
                    let page = q["page"].as_u64().map(|p| p as usize);
                    match doc.locate(quote, page, &TextBudget::default()) {
                        Ok(Some(at)) => json!({ "page": at.page, "rects": at.rects, "exact": at.exact }),
                        _ => serde_json::Value::Null,
                    }
                })
                .collect();
            json!(found)
        }))
    }

    /// The wasm linear memory in bytes: it never shrinks, so after a call it is the peak so far.
    #[wasm_bindgen]
    pub fn memory_bytes() -> f64 {
        (core::arch::wasm32::memory_size::<0>() * 65_536) as f64
    }
}
