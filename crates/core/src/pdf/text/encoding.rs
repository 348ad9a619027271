//! Simple fonts' encodings: the named base encodings (PDF 32000-1 Annex D) and glyph names read as text by the
//! Adobe Glyph List's rules. The tables and the glyph list come from `pdf_encoding` (pdf-rs): data and a
//! binary-searchable list, where lopdf's own glyph-name lookup compiles to half a megabyte of wasm code. The list
//! is searched as the text build.rs writes from pdf_encoding's, not through its hash map (build.rs says why).

use std::cmp::Ordering;

use pdf_encoding::{ForwardMap, MACEXPERT, MACROMAN, STANDARD, SYMBOL, WINANSI};

/// The Adobe Glyph List: `name`, a tab, `text` and a NUL per glyph name, sorted by the name's bytes (build.rs).
const GLYPH_LIST: &str = include_str!(concat!(env!("OUT_DIR"), "/glyph_list.txt"));

/// The base encoding a name stands for (`/WinAnsiEncoding`, …); `None` for names that are not one.
pub(super) fn named(name: &[u8]) -> Option<&'static ForwardMap> {
    Some(match name {
        b"StandardEncoding" => &STANDARD,
        b"WinAnsiEncoding" => &WINANSI,
        b"MacRomanEncoding" => &MACROMAN,
        b"MacExpertEncoding" => &MACEXPERT,
        b"SymbolEncoding" => &SYMBOL,
        _ => return None,
    })
}

/// The encoding of a font that names none: its own for the Symbol font, else the standard one.
pub(super) fn default_for(base_font: &[u8]) -> &'static ForwardMap {
    // A subset font's name starts with six capitals and `+`.
    let name = base_font.iter().position(|&b| b == b'+').map_or(base_font, |plus| &base_font[plus + 1..]);
    if name == b"Symbol" {
        &SYMBOL
    } else {
        &STANDARD
    }
}

/// What `code` reads as in `table`: nothing for unassigned codes and control characters. The tables give the
/// `space` glyph as U+00A0; it is read as a plain space, which is what the words around it need.
pub(super) fn base_text(table: &ForwardMap, code: u8) -> String {
    match table.get(code) {
        Some('\u{A0}') => " ".to_owned(),
        Some(c) if !c.is_control() => c.to_string(),
        _ => String::new(),
    }
}

/// The text a glyph name stands for, by the Adobe Glyph List's rules: everything from the first period is a
/// variant suffix (`one.oldstyle`), underscores join ligature components (`f_f_i`), and `uniXXXX…` / `uXXXX[XX]`
/// name code points directly. `None` when any part is unknown: a wrong letter is worse than none.
pub(super) fn glyph_text(name: &str) -> Option<String> {
    let name = name.split('.').next().unwrap_or_default();
    if name.is_empty() {
        return None;
    }
    if let Some(text) = glyphname_to_unicode(name) {
        return Some(text.to_owned());
    }
    if name.contains('_') {
        return name.split('_').map(component).collect::<Option<String>>();
    }
    component(name)
}

/// The text the glyph list gives `name`, by binary search over its entries: each step takes the entry around the
/// middle of the bytes still in play, so no index of the entries is kept.
fn glyphname_to_unicode(name: &str) -> Option<&'static str> {
    let list = GLYPH_LIST.as_bytes();
    // `low` is always an entry's start, `high` an entry's start or the end.
    let (mut low, mut high) = (0, list.len());
    while low < high {
        let middle = low + (high - low) / 2;
        let start = list.get(low..middle)?.iter().rposition(|&b| b == 0).map_or(low, |i| low + i + 1);
        let end = list.get(start..)?.iter().position(|&b| b == 0).map_or(list.len(), |i| start + i);
        let (key, text) = GLYPH_LIST.get(start..end)?.split_once('\t')?;
        match key.as_bytes().cmp(name.as_bytes()) {
            Ordering::Equal => return Some(text),
            Ordering::Less => low = end + 1,
            Ordering::Greater => high = start,
        }
    }
    None
}

fn component(name: &str) -> Option<String> {
    if let Some(text) = glyphname_to_unicode(name) {
        return Some(text.to_owned());
    }
    if let Some(hex) = name.strip_prefix("uni") {
        if hex.is_empty() || hex.len() % 4 != 0 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        return (0..hex.len()).step_by(4).map(|i| scalar(&hex[i..i + 4])).collect();
    }
    if let Some(hex) = name.strip_prefix('u') {
        if (4..=6).contains(&hex.len()) && hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return scalar(hex).map(String::from);
        }
    }
    None
}

/// A Unicode scalar value from hex digits; surrogates and values past U+10FFFF are not characters.
fn scalar(hex: &str) -> Option<char> {
    u32::from_str_radix(hex, 16).ok().and_then(char::from_u32)
}

#[cfg(test)]
mod tests {
    use super::{base_text, default_for, glyph_text, glyphname_to_unicode, named};

    #[test]
    fn glyph_list_matches_pdf_encoding() {
        for &(name, _) in pdf_encoding::GLYPH_LIST {
            assert_eq!(glyphname_to_unicode(name), pdf_encoding::glyphname_to_unicode(name), "{name}");
        }
        for name in ["", "A0", "Zzzz", "zzzzzz", "\u{FFFF}", "AE.sc", "~"] {
            assert_eq!(glyphname_to_unicode(name), pdf_encoding::glyphname_to_unicode(name), "{name:?}");
        }
        assert_eq!(glyphname_to_unicode("A"), Some("A"));
        assert_eq!(glyphname_to_unicode("controlHT"), Some("\t"));
    }

    #[test]
    fn glyph_names_follow_the_glyph_list_rules() {
        assert_eq!(glyph_text("fi").as_deref(), Some("\u{FB01}"));
        assert_eq!(glyph_text("Alpha").as_deref(), Some("Α"));
        assert_eq!(glyph_text("one.oldstyle").as_deref(), Some("1"));
        assert_eq!(glyph_text("f_f_i").as_deref(), Some("ffi"));
        assert_eq!(glyph_text("uni00410042").as_deref(), Some("AB"));
        assert_eq!(glyph_text("u1F600").as_deref(), Some("😀"));
        assert_eq!(glyph_text("uniD800"), None);
        assert_eq!(glyph_text("g123"), None);
        assert_eq!(glyph_text("a_g123"), None);
        assert_eq!(glyph_text(".notdef"), None);
    }

    #[test]
    fn base_encodings_by_name_and_default() {
        let win = named(b"WinAnsiEncoding").expect("a base encoding");
        assert_eq!(base_text(win, 0x93), "\u{201C}");
        assert_eq!(base_text(win, 0x01), "");
        assert_eq!(base_text(win, 0x20), " ");
        let standard = default_for(b"ABCDEF+CMR10");
        assert_eq!(base_text(standard, 0xAE), "\u{FB01}");
        assert_eq!(base_text(default_for(b"Symbol"), 0x61), "α");
        assert!(named(b"Identity-H").is_none());
    }
}
