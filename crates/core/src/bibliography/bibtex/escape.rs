//! Text into the inside of a braced BibTeX value.
//!
//! Prose (titles, names, publishers):
//! - the specials `\ # $ % & _ ~ ^` become `\textbackslash{}`, `\#`, `\$`, `\%`, `\&`, `\_`,
//!   `\textasciitilde{}`, `\textasciicircum{}`: Zotero's fields are plain text, so a `$` is a dollar sign;
//! - braces always stay balanced, because BibTeX counts every brace, escaped or not: a `{` with its `}` in the
//!   text become `\{` `\}`, one without becomes `\textbraceleft{}` (`\textbraceright{}`);
//! - `--`, ``` `` ``` and `''` in the text are kept apart (`-{}-`), so LaTeX does not print a dash or a quote;
//! - BibTeX only: a non-ASCII letter or symbol that LaTeX has a command for becomes that command in braces
//!   (`{\'e}`, `{\"o}`, `{\ss}`, `{\o}`, `{\AA}`, `{\l}`, `{\v{r}}`), from the table the BibTeX importer reads
//!   (so it reads back the same letter); en and em dashes become `{--}` and `{---}`; `<`, `>` and `|` become
//!   `{\textless}`, `{\textgreater}`, `{\textbar}` (the OT1 font prints other glyphs for them). Anything else is
//!   kept as UTF-8. BibLaTeX (biber reads UTF-8) keeps every character but the specials as it is.
//!
//! Titles also get Zotero's rich-text markup (`<i>`, `<b>`, `<sup>`, `<sub>`, `<span class="nocase">`) as
//! `\textit{…}`, `\textbf{…}`, `\textsuperscript{…}`, `\textsubscript{…}` and `{…}`, and every word with a
//! capital after its first letter (`DNA`, `mRNA`, `iPhone`) in braces, so a style that lower-cases titles keeps
//! it as written. A closing tag that closes nothing is kept as text; a tag left open is closed at the end.
//!
//! URLs, DOIs and e-print ids are not LaTeX: they are written as they are, except `{`, `}` and `\`, which are
//! percent-encoded (`%7B`, `%7D`, `%5C`: the same address, and the braces stay balanced). `%` and `#` stay raw:
//! BibTeX does not read `%` as a comment inside a value, and styles hand `url` and `doi` to `\url` (url,
//! hyperref), which reads them verbatim, where `\%` would put a backslash into the link.

use std::collections::HashMap;
use std::sync::OnceLock;

use crate::sources::bibtex::latex::{ACCENTS, COMPOSED, NAMED};

use super::super::{markup_tag, one_line, Markup, Style};
use super::Dialect;

/// What a piece of prose allows.
#[derive(Debug, Clone, Copy)]
pub(super) struct Prose {
    /// Zotero's rich-text markup read as formatting (titles).
    pub(super) markup: bool,
    /// Words with inner capitals protected from a style's case change (titles).
    pub(super) protect_case: bool,
    /// `--` is meant as written (a page range), not to be kept apart.
    pub(super) dashes: bool,
}

pub(super) const PLAIN: Prose = Prose { markup: false, protect_case: false, dashes: false };
pub(super) const TITLE: Prose = Prose { markup: true, protect_case: true, dashes: false };
pub(super) const PAGES: Prose = Prose { markup: false, protect_case: false, dashes: true };

/// Appends `text` (on one line) as prose.
pub(super) fn prose(out: &mut String, text: &str, dialect: Dialect, how: Prose) {
    let text = one_line(text);
    let unmatched = unmatched_braces(&text);
    let mut writer = Writer { out, dialect, dashes: how.dashes, unmatched: &unmatched, open: Vec::new() };
    let mut rest = text.as_str();
    let mut offset = 0;
    while !rest.is_empty() {
        // The first `<` that begins a tag (a `<` that does not is text).
        let markup = if how.markup {
            rest.match_indices('<').find_map(|(at, _)| Some((at, markup_tag(&rest[at..])?)))
        } else {
            None
        };
        let segment_end = markup.map_or(rest.len(), |(at, _)| at);
        let protect = how.protect_case && !writer.open.contains(&Style::NoCase);
        writer.segment(&rest[..segment_end], offset, protect);
        let Some((at, (tag, len))) = markup else {
            break;
        };
        match tag {
            Markup::Open(style) => writer.open(style),
            Markup::Close(style) if writer.open.last() == Some(&style) => {
                writer.open.pop();
                writer.out.push('}');
            }
            // A closing tag that closes nothing: its text, written as such.
            Markup::Close(_) => writer.segment(&rest[at..at + len], offset + at, false),
        }
        offset += at + len;
        rest = &rest[at + len..];
    }
    for _ in writer.open.drain(..) {
        writer.out.push('}');
    }
}

/// Appends a URL, DOI or identifier: as it is, on one line, with `{`, `}` and `\` percent-encoded.
pub(super) fn verbatim(out: &mut String, text: &str) {
    for c in one_line(text).chars() {
        match c {
            '{' => out.push_str("%7B"),
            '}' => out.push_str("%7D"),
            '\\' => out.push_str("%5C"),
            c => out.push(c),
        }
    }
}

/// The byte offsets of the braces of `text` that have no partner, in order.
fn unmatched_braces(text: &str) -> Vec<usize> {
    let mut open: Vec<usize> = Vec::new();
    let mut unmatched: Vec<usize> = Vec::new();
    for (at, c) in text.char_indices() {
        match c {
            '{' => open.push(at),
            // The guard takes the partner, when there is one, off the stack.
            '}' if open.pop().is_none() => unmatched.push(at),
            _ => {}
        }
    }
    unmatched.extend(open);
    crate::sort::sort(&mut unmatched);
    unmatched
}

