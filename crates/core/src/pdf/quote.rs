//! Where a quote sits on a page: the page and one rectangle per line, ready to become a Zotero highlight
//! annotation's `position` (`pageIndex`, `rects`, in the page's user space).
//!
//! Matching ignores case and whitespace, reads ligatures as their letters and joins a word hyphenated at a
//! line end, so a quote copied from a reader, a search result or the extracted text is found. When no exact
//! match exists, the longest stretch of the quote's start and end found in order is reported as the nearest
//! one, with the share of the quote it covers.

use serde::Serialize;

use super::text::PageLayout;

/// Quotes shorter than this (after normalising) are too ambiguous to place.
pub const MIN_QUOTE_CHARS: usize = 4;
/// A nearest match must cover at least this share of the quote to be reported.
const MIN_NEAREST_SHARE: f64 = 0.5;

/// A quote placed on a page.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct QuoteLocation {
    /// 1-based.
    pub page: usize,
    /// 0-based, as Zotero's `position.pageIndex`.
    pub page_index: usize,
    /// `[x1, y1, x2, y2]` per line, in the page's user space.
    pub rects: Vec<[f64; 4]>,
    /// Whether the whole quote matched; otherwise the nearest stretch did.
    pub exact: bool,
    /// The share of the quote's characters the match covers (1.0 when exact).
    pub coverage: f64,
    /// The page's text that matched, as extracted.
    pub matched_text: String,
    /// Where the match starts in the page's extracted text, in characters (Zotero's sort index uses it).
    pub char_offset: usize,
}

/// Normalised characters of a page, each with the index of the page character it came from.
struct Folded {
    chars: Vec<char>,
    origin: Vec<usize>,
}

/// Lower case, no whitespace, no hyphen at a line end (the hyphen before a line break and the break go).
fn fold(text: &str) -> Folded {
    let original: Vec<char> = text.chars().collect();
    let mut chars = Vec::with_capacity(original.len());
    let mut origin = Vec::with_capacity(original.len());
    for (i, &c) in original.iter().enumerate() {
        if c.is_whitespace() || c == '\u{AD}' {
            continue;
        }
        if matches!(c, '-' | '\u{2010}') && original.get(i + 1) == Some(&'\n') {
            continue;
        }
        for lower in c.to_lowercase() {
            chars.push(lower);
            origin.push(i);
        }
    }
    Folded { chars, origin }
}

