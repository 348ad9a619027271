//! The shape of a template: its `{{ … }}` tags (which nest, and whose quoted values may hold braces), the literal
//! text between them, `if`/`elseif`/`else`/`endif` kept balanced, and the errors saying what is wrong and where.

use super::ast::Token;
use super::expressions::{parse_condition, parse_expr};
use super::problems::{quote, Findings, TemplateError};
use super::scan::{find_close, without_line_breaks};

/// Walks a template once, producing tokens and recording problems.
pub(super) struct Parser<'a> {
    template: &'a str,
    pub(super) tokens: Vec<Token>,
    pub(super) problems: Vec<TemplateError>,
    /// What the tag being read has wrong, and the patterns counted so far.
    findings: Findings,
    /// Open `if` blocks: the tag, its position, and whether its `else` was seen.
    open_ifs: Vec<(String, usize, bool)>,
    /// Byte offset and 1-based character position last converted, so positions cost one pass in all.
    seen: (usize, usize),
}

impl<'a> Parser<'a> {
    pub(super) fn new(template: &'a str) -> Self {
        Parser {
            template,
            tokens: Vec::new(),
            problems: Vec::new(),
            findings: Findings::default(),
            open_ifs: Vec::new(),
            seen: (0, 1),
        }
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
        let token = match word {
            "if" | "elseif" => {
                let cond = parse_condition(rest, &mut self.findings);
                self.structure(word, tag, at);
                if word == "if" {
                    Token::If(cond)
                } else {
                    Token::ElseIf(cond)
                }
            }
            "else" | "endif" => {
                if !rest.is_empty() {
                    self.findings.push(if word == "else" {
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
            _ => Token::Output(parse_expr(body, &mut self.findings)),
        };
        let quoted = quote(tag);
        let reasons = self.findings.take();
        self.problems.extend(reasons.into_iter().map(|reason| reason.into_error(quoted.clone(), at)));
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

/// The first whitespace-separated word and the trimmed rest.
fn split_word(s: &str) -> (&str, &str) {
    let s = s.trim();
    match s.find(char::is_whitespace) {
        Some(i) => (&s[..i], s[i..].trim()),
        None => (s, ""),
    }
}
