//! Writing Zotero's objects into the mirror and reading them back: batched (one statement per page of objects,
//! whatever its size, through `json_each`), every row keyed by its library so one library's rows never answer
//! for another's.

use serde_json::{json, Map, Value};

use crate::platform::{Row, SqlDb, SqlError, Statement};
use crate::sources::{detect, Identifier};
use crate::zotero::{Tag, ZoteroObject};

// In key order: the search index (`search`) then takes each page's documents in rising order, in one piece.
const UPSERT_ITEMS: &str =
    "INSERT INTO mirror_items (library, key, version, item_type, parent, title, doi, trashed, data, search, match_keys)
    SELECT ?1, json_extract(value, '$.key'), json_extract(value, '$.version'), json_extract(value, '$.itemType'),
           json_extract(value, '$.parent'), json_extract(value, '$.title'), json_extract(value, '$.doi'),
           json_extract(value, '$.trashed'), json_extract(value, '$.data'), json_extract(value, '$.search'),
           json_extract(value, '$.matchKeys')
    FROM json_each(?2) WHERE true ORDER BY json_extract(value, '$.key')
    ON CONFLICT (library, key) DO UPDATE SET
        version = excluded.version, item_type = excluded.item_type, parent = excluded.parent,
        title = excluded.title, doi = excluded.doi, trashed = excluded.trashed, data = excluded.data,
        search = excluded.search, match_keys = excluded.match_keys
    WHERE excluded.version >= mirror_items.version";

const UPSERT_COLLECTIONS: &str = "INSERT INTO mirror_collections (library, key, version, name, parent, data)
    SELECT ?1, json_extract(value, '$.key'), json_extract(value, '$.version'), json_extract(value, '$.name'),
           json_extract(value, '$.parent'), json_extract(value, '$.data')
    FROM json_each(?2) WHERE true
    ON CONFLICT (library, key) DO UPDATE SET
        version = excluded.version, name = excluded.name, parent = excluded.parent, data = excluded.data
    WHERE excluded.version >= mirror_collections.version";

const UPSERT_SEARCHES: &str = "INSERT INTO mirror_searches (library, key, version, name, data)
    SELECT ?1, json_extract(value, '$.key'), json_extract(value, '$.version'), json_extract(value, '$.name'),
           json_extract(value, '$.data')
    FROM json_each(?2) WHERE true
    ON CONFLICT (library, key) DO UPDATE SET version = excluded.version, name = excluded.name, data = excluded.data
    WHERE excluded.version >= mirror_searches.version";

const DELETE_ITEMS: &str = "DELETE FROM mirror_items WHERE library = ?1 AND key IN (SELECT value FROM json_each(?2))";
const DELETE_COLLECTIONS: &str =
    "DELETE FROM mirror_collections WHERE library = ?1 AND key IN (SELECT value FROM json_each(?2))";
const DELETE_SEARCHES: &str =
    "DELETE FROM mirror_searches WHERE library = ?1 AND key IN (SELECT value FROM json_each(?2))";

/// The kinds of object the mirror keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listing {
    Items,
    Collections,
    Searches,
}

impl Listing {
    /// The Web API listing it is read from.
    pub fn path(self) -> &'static str {
        match self {
            Listing::Items => "/items",
            Listing::Collections => "/collections",
            Listing::Searches => "/searches",
        }
    }
}

/// The statement storing `objects` (one page of `listing`) for `library`: newer versions replace older ones,
/// never the reverse. (The library's item count is kept by `sync::save`, which runs first in the same batch.)
pub fn upsert(library: &str, listing: Listing, objects: &[ZoteroObject]) -> Statement {
    let rows: Vec<Value> = objects.iter().map(|object| row_of(listing, object)).collect();
    let sql = match listing {
        Listing::Items => UPSERT_ITEMS,
        Listing::Collections => UPSERT_COLLECTIONS,
        Listing::Searches => UPSERT_SEARCHES,
    };
    Statement::new(sql, vec![Value::from(library), Value::Array(rows)])
}