/// Finds `needle` in `hay`, first occurrence.
fn find(hay: &[char], needle: &[char]) -> Option<usize> {
    if needle.is_empty() || needle.len() > hay.len() {
        return None;
    }
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Where a quote was placed on a page: the stretches of the folded page text that matched (one when exact; the
/// quote's start and its end when nearest), and the share of the quote they cover.
struct Placed {
    spans: Vec<(usize, usize)>,
    exact: bool,
    share: f64,
}

/// The best place for `quote` on this page: exact, else the nearest stretch; with how much of the quote it
/// covers.
fn place(page: &Folded, quote: &[char]) -> Option<Placed> {
    if let Some(start) = find(&page.chars, quote) {
        return Some(Placed { spans: vec![(start, start + quote.len())], exact: true, share: 1.0 });
    }
    // The longest start of the quote that is on the page, and the longest end found after it.
    let (start, head) = longest_part(&page.chars, 0, quote, false)?;
    let mut spans = vec![(start, start + head)];
    let mut covered = head;
    if head < quote.len() {
        if let Some((tail_at, tail)) = longest_part(&page.chars, start + head, quote, true) {
            // Only a tail close enough to belong to the same passage.
            if tail_at + tail - start <= quote.len() * 3 / 2 {
                spans.push((tail_at, tail_at + tail));
                covered = (head + tail).min(quote.len());
            }
        }
    }
    let share = covered as f64 / quote.len() as f64;
    (share >= MIN_NEAREST_SHARE).then_some(Placed { spans, exact: false, share })
}

/// The longest start (or, `from_end`, end) of `quote` found in `page` at or after `from`: where, and how long.
/// Finding is monotonic in length (a longer part found means every shorter one is), so a binary search does.
fn longest_part(page: &[char], from: usize, quote: &[char], from_end: bool) -> Option<(usize, usize)> {
    let hay = page.get(from..)?;
    let part = |n: usize| if from_end { &quote[quote.len() - n..] } else { &quote[..n] };
    let mut best_at = find(hay, part(MIN_QUOTE_CHARS))?;
    let (mut lo, mut hi) = (MIN_QUOTE_CHARS, quote.len());
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        match find(hay, part(mid)) {
            Some(at) => {
                lo = mid;
                best_at = at;
            }
            None => hi = mid - 1,
        }
    }
    Some((from + best_at, lo))
}

/// Locates `quote` on `pages` (their layouts, the first being page `first_page`): the first exact match, else
/// the nearest one over all pages.
pub(super) fn locate(pages: &[PageLayout], first_page: usize, quote: &str) -> Option<QuoteLocation> {
    let needle = fold(quote).chars;
    if needle.len() < MIN_QUOTE_CHARS {
        return None;
    }
    let mut nearest: Option<(usize, Placed)> = None;
    let folded: Vec<Folded> = pages.iter().map(|layout| fold(&layout.text)).collect();
    for (i, page) in folded.iter().enumerate() {
        match place(page, &needle) {
            Some(placed) if placed.exact => return Some(location(&pages[i], page, first_page + i, &placed)),
            Some(placed) if nearest.as_ref().is_none_or(|(_, best)| placed.share > best.share) => {
                nearest = Some((i, placed));
            }
            _ => {}
        }
    }
    let (i, placed) = nearest?;
    Some(location(&pages[i], &folded[i], first_page + i, &placed))
}

fn location(layout: &PageLayout, folded: &Folded, page: usize, placed: &Placed) -> QuoteLocation {
    // Page-character ranges of the matched stretches. Only their boxes make the rects: for a nearest match,
    // what lies between the quote's start and end on the page (a line number in the margin, a footnote mark
    // drawn in between) is not part of the passage.
    let ranges: Vec<(usize, usize)> = placed
        .spans
        .iter()
        .map(|&(start, end)| {
            let first = folded.origin.get(start).copied().unwrap_or(0);
            (first, folded.origin.get(end.saturating_sub(1)).copied().unwrap_or(first))
        })
        .collect();
    let first = ranges.first().map_or(0, |r| r.0);
    let last = ranges.last().map_or(first, |r| r.1).max(first);
    let matched_text: String = layout.text.chars().skip(first).take(last + 1 - first).collect();
    let boxes: Vec<[f64; 4]> = ranges
        .iter()
        .flat_map(|&(from, to)| layout.boxes.iter().skip(from).take((to + 1).saturating_sub(from)))
        .filter_map(|b| *b)
        .collect();
    QuoteLocation {
        page,
        page_index: page - 1,
        rects: line_rects(&boxes),
        exact: placed.exact,
        coverage: placed.share,
        matched_text,
        char_offset: first,
    }
}

/// Merges character boxes into one rectangle per line: a box that starts a new line is one whose vertical
/// middle lies outside the current line's band.
fn line_rects(boxes: &[[f64; 4]]) -> Vec<[f64; 4]> {
    let mut rects: Vec<[f64; 4]> = Vec::new();
    for b in boxes {
        let middle = (b[1] + b[3]) / 2.0;
        match rects.last_mut() {
            Some(r) if middle > r[1] && middle < r[3] => {
                r[0] = r[0].min(b[0]);
                r[1] = r[1].min(b[1]);
                r[2] = r[2].max(b[2]);
                r[3] = r[3].max(b[3]);
            }
            _ => rects.push(*b),
        }
    }
    for r in &mut rects {
        for v in r.iter_mut() {
            *v = (*v * 1000.0).round() / 1000.0;
        }
    }
    rects
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A page of `lines`, each character 5 units wide, lines 14 units apart, height 10.
    fn page(lines: &[&str]) -> PageLayout {
        let mut text = String::new();
        let mut boxes = Vec::new();
        for (n, line) in lines.iter().enumerate() {
            if n > 0 {
                text.push('\n');
                boxes.push(None);
            }
            let y = 700.0 - 14.0 * n as f64;
            for (i, c) in line.chars().enumerate() {
                text.push(c);
                boxes.push((c != ' ').then_some([72.0 + 5.0 * i as f64, y - 2.5, 77.0 + 5.0 * i as f64, y + 8.5]));
            }
        }
        PageLayout { text, boxes }
    }

    #[test]
    fn an_exact_quote_across_a_hyphenated_line_gets_one_rect_per_line() {
        let pages = [page(&["Nothing here."]), page(&["The geometric deep learn-", "ing blueprint is simple."])];
        let found = locate(&pages, 1, "Geometric  deep LEARNING blueprint").unwrap();
        assert_eq!((found.page, found.page_index, found.exact), (2, 1, true));
        assert_eq!(found.rects, vec![[92.0, 697.5, 197.0, 708.5], [72.0, 683.5, 137.0, 694.5]]);
        assert_eq!(found.matched_text, "geometric deep learn-\ning blueprint");
    }

    #[test]
    fn without_an_exact_match_the_nearest_stretch_is_reported() {
        let pages = [page(&["Graph networks generalise convolutions to irregular domains."])];
        let found = locate(&pages, 1, "Graph networks generalize convolutions to irregular domains").unwrap();
        assert!(!found.exact);
        assert!(found.coverage > 0.8 && found.coverage < 1.0, "{}", found.coverage);
        assert!(found.matched_text.starts_with("Graph networks generali"), "{}", found.matched_text);
        assert!(locate(&pages, 1, "completely different words entirely").is_none());
        assert!(locate(&pages, 1, "ab").is_none(), "too short to place");
    }

    #[test]
    fn a_line_number_between_the_start_and_end_of_a_near_match_is_not_highlighted() {
        // "12" is drawn in the left margin (x = 20) after the first line's text, as line-numbered manuscripts do.
        let mut layout = page(&["alpha beta gamma", "delta epsilon"]);
        let newline = layout.text.find('\n').unwrap();
        layout.text.insert_str(newline, "12");
        let margin = [[20.0, 697.5, 25.0, 708.5], [25.0, 697.5, 30.0, 708.5]];
        layout.boxes.splice(newline..newline, margin.iter().map(|b| Some(*b)));
        let found = locate(&[layout], 1, "beta gamma delta epsilon").unwrap();
        assert!(!found.exact);
        assert_eq!(found.rects, vec![[102.0, 697.5, 152.0, 708.5], [72.0, 683.5, 137.0, 694.5]]);
    }
}
