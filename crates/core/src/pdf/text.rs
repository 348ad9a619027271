//! The text layer: page content streams interpreted for their text, in content-stream order (as pdf.js gives
//! it), with word spaces and line breaks placed from where the glyphs land.
//!
//! Fonts are read once per extraction ([`fonts::FontCache`]), only `/Subtype /Form` XObjects are interpreted
//! (images are never decoded), with a depth limit and a guard against forms that draw themselves, and every
//! operator and decompressed byte counts against a [`TextBudget`]. Nothing here can panic on a file's content:
//! numbers are clamped, lookups are fallible, and a stream that does not parse ends that stream only.

mod cmap;
mod encoding;
mod fonts;
mod layout;

use std::collections::HashSet;

use lopdf::content::Content;
use lopdf::{Dictionary, Document, Object, ObjectId};

use self::fonts::FontCache;
pub use self::layout::{CharBox, PageLayout};
use self::layout::{Glyph, PageBuilder};
use super::error::{PdfError, TOO_LARGE_ADVICE};
use super::limits::PdfLimits;

/// Form XObjects nested deeper than this are not followed (pdf.js stops cycles; real files nest 2–3 deep).
const MAX_FORM_DEPTH: usize = 12;

/// What one extraction may spend, across all its pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TextBudget {
    /// Content-stream operators interpreted, in total.
    pub max_operators: u64,
    /// Bytes of content streams decompressed, in total.
    pub max_decoded_bytes: usize,
}

impl Default for TextBudget {
    /// Far above a real document (the 1,321-page pgfmanual has about 4 million operators), far below what would
    /// run a Worker out of CPU time or memory.
    fn default() -> Self {
        Self { max_operators: 20_000_000, max_decoded_bytes: 256 * 1024 * 1024 }
    }
}

struct Spent {
    operators: u64,
    decoded: usize,
}

/// Extracts the text of the pages at `indexes` (0-based), one layout per page. Without `keep_boxes` each page's
/// character boxes are dropped as soon as it is done: a whole 1,300-page manual's boxes would take 100 MB.
pub(super) fn extract(
    doc: &Document,
    page_ids: &[ObjectId],
    indexes: std::ops::Range<usize>,
    limits: &PdfLimits,
    budget: &TextBudget,
    keep_boxes: bool,
) -> Result<Vec<PageLayout>, PdfError> {
    let mut fonts = FontCache::new(limits.max_stream_bytes);
    let mut spent = Spent { operators: 0, decoded: 0 };
    let mut pages = Vec::with_capacity(indexes.len());
    for index in indexes {
        let Some(&page_id) = page_ids.get(index) else { break };
        let mut run = Run { doc, fonts: &mut fonts, limits, budget, spent: &mut spent, page: PageBuilder::new() };
        run.page(page_id)?;
        let mut page = run.page.finish();
        if !keep_boxes {
            page.boxes = Vec::new();
        }
        pages.push(page);
    }
    Ok(pages)
}

/// A 2-D affine matrix `[a b c d e f]`, as PDF writes them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Matrix([f64; 6]);

impl Matrix {
    const IDENTITY: Matrix = Matrix([1.0, 0.0, 0.0, 1.0, 0.0, 0.0]);

    /// `self` then `other` (PDF's `self × other`).
    fn then(&self, other: &Matrix) -> Matrix {
        let [a, b, c, d, e, f] = self.0;
        let [a2, b2, c2, d2, e2, f2] = other.0;
        Matrix([
            a * a2 + b * c2,
            a * b2 + b * d2,
            c * a2 + d * c2,
            c * b2 + d * d2,
            e * a2 + f * c2 + e2,
            e * b2 + f * d2 + f2,
        ])
    }

    fn translate(tx: f64, ty: f64) -> Matrix {
        Matrix([1.0, 0.0, 0.0, 1.0, tx, ty])
    }

    fn apply(&self, x: f64, y: f64) -> (f64, f64) {
        let [a, b, c, d, e, f] = self.0;
        (a * x + c * y + e, b * x + d * y + f)
    }

    fn from_operands(operands: &[Object]) -> Option<Matrix> {
        let values: Vec<f64> = operands.iter().filter_map(number).collect();
        let array: [f64; 6] = values.try_into().ok()?;
        array.iter().all(|v| v.is_finite()).then_some(Matrix(array))
    }

