//! The deployment's configuration: Worker variables and secrets, read once per request.
//!
//! Names are the TypeScript project's, so an existing deployment's secrets and variables keep working.

use std::rc::Rc;

use zotero_mcp_core::desktop::Desktop;
use zotero_mcp_core::index::sync::DEFAULT_SUBREQUEST_BUDGET;
use zotero_mcp_core::index::{IndexSettings, DEFAULT_BATCH};
use zotero_mcp_core::sources::{Endpoints, SourceSettings};
use zotero_mcp_core::webdav::WebDavSettings;
use zotero_mcp_core::zotero::{LibraryId, LibraryKind, ZoteroSettings};

/// Default browser origins allowed to call `/mcp` (besides loopback origins, which are always allowed).
pub const DEFAULT_ALLOWED_ORIGINS: &[&str] = &["https://claude.ai", "https://claude.com", "https://chatgpt.com"];

/// Days the undo journal keeps a write call's record unless `JOURNAL_DAYS` says otherwise.
pub const DEFAULT_JOURNAL_DAYS: u32 = 30;

/// What `/health` and the native server's start say when `ENABLE_TEST_FIXTURES=1` is set.
pub const TEST_SWITCHES_WARNING: &str = "ENABLE_TEST_FIXTURES=1 is set: the switches for end-to-end tests (fixture \
     tools, a route that panics the Worker, and UNLIMITED_REGISTRATION, ALLOW_LOOPBACK_SOURCE_URLS and \
     SOURCES_TEST_BASE_URL where set) are on, for requests from this machine to a loopback host name only. Remove \
     ENABLE_TEST_FIXTURES from any deployment.";

/// The IPv6 prefix length the login throttle counts as one client unless `LOGIN_IPV6_PREFIX` says otherwise.
pub const DEFAULT_LOGIN_IPV6_PREFIX: u8 = 64;

