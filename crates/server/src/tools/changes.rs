//! `zotero_changes`: what changed in a library since a cursor, and a new cursor only when the answer is whole.
//!
//! A library version is one library's counter, so a cursor carries its library and a bare number is not taken.
//! The item space is read as Zotero partitions it: `/items/top`, `/items` (live items, children included) and
//! `/items/trash`, so a changed annotation or note (a child) and a move to the trash are seen, not only top-level
//! edits. A cursor is issued only when every read was whole and every read saw the same library version: a write
//! landing during the call would otherwise be skipped by the next call.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use zotero_mcp_core::zotero::{Versions, ZoteroClient};

use crate::context::RequestContext;
use crate::mcp::{Tool, ToolError, ToolSpec};

/// A version past any library's, for a baseline: nothing is listed, and the reply still names the version.
const BASELINE_SINCE: u64 = i32::MAX as u64;

fn default_limit() -> u32 {
    50
}

/// Where changes are read from: a cursor an earlier call returned.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Cursor {
    /// The library the version counts in (`users/<id>` or `groups/<id>`).
    #[validate(length(min = 1, max = 40))]
    pub library: String,
    pub version: u64,
}

/// What to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ChangeKind {
    /// Top-level items, child items (notes, attachments, annotations) and trashed items.
    Items,
    Collections,
    SavedSearches,
    /// Keys removed for good (items, collections, saved searches) and tags removed.
    Deleted,
}

/// Arguments of `zotero_changes`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ChangesInput {
    /// The `cursor` of an earlier answer, passed back as it was. Omitted: a baseline that lists nothing and
    /// returns the cursor to start from. A bare version number is not taken: it means nothing without its
    /// library.
    pub since: Option<Cursor>,
    /// What to read (default: all four).
    #[validate(length(min = 1, max = 4))]
    pub include: Option<Vec<ChangeKind>>,
    /// The most keys listed per kind; `totals` gives the true counts.
    #[validate(range(min = 1, max = 500))]
    #[serde(default = "default_limit")]
    #[schemars(default = "default_limit")]
    pub limit: u32,
}

/// An object and its version.
#[derive(Debug, Clone, Serialize, JsonSchema, PartialEq)]
pub struct Changed {
    pub key: String,
    pub version: u64,
}

/// The changed objects, per kind read.
#[derive(Debug, Default, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChangedOut {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub items: Option<Vec<Changed>>,
    /// Notes, attachments and annotations (below a top-level item).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub child_items: Option<Vec<Changed>>,
    /// Items moved to (or changed in) the trash.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trashed_items: Option<Vec<Changed>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub collections: Option<Vec<Changed>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub saved_searches: Option<Vec<Changed>>,
}

/// What was removed for good. Present only when it was read: all empty means nothing was removed.
#[derive(Debug, Default, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeletedOut {
    pub items: Vec<String>,
    pub collections: Vec<String>,
    pub saved_searches: Vec<String>,
    /// Tag names.
    pub tags: Vec<String>,
}

/// How many changed per kind, before `limit` cut the lists. A count is there only for a kind that was read.
#[derive(Debug, Default, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Totals {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub items: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub child_items: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trashed_items: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub collections: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub saved_searches: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deleted: Option<usize>,
}

/// Result of `zotero_changes`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChangesOutput {
    /// The library read (`users/<id>` or `groups/<id>`).
    pub library: String,
    /// The version changes are listed since (absent for a baseline).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from_version: Option<u64>,
    /// Pass back as `since` next time. Absent when this answer must not be continued from: a write landed
    /// during the call (`libraryChanged`) or a read was not whole.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cursor: Option<Cursor>,
    /// The library's version moved while the call read it.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    #[schemars(default)]
    pub library_changed: bool,
    pub changed: ChangedOut,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deleted: Option<DeletedOut>,
    pub totals: Totals,
    /// Some list was cut at `limit`.
    pub truncated: bool,
    /// Why there is no cursor, or what else to know.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

pub struct Changes;

