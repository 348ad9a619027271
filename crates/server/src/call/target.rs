//! What one call works on, resolved once before its tool runs: the library, the route to it (the Web API or
//! Zotero Desktop's local API), the Zotero client over that route, the file store, the cache prefix, what the
//! route can do, and whether the call may write there. Nothing here changes after [`Target::resolve`]; the
//! clients that cost a request to make (Zotero Storage's, which needs the library's id) are made on first use.

use std::cell::OnceCell;
use std::rc::Rc;

use zotero_mcp_core::desktop::Desktop;
use zotero_mcp_core::files::{FileStore, FileWriter, StoreKind};
use zotero_mcp_core::index::{IndexScope, SemanticIndex};
use zotero_mcp_core::platform::KvStore;
use zotero_mcp_core::webdav::{WebDavError, WebDavPolicy, WebDavWriter};
use zotero_mcp_core::write_gate::WriteGate;
use zotero_mcp_core::zotero::local::{DesktopInfo, LocalApiAccess, LocalCall};
use zotero_mcp_core::zotero::{
    Capabilities, LibraryId, LibraryKind, ZoteroClient, ZoteroError, ZoteroSettings, ZoteroWriter,
};
use zotero_mcp_core::zotero_storage::{StoragePolicy, ZoteroStorageWriter};

use super::{FilesUnavailable, WriterRefused};
use super::{Plan, Services};
use crate::config::{FileStoreSetting, IndexSetupError, ToolGroup};
use crate::grant::{Grant, Scope};
use crate::library::{self, LibraryCache, LibraryRefused, SelectedLibrary};

/// Why a call's target could not be resolved. Nothing was written.
#[derive(Debug, thiserror::Error)]
pub enum Unresolved {
    /// Zotero Desktop does not answer (not running, local API off), said before the tool runs.
    #[error(transparent)]
    Desktop(ZoteroError),
    /// The call's `library` names no library it can use.
    #[error(transparent)]
    Library(#[from] LibraryRefused),
}

/// How a call reaches the library. On Zotero Desktop it is decided from what the running Zotero is (probed once
/// for the process) and the settings, so every writer the call is handed follows it: no tool decides where its
/// writes go, or whether they may.
#[derive(Debug, Clone)]
enum Route {
    /// The Web API: the server's usual route, and on Zotero Desktop the route of a call that may write when the
    /// running Zotero takes no writes and a Web API key is set (the versions it writes with are then ones it
    /// read there: local versions are the desktop database's own counters).
    WebApi,
    /// Zotero Desktop's local API; writes too, unless `read_only` says why not.
    Desktop { info: DesktopInfo, read_only: Option<String> },
}

/// Why a write on this target would be refused, decided once ([`Target::may_write`] words it for the tool).
#[derive(Debug, Clone)]
enum WriteBlock {
    Scope,
    Off,
    ReadOnlyLibrary(LibraryId),
    ReadOnlyDesktop(String),
}

/// What one call works on (see the module's documentation).
pub struct Target {
    services: Rc<Services>,
    tool: &'static str,
    /// The library the call's `library` argument chose; `None`: the configured one.
    library: Option<SelectedLibrary>,
    route: Route,
    /// The Zotero client over the route; `None` when the settings cannot make one ([`Self::zotero`] says why).
    zotero: Option<ZoteroWriter>,
    writes: Result<(), WriteBlock>,
    /// The call's dialogs and writes on Zotero Desktop, shared by its local clients.
    local_call: Rc<LocalCall>,
    /// The id the call's undo journal entry takes: files replaced or removed on WebDAV are kept under it.
    journal_id: String,
    /// Where the call's writes wait for its journal to record them ([`crate::context::RequestContext::journaled`]).
    gate: WriteGate,
    webdav: OnceCell<Option<WebDavWriter>>,
    zotero_storage: OnceCell<ZoteroStorageWriter>,
    library_cache: OnceCell<LibraryCache>,
    semantic: OnceCell<Option<SemanticIndex>>,
}

impl Target {
    /// Resolves `plan` for `grant`: the route first (it decides which client chooses the library), then the
    /// library, then the clients, made for that library. Costs a request only when the call names a library
    /// (the key's access is read) or the server runs on Zotero Desktop and has not probed it yet.
    pub async fn resolve(
        services: Rc<Services>,
        grant: &Grant,
        plan: &Plan,
        journal_id: String,
    ) -> Result<Self, Unresolved> {
        let config = services.config();
        let route = match config.desktop() {
            Some(desktop) => {
                let info = desktop.zotero().await.map_err(Unresolved::Desktop)?;
                desktop_route(info, plan.may_write(), config.zotero_api_key.is_some())
            }
            None => Route::WebApi,
        };
        let mut target = Self {
            services: services.clone(),
            tool: plan.tool,
            library: None,
            route,
            zotero: None,
            writes: Ok(()),
            local_call: Rc::default(),
            journal_id,
            gate: WriteGate::default(),
            webdav: OnceCell::new(),
            zotero_storage: OnceCell::new(),
            library_cache: OnceCell::new(),
            semantic: OnceCell::new(),
        };
        if let Some(given) = plan.library.as_deref() {
            target.library = target.select(given).await?;
        }
        target.zotero = target.make_client().ok().map(|writer| writer.gated(target.gate.clone()));
        target.writes = target.write_block(grant).map_or(Ok(()), Err);
        Ok(target)
    }

