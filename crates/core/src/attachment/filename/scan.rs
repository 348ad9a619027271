//! Reading template text: where a tag closes (tags nest, quotes hide braces), line breaks dropped, numbers and
//! whole-number attributes.

use super::problems::Findings;

/// The byte offset of the `}}` closing a tag whose body starts at `from`. Tags nest, and braces inside a quoted
/// attribute value do not count (as in Zotero, whose quotes have no escapes).
pub(super) fn find_close(bytes: &[u8], from: usize) -> Option<usize> {
    let (mut depth, mut i) = (1usize, from);
    while i < bytes.len() {
        match bytes[i] {
            quote @ (b'"' | b'\'') => i = after_quoted(bytes, i, quote)?,
            b'{' if bytes.get(i + 1) == Some(&b'{') => {
                depth += 1;
                i += 2;
            }
            b'}' if bytes.get(i + 1) == Some(&b'}') => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
                i += 2;
            }
            _ => i += 1,
        }
    }
    None
}

/// The byte offset just past the quote closing the one at `open`.
pub(super) fn after_quoted(bytes: &[u8], open: usize, quote: u8) -> Option<usize> {
    bytes[open + 1..].iter().position(|&b| b == quote).map(|p| open + p + 2)
}

pub(super) fn without_line_breaks(s: &str) -> String {
    s.replace(['\r', '\n'], "")
}

pub(super) fn is_number(s: &str) -> bool {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    let (whole, fraction) = digits.split_once('.').unwrap_or((digits, "0"));
    !whole.is_empty()
        && !fraction.is_empty()
        && whole.bytes().all(|b| b.is_ascii_digit())
        && fraction.bytes().all(|b| b.is_ascii_digit())
}

/// A whole-number attribute; reported (and ignored) when it is not one.
pub(super) fn whole_number<'v>(
    attr: &dyn Fn(&str) -> Option<&'v str>,
    name: &str,
    findings: &mut Findings,
) -> Option<i64> {
    let value = attr(name)?.trim();
    match value.parse::<i64>() {
        Ok(n) => Some(n),
        Err(_) => {
            findings.push(format!("{name}=\"{value}\" must be a whole number"));
            None
        }
    }
}
