//! Zotero's item listing and quick search (`/items?q=…&tag=…&itemType=…&sort=…`), answered from the mirror with
//! the Web API's semantics, so that a search over a mirrored library finds what Zotero finds, in Zotero's order.
//!
//! - **Words** (`q`, split as Zotero splits it, a quoted phrase kept whole) must each appear, ignoring case, in
//!   a title-like field, a note's title or a creator's `first last`, or be the item's year. What they are
//!   matched against is kept per item, lowercased (`mirror::derive`), and indexed for substrings by SQLite's FTS5
//!   trigram tokenizer: a word of three characters or more is looked up there; a shorter one is looked for in
//!   every item's text. `everything` adds Zotero's index of file contents, which only attachments have and the
//!   mirror lacks: callers ask Zotero for those (see `unsupported`).
//! - **Filters**: `itemType` and `tag` sets (negation, `||`), the trash, `since`, `itemKey`, a collection (its
//!   items and the notes and attachments under them), as the Web API reads them.
//! - **Order**: the sort value (empty values last, except for `title` and `date`), then version, then when the
//!   item was added and its key (Zotero's last tie-break is its own row number, which the mirror does not see).

mod syntax;
#[cfg(test)]
mod tests;

use serde_json::{json, Value};

use crate::platform::{Row, SqlDb, SqlError};
use crate::zotero::{schema, ItemCard, ZoteroObject};

use super::derive;
use super::store::{object_of, with_parsed_date};
pub use syntax::{words, TermSet};

/// The most parameters a listing's statement binds (D1 takes 100).
const MAX_PARAMETERS: usize = 90;

/// What a listing is sorted by (the Web API's `sort`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SortField {
    DateAdded,
    DateModified,
    Title,
    Creator,
    Date,
    ItemType,
    Publisher,
    PublicationTitle,
}

impl SortField {
    /// The field named as the Web API names it; `None` for a sort the mirror does not keep.
    pub fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "dateAdded" => Self::DateAdded,
            "dateModified" => Self::DateModified,
            "title" => Self::Title,
            "creator" => Self::Creator,
            "date" => Self::Date,
            "itemType" => Self::ItemType,
            "publisher" => Self::Publisher,
            "publicationTitle" => Self::PublicationTitle,
            _ => return None,
        })
    }

    /// Its value in the item's `search`.
    fn key(self) -> &'static str {
        match self {
            Self::DateAdded => "added",
            Self::DateModified => "modified",
            Self::Title => "title",
            Self::Creator => "creator",
            Self::Date => "date",
            Self::ItemType => "type",
            Self::Publisher => "publisher",
            Self::PublicationTitle => "publication",
        }
    }

    /// Zotero puts items without a value last (first when descending), except by title and date.
    fn empty_last(self) -> bool {
        !matches!(self, Self::Title | Self::Date)
    }
}

/// One listing of a library's items, as the Web API's `/items` (or `/collections/<key>/items`) would answer it.
#[derive(Debug, Clone, PartialEq)]
pub struct Listing {
    /// Only the items directly in this collection, and the notes and attachments under them.
    pub collection: Option<String>,
    /// `itemType`.
    pub item_type: Option<TermSet>,
    /// `tag`, each set to be satisfied.
    pub tags: Vec<TermSet>,
    pub include_trashed: bool,
    /// Only items changed after this library version.
    pub since: Option<u64>,
    /// The words of `q` ([`words`]), each to be found.
    pub words: Vec<String>,
    /// `itemKey`: only these items.
    pub keys: Option<Vec<String>>,
    /// Top-level items only (`/items/top`).
    pub top: bool,
    pub sort: SortField,
    pub descending: bool,
    pub start: usize,
    pub limit: usize,
}

/// A page of a listing.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Found {
    pub items: Vec<ItemCard>,
    /// How many items the listing has in all (`Total-Results`).
    pub total: u64,
}

/// Why a listing is not answered from the mirror (Zotero then answers it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Unsupported {
    #[error("a search word holds a control character")]
    ControlCharacter,
    #[error("an item type Zotero does not know")]
    UnknownItemType,
    #[error("too many words and tags for one statement")]
    TooLong,
}

