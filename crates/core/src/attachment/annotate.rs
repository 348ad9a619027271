//! Zotero annotations on a PDF, built the way Zotero's reader stores them, so they show in the right place:
//! `annotationPosition` is `{"pageIndex": n, "rects": [[x1, y1, x2, y2], …]}` in the page's user space (origin
//! bottom-left), `annotationPageLabel` is the page's own label ("iv", "12"), and `annotationSortIndex` is
//! `PPPPP|OOOOOO|TTTTT`: the page index, the character offset of the passage on the page, and its distance
//! from the top of the page in points, zero-padded, which is how the reader orders its sidebar.

use serde_json::{json, Map, Value};

use crate::pdf::{PdfDocument, PdfError, QuoteLocation, TextBudget};

/// Zotero's default highlight colour (yellow).
pub const DEFAULT_COLOR: &str = "#ffd400";
/// A note annotation is a 22-point square in Zotero's reader.
const NOTE_SIZE: f64 = 22.0;
/// Matches below this share of the quote are not highlighted: the passage would be someone else's words.
const MIN_COVERAGE: f64 = 0.9;

/// The kinds of annotation that can be created.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnnotationKind {
    Highlight,
    Underline,
    Note,
}

impl AnnotationKind {
    pub fn as_str(self) -> &'static str {
        match self {
            AnnotationKind::Highlight => "highlight",
            AnnotationKind::Underline => "underline",
            AnnotationKind::Note => "note",
        }
    }
}

/// Why an annotation could not be placed. The messages speak of the page's text; a caller that has a way to
/// show it (a tool) says so after them.
#[derive(Debug, thiserror::Error)]
pub enum AnnotateError {
    #[error("page {page} is out of range: the PDF has {total} pages")]
    PageOutOfRange { page: usize, total: usize },
    #[error("a {kind} needs the text to anchor to: quote the passage in `text`, as the page's text has it")]
    NoText { kind: &'static str },
    #[error("a note needs a page number (`page`) to sit on")]
    NoPage,
    #[error("that passage was not found {where_}; quote it exactly as the page's text has it, at least a few words")]
    NotFound { where_: String },
    #[error(
        "only part of that passage was found {where_} ({share}% of it: \"{matched}\"); quote the text exactly as \
         the page's text has it"
    )]
    Partial { where_: String, share: u32, matched: String },
    #[error(transparent)]
    Pdf(#[from] PdfError),
}

/// What to create.
#[derive(Debug, Clone)]
pub struct AnnotationRequest {
    pub kind: AnnotationKind,
    /// 1-based; for a highlight, `None` searches the whole document.
    pub page: Option<usize>,
    /// The passage to highlight or underline.
    pub text: Option<String>,
    pub comment: Option<String>,
    pub color: Option<String>,
    /// Zotero tag objects.
    pub tags: Vec<Value>,
}

/// The annotation item to create on `attachment_key`, and the page it is on.
#[derive(Debug, Clone)]
pub struct PlacedAnnotation {
    pub item: Value,
    pub page: usize,
    pub page_label: String,
    /// For a highlight or underline, the text as the PDF has it (which Zotero shows in the sidebar).
    pub text: Option<String>,
}

/// Places the annotation on the PDF and builds its Zotero item.
pub fn place(
    doc: &PdfDocument,
    attachment_key: &str,
    request: &AnnotationRequest,
) -> Result<PlacedAnnotation, AnnotateError> {
    let total = doc.page_count();
    if let Some(page) = request.page {
        if page == 0 || page > total {
            return Err(AnnotateError::PageOutOfRange { page, total });
        }
    }
    let (page, rects, offset, text) = match request.kind {
        AnnotationKind::Highlight | AnnotationKind::Underline => {
            let quote = request.text.as_deref().map(str::trim).filter(|t| !t.is_empty());
            let quote = quote.ok_or(AnnotateError::NoText { kind: request.kind.as_str() })?;
            let found = locate(doc, quote, request.page)?;
            (found.page, found.rects, found.char_offset, Some(found.matched_text))
        }
        AnnotationKind::Note => {
            let page = request.page.ok_or(AnnotateError::NoPage)?;
            (page, vec![note_square(doc.page_box(page))], 0, None)
        }
    };
    let page_box = doc.page_box(page);
    let page_label = doc.page_label(page).unwrap_or_else(|| page.to_string());
    let mut item = Map::new();
    item.insert("itemType".into(), json!("annotation"));
    item.insert("parentItem".into(), json!(attachment_key));
    item.insert("annotationType".into(), json!(request.kind.as_str()));
    item.insert("annotationColor".into(), json!(request.color.as_deref().unwrap_or(DEFAULT_COLOR)));
    item.insert("annotationPageLabel".into(), json!(page_label));
    item.insert("annotationSortIndex".into(), json!(sort_index(page - 1, offset, &rects, page_box)));
    // Zotero stores the position as a JSON string, not an object.
    let position = json!({ "pageIndex": page - 1, "rects": rects.iter().map(|r| r.map(round2)).collect::<Vec<_>>() });
    item.insert("annotationPosition".into(), json!(position.to_string()));
    if let Some(text) = &text {
        item.insert("annotationText".into(), json!(text));
    }
    if let Some(comment) = request.comment.as_deref().filter(|c| !c.trim().is_empty()) {
        item.insert("annotationComment".into(), json!(comment));
    }
    item.insert("tags".into(), Value::Array(request.tags.clone()));
    Ok(PlacedAnnotation { item: Value::Object(item), page, page_label, text })
}

