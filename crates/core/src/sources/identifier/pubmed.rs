//! PubMed ids (PMIDs) and PubMed Central ids (PMCIDs).
//!
//! A PMID is only digits, and so is much else (page numbers, years, other databases' ids), so digits alone are
//! never taken for one: a PMID needs its prefix (`PMID: 12345678`) or its PubMed link. A PMCID carries its own
//! prefix, `PMC1234567`, and is recognised bare.

use super::{all_digits, strip_prefix_ignore_case, Identifier, IdentifierError};

const PMID_KIND: &str = "PubMed id";
const PMID_FORM: &str = "a PubMed id is up to 9 digits after `PMID:`, e.g. PMID: 12345678";
const PMCID_KIND: &str = "PMC id";
const PMCID_FORM: &str = "a PMC id is `PMC` and up to 9 digits, e.g. PMC1234567";

/// What follows a `PMID:` prefix, as a PMID.
pub(super) fn pmid_after_label(input: &str, body: &str) -> Result<Identifier, IdentifierError> {
    pmid(body).ok_or_else(|| pmid_malformed(input))
}

/// `text` as a PMID, when it is one: digits alone, as in a PubMed link.
pub(super) fn pmid(text: &str) -> Option<Identifier> {
    number(text).map(Identifier::Pmid)
}

/// The error for text that a `PMID:` prefix or a PubMed link says is a PMID.
pub(super) fn pmid_malformed(input: &str) -> IdentifierError {
    IdentifierError::malformed(input, PMID_KIND, PMID_FORM)
}

/// `text` as a PMCID, when it is `PMC` and digits (any case).
pub(super) fn pmcid(text: &str) -> Option<Identifier> {
    strip_prefix_ignore_case(text, "pmc").and_then(number).map(|digits| Identifier::Pmcid(format!("PMC{digits}")))
}

/// What follows a `PMCID:` prefix, as a PMCID: `PMC1234567`, or the digits alone (the prefix says what they are).
pub(super) fn pmcid_after_label(input: &str, body: &str) -> Result<Identifier, IdentifierError> {
    pmcid(body)
        .or_else(|| number(body).map(|digits| Identifier::Pmcid(format!("PMC{digits}"))))
        .ok_or_else(|| pmcid_malformed(input))
}

/// The error for text that a `PMCID:` prefix or a PMC link says is a PMCID.
pub(super) fn pmcid_malformed(input: &str) -> IdentifierError {
    IdentifierError::malformed(input, PMCID_KIND, PMCID_FORM)
}

/// 1 to 9 digits, not all zeros, without leading zeros (so `PMID: 0123` and `PMID: 123` are the same id).
/// PMIDs and PMCIDs are both below 100 million today; 9 digits leave room without taking in long numbers.
fn number(text: &str) -> Option<String> {
    let significant = text.trim_start_matches('0');
    let valid = all_digits(text) && (1..=9).contains(&significant.len());
    valid.then(|| significant.to_owned())
}
