//! Keeping a library's mirror in step with Zotero as Zotero's own clients do: read what changed since the
//! version the mirror is complete at (`?since=`), what was deleted since (`/deleted?since=`), and ask first
//! whether anything changed at all (`If-Modified-Since-Version`: a 304 costs one request and nothing else).
//!
//! A pass (the first fill is a pass since version 0) goes listing by listing, a page of 100 at a time, and
//! saves where it stands with every page it stores (in the same transaction), so a call or a cron run that
//! runs out of requests leaves it to the next one, which goes on from there: it never starts over. Pages are
//! read oldest added first, which keeps their places while objects change, but an object that starts or stops
//! matching meanwhile shifts them: when a later page answers at a newer library version than the first, the
//! pass ends by comparing every key's version with Zotero's (one request) and reading what it missed.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::schema::{migrate, SCHEMA_VERSION};
use super::store::{self, Listing};
use crate::platform::{SqlDb, SqlError, Statement};
use crate::zotero::{ObjectKey, ZoteroClient, ZoteroError, BATCH_SIZE, PAGE_LIMIT};

/// Requests to Zotero a call (or a scheduled run) may spend bringing the mirror forward. Each page read is also
/// two database statements (where the pass stands, with the item count, and the page), and D1 on the free plan
/// takes 50 queries a Worker invocation, each statement of a batch counted, as Workers take 50 subrequests: 20
/// pages leave room for the rest of the call (`a_call_s_share_of_a_fill_stays_within_d1_s_fifty_queries`). The first
/// fill of a large library takes several calls; each goes on where the last stopped.
pub const CALL_BUDGET: usize = 20;

/// How far a library's mirror is, as answers report it (`mirror` in a tool's structured content).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MirrorStatus {
    /// The library version the rows are complete at; during the first fill, the version it is filling to.
    pub library_version: u64,
    /// Items in the mirror.
    pub items: u64,
    /// Whether the rows hold the whole library as of `library_version` (false during the first fill).
    pub complete: bool,
    /// When the mirror was last found in step with Zotero (ms since the epoch; 0: never).
    pub synced_at: u64,
}

