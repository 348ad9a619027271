//! What a bibliography feed reads from the mirror: the citable items of a library or of some of its collections,
//! in key order, a page at a time. A feed of 50,000 items is read in pages so no single query answers tens of
//! megabytes (D1 refuses a result over 50 MB, and a Worker has 128 MB in all), and the citation keys, which must
//! be unique across the whole feed, are worked out first from a slim pass that reads only what a key is made of.

use serde_json::{json, Value};

use super::store::object_of;
use crate::platform::{SqlDb, SqlError};
use crate::zotero::ZoteroObject;

/// Items read per page of a feed: at about 5 KB a row, 10 MB a query.
pub const FEED_PAGE: usize = 2000;

// Top-level regular items outside the trash; `?2` is null for the whole library or a JSON array of collection
// keys, of which an item must be in one. `?3` is the last key of the previous page.
const FEED_FILTER: &str = "library = ?1 AND parent IS NULL AND trashed = 0
      AND item_type NOT IN ('note', 'attachment', 'annotation')
      AND (?2 IS NULL OR EXISTS (SELECT 1 FROM json_each(data, '$.collections') AS c
                                 WHERE c.value IN (SELECT value FROM json_each(?2))))
      AND key > ?3";

/// The items a feed names: the whole library, or those in any of these collections.
#[derive(Debug, Clone, Copy)]
pub enum FeedItems<'a> {
    Library,
    InCollections(&'a [String]),
}

impl FeedItems<'_> {
    fn param(self) -> Value {
        match self {
            FeedItems::Library => Value::Null,
            FeedItems::InCollections(keys) => json!(keys),
        }
    }
}

/// Every item of the feed in key order, each with only what its citation key is made of (`itemType`,
/// `citationKey`, `extra`, `creators`, `date`, `title`, `dateAdded`), read in pages.
pub async fn feed_key_parts(
    db: &dyn SqlDb,
    library: &str,
    items: FeedItems<'_>,
) -> Result<Vec<ZoteroObject>, SqlError> {
    let sql = "SELECT key, version, json_object(
                   'itemType', item_type, 'citationKey', json_extract(data, '$.citationKey'),
                   'extra', json_extract(data, '$.extra'), 'creators', json_extract(data, '$.creators'),
                   'date', json_extract(data, '$.date'), 'title', title,
                   'dateAdded', json_extract(data, '$.dateAdded')) AS data
               FROM mirror_items WHERE ";
    let mut all = Vec::new();
    loop {
        let after = all.last().map_or(String::new(), |last: &ZoteroObject| last.key.clone());
        let page = read_page(db, sql, library, items, &after, FEED_PAGE * 5).await?;
        let full = page.len() == FEED_PAGE * 5;
        all.extend(page);
        if !full {
            return Ok(all);
        }
    }
}

/// One page of the feed's items, whole, in key order: those after `after` (empty: from the first), at most
/// [`FEED_PAGE`].
pub async fn feed_page(
    db: &dyn SqlDb,
    library: &str,
    items: FeedItems<'_>,
    after: &str,
) -> Result<Vec<ZoteroObject>, SqlError> {
    read_page(db, "SELECT key, version, data FROM mirror_items WHERE ", library, items, after, FEED_PAGE).await
}

async fn read_page(
    db: &dyn SqlDb,
    select: &str,
    library: &str,
    items: FeedItems<'_>,
    after: &str,
    limit: usize,
) -> Result<Vec<ZoteroObject>, SqlError> {
    let sql = format!("{select}{FEED_FILTER} ORDER BY key LIMIT {limit}");
    let params = [Value::from(library), items.param(), Value::from(after)];
    let rows = db.query(&sql, &params).await?;
    Ok(rows.iter().filter_map(|row| object_of(row, &[])).collect())
}
