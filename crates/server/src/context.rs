//! Everything one MCP request may use, built fresh for each request and dropped with it.
//!
//! The context is also where the write scope becomes a matter of types: [`RequestContext::zotero`] hands out a
//! [`ZoteroClient`], which can only read, and the one way to a [`ZoteroWriter`] is [`RequestContext::writer`],
//! which refuses a grant without `zotero:write`. A tool that writes without asking cannot compile.

use std::cell::{Cell, OnceCell, RefCell};
use std::rc::Rc;

use async_trait::async_trait;
use zotero_mcp_core::desktop::Desktop;
use zotero_mcp_core::files::{FileStore, FileWriter, StoreKind};
use zotero_mcp_core::index::{IndexScope, SemanticIndex, SyncOptions};
use zotero_mcp_core::net::{self, Download, DownloadError, DownloadPolicy};
use zotero_mcp_core::platform::{Clock, HttpClient, HttpError, HttpRequest, HttpResponse, KvStore};
use zotero_mcp_core::sources::{self, Identifier, Reference, ResolveError};
use zotero_mcp_core::webdav::{WebDavError, WebDavPolicy, WebDavWriter};
use zotero_mcp_core::zotero::local::{DesktopInfo, LocalApiAccess, LocalCall};
use zotero_mcp_core::zotero::{
    LibraryId, LibraryKind, ObjectKey, ZoteroClient, ZoteroError, ZoteroSettings, ZoteroWriter,
};
use zotero_mcp_core::zotero_storage::{StoragePolicy, ZoteroStorageError, ZoteroStorageWriter};

use crate::config::{Config, FileStorageError, FileStoreSetting, IndexSetupError, SetupHint, ToolGroup, ToolView};
use crate::confirm::{Asking, Plan, Questions, Unconfirmed};
use crate::grant::{Grant, Scope};
use crate::journal::{self, Entry, Journal};
use crate::library::{self, LibraryCache, LibraryRefused, SelectedLibrary};
use crate::platform::Platform;

