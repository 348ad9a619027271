//! What can go wrong talking to Zotero, each case with a message that says what to do next.

use crate::platform::HttpError;

/// Where to switch Zotero Desktop's local API on ([`super::local`]), for every message that needs to say it.
pub const SWITCH_ON: &str = "in Zotero, open Settings → Advanced and tick \"Allow other applications on this \
                             computer to communicate with Zotero\"";

#[derive(Debug, thiserror::Error)]
pub enum ZoteroError {
    /// The deployment's settings cannot work (an id that is not a number, …).
    #[error("Zotero is not configured correctly: {0}")]
    Config(String),

    /// A setting the server cannot work without is unset. How to set one depends on where the server runs (a
    /// Worker secret, an environment variable), so the message names only the variable; the shell adds the how
    /// (`zotero_mcp_server::config::SetupHint`).
    #[error("Zotero is not configured: {variable} is not set ({what})")]
    Unset { variable: &'static str, what: &'static str },

    /// `If-Unmodified-Since-Version` (or an object's version) was stale: someone changed the object or library
    /// since it was read. Never retried: the caller must read again and decide.
    #[error("{method} {path} was refused because the library changed since it was read (Zotero answered 412). Nothing was written by this request. Read the item or collection again and redo the change on the fresh copy")]
    Conflict { method: String, path: String },

    /// Zotero kept answering 429/503 after the bounded retries, or asked for a wait longer than we hold a request.
    #[error("Zotero is rate limiting or temporarily unavailable ({method} {path} answered {status}). Try again in {retry_after_secs} seconds")]
    Unavailable { method: String, path: String, status: u16, retry_after_secs: u64 },

    /// A write sent again after a 429/503 was refused (412, 404…): the first attempt may have been applied and
    /// its answer lost, so the refusal may be the write's own doing. The writer reads the objects back to tell.
    #[error(
        "{method} {path}: {reason}. The write may have been applied: read the objects back before sending it again"
    )]
    AnswerLost { method: String, path: String, status: u16, reason: String },

    /// A write's answer was lost, and reading the objects back could not tell whether it was applied (`read`
    /// says why: the read failed too, or the object changed otherwise meanwhile).
    /// `request` is the method and path, e.g. `POST /items`.
    #[error("whether {request} changed {} is unknown: its answer was lost ({lost}), and {read}. Read {} again to see whether the change is there before writing; do not resend the write blindly", .keys.join(", "), .keys.join(", "))]
    OutcomeUnknown { request: String, keys: Vec<String>, lost: String, read: String },

    /// Any other error status.
    #[error("Zotero API {method} {path} failed with {status}: {body}{hint}")]
    Api { method: String, path: String, status: u16, body: String, hint: &'static str },

    /// No response at all.
    #[error(transparent)]
    Transport(#[from] HttpError),

    /// Zotero Desktop's local API did not answer: Zotero is not running, or listens elsewhere.
    #[error(
        "Zotero Desktop does not answer at {url} ({reason}). Start Zotero and try again; if it is running, \
         {switch_on}, or set ZOTERO_LOCAL_URL to where it listens",
        switch_on = SWITCH_ON
    )]
    DesktopUnreachable { url: String, reason: String },

    /// Zotero runs, but its local API is switched off (it answers 403 "Local API is not enabled").
    #[error("Zotero Desktop is running but its local API is switched off ({url} answered 403): {switch_on}, then try again", switch_on = SWITCH_ON)]
    LocalApiOff { url: String },

    /// The local API at the address is another Zotero instance (another profile or machine) than the one this
    /// server first talked to: Zotero refused the request (412 on `Zotero-Server-ID`).
    #[error(
        "the Zotero answering at {url} is not the one this server started with (another profile?): nothing was \
         sent to it. Restart zotero-mcp so it reads this Zotero afresh"
    )]
    DesktopChanged { url: String },

    /// The person answered Deny in Zotero's authorization dialog. `part_way`: Zotero had already taken earlier
    /// writes of the same call (an "Allow" key is good for one write, so a call of several asks again), which
    /// stand; the call says what they were. Either way the call asks nothing more.
    #[error("{}", denied(*part_way))]
    LocalWriteDenied { part_way: bool },

    /// A response that does not have the shape Zotero documents.
    #[error("Zotero API {method} {path} returned a response this server cannot read: {reason}")]
    Decode { method: String, path: String, reason: String },
}

/// The words for a Deny: "nothing was written" is true only of the call's first write.
fn denied(part_way: bool) -> &'static str {
    if part_way {
        "Zotero asked again whether zotero-mcp may change the library (its \"Allow\" is good for one write, and \
         this call makes several), and the answer was Deny: this write was not made, and the call asked nothing \
         more. The call's earlier writes were made and stand. Do not retry unless the person asks; choosing \
         \"Always Allow\" lets a call make all its writes after one question"
    } else {
        "Zotero asked whether zotero-mcp may change the library, and the answer was Deny: nothing was written. Do \
         not retry unless the person asks; choosing \"Always Allow\" next time stops the question"
    }
}

impl ZoteroError {
    /// Whether the object or library changed under us (a 412).
    pub fn is_conflict(&self) -> bool {
        matches!(self, ZoteroError::Conflict { .. })
    }

    /// Whether a write that failed so may have been applied all the same: its answer was lost (no answer, a
    /// server error, an answer that could not be read, 503 until the retries ran out, a refusal of the request
    /// sent again), so only a read tells. A refusal Zotero gave at once (400, 403, 404, 412, 413…) means nothing
    /// was written, and so does a 429 (rate limited: turned away before anything was done).
    pub fn may_have_landed(&self) -> bool {
        match self {
            ZoteroError::Transport(_) | ZoteroError::AnswerLost { .. } | ZoteroError::Decode { .. } => true,
            ZoteroError::Unavailable { status, .. } => *status != 429,
            ZoteroError::Api { status, .. } => *status >= 500,
            _ => false,
        }
    }

    /// This error, once a read showed that the write it failed was not applied: a refusal of a request sent
    /// again is then only a refusal.
    pub(crate) fn not_applied(self) -> Self {
        match self {
            // Refused as stale, and read back unchanged: someone else's change, as a first-time 412 says.
            ZoteroError::AnswerLost { method, path, status: 412, .. } => ZoteroError::Conflict { method, path },
            ZoteroError::AnswerLost { method, path, status, reason } => ZoteroError::Api {
                method,
                path,
                status,
                body: format!("{reason}; read back, it was not applied"),
                hint: "",
            },
            other => other,
        }
    }

    /// Whether a write's outcome is unknown: its answer was lost and a read could not tell.
    pub fn is_outcome_unknown(&self) -> bool {
        matches!(self, ZoteroError::OutcomeUnknown { .. })
    }

    /// The HTTP status Zotero answered, when there was one.
    pub fn status(&self) -> Option<u16> {
        match self {
            ZoteroError::Conflict { .. } => Some(412),
            ZoteroError::Unavailable { status, .. }
            | ZoteroError::Api { status, .. }
            | ZoteroError::AnswerLost { status, .. } => Some(*status),
            _ => None,
        }
    }
}

/// A hint for the statuses whose cause is usually the same.
pub(crate) fn hint_for(status: u16) -> &'static str {
    match status {
        403 => " (the API key lacks access: check its permissions at zotero.org/settings/keys, including write access for changes)",
        404 => " (no such object in this library: check the key, or whether it was deleted)",
        428 => " (a version precondition is required: read the object first)",
        _ => "",
    }
}