/// The statement removing `keys` of `listing` from `library`.
pub fn delete(library: &str, listing: Listing, keys: &[String]) -> Statement {
    let sql = match listing {
        Listing::Items => DELETE_ITEMS,
        Listing::Collections => DELETE_COLLECTIONS,
        Listing::Searches => DELETE_SEARCHES,
    };
    Statement::new(sql, vec![Value::from(library), json!(keys)])
}

fn text(data: &Map<String, Value>, field: &str) -> Value {
    match data.get(field).and_then(Value::as_str).map(str::trim) {
        Some(text) if !text.is_empty() => Value::from(text),
        _ => Value::Null,
    }
}

/// An object as the upsert's `json_each` reads it: the indexed columns worked out here (a DOI lowercased
/// without its resolver prefix, a parent `false` as none), the data as JSON text.
fn row_of(listing: Listing, object: &ZoteroObject) -> Value {
    let data = &object.data;
    let data_text = Value::Object(data.clone()).to_string();
    match listing {
        Listing::Items => json!({
            "key": object.key,
            "version": object.version,
            "itemType": data.get("itemType").and_then(Value::as_str).unwrap_or("unknown"),
            "parent": text(data, "parentItem"),
            "title": text(data, "title"),
            "doi": doi_of(data),
            "trashed": i64::from(flag(data.get("deleted"))),
            "data": data_text,
            "matchKeys": super::matching::keys_of(object),
            "search": super::derive::derive(object).to_string(),
        }),
        Listing::Collections => json!({
            "key": object.key,
            "version": object.version,
            "name": text(data, "name"),
            "parent": text(data, "parentCollection"),
            "data": data_text,
        }),
        Listing::Searches => json!({
            "key": object.key,
            "version": object.version,
            "name": text(data, "name"),
            "data": data_text,
        }),
    }
}

fn flag(value: Option<&Value>) -> bool {
    match value {
        Some(Value::Bool(b)) => *b,
        Some(Value::Number(n)) => n.as_u64().is_some_and(|n| n != 0),
        _ => false,
    }
}

/// The item's DOI as the mirror indexes it: its `DOI` field, else a `DOI:` line of `extra`, lowercased.
fn doi_of(data: &Map<String, Value>) -> Value {
    let from_field = data.get("DOI").and_then(Value::as_str);
    let from_extra = data.get("extra").and_then(Value::as_str).and_then(|extra| {
        extra.lines().find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.trim().eq_ignore_ascii_case("doi").then_some(value.trim())
        })
    });
    match from_field.or(from_extra).map(detect) {
        Some(Ok(Identifier::Doi(doi))) => Value::from(doi.to_lowercase()),
        _ => Value::Null,
    }
}

/// The top-level items of `library` not in the trash (of `item_type` when given) that may be copies of one
/// another, newest version first, as a listing of Zotero's would give them (`meta.numChildren` counts their
/// children not in the trash), and how many top-level items there are in all.
///
/// The library is read as its items' keys and match keys only (`matching::keys_of`: a DOI, ISBN, arXiv id or
/// title key per line), a few dozen bytes an item; only the items sharing one of those with another are read
/// whole. Reading every item whole would be tens of megabytes at 50,000 items, past what a Worker holds and
/// what D1 answers in one result. Every rule that groups copies needs such a shared key, so no group is missed.
pub async fn duplicate_candidates(
    db: &dyn SqlDb,
    library: &str,
    item_type: Option<&str>,
) -> Result<(u64, Vec<ZoteroObject>), SqlError> {
    let params = [Value::from(library), item_type.map_or(Value::Null, Value::from)];
    let rows = db
        .query(
            "SELECT key, match_keys FROM mirror_items
             WHERE library = ?1 AND parent IS NULL AND trashed = 0 AND (?2 IS NULL OR item_type = ?2)",
            &params,
        )
        .await?;
    // Only the kinds of key the grouping compares (not citation keys or PMIDs).
    let grouped = |line: &&str| ["d:", "i:", "a:", "t:"].iter().any(|kind| line.starts_with(kind));
    let lines_of = |row: &Row| -> Vec<String> {
        let text = row.get("match_keys").and_then(Value::as_str).unwrap_or_default();
        text.lines().filter(grouped).map(str::to_owned).collect()
    };
    let keyed: Vec<(&str, Vec<String>)> =
        rows.iter().filter_map(|row| Some((row.get("key")?.as_str()?, lines_of(row)))).collect();
    let mut seen: std::collections::HashMap<&str, u32> = std::collections::HashMap::new();
    for (_, lines) in &keyed {
        for line in lines {
            *seen.entry(line.as_str()).or_default() += 1;
        }
    }
    let shared: Vec<&str> = keyed
        .iter()
        .filter(|(_, lines)| lines.iter().any(|line| seen.get(line.as_str()).is_some_and(|n| *n > 1)))
        .map(|(key, _)| *key)
        .collect();
    if shared.is_empty() {
        return Ok((rows.len() as u64, Vec::new()));
    }
    let found = db
        .query(
            "SELECT i.key AS key, i.version AS version, i.data AS data,
                    (SELECT count(*) FROM mirror_items AS c INDEXED BY mirror_items_parent
                     WHERE c.library = i.library AND c.parent = i.key AND c.trashed = 0) AS children
             FROM mirror_items AS i
             WHERE i.library = ?1 AND i.key IN (SELECT value FROM json_each(?2))
             ORDER BY i.version DESC, i.key",
            &[Value::from(library), json!(shared)],
        )
        .await?;
    let items = found.iter().filter_map(|row| object_of(row, &[("numChildren", "children")])).collect();
    Ok((rows.len() as u64, items))
}

