//! arXiv ids: `YYMM.NNNN(N)` since April 2007, `archive(.Class)/YYMMNNN` before, each with an optional `vN`.
//!
//! The month is not checked (upstream's verified example `2017.1234` is an arXiv id), nor whether the number has
//! the 4 digits of 2007–2014 or the 5 of later years: arXiv answers for an id that does not exist, and a
//! stricter reading would only refuse ids people mistype in harmless ways.

use super::{all_digits, Identifier, IdentifierError};

const KIND: &str = "arXiv id";
const FORM: &str =
    "an arXiv id is YYMM.NNNNN with an optional version (2301.01234v2) or, before 2007, archive/YYMMNNN (hep-th/9901001)";

/// arXiv's archives while old-style ids were issued (1991 to March 2007): an old-style id names one of them, so
/// that any `word/1234567` is not taken for one.
const OLD_ARCHIVES: &[&str] = &[
    "acc-phys", "adap-org", "alg-geom", "ao-sci", "astro-ph", "atom-ph", "bayes-an", "chao-dyn", "chem-ph", "cmp-lg",
    "comp-gas", "cond-mat", "cs", "dg-ga", "funct-an", "gr-qc", "hep-ex", "hep-lat", "hep-ph", "hep-th", "math",
    "math-ph", "mtrl-th", "nlin", "nucl-ex", "nucl-th", "patt-sol", "physics", "plasm-ph", "q-alg", "q-bio",
    "quant-ph", "solv-int", "supr-con",
];

/// `text` as an arXiv id, when all of it is one (a category after it, `2301.01234 [cs.CL]`, is allowed).
pub(super) fn parse(text: &str) -> Option<Identifier> {
    let (base, version) = split_version(without_category(text))?;
    let id = new_style(base).or_else(|| old_style(base))?;
    Some(Identifier::Arxiv { id, version })
}

/// The error for text that an `arXiv:` prefix or an arxiv.org link says is an arXiv id.
pub(super) fn malformed(input: &str) -> IdentifierError {
    IdentifierError::malformed(input, KIND, FORM)
}

/// `text` without the primary category arXiv prints after an id in listings and citations (`[cs.CL]`).
fn without_category(text: &str) -> &str {
    let Some((id, category)) = text.strip_suffix(']').and_then(|head| head.rsplit_once('[')) else { return text };
    let is_category =
        !category.is_empty() && category.chars().all(|c| c.is_ascii_alphabetic() || matches!(c, '.' | '-'));
    if is_category && id.ends_with(char::is_whitespace) {
        id.trim_end()
    } else {
        text
    }
}

/// The id and its version: `2301.01234v2` → (`2301.01234`, 2). `None` for a version that is not one (`v0`, or
/// too large to be real).
fn split_version(text: &str) -> Option<(&str, Option<u32>)> {
    let Some(at) = text.rfind(['v', 'V']) else { return Some((text, None)) };
    let (base, tail) = text.split_at(at);
    let digits = tail.get(1..)?;
    if !all_digits(digits) {
        // A `v` inside an archive name (`solv-int/9901001`), not a version.
        return Some((text, None));
    }
    let version = digits.parse::<u32>().ok().filter(|&version| version > 0)?;
    Some((base, Some(version)))
}

/// A new-style id, `YYMM.NNNN` or `YYMM.NNNNN`.
fn new_style(text: &str) -> Option<String> {
    let (month, number) = text.split_once('.')?;
    let valid = month.len() == 4 && all_digits(month) && (4..=5).contains(&number.len()) && all_digits(number);
    valid.then(|| text.to_owned())
}

/// An old-style id, `archive/YYMMNNN` or `archive.Class/YYMMNNN`, in arXiv's case: the archive lowercase, a
/// two-letter class (`math.GT`, `cs.AI`) uppercase, a longer one (`cond-mat.str-el`) lowercase.
fn old_style(text: &str) -> Option<String> {
    let (name, number) = text.split_once('/')?;
    if number.len() != 7 || !all_digits(number) {
        return None;
    }
    let (archive, class) = match name.split_once('.') {
        Some((archive, class)) => (archive, Some(class)),
        None => (name, None),
    };
    let archive = archive.to_ascii_lowercase();
    if !OLD_ARCHIVES.contains(&archive.as_str()) {
        return None;
    }
    match class {
        None => Some(format!("{archive}/{number}")),
        Some(class) => Some(format!("{archive}.{}/{number}", subject_class(class)?)),
    }
}

/// A subject class in arXiv's case, or `None` when it is not a word.
fn subject_class(class: &str) -> Option<String> {
    if class.is_empty() || !class.chars().all(|c| c.is_ascii_alphabetic() || c == '-') {
        return None;
    }
    Some(if class.len() == 2 { class.to_ascii_uppercase() } else { class.to_ascii_lowercase() })
}
