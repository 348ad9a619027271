//! `zotero_changes`: what changed in a library since a cursor, and a new cursor only when the answer is whole.
//!
//! An answer whose lists are cut at `limit` gives no cursor (a cursor there would skip whatever was cut) but a
//! continuation: the same `since`, the offset of the next part and the library version the first part read.
//! Every part reads the whole range again and lists its window of each list, in key order; the last part gives
//! the cursor. If the library moved between parts, the windows no longer line up, so that part starts over
//! from the first key (and says so): keys may come twice, none is skipped.
//!
//! A library version is one library's counter, so a cursor carries its library and a bare number is not taken.
//! The item space is read as Zotero partitions it: `/items/top`, `/items` (live items, children included) and
//! `/items/trash`, so a changed annotation or note (a child) and a move to the trash are seen, not only top-level
//! edits. A cursor is issued only when every read was whole and every read saw the same library version: a write
//! landing during the call would otherwise be skipped by the next call.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use zotero_mcp_core::zotero::{Deleted, Versions, ZoteroClient};

use crate::context::RequestContext;
use crate::mcp::{Tool, ToolError, ToolSpec};

/// A version past any library's, for a baseline: nothing is listed, and the reply still names the version.
const BASELINE_SINCE: u64 = i32::MAX as u64;

fn default_limit() -> u32 {
    50
}

/// Where changes are read from: a cursor or a continuation an earlier call returned.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Cursor {
    /// The library the version counts in (`users/<id>` or `groups/<id>`).
    #[validate(length(min = 1, max = 40))]
    pub library: String,
    pub version: u64,
    /// Only in a `continuation`: where the next part of a cut answer starts in each list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<u32>,
    /// Only in a `continuation`: the library version the earlier parts read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_version: Option<u64>,
}

impl Cursor {
    /// A cursor to resume from later: a version in a library, nothing of a part.
    fn resume(library: &str, version: u64) -> Self {
        Cursor { library: library.to_owned(), version, offset: None, at_version: None }
    }
}

// What to read.
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
    /// An earlier `cursor` or `continuation`; omitted: returns a cursor.
    pub since: Option<Cursor>,
    // What to read (default: all four).
    #[validate(length(min = 1, max = 4))]
    pub include: Option<Vec<ChangeKind>>,
    /// Keys listed per kind at most; `totals` has the counts.
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

