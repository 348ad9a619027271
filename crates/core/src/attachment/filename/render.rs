//! Rendering a parsed template for an item: the branch of each `if` block that holds, every tag evaluated, and
//! conditions compared as Zotero compares them.

use std::cmp::Ordering;

use super::ast::{Cmp, Condition, Expr, Token};
use super::item::Ctx;
use super::names::clean_tags;
use super::scan::is_number;

/// One `if` block being rendered.
struct Level {
    /// Whether the branch being rendered is the one taken.
    active: bool,
    /// Whether a branch of this block has been taken already, so later ones are not.
    taken: bool,
    /// Whether the block itself is inside a branch taken.
    parent_active: bool,
}

/// The template's tokens rendered for the item, HTML tags removed and trimmed.
pub(super) fn render_tokens(tokens: &[Token], ctx: &Ctx<'_>) -> String {
    let mut out = String::new();
    let mut levels: Vec<Level> = Vec::new();
    for token in tokens {
        let active = levels.last().is_none_or(|l| l.active);
        match token {
            Token::Text(text) if active => out.push_str(text),
            Token::Output(expr) if active => out.push_str(&expr.eval(ctx)),
            Token::Text(_) | Token::Output(_) => {}
            Token::If(cond) => {
                // The condition is not evaluated inside a branch not taken.
                let now = active && cond.holds(ctx);
                levels.push(Level { active: now, taken: now, parent_active: active });
            }
            Token::ElseIf(cond) => {
                if let Some(level) = levels.last_mut() {
                    level.active = !level.taken && level.parent_active && cond.holds(ctx);
                    level.taken |= level.active;
                }
            }
            Token::Else => {
                if let Some(level) = levels.last_mut() {
                    level.active = !level.taken && level.parent_active;
                    level.taken = true;
                }
            }
            Token::EndIf => {
                levels.pop();
            }
        }
    }
    clean_tags(&out).trim().to_owned()
}

impl Expr {
    fn eval(&self, ctx: &Ctx<'_>) -> String {
        match self {
            Expr::Literal(text) => text.clone(),
            Expr::Var(var) => var.eval(ctx),
            Expr::Nothing => String::new(),
        }
    }
}

impl Condition {
    fn holds(&self, ctx: &Ctx<'_>) -> bool {
        match self {
            Condition::Truthy(expr) => !expr.eval(ctx).is_empty(),
            Condition::Compare(left, cmp, right) => cmp.holds(compare(&left.eval(ctx), &right.eval(ctx))),
        }
    }
}

impl Cmp {
    fn holds(self, ordering: Option<Ordering>) -> bool {
        match self {
            Cmp::Eq => ordering == Some(Ordering::Equal),
            Cmp::Ne => ordering != Some(Ordering::Equal),
            Cmp::Le => matches!(ordering, Some(Ordering::Less | Ordering::Equal)),
            Cmp::Ge => matches!(ordering, Some(Ordering::Greater | Ordering::Equal)),
            Cmp::Lt => ordering == Some(Ordering::Less),
            Cmp::Gt => ordering == Some(Ordering::Greater),
        }
    }
}

/// Zotero compares numbers as numbers and anything else as text, ignoring case.
fn compare(left: &str, right: &str) -> Option<Ordering> {
    let (l, r) = (left.trim(), right.trim());
    if is_number(l) && is_number(r) {
        if let (Ok(a), Ok(b)) = (l.parse::<f64>(), r.parse::<f64>()) {
            return a.partial_cmp(&b);
        }
    }
    Some(left.to_lowercase().cmp(&right.to_lowercase()))
}
