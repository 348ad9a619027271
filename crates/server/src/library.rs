//! The `library` argument: which library one call works on, found once for every tool by the registry.
//!
//! A call without it works on the configured library exactly as before (no extra request). With it, the key's
//! access is read (`GET /keys/current`, and the groups listing when a group is named by its name), the library is
//! checked to be one the key can reach, and what the key may do there goes with the call: a write to a library the
//! key may only read is refused by [`crate::context::RequestContext::writer`] before anything is written, for every
//! tool alike.

use std::rc::Rc;

use async_trait::async_trait;
use zotero_mcp_core::platform::{KvError, KvListPage, KvStore, KvWrite};
use zotero_mcp_core::zotero::{LibraryId, LibraryKind, LibraryRights, ZoteroClient, ZoteroError};

/// A library other than the configured one, chosen for this call, with what the key may do in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SelectedLibrary {
    pub id: LibraryId,
    pub rights: LibraryRights,
}

/// Why the `library` argument names no library this call can use. Nothing was read or written from it.
#[derive(Debug, thiserror::Error)]
pub enum LibraryRefused {
    #[error("library must be a string such as users/123456 or groups/123456, or a group's name")]
    NotText,
    #[error(
        "the API key cannot reach library {library}: call zotero_list_libraries for the libraries it can, or give \
         the key access to that group at zotero.org/settings/keys"
    )]
    Unreachable { library: LibraryId },
    #[error(
        "no group of this key is called {name:?} (its groups: {known}); give the library as groups/<id>, or see \
         zotero_list_libraries"
    )]
    UnknownName { name: String, known: String },
    #[error("{count} groups of this key are called {name:?}; give the library as groups/<id> (zotero_list_libraries lists them)")]
    AmbiguousName { name: String, count: usize },
    #[error(
        "Zotero Desktop has no library {library} (its groups: {known}); a group appears there once Zotero has \
         synced it"
    )]
    NotOnDesktop { library: LibraryId, known: String },
    #[error(transparent)]
    Zotero(#[from] ZoteroError),
}

/// The library `given` names, checked against the key's access; `None` when it is the configured library
/// `default` (then nothing changes, and the configured library needs no check). `client` works on the configured
/// library.
pub async fn select(
    client: &ZoteroClient,
    default: Option<LibraryId>,
    given: &str,
) -> Result<Option<SelectedLibrary>, LibraryRefused> {
    let access = client.key_access().await?;
    let id = match LibraryId::parse(given) {
        Some(id) => id,
        None => by_name(client, access.user_id, given).await?,
    };
    let default = default.or(access.user_id.map(|id| LibraryId { kind: LibraryKind::User, id }));
    if Some(id) == default {
        return Ok(None);
    }
    let rights = access.rights(id);
    if !rights.library {
        return Err(LibraryRefused::Unreachable { library: id });
    }
    Ok(Some(SelectedLibrary { id, rights }))
}

/// The library `given` names on Zotero Desktop, among the desktop's own library and the groups it has synced
/// (`GET /api/users/0/groups`: the local API has no `/keys/current`); `None` for the personal library, which
/// any `users/<id>` names there. What may be written is what the local API takes (`writes`): a group the
/// person may not edit is refused by Zotero itself (403 "Write access denied").
pub async fn select_on_desktop(
    client: &ZoteroClient,
    given: &str,
    writes: bool,
) -> Result<Option<SelectedLibrary>, LibraryRefused> {
    let id = match LibraryId::parse(given) {
        Some(id) if id.kind == LibraryKind::User => return Ok(None),
        Some(id) => id,
        None => by_name(client, Some(0), given).await?,
    };
    let groups = client.groups(0).await?;
    if !groups.iter().any(|group| group.id == id.id) {
        let known: Vec<String> = groups.iter().take(20).map(|g| format!("{:?} (groups/{})", g.name, g.id)).collect();
        let known = if known.is_empty() { "none".to_owned() } else { known.join(", ") };
        return Err(LibraryRefused::NotOnDesktop { library: id, known });
    }
    Ok(Some(SelectedLibrary { id, rights: LibraryRights { library: true, write: writes, files: true } }))
}

/// A group of the key's user by its name (case and surrounding spaces ignored), when exactly one has it.
async fn by_name(client: &ZoteroClient, user: Option<u64>, name: &str) -> Result<LibraryId, LibraryRefused> {
    let groups = match user {
        Some(user) => client.groups(user).await?,
        None => Vec::new(),
    };
    let wanted = name.trim().to_lowercase();
    let matching: Vec<u64> = groups.iter().filter(|g| g.name.trim().to_lowercase() == wanted).map(|g| g.id).collect();
    match matching.as_slice() {
        [id] => Ok(LibraryId { kind: LibraryKind::Group, id: *id }),
        [] => {
            let known: Vec<String> =
                groups.iter().take(20).map(|g| format!("{:?} (groups/{})", g.name, g.id)).collect();
            let known = if known.is_empty() { "none".to_owned() } else { known.join(", ") };
            Err(LibraryRefused::UnknownName { name: name.chars().take(100).collect(), known })
        }
        many => Err(LibraryRefused::AmbiguousName { name: name.chars().take(100).collect(), count: many.len() }),
    }
}

/// `CACHE_KV` as a call on another library than the configured one sees it: every key under
/// `lib:<users|groups>/<id>:` (`lib:groups/100:text:…`), so extracted texts, cursors and anything else kept per
/// library never mix with the configured library's, whose keys stay exactly as they were (a deployment keeps its
/// cache and sync cursor). A call through Zotero Desktop's local API sees it under `lib:local/<users|groups>/<id>:`
/// whichever library it reads, the desktop's own included.
pub struct LibraryCache {
    inner: Rc<dyn KvStore>,
    prefix: String,
}

impl LibraryCache {
    pub fn new(inner: Rc<dyn KvStore>, library: LibraryId) -> Self {
        Self::under(inner, &library.path())
    }

    /// Every key under `lib:<namespace>:`: a library's path, or `local/<path>` for one read through Zotero
    /// Desktop's local API.
    pub fn under(inner: Rc<dyn KvStore>, namespace: &str) -> Self {
        Self { inner, prefix: format!("lib:{namespace}:") }
    }

    fn key(&self, key: &str) -> String {
        format!("{}{key}", self.prefix)
    }
}

#[async_trait(?Send)]
impl KvStore for LibraryCache {
    async fn get(&self, key: &str) -> Result<Option<String>, KvError> {
        self.inner.get(&self.key(key)).await
    }

    async fn get_many(&self, keys: &[&str]) -> Result<Vec<Option<String>>, KvError> {
        let scoped: Vec<String> = keys.iter().map(|key| self.key(key)).collect();
        self.inner.get_many(&scoped.iter().map(String::as_str).collect::<Vec<_>>()).await
    }

    async fn put(&self, key: &str, value: &str, lifetime: KvWrite) -> Result<(), KvError> {
        self.inner.put(&self.key(key), value, lifetime).await
    }

    async fn delete(&self, key: &str) -> Result<(), KvError> {
        self.inner.delete(&self.key(key)).await
    }

    async fn list(&self, prefix: &str, cursor: Option<&str>, limit: u32) -> Result<KvListPage, KvError> {
        let mut page = self.inner.list(&self.key(prefix), cursor, limit).await?;
        for key in &mut page.keys {
            key.name = key.name.strip_prefix(&self.prefix).unwrap_or(&key.name).to_owned();
        }
        Ok(page)
    }
}
