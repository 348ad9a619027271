//! `/ToUnicode` maps: which text each character code stands for (PDF 32000-1 §9.10.3).
//!
//! Only what a ToUnicode CMap may hold is read: `bfchar` pairs and `bfrange` triples (with a start value that
//! counts up, or an array with one value per code). Destinations are UTF-16BE. Everything else (the CMap's
//! PostScript dictionary scaffolding, `usecmap`, codespace ranges) is skipped: codes are split by the font
//! (one byte for simple fonts, two for composite ones). Ranges and entries are capped, so a hostile map costs
//! at most [`MAX_ENTRIES`] entries.

use std::collections::HashMap;

/// Entries kept per map at most: a CJK font maps some tens of thousands of codes.
const MAX_ENTRIES: usize = 1 << 17;

/// A parsed `/ToUnicode` map.
#[derive(Debug, Default)]
pub(super) struct ToUnicode {
    map: HashMap<u32, String>,
}

impl ToUnicode {
    /// The text of `code`; `None` when the map does not know it (or maps it to nothing usable).
    pub(super) fn get(&self, code: u32) -> Option<&str> {
        self.map.get(&code).map(String::as_str)
    }

    /// Reads a map from the stream's decoded bytes. A map that does not parse keeps what it read before.
    pub(super) fn parse(bytes: &[u8]) -> Self {
        let mut map = HashMap::new();
        let mut tokens = Tokens { bytes, at: 0 };
        while let Some(token) = tokens.next() {
            match token {
                Token::Keyword(b"beginbfchar") => bfchar(&mut tokens, &mut map),
                Token::Keyword(b"beginbfrange") => bfrange(&mut tokens, &mut map),
                _ => {}
            }
            if map.len() >= MAX_ENTRIES {
                break;
            }
        }
        Self { map }
    }
}

fn bfchar(tokens: &mut Tokens<'_>, map: &mut HashMap<u32, String>) {
    loop {
        let Some(Token::Hex(src)) = tokens.next() else { return };
        let Some(dst) = tokens.next() else { return };
        if let (Some(code), Some(text)) = (code(&src), destination(&dst)) {
            insert(map, code, text);
        }
        if map.len() >= MAX_ENTRIES {
            return;
        }
    }
}

fn bfrange(tokens: &mut Tokens<'_>, map: &mut HashMap<u32, String>) {
    loop {
        let Some(Token::Hex(lo)) = tokens.next() else { return };
        let Some(Token::Hex(hi)) = tokens.next() else { return };
        let (Some(lo), Some(hi)) = (code(&lo), code(&hi)) else { return };
        match tokens.next() {
            Some(Token::Hex(start)) => {
                let mut units = utf16_units(&start);
                for code in lo..=hi.min(lo.saturating_add(MAX_ENTRIES as u32)) {
                    insert(map, code, String::from_utf16_lossy(&units));
                    // The last unit counts up with the code (what pdf.js and Acrobat do).
                    if let Some(last) = units.last_mut() {
                        *last = last.wrapping_add(1);
                    }
                    if map.len() >= MAX_ENTRIES {
                        return;
                    }
                }
            }
            Some(Token::ArrayStart) => {
                let mut code = lo;
                while let Some(token) = tokens.next() {
                    if matches!(token, Token::ArrayEnd) {
                        break;
                    }
                    if let Some(text) = destination(&token) {
                        if code <= hi {
                            insert(map, code, text);
                        }
                    }
                    code = code.saturating_add(1);
                    if map.len() >= MAX_ENTRIES {
                        return;
                    }
                }
            }
            _ => return,
        }
    }
}

fn insert(map: &mut HashMap<u32, String>, code: u32, text: String) {
    let text: String = text.chars().filter(|c| *c != '\0' && *c != '\u{FFFD}').collect();
    if !text.is_empty() {
        map.insert(code, text);
    }
}

/// A source code: up to four bytes, big-endian.
fn code(bytes: &[u8]) -> Option<u32> {
    (!bytes.is_empty() && bytes.len() <= 4).then(|| bytes.iter().fold(0u32, |acc, b| acc << 8 | u32::from(*b)))
}

fn destination(token: &Token<'_>) -> Option<String> {
    match token {
        Token::Hex(bytes) => Some(String::from_utf16_lossy(&utf16_units(bytes))),
        // A glyph name is allowed as a destination by the CMap format, though rare in ToUnicode maps.
        Token::Name(name) => super::encoding::glyph_text(&String::from_utf8_lossy(name)),
        _ => None,
    }
}

fn utf16_units(bytes: &[u8]) -> Vec<u16> {
    bytes.chunks(2).map(|pair| pair.iter().fold(0u16, |acc, b| acc << 8 | u16::from(*b))).collect()
}