/// The quote's place, refusing matches that are not the quote.
fn locate(doc: &PdfDocument, quote: &str, page: Option<usize>) -> Result<QuoteLocation, AnnotateError> {
    let where_ = page.map_or_else(|| "in the document".to_owned(), |p| format!("on page {p}"));
    let found = doc.locate(quote, page, &TextBudget::default())?;
    let found = found.ok_or_else(|| AnnotateError::NotFound { where_: where_.clone() })?;
    if found.rects.is_empty() {
        return Err(AnnotateError::NotFound { where_ });
    }
    if !found.exact && found.coverage < MIN_COVERAGE {
        let matched: String = found.matched_text.chars().take(120).collect();
        return Err(AnnotateError::Partial { where_, share: (found.coverage * 100.0).round() as u32, matched });
    }
    Ok(found)
}

/// A note's square near the top left of the page, inside its margin.
fn note_square(page_box: Option<[f64; 4]>) -> [f64; 4] {
    let [x1, _, _, y2] = page_box.unwrap_or([0.0, 0.0, 612.0, 792.0]);
    let left = x1 + 36.0;
    let top = y2 - 36.0;
    [left, top - NOTE_SIZE, left + NOTE_SIZE, top]
}

/// Zotero's sort index: page index (5 digits) | character offset (6) | points from the top of the page (5).
fn sort_index(page_index: usize, offset: usize, rects: &[[f64; 4]], page_box: Option<[f64; 4]>) -> String {
    let highest = rects.iter().map(|r| r[3]).fold(f64::NEG_INFINITY, f64::max);
    let top = match page_box {
        Some(b) if highest.is_finite() => (b[3] - highest).max(0.0).floor() as u64,
        _ => 0,
    };
    format!("{:05}|{:06}|{:05}", page_index.min(99_999), offset.min(999_999), top.min(99_999))
}

fn round2(v: f64) -> f64 {
    (v * 100.0).round() / 100.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pdf::PdfLimits;
    use crate::testing::pdf_of_pages;

    fn doc() -> PdfDocument {
        let pdf = pdf_of_pages(&["Residue contacts emerge early in training", "Equivariance is the key to it all"]);
        PdfDocument::open(&pdf, &PdfLimits::default()).unwrap()
    }

    fn request(kind: AnnotationKind, page: Option<usize>, text: Option<&str>) -> AnnotationRequest {
        AnnotationRequest { kind, page, text: text.map(str::to_owned), comment: None, color: None, tags: Vec::new() }
    }

    #[test]
    fn a_highlight_is_placed_where_the_quote_is() {
        let placed =
            place(&doc(), "ABCD2345", &request(AnnotationKind::Highlight, None, Some("equivariance is  the KEY")))
                .unwrap();
        assert_eq!(placed.page, 2);
        assert_eq!(placed.text.as_deref(), Some("Equivariance is the key"));
        let item = &placed.item;
        assert_eq!(item["annotationType"], "highlight");
        assert_eq!(item["parentItem"], "ABCD2345");
        assert_eq!(item["annotationColor"], DEFAULT_COLOR);
        assert_eq!(item["annotationPageLabel"], "2");
        let position: Value = serde_json::from_str(item["annotationPosition"].as_str().unwrap()).unwrap();
        assert_eq!(position["pageIndex"], 1);
        let rect = position["rects"][0].as_array().unwrap();
        let [x1, y1, x2, y2] = [0, 1, 2, 3].map(|i| rect[i].as_f64().unwrap());
        assert!(x1 < x2 && y1 < y2 && y2 <= 792.0 && x1 >= 0.0, "{rect:?}");
        let sort = item["annotationSortIndex"].as_str().unwrap();
        assert!(sort.starts_with("00001|000000|"), "{sort}");
        let top: u64 = sort[13..].parse().unwrap();
        assert_eq!(top, (792.0 - y2).floor() as u64);
    }

    #[test]
    fn refusals_say_what_to_do() {
        let d = doc();
        let missing = place(&d, "K", &request(AnnotationKind::Highlight, Some(1), Some("not on this page at all")));
        assert!(matches!(missing, Err(AnnotateError::NotFound { .. })), "{missing:?}");
        let empty = place(&d, "K", &request(AnnotationKind::Underline, Some(1), Some("  ")));
        assert!(matches!(empty, Err(AnnotateError::NoText { kind: "underline" })));
        let past = place(&d, "K", &request(AnnotationKind::Note, Some(3), None));
        assert!(matches!(past, Err(AnnotateError::PageOutOfRange { page: 3, total: 2 })));
        assert!(matches!(place(&d, "K", &request(AnnotationKind::Note, None, None)), Err(AnnotateError::NoPage)));
    }

    #[test]
    fn a_note_sits_in_the_top_left_margin() {
        let mut req = request(AnnotationKind::Note, Some(1), None);
        req.comment = Some("Compare with Smith 2020".into());
        req.color = Some("#2ea8e5".into());
        let placed = place(&doc(), "K", &req).unwrap();
        let position: Value = serde_json::from_str(placed.item["annotationPosition"].as_str().unwrap()).unwrap();
        assert_eq!(position["rects"][0], json!([36.0, 734.0, 58.0, 756.0]));
        assert_eq!(placed.item["annotationComment"], "Compare with Smith 2020");
        assert_eq!(placed.item["annotationColor"], "#2ea8e5");
        assert_eq!(placed.item["annotationSortIndex"], "00000|000000|00036");
        assert!(placed.item.get("annotationText").is_none());
    }
}
