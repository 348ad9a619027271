//! Write-through: what this server wrote goes into the mirror as Zotero answered it, so the next call sees its
//! own write without asking. When the writes' versions follow the mirror's own without a gap (Zotero moves a
//! library's version on by one per write request), nobody else wrote meanwhile, and the mirror moves to the last
//! of them: the next freshness check is a 304 again. Otherwise the rows are still written (a newer version
//! replaces an older one, never the reverse) and the next pass reads what else changed.

use serde_json::{json, Map, Value};

use super::schema::migrate;
use super::store::{self, Listing};
use super::sync::load;
use crate::platform::{SqlDb, Statement};
use crate::zotero::journal::{Kind, Written, WrittenThrough};
use crate::zotero::ZoteroObject;

use super::MirrorError;

/// Applies `written` (what one call's writes left in `library`) to the mirror. Returns whether the mirror's
/// version moved with it.
pub async fn write_through(db: &dyn SqlDb, library: &str, written: &WrittenThrough) -> Result<bool, MirrorError> {
    if written.objects.is_empty() && written.versions.is_empty() && !written.conflicted {
        return Ok(false);
    }
    migrate(db).await?;
    let state = load(db, library).await?;
    if state.synced_at == 0 && state.pass.is_none() {
        // Never filled: its first fill reads these objects with the rest (and counts them as it stores them).
        return Ok(false);
    }
    let mut statements = Vec::new();
    let (mut added, mut removed) = (Vec::new(), Vec::new());
    for kind in [Kind::Item, Kind::Collection] {
        let listing = match kind {
            Kind::Item => Listing::Items,
            Kind::Collection => Listing::Collections,
        };
        // The newest of each object only: a call may write one object twice.
        let mut newest: Vec<&Written> = Vec::new();
        for object in written.objects.iter().rev().filter(|object| object.kind == kind) {
            if !newest.iter().any(|seen| seen.key == object.key) {
                newest.push(object);
            }
        }
        let kept: Vec<ZoteroObject> = newest
            .iter()
            .filter_map(|object| {
                let data = object.data.clone()?;
                Some(ZoteroObject { key: object.key.clone(), version: object.version, meta: Map::new(), data })
            })
            .collect();
        let gone: Vec<String> =
            newest.iter().filter(|object| object.data.is_none()).map(|object| object.key.clone()).collect();
        if kind == Kind::Item {
            added = kept.iter().map(|object| object.key.clone()).collect();
            removed.clone_from(&gone);
        }
        if !kept.is_empty() {
            statements.push(store::upsert(library, listing, &kept));
        }
        if !gone.is_empty() {
            statements.push(store::delete(library, listing, &gone));
        }
    }
    let moved = written.exact
        && !written.conflicted
        && state.synced_at > 0
        && state.pass.is_none()
        && follows(state.version, &written.versions);
    let version = if moved { written.versions.iter().copied().max().unwrap_or(state.version) } else { state.version };
    // First in the batch, before the rows change: the count, the version when it moves, and a verification made
    // due by a 412. Only these columns: a pass under way in another call keeps its place.
    let update = Statement::new(
        "UPDATE mirror_libraries SET
            items = items
                + (SELECT count(*) FROM json_each(?2) AS k
                   WHERE NOT EXISTS (SELECT 1 FROM mirror_items WHERE library = ?1 AND key = k.value))
                - (SELECT count(*) FROM mirror_items WHERE library = ?1 AND key IN (SELECT value FROM json_each(?3))),
            version = CASE WHEN version = ?5 THEN ?4 ELSE version END,
            verified_at = CASE WHEN ?6 THEN 0 ELSE verified_at END
         WHERE library = ?1",
        vec![
            Value::from(library),
            json!(added),
            json!(removed),
            Value::from(version),
            // Moved only from where it was read: a pass that ended meanwhile in another call stands.
            Value::from(state.version),
            Value::from(written.conflicted),
        ],
    );
    statements.insert(0, update);
    db.batch(&statements).await?;
    Ok(moved)
}

/// Whether `versions` are `from + 1`, `from + 2`, … each once, in any order.
fn follows(from: u64, versions: &[u64]) -> bool {
    let mut sorted = versions.to_vec();
    crate::sort::sort(&mut sorted);
    !sorted.is_empty() && sorted.iter().enumerate().all(|(at, version)| *version == from + 1 + at as u64)
}

#[cfg(test)]
mod tests {
    use super::follows;

    #[test]
    fn versions_follow_only_without_a_gap_or_a_repeat() {
        assert!(follows(7, &[8]));
        assert!(follows(7, &[9, 8, 10]));
        assert!(!follows(7, &[9]), "someone else wrote version 8");
        assert!(!follows(7, &[8, 8]));
        assert!(!follows(7, &[7, 8]));
        assert!(!follows(7, &[]));
    }
}
