//! What every call may use whatever it works on: the deployment's settings and the runtime's services, with the
//! outbound requests counted. Shared by the calls of one request (a Worker invocation, one stdio message).

use std::cell::Cell;
use std::rc::Rc;

use async_trait::async_trait;
use zotero_mcp_core::index::SyncOptions;
use zotero_mcp_core::net::{self, Download, DownloadError, DownloadPolicy};
use zotero_mcp_core::platform::{Clock, Decompose, HttpClient, HttpError, HttpRequest, HttpResponse};
use zotero_mcp_core::sources::{self, Identifier, Reference, ResolveError};
use zotero_mcp_core::zotero::{LibraryId, ZoteroError};

use crate::config::{Config, IndexSetupError, SetupHint};
use crate::platform::Platform;

/// The settings and the runtime services of one request. The configuration and the platform are private to the
/// crate: they hold the API key and the raw HTTP client, and a handler that could reach them could build its
/// own writer past the scope check.
pub struct Services {
    config: Rc<Config>,
    platform: Platform,
    /// Outbound requests sent so far, by every client of the request ([`Self::requests_sent`]).
    sent: Rc<Cell<usize>>,
    /// The scheme and host the request reached this server at, as the request names them (not yet normalized:
    /// `auth::http_util::normalized_origin` finishes it for a link handed out); `None` on stdio.
    origin: Option<String>,
}

/// The platform's HTTP client, counting what it sends: a Worker invocation may make only so many subrequests,
/// and a tool that plans a long job ([`Services::requests_sent`]) stops before the runtime stops it.
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

impl Services {
    pub fn new(config: Rc<Config>, mut platform: Platform) -> Self {
        let sent = Rc::new(Cell::new(0));
        platform.http = Rc::new(CountedHttp { inner: platform.http, sent: sent.clone() });
        Self { config, platform, sent, origin: None }
    }

    /// Where the request reached this server ([`Self::origin`]).
    pub fn with_origin(mut self, origin: String) -> Self {
        self.origin = Some(origin);
        self
    }

    /// The scheme and host the request reached this server at, as the request names them; `None` on stdio.
    pub fn origin(&self) -> Option<&str> {
        self.origin.as_deref()
    }

    pub(crate) fn config(&self) -> &Config {
        &self.config
    }

    pub(crate) fn platform(&self) -> &Platform {
        &self.platform
    }

    /// How many outbound requests (Zotero, the file store, registries, downloads) this request has sent.
    pub fn requests_sent(&self) -> usize {
        self.sent.get()
    }

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
    pub fn decompose(&self) -> Decompose {
        self.platform.decompose
    }

    /// The clock (for file times).
    pub fn clock(&self) -> &dyn Clock {
        self.platform.clock.as_ref()
    }

    /// The configured library, when its id is configured (a user library's may be found from the key instead).
    pub fn configured_library(&self) -> Option<LibraryId> {
        self.config.configured_library()
    }

    /// The libraries besides the configured one that the semantic index holds (`INDEX_LIBRARIES`), or why the
    /// setting is unusable.
    pub fn indexed_libraries(&self) -> Result<&[LibraryId], IndexSetupError> {
        self.config.index_libraries.as_deref().map_err(Clone::clone)
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

    /// Downloads a file from a URL the caller chose, through the SSRF guard (`zotero_mcp_core::net`): public
    /// https hosts only, at most 40 MiB.
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

    /// A missing setting, with how to set it where this server runs: the core crate names the variable, the
    /// shell knows whether that is a Worker secret or an environment variable.
    pub(crate) fn with_setup_hint(&self, error: ZoteroError) -> ZoteroError {
        with_setup_hint(error, self.config.setup)
    }
}

fn with_setup_hint(error: ZoteroError, setup: SetupHint) -> ZoteroError {
    match error {
        ZoteroError::Unset { variable, what } => {
            ZoteroError::Config(format!("{variable} is not set ({what}): {}.", setup.how_to_set(variable)))
        }
        other => other,
    }
}
