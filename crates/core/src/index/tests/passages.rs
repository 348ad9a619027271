//! Passages and pages: what a search shows of an item's best chunk.

use super::*;
use crate::index::passage::{occurrences, passage, query_words, visible_chars, MAX_OCCURRENCES, MAX_QUERY_WORDS};

#[test]
fn a_passage_centres_on_the_densest_run_of_query_words() {
    let filler = "Lorem ipsum dolor sit amet consectetur. ".repeat(20);
    let text = format!("{filler}Heat stress during grain filling cuts wheat yields sharply. {filler}");
    let found = passage(&text, "wheat heat stress");
    assert!(found.text.contains("Heat stress during grain filling cuts wheat yields"), "{}", found.text);
    assert!(found.text.starts_with('…') && found.text.ends_with('…'));
    assert!(found.text.chars().count() <= PASSAGE_CHARS + 2);
    assert_eq!(found.page, None, "no markers, no page");
}

#[test]
fn a_chunk_without_query_words_shows_its_beginning() {
    let found = passage("A short abstract about crops.", "semantics only");
    assert_eq!(found.text, "A short abstract about crops.");
}

#[test]
fn markers_are_removed_from_passages() {
    let text = "[page 4] Results [p. 4] show that irrigation offsets heat stress.\n[page 5] Discussion follows.";
    let found = passage(text, "irrigation heat");
    assert!(!found.text.contains('['), "{}", found.text);
    assert!(found.text.contains("Results show that irrigation offsets heat stress. Discussion follows."));
    assert_eq!(found.page, Some(4));
}

#[test]
fn the_page_is_the_nearest_marker_before_the_passage() {
    let body = |n: usize| format!("{} ", "filler ".repeat(n));
    let text = format!("[page 2] {}[page 3] {}target words here {}", body(60), body(10), body(60));
    assert_eq!(passage(&text, "target words").page, Some(3));
    let text = format!("[page 2] {}[p. 2] {}target words here {}[page 3] {}", body(60), body(10), body(60), body(5));
    assert_eq!(passage(&text, "target words").page, Some(2));
}

#[test]
fn without_a_marker_before_the_first_one_after_tells_the_page() {
    let filler = "filler ".repeat(80);
    // The chunk starts inside page 6, before its next page starts.
    let text = format!("target words here {filler}[page 7] more");
    assert_eq!(passage(&text, "target words").page, Some(6));
    // The chunk starts inside page 6, before a repeat marker of page 6.
    let text = format!("target words here {filler}[p. 6] more");
    assert_eq!(passage(&text, "target words").page, Some(6));
    // Page 1 has nothing before it.
    let text = format!("target words here {filler}[page 1] more");
    assert_eq!(passage(&text, "target words").page, None);
}

#[test]
fn text_that_only_looks_like_a_marker_stays() {
    let found = passage("See [page x] and [p. ] and [1].", "see");
    assert_eq!(found.text, "See [page x] and [p. ] and [1].");
    assert_eq!(found.page, None);
}

#[test]
fn query_words_match_across_case_and_in_cjk_text() {
    let found = passage("气候变化对华北平原冬小麦产量的影响", "冬小麦");
    assert!(found.text.contains("冬小麦"));
    let found = passage("ÉCOLE normale and more", "école");
    assert!(found.text.starts_with("ÉCOLE"));
}

/// A paper with pages, indexed and searched end to end through the stand-in.
#[tokio::test]
async fn a_search_returns_the_passage_and_its_page() {
    let (index, service) = ready_index().await;
    let filler = |topic: &str| format!("{topic} ").repeat(150);
    let pages = vec![
        format!("Introduction. {}", filler("background")),
        format!("Methods. {}", filler("method")),
        format!("{} The vapour pressure deficit amplifies canopy warming. {}", filler("result"), filler("result")),
    ];
    let paper = article("PAPR0001");
    let document = document_for(&paper, Some(&ItemText::Pages(pages))).unwrap();
    assert!(document.text.contains("[page 3]"));
    let other = document_for(&article("OTHR0001"), Some(&ItemText::Whole("Nothing relevant.".into()))).unwrap();
    index.upsert(&[document, other]).await.unwrap();

    // Not searchable before the service has indexed it.
    assert!(index.query("vapour pressure deficit", &QueryOptions::default()).await.unwrap().is_empty());
    service.process();

    let found = index.query("vapour pressure deficit", &QueryOptions::default()).await.unwrap();
    assert_eq!(found.len(), 1, "{found:?}");
    let hit = &found[0];
    assert_eq!(hit.item_key, "PAPR0001");
    assert_eq!(hit.page, Some(3));
    let passage = hit.passage.as_deref().unwrap();
    assert!(passage.contains("vapour pressure deficit amplifies canopy warming"), "{passage}");
    assert!(!passage.contains("[p"), "{passage}");
    assert!(hit.score.is_some_and(|s| s > 0.0));
}

