//! Where a manuscript cites what: the keys of LaTeX's `\cite` family and of Pandoc's `[@key]` citations, each
//! with the sentence that cites it (what a cited work should support) and its line.
//!
//! Every pass is linear in the text (or n log n): the sentence bounds and line starts are found once and looked
//! up by binary search, brackets are tracked as the scan moves on, and a brace's partner is found by one pass
//! over the text. A manuscript is hostile input: a quadratic pass on a megabyte of `@k @k @k …` took minutes.

use std::sync::Arc;

use super::{TooLarge, MAX_CITATIONS};

/// One citation of one key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Citation {
    pub key: String,
    /// The citing sentence, white space collapsed, the citation commands themselves taken out, cut to
    /// [`MAX_SENTENCE_CHARS`]. Shared by the keys of one command and the commands of one sentence (thousands of
    /// keys in one long sentence would otherwise each hold a copy).
    pub sentence: Arc<str>,
    /// 1-based line of the citation.
    pub line: usize,
}

/// LaTeX citation commands, natbib's and biblatex's: `\cite`, `\citep`, `\citet`, `\autocite`, `\parencite`,
/// `\textcite`, … (a starred form too), and the multicite forms (`\cites{a}{b}`, `\parencites[see][]{a}{b}`).
const LATEX_COMMANDS: &[&str] = &[
    "cite",
    "citep",
    "citet",
    "citealp",
    "citealt",
    "citeauthor",
    "citeyear",
    "citeyearpar",
    "citetitle",
    "citenum",
    "autocite",
    "parencite",
    "textcite",
    "footcite",
    "footcitetext",
    "smartcite",
    "supercite",
    "fullcite",
    "nocite",
    "Cite",
    "Citep",
    "Citet",
    "Citealp",
    "Citealt",
    "Citeauthor",
    "Autocite",
    "Parencite",
    "Textcite",
    "Footcite",
    "Smartcite",
    "cites",
    "parencites",
    "textcites",
    "autocites",
    "footcites",
    "smartcites",
    "Cites",
    "Parencites",
    "Textcites",
    "Autocites",
];

/// The citations of a LaTeX source, in order. `%` comments are skipped; `\nocite{*}` cites no key. More than
/// [`MAX_CITATIONS`] keys cited is [`TooLarge::Citations`].
pub fn latex_citations(source: &str) -> Result<Vec<Citation>, TooLarge> {
    let text = mark_structure(&strip_latex_comments(source));
    let bytes = text.as_bytes();
    let braces = Braces::of(&text);
    let mut spans: Vec<Span> = Vec::new();
    let mut cited = 0usize;
    let mut at = 0;
    while let Some(found) = text[at..].find('\\') {
        let start = at + found;
        let name_end =
            text[start + 1..].find(|c: char| !c.is_ascii_alphabetic()).map_or(text.len(), |end| start + 1 + end);
        let name = &text[start + 1..name_end];
        at = name_end.max(start + 1);
        if !LATEX_COMMANDS.contains(&name) {
            continue;
        }
        let multi = name.ends_with("cites");
        let mut pos = name_end;
        if bytes.get(pos) == Some(&b'*') {
            pos += 1;
        }
        let mut keys = Vec::new();
        loop {
            pos = skip_space(&text, pos);
            match bytes.get(pos) {
                Some(b'[') | Some(b'(') => match group_end(&text, pos, &braces) {
                    Some(end) => pos = end,
                    None => break,
                },
                Some(b'{') => match group_end(&text, pos, &braces) {
                    Some(end) => {
                        keys.extend(
                            text[pos + 1..end - 1]
                                .split(',')
                                .map(str::trim)
                                .filter(|k| !k.is_empty() && *k != "*")
                                .map(str::to_owned),
                        );
                        pos = end;
                        if !multi {
                            break;
                        }
                    }
                    None => break,
                },
                _ => break,
            }
        }
        at = pos.max(at);
        cited += keys.len();
        if cited > MAX_CITATIONS {
            return Err(TooLarge::Citations);
        }
        // A command citing no key (`\nocite{*}`) is still taken out of the sentences around it.
        spans.push(Span { start, end: pos, keys });
    }
    Ok(with_sentences(&text, spans))
}

