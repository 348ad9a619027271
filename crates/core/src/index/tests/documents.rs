//! Documents: the metadata part as upstream (sync.test.ts "document payloads"), and the paper's text with page
//! markers.

use super::*;
use crate::index::documents::full_text_section;

// -- upstream 1–5 --

#[test]
fn the_text_holds_title_surnames_year_venue_tags_and_abstract() {
    let text = document_text(&article("AAAA1111").data);
    assert_eq!(
        text,
        "Heat stress and wheat yields\nLovelace, Climate Consortium\n2020\nField Crops Research\ndrought, wheat\n\
         Warming shortens the grain filling period."
    );
}

#[test]
fn a_long_abstract_still_gives_at_most_6000_characters() {
    let mut item = article("AAAA1111");
    item.data.insert("abstractNote".into(), json!("x".repeat(20_000)));
    let text = document_text(&item.data);
    assert!(text.chars().count() <= 6000);
    // The abstract itself is cut at 4000.
    assert_eq!(text.matches('x').count(), 4000);
    let long_title = "t".repeat(7000);
    item.data.insert("title".into(), json!(long_title));
    assert_eq!(document_text(&item.data).chars().count(), 6000);
}

#[test]
fn the_metadata_is_exactly_itemtype_and_year_as_strings() {
    let metadata = document_metadata(&article("AAAA1111"));
    assert_eq!(Value::Object(metadata), json!({ "itemtype": "journalArticle", "year": "2020" }));
}

#[test]
fn an_undated_item_has_year_0_and_leading_zeros_are_dropped() {
    let undated = item("AAAA1111", json!({ "itemType": "book", "date": "n.d." }));
    assert_eq!(document_metadata(&undated)["year"], json!("0"));
    let no_date = item("AAAA1111", json!({ "itemType": "book" }));
    assert_eq!(document_metadata(&no_date)["year"], json!("0"));
    let early = item("AAAA1111", json!({ "itemType": "book", "date": "0999" }));
    assert_eq!(document_metadata(&early)["year"], json!("999"));
}

#[test]
fn attachments_notes_annotations_and_trashed_items_are_not_indexable() {
    assert!(is_indexable(&article("AAAA1111")));
    for kind in ["attachment", "note", "annotation"] {
        assert!(!is_indexable(&item("AAAA1111", json!({ "itemType": kind }))), "{kind}");
        assert!(document_for(&item("AAAA1111", json!({ "itemType": kind })), None).is_none());
    }
    for deleted in [json!(1), json!(true)] {
        let trashed = item("AAAA1111", json!({ "itemType": "book", "deleted": deleted }));
        assert!(!is_indexable(&trashed));
    }
    assert!(is_indexable(&item("AAAA1111", json!({ "itemType": "book", "deleted": 0 }))));
}

// -- the metadata part's JavaScript details --

#[test]
fn nullish_fallbacks_behave_as_in_javascript() {
    // An empty publicationTitle from a template wins over bookTitle (`??`, not `||`): no venue line.
    let empty_venue = item(
        "AAAA1111",
        json!({ "itemType": "bookSection", "title": "T", "publicationTitle": "",
                                                "bookTitle": "Handbook" }),
    );
    assert_eq!(document_text(&empty_venue.data), "T");
    // A null one does not.
    let null_venue = item(
        "AAAA1111",
        json!({ "itemType": "bookSection", "title": "T", "publicationTitle": null,
                                               "bookTitle": "Handbook" }),
    );
    assert_eq!(document_text(&null_venue.data), "T\nHandbook");
    // An empty lastName wins over name, and empty creators are dropped.
    let creators = item(
        "AAAA1111",
        json!({ "itemType": "book", "creators": [
            { "lastName": "", "name": "Ignored" }, { "name": "Org" }, { "firstName": "No" }, { "lastName": "Smith" }
        ]}),
    );
    assert_eq!(document_text(&creators.data), "Org, Smith");
}