#[derive(Clone)]
pub struct Config {
    pub zotero_api_key: Option<String>,
    pub zotero_library_id: Option<String>,
    pub zotero_library_type: LibraryKind,
    pub zotero_api_base: Option<String>,
    pub auth_password: Option<String>,
    /// The login name; also the grant's user id. `owner` when unset, as in the TypeScript project.
    pub auth_username: String,
    /// Whether `AUTH_USERNAME` was set explicitly (then the login page asks for it).
    pub auth_username_required: bool,
    /// Browser origins allowed to call `/mcp`; `ALLOWED_ORIGINS` (comma-separated) replaces the default list.
    pub allowed_origins: Vec<String>,
    /// When set (`ALLOWED_HOSTS`, comma-separated), requests whose `Host` is not listed are refused: the guard
    /// against DNS rebinding for servers reachable on loopback. Cloudflare's routing already pins the host in
    /// production, so the deployed Worker leaves it unset.
    pub allowed_hosts: Option<Vec<String>>,
    /// Browser origins other than `allowed_origins` are refused, the server's own and loopback ones too. Never
    /// read from a variable: the native server sets it when it runs without a token on loopback, where being on
    /// this machine is the only credential (and `allowed_origins` is then only what `ALLOWED_ORIGINS` lists).
    pub strict_origins: bool,
    /// Registers the fixture tool, resource and prompt used by the end-to-end tests (`ENABLE_TEST_FIXTURES=1`),
    /// and in the Worker a route that panics its instance. It also lets the other test-only switches through
    /// (`UNLIMITED_REGISTRATION`, `ALLOW_LOOPBACK_SOURCE_URLS`, `SOURCES_TEST_BASE_URL`). All of them are for
    /// local test servers only: a request not from this machine to a loopback host gets a configuration
    /// without them ([`Config::without_test_switches`], from `App::for_request`), and `/health` warns.
    pub test_fixtures: bool,
    /// `ENABLE_TEST_FIXTURES=1` is set, but this request was refused the test-only switches (it is not local).
    /// Only `/health` reads it, to warn that the variable is set where it should not be.
    pub test_fixtures_refused: bool,
    /// Turns the registration limits off, per address and for the whole server (`UNLIMITED_REGISTRATION=1`,
    /// honoured only with `ENABLE_TEST_FIXTURES=1`): the end-to-end tests register a client per test file on
    /// both servers, all from 127.0.0.1. Never set it on a deployment.
    pub unlimited_registration: bool,
    /// Native HTTP server only: the request header a reverse proxy on the same host puts the client's address in
    /// (`TRUSTED_PROXY_HEADER`, e.g. `X-Forwarded-For`; lowercased). Read only from connections whose peer is
    /// loopback, the right-most entry of a list; without it every proxied client is the proxy's loopback
    /// address, and shares its limits. The Worker ignores it (Cloudflare sets `CF-Connecting-IP`).
    pub trusted_proxy_header: Option<String>,
    /// How many leading bits of an IPv6 address the login throttle counts as one client (`LOGIN_IPV6_PREFIX`,
    /// 32–128, default 64: the block one subscriber usually gets).
    pub login_ipv6_prefix: u8,
    /// The WebDAV server with the attachment files (`WEBDAV_URL`, `WEBDAV_USERNAME`, `WEBDAV_PASSWORD`); `None`
    /// when the URL is unset.
    pub webdav: Option<WebDavSettings>,
    /// Which store the library's files are read from (`FILE_STORAGE`): WebDAV when it is configured, else
    /// Zotero Storage, unless this names one.
    pub file_storage: FileStorage,
    /// Lets `zotero_put_attachment` fetch a `sourceUrl` over plain http from a loopback address
    /// (`ALLOW_LOOPBACK_SOURCE_URLS=1`, honoured only with `ENABLE_TEST_FIXTURES=1`, like the other test-only
    /// switches: it turns the download guard against requests to this machine off): for `make dev`'s demo and
    /// the end-to-end tests only, whose files are served on 127.0.0.1. Never set it on a deployment.
    pub allow_loopback_source_urls: bool,
    /// The AI Search instance and models (`AI_SEARCH_INSTANCE`, `EMBEDDING_MODEL`, `RERANKING_MODEL`), or why
    /// they are unusable (an instance id AI Search would refuse).
    pub index: Result<IndexSettings, IndexSetupError>,
    /// Items the scheduled sync takes per run (`SYNC_BATCH_LIMIT`, default 100), as in the TypeScript project;
    /// `zotero_reindex` uses it too unless given `limit`.
    pub sync_batch_limit: usize,
    /// Zotero requests one sync run may make (`SYNC_SUBREQUEST_BUDGET`): a Worker invocation may make 50
    /// subrequests on the free plan, and a run stops taking items before it would exceed its budget.
    pub sync_subrequest_budget: usize,
    /// The CPU milliseconds the deployment's plan gives a request (`CPU_LIMIT_MS`, unset: not known). Set to
    /// 10 on Cloudflare's free plan: reads that would parse a PDF are then refused before they start, with what
    /// to do instead, rather than stopped part-way by Cloudflare.
    pub cpu_limit_ms: Option<u32>,
    /// Whether indexed documents carry the paper's text from Zotero's full-text index (`INDEX_FULL_TEXT`,
    /// default on; `0` or `false` indexes metadata only, as the TypeScript project did).
    pub index_full_text: bool,
    /// The libraries besides the configured one that the semantic index holds (`INDEX_LIBRARIES`: library paths
    /// such as `groups/123`, separated by commas or spaces), or why the setting is unusable. The configured
    /// library is always indexed; naming it here changes nothing.
    pub index_libraries: Result<Vec<LibraryId>, IndexSetupError>,
    /// How `zotero_import_reference` asks CrossRef, DataCite, arXiv, Open Library, PubMed and OpenAlex:
    /// `CONTACT_EMAIL` joins the polite pools (CrossRef and OpenAlex `mailto`, NCBI `email`). The sources' base
    /// URLs are the public ones; only with `ENABLE_TEST_FIXTURES=1` does `SOURCES_TEST_BASE_URL` move all six under
    /// one local stub (`<base>/crossref`, `/datacite`, `/arxiv`, `/openlibrary`, `/eutils`, `/openalex`).
    pub sources: SourceSettings,
    /// Days the undo journal keeps each write call's record (`JOURNAL_DAYS`, default 30; `0` keeps none, and
    /// `zotero_undo` then has nothing to undo).
    pub journal_days: u32,
    /// The tool groups this deployment offers (`TOOL_GROUPS`, e.g. `read,files`; unset: all of them). A tool
    /// outside them is neither listed nor called, and without `write` no tool changes anything.
    pub tool_groups: ToolGroups,
    /// Names in `TOOL_GROUPS` that are no group, for `/health` to name (they select nothing).
    pub tool_groups_unknown: Vec<String>,
    /// Whether destructive writes ask the person first where the client can show a form (`CONFIRM_WRITES`,
    /// default on; `0` or `false` turns it off for unattended jobs: the tools' own dry runs remain).
    pub confirm_writes: bool,
    /// How a person sets a variable where this server runs, for the messages about a missing one. A native
    /// server's unless the Worker shell (src/worker.rs) says otherwise.
    pub setup: SetupHint,
    /// Zotero Desktop on this machine, when the native server runs on it (`serve --local`): the library is read
    /// through its local API and the files from its data directory. Never read from a variable; the Worker has
    /// none.
    pub desktop: Option<Rc<dyn Desktop>>,
}

