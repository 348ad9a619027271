//! What one tool call may use: who calls, what the call works on (its [`Target`], resolved once before the tool
//! runs), and the request's services.
//!
//! The context is also where the write scope becomes a matter of types: [`RequestContext::zotero`] hands out a
//! [`ZoteroClient`], which can only read, and the ways to a [`ZoteroWriter`] are [`RequestContext::writer`],
//! which refuses a call that may not write, and [`Confirmed`], which only [`RequestContext::confirm`] gives. A
//! tool that writes without asking cannot compile, and a call its tool confirms gets no writer without a yes.

use std::future::Future;
use std::pin::Pin;
use std::task::Poll;

use zotero_mcp_core::files::{FileStore, FileWriter, StoreKind};
use zotero_mcp_core::index::SemanticIndex;
use zotero_mcp_core::platform::KvStore;
use zotero_mcp_core::webdav::WebDavWriter;
use zotero_mcp_core::zotero::{Capabilities, ZoteroClient, ZoteroError, ZoteroWriter};

use crate::call::{journal_of, Plan, Record, Services, Session, Target, Unresolved};
pub use crate::call::{FilesUnavailable, NotConfirmed, WriterRefused};
use crate::config::IndexSetupError;
use crate::confirm::{Asking, Proposal, Questions};
use crate::grant::Grant;
use crate::journal::Journal;
use crate::library::SelectedLibrary;

/// The context handed to a tool, resource or prompt handler for one call.
pub struct RequestContext {
    /// Who is calling and with which scopes.
    pub grant: Grant,
    target: Target,
    record: Record,
    /// The tool declared this call one to confirm: its writers come from [`Self::confirm`] only.
    confirms: bool,
    /// What the client said about asking the person.
    asking: Asking,
}

/// A destructive write the person allowed (or that needed no question): the writers of a call its tool
/// confirms come from here. Only [`RequestContext::confirm`] makes one.
#[derive(Clone, Copy)]
pub struct Confirmed<'a> {
    ctx: &'a RequestContext,
}

impl<'a> Confirmed<'a> {
    /// The Zotero client for the confirmed change.
    pub fn writer(self) -> Result<&'a ZoteroWriter, WriterRefused> {
        self.ctx.take_writer()
    }

    /// The file store's writer for the confirmed change.
    pub async fn file_writer(self) -> Result<FileWriter<'a>, WriterRefused> {
        self.ctx.take_file_writer().await
    }
}

impl RequestContext {
    /// Resolves one call of `session` as `plan` says: its target first (the library, the route, the clients),
    /// before the handler runs. A call its tool confirms is refused here when it could not write anyway.
    pub async fn resolve(session: &Session, plan: Plan) -> Result<Self, Unresolved> {
        let services = session.services().clone();
        let record = Record::new(plan.tool, services.clock().now_ms());
        let target = Target::resolve(services, &session.grant, &plan, record.journal_id().to_owned()).await?;
        Ok(Self { grant: session.grant.clone(), target, record, confirms: plan.confirms, asking: plan.asking })
    }

    /// The request's services: the clock, downloads, reference look-ups, the request counter.
    pub fn services(&self) -> &Services {
        self.target.services()
    }

    /// The Zotero client for this call, for reading: one per call, so its limiter, backoff gate and library
    /// lookup are shared by everything the call does.
    pub fn zotero(&self) -> Result<&ZoteroClient, ZoteroError> {
        Ok(self.target.zotero()?)
    }

    /// The Zotero client for changing the library, or why not (before anything is sent): no write scope, a
    /// read-only library or Desktop, or a call its tool confirms ([`Self::confirm`] gives its writer).
    pub fn writer(&self) -> Result<&ZoteroWriter, WriterRefused> {
        self.unconfirmed()?;
        self.take_writer()
    }

    /// The Zotero client of a call that was confirmed (`confirmed`), or of one that needed no confirmation.
    pub fn writer_after(&self, confirmed: Option<Confirmed<'_>>) -> Result<&ZoteroWriter, WriterRefused> {
        match confirmed {
            Some(_) => self.take_writer(),
            None => self.writer(),
        }
    }

