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

pub(super) struct PageBuilder {
    out: String,
    last: Option<Last>,
}

impl PageBuilder {
    pub(super) fn new() -> Self {
        Self { out: String::new(), last: None }
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
        push_normalized(&mut self.out, &glyph.text);
        self.last = Some(Last { x_end: glyph.x_end, y: glyph.y, height: glyph.height });
    }

    fn newline(&mut self) {
        while self.out.ends_with(' ') {
            self.out.pop();
        }
        if !self.out.is_empty() && !self.out.ends_with('\n') {
            self.out.push('\n');
        }
    }

    fn space(&mut self) {
        if !self.out.is_empty() && !self.out.ends_with(char::is_whitespace) {
            self.out.push(' ');
        }
    }

    /// The page's text: lines without trailing spaces, no blank line at the end.
    pub(super) fn finish(self) -> String {
        let lines: Vec<&str> = self.out.lines().map(str::trim_end).collect();
        lines.join("\n").trim_end().to_owned()
    }
}

/// Appends `text` with the Latin ligatures (U+FB00–FB06) spelled out, as pdf.js does, so that "ﬁnd" reads
/// and matches as "find"; control characters become spaces.
fn push_normalized(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '\u{FB00}' => out.push_str("ff"),
            '\u{FB01}' => out.push_str("fi"),
            '\u{FB02}' => out.push_str("fl"),
            '\u{FB03}' => out.push_str("ffi"),
            '\u{FB04}' => out.push_str("ffl"),
            '\u{FB05}' | '\u{FB06}' => out.push_str("st"),
            '\n' | '\r' | '\t' => out.push(' '),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
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
        assert_eq!(page.finish(), "ab cd\nefi");
    }

    #[test]
    fn superscripts_stay_on_their_line() {
        let mut page = PageBuilder::new();
        page.push(glyph("x", 100.0, 700.0, 5.0));
        page.push(glyph("2", 105.0, 704.0, 3.0));
        assert_eq!(page.finish(), "x2", "a raised glyph stays on its base's line, as pdf.js gives it");
    }
}
