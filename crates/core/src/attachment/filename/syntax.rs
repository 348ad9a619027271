//! The shape of a template: its `{{ … }}` tags (which nest, and whose quoted values may hold braces), the literal
//! text between them, `if`/`elseif`/`else`/`endif` kept balanced, and the errors saying what is wrong and where.

use super::expressions::{parse_condition, parse_expr};
use super::variables::Variable;

/// The longest text an error message quotes from a template, in characters.
const MAX_QUOTED_CHARS: usize = 60;

/// Why a template cannot be used. Each message says where the problem is (a 1-based character position in the
/// template) and how to fix it, so a tool can hand it straight back to whoever wrote the template.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TemplateError {
    #[error("the template is empty; give at least one variable, e.g. {{{{ title }}}}")]
    Empty,
    #[error("the `{{{{` at character {at} is never closed; add `}}}}` where the tag ends")]
    UnclosedTag { at: usize },
    #[error("the `}}}}` at character {at} closes nothing; remove it, or add the `{{{{` it should close")]
    StrayClose { at: usize },
    #[error("`{tag}` at character {at}: {reason}")]
    BadTag { tag: String, at: usize, reason: String },
    #[error("`{tag}` at character {at} has no `{{{{ if … }}}}` before it; add one or remove it")]
    Orphan { tag: String, at: usize },
    #[error(
        "`{tag}` at character {at} comes after the `{{{{ else }}}}` of its block, so it can never apply; move it \
         before the `{{{{ else }}}}`"
    )]
    AfterElse { tag: String, at: usize },
    #[error("`{tag}` at character {at} is never closed; add `{{{{ endif }}}}` where its block ends")]
    UnclosedIf { tag: String, at: usize },
}

/// A piece of a template, in order. `if` blocks stay flat and are matched while rendering, as in Zotero, so a
/// deeply nested template cannot exhaust the stack.
#[derive(Debug)]
pub(super) enum Token {
    Text(String),
    Output(Expr),
    If(Condition),
    ElseIf(Condition),
    Else,
    EndIf,
}

/// Something that renders to a string.
#[derive(Debug)]
pub(super) enum Expr {
    /// A quoted string (`{{ "text" }}`), or a number in a comparison.
    Literal(String),
    Var(Box<Variable>),
    /// A tag that could not be read: renders as nothing.
    Nothing,
}

#[derive(Debug)]
pub(super) enum Condition {
    /// True when the expression renders non-empty.
    Truthy(Expr),
    Compare(Expr, Cmp, Expr),
}

#[derive(Debug, Clone, Copy)]
pub(super) enum Cmp {
    Eq,
    Ne,
    Le,
    Ge,
    Lt,
    Gt,
}

/// The comparison operators, longest first so `<=` is not read as `<`.
pub(super) const COMPARATORS: [(&str, Cmp); 6] =
    [("==", Cmp::Eq), ("!=", Cmp::Ne), ("<=", Cmp::Le), (">=", Cmp::Ge), ("<", Cmp::Lt), (">", Cmp::Gt)];

/// Walks a template once, producing tokens and recording problems.
pub(super) struct Parser<'a> {
    template: &'a str,
    pub(super) tokens: Vec<Token>,
    pub(super) problems: Vec<TemplateError>,
    /// Open `if` blocks: the tag, its position, and whether its `else` was seen.
    open_ifs: Vec<(String, usize, bool)>,
    /// Byte offset and 1-based character position last converted, so positions cost one pass in all.
    seen: (usize, usize),
}

impl<'a> Parser<'a> {
    pub(super) fn new(template: &'a str) -> Self {
        Parser { template, tokens: Vec::new(), problems: Vec::new(), open_ifs: Vec::new(), seen: (0, 1) }
    }

    pub(super) fn run(&mut self) {
        let template = self.template;
        if template.trim().is_empty() {
            self.problems.push(TemplateError::Empty);
            return;
        }
        let bytes = template.as_bytes();
        let (mut i, mut text_start) = (0, 0);
        while i < bytes.len() {
            if bytes[i..].starts_with(b"{{") {
                let Some(close) = find_close(bytes, i + 2) else {
                    // As in Zotero, an unclosed tag is left as literal text.
                    let at = self.position(i);
                    self.problems.push(TemplateError::UnclosedTag { at });
                    break;
                };
                self.text(&template[text_start..i]);
                let at = self.position(i);
                self.tag(&template[i..close + 2], at);
                i = close + 2;
                text_start = i;
            } else if bytes[i..].starts_with(b"}}") {
                let at = self.position(i);
                self.problems.push(TemplateError::StrayClose { at });
                i += 2;
            } else {
                i += 1;
            }
        }
        self.text(&template[text_start..]);
        for (tag, at, _) in std::mem::take(&mut self.open_ifs) {
            self.problems.push(TemplateError::UnclosedIf { tag, at });
        }
    }