    /// The file store's writer of a call that was confirmed (`confirmed`), or of one that needed none.
    pub async fn file_writer_after(&self, confirmed: Option<Confirmed<'_>>) -> Result<FileWriter<'_>, WriterRefused> {
        match confirmed {
            Some(_) => self.take_file_writer().await,
            None => self.file_writer().await,
        }
    }

    /// The library's file store, for reading attachment files: WebDAV when `WEBDAV_URL` is set, else Zotero
    /// Storage, unless `FILE_STORAGE` names one (`webdav`, `zotero`); Zotero Desktop's data directory on it.
    /// Always a store when `Ok` (the `Option` is the readers' "no store", kept for callers without one).
    pub async fn files(&self) -> Result<Option<&dyn FileStore>, FilesUnavailable> {
        Ok(Some(self.target.files().await?))
    }

    /// The same store as [`Self::files`], for changing files, or why not (as [`Self::writer`]).
    pub async fn file_writer(&self) -> Result<FileWriter<'_>, WriterRefused> {
        self.unconfirmed()?;
        self.take_file_writer().await
    }

    /// The grant's write scope, and write access to the call's library: for a tool that checks before it reads
    /// what it will change (nothing is handed out).
    pub fn may_write(&self) -> Result<(), WriterRefused> {
        self.target.may_write()
    }

