//! What the attributes every variable takes do to its value: `match`, `start`, `truncate`, `replaceFrom` and
//! `replaceTo` (JavaScript regular expressions and replacements, in `patterns.rs`), `prefix`, `suffix` and `case`.

use super::item::Budget;
use super::names::cut_chars;
use super::patterns::{js_replacement, Pattern, RegexFlags, Replacement};
use super::problems::Findings;
use super::scan::whole_number;

/// What the common attributes do to a value, in Zotero's order: `match` alone, or else `start`, `truncate`,
/// trimming, `replaceFrom`, `prefix` and `suffix`, and last `case` (which applies to the affixes too).
#[derive(Debug, Default)]
pub(super) struct Decoration {
    /// `match`: the value becomes the first match (nothing if none), and no other attribute applies.
    matcher: Option<Matcher>,
    /// Characters skipped first.
    start: usize,
    /// Characters kept; 0 keeps all.
    truncate: usize,
    replace: Option<Replacement>,
    prefix: String,
    suffix: String,
    case: Option<Case>,
}

#[derive(Debug)]
enum Matcher {
    Pattern(Pattern),
    /// An invalid pattern (or one over the limits) matches nothing, as an invalid one does in Zotero.
    Invalid,
}

#[derive(Debug, Clone, Copy)]
enum Case {
    Upper,
    Lower,
    Sentence,
    Title,
    Hyphen,
    Snake,
    Camel,
    Pascal,
}

/// Zotero's default regular-expression flags: `i`, case-insensitive, and `v`, JavaScript's Unicode-sets mode,
/// which the regex crate needs no flag for.
const DEFAULT_REGEX_FLAGS: &str = "vi";

impl Decoration {
    pub(super) fn new<'v>(attr: &dyn Fn(&str) -> Option<&'v str>, findings: &mut Findings) -> Self {
        let flags_text = attr("regexOpts").unwrap_or(DEFAULT_REGEX_FLAGS);
        let flags = RegexFlags::parse(flags_text).unwrap_or_else(|bad| {
            findings.push(format!(
                "regexOpts=\"{flags_text}\" has `{bad}`, which is not a regular-expression flag; use i, m, s, g, u or v"
            ));
            RegexFlags::default()
        });
        // Counted before it is compiled: a pattern over the count is not compiled at all.
        let mut compile = |name: &'static str, pattern: &str| {
            let built = findings.count_pattern(name).map_err(Into::into).and_then(|()| flags.build(name, pattern));
            built.map_err(|reason| findings.push(reason)).ok()
        };
        let matcher = attr("match")
            .filter(|p| !p.is_empty())
            .map(|p| compile("match", p).map_or(Matcher::Invalid, Matcher::Pattern));
        let replace =
            attr("replaceFrom").filter(|p| !p.is_empty()).and_then(|p| compile("replaceFrom", p)).map(|pattern| {
                let with = js_replacement(attr("replaceTo").unwrap_or(""), pattern.captures_len());
                Replacement { pattern, with, all: flags.global }
            });
        let case = attr("case").and_then(|c| {
            let case = Case::parse(c);
            if case.is_none() {
                findings.push(format!(
                    "case=\"{c}\" is not a case; use upper, lower, sentence, title, hyphen, snake, camel or pascal"
                ));
            }
            case
        });
        // Zotero drops a path separator given as the whole prefix or suffix.
        let affix = |name| attr(name).filter(|a| !matches!(*a, "/" | "\\")).unwrap_or("").to_owned();
        Decoration {
            matcher,
            start: whole_number(attr, "start", findings).map_or(0, |n| usize::try_from(n).unwrap_or(0)),
            truncate: whole_number(attr, "truncate", findings).map_or(0, |n| usize::try_from(n).unwrap_or(0)),
            replace,
            prefix: affix("prefix"),
            suffix: affix("suffix"),
            case,
        }
    }

    /// The value decorated. An empty value stays empty: its prefix and suffix are dropped too. Patterns search
    /// within `budget`.
    pub(super) fn apply(&self, value: &str, budget: &Budget) -> String {
        if value.is_empty() {
            return String::new();
        }
        if let Some(matcher) = &self.matcher {
            return match matcher {
                Matcher::Pattern(pattern) => pattern.first_match(value, budget).unwrap_or_default(),
                Matcher::Invalid => String::new(),
            };
        }
        let mut text: String = value.chars().skip(self.start).collect();
        if self.truncate > 0 {
            cut_chars(&mut text, self.truncate);
        }
        let mut text = text.trim().to_owned();
        if let Some(r) = &self.replace {
            text = r.apply(&text, budget);
        }
        if text.is_empty() {
            return String::new();
        }
        // Zotero adds an affix only where the value does not already carry it ("Li et al." + ".").
        if !self.prefix.is_empty() && !text.starts_with(&self.prefix) {
            text.insert_str(0, &self.prefix);
        }
        if !self.suffix.is_empty() && !text.ends_with(&self.suffix) {
            text.push_str(&self.suffix);
        }
        match self.case {
            Some(case) => case.apply(&text),
            None => text,
        }
    }
}

