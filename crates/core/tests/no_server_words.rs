//! The core crate is shared by the Worker and the native binary, and knows neither the server's tools nor how a
//! shell is deployed. So no message it builds may tell the person to call a tool (`zotero_search`,
//! `zotero_create_items`, …) or to run `wrangler`: core says what failed and what is missing, in its own terms,
//! and the server's tools and the shells add what to call or run (`crates/server/src/tools/next_step.rs`,
//! `crates/server/src/config.rs`'s `SetupHint`).
//!
//! Only text is read: every string literal of `crates/core/src/**/*.rs` outside tests (`tests.rs`, `tests/`
//! directories and items under `#[cfg(test)]`), comments skipped. The scan is a small lexer, not a Rust parser.

use std::path::{Path, PathBuf};

/// The crate's own name may appear (`zotero_mcp_core`, a user agent); anything else after `zotero_` is a tool.
const NOT_A_TOOL: &[&str] = &["zotero_mcp"];

/// A word in a core string literal that belongs to the server or a shell, if there is one.
fn server_word(literal: &str) -> Option<String> {
    if literal.to_ascii_lowercase().contains("wrangler") {
        return Some("wrangler".into());
    }
    // Tool names are lower case; `ZOTERO_API_KEY` and the other variables are core's to name.
    let mut from = 0;
    while let Some(at) = literal[from..].find("zotero_").map(|i| from + i) {
        let word: String = literal[at..].chars().take_while(|c| c.is_ascii_lowercase() || *c == '_').collect();
        let preceded = literal[..at].chars().next_back().is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
        let tool_like = word.len() > "zotero_".len() && !NOT_A_TOOL.iter().any(|name| word.starts_with(name));
        if tool_like && !preceded {
            return Some(word);
        }
        from = at + "zotero_".len();
    }
    None
}

/// A token of Rust source, as far as this check needs: a string literal's text, or any other piece of code.
#[derive(Debug, PartialEq)]
enum Token {
    /// The literal's contents with `\`-newline continuations folded (so a word split across lines is whole).
    Str {
        text: String,
        line: usize,
    },
    Punct(char),
    Word(String),
}

/// The tokens of `source`, comments dropped.
fn lex(source: &str) -> Vec<Token> {
    let chars: Vec<char> = source.chars().collect();
    let mut tokens = Vec::new();
    let mut line = 1;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            // Block comments nest in Rust.
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
                    line += usize::from(chars[i] == '\n');
                    i += 1;
                }
            }
        } else if let Some((hashes, start)) = raw_string_start(&chars, i) {
            let (text, end) = raw_string(&chars, start, hashes);
            tokens.push(Token::Str { text: text.clone(), line });
            line += text.matches('\n').count();
            i = end;
        } else if c == '"' || (matches!(c, 'b' | 'c') && next == Some('"')) {
            let start = if c == '"' { i + 1 } else { i + 2 };
            let (text, end, lines) = quoted_string(&chars, start);
            tokens.push(Token::Str { text, line });
            line += lines;
            i = end;
        } else if c == '\'' {
            i = after_quote(&chars, i);
        } else if c.is_alphanumeric() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            tokens.push(Token::Word(chars[start..i].iter().collect()));
        } else {
            tokens.push(Token::Punct(c));
            i += 1;
        }
    }
    tokens
}

/// For `r"`, `r#"`, `br##"` … at `i`: the number of `#` and where the contents start.
fn raw_string_start(chars: &[char], i: usize) -> Option<(usize, usize)> {
    // Not the tail of an identifier such as `bar"` (which is not Rust anyway) or `for"`.
    if i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_') {
        return None;
    }
    let mut j = i;
    if matches!(chars.get(j), Some('b' | 'c')) {
        j += 1;
    }
    if chars.get(j) != Some(&'r') {
        return None;
    }
    j += 1;
    let hashes = chars[j..].iter().take_while(|c| **c == '#').count();
    (chars.get(j + hashes) == Some(&'"')).then_some((hashes, j + hashes + 1))
}

/// A raw string's contents from `start` and the index after its closing quote and hashes.
fn raw_string(chars: &[char], start: usize, hashes: usize) -> (String, usize) {
    let mut i = start;
    while i < chars.len() {
        if chars[i] == '"' && chars[i + 1..].iter().take(hashes).filter(|c| **c == '#').count() == hashes {
            return (chars[start..i].iter().collect(), i + 1 + hashes);
        }
        i += 1;
    }
    (chars[start..].iter().collect(), chars.len())
}

/// A `"…"` string's contents from `start` (escapes kept as the escaped character, `\`-newline continuations
/// folded away with the next line's indentation), the index after its closing quote, and the newlines it spans.
fn quoted_string(chars: &[char], start: usize) -> (String, usize, usize) {
    let mut text = String::new();
    let mut lines = 0;
    let mut i = start;
    while i < chars.len() {
        match chars[i] {
            '"' => return (text, i + 1, lines),
            '\\' if chars.get(i + 1) == Some(&'\n') => {
                i += 1;
                while i < chars.len() && chars[i].is_whitespace() {
                    lines += usize::from(chars[i] == '\n');
                    i += 1;
                }
            }
            '\\' => {
                if let Some(escaped) = chars.get(i + 1) {
                    text.push(*escaped);
                }
                i += 2;
            }
            other => {
                lines += usize::from(other == '\n');
                text.push(other);
                i += 1;
            }
        }
    }
    (text, chars.len(), lines)
}