impl Config {
    /// Zotero Desktop, when the server runs on it. Always `None` in a build without the `desktop` feature (the
    /// Worker's): every desktop route hangs off this, so the optimizer drops them all there.
    #[inline]
    pub fn desktop(&self) -> Option<&Rc<dyn Desktop>> {
        if cfg!(any(test, feature = "desktop")) {
            self.desktop.as_ref()
        } else {
            None
        }
    }
}

impl Config {
    /// This configuration with every test-only switch off, as a deployment without `ENABLE_TEST_FIXTURES`
    /// has it: what a request that is not local gets when the variable is set anyway (`App::for_request`).
    /// No fixture tools, no panicking route, the registration limits and the download guard on, and the metadata
    /// services at their public addresses.
    pub fn without_test_switches(&self) -> Config {
        Config {
            test_fixtures: false,
            test_fixtures_refused: self.test_fixtures || self.test_fixtures_refused,
            unlimited_registration: false,
            allow_loopback_source_urls: false,
            sources: SourceSettings { endpoints: Endpoints::default(), ..self.sources.clone() },
            ..self.clone()
        }
    }
}

/// Where the settings live, which is all that differs between the shells in what a person is told to do about
/// a missing one (the core crate names the variable; the shell says how to set it: `crates/cli/tests/setup_hint.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetupHint {
    /// A Cloudflare Worker: secrets are set with wrangler.
    Worker,
    /// The native binary: the environment, or its TOML config file (same names).
    Native,
}

impl SetupHint {
    /// How to set `variable`, as the end of a sentence.
    pub fn how_to_set(self, variable: &str) -> String {
        match self {
            SetupHint::Worker => format!("set it with `wrangler secret put {variable}`"),
            SetupHint::Native => format!(
                "set {variable} in the environment or as `{variable} = \"…\"` in the config file, then restart \
                 the server"
            ),
        }
    }
}

impl std::fmt::Debug for Config {
    // Secrets are reported as present or absent, never printed.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Config")
            .field("zotero_api_key", &self.zotero_api_key.as_ref().map(|_| "<set>"))
            .field("zotero_library_id", &self.zotero_library_id)
            .field("zotero_library_type", &self.zotero_library_type)
            .field("auth_password", &self.auth_password.as_ref().map(|_| "<set>"))
            .field("auth_username", &self.auth_username)
            .field("allowed_origins", &self.allowed_origins)
            .field("allowed_hosts", &self.allowed_hosts)
            .field("strict_origins", &self.strict_origins)
            .field("test_fixtures", &self.test_fixtures)
            .field("test_fixtures_refused", &self.test_fixtures_refused)
            .field("unlimited_registration", &self.unlimited_registration)
            .field("trusted_proxy_header", &self.trusted_proxy_header)
            .field("allow_loopback_source_urls", &self.allow_loopback_source_urls)
            .field("index", &self.index)
            .field("sync_batch_limit", &self.sync_batch_limit)
            .field("sync_subrequest_budget", &self.sync_subrequest_budget)
            .field("cpu_limit_ms", &self.cpu_limit_ms)
            // WebDavSettings' own Debug leaves the password out.
            .field("webdav", &self.webdav)
            .field("tool_groups", &self.tool_groups.names())
            .field("setup", &self.setup)
            .finish_non_exhaustive()
    }
}

