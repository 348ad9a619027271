//! Whether the passages found for a citing sentence hold its words: a plain verdict for a person to read the
//! passages by, never a judgement that the cited work says what the sentence claims.

use crate::platform::Decompose;
use crate::retrieve::fold;

/// What the passages found for one citing sentence amount to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// A passage holds at least half of the sentence's words (and at least two of them).
    PassagesFound,
    /// Passages share some words with the sentence, too few to point a reader to.
    Weak,
    /// The cited item has no text to check against (no abstract, notes, annotations or readable attachment).
    NoText,
}

impl Verdict {
    pub fn name(self) -> &'static str {
        match self {
            Verdict::PassagesFound => "passagesFound",
            Verdict::Weak => "weak",
            Verdict::NoText => "noText",
        }
    }
}

/// The share of the sentence's distinct words (as ranking counts them) that `passage` holds, and how many.
pub fn coverage(sentence: &str, passage: &str, decompose: Decompose) -> (f64, usize) {
    let mut wanted: Vec<String> = Vec::new();
    for term in fold::terms(sentence, decompose) {
        if !wanted.contains(&term) {
            wanted.push(term);
        }
    }
    if wanted.is_empty() {
        return (0.0, 0);
    }
    let mut found = vec![false; wanted.len()];
    fold::for_each_term(&fold::fold(passage, decompose), |term| {
        if let Some(at) = wanted.iter().position(|w| w == term) {
            found[at] = true;
        }
    });
    let held = found.iter().filter(|f| **f).count();
    (held as f64 / wanted.len() as f64, held)
}

/// The verdict for a sentence whose best passage covers `best` of its words (`None`: the item had no text).
pub fn verdict(best: Option<(f64, usize)>) -> Verdict {
    match best {
        None => Verdict::NoText,
        Some((share, held)) if share >= 0.5 && held >= 2 => Verdict::PassagesFound,
        Some(_) => Verdict::Weak,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::decompose_with_tables;

    #[test]
    fn a_passage_with_most_of_the_sentence_words_is_found() {
        let sentence = "Transformers replace recurrence with self-attention over the whole sequence";
        let passage = "We propose the Transformer, which dispenses with recurrence and relies on self-attention \
                       across the entire input sequence.";
        let (share, held) = coverage(sentence, passage, decompose_with_tables);
        assert!(share >= 0.5, "{share}");
        assert_eq!(verdict(Some((share, held))), Verdict::PassagesFound);
    }

    #[test]
    fn a_few_shared_words_are_weak_and_no_text_is_said() {
        let sentence = "Protein folding is solved by deep learning on evolutionary couplings";
        let (share, held) = coverage(sentence, "Deep learning for image classification.", decompose_with_tables);
        assert_eq!(verdict(Some((share, held))), Verdict::Weak);
        assert_eq!(verdict(None), Verdict::NoText);
    }
}