#[test]
fn at_most_eight_creators_are_named() {
    let creators: Vec<Value> = (0..12).map(|i| json!({ "lastName": format!("Author{i}") })).collect();
    let many = item("AAAA1111", json!({ "itemType": "book", "creators": creators }));
    let text = document_text(&many.data);
    assert!(text.contains("Author7") && !text.contains("Author8"));
}

#[test]
fn the_document_is_named_by_key_and_keys_come_back_from_names() {
    let document = document_for(&article("AAAA1111"), None).unwrap();
    assert_eq!(document.name, "AAAA1111.md");
    assert_eq!(item_key_of("AAAA1111.md"), "AAAA1111");
    assert_eq!(item_key_of("AAAA1111"), "AAAA1111");
    assert_eq!(document.text, document_text(&article("AAAA1111").data));
}

#[test]
fn metadata_values_are_always_strings() {
    // Numbers in the data (a year as a number, an itemType missing) still give strings.
    let odd = item("AAAA1111", json!({ "date": 2021 }));
    let metadata = document_metadata(&odd);
    assert!(metadata.values().all(Value::is_string), "{metadata:?}");
    assert_eq!(Value::Object(metadata), json!({ "itemtype": "", "year": "2021" }));
}

// -- the paper's text --

#[test]
fn whole_text_follows_the_metadata_after_a_blank_line_without_markers() {
    let text = ItemText::Whole("Introduction.\n\nWarming   reduces\tyields.".into());
    let document = document_for(&article("AAAA1111"), Some(&text)).unwrap();
    let (metadata, body) = document.text.split_once("\n\n").unwrap();
    assert_eq!(metadata, document_text(&article("AAAA1111").data));
    assert_eq!(body, "Introduction. Warming reduces yields.");
    assert!(!document.text.contains("[p"));
}

#[test]
fn the_text_stays_within_its_budget() {
    let words = "word ".repeat(5000);
    let section = full_text_section(&ItemText::Whole(words.clone()));
    assert!(section.len() <= FULL_TEXT_BUDGET_CHARS && section.len() > FULL_TEXT_BUDGET_CHARS - 10);
    assert!(section.ends_with("word"), "cut between words");
    let pages: Vec<String> = (0..10).map(|_| words.clone()).collect();
    let marked = full_text_section(&ItemText::Pages(pages));
    assert!(marked.len() <= FULL_TEXT_BUDGET_CHARS);
}

#[test]
fn cjk_characters_count_four_against_the_budget() {
    let chinese = "气候变化对冬小麦产量的影响".repeat(1000);
    let section = full_text_section(&ItemText::Whole(chinese));
    assert_eq!(section.chars().count(), FULL_TEXT_BUDGET_CHARS / 4);
}

#[test]
fn pages_are_marked_where_they_start_and_every_800_characters() {
    let page = |n: usize| (0..400).map(|i| format!("p{n}w{i}")).collect::<Vec<_>>().join(" ");
    let pages = vec![page(1), String::new(), page(3)];
    let section = full_text_section(&ItemText::Pages(pages));
    assert!(section.starts_with("[page 1] p1w0 p1w1"), "{}", &section[..40]);
    // The empty page 2 has no marker; page 3 starts on a new line.
    assert!(!section.contains("[page 2]"));
    assert!(section.contains("\n[page 3] p3w0"));
    // Inside a page, repeats at most ~800 characters apart, so any 2000-character chunk holds a marker.
    let positions: Vec<usize> = section.match_indices("[p").map(|(at, _)| at).collect();
    assert!(positions.len() >= 7, "{positions:?}");
    for pair in positions.windows(2) {
        assert!(pair[1] - pair[0] <= 800 + 20, "{positions:?}");
    }
    assert!(section.contains("[p. 1]") && section.contains("[p. 3]"));
    // Markers never split a word.
    assert!(section.split_whitespace().all(|w| w.starts_with('[') || w.ends_with(']') || w.starts_with('p')));
}

#[test]
fn unspaced_pages_are_marked_too() {
    let page = "北宋天文机构与历法改革研究".repeat(40);
    let section = full_text_section(&ItemText::Pages(vec![page]));
    assert!(section.starts_with("[page 1] "));
    assert!(section.contains("[p. 1]"));
}
