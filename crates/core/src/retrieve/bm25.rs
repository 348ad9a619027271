//! Okapi BM25 over the passages of one call: each passage a document, the call's passages the collection. The
//! usual constants (k1 = 1.2, b = 0.75): a word counts less each time it repeats, and a long passage is not
//! preferred for being long.

const K1: f64 = 1.2;
const B: f64 = 0.75;

/// The score of every document for the query's terms (0 where none occurs), in the documents' order. The query
/// counts each term once.
pub fn scores(query: &[String], documents: &[Vec<String>]) -> Vec<f64> {
    let mut unique: Vec<&str> = Vec::new();
    for term in query {
        if !unique.contains(&term.as_str()) {
            unique.push(term);
        }
    }
    let count = documents.len() as f64;
    let average = documents.iter().map(Vec::len).sum::<usize>() as f64 / count.max(1.0);
    let weights: Vec<f64> = unique
        .iter()
        .map(|term| {
            let holding = documents.iter().filter(|doc| doc.iter().any(|t| t == term)).count() as f64;
            (1.0 + (count - holding + 0.5) / (holding + 0.5)).ln()
        })
        .collect();
    documents
        .iter()
        .map(|doc| {
            let norm = K1 * (1.0 - B + B * doc.len() as f64 / average.max(1.0));
            unique
                .iter()
                .zip(&weights)
                .map(|(term, weight)| {
                    let tf = doc.iter().filter(|t| t == term).count() as f64;
                    weight * tf * (K1 + 1.0) / (tf + norm)
                })
                .sum()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<String> {
        text.split(' ').map(str::to_owned).collect()
    }

    #[test]
    fn rarer_and_repeated_terms_rank_higher() {
        let docs = vec![
            words("maize yield fell under heat"),
            words("maize yield rose"),
            words("wheat grew"),
            words("heat heat heat wave in maize"),
        ];
        let got = scores(&words("heat maize"), &docs);
        assert_eq!(got[2], 0.0);
        assert!(got[3] > got[0] && got[0] > got[1], "{got:?}");
        assert_eq!(scores(&words("heat heat maize"), &docs), got, "a repeated query term counts once");
        assert!(scores(&words("x"), &[]).is_empty());
    }
}