/// The items of `library` with these keys, in the trash or not (those the mirror lacks left out), in key order.
pub async fn items_by_keys(db: &dyn SqlDb, library: &str, keys: &[String]) -> Result<Vec<ZoteroObject>, SqlError> {
    let rows = db
        .query(
            "SELECT key, version, data, json_extract(search, '$.date') AS date FROM mirror_items
             WHERE library = ?1 AND key IN (SELECT value FROM json_each(?2)) ORDER BY key",
            &[Value::from(library), json!(keys)],
        )
        .await?;
    Ok(rows.iter().filter_map(|row| object_of(row, &[]).map(|object| with_parsed_date(object, row))).collect())
}

/// The object with `meta.parsedDate` as Zotero gives it (`2021`, `2021-07`, `2021-07-15`), from the sort date
/// the mirror keeps (`2021-07-00`) in the row's `date` column: what a saved search's date conditions read.
pub(crate) fn with_parsed_date(mut object: ZoteroObject, row: &Row) -> ZoteroObject {
    let sortable = row.get("date").and_then(Value::as_str).unwrap_or_default();
    let parts: Vec<&str> = sortable.split('-').take_while(|part| part.bytes().any(|b| b != b'0')).collect();
    if !parts.is_empty() {
        object.meta.insert("parsedDate".to_owned(), Value::from(parts.join("-")));
    }
    object
}

/// A row of `key`, `version` and `data` as the object Zotero would list, with `meta` fields taken from the named
/// columns (`(meta field, column)`).
pub(crate) fn object_of(row: &Row, meta: &[(&str, &str)]) -> Option<ZoteroObject> {
    let data: Map<String, Value> = serde_json::from_slice(row.get("data")?.as_str()?.as_bytes()).ok()?;
    let meta = meta
        .iter()
        .map(|(field, column)| ((*field).to_owned(), row.get(*column).cloned().unwrap_or(Value::from(0))))
        .collect();
    Some(ZoteroObject { key: row.get("key")?.as_str()?.to_owned(), version: row.get("version")?.as_u64()?, meta, data })
}

