//! The Web API's search syntax, read as Zotero reads it: the words of `q`, and the sets of `tag` and `itemType`.

/// One `tag` or `itemType` expression: `-` before it excludes, ` || ` between values takes any of them, `\-` is
/// a value starting with a dash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TermSet {
    pub negated: bool,
    pub values: Vec<String>,
}

impl TermSet {
    /// The set an expression stands for; `None` for a blank one, which Zotero ignores.
    pub fn parse(expression: &str) -> Option<Self> {
        let expression = expression.trim();
        if expression.is_empty() {
            return None;
        }
        let (negated, rest) = match expression.strip_prefix('-') {
            Some(rest) => (true, rest),
            None if expression.starts_with("\\-") => (false, &expression[1..]),
            None => (false, expression),
        };
        Some(Self { negated, values: split_or(rest) })
    }
}

/// Splits on `||` with whitespace on both sides, as Zotero's `/\s+\|\|\s+/`.
fn split_or(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    loop {
        let found = rest.match_indices("||").find(|(at, _)| {
            let before = rest[..*at].chars().next_back().is_some_and(char::is_whitespace);
            let after = rest[at + 2..].chars().next().is_some_and(char::is_whitespace);
            before && after
        });
        match found {
            Some((at, _)) => {
                out.push(rest[..at].trim_end().to_owned());
                rest = rest[at + 2..].trim_start();
            }
            None => {
                out.push(rest.to_owned());
                return out;
            }
        }
    }
}

/// The words of a quick search: split at whitespace, a double-quoted phrase kept whole. Each must match.
pub fn words(q: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = q.chars();
    let mut current = String::new();
    while let Some(c) = chars.next() {
        if c == '"' {
            let phrase: String = chars.by_ref().take_while(|&c| c != '"').collect();
            if !current.is_empty() {
                out.push(std::mem::take(&mut current));
            }
            if !phrase.is_empty() {
                out.push(phrase);
            }
        } else if c.is_whitespace() {
            if !current.is_empty() {
                out.push(std::mem::take(&mut current));
            }
        } else {
            current.push(c);
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_sets_as_zotero_does() {
        let set = TermSet::parse(" -a || b c ").expect("a set");
        assert!(set.negated);
        assert_eq!(set.values, ["a", "b c"]);
        assert_eq!(TermSet::parse("\\-x").map(|s| (s.negated, s.values)), Some((false, vec!["-x".to_owned()])));
        assert_eq!(TermSet::parse("a||b").map(|s| s.values), Some(vec!["a||b".to_owned()]));
        assert_eq!(TermSet::parse("  "), None);
    }

    #[test]
    fn splits_words_and_keeps_phrases() {
        assert_eq!(words(r#"deep "neural nets" 2020"#), ["deep", "neural nets", "2020"]);
        assert_eq!(words(r#"a"b c"d"#), ["a", "b c", "d"]);
        assert_eq!(words(r#""unclosed phrase"#), ["unclosed phrase"]);
        assert!(words(r#" "" "#).is_empty());
    }
}
