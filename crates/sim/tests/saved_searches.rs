//! Saved searches: the simulator's `/searches` endpoints (stored, versioned, deleted like collections), and the
//! core's evaluation of each supported condition checked against the simulator's own answer to the same
//! question (`tag is X` against `/items?tag=X`, a collection against its listing, a year against `q=<year>`, full
//! text against `qmode=everything`…), over the demo library. Where the API has no way to ask (a DOI, a note's
//! text), the expected keys are read from the simulator's items directly.

mod common;

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::rc::Rc;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};
use zotero_mcp_core::html_text::html_to_text;
use zotero_mcp_core::testing::ManualClock;
use zotero_mcp_core::zotero::{
    Evaluated, EvaluationLimits, LibraryKind, ObjectKey, SavedSearchError, SearchPlan, ZoteroClient, ZoteroSettings,
};
use zotero_sim::demo::{self, DEMO_JSON};
use zotero_sim::schema::Schema;
use zotero_sim::{InProcess, LibraryRef, Simulator};

use common::{get, send, KEY, LIB, USER};

// ---------------------------------------------------------------------------------------------------------------
// The bench: the demo library under user 1, a core client on it, searches created through the API.

struct Bench {
    sim: Rc<Simulator>,
    zotero: ZoteroClient,
}

fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}

fn client(sim: &Rc<Simulator>, kind: LibraryKind, id: u64) -> ZoteroClient {
    let settings = ZoteroSettings {
        api_key: KEY.into(),
        library_kind: kind,
        library_id: Some(id.to_string()),
        base_url: Some("https://api.zotero.org".into()),
    };
    ZoteroClient::new(settings, Rc::new(InProcess(sim.clone())), ManualClock::at(now_ms())).unwrap()
}

/// The demo library, plus a note under a trashed paper (Zotero counts it as trashed; the listing does not).
fn bench() -> Bench {
    let sim = Rc::new(common::sim());
    demo::load(&sim, LIB, DEMO_JSON);
    sim.insert_item(
        LIB,
        json!({"key": "TRASHN23", "itemType": "note", "parentItem": "36P5CMPH",
               "note": "<p>maize under heat</p>", "tags": [{"tag": "maize"}]}),
    );
    let zotero = client(&sim, LibraryKind::User, USER);
    Bench { sim, zotero }
}

fn create_search(sim: &Simulator, conditions: Value) -> String {
    let resp = send(
        sim,
        "POST",
        &format!("/users/{USER}/searches"),
        &[],
        Some(json!([{"name": "Test", "conditions": conditions}])),
    );
    assert_eq!(resp.status, 200, "{}", resp.text());
    let report = resp.json();
    report["success"]["0"].as_str().map(str::to_owned).unwrap_or_else(|| panic!("search not created: {report}"))
}

impl Bench {
    /// Creates the search through the API, reads it back with the client and evaluates it.
    async fn evaluate_with(&self, conditions: Value, limits: EvaluationLimits) -> Result<Evaluated, SavedSearchError> {
        let key = create_search(&self.sim, conditions);
        let search = self.zotero.saved_search(&ObjectKey::parse(&key).unwrap()).await.unwrap();
        let plan = SearchPlan::new(&search).unwrap_or_else(|e| panic!("{e}"));
        plan.evaluate(&self.zotero, &limits, now_ms()).await
    }

    /// The keys the search matches (every level), checking the request count it reports.
    async fn matches(&self, conditions: Value) -> BTreeSet<String> {
        let before = self.sim.requests().len();
        let key = create_search(&self.sim, conditions);
        let search = self.zotero.saved_search(&ObjectKey::parse(&key).unwrap()).await.unwrap();
        let plan = SearchPlan::new(&search).unwrap_or_else(|e| panic!("{e}"));
        let between = self.sim.requests().len();
        let evaluated = plan.evaluate(&self.zotero, &EvaluationLimits::default(), now_ms()).await.unwrap();
        assert_eq!(evaluated.requests, self.sim.requests().len() - between, "the requests it says it made");
        assert!(between > before);
        let keys: BTreeSet<String> = evaluated.matched_keys().into_iter().map(str::to_owned).collect();
        assert_eq!(keys.len(), evaluated.matched_count(), "an item is listed once");
        keys
    }

    /// Every item's JSON, trashed or not.
    fn items(&self) -> Vec<Value> {
        self.sim.items(LIB)
    }

    /// Keys of `/items?<query>` (format=keys: every page at once).
    fn listed(&self, query: &str) -> BTreeSet<String> {
        let resp = get(&self.sim, &format!("/users/{USER}/items?format=keys&{query}"));
        assert_eq!(resp.status, 200, "{}", resp.text());
        resp.text().lines().filter(|l| !l.is_empty()).map(str::to_owned).collect()
    }

