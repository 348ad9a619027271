//! Checking a manuscript's references against the library (`zotero_check_references`, issue 31): what the
//! manuscript cites and where ([`cites`]), the entries of a formatted reference list ([`reflist`]), and the
//! forms a manuscript comes in ([`Format`]). No I/O: the tool looks the references up.

pub mod cites;
pub mod compare;
pub mod confidence;
pub mod reflist;
pub mod support;

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

impl Format {
    /// The form `text` is most likely in: entries (`@article{…`) make a `.bib`, `\cite` commands LaTeX, `[@key]`
    /// or `@key` citations Markdown, a text of nothing but identifiers a list of them, anything else a reference
    /// list.
    pub fn detect(text: &str) -> Self {
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
            return Self::Bibtex;
        }
        if !cites::latex_citations(text).is_empty() || text.contains("\\begin{document}") {
            return Self::Latex;
        }
        if !cites::pandoc_citations(text).is_empty() && text.contains("[@") {
            return Self::Markdown;
        }
        let outcomes = crate::sources::detect_all(text);
        if !outcomes.is_empty() && outcomes.iter().all(|(_, found)| found.is_ok()) {
            return Self::Identifiers;
        }
        Self::ReferenceList
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