    /// The library `given` names, checked against what the route can reach; `None` for the configured one.
    async fn select(&self, given: &str) -> Result<Option<SelectedLibrary>, LibraryRefused> {
        if let (Some(desktop), true) = (self.services.config().desktop(), self.on_desktop()) {
            let personal = self.desktop_client(desktop.as_ref(), LibraryId { kind: LibraryKind::User, id: 0 });
            let writes = matches!(self.route, Route::Desktop { read_only: None, .. });
            // Boxed where it is made, so a build without a desktop links none of it (see `on_desktop`).
            let selecting: std::pin::Pin<Box<dyn std::future::Future<Output = _> + '_>> =
                Box::pin(library::select_on_desktop(&personal, given, writes));
            return selecting.await;
        }
        let (http, clock) = (self.services.platform().http.clone(), self.services.platform().clock.clone());
        let configured = ZoteroClient::new(self.services.config().zotero_settings(), http, clock)
            .map_err(|error| self.services.with_setup_hint(error))?;
        library::select(&configured, self.services.configured_library(), given).await
    }

    fn write_block(&self, grant: &Grant) -> Option<WriteBlock> {
        if !grant.allows(Scope::Write) {
            return Some(WriteBlock::Scope);
        }
        if !self.services.config().tool_groups.contains(ToolGroup::Write) {
            return Some(WriteBlock::Off);
        }
        if let Route::Desktop { read_only: Some(reason), .. } = &self.route {
            return Some(WriteBlock::ReadOnlyDesktop(reason.clone()));
        }
        match self.library {
            Some(selected) if !selected.rights.write => Some(WriteBlock::ReadOnlyLibrary(selected.id)),
            _ => None,
        }
    }

    /// The grant's write scope, and write access to the call's library, or why not, naming the tool.
    pub fn may_write(&self) -> Result<(), WriterRefused> {
        let tool = self.tool;
        match &self.writes {
            Ok(()) => Ok(()),
            Err(WriteBlock::Scope) => Err(WriterRefused::ScopeMissing { tool }),
            Err(WriteBlock::Off) => Err(WriterRefused::WritesOff { tool }),
            Err(WriteBlock::ReadOnlyLibrary(library)) => {
                Err(WriterRefused::ReadOnlyLibrary { library: *library, tool })
            }
            Err(WriteBlock::ReadOnlyDesktop(reason)) => {
                Err(WriterRefused::ReadOnlyDesktop { tool, reason: reason.clone() })
            }
        }
    }

    /// The grant's write scope and the deployment's writes, without the library's own rights: for a tool that
    /// hands out something of the library (a feed link) rather than changing it, which a library the key may
    /// only read does not refuse.
    pub fn may_hand_out(&self) -> Result<(), WriterRefused> {
        match &self.writes {
            Err(WriteBlock::Scope | WriteBlock::Off) => self.may_write(),
            _ => Ok(()),
        }
    }

    /// The tool (or resource, prompt, job) the call runs.
    pub fn tool(&self) -> &'static str {
        self.tool
    }

    pub fn services(&self) -> &Rc<Services> {
        &self.services
    }

    /// The library chosen for this call, when it is not the configured one.
    pub fn selected_library(&self) -> Option<SelectedLibrary> {
        self.library
    }