    fn listed_at(&self, path: &str) -> BTreeSet<String> {
        let resp = get(&self.sim, &format!("/users/{USER}/{path}"));
        assert_eq!(resp.status, 200, "{}", resp.text());
        resp.text().lines().filter(|l| !l.is_empty()).map(str::to_owned).collect()
    }

    /// Zotero's trash: trashed items, the children of trashed items, the annotations under either.
    fn zotero_trash(&self) -> BTreeSet<String> {
        let items = self.items();
        let by_key = |k: &str| items.iter().find(|i| i["key"] == k);
        let trashed = |i: &Value| i["data"]["deleted"] == json!(true) || i["data"]["deleted"] == json!(1);
        let parent = |i: &Value| i["data"]["parentItem"].as_str().and_then(by_key);
        items
            .iter()
            .filter(|i| trashed(i) || parent(i).is_some_and(|p| trashed(p) || parent(p).is_some_and(trashed)))
            .map(|i| i["key"].as_str().unwrap().to_owned())
            .collect()
    }

    fn outside_trash(&self, keys: BTreeSet<String>) -> BTreeSet<String> {
        let trash = self.zotero_trash();
        keys.into_iter().filter(|k| !trash.contains(k)).collect()
    }

    /// Items (outside Zotero's trash) whose JSON passes `keep`.
    fn where_(&self, keep: impl Fn(&Value) -> bool) -> BTreeSet<String> {
        let keys = self.items().iter().filter(|i| keep(i)).map(|i| i["key"].as_str().unwrap().to_owned()).collect();
        self.outside_trash(keys)
    }

    fn of_type(&self, item_type: &str) -> BTreeSet<String> {
        self.where_(|i| i["data"]["itemType"] == item_type)
    }
}

fn set(keys: &[&str]) -> BTreeSet<String> {
    keys.iter().map(|k| (*k).to_owned()).collect()
}

fn minus(a: &BTreeSet<String>, b: &BTreeSet<String>) -> BTreeSet<String> {
    a.difference(b).cloned().collect()
}

fn all_but_annotations(b: &Bench) -> BTreeSet<String> {
    b.where_(|i| i["data"]["itemType"] != "annotation")
}

// ---------------------------------------------------------------------------------------------------------------
// The simulator's endpoints.

#[test]
fn searches_are_created_listed_versioned_and_deleted_like_collections() {
    let sim = common::sim();
    let path = format!("/users/{USER}/searches");
    let tag = json!([{"condition": "tag", "operator": "is", "value": "maize"}]);
    let resp = send(
        &sim,
        "POST",
        &path,
        &[],
        Some(json!([
            {"name": "Maize", "conditions": tag},
            {"name": "Empty", "conditions": []},
            {"key": "SRCHKEY2", "version": 0, "name": "Old papers", "conditions": [{"condition": "date", "operator": "isBefore", "value": "2000"}]}
        ])),
    );
    assert_eq!(resp.status, 200, "{}", resp.text());
    let report = resp.json();
    let maize = report["success"]["0"].as_str().unwrap().to_owned();
    assert_eq!(report["success"]["2"], "SRCHKEY2");
    assert_eq!(report["failed"]["1"]["code"], 400);
    assert_eq!(report["failed"]["1"]["message"], "'conditions' cannot be empty");
    assert_eq!(report["successful"]["0"]["data"]["conditions"], tag);
    let created = resp.version();

    // Listing: every search, paged with Total-Results; format=versions; since; searchKey.
    let list = get(&sim, &path);
    assert_eq!((list.status, list.total()), (200, 2));
    assert_eq!(list.version(), created);
    let versions = get(&sim, &format!("{path}?format=versions")).json();
    let mut expected = serde_json::Map::new();
    expected.insert(maize.clone(), json!(created));
    expected.insert("SRCHKEY2".into(), json!(created));
    assert_eq!(versions, Value::Object(expected));
    let one = get(&sim, &format!("{path}?searchKey=SRCHKEY2")).json();
    assert_eq!(one.as_array().unwrap().len(), 1);
    assert_eq!(one[0]["data"]["name"], "Old papers");
    assert_eq!(one[0]["links"]["self"]["href"], format!("https://api.zotero.org/users/{USER}/searches/SRCHKEY2"));
    assert_eq!(get(&sim, &format!("{path}?since={created}")).total(), 0);
    let first = get(&sim, &format!("{path}?limit=1"));
    assert_eq!((first.json().as_array().unwrap().len(), first.total()), (1, 2));
    assert_eq!(get(&sim, &path).version(), created);
    assert_eq!(send(&sim, "GET", &path, &[("If-Modified-Since-Version", &created.to_string())], None).status, 304);

    // One search, with its own version.
    let single = get(&sim, &format!("{path}/{maize}"));
    assert_eq!(single.status, 200);
    assert_eq!(single.version(), created);
    assert_eq!(get(&sim, &format!("{path}/ZZZZZZZZ")).status, 404);

    // PATCH with the version read, then a stale PUT is refused.
    let patched = send(
        &sim,
        "PATCH",
        &format!("{path}/{maize}"),
        &[("If-Unmodified-Since-Version", &created.to_string())],
        Some(json!({"name": "Maize papers"})),
    );
    assert_eq!(patched.status, 204, "{}", patched.text());
    let renamed = patched.version();
    assert!(renamed > created);
    assert_eq!(get(&sim, &format!("{path}/{maize}")).json()["data"]["conditions"], tag, "a PATCH keeps the conditions");
    let stale = send(
        &sim,
        "PUT",
        &format!("{path}/{maize}"),
        &[("If-Unmodified-Since-Version", &created.to_string())],
        Some(json!({"name": "x", "conditions": tag})),
    );
    assert_eq!(stale.status, 412);
    assert_eq!(get(&sim, &format!("{path}?since={created}&format=keys")).text().trim(), maize);
    // An unchanged write changes no version.
    let same =
        send(&sim, "POST", &path, &[], Some(json!([{"key": maize, "version": renamed, "name": "Maize papers"}])));
    assert_eq!(same.json()["unchanged"]["0"], maize.as_str());
    assert_eq!(same.version(), renamed);

    // Deleting: a stale library version is a 412, a single delete needs a version, then /deleted lists it.
    let gone = send(
        &sim,
        "DELETE",
        &format!("{path}?searchKey={maize}"),
        &[("If-Unmodified-Since-Version", &created.to_string())],
        None,
    );
    assert_eq!(gone.status, 412);
    assert_eq!(send(&sim, "DELETE", &format!("{path}/SRCHKEY2"), &[], None).status, 428);
    let gone = send(
        &sim,
        "DELETE",
        &format!("{path}?searchKey={maize}"),
        &[("If-Unmodified-Since-Version", &renamed.to_string())],
        None,
    );
    assert_eq!(gone.status, 204);
    let deleted = get(&sim, &format!("/users/{USER}/deleted?since={renamed}")).json();
    assert_eq!(deleted["searches"], json!([maize]));
    assert_eq!(get(&sim, &path).total(), 1);

    // Searches come back under their key (a fresh write of a deleted key removes it from /deleted).
    let again =
        send(&sim, "POST", &path, &[], Some(json!([{"key": maize, "version": 0, "name": "Back", "conditions": tag}])));
    assert_eq!(again.json()["success"]["0"], maize.as_str());
    assert_eq!(get(&sim, &format!("/users/{USER}/deleted?since={renamed}")).json()["searches"], json!([]));
}

