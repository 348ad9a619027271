//! Where a manuscript cites what: the keys of LaTeX's `\cite` family and of Pandoc's `[@key]` citations, each
//! with the sentence that cites it (what a cited work should support) and its line.

/// One citation of one key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Citation {
    pub key: String,
    /// The citing sentence, white space collapsed, the citation commands themselves taken out.
    pub sentence: String,
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

/// The citations of a LaTeX source, in order. `%` comments are skipped; `\nocite{*}` cites no key.
pub fn latex_citations(source: &str) -> Vec<Citation> {
    let text = mark_structure(&strip_latex_comments(source));
    let bytes = text.as_bytes();
    let mut spans: Vec<(usize, usize, Vec<String>)> = Vec::new();
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
                Some(b'[') | Some(b'(') => match group_end(&text, pos) {
                    Some(end) => pos = end,
                    None => break,
                },
                Some(b'{') => match group_end(&text, pos) {
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
        // A command citing no key (`\nocite{*}`) is still taken out of the sentences around it.
        spans.push((start, pos, keys));
    }
    with_sentences(&text, spans)
}

/// The citations of a Pandoc Markdown text, in order: `[@key]`, `[see @a, p. 3; @b]`, `[-@key]`, in-text
/// `@key` (with a locator after it, `@key [p. 4]`) and `@{key}`. An address such as `name@example.org` is no
/// citation (its `@` follows a letter), and fenced code blocks and inline code are skipped. A bracketed group is
/// taken out of the citing sentence whole.
pub fn pandoc_citations(source: &str) -> Vec<Citation> {
    let text = strip_code(source);
    let mut spans: Vec<(usize, usize, Vec<String>)> = Vec::new();
    let mut at = 0;
    while let Some(found) = text[at..].find('@') {
        let sign = at + found;
        at = sign + 1;
        let Some((key, key_end)) = key_at(&text, sign) else { continue };
        // Inside a bracketed group `[…]` on this paragraph: the group is the span, with every key in it.
        let open = text[..sign].rfind(['[', ']', '\n']).filter(|o| text.as_bytes()[*o] == b'[');
        let close =
            open.and_then(|_| text[sign..].find([']', '\n']).map(|c| sign + c)).filter(|c| text.as_bytes()[*c] == b']');
        if let (Some(open), Some(close)) = (open, close) {
            let mut keys = Vec::new();
            let mut inner = open + 1;
            while let Some(next) = text[inner..close].find('@') {
                let sign = inner + next;
                match key_at(&text, sign) {
                    Some((key, end)) => {
                        keys.push(key);
                        inner = end;
                    }
                    None => inner = sign + 1,
                }
            }
            spans.push((open, close + 1, keys));
            at = close + 1;
            continue;
        }
        // In-text: the key, and a locator in brackets right after it.
        let mut end = key_end;
        let after = text[end..].trim_start_matches(' ');
        if after.starts_with('[') {
            let from = text.len() - after.len();
            if let Some(close) =
                text[from..].find([']', '\n']).map(|c| from + c).filter(|c| text.as_bytes()[*c] == b']')
            {
                end = close + 1;
            }
        }
        spans.push((sign, end, vec![key]));
        at = end;
    }
    with_sentences(&text, spans)
}

