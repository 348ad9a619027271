// SQLite is the native build's.
#![cfg(not(target_arch = "wasm32"))]

use serde_json::{json, Value};

use super::*;
use crate::mirror::schema::migrate;
use crate::mirror::sqlite::SqliteDb;
use crate::mirror::store::{self, Listing as Kind};
use crate::zotero::ZoteroObject;

const LIB: &str = "users/1";

fn item(key: &str, version: u64, data: Value) -> ZoteroObject {
    let mut data = data.as_object().cloned().unwrap_or_default();
    data.insert("key".into(), json!(key));
    data.entry("dateModified").or_insert(json!(format!("2024-01-01T00:00:{:02}Z", version % 60)));
    ZoteroObject { key: key.into(), version, meta: serde_json::Map::new(), data }
}

fn article(key: &str, version: u64, title: &str, creator: &str) -> ZoteroObject {
    item(
        key,
        version,
        json!({ "itemType": "journalArticle", "title": title, "date": "2021",
                "creators": [{ "creatorType": "author", "firstName": "Ann", "lastName": creator }],
                "tags": [{ "tag": "Read" }], "collections": [] }),
    )
}

async fn db_with(items: &[ZoteroObject]) -> SqliteDb {
    let db = SqliteDb::in_memory().expect("a database");
    migrate(&db).await.expect("migrated");
    db.batch(&[store::upsert(LIB, Kind::Items, items)]).await.expect("stored");
    db
}

fn listing(words: &[&str]) -> Listing {
    Listing {
        collection: None,
        item_type: None,
        tags: Vec::new(),
        include_trashed: false,
        since: None,
        words: words.iter().map(|w| (*w).to_owned()).collect(),
        keys: None,
        top: false,
        sort: SortField::Title,
        descending: false,
        start: 0,
        limit: 100,
    }
}