#[test]
fn a_read_only_key_cannot_write_searches_and_settings_stay_read_only() {
    let sim = Simulator::new();
    sim.add_user(USER, KEY, false);
    let resp = send(
        &sim,
        "POST",
        &format!("/users/{USER}/searches"),
        &[],
        Some(json!([{"name": "x", "conditions": [{"condition": "tag", "operator": "is", "value": "a"}]}])),
    );
    assert_eq!(resp.status, 403);
    assert_eq!(get(&sim, &format!("/users/{USER}/settings")).status, 200);
}

#[tokio::test]
async fn the_client_lists_and_reads_saved_searches() {
    let b = bench();
    let searches = b.zotero.saved_searches().await.unwrap();
    let names: BTreeSet<&str> = searches.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, BTreeSet::from(["Maize under heat stress", "Recent work for Chapter 2"]));
    let heat = b.zotero.saved_search(&ObjectKey::parse("HEATMAIZ").unwrap()).await.unwrap();
    assert_eq!(heat.conditions.len(), 3);
    assert_eq!(heat.conditions[1].to_string(), r#"tag is "maize""#);
    assert!(heat.version > 0);
    let missing = b.zotero.saved_search(&ObjectKey::parse("ZZZZZZZZ").unwrap()).await.unwrap_err();
    assert_eq!(missing.status(), Some(404));
}

/// The keys a saved search already in the library matches.
async fn saved(zotero: &ZoteroClient, key: &str) -> BTreeSet<String> {
    let search = zotero.saved_search(&ObjectKey::parse(key).unwrap()).await.unwrap();
    let evaluated =
        SearchPlan::new(&search).unwrap().evaluate(zotero, &EvaluationLimits::default(), now_ms()).await.unwrap();
    evaluated.matched_keys().into_iter().map(str::to_owned).collect()
}

#[tokio::test]
async fn the_demo_searches_find_what_they_say() {
    let b = bench();
    assert_eq!(saved(&b.zotero, "HEATMAIZ").await, set(&["9ZEFCI5U", "JCWN2VTP"]));
    assert_eq!(saved(&b.zotero, "RECENTPS").await, set(&["RSCKVSN3", "FQDCTD9F", "8CR2RQWN", "Q5W3D4ZV"]));

    b.sim.add_demo_groups(KEY);
    let lab = client(&b.sim, LibraryKind::Group, zotero_sim::demo_groups::LAB_GROUP);
    assert_eq!(saved(&lab, zotero_sim::demo_groups::LAB_SEARCH).await, set(&[zotero_sim::demo_groups::LAB_PAPER]));
}