enum Token<'a> {
    Hex(Vec<u8>),
    Name(&'a [u8]),
    Keyword(&'a [u8]),
    ArrayStart,
    ArrayEnd,
    /// Numbers, literal strings, dictionary brackets: nothing a ToUnicode map's mappings are made of.
    Other,
}

struct Tokens<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Tokens<'a> {
    fn next(&mut self) -> Option<Token<'a>> {
        loop {
            let &b = self.bytes.get(self.at)?;
            match b {
                b'%' => {
                    while self.bytes.get(self.at).is_some_and(|&c| c != b'\n' && c != b'\r') {
                        self.at += 1;
                    }
                }
                b if is_space(b) => self.at += 1,
                _ => break,
            }
        }
        let start = self.at;
        let b = self.bytes[start];
        self.at += 1;
        Some(match b {
            b'<' if self.bytes.get(self.at) == Some(&b'<') => {
                self.at += 1;
                Token::Other
            }
            b'<' => {
                let end =
                    self.bytes[self.at..].iter().position(|&c| c == b'>').map_or(self.bytes.len(), |p| self.at + p);
                let digits: Vec<u8> = self.bytes[self.at..end].iter().filter_map(|&c| hex(c)).collect();
                self.at = (end + 1).min(self.bytes.len());
                let mut out = Vec::with_capacity(digits.len().div_ceil(2));
                for pair in digits.chunks(2) {
                    out.push(pair[0] << 4 | pair.get(1).copied().unwrap_or(0));
                }
                Token::Hex(out)
            }
            b'[' => Token::ArrayStart,
            b']' => Token::ArrayEnd,
            b'(' => {
                // Skipped with its nesting and escapes.
                let mut depth = 1usize;
                while let Some(&c) = self.bytes.get(self.at) {
                    self.at += 1;
                    match c {
                        b'\\' => self.at += 1,
                        b'(' => depth += 1,
                        b')' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                Token::Other
            }
            b'/' => Token::Name(self.word()),
            b'>' | b'{' | b'}' | b')' => Token::Other,
            _ => {
                self.at = start;
                let word = self.word();
                if word.is_empty() {
                    self.at += 1;
                    Token::Other
                } else if word[0].is_ascii_alphabetic() {
                    Token::Keyword(word)
                } else {
                    Token::Other
                }
            }
        })
    }

    /// The regular characters from here on.
    fn word(&mut self) -> &'a [u8] {
        let start = self.at;
        while self.bytes.get(self.at).is_some_and(|&c| !is_space(c) && !b"()<>[]{}/%".contains(&c)) {
            self.at += 1;
        }
        &self.bytes[start..self.at]
    }
}

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n' | b'\x0c' | b'\0')
}

fn hex(c: u8) -> Option<u8> {
    (c as char).to_digit(16).map(|d| d as u8)
}

#[cfg(test)]
mod tests {
    use super::ToUnicode;

    #[test]
    fn reads_chars_ranges_and_arrays() {
        let map = ToUnicode::parse(
            b"/CIDInit /ProcSet findresource begin 12 dict begin begincmap\n\
              1 begincodespacerange <0000> <FFFF> endcodespacerange\n\
              2 beginbfchar <0003> <0020> <0011> <FB01> endbfchar % a comment\n\
              2 beginbfrange <0041> <0043> <0061> <0050> <0052> [<0058> <D83DDE00> <0079 0301>] endbfrange\n\
              endcmap CMapName currentdict /CMap defineresource pop end end",
        );
        assert_eq!(map.get(0x03), Some(" "));
        assert_eq!(map.get(0x11), Some("\u{FB01}"));
        assert_eq!(map.get(0x41), Some("a"));
        assert_eq!(map.get(0x43), Some("c"));
        assert_eq!(map.get(0x44), None);
        assert_eq!(map.get(0x50), Some("X"));
        assert_eq!(map.get(0x51), Some("😀"));
        assert_eq!(map.get(0x52), Some("y\u{301}"));
    }

    #[test]
    fn a_hostile_map_is_bounded_and_junk_is_harmless() {
        let map = ToUnicode::parse(b"1 beginbfrange <00000000> <FFFFFFFF> <0041> endbfrange");
        assert!(map.get(0).is_some());
        assert!(map.map.len() <= super::MAX_ENTRIES);
        for junk in [&b"beginbfchar <"[..], b"beginbfrange <00> [", b"((((", b"<<>>]]][[[/", b"beginbfchar <0041> <"] {
            let _ = ToUnicode::parse(junk);
        }
        // A destination that is not text: nothing, rather than a replacement character.
        assert_eq!(ToUnicode::parse(b"beginbfchar <01> <0000> endbfchar").get(1), None);
    }
}
