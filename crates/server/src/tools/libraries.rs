//! `zotero_list_libraries`: the libraries the API key can reach — its user's own and each group — with what the
//! key may do in each and where each keeps its files, named as every tool's `library` argument takes them.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use zotero_mcp_core::files::StoreKind;
use zotero_mcp_core::zotero::{LibraryId, LibraryKind};

use crate::context::RequestContext;
use crate::mcp::{Tool, ToolError, ToolSpec};

/// Arguments of `zotero_list_libraries` (none of its own).
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ListLibrariesInput {}

/// One library the key can reach.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LibraryOut {
    /// What the `library` argument takes: users/<id> or groups/<id>.
    pub library: String,
    /// `user` (the key's own library) or `group`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub name: String,
    /// How many items it holds, when Zotero says (groups).
    pub items: Option<u64>,
    /// Whether the key may change it.
    pub write: bool,
    /// Whether the key may read its files.
    pub files: bool,
    /// Where its files are: `WebDAV` or `Zotero Storage` (null when the settings are unusable).
    pub file_store: Option<&'static str>,
    /// The library a call works on without a `library` argument.
    pub default: bool,
    /// Whether zotero_semantic_search covers it (AI Search is bound, and it is the default library or named in
    /// INDEX_LIBRARIES).
    pub semantic_index: bool,
}

/// Result of `zotero_list_libraries`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListLibrariesOutput {
    pub libraries: Vec<LibraryOut>,
}

pub struct ListLibraries;

impl Tool for ListLibraries {
    type Input = ListLibrariesInput;
    type Output = ListLibrariesOutput;
    const SPEC: ToolSpec = ToolSpec::read(
        "zotero_list_libraries",
        "List libraries",
        "The personal library and each group the key reaches, whether it may write there and where the files are. \
         Every tool's `library` takes a listed `library` value (users/<id>, groups/<id>) or a group's name.",
    )
    .ask_for_less("nothing: no argument narrows it, and it holds one short line per library");

    fn render(output: &ListLibrariesOutput) -> String {
        let lines: Vec<String> = output
            .libraries
            .iter()
            .map(|l| {
                let mut facts = vec![if l.write { "read and write" } else { "read only" }.to_owned()];
                if let Some(items) = l.items {
                    facts.push(format!("{items} items"));
                }
                match (l.files, l.file_store) {
                    (true, Some(store)) => facts.push(format!("files on {store}")),
                    _ => facts.push("files not readable with this key".to_owned()),
                }
                if l.semantic_index {
                    facts.push("in the semantic index".to_owned());
                }
                if l.default {
                    facts.push("default".to_owned());
                }
                format!("- {} — `{}` ({})", l.name, l.library, facts.join(", "))
            })
            .collect();
        lines.join("\n")
    }

    async fn call(ctx: &RequestContext, _: ListLibrariesInput) -> Result<ListLibrariesOutput, ToolError> {
        let zotero = ctx.zotero()?;
        if ctx.on_desktop() {
            // Boxed where it is made, so the Worker's build (never on a desktop) links none of it.
            let listing: std::pin::Pin<Box<dyn std::future::Future<Output = _> + '_>> =
                Box::pin(on_desktop(ctx, zotero));
            return Ok(listing.await?);
        }
        let access = zotero.key_access().await?;
        let groups = match access.user_id {
            Some(user) => zotero.groups(user).await?,
            None => Vec::new(),
        };
        let default =
            ctx.services().configured_library().or(access.user_id.map(|id| LibraryId { kind: LibraryKind::User, id }));
        let store_of = |library: LibraryId| match library.kind {
            // WebDAV serves the personal library only; groups keep their files on Zotero Storage.
            LibraryKind::User => ctx.configured_store(),
            LibraryKind::Group => Some(StoreKind::ZoteroStorage),
        };
        let bound = matches!(ctx.semantic_index(), Ok(Some(_)));
        let also_indexed = ctx.services().indexed_libraries().unwrap_or_default();
        let entry = |library: LibraryId, name: String, items: Option<u64>| {
            let rights = access.rights(library);
            LibraryOut {
                library: library.path(),
                kind: match library.kind {
                    LibraryKind::User => "user",
                    LibraryKind::Group => "group",
                },
                name,
                items,
                write: rights.write,
                files: rights.files,
                file_store: store_of(library).map(StoreKind::name),
                default: Some(library) == default,
                semantic_index: bound && (Some(library) == default || also_indexed.contains(&library)),
            }
        };
        let mut libraries = Vec::new();
        // A key made for groups only has no `user` block: its user's library is not one it can reach.
        let user = access.user_id.map(|id| LibraryId { kind: LibraryKind::User, id });
        if let Some(user) = user.filter(|user| access.rights(*user).library).map(|user| user.id) {
            let name = match &access.username {
                Some(username) => format!("My Library ({username})"),
                None => "My Library".to_owned(),
            };
            libraries.push(entry(LibraryId { kind: LibraryKind::User, id: user }, name, None));
        }
        for group in groups {
            libraries.push(entry(LibraryId { kind: LibraryKind::Group, id: group.id }, group.name, group.items));
        }
        Ok(ListLibrariesOutput { libraries })
    }
}

/// The libraries of Zotero Desktop: its own (`users/0`) and the groups it has synced (the local API has no
/// `/keys/current`; what may be written is what the running Zotero takes).
async fn on_desktop(
    ctx: &RequestContext,
    zotero: &zotero_mcp_core::zotero::ZoteroClient,
) -> Result<ListLibrariesOutput, zotero_mcp_core::zotero::ZoteroError> {
    let write = ctx.may_write().is_ok();
    let entry = |library: LibraryId, name: String, items: Option<u64>| LibraryOut {
        library: library.path(),
        kind: match library.kind {
            LibraryKind::User => "user",
            LibraryKind::Group => "group",
        },
        name,
        items,
        write,
        files: true,
        file_store: Some(StoreKind::Desktop.name()),
        default: library.kind == LibraryKind::User,
        semantic_index: false,
    };
    let mut libraries =
        vec![entry(LibraryId { kind: LibraryKind::User, id: 0 }, "My Library (Zotero Desktop)".into(), None)];
    for group in zotero.groups(0).await? {
        libraries.push(entry(LibraryId { kind: LibraryKind::Group, id: group.id }, group.name, group.items));
    }
    Ok(ListLibrariesOutput { libraries })
}