/// Why the mirror could not be brought forward (what it holds is still as good as it was).
#[derive(Debug, thiserror::Error)]
pub enum MirrorError {
    #[error(transparent)]
    Zotero(#[from] ZoteroError),
    #[error(transparent)]
    Sql(#[from] SqlError),
}

/// Where a pass stands.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Pass {
    /// The version it reads changes since (0: the first fill).
    since: u64,
    /// The library version its first page answered at: the rows are complete at it once the pass ends.
    at: u64,
    step: Step,
    /// The next page's offset in the current listing.
    start: usize,
    /// A later page answered at a newer version than the first: pages may have shifted.
    moved: bool,
    /// Keys found missing or behind at the end, still to read.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    missing: Vec<String>,
    /// The version collections and saved searches are read since, when a verification found them behind (0:
    /// all of them again); else `since`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    lists_since: Option<u64>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
enum Step {
    /// Every key's version compared with Zotero's, before the changes are read (see [`VERIFY_EVERY_MS`]).
    Verify,
    #[default]
    Items,
    Collections,
    Searches,
    Deleted,
    Check,
    Missing,
}

/// The mirror's row for a library. It is complete once a pass has ended (`synced_at` set): an empty library's
/// version is 0, so the version alone cannot say.
pub(super) struct Library {
    pub(super) version: u64,
    pub(super) pass: Option<Pass>,
    pub(super) synced_at: u64,
    /// When every key was last compared with Zotero's (0: due).
    pub(super) verified_at: u64,
    /// Items the rows hold (kept by `store`'s statements, read here, never written by [`save`]).
    pub(super) items: u64,
}

/// How often a complete mirror compares every key's version with Zotero's (three requests): what the changes
/// since a version cannot show is found so, a library reset on the server (its version gone back, which an
/// `If-Modified-Since-Version` answers with a 304) or a row left by a pass that went wrong.
pub const VERIFY_EVERY_MS: u64 = 24 * 3600 * 1000;

/// Saves where the library stands, and counts into its `items` what the rest of the batch adds (keys in `?6` it
/// does not hold yet) and removes (keys in `?7` it holds): it runs first, before those rows change, so the count
/// moves with them in one transaction, and by a difference, so two calls at once do not undo each other's.
const SAVE_LIBRARY: &str = "INSERT INTO mirror_libraries (library, version, progress, synced_at, verified_at, items)
    VALUES (?1, ?2, ?3, ?4, ?5,
        (SELECT count(*) FROM json_each(?6) AS k
         WHERE NOT EXISTS (SELECT 1 FROM mirror_items WHERE library = ?1 AND key = k.value))
        - (SELECT count(*) FROM mirror_items WHERE library = ?1 AND key IN (SELECT value FROM json_each(?7))))
    ON CONFLICT (library) DO UPDATE SET version = excluded.version, progress = excluded.progress,
    synced_at = excluded.synced_at, verified_at = excluded.verified_at,
    items = mirror_libraries.items + excluded.items";

/// The item keys a batch writes and deletes, for [`save`] to count.
#[derive(Debug, Default)]
pub(super) struct Counted {
    pub added: Vec<String>,
    pub removed: Vec<String>,
}

/// The statement saving `state`, counting `counted`: the first of its batch.
pub(super) fn save(library: &str, state: &Library, counted: &Counted) -> Statement {
    let pass = state.pass.as_ref().and_then(|pass| serde_json::to_string(pass).ok());
    Statement::new(
        SAVE_LIBRARY,
        vec![
            Value::from(library),
            Value::from(state.version),
            pass.map_or(Value::Null, Value::from),
            Value::from(state.synced_at),
            Value::from(state.verified_at),
            serde_json::json!(counted.added),
            serde_json::json!(counted.removed),
        ],
    )
}

/// `save`, then `statements`: one batch, one transaction, one round trip.
fn saved_with(library: &str, state: &Library, counted: &Counted, statements: Vec<Statement>) -> Vec<Statement> {
    let mut batch = Vec::with_capacity(statements.len() + 1);
    batch.push(save(library, state, counted));
    batch.extend(statements);
    batch
}

pub(super) async fn load(db: &dyn SqlDb, library: &str) -> Result<Library, SqlError> {
    let rows = db
        .query(
            "SELECT version, progress, synced_at, verified_at, items FROM mirror_libraries WHERE library = ?1",
            &[Value::from(library)],
        )
        .await?;
    Ok(library_from(rows.first()))
}

/// A library's row as read (none yet: an empty mirror).
fn library_from(row: Option<&crate::platform::Row>) -> Library {
    let number = |name: &str| row.and_then(|row| row.get(name)).and_then(Value::as_u64).unwrap_or(0);
    let pass = row
        .and_then(|row| row.get("progress"))
        .and_then(Value::as_str)
        .and_then(|text| serde_json::from_slice(text.as_bytes()).ok());
    Library {
        version: number("version"),
        pass,
        synced_at: number("synced_at"),
        verified_at: number("verified_at"),
        items: number("items"),
    }
}

/// The library's mirror as it stands, without asking Zotero.
pub async fn status(db: &dyn SqlDb, library: &str) -> Result<MirrorStatus, MirrorError> {
    let (_, state) = current(db, library).await?;
    Ok(status_from(&state, state.items))
}

/// The library's row, with the schema brought to this build's first when it is not (and how many statements
/// that sent besides its reads). Most calls find the schema current: then one read gives it and the row together.
async fn current(db: &dyn SqlDb, library: &str) -> Result<(usize, Library), SqlError> {
    match load_current(db, library).await {
        Some(state) => Ok((0, state)),
        None => {
            let migrated = migrate(db).await?;
            Ok((migrated, load(db, library).await?))
        }
    }
}

async fn status_of(db: &dyn SqlDb, library: &str, state: &Library) -> Result<MirrorStatus, SqlError> {
    Ok(status_from(state, load(db, library).await?.items))
}

fn status_from(state: &Library, items: u64) -> MirrorStatus {
    let filling_to = state.pass.as_ref().map_or(0, |pass| pass.at);
    let complete = state.synced_at > 0;
    MirrorStatus {
        library_version: if complete { state.version } else { filling_to },
        items,
        complete,
        synced_at: state.synced_at,
    }
}

/// How long a recorded "in step at" stands before a call that finds nothing changed records it again.
pub const SYNCED_AT_REFRESH_MS: u64 = 60_000;

/// The library's row with the schema's version in one read, when the schema is this build's; `None` when it is
/// not (or has no table yet): [`migrate`] decides then.
async fn load_current(db: &dyn SqlDb, library: &str) -> Option<Library> {
    let rows = db
        .query(
            "SELECT s.version AS schema_version, l.version, l.progress, l.synced_at, l.verified_at, l.items \
             FROM mirror_schema s LEFT JOIN mirror_libraries l ON l.library = ?1 WHERE s.id = 1",
            &[Value::from(library)],
        )
        .await
        .ok()?;
    let row = rows.first()?;
    let current = row.get("schema_version").and_then(Value::as_u64) == Some(SCHEMA_VERSION as u64);
    current.then(|| library_from(Some(row)))
}

/// The library `client` reads, as the mirror names it: `users/<id>` or `groups/<id>`.
pub async fn library_of(client: &ZoteroClient) -> Result<String, ZoteroError> {
    Ok(client.library_prefix().await?.trim_start_matches('/').to_owned())
}

/// Brings the mirror of `client`'s library forward by at most `budget` requests to Zotero, from where it
/// stands; `now_ms` is recorded when it is found in step. Returns how far it is.
pub async fn advance(
    db: &dyn SqlDb,
    client: &ZoteroClient,
    budget: usize,
    now_ms: u64,
) -> Result<MirrorStatus, MirrorError> {
    Ok(advance_telling(db, client, budget, now_ms).await?.0)
}

/// [`advance`], and whether it changed any row (a query run on the rows meanwhile may then be out of date).
pub async fn advance_telling(
    db: &dyn SqlDb,
    client: &ZoteroClient,
    budget: usize,
    now_ms: u64,
) -> Result<(MirrorStatus, bool), MirrorError> {
    let library = library_of(client).await?;
    let (migrated, mut state) = current(db, &library).await?;
    // A page costs two statements: a call whose migration sent some reads that many fewer pages.
    let mut used = migrated.div_ceil(2);
    // Whether this call has written the library's rows yet (its count of items is then read again).
    let mut wrote = false;
    while used < budget {
        let mut pass = state.pass.take().unwrap_or_else(|| {
            let due = state.synced_at > 0 && now_ms.saturating_sub(state.verified_at) >= VERIFY_EVERY_MS;
            Pass { since: state.version, step: if due { Step::Verify } else { Step::Items }, ..Pass::default() }
        });
        used += 1;
        let mut statements = Vec::new();
        let mut counted = Counted::default();
        match pass.step {
            Step::Verify => {
                used += 2;
                let (items, collections, searches) = (
                    client.item_versions(0).await?,
                    client.versions_with_trashed(Listing::Collections.path()).await?,
                    client.versions_with_trashed(Listing::Searches.path()).await?,
                );
                let held = held_versions(db, &library).await?;
                let went_back = held.iter().any(|(key, held)| items.versions.get(key).is_some_and(|now| now < held));
                if items.library_version < state.version || went_back {
                    // The library went back (reset on the server): these rows are of another history.
                    reset(db, &library, &mut state).await?;
                    wrote = true;
                    continue;
                }
                counted.removed = held.keys().filter(|key| !items.versions.contains_key(*key)).cloned().collect();
                if !counted.removed.is_empty() {
                    statements.push(store::delete(&library, Listing::Items, &counted.removed));
                }
                statements.push(keep_only(&library, Listing::Collections, &collections.versions));
                statements.push(keep_only(&library, Listing::Searches, &searches.versions));
                pass.missing = items
                    .versions
                    .iter()
                    .filter(|(key, version)| held.get(key.as_str()).is_none_or(|held| held < *version))
                    .map(|(key, _)| key.clone())
                    .collect();
                let lists_behind = list_behind(db, &library, Listing::Collections, &collections.versions).await?
                    || list_behind(db, &library, Listing::Searches, &searches.versions).await?;
                pass.lists_since = lists_behind.then_some(0);
                state.verified_at = now_ms;
                pass.step = Step::Items;
            }
            Step::Items | Step::Collections | Step::Searches => {
                let listing = match pass.step {
                    Step::Items => Listing::Items,
                    Step::Collections => Listing::Collections,
                    _ => Listing::Searches,
                };
                let since = if pass.step == Step::Items { pass.since } else { pass.lists_since.unwrap_or(pass.since) };
                // A pass after the first, that has read nothing yet, first asks whether anything changed at all.
                let ask = state.synced_at > 0 && pass.at == 0 && pass.step == Step::Items && pass.start == 0;
                let Some(page) = client.changed_page(listing.path(), since, pass.start, ask).await? else {
                    if !pass.missing.is_empty() || pass.lists_since.is_some() {
                        // A verification found rows to read: they are read though nothing changed since.
                        pass.step = if pass.lists_since.is_some() { Step::Collections } else { Step::Missing };
                        pass.at = state.version;
                        state.pass = Some(pass);
                        db.batch(&[save(&library, &state, &counted)]).await?;
                        wrote = true;
                        continue;
                    }
                    // In step. Saying when costs a write, spared while the one on record is recent: a call
                    // then waits for one read and Zotero's 304 only.
                    let recorded = state.synced_at;
                    state.synced_at = now_ms;
                    if wrote || now_ms.saturating_sub(recorded) >= SYNCED_AT_REFRESH_MS {
                        db.batch(&[save(&library, &state, &counted)]).await?;
                    }
                    if !wrote {
                        return Ok((status_from(&state, state.items), false));
                    }
                    return Ok((status_of(db, &library, &state).await?, true));
                };
                if page.library_version < state.version {
                    // The library went back (reset on the server): these rows are of another history.
                    reset(db, &library, &mut state).await?;
                    wrote = true;
                    continue;
                }
                if pass.at == 0 {
                    pass.at = page.library_version;
                } else if page.library_version != pass.at {
                    pass.moved = true;
                }
                if !page.items.is_empty() {
                    if listing == Listing::Items {
                        counted.added = page.items.iter().map(|item| item.key.clone()).collect();
                    }
                    statements.push(store::upsert(&library, listing, &page.items));
                }
                let read = pass.start + page.items.len();
                let ended =
                    page.items.len() < PAGE_LIMIT || page.total_results.is_some_and(|total| read as u64 >= total);
                pass.start = if ended { 0 } else { read };
                if ended {
                    pass.step = match pass.step {
                        Step::Items => Step::Collections,
                        Step::Collections => Step::Searches,
                        _ if pass.since == 0 => Step::Check,
                        _ => Step::Deleted,
                    };
                }
            }
            Step::Deleted => {
                let deleted = client.deleted(pass.since).await?;
                for (listing, keys) in [
                    (Listing::Items, &deleted.items),
                    (Listing::Collections, &deleted.collections),
                    (Listing::Searches, &deleted.searches),
                ] {
                    if !keys.is_empty() {
                        statements.push(store::delete(&library, listing, keys));
                    }
                }
                counted.removed = deleted.items.clone();
                pass.step = Step::Check;
            }
            Step::Check if !pass.moved => {
                used -= 1;
                pass.step = Step::Missing;
            }
            Step::Check => {
                let versions = client.item_versions(pass.since).await?;
                let mut more = behind(db, &library, &versions.versions).await?;
                pass.missing.retain(|key| !more.contains(key));
                pass.missing.append(&mut more);
                if pass.since == 0 {
                    // A first fill: every key is in the answer, so a row not in it was deleted while it ran.
                    let held = held_versions(db, &library).await?;
                    counted.removed = held.into_keys().filter(|key| !versions.versions.contains_key(key)).collect();
                    if !counted.removed.is_empty() {
                        statements.push(store::delete(&library, Listing::Items, &counted.removed));
                    }
                }
                pass.step = Step::Missing;
            }
            Step::Missing if pass.missing.is_empty() => {
                // The pass is over: the rows are complete at the version its first page answered at.
                state.version = pass.at;
                state.synced_at = now_ms;
                if pass.since == 0 {
                    // A first fill read every object: it is as good as a verification.
                    state.verified_at = now_ms;
                }
                db.batch(&[save(&library, &state, &counted)]).await?;
                return Ok((status_of(db, &library, &state).await?, true));
            }
            Step::Missing => {
                let take = pass.missing.len().min(BATCH_SIZE);
                let keys: Vec<ObjectKey> =
                    pass.missing.drain(..take).filter_map(|key| ObjectKey::parse(&key).ok()).collect();
                let found = client.items_by_keys(&keys).await?;
                if !found.is_empty() {
                    counted.added = found.iter().map(|item| item.key.clone()).collect();
                    statements.push(store::upsert(&library, Listing::Items, &found));
                }
            }
        }
        state.pass = Some(pass);
        db.batch(&saved_with(&library, &state, &counted, statements)).await?;
        wrote = true;
    }
    Ok((status_of(db, &library, &state).await?, wrote))
}

/// Empties the library's rows and starts its first fill again.
async fn reset(db: &dyn SqlDb, library: &str, state: &mut Library) -> Result<(), SqlError> {
    *state = Library { version: 0, pass: None, synced_at: 0, verified_at: 0, items: 0 };
    let none = std::collections::BTreeMap::new();
    let statements = vec![
        keep_only(library, Listing::Items, &none),
        keep_only(library, Listing::Collections, &none),
        keep_only(library, Listing::Searches, &none),
        Statement::new("UPDATE mirror_libraries SET items = 0 WHERE library = ?1", vec![Value::from(library)]),
    ];
    db.batch(&saved_with(library, state, &Counted::default(), statements)).await
}

/// The statement removing the rows of `listing` whose keys `versions` (every key Zotero has) lacks. (For items,
/// only to empty the library: deleting items otherwise names them, for [`save`] to count.)
fn keep_only(library: &str, listing: Listing, versions: &std::collections::BTreeMap<String, u64>) -> Statement {
    let sql = match listing {
        Listing::Items => {
            "DELETE FROM mirror_items WHERE library = ?1 AND key NOT IN (SELECT value FROM json_each(?2))"
        }
        Listing::Collections => {
            "DELETE FROM mirror_collections WHERE library = ?1 AND key NOT IN (SELECT value FROM json_each(?2))"
        }
        Listing::Searches => {
            "DELETE FROM mirror_searches WHERE library = ?1 AND key NOT IN (SELECT value FROM json_each(?2))"
        }
    };
    let keys: Vec<&String> = versions.keys().collect();
    Statement::new(sql, vec![Value::from(library), serde_json::json!(keys)])
}

/// Every item key the mirror holds for `library`, with its version.
async fn held_versions(db: &dyn SqlDb, library: &str) -> Result<std::collections::HashMap<String, u64>, SqlError> {
    let rows = db.query("SELECT key, version FROM mirror_items WHERE library = ?1", &[Value::from(library)]).await?;
    Ok(rows
        .iter()
        .filter_map(|row| Some((row.get("key")?.as_str()?.to_owned(), row.get("version")?.as_u64()?)))
        .collect())
}

/// Whether the mirror lacks an object of `listing` that `versions` has, or holds one at an older version.
async fn list_behind(
    db: &dyn SqlDb,
    library: &str,
    listing: Listing,
    versions: &std::collections::BTreeMap<String, u64>,
) -> Result<bool, SqlError> {
    let table = if listing == Listing::Collections { "mirror_collections" } else { "mirror_searches" };
    let rows =
        db.query(&format!("SELECT key, version FROM {table} WHERE library = ?1"), &[Value::from(library)]).await?;
    let held: std::collections::HashMap<&str, u64> =
        rows.iter().filter_map(|row| Some((row.get("key")?.as_str()?, row.get("version")?.as_u64()?))).collect();
    Ok(versions.iter().any(|(key, version)| held.get(key.as_str()).is_none_or(|held| held < version)))
}

/// Of `versions` (key → Zotero's version), the keys the mirror lacks or holds at an older version.
async fn behind(
    db: &dyn SqlDb,
    library: &str,
    versions: &std::collections::BTreeMap<String, u64>,
) -> Result<Vec<String>, SqlError> {
    let keys: Vec<&String> = versions.keys().collect();
    let rows = db
        .query(
            "SELECT key, version FROM mirror_items WHERE library = ?1 AND key IN (SELECT value FROM json_each(?2))",
            &[Value::from(library), serde_json::json!(keys)],
        )
        .await?;
    let held: std::collections::HashMap<&str, u64> =
        rows.iter().filter_map(|row| Some((row.get("key")?.as_str()?, row.get("version")?.as_u64()?))).collect();
    Ok(versions
        .iter()
        .filter(|(key, version)| held.get(key.as_str()).is_none_or(|held| held < *version))
        .map(|(key, _)| key.clone())
        .collect())
}
