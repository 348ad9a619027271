//! The feeds group (`zotero-sim --feeds-group`): a library made for the bibliography feeds' end-to-end test
//! (tests/e2e/feeds.test.mjs), which reads it back through BibTeX, BibLaTeX, CSL-JSON and RIS parsers.
//!
//! Group 100004, "Feeds", which the key may only read: a feed hands out what its maker may read, no more. It
//! holds, the same on every run:
//! - collection "Thesis" ([`THESIS`]) with 250 regular items of nine types, and under it "Chapter 2"
//!   ([`CHAPTER_2`]) with 10 more, filed only there; collection "Other" ([`OTHER`]) with 20 more;
//! - titles with every character LaTeX treats specially (`% & _ # $ { }`), acronyms whose case must survive,
//!   letters outside ASCII, in titles and in creators' names (and one creator with no ASCII form at all);
//! - citation keys pinned in Zotero's `citationKey` field (every 9th item), pinned the Better BibTeX way in
//!   `extra` (`Citation Key: …`, every 7th, some among other lines), one item with both (the field wins), and
//!   generated keys that collide (the same first author, year and first title word, and a pinned key equal to
//!   that generated one but for case);
//! - what no bibliography may show: child notes and attachments under some items, a standalone note and a
//!   standalone link filed in "Thesis", and an article of "Thesis" in the trash;
//! - the saved search "Core reading" ([`CORE_SEARCH`]): the items tagged [`CORE_TAG`], some in each collection.
//!
//! `GET /_sim/feeds` (crate::control) gives the test the plan: each regular item's key, type, title, year, first
//! creator, pinned key, collection and whether the search finds it, and each object a feed must leave out.

use std::collections::BTreeSet;

use serde::Serialize;
use serde_json::{json, Value};

use crate::keys::KeyGen;
use crate::rng::Rng;
use crate::{LibraryRef, Simulator};

/// The group's ID and name.
pub const GROUP: u64 = 100_004;
pub const GROUP_NAME: &str = "Feeds";
/// The collections: "Thesis", its subcollection "Chapter 2", and "Other".
pub const THESIS: &str = "THESIS22";
pub const CHAPTER_2: &str = "CHAPTER2";
pub const OTHER: &str = "ELSEWHR2";
/// The saved search "Core reading": every item tagged [`CORE_TAG`].
pub const CORE_SEARCH: &str = "CRSRCH22";
pub const CORE_SEARCH_NAME: &str = "Core reading";
pub const CORE_TAG: &str = "core reading";
/// How many regular items each collection holds directly.
pub const THESIS_ITEMS: usize = 250;
pub const CHAPTER_2_ITEMS: usize = 10;
pub const OTHER_ITEMS: usize = 20;

/// The seed of the group's keys and choices.
const SEED: u64 = 0xFEED_5EED;

/// A regular item of the group, as the test expects to find it in a feed.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlannedItem {
    pub key: String,
    pub item_type: &'static str,
    pub title: String,
    /// The four-digit year of its date; none for an undated item.
    pub year: Option<u16>,
    /// The first creator's last name, or the whole name of a one-field creator.
    pub first_creator: Option<String>,
    /// The key the user pinned (the `citationKey` field, else `Citation Key:` in `extra`).
    pub citation_key: Option<String>,
    /// A key found in `extra` that the `citationKey` field overrides: it must not be used.
    pub overridden_key: Option<String>,
    /// The collection it is filed in.
    pub collection: &'static str,
    /// Whether the saved search finds it.
    pub core: bool,
    #[serde(skip)]
    json: Value,
}

/// An object a feed must leave out: a note, an attachment, an item in the trash.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LeftOut {
    pub key: String,
    /// `note`, `attachment` or `trashed`.
    pub why: &'static str,
    /// Its title, or the text of a note.
    pub title: String,
    #[serde(skip)]
    json: Value,
}

/// Everything the group holds, in the order it is written.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Plan {
    pub items: Vec<PlannedItem>,
    pub left_out: Vec<LeftOut>,
}

