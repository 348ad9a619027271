//! Write-through: what this server wrote goes into the mirror as Zotero answered it, so the next call sees its
//! own write without asking. When the writes' versions follow the mirror's own without a gap (Zotero moves a
//! library's version on by one per write request), nobody else wrote meanwhile, and the mirror moves to the last
//! of them: the next freshness check is a 304 again. Otherwise the rows are still written (a newer version
//! replaces an older one, never the reverse) and the next pass reads what else changed.

use serde_json::Map;

use super::schema::migrate;
use super::store::{self, Listing};
use super::sync::{load, save};
use crate::platform::SqlDb;
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
    let mut state = load(db, library).await?;
    let mut statements = Vec::new();
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
        if !kept.is_empty() {
            statements.extend(store::upsert(library, listing, &kept));
        }
        if !gone.is_empty() {
            statements.extend(store::delete(library, listing, &gone));
        }
    }
    let moved = written.exact
        && !written.conflicted
        && state.synced_at > 0
        && state.pass.is_none()
        && follows(state.version, &written.versions);
    if moved {
        state.version = written.versions.iter().copied().max().unwrap_or(state.version);
    }
    if written.conflicted {
        // The mirror may have held a version Zotero had moved past: the next pass compares every key.
        state.verified_at = 0;
    }
    if moved || written.conflicted {
        statements.push(save(library, &state));
    }
    if !statements.is_empty() {
        db.batch(&statements).await?;
    }
    Ok(moved)
}

/// Whether `versions` are `from + 1`, `from + 2`, … each once, in any order.
fn follows(from: u64, versions: &[u64]) -> bool {
    let mut sorted = versions.to_vec();
    sorted.sort_unstable();
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
