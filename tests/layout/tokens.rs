//! A small Rust tokenizer: words and punctuation, with comments, strings and character literals dropped.

#[derive(Debug, Clone, PartialEq)]
pub struct Token {
    pub text: String,
    pub line: usize,
}

fn is_word_char(c: char) -> bool {
    c == '_' || c.is_alphanumeric()
}

/// Skips a string literal whose opening quote is at `i`; returns the index after its closing quote.
fn skip_string(chars: &[char], mut i: usize, line: &mut usize) -> usize {
    i += 1;
    while i < chars.len() {
        match chars[i] {
            '\\' => {
                if chars.get(i + 1) == Some(&'\n') {
                    *line += 1;
                }
                i += 2;
            }
            '"' => return i + 1,
            c => {
                if c == '\n' {
                    *line += 1;
                }
                i += 1;
            }
        }
    }
    i
}

/// Skips a raw string whose `#`s or opening quote start at `i`; returns the index after it, or None when
/// `chars[i..]` does not open a raw string.
fn skip_raw_string(chars: &[char], i: usize, line: &mut usize) -> Option<usize> {
    let mut j = i;
    while chars.get(j) == Some(&'#') {
        j += 1;
    }
    if chars.get(j) != Some(&'"') {
        return None;
    }
    let hashes = j - i;
    j += 1;
    while j < chars.len() {
        if chars[j] == '"' && (1..=hashes).all(|k| chars.get(j + k) == Some(&'#')) {
            return Some(j + 1 + hashes);
        }
        if chars[j] == '\n' {
            *line += 1;
        }
        j += 1;
    }
    Some(j)
}

/// Splits Rust source into words and punctuation, dropping comments (doc comments too), string and character
/// literals. `::` is one token and `$crate` one word; numbers come out as words, which is harmless here.
pub fn tokenize(source: &str) -> Vec<Token> {
    let chars: Vec<char> = source.chars().collect();
    let mut tokens = Vec::new();
    let mut line = 1;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        match c {
            '\n' => {
                line += 1;
                i += 1;
            }
            c if c.is_whitespace() => i += 1,
            '/' if next == Some('/') => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            '/' if next == Some('*') => {
                let mut depth = 0;
                while i < chars.len() {
                    if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                        depth += 1;
                        i += 2;
                    } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        if chars[i] == '\n' {
                            line += 1;
                        }
                        i += 1;
                    }
                }
            }
            '"' => i = skip_string(&chars, i, &mut line),
            '\'' => {
                if next == Some('\\') {
                    // An escaped character literal: '\n', '\'', '\u{..}'.
                    i += 3;
                    while i < chars.len() && chars[i] != '\'' {
                        i += 1;
                    }
                    i += 1;
                } else if chars.get(i + 2) == Some(&'\'') {
                    i += 3;
                } else {
                    // A lifetime or a label: its name comes out as a word.
                    i += 1;
                }
            }
            ':' if next == Some(':') => {
                tokens.push(Token { text: "::".to_owned(), line });
                i += 2;
            }
            '$' if chars[i + 1..].starts_with(&['c', 'r', 'a', 't', 'e'])
                && !chars.get(i + 6).copied().is_some_and(is_word_char) =>
            {
                tokens.push(Token { text: "$crate".to_owned(), line });
                i += 6;
            }
            c if is_word_char(c) => {
                let start = i;
                while i < chars.len() && is_word_char(chars[i]) {
                    i += 1;
                }
                let word: String = chars[start..i].iter().collect();
                match (word.as_str(), chars.get(i)) {
                    ("r" | "br" | "cr", Some('"' | '#')) => {
                        if let Some(end) = skip_raw_string(&chars, i, &mut line) {
                            i = end;
                        } else if word == "r" && chars.get(i + 1).copied().is_some_and(is_word_char) {
                            // A raw identifier, kept as `r#name` so it never reads as a keyword.
                            let start = i + 1;
                            i = start;
                            while i < chars.len() && is_word_char(chars[i]) {
                                i += 1;
                            }
                            let name: String = chars[start..i].iter().collect();
                            tokens.push(Token { text: format!("r#{name}"), line });
                        } else {
                            tokens.push(Token { text: word, line });
                        }
                    }
                    ("b" | "c", Some('"')) => i = skip_string(&chars, i, &mut line),
                    _ => tokens.push(Token { text: word, line }),
                }
            }
            c => {
                tokens.push(Token { text: c.to_string(), line });
                i += 1;
            }
        }
    }
    tokens
}