/// The citations of a Pandoc Markdown text, in order: `[@key]`, `[see @a, p. 3; @b]`, `[-@key]`, in-text
/// `@key` (with a locator after it, `@key [p. 4]`) and `@{key}`. An address such as `name@example.org` is no
/// citation (its `@` follows a letter), and fenced code blocks and inline code are skipped. A bracketed group is
/// taken out of the citing sentence whole. More than [`MAX_CITATIONS`] keys cited is [`TooLarge::Citations`].
pub fn pandoc_citations(source: &str) -> Result<Vec<Citation>, TooLarge> {
    let text = strip_code(source);
    let mut spans: Vec<Span> = Vec::new();
    let mut cited = 0usize;
    // Each `@` looks back for the bracket it may stand in and forward for the bracket's end; both are kept as
    // the scan moves on, so a long line is read once, not once per `@`.
    let mut opening = LastOf::new(&text, &['[', ']', '\n']);
    let mut closing = NextOf::new(&text, &[']', '\n']);
    let mut brace = NextOf::new(&text, &['}']);
    let mut at = 0;
    while let Some(found) = text[at..].find('@') {
        let sign = at + found;
        at = sign + 1;
        let Some((key, key_end)) = key_at(&text, sign, &mut brace) else { continue };
        // Inside a bracketed group `[…]` on this paragraph: the group is the span, with every key in it.
        let open = opening.before(sign).filter(|o| text.as_bytes()[*o] == b'[');
        let close = open.and_then(|_| closing.at_or_after(sign)).filter(|c| text.as_bytes()[*c] == b']');
        if let (Some(open), Some(close)) = (open, close) {
            let mut keys = Vec::new();
            let mut inner = open + 1;
            while let Some(next) = text[inner..close].find('@') {
                let sign = inner + next;
                match key_at(&text, sign, &mut brace) {
                    Some((key, end)) => {
                        keys.push(key);
                        inner = end;
                    }
                    None => inner = sign + 1,
                }
            }
            cited += keys.len();
            if cited > MAX_CITATIONS {
                return Err(TooLarge::Citations);
            }
            spans.push(Span { start: open, end: close + 1, keys });
            at = close + 1;
            continue;
        }
        // In-text: the key, and a locator in brackets right after it.
        let mut end = key_end;
        let after = text[end..].trim_start_matches(' ');
        if after.starts_with('[') {
            let from = text.len() - after.len();
            if let Some(close) = closing.at_or_after(from).filter(|c| text.as_bytes()[*c] == b']') {
                end = close + 1;
            }
        }
        cited += 1;
        if cited > MAX_CITATIONS {
            return Err(TooLarge::Citations);
        }
        spans.push(Span { start: sign, end, keys: vec![key] });
        at = end;
    }
    Ok(with_sentences(&text, spans))
}

/// The citation key after the `@` at `sign`, and where it ends; `None` where the `@` cites nothing (it follows
/// a letter, as in an address, or no key follows it). A `-` before it (`-@key`, author suppressed) is allowed.
fn key_at(text: &str, sign: usize, brace: &mut NextOf<'_>) -> Option<(String, usize)> {
    let before = text[..sign].chars().next_back();
    if before.is_some_and(|b| b.is_alphanumeric() || matches!(b, '.' | '_' | '+' | '/' | '\\')) {
        return None;
    }
    let from = sign + 1;
    if text[from..].starts_with('{') {
        let close = brace.at_or_after(from)?;
        let key = text[from + 1..close].trim();
        return (!key.is_empty()).then(|| (key.to_owned(), close + 1));
    }
    // Letters, digits and `_`, with internal punctuation (`:.#$%&-+?<>~/`) only where a letter or digit follows.
    let mut end = from;
    for (at, c) in text[from..].char_indices() {
        let inner = matches!(c, ':' | '.' | '#' | '$' | '%' | '&' | '-' | '+' | '?' | '<' | '>' | '~' | '/');
        if c.is_alphanumeric() || c == '_' {
            end = from + at + c.len_utf8();
        } else if !inner {
            break;
        }
    }
    let key = &text[from..end];
    key.starts_with(|c: char| c.is_alphanumeric() || c == '_').then(|| (key.to_owned(), end))
}