    fn from_object(object: Option<&Object>) -> Matrix {
        object.and_then(|o| o.as_array().ok()).and_then(|a| Matrix::from_operands(a)).unwrap_or(Matrix::IDENTITY)
    }
}

/// A number operand, clamped to what a page can mean (a huge `Tz` or `Tc` must not overflow anything).
fn number(object: &Object) -> Option<f64> {
    let value = match object {
        Object::Integer(i) => *i as f64,
        Object::Real(r) => f64::from(*r),
        _ => return None,
    };
    value.is_finite().then(|| value.clamp(-1.0e7, 1.0e7))
}

#[derive(Clone)]
struct GraphicsState<'doc> {
    ctm: Matrix,
    font: Option<&'doc Dictionary>,
    font_size: f64,
    char_spacing: f64,
    word_spacing: f64,
    horizontal_scale: f64,
    leading: f64,
    rise: f64,
}

impl GraphicsState<'_> {
    fn new(ctm: Matrix) -> Self {
        Self {
            ctm,
            font: None,
            font_size: 0.0,
            char_spacing: 0.0,
            word_spacing: 0.0,
            horizontal_scale: 1.0,
            leading: 0.0,
            rise: 0.0,
        }
    }
}

struct Run<'a, 'doc> {
    doc: &'doc Document,
    fonts: &'a mut FontCache,
    limits: &'a PdfLimits,
    budget: &'a TextBudget,
    spent: &'a mut Spent,
    page: PageBuilder,
}

