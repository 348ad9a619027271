//! The `match` and `replaceFrom` patterns: JavaScript flags and replacements in the regex crate's terms, compiled
//! within the limits of [`super::problems`], and searched within a rendering's [`Budget`].
//!
//! A caller's pattern is a program the server runs: `(((a?){50}){50}){20}` compiles to 50,000 states, and a
//! search costs time in proportion to the states times the characters read. So a pattern is compiled once per
//! template, to at most [`MAX_PATTERN_BYTES`], and each search is paid for from the rendering's budget before it
//! runs.

use regex_lite::{Regex, RegexBuilder};

use super::item::Budget;
use super::problems::{
    quote, PatternLimit, Reason, MAX_PATTERN_BYTES, MAX_PATTERN_CHARS, MAX_PATTERN_INPUT_CHARS, MAX_PATTERN_NESTING,
};

/// JavaScript regular-expression flags, as far as they mean something for the regex crate.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct RegexFlags {
    insensitive: bool,
    multi_line: bool,
    dot_all: bool,
    pub(super) global: bool,
}

impl RegexFlags {
    /// The flags, or the first character that is not one.
    pub(super) fn parse(text: &str) -> Result<Self, char> {
        let mut flags = RegexFlags::default();
        for c in text.chars() {
            match c {
                'i' => flags.insensitive = true,
                'm' => flags.multi_line = true,
                's' => flags.dot_all = true,
                'g' => flags.global = true,
                // Unicode modes, sticky and match indices change nothing for a first match or a replacement.
                'u' | 'v' | 'y' | 'd' => {}
                other => return Err(other),
            }
        }
        Ok(flags)
    }

    fn compile(self, pattern: &str, size_limit: usize) -> Result<Regex, regex_lite::Error> {
        RegexBuilder::new(pattern)
            .case_insensitive(self.insensitive)
            .multi_line(self.multi_line)
            .dot_matches_new_line(self.dot_all)
            .size_limit(size_limit)
            .nest_limit(MAX_PATTERN_NESTING)
            .build()
    }

    /// `pattern` compiled within the limits, or why not. Its length is checked first, so that neither the parser
    /// nor the compiler ever sees a long one.
    pub(super) fn build(self, attribute: &'static str, pattern: &str) -> Result<Pattern, Reason> {
        let chars = pattern.chars().count();
        if chars > MAX_PATTERN_CHARS {
            return Err(PatternLimit::TooLong { attribute, chars, max: MAX_PATTERN_CHARS }.into());
        }
        match self.compile(pattern, MAX_PATTERN_BYTES) {
            Ok(regex) => Ok(Pattern { regex, size: self.compiled_size(pattern) }),
            Err(e) => Err(limit_or_error(attribute, pattern, &e)),
        }
    }

    /// About how many bytes `pattern` (which compiles within [`MAX_PATTERN_BYTES`]) compiles to, to the next
    /// [`SIZE_STEP`]: regex-lite does not tell, so this finds the smallest limit it compiles under (six more
    /// compilations of a small pattern, once per template).
    fn compiled_size(self, pattern: &str) -> usize {
        let (mut fails, mut fits) = (0, MAX_PATTERN_BYTES / SIZE_STEP);
        while fits - fails > 1 {
            let middle = (fails + fits) / 2;
            if self.compile(pattern, middle * SIZE_STEP).is_ok() {
                fits = middle;
            } else {
                fails = middle;
            }
        }
        fits * SIZE_STEP
    }
}

/// The precision of [`RegexFlags::compiled_size`], in bytes.
const SIZE_STEP: usize = 64;

/// Why a pattern did not compile: one of the limits, or what is wrong with it.
fn limit_or_error(attribute: &'static str, pattern: &str, error: &regex_lite::Error) -> Reason {
    let message = error.to_string();
    let pattern = quote(pattern);
    // regex-lite's messages for its two limits (the tests of the limits pin them).
    if message.contains("exceeded size limit") {
        PatternLimit::TooBig { attribute, pattern, max_bytes: MAX_PATTERN_BYTES }.into()
    } else if message.contains("too much nesting") {
        PatternLimit::TooDeep { attribute, pattern, max: MAX_PATTERN_NESTING }.into()
    } else {
        let last_line = message.lines().last().unwrap_or_default().trim().to_owned();
        Reason::Bad(format!("{attribute}=\"{pattern}\" is not a valid regular expression ({last_line})"))
    }
}