impl Case {
    fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "upper" => Case::Upper,
            "lower" => Case::Lower,
            "sentence" => Case::Sentence,
            "title" => Case::Title,
            "hyphen" => Case::Hyphen,
            "snake" => Case::Snake,
            "camel" => Case::Camel,
            "pascal" => Case::Pascal,
            _ => return None,
        })
    }

    fn apply(self, text: &str) -> String {
        match self {
            Case::Upper => text.to_uppercase(),
            Case::Lower => text.to_lowercase(),
            // Zotero leaves the rest as it is, so acronyms survive.
            Case::Sentence => upper_first(text),
            Case::Title => title_case(text),
            Case::Hyphen => joined_lowercase(text, '-'),
            Case::Snake => joined_lowercase(text, '_'),
            Case::Camel => camel_case(text),
            Case::Pascal => upper_first(&camel_case(text)),
        }
    }
}

fn upper_first(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// Uppercases the first letter of each word, leaving the rest. A word starts with a letter that follows neither
/// a letter, a digit nor `_`, and runs on through letters and apostrophes ("l'été" is one word), so accented
/// letters are letters: "école" becomes "École".
fn title_case(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let (mut in_word, mut prev) = (false, None::<char>);
    for c in text.chars() {
        if c.is_alphabetic() {
            let starts = !in_word && !prev.is_some_and(|p| p.is_alphanumeric() || p == '_');
            if starts {
                out.extend(c.to_uppercase());
            } else {
                out.push(c);
            }
            in_word = true;
        } else {
            in_word &= c == '\'' || c == '’';
            out.push(c);
        }
        prev = Some(c);
    }
    out
}

/// Zotero's `hyphen` and `snake` cases: lowercase, with whitespace around an existing `joiner` dropped and every
/// other whitespace run made one `joiner`.
fn joined_lowercase(text: &str, joiner: char) -> String {
    let mut out = String::with_capacity(text.len());
    let mut gap = false;
    for c in text.chars() {
        if c.is_whitespace() {
            gap = true;
            continue;
        }
        if gap && c != joiner && !out.ends_with(joiner) {
            out.push(joiner);
        }
        gap = false;
        out.extend(c.to_lowercase());
    }
    if gap {
        out.push(joiner);
    }
    out
}

/// Zotero's `camel` case: lowercase, then each run of characters other than letters and digits is dropped and the
/// character after it uppercased ("attention is all" → "attentionIsAll").
fn camel_case(text: &str) -> String {
    let lower = text.to_lowercase();
    let mut out = String::with_capacity(lower.len());
    let mut chars = lower.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_alphabetic() || c.is_ascii_digit() {
            out.push(c);
            continue;
        }
        let mut run = String::from(c);
        while let Some(&next) = chars.peek() {
            if next.is_alphabetic() || next.is_ascii_digit() {
                break;
            }
            run.push(next);
            chars.next();
        }
        match chars.next() {
            Some(next) => out.extend(next.to_uppercase()),
            // A run at the very end has nothing to capitalise, and stays (as in Zotero).
            None => out.push_str(&run),
        }
    }
    out
}
