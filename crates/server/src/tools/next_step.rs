//! The tool that takes the next step a core error asks for. The core crate is shared with callers that have no
//! tools, so its messages say what failed and what is missing in its own terms ("quote it as the page's text
//! has it", "create the item from its fields"); a tool shows them followed by which of this server's tools does
//! that, chosen by the error's variant (`crates/core/tests/no_server_words.rs` keeps tool names out of
//! the core).

use std::fmt::Display;

use zotero_mcp_core::attachment::annotate::AnnotateError;
use zotero_mcp_core::attachment::write::WriteError;
use zotero_mcp_core::attachment::AttachmentError;
use zotero_mcp_core::pdf::PdfError;
use zotero_mcp_core::sources::ResolveError;
use zotero_mcp_core::webdav::ArchiveError;

/// A core error whose next step one of this server's tools can take.
pub trait NextStep: Display {
    /// What follows the message, naming the tool (with its own leading punctuation), when the message asks for
    /// something a tool does.
    fn next_step(&self) -> Option<String>;

    /// The message as the model is shown it: the core's words, then the tool that does what they ask.
    fn with_next_step(&self) -> String
    where
        Self: Sized,
    {
        shown(self)
    }
}

/// [`NextStep::with_next_step`], written once for every error type rather than once per type.
fn shown(error: &dyn NextStep) -> String {
    let mut message = error.to_string();
    if let Some(step) = error.next_step() {
        message.push_str(&step);
    }
    message
}

impl NextStep for zotero_mcp_core::zotero::ZoteroError {
    /// An unknown outcome asks for the objects to be read: the tool that reads one.
    fn next_step(&self) -> Option<String> {
        match self {
            zotero_mcp_core::zotero::ZoteroError::OutcomeUnknown { keys, .. } => {
                Some(format!(" (zotero_get_item reads each: {})", keys.join(", ")))
            }
            _ => None,
        }
    }
}

/// After "read the page's text": the tool that shows it.
const READ_THE_PAGE: &str = " (read the page with zotero_read_attachment)";

impl NextStep for AnnotateError {
    fn next_step(&self) -> Option<String> {
        match self {
            AnnotateError::NoText { .. } | AnnotateError::NotFound { .. } | AnnotateError::Partial { .. } => {
                Some(READ_THE_PAGE.into())
            }
            AnnotateError::Pdf(error) => error.next_step(),
            AnnotateError::PageOutOfRange { .. } | AnnotateError::NoPage => None,
        }
    }
}

impl NextStep for PdfError {
    fn next_step(&self) -> Option<String> {
        // Its advice points to Zotero's full-text index, which zotero_search reads.
        matches!(self, PdfError::OverBudget { .. }).then(|| "; zotero_search finds words inside indexed PDFs".into())
    }
}

impl NextStep for ArchiveError {
    fn next_step(&self) -> Option<String> {
        matches!(self, ArchiveError::OverLimit { .. }).then(|| " (zotero_search finds words in indexed files)".into())
    }
}

impl NextStep for AttachmentError {
    fn next_step(&self) -> Option<String> {
        match self {
            AttachmentError::Archive(error) => error.next_step(),
            AttachmentError::Pdf(error) => error.next_step(),
            _ => None,
        }
    }
}

impl NextStep for ResolveError {
    /// Every variant ends with "create the item from its fields".
    fn next_step(&self) -> Option<String> {
        Some(" with zotero_create_items".into())
    }
}

impl NextStep for WriteError {
    fn next_step(&self) -> Option<String> {
        match self {
            WriteError::Stranded { key, .. } => Some(format!(
                " Delete it with zotero_delete_attachment (permanent=true), or call zotero_put_attachment with \
                 replaceAttachmentKey={key} to give it its file."
            )),
            WriteError::Archive(error) => error.next_step(),
            WriteError::OutcomeUnknown { key, .. } => {
                Some(format!(" zotero_read_attachment with itemKey={key} and mode=\"info\" shows its md5 now."))
            }
            // Its message ends with "nothing was written"; what refused it (not a stored file, no key) needs no
            // tool to fix.
            WriteError::Refused(_) | WriteError::Invalid { .. } | WriteError::Interrupted { .. } => None,
        }
    }
}