    /// Whether this call reads Zotero Desktop's local API (not the Web API). Asks the settings first, which
    /// say "no" for certain in a build without a desktop (the Worker's), so its desktop branches fold away.
    pub fn on_desktop(&self) -> bool {
        self.services.config().desktop().is_some() && matches!(self.route, Route::Desktop { .. })
    }

    /// What the call's route can do (a list of deletions, annotations among children…), for the tools whose
    /// work differs by it: they read this instead of asking which server it is.
    pub fn caps(&self) -> Capabilities {
        self.zotero.as_ref().map_or(Capabilities::WEB_API, |zotero| zotero.caps())
    }

    /// The call's Zotero client (reading and writing: the context hands out the writing half).
    pub fn zotero(&self) -> Result<&ZoteroWriter, ZoteroError> {
        match &self.zotero {
            Some(client) => Ok(client),
            // The settings made no client: made again for the error, which says what to set.
            None => Err(self.make_client().err().unwrap_or_else(|| ZoteroError::Config("no Zotero client".into()))),
        }
    }

    fn make_client(&self) -> Result<ZoteroWriter, ZoteroError> {
        if let (Some(desktop), true) = (self.services.config().desktop(), self.on_desktop()) {
            // The desktop's own library is users/0 whoever is signed in to it.
            let library = self.library.map_or(LibraryId { kind: LibraryKind::User, id: 0 }, |s| s.id);
            return Ok(self.desktop_client(desktop.as_ref(), library));
        }
        let (http, clock) = (self.services.platform().http.clone(), self.services.platform().clock.clone());
        ZoteroWriter::new(self.zotero_settings(), http, clock).map_err(|error| self.services.with_setup_hint(error))
    }

    /// The client's settings: the configured library's, or the one chosen for this call.
    fn zotero_settings(&self) -> ZoteroSettings {
        let mut settings = self.services.config().zotero_settings();
        if let Some(selected) = self.library {
            settings.library_kind = selected.id.kind;
            settings.library_id = Some(selected.id.id.to_string());
        }
        settings
    }

    /// The route and library this call works on, naming what is kept about it outside Zotero (the undo journal,
    /// the questions asked before a write): `users/<id>` or `groups/<id>` through the Web API, `local/users/0` or
    /// `local/groups/<id>` through Zotero Desktop's local API. The two count versions apart, so what one route
    /// recorded must never be applied through the other. Costs a request only when the configured user
    /// library's id is not set and nothing else in the call has asked for it yet (the key names it).
    pub async fn route(&self) -> Result<String, ZoteroError> {
        let library = self.zotero()?.library_prefix().await?.trim_start_matches('/');
        Ok(if self.on_desktop() { format!("local/{library}") } else { library.to_owned() })
    }

    /// The library's file store, for reading: on Zotero Desktop its data directory whichever route the call's
    /// writes take; else WebDAV or Zotero Storage as the settings say (a group's files are on Zotero Storage).
    pub async fn files(&self) -> Result<&dyn FileStore, FilesUnavailable> {
        if let Some(desktop) = self.services.config().desktop() {
            let personal = self.library.is_none_or(|selected| selected.id.kind == LibraryKind::User);
            return Ok(desktop.files(personal));
        }
        Ok(match self.webdav()? {
            Some(webdav) => &**webdav as &dyn FileStore,
            None => &**self.zotero_storage().await? as &dyn FileStore,
        })
    }