/// Where a citation command or group stands, and the keys it cites.
struct Span {
    start: usize,
    end: usize,
    keys: Vec<String>,
}

/// Each span's keys with the sentence around it, the spans themselves (and any empty brackets left) taken out
/// of the sentence. The sentence bounds and line starts are found once for the whole text, and the keys of a
/// span, and spans of one sentence, share one copy of it.
fn with_sentences(text: &str, spans: Vec<Span>) -> Vec<Citation> {
    let bounds = SentenceBounds::of(text);
    let line_starts: Vec<usize> = text.match_indices('\n').map(|(at, _)| at).collect();
    let mut out = Vec::new();
    let mut last: Option<((usize, usize), Arc<str>)> = None;
    for (index, span) in spans.iter().enumerate() {
        let (from, to) = (bounds.start_before(span.start), bounds.end_after(span.end, text.len()));
        let sentence = match &last {
            Some((range, sentence)) if *range == (from, to) => sentence.clone(),
            _ => {
                let sentence = sentence_between(text, &spans, index, from, to);
                last = Some(((from, to), sentence.clone()));
                sentence
            }
        };
        let line = line_starts.partition_point(|&newline| newline < span.start) + 1;
        for key in &span.keys {
            out.push(Citation { key: key.clone(), sentence: sentence.clone(), line });
        }
    }
    out
}

/// The text of `from..to` without the spans wholly inside it, tidied and cut to [`MAX_SENTENCE_CHARS`]. The
/// spans are in order and do not overlap, so those inside are a run around `index`.
fn sentence_between(text: &str, spans: &[Span], index: usize, from: usize, to: usize) -> Arc<str> {
    let first = spans[..index].partition_point(|s| s.start < from);
    let mut raw = String::new();
    let mut cursor = from;
    for other in spans[first..].iter().take_while(|s| s.start <= to).filter(|s| s.start >= from && s.end <= to) {
        raw.push_str(&text[cursor..other.start]);
        cursor = other.end;
    }
    raw.push_str(&text[cursor..to]);
    cut_sentence(tidy_sentence(&raw))
}

/// A citing sentence is shown and searched for, never needed whole: a "sentence" of a hundred thousand
/// characters (a text without full stops) is cut, so that each of its citations costs little.
pub const MAX_SENTENCE_CHARS: usize = 1_000;

fn cut_sentence(mut sentence: String) -> Arc<str> {
    if let Some((cut, _)) = sentence.char_indices().nth(MAX_SENTENCE_CHARS) {
        sentence.truncate(cut);
        sentence.push('…');
    }
    Arc::from(sentence)
}

/// Where sentences begin and end, found in one pass: a sentence ends at `.`/`?`/`!` before white space or `\`,
/// at a [`BOUNDARY`] and at a blank line.
struct SentenceBounds {
    /// (the offset up to which the text must reach for the start to count, the start), by the first.
    starts: Vec<(usize, usize)>,
    /// (where the end's mark stands, the end), by the first.
    ends: Vec<(usize, usize)>,
}

