//! The citing sentences of a matched reference against what the cited item holds: its passages (annotations,
//! notes, abstract, the best attachment's text by page, as `zotero_retrieve` reads them) ranked for each
//! sentence, and a plain verdict.

use std::collections::HashSet;

use zotero_mcp_core::refcheck::cites::Citation;
use zotero_mcp_core::refcheck::support::{coverage, verdict, Verdict};
use zotero_mcp_core::retrieve::{self, Passage};
use zotero_mcp_core::zotero::ObjectKey;

use super::{SupportCheck, SupportPassage, PASSAGES_PER_SENTENCE, SENTENCES_PER_REFERENCE};
use crate::context::RequestContext;
use crate::tools::retrieve::item_passages;

/// The checks of the item's first citing sentences (distinct ones), and how many more were left unchecked.
pub async fn check(ctx: &RequestContext, item_key: &str, citations: &[Citation]) -> (Vec<SupportCheck>, usize) {
    // Distinct sentences counted through a set: a key cited twenty thousand times compared each with all.
    let mut sentences: Vec<&Citation> = Vec::new();
    let mut seen: HashSet<&str> = HashSet::new();
    let mut distinct = 0usize;
    for citation in citations {
        if !citation.sentence.trim().is_empty() && seen.insert(&citation.sentence) {
            distinct += 1;
            if sentences.len() < SENTENCES_PER_REFERENCE {
                sentences.push(citation);
            }
        }
    }
    let unchecked = distinct.saturating_sub(SENTENCES_PER_REFERENCE);
    let passages: Vec<Passage> = match ObjectKey::parse(item_key) {
        Ok(key) => item_passages(ctx, &key).await.map(|(passages, _)| passages).unwrap_or_default(),
        Err(_) => Vec::new(),
    };
    let decompose = ctx.services().decompose();
    let checks = sentences
        .into_iter()
        .map(|citation| {
            let ranked = retrieve::rank(&citation.sentence, &passages, decompose);
            // Each shown passage's coverage is measured once: it is both reported and what the verdict reads.
            let mut best = (0.0, 0);
            let shown: Vec<SupportPassage> = ranked
                .iter()
                .take(PASSAGES_PER_SENTENCE)
                .map(|hit| {
                    let passage = &passages[hit.passage];
                    let measured = coverage(&citation.sentence, &passage.text, decompose);
                    if measured.0 > best.0 {
                        best = measured;
                    }
                    SupportPassage {
                        text: passage.text.clone(),
                        source: passage.source.name().into(),
                        source_key: passage.source_key.clone(),
                        page: passage.page.map(|p| p as u64),
                        page_label: passage.page_label.clone(),
                        coverage: (measured.0 * 100.0).round() / 100.0,
                    }
                })
                .collect();
            let best = (!passages.is_empty()).then_some(best);
            let verdict = verdict(best);
            SupportCheck {
                sentence: citation.sentence.to_string(),
                line: citation.line as u64,
                verdict: verdict.name().into(),
                passages: if verdict == Verdict::NoText { Vec::new() } else { shown },
            }
        })
        .collect();
    (checks, unchecked)
}