/// Why [`RequestContext::writer`] gave no writer. Nothing was sent to Zotero in either case.
#[derive(Debug, thiserror::Error)]
pub enum WriterRefused {
    /// The grant lacks `zotero:write`.
    #[error("`{tool}` needs the zotero:write scope, which this connection lacks")]
    ScopeMissing { tool: &'static str },
    /// The deployment offers no writes: `TOOL_GROUPS` leaves out `write`.
    #[error("`{tool}` changes the library, but this server is read-only (TOOL_GROUPS leaves out `write`)")]
    WritesOff { tool: &'static str },
    /// The call's `library` is one the API key may only read.
    #[error(
        "the API key may only read library {library}, so `{tool}` wrote nothing there. Give the key write access \
         to the group at zotero.org/settings/keys (and, in the group's settings, editing rights to its user)"
    )]
    ReadOnlyLibrary { library: LibraryId, tool: &'static str },
    /// The server runs on Zotero Desktop, and neither it nor the Web API takes this call's writes.
    #[error("`{tool}` wrote nothing: {reason}")]
    ReadOnlyDesktop { tool: &'static str, reason: String },
    /// The Zotero settings are incomplete (no key, a group without an id…).
    #[error(transparent)]
    Zotero(#[from] ZoteroError),
    /// The file store cannot be used (`FILE_STORAGE` or `WEBDAV_URL` unusable, the key's library not found…).
    #[error(transparent)]
    Files(#[from] FilesUnavailable),
    /// The tool declared this call one to confirm ([`RequestContext::expect_confirmation`]) but asked for a
    /// writer before [`RequestContext::confirm`] passed: a bug, stopped before anything was sent.
    #[error(
        "`{tool}` asks the person before this change, but was about to write without asking; nothing was \
         changed. This is a bug in the server: please report it"
    )]
    Unconfirmed { tool: &'static str },
}

/// Why [`RequestContext::confirm`] did not let a write go ahead. Nothing was sent to Zotero.
#[derive(Debug, thiserror::Error)]
pub enum NotConfirmed {
    /// The write would be refused anyway (no write scope, a read-only library): nobody is asked.
    #[error(transparent)]
    Writer(#[from] WriterRefused),
    /// The person is to be asked, said no, or the answer does not hold.
    #[error(transparent)]
    Unconfirmed(#[from] Unconfirmed),
}

/// Why the library's file store could not be set up for this request.
#[derive(Debug, thiserror::Error)]
pub enum FilesUnavailable {
    #[error(transparent)]
    Setting(#[from] FileStorageError),
    #[error(transparent)]
    WebDav(#[from] WebDavError),
    #[error(transparent)]
    Zotero(#[from] ZoteroError),
    #[error(transparent)]
    ZoteroStorage(#[from] ZoteroStorageError),
}

/// The per-request context handed to every tool, resource and prompt handler.
pub struct RequestContext {
    /// Who is calling and with which scopes.
    pub grant: Grant,
    /// The deployment's configuration. Private: it holds the Zotero API key and the passwords, which no handler
    /// needs; handlers get what they use through narrow accessors (the clients below, [`Self::sync_options`]).
    config: Rc<Config>,
    /// The runtime services (HTTP, KV, clock). Private: a handler that could reach the HTTP seam could build
    /// its own Zotero writer and step around the scope check.
    platform: Platform,
    /// The library chosen by the call's `library` argument ([`Self::select_library`]); unset: the configured one.
    library: OnceCell<SelectedLibrary>,
    /// Made on first use, so requests that never touch Zotero (listings, prompts) never need a key.
    zotero: OnceCell<ZoteroWriter>,
    /// The WebDAV client, made on first use; `None` inside when WebDAV is not configured.
    webdav: OnceCell<Option<WebDavWriter>>,
    /// The Zotero Storage client, made on first use, once the library is known. Its writing half is handed out
    /// only with the write scope ([`Self::file_writer`]).
    zotero_storage: OnceCell<ZoteroStorageWriter>,
    /// `CACHE_KV` under the chosen library's prefix, when one is chosen ([`Self::cache`]).
    library_cache: OnceCell<LibraryCache>,
    /// The AI Search index, made on first use; `None` inside when the deployment binds no AI Search.
    semantic: OnceCell<Option<SemanticIndex>>,
    /// The tool being run, for the wording of a refusal.
    tool: Cell<&'static str>,
    /// Whether a writer was handed out: from then on the result reports a change that was (or may have been)
    /// made, so it is sent whatever its size.
    writer_taken: Cell<bool>,
    /// Outbound requests sent so far by this request, of every client ([`Self::requests_sent`]).
    sent: Rc<Cell<usize>>,
    /// This call's undo journal entry id, made on first need ([`Self::journal_id`]).
    journal_id: OnceCell<String>,
    /// The entry this call undoes, when it is `zotero_undo` ([`Self::undoing`]).
    undoes: RefCell<Option<String>>,
    /// What the client said about asking the person ([`Self::set_asking`]); the default asks nobody.
    asking: RefCell<Asking>,
    /// This call is one its tool confirms first ([`Self::expect_confirmation`]): no writer until it is.
    confirmation_expected: Cell<bool>,
    /// [`Self::confirm`] let the write go ahead.
    confirmed: Cell<bool>,
    /// How this call reaches Zotero Desktop, when the server runs on it ([`Self::reach_desktop`]).
    desktop_route: OnceCell<DesktopRoute>,
    /// What this call did on Zotero Desktop's local API (dialogs, writes, a Deny), shared by its clients.
    local_call: Rc<LocalCall>,
}

/// How one call reaches the library when the server runs on Zotero Desktop. Decided from what the running
/// Zotero is (probed once for the process) and the settings, before the tool runs, so every writer the call
/// is handed follows it: no tool decides where its writes go, or whether they may.
#[derive(Debug, Clone)]
#[cfg_attr(not(any(test, feature = "desktop")), allow(dead_code))]
enum DesktopRoute {
    /// Everything through the local API; writes too, unless `read_only` says why not.
    Local { info: DesktopInfo, read_only: Option<String> },
    /// The call may write, the running Zotero takes no writes on its local API, and a Web API key is set: the
    /// whole call goes through the Web API, so the versions it writes with are ones it read there (local
    /// versions are the desktop database's own counters, and mean nothing to api.zotero.org).
    WebApi,
}

/// The platform's HTTP client, counting what it sends: a Worker invocation may make only so many subrequests,
/// and a tool that plans a long job ([`RequestContext::requests_sent`]) stops before the runtime stops it.
struct CountedHttp {
    inner: Rc<dyn HttpClient>,
    sent: Rc<Cell<usize>>,
}

#[async_trait(?Send)]
impl HttpClient for CountedHttp {
    async fn send(&self, request: HttpRequest) -> Result<HttpResponse, HttpError> {
        self.sent.set(self.sent.get() + 1);
        self.inner.send(request).await
    }
    async fn send_limited(&self, request: HttpRequest, limit: usize) -> Result<HttpResponse, HttpError> {
        self.sent.set(self.sent.get() + 1);
        self.inner.send_limited(request, limit).await
    }
    async fn send_public_limited(&self, request: HttpRequest, limit: usize) -> Result<HttpResponse, HttpError> {
        self.sent.set(self.sent.get() + 1);
        self.inner.send_public_limited(request, limit).await
    }
    fn public_only(&self) -> bool {
        self.inner.public_only()
    }
}

impl RequestContext {
    pub fn new(grant: Grant, config: Rc<Config>, mut platform: Platform) -> Self {
        let sent = Rc::new(Cell::new(0));
        platform.http = Rc::new(CountedHttp { inner: platform.http, sent: sent.clone() });
        Self {
            grant,
            config,
            platform,
            library: OnceCell::new(),
            zotero: OnceCell::new(),
            webdav: OnceCell::new(),
            zotero_storage: OnceCell::new(),
            library_cache: OnceCell::new(),
            semantic: OnceCell::new(),
            tool: Cell::new(""),
            writer_taken: Cell::new(false),
            sent,
            journal_id: OnceCell::new(),
            undoes: RefCell::new(None),
            asking: RefCell::new(Asking::default()),
            confirmation_expected: Cell::new(false),
            confirmed: Cell::new(false),
            desktop_route: OnceCell::new(),
            local_call: Rc::default(),
        }
    }

    /// Settles how this call reaches Zotero Desktop, when the server runs on it: the registry calls this before
    /// every tool, with whether the tool may write. Fails, before anything else is sent, when Zotero does not
    /// answer (not running, local API off), with what to do.
    pub async fn reach_desktop(&self, may_write: bool) -> Result<(), ZoteroError> {
        // Compiled out of the Worker, which never runs on a desktop: an async branch stays linked even when it
        // cannot run (the state machine keeps every state), and so would everything it calls.
        #[cfg(any(test, feature = "desktop"))]
        if let (Some(desktop), None) = (self.config.desktop(), self.desktop_route.get()) {
            let info = desktop.zotero().await?;
            let _ = self.desktop_route.set(self.desktop_route_for(info, may_write));
        }
        #[cfg(not(any(test, feature = "desktop")))]
        let _ = may_write;
        Ok(())
    }

    /// The route of a call to the running Zotero `info`, given whether the call may write.
    #[cfg(any(test, feature = "desktop"))]
    fn desktop_route_for(&self, info: DesktopInfo, may_write: bool) -> DesktopRoute {
        if info.accepts_writes() {
            DesktopRoute::Local { info, read_only: None }
        } else if may_write && self.config.zotero_api_key.is_some() {
            DesktopRoute::WebApi
        } else {
            let reason = format!(
                "{} takes no writes on its local API (Zotero 10 and later do), and no ZOTERO_API_KEY is set for \
                 the Web API. Update Zotero Desktop, or set ZOTERO_API_KEY to a key with write access \
                 (zotero.org/settings/keys): changes then go through the Web API and reach this Zotero when it \
                 syncs",
                info.describe()
            );
            DesktopRoute::Local { info, read_only: Some(reason) }
        }
    }

    /// Whether this call reads Zotero Desktop's local API (not the Web API).
    pub fn on_desktop(&self) -> bool {
        self.config.desktop().is_some() && !matches!(self.desktop_route.get(), Some(DesktopRoute::WebApi))
    }

    /// How many outbound requests (Zotero, the file store, registries, downloads) this request has sent.
    pub fn requests_sent(&self) -> usize {
        self.sent.get()
    }

    /// Works on the library `given` names (`users/<id>`, `groups/<id>` or a group's name) for the rest of this
    /// request, once the key's access says it may: the registry calls this for a call's `library` argument before
    /// the tool runs. The configured library changes nothing. Must come before any client is made.
    pub async fn select_library(&self, given: &str) -> Result<(), LibraryRefused> {
        #[cfg(any(test, feature = "desktop"))]
        if let (Some(desktop), true) = (self.config.desktop(), self.on_desktop()) {
            let personal = self.desktop_client(desktop.as_ref(), LibraryId { kind: LibraryKind::User, id: 0 });
            if let Some(selected) = library::select_on_desktop(&personal, given, self.desktop_writes()).await? {
                // Before any client: they are made for the library chosen here.
                let _ = self.library.set(selected);
            }
            return Ok(());
        }
        let configured =
            ZoteroClient::new(self.config.zotero_settings(), self.platform.http.clone(), self.platform.clock.clone())
                .map_err(|error| with_setup_hint(error, self.config.setup))?;
        if let Some(selected) = library::select(&configured, self.config.configured_library(), given).await? {
            // Before any client: they are made for the library chosen here.
            let _ = self.library.set(selected);
        }
        Ok(())
    }

    /// The library chosen for this call, when it is not the configured one.
    pub fn selected_library(&self) -> Option<SelectedLibrary> {
        self.library.get().copied()
    }

    /// The Zotero client for this request, for reading: one per request, so its limiter, backoff gate and
    /// library lookup are shared by everything the request does.
    /// `work`'s result, computed off the request thread where the runtime has another (natively: the blocking
    /// pool, so other clients and `/health` are answered meanwhile) and inline in a Worker. `work` owns its
    /// inputs. `None` when it did not finish (it panicked).
    pub async fn off_thread<T: Send + 'static>(&self, work: impl FnOnce() -> T + Send + 'static) -> Option<T> {
        #[cfg(not(target_arch = "wasm32"))]
        {
            zotero_mcp_core::platform::run_cpu(self.platform.offload.as_deref(), work).await
        }
        #[cfg(target_arch = "wasm32")]
        {
            Some(work())
        }
    }

    /// The platform's Unicode decomposition, for folding words (`zotero_retrieve`).
    pub fn decompose(&self) -> zotero_mcp_core::platform::Decompose {
        self.platform.decompose
    }

    pub fn zotero(&self) -> Result<&ZoteroClient, ZoteroError> {
        Ok(self.client()?)
    }

    /// The Zotero client for changing the library, or [`WriterRefused::ScopeMissing`] (before anything is
    /// sent) when the grant lacks `zotero:write`. Tools whose every call writes are refused earlier, by the
    /// registry; tools that write for some actions call this at the start of each such action.
    pub fn writer(&self) -> Result<&ZoteroWriter, WriterRefused> {
        self.may_write()?;
        self.check_confirmed()?;
        let writer = self.client()?;
        self.writer_taken.set(true);
        Ok(writer)
    }

    /// The library's file store, for reading attachment files: WebDAV when `WEBDAV_URL` is set, else Zotero
    /// Storage, unless `FILE_STORAGE` names one (`webdav`, `zotero`). Always a store when `Ok` (the `Option` is
    /// the readers' "no store", kept for callers without one).
    pub async fn files(&self) -> Result<Option<&dyn FileStore>, FilesUnavailable> {
        if let Some(desktop) = self.config.desktop() {
            // On Zotero Desktop every file is on this disk, whichever route the call's writes take.
            let personal = self.library.get().is_none_or(|selected| selected.id.kind == LibraryKind::User);
            return Ok(Some(desktop.files(personal)));
        }
        Ok(Some(match self.chosen_store()? {
            Some(webdav) => &**webdav as &dyn FileStore,
            None => &**self.zotero_storage().await? as &dyn FileStore,
        }))
    }

    /// The same store as [`Self::files`], for changing files, or [`WriterRefused::ScopeMissing`] (before
    /// anything is sent) when the grant lacks `zotero:write`: uploads, renames and deletes are library changes
    /// like any other.
    pub async fn file_writer(&self) -> Result<FileWriter<'_>, WriterRefused> {
        self.may_write()?;
        self.check_confirmed()?;
        #[cfg(any(test, feature = "desktop"))]
        if let (Some(desktop), true) = (self.config.desktop(), self.on_desktop()) {
            // Through the local API's own upload: Zotero itself puts the file in storage/<KEY>/ and records its
            // hash and time, as for a file dragged onto the item. Nothing is written into its data directory
            // behind its back.
            let storage = self.desktop_storage(desktop.as_ref()).await?;
            self.writer_taken.set(true);
            return Ok(FileWriter::ZoteroStorage(storage));
        }
        self.writer_taken.set(true);
        Ok(match self.chosen_store()? {
            Some(webdav) => FileWriter::WebDav(webdav),
            None => FileWriter::ZoteroStorage(self.zotero_storage().await?),
        })
    }

    /// Where the configured library keeps its files, from the settings alone (no request); `None` when they are
    /// unusable (what [`Self::files`] would then say).
    pub fn configured_store(&self) -> Option<StoreKind> {
        if self.config.desktop().is_some() {
            return Some(StoreKind::Desktop);
        }
        Some(match self.config.file_store().ok()? {
            FileStoreSetting::WebDav(_) => StoreKind::WebDav,
            FileStoreSetting::ZoteroStorage => StoreKind::ZoteroStorage,
        })
    }

    /// The configured library, when its id is configured (a user library's may be found from the key instead).
    pub fn configured_library(&self) -> Option<LibraryId> {
        self.config.configured_library()
    }

    /// The grant's write scope, and write access to the call's library: for a tool that checks before it reads
    /// what it will change (nothing is handed out).
    pub fn may_write(&self) -> Result<(), WriterRefused> {
        if !self.grant.allows(Scope::Write) {
            return Err(WriterRefused::ScopeMissing { tool: self.tool.get() });
        }
        if !self.config.tool_groups.contains(ToolGroup::Write) {
            return Err(WriterRefused::WritesOff { tool: self.tool.get() });
        }
        if self.config.desktop().is_some() {
            match self.desktop_route.get() {
                Some(DesktopRoute::Local { read_only: Some(reason), .. }) => {
                    return Err(WriterRefused::ReadOnlyDesktop { tool: self.tool.get(), reason: reason.clone() });
                }
                Some(_) => {}
                None => {
                    return Err(WriterRefused::ReadOnlyDesktop {
                        tool: self.tool.get(),
                        reason: "Zotero Desktop was not reached before this write (a bug in the server: please \
                                 report it)"
                            .into(),
                    })
                }
            }
        }
        match self.library.get() {
            Some(selected) if !selected.rights.write => {
                Err(WriterRefused::ReadOnlyLibrary { library: selected.id, tool: self.tool.get() })
            }
            _ => Ok(()),
        }
    }

    /// What the client said about asking the person, read by the MCP layer from a `tools/call`.
    pub fn set_asking(&self, asking: Asking) {
        *self.asking.borrow_mut() = asking;
    }

    /// Marks this call as one its tool confirms before writing (the registry calls this when
    /// `Tool::needs_confirmation` says so): from now on [`Self::writer`] and [`Self::file_writer`] refuse until
    /// [`Self::confirm`] has passed.
    pub fn expect_confirmation(&self) {
        self.confirmation_expected.set(true);
    }

    /// Lets the destructive write `plan` describes go ahead, or says why not. Refused first when the write would
    /// be anyway (no one is asked to allow what cannot be done). Then the write goes ahead without a question
    /// when the plan is not one to ask about, when `CONFIRM_WRITES` is off, or when the client cannot show a
    /// form (its tools' own dry runs are the guard there); otherwise only on the person's yes to this very call
    /// and summary, given through the protocol (`crate::confirm`).
    pub async fn confirm(&self, plan: Plan) -> Result<(), NotConfirmed> {
        self.may_write()?;
        let asking = self.asking.borrow().clone();
        if plan.ask && self.config.confirm_writes && asking.can_ask {
            // A question asked on one route is answered on that route only.
            let route = self.route().await.map_err(WriterRefused::from)?;
            let questions = Questions {
                kv: self.platform.cache_kv.as_ref(),
                counters: self.platform.counters.as_ref(),
                user: &self.grant.user_id,
                route: &route,
                now_ms: self.platform.clock.now_ms(),
            };
            questions.decide(self.tool.get(), &asking, &plan).await?;
        }
        self.confirmed.set(true);
        Ok(())
    }

    /// A client of Zotero Desktop's local API for `library`, naming the instance first probed.
    fn desktop_client(&self, desktop: &dyn Desktop, library: LibraryId) -> ZoteroWriter {
        let (http, clock) = (self.platform.http.clone(), self.platform.clock.clone());
        ZoteroWriter::for_desktop(desktop.api_base(), library, self.desktop_access(desktop), http, clock)
    }

    /// How this call's requests to Zotero Desktop name it: the instance first probed, and the process's key.
    fn desktop_access(&self, desktop: &dyn Desktop) -> LocalApiAccess {
        let server_id = match self.desktop_route.get() {
            Some(DesktopRoute::Local { info, .. }) => info.server_id.clone(),
            _ => None,
        };
        LocalApiAccess { server_id, key: desktop.key(), call: self.local_call.clone() }
    }

    /// Zotero Desktop's file writer for the call's library: the three steps of a Zotero Storage upload, sent to
    /// its local API.
    #[cfg(any(test, feature = "desktop"))]
    async fn desktop_storage(&self, desktop: &dyn Desktop) -> Result<&ZoteroStorageWriter, FilesUnavailable> {
        if let Some(storage) = self.zotero_storage.get() {
            return Ok(storage);
        }
        let library = self.client()?.library_prefix().await?.to_owned();
        let access = self.desktop_access(desktop);
        let (http, clock) = (self.platform.http.clone(), self.platform.clock.clone());
        let storage = ZoteroStorageWriter::for_desktop(
            desktop.api_base(),
            &library,
            access,
            http,
            clock,
            StoragePolicy::default(),
        )?;
        Ok(self.zotero_storage.get_or_init(|| storage))
    }

    /// Whether the local API takes this call's writes (for the rights of a library chosen on the desktop).
    #[cfg(any(test, feature = "desktop"))]
    fn desktop_writes(&self) -> bool {
        matches!(self.desktop_route.get(), Some(DesktopRoute::Local { read_only: None, .. }))
    }

    fn check_confirmed(&self) -> Result<(), WriterRefused> {
        if self.confirmation_expected.get() && !self.confirmed.get() {
            return Err(WriterRefused::Unconfirmed { tool: self.tool.get() });
        }
        Ok(())
    }

    /// WebDAV's client when the files are there, `None` for Zotero Storage, or why neither can be used. A group's
    /// files are on Zotero Storage whatever the settings: WebDAV serves the personal library only.
    fn chosen_store(&self) -> Result<Option<&WebDavWriter>, FilesUnavailable> {
        if self.library.get().is_some_and(|selected| selected.id.kind == LibraryKind::Group) {
            return Ok(None);
        }
        match self.config.file_store()? {
            FileStoreSetting::WebDav(_) => Ok(self.webdav_client()?),
            FileStoreSetting::ZoteroStorage => Ok(None),
        }
    }

    /// The Zotero Storage client: the library must be known first (a user library's id may come from the key).
    async fn zotero_storage(&self) -> Result<&ZoteroStorageWriter, FilesUnavailable> {
        if let Some(storage) = self.zotero_storage.get() {
            return Ok(storage);
        }
        let library = self.client()?.library_prefix().await?.to_owned();
        let storage = ZoteroStorageWriter::new(
            &self.zotero_settings(),
            &library,
            self.platform.http.clone(),
            self.platform.clock.clone(),
            StoragePolicy::default(),
        )?;
        Ok(self.zotero_storage.get_or_init(|| storage))
    }

    /// The library's AI Search index — the chosen library's documents in it ([`IndexScope`]): `Ok(None)` when
    /// the deployment binds no AI Search (semantic search is off), an error naming the setting when
    /// `AI_SEARCH_INSTANCE` or `INDEX_LIBRARIES` is unusable. Searching and syncing only: the
    /// index holds derived data, so writing to it needs no scope.
    pub fn semantic_index(&self) -> Result<Option<&SemanticIndex>, IndexSetupError> {
        if let Some(index) = self.semantic.get() {
            return Ok(index.as_ref());
        }
        let index = match &self.platform.ai_search {
            None => None,
            Some(service) => {
                let scope = match self.library.get() {
                    Some(selected) => IndexScope::library(selected.id),
                    None => {
                        let configured = self.config.configured_library();
                        let others: Vec<LibraryId> =
                            self.indexed_libraries()?.iter().copied().filter(|id| Some(*id) != configured).collect();
                        IndexScope::default_library(&others)
                    }
                };
                Some(SemanticIndex::scoped(service.clone(), self.config.index.clone()?, scope))
            }
        };
        Ok(self.semantic.get_or_init(|| index).as_ref())
    }

    /// The libraries besides the configured one that the semantic index holds (`INDEX_LIBRARIES`), or why the
    /// setting is unusable.
    pub fn indexed_libraries(&self) -> Result<&[LibraryId], IndexSetupError> {
        self.config.index_libraries.as_deref().map_err(Clone::clone)
    }

    /// Forgets the sync cursors of every indexed library (the configured one's and those under `lib:<path>:`),
    /// so each starts a full cycle: for an instance that was just created. A failed delete only costs that
    /// library a full cycle it would have needed anyway.
    pub async fn forget_index_cursors(&self, instance: &str) {
        let cursor = zotero_mcp_core::index::sync::state_key(instance);
        let texts = zotero_mcp_core::index::sync::texts_key(instance);
        let kv = &self.platform.cache_kv;
        for key in [&cursor, &texts] {
            let _ = kv.delete(key).await;
        }
        let configured = self.config.configured_library();
        for library in self.indexed_libraries().unwrap_or_default().iter().filter(|id| Some(**id) != configured) {
            for key in [&cursor, &texts] {
                let _ = kv.delete(&format!("lib:{library}:{key}")).await;
            }
        }
    }

    /// The options of an index sync run with this deployment's settings (`SYNC_BATCH_LIMIT`,
    /// `SYNC_SUBREQUEST_BUDGET`, `INDEX_FULL_TEXT`); `limit` replaces the batch size when given.
    pub fn sync_options(&self, full: bool, limit: Option<usize>) -> SyncOptions {
        SyncOptions {
            full,
            limit: limit.unwrap_or(self.config.sync_batch_limit),
            subrequest_budget: self.config.sync_subrequest_budget,
            full_text: self.config.index_full_text,
        }
    }

    /// The clock (for file times).
    pub fn clock(&self) -> &dyn Clock {
        self.platform.clock.as_ref()
    }

    /// Downloads a file from a URL the caller chose, through the SSRF guard (`zotero_mcp_core::net`): public
    /// https hosts only, at most 40 MiB. The platform's HTTP client itself is not handed out, so that nothing
    /// can build a Zotero or WebDAV writer past the scope checks above.
    pub async fn download(&self, url: &str) -> Result<Download, DownloadError> {
        let policy =
            DownloadPolicy { allow_loopback_http: self.config.allow_loopback_source_urls, ..DownloadPolicy::default() };
        net::download(self.platform.http.as_ref(), self.platform.clock.as_ref(), url, &policy).await
    }

    /// Looks an identifier up in the source that holds it (CrossRef, DataCite, arXiv, Open Library, PubMed), as
    /// configured by `CONTACT_EMAIL`. A DOI's open-access PDF is a separate question ([`Self::open_access_pdf`]),
    /// asked only for items that are created.
    pub async fn resolve_reference(&self, id: &Identifier) -> Result<Reference, ResolveError> {
        let (http, clock) = (self.platform.http.as_ref(), self.platform.clock.as_ref());
        sources::resolve(http, clock, id, &self.config.sources).await
    }

    /// CrossRef's best candidates for a reference as written (`query.bibliographic`), with their scores.
    pub async fn bibliographic_candidates(
        &self,
        reference: &str,
        rows: usize,
    ) -> Result<Vec<(Reference, f64)>, ResolveError> {
        let (http, clock) = (self.platform.http.as_ref(), self.platform.clock.as_ref());
        sources::bibliographic_candidates(http, clock, reference, rows, &self.config.sources).await
    }

    /// The PDF OpenAlex names as the best open-access copy of the work with this DOI; `None` for none, and for
    /// any failure.
    pub async fn open_access_pdf(&self, doi: &str) -> Option<String> {
        let (http, clock) = (self.platform.http.as_ref(), self.platform.clock.as_ref());
        sources::open_access_pdf(http, clock, doi, &self.config.sources).await
    }

    /// The cache of extracted texts and other derived data (`CACHE_KV`). Nothing in it is the library's. A call
    /// on another library than the configured one sees it under that library's prefix ([`LibraryCache`]); a call
    /// through Zotero Desktop's local API under `lib:local/<library>:`, since its versions (which the reference
    /// check's snapshot and the sync cursors count by) are the desktop database's own. Only the configured
    /// library through the Web API keeps the unprefixed keys, which are the TypeScript server's.
    pub fn cache(&self) -> &dyn KvStore {
        match self.cache_namespace() {
            Some(namespace) => {
                self.library_cache.get_or_init(|| LibraryCache::under(self.platform.cache_kv.clone(), &namespace))
            }
            None => self.platform.cache_kv.as_ref(),
        }
    }

    /// The prefix of [`Self::cache`]'s keys (without `lib:`), `None` for the TypeScript server's layout.
    fn cache_namespace(&self) -> Option<String> {
        let selected = self.library.get().map(|selected| selected.id);
        if self.on_desktop() {
            let library = selected.unwrap_or(LibraryId { kind: LibraryKind::User, id: 0 });
            return Some(format!("local/{library}"));
        }
        selected.map(|id| id.path())
    }

    fn webdav_client(&self) -> Result<Option<&WebDavWriter>, WebDavError> {
        if let Some(client) = self.webdav.get() {
            return Ok(client.as_ref());
        }
        let client = match &self.config.webdav {
            Some(settings) => {
                let writer = WebDavWriter::new(
                    settings,
                    self.platform.http.clone(),
                    self.platform.clock.clone(),
                    WebDavPolicy::default(),
                )?;
                // Files replaced or removed are kept beside them for the undo journal, as long as it keeps entries.
                Some(match self.config.journal_days {
                    0 => writer,
                    _ => writer.keeping_for(self.journal_id()),
                })
            }
            None => None,
        };
        Ok(self.webdav.get_or_init(|| client).as_ref())
    }

    /// This call's undo journal entry id (made once, from the clock).
    pub fn journal_id(&self) -> &str {
        self.journal_id.get_or_init(|| journal::new_id(self.platform.clock.now_ms()))
    }

    /// The route and library this call works on, naming what is kept about it outside Zotero (the undo journal,
    /// the questions asked before a write): `users/<id>` or `groups/<id>` through the Web API, `local/users/0` or
    /// `local/groups/<id>` through Zotero Desktop's local API. The two count versions apart, so what one route
    /// recorded must never be applied through the other. A Zotero 7 call whose writes go to the Web API
    /// ([`DesktopRoute::WebApi`]) is on the Web API's route. Costs a request only when the configured user
    /// library's id is not set and nothing else in the call has asked for it yet (the key names it).
    pub async fn route(&self) -> Result<String, ZoteroError> {
        let on_desktop = self.on_desktop();
        let library = self.client()?.library_prefix().await?.trim_start_matches('/');
        Ok(if on_desktop { format!("local/{library}") } else { library.to_owned() })
    }

    /// The caller's undo journal on this call's route and library ([`Self::route`]); `None` when
    /// `JOURNAL_DAYS` is 0.
    pub async fn journal(&self) -> Result<Option<Journal<'_>>, ZoteroError> {
        if self.config.journal_days == 0 {
            return Ok(None);
        }
        Ok(Some(Journal {
            kv: self.platform.cache_kv.as_ref(),
            user: &self.grant.user_id,
            route: self.route().await?,
            days: self.config.journal_days,
        }))
    }

    /// Marks this call as the undo of entry `id` (its own entry then says so).
    pub fn undoing(&self, id: &str) {
        *self.undoes.borrow_mut() = Some(id.to_owned());
    }

    /// The WebDAV writer, when the call's library keeps its files there and may be written: for putting back
    /// files an undo journal entry kept. `None` for Zotero Storage, or without the write scope.
    pub fn kept_files_writer(&self) -> Option<&WebDavWriter> {
        self.may_write().ok()?;
        if self.on_desktop() {
            return None;
        }
        self.chosen_store().ok().flatten()
    }

    /// Records what this call changed as one undo journal entry, once the tool has returned (the registry calls
    /// this for every tool, whether it succeeded or failed part-way): every change made through the writers,
    /// which record them themselves. Returns a line for the answer: how to undo, or why it cannot be.
    pub async fn keep_journal(&self) -> Option<String> {
        if !self.writer_taken.get() {
            return None;
        }
        let changes = self.zotero.get().map(|writer| writer.log().take()).unwrap_or_default();
        let mut files = self.webdav.get().and_then(Option::as_ref).map(|dav| dav.log().take()).unwrap_or_default();
        files.extend(self.zotero_storage.get().map(|storage| storage.log().take()).unwrap_or_default());
        if changes.is_empty() && files.is_empty() {
            return None;
        }
        let journal = match self.journal().await {
            Ok(Some(journal)) => journal,
            Ok(None) => return None,
            Err(error) => {
                return Some(format!(
                    "This change could not be recorded for undo ({error}); zotero_undo cannot turn it back."
                ))
            }
        };
        let now_ms = self.platform.clock.now_ms();
        let mut entry = Entry {
            id: self.journal_id().to_owned(),
            at_ms: now_ms,
            tool: self.tool.get().to_owned(),
            library: self.library.get().map(|selected| selected.id.to_string()),
            route: None,
            changes,
            files,
            omitted: 0,
            undoes: self.undoes.borrow_mut().take(),
            undone_by: None,
        };
        let saved = journal.save(&mut entry).await;
        // Entries past their time go, with the files they kept (best effort: a file left only takes space).
        if let Ok(gone) = journal.prune(now_ms).await {
            for old in gone {
                for file in old.files.iter().filter(|f| f.kept) {
                    if let (Ok(Some(dav)), Ok(key)) = (self.webdav_client(), ObjectKey::parse(&file.key)) {
                        let _ = dav.forget_kept(&key, &old.id).await;
                    }
                }
            }
        }
        Some(match saved {
            Ok(()) => format!(
                "Undo: zotero_undo with id \"{}\" turns this change back (kept {} days).",
                entry.id, self.config.journal_days
            ),
            Err(error) => {
                format!("This change could not be recorded for undo ({error}); zotero_undo cannot turn it back.")
            }
        })
    }

    /// A line for the answer when Zotero's dialog was asked more than once in this call and every time allowed:
    /// the person chose "Allow", good for one write, and is told why they were asked again and how not to be.
    pub fn desktop_dialogs_note(&self) -> Option<String> {
        let dialogs = self.local_call.dialogs();
        (dialogs > 1 && !self.local_call.denied()).then(|| {
            format!(
                "Zotero asked {dialogs} times whether zotero-mcp may change the library: its \"Allow\" is good for \
                 one write, and this call made several. \"Always Allow\" asks once for the whole run of the server."
            )
        })
    }

    /// Whether this request obtained a writer.
    /// Which tools this request is shown and may call: the deployment's `TOOL_GROUPS`, and whether it may
    /// write (the grant's `zotero:write` and the `write` group both).
    pub fn tool_view(&self) -> ToolView {
        let groups = self.config.tool_groups;
        ToolView { groups, writes: self.grant.allows(Scope::Write) && groups.contains(ToolGroup::Write) }
    }

    pub fn writer_taken(&self) -> bool {
        self.writer_taken.get()
    }

    /// Records which tool runs, so a refusal can name it. Called by the registry.
    pub(crate) fn enter_tool(&self, name: &'static str) {
        self.tool.set(name);
    }

    fn client(&self) -> Result<&ZoteroWriter, ZoteroError> {
        if let Some(client) = self.zotero.get() {
            return Ok(client);
        }
        if let (Some(desktop), true) = (self.config.desktop(), self.on_desktop()) {
            // The desktop's own library is users/0 whoever is signed in to it.
            let library = self.library.get().map_or(LibraryId { kind: LibraryKind::User, id: 0 }, |s| s.id);
            let client = self.desktop_client(desktop.as_ref(), library);
            return Ok(self.zotero.get_or_init(|| client));
        }
        let client = ZoteroWriter::new(self.zotero_settings(), self.platform.http.clone(), self.platform.clock.clone())
            .map_err(|error| with_setup_hint(error, self.config.setup))?;
        Ok(self.zotero.get_or_init(|| client))
    }

    /// The client's settings: the configured library's, or the one chosen for this call.
    fn zotero_settings(&self) -> ZoteroSettings {
        let mut settings = self.config.zotero_settings();
        if let Some(selected) = self.library.get() {
            settings.library_kind = selected.id.kind;
            settings.library_id = Some(selected.id.id.to_string());
        }
        settings
    }
}

/// A missing setting, with how to set it where this server runs: the core crate names the variable, the shell
/// knows whether that is a Worker secret or an environment variable.
fn with_setup_hint(error: ZoteroError, setup: SetupHint) -> ZoteroError {
    match error {
        ZoteroError::Unset { variable, what } => {
            ZoteroError::Config(format!("{variable} is not set ({what}): {}.", setup.how_to_set(variable)))
        }
        other => other,
    }
}