impl Config {
    /// The configured library's file store: WebDAV when `WEBDAV_URL` is set, else Zotero Storage, unless
    /// `FILE_STORAGE` names one. The one place this is decided (the request context, `/health`, the libraries
    /// listing all ask here).
    pub fn file_store(&self) -> Result<FileStoreSetting<'_>, FileStorageError> {
        match (&self.file_storage, &self.webdav) {
            (FileStorage::Invalid(value), _) => Err(FileStorageError::BadSetting(value.clone())),
            (FileStorage::WebDav, None) => Err(FileStorageError::WebDavUnset),
            (FileStorage::WebDav | FileStorage::Auto, Some(settings)) => Ok(FileStoreSetting::WebDav(settings)),
            (FileStorage::Zotero, _) | (FileStorage::Auto, None) => Ok(FileStoreSetting::ZoteroStorage),
        }
    }

    /// The configured library, when its id is configured (a user library's may be found from the key instead).
    pub fn configured_library(&self) -> Option<LibraryId> {
        let id = self.zotero_library_id.as_deref().and_then(|id| id.trim().parse().ok())?;
        Some(LibraryId { kind: self.zotero_library_type, id })
    }

    /// The Zotero client's settings: the key, the library and the API's address.
    pub fn zotero_settings(&self) -> ZoteroSettings {
        ZoteroSettings {
            api_key: self.zotero_api_key.clone().unwrap_or_default(),
            library_kind: self.zotero_library_type,
            library_id: self.zotero_library_id.clone(),
            base_url: self.zotero_api_base.clone(),
        }
    }

    /// Builds the configuration from a variable lookup (the Worker's `env`, or a map in tests). Empty strings
    /// count as unset: `wrangler secret put` with an empty value is a common way to "remove" a secret.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Self {
        let get = |name: &str| lookup(name).map(|v| v.trim().to_owned()).filter(|v| !v.is_empty());
        let list = |name: &str| {
            get(name).map(|v| v.split(',').map(|s| s.trim().to_owned()).filter(|s| !s.is_empty()).collect::<Vec<_>>())
        };
        let username = get("AUTH_USERNAME");
        // The test-only switches below are honoured only with this one: one variable to check on a deployment.
        let fixtures = get("ENABLE_TEST_FIXTURES").as_deref() == Some("1");
        let (tool_groups, tool_groups_unknown) = ToolGroups::from_setting(get("TOOL_GROUPS").as_deref());
        Self {
            desktop: None,
            zotero_api_key: get("ZOTERO_API_KEY"),
            zotero_library_id: get("ZOTERO_LIBRARY_ID"),
            zotero_library_type: match get("ZOTERO_LIBRARY_TYPE").as_deref() {
                Some("group") => LibraryKind::Group,
                _ => LibraryKind::User,
            },
            zotero_api_base: get("ZOTERO_API_BASE"),
            auth_password: get("AUTH_PASSWORD"),
            auth_username_required: username.is_some(),
            auth_username: username.unwrap_or_else(|| "owner".to_owned()),
            allowed_origins: list("ALLOWED_ORIGINS")
                .unwrap_or_else(|| DEFAULT_ALLOWED_ORIGINS.iter().map(|s| (*s).to_owned()).collect()),
            allowed_hosts: list("ALLOWED_HOSTS"),
            strict_origins: false,
            test_fixtures: fixtures,
            test_fixtures_refused: false,
            unlimited_registration: get("UNLIMITED_REGISTRATION").as_deref() == Some("1") && fixtures,
            trusted_proxy_header: get("TRUSTED_PROXY_HEADER").map(|h| h.to_ascii_lowercase()),
            login_ipv6_prefix: get("LOGIN_IPV6_PREFIX")
                .and_then(|v| v.parse::<u8>().ok())
                .map(|bits| bits.clamp(32, 128))
                .unwrap_or(DEFAULT_LOGIN_IPV6_PREFIX),
            webdav: get("WEBDAV_URL").map(|url| WebDavSettings {
                url,
                username: get("WEBDAV_USERNAME").unwrap_or_default(),
                password: get("WEBDAV_PASSWORD").unwrap_or_default(),
            }),
            file_storage: FileStorage::from_setting(get("FILE_STORAGE")),
            allow_loopback_source_urls: get("ALLOW_LOOPBACK_SOURCE_URLS").as_deref() == Some("1") && fixtures,
            index: IndexSettings::from_lookup(get).map_err(|e| IndexSetupError::Settings(Rc::new(e))),
            sync_batch_limit: positive(get("SYNC_BATCH_LIMIT")).unwrap_or(DEFAULT_BATCH),
            sync_subrequest_budget: positive(get("SYNC_SUBREQUEST_BUDGET")).unwrap_or(DEFAULT_SUBREQUEST_BUDGET),
            cpu_limit_ms: positive(get("CPU_LIMIT_MS")).map(|ms| u32::try_from(ms).unwrap_or(u32::MAX)),
            index_full_text: !matches!(get("INDEX_FULL_TEXT").as_deref(), Some("0" | "false" | "off" | "no")),
            index_libraries: index_libraries(get("INDEX_LIBRARIES").as_deref()),
            sources: source_settings(get("CONTACT_EMAIL"), get("SOURCES_TEST_BASE_URL").filter(|_| fixtures)),
            journal_days: get("JOURNAL_DAYS")
                .and_then(|v| v.parse::<u32>().ok())
                .map(|days| days.min(365))
                .unwrap_or(DEFAULT_JOURNAL_DAYS),
            confirm_writes: !matches!(get("CONFIRM_WRITES").as_deref(), Some("0" | "false" | "off" | "no")),
            tool_groups,
            tool_groups_unknown,
            setup: SetupHint::Native,
        }
    }
}