impl Listing {
    /// Whether the mirror can answer this listing exactly, and if not why; checked by [`list`] too.
    pub fn unsupported(&self) -> Option<Unsupported> {
        if self.words.iter().any(|w| w.chars().any(char::is_control)) {
            return Some(Unsupported::ControlCharacter);
        }
        let known = |set: &TermSet| set.values.iter().all(|t| schema::is_item_type(t));
        if self.item_type.as_ref().is_some_and(|set| !known(set)) {
            return Some(Unsupported::UnknownItemType);
        }
        // The library, two per word, one per tag set, and a few more.
        (2 * self.words.len() + self.tags.len() + 8 > MAX_PARAMETERS).then_some(Unsupported::TooLong)
    }
}

/// What [`list`] answered.
#[derive(Debug, Clone, PartialEq)]
pub enum Listed {
    Found(Found),
    /// The listing names a collection the mirror does not hold: Zotero would answer 404.
    NoSuchCollection,
    Unsupported(Unsupported),
}

/// The statement's parameters, numbered as they are added (`?1` is the library).
struct Bound(Vec<Value>);

impl Bound {
    fn add(&mut self, value: Value) -> String {
        self.0.push(value);
        format!("?{}", self.0.len())
    }
}

/// An FTS5 phrase: the text quoted, its quotes doubled.
fn phrase(text: &str) -> String {
    format!("\"{}\"", text.replace('"', "\"\""))
}

/// Documents of one library in the search index: its number times this, plus the item's key number.
const LIBRARY_SPAN: u64 = 1 << 42;

/// The key of an item from its document in the search index ([`derive::key_number`] read back), in SQL.
fn key_of_document() -> String {
    let digits: Vec<String> = (0..8)
        .rev()
        .map(|place| {
            format!("substr('{}', rowid % {LIBRARY_SPAN} / {} % 36 + 1, 1)", derive::KEY_DIGITS, 36u64.pow(place))
        })
        .collect();
    digits.join(" || ")
}

/// Items of the library whose quick-search text holds all of `phrases` (FTS5 query syntax), by key: the
/// library's documents are a range of the index's.
fn indexed(phrases: &str) -> String {
    let first = format!("(SELECT id FROM mirror_search_libraries WHERE library = ?1) * {LIBRARY_SPAN}");
    format!(
        "s.key IN (SELECT {key} FROM mirror_search_text WHERE mirror_search_text MATCH {phrases} \
         AND rowid >= {first} AND rowid < {first} + {LIBRARY_SPAN})",
        key = key_of_document(),
    )
}

/// The conditions an item `s` must meet, binding their values.
fn conditions(listing: &Listing, bound: &mut Bound) -> Vec<String> {
    let mut all = vec!["s.library = ?1".to_owned()];
    if listing.top {
        all.push("s.parent IS NULL".into());
    }
    if !listing.include_trashed {
        all.push("s.trashed = 0".into());
    }
    if let Some(collection) = &listing.collection {
        let key = bound.add(Value::from(collection.as_str()));
        all.push(format!(
            "(EXISTS (SELECT 1 FROM json_each(s.search, '$.collections') AS c WHERE c.value = {key}) \
             OR (s.item_type IN ('note', 'attachment') AND s.parent IN (SELECT m.key FROM mirror_items AS m, \
             json_each(m.search, '$.collections') AS c WHERE m.library = ?1 AND c.value = {key})))"
        ));
    }
    // Words of three characters or more are looked up in the trigram index, all in one lookup unless the word
    // may be a year (four characters), which matches either way.
    let mut phrases = Vec::new();
    for word in &listing.words {
        let lowered = word.to_lowercase();
        let year = word.chars().count() == 4;
        let text = if lowered.chars().count() >= 3 {
            if !year {
                phrases.push(phrase(&lowered));
                continue;
            }
            indexed(&bound.add(Value::from(phrase(&lowered))))
        } else {
            format!("instr(json_extract(s.search, '$.text'), {}) > 0", bound.add(Value::from(lowered)))
        };
        all.push(match year {
            true => format!("({text} OR json_extract(s.search, '$.year') = {})", bound.add(Value::from(word.as_str()))),
            false => text,
        });
    }
    if !phrases.is_empty() {
        all.push(indexed(&bound.add(Value::from(phrases.join(" ")))));
    }
    if let Some(set) = &listing.item_type {
        let types = bound.add(json!(set.values));
        all.push(match set.negated {
            // A negated type never keeps an annotation (Zotero's rule).
            true => {
                format!("s.item_type NOT IN (SELECT value FROM json_each({types})) AND s.item_type <> 'annotation'")
            }
            false => format!("s.item_type IN (SELECT value FROM json_each({types}))"),
        });
    }
    for set in &listing.tags {
        let names: Vec<String> = set.values.iter().map(|v| v.to_lowercase()).collect();
        let names = bound.add(json!(names));
        let carries = format!(
            "EXISTS (SELECT 1 FROM json_each(s.search, '$.tags') AS t WHERE t.value IN (SELECT value FROM json_each({names})))"
        );
        all.push(if set.negated { format!("NOT {carries}") } else { carries });
    }
    if listing.tags.iter().any(|set| set.negated) {
        all.push("s.item_type <> 'annotation'".into());
    }
    if let Some(keys) = &listing.keys {
        all.push(format!("s.key IN (SELECT value FROM json_each({}))", bound.add(json!(keys))));
    }
    if let Some(since) = listing.since {
        all.push(format!("s.version > {}", bound.add(Value::from(since))));
    }
    all
}

