//! Checking a manuscript's references against the library (`zotero_check_references`): what the
//! manuscript cites and where ([`cites`]), the entries of a formatted reference list ([`reflist`]), and the
//! forms a manuscript comes in ([`Format`]). No I/O: the tool looks the references up.

pub mod cites;
pub mod compare;
pub mod confidence;
pub mod reflist;
pub mod support;

#[cfg(test)]
mod hostile;

/// The form a manuscript's references are given in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// A `.bib`: BibTeX or BibLaTeX entries.
    Bibtex,
    /// LaTeX source citing with the `\cite` family.
    Latex,
    /// Pandoc Markdown citing with `[@key]`.
    Markdown,
    /// One identifier (DOI, arXiv id, ISBN, PMID) per line or between commas.
    Identifiers,
    /// A formatted reference list, one reference per entry (numbered or not).
    ReferenceList,
}

/// References one manuscript may have: a long thesis cites 300 to 1,000 works, the largest reviews a few
/// thousand. The BibTeX reader stops at the same number of entries.
pub const MAX_REFERENCES: usize = 5_000;
/// Keys cited in one manuscript's text, every citation counted: a thesis has a few thousand.
pub const MAX_CITATIONS: usize = 20_000;

/// A manuscript over one of the limits above: refused whole, before anything is looked up, since a check of
/// part of it would report the rest as missing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum TooLarge {
    #[error(
        "the manuscript has more than 5,000 references, the most one check reads: split it (a chapter or a section \
         at a time, or the reference list in parts) and check each part"
    )]
    References,
    #[error(
        "the text has more than 20,000 citations, the most one check reads: split it (a chapter or a section at a \
         time) and check each part"
    )]
    Citations,
    #[error(
        "the .bib has more than 5,000 entries, the most one check reads: give a .bib with only the entries the \
         manuscript cites (`bibtool -x manuscript.aux` extracts them)"
    )]
    Keys,
}

/// What [`Format::detect`] read to decide, handed on so that a call reads the text once.
#[derive(Debug)]
pub struct Detected {
    pub format: Format,
    /// The citations, for LaTeX and Markdown (or why they were not all read).
    pub citations: Option<Result<Vec<cites::Citation>, TooLarge>>,
}

impl Format {
    /// The form `text` is most likely in: entries (`@article{…`) make a `.bib`, `\cite` commands LaTeX, `[@key]`
    /// or `@key` citations Markdown, a text of nothing but identifiers a list of them, anything else a reference
    /// list.
    pub fn detect(text: &str) -> Self {
        Self::detect_reading(text).format
    }

    /// [`Format::detect`], with the citations it read to decide.
    pub fn detect_reading(text: &str) -> Detected {
        let bib_entries = text
            .lines()
            .filter(|l| {
                let l = l.trim_start();
                l.starts_with('@')
                    && l[1..].chars().take_while(char::is_ascii_alphabetic).count() > 1
                    && l.contains(['{', '('])
            })
            .count();
        if bib_entries > 0 && !text.contains("\\begin{document}") {
            return Detected { format: Self::Bibtex, citations: None };
        }
        let latex = cites::latex_citations(text);
        // Too many citations is still citations: the text is LaTeX, and the call says why it stops.
        if latex.as_ref().map_or(true, |found| !found.is_empty()) || text.contains("\\begin{document}") {
            return Detected { format: Self::Latex, citations: Some(latex) };
        }
        // Markdown needs a bracketed citation: only then are its citations read.
        if text.contains("[@") {
            let pandoc = cites::pandoc_citations(text);
            if pandoc.as_ref().map_or(true, |found| !found.is_empty()) {
                return Detected { format: Self::Markdown, citations: Some(pandoc) };
            }
        }
        // Every piece an identifier: the first piece that is not one decides, without reading the rest.
        let mut outcomes = crate::sources::detect_each(text).peekable();
        if outcomes.peek().is_some() && outcomes.all(|(_, found)| found.is_ok()) {
            return Detected { format: Self::Identifiers, citations: None };
        }
        Detected { format: Self::ReferenceList, citations: None }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_form_is_recognised() {
        assert_eq!(Format::detect("@article{a, title={T}}\n@book{b, title={U}}"), Format::Bibtex);
        assert_eq!(Format::detect("As shown \\citep{a}.\n"), Format::Latex);
        assert_eq!(Format::detect("As shown [@a; @b]."), Format::Markdown);
        assert_eq!(Format::detect("10.1038/nature12373\narXiv:1706.03762"), Format::Identifiers);
        assert_eq!(
            Format::detect("1. Smith J, Doe A. A title. Nature. 2020;580:1-5.\n2. Roe R. Another. Cell. 2019."),
            Format::ReferenceList
        );
    }
}
