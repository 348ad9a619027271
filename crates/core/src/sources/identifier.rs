//! Which DOI, arXiv id, ISBN, PubMed id or PMC id a piece of text names.
//!
//! Each kind has its own file: `doi`, `arxiv`, `isbn`, `pubmed` (PMIDs and PMCIDs); `link` reads URLs and `list`
//! splits a list. This file holds the types, the order in which the kinds are tried, and the trimming that every
//! kind shares.
//!
//! Where this differs from the TypeScript server, on purpose:
//! - an arXiv version (`v2`) is kept, where upstream drops it;
//! - a DOI keeps the case it was given in; [`Identifier::key`] lowercases it for comparison (upstream lowercases
//!   the DOI itself);
//! - PubMed ids and PMC ids are detected (upstream knows neither); a bare number is refused as ambiguous rather
//!   than taken for a PubMed id, except that 10 or 13 digits are read as an ISBN, as upstream does;
//! - an ISBN-13 must begin with 978 or 979 (other 13-digit codes with a valid check digit are EANs, not books),
//!   and an old-style arXiv id must name one of arXiv's archives of the time (`hep-th`, `math`, …), where
//!   upstream takes any word before `/` and seven digits;
//! - trailing `)`, `]`, `}`, `>` and quotes are trimmed only when nothing in the text opens them, so a DOI that
//!   ends in a balanced `(…)` keeps it (upstream always strips `)` and `]`);
//! - a DOI found inside other text is taken only when it is the only one there (upstream takes the first);
//! - nothing is silently `null`: a failure is an [`IdentifierError`] saying what is accepted, and a URL that
//!   carries no identifier is an error rather than upstream's `{kind: "url"}`, which its import refuses anyway.

mod arxiv;
mod doi;
mod isbn;
mod link;
mod list;
mod pubmed;
#[cfg(test)]
mod tests;

use std::fmt;

pub use self::list::{detect_all, detect_each};

/// A publication identifier, in canonical form (see [`Identifier`]'s `Display`: `10.1038/…`, `arXiv:2301.01234v2`,
/// `ISBN 9780306406157`, `PMID 12345678`, `PMC1234567`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Identifier {
    /// A DOI, `10.<registrant>/<suffix>`, in the case it was given: DOIs are case-insensitive, so compare them
    /// with [`Identifier::key`], but a resolver or a person may still prefer the case the publisher uses.
    Doi(String),
    /// An arXiv id: `2301.01234` (new style, since April 2007) or `hep-th/9901001` / `math.GT/0309136` (old
    /// style), and the version when one was given (`v2` → `Some(2)`); without one, arXiv means the latest.
    Arxiv { id: String, version: Option<u32> },
    /// An ISBN as digits (the last of an ISBN-10 may be `X`). Every ISBN has an ISBN-13 form; the ISBN-10 form
    /// exists only for ISBN-13s beginning with 978, and is filled in whichever of the two was given.
    Isbn { isbn13: String, isbn10: Option<String> },
    /// A PubMed id: digits, without leading zeros.
    Pmid(String),
    /// A PubMed Central id, with its `PMC` prefix: `PMC1234567`.
    Pmcid(String),
}

impl Identifier {
    /// The kind's name: `doi`, `arxiv`, `isbn`, `pmid` or `pmcid` (the first three as upstream names them).
    pub fn kind(&self) -> &'static str {
        match self {
            Identifier::Doi(_) => "doi",
            Identifier::Arxiv { .. } => "arxiv",
            Identifier::Isbn { .. } => "isbn",
            Identifier::Pmid(_) => "pmid",
            Identifier::Pmcid(_) => "pmcid",
        }
    }

    /// The form to compare identifiers by: the canonical form, with a DOI lowercased (the DOI Handbook makes DOIs
    /// case-insensitive, and CrossRef reports them lowercased). An ISBN given as ISBN-10 and the same book's
    /// ISBN-13 have the same key; an arXiv id with a version and one without do not.
    pub fn key(&self) -> String {
        match self {
            Identifier::Doi(doi) => doi.to_lowercase(),
            other => other.to_string(),
        }
    }
}

impl fmt::Display for Identifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Identifier::Doi(doi) => f.write_str(doi),
            Identifier::Arxiv { id, version: Some(version) } => write!(f, "arXiv:{id}v{version}"),
            Identifier::Arxiv { id, version: None } => write!(f, "arXiv:{id}"),
            Identifier::Isbn { isbn13, .. } => write!(f, "ISBN {isbn13}"),
            Identifier::Pmid(pmid) => write!(f, "PMID {pmid}"),
            Identifier::Pmcid(pmcid) => f.write_str(pmcid),
        }
    }
}