struct Writer<'o> {
    out: &'o mut String,
    dialect: Dialect,
    dashes: bool,
    unmatched: &'o [usize],
    /// The rich-text styles open, innermost last.
    open: Vec<Style>,
}

impl Writer<'_> {
    fn open(&mut self, style: Style) {
        self.open.push(style);
        self.out.push_str(match style {
            Style::Italic => "\\textit{",
            Style::Bold => "\\textbf{",
            Style::Superscript => "\\textsuperscript{",
            Style::Subscript => "\\textsubscript{",
            Style::NoCase => "{",
        });
    }

    /// Text without markup, starting at byte `offset` of the value; words with inner capitals braced when
    /// `protect`.
    fn segment(&mut self, text: &str, offset: usize, protect: bool) {
        let mut word_start: Option<usize> = None;
        for (at, c) in text.char_indices().chain(std::iter::once((text.len(), ' '))) {
            if c != ' ' {
                word_start.get_or_insert(at);
                continue;
            }
            if let Some(start) = word_start.take() {
                let word = &text[start..at];
                if protect && has_inner_capital(word) {
                    // The braces go round the letters and digits, punctuation around them stays outside.
                    let core_start = word.find(char::is_alphanumeric).unwrap_or(0);
                    let core_end = word
                        .char_indices()
                        .rfind(|(_, c)| c.is_alphanumeric())
                        .map_or(word.len(), |(at, c)| at + c.len_utf8());
                    self.chars(&word[..core_start], offset + start);
                    self.out.push('{');
                    self.chars(&word[core_start..core_end], offset + start + core_start);
                    self.out.push('}');
                    self.chars(&word[core_end..], offset + start + core_end);
                } else {
                    self.chars(word, offset + start);
                }
            }
            if at < text.len() {
                self.out.push(' ');
            }
        }
    }

    fn chars(&mut self, text: &str, offset: usize) {
        let mut chars = text.char_indices().peekable();
        while let Some((at, c)) = chars.next() {
            let next = chars.peek().map(|(_, next)| *next);
            match c {
                '\\' => self.out.push_str("\\textbackslash{}"),
                '#' | '$' | '%' | '&' | '_' => {
                    self.out.push('\\');
                    self.out.push(c);
                }
                '~' => self.out.push_str("\\textasciitilde{}"),
                '^' => self.out.push_str("\\textasciicircum{}"),
                '{' | '}' => {
                    let unmatched = self.unmatched.binary_search(&(offset + at)).is_ok();
                    self.out.push_str(match (c, unmatched) {
                        ('{', false) => "\\{",
                        ('{', true) => "\\textbraceleft{}",
                        (_, false) => "\\}",
                        (_, true) => "\\textbraceright{}",
                    });
                }
                '-' | '`' | '\'' if next == Some(c) && !(c == '-' && self.dashes) => {
                    self.out.push(c);
                    self.out.push_str("{}");
                }
                _ if c.is_ascii() && self.dialect == Dialect::BibLaTex => self.out.push(c),
                '<' => self.out.push_str("{\\textless}"),
                '>' => self.out.push_str("{\\textgreater}"),
                '|' => self.out.push_str("{\\textbar}"),
                _ if c.is_ascii() || self.dialect == Dialect::BibLaTex => self.out.push(c),
                '–' => self.out.push_str("{--}"),
                '—' => self.out.push_str("{---}"),
                _ => match commands().get(&c) {
                    Some(command) => self.out.push_str(command),
                    None => self.out.push(c),
                },
            }
        }
    }
}

/// Whether a word has an upper-case letter after its first letter: an acronym or a name a style must not
/// lower-case.
fn has_inner_capital(word: &str) -> bool {
    let mut letters = word.chars().filter(|c| c.is_alphabetic());
    letters.next().is_some() && letters.any(char::is_uppercase)
}

/// The LaTeX command, in braces, of every letter and symbol the BibTeX importer reads from one: the importer's
/// tables turned round, built once.
fn commands() -> &'static HashMap<char, String> {
    static TABLE: OnceLock<HashMap<char, String>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut table = HashMap::new();
        for (name, text, _) in NAMED {
            let mut chars = text.chars();
            if let (Some(c), None) = (chars.next(), chars.next()) {
                if !c.is_ascii() {
                    table.entry(c).or_insert_with(|| format!("{{\\{name}}}"));
                }
            }
        }
        for (mark, pairs) in COMPOSED {
            let Some((command, _)) = ACCENTS.iter().find(|(_, accent)| accent == mark) else {
                continue;
            };
            let is_letter_command = command.bytes().all(|b| b.is_ascii_alphabetic());
            // An accent above i or j goes on the dotless letter, as LaTeX wants it.
            let above = ('\u{0300}'..='\u{030c}').contains(mark);
            let mut chars = pairs.chars();
            while let (Some(base), Some(accented)) = (chars.next(), chars.next()) {
                let base = match base {
                    'i' | 'j' if above => format!("\\{base}"),
                    _ => base.to_string(),
                };
                let latex = if is_letter_command {
                    format!("{{\\{command}{{{base}}}}}")
                } else {
                    format!("{{\\{command}{base}}}")
                };
                table.entry(accented).or_insert(latex);
            }
        }
        table
    })
}