const FRAMES: &[&str] = &[
    "Effects of",
    "Modelling",
    "Measuring",
    "Mechanisms of",
    "Predicting",
    "Revisiting",
    "Mapping",
    "Quantifying",
    "Explaining",
    "Simulating",
    "Deep",
    "Towards",
];
const SUBJECTS: &[&str] = &[
    "protein", "soil", "neural", "climate", "maize", "graphene", "coral", "quantum", "glacier", "enzyme", "river",
    "forest", "ocean", "market", "wheat", "polymer", "insect", "sediment",
];
const NOUNS: &[&str] = &[
    "dynamics",
    "folding",
    "variability",
    "yield",
    "transport",
    "resistance",
    "growth",
    "coherence",
    "kinetics",
    "acidification",
    "tolerance",
    "formation",
    "stability",
    "migration",
];
/// What every sixth title or so carries: LaTeX's special characters, acronyms, letters outside ASCII.
const DECORATIONS: &[&str] = &[
    "at 40% humidity",
    "in R&D pipelines",
    "with snake_case identifiers",
    "for sample #12",
    "below $100 per genome",
    "over the set {a, b}",
    "from DNA and RNA-seq data",
    "with CRISPR screens in NASA missions",
    "at pH 7 in São Paulo",
    "for naïve learners in Kraków",
    "at Ångström resolution",
    "in Zürich's lakes",
];
/// Last names, some with letters outside ASCII, a particle, two words, an apostrophe; one has no ASCII form.
const LAST_NAMES: &[&str] = &[
    "Smith",
    "Müller",
    "García Márquez",
    "Ødegård",
    "Łukasiewicz",
    "Nguyễn",
    "O'Brien",
    "van der Berg",
    "Dvořák",
    "Çelik",
    "Okafor",
    "Nakamura",
    "Rossi",
    "Chen",
    "Dubois",
    "Andersson",
    "王",
    "Kowalski",
];
const FIRST_NAMES: &[&str] =
    &["Anna", "Ben", "Chiara", "Élodie", "Farid", "Grace", "Hiro", "Inés", "Jonas", "Kwame", "Lena", "Søren"];
const JOURNALS: &[&str] =
    &["Journal of Applied Ecology", "Nature Communications", "Physical Review Letters", "Plant & Soil"];
const PUBLISHERS: &[&str] = &["Springer", "Oxford University Press", "MIT Press", "Éditions du Seuil"];

/// The item types, weighted: mostly journal articles.
const TYPES: &[&str] = &[
    "journalArticle",
    "journalArticle",
    "journalArticle",
    "journalArticle",
    "book",
    "bookSection",
    "conferencePaper",
    "conferencePaper",
    "thesis",
    "report",
    "webpage",
    "preprint",
    "magazineArticle",
];

/// The group's plan: the same on every call.
pub fn plan() -> Plan {
    let mut rng = Rng(SEED);
    let mut keygen = KeyGen::new(SEED ^ 0x0123_4567_89AB_CDEF);
    let mut taken: BTreeSet<String> =
        [THESIS, CHAPTER_2, OTHER, CORE_SEARCH].iter().map(|k| (*k).to_string()).collect();
    let mut fresh_key = move || loop {
        let key = keygen.key();
        if taken.insert(key.clone()) {
            return key;
        }
    };
    let mut titles: BTreeSet<String> = BTreeSet::new();
    let places = std::iter::repeat_n(THESIS, THESIS_ITEMS)
        .chain(std::iter::repeat_n(CHAPTER_2, CHAPTER_2_ITEMS))
        .chain(std::iter::repeat_n(OTHER, OTHER_ITEMS));
    let mut items: Vec<PlannedItem> = places
        .enumerate()
        .map(|(i, collection)| planned_item(i, collection, fresh_key(), &mut rng, &mut titles))
        .collect();
    collide(&mut items);

    let mut left_out = Vec::new();
    for (i, item) in items.iter().enumerate().filter(|(_, item)| item.collection == THESIS) {
        if i % 25 == 3 {
            let text = format!("Reading note {i}: check the methods of this one");
            let json = json!({ "itemType": "note", "parentItem": item.key, "note": format!("<p>{text}</p>"),
                               "tags": [{ "tag": CORE_TAG }] });
            left_out.push(LeftOut { key: fresh_key(), why: "note", title: text, json });
        }
        if i % 30 == 7 {
            let title = format!("Full Text PDF {i}");
            let json = json!({ "itemType": "attachment", "linkMode": "imported_file", "parentItem": item.key,
                               "title": title, "contentType": "application/pdf", "filename": format!("paper {i}.pdf") });
            left_out.push(LeftOut { key: fresh_key(), why: "attachment", title, json });
        }
        if i % 40 == 11 {
            let title = format!("Publisher page {i}");
            let json = json!({ "itemType": "attachment", "linkMode": "linked_url", "parentItem": item.key,
                               "title": title, "url": format!("https://example.org/articles/{i}") });
            left_out.push(LeftOut { key: fresh_key(), why: "attachment", title, json });
        }
    }
    let text = "Standalone note: outline of the thesis".to_string();
    let json = json!({ "itemType": "note", "note": format!("<p>{text}</p>"), "collections": [THESIS],
                       "tags": [{ "tag": CORE_TAG }] });
    left_out.push(LeftOut { key: fresh_key(), why: "note", title: text, json });
    let title = "Standalone link to the thesis template".to_string();
    let json = json!({ "itemType": "attachment", "linkMode": "linked_url", "title": title,
                       "url": "https://example.org/thesis-template", "collections": [THESIS] });
    left_out.push(LeftOut { key: fresh_key(), why: "attachment", title, json });
    let title = "Withdrawn draft that sits in the trash".to_string();
    let json = json!({ "itemType": "journalArticle", "title": title, "date": "2021", "deleted": 1,
                       "creators": [{ "creatorType": "author", "firstName": "Tess", "lastName": "Trash" }],
                       "collections": [THESIS], "tags": [{ "tag": CORE_TAG }] });
    left_out.push(LeftOut { key: fresh_key(), why: "trashed", title, json });
    Plan { items, left_out }
}