    /// Lets the destructive write `proposal` describes go ahead, or says why not. Refused first when the write
    /// would be anyway (no one is asked to allow what cannot be done). Then the write goes ahead without a
    /// question when the proposal is not one to ask about, when `CONFIRM_WRITES` is off, or when the client
    /// cannot show a form (its tools' own dry runs are the guard there); otherwise only on the person's yes to
    /// this very call and summary, given through the protocol (`crate::confirm`).
    pub async fn confirm(&self, proposal: Proposal) -> Result<Confirmed<'_>, NotConfirmed> {
        self.may_write()?;
        self.ask(proposal).await?;
        Ok(Confirmed { ctx: self })
    }

    /// Lets a tool hand out what `proposal` describes (a feed link: read access to part of the library for
    /// whoever holds it), asked as [`Self::confirm`] asks, on a grant with the write scope; the library's own
    /// rights do not matter, since nothing in it changes.
    pub async fn confirm_handout(&self, proposal: Proposal) -> Result<(), NotConfirmed> {
        self.target.may_hand_out()?;
        self.ask(proposal).await
    }

    async fn ask(&self, proposal: Proposal) -> Result<(), NotConfirmed> {
        let services = self.services();
        if proposal.ask && services.config().confirm_writes && self.asking.can_ask {
            // A question asked on one route is answered on that route only.
            let route = self.target.route().await.map_err(WriterRefused::from)?;
            let questions = Questions {
                kv: services.platform().cache_kv.as_ref(),
                counters: services.platform().counters.as_ref(),
                user: &self.grant.user_id,
                route: &route,
                now_ms: services.clock().now_ms(),
            };
            questions.decide(self.record_tool(), &self.asking, &proposal).await?;
        }
        Ok(())
    }

    /// The library chosen for this call, when it is not the configured one.
    pub fn selected_library(&self) -> Option<SelectedLibrary> {
        self.target.selected_library()
    }

    /// What the call's route can do ([`Target::caps`]).
    pub fn caps(&self) -> Capabilities {
        self.target.caps()
    }

    /// Whether this call reads Zotero Desktop's local API (not the Web API).
    pub fn on_desktop(&self) -> bool {
        self.target.on_desktop()
    }

    /// Where the configured library keeps its files, from the settings alone (no request).
    pub fn configured_store(&self) -> Option<StoreKind> {
        self.target.configured_store()
    }

    /// The call's cache (`CACHE_KV` under the library's prefix: [`Target::cache`]).
    pub fn cache(&self) -> &dyn KvStore {
        self.target.cache()
    }

    /// The library's AI Search index ([`Target::semantic_index`]).
    pub fn semantic_index(&self) -> Result<Option<&SemanticIndex>, IndexSetupError> {
        self.target.semantic_index()
    }

    /// The route and library this call works on ([`Target::route`]).
    pub async fn route(&self) -> Result<String, ZoteroError> {
        self.target.route().await
    }

    /// The caller's undo journal on this call's route and library; `None` when `JOURNAL_DAYS` is 0.
    pub async fn journal(&self) -> Result<Option<Journal<'_>>, ZoteroError> {
        journal_of(&self.target, &self.grant).await
    }

    /// This call's undo journal entry id.
    pub fn journal_id(&self) -> &str {
        self.record.journal_id()
    }

    /// Marks this call as the undo of entry `id` (its own entry then says so).
    pub fn undoing(&self, id: &str) {
        self.record.undoing(id);
    }

    /// The WebDAV writer, when the call's library keeps its files there and may be written: for putting back
    /// files an undo journal entry kept. `None` for Zotero Storage, or without the write scope.
    pub fn kept_files_writer(&self) -> Option<&WebDavWriter> {
        self.may_write().ok()?;
        self.target.webdav_store()
    }

    /// Whether this call obtained a writer.
    pub fn writer_taken(&self) -> bool {
        self.record.writer_taken()
    }

    /// The record step: what the call changed becomes one undo journal entry; lines for the answer.
    pub(crate) async fn keep_journal(&self) -> Vec<String> {
        self.record.keep(&self.target, &self.grant).await
    }

    /// Runs `work` (the tool's call) keeping its undo journal entry ahead of its writes: each write of the
    /// call's writers waits at the target's gate ([`zotero_mcp_core::write_gate`]) until the entry's next step
    /// is stored: the entry itself, saying what the call is about to do, before its first write; then what
    /// landed since and what the waiting write is about to send. The step is saved beside `work`, on the same
    /// task. So a call the runtime stops at any point (a crash, a Worker over its limits) leaves an entry with
    /// what it wrote and what was on its way ([`crate::journal`]). A write with nothing new to record goes at
    /// once; without a journal (`JOURNAL_DAYS` 0, or KV refusing) no write waits. What lands is also saved
    /// while the call waits on something else (a read, a file transfer), so a listing shows it.
    pub async fn journaled<T>(&self, work: impl Future<Output = T>) -> T {
        let gate = self.target.gate();
        if self.services().config().journal_days > 0 {
            gate.hold();
        }
        let mut work = std::pin::pin!(work);
        let mut done: Option<T> = None;
        // The step being saved, and the writes it admits once stored: those waiting when it started.
        let mut saving: Option<(Saving<'_>, u64)> = None;
        let output = std::future::poll_fn(|cx| loop {
            if done.is_none() {
                if let Poll::Ready(output) = work.as_mut().poll(cx) {
                    done = Some(output);
                }
            }
            if saving.is_none() && done.is_none() {
                let waiting = gate.waiting();
                if (waiting && self.record.unsaved(&self.target)) || self.record.landed_unsaved(&self.target) {
                    saving = Some((Box::pin(self.record.flush(&self.target, &self.grant)), gate.issued()));
                } else if waiting {
                    gate.admit(gate.issued());
                    continue;
                }
            }
            let Some((step, upto)) = saving.as_mut() else {
                return match done.take() {
                    Some(output) => Poll::Ready(output),
                    None => Poll::Pending,
                };
            };
            if step.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            gate.admit(*upto);
            saving = None;
            if self.record.given_up() {
                gate.release();
            }
        })
        .await;
        gate.release();
        output
    }

    /// A line for the answer when Zotero's dialog was asked more than once in this call and every time allowed:
    /// the person chose "Allow", good for one write, and is told why they were asked again and how not to be.
    pub(crate) fn desktop_dialogs_note(&self) -> Option<String> {
        let call = self.target.local_call();
        let dialogs = call.dialogs();
        (dialogs > 1 && !call.denied()).then(|| {
            format!(
                "Zotero asked {dialogs} times whether zotero-mcp may change the library: its \"Allow\" is good for \
                 one write, and this call made several. \"Always Allow\" asks once for the whole run of the server."
            )
        })
    }

    fn record_tool(&self) -> &'static str {
        self.target.tool()
    }

    fn unconfirmed(&self) -> Result<(), WriterRefused> {
        match self.confirms {
            true => Err(WriterRefused::Unconfirmed { tool: self.record_tool() }),
            false => Ok(()),
        }
    }

    fn take_writer(&self) -> Result<&ZoteroWriter, WriterRefused> {
        self.may_write()?;
        let writer = self.target.zotero()?;
        self.record.take_writer();
        Ok(writer)
    }

    async fn take_file_writer(&self) -> Result<FileWriter<'_>, WriterRefused> {
        self.may_write()?;
        let writer = self.target.file_store_writer().await?;
        self.record.take_writer();
        Ok(writer)
    }
}

/// A step of the undo journal being saved while the call runs.
type Saving<'a> = Pin<Box<dyn Future<Output = ()> + 'a>>;

/// A session's context for a reading call of `name` on `library` (a resource, a prompt, the scheduled sync).
pub async fn reading(
    session: &Session,
    name: &'static str,
    library: Option<String>,
) -> Result<RequestContext, Unresolved> {
    RequestContext::resolve(session, Plan::reading(name, library)).await
}