// ---------------------------------------------------------------------------------------------------------------
// Each condition against the simulator's own search.

#[tokio::test]
async fn tags_against_the_tag_parameter() {
    let b = bench();
    let tagged = b.outside_trash(b.listed("tag=maize"));
    assert!(tagged.len() >= 3 && !tagged.contains("TRASHN23"), "{tagged:?}");
    assert_eq!(b.matches(json!([{"condition": "tag", "operator": "is", "value": "Maize"}])).await, tagged);
    // A child's tag makes the child match, not its parent: an annotation here.
    let adaptation = b.outside_trash(b.listed("tag=adaptation"));
    assert!(adaptation.contains("UCN8NLDM"));
    assert_eq!(b.matches(json!([{"condition": "tag", "operator": "is", "value": "adaptation"}])).await, adaptation);
    // isNot: the API's negation, which leaves annotations out as Zotero does.
    let untagged = b.outside_trash(b.listed("tag=-maize"));
    assert_eq!(b.matches(json!([{"condition": "tag", "operator": "isNot", "value": "maize"}])).await, untagged);
    // contains / doesNotContain: the tags holding the text, then the items carrying any of them.
    let names: Vec<String> = get(&b.sim, &format!("/users/{USER}/tags?q=protein&limit=100"))
        .json()
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["tag"].as_str().unwrap().to_owned())
        .collect();
    assert!(names.len() >= 3, "{names:?}");
    let carrying =
        b.outside_trash(b.listed(&format!("tag={}", names.join(" || ").replace(' ', "%20").replace("||", "%7C%7C"))));
    assert_eq!(b.matches(json!([{"condition": "tag", "operator": "contains", "value": "protein"}])).await, carrying);
    let not_carrying = minus(&all_but_annotations(&b), &carrying);
    assert_eq!(
        b.matches(json!([{"condition": "tag", "operator": "doesNotContain", "value": "PROTEIN"}])).await,
        not_carrying
    );
}

#[tokio::test]
async fn item_types_against_the_item_type_parameter() {
    let b = bench();
    let books = b.outside_trash(b.listed("itemType=book"));
    assert!(books.len() >= 4);
    assert_eq!(b.matches(json!([{"condition": "itemType", "operator": "is", "value": "book"}])).await, books);
    let others = b.outside_trash(b.listed("itemType=-book"));
    assert_eq!(b.matches(json!([{"condition": "itemType", "operator": "isNot", "value": "book"}])).await, others);
    let annotations = b.outside_trash(b.listed("itemType=annotation"));
    assert_eq!(
        b.matches(json!([{"condition": "itemType", "operator": "is", "value": "annotation"}])).await,
        annotations
    );
}

#[tokio::test]
async fn collections_against_their_listings() {
    let b = bench();
    let members = b.outside_trash(b.listed_at("collections/9AV8V2XB/items/top?format=keys"));
    assert!(members.len() >= 5);
    assert_eq!(b.matches(json!([{"condition": "collection", "operator": "is", "value": "9AV8V2XB"}])).await, members);
    // With subcollections: the collection's own listing and each one below it.
    let mut tree = BTreeSet::new();
    for key in ["GPXYGUKW", "L8LNPSUB", "9AV8V2XB"] {
        tree.extend(b.outside_trash(b.listed_at(&format!("collections/{key}/items/top?format=keys"))));
    }
    let recursive = json!([{"condition": "collection", "operator": "is", "value": "GPXYGUKW"}, {"condition": "recursive", "operator": "true", "value": ""}]);
    assert_eq!(b.matches(recursive).await, tree);
    let shallow = b.outside_trash(b.listed_at("collections/GPXYGUKW/items/top?format=keys"));
    assert!(shallow.len() < tree.len());
    assert_eq!(b.matches(json!([{"condition": "collection", "operator": "is", "value": "GPXYGUKW"}])).await, shallow);
    let outside = minus(&all_but_annotations(&b), &tree);
    let not_in = json!([{"condition": "collection", "operator": "isNot", "value": "GPXYGUKW"}, {"condition": "recursive", "operator": "true", "value": ""}]);
    assert_eq!(b.matches(not_in).await, outside);
    // A collection that does not exist holds nothing.
    assert!(b.matches(json!([{"condition": "collection", "operator": "is", "value": "ZZZZZZZZ"}])).await.is_empty());
}

