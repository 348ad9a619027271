//! Page markers in documents, and the passage a search shows for a matched chunk: the densest run of the
//! query's words, about [`PASSAGE_CHARS`] long, with the markers taken out and the page they tell.

use super::measure::char_weight;
use super::PASSAGE_CHARS;

/// How far a passage's ends move to reach a word boundary before they give up (unspaced text has none).
const SNAP_CHARS: usize = 30;

/// The most distinct query words a passage looks for. A query is a caller's text and the window search costs
/// occurrences × occurrences in a window: a 2,000-character query of 300 overlapping words took 60 ms per chunk.
/// Real queries have a handful of words.
pub(crate) const MAX_QUERY_WORDS: usize = 32;

/// The most occurrences of query words the window search weighs, the first in the text: text made of one
/// repeated word would otherwise give one occurrence per character and word.
pub(crate) const MAX_OCCURRENCES: usize = 2_000;

/// Query words too common to say where a passage is.
const STOP_WORDS: &[&str] = &[
    "and", "are", "but", "for", "from", "has", "have", "how", "into", "its", "not", "of", "on", "or", "that", "the",
    "their", "this", "was", "were", "what", "when", "which", "with",
];

/// The marker where page `n` starts.
pub(crate) fn page_marker(n: usize) -> String {
    format!("[page {n}]")
}

/// The marker repeated inside page `n`.
pub(crate) fn repeat_marker(n: usize) -> String {
    format!("[p. {n}]")
}

/// A marker found in a chunk's text (byte offsets).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Marker {
    start: usize,
    end: usize,
    page: u32,
    /// `[page N]` (where the page starts) rather than `[p. N]` (inside it).
    starts_page: bool,
}

/// Every marker in `text`, in order.
fn markers(text: &str) -> Vec<Marker> {
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(offset) = text[from..].find('[') {
        let start = from + offset;
        let rest = &text[start + 1..];
        let parsed = [("page ", true), ("p. ", false)].into_iter().find_map(|(prefix, starts_page)| {
            let digits = rest.strip_prefix(prefix)?;
            let length = digits.bytes().take_while(u8::is_ascii_digit).count();
            if length == 0 || length > 6 || digits.as_bytes().get(length) != Some(&b']') {
                return None;
            }
            let page = digits[..length].parse::<u32>().ok()?;
            Some((page, starts_page, start + 1 + prefix.len() + length + 1))
        });
        match parsed {
            Some((page, starts_page, end)) => {
                found.push(Marker { start, end, page, starts_page });
                from = end;
            }
            None => from = start + 1,
        }
    }
    found
}

/// A chunk's text cut to what a reader needs, and its page when the document marks pages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Passage {
    pub text: String,
    pub page: Option<u32>,
}

/// One character of a chunk outside its markers.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Visible {
    original: char,
    lower: char,
    /// Byte offset in the chunk's text.
    at: usize,
}

/// The passage of `chunk` that best shows why it matched `query`: the window of about [`PASSAGE_CHARS`]
/// characters holding the most distinct query words (then the most occurrences), or the chunk's beginning when
/// no word occurs in it (a purely semantic match).
pub(crate) fn passage(chunk: &str, query: &str) -> Passage {
    let markers = markers(chunk);
    let visible = visible_chars(chunk, &markers);
    let words = query_words(query);
    let (start, end, run) = window(&visible, &words, PASSAGE_CHARS);
    let (start, end) = snap(&visible, start, end);
    let mut text: String = visible[start..end].iter().map(|v| v.original).collect::<String>();
    text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if !text.is_empty() {
        if start > 0 {
            text.insert(0, '…');
        }
        if end < visible.len() {
            text.push('…');
        }
    }
    // The page is where the matched words are, else where the passage starts.
    let anchor = match run {
        Some(run) => visible.get(run).map_or(chunk.len(), |v| v.at),
        None => visible[start..end].iter().find(|v| !v.original.is_whitespace()).map_or(chunk.len(), |v| v.at),
    };
    Passage { text, page: page_at(&markers, anchor) }
}

/// The page of the text at byte offset `at`: the nearest marker before it; failing that, the first after it
/// (the page before a `[page N]`, the page of a `[p. N]`); `None` without markers.
fn page_at(markers: &[Marker], at: usize) -> Option<u32> {
    if let Some(before) = markers.iter().rev().find(|m| m.end <= at) {
        return Some(before.page);
    }
    let after = markers.iter().find(|m| m.start >= at)?;
    if after.starts_page {
        after.page.checked_sub(1).filter(|p| *p > 0)
    } else {
        Some(after.page)
    }
}

