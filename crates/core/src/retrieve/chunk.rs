//! Passages: a text cut at sentence ends into pieces a reader can quote, each about [`TARGET_CHARS`] long and
//! none longer than [`MAX_CHARS`]. A PDF is cut page by page, so every passage lies on one page.

/// A passage grows by whole sentences up to about this many characters.
pub const TARGET_CHARS: usize = 700;
/// A sentence longer than this (a table read as text, a run-on list) is cut at spaces.
pub const MAX_CHARS: usize = 1200;

/// `text` as passages, in reading order. Line breaks become spaces, a word hyphenated across a line break is
/// joined (`exam-` + `ple`), runs of white space become one space; nothing else changes.
pub fn passages(text: &str) -> Vec<String> {
    let clean = clean(text);
    let mut out = Vec::new();
    let mut current = String::new();
    for sentence in sentences(&clean) {
        for piece in cut_long(sentence) {
            if !current.is_empty() && current.len() + 1 + piece.len() > TARGET_CHARS {
                out.push(std::mem::take(&mut current));
            }
            if !current.is_empty() {
                current.push(' ');
            }
            current.push_str(piece);
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

fn clean(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '-' && chars.peek() == Some(&'\n') {
            // A hyphen ending a line: `exam-\nple` was one word broken by the line, `Self-\nAttention` keeps
            // its hyphen; neither gets a space.
            chars.next();
            if !chars.peek().is_some_and(|c| c.is_lowercase()) {
                out.push('-');
            }
            continue;
        }
        if c.is_whitespace() {
            if !out.is_empty() && !out.ends_with(' ') {
                out.push(' ');
            }
        } else {
            out.push(c);
        }
    }
    let kept = out.trim_end().len();
    out.truncate(kept);
    out
}

/// The sentences of a cleaned text: a sentence ends at `.`, `?` or `!` (and any closing quote or bracket) before
/// a space and a capital letter, a digit or an opening quote or bracket.
fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let bytes: Vec<(usize, char)> = text.char_indices().collect();
    for (at, &(_, c)) in bytes.iter().enumerate() {
        if !matches!(c, '.' | '?' | '!') {
            continue;
        }
        let mut next = at + 1;
        while bytes.get(next).is_some_and(|(_, c)| matches!(c, '"' | '\'' | ')' | ']' | '”' | '’')) {
            next += 1;
        }
        let space = bytes.get(next).is_some_and(|(_, c)| *c == ' ');
        let opens = bytes
            .get(next + 1)
            .is_some_and(|(_, c)| c.is_uppercase() || c.is_ascii_digit() || matches!(c, '"' | '(' | '[' | '“' | '‘'));
        if space && opens {
            let end = bytes.get(next).map_or(text.len(), |(i, _)| *i);
            out.push(&text[start..end]);
            start = end + 1;
        }
    }
    if start < text.len() {
        out.push(&text[start..]);
    }
    out
}

/// A sentence in pieces of at most [`MAX_CHARS`] bytes, cut at spaces where there are any.
fn cut_long(sentence: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = sentence;
    while rest.len() > MAX_CHARS {
        let mut cut = MAX_CHARS;
        while !rest.is_char_boundary(cut) {
            cut -= 1;
        }
        let cut = rest[..cut].rfind(' ').filter(|&space| space > 0).unwrap_or(cut);
        out.push(&rest[..cut]);
        rest = rest[cut..].trim_start();
    }
    if !rest.is_empty() {
        out.push(rest);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentences_are_grouped_and_never_split_below_the_limit() {
        let sentence = "Heat stress lowered the yield of maize in every trial. ";
        let text = sentence.repeat(40);
        let found = passages(&text);
        assert!(found.len() > 1);
        for passage in &found {
            assert!(passage.len() <= TARGET_CHARS, "{}", passage.len());
            assert!(passage.starts_with("Heat") && passage.ends_with("trial."), "{passage}");
        }
        assert_eq!(found.join(" "), text.trim_end());
    }

    #[test]
    fn line_breaks_and_hyphenation_are_undone() {
        assert_eq!(
            passages("A measure-\nment was taken.\nIt rose  by 3 %. e.g. not a stop."),
            ["A measurement was taken. It rose by 3 %. e.g. not a stop."]
        );
        assert_eq!(passages("Self-\nAttention works."), ["Self-Attention works."]);
        assert!(passages("  \n ").is_empty());
    }

    #[test]
    fn an_endless_sentence_is_cut_at_spaces() {
        let text = "word ".repeat(1000);
        let found = passages(&text);
        assert!(found.iter().all(|p| p.len() <= MAX_CHARS && !p.starts_with(' ') && !p.ends_with(' ')));
        assert_eq!(found.join(" "), text.trim_end());
        let unbroken = "é".repeat(2000);
        assert_eq!(passages(&unbroken).concat(), unbroken, "cut at a character boundary");
    }
}
