//! Parsing, the plan's refusals and narrowing, and the local decisions (the simulator tests in
//! crates/sim/tests/saved_searches.rs check the same against Zotero's API semantics end to end).

use serde_json::{json, Value};

use super::family::{CollectionTree, Family, KeySets};
use super::model::{SavedSearch, SearchCondition};
use super::plan::SearchPlan;
use super::rule::{field_names, Context, BASE_DATE_NAMES};
use crate::zotero::ZoteroObject;

const NOW: u64 = 1_715_947_200_000; // 2024-05-17T12:00:00Z

fn search(conditions: &[(&str, &str, &str)]) -> SavedSearch {
    SavedSearch {
        key: "SRCH2345".into(),
        version: 1,
        name: "Test".into(),
        conditions: conditions.iter().map(|(c, o, v)| SearchCondition::new(c, o, v)).collect(),
    }
}

fn plan(conditions: &[(&str, &str, &str)]) -> SearchPlan {
    SearchPlan::new(&search(conditions)).unwrap_or_else(|e| panic!("{e}"))
}

fn item(key: &str, data: Value) -> ZoteroObject {
    let meta = data.get("_meta").and_then(Value::as_object).cloned().unwrap_or_default();
    let mut data = data.as_object().cloned().unwrap_or_default();
    data.remove("_meta");
    data.insert("key".into(), json!(key));
    data.entry("dateModified").or_insert(json!("2024-01-01T00:00:00Z"));
    ZoteroObject { key: key.into(), version: 1, meta, data }
}

/// A small library: a paper with a PDF (annotated) and a note, a book in the trash with a child note, a
/// standalone note.
fn library() -> Family {
    let mut family = Family::default();
    for object in [
        item(
            "PAPER234",
            json!({"itemType": "journalArticle", "title": "Heat stress in maize", "date": "2021-07",
                   "_meta": {"parsedDate": "2021-07"},
                   "publicationTitle": "Nature Food", "collections": ["CROPS234"],
                   "creators": [{"creatorType": "author", "firstName": "Ada", "lastName": "Weiss"},
                                {"creatorType": "editor", "name": "FAO"}],
                   "tags": [{"tag": "maize"}, {"tag": "Heat Stress", "type": 1}],
                   "dateAdded": "2024-05-15T10:00:00Z", "dateModified": "2024-05-15T10:00:00Z"}),
        ),
        item(
            "PDF23456",
            json!({"itemType": "attachment", "parentItem": "PAPER234", "title": "Full Text PDF",
                   "contentType": "application/pdf", "tags": [{"tag": "read"}],
                   "dateAdded": "2023-01-01T00:00:00Z", "dateModified": "2024-03-01T00:00:00Z"}),
        ),
        item(
            "ANNOT234",
            json!({"itemType": "annotation", "parentItem": "PDF23456", "annotationType": "highlight",
                   "annotationText": "yield losses", "annotationComment": "key result", "tags": [{"tag": "maize"}],
                   "dateAdded": "2024-05-16T00:00:00Z", "dateModified": "2024-05-16T00:00:00Z"}),
        ),
        item(
            "NOTE2345",
            json!({"itemType": "note", "parentItem": "PAPER234", "note": "<p>Discussed <b>yield</b> on Monday</p>",
                   "tags": [], "dateModified": "2024-02-01T00:00:00Z"}),
        ),
        item(
            "BOOK2345",
            json!({"itemType": "book", "title": "Old maize varieties", "date": "1999", "_meta": {"parsedDate": "1999"},
                   "deleted": true, "collections": ["GONE2345"], "tags": [{"tag": "maize"}]}),
        ),
        item("BKNOTE23", json!({"itemType": "note", "parentItem": "BOOK2345", "note": "<p>maize notes</p>"})),
        item(
            "SECTION2",
            json!({"itemType": "bookSection", "title": "Crops", "bookTitle": "Handbook of Nature Food", "date": "May 2022",
                   "_meta": {"parsedDate": "2022-05"}, "collections": ["SUB23456"], "inPublications": true}),
        ),
        item("LOOSE234", json!({"itemType": "note", "note": "<h1>Reading list</h1><p>maize</p>"})),
    ] {
        family.insert(object);
    }
    family.link();
    family
}

