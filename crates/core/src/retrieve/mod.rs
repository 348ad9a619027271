//! Evidence for a question: the passages of an item (its annotations, notes, abstract and full text) that best
//! answer a query, ranked with BM25 ([`bm25`]) over words folded as Zotero folds them ([`fold`]), full text cut
//! into passages at sentence ends ([`chunk`]). A passage is given whole or not at all: a budget leaves a passage
//! out, it never shortens one, so what a reader quotes is what the source says.

pub mod bm25;
pub mod chunk;
pub mod fold;

use crate::platform::Decompose;

/// Where a passage comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SourceKind {
    /// A highlight, underline or note the reader made on a PDF or EPUB, with its comment.
    Annotation,
    /// A note (child or standalone).
    Note,
    /// The item's abstract.
    Abstract,
    /// An attachment's text.
    FullText,
}

impl SourceKind {
    pub const ALL: [SourceKind; 4] = [Self::Annotation, Self::Note, Self::Abstract, Self::FullText];

    /// The name callers use (`annotation`, `note`, `abstract`, `fulltext`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Annotation => "annotation",
            Self::Note => "note",
            Self::Abstract => "abstract",
            Self::FullText => "fulltext",
        }
    }
}

/// One passage that may answer the query.
#[derive(Debug, Clone, PartialEq)]
pub struct Passage {
    /// The regular item the passage is evidence for.
    pub item_key: String,
    pub source: SourceKind,
    /// The annotation, note or attachment the text is from (the item itself for its abstract).
    pub source_key: String,
    /// The original text, never folded or shortened (an annotation's highlighted text, empty for a comment-only
    /// annotation).
    pub text: String,
    /// An annotation's comment: the annotator's words, not the source's.
    pub comment: Option<String>,
    /// The 1-based page of the file the passage is on, where known.
    pub page: Option<usize>,
    /// The page's label as the document prints it, where it has one.
    pub page_label: Option<String>,
    /// The passage's place among the passages its source was cut into (0-based), and their number.
    pub chunk_index: usize,
    pub chunk_count: usize,
}

impl Passage {
    /// What the passage costs a reader, in characters: its text and, for an annotation, its comment.
    pub fn chars(&self) -> usize {
        self.text.chars().count() + self.comment.as_deref().map_or(0, |c| c.chars().count())
    }
}

/// Which of an annotation's parts held the query's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Matched {
    pub text: bool,
    pub comment: bool,
}

/// A passage that matched, with its score.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ranked {
    /// Index into the passages ranked.
    pub passage: usize,
    pub score: f64,
    pub matched: Matched,
}

/// Every passage holding at least one of the query's words, best first (reading order between equals). An
/// annotation ranks on its text and its comment together.
pub fn rank(query: &str, passages: &[Passage], decompose: Decompose) -> Vec<Ranked> {
    let mut unique: Vec<String> = Vec::new();
    for term in fold::terms(query, decompose) {
        if !unique.contains(&term) {
            unique.push(term);
        }
    }
    let mut documents = Vec::with_capacity(passages.len());
    let mut matched = Vec::with_capacity(passages.len());
    for passage in passages {
        let mut counts = bm25::Counts { length: 0, occurrences: vec![0; unique.len()] };
        let in_text = count_terms(&passage.text, &unique, &mut counts, decompose);
        let in_comment = passage.comment.as_deref().is_some_and(|c| count_terms(c, &unique, &mut counts, decompose));
        documents.push(counts);
        matched.push(Matched { text: in_text, comment: in_comment });
    }
    let scores = bm25::scores(&documents);
    // Kept in order as they are found: a binary search places each, and equals keep reading order. (A library
    // sort over this type would link a copy of the whole sorting algorithm into the Worker.)
    let mut ranked: Vec<Ranked> = Vec::new();
    for (passage, score) in scores.into_iter().enumerate() {
        if score <= 0.0 {
            continue;
        }
        let at = ranked.partition_point(|other| other.score >= score);
        ranked.insert(at, Ranked { passage, score, matched: matched[passage] });
    }
    ranked
}

/// Adds `text`'s words to `counts` (its length, and each of `query`'s terms found); whether any was found.
fn count_terms(text: &str, query: &[String], counts: &mut bm25::Counts, decompose: Decompose) -> bool {
    let mut found = false;
    fold::for_each_term(&fold::fold(text, decompose), |term| {
        counts.length += 1;
        if let Some(at) = query.iter().position(|q| q == term) {
            counts.occurrences[at] += 1;
            found = true;
        }
    });
    found
}

/// The passages a budget takes.
#[derive(Debug, Clone, PartialEq)]
pub struct Selection {
    /// Best first.
    pub chosen: Vec<Ranked>,
    /// Matching passages left out: past `max_passages`, or too long for the characters left.
    pub omitted: usize,
}

/// The best passages while at most `max_passages` are taken and their [`Passage::chars`] stay within
/// `max_chars`; a passage too long for what is left is skipped whole and a shorter one after it may still fit.
pub fn select(ranked: &[Ranked], passages: &[Passage], max_passages: usize, max_chars: usize) -> Selection {
    let mut chosen = Vec::new();
    let mut spent = 0;
    for hit in ranked {
        let cost = passages[hit.passage].chars();
        if chosen.len() < max_passages && spent + cost <= max_chars {
            spent += cost;
            chosen.push(*hit);
        }
    }
    let omitted = ranked.len() - chosen.len();
    Selection { chosen, omitted }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::decompose_with_tables as tables;

    fn passage(source: SourceKind, text: &str, comment: Option<&str>) -> Passage {
        Passage {
            item_key: "ITEM0001".into(),
            source,
            source_key: "SRC00001".into(),
            text: text.into(),
            comment: comment.map(str::to_owned),
            page: None,
            page_label: None,
            chunk_index: 0,
            chunk_count: 1,
        }
    }

    #[test]
    fn the_best_passage_comes_first_and_a_comment_counts() {
        let passages = vec![
            passage(SourceKind::FullText, "Wheat grew well in the cool season.", None),
            passage(SourceKind::FullText, "Maize yields fell under heat stress in every trial.", None),
            passage(SourceKind::Annotation, "", Some("heat stress: key result for maize")),
            passage(SourceKind::Abstract, "We study crops.", None),
        ];
        let ranked = rank("Heat stress in maize", &passages, tables);
        let order: Vec<usize> = ranked.iter().map(|r| r.passage).collect();
        assert_eq!(order.len(), 2, "{ranked:?}");
        assert!(order.contains(&1) && order.contains(&2));
        let comment_only = ranked.iter().find(|r| r.passage == 2).unwrap();
        assert_eq!(comment_only.matched, Matched { text: false, comment: true });
        assert_eq!(rank("CAFÉ", &[passage(SourceKind::Note, "the cafe", None)], tables).len(), 1, "folded alike");
    }

    #[test]
    fn a_budget_leaves_passages_out_whole() {
        let long = "maize ".repeat(100);
        let passages = vec![
            passage(SourceKind::FullText, &long, None),
            passage(SourceKind::FullText, "maize maize maize", None),
            passage(SourceKind::FullText, "maize", None),
        ];
        let ranked = rank("maize", &passages, tables);
        let picked = select(&ranked, &passages, 10, 100);
        assert!(picked.chosen.iter().all(|r| r.passage != 0), "the long passage does not fit and is not cut");
        assert_eq!(picked.chosen.len(), 2);
        assert_eq!(picked.omitted, 1);
        let one = select(&ranked, &passages, 1, 10_000);
        assert_eq!((one.chosen.len(), one.omitted), (1, 2));
    }
}
