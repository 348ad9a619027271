//! Okapi BM25 over the passages of one call: each passage a document, the call's passages the collection. The
//! usual constants (k1 = 1.2, b = 0.75): a word counts less each time it repeats, and a long passage is not
//! preferred for being long.

const K1: f64 = 1.2;
const B: f64 = 0.75;

/// What ranking needs of one document: how many words it counts, and how often each query term occurs in it
/// (in the query's order).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Counts {
    pub length: usize,
    pub occurrences: Vec<u32>,
}

/// The score of every document for the query's terms (0 where none occurs), in the documents' order. Each
/// document's `occurrences` has one entry per distinct query term.
pub fn scores(documents: &[Counts]) -> Vec<f64> {
    let count = documents.len() as f64;
    let average = documents.iter().map(|d| d.length).sum::<usize>() as f64 / count.max(1.0);
    let terms = documents.first().map_or(0, |d| d.occurrences.len());
    let weights: Vec<f64> = (0..terms)
        .map(|term| {
            let holding = documents.iter().filter(|d| d.occurrences[term] > 0).count() as f64;
            (1.0 + (count - holding + 0.5) / (holding + 0.5)).ln()
        })
        .collect();
    documents
        .iter()
        .map(|doc| {
            let norm = K1 * (1.0 - B + B * doc.length as f64 / average.max(1.0));
            doc.occurrences
                .iter()
                .zip(&weights)
                .map(|(tf, weight)| {
                    let tf = f64::from(*tf);
                    weight * tf * (K1 + 1.0) / (tf + norm)
                })
                .sum()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counts of `query`'s distinct words in a space-separated document.
    fn counts(query: &[&str], text: &str) -> Counts {
        let words: Vec<&str> = text.split(' ').collect();
        Counts {
            length: words.len(),
            occurrences: query.iter().map(|q| words.iter().filter(|w| *w == q).count() as u32).collect(),
        }
    }

    #[test]
    fn rarer_and_repeated_terms_rank_higher() {
        let query = ["heat", "maize"];
        let docs: Vec<Counts> =
            ["maize yield fell under heat", "maize yield rose", "wheat grew", "heat heat heat wave in maize"]
                .iter()
                .map(|text| counts(&query, text))
                .collect();
        let got = scores(&docs);
        assert_eq!(got[2], 0.0);
        assert!(got[3] > got[0] && got[0] > got[1], "{got:?}");
        assert!(scores(&[]).is_empty());
    }
}
