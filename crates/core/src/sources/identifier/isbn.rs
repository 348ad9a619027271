//! ISBNs: 10 digits (the last may be `X`, standing for 10) or 13 digits beginning with 978 or 979, hyphens and
//! spaces allowed anywhere, the check digit verified. Both forms are returned: an ISBN-10 is the ISBN-13
//! `978` + its first nine digits + a new check digit.

use super::{strip_prefix_ignore_case, Identifier, IdentifierError};

const KIND: &str = "ISBN";
const FORM: &str =
    "an ISBN has 10 digits (the last may be X) or 13 beginning with 978 or 979, e.g. ISBN 978-0-306-40615-7";

/// What follows an `ISBN` prefix (`ISBN`, `ISBN:`, `ISBN-10:`, `ISBN-13:`, `ISBN13 `, any case).
pub(super) fn after_label(text: &str) -> Option<&str> {
    let rest = strip_prefix_ignore_case(text, "isbn")?;
    // `-10`/`-13` name the form, not digits of the number: only when a separator follows (`ISBN 1…` is a number).
    let rest = ["-10", "-13", "10", "13"]
        .iter()
        .filter_map(|form| rest.strip_prefix(form))
        .find(|after| after.starts_with(|c: char| c == ':' || c.is_whitespace()))
        .unwrap_or(rest);
    let body = rest.trim_start_matches(|c: char| c == ':' || c.is_whitespace());
    let separated = body.len() < rest.len() || body.starts_with(|c: char| c.is_ascii_digit());
    separated.then_some(body)
}

/// Whether unlabelled `text` has the shape of an ISBN: digits, hyphens and spaces, a possible final `X`, and
/// 10 or 13 characters once the hyphens and spaces are gone. It may still fail its check digit.
pub(super) fn looks_like(text: &str) -> bool {
    let starts_with_digit = text.starts_with(|c: char| c.is_ascii_digit());
    let allowed = text.chars().all(|c| c.is_ascii_digit() || is_separator(c) || matches!(c, 'X' | 'x'));
    starts_with_digit && allowed && matches!(compact(text).len(), 10 | 13)
}

/// `body` as an ISBN; `input` is the whole text, for the error message.
pub(super) fn parse(input: &str, body: &str) -> Result<Identifier, IdentifierError> {
    let digits = compact(body);
    let shape_ok = match digits.len() {
        10 => {
            digits.get(..9).is_some_and(all_ascii_digits) && digits.ends_with(|c: char| c.is_ascii_digit() || c == 'X')
        }
        13 => all_ascii_digits(&digits) && (digits.starts_with("978") || digits.starts_with("979")),
        _ => false,
    };
    if !shape_ok {
        return Err(IdentifierError::malformed(input, KIND, FORM));
    }
    check(input, body, &digits)?;
    Ok(if digits.len() == 10 { from_isbn10(digits) } else { from_isbn13(digits) })
}

/// `text` without hyphens and spaces, uppercased (so a final `x` is `X`).
fn compact(text: &str) -> String {
    text.chars().filter(|&c| !is_separator(c)).map(|c| c.to_ascii_uppercase()).collect()
}

fn is_separator(c: char) -> bool {
    c == '-' || c.is_whitespace()
}

fn all_ascii_digits(text: &str) -> bool {
    text.bytes().all(|b| b.is_ascii_digit())
}

/// An error when the last digit of `digits` (10 or 13 of them, already shaped right) is not their check digit.
fn check(input: &str, body: &str, digits: &str) -> Result<(), IdentifierError> {
    let (head, found) = digits.split_at(digits.len() - 1);
    let expected = if digits.len() == 10 { isbn10_check(head) } else { isbn13_check(head) };
    let found = found.chars().next().unwrap_or_default();
    if found == expected {
        return Ok(());
    }
    // The correction is shown the way the ISBN was written, hyphens and all: only the last character changes.
    let written = body.trim_end_matches(is_separator);
    let corrected = format!("{}{expected}", written.get(..written.len() - 1).unwrap_or_default());
    let kind = if digits.len() == 10 { "ISBN-10" } else { "ISBN-13" };
    Err(IdentifierError::IsbnCheckDigit { input: input.to_owned(), kind, found, expected, corrected })
}

/// The ISBN-10 check digit of nine digits: the weights 10 down to 2, and a check that makes the sum a multiple of
/// 11 (10 is written `X`).
fn isbn10_check(nine: &str) -> char {
    let sum: u32 = nine.bytes().zip((2..=10).rev()).map(|(b, weight)| u32::from(b - b'0') * weight).sum();
    digit_char((11 - sum % 11) % 11)
}

/// The ISBN-13 (EAN-13) check digit of twelve digits: weights 1 and 3 alternately, and a check that makes the
/// sum a multiple of 10.
fn isbn13_check(twelve: &str) -> char {
    let sum: u32 = twelve.bytes().zip([1, 3].into_iter().cycle()).map(|(b, weight)| u32::from(b - b'0') * weight).sum();
    digit_char((10 - sum % 10) % 10)
}

/// A check digit as written: 0–9, or `X` for an ISBN-10's 10.
fn digit_char(value: u32) -> char {
    char::from_digit(value, 10).unwrap_or('X')
}

fn from_isbn10(isbn10: String) -> Identifier {
    let twelve = format!("978{}", isbn10.get(..9).unwrap_or_default());
    let isbn13 = format!("{twelve}{}", isbn13_check(&twelve));
    Identifier::Isbn { isbn13, isbn10: Some(isbn10) }
}

fn from_isbn13(isbn13: String) -> Identifier {
    // Only the 978 range has ISBN-10s: they are the same nine digits with their own check digit.
    let isbn10 =
        isbn13.strip_prefix("978").and_then(|rest| rest.get(..9)).map(|nine| format!("{nine}{}", isbn10_check(nine)));
    Identifier::Isbn { isbn13, isbn10 }
}