#[tokio::test]
async fn titles_creators_and_years_against_quick_search() {
    let b = bench();
    // Quick search matches titles, creators and the year; a word that is in no creator and no year makes it a
    // title search (less notes, which it finds by their first line).
    let titled = minus(&b.outside_trash(b.listed("q=protein")), &b.of_type("note"));
    assert!(titled.len() >= 8);
    assert_eq!(b.matches(json!([{"condition": "title", "operator": "contains", "value": "Protein"}])).await, titled);
    let by_creator = b.outside_trash(b.listed("q=lindqvist"));
    assert!(!by_creator.is_empty());
    assert_eq!(
        b.matches(json!([{"condition": "creator", "operator": "contains", "value": "LINDQVIST"}])).await,
        by_creator
    );
    let year = b.outside_trash(b.listed("q=2022"));
    assert!(year.len() >= 8);
    assert_eq!(b.matches(json!([{"condition": "date", "operator": "is", "value": "2022"}])).await, year);
    // Before and after compare with the parsed date, padded (`2022-00-00` is before March 2022).
    let parsed = |i: &Value| {
        i["meta"]["parsedDate"].as_str().map(|d| {
            let mut parts: Vec<&str> = d.split('-').collect();
            parts.resize(3, "00");
            parts.join("-")
        })
    };
    let before = b.where_(|i| parsed(i).is_some_and(|d| d.as_str() < "2022-03-00"));
    assert_eq!(b.matches(json!([{"condition": "date", "operator": "isBefore", "value": "March 2022"}])).await, before);
    let after = b.where_(|i| parsed(i).is_some_and(|d| d.as_str() >= "2023"));
    assert_eq!(b.matches(json!([{"condition": "date", "operator": "isAfter", "value": "2022"}])).await, after);
}

#[tokio::test]
async fn data_fields_notes_and_any_field_against_the_items() {
    let b = bench();
    let lower = |v: &Value| v.as_str().unwrap_or("").to_lowercase();
    // publicationTitle and every field standing for it (a book section's bookTitle, a web page's websiteTitle…).
    let names = Schema::get().fields_for_base("publicationTitle");
    let nature = b.where_(|i| names.iter().any(|n| lower(&i["data"][n.as_str()]).contains("nature")));
    assert!(nature.len() >= 2, "{nature:?}");
    assert_eq!(
        b.matches(json!([{"condition": "publicationTitle", "operator": "contains", "value": "nature"}])).await,
        nature
    );
    let doi = b.where_(|i| i["data"]["DOI"] == "10.1093/bioinformatics/btac372");
    assert_eq!(
        b.matches(json!([{"condition": "DOI", "operator": "is", "value": "10.1093/BIOINFORMATICS/btac372"}])).await,
        doi
    );
    let no_abstract_word =
        b.where_(|i| i["data"]["itemType"] != "annotation" && !lower(&i["data"]["abstractNote"]).contains("protein"));
    assert_eq!(
        b.matches(json!([{"condition": "abstractNote", "operator": "doesNotContain", "value": "protein"}])).await,
        no_abstract_word
    );
    let notes = b.where_(|i| {
        i["data"]["itemType"] == "note"
            && html_to_text(i["data"]["note"].as_str().unwrap()).to_lowercase().contains("chapter")
    });
    assert!(notes.len() >= 2);
    assert_eq!(b.matches(json!([{"condition": "note", "operator": "contains", "value": "Chapter"}])).await, notes);
    // Any field: a field's value, a tag, a creator or a note's text.
    let word = "seminar";
    let any = b.where_(|i| {
        let d = &i["data"];
        let fields = d.as_object().unwrap().iter().any(|(k, v)| {
            !matches!(
                k.as_str(),
                "key"
                    | "itemType"
                    | "note"
                    | "annotationText"
                    | "annotationComment"
                    | "dateAdded"
                    | "dateModified"
                    | "contentType"
                    | "linkMode"
                    | "filename"
                    | "annotationType"
            ) && lower(v).contains(word)
        });
        let tags = d["tags"].as_array().into_iter().flatten().any(|t| lower(&t["tag"]).contains(word));
        let note =
            d["itemType"] == "note" && html_to_text(d["note"].as_str().unwrap_or("")).to_lowercase().contains(word);
        fields || tags || note
    });
    assert!(any.contains("CDSULREI") && any.contains("QF2YXXXG"), "{any:?}");
    assert_eq!(b.matches(json!([{"condition": "anyField", "operator": "contains", "value": word}])).await, any);
}

