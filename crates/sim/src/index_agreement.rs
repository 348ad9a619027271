//! The listings read through the index (crates/sim/src/derived.rs: kept orders, children and members, quick
//! search's lowered text) answer exactly what the direct computation answers: the same total and the same keys
//! in the same order, over a synthetic library after edits, a trashed item, new children and a relation, for
//! every order, direction, `since`, trash and scope the mirror and the tools ask for.

use std::rc::Rc;

use serde_json::json;

use crate::query::{self, Action};
use crate::search::{self, ItemScope};
use crate::{derived, LibraryRef, Simulator, DEMO_API_KEY, DEMO_USER_ID};

const LIB: LibraryRef = LibraryRef::User(DEMO_USER_ID);

fn send(sim: &Simulator, method: &str, path: &str, version: u64, body: serde_json::Value) -> u16 {
    let request = http::Request::builder()
        .method(method)
        .uri(format!("https://api.zotero.org/users/{DEMO_USER_ID}{path}"))
        .header("Zotero-API-Version", "3")
        .header("Zotero-API-Key", DEMO_API_KEY)
        .header("Content-Type", "application/json")
        .header("If-Unmodified-Since-Version", version.to_string())
        .body(body.to_string().into_bytes())
        .unwrap_or_else(|e| panic!("{path}: {e}"));
    sim.handle(request).status().as_u16()
}

/// A synthetic library with changes of every kind the index keeps: an edit, an item trashed, a note added to
/// an item, a relation, an item filed in a collection, an item whose parent is gone.
fn changed_library() -> (Rc<Simulator>, Vec<String>, String) {
    let sim = Rc::new(Simulator::synthetic(1_200, 5));
    let top: Vec<String> = {
        let state = sim.state.borrow();
        let lib = state.libraries.get(&LIB).unwrap_or_else(|| panic!("the library"));
        lib.items.values().filter(|r| r.data.parent.is_none()).take(6).map(|r| r.key.clone()).collect()
    };
    let uri = format!("http://zotero.org/users/{DEMO_USER_ID}/items/{}", top[1]);
    let v = sim.library_version(LIB);
    assert_eq!(
        send(&sim, "PATCH", &format!("/items/{}", top[0]), v, json!({ "relations": { "dc:relation": uri } })),
        204
    );
    let v = sim.library_version(LIB);
    assert_eq!(send(&sim, "PATCH", &format!("/items/{}", top[2]), v, json!({ "deleted": 1 })), 204);
    let v = sim.library_version(LIB);
    assert_eq!(send(&sim, "PATCH", &format!("/items/{}", top[3]), v, json!({ "title": "A renamed item" })), 204);
    let collection = {
        let state = sim.state.borrow();
        state.libraries.get(&LIB).and_then(|l| l.collections.keys().next().cloned()).unwrap_or_default()
    };
    sim.insert_item(LIB, json!({ "itemType": "note", "parentItem": top[4], "note": "<p>Glacier notes</p>" }));
    sim.insert_item(LIB, json!({ "itemType": "book", "title": "Filed glacier book", "collections": [collection] }));
    sim.insert_item(
        LIB,
        json!({ "itemType": "note", "parentItem": top[5], "note": "<p>Trashed child</p>", "deleted": true }),
    );
    (sim, top, collection)
}

/// (total, keys) of a listing, as the route reads it (index first) and directly (no index).
fn both(sim: &Simulator, scope: &ItemScope, query: &str) -> ((usize, Vec<String>), (usize, Vec<String>)) {
    let params = query::parse(query, Action::Items, false).unwrap_or_else(|e| panic!("{query}: {e:?}"));
    let state = sim.state.borrow();
    let lib = state.libraries.get(&LIB).unwrap_or_else(|| panic!("the library"));
    let index = derived::of(lib);
    let index = index.as_ref().as_ref();
    assert!(index.is_some(), "a synthetic library has an index");
    let keys = |page: Vec<&crate::state::ItemRecord>| page.iter().map(|r| r.key.clone()).collect::<Vec<_>>();
    let fast = match search::unfiltered_page(lib, index, scope, &params)
        .or_else(|| search::plain_page(lib, index, scope, &params))
    {
        Some((total, page)) => (total, keys(page)),
        None => {
            let all = search::items_with(lib, index, scope, &params).unwrap_or_else(|e| panic!("{query}: {e:?}"));
            (all.len(), keys(search::page(&all, &params)))
        }
    };
    let all = search::items_with(lib, None, scope, &params).unwrap_or_else(|e| panic!("{query}: {e:?}"));
    let direct = (all.len(), keys(search::page(&all, &params)));
    (fast, direct)
}

#[test]
fn listings_through_the_index_answer_what_the_direct_computation_answers() {
    let (sim, top, collection) = changed_library();
    let v = sim.library_version(LIB);
    let scopes = [ItemScope::All, ItemScope::Top, ItemScope::Trash];
    let sorts = ["dateAdded", "dateModified", "title", "creator", "itemType", "date", "addedBy", "publicationTitle"];
    let sinces = [String::new(), "&since=0".into(), format!("&since={}", v - 5), format!("&since={}", v / 2)];
    let mut compared = 0;
    for scope in &scopes {
        for sort in sorts {
            for direction in ["asc", "desc"] {
                for since in &sinces {
                    for trash in ["", "&includeTrashed=1"] {
                        for start in [0, 450] {
                            let query =
                                format!("sort={sort}&direction={direction}{since}{trash}&start={start}&limit=100");
                            let (fast, direct) = both(&sim, scope, &query);
                            assert_eq!(fast, direct, "{scope:?} {query}");
                            compared += 1;
                        }
                    }
                }
            }
        }
    }
    // Searches, children and collections, with the index's lowered text and members.
    let others = [
        (ItemScope::Top, "q=glacier&limit=100".to_string()),
        (ItemScope::All, "q=glacier&includeTrashed=1&sort=title&limit=50&start=10".to_string()),
        (ItemScope::Top, "q=renamed&limit=10".to_string()),
        (ItemScope::Top, "q=%222010%22&sort=date&limit=100".to_string()),
        (ItemScope::All, format!("q=glacier&since={}&limit=100", v / 2)),
        (ItemScope::Top, "q=a&qmode=everything&limit=100&sort=creator".to_string()),
        (ItemScope::Children(top[4].clone()), "limit=100".to_string()),
        (ItemScope::Children(top[5].clone()), "includeTrashed=1".to_string()),
        (ItemScope::Collection { key: collection.clone(), top: true }, "limit=100".to_string()),
        (ItemScope::Collection { key: collection.clone(), top: false }, "sort=title&limit=100".to_string()),
        (ItemScope::Collection { key: collection, top: false }, "q=glacier&includeTrashed=1".to_string()),
    ];
    for (scope, query) in &others {
        let (fast, direct) = both(&sim, scope, query);
        assert_eq!(fast, direct, "{scope:?} {query}");
        compared += 1;
    }
    assert!(compared > 700, "{compared}");
    // Not vacuous: the pages hold items, the trash one, the since pages the changes.
    let (_, trash) = both(&sim, &ItemScope::Trash, "limit=100").0;
    assert!(trash.contains(&top[2]), "{trash:?}");
    let (changed, _) = both(&sim, &ItemScope::Top, &format!("since={}&sort=dateAdded", v - 5)).0;
    assert!((1..20).contains(&changed), "{changed}");
    let (found, _) = both(&sim, &ItemScope::Top, "q=glacier&limit=100").0;
    assert!(found > 10, "{found}");
}
