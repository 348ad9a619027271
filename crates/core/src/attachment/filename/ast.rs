//! A parsed template: its tokens, the expressions they render and the conditions of its `if` blocks.

use super::variables::Variable;

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
