//! How a condition compares text: Zotero's `LIKE` and `= … COLLATE NOCASE` ignore case and nothing else, so both
//! sides are lowercased and compared as they are (accents count, as in Zotero 9's search).

/// How a text condition compares (the negated operators are the same comparisons, negated by the rule).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum TextOp {
    /// `is` / `isNot`: the whole value, ignoring case.
    Is,
    /// `contains` / `doesNotContain`: anywhere in the value.
    Contains,
    /// `beginsWith`.
    BeginsWith,
}

/// The form both sides are compared in.
pub(super) fn fold(text: &str) -> String {
    text.to_lowercase()
}

/// Whether `value` matches `wanted`, which is already folded. An empty stored value never matches: Zotero keeps
/// no row for an empty field, so there is nothing to compare.
pub(super) fn matches(op: TextOp, value: &str, wanted: &str) -> bool {
    if value.is_empty() {
        return false;
    }
    let value = fold(value);
    match op {
        TextOp::Is => value == wanted,
        TextOp::Contains => value.contains(wanted),
        TextOp::BeginsWith => value.starts_with(wanted),
    }
}

/// Whether full text contains `phrase` (folded) where a word starts: Zotero finds full text through its word
/// index, by words and word beginnings ("fold" finds "folding", "olding" finds nothing), then checks a phrase
/// against the text. A phrase that does not start with a letter or digit may start anywhere.
pub(super) fn contains_from_word_start(text: &str, phrase: &str) -> bool {
    if phrase.is_empty() {
        return false;
    }
    let text = fold(text);
    let needs_boundary = phrase.chars().next().is_some_and(char::is_alphanumeric);
    text.match_indices(phrase)
        .any(|(at, _)| !needs_boundary || !text[..at].chars().next_back().is_some_and(char::is_alphanumeric))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compares_ignoring_case_only() {
        assert!(matches(TextOp::Is, "Heat Stress", "heat stress"));
        assert!(!matches(TextOp::Is, "Heat Stress ", "heat stress"));
        assert!(matches(TextOp::Contains, "Vapour pressure", "pressure"));
        assert!(matches(TextOp::BeginsWith, "Vapour pressure", "vap"));
        assert!(!matches(TextOp::Contains, "séance", "seance"));
        assert!(matches(TextOp::Is, "ÉCOLE", "école"));
        assert!(!matches(TextOp::Contains, "", ""));
    }

    #[test]
    fn full_text_matches_from_the_start_of_a_word() {
        let text = "Stochastic Gradient Annealing, refolding (in vitro)";
        assert!(contains_from_word_start(text, "gradient anneal"));
        assert!(!contains_from_word_start(text, "fold"));
        assert!(contains_from_word_start(text, "refold"));
        assert!(contains_from_word_start(text, "(in"));
        assert!(contains_from_word_start(text, ", refolding"));
        assert!(!contains_from_word_start(text, "radient"));
        assert!(!contains_from_word_start(text, ""));
    }
}