/// A group of tools an operator can offer or leave out of a deployment (`TOOL_GROUPS`). Each tool is in one
/// (`ToolSpec::group`); the names are what `TOOL_GROUPS` takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolGroup {
    /// Reading the library: search, items, collections, tags, notes, annotations, libraries, changes, and the
    /// ChatGPT connector's `search` and `fetch`.
    Read,
    /// Changing the library: creating, editing and deleting items and collections, and undoing. Also the switch
    /// for every write: without it no tool of any group changes anything (a mixed tool keeps its reading
    /// modes), so `TOOL_GROUPS=read,files,research,admin` is a read-only deployment.
    Write,
    /// Attachment files: reading, uploading, deleting and renaming them.
    Files,
    /// Reading across items and the web: semantic search, passages for a question, checking a manuscript's
    /// references, importing by identifier.
    Research,
    /// Looking after the library and the deployment: the semantic index's sync, duplicates.
    Admin,
}

impl ToolGroup {
    pub const ALL: [ToolGroup; 5] =
        [ToolGroup::Read, ToolGroup::Write, ToolGroup::Files, ToolGroup::Research, ToolGroup::Admin];

    /// The name `TOOL_GROUPS` takes.
    pub const fn name(self) -> &'static str {
        match self {
            ToolGroup::Read => "read",
            ToolGroup::Write => "write",
            ToolGroup::Files => "files",
            ToolGroup::Research => "research",
            ToolGroup::Admin => "admin",
        }
    }

    const fn bit(self) -> u8 {
        1 << self as u8
    }
}

/// A set of [`ToolGroup`]s: the groups a deployment offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ToolGroups(u8);

impl ToolGroups {
    /// Every group: the default, so a deployment that sets nothing offers every tool, as before.
    pub const fn all() -> Self {
        let mut bits = 0;
        let mut i = 0;
        while i < ToolGroup::ALL.len() {
            bits |= ToolGroup::ALL[i].bit();
            i += 1;
        }
        Self(bits)
    }