#[tokio::test]
async fn dates_added_and_modified_against_the_items() {
    let b = bench();
    // The demo's items keep the dates they were added on; a note added now is the only recent one.
    b.sim.insert_item(LIB, json!({"key": "NEWN7TE2", "itemType": "note", "note": "<p>new</p>"}));
    let day = |i: &Value, field: &str| i["data"][field].as_str().unwrap_or("").get(..10).unwrap_or("").to_owned();
    assert_eq!(
        b.matches(json!([{"condition": "dateAdded", "operator": "isInTheLast", "value": "1 days"}])).await,
        set(&["NEWN7TE2"])
    );
    let everything = b.outside_trash(b.listed(""));
    assert_eq!(
        b.matches(json!([{"condition": "dateAdded", "operator": "isInTheLast", "value": "100 years"}])).await,
        everything
    );
    let early = b.where_(|i| day(i, "dateAdded").as_str() < "2023-00-00");
    assert!(early.len() >= 5 && early.len() < everything.len());
    assert_eq!(b.matches(json!([{"condition": "dateAdded", "operator": "isBefore", "value": "2023"}])).await, early);
    let in_2022 = b.where_(|i| day(i, "dateAdded").starts_with("2022"));
    assert_eq!(b.matches(json!([{"condition": "dateAdded", "operator": "is", "value": "2022"}])).await, in_2022);
    let late = b.where_(|i| day(i, "dateModified").as_str() >= "2024-04");
    assert!(!late.is_empty());
    assert_eq!(
        b.matches(json!([{"condition": "dateModified", "operator": "isAfter", "value": "March 2024"}])).await,
        late
    );
}

#[tokio::test]
async fn full_text_against_the_everything_search() {
    let b = bench();
    let phrase = "stochastic gradient annealing";
    let expected = |phrase: &str| {
        let found = b.outside_trash(b.listed(&format!("qmode=everything&q={}", phrase.replace(' ', "%20"))));
        found
            .into_iter()
            .filter(|k| {
                b.sim.fulltext(LIB, k).is_some_and(|t| t["content"].as_str().unwrap().to_lowercase().contains(phrase))
            })
            .collect::<BTreeSet<_>>()
    };
    assert_eq!(expected(phrase), set(&["ZJ6BP9I4"]));
    assert_eq!(
        b.matches(json!([{"condition": "fulltextContent", "operator": "contains", "value": phrase}])).await,
        expected(phrase)
    );
    let maize = expected("maize");
    assert!(maize.len() >= 2, "{maize:?}");
    assert_eq!(
        b.matches(json!([{"condition": "fulltextContent", "operator": "contains", "value": "Maize"}])).await,
        maize
    );
    let lacking = minus(&b.outside_trash(b.listed("")), &maize);
    assert_eq!(
        b.matches(json!([{"condition": "fulltextContent", "operator": "doesNotContain", "value": "maize"}])).await,
        lacking
    );

    // Beyond the reads allowed, the API's own full-text search narrows the candidates first…
    let one_read = EvaluationLimits { max_fulltext_reads: 1, ..EvaluationLimits::default() };
    let narrowed = b
        .evaluate_with(json!([{"condition": "fulltextContent", "operator": "contains", "value": phrase}]), one_read)
        .await
        .unwrap();
    assert_eq!((narrowed.matched_keys(), narrowed.fulltext_reads), (vec!["ZJ6BP9I4"], 1));
    // …and when that leaves too many, the condition is refused, not guessed.
    let broad = b
        .evaluate_with(json!([{"condition": "fulltextContent", "operator": "contains", "value": "maize"}]), one_read)
        .await
        .unwrap_err();
    assert!(matches!(broad, SavedSearchError::FullTextTooBroad { .. }), "{broad}");
    assert!(broad.to_string().contains("\"maize\"") && broad.to_string().contains("at most 1"), "{broad}");
}

#[tokio::test]
async fn trash_top_level_unfiled_against_their_listings() {
    let b = bench();
    let trash = b.zotero_trash();
    assert!(trash.contains("TRASHN23") && trash.contains("36P5CMPH"));
    let listed_trash = b.listed_at("items/trash?format=keys");
    assert!(listed_trash.is_subset(&trash) && !listed_trash.contains("TRASHN23"));
    assert_eq!(b.matches(json!([{"condition": "deleted", "operator": "true", "value": ""}])).await, trash);
    let in_trash_tagged: BTreeSet<String> =
        b.listed("tag=maize&includeTrashed=1").intersection(&trash).cloned().collect();
    assert!(in_trash_tagged.contains("TRASHN23"));
    let trashed_maize = json!([{"condition": "deleted", "operator": "true", "value": ""}, {"condition": "tag", "operator": "is", "value": "maize"}]);
    assert_eq!(b.matches(trashed_maize).await, in_trash_tagged);
    let everywhere = json!([{"condition": "includeDeleted", "operator": "true", "value": ""}, {"condition": "tag", "operator": "is", "value": "maize"}]);
    assert_eq!(b.matches(everywhere).await, b.listed("tag=maize&includeTrashed=1"));

    // Top-level only: the tagged items without a parent.
    let top: BTreeSet<String> = b.outside_trash(b.listed_at("items/top?format=keys"));
    let tagged_top: BTreeSet<String> =
        b.outside_trash(b.listed("tag=adaptation")).intersection(&top).cloned().collect();
    let no_children = json!([{"condition": "noChildren", "operator": "true", "value": ""}, {"condition": "tag", "operator": "is", "value": "adaptation"}]);
    assert_eq!(b.matches(no_children).await, tagged_top);
    // Unfiled: top-level items in no collection.
    let unfiled = b.where_(|i| {
        i["data"]["parentItem"].is_null()
            && i["data"]["itemType"] != "annotation"
            && i["data"]["collections"].as_array().is_none_or(Vec::is_empty)
    });
    assert!(unfiled.contains("BUNJ5BFI") && unfiled.contains("CMPQJ7EP"), "{unfiled:?}");
    assert_eq!(b.matches(json!([{"condition": "unfiled", "operator": "true", "value": ""}])).await, unfiled);
}

