//! Synthetic libraries of any size, for tests and benchmarks that need more than the demo's few dozen items.
//!
//! The same `(n, seed)` always gives the same library, byte for byte: keys, data, versions and dates all come
//! from a seeded SplitMix64 generator and fixed word lists, never from the clock. Objects are built as stored
//! records and inserted straight into the library with the version and dates of the "sync history" modelled
//! here, so that 20,000 items generate in about a second even unoptimised (seeding through
//! `Simulator::insert_item` parses and validates JSON and refreshes the tag table once per item, which is
//! quadratic at that size). That every object is one the API would accept, and reads back as it would after
//! a write, is checked by `generated_objects_pass_the_api_validation` in crates/sim/tests/synthetic.rs.
//!
//! What a library of `n` items holds (docs/simulator.md, "Large libraries", has the same list):
//! - `n` top-level regular items: mostly `journalArticle`, some `book` and `conferencePaper`, with 1–4
//!   creators, a date, a DOI (and an ISBN for books), an abstract and sometimes `Citation Key: …` in `extra`;
//! - near-duplicates: every 25th item of the second half repeats an item of the first half (same DOI, title in
//!   another case and punctuation, one creator's first name reduced to an initial), about 2% of the items;
//! - `ceil(n / 5)` distinct tags (every one used, some on many items), `ceil(n / 50)` collections (some
//!   nested), items filed into them;
//! - a child note for every 40 items and an attachment (metadata only) for every 25.
//!
//! Versions: the collections are written in batches of 50, then the items in batches of 50 top-level items
//! (each with its children), one write per batch, so the library version is the number of batches and
//! `?since=` selects whole batches; `dateAdded`/`dateModified` grow with the version, spread over six years.

use crate::rng::Rng;
use std::collections::{BTreeMap, BTreeSet};

use crate::dates;
use crate::derived::{key, Key};
use crate::item::{Attachment, Creator, CreatorName, ItemData, Tag};
use crate::keys::KeyGen;
use crate::state::{CollectionData, CollectionRecord, ItemRecord, Library, TagMeta};

/// Why a synthetic library could not be made.
#[derive(Debug, thiserror::Error)]
pub enum SyntheticError {
    #[error("no library {0:?} in the simulator: add it first (Simulator::add_user or add_group)")]
    UnknownLibrary(crate::LibraryRef),
}

/// How many objects of each kind a generated library got.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Counts {
    pub top_level: usize,
    pub notes: usize,
    pub attachments: usize,
    pub collections: usize,
    pub tags: usize,
    /// Pairs of items sharing a DOI: an original and its near-duplicate.
    pub duplicate_pairs: usize,
    /// The library version after generation: the number of write batches modelled.
    pub version: u64,
}

/// The synthetic group beside another library (`zotero-sim --synthetic-group N`,
/// `Simulator::add_synthetic_group`): one simulator serves the demo and a large library.
pub const GROUP: u64 = 100_003;
pub const GROUP_NAME: &str = "Large Library";

/// Top-level items per modelled write, and collections per modelled write (the API's batch limit).
pub const BATCH: usize = 50;
/// One near-duplicate for every this many items of the second half.
const DUPLICATE_EVERY: usize = 25;
const NOTE_EVERY: usize = 40;
const ATTACHMENT_EVERY: usize = 25;

/// 2019-01-01T00:00:00Z: the first modelled write.
const START: u64 = 1_546_300_800;
/// Six years, over which the writes are spread.
const SPAN: u64 = 6 * 365 * 86_400;

