//! What a call is, before anything is sent: pure data from the tool's declaration, its parsed input and the
//! request. [`super::Target::resolve`] turns it into what the call works on.

use crate::confirm::Asking;

/// Whether a tool only reads the library or may change it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Read,
    /// Needs the `zotero:write` scope; the pipeline checks it before the arguments are even parsed.
    Write,
    /// Reads with some actions and writes with others (one tool, an `action` argument). Every call is let
    /// through, so the tool itself takes a writer only for a writing action, and the writer is refused on a grant
    /// without `zotero:write`. Clients see `readOnlyHint: false`, because the tool can write.
    Mixed,
}

/// One call, as planned: which tool (or resource, prompt, job), whether it may write, whether its input is one
/// the person is asked about first, the library it names, and what the client said about asking.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The tool's name, or the resource, prompt or job's, for the wording of a refusal and the journal.
    pub tool: &'static str,
    pub access: Access,
    /// The tool declared this call one to confirm (`Tool::needs_confirmation`): its writers come only from
    /// [`crate::context::RequestContext::confirm`].
    pub confirms: bool,
    /// The call's `library` argument (`users/<id>`, `groups/<id>` or a group's name); `None`: the configured one.
    pub library: Option<String>,
    /// What the client said about asking the person.
    pub asking: Asking,
}

impl Plan {
    /// A call that reads only (a resource, a prompt, the scheduled sync), on `library` or the configured one.
    pub fn reading(name: &'static str, library: Option<String>) -> Self {
        Self { tool: name, access: Access::Read, confirms: false, library, asking: Asking::default() }
    }

    /// Whether the call may write at all (its tool is not a reading one).
    pub fn may_write(&self) -> bool {
        self.access != Access::Read
    }
}