/// Every collection of `library` (those in the trash too, as Zotero lists them), as a listing of Zotero's would
/// give them: `meta.numItems` counts the items outside the trash directly in it, `meta.numCollections` the
/// collections directly below it. One pass over the items, however many collections.
pub async fn collections(db: &dyn SqlDb, library: &str) -> Result<Vec<ZoteroObject>, SqlError> {
    let rows = db
        .query(
            "SELECT c.key AS key, c.version AS version, c.data AS data, coalesce(m.n, 0) AS items,
                    (SELECT count(*) FROM mirror_collections AS s WHERE s.library = c.library AND s.parent = c.key)
                        AS subcollections
             FROM mirror_collections AS c
             LEFT JOIN (SELECT member.value AS key, count(*) AS n
                        FROM mirror_items AS i, json_each(i.data, '$.collections') AS member
                        WHERE i.library = ?1 AND i.trashed = 0 GROUP BY 1) AS m ON m.key = c.key
             WHERE c.library = ?1 ORDER BY c.key",
            &[Value::from(library)],
        )
        .await?;
    let meta = [("numItems", "items"), ("numCollections", "subcollections")];
    Ok(rows.iter().filter_map(|row| object_of(row, &meta)).collect())
}

/// Every saved search of `library`, the most recently changed first (as Zotero lists them).
pub async fn searches(db: &dyn SqlDb, library: &str) -> Result<Vec<ZoteroObject>, SqlError> {
    let rows = db
        .query(
            "SELECT key, version, data FROM mirror_searches WHERE library = ?1 ORDER BY version DESC, key",
            &[Value::from(library)],
        )
        .await?;
    Ok(rows.iter().filter_map(|row| object_of(row, &[])).collect())
}

/// Every tag of `library`, by name and type, with how many items carry it (those in the trash too, as Zotero's
/// `/tags` counts them), in no particular order.
pub async fn tags(db: &dyn SqlDb, library: &str) -> Result<Vec<Tag>, SqlError> {
    let rows = db
        .query(
            "SELECT json_extract(tag.value, '$.tag') AS tag, coalesce(json_extract(tag.value, '$.type'), 0) AS type,
                    count(DISTINCT i.key) AS n
             FROM mirror_items AS i, json_each(i.data, '$.tags') AS tag
             WHERE i.library = ?1 GROUP BY 1, 2",
            &[Value::from(library)],
        )
        .await?;
    Ok(rows
        .iter()
        .filter_map(|row| {
            Some(Tag {
                tag: row.get("tag")?.as_str()?.to_owned(),
                kind: u8::try_from(row.get("type")?.as_u64()?).ok()?,
                num_items: row.get("n")?.as_u64()?,
            })
        })
        .collect())
}

/// Groups of items of `library` (not in the trash) that share a DOI, each group's keys oldest version first.
pub async fn shared_dois(db: &dyn SqlDb, library: &str) -> Result<Vec<(String, Vec<String>)>, SqlError> {
    let rows = db
        .query(
            "SELECT doi, json_group_array(key) AS keys FROM (
                 SELECT doi, key FROM mirror_items
                 WHERE library = ?1 AND doi IS NOT NULL AND trashed = 0 ORDER BY version, key
             ) GROUP BY doi HAVING count(*) > 1 ORDER BY doi",
            &[Value::from(library)],
        )
        .await?;
    Ok(rows.iter().filter_map(group_of).collect())
}

fn group_of(row: &Row) -> Option<(String, Vec<String>)> {
    let doi = row.get("doi")?.as_str()?.to_owned();
    let keys: Vec<String> = serde_json::from_slice(row.get("keys")?.as_str()?.as_bytes()).ok()?;
    Some((doi, keys))
}

/// The regular items of `library` outside the trash that share a key with `probes`
/// (`matching::probes_of`): one pass over the library's
/// rows, whatever the number of probes (D1 takes at most 100 parameters a statement, so they go as one JSON array).
pub async fn reference_candidates(
    db: &dyn SqlDb,
    library: &str,
    probes: &[String],
) -> Result<Vec<ZoteroObject>, SqlError> {
    if probes.is_empty() {
        return Ok(Vec::new());
    }
    let rows = db
        .query(
            "SELECT key, version, data FROM mirror_items AS i
             WHERE library = ?1 AND trashed = 0 AND match_keys IS NOT NULL
               AND EXISTS (SELECT 1 FROM json_each(?2) AS probe WHERE instr(i.match_keys, probe.value) > 0)",
            &[Value::from(library), serde_json::json!(probes)],
        )
        .await?;
    Ok(rows.iter().filter_map(|row| object_of(row, &[])).filter(crate::duplicates::is_candidate).collect())
}