const SUBJECTS: &[&str] = &[
    "protein",
    "soil",
    "neural",
    "climate",
    "maize",
    "graphene",
    "bacterial",
    "urban",
    "coral",
    "quantum",
    "glacier",
    "enzyme",
    "solar",
    "language",
    "memory",
    "forest",
    "ocean",
    "viral",
    "market",
    "cell",
    "drought",
    "river",
    "galaxy",
    "sediment",
    "immune",
    "network",
    "catalyst",
    "wheat",
    "insect",
    "polymer",
];
const NOUNS: &[&str] = &[
    "dynamics",
    "folding",
    "signalling",
    "variability",
    "yield",
    "transport",
    "resistance",
    "growth",
    "bleaching",
    "coherence",
    "retreat",
    "kinetics",
    "cells",
    "acquisition",
    "consolidation",
    "carbon",
    "acidification",
    "evolution",
    "volatility",
    "division",
    "tolerance",
    "discharge",
    "formation",
    "deposition",
    "response",
    "topology",
    "stability",
    "rust",
    "migration",
    "degradation",
];
const FRAMES: &[&str] = &[
    "Effects of",
    "Modelling",
    "A survey of",
    "Measuring",
    "Towards a theory of",
    "Long-term trends in",
    "Mechanisms of",
    "Predicting",
    "The role of",
    "Revisiting",
];
const CONTEXTS: &[&str] = &[
    "under heat stress",
    "in temperate regions",
    "at high resolution",
    "across scales",
    "in field conditions",
    "from satellite data",
    "in small samples",
    "with deep learning",
    "in mixed populations",
    "over decades",
];
const LAST_NAMES: &[&str] = &[
    "Smith",
    "García",
    "Müller",
    "Nakamura",
    "Okafor",
    "Rossi",
    "Kowalski",
    "Chen",
    "Dubois",
    "Novak",
    "Andersson",
    "Silva",
    "Kim",
    "Haddad",
    "O'Brien",
    "Ivanova",
    "Patel",
    "Jensen",
    "Moreau",
    "Tanaka",
    "Fischer",
    "Lopez",
    "Nguyen",
    "Horvath",
    "Schmidt",
    "Yilmaz",
    "Costa",
    "Larsen",
    "Ward",
    "Zhang",
];
const FIRST_NAMES: &[&str] = &[
    "Anna", "Ben", "Chiara", "David", "Elif", "Farid", "Grace", "Hiro", "Ines", "Jonas", "Kwame", "Lena", "Marta",
    "Nikolai", "Olga", "Pedro", "Qiu", "Rosa", "Sven", "Tomás", "Uma", "Viktor", "Wen", "Yara",
];
const JOURNALS: &[&str] = &[
    "Journal of Applied Ecology",
    "Nature Communications",
    "Physical Review Letters",
    "Plant Physiology",
    "Global Change Biology",
    "Cell Reports",
    "Geophysical Research Letters",
    "PLOS ONE",
    "Journal of Molecular Biology",
    "Remote Sensing of Environment",
    "Cognitive Science",
    "Ecology Letters",
];
const PUBLISHERS: &[&str] = &["Springer", "Oxford University Press", "MIT Press", "Elsevier", "Wiley"];
const CONFERENCES: &[&str] = &["NeurIPS", "ICML", "ACL", "CVPR", "EGU General Assembly", "ISMB"];
const TAG_WORDS: &[&str] = &[
    "methods",
    "review",
    "to read",
    "field study",
    "modelling",
    "theory",
    "dataset",
    "replication",
    "important",
    "teaching",
    "chapter 2",
    "chapter 3",
    "grant",
    "open access",
    "preprint",
    "meta-analysis",
    "lab meeting",
    "cited",
    "background",
    "statistics",
];
const TAG_TOPICS: &[&str] = &[
    "ecology",
    "genomics",
    "machine learning",
    "hydrology",
    "economics",
    "physics",
    "linguistics",
    "agronomy",
    "oceanography",
    "neuroscience",
    "chemistry",
    "epidemiology",
    "astronomy",
    "materials",
];
const FILLER: &[&str] = &[
    "we",
    "measured",
    "the",
    "response",
    "of",
    "samples",
    "across",
    "sites",
    "and",
    "found",
    "a",
    "strong",
    "effect",
    "that",
    "persisted",
    "over",
    "time",
    "our",
    "results",
    "suggest",
    "new",
    "mechanism",
    "for",
    "observed",
    "patterns",
    "in",
    "data",
    "model",
    "predicts",
    "variation",
];