pub(crate) fn visible_chars(chunk: &str, markers: &[Marker]) -> Vec<Visible> {
    let mut next_marker = markers.iter().peekable();
    let mut visible = Vec::with_capacity(chunk.len());
    for (at, original) in chunk.char_indices() {
        while next_marker.peek().is_some_and(|m| m.end <= at) {
            next_marker.next();
        }
        if next_marker.peek().is_some_and(|m| m.start <= at) {
            continue;
        }
        let lower = original.to_lowercase().next().unwrap_or(original);
        visible.push(Visible { original, lower, at });
    }
    visible
}

/// The query's words, lowercased, without duplicates and stop words; a Latin word needs 3 letters, a word in
/// an unspaced script (CJK) 1. At most [`MAX_QUERY_WORDS`], the first ones.
pub(crate) fn query_words(query: &str) -> Vec<Vec<char>> {
    let mut words: Vec<Vec<char>> = Vec::new();
    for word in query.split(|c: char| !c.is_alphanumeric()) {
        if words.len() == MAX_QUERY_WORDS {
            break;
        }
        let lower: Vec<char> = word.chars().map(|c| c.to_lowercase().next().unwrap_or(c)).collect();
        let wide = lower.iter().any(|c| char_weight(*c) > 1);
        let text: String = lower.iter().collect();
        if (lower.len() >= 3 || wide) && !STOP_WORDS.contains(&text.as_str()) && !words.contains(&lower) {
            words.push(lower);
        }
    }
    words
}

/// The window `[start, end)` of `visible` (at most `size` characters) with the densest run of `words`, and
/// where that run starts (`None` when no word occurs).
fn window(visible: &[Visible], words: &[Vec<char>], size: usize) -> (usize, usize, Option<usize>) {
    let hits = occurrences(visible, words);
    let mut best: Option<((usize, usize), usize, usize)> = None;
    for first in 0..hits.len() {
        let mut distinct: Vec<usize> = Vec::new();
        let mut end = hits[first].1;
        let mut count = 0;
        for hit in &hits[first..] {
            if hit.1.max(end) - hits[first].0 > size {
                break;
            }
            end = end.max(hit.1);
            count += 1;
            if !distinct.contains(&hit.2) {
                distinct.push(hit.2);
            }
        }
        let score = (distinct.len(), count);
        if best.is_none_or(|(best_score, _, _)| score > best_score) {
            best = Some((score, hits[first].0, end));
        }
    }
    match best {
        Some((_, run_start, run_end)) => {
            let pad = size.saturating_sub(run_end - run_start) / 2;
            let end = (run_start.saturating_sub(pad) + size).min(visible.len());
            (end.saturating_sub(size), end, Some(run_start))
        }
        None => (0, size.min(visible.len()), None),
    }
}

/// (start, end, which word) of the first [`MAX_OCCURRENCES`] occurrences of `words` in `visible`, in text order.
pub(crate) fn occurrences(visible: &[Visible], words: &[Vec<char>]) -> Vec<(usize, usize, usize)> {
    let mut hits: Vec<(usize, usize, usize)> = Vec::new();
    for (index, word) in words.iter().enumerate() {
        if word.is_empty() || word.len() > visible.len() {
            continue;
        }
        for start in 0..=visible.len() - word.len() {
            if visible[start..start + word.len()].iter().zip(word).all(|(v, c)| v.lower == *c) {
                hits.push((start, start + word.len(), index));
            }
        }
    }
    crate::sort::sort(&mut hits);
    hits.truncate(MAX_OCCURRENCES);
    hits
}

/// Moves the window's ends to word boundaries, within [`SNAP_CHARS`].
fn snap(visible: &[Visible], start: usize, end: usize) -> (usize, usize) {
    let space = |i: usize| visible.get(i).is_none_or(|v| v.original.is_whitespace());
    let mut new_start = start;
    if start > 0 && !space(start - 1) && !space(start) {
        if let Some(step) = (0..SNAP_CHARS).find(|step| space(start + step)) {
            new_start = (start + step).min(end);
        }
    }
    let mut new_end = end;
    if end > 0 && end < visible.len() && !space(end - 1) && !space(end) {
        if let Some(step) = (1..SNAP_CHARS).find(|step| end > new_start + step && space(end - step)) {
            new_end = end - step;
        }
    }
    (new_start, new_end)
}