/// What every "not recognised" message ends with: each accepted form, with one example.
const ACCEPTED: &str = "Accepted: a DOI (10.1038/s41586-020-2649-2), an arXiv id (arXiv:2301.01234v2), an ISBN \
    (978-0-306-40615-7), a PubMed id with its prefix (PMID: 12345678), a PMC id (PMC1234567), or a URL that \
    carries one of them (https://doi.org/10.1038/s41586-020-2649-2).";

/// Why a piece of text is not an identifier. Each message names the input and says what would be accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdentifierError {
    /// Nothing but whitespace and punctuation.
    #[error("No identifier was given. {accepted}", accepted = ACCEPTED)]
    Empty,
    /// Text that has the shape of no identifier.
    #[error("`{input}` is not a DOI, arXiv id, ISBN, PubMed id or PMC id. {accepted}", accepted = ACCEPTED)]
    Unrecognised { input: String },
    /// Digits alone (other than an ISBN's 10 or 13): a PubMed id, a PMC id, or anything else.
    #[error(
        "`{input}` is a bare number, which could be a PubMed id, a PMC id or something else: write `PMID: {input}` \
         for a PubMed id or `PMC{input}` for a PMC id. {accepted}",
        accepted = ACCEPTED
    )]
    BareNumber { input: String },
    /// A prefix (`doi:`, `arXiv:`, `ISBN`, `PMID:`, `PMCID:`) or a site (doi.org, arxiv.org, PubMed) says which
    /// kind is meant, but what follows is not one.
    #[error("`{input}` is not a valid {kind}: {form}.")]
    Malformed { input: String, kind: &'static str, form: &'static str },
    /// An ISBN whose last digit does not match the digits before it: usually a typo.
    #[error(
        "`{input}` is not a valid {kind}: its check digit (the last) is {found}, but the digits before it need \
         {expected} ({corrected}); check the number for a typo."
    )]
    IsbnCheckDigit { input: String, kind: &'static str, found: char, expected: char, corrected: String },
    /// Text that starts like a URL but cannot be parsed as one.
    #[error("`{input}` is not a valid URL ({reason}). {accepted}", accepted = ACCEPTED)]
    InvalidUrl { input: String, reason: String },
    /// A URL with no DOI, arXiv id, PubMed id or PMC id in it (a publisher page that does not show its DOI).
    #[error(
        "The URL `{input}` carries no DOI, arXiv id, PubMed id or PMC id; give the paper's identifier or its \
         doi.org, arxiv.org or PubMed link instead. {accepted}",
        accepted = ACCEPTED
    )]
    UrlWithoutIdentifier { input: String },
}

impl IdentifierError {
    fn malformed(input: &str, kind: &'static str, form: &'static str) -> Self {
        IdentifierError::Malformed { input: input.to_owned(), kind, form }
    }
}

/// The identifier `input` names.
///
/// Surrounding whitespace, sentence punctuation after it (`.`, `,`, `;`, `:`, `!`, `?`) and brackets or quotes
/// around it are ignored. Then, in this order:
/// 1. an `http(s)://` URL, or one of the known hosts written without a scheme (`doi.org/10.…`): a doi.org,
///    arxiv.org (`/abs/`, `/pdf/`, `/html/`, with or without `.pdf`), PubMed or PMC link, or any other URL whose
///    path (or a query value) holds a DOI — `https://link.springer.com/article/10.1007/s00285-020-01523-2`;
///    percent-encoding is decoded;
/// 2. a prefix, case-insensitive, followed by `:`, whitespace or directly the identifier: `doi:`, `arXiv:`,
///    `ISBN` (also `ISBN-10:`, `ISBN-13:`), `PMCID:`, `PMID:`; the prefix commits to its kind, so what follows
///    must be one;
/// 3. without a prefix: a DOI (`10.` + 4 to 9 digits + `/` + a suffix without whitespace), an arXiv id
///    (`2301.01234`, `2301.01234v2`, `hep-th/9901001`, `math.GT/0309136`, optionally followed by its category
///    as arXiv prints it, `[cs.CL]`), `PMC` + digits, or 10 or 13 digits (hyphens and spaces allowed, a final
///    `X` for ISBN-10) read as an ISBN, check digit verified;
/// 4. when the text has none of these shapes, a DOI inside it (a pasted reference), if it is the only DOI there.
///
/// Digits alone are never a PubMed id: a number could be a PubMed id, a PMC id or a page number, so PubMed ids
/// need their prefix (`PMID: 12345678`) or their PubMed link.
pub fn detect(input: &str) -> Result<Identifier, IdentifierError> {
    let text = tidy(input);
    match detect_exact(text) {
        // Only text of no known shape is searched: after a prefix or in a link, a DOI cut short by a space or a
        // bad URL would be a different DOI, not the one meant.
        Err(error @ IdentifierError::Unrecognised { .. }) => doi::find_unique(text).map(Identifier::Doi).ok_or(error),
        outcome => outcome,
    }
}