#[tokio::test]
async fn parents_and_children_against_the_family_of_each_match() {
    let b = bench();
    // The tag is on a paper (YBSGFPA9) and on an annotation; with parents and children, the paper's notes and
    // attachments match too, while the annotation's match stays its own (Zotero follows notes and attachments).
    let tagged = b.outside_trash(b.listed("tag=adaptation"));
    let items = b.items();
    let family: BTreeSet<String> = items
        .iter()
        .filter(|i| matches!(i["data"]["itemType"].as_str(), Some("note" | "attachment")))
        .filter(|i| i["data"]["parentItem"].as_str().is_some_and(|p| tagged.contains(p)))
        .map(|i| i["key"].as_str().unwrap().to_owned())
        .chain(tagged.iter().cloned())
        .collect();
    assert!(family.len() > tagged.len());
    let conditions = json!([{"condition": "tag", "operator": "is", "value": "adaptation"}, {"condition": "includeParentsAndChildren", "operator": "true", "value": ""}]);
    assert_eq!(b.matches(conditions).await, b.outside_trash(family));
    // A note's match reaches its parent: the note under 9ZEFCI5U lists "Key numbers".
    let parents = json!([{"condition": "note", "operator": "contains", "value": "key numbers"}, {"condition": "includeParents", "operator": "true", "value": ""}]);
    assert_eq!(b.matches(parents).await, set(&["2MYW3RSF", "9ZEFCI5U"]));
}

#[tokio::test]
async fn join_modes_against_tag_expressions() {
    let b = bench();
    let either = b.outside_trash(b.listed("tag=housing%20%7C%7C%20maize"));
    let both = b.outside_trash(b.listed("tag=maize&tag=heat%20stress"));
    assert!(either.len() > both.len() && !both.is_empty());
    let any = json!([{"condition": "joinMode", "operator": "any", "value": ""}, {"condition": "tag", "operator": "is", "value": "housing"}, {"condition": "tag", "operator": "is", "value": "maize"}]);
    assert_eq!(b.matches(any).await, either);
    let all = json!([{"condition": "joinMode", "operator": "all", "value": ""}, {"condition": "tag", "operator": "is", "value": "maize"}, {"condition": "tag", "operator": "is", "value": "heat stress"}]);
    assert_eq!(b.matches(all).await, both);
}

// ---------------------------------------------------------------------------------------------------------------
// Refusals and bounds.

#[tokio::test]
async fn an_unsupported_condition_is_refused_by_name() {
    let b = bench();
    let key = create_search(
        &b.sim,
        json!([{"condition": "title", "operator": "contains", "value": "maize"},
               {"condition": "fileTypeID", "operator": "is", "value": "1"},
               {"condition": "savedSearch", "operator": "is", "value": "HEATMAIZ"}]),
    );
    let search = b.zotero.saved_search(&ObjectKey::parse(&key).unwrap()).await.unwrap();
    let refused = SearchPlan::new(&search).unwrap_err();
    let message = refused.to_string();
    assert!(message.contains("`fileTypeID is`") && message.contains("`savedSearch is`"), "{message}");
    assert!(!message.contains("`title contains`"), "{message}");
}

#[tokio::test]
async fn the_bounds_refuse_what_they_cannot_read_and_narrowing_keeps_within_them() {
    let b = bench();
    let small = EvaluationLimits { max_items: 40, ..EvaluationLimits::default() };
    // A title condition reads the whole library (here about 80 items without annotations): over the bound.
    let whole = json!([{"condition": "title", "operator": "contains", "value": "protein"}]);
    let error = b.evaluate_with(whole, small).await.unwrap_err();
    match &error {
        SavedSearchError::TooManyItems { needed, limit, .. } => assert!(*needed > 40 && *limit == 40, "{error}"),
        other => panic!("{other}"),
    }
    assert!(error.to_string().contains("collection, a tag or an item type"), "{error}");
    // The same condition inside a collection reads only the collection.
    let narrowed = json!([{"condition": "collection", "operator": "is", "value": "9AV8V2XB"}, {"condition": "title", "operator": "contains", "value": "protein"}]);
    let found = b.evaluate_with(narrowed, small).await.unwrap();
    assert!(found.scanned <= 40 && !found.rows.is_empty());
    // A request bound: the full-text listing is one more request than allowed.
    // A request bound: the tagged note under a trashed paper needs its parent read, one request more.
    let one_request = EvaluationLimits { max_requests: 1, ..EvaluationLimits::default() };
    let tagged = json!([{"condition": "tag", "operator": "is", "value": "maize"}]);
    let error = b.evaluate_with(tagged, one_request).await.unwrap_err();
    assert!(matches!(error, SavedSearchError::TooManyRequests { needed: 2, limit: 1, .. }), "{error}");
}