    pub const fn contains(self, group: ToolGroup) -> bool {
        self.0 & group.bit() != 0
    }

    /// `TOOL_GROUPS`: group names separated by commas or spaces, in any case, and the names that are no group.
    /// Unset or empty: every group. A setting that names no known group at all (a typo) offers `read` alone:
    /// the server stays useful and changes nothing the operator did not ask for; `/health` names the typo.
    pub fn from_setting(setting: Option<&str>) -> (Self, Vec<String>) {
        let Some(setting) = setting.filter(|s| !s.trim().is_empty()) else { return (Self::all(), Vec::new()) };
        let mut bits = 0;
        let mut unknown = Vec::new();
        for name in setting.split(|c: char| c == ',' || c.is_whitespace()).filter(|n| !n.is_empty()) {
            match ToolGroup::ALL.iter().find(|g| g.name().eq_ignore_ascii_case(name)) {
                Some(group) => bits |= group.bit(),
                None => unknown.push(name.to_owned()),
            }
        }
        if bits == 0 {
            bits = ToolGroup::Read.bit();
        }
        (Self(bits), unknown)
    }

    /// The groups' names, comma-separated, in `ToolGroup::ALL`'s order.
    pub fn names(self) -> String {
        ToolGroup::ALL.iter().filter(|g| self.contains(**g)).map(|g| g.name()).collect::<Vec<_>>().join(",")
    }
}

/// Which tools one request is shown and may call: the deployment's groups, and whether the request may change
/// the library (its grant has `zotero:write` and the deployment offers `write`). `tools/list` is serialized once
/// per view and isolate (`Registry::tools_json`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ToolView {
    pub groups: ToolGroups,
    pub writes: bool,
    /// The client declared MCP Apps: it is shown the panels and the tools only they call.
    pub apps: bool,
}

impl ToolView {
    /// A tool is listed when its group is offered, and a tool that only writes only to a view that writes.
    pub const fn lists(self, group: ToolGroup, only_writes: bool) -> bool {
        self.groups.contains(group) && (!only_writes || self.writes)
    }
}

/// The most libraries `INDEX_LIBRARIES` may name: each costs a scheduled run at least a request or two.
pub const MAX_INDEX_LIBRARIES: usize = 20;

/// Why the semantic index cannot be used with the deployment's settings: kept in the configuration and reported
/// by every call that needs the index (hence `Clone`), each message naming the setting to change.
#[derive(Debug, Clone, thiserror::Error)]
pub enum IndexSetupError {
    /// `AI_SEARCH_INSTANCE` (or another index setting) is unusable; the core's message names it.
    #[error("{0}")]
    Settings(Rc<zotero_mcp_core::index::IndexError>),
    #[error(
        "INDEX_LIBRARIES names {entry:?}, which is not a library; list libraries as groups/<id> or users/<id>, \
         separated by commas (zotero_list_libraries shows them)"
    )]
    NotALibrary { entry: String },
    #[error("INDEX_LIBRARIES names {count} libraries; at most {MAX_INDEX_LIBRARIES} can be kept in one index")]
    TooManyLibraries { count: usize },
}

/// `INDEX_LIBRARIES`: library paths, duplicates dropped, in the order given.
fn index_libraries(setting: Option<&str>) -> Result<Vec<LibraryId>, IndexSetupError> {
    let mut libraries: Vec<LibraryId> = Vec::new();
    for entry in setting.unwrap_or_default().split(|c: char| c == ',' || c.is_whitespace()).filter(|e| !e.is_empty()) {
        let Some(id) = LibraryId::parse(entry) else {
            return Err(IndexSetupError::NotALibrary { entry: entry.to_owned() });
        };
        if !libraries.contains(&id) {
            libraries.push(id);
        }
    }
    if libraries.len() > MAX_INDEX_LIBRARIES {
        return Err(IndexSetupError::TooManyLibraries { count: libraries.len() });
    }
    Ok(libraries)
}