impl Tool for Changes {
    type Input = ChangesInput;
    type Output = ChangesOutput;
    const SPEC: ToolSpec = ToolSpec::read(
        "zotero_changes",
        "What changed in the library since a cursor",
        "Lists what changed in the library since a cursor: top-level items, child items (notes, attachments, \
         annotations), trashed items, collections and saved searches by key and version, and what was deleted. \
         Call it first without `since` for a cursor, then pass that cursor back later. A cursor is returned only \
         when the answer is whole and the library did not change while it was read.",
    )
    .ask_for_less("a smaller `limit`, or fewer kinds in `include`");

    fn render(output: &ChangesOutput) -> String {
        let mut lines = vec![match output.from_version {
            Some(from) => format!("Changes in {} since version {from}", output.library),
            None => format!("Baseline of {}: nothing listed", output.library),
        }];
        let kinds = [
            ("items", &output.changed.items),
            ("child items", &output.changed.child_items),
            ("trashed items", &output.changed.trashed_items),
            ("collections", &output.changed.collections),
            ("saved searches", &output.changed.saved_searches),
        ];
        for (name, list) in kinds {
            if let Some(list) = list.as_ref().filter(|l| !l.is_empty()) {
                let keys: Vec<String> = list.iter().map(|c| format!("{} (v{})", c.key, c.version)).collect();
                lines.push(format!("- {name}: {}", keys.join(", ")));
            }
        }
        if let Some(deleted) = &output.deleted {
            let all = [&deleted.items, &deleted.collections, &deleted.saved_searches, &deleted.tags];
            if all.iter().all(|list| list.is_empty()) {
                lines.push("- deleted: nothing".into());
            } else {
                lines.push(format!(
                    "- deleted: items [{}], collections [{}], saved searches [{}], tags [{}]",
                    deleted.items.join(", "),
                    deleted.collections.join(", "),
                    deleted.saved_searches.join(", "),
                    deleted.tags.join(", ")
                ));
            }
        }
        match &output.cursor {
            Some(cursor) => lines.push(format!(
                "\nNext time pass since: {{\"library\": \"{}\", \"version\": {}}}",
                cursor.library, cursor.version
            )),
            None => lines.push("\nNo cursor: do not continue from this answer; call again.".into()),
        }
        if let Some(note) = &output.note {
            lines.push(format!("> {note}"));
        }
        lines.join("\n")
    }