#[tokio::test]
async fn narrowing_goes_to_the_api() {
    let b = bench();
    let before = b.sim.requests().len();
    b.matches(json!([{"condition": "tag", "operator": "is", "value": "maize"}, {"condition": "itemType", "operator": "is", "value": "journalArticle"}])).await;
    let sent: Vec<_> = b.sim.requests()[before..].iter().filter(|r| r.path.ends_with("/items")).cloned().collect();
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(
        (sent[0].query_values("tag"), sent[0].query_values("itemType")),
        (vec!["maize".to_owned()], vec!["journalArticle".to_owned()])
    );

    let before = b.sim.requests().len();
    let found = b.matches(json!([{"condition": "collection", "operator": "is", "value": "VYEVNKKX"}, {"condition": "noChildren", "operator": "true", "value": ""}])).await;
    assert_eq!(found.len(), 7);
    let paths: Vec<String> = b.sim.requests()[before..].iter().map(|r| r.path.clone()).collect();
    assert!(paths.iter().any(|p| p.ends_with("/collections/VYEVNKKX/items/top")), "{paths:?}");
    assert!(!paths.iter().any(|p| p.ends_with("/items")), "{paths:?}");

    // No condition can take an annotation: they are not read.
    let before = b.sim.requests().len();
    b.matches(json!([{"condition": "title", "operator": "contains", "value": "x"}])).await;
    let scan = b.sim.requests()[before..].iter().find(|r| r.path.ends_with("/items")).cloned().unwrap();
    assert_eq!(scan.query_values("itemType"), ["-annotation"]);
}

// ---------------------------------------------------------------------------------------------------------------
// The core's table of fields and base fields is Zotero's schema.

const FIELDS_TABLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../core/src/zotero/saved_search/fields.rs");

fn generated_fields() -> String {
    let schema = Schema::get();
    let mut out = format!(
        "// @generated by crates/sim/tests/saved_searches.rs from crates/sim/data/schema.json (Zotero's schema,\n\
         // version {}). Do not edit: run `UPDATE_SEARCH_FIELDS=1 cargo test -p zotero-sim --test saved_searches`.\n\n\
         /// Every item field Zotero knows (each type's own fields and the base fields they map to), sorted.\n\
         pub(super) const FIELDS: &[&str] = &[\n",
        schema.version
    );
    for field in schema.all_fields() {
        let _ = writeln!(out, "    {field:?},");
    }
    out.push_str(
        "];\n\n\
         /// Each base field with the type-specific fields that stand for it (a book section's `bookTitle` is its\n\
         /// `publicationTitle`), sorted.\n\
         pub(super) const BASE_FIELDS: &[(&str, &[&str])] = &[\n",
    );
    let bases: BTreeSet<&String> =
        schema.item_types().iter().flat_map(|t| t.fields.iter().filter_map(|f| f.base.as_ref())).collect();
    for base in bases {
        let mapped: Vec<String> =
            schema.fields_for_base(base).into_iter().filter(|f| f != base).map(|f| format!("{f:?}")).collect();
        let _ = writeln!(out, "    ({base:?}, &[{}]),", mapped.join(", "));
    }
    out.push_str("];\n");
    out
}

#[test]
fn the_core_field_table_is_zoteros_schema() {
    let expected = generated_fields();
    if std::env::var("UPDATE_SEARCH_FIELDS").as_deref() == Ok("1") {
        std::fs::write(FIELDS_TABLE, &expected).expect("write the table");
        return;
    }
    let found = std::fs::read_to_string(FIELDS_TABLE).unwrap_or_default();
    assert!(
        found == expected,
        "crates/core/src/zotero/saved_search/fields.rs differs from the simulator's Zotero schema; run \
         UPDATE_SEARCH_FIELDS=1 cargo test -p zotero-sim --test saved_searches"
    );
}

#[test]
fn group_libraries_keep_their_own_searches() {
    let sim = Simulator::demo();
    sim.add_demo_groups(zotero_sim::DEMO_API_KEY);
    let lab = LibraryRef::Group(zotero_sim::demo_groups::LAB_GROUP);
    assert_eq!(sim.searches(lab).len(), 1);
    assert_eq!(sim.searches(LibraryRef::Group(zotero_sim::demo_groups::READING_GROUP)).len(), 0);
    assert_eq!(sim.searches(LibraryRef::User(zotero_sim::DEMO_USER_ID)).len(), 2);
}