/// Steps 1–3 of [`detect`]: `text` (already tidied) must be one identifier and nothing else. [`detect_all`]
/// relies on that to tell one identifier with spaces in it (`ISBN 0 306 40615 2`) from several.
fn detect_exact(text: &str) -> Result<Identifier, IdentifierError> {
    if text.is_empty() {
        return Err(IdentifierError::Empty);
    }
    if link::is_link(text) {
        return link::detect(text);
    }
    if let Some(body) = after_label(text, "doi", &[':']) {
        // Journals now print `DOI: https://doi.org/10.…`, the link where the DOI used to be.
        if link::is_link(body) {
            return link::detect(body);
        }
        return doi::parse(body).map(Identifier::Doi).ok_or_else(|| doi::malformed(text));
    }
    if let Some(body) = after_label(text, "arxiv", &[':', '/']) {
        return arxiv::parse(body).ok_or_else(|| arxiv::malformed(text));
    }
    if let Some(body) = isbn::after_label(text) {
        return isbn::parse(text, body);
    }
    if let Some(body) = after_label(text, "pmcid", &[':']) {
        return pubmed::pmcid_after_label(text, body);
    }
    if let Some(body) = after_label(text, "pmid", &[':']) {
        return pubmed::pmid_after_label(text, body);
    }
    detect_unlabelled(text)
}

/// Step 3 of [`detect`]: an identifier without a prefix.
fn detect_unlabelled(text: &str) -> Result<Identifier, IdentifierError> {
    if let Some(doi) = doi::parse(text) {
        return Ok(Identifier::Doi(doi));
    }
    if let Some(arxiv) = arxiv::parse(text) {
        return Ok(arxiv);
    }
    if let Some(pmcid) = pubmed::pmcid(text) {
        return Ok(pmcid);
    }
    if isbn::looks_like(text) {
        return isbn::parse(text, text);
    }
    if text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(IdentifierError::BareNumber { input: text.to_owned() });
    }
    Err(IdentifierError::Unrecognised { input: text.to_owned() })
}

/// What follows `label` (ASCII case-insensitive) at the start of `text`, without the separators between them:
/// whitespace, `:` and `extra`. The label counts only when a separator or a digit follows it, so that `doing`
/// is not `doi` + `ng`.
fn after_label<'a>(text: &'a str, label: &str, separators: &[char]) -> Option<&'a str> {
    let rest = strip_prefix_ignore_case(text, label)?;
    let body = rest.trim_start_matches(|c: char| c.is_whitespace() || separators.contains(&c));
    let separated = body.len() < rest.len() || body.starts_with(|c: char| c.is_ascii_digit());
    separated.then_some(body)
}

/// `text` without `prefix`, compared ASCII-case-insensitively.
fn strip_prefix_ignore_case<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    let head = text.get(..prefix.len())?;
    if head.eq_ignore_ascii_case(prefix) {
        text.get(prefix.len()..)
    } else {
        None
    }
}

/// Whether `text` is all ASCII digits, and at least one.
fn all_digits(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit())
}

/// Brackets and quotes, as (opening, closing): they may wrap an identifier, or close the sentence it ends.
const PAIRS: &[(char, char)] = &[
    ('(', ')'),
    ('[', ']'),
    ('{', '}'),
    ('<', '>'),
    ('"', '"'),
    ('\'', '\''),
    ('\u{201c}', '\u{201d}'),
    ('\u{2018}', '\u{2019}'),
];

/// Sentence punctuation: a DOI may contain these, but one cited at the end of a sentence is followed by them far
/// more often than it ends with them (upstream strips `.`, `,`, `;` the same way).
const TRAILING: &[char] = &['.', ',', ';', ':', '!', '?'];

/// `text` trimmed of whitespace, of punctuation after it and of brackets or quotes around it, repeatedly, so
/// that `<https://doi.org/10.1000/abc>.` and `("10.1000/abc")` both leave the bare identifier.
///
/// Each round used to count the brackets and scan for balance again, so a long text ending in `. . . .` or
/// wrapped in many brackets took quadratic time; the counts are now kept as characters are dropped, and a
/// pair's balance is read off the brackets' partners, found once.
fn tidy(input: &str) -> &str {
    let mut text = input.trim();
    let mut counts = PairCounts::of(text);
    let mut partners: Option<Partners> = None;
    loop {
        let trimmed = trim_end_counted(text, &mut counts).trim_end();
        let next = unwrap_pair(input, trimmed, &mut counts, &mut partners).trim();
        if next.len() == text.len() {
            return text;
        }
        text = next;
    }
}