/// After a stored file whose checksum, name or type could not be recorded: the call that records it. The type is
/// named because a call without it keeps the type the item has, which may be the stale one.
pub fn record_again(key: &str, content_type: &str) -> String {
    format!(" zotero_put_attachment with replaceAttachmentKey={key}, the same file and contentType={content_type} does that.")
}

#[cfg(test)]
mod tests {
    use zotero_mcp_core::files::StoreKind;
    use zotero_mcp_core::pdf::{FILE_TOO_LARGE_ADVICE, TOO_LARGE_ADVICE};
    use zotero_mcp_core::sources::Source;

    use super::*;

    #[test]
    fn every_failed_lookup_ends_with_the_tool_that_creates_the_item() {
        let what = || "DOI 10.1/x".to_owned();
        let errors = [
            ResolveError::NotFound { sources: "CrossRef and DataCite".into(), what: what() },
            ResolveError::Status { service: Source::CrossRef, what: what(), status: 503 },
            ResolveError::Status { service: Source::CrossRef, what: what(), status: 400 },
            ResolveError::Transport { service: Source::CrossRef, what: what(), reason: "reset".into() },
            ResolveError::Timeout { service: Source::CrossRef, what: what(), after_ms: 10 },
            ResolveError::TooLarge { service: Source::CrossRef, what: what(), limit: 10 },
            ResolveError::Unparseable { service: Source::CrossRef, what: what(), reason: "eof".into() },
        ];
        for error in errors {
            let shown = error.with_next_step();
            assert!(shown.ends_with("create the item from its fields with zotero_create_items"), "{shown}");
        }
    }

    #[test]
    fn a_passage_not_found_points_to_the_tool_that_reads_the_page() {
        let error = AnnotateError::NotFound { where_: "on page 2".into() };
        assert_eq!(
            error.with_next_step(),
            "that passage was not found on page 2; quote it exactly as the page's text has it, at least a few \
             words (read the page with zotero_read_attachment)"
        );
        let partial = AnnotateError::Partial { where_: "on page 2".into(), share: 50, matched: "x".into() };
        assert!(partial.with_next_step().ends_with("has it (read the page with zotero_read_attachment)"));
        assert!(AnnotateError::NoText { kind: "highlight" }.with_next_step().contains("zotero_read_attachment"));
        assert_eq!(AnnotateError::NoPage.with_next_step(), AnnotateError::NoPage.to_string());
    }

    #[test]
    fn files_over_a_limit_point_to_the_search_over_zoteros_index() {
        let zip = AttachmentError::Archive(ArchiveError::OverLimit { detail: "5 entries".into() });
        assert_eq!(
            zip.with_next_step(),
            "the attachment's zip on WebDAV is over this server's limit (5 entries); read the text Zotero indexed \
             instead (zotero_search finds words in indexed files)"
        );
        for advice in [FILE_TOO_LARGE_ADVICE, TOO_LARGE_ADVICE] {
            let pdf = PdfError::OverBudget { limit: "file size", detail: "big".into(), advice };
            let shown = AttachmentError::Pdf(pdf.clone()).with_next_step();
            assert!(shown.ends_with("; zotero_search finds words inside indexed PDFs"), "{shown}");
            assert_eq!(AnnotateError::Pdf(pdf).with_next_step(), shown);
        }
        let other = AttachmentError::NoFileInStore { key: "ABCD2345".into(), store: StoreKind::WebDav };
        assert_eq!(other.with_next_step(), other.to_string());
    }

    #[test]
    fn an_item_left_without_its_file_names_the_two_ways_to_finish() {
        let error = WriteError::Stranded {
            step: "Uploading the file's archive (.zip) to WebDAV",
            cause: "403".into(),
            key: "ABCD2345".into(),
            reason: "500".into(),
        };
        let shown = error.with_next_step();
        assert!(shown.contains("could not be removed (500)"), "{shown}");
        assert!(shown.ends_with(
            "Delete it with zotero_delete_attachment (permanent=true), or call zotero_put_attachment with \
             replaceAttachmentKey=ABCD2345 to give it its file."
        ));
    }
}
