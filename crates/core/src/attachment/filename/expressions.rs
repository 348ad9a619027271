//! What is inside a tag: a condition (`authorsCount > 1`, `{{ authors max="1" }} == "Li"`), its operands, a
//! quoted string, or a variable with its `name="value"` attributes.

use super::ast::{Cmp, Condition, Expr, COMPARATORS};
use super::problems::{quote, Findings};
use super::scan::{after_quoted, find_close, is_number, without_line_breaks};
use super::variables::Variable;

pub(super) fn parse_condition(condition: &str, findings: &mut Findings) -> Condition {
    let mut condition = condition.trim();
    // `{{ if {{ authorsCount > 1 }} }}`: a tag around the whole comparison is only grouping.
    while let Some(inner) = braced(condition) {
        if split_comparison(inner).is_none() {
            break;
        }
        condition = inner.trim();
    }
    match split_comparison(condition) {
        Some((left, cmp, right)) => {
            Condition::Compare(parse_operand(left, findings), cmp, parse_operand(right, findings))
        }
        // An empty condition is false, as in Zotero.
        None if condition.is_empty() => Condition::Truthy(Expr::Nothing),
        None => Condition::Truthy(parse_operand(condition, findings)),
    }
}

/// The inside of `s` when it is one tag, `{{ … }}`, from end to end.
fn braced(s: &str) -> Option<&str> {
    let bytes = s.as_bytes();
    (s.starts_with("{{") && s.len() >= 4 && find_close(bytes, 2) == Some(s.len() - 2)).then(|| &s[2..s.len() - 2])
}

/// Splits a condition at its first comparison operator outside quotes and nested tags.
fn split_comparison(s: &str) -> Option<(&str, Cmp, &str)> {
    let bytes = s.as_bytes();
    let (mut depth, mut i) = (0usize, 0);
    while i < bytes.len() {
        match bytes[i] {
            quote @ (b'"' | b'\'') => i = after_quoted(bytes, i, quote)?,
            b'{' if bytes.get(i + 1) == Some(&b'{') => {
                depth += 1;
                i += 2;
            }
            b'}' if bytes.get(i + 1) == Some(&b'}') => {
                depth = depth.saturating_sub(1);
                i += 2;
            }
            _ if depth == 0 => {
                if let Some(&(op, cmp)) = COMPARATORS.iter().find(|(op, _)| bytes[i..].starts_with(op.as_bytes())) {
                    return Some((&s[..i], cmp, &s[i + op.len()..]));
                }
                i += 1;
            }
            _ => i += 1,
        }
    }
    None
}

/// One side of a condition: a nested tag, a quoted string, a number, or a variable (with attributes, if any).
fn parse_operand(s: &str, findings: &mut Findings) -> Expr {
    let s = s.trim();
    if let Some(inner) = braced(s) {
        // One level of nesting is all Zotero's templates use; deeper is refused rather than recursed into.
        if inner.contains("{{") {
            findings.push("tags nest only one level deep inside a condition".to_owned());
            return Expr::Nothing;
        }
        return parse_expr(inner, findings);
    }
    if s.is_empty() {
        findings.push("a comparison needs something on both sides".to_owned());
        return Expr::Nothing;
    }
    if is_number(s) {
        return Expr::Literal(s.to_owned());
    }
    parse_expr(s, findings)
}

/// A tag's body: a quoted string, or a variable name and its attributes.
pub(super) fn parse_expr(body: &str, findings: &mut Findings) -> Expr {
    let body = body.trim();
    if body.is_empty() {
        findings.push("the tag is empty; put a variable in it, e.g. {{ title }}, or remove it".to_owned());
        return Expr::Nothing;
    }
    if body.starts_with(['"', '\'']) {
        return match string_literal(body) {
            Some(text) => Expr::Literal(without_line_breaks(text)),
            None => {
                findings.push("a quoted string must be the whole tag, e.g. {{ \" - \" }}".to_owned());
                Expr::Nothing
            }
        };
    }
    let name_len = identifier_len(body);
    if name_len == 0 || !body[name_len..].chars().next().is_none_or(char::is_whitespace) {
        findings.push(
            "this is not a variable; a variable name is letters, digits, `_` and `-`, starting with a letter, \
             e.g. {{ title }}"
                .to_owned(),
        );
        return Expr::Nothing;
    }
    let name = hyphen_to_camel(&body[..name_len]);
    let attributes = parse_attributes(&body[name_len..], findings);
    Expr::Var(Box::new(Variable::new(&name, &attributes, findings)))
}

/// The contents of `s` when it is exactly one quoted string. Backslashes are ordinary characters, as in Zotero.
fn string_literal(s: &str) -> Option<&str> {
    let quote = s.chars().next()?;
    let inner = s.get(1..)?;
    let close = inner.find(quote)?;
    (close + 2 == s.len()).then(|| &inner[..close])
}

/// The length of the variable name `s` starts with (`^[A-Za-z_][A-Za-z0-9_-]*`), 0 if none.
fn identifier_len(s: &str) -> usize {
    let mut chars = s.char_indices();
    match chars.next() {
        Some((_, c)) if c.is_ascii_alphabetic() || c == '_' => {}
        _ => return 0,
    }
    chars.find(|&(_, c)| !(c.is_ascii_alphanumeric() || c == '_' || c == '-')).map_or(s.len(), |(i, _)| i)
}

/// `first-creator` → `firstCreator`, as Zotero reads names and attributes.
fn hyphen_to_camel(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut chars = name.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, chars.peek()) {
            ('-', Some(_)) => out.extend(chars.next().into_iter().flat_map(char::to_uppercase)),
            _ => out.push(c),
        }
    }
    out
}

/// `name="value"` pairs (single quotes too; no escapes inside). Text that is not an attribute is skipped and
/// reported.
fn parse_attributes(s: &str, findings: &mut Findings) -> Vec<(String, String)> {
    let mut attributes = Vec::new();
    let mut rest = s.trim_start();
    while !rest.is_empty() {
        match one_attribute(rest) {
            Some((name, value, after)) => {
                attributes.push((hyphen_to_camel(name), without_line_breaks(value)));
                rest = after.trim_start();
            }
            None => {
                let junk_end = rest.find(char::is_whitespace).unwrap_or(rest.len());
                findings.push(format!(
                    "`{}` is not an attribute; write attributes as name=\"value\"",
                    quote(&rest[..junk_end])
                ));
                rest = rest[junk_end..].trim_start();
            }
        }
    }
    attributes
}

/// The attribute `s` starts with: its name, its value and what follows it.
fn one_attribute(s: &str) -> Option<(&str, &str, &str)> {
    let name_end = s.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-')).unwrap_or(s.len());
    let name = &s[..name_end];
    let after_name = s[name_end..].trim_start();
    let value_part = after_name.trim_start_matches('=');
    if name.is_empty() || value_part.len() == after_name.len() {
        return None;
    }
    let value_part = value_part.trim_start();
    let quote = value_part.chars().next().filter(|&c| c == '"' || c == '\'')?;
    let close = value_part[1..].find(quote)? + 1;
    Some((name, &value_part[1..close], &value_part[close + 1..]))
}
