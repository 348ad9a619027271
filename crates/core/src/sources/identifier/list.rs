//! Several identifiers in one string: where one ends and the next begins.

use super::{detect, detect_exact, tidy, Identifier, IdentifierError};

/// Prefixes that belong to the word after them (`PMID: 12345678`): a word of its own is joined to the next one.
const LABELS: &[&str] = &["doi", "arxiv", "isbn", "isbn-10", "isbn-13", "isbn10", "isbn13", "pmid", "pmcid"];

/// Every identifier in `input`, in order, each with the piece of text it was read from and its outcome, so a
/// caller can import the good ones and report the others. Repeats are kept (compare with
/// [`Identifier::key`]); pieces that are only punctuation are dropped.
///
/// A DOI suffix may contain `,` and `;` (and in principle any printable character but whitespace), so the
/// separators are chosen not to cut one:
/// 1. line breaks always separate;
/// 2. `,` and `;` separate when whitespace or the end of the line follows them (a DOI has no whitespace);
/// 3. what is left is first tried whole, so an identifier written with spaces stays one (`ISBN 0 306 40615 2`,
///    `PMID: 12345678`, `arXiv:1706.03762 [cs.CL]`); if it is not one identifier, whitespace separates, a
///    prefix standing alone (`PMID:`, `doi`) staying with the word after it;
/// 4. a word with `,` or `;` inside is split there too when it is not one identifier, or when every part is
///    one: `2301.01234,2301.01235` and `10.1000/a,10.1000/b` are two each, while
///    `10.1002/(SICI)…3.0.CO;2-K` stays one DOI, since `2-K` is not an identifier.
///
/// So an ISBN written with spaces must stand alone on its line or between commas; among other identifiers
/// separated only by spaces, its groups would be read as separate numbers.
pub fn detect_all(input: &str) -> Vec<(String, Result<Identifier, IdentifierError>)> {
    detect_each(input).collect()
}

/// [`detect_all`] one outcome at a time, so a caller can stop early (at the first failure, or at a limit)
/// without reading the rest of a long text.
pub fn detect_each(input: &str) -> impl Iterator<Item = (String, Result<Identifier, IdentifierError>)> + '_ {
    input.split(['\n', '\r']).flat_map(chunks).flat_map(chunk_outcomes)
}

/// The parts of a line between `,` or `;` followed by whitespace or the line's end, trimmed.
fn chunks(line: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut start = 0;
    let mut chars = line.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        let ends_part = matches!(c, ',' | ';') && chars.peek().is_none_or(|&(_, next)| next.is_whitespace());
        if ends_part {
            parts.push(line.get(start..at).unwrap_or_default());
            start = at + c.len_utf8();
        }
    }
    parts.push(line.get(start..).unwrap_or_default());
    parts.into_iter().map(str::trim).filter(|part| !tidy(part).is_empty()).collect()
}

/// The outcomes of one chunk: one identifier if the whole chunk, spaces and all, is one; else one per word (a
/// chunk without spaces is one word, which may still be split at `,` and `;`). The words are read as they are
/// asked for, so a caller that stops at the first failure does not read a long line's every word.
fn chunk_outcomes(chunk: &str) -> impl Iterator<Item = (String, Result<Identifier, IdentifierError>)> + '_ {
    let whole = chunk.contains(char::is_whitespace).then(|| detect_exact(tidy(chunk)).ok()).flatten();
    let by_word = whole.is_none().then(|| words(chunk).into_iter().flat_map(word_outcomes));
    whole.map(|identifier| (chunk.to_owned(), Ok(identifier))).into_iter().chain(by_word.into_iter().flatten())
}

/// The outcomes of one word: the word's own, unless splitting it at `,` and `;` does better (rule 4 of
/// [`detect_all`]).
fn word_outcomes(word: &str) -> Vec<(String, Result<Identifier, IdentifierError>)> {
    let whole = detect(word);
    let parts: Vec<&str> = word.split([',', ';']).map(str::trim).filter(|part| !tidy(part).is_empty()).collect();
    if parts.len() > 1 {
        let outcomes: Vec<_> = parts.into_iter().map(|part| (part.to_owned(), detect(part))).collect();
        if whole.is_err() || outcomes.iter().all(|(_, outcome)| outcome.is_ok()) {
            return outcomes;
        }
    }
    vec![(word.to_owned(), whole)]
}

/// The whitespace-separated words of `chunk`, a prefix standing alone joined to the word after it.
fn words(chunk: &str) -> Vec<&str> {
    let mut words = Vec::new();
    let mut spans = word_spans(chunk).into_iter().peekable();
    while let Some((start, end)) = spans.next() {
        let word = chunk.get(start..end).unwrap_or_default();
        let end = match spans.peek() {
            Some(&(_, next_end)) if is_label(word) => {
                spans.next();
                next_end
            }
            _ => end,
        };
        words.push(chunk.get(start..end).unwrap_or_default());
    }
    words
}

/// The byte ranges of the whitespace-separated words of `text`.
fn word_spans(text: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut start = None;
    for (at, c) in text.char_indices() {
        match (c.is_whitespace(), start) {
            (true, Some(from)) => {
                spans.push((from, at));
                start = None;
            }
            (false, None) => start = Some(at),
            _ => {}
        }
    }
    if let Some(from) = start {
        spans.push((from, text.len()));
    }
    spans
}

fn is_label(word: &str) -> bool {
    let word = word.trim_end_matches(':');
    LABELS.iter().any(|label| word.eq_ignore_ascii_case(label))
}