/// `FILE_STORAGE`: which store holds the library's files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileStorage {
    /// Unset: WebDAV when `WEBDAV_URL` is set (as before Zotero Storage was served), else Zotero Storage.
    Auto,
    /// `webdav`: WebDAV, and an error naming `WEBDAV_URL` when it is not set.
    WebDav,
    /// `zotero`: Zotero Storage, even when `WEBDAV_URL` is set.
    Zotero,
    /// Anything else, kept to be named in the error.
    Invalid(String),
}

/// Where the configured library's files are, as the settings decide it (no request made).
#[derive(Debug, Clone, Copy)]
pub enum FileStoreSetting<'a> {
    WebDav(&'a WebDavSettings),
    ZoteroStorage,
}

/// Why the settings name no usable file store.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FileStorageError {
    #[error("FILE_STORAGE is {0:?}; set it to webdav or zotero, or leave it unset (WebDAV when WEBDAV_URL is set, else Zotero Storage)")]
    BadSetting(String),
    #[error("FILE_STORAGE is webdav, but WEBDAV_URL is not set; set WEBDAV_URL, WEBDAV_USERNAME and WEBDAV_PASSWORD, or leave FILE_STORAGE unset to read files from Zotero Storage")]
    WebDavUnset,
}

impl FileStorage {
    fn from_setting(value: Option<String>) -> Self {
        match value.as_deref().map(str::trim).map(str::to_ascii_lowercase).as_deref() {
            None | Some("") => Self::Auto,
            Some("webdav") => Self::WebDav,
            Some("zotero") => Self::Zotero,
            Some(_) => Self::Invalid(value.unwrap_or_default()),
        }
    }
}

fn source_settings(contact_email: Option<String>, test_base: Option<String>) -> SourceSettings {
    let endpoints = match test_base {
        Some(base) => {
            let base = base.trim_end_matches('/');
            let at = |path: &str| format!("{base}/{path}");
            Endpoints {
                crossref: at("crossref"),
                datacite: at("datacite"),
                arxiv: at("arxiv"),
                open_library: at("openlibrary"),
                eutils: at("eutils"),
                openalex: at("openalex"),
            }
        }
        None => Endpoints::default(),
    };
    SourceSettings {
        endpoints,
        contact_email,
        user_agent: concat!("zotero-mcp/", env!("CARGO_PKG_VERSION"), " (+https://github.com/yousiki/zotero-mcp)")
            .to_owned(),
        ..SourceSettings::default()
    }
}

/// A whole number above 0 (as the TypeScript project reads `SYNC_BATCH_LIMIT`: anything else is the default).
fn positive(value: Option<String>) -> Option<usize> {
    value.and_then(|v| v.parse::<f64>().ok()).filter(|n| n.is_finite() && *n >= 1.0).map(|n| n as usize)
}

#[cfg(test)]
mod tool_group_tests {
    use super::*;

    #[test]
    fn tool_groups_default_to_all_and_read_names_in_any_case() {
        let all = ToolGroups::from_setting(None);
        assert_eq!(all, (ToolGroups::all(), vec![]));
        assert_eq!(all.0.names(), "read,write,files,research,admin");
        assert_eq!(ToolGroups::from_setting(Some("  ")).0, ToolGroups::all());
        let (groups, unknown) = ToolGroups::from_setting(Some("Read, files research"));
        assert_eq!((groups.names(), unknown), ("read,files,research".to_owned(), vec![]));
        assert!(!groups.contains(ToolGroup::Write) && !groups.contains(ToolGroup::Admin));
    }

    #[test]
    fn a_tool_groups_typo_is_kept_to_be_named_and_never_offers_more() {
        let (groups, unknown) = ToolGroups::from_setting(Some("read,wirte"));
        assert_eq!((groups.names(), unknown), ("read".to_owned(), vec!["wirte".to_owned()]));
        // Nothing known at all: reading alone, never every tool.
        let (groups, unknown) = ToolGroups::from_setting(Some("everything"));
        assert_eq!((groups.names(), unknown), ("read".to_owned(), vec!["everything".to_owned()]));
        let config = Config::from_lookup(|name| (name == "TOOL_GROUPS").then(|| "read, admin".to_owned()));
        assert_eq!(config.tool_groups.names(), "read,admin");
        assert!(format!("{config:?}").contains("read,admin"));
    }