/// The citation key after the `@` at `sign`, and where it ends; `None` where the `@` cites nothing (it follows
/// a letter, as in an address, or no key follows it). A `-` before it (`-@key`, author suppressed) is allowed.
fn key_at(text: &str, sign: usize) -> Option<(String, usize)> {
    let before = text[..sign].chars().next_back();
    if before.is_some_and(|b| b.is_alphanumeric() || matches!(b, '.' | '_' | '+' | '/' | '\\')) {
        return None;
    }
    let from = sign + 1;
    if text[from..].starts_with('{') {
        let close = text[from..].find('}')?;
        let key = text[from + 1..from + close].trim();
        return (!key.is_empty()).then(|| (key.to_owned(), from + close + 1));
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

/// Each span's keys with the sentence around it, the spans themselves (and any empty brackets left) taken out
/// of the sentence.
fn with_sentences(text: &str, spans: Vec<(usize, usize, Vec<String>)>) -> Vec<Citation> {
    let mut out = Vec::new();
    for (start, end, keys) in &spans {
        let (from, to) = sentence_around(text, *start, *end);
        let mut sentence = String::new();
        let mut cursor = from;
        for (other_start, other_end, _) in spans.iter().filter(|(s, e, _)| *s >= from && *e <= to) {
            sentence.push_str(&text[cursor..*other_start]);
            cursor = *other_end;
        }
        sentence.push_str(&text[cursor..to]);
        let sentence = tidy_sentence(&sentence);
        let line = text[..*start].matches('\n').count() + 1;
        for key in keys {
            out.push(Citation { key: key.clone(), sentence: sentence.clone(), line });
        }
    }
    out
}

/// The byte range of the sentence holding `start..end`: from after the previous `.`/`?`/`!` + space (or blank
/// line) to the next one, included.
fn sentence_around(text: &str, start: usize, end: usize) -> (usize, usize) {
    let head = &text[..start];
    let mut from = 0;
    for (at, c) in head.char_indices() {
        let next = head[at + c.len_utf8()..].chars().next();
        let ends = matches!(c, '.' | '?' | '!') && next.is_some_and(|n| n.is_whitespace() || n == '\\');
        if ends || c == BOUNDARY || head[at..].starts_with("\n\n") {
            from = at + c.len_utf8();
        }
    }
    let tail = &text[end..];
    let mut to = text.len();
    for (at, c) in tail.char_indices() {
        let next = tail[at + c.len_utf8()..].chars().next();
        if matches!(c, '.' | '?' | '!') && next.is_none_or(|n| n.is_whitespace() || n == '\\') {
            to = end + at + c.len_utf8();
            break;
        }
        if c == BOUNDARY || tail[at..].starts_with("\n\n") {
            to = end + at;
            break;
        }
    }
    (from, to)
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
                Some(b'[' | b'{') => match group_end(text, pos) {
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

/// The end (exclusive) of the bracketed group opening at `open` (`{…}` nests; `[…]` and `(…)` may hold braces).
fn group_end(text: &str, open: usize) -> Option<usize> {
    let (opener, closer) = match text.as_bytes().get(open)? {
        b'{' => ('{', '}'),
        b'[' => ('[', ']'),
        _ => ('(', ')'),
    };
    let mut depth = 0usize;
    let mut braces = 0usize;
    for (at, c) in text[open..].char_indices() {
        if c == '{' && opener != '{' {
            braces += 1;
        } else if c == '}' && opener != '{' {
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
        let found = latex_citations(tex);
        assert_eq!(keys(&found), ["jumper2021", "baek2021", "lin2023", "wu2022", "a1", "b2"]);
        assert_eq!(found[0].sentence, "Folding is hard.");
        assert_eq!(found[2].sentence, "As showed, language models help.");
        assert_eq!((found[3].line, found[3].sentence.as_str()), (3, "Costs 5\\% less."));
        assert_eq!(found[4].sentence, "Both agree.");
    }

    #[test]
    fn pandoc_citations_in_brackets_and_in_text() {
        let md = "Maize yields fall under heat [see @lobell2011, p. 33; @schlenker2009].\n\n\
                  @zhao2017 [p. 4] pooled the trials. Write to me@example.org. Not `@code` here.\n\
                  ```\n@fenced\n```\n\
                  Suppressed [-@smith:2020]. Braced @{odd key}.";
        let found = pandoc_citations(md);
        assert_eq!(keys(&found), ["lobell2011", "schlenker2009", "zhao2017", "smith:2020", "odd key"]);
        assert_eq!(found[0].sentence, "Maize yields fall under heat.");
        assert_eq!(found[2].sentence, "pooled the trials.");
        assert_eq!(found[3].line, 7);
    }

    #[test]
    fn a_citing_sentence_starts_after_structural_commands() {
        let source = "\\begin{document}\n\\section{Einf\u{fc}hrung}\nProteins fold \\cite{a}.\n\\end{document}";
        let found = latex_citations(source);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].sentence, "Proteins fold.");
        assert_eq!(found[0].line, 3);
    }
}
