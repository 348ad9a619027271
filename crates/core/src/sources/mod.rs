//! Sources: where a new library item comes from, for the import tools.
//!
//! An import starts from what a person pastes: a DOI, an arXiv id, an ISBN, a PubMed or PMC id, or a link that
//! carries one of them. This module turns that text into an [`Identifier`] — [`detect`] for one, [`detect_all`]
//! for a list with an outcome per item — without any I/O, so it runs the same on the Worker and natively and is
//! tested with a plain `cargo test`. Looking an identifier up (CrossRef, arXiv, Open Library, PubMed) builds on
//! it and needs the platform's HTTP seam.
//!
//! What is accepted, and where this differs from the TypeScript server's `detectIdentifier`, is documented on
//! [`detect`] and [`detect_all`].
//!
//! An import may also start from a file another reference manager exported: [`ris::parse_ris`] reads RIS into
//! Zotero item data, entry by entry.

pub mod bibtex;
mod identifier;
pub mod payload;
pub mod resolve;
pub mod ris;

pub use self::bibtex::{parse_bibtex, BibEntry, BibError};
pub use self::identifier::{detect, detect_all, detect_each, Identifier, IdentifierError};
pub use self::payload::{fit_to_template, Payload};
pub use self::resolve::{
    bibliographic_candidates, open_access_pdf, resolve, Endpoints, Reference, RegistryNotes, ResolveError, Source,
    SourceSettings, Update,
};
pub use self::ris::{parse_ris, RisEntry, RisError};