async fn keys(db: &SqliteDb, listing: &Listing) -> Vec<String> {
    match list(db, LIB, listing).await.expect("listed") {
        Listed::Found(found) => found.items.into_iter().map(|card| card.key).collect(),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn words_match_inside_titles_and_names_ignoring_case() {
    let db = db_with(&[
        article("AAAAAAAA", 1, "Neural networks for Maize", "Müller"),
        article("BBBBBBBB", 2, "Soil carbon", "Smith"),
        article("CCCCCCCC", 3, "ÉCOLE and AI", "Ng"),
    ])
    .await;
    assert_eq!(keys(&db, &listing(&["RAL NET"])).await, ["AAAAAAAA"], "a phrase inside a title");
    assert_eq!(keys(&db, &listing(&["müll", "maize"])).await, ["AAAAAAAA"], "every word, title or creator");
    assert_eq!(keys(&db, &listing(&["école"])).await, ["CCCCCCCC"], "case folded beyond ASCII");
    assert_eq!(keys(&db, &listing(&["ai"])).await, ["AAAAAAAA", "CCCCCCCC"], "short words are scanned for");
    assert_eq!(keys(&db, &listing(&["2021"])).await.len(), 3, "the year");
    assert!(keys(&db, &listing(&["carbon", "ng"])).await.is_empty(), "one field or another, but every word");
}

#[tokio::test]
async fn the_index_follows_changes_and_deletions() {
    let db = db_with(&[article("AAAAAAAA", 1, "Old title", "Smith")]).await;
    db.batch(&[store::upsert(LIB, Kind::Items, &[article("AAAAAAAA", 2, "New title", "Smith")])]).await.expect("ok");
    assert!(keys(&db, &listing(&["old"])).await.is_empty());
    assert_eq!(keys(&db, &listing(&["new"])).await, ["AAAAAAAA"]);
    db.batch(&[store::delete(LIB, Kind::Items, &["AAAAAAAA".to_owned()])]).await.expect("deleted");
    assert!(keys(&db, &listing(&["title"])).await.is_empty());
    db.batch(&[crate::platform::Statement::new(
        "INSERT INTO mirror_search_text (mirror_search_text) VALUES ('integrity-check')",
        Vec::new(),
    )])
    .await
    .expect("the index is whole");
}

#[tokio::test]
async fn filters_sort_and_page_as_the_web_api() {
    let mut note =
        item("NNNNNNNN", 5, json!({ "itemType": "note", "parentItem": "AAAAAAAA", "note": "<p>Zebra notes</p>" }));
    note.data.insert("tags".into(), json!([{ "tag": "read" }]));
    let trashed = item("TTTTTTTT", 6, json!({ "itemType": "book", "title": "Zebra book", "deleted": 1 }));
    let db = db_with(&[
        article("AAAAAAAA", 1, "Zebra stripes", "Smith"),
        article("BBBBBBBB", 2, "[Aardvark] habits", "Jones"),
        note,
        trashed,
    ])
    .await;
    assert_eq!(keys(&db, &listing(&["zebra"])).await, ["NNNNNNNN", "AAAAAAAA"], "a note by its title; no trash");
    let mut with_trash = listing(&["zebra"]);
    with_trash.include_trashed = true;
    assert_eq!(keys(&db, &with_trash).await.len(), 3);
    let mut notes = listing(&[]);
    notes.item_type = TermSet::parse("-note");
    assert_eq!(keys(&db, &notes).await, ["BBBBBBBB", "AAAAAAAA"], "by title, brackets ignored");
    notes.descending = true;
    assert_eq!(keys(&db, &notes).await, ["AAAAAAAA", "BBBBBBBB"]);
    let mut tagged = listing(&[]);
    tagged.tags = vec![TermSet::parse("READ").expect("a set"), TermSet::parse("-nothing || other").expect("a set")];
    assert_eq!(keys(&db, &tagged).await.len(), 3, "tags ignore case");
    let mut page = listing(&[]);
    page.start = 2;
    page.limit = 1;
    let Listed::Found(found) = list(&db, LIB, &page).await.expect("listed") else { panic!() };
    assert_eq!((found.items.len(), found.total), (1, 3));
    page.start = 10;
    let Listed::Found(found) = list(&db, LIB, &page).await.expect("listed") else { panic!() };
    assert_eq!((found.items.len(), found.total), (0, 3), "past the end, the total all the same");
    let cards = cards(&db, LIB, &["NNNNNNNN".to_owned(), "AAAAAAAA".to_owned()]).await.expect("read");
    assert_eq!(cards.iter().map(|c| c.key.as_str()).collect::<Vec<_>>(), ["NNNNNNNN", "AAAAAAAA"]);
    let mut unknown = listing(&[]);
    unknown.collection = Some("ZZZZZZZZ".into());
    assert_eq!(list(&db, LIB, &unknown).await.expect("listed"), Listed::NoSuchCollection);
}

#[tokio::test]
async fn numbers_of_children_are_zoteros() {
    let db = db_with(&[
        article("AAAAAAAA", 1, "Parent", "Smith"),
        item("NNNNNNNN", 2, json!({ "itemType": "note", "parentItem": "AAAAAAAA", "note": "x" })),
        item("DDDDDDDD", 3, json!({ "itemType": "note", "parentItem": "AAAAAAAA", "note": "y", "deleted": 1 })),
    ])
    .await;
    let Listed::Found(found) = list(&db, LIB, &listing(&[])).await.expect("listed") else { panic!() };
    let children: Vec<(String, Option<u64>)> =
        found.items.iter().map(|c| (c.key.clone(), c.meta.num_children)).collect();
    assert!(children.contains(&("AAAAAAAA".to_owned(), Some(1))), "{children:?}");
    assert!(children.contains(&("NNNNNNNN".to_owned(), Some(0))), "{children:?}");
}

#[test]
fn refuses_what_it_cannot_answer_exactly() {
    let mut odd = listing(&["a\u{1f}b"]);
    assert_eq!(odd.unsupported(), Some(Unsupported::ControlCharacter));
    odd = listing(&[]);
    odd.item_type = TermSet::parse("book || article");
    assert_eq!(odd.unsupported(), Some(Unsupported::UnknownItemType));
    let many: Vec<String> = (0..50).map(|i| format!("w{i}")).collect();
    odd = listing(&many.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(odd.unsupported(), Some(Unsupported::TooLong));
}

#[tokio::test]
async fn a_word_search_reads_the_items_it_found_not_the_library() {
    let db = db_with(&[article("AAAAAAAA", 1, "Neural networks", "Smith")]).await;
    let plan = |listing: Listing| {
        let (sql, params) = page_statement(LIB, &listing);
        let db = &db;
        async move {
            let rows = db.query(&format!("EXPLAIN QUERY PLAN {sql}"), &params).await.expect("a plan");
            rows.iter().filter_map(|row| row.get("detail")?.as_str().map(str::to_owned)).collect::<Vec<_>>()
        }
    };
    let found = plan(listing(&["neural"])).await;
    assert!(found.iter().any(|step| step.contains("VIRTUAL TABLE INDEX")), "{found:?}");
    assert!(found.iter().all(|step| !step.starts_with("SCAN s")), "every item read: {found:?}");
    assert!(found.iter().any(|step| step.contains("SEARCH s USING PRIMARY KEY (library=? AND key=?)")), "{found:?}");
    assert!(found.iter().any(|step| step.contains("SEARCH c USING INDEX mirror_items_parent")), "{found:?}");
    let scanned = plan(listing(&["ab"])).await;
    assert!(scanned.iter().any(|step| step.starts_with("SEARCH s USING PRIMARY KEY (library=?)")), "{scanned:?}");
}