/// What was removed for good. Present only when it was read: all empty means nothing was removed. Each list is
/// in key (or name) order and cut at `limit` like the others.
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
    /// Pass back as `since` next time. Absent when this answer must not be resumed from: its lists were cut at
    /// `limit` (see `continuation`), a write landed during the call (`libraryChanged`) or a read was not whole.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cursor: Option<Cursor>,
    /// When the lists were cut at `limit`: pass this back as `since` for the next part (the same range, from
    /// `offset`). The last part gives the `cursor`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub continuation: Option<Cursor>,
    /// Where in each list this part starts (0-based; absent for a first part).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offset: Option<u32>,
    /// The library's version moved while the call read it.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    #[schemars(default)]
    pub library_changed: bool,
    pub changed: ChangedOut,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deleted: Option<DeletedOut>,
    pub totals: Totals,
    /// Some list goes on past this part: `continuation` gives the rest.
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
        "What changed since a cursor: items, children, trash, collections, saved searches (key, version) and \
         deletions. Without `since` it gives a cursor; a cut answer gives a `continuation` for `since`. To search \
         by content, zotero_search.",
    )
    .ask_for_less("a smaller `limit`, or fewer kinds in `include`");

    fn render(output: &ChangesOutput) -> String {
        let mut lines = vec![match (output.from_version, output.offset) {
            (Some(from), Some(offset)) => {
                format!("Changes in {} since version {from}, from entry {} of each list", output.library, offset + 1)
            }
            (Some(from), None) => format!("Changes in {} since version {from}", output.library),
            (None, _) => format!("Baseline of {}: nothing listed", output.library),
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
        let as_json = |cursor: &Cursor| serde_json::to_string(cursor).unwrap_or_default();
        match (&output.cursor, &output.continuation) {
            (Some(cursor), _) => lines.push(format!("\nNext time pass since: {}", as_json(cursor))),
            (None, Some(next)) => lines.push(format!(
                "\nCut at `limit`: more changes follow (see totals). For the next part pass since: {}\nThe cursor \
                 for next time comes with the last part.",
                as_json(next)
            )),
            (None, None) => lines.push("\nNo cursor: do not continue from this answer; call again.".into()),
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
        let refuse = ToolError::InvalidArguments;
        if let Some(cursor) = &input.since {
            if cursor.library.trim().trim_matches('/') != library {
                return Err(refuse(format!(
                    "the cursor is for library {} but this call reads {library}: a version counts in one library \
                     only; pass `library` {} with it, or start from a baseline (no `since`)",
                    cursor.library, cursor.library
                )));
            }
            if cursor.offset.is_some() != cursor.at_version.is_some() {
                return Err(refuse(
                    "`since` has only one of `offset` and `atVersion`: a continuation carries both; pass back the \
                     `continuation` (or the `cursor`) of an earlier answer as it was"
                        .into(),
                ));
            }
        }
        let include = input.include.clone().unwrap_or_else(|| {
            vec![ChangeKind::Items, ChangeKind::Collections, ChangeKind::SavedSearches, ChangeKind::Deleted]
        });
        let wants = |kind: ChangeKind| include.contains(&kind);
        let since = input.since.as_ref().map_or(BASELINE_SINCE, |cursor| cursor.version);
        let mut reads = Reads::default();
        let mut found = Found::default();
        if wants(ChangeKind::Items) {
            // One after the other: a change between two of them shows as versions that differ.
            let all = reads.take(zotero, "/items", since).await?;
            let top = reads.take(zotero, "/items/top", since).await?;
            let trash = reads.take(zotero, "/items/trash", since).await?;
            found.child_items =
                Some(all.versions.into_iter().filter(|(key, _)| !top.versions.contains_key(key)).collect::<Vec<_>>());
            found.items = Some(top.versions.into_iter().collect());
            found.trashed_items = Some(trash.versions.into_iter().collect());
        }
        if wants(ChangeKind::Collections) {
            found.collections = Some(reads.take(zotero, "/collections", since).await?.versions.into_iter().collect());
        }
        if wants(ChangeKind::SavedSearches) {
            found.saved_searches = Some(reads.take(zotero, "/searches", since).await?.versions.into_iter().collect());
        }
        let mut unserved = None;
        if wants(ChangeKind::Deleted) {
            match zotero.deleted(since).await {
                Ok(deleted) => {
                    reads.saw(deleted.library_version);
                    found.deleted = Some(deleted);
                }
                // Some Zotero Desktop builds serve no /deleted: removals cannot be seen, which is not "none".
                Err(error) if !ctx.caps().deletions && error.status() == Some(404) => {
                    unserved = Some(
                        "This Zotero Desktop serves no list of deletions (its local API has no /deleted), so \
                         `deleted` is absent: removals in this range cannot be seen from here, which does not mean \
                         there were none.",
                    );
                }
                Err(error) => return Err(error.into()),
            }
        }

        // Which part this is. A continuation whose first part read another library version starts over: the
        // lists it was cut from have changed, so its offset no longer points past what was listed.
        let continued = input.since.as_ref().and_then(|cursor| cursor.offset.zip(cursor.at_version));
        let mut notes: Vec<String> = Vec::new();
        let offset = match (continued, reads.version) {
            (Some((offset, at)), Some(now)) if at == now => offset,
            (Some((_, at)), now) => {
                notes.push(format!(
                    "The library changed since the earlier parts of this answer were read (version {at}, now {}): \
                     this part lists from the first entry again, so keys listed before may come again; none is \
                     skipped.",
                    now.map_or_else(|| "unknown".to_owned(), |v| v.to_string())
                ));
                0
            }
            (None, _) => 0,
        };
        let window = Window { offset: offset as usize, limit: input.limit as usize };
        let (changed, deleted, totals, truncated) = found.cut(window);

        let version = reads.version;
        let (cursor, continuation) = match (reads.moved, reads.whole, truncated, version) {
            (false, true, false, Some(version)) => (Some(Cursor::resume(&library, version)), None),
            (false, true, true, Some(version)) => (
                None,
                Some(Cursor {
                    library: library.clone(),
                    version: since,
                    offset: Some(offset.saturating_add(input.limit)),
                    at_version: Some(version),
                }),
            ),
            _ => (None, None),
        };
        if reads.moved {
            notes
                .push("The library changed while it was read: call again (with the same `since`) for a cursor.".into());
        } else if !reads.whole {
            notes.push(
                "Zotero did not send a whole listing (it counted more than it sent): call again (with the same \
                 `since`) for a cursor."
                    .into(),
            );
        }
        notes.extend(unserved.map(str::to_owned));
        Ok(ChangesOutput {
            library,
            from_version: input.since.map(|cursor| cursor.version),
            cursor,
            continuation,
            offset: (offset > 0).then_some(offset),
            library_changed: reads.moved,
            changed,
            deleted,
            totals,
            truncated,
            note: (!notes.is_empty()).then(|| notes.join(" ")),
        })
    }
}

/// What the reads found, whole, before any list is cut.
#[derive(Default)]
struct Found {
    items: Option<Vec<(String, u64)>>,
    child_items: Option<Vec<(String, u64)>>,
    trashed_items: Option<Vec<(String, u64)>>,
    collections: Option<Vec<(String, u64)>>,
    saved_searches: Option<Vec<(String, u64)>>,
    deleted: Option<Deleted>,
}

/// The part of every list one answer shows: `limit` entries from `offset`.
#[derive(Clone, Copy)]
struct Window {
    offset: usize,
    limit: usize,
}

impl Window {
    /// This window of `all` (already in key order), and whether entries follow it.
    fn of<T>(self, all: Vec<T>, more: &mut bool) -> Vec<T> {
        *more |= all.len() > self.offset.saturating_add(self.limit);
        all.into_iter().skip(self.offset).take(self.limit).collect()
    }
}

impl Found {
    /// The window of every list, the true counts, and whether any list goes on past the window.
    fn cut(self, window: Window) -> (ChangedOut, Option<DeletedOut>, Totals, bool) {
        let mut more = false;
        let count = |list: &Option<Vec<(String, u64)>>| list.as_ref().map(Vec::len);
        let totals = Totals {
            items: count(&self.items),
            child_items: count(&self.child_items),
            trashed_items: count(&self.trashed_items),
            collections: count(&self.collections),
            saved_searches: count(&self.saved_searches),
            deleted: self
                .deleted
                .as_ref()
                .map(|d| d.items.len() + d.collections.len() + d.searches.len() + d.tags.len()),
        };
        let mut list = |all: Option<Vec<(String, u64)>>| {
            all.map(|all| {
                window.of(all, &mut more).into_iter().map(|(key, version)| Changed { key, version }).collect()
            })
        };
        let changed = ChangedOut {
            items: list(self.items),
            child_items: list(self.child_items),
            trashed_items: list(self.trashed_items),
            collections: list(self.collections),
            saved_searches: list(self.saved_searches),
        };
        // Zotero lists deletions in no stated order: sorted, so that parts cut from them line up.
        let mut names = |mut all: Vec<String>| {
            zotero_mcp_core::sort::sort(&mut all);
            window.of(all, &mut more)
        };
        let deleted = self.deleted.map(|deleted| DeletedOut {
            items: names(deleted.items),
            collections: names(deleted.collections),
            saved_searches: names(deleted.searches),
            tags: names(deleted.tags),
        });
        (changed, deleted, totals, more)
    }
}

/// What the reads of one call saw: the library version (and whether it moved), and whether each was whole.
struct Reads {
    version: Option<u64>,
    moved: bool,
    whole: bool,
}

impl Default for Reads {
    fn default() -> Self {
        Self { version: None, moved: false, whole: true }
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