/// The name of the `i`-th tag: a word and a topic, then numbered once those pairs run out.
fn tag_name(i: usize) -> String {
    let pairs = TAG_WORDS.len() * TAG_TOPICS.len();
    let base = format!("{} {}", TAG_TOPICS[i % TAG_TOPICS.len()], TAG_WORDS[(i / TAG_TOPICS.len()) % TAG_WORDS.len()]);
    if i < pairs {
        base
    } else {
        format!("{base} {}", i / pairs)
    }
}

/// The modelled time of the `k`-th object written in batch `batch` of `batches`.
fn timestamp(batch: usize, batches: usize, k: usize) -> String {
    let step = (SPAN / batches.max(1) as u64).max(86_400);
    dates::iso_from_unix(START + batch as u64 * step + k as u64 * 61)
}

/// Fills `lib` (expected empty) with `n` top-level items and what goes with them; see the module's comment.
pub fn fill(lib: &mut Library, n: usize, seed: u64) -> Counts {
    let mut rng = Rng(seed ^ 0x5EED_0F5E_ED5E_ED00);
    let mut keygen = KeyGen::new(seed.wrapping_mul(0x2545_F491_4F6C_DD1D) ^ 0xC0FF_EE00);
    // Generation leaves no temporary allocations behind where it can help it (keys held inline here, originals
    // named by key, text written in place): a 50,000-item library built among thousands of freed scraps made
    // every later allocation, and so every page served, several times slower.
    let mut taken: BTreeSet<Key> =
        lib.items.keys().chain(lib.collections.keys()).chain(lib.searches.keys()).filter_map(|k| key(k)).collect();
    let mut fresh_key = || loop {
        let fresh = keygen.key();
        if key(&fresh).is_some_and(|k| taken.insert(k)) {
            return fresh;
        }
    };
    let created_by = match lib.lref {
        crate::LibraryRef::User(id) => Some((id, lib.name.clone())),
        crate::LibraryRef::Group(_) => None,
    };
    let mut counts = Counts::default();

    let n_collections = if n == 0 { 0 } else { n.div_ceil(BATCH) };
    let n_tags = if n == 0 { 0 } else { n.div_ceil(5) };
    let collection_batches = n_collections.div_ceil(BATCH);
    let item_batches = n.div_ceil(BATCH);
    let batches = collection_batches + item_batches;

    // Collections: about a quarter nested under an earlier one.
    let mut collection_keys: Vec<String> = Vec::with_capacity(n_collections);
    let base_version = lib.version;
    for i in 0..n_collections {
        let batch = i / BATCH;
        let version = base_version + batch as u64 + 1;
        let parent = (i > 0 && rng.below(4) == 0).then(|| collection_keys[rng.below(i)].clone());
        let name = format!("{} {} ({})", capitalise(rng.pick::<&str>(SUBJECTS)), rng.pick(NOUNS), i + 1);
        let key = fresh_key();
        let ts = timestamp(batch, batches, i % BATCH);
        let seq = lib.next_seq();
        lib.collections.insert(
            key.clone(),
            CollectionRecord {
                key: key.clone(),
                version,
                seq,
                data: CollectionData { name, parent, ..CollectionData::default() },
                date_added: ts.clone(),
                date_modified: ts,
            },
        );
        lib.version = version;
        collection_keys.push(key);
    }
    counts.collections = n_collections;

    let half = n / 2;
    let mut originals: Vec<String> = Vec::with_capacity(half.div_ceil(DUPLICATE_EVERY));
    let base_version = lib.version;
    for i in 0..n {
        let batch = i / BATCH;
        let version = base_version + batch as u64 + 1;
        let mut k = (i % BATCH) * 3;
        let ts = timestamp(collection_batches + batch, batches, k);
        let duplicate_of = (i >= half && (i - half).is_multiple_of(DUPLICATE_EVERY) && i - half < half)
            .then(|| (i - half) / DUPLICATE_EVERY);
        let original = duplicate_of.and_then(|d| originals.get(d)).and_then(|k| lib.items.get(k));
        let mut data = match original {
            Some(original) => {
                counts.duplicate_pairs += 1;
                near_duplicate(&original.data, &mut rng)
            }
            None => regular_item(i, &mut rng),
        };
        // Tags: the item's own share of the tag list, so every tag is used, and up to two common ones.
        data.tags = Vec::with_capacity(3);
        data.tags.push(tag(i % n_tags.max(1)));
        for _ in 0..rng.below(3) {
            let extra = tag(rng.skewed(n_tags));
            if !data.tags.contains(&extra) {
                data.tags.push(extra);
            }
        }
        if !collection_keys.is_empty() {
            data.collections.push(collection_keys[(i / BATCH) % collection_keys.len()].clone());
            if rng.below(5) == 0 {
                let other = collection_keys[rng.below(collection_keys.len())].clone();
                if !data.collections.contains(&other) {
                    data.collections.push(other);
                }
            }
        }
        let key = fresh_key();
        insert(lib, &key, data, version, ts, &created_by);
        counts.top_level += 1;
        if i < half && i.is_multiple_of(DUPLICATE_EVERY) {
            originals.push(key.clone());
        }

        if i % NOTE_EVERY == NOTE_EVERY / 2 {
            k += 1;
            let ts = timestamp(collection_batches + batch, batches, k);
            let note = ItemData {
                item_type: "note".into(),
                parent: Some(key.clone()),
                note: Some({
                    let mut note = format!("<p>Reading notes: {}</p><p>", escape_html(&title_of(lib, &key)));
                    push_sentence(&mut note, &mut rng, 12);
                    note.push_str("</p>");
                    note
                }),
                ..ItemData::default()
            };
            insert(lib, &fresh_key(), note, version, ts, &created_by);
            counts.notes += 1;
        }
        if i % ATTACHMENT_EVERY == ATTACHMENT_EVERY / 2 {
            k += 1;
            let ts = timestamp(collection_batches + batch, batches, k);
            let mut fields = BTreeMap::new();
            let attachment = if rng.below(3) == 0 {
                fields.insert("title".to_string(), "Publisher page".to_string());
                fields.insert("url".to_string(), format!("https://example.org/articles/{}", i + 1));
                Attachment {
                    link_mode: "linked_url".into(),
                    content_type: "text/html".into(),
                    charset: "utf-8".into(),
                    ..Attachment::default()
                }
            } else {
                fields.insert("title".to_string(), "Full Text PDF".to_string());
                let short: String = title_of(lib, &key).chars().take(60).collect();
                Attachment {
                    link_mode: "imported_file".into(),
                    content_type: "application/pdf".into(),
                    filename: format!("{}.pdf", short.trim()),
                    ..Attachment::default()
                }
            };
            let data = ItemData {
                item_type: "attachment".into(),
                parent: Some(key.clone()),
                fields,
                note: Some(String::new()),
                attachment: Some(attachment),
                ..ItemData::default()
            };
            insert(lib, &fresh_key(), data, version, ts, &created_by);
            counts.attachments += 1;
        }
        lib.version = version;
    }
    counts.tags = lib.tags.len();
    counts.version = lib.version;
    counts
}

