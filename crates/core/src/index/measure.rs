//! Text lengths as the index counts them: weighted for the chunker's tokens, or in UTF-16 units as upstream.

/// Latin-equivalent length: CJK characters count 4, about a token each where Latin text averages 4 characters
/// per token.
pub(super) fn weight(text: &str) -> usize {
    text.chars().map(char_weight).sum()
}

pub(super) fn char_weight(c: char) -> usize {
    let wide = matches!(u32::from(c),
        0x1100..=0x11FF       // Hangul Jamo
        | 0x2E80..=0x303F     // CJK radicals, punctuation
        | 0x3040..=0x30FF     // Hiragana, Katakana
        | 0x3130..=0x318F     // Hangul compatibility Jamo
        | 0x3400..=0x4DBF     // CJK extension A
        | 0x4E00..=0x9FFF     // CJK unified ideographs
        | 0xAC00..=0xD7AF     // Hangul syllables
        | 0xF900..=0xFAFF     // CJK compatibility ideographs
        | 0xFF00..=0xFFEF     // full-width forms
        | 0x20000..=0x3134F); // CJK extensions B–G
    if wide {
        4
    } else {
        1
    }
}

/// The longest prefix of at most `max` UTF-16 code units (JavaScript's `slice(0, max)`), never splitting a
/// surrogate pair.
pub(super) fn slice_utf16(text: &str, max: usize) -> &str {
    let mut units = 0;
    for (at, c) in text.char_indices() {
        units += c.len_utf16();
        if units > max {
            return &text[..at];
        }
    }
    text
}