    /// The 1-based character position of byte offset `byte`, which never decreases between calls.
    fn position(&mut self, byte: usize) -> usize {
        let (from, chars) = self.seen;
        let position = chars + self.template.get(from..byte).map_or(0, |s| s.chars().count());
        self.seen = (byte, position);
        position
    }

    /// Literal text. Zotero removes line breaks from templates, so a template may be laid out on several lines.
    fn text(&mut self, text: &str) {
        let text = without_line_breaks(text);
        if !text.is_empty() {
            self.tokens.push(Token::Text(text));
        }
    }

    fn tag(&mut self, tag: &str, at: usize) {
        let body = tag[2..tag.len() - 2].trim();
        let (word, rest) = split_word(body);
        let mut reasons = Vec::new();
        let token = match word {
            "if" | "elseif" => {
                let cond = parse_condition(rest, &mut reasons);
                self.structure(word, tag, at);
                if word == "if" {
                    Token::If(cond)
                } else {
                    Token::ElseIf(cond)
                }
            }
            "else" | "endif" => {
                if !rest.is_empty() {
                    reasons.push(if word == "else" {
                        "`else` takes no condition; write `{{ elseif … }}` for another condition".to_owned()
                    } else {
                        "`endif` takes nothing after it; remove the rest".to_owned()
                    });
                }
                self.structure(word, tag, at);
                if word == "else" {
                    Token::Else
                } else {
                    Token::EndIf
                }
            }
            _ => Token::Output(parse_expr(body, &mut reasons)),
        };
        let quoted = quote(tag);
        self.problems.extend(reasons.into_iter().map(|reason| TemplateError::BadTag {
            tag: quoted.clone(),
            at,
            reason,
        }));
        self.tokens.push(token);
    }

    /// Keeps `if`/`elseif`/`else`/`endif` balanced, recording what is not.
    fn structure(&mut self, word: &str, tag: &str, at: usize) {
        let tag = quote(tag);
        if word == "if" {
            self.open_ifs.push((tag, at, false));
            return;
        }
        let Some(open) = self.open_ifs.last_mut() else {
            self.problems.push(TemplateError::Orphan { tag, at });
            return;
        };
        match word {
            "endif" => {
                self.open_ifs.pop();
            }
            _ if open.2 => self.problems.push(TemplateError::AfterElse { tag, at }),
            "else" => open.2 = true,
            _ => {}
        }
    }
}

/// The byte offset of the `}}` closing a tag whose body starts at `from`. Tags nest, and braces inside a quoted
/// attribute value do not count (as in Zotero, whose quotes have no escapes).
pub(super) fn find_close(bytes: &[u8], from: usize) -> Option<usize> {
    let (mut depth, mut i) = (1usize, from);
    while i < bytes.len() {
        match bytes[i] {
            quote @ (b'"' | b'\'') => i = after_quoted(bytes, i, quote)?,
            b'{' if bytes.get(i + 1) == Some(&b'{') => {
                depth += 1;
                i += 2;
            }
            b'}' if bytes.get(i + 1) == Some(&b'}') => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
                i += 2;
            }
            _ => i += 1,
        }
    }
    None
}

/// The byte offset just past the quote closing the one at `open`.
pub(super) fn after_quoted(bytes: &[u8], open: usize, quote: u8) -> Option<usize> {
    bytes[open + 1..].iter().position(|&b| b == quote).map(|p| open + p + 2)
}

/// The first whitespace-separated word and the trimmed rest.
fn split_word(s: &str) -> (&str, &str) {
    let s = s.trim();
    match s.find(char::is_whitespace) {
        Some(i) => (&s[..i], s[i..].trim()),
        None => (s, ""),
    }
}

pub(super) fn without_line_breaks(s: &str) -> String {
    s.replace(['\r', '\n'], "")
}

/// A tag as an error message quotes it: whole when short, else its start.
pub(super) fn quote(tag: &str) -> String {
    match tag.char_indices().nth(MAX_QUOTED_CHARS) {
        Some((cut, _)) => format!("{}…", &tag[..cut]),
        None => tag.to_owned(),
    }
}
