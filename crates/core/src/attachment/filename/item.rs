//! What a template is rendered from (an item's `data`, Zotero's creator summary) and the search budget of one
//! rendering.

use std::cell::Cell;

use serde_json::{Map, Value};

use super::problems::SEARCH_BUDGET;

/// What the item is rendered from, and what its rendering may still search.
pub(super) struct Ctx<'a> {
    pub(super) item: &'a Map<String, Value>,
    pub(super) creator_summary: Option<&'a str>,
    pub(super) budget: Budget,
}

impl<'a> Ctx<'a> {
    pub(super) fn new(item: &'a Map<String, Value>, creator_summary: Option<&'a str>) -> Self {
        Ctx { item, creator_summary, budget: Budget::new(SEARCH_BUDGET) }
    }
}

/// What the patterns of one rendering may still search, in characters times compiled bytes. A `Cell`, because
/// rendering reads the template and the item through shared references.
pub(super) struct Budget {
    left: Cell<usize>,
    spent: Cell<bool>,
}

impl Budget {
    pub(super) fn new(units: usize) -> Self {
        Budget { left: Cell::new(units), spent: Cell::new(false) }
    }

    /// Takes `units` from the budget; false (and the budget marked spent) when there are not that many left.
    pub(super) fn take(&self, units: usize) -> bool {
        if self.spent.get() {
            return false;
        }
        match self.left.get().checked_sub(units) {
            Some(left) => {
                self.left.set(left);
                true
            }
            None => {
                self.spent.set(true);
                false
            }
        }
    }

    /// Whether some search was refused, so the rendering is not what the template means.
    pub(super) fn spent(&self) -> bool {
        self.spent.get()
    }
}

/// A JSON string; anything else (absent, null, a number, an array, an object) is empty.
pub(super) fn text_of(value: Option<&Value>) -> &str {
    match value {
        Some(Value::String(s)) => s,
        _ => "",
    }
}