fn tree() -> CollectionTree {
    CollectionTree::new(vec![
        item("CROPS234", json!({"name": "Crops", "parentCollection": false})),
        item("SUB23456", json!({"name": "Sub", "parentCollection": "CROPS234"})),
        item("GONE2345", json!({"name": "Trashed", "parentCollection": false, "deleted": true})),
    ])
}

/// The keys a plan matches in [`library`], rows and children in order.
fn run(conditions: &[(&str, &str, &str)]) -> Vec<String> {
    run_with(conditions, Vec::new())
}

fn run_with(conditions: &[(&str, &str, &str)], fulltext: KeySets) -> Vec<String> {
    let plan = plan(conditions);
    let family = library();
    let tree = tree();
    let expanded: KeySets = ["CROPS234"].iter().map(|k| ((*k).to_owned(), tree.with_descendants(k))).collect();
    let expanded = if plan.flags.recursive { expanded } else { Vec::new() };
    let context = Context { collections: &expanded, fulltext: &fulltext, now_ms: NOW };
    let rows = plan.decide(&family, Some(&tree), &context);
    let evaluated = super::Evaluated { rows, scanned: 0, requests: 0, fulltext_reads: 0 };
    evaluated.matched_keys().into_iter().map(str::to_owned).collect()
}

fn sorted(mut keys: Vec<String>) -> Vec<String> {
    keys.sort();
    keys
}

// ---- parsing ----

