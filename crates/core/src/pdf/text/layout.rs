//! Glyphs to page text, in the order they are drawn: a new baseline starts a new line, and a gap wider than a
//! fraction of the glyph height between two glyphs on a line is a space (a producer that positions words
//! instead of writing spaces, as Distiller and Ghostscript do, still gets its words apart).

/// A gap wider than this share of the text height is a word space: pdf.js's own threshold (0.102 of the font
/// size). TeX justifies tight lines with inter-word gaps down to about 0.15 em, while kerning stays under 0.05
/// em; 0.2 merged whole tight lines ("valuableguidetotheprocess") on the corpus.
const WORD_GAP: f64 = 0.11;
/// A baseline that moves by more than this share of the text height starts a new line (sub- and superscripts
/// move less).
const LINE_SHIFT: f64 = 0.6;

/// One drawn glyph, in user space.
pub(super) struct Glyph {
    pub text: String,
    pub x: f64,
    pub y: f64,
    pub x_end: f64,
    pub height: f64,
}

struct Last {
    x_end: f64,
    y: f64,
    height: f64,
}

/// Where a character of the page text was drawn: `[x1, y1, x2, y2]` in the page's user space (what Zotero's
/// highlight annotations take as a rectangle), or `None` for spaces and line breaks the layout inserted.
pub type CharBox = Option<[f64; 4]>;

/// A page's text, and for each of its characters where it was drawn.
#[derive(Debug, Clone, Default)]
pub struct PageLayout {
    pub text: String,
    pub boxes: Vec<CharBox>,
}

pub(super) struct PageBuilder {
    out: String,
    /// One entry per char of `out`.
    boxes: Vec<CharBox>,
    last: Option<Last>,
}

impl PageBuilder {
    pub(super) fn new() -> Self {
        Self { out: String::new(), boxes: Vec::new(), last: None }
    }

    pub(super) fn push(&mut self, glyph: Glyph) {
        if glyph.text.is_empty() || !glyph.x.is_finite() || !glyph.y.is_finite() {
            return;
        }
        if let Some(last) = &self.last {
            let height = glyph.height.max(last.height).max(0.01);
            let baseline_moved = (glyph.y - last.y).abs() > LINE_SHIFT * height;
            let gap = glyph.x - last.x_end;
            if baseline_moved || gap < -4.0 * height {
                self.newline();
            } else if gap > WORD_GAP * height {
                self.space();
            }
        }
        // A glyph's box: its advance across, and from the descender to the ascender of the text height.
        let (left, right) = if glyph.x <= glyph.x_end { (glyph.x, glyph.x_end) } else { (glyph.x_end, glyph.x) };
        let bounds = [left, glyph.y - 0.25 * glyph.height, right, glyph.y + 0.85 * glyph.height];
        let added = push_normalized(&mut self.out, &glyph.text);
        self.boxes.extend(std::iter::repeat_n(Some(bounds), added));
        self.last = Some(Last { x_end: glyph.x_end, y: glyph.y, height: glyph.height });
    }

    fn newline(&mut self) {
        while self.out.ends_with(' ') {
            self.out.pop();
            self.boxes.pop();
        }
        if !self.out.is_empty() && !self.out.ends_with('\n') {
            self.out.push('\n');
            self.boxes.push(None);
        }
    }

    fn space(&mut self) {
        if !self.out.is_empty() && !self.out.ends_with(char::is_whitespace) {
            self.out.push(' ');
            self.boxes.push(None);
        }
    }

    /// The page's text (lines without trailing spaces, no blank line at the end) with its boxes.
    pub(super) fn finish(self) -> PageLayout {
        let mut text = String::with_capacity(self.out.len());
        let mut boxes: Vec<CharBox> = Vec::with_capacity(self.boxes.len());
        // Characters with their boxes, line by line; a line's trailing spaces are dropped.
        let mut line: Vec<(char, CharBox)> = Vec::new();
        let flush = |line: &mut Vec<(char, CharBox)>, text: &mut String, boxes: &mut Vec<CharBox>| {
            while line.last().is_some_and(|(c, _)| c.is_whitespace()) {
                line.pop();
            }
            for (c, b) in line.drain(..) {
                text.push(c);
                boxes.push(b);
            }
        };
        for (c, b) in self.out.chars().zip(self.boxes.iter().copied()) {
            if c == '\n' {
                flush(&mut line, &mut text, &mut boxes);
                text.push('\n');
                boxes.push(None);
            } else {
                line.push((c, b));
            }
        }
        flush(&mut line, &mut text, &mut boxes);
        while text.ends_with(char::is_whitespace) {
            text.pop();
            boxes.pop();
        }
        PageLayout { text, boxes }
    }
}

/// Appends `text` with the Latin ligatures (U+FB00–FB06) spelled out, as pdf.js does, so that "ﬁnd" reads
/// and matches as "find"; line breaks and tabs become spaces, other control characters go. Returns how many
/// characters were appended (one box each).
fn push_normalized(out: &mut String, text: &str) -> usize {
    let mut added = 0;
    for c in text.chars() {
        let spelled = match c {
            '\u{FB00}' => "ff",
            '\u{FB01}' => "fi",
            '\u{FB02}' => "fl",
            '\u{FB03}' => "ffi",
            '\u{FB04}' => "ffl",
            '\u{FB05}' | '\u{FB06}' => "st",
            '\n' | '\r' | '\t' => " ",
            c if c.is_control() => "",
            c => {
                out.push(c);
                added += 1;
                continue;
            }
        };
        out.push_str(spelled);
        added += spelled.len();
    }
    added
}

#[cfg(test)]
mod tests {
    use super::*;

    fn glyph(text: &str, x: f64, y: f64, width: f64) -> Glyph {
        Glyph { text: text.into(), x, y, x_end: x + width, height: 10.0 }
    }

    #[test]
    fn gaps_become_spaces_and_baselines_become_lines() {
        let mut page = PageBuilder::new();
        for (i, c) in "ab".chars().enumerate() {
            page.push(glyph(&c.to_string(), 100.0 + 5.0 * i as f64, 700.0, 5.0));
        }
        page.push(glyph("c", 113.0, 700.0, 5.0)); // a 3-unit gap: a word space at height 10
        page.push(glyph("d", 118.5, 700.0, 5.0)); // a 0.5-unit gap: kerning, no space
        page.push(glyph("e", 100.0, 686.0, 5.0)); // next line
        page.push(glyph("\u{FB01}", 105.0, 686.0, 5.0));
        let layout = page.finish();
        assert_eq!(layout.text, "ab cd\nefi");
        assert_eq!(layout.boxes.len(), layout.text.chars().count());
        assert!(layout.boxes[2].is_none() && layout.boxes[5].is_none(), "inserted space and line break");
        assert_eq!(layout.boxes[0], Some([100.0, 697.5, 105.0, 708.5]));
    }

    #[test]
    fn superscripts_stay_on_their_line() {
        let mut page = PageBuilder::new();
        page.push(glyph("x", 100.0, 700.0, 5.0));
        page.push(glyph("2", 105.0, 704.0, 3.0));
        assert_eq!(page.finish().text, "x2", "a raised glyph stays on its base's line, as pdf.js gives it");
    }
}