impl<'doc> Run<'_, 'doc> {
    fn page(&mut self, page_id: ObjectId) -> Result<(), PdfError> {
        let mut bytes = Vec::new();
        for content_id in self.doc.get_page_contents(page_id) {
            let Ok(stream) = self.doc.get_object(content_id).and_then(Object::as_stream) else { continue };
            if let Some(decoded) = self.decode(stream)? {
                bytes.extend_from_slice(&decoded);
                bytes.push(b'\n');
            }
        }
        let resources = page_resources(self.doc, page_id);
        let mut stack: Vec<usize> = Vec::new();
        self.run(&bytes, &resources, GraphicsState::new(Matrix::IDENTITY), &mut stack)
    }

    /// A content stream's bytes, counted against the budget; `None` when it cannot be decoded (skipped).
    fn decode(&mut self, stream: &lopdf::Stream) -> Result<Option<Vec<u8>>, PdfError> {
        let decoded = match stream.decompressed_content_with_limit(self.limits.max_stream_bytes) {
            Ok(bytes) => bytes,
            // Unfiltered streams report "not compressed"; their bytes are the content.
            Err(_) if stream.filters().map(|f| f.is_empty()).unwrap_or(true) => stream.content.clone(),
            Err(lopdf::Error::Decompress(lopdf::DecompressError::MemoryLimitExceeded { .. })) => {
                return Err(PdfError::OverBudget {
                    limit: "decompressed stream size",
                    detail: format!(
                        "a page's content inflates to more than {} MB",
                        self.limits.max_stream_bytes / (1024 * 1024)
                    ),
                    advice: TOO_LARGE_ADVICE,
                })
            }
            Err(_) => return Ok(None),
        };
        self.spent.decoded = self.spent.decoded.saturating_add(decoded.len());
        if self.spent.decoded > self.budget.max_decoded_bytes {
            return Err(PdfError::OverBudget {
                limit: "decompressed content",
                detail: format!("more than {} MB of page content", self.budget.max_decoded_bytes / (1024 * 1024)),
                advice: TOO_LARGE_ADVICE,
            });
        }
        Ok(Some(decoded))
    }

    fn run(
        &mut self,
        content: &[u8],
        resources: &[&'doc Dictionary],
        initial: GraphicsState<'doc>,
        forms: &mut Vec<usize>,
    ) -> Result<(), PdfError> {
        let mut state = initial;
        let mut saved: Vec<GraphicsState<'doc>> = Vec::new();
        let mut text_matrix = Matrix::IDENTITY;
        let mut line_matrix = Matrix::IDENTITY;
        for operation in Content::decode_iter(content) {
            // A stream that stops parsing ends here; what was read so far stands.
            let Ok(operation) = operation else { break };
            self.spent.operators += 1;
            if self.spent.operators > self.budget.max_operators {
                return Err(PdfError::OverBudget {
                    limit: "content operators",
                    detail: format!("more than {} drawing operations", self.budget.max_operators),
                    advice: TOO_LARGE_ADVICE,
                });
            }
            let operands = &operation.operands;
            let num = |i: usize| operands.get(i).and_then(number).unwrap_or(0.0);
            match operation.operator.as_str() {
                // Saved states are bounded: a stream of `q`s must not grow memory without end.
                "q" if saved.len() < 1024 => saved.push(state.clone()),
                "Q" => {
                    if let Some(previous) = saved.pop() {
                        state = previous;
                    }
                }
                "cm" => {
                    if let Some(m) = Matrix::from_operands(operands) {
                        state.ctm = m.then(&state.ctm);
                    }
                }
                "BT" => {
                    text_matrix = Matrix::IDENTITY;
                    line_matrix = Matrix::IDENTITY;
                }
                "ET" => {}
                "Tf" => {
                    state.font = operands
                        .first()
                        .and_then(|o| o.as_name().ok())
                        .and_then(|name| lookup(self.doc, resources, b"Font", name))
                        .and_then(|font| font.as_dict().ok());
                    state.font_size = num(1);
                }
                "Tc" => state.char_spacing = num(0),
                "Tw" => state.word_spacing = num(0),
                "Tz" => state.horizontal_scale = num(0) / 100.0,
                "TL" => state.leading = num(0),
                "Ts" => state.rise = num(0),
                "Td" => {
                    line_matrix = Matrix::translate(num(0), num(1)).then(&line_matrix);
                    text_matrix = line_matrix;
                }
                "TD" => {
                    state.leading = -num(1);
                    line_matrix = Matrix::translate(num(0), num(1)).then(&line_matrix);
                    text_matrix = line_matrix;
                }
                "Tm" => {
                    if let Some(m) = Matrix::from_operands(operands) {
                        line_matrix = m;
                        text_matrix = m;
                    }
                }
                "T*" => {
                    line_matrix = Matrix::translate(0.0, -state.leading).then(&line_matrix);
                    text_matrix = line_matrix;
                }
                "Tj" => {
                    if let Some(Object::String(bytes, _)) = operands.first() {
                        self.show(bytes, &state, &mut text_matrix);
                    }
                }
                "'" | "\"" => {
                    if operation.operator == "\"" {
                        state.word_spacing = num(0);
                        state.char_spacing = num(1);
                    }
                    line_matrix = Matrix::translate(0.0, -state.leading).then(&line_matrix);
                    text_matrix = line_matrix;
                    if let Some(Object::String(bytes, _)) = operands.last() {
                        self.show(bytes, &state, &mut text_matrix);
                    }
                }
                "TJ" => {
                    let Some(Ok(items)) = operands.first().map(Object::as_array) else { continue };
                    for item in items {
                        match item {
                            Object::String(bytes, _) => self.show(bytes, &state, &mut text_matrix),
                            other => {
                                if let Some(adjust) = number(other) {
                                    let tx = -adjust / 1000.0 * state.font_size * state.horizontal_scale;
                                    text_matrix = Matrix::translate(tx, 0.0).then(&text_matrix);
                                }
                            }
                        }
                    }
                }
                "Do" => {
                    let Some(name) = operands.first().and_then(|o| o.as_name().ok()) else { continue };
                    self.form(name, resources, &state, forms)?;
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Draws a Form XObject: only `/Subtype /Form`, not deeper than [`MAX_FORM_DEPTH`], never one already being
    /// drawn (a form that draws itself would otherwise recurse until the stack overflows).
    fn form(
        &mut self,
        name: &[u8],
        resources: &[&'doc Dictionary],
        state: &GraphicsState<'doc>,
        forms: &mut Vec<usize>,
    ) -> Result<(), PdfError> {
        let Some(object) = lookup(self.doc, resources, b"XObject", name) else { return Ok(()) };
        let Ok(stream) = object.as_stream() else { return Ok(()) };
        // The object's address identifies it: the document is not changed while it is read.
        let id = std::ptr::from_ref(object) as usize;
        if stream.dict.get(b"Subtype").and_then(Object::as_name).ok() != Some(b"Form".as_slice()) {
            return Ok(());
        }
        if forms.len() >= MAX_FORM_DEPTH || forms.contains(&id) {
            return Ok(());
        }
        let Some(content) = self.decode(stream)? else { return Ok(()) };
        let matrix = Matrix::from_object(stream.dict.get(b"Matrix").ok());
        let own = stream
            .dict
            .get(b"Resources")
            .ok()
            .and_then(|r| self.doc.dereference(r).ok())
            .and_then(|(_, r)| r.as_dict().ok());
        let form_resources: Vec<&'doc Dictionary> = match own {
            Some(dict) => vec![dict],
            None => resources.to_vec(),
        };
        let mut inner = state.clone();
        inner.ctm = matrix.then(&state.ctm);
        forms.push(id);
        let result = self.run(&content, &form_resources, inner, forms);
        forms.pop();
        result
    }

    /// Shows a string: each character code becomes a glyph placed where the text matrix puts it, and the text
    /// matrix advances by its width.
    fn show(&mut self, bytes: &[u8], state: &GraphicsState<'doc>, text_matrix: &mut Matrix) {
        let Some(font_dict) = state.font else { return };
        let Some(font) = self.fonts.get(self.doc, font_dict) else { return };
        let size = state.font_size;
        for code in font.codes(bytes) {
            let width = font.width(code.code);
            let glyph_space = Matrix([size * state.horizontal_scale, 0.0, 0.0, size, 0.0, state.rise]);
            let to_user = glyph_space.then(text_matrix).then(&state.ctm);
            let (x, y) = to_user.apply(0.0, 0.0);
            let (x_end, _) = to_user.apply(width, 0.0);
            // The glyph's height in user space, for line and word decisions.
            let (hx, hy) = to_user.apply(0.0, 1.0);
            let height = ((hx - x).powi(2) + (hy - y).powi(2)).sqrt();
            self.page.push(Glyph { text: font.text(&code), x, y, x_end, height });
            let spacing = state.char_spacing + if code.is_space { state.word_spacing } else { 0.0 };
            let advance = (width * size + spacing) * state.horizontal_scale;
            *text_matrix = Matrix::translate(advance, 0.0).then(text_matrix);
        }
    }
}

/// The page's resource dictionaries, nearest first (a page inherits from its ancestors).
fn page_resources(doc: &Document, page_id: ObjectId) -> Vec<&Dictionary> {
    let Ok((direct, ids)) = doc.get_page_resources(page_id) else { return Vec::new() };
    direct.into_iter().chain(ids.into_iter().filter_map(|id| doc.get_dictionary(id).ok())).collect()
}

/// A named resource of `kind` (`/Font`, `/XObject`), from the nearest resource dictionary that has it.
fn lookup<'doc>(doc: &'doc Document, resources: &[&'doc Dictionary], kind: &[u8], name: &[u8]) -> Option<&'doc Object> {
    for dict in resources {
        let Some(group) = dict.get(kind).ok().and_then(|g| doc.dereference(g).ok()).and_then(|(_, g)| g.as_dict().ok())
        else {
            continue;
        };
        if let Ok(entry) = group.get(name) {
            return doc.dereference(entry).ok().map(|(_, object)| object);
        }
    }
    None
}

/// Whether any page of `page_ids` has an image XObject: with no text found, that makes it a scan.
pub(super) fn has_images(doc: &Document, page_ids: &[ObjectId]) -> bool {
    let mut seen = HashSet::new();
    page_ids.iter().take(50).any(|&page| {
        page_resources(doc, page).iter().any(|resources| {
            let Some(group) = resources
                .get(b"XObject")
                .ok()
                .and_then(|g| doc.dereference(g).ok())
                .and_then(|(_, g)| g.as_dict().ok())
            else {
                return false;
            };
            group.iter().any(|(_, value)| {
                let Ok((id, object)) = doc.dereference(value) else { return false };
                if id.is_some_and(|id| !seen.insert(id)) {
                    return false;
                }
                object
                    .as_stream()
                    .ok()
                    .and_then(|s| s.dict.get(b"Subtype").and_then(Object::as_name).ok())
                    .is_some_and(|s| s == b"Image")
            })
        })
    })
}