#[test]
fn reads_a_search_from_the_api_leniently() {
    let json = json!({
        "key": "SRCH2345", "version": 7, "library": {"type": "user", "id": 1},
        "data": {"key": "SRCH2345", "version": 7, "name": "Heat",
                 "conditions": [{"condition": "tag", "operator": "is", "value": "maize"},
                                {"condition": "joinMode", "operator": "any"},
                                {"condition": "numPages", "operator": "isGreaterThan", "value": 300},
                                "not a condition"]}
    });
    let search = SavedSearch::from_api(&json).unwrap();
    assert_eq!((search.key.as_str(), search.version, search.name.as_str()), ("SRCH2345", 7, "Heat"));
    assert_eq!(search.conditions.len(), 3);
    assert_eq!(search.conditions[1], SearchCondition::new("joinMode", "any", ""));
    assert_eq!(search.conditions[2].value, "300");
    assert_eq!(search.to_string(), r#""Heat": tag is "maize"; joinMode any; numPages isGreaterThan "300""#);
    // Only a key is required; the rest reads as empty.
    let bare = SavedSearch::from_api(&json!({"key": "SRCH2345", "data": {}})).unwrap();
    assert!(bare.name.is_empty() && bare.conditions.is_empty());
    assert!(SavedSearch::from_api(&json!({"data": {"name": "x"}})).is_none());
    // It serializes as the API names things, for a tool to print.
    let shown = serde_json::to_value(&search.conditions[0]).unwrap();
    assert_eq!(shown, json!({"condition": "tag", "operator": "is", "value": "maize"}));
}

// ---- refusals ----

#[test]
fn refuses_naming_every_unsupported_condition() {
    let error = SearchPlan::new(&search(&[
        ("title", "contains", "maize"),
        ("savedSearch", "is", "ABCD2345"),
        ("fileTypeID", "is", "1"),
        ("numPages", "isGreaterThan", "300"),
        ("fulltextContent/regexp", "contains", "ma.ze"),
        ("date", "isBefore", "7/15/2021"),
        ("dateAdded", "isInTheLast", "7 fortnights"),
        ("anyField", "doesNotContain", "x"),
        ("retracted", "true", ""),
    ]))
    .unwrap_err();
    let named: Vec<(&str, &str)> =
        error.conditions.iter().map(|c| (c.condition.as_str(), c.operator.as_str())).collect();
    assert_eq!(
        named,
        [
            ("savedSearch", "is"),
            ("fileTypeID", "is"),
            ("numPages", "isGreaterThan"),
            ("fulltextContent/regexp", "contains"),
            ("date", "isBefore"),
            ("dateAdded", "isInTheLast"),
            ("anyField", "doesNotContain"),
            ("retracted", "true"),
        ]
    );
    let message = error.to_string();
    assert!(message.contains("`savedSearch is`") && message.contains("`fileTypeID is`"), "{message}");
    assert!(message.contains("7/15/2021") && message.contains("Open it in Zotero"), "{message}");
}

#[test]
fn flags_that_are_off_and_known_conditions_pass() {
    let plan = plan(&[
        ("retracted", "false", ""),
        ("noChildren", "false", ""),
        ("joinMode", "any", ""),
        ("joinMode", "all", ""),
        ("title", "beginsWith", "Heat"),
        ("bookAuthor", "contains", "x"),
        ("childNote", "contains", "x"),
        ("fulltextContent/phrase", "doesNotContain", "x"),
        ("dateModified", "isInTheLast", "3 months"),
        ("DOI", "is", "10.1/x"),
    ]);
    assert!(plan.any, "the first join mode counts");
    assert!(!plan.flags.no_children);
    assert_eq!(plan.rules.len(), 6);
}

// ---- narrowing ----

#[test]
fn narrows_by_positive_conditions_in_all_mode_only() {
    let n = plan(&[("collection", "is", "CROPS234"), ("tag", "is", "maize"), ("itemType", "is", "book")]).narrowing();
    assert_eq!(n.collection.as_ref().map(|k| k.as_str()), Some("CROPS234"));
    assert_eq!(n.params, [("tag", "maize".to_owned()), ("itemType", "book".to_owned())]);
    assert!(!n.trashed && !n.top && !n.no_annotations);

    let n = plan(&[("joinMode", "any", ""), ("collection", "is", "CROPS234"), ("tag", "is", "maize")]).narrowing();
    assert_eq!((n.collection, n.params.len()), (None, 0));

    // Negated or fuzzy conditions, odd tags and unknown types narrow nothing.
    let n = plan(&[
        ("tag", "isNot", "maize"),
        ("tag", "contains", "maize"),
        ("tag", "is", "-maize"),
        ("tag", "is", "a || b"),
        ("itemType", "is", "spaceship"),
        ("collection", "isNot", "CROPS234"),
    ])
    .narrowing();
    assert_eq!((n.collection, n.params.len()), (None, 0));
    assert!(n.no_annotations, "no annotation can pass a negated condition or a wrong type");

    // With parents and children, a child's tag counts for its parent: only the collection narrows, and the trash
    // is read (a trashed child's match reaches its parent).
    let n =
        plan(&[("includeParentsAndChildren", "true", ""), ("collection", "is", "CROPS234"), ("tag", "is", "maize")])
            .narrowing();
    assert!(n.collection.is_some() && n.params.is_empty() && n.trashed && !n.top);

    let n = plan(&[("noChildren", "true", ""), ("title", "contains", "x")]).narrowing();
    assert!(n.top);
    let n = plan(&[("deleted", "true", "")]).narrowing();
    assert!(n.trashed && !n.no_annotations);
}

// ---- local decisions ----

#[test]
fn the_date_names_are_the_schema_s() {
    let all = |name| field_names(name).map(|(own, mapped)| [&[own][..], mapped].concat());
    assert_eq!(all("date"), Some(BASE_DATE_NAMES.to_vec()));
    assert_eq!(all("bookTitle"), Some(vec!["bookTitle"]));
    assert_eq!(field_names("fileTypeID"), None);
}

#[test]
fn conditions_match_items_at_every_level() {
    // The annotation and the trashed book's items are tagged too; only non-trashed matches count.
    assert_eq!(run(&[("tag", "is", "MAIZE")]), ["PAPER234", "ANNOT234"]);
    assert_eq!(run(&[("tag", "contains", "stress")]), ["PAPER234"]);
    // A negated condition takes every other item, except annotations.
    assert_eq!(sorted(run(&[("tag", "isNot", "maize")])), ["LOOSE234", "NOTE2345", "PDF23456", "SECTION2"]);
    assert_eq!(run(&[("tag", "doesNotContain", "a")]).len(), 3);
}

#[test]
fn fields_read_every_name_they_go_by() {
    assert_eq!(sorted(run(&[("publicationTitle", "contains", "nature food")])), ["PAPER234", "SECTION2"]);
    assert_eq!(run(&[("publicationTitle", "is", "nature food")]), ["PAPER234"]);
    assert_eq!(run(&[("title", "beginsWith", "heat")]), ["PAPER234"]);
    // "Full Text PDF" and "Crops" have no "a"; notes have no title field at all.
    assert_eq!(sorted(run(&[("title", "doesNotContain", "a")])), ["LOOSE234", "NOTE2345", "PDF23456", "SECTION2"]);
    assert_eq!(run(&[("itemType", "is", "bookSection")]), ["SECTION2"]);
}

#[test]
fn creators_are_first_and_last_name_or_a_single_name() {
    assert_eq!(run(&[("creator", "is", "ada weiss")]), ["PAPER234"]);
    assert_eq!(run(&[("editor", "is", "FAO")]), ["PAPER234"]);
    assert!(run(&[("author", "is", "FAO")]).is_empty());
    assert_eq!(run(&[("creator", "contains", "eis")]), ["PAPER234"]);
}

#[test]
fn notes_annotations_and_any_field() {
    assert_eq!(run(&[("note", "contains", "yield on")]), ["NOTE2345"]);
    assert!(run(&[("note", "contains", "<b>")]).is_empty(), "markup is not text");
    assert_eq!(run(&[("annotationComment", "contains", "KEY")]), ["ANNOT234"]);
    // "yield" is in the note, and an annotation's text is not a field; "reading list" is only in a note.
    assert_eq!(run(&[("anyField", "contains", "yield")]), ["NOTE2345"]);
    assert_eq!(run(&[("anyField", "contains", "reading list")]), ["LOOSE234"]);
    assert_eq!(run(&[("anyField", "contains", "2021-07-00")]), ["PAPER234"], "the date as Zotero stores it");
    assert_eq!(run(&[("anyField", "contains", "weiss")]), ["PAPER234"]);
}

#[test]
fn dates_compare_as_zotero_stores_them() {
    assert_eq!(run(&[("date", "is", "2021")]), ["PAPER234"]);
    assert_eq!(run(&[("date", "is", "July 2021")]), ["PAPER234"]);
    assert!(run(&[("date", "is", "2021-07-15")]).is_empty());
    assert_eq!(run(&[("date", "isAfter", "2021")]), ["SECTION2"]);
    assert_eq!(run(&[("date", "isBefore", "2021-08")]), ["PAPER234"]);
    assert_eq!(sorted(run(&[("date", "isNot", "2021")])), ["LOOSE234", "NOTE2345", "PDF23456", "SECTION2"]);
    assert_eq!(run(&[("dateAdded", "isInTheLast", "7 days")]), ["PAPER234", "ANNOT234"]);
    assert_eq!(run(&[("dateAdded", "is", "yesterday")]), ["ANNOT234"]);
    assert_eq!(run(&[("dateAdded", "isBefore", "2024")]), ["PDF23456"]);
    assert_eq!(run(&[("dateModified", "isAfter", "2024-05-15 09:00:00")]), ["PAPER234", "ANNOT234"]);
}

#[test]
fn join_modes_and_flags() {
    let both = [("tag", "is", "maize"), ("title", "contains", "heat")];
    assert_eq!(run(&both), ["PAPER234"]);
    let either = [("joinMode", "any", ""), ("tag", "is", "maize"), ("itemType", "is", "bookSection")];
    assert_eq!(run(&either), ["PAPER234", "ANNOT234", "SECTION2"], "rows newest first");
    assert_eq!(run(&[("noChildren", "true", ""), ("tag", "is", "maize")]), ["PAPER234"]);
    // The trash: the book and its note (a child of a trashed item is in the trash too).
    assert_eq!(run(&[("deleted", "true", ""), ("tag", "is", "maize")]), ["BOOK2345"]);
    assert_eq!(run(&[("deleted", "true", "")]), ["BOOK2345", "BKNOTE23"]);
    assert_eq!(run(&[("includeDeleted", "true", ""), ("tag", "is", "maize")]).len(), 3);
    // Unfiled: top-level, in no collection outside the trash, not in My Publications.
    assert_eq!(run(&[("unfiled", "true", "")]), ["LOOSE234"]);
    assert_eq!(run(&[("publications", "true", "")]), ["SECTION2"]);
}

#[test]
fn collections_with_and_without_subcollections() {
    assert_eq!(run(&[("collection", "is", "CROPS234")]), ["PAPER234"]);
    assert_eq!(run(&[("collection", "is", "0_CROPS234")]), ["PAPER234"], "the old library-prefixed form");
    assert_eq!(sorted(run(&[("collection", "is", "CROPS234"), ("recursive", "true", "")])), ["PAPER234", "SECTION2"]);
    assert_eq!(
        sorted(run(&[("collection", "isNot", "CROPS234"), ("recursive", "true", "")])),
        ["LOOSE234", "NOTE2345", "PDF23456"]
    );
}

#[test]
fn parents_and_children_share_their_matches() {
    // The note matches; with includeParentsAndChildren its parent does too, and the parent's other children
    // (attachment, not annotation).
    let note = ("note", "contains", "monday");
    assert_eq!(run(&[note]), ["NOTE2345"]);
    let family = run(&[note, ("includeParentsAndChildren", "true", "")]);
    assert_eq!(family, ["PAPER234", "NOTE2345"], "a child's match reaches its parent, not its siblings");
    assert_eq!(run(&[note, ("includeParents", "true", "")]), ["PAPER234", "NOTE2345"]);
    let tagged = [("tag", "is", "heat stress"), ("includeChildren", "true", "")];
    assert_eq!(run(&tagged), ["PAPER234", "PDF23456", "NOTE2345"]);
    // Negated, the extended set is left out: the paper, its note and its attachment all "have" the tag.
    let not_tagged = [("tag", "isNot", "heat stress"), ("includeChildren", "true", "")];
    assert_eq!(sorted(run(&not_tagged)), ["LOOSE234", "SECTION2"]);
}

#[test]
fn full_text_comes_from_the_attachments_read() {
    let found = vec![("yield losses".to_owned(), vec!["PDF23456".to_owned()])];
    let contains = [("fulltextContent", "contains", "Yield losses")];
    assert_eq!(run_with(&contains, found.clone()), ["PDF23456"]);
    let with_parent = [("fulltextContent", "contains", "yield losses"), ("includeParentsAndChildren", "true", "")];
    assert_eq!(run_with(&with_parent, found.clone()), ["PAPER234", "PDF23456"]);
    // Full text alone is not a negated table condition: annotations lack it too.
    let lacks = run_with(&[("fulltextContent", "doesNotContain", "yield losses")], found);
    assert_eq!(sorted(lacks), ["ANNOT234", "LOOSE234", "NOTE2345", "PAPER234", "SECTION2"]);
}

#[test]
fn rows_group_children_under_their_top_level_item() {
    let plan = plan(&[("tag", "is", "maize")]);
    let family = library();
    let context = Context { collections: &[], fulltext: &[], now_ms: NOW };
    let rows = plan.decide(&family, Some(&tree()), &context);
    assert_eq!(rows.len(), 1);
    assert!(rows[0].matched);
    assert_eq!(rows[0].item.key, "PAPER234");
    assert_eq!(rows[0].children.iter().map(|c| c.key.as_str()).collect::<Vec<_>>(), ["ANNOT234"]);

    // A row shown only for its child.
    let rows = SearchPlan::new(&search(&[("note", "contains", "monday")])).unwrap().decide(&family, None, &context);
    assert!(!rows[0].matched);
    assert_eq!(rows[0].item.key, "PAPER234");
}