/// Stores `data` under `key` with the modelled version and time, adding its tags to the tag table.
fn insert(
    lib: &mut Library,
    key: &str,
    mut data: ItemData,
    version: u64,
    ts: String,
    created_by: &Option<(u64, String)>,
) {
    for tag in &data.tags {
        if !lib.tags.contains_key(tag) {
            lib.tags.insert(tag.clone(), TagMeta { version, date_modified: ts.clone() });
        }
    }
    data.date_added = ts.clone();
    data.date_modified = ts;
    let seq = lib.next_seq();
    lib.items.insert(
        key.to_string(),
        ItemRecord { key: key.to_string(), version, seq, data, created_by: created_by.clone() },
    );
}

/// The title of an item already stored, for its children.
fn title_of(lib: &Library, key: &str) -> String {
    lib.items.get(key).map(|r| r.data.field("title").to_string()).unwrap_or_default()
}

fn tag(i: usize) -> Tag {
    Tag { name: tag_name(i), kind: 0 }
}

fn escape_html(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

fn capitalise(word: &str) -> String {
    let mut chars = word.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// Appends a sentence of `words` filler words (at least one), capitalised and ended with a full stop.
fn push_sentence(out: &mut String, rng: &mut Rng, words: usize) {
    for i in 0..words.max(1) {
        let word = *rng.pick(FILLER);
        if i == 0 {
            let mut chars = word.chars();
            out.extend(chars.next().into_iter().flat_map(char::to_uppercase));
            out.push_str(chars.as_str());
        } else {
            out.push(' ');
            out.push_str(word);
        }
    }
    out.push('.');
}

/// The `i`-th regular item: a journal article, a book or a conference paper.
fn regular_item(i: usize, rng: &mut Rng) -> ItemData {
    let roll = rng.below(20);
    let item_type = match roll {
        0..=1 => "book",
        2..=3 => "conferencePaper",
        _ => "journalArticle",
    };
    let subject = *rng.pick(SUBJECTS);
    let noun = *rng.pick(NOUNS);
    // Every frame starts with a capital letter.
    let title = format!("{} {subject} {noun} {}", rng.pick(FRAMES), rng.pick(CONTEXTS));
    let year = 1990 + rng.below(35);
    let date = if rng.below(3) == 0 {
        year.to_string()
    } else {
        format!("{year}-{:02}-{:02}", 1 + rng.below(12), 1 + rng.below(28))
    };
    let creators: Vec<Creator> = (0..1 + rng.below(4))
        .map(|_| Creator {
            creator_type: "author".into(),
            name: CreatorName::Split { first: (*rng.pick(FIRST_NAMES)).into(), last: (*rng.pick(LAST_NAMES)).into() },
        })
        .collect();
    let mut abstract_note = String::with_capacity(600);
    for i in 0..2 + rng.below(3) {
        if i > 0 {
            abstract_note.push(' ');
        }
        let words = 10 + rng.below(10);
        push_sentence(&mut abstract_note, rng, words);
    }
    let mut fields: BTreeMap<String, String> = BTreeMap::new();
    let mut set = |name: &str, value: String| {
        fields.insert(name.to_string(), value);
    };
    set("title", title);
    set("date", date);
    set("abstractNote", abstract_note);
    match item_type {
        "book" => {
            set("publisher", (*rng.pick(PUBLISHERS)).to_string());
            set("ISBN", format!("978-{:010}", 1_000_000 + i));
            set("DOI", format!("10.5555/book.{year}.{:06}", i + 1));
        }
        "conferencePaper" => {
            let conference = *rng.pick(CONFERENCES);
            set("proceedingsTitle", format!("Proceedings of {conference} {year}"));
            set("conferenceName", conference.to_string());
            set("DOI", format!("10.5555/conf.{year}.{:06}", i + 1));
        }
        _ => {
            set("publicationTitle", (*rng.pick(JOURNALS)).to_string());
            set("volume", (1 + rng.below(80)).to_string());
            set("pages", format!("{}-{}", 1 + i % 900, 10 + i % 900));
            set("DOI", format!("10.5555/synth.{year}.{:06}", i + 1));
        }
    }
    if rng.below(3) == 0 {
        let first_last: String = creators
            .first()
            .map_or("anon", Creator::last_name)
            .chars()
            .filter(char::is_ascii_alphabetic)
            .map(|c| c.to_ascii_lowercase())
            .collect();
        set("extra", format!("Citation Key: {first_last}{year}{subject}{}", i + 1));
    }
    ItemData { item_type: item_type.into(), fields, creators, ..ItemData::default() }
}

/// A near-duplicate of `original`: the same DOI, the title in another case and punctuation, and the first
/// creator's first name reduced to an initial.
fn near_duplicate(original: &ItemData, rng: &mut Rng) -> ItemData {
    let mut data = original.clone();
    // Filed and tagged anew, like any item.
    data.tags.clear();
    data.collections.clear();
    let title = original.field("title");
    let changed = match rng.below(3) {
        0 => title.to_lowercase(),
        1 => format!("{}.", title.to_uppercase()),
        _ => title.replacen(' ', ": ", 1),
    };
    data.fields.insert("title".into(), changed);
    if let Some(Creator { name: CreatorName::Split { first, .. }, .. }) = data.creators.first_mut() {
        if let Some(initial) = first.chars().next() {
            *first = format!("{initial}.");
        }
    }
    data.fields.remove("extra");
    data
}