    /// The store files are written to: WebDAV's writer, or Zotero Storage's (on Zotero Desktop, its local API's
    /// upload, so Zotero itself puts the file in its storage and records its hash and time).
    pub async fn file_store_writer(&self) -> Result<FileWriter<'_>, FilesUnavailable> {
        if let (Some(desktop), true) = (self.services.config().desktop(), self.on_desktop()) {
            return Ok(FileWriter::ZoteroStorage(self.desktop_storage(desktop.as_ref()).await?));
        }
        Ok(match self.webdav()? {
            Some(webdav) => FileWriter::WebDav(webdav),
            None => FileWriter::ZoteroStorage(self.zotero_storage().await?),
        })
    }

    /// The WebDAV writer when the call's library keeps its files there (for putting back kept files and
    /// forgetting them); `None` for Zotero Storage and on Zotero Desktop.
    pub fn webdav_store(&self) -> Option<&WebDavWriter> {
        if self.on_desktop() {
            return None;
        }
        self.webdav().ok().flatten()
    }

    /// Where the configured library keeps its files, from the settings alone (no request); `None` when they are
    /// unusable (what [`Self::files`] would then say).
    pub fn configured_store(&self) -> Option<StoreKind> {
        let config = self.services.config();
        if config.desktop().is_some() {
            return Some(StoreKind::Desktop);
        }
        Some(match config.file_store().ok()? {
            FileStoreSetting::WebDav(_) => StoreKind::WebDav,
            FileStoreSetting::ZoteroStorage => StoreKind::ZoteroStorage,
        })
    }

    /// WebDAV's client when the files are there, `None` for Zotero Storage, or why neither can be used. A group's
    /// files are on Zotero Storage whatever the settings: WebDAV serves the personal library only.
    fn webdav(&self) -> Result<Option<&WebDavWriter>, FilesUnavailable> {
        if self.library.is_some_and(|selected| selected.id.kind == LibraryKind::Group) {
            return Ok(None);
        }
        let config = self.services.config();
        let FileStoreSetting::WebDav(settings) = config.file_store()? else {
            return Ok(None);
        };
        if let Some(client) = self.webdav.get() {
            return Ok(client.as_ref());
        }
        let platform = self.services.platform();
        let writer =
            WebDavWriter::new(settings, platform.http.clone(), platform.clock.clone(), WebDavPolicy::default())
                .map_err(|error: WebDavError| FilesUnavailable::from(error))?;
        // Files replaced or removed are kept beside them for the undo journal, as long as it keeps entries.
        let writer = match config.journal_days {
            0 => writer,
            _ => writer.keeping_for(&self.journal_id),
        }
        .gated(self.gate.clone());
        Ok(self.webdav.get_or_init(|| Some(writer)).as_ref())
    }

    /// The Zotero Storage client: the library must be known first (a user library's id may come from the key).
    async fn zotero_storage(&self) -> Result<&ZoteroStorageWriter, FilesUnavailable> {
        if let Some(storage) = self.zotero_storage.get() {
            return Ok(storage);
        }
        let library = self.zotero()?.library_prefix().await?.to_owned();
        let platform = self.services.platform();
        let storage = ZoteroStorageWriter::new(
            &self.zotero_settings(),
            &library,
            platform.http.clone(),
            platform.clock.clone(),
            StoragePolicy::default(),
        )?
        .gated(self.gate.clone());
        Ok(self.zotero_storage.get_or_init(|| storage))
    }

    /// Zotero Desktop's file writer for the call's library: the three steps of a Zotero Storage upload, sent to
    /// its local API.
    async fn desktop_storage(&self, desktop: &dyn Desktop) -> Result<&ZoteroStorageWriter, FilesUnavailable> {
        if let Some(storage) = self.zotero_storage.get() {
            return Ok(storage);
        }
        let library = self.zotero()?.library_prefix().await?.to_owned();
        let platform = self.services.platform();
        let storage =
            desktop.storage(&library, self.desktop_access(desktop), platform.http.clone(), platform.clock.clone())?;
        Ok(self.zotero_storage.get_or_init(|| storage.gated(self.gate.clone())))
    }

    /// A client of Zotero Desktop's local API for `library`, naming the instance first probed.
    fn desktop_client(&self, desktop: &dyn Desktop, library: LibraryId) -> ZoteroWriter {
        let platform = self.services.platform();
        let (http, clock) = (platform.http.clone(), platform.clock.clone());
        desktop.client(library, self.desktop_access(desktop), http, clock)
    }

    /// How this call's requests to Zotero Desktop name it: the instance first probed, and the process's key.
    fn desktop_access(&self, desktop: &dyn Desktop) -> LocalApiAccess {
        let server_id = match &self.route {
            Route::Desktop { info, .. } => info.server_id.clone(),
            Route::WebApi => None,
        };
        LocalApiAccess { server_id, key: desktop.key(), call: self.local_call.clone() }
    }

    /// What this call did on Zotero Desktop's local API (dialogs, writes, a Deny).
    pub fn local_call(&self) -> &LocalCall {
        &self.local_call
    }

    /// The cache of extracted texts and other derived data (`CACHE_KV`). Nothing in it is the library's. A call
    /// on another library than the configured one sees it under that library's prefix ([`LibraryCache`]); a call
    /// through Zotero Desktop's local API under `lib:local/<library>:`, since its versions (which the reference
    /// check's snapshot and the sync cursors count by) are the desktop database's own. Only the configured
    /// library through the Web API keeps the unprefixed keys, which are the TypeScript server's.
    pub fn cache(&self) -> &dyn KvStore {
        let kv = &self.services.platform().cache_kv;
        match self.cache_namespace() {
            Some(namespace) => self.library_cache.get_or_init(|| LibraryCache::under(kv.clone(), &namespace)),
            None => kv.as_ref(),
        }
    }

    /// The prefix of [`Self::cache`]'s keys (without `lib:`), `None` for the TypeScript server's layout.
    fn cache_namespace(&self) -> Option<String> {
        let selected = self.library.map(|selected| selected.id);
        if self.on_desktop() {
            let library = selected.unwrap_or(LibraryId { kind: LibraryKind::User, id: 0 });
            return Some(format!("local/{library}"));
        }
        selected.map(|id| id.path())
    }

    /// The library's AI Search index — the chosen library's documents in it ([`IndexScope`]): `Ok(None)` when
    /// the deployment binds no AI Search (semantic search is off), an error naming the setting when
    /// `AI_SEARCH_INSTANCE` or `INDEX_LIBRARIES` is unusable.
    pub fn semantic_index(&self) -> Result<Option<&SemanticIndex>, IndexSetupError> {
        if let Some(index) = self.semantic.get() {
            return Ok(index.as_ref());
        }
        let index = match &self.services.platform().ai_search {
            None => None,
            Some(service) => {
                let scope = match self.library {
                    Some(selected) => IndexScope::library(selected.id),
                    None => {
                        let configured = self.services.configured_library();
                        let others: Vec<LibraryId> = self
                            .services
                            .indexed_libraries()?
                            .iter()
                            .copied()
                            .filter(|id| Some(*id) != configured)
                            .collect();
                        IndexScope::default_library(&others)
                    }
                };
                Some(SemanticIndex::scoped(service.clone(), self.services.config().index.clone()?, scope))
            }
        };
        Ok(self.semantic.get_or_init(|| index).as_ref())
    }
}

