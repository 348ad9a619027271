use serde_json::{json, Value};

use super::*;
use crate::zotero::ZoteroObject;

fn item(key: &str, data: Value) -> ZoteroObject {
    let mut data = data.as_object().cloned().unwrap_or_default();
    data.entry("itemType").or_insert(json!("journalArticle"));
    data.insert("key".into(), json!(key));
    ZoteroObject { key: key.into(), version: 5, meta: Default::default(), data }
}

fn groups_of(items: &[ZoteroObject]) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = group_duplicates(items)
        .into_iter()
        .map(|group| {
            let mut keys = group.keys();
            keys.sort();
            (group.reason.label().to_owned(), keys)
        })
        .collect();
    out.sort();
    out
}

fn pair(reason: &str, a: &str, b: &str) -> (String, Vec<String>) {
    (reason.into(), vec![a.into(), b.into()])
}

#[test]
fn a_doi_matches_whatever_its_case_and_prefix() {
    let items = [
        item("AAAAAAAA", json!({"title": "One", "DOI": "10.1000/ABC.123"})),
        item("BBBBBBBB", json!({"title": "Two", "DOI": "https://doi.org/10.1000/abc.123"})),
        item("CCCCCCCC", json!({"title": "Three", "DOI": "doi:10.1000/other"})),
    ];
    assert_eq!(groups_of(&items), [pair("DOI", "AAAAAAAA", "BBBBBBBB")]);
}

#[test]
fn isbn_10_and_13_of_one_book_match_but_chapters_sharing_their_book_do_not() {
    let items = [
        item("AAAAAAAA", json!({"itemType": "book", "title": "Alpha", "ISBN": "0-306-40615-2"})),
        item("BBBBBBBB", json!({"itemType": "book", "title": "Beta", "ISBN": "978-0-306-40615-7"})),
        item("CCCCCCCC", json!({"itemType": "bookSection", "title": "Chapter one of it", "ISBN": "9780306406157"})),
        item("DDDDDDDD", json!({"itemType": "bookSection", "title": "Chapter two of it", "ISBN": "9780306406157"})),
    ];
    assert_eq!(groups_of(&items), [pair("ISBN", "AAAAAAAA", "BBBBBBBB")]);
}

#[test]
fn titles_match_across_case_punctuation_and_date_forms() {
    let items = [
        item(
            "AAAAAAAA",
            json!({"title": "Attention Is All You Need!", "date": "2017-06-12",
                   "creators": [{"creatorType": "author", "firstName": "Ashish", "lastName": "Vaswani"}]}),
        ),
        item(
            "BBBBBBBB",
            json!({"title": "attention is all   you <i>need</i>", "date": "June 2017",
                   "creators": [{"creatorType": "author", "firstName": "A.", "lastName": "VASWANI"}]}),
        ),
    ];
    assert_eq!(groups_of(&items), [pair("title+year+creator", "AAAAAAAA", "BBBBBBBB")]);
}

#[test]
fn titles_in_other_scripts_are_compared_letter_by_letter() {
    let items = [
        item("AAAAAAAA", json!({"title": "Écoles et villes d'Europe", "date": "2001"})),
        item("BBBBBBBB", json!({"title": "écoles ET villes d’europe", "date": "2001"})),
        item("CCCCCCCC", json!({"title": "深度学习在城市规划中的应用研究", "date": "2020"})),
        item("DDDDDDDD", json!({"title": "深度学习在城市规划中的应用研究。", "date": "2020"})),
    ];
    assert_eq!(
        groups_of(&items),
        [pair("title+year+creator", "AAAAAAAA", "BBBBBBBB"), pair("title+year+creator", "CCCCCCCC", "DDDDDDDD")]
    );
}

#[test]
fn another_year_another_first_author_or_a_short_title_is_another_work() {
    let items = [
        item("AAAAAAAA", json!({"title": "A survey of urban heat islands", "date": "2019"})),
        item("BBBBBBBB", json!({"title": "A survey of urban heat islands", "date": "2021"})),
        item(
            "CCCCCCCC",
            json!({"title": "Spatial models of migration", "date": "2019",
                   "creators": [{"creatorType": "author", "lastName": "Smith", "firstName": "J."}]}),
        ),
        item(
            "DDDDDDDD",
            json!({"title": "Spatial models of migration", "date": "2019",
                   "creators": [{"creatorType": "author", "lastName": "Jones", "firstName": "K."}]}),
        ),
        item("EEEEEEEE", json!({"title": "Editorial", "date": "2020"})),
        item("FFFFFFFF", json!({"title": "Editorial", "date": "2020"})),
    ];
    assert_eq!(groups_of(&items), Vec::<(String, Vec<String>)>::new());
}

#[test]
fn different_dois_are_never_joined_by_a_title_but_a_doi_less_copy_is() {
    let title = "Deep residual learning for image recognition";
    let items = [
        item("AAAAAAAA", json!({"title": title, "date": "2016", "DOI": "10.1109/cvpr.2016.90"})),
        item("BBBBBBBB", json!({"title": title, "date": "2016", "DOI": "10.9999/other"})),
        item("CCCCCCCC", json!({"title": title, "date": "2016"})),
    ];
    // C meets A first (scan order) and then carries A's DOI, which B's contradicts.
    assert_eq!(groups_of(&items), [pair("title+year+creator", "AAAAAAAA", "CCCCCCCC")]);
}