/// Past a character literal (`'a'`, `'\''`, `'"'`) or a lifetime's quote (`'a`) at `i`.
fn after_quote(chars: &[char], i: usize) -> usize {
    match (chars.get(i + 1), chars.get(i + 2)) {
        (Some('\\'), _) => {
            let mut j = i + 2;
            while j < chars.len() && chars[j] != '\'' {
                j += 1;
            }
            j + 1
        }
        (Some(_), Some('\'')) => i + 3,
        _ => i + 1,
    }
}

/// The string literals of `tokens` outside items marked `#[cfg(test)]` (an inline `mod … { … }`, a function, or a
/// `mod tests;` whose file is skipped by name).
fn literals_outside_tests(tokens: &[Token]) -> Vec<(usize, &str)> {
    let mut found = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        if is_cfg_test(&tokens[i..]) {
            i = end_of_item(tokens, i + CFG_TEST.len());
            continue;
        }
        if let Token::Str { text, line } = &tokens[i] {
            found.push((*line, text.as_str()));
        }
        i += 1;
    }
    found
}

/// `#[cfg(test)]` as tokens.
const CFG_TEST: [&str; 7] = ["#", "[", "cfg", "(", "test", ")", "]"];

fn is_cfg_test(tokens: &[Token]) -> bool {
    tokens.len() >= CFG_TEST.len()
        && tokens.iter().zip(CFG_TEST).all(|(token, want)| match token {
            Token::Punct(c) => want.len() == 1 && want.starts_with(*c),
            Token::Word(word) => word == want,
            Token::Str { .. } => false,
        })
}

/// The index after the item starting at `i`: through its matching `}` when a block comes before any `;`, else
/// through the `;`.
fn end_of_item(tokens: &[Token], mut i: usize) -> usize {
    let mut depth = 0usize;
    while i < tokens.len() {
        match tokens[i] {
            Token::Punct('{') => depth += 1,
            Token::Punct('}') => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return i + 1;
                }
            }
            Token::Punct(';') if depth == 0 => return i + 1,
            _ => {}
        }
        i += 1;
    }
    i
}

/// Every `.rs` file under `dir`, except test modules kept in files of their own.
fn sources(dir: &Path, into: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { panic!("cannot read {}", dir.display()) };
    let mut paths: Vec<PathBuf> = entries.filter_map(|entry| entry.ok().map(|entry| entry.path())).collect();
    paths.sort();
    for path in paths {
        let name = path.file_name().and_then(|name| name.to_str()).unwrap_or_default();
        if path.is_dir() {
            if name != "tests" {
                sources(&path, into);
            }
        } else if name.ends_with(".rs") && name != "tests.rs" {
            into.push(path);
        }
    }
}

#[test]
fn core_messages_name_no_server_tool_and_no_wrangler() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    sources(&root.join("src"), &mut files);
    assert!(files.len() > 50, "the core's sources were not found under {}", root.display());
    let mut offences = Vec::new();
    for file in &files {
        let Ok(source) = std::fs::read_to_string(file) else { panic!("cannot read {}", file.display()) };
        let tokens = lex(&source);
        for (line, literal) in literals_outside_tests(&tokens) {
            if let Some(word) = server_word(literal) {
                let shown = file.strip_prefix(root).unwrap_or(file).display();
                offences.push(format!("{shown}:{line}: `{word}` in {literal:?}"));
            }
        }
    }
    assert!(
        offences.is_empty(),
        "core messages name a server tool or wrangler; say what failed or is missing in core's own terms and let \
         the tool (crates/server/src/tools/next_step.rs) or the shell (SetupHint) say what to call or run:\n{}",
        offences.join("\n")
    );
}

// The scanner itself: what it must find and what it must leave alone.

#[test]
fn the_scan_finds_tool_names_in_every_kind_of_literal_and_skips_tests_and_comments() {
    let source = r####"
        // "zotero_search in a comment"
        /* "zotero_search" /* nested */ "still a comment" */
        const A: &str = "read it with zotero_read_attachment";
        const B: &str = r#"call "zotero_create_items""#;
        const C: &str = "split across \
                         zotero_delete_\
                         attachment";
        const D: char = '"';
        fn f<'a>(x: &'a str) -> &'a str { "Run wrangler secret put X" }
        const OK: &str = "zotero_mcp_core, zotero-mcp and ZOTERO_API_KEY are names, not tools";
        #[cfg(test)]
        mod tests { fn t() { let _ = "zotero_search"; { "nested zotero_get_item" }; } }
        #[cfg(test)]
        fn helper() -> &'static str { "zotero_notes" }
        const E: &[u8] = b"zotero_list_tags";
    "####;
    let tokens = lex(source);
    let words: Vec<(usize, String)> = literals_outside_tests(&tokens)
        .into_iter()
        .filter_map(|(line, literal)| server_word(literal).map(|word| (line, word)))
        .collect();
    let expected = [
        (4, "zotero_read_attachment"),
        (5, "zotero_create_items"),
        (6, "zotero_delete_attachment"),
        (10, "wrangler"),
        (16, "zotero_list_tags"),
    ];
    assert_eq!(words, expected.map(|(line, word)| (line, word.to_owned())));
}