/// A compiled pattern and its size, which is what each character it searches costs.
#[derive(Debug)]
pub(super) struct Pattern {
    regex: Regex,
    /// Bytes, at most [`MAX_PATTERN_BYTES`].
    size: usize,
}

impl Pattern {
    pub(super) fn captures_len(&self) -> usize {
        self.regex.captures_len()
    }

    /// Pays for a search starting at byte `from` of `text`: the characters from there to the end (plus one, so
    /// a search at the very end counts too) times the pattern's size. False when the budget cannot.
    fn pay(&self, text: &str, from: usize, budget: &Budget) -> bool {
        let chars = text.get(from..).map_or(0, |rest| rest.chars().count()) + 1;
        budget.take(chars.saturating_mul(self.size))
    }

    /// The first match in `value`, or `None` when there is none or the budget cannot pay for the search.
    pub(super) fn first_match(&self, value: &str, budget: &Budget) -> Option<String> {
        let text = searched(value);
        if !self.pay(text, 0, budget) {
            return None;
        }
        self.regex.find(text).map(|m| m.as_str().to_owned())
    }
}

/// The text a pattern runs over: its first [`MAX_PATTERN_INPUT_CHARS`] characters.
fn searched(text: &str) -> &str {
    match text.char_indices().nth(MAX_PATTERN_INPUT_CHARS) {
        Some((cut, _)) => &text[..cut],
        None => text,
    }
}

/// A replacement: the pattern, what replaces each match (in the regex crate's syntax), and whether every match is
/// replaced (`g`) or only the first.
#[derive(Debug)]
pub(super) struct Replacement {
    pub(super) pattern: Pattern,
    pub(super) with: String,
    pub(super) all: bool,
}

impl Replacement {
    /// `value` with the matches replaced, as `Regex::replace`/`replace_all` would, each search paid for first.
    /// When the budget runs out the result is empty (the rendering is refused anyway).
    pub(super) fn apply(&self, value: &str, budget: &Budget) -> String {
        let text = searched(value);
        let mut out = String::with_capacity(text.len());
        let (mut last, mut searches) = (0, self.pattern.regex.captures_iter(text));
        loop {
            // A search starts at or after the end of the last match; it is paid for before it runs.
            if !self.pattern.pay(text, last, budget) {
                return String::new();
            }
            let Some(captures) = searches.next() else { break };
            let Some(whole) = captures.get(0) else { break };
            out.push_str(&text[last..whole.start()]);
            captures.expand(&self.with, &mut out);
            last = whole.end();
            if !self.all {
                break;
            }
        }
        out.push_str(&text[last..]);
        out
    }
}

/// A JavaScript replacement string (`$1`, `$&`, `$<name>`, `$$`) in the regex crate's syntax (`${1}`, `$$`).
pub(super) fn js_replacement(js: &str, groups: usize) -> String {
    let mut out = String::with_capacity(js.len());
    let mut rest = js;
    while let Some(dollar) = rest.find('$') {
        out.push_str(&rest[..dollar]);
        let after = &rest[dollar + 1..];
        let digits: Vec<u32> = after.chars().take(2).map_while(|c| c.to_digit(10)).collect();
        let group_number = |n: u32| usize::try_from(n).is_ok_and(|n| n >= 1 && n < groups);
        let (replacement, used) = match (after.chars().next(), digits.as_slice()) {
            (Some('$'), _) => ("$$".to_owned(), 1),
            (Some('&'), _) => ("${0}".to_owned(), 1),
            (_, [a, b, ..]) if group_number(a * 10 + b) => (format!("${{{}}}", a * 10 + b), 2),
            (_, [a, ..]) if group_number(*a) => (format!("${{{a}}}"), 1),
            (Some('<'), _) => match after.find('>') {
                Some(end) => (format!("${{{}}}", &after[1..end]), end + 1),
                None => ("$$".to_owned(), 0),
            },
            _ => ("$$".to_owned(), 0),
        };
        out.push_str(&replacement);
        rest = &after[used..];
    }
    out.push_str(rest);
    out
}