/// The `i`-th regular item, filed in `collection`, under `key`.
fn planned_item(
    i: usize,
    collection: &'static str,
    key: String,
    rng: &mut Rng,
    titles: &mut BTreeSet<String>,
) -> PlannedItem {
    let item_type = *rng.pick(TYPES);
    let title = loop {
        let mut title = format!("{} {} {}", rng.pick(FRAMES), rng.pick(SUBJECTS), rng.pick(NOUNS));
        if i.is_multiple_of(6) {
            title.push(' ');
            title.push_str(DECORATIONS[(i / 6) % DECORATIONS.len()]);
        } else {
            title.push_str(&format!(" in cohort {}", 1 + rng.below(400)));
        }
        // Unique even ignoring case, punctuation and accents, so that the test can find each item by title.
        let folded: String =
            title.chars().filter(char::is_ascii_alphanumeric).map(|c| c.to_ascii_lowercase()).collect();
        if titles.insert(folded) {
            break title;
        }
    };
    let year = (i % 37 != 5).then(|| 1990 + rng.below(35) as u16);
    let date = match (year, i % 3) {
        (None, _) => String::new(),
        (Some(y), 0) => y.to_string(),
        (Some(y), 1) => format!("{y}-{:02}-{:02}", 1 + rng.below(12), 1 + rng.below(28)),
        (Some(y), _) => format!("March {y}"),
    };
    let mut creators: Vec<Value> = (0..1 + rng.below(3))
        .map(|_| {
            json!({ "creatorType": "author", "firstName": rng.pick(FIRST_NAMES), "lastName": rng.pick(LAST_NAMES) })
        })
        .collect();
    if i % 50 == 17 {
        creators.insert(0, json!({ "creatorType": "author", "name": "World Health Organization" }));
    }
    let first_creator = creators.first().and_then(|c| c.get("lastName").or_else(|| c.get("name")));
    let first_creator = first_creator.and_then(Value::as_str).map(str::to_string);

    let mut json = json!({ "key": key, "itemType": item_type, "title": title, "date": date, "creators": creators,
                           "collections": [collection] });
    type_fields(&mut json, item_type, i, rng);
    let (citation_key, overridden_key) = pin(&mut json, i, year);
    let core = i % 10 == 4;
    if core {
        json["tags"] = json!([{ "tag": CORE_TAG }]);
    }
    PlannedItem { key, item_type, title, year, first_creator, citation_key, overridden_key, collection, core, json }
}

/// The fields an item of this type has beyond title, date and creators.
fn type_fields(json: &mut Value, item_type: &str, i: usize, rng: &mut Rng) {
    let publisher = *rng.pick(PUBLISHERS);
    let fields = match item_type {
        "journalArticle" => json!({ "publicationTitle": rng.pick(JOURNALS), "volume": (1 + i % 60).to_string(),
                                    "pages": format!("{}-{}", 1 + i, 12 + i), "DOI": format!("10.5555/feeds.{i}") }),
        "book" => json!({ "publisher": publisher, "place": "Oxford", "ISBN": format!("978-0-{:06}-0", 100_000 + i) }),
        "bookSection" => json!({ "bookTitle": "Handbook of Everything", "publisher": publisher,
                                 "pages": format!("{}-{}", 10 + i, 30 + i) }),
        "conferencePaper" => json!({ "proceedingsTitle": "Proceedings of the Feeds Workshop",
                                     "conferenceName": "FeedsConf" }),
        "thesis" => json!({ "university": "Universität Wien", "thesisType": "PhD thesis" }),
        "report" => json!({ "institution": "CERN", "reportNumber": format!("TR-{i}") }),
        "webpage" => json!({ "websiteTitle": "Example Blog", "url": format!("https://example.org/posts/{i}") }),
        "preprint" => json!({ "repository": "arXiv", "archiveID": format!("arXiv:2401.{:05}", i) }),
        _ => json!({ "publicationTitle": "The Atlantic" }),
    };
    if let (Some(target), Value::Object(fields)) = (json.as_object_mut(), fields) {
        target.extend(fields);
    }
    if item_type == "bookSection" {
        if let Some(creators) = json["creators"].as_array_mut() {
            creators.push(json!({ "creatorType": "editor", "firstName": "Edda", "lastName": "Herausgeberin" }));
        }
    }
}