#[tokio::test]
async fn a_metadata_match_has_no_page() {
    let (index, service) = ready_index().await;
    let pages = vec!["Body text about soils. ".repeat(200)];
    index.upsert(&[document_for(&article("PAPR0001"), Some(&ItemText::Pages(pages))).unwrap()]).await.unwrap();
    service.process();
    let found = index.query("Lovelace grain", &QueryOptions::default()).await.unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].page, None, "{found:?}");
    assert!(found[0].passage.as_deref().unwrap().contains("Lovelace"));
}

#[tokio::test]
async fn an_item_matching_in_many_chunks_is_returned_once() {
    let (index, service) = ready_index().await;
    let pages: Vec<String> = (0..6).map(|_| "drought wheat yields ".repeat(100)).collect();
    let long = document_for(&article("MANY0001"), Some(&ItemText::Pages(pages))).unwrap();
    let short = document_for(&article("ONCE0001"), None).unwrap();
    index.upsert(&[long, short]).await.unwrap();
    service.process();
    let found = index.query("drought wheat", &QueryOptions { top_k: 12, ..QueryOptions::default() }).await.unwrap();
    let keys: Vec<&str> = found.iter().map(|m| m.item_key.as_str()).collect();
    assert_eq!(keys, ["MANY0001", "ONCE0001"]);
}

#[tokio::test]
async fn unscored_chunks_give_unscored_matches() {
    let (index, service) = ready_index().await;
    service.omit_vector_scores(true);
    index.upsert(&[document_for(&article("AAAA1111"), None).unwrap()]).await.unwrap();
    service.process();
    let found = index.query("wheat", &QueryOptions::default()).await.unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].score, None);
}

#[tokio::test]
async fn filters_reach_the_stand_in() {
    let (index, service) = ready_index().await;
    let old = item("OLDD0001", json!({ "itemType": "book", "title": "Wheat history", "date": "1998" }));
    let new = item("NEWW0001", json!({ "itemType": "preprint", "title": "Wheat futures", "date": "2021-02" }));
    let documents: Vec<Document> = [old, new].iter().filter_map(|i| document_for(i, None)).collect();
    index.upsert(&documents).await.unwrap();
    service.process();
    let query = |options: QueryOptions| {
        let index = &index;
        async move { index.query("wheat", &options).await.unwrap().into_iter().map(|m| m.item_key).collect::<Vec<_>>() }
    };
    assert_eq!(query(QueryOptions { from_year: Some(2000), ..QueryOptions::default() }).await, ["NEWW0001"]);
    assert_eq!(query(QueryOptions { item_type: Some("book".into()), ..QueryOptions::default() }).await, ["OLDD0001"]);
    assert_eq!(query(QueryOptions::default()).await.len(), 2);
}

#[test]
fn a_query_of_hundreds_of_words_looks_for_its_first_thirty_two() {
    let query: Vec<String> = (0..300).map(|i| format!("word{i}")).collect();
    let words = query_words(&query.join(" "));
    assert_eq!(words.len(), MAX_QUERY_WORDS);
    assert_eq!(words[0], "word0".chars().collect::<Vec<_>>());
}

#[test]
fn a_hostile_query_over_a_repeated_letter_weighs_a_bounded_number_of_occurrences() {
    // Every position of the chunk starts an occurrence of every query word: unbounded, the window search
    // weighs 2,500 x 32 occurrences against each other (a read-only token's CPU, per chunk, per result).
    let chunk = "a".repeat(2_500);
    let query: Vec<String> = (3..400).map(|n| "a".repeat(n)).collect();
    let query = query.join(" ");
    let weighed = occurrences(&visible_chars(&chunk, &[]), &query_words(&query));
    assert_eq!(weighed.len(), MAX_OCCURRENCES);
    assert!(weighed.windows(2).all(|w| w[0] <= w[1]), "the first ones in text order");
    let found = passage(&chunk, &query);
    assert!(!found.text.is_empty());
    assert!(found.text.chars().count() <= PASSAGE_CHARS + 2);
}
