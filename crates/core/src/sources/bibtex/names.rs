//! BibTeX name lists: names separated by `and` outside braces, each `First von Last`, `von Last, First` or
//! `von Last, Jr, First`; a name that is one braced group (`{World Health Organization}`) or a single word is
//! kept whole; `others` is dropped.

use super::latex::to_unicode;

/// One name of a list, as text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Name {
    /// A person's first (given) and last (family, with any `von` part) names.
    Person { first: String, last: String },
    /// A name kept whole: an organisation, or a one-word name.
    Single(String),
}

/// The `(start, end)` byte ranges of the words of `text` outside braces; `~` separates words as a space does.
fn words(text: &str) -> Vec<(usize, usize)> {
    let mut words = Vec::new();
    let mut depth = 0usize;
    let mut start: Option<usize> = None;
    let mut escaped = false;
    for (i, c) in text.char_indices() {
        let separator = depth == 0 && !escaped && (c.is_whitespace() || c == '~');
        if separator {
            if let Some(begin) = start.take() {
                words.push((begin, i));
            }
        } else if start.is_none() {
            start = Some(i);
        }
        if !escaped {
            match c {
                '{' => depth += 1,
                '}' => depth = depth.saturating_sub(1),
                _ => {}
            }
        }
        escaped = !escaped && c == '\\';
    }
    if let Some(begin) = start {
        words.push((begin, text.len()));
    }
    words
}

/// `text` split at the commas outside braces, each part trimmed.
fn comma_parts(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut depth = 0usize;
    let mut from = 0;
    let mut escaped = false;
    for (i, c) in text.char_indices() {
        if !escaped {
            match c {
                '{' => depth += 1,
                '}' => depth = depth.saturating_sub(1),
                ',' if depth == 0 => {
                    parts.push(text[from..i].trim());
                    from = i + 1;
                }
                _ => {}
            }
        }
        escaped = !escaped && c == '\\';
    }
    parts.push(text[from..].trim());
    parts
}

/// Every name of a list as written in a BibTeX value.
pub(super) fn names(raw: &str) -> Vec<Name> {
    let mut names = Vec::new();
    let mut current: Option<(usize, usize)> = None;
    for (start, end) in words(raw) {
        if raw[start..end].eq_ignore_ascii_case("and") {
            if let Some((from, to)) = current.take() {
                names.extend(name(&raw[from..to]));
            }
        } else {
            current = Some(current.map_or((start, end), |(from, _)| (from, end)));
        }
    }
    if let Some((from, to)) = current {
        names.extend(name(&raw[from..to]));
    }
    names
}

/// One name of a list.
fn name(text: &str) -> Option<Name> {
    let text = text.trim();
    if text.eq_ignore_ascii_case("others") {
        return None;
    }
    let parts = comma_parts(text);
    let (first, last) = match parts.as_slice() {
        [] => return None,
        [whole] => {
            let words = words(whole);
            if words.len() < 2 {
                return single(&to_unicode(whole));
            }
            let last_word = words.len() - 1;
            // The von part starts at the first word (before the last) that begins in lower case.
            let von = words[..last_word]
                .iter()
                .position(|&(start, end)| {
                    let word = &whole[start..end];
                    !word.starts_with('{')
                        && to_unicode(word).chars().find(|c| c.is_alphabetic()).is_some_and(char::is_lowercase)
                })
                .unwrap_or(last_word);
            let split = words[von].0;
            (to_unicode(&whole[..split]), to_unicode(&whole[split..]))
        }
        [last, first] => (to_unicode(first), to_unicode(last)),
        [last, jr, first @ ..] => {
            let first = to_unicode(&first.join(", "));
            let jr = to_unicode(jr);
            let first = match (first.is_empty(), jr.is_empty()) {
                (_, true) => first,
                (true, false) => jr,
                (false, false) => format!("{first}, {jr}"),
            };
            (first, to_unicode(last))
        }
    };
    match (first.is_empty(), last.is_empty()) {
        (true, true) => None,
        (false, false) => Some(Name::Person { first, last }),
        (true, false) => single(&last),
        (false, true) => single(&first),
    }
}

fn single(text: &str) -> Option<Name> {
    (!text.is_empty()).then(|| Name::Single(text.to_owned()))
}