fn order(listing: &Listing) -> String {
    let dir = if listing.descending { "DESC" } else { "ASC" };
    let value = format!("json_extract(s.search, '$.{}')", listing.sort.key());
    let mut terms = Vec::new();
    if listing.sort.empty_last() {
        terms.push(format!("({value} = '') {dir}"));
    }
    terms.push(format!("{value} {dir}"));
    terms.push(format!("s.version {dir}"));
    terms.push(format!("json_extract(s.search, '$.added') {dir}"));
    terms.push(format!("s.key {dir}"));
    terms.join(", ")
}

/// The statement reading a page of `listing`, and its parameters. The page's keys are chosen over the small
/// `search` values; only then are the page's items read whole, and their children counted in the parent index:
/// without statistics (no `ANALYZE`), SQLite would rather read every item of the library for each of them.
fn page_statement(library: &str, listing: &Listing) -> (String, Vec<Value>) {
    let mut bound = Bound(vec![Value::from(library)]);
    let conditions = conditions(listing, &mut bound).join(" AND ");
    let order = order(listing);
    let limit = bound.add(Value::from(listing.limit));
    let offset = bound.add(Value::from(listing.start));
    let sql = format!(
        "SELECT i.key AS key, i.version AS version, i.item_type AS type, i.data AS data, p.total AS total,
                json_extract(i.search, '$.date') AS date,
                (SELECT count(*) FROM mirror_items AS c INDEXED BY mirror_items_parent
                 WHERE c.library = i.library AND c.parent = i.key AND c.parent IS NOT NULL AND c.trashed = 0)
                 AS children
         FROM (SELECT s.key AS key, row_number() OVER (ORDER BY {order}) AS n, count(*) OVER () AS total
               FROM mirror_items AS s WHERE {conditions} ORDER BY n LIMIT {limit} OFFSET {offset}) AS p
         JOIN mirror_items AS i ON i.library = ?1 AND i.key = p.key
         ORDER BY p.n"
    );
    (sql, bound.0)
}

/// A page of `listing` over `library`'s items in the mirror, each item read as Zotero lists it (with
/// `meta.numChildren` where Zotero gives it).
pub async fn list(db: &dyn SqlDb, library: &str, listing: &Listing) -> Result<Listed, SqlError> {
    Ok(match page_rows(db, library, listing).await? {
        Paged::Rows(rows, total) => Listed::Found(Found { items: rows.iter().filter_map(card).collect(), total }),
        Paged::NoSuchCollection => Listed::NoSuchCollection,
        Paged::Unsupported(why) => Listed::Unsupported(why),
    })
}