impl SentenceBounds {
    fn of(text: &str) -> Self {
        let mut starts = Vec::new();
        let mut ends = Vec::new();
        let mut chars = text.char_indices().peekable();
        while let Some((at, c)) = chars.next() {
            let after = at + c.len_utf8();
            let next = chars.peek().map(|&(_, n)| n);
            if matches!(c, '.' | '?' | '!') {
                if next.is_some_and(|n| n.is_whitespace() || n == '\\') {
                    // A start after the mark needs the character that follows it before the citation.
                    starts.push((after + next.map_or(0, char::len_utf8), after));
                }
                if next.is_none_or(|n| n.is_whitespace() || n == '\\') {
                    ends.push((at, after));
                }
            } else if c == BOUNDARY {
                starts.push((after, after));
                ends.push((at, at));
            } else if c == '\n' && next == Some('\n') {
                starts.push((at + 2, after));
                ends.push((at, at));
            }
        }
        // The reach of a start may pass the next one's (a mark and its space), so order them by reach.
        crate::sort::sort(&mut starts);
        let mut highest = 0;
        for (_, start) in &mut starts {
            highest = (*start).max(highest);
            *start = highest;
        }
        SentenceBounds { starts, ends }
    }

    /// The start of the sentence holding a span that starts at `start`: after the last end before it.
    fn start_before(&self, start: usize) -> usize {
        match self.starts.partition_point(|&(reach, _)| reach <= start) {
            0 => 0,
            count => self.starts[count - 1].1,
        }
    }

    /// The end (exclusive) of the sentence holding a span that ends at `end`: the first end at or after it.
    fn end_after(&self, end: usize, text_len: usize) -> usize {
        let at = self.ends.partition_point(|&(mark, _)| mark < end);
        self.ends.get(at).map_or(text_len, |&(_, to)| to)
    }
}

fn tidy_sentence(raw: &str) -> String {
    let mut out =
        raw.split(|c: char| c.is_whitespace() || c == BOUNDARY).filter(|w| !w.is_empty()).collect::<Vec<_>>().join(" ");
    for empty in ["[]", "[ ]", "[;]", "()", "~"] {
        out = out.replace(empty, " ");
    }
    let out = out.split_whitespace().collect::<Vec<_>>().join(" ");
    out.replace(" .", ".").replace(" ,", ",").trim().to_owned()
}

/// Where a LaTeX command that is no part of a sentence stood (see [`mark_structure`]): a sentence never runs
/// across it.
const BOUNDARY: char = '\u{1}';

/// Commands that frame the text rather than say something in it: a citing sentence starts after them.
const STRUCTURE: &[&str] = &[
    "begin",
    "end",
    "section",
    "subsection",
    "subsubsection",
    "chapter",
    "paragraph",
    "subparagraph",
    "part",
    "item",
    "maketitle",
    "title",
    "author",
    "date",
    "documentclass",
    "usepackage",
    "bibliography",
    "bibliographystyle",
    "printbibliography",
    "addbibresource",
    "tableofcontents",
    "newpage",
    "clearpage",
];

/// The text with each structural command (with its `*`, and its `[…]`/`{…}` arguments, at most two) blanked to
/// a [`BOUNDARY`] and spaces: byte offsets and line breaks kept.
fn mark_structure(text: &str) -> String {
    let bytes = text.as_bytes();
    let braces = Braces::of(text);
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut at = 0;
    while let Some(found) = text[at..].find('\\') {
        let start = at + found;
        let name_end =
            text[start + 1..].find(|c: char| !c.is_ascii_alphabetic()).map_or(text.len(), |end| start + 1 + end);
        at = name_end.max(start + 1);
        if !STRUCTURE.contains(&&text[start + 1..name_end]) {
            continue;
        }
        let mut pos = name_end;
        if bytes.get(pos) == Some(&b'*') {
            pos += 1;
        }
        for _ in 0..2 {
            match bytes.get(pos) {
                Some(b'[' | b'{') => match group_end(text, pos, &braces) {
                    Some(end) => pos = end,
                    None => break,
                },
                _ => break,
            }
        }
        out.push_str(&text[copied..start]);
        out.push(BOUNDARY);
        // Each character blanked to as many spaces as it has bytes, so every later offset stays where it was.
        for c in text[start + 1..pos].chars() {
            match c {
                '\n' => out.push('\n'),
                c => (0..c.len_utf8()).for_each(|_| out.push(' ')),
            }
        }
        copied = pos;
        at = pos.max(at);
    }
    out.push_str(&text[copied..]);
    out
}