/// `text` without trailing sentence punctuation and without closing brackets or quotes that nothing in it opens.
/// A balanced closing bracket stays: a DOI such as `10.1000/xyz(1)` ends with its own `)`.
fn trim_end(text: &str) -> &str {
    trim_end_counted(text, &mut PairCounts::of(text))
}

/// [`trim_end`] with the text's brackets and quotes counted already (and kept counted as they are dropped):
/// counting them again for every character dropped made a text ending in a long run of `)` quadratic.
fn trim_end_counted<'t>(text: &'t str, counts: &mut PairCounts) -> &'t str {
    let mut text = text;
    while let Some(last) = text.chars().next_back() {
        if !TRAILING.contains(&last) && !counts.closes_nothing(last) {
            break;
        }
        let Some(shorter) = text.strip_suffix(last) else { break };
        counts.drop_one(last);
        text = shorter;
    }
    text
}

/// How many of each bracket and quote of [`PAIRS`] a text holds.
struct PairCounts([usize; 2 * PAIRS.len()]);

impl PairCounts {
    fn of(text: &str) -> Self {
        let mut counts = PairCounts([0; 2 * PAIRS.len()]);
        text.chars().for_each(|c| counts.add(c, 1));
        counts
    }

    fn add(&mut self, c: char, step: isize) {
        for (at, &(open, close)) in PAIRS.iter().enumerate() {
            for (slot, mark) in [(2 * at, open), (2 * at + 1, close)] {
                if c == mark {
                    self.0[slot] = self.0[slot].saturating_add_signed(step);
                }
            }
        }
    }

    fn drop_one(&mut self, c: char) {
        self.add(c, -1);
    }

    /// Whether `last`, the last character of the text counted, is a closing bracket or quote with no opening one
    /// in it.
    fn closes_nothing(&self, last: char) -> bool {
        let Some(at) = PAIRS.iter().position(|&(_, close)| close == last) else { return false };
        let (opens, closes) = (self.0[2 * at], self.0[2 * at + 1]);
        if PAIRS[at].0 == PAIRS[at].1 {
            closes % 2 == 1
        } else {
            closes > opens
        }
    }
}

/// `text` (a part of `input`) without one pair of brackets or quotes around it, when the pair belongs
/// together: `(a)(b)` starts and ends with brackets that do not. `counts` are `text`'s, and stay so.
fn unwrap_pair<'t>(input: &'t str, text: &'t str, counts: &mut PairCounts, partners: &mut Option<Partners>) -> &'t str {
    for (at, &(open, close)) in PAIRS.iter().enumerate() {
        let Some(inner) = text.strip_prefix(open).and_then(|rest| rest.strip_suffix(close)) else { continue };
        let together = if open == close {
            // A quote pair belongs together when no quote of its kind is between.
            counts.0[2 * at + 1] == 2
        } else {
            // A bracket pair belongs together when the closing one is the opening one's partner.
            let start = offset_in(input, text);
            let partners = partners.get_or_insert_with(|| Partners::of(input));
            partners.of_open(start) == Some(start + text.len() - close.len_utf8())
        };
        if together {
            counts.drop_one(open);
            counts.drop_one(close);
            return inner;
        }
    }
    text
}

/// Where `part`, a slice of `whole`, begins in it.
fn offset_in(whole: &str, part: &str) -> usize {
    (part.as_ptr() as usize).saturating_sub(whole.as_ptr() as usize)
}

/// Every opening bracket of [`PAIRS`] (not the quotes that open and close alike) with its partner, the closing
/// one that balances it, found with a stack per kind in one pass.
struct Partners {
    /// (offset of the opening bracket, offset of its partner), by the first.
    pairs: Vec<(usize, usize)>,
}

impl Partners {
    fn of(text: &str) -> Self {
        let mut stacks: Vec<Vec<usize>> = vec![Vec::new(); PAIRS.len()];
        let mut pairs = Vec::new();
        for (at, c) in text.char_indices() {
            for (kind, &(open, close)) in PAIRS.iter().enumerate().filter(|(_, (open, close))| open != close) {
                if c == open {
                    stacks[kind].push(at);
                } else if c == close {
                    if let Some(opened) = stacks[kind].pop() {
                        pairs.push((opened, at));
                    }
                }
            }
        }
        crate::sort::sort(&mut pairs);
        Partners { pairs }
    }

    fn of_open(&self, open: usize) -> Option<usize> {
        let found = self.pairs.binary_search_by_key(&open, |&(opened, _)| opened).ok()?;
        Some(self.pairs[found].1)
    }
}