/// The route of a call to the running Zotero `info`, given whether the call may write and a Web API key is set.
fn desktop_route(info: DesktopInfo, may_write: bool, web_api_key: bool) -> Route {
    if info.accepts_writes() {
        Route::Desktop { info, read_only: None }
    } else if may_write && web_api_key {
        Route::WebApi
    } else {
        let reason = format!(
            "{} takes no writes on its local API (Zotero 10 and later do), and no ZOTERO_API_KEY is set for the \
             Web API. Update Zotero Desktop, or set ZOTERO_API_KEY to a key with write access \
             (zotero.org/settings/keys): changes then go through the Web API and reach this Zotero when it syncs",
            info.describe()
        );
        Route::Desktop { info, read_only: Some(reason) }
    }
}

impl Target {
    /// What the call's file writers logged (files replaced, removed or created), taken for its journal entry.
    /// Where the call's writes wait for its journal.
    pub(crate) fn gate(&self) -> &WriteGate {
        &self.gate
    }

    /// The files changed so far, left recorded (for a step of the journal kept while the call runs).
    pub(crate) fn files_so_far(&self) -> Vec<zotero_mcp_core::file_changes::FileChange> {
        let mut files = self.webdav.get().and_then(Option::as_ref).map(|dav| dav.log().snapshot()).unwrap_or_default();
        files.extend(self.zotero_storage.get().map(|storage| storage.log().snapshot()).unwrap_or_default());
        files
    }

    /// How many file changes are recorded so far.
    pub(crate) fn files_logged(&self) -> usize {
        self.webdav.get().and_then(Option::as_ref).map_or(0, |dav| dav.log().len())
            + self.zotero_storage.get().map_or(0, |storage| storage.log().len())
    }

    pub(crate) fn logged_files(&self) -> Vec<zotero_mcp_core::file_changes::FileChange> {
        let mut files = self.webdav.get().and_then(Option::as_ref).map(|dav| dav.log().take()).unwrap_or_default();
        files.extend(self.zotero_storage.get().map(|storage| storage.log().take()).unwrap_or_default());
        files
    }
}