/// Pins the `i`-th item's citation key, if it is one of those the user pinned: returns the key pinned, and one
/// in `extra` the field overrides.
fn pin(json: &mut Value, i: usize, year: Option<u16>) -> (Option<String>, Option<String>) {
    let y = year.map_or("nd".to_string(), |y| y.to_string());
    if i == 1 {
        // Both: the field wins over extra.
        json["citationKey"] = json!(format!("fieldWins{y}"));
        json["extra"] = json!(format!("Citation Key: extraLoses{y}"));
        return (Some(format!("fieldWins{y}")), Some(format!("extraLoses{y}")));
    }
    if i.is_multiple_of(9) {
        let key = format!("thesis:{y}:item-{i}");
        json["citationKey"] = json!(key);
        return (Some(key), None);
    }
    if i.is_multiple_of(7) {
        let key = format!("Pinned_{y}.{i}");
        let extra = if i.is_multiple_of(2) {
            format!("Citation Key: {key}")
        } else {
            format!("PMID: {}\nCitation Key: {key}\ntex.note: kept in extra", 30_000_000 + i)
        };
        json["extra"] = json!(extra);
        return (Some(key), None);
    }
    (None, None)
}

/// Makes generated keys collide: three items of "Thesis" get the same first author, year and first title word
/// (so their generated keys are equal), and a fourth pins that key in another case.
fn collide(items: &mut [PlannedItem]) {
    let unpinned: Vec<usize> = (0..items.len())
        .filter(|&i| items[i].collection == THESIS && items[i].citation_key.is_none() && items[i].year.is_some())
        .filter(|&i| items[i].json["creators"][0].get("lastName").is_some())
        .take(4)
        .collect();
    for (n, &i) in unpinned.iter().enumerate() {
        let item = &mut items[i];
        item.year = Some(2020);
        item.json["date"] = json!("2020");
        item.json["creators"][0] = json!({ "creatorType": "author", "firstName": "Anna", "lastName": "Müller" });
        item.first_creator = Some("Müller".into());
        item.title = format!("Deep {} number {}", item.title, n + 1);
        item.json["title"] = json!(item.title);
        if n == 3 {
            item.citation_key = Some("Muller2020Deep".into());
            item.json["extra"] = json!("Citation Key: Muller2020Deep");
        }
    }
}

impl Simulator {
    /// Adds the feeds group ([`GROUP`], "Feeds"), which `api_key` (added with `add_user` first) may read, filled
    /// as [`plan`] says. Returns the plan.
    ///
    /// # Panics
    /// If `api_key` is unknown (see [`Simulator::add_group`]).
    pub fn add_feeds_group(&self, api_key: &str) -> Plan {
        let group = LibraryRef::Group(GROUP);
        self.add_group(GROUP, api_key, false);
        self.set_library_name(group, GROUP_NAME);
        self.insert_collection(group, json!({ "key": THESIS, "name": "Thesis" }));
        self.insert_collection(group, json!({ "key": CHAPTER_2, "name": "Chapter 2", "parentCollection": THESIS }));
        self.insert_collection(group, json!({ "key": OTHER, "name": "Other" }));
        let plan = plan();
        for item in &plan.items {
            self.insert_item(group, item.json.clone());
        }
        for object in &plan.left_out {
            let mut json = object.json.clone();
            json["key"] = json!(object.key);
            self.insert_item(group, json);
        }
        self.insert_search(
            group,
            json!({ "key": CORE_SEARCH, "name": CORE_SEARCH_NAME,
                    "conditions": [{ "condition": "tag", "operator": "is", "value": CORE_TAG },
                                   { "condition": "noChildren", "operator": "true", "value": "" }] }),
        );
        plan
    }

    /// Whether the feeds group was added ([`Simulator::add_feeds_group`]).
    pub fn has_feeds_group(&self) -> bool {
        self.state.borrow().libraries.contains_key(&LibraryRef::Group(GROUP))
    }
}

/// What `GET /_sim/feeds` answers: the group, its collections and saved search, and [`plan`].
pub fn manifest() -> Value {
    json!({
        "library": format!("groups/{GROUP}"),
        "name": GROUP_NAME,
        "collections": { "thesis": THESIS, "chapter2": CHAPTER_2, "other": OTHER },
        "collectionNames": { "thesis": "Thesis", "chapter2": "Chapter 2", "other": "Other" },
        "savedSearch": { "key": CORE_SEARCH, "name": CORE_SEARCH_NAME, "tag": CORE_TAG },
        "plan": plan(),
    })
}
