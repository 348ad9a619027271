//! DOIs: `10.` + a registrant code + `/` + a suffix.
//!
//! The DOI Handbook lets a suffix hold almost any printable character, `;`, `,`, `(`, `<` and `/` included
//! (Wiley's older SICI-style DOIs, `10.1002/(SICI)…3.0.CO;2-K`, hold most of them), so the suffix is not
//! checked against a character list as upstream's pattern does: it is everything up to the end of the text
//! (or, inside other text, up to whitespace), minus the trailing punctuation [`super::tidy`] drops. The
//! registrant code is 4 to 9 digits, as in upstream's pattern, optionally with subdivisions (`10.1000.10/…`),
//! which the Handbook allows.

use super::{trim_end, IdentifierError};

const KIND: &str = "DOI";
const FORM: &str =
    "a DOI is `10.`, a registrant code of 4 to 9 digits, `/` and a suffix without spaces, e.g. 10.1038/s41586-020-2649-2";

/// `text` as a DOI, when all of it is one.
pub(super) fn parse(text: &str) -> Option<String> {
    let suffix = text.get(prefix_len(text)?..)?;
    let printable = !suffix.is_empty() && !suffix.chars().any(|c| c.is_whitespace() || c.is_control());
    printable.then(|| text.to_owned())
}

/// The error for text that a `doi:` prefix or a doi.org link says is a DOI.
pub(super) fn malformed(input: &str) -> IdentifierError {
    IdentifierError::malformed(input, KIND, FORM)
}

/// The length of the DOI prefix (`10.1000/`, slash included) that `text` starts with, if it starts with one.
pub(super) fn prefix_len(text: &str) -> Option<usize> {
    let registrant = text.strip_prefix("10.")?;
    let code = digits_len(registrant);
    if !(4..=9).contains(&code) {
        return None;
    }
    let mut at = "10.".len() + code;
    // Subdivisions of the registrant code: `.` and digits, any number of times.
    while let Some(subdivision) = text.get(at..)?.strip_prefix('.') {
        let digits = digits_len(subdivision);
        if digits == 0 {
            return None;
        }
        at += 1 + digits;
    }
    text.get(at..)?.starts_with('/').then_some(at + 1)
}

/// How many ASCII digits `text` starts with.
fn digits_len(text: &str) -> usize {
    text.bytes().take_while(u8::is_ascii_digit).count()
}

/// The DOI inside `text` (a pasted reference, a sentence), when there is exactly one, counting case-insensitive
/// repeats once. Two different DOIs give `None`: which of them was meant is not for this function to guess.
pub(super) fn find_unique(text: &str) -> Option<String> {
    let mut found: Option<&str> = None;
    let mut searched_to = 0;
    for (at, _) in text.match_indices("10.") {
        // A cheap look at the prefix first: reading the word that follows costs its length, once per `10.`.
        if at < searched_to || !starts_word(text, at) || text.get(at..).and_then(prefix_len).is_none() {
            continue;
        }
        let word = word_at(text, at);
        let doi = trim_end(word);
        if parse(doi).is_none() {
            // A word that is no DOI from here fails from every later `10.` in it too, up to its last control
            // character (the only thing that fails a DOI whose prefix is good and whose suffix is not empty).
            searched_to = word.rfind(char::is_control).map_or(at + word.len(), |c| at + c + 1);
            continue;
        }
        searched_to = at + doi.len();
        match found {
            None => found = Some(doi),
            Some(seen) if !seen.eq_ignore_ascii_case(doi) => return None,
            Some(_) => {}
        }
    }
    found.map(str::to_owned)
}

/// The text from `at` to the next white space.
fn word_at(text: &str, at: usize) -> &str {
    text.get(at..).and_then(|rest| rest.split(char::is_whitespace).next()).unwrap_or_default()
}

/// Whether byte `at` of `text` begins a word: a DOI inside `110.1000/x` or `v2.10.1000/x` is not one.
fn starts_word(text: &str, at: usize) -> bool {
    let before = text.get(..at).and_then(|head| head.chars().next_back());
    !before.is_some_and(|c| c.is_alphanumeric() || matches!(c, '.' | '_' | '-'))
}
