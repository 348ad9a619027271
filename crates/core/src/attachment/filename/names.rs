//! Names every platform can store: Zotero's `getValidFileName`, Windows' reserved device names, the byte limit of
//! Linux and macOS file systems, and what counts as an extension.

use super::{MAX_FILENAME_BYTES, MAX_FILENAME_CHARS};

/// Zotero's `getValidFileName`: drops the characters Windows, macOS or Linux reject and the invisible ones, makes
/// line breaks spaces, collapses whitespace, refuses hidden names (a leading dot), cuts to
/// [`MAX_FILENAME_CHARS`] characters and then to [`MAX_FILENAME_BYTES`] bytes (on a character boundary), and, so
/// the name can be stored on Windows too, strips trailing dots and spaces and puts `_` before a reserved device
/// name (`CON`, `NUL.txt`, `com1`). A name with nothing left is `_`.
///
/// Applying it to its own result changes nothing.
pub fn valid_file_name(name: &str) -> String {
    let name = tidy_name(name, MAX_FILENAME_CHARS, MAX_FILENAME_BYTES, true);
    if name.is_empty() {
        "_".to_owned()
    } else {
        name
    }
}

/// The extension of a file name, when it looks like one: 1 to 8 ASCII letters or digits after the last dot, which
/// is neither the first nor the last character. Otherwise `""` (`v1.2.3-notanext` has none).
pub fn extension_of(filename: &str) -> &str {
    let Some(dot) = filename.rfind('.') else { return "" };
    if dot == 0 {
        return "";
    }
    let ext = &filename[dot + 1..];
    if (1..=8).contains(&ext.len()) && ext.bytes().all(|b| b.is_ascii_alphanumeric()) {
        ext
    } else {
        ""
    }
}

/// Zotero's `cleanTags`, run on the rendered name: `<br>` becomes a line break, other HTML tags go, so
/// "A <i>Study</i>" is "A Study". Titles are truncated with their tags first, exactly as Desktop does.
pub(super) fn clean_tags(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('<') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match after.find('>') {
            Some(close) if close > 0 => {
                if after.get(..2).is_some_and(|t| t.eq_ignore_ascii_case("br")) {
                    out.push('\n');
                }
                rest = &after[close + 1..];
            }
            _ => {
                out.push('<');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The work of [`valid_file_name`], cut to `max_chars` characters and `max_bytes` bytes; `""` when nothing is
/// left. Trailing spaces are trimmed after the cut, so a cut never leaves one. For a base name an extension will
/// follow (`whole` false), trailing dots stay: Desktop names "Vol. 2..pdf" that way, and only the end of the whole
/// name matters to Windows.
pub(super) fn tidy_name(name: &str, max_chars: usize, max_bytes: usize, whole: bool) -> String {
    let mut out = String::with_capacity(name.len());
    let mut gap = false;
    for c in name.chars().filter_map(file_name_char) {
        if is_js_space(c) {
            gap = true;
            continue;
        }
        if out.is_empty() {
            // No hidden files: leading dots go, with any space between them.
            if c == '.' {
                continue;
            }
            gap = false;
        }
        if gap {
            out.push(' ');
            gap = false;
        }
        out.push(c);
    }
    if is_reserved_on_windows(&out) {
        out.insert(0, '_');
    }
    cut_chars(&mut out, max_chars);
    cut_bytes(&mut out, max_bytes);
    let keep = if whole { out.trim_end_matches(['.', ' ']).len() } else { out.trim_end_matches(' ').len() };
    out.truncate(keep);
    out
}

/// A character of a name as Zotero's `getValidFileName` treats it: kept, made a space, or dropped (`None`).
fn file_name_char(c: char) -> Option<char> {
    match c {
        '/' | '\\' | '?' | '*' | ':' | '|' | '"' | '<' | '>' => None,
        '\r' | '\n' | '\t' | '\u{2000}'..='\u{200A}' => Some(' '),
        '\u{200B}'..='\u{200E}' | '\u{2028}' | '\u{2029}' | '\u{2068}' | '\u{2069}' | '\u{FFFE}' | '\u{FFFF}' => None,
        c if c < ' ' => None,
        c => Some(c),
    }
}

/// JavaScript's `\s`: Unicode white space and the byte-order mark.
fn is_js_space(c: char) -> bool {
    c.is_whitespace() || c == '\u{FEFF}'
}

/// Whether Windows reserves the name for a device: `CON`, `PRN`, `AUX`, `NUL`, `COM0`–`COM9`, `LPT0`–`LPT9` (and
/// their superscript-digit forms), in any case, alone or before an extension (`nul.txt`).
fn is_reserved_on_windows(name: &str) -> bool {
    let stem = name.split('.').next().unwrap_or_default().trim_end_matches(' ').to_ascii_uppercase();
    match stem.as_str() {
        "CON" | "PRN" | "AUX" | "NUL" => true,
        _ => {
            let mut port = stem.strip_prefix("COM").or_else(|| stem.strip_prefix("LPT")).unwrap_or_default().chars();
            matches!(port.next(), Some('0'..='9' | '¹' | '²' | '³')) && port.next().is_none()
        }
    }
}

/// Cuts `text` to `max` characters, on a character boundary.
pub(super) fn cut_chars(text: &mut String, max: usize) {
    if let Some((cut, _)) = text.char_indices().nth(max) {
        text.truncate(cut);
    }
}

/// Cuts `text` to at most `max` bytes of UTF-8, on a character boundary.
fn cut_bytes(text: &mut String, max: usize) {
    if text.len() > max {
        let cut = (0..=max).rev().find(|&i| text.is_char_boundary(i)).unwrap_or(0);
        text.truncate(cut);
    }
}