    async fn call(ctx: &RequestContext, input: ChangesInput) -> Result<ChangesOutput, ToolError> {
        let zotero = ctx.zotero()?;
        let library = match ctx.selected_library() {
            Some(selected) => selected.id.path(),
            None => zotero.library_prefix().await?.trim_start_matches('/').to_owned(),
        };
        if let Some(cursor) = &input.since {
            if cursor.library.trim().trim_matches('/') != library {
                return Err(ToolError::InvalidArguments {
                    tool: "zotero_changes".into(),
                    problem: format!(
                        "the cursor is for library {} but this call reads {library}: a version counts in one \
                         library only; pass `library` {} with it, or start from a baseline (no `since`)",
                        cursor.library, cursor.library
                    ),
                });
            }
        }
        let include = input.include.clone().unwrap_or_else(|| {
            vec![ChangeKind::Items, ChangeKind::Collections, ChangeKind::SavedSearches, ChangeKind::Deleted]
        });
        let wants = |kind: ChangeKind| include.contains(&kind);
        let since = input.since.as_ref().map_or(BASELINE_SINCE, |cursor| cursor.version);
        let limit = input.limit as usize;
        let mut reads = Reads::default();
        let mut changed = ChangedOut::default();
        let mut totals = Totals::default();
        if wants(ChangeKind::Items) {
            // One after the other: a change between two of them shows as versions that differ.
            let all = reads.take(zotero, "/items", since).await?;
            let top = reads.take(zotero, "/items/top", since).await?;
            let trash = reads.take(zotero, "/items/trash", since).await?;
            let children: Vec<(String, u64)> =
                all.versions.iter().filter(|(key, _)| !top.versions.contains_key(*key)).map(pair).collect();
            totals.items = Some(top.versions.len());
            totals.child_items = Some(children.len());
            totals.trashed_items = Some(trash.versions.len());
            changed.items = Some(listed(top.versions.iter().map(pair), limit, &mut reads.truncated));
            changed.child_items = Some(listed(children.into_iter(), limit, &mut reads.truncated));
            changed.trashed_items = Some(listed(trash.versions.iter().map(pair), limit, &mut reads.truncated));
        }
        if wants(ChangeKind::Collections) {
            let collections = reads.take(zotero, "/collections", since).await?;
            totals.collections = Some(collections.versions.len());
            changed.collections = Some(listed(collections.versions.iter().map(pair), limit, &mut reads.truncated));
        }
        if wants(ChangeKind::SavedSearches) {
            let searches = reads.take(zotero, "/searches", since).await?;
            totals.saved_searches = Some(searches.versions.len());
            changed.saved_searches = Some(listed(searches.versions.iter().map(pair), limit, &mut reads.truncated));
        }
        let mut unserved = None;
        let deleted = match wants(ChangeKind::Deleted) {
            true => 'deleted: {
                let deleted = match zotero.deleted(since).await {
                    Ok(deleted) => deleted,
                    // Some Zotero Desktop builds serve no /deleted: removals cannot be seen, which is not "none".
                    Err(error) if zotero.is_desktop() && error.status() == Some(404) => {
                        unserved = Some(
                            "This Zotero Desktop serves no list of deletions (its local API has no /deleted), so \
                             `deleted` is absent: removals in this range cannot be seen from here, which does not \
                             mean there were none.",
                        );
                        break 'deleted None;
                    }
                    Err(error) => return Err(error.into()),
                };
                reads.saw(deleted.library_version);
                totals.deleted =
                    Some(deleted.items.len() + deleted.collections.len() + deleted.searches.len() + deleted.tags.len());
                Some(DeletedOut {
                    items: deleted.items,
                    collections: deleted.collections,
                    saved_searches: deleted.searches,
                    tags: deleted.tags,
                })
            }
            false => None,
        };
        let version = reads.version;
        let (cursor, note) = match (reads.moved, reads.whole) {
            (false, true) => (version.map(|version| Cursor { library: library.clone(), version }), None),
            (true, _) => (
                None,
                Some("The library changed while it was read: call again (from the same `since`) for a cursor.".into()),
            ),
            (false, false) => (
                None,
                Some("Zotero did not send a whole listing: call again (from the same `since`) for a cursor.".into()),
            ),
        };
        let note = match (note, unserved) {
            (Some(note), Some(unserved)) => Some(format!("{note} {unserved}")),
            (note, unserved) => note.or(unserved.map(str::to_owned)),
        };
        Ok(ChangesOutput {
            library,
            from_version: input.since.map(|cursor| cursor.version),
            cursor,
            library_changed: reads.moved,
            changed,
            deleted,
            totals,
            truncated: reads.truncated,
            note,
        })
    }
}

/// What the reads of one call saw: the library version (and whether it moved), and whether each was whole.
struct Reads {
    version: Option<u64>,
    moved: bool,
    whole: bool,
    truncated: bool,
}

impl Default for Reads {
    fn default() -> Self {
        Self { version: None, moved: false, whole: true, truncated: false }
    }
}

impl Reads {
    async fn take(&mut self, zotero: &ZoteroClient, rest: &str, since: u64) -> Result<Versions, ToolError> {
        let (versions, whole) = zotero.versions_of(rest, since).await?;
        self.whole &= whole;
        self.saw(versions.library_version);
        Ok(versions)
    }

    fn saw(&mut self, version: u64) {
        match self.version {
            Some(seen) if seen != version => self.moved = true,
            _ => self.version = Some(version),
        }
    }
}

fn pair((key, version): (&String, &u64)) -> (String, u64) {
    (key.clone(), *version)
}

/// The first `limit` of `all` (in key order), noting when some were left out.
fn listed(all: impl Iterator<Item = (String, u64)>, limit: usize, truncated: &mut bool) -> Vec<Changed> {
    let mut out = Vec::new();
    for (key, version) in all {
        if out.len() == limit {
            *truncated = true;
            break;
        }
        out.push(Changed { key, version });
    }
    out
}