/// The text with every `%` comment blanked (a `\%` is a percent sign), line breaks kept.
fn strip_latex_comments(source: &str) -> String {
    source
        .lines()
        .map(|line| {
            let mut escaped = false;
            for (at, c) in line.char_indices() {
                if c == '%' && !escaped {
                    return &line[..at];
                }
                escaped = c == '\\' && !escaped;
            }
            line
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The text with fenced code blocks and inline code spans blanked to spaces (lines and offsets kept).
fn strip_code(source: &str) -> String {
    let mut out = String::with_capacity(source.len());
    let mut fenced = false;
    for line in source.split_inclusive('\n') {
        let fence = line.trim_start().starts_with("```") || line.trim_start().starts_with("~~~");
        if fence || fenced {
            out.extend(line.chars().map(|c| if c == '\n' { '\n' } else { ' ' }));
            if fence {
                fenced = !fenced;
            }
            continue;
        }
        let mut in_code = false;
        for c in line.chars() {
            if c == '`' {
                in_code = !in_code;
                out.push(' ');
            } else if in_code && c != '\n' {
                out.push(' ');
            } else {
                out.push(c);
            }
        }
    }
    out
}

fn skip_space(text: &str, mut pos: usize) -> usize {
    while text[pos..].starts_with([' ', '\t', '\n']) {
        pos += 1;
    }
    pos
}

/// An optional argument (`[see][p. 3]`, `(…)`) longer than this is taken as unclosed: a note is a few words,
/// and each unclosed `[` would otherwise be read to the end of the text, once per command.
const MAX_OPTION_BYTES: usize = 4_096;

/// The end (exclusive) of the bracketed group opening at `open` (`{…}` nests; `[…]` and `(…)` may hold braces).
fn group_end(text: &str, open: usize, braces: &Braces) -> Option<usize> {
    let (opener, closer) = match text.as_bytes().get(open)? {
        b'{' => return braces.close_of(open).map(|close| close + 1),
        b'[' => ('[', ']'),
        _ => ('(', ')'),
    };
    let mut depth = 0usize;
    let mut braces = 0usize;
    let window = text.get(open..).unwrap_or_default();
    for (at, c) in window.char_indices().take_while(|&(at, _)| at < MAX_OPTION_BYTES) {
        if c == '{' {
            braces += 1;
        } else if c == '}' {
            braces = braces.saturating_sub(1);
        } else if c == opener {
            depth += 1;
        } else if c == closer && braces == 0 {
            depth -= 1;
            if depth == 0 {
                return Some(open + at + 1);
            }
        }
    }
    None
}

/// Every `{` of a text with its matching `}`, found in one pass with a stack (a `{` without one has none).
struct Braces {
    /// The offsets of the `{`, in order.
    opens: Vec<usize>,
    /// The matching `}` of each, `usize::MAX` where there is none.
    closes: Vec<usize>,
}

impl Braces {
    fn of(text: &str) -> Self {
        let (mut opens, mut closes, mut stack) = (Vec::new(), Vec::new(), Vec::new());
        for (at, b) in text.bytes().enumerate() {
            match b {
                b'{' => {
                    stack.push(opens.len());
                    opens.push(at);
                    closes.push(usize::MAX);
                }
                b'}' => {
                    if let Some(open) = stack.pop() {
                        closes[open] = at;
                    }
                }
                _ => {}
            }
        }
        Braces { opens, closes }
    }

    /// The `}` closing the `{` at `open`.
    fn close_of(&self, open: usize) -> Option<usize> {
        let index = self.opens.binary_search(&open).ok()?;
        Some(self.closes[index]).filter(|&close| close != usize::MAX)
    }
}

/// The first of some characters at or after an offset, for offsets asked in rising order: an answer serves
/// every later question up to it, so a run of questions costs one search.
struct NextOf<'t> {
    text: &'t str,
    targets: &'static [char],
    /// The offset last searched from (`usize::MAX` before the first search), and what was found.
    asked: usize,
    found: Option<usize>,
}

impl<'t> NextOf<'t> {
    fn new(text: &'t str, targets: &'static [char]) -> Self {
        NextOf { text, targets, asked: usize::MAX, found: None }
    }

    fn at_or_after(&mut self, from: usize) -> Option<usize> {
        let known = self.asked <= from && self.found.is_none_or(|found| from <= found);
        if !known {
            self.asked = from;
            self.found = self.text.get(from..).and_then(|rest| rest.find(self.targets)).map(|at| from + at);
        }
        self.found
    }
}

/// The last of some characters before an offset, for offsets asked in rising order: the text is read once.
struct LastOf<'t> {
    text: &'t str,
    targets: &'static [char],
    /// Read up to here.
    read: usize,
    last: Option<usize>,
}

impl<'t> LastOf<'t> {
    fn new(text: &'t str, targets: &'static [char]) -> Self {
        LastOf { text, targets, read: 0, last: None }
    }

    fn before(&mut self, upto: usize) -> Option<usize> {
        if upto < self.read {
            // Never asked by the scan (its offsets only rise); answered all the same.
            return self.text.get(..upto).and_then(|head| head.rfind(self.targets));
        }
        if let Some(found) = self.text.get(self.read..upto).and_then(|part| part.rfind(self.targets)) {
            self.last = Some(self.read + found);
        }
        self.read = upto;
        self.last
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(found: &[Citation]) -> Vec<&str> {
        found.iter().map(|c| c.key.as_str()).collect()
    }

    #[test]
    fn latex_commands_with_notes_stars_and_several_keys() {
        let tex = "Folding is hard \\citep[see][p.~3]{jumper2021, baek2021}. \
                   As \\textcite{lin2023} showed, language models help.\n\
                   % \\cite{commented}\n\
                   Costs 5\\% less \\autocite*{wu2022}.\\nocite{*}\n\
                   Both \\parencites[cf.][12]{a1}{b2} agree.";
        let found = latex_citations(tex).unwrap();
        assert_eq!(keys(&found), ["jumper2021", "baek2021", "lin2023", "wu2022", "a1", "b2"]);
        assert_eq!(&*found[0].sentence, "Folding is hard.");
        assert_eq!(&*found[2].sentence, "As showed, language models help.");
        assert_eq!((found[3].line, &*found[3].sentence), (3, "Costs 5\\% less."));
        assert_eq!(&*found[4].sentence, "Both agree.");
    }

    #[test]
    fn pandoc_citations_in_brackets_and_in_text() {
        let md = "Maize yields fall under heat [see @lobell2011, p. 33; @schlenker2009].\n\n\
                  @zhao2017 [p. 4] pooled the trials. Write to me@example.org. Not `@code` here.\n\
                  ```\n@fenced\n```\n\
                  Suppressed [-@smith:2020]. Braced @{odd key}.";
        let found = pandoc_citations(md).unwrap();
        assert_eq!(keys(&found), ["lobell2011", "schlenker2009", "zhao2017", "smith:2020", "odd key"]);
        assert_eq!(&*found[0].sentence, "Maize yields fall under heat.");
        assert_eq!(&*found[2].sentence, "pooled the trials.");
        assert_eq!(found[3].line, 7);
    }

    #[test]
    fn a_citing_sentence_starts_after_structural_commands() {
        let source = "\\begin{document}\n\\section{Einf\u{fc}hrung}\nProteins fold \\cite{a}.\n\\end{document}";
        let found = latex_citations(source).unwrap();
        assert_eq!(found.len(), 1);
        assert_eq!(&*found[0].sentence, "Proteins fold.");
        assert_eq!(found[0].line, 3);
    }
}