    #[test]
    fn a_view_lists_write_only_tools_only_when_it_writes() {
        let view = |writes| ToolView { groups: ToolGroups::all(), writes, apps: false };
        assert!(view(true).lists(ToolGroup::Write, true));
        assert!(!view(false).lists(ToolGroup::Write, true));
        assert!(view(false).lists(ToolGroup::Files, false), "a mixed or reading tool stays");
        let reading = ToolView { groups: ToolGroups::from_setting(Some("read")).0, writes: false, apps: false };
        assert!(!reading.lists(ToolGroup::Files, false));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn config(vars: &[(&str, &str)]) -> Config {
        let map: HashMap<String, String> = vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        Config::from_lookup(|k| map.get(k).cloned())
    }

    #[test]
    fn empty_values_count_as_unset() {
        let c = config(&[("ZOTERO_API_KEY", "  "), ("ZOTERO_LIBRARY_ID", "")]);
        assert_eq!(c.zotero_api_key, None);
        assert_eq!(c.zotero_library_id, None);
        assert_eq!(c.auth_username, "owner");
    }

    #[test]
    fn allowed_origins_replace_the_defaults() {
        assert_eq!(config(&[]).allowed_origins.len(), DEFAULT_ALLOWED_ORIGINS.len());
        let c = config(&[("ALLOWED_ORIGINS", "https://a.example, https://b.example")]);
        assert_eq!(c.allowed_origins, ["https://a.example", "https://b.example"]);
    }

    #[test]
    fn the_test_only_switches_need_enable_test_fixtures() {
        let switches = [
            ("UNLIMITED_REGISTRATION", "1"),
            ("ALLOW_LOOPBACK_SOURCE_URLS", "1"),
            ("SOURCES_TEST_BASE_URL", "http://127.0.0.1:9/"),
        ];
        let public = Endpoints::default();
        let without = config(&switches);
        assert!(!without.test_fixtures && !without.unlimited_registration && !without.allow_loopback_source_urls);
        assert_eq!(without.sources.endpoints.crossref, public.crossref, "SOURCES_TEST_BASE_URL alone is ignored");

        let on = config(
            &[switches.as_slice(), &[("ENABLE_TEST_FIXTURES", "1"), ("CONTACT_EMAIL", "me@example.org")]].concat(),
        );
        assert!(on.test_fixtures && on.unlimited_registration && on.allow_loopback_source_urls);
        assert_eq!(on.sources.endpoints.crossref, "http://127.0.0.1:9/crossref");
        assert_eq!(on.sources.endpoints.openalex, "http://127.0.0.1:9/openalex");

        // What a request from elsewhere gets: all of them off, the contact address kept, the refusal noted.
        let off = on.without_test_switches();
        assert!(!off.test_fixtures && !off.unlimited_registration && !off.allow_loopback_source_urls);
        assert!(off.test_fixtures_refused);
        assert_eq!(off.sources.endpoints.crossref, public.crossref);
        assert_eq!(off.sources.endpoints.eutils, public.eutils);
        assert_eq!(off.sources.contact_email.as_deref(), Some("me@example.org"));
        assert!(!without.without_test_switches().test_fixtures_refused, "nothing to refuse without the variable");
    }

    #[test]
    fn debug_output_never_contains_secrets() {
        let c = config(&[
            ("ZOTERO_API_KEY", "sekrit-key"),
            ("AUTH_PASSWORD", "hunter2"),
            ("WEBDAV_URL", "https://dav.example.org/"),
            ("WEBDAV_PASSWORD", "dav-secret"),
        ]);
        let printed = format!("{c:?}");
        assert!(printed.contains("dav.example.org"), "{printed}");
        for secret in ["sekrit-key", "hunter2", "dav-secret"] {
            assert!(!printed.contains(secret), "{printed}");
        }
    }
}