#[test]
fn arxiv_ids_match_across_the_forms_zotero_keeps_them_in() {
    let items = [
        item("AAAAAAAA", json!({"itemType": "preprint", "title": "P1", "archiveID": "arXiv:1706.03762"})),
        item("BBBBBBBB", json!({"title": "P2", "extra": "arXiv: 1706.03762v5"})),
        item("CCCCCCCC", json!({"itemType": "preprint", "title": "P3", "DOI": "10.48550/arXiv.1706.03762"})),
        item("DDDDDDDD", json!({"itemType": "preprint", "title": "P4", "url": "https://arxiv.org/abs/1706.03762v2"})),
    ];
    assert_eq!(
        groups_of(&items),
        [("arXiv".to_owned(), vec!["AAAAAAAA".into(), "BBBBBBBB".into(), "CCCCCCCC".into(), "DDDDDDDD".into()])]
    );
}

#[test]
fn notes_attachments_and_trashed_items_are_not_candidates() {
    let items = [
        item("AAAAAAAA", json!({"itemType": "note", "note": "x", "DOI": "10.1000/x"})),
        item("BBBBBBBB", json!({"itemType": "attachment", "title": "Full Text", "DOI": "10.1000/x"})),
        item("CCCCCCCC", json!({"title": "Kept", "DOI": "10.1000/x"})),
        item("DDDDDDDD", json!({"title": "Trashed", "DOI": "10.1000/x", "deleted": 1})),
    ];
    assert!(group_duplicates(&items).is_empty());
}

#[test]
fn the_richest_copy_comes_first_then_the_oldest() {
    let mut poor = item("AAAAAAAA", json!({"title": "T", "DOI": "10.1000/x", "dateAdded": "2019-01-01T00:00:00Z"}));
    poor.meta.insert("numChildren".into(), json!(0));
    let mut with_files =
        item("BBBBBBBB", json!({"title": "T", "DOI": "10.1000/x", "dateAdded": "2020-01-01T00:00:00Z"}));
    with_files.meta.insert("numChildren".into(), json!(2));
    let older_twin = item("CCCCCCCC", json!({"title": "T", "DOI": "10.1000/x", "dateAdded": "2018-01-01T00:00:00Z"}));
    let groups = group_duplicates(&[poor, with_files, older_twin]);
    assert_eq!(groups.len(), 1);
    assert_eq!(groups[0].keys(), ["BBBBBBBB", "CCCCCCCC", "AAAAAAAA"]);
}

#[test]
fn a_merge_gains_missing_fields_tags_collections_and_relations_under_the_library_s_own_uri() {
    let master = item(
        "MMMMMMMM",
        json!({"title": "Kept", "volume": "", "pages": "1-2", "creators": [],
               "tags": [{"tag": "shared", "type": 1}, {"tag": "mine"}], "collections": ["COLLAAAA"],
               "relations": {"dc:relation": "http://zotero.org/groups/7/items/OTHER234"}}),
    );
    let other = item(
        "DDDDDDDD",
        json!({"title": "Copy", "volume": "12", "pages": "9", "creators": [{"creatorType": "author", "name": "WHO"}],
               "tags": [{"tag": "shared", "type": 0}, {"tag": "theirs", "type": 1}], "collections": ["COLLBBBB", "COLLAAAA"],
               "relations": {"dc:replaces": "http://zotero.org/groups/7/items/OLDER234",
                             "dc:relation": "http://zotero.org/groups/7/items/MMMMMMMM"}}),
    );
    let plan = MergePlan::new(vec![master, other]).unwrap();
    let changes = plan.master_changes("/groups/7");
    assert_eq!(changes["volume"], json!("12"));
    assert!(!changes.contains_key("pages"), "a field the master has is kept");
    assert_eq!(changes["creators"], json!([{"creatorType": "author", "name": "WHO"}]));
    assert_eq!(changes["tags"], json!([{"tag": "shared", "type": 0}, {"tag": "mine"}, {"tag": "theirs", "type": 1}]));
    assert_eq!(changes["collections"], json!(["COLLAAAA", "COLLBBBB"]));
    assert_eq!(
        changes["relations"],
        json!({"dc:relation": ["http://zotero.org/groups/7/items/OTHER234"],
               "dc:replaces": ["http://zotero.org/groups/7/items/OLDER234", "http://zotero.org/groups/7/items/DDDDDDDD"]})
    );
}

#[test]
fn merges_desktop_would_refuse_are_refused_before_any_write() {
    let article = |key: &str| item(key, json!({"title": "T"}));
    assert_eq!(MergePlan::new(vec![article("AAAAAAAA"), article("AAAAAAAA")]), Err(MergeRefused::TooFew));
    let book = item("BBBBBBBB", json!({"itemType": "book", "title": "T"}));
    assert!(matches!(MergePlan::new(vec![article("AAAAAAAA"), book]), Err(MergeRefused::MixedTypes { .. })));
    let note = item("NNNNNNNN", json!({"itemType": "note", "note": "n"}));
    assert!(matches!(MergePlan::new(vec![article("AAAAAAAA"), note]), Err(MergeRefused::NotRegular { .. })));
    let trashed = item("TTTTTTTT", json!({"title": "T", "deleted": true}));
    assert!(matches!(MergePlan::new(vec![article("AAAAAAAA"), trashed]), Err(MergeRefused::Trashed { .. })));
}

#[test]
fn normalised_titles_drop_markup_and_punctuation_only() {
    assert_eq!(
        normalise_title("  The <i>E. coli</i> genome: a review (2nd ed.)  "),
        "the e coli genome a review 2nd ed"
    );
    assert_eq!(normalise_title("Ünïcode—Titles…"), "ünïcode titles");
}