/// A page of `listing` as whole objects (`meta.numChildren` included), and how many the listing holds: what
/// a saved search's evaluation reads. A collection the mirror does not hold lists nothing, as Zotero's 404
/// does for the evaluation; `None` for a listing the mirror cannot answer exactly.
pub async fn objects(
    db: &dyn SqlDb,
    library: &str,
    listing: &Listing,
) -> Result<Option<(Vec<ZoteroObject>, u64)>, SqlError> {
    Ok(match page_rows(db, library, listing).await? {
        Paged::Rows(rows, total) => {
            let objects = rows
                .iter()
                .filter_map(|row| object_of(row, &[("numChildren", "children")]).map(|o| with_parsed_date(o, row)))
                .collect();
            Some((objects, total))
        }
        Paged::NoSuchCollection => Some((Vec::new(), 0)),
        Paged::Unsupported(_) => None,
    })
}

enum Paged {
    Rows(Vec<Row>, u64),
    NoSuchCollection,
    Unsupported(Unsupported),
}

async fn page_rows(db: &dyn SqlDb, library: &str, listing: &Listing) -> Result<Paged, SqlError> {
    if let Some(why) = listing.unsupported() {
        return Ok(Paged::Unsupported(why));
    }
    if let Some(collection) = &listing.collection {
        let held = db
            .query(
                "SELECT 1 AS held FROM mirror_collections WHERE library = ?1 AND key = ?2",
                &[Value::from(library), Value::from(collection.as_str())],
            )
            .await?;
        if held.is_empty() {
            return Ok(Paged::NoSuchCollection);
        }
    }
    let (sql, params) = page_statement(library, listing);
    let rows = db.query(&sql, &params).await?;
    let total = match rows.first().and_then(|row| row.get("total")).and_then(Value::as_u64) {
        Some(total) => total,
        // A page past the end: how many there are, all the same.
        None if listing.start > 0 => {
            let mut bound = Bound(vec![Value::from(library)]);
            let conditions = self::conditions(listing, &mut bound).join(" AND ");
            let sql = format!("SELECT count(*) AS n FROM mirror_items AS s WHERE {conditions}");
            let rows = db.query(&sql, &bound.0).await?;
            rows.first().and_then(|row| row.get("n")).and_then(Value::as_u64).unwrap_or(0)
        }
        None => 0,
    };
    Ok(Paged::Rows(rows, total))
}

/// The items of `library` with these keys, in the order given (those the mirror lacks left out).
pub async fn cards(db: &dyn SqlDb, library: &str, keys: &[String]) -> Result<Vec<ItemCard>, SqlError> {
    let rows = db
        .query(
            "SELECT key, version, item_type AS type, data, NULL AS children FROM mirror_items
             WHERE library = ?1 AND key IN (SELECT value FROM json_each(?2))",
            &[Value::from(library), json!(keys)],
        )
        .await?;
    // Put in order by hand: a sort over cards would be one more sort in the Worker's bundle, for 100 at most.
    let mut found: Vec<ItemCard> = rows.iter().filter_map(card).collect();
    Ok(keys
        .iter()
        .filter_map(|key| {
            let at = found.iter().position(|card| card.key == *key)?;
            Some(found.swap_remove(at))
        })
        .collect())
}

/// A row as the card a listing of Zotero's shows: `numChildren` for regular items, notes and PDFs, as Zotero
/// gives it.
fn card(row: &Row) -> Option<ItemCard> {
    let key = row.get("key")?.as_str()?;
    let version = row.get("version")?.as_u64()?;
    let data = row.get("data")?.as_str()?;
    let text = format!("{{\"key\":{},\"version\":{version},\"data\":{data}}}", Value::from(key));
    let mut card: ItemCard = serde_json::from_slice(text.as_bytes()).ok()?;
    let item_type = row.get("type").and_then(Value::as_str).unwrap_or_default();
    let regular = !matches!(item_type, "note" | "attachment" | "annotation");
    let pdf = item_type == "attachment" && card.data.content_type.as_deref() == Some("application/pdf");
    if regular || item_type == "note" || pdf {
        card.meta.num_children = row.get("children").and_then(Value::as_u64);
    }
    Some(card)
}
