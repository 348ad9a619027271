//! What can stop reading a PDF, each with what the caller can do about it.

/// A PDF that could not be read, or not within the limits.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PdfError {
    /// The bytes are not a PDF at all (no `%PDF-` header near the start).
    #[error(
        "this file is not a PDF (it does not start with %PDF-); check that the attachment is the PDF and not, say, \
         an HTML error page saved in its place"
    )]
    NotPdf,
    /// A PDF so damaged that not even its pages could be found.
    #[error(
        "this PDF is damaged beyond repair ({reason}); open it in Zotero or a PDF reader, and if that works, save \
         a new copy and attach that"
    )]
    Damaged { reason: String },
    /// Encrypted with a password other than the empty one.
    #[error(
        "this PDF is protected by a password, which this server does not have; remove the protection (print to a \
         new PDF) or use Zotero's own full-text index of it"
    )]
    PasswordRequired,
    /// The pages asked for have no text, only images: a scan.
    #[error(
        "these pages have no text layer, only images (a scan); run OCR on the PDF (Zotero can show it, and most \
         PDF tools can add a text layer), or read Zotero's own full-text index if it has one"
    )]
    NoTextLayer,
    /// A limit that keeps one document from taking the whole isolate.
    #[error("this PDF is over this server's {limit} limit ({detail}); {advice}")]
    OverBudget {
        /// Which limit (a short name, e.g. "memory estimate", "decompressed stream size").
        limit: &'static str,
        /// The numbers.
        detail: String,
        /// What the caller can do instead.
        advice: &'static str,
    },
}

/// What to do when a whole file is too large to open here (a smaller page range would not help: the file is
/// parsed whole before any page is read). A caller with a search over Zotero's index says so after the message.
pub const FILE_TOO_LARGE_ADVICE: &str = "use Zotero's own full-text index of the attachment instead (Zotero \
     Desktop builds the index), or attach a smaller copy of the file";

/// What to do when the pages asked for are too much to read in one call.
pub const TOO_LARGE_ADVICE: &str =
    "ask for a smaller page range, or use Zotero's own full-text index of the attachment";
