//! Metadata resolution for imports: an [`Identifier`] in, Zotero item data out, from the registry that holds the
//! record (the table below).
//!
//! | Identifier | Source | Request |
//! |---|---|---|
//! | DOI | CrossRef, then DataCite when CrossRef answers 404 | `GET {crossref}/works/{doi}[?mailto=]`, `GET {datacite}/dois/{doi}` |
//! | arXiv id | arXiv | `GET {arxiv}/api/query?id_list={id}[vN]&max_results=1` (Atom) |
//! | ISBN | Open Library | `GET {open_library}/api/books?bibkeys=ISBN:{isbn13}&format=json&jscmd=data` |
//! | PMID | PubMed | `GET {eutils}/efetch.fcgi?db=pubmed&id={pmid}&retmode=xml[&tool=zotero-mcp&email=]` |
//! | PMCID | PubMed | `GET {eutils}/elink.fcgi?dbfrom=pmc&db=pubmed&linkname=pmc_pubmed&id={digits}&retmode=json[&tool=…&email=]`, then the PMID's EFetch |
//! | DOI (PDF only) | OpenAlex | `GET {openalex}/works/doi:{doi}[?mailto=]` ([`open_access_pdf`]) |
//!
//! Every request is a single attempt with `Accept` and the settings' `User-Agent`, a time limit
//! ([`SourceSettings::timeout_ms`], through the clock seam) and a 2 MiB cap on the body. With a `contact_email`,
//! CrossRef and OpenAlex get `mailto=` and E-utilities `tool=zotero-mcp&email=`: each asks for it and serves such
//! callers from a politer pool.
//!
//! Every record is built so Zotero accepts it as it is: a field is set only when the item type has it (Zotero's
//! schema, `zotero::schema`), and a DOI, ISSN or ISBN the type has no field for goes into `extra` as a `DOI: …`
//! line. Dates are ISO (`2021-04-02`, `2015`). Markup in titles and abstracts (JATS, HTML, MathML) is dropped.
//!
//! ## CrossRef (`message` of `/works/{doi}`)
//!
//! | CrossRef | Zotero |
//! |---|---|
//! | `type` | `itemType`: journal-article → journalArticle; proceedings-article → conferencePaper; book-chapter, book-section, book-part → bookSection; book, monograph, edited-book, reference-book → book; posted-content → preprint; dataset → dataset; report → report; dissertation → thesis; reference-entry → encyclopediaArticle; anything else → document (upstream: journalArticle) |
//! | `title[0]`, `subtitle[0]` | `title`, `Title: Subtitle`, markup dropped |
//! | `author`, `editor` | `author`, `editor` (`contributor` where the type has no editor); `given`/`family`, or `name` for an organisation |
//! | `container-title[0]` | `publicationTitle` (journal article), `proceedingsTitle` (conference paper), `bookTitle` (book section), `encyclopediaTitle` (encyclopedia article), `series` (book), `seriesTitle` (report) |
//! | `short-container-title[0]` | `journalAbbreviation` (journal article) |
//! | `event.name`, `event.location` | `conferenceName`, `place` (conference paper) |
//! | `issued.date-parts[0]` | `date`, zero-padded: `2021-04-02` |
//! | `volume`, `issue`, `page` | `volume`, `issue`, `pages` where the type has them |
//! | `publisher` | `publisher`; `institution` (report); `university` (thesis, after `institution[0].name`); `repository` (dataset; preprint after `institution[0].name`) |
//! | `publisher-location` | `place` (when no event location) |
//! | `DOI` | `DOI` (every regular type has one in Zotero's current schema) |
//! | `ISBN` (all) | `ISBN`, space-separated (book, book section, conference paper, encyclopedia article) |
//! | `ISSN` (all) | `ISSN`, comma-separated, where the type has it (journal article, book, chapter, report, thesis…), else `ISSN: …` in `extra` |
//! | `resource.primary.URL`, else `URL` | `url` |
//! | `language` | `language` |
//! | `abstract` | `abstractNote`: JATS dropped, a line per paragraph, a leading "Abstract" heading dropped |
//!
//! ## DataCite (`data.attributes` of `/dois/{doi}`, JSON:API)
//!
//! | DataCite | Zotero |
//! |---|---|
//! | `types.resourceTypeGeneral` | `itemType`: Dataset, Collection → dataset; JournalArticle, DataPaper → journalArticle; Preprint → preprint; Software → computerProgram; Report → report; Dissertation → thesis; Book → book; BookChapter → bookSection; ConferencePaper → conferencePaper; anything else → document |
//! | `titles` (the first without `titleType`, and a `Subtitle`) | `title` |
//! | `creators` | `author` (`programmer` for software): `givenName`/`familyName`, `name` split at its comma for a Personal name without them, `name` whole for an Organizational one |
//! | `contributors` with `contributorType` Editor | `editor` (`contributor` where the type has none) |
//! | `publisher` (text, or `publisher.name`) | `repository` (dataset, preprint), `company` (software), `institution` (report), `university` (thesis), `publisher` (others that have it) |
//! | `dates` Issued, else `publicationYear` | `date` (the day of a timestamp) |
//! | `container.title` | `publicationTitle` (journal article) |
//! | `descriptions` Abstract | `abstractNote`, whitespace collapsed |
//! | `language`, `url`, `version`, `rightsList[0].rights` | `language`, `url`, `versionNumber` (dataset, software), `rights` |
//! | `doi` | `DOI`, else `DOI: …` in `extra` |
//!
//! ## arXiv (the Atom `<entry>`)
//!
//! | arXiv | Zotero |
//! |---|---|
//! | — | `itemType` preprint, `repository` "arXiv" |
//! | `<title>` | `title`, whitespace collapsed |
//! | `<author><name>` | `author`, split at the last space (one word: a single-field name) |
//! | `<summary>` | `abstractNote`, whitespace collapsed |
//! | `<published>` | `date`, `YYYY-MM-DD` (the first version's) |
//! | the id asked for | `archiveID` `arXiv:{id}`; `url` `https://arxiv.org/abs/{id}[vN]`; `DOI` `10.48550/arXiv.{id}` (arXiv's DOI for the preprint, as Zotero's arXiv translator sets it) |
//! | `<arxiv:primary_category>` | `extra` `arXiv:{id} [{category}]` |
//! | `<arxiv:journal_ref>`, `<arxiv:doi>` | `extra` `Journal reference: …` and `Published DOI: …`: the item is the preprint, so the journal version's DOI is kept but not made the item's |
//! | — | `pdf_url` `https://arxiv.org/pdf/{id}[vN]` |
//!
//! An empty feed, or arXiv's error entry (its `<id>` under `http://arxiv.org/api/errors`), is "no record".
//!
//! ## Open Library (`ISBN:{isbn13}` of `jscmd=data`)
//!
//! | Open Library | Zotero |
//! |---|---|
//! | — | `itemType` book |
//! | `title`, `subtitle` | `title`, `Title: Subtitle` |
//! | `authors[].name` | `author`, split at the last space |
//! | `publishers[0].name`, `publish_places[0].name` | `publisher`, `place` |
//! | `publish_date` | `date`, as given |
//! | `number_of_pages` | `numPages` |
//! | `url` | `url` |
//! | the ISBN asked for | `ISBN`: `{isbn13} {isbn10}` (both forms, from the identifier, not the record's list) |
//!
//! An empty object is "no record".
//!
//! ## PubMed (EFetch `<PubmedArticle>`)
//!
//! EFetch's XML rather than ESummary's JSON: one request gives the abstract and the structured author names, which
//! ESummary lacks.
//!
//! | PubMed | Zotero |
//! |---|---|
//! | — | `itemType` journalArticle |
//! | `ArticleTitle` | `title`, markup dropped, one final `.` dropped (MEDLINE ends every title with one; Zotero's PubMed import drops it too) |
//! | `AuthorList/Author` | `author`: `LastName` with `ForeName` (else `Initials`); `CollectiveName` as a single-field name |
//! | `Abstract/AbstractText` | `abstractNote`, a line per section, `LABEL: ` before labelled ones |
//! | `Journal/Title`, `Journal/ISOAbbreviation` | `publicationTitle`, `journalAbbreviation` |
//! | `JournalIssue/Volume`, `Issue`, `Pagination/MedlinePgn` | `volume`, `issue`, `pages` (`1260-4` written out as `1260-1264`) |
//! | `JournalIssue/PubDate` | `date`: `Year`, `Month` (name or number), `Day` as `YYYY-MM-DD`; a `MedlineDate` as given |
//! | `Journal/ISSN`, `Language` | `ISSN`, `language` |
//! | `ArticleId[@IdType=doi]`, else `ELocationID[@EIdType=doi]` | `DOI` |
//! | PMID, `ArticleId[@IdType=pmc]` | `extra` `PMID: …` and `PMCID: PMC…`; `url` `https://pubmed.ncbi.nlm.nih.gov/{pmid}/` |
//!
//! A PMCID is first linked to its PMID (ELink `pmc_pubmed`); an EFetch answer without a `<PubmedArticle>` is "no
//! record".
//!
//! ## OpenAlex (`/works/doi:{doi}`), for [`open_access_pdf`]
//!
//! `best_oa_location.pdf_url`; else `open_access.oa_url` only when its path ends in `.pdf` (it is often a landing
//! page, which an attachment download would store as HTML). Any failure is "no PDF": it never fails an import.

mod arxiv;
mod crossref;
mod datacite;
mod fetch;
mod item;
mod openalex;
mod openlibrary;
mod pubmed;
#[cfg(test)]
mod tests;
mod xml;

use std::fmt;

use serde_json::{Map, Value};

use super::Identifier;
use crate::platform::{Clock, HttpClient};

/// Where each source lives; tests and self-hosters point them elsewhere.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoints {
    pub crossref: String,
    pub datacite: String,
    pub arxiv: String,
    pub open_library: String,
    /// The E-utilities base, up to and without `/efetch.fcgi`.
    pub eutils: String,
    pub openalex: String,
}

impl Default for Endpoints {
    fn default() -> Self {
        Endpoints {
            crossref: "https://api.crossref.org".into(),
            datacite: "https://api.datacite.org".into(),
            arxiv: "https://export.arxiv.org".into(),
            open_library: "https://openlibrary.org".into(),
            eutils: "https://eutils.ncbi.nlm.nih.gov/entrez/eutils".into(),
            openalex: "https://api.openalex.org".into(),
        }
    }
}

/// How the sources are asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceSettings {
    pub endpoints: Endpoints,
    /// Joins CrossRef's and OpenAlex's polite pools (`mailto=`) and identifies the caller to NCBI (`email=`).
    pub contact_email: Option<String>,
    pub user_agent: String,
    /// The longest wait for one response, in milliseconds.
    pub timeout_ms: u64,
}

impl Default for SourceSettings {
    fn default() -> Self {
        SourceSettings {
            endpoints: Endpoints::default(),
            contact_email: None,
            user_agent: "zotero-mcp (https://github.com/yousiki/zotero-mcp)".into(),
            timeout_ms: 10_000,
        }
    }
}

/// The registry a record came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Source {
    CrossRef,
    DataCite,
    Arxiv,
    OpenLibrary,
    PubMed,
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Source::CrossRef => "CrossRef",
            Source::DataCite => "DataCite",
            Source::Arxiv => "arXiv",
            Source::OpenLibrary => "Open Library",
            Source::PubMed => "PubMed",
        })
    }
}

/// A resolved record.
#[derive(Debug, Clone, PartialEq)]
pub struct Reference {
    /// Zotero item data as `POST /items` takes it: `itemType`, `title`, `creators` and the type's fields (no tags
    /// or collections).
    pub data: Map<String, Value>,
    pub source: Source,
    /// A PDF of the work, when one is known to be free to fetch.
    pub pdf_url: Option<String>,
    /// What the registry records about the work since it appeared (CrossRef and arXiv; empty elsewhere).
    pub notes: RegistryNotes,
}

/// What a registry records about a work after its publication: notices that update it (CrossRef's `updated-by`:
/// retractions, corrections, expressions of concern, withdrawals) and its other versions (`relation`'s
/// `is-preprint-of` / `has-preprint`; arXiv's `<arxiv:doi>` of the published article).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RegistryNotes {
    pub updates: Vec<Update>,
    /// DOIs of the published version of a preprint.
    pub published_as: Vec<String>,
    /// DOIs of a published work's preprints.
    pub preprints: Vec<String>,
}

/// One notice updating a work, as the registry lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Update {
    /// As CrossRef names it: `retraction`, `correction`, `expression_of_concern`, `withdrawal`, `erratum`, …
    pub kind: String,
    /// The notice's own DOI.
    pub notice_doi: Option<String>,
    /// When the notice appeared, ISO (`2010-02-02`).
    pub date: Option<String>,
    /// Who asserted it: `publisher`, or `retraction-watch` (the Retraction Watch database CrossRef serves).
    pub source: Option<String>,
}

impl Update {
    /// Whether the notice withdraws the work (a retraction, withdrawal or removal), rather than amends it.
    pub fn withdraws(&self) -> bool {
        matches!(self.kind.as_str(), "retraction" | "withdrawal" | "removal" | "partial_retraction")
    }
}

impl Reference {
    pub fn item_type(&self) -> &str {
        self.data.get("itemType").and_then(Value::as_str).unwrap_or_default()
    }

    pub fn title(&self) -> &str {
        self.data.get("title").and_then(Value::as_str).unwrap_or_default()
    }
}

/// Why no record came back. Each message says what the person can do next, ending with the way that always
/// remains: creating the item from its fields (a caller that can do that says how, after the message).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResolveError {
    /// Every source asked answered that it has no such record.
    #[error("{sources} {have} no record for {what}; check it, or create the item from its fields",
        have = if sources.contains(" and ") { "have" } else { "has" })]
    NotFound { sources: String, what: String },
    /// The source answered with an error status other than 404.
    #[error(
        "{service} answered HTTP {status} for {what}; {advice}",
        advice = if *status == 429 || *status >= 500 {
            "it may be busy, so try again in a minute, or create the item from its fields"
        } else {
            "check the identifier, or create the item from its fields"
        }
    )]
    Status { service: Source, what: String, status: u16 },
    /// No response arrived: DNS, TLS, a reset connection.
    #[error("{service} could not be reached for {what} ({reason}); try again, or create the item from its fields")]
    Transport { service: Source, what: String, reason: String },
    /// No response within the time limit.
    #[error(
        "{service} did not answer for {what} within {after_ms} ms; try again later, or create the item from its fields"
    )]
    Timeout { service: Source, what: String, after_ms: u64 },
    /// The response was longer than any record of the source should be.
    #[error("{service}'s answer for {what} is larger than {limit} bytes, more than any record; create the item from its fields")]
    TooLarge { service: Source, what: String, limit: usize },
    /// The response is not the document the source's API describes.
    #[error("{service}'s answer for {what} could not be read ({reason}); try again later, or create the item from its fields")]
    Unparseable { service: Source, what: String, reason: String },
}

/// Looks `id` up in the source that holds its kind and returns the record as Zotero item data. An arXiv record
/// names its own PDF; a DOI's open-access PDF is a separate request ([`open_access_pdf`]), which a caller makes
/// only for the items it creates.
pub async fn resolve(
    http: &dyn HttpClient,
    clock: &dyn Clock,
    id: &Identifier,
    settings: &SourceSettings,
) -> Result<Reference, ResolveError> {
    match id {
        Identifier::Doi(doi) => match crossref::resolve(http, clock, doi, settings).await? {
            Some(reference) => Ok(reference),
            None => datacite::resolve(http, clock, doi, settings).await?.ok_or_else(|| ResolveError::NotFound {
                sources: "CrossRef and DataCite".into(),
                what: format!("DOI {doi}"),
            }),
        },
        Identifier::Arxiv { id, version } => arxiv::resolve(http, clock, id, *version, settings).await,
        Identifier::Isbn { isbn13, isbn10 } => {
            openlibrary::resolve(http, clock, isbn13, isbn10.as_deref(), settings).await
        }
        Identifier::Pmid(pmid) => pubmed::resolve_pmid(http, clock, pmid, None, settings).await,
        Identifier::Pmcid(pmcid) => pubmed::resolve_pmcid(http, clock, pmcid, settings).await,
    }
}

/// A free PDF of the work with this DOI, as OpenAlex knows it (see the module documentation); `None` for no PDF,
/// and for any failure, which is logged nowhere and never fails the import.
pub async fn open_access_pdf(
    http: &dyn HttpClient,
    clock: &dyn Clock,
    doi: &str,
    settings: &SourceSettings,
) -> Option<String> {
    openalex::pdf_url(http, clock, doi, settings).await
}

/// Candidates CrossRef's bibliographic search finds for a formatted reference (`query.bibliographic`), best
/// first, each with CrossRef's relevance score. A score ranks candidates for one query only: whether one is the
/// work cited is for the caller to judge from the fields ([`crate::refcheck::confidence`]).
pub async fn bibliographic_candidates(
    http: &dyn HttpClient,
    clock: &dyn Clock,
    reference: &str,
    rows: usize,
    settings: &SourceSettings,
) -> Result<Vec<(Reference, f64)>, ResolveError> {
    crossref::bibliographic(http, clock, reference, rows, settings).await
}

/// `?mailto=…` for the sources with a polite pool, or nothing.
fn mailto(settings: &SourceSettings) -> String {
    match settings.contact_email.as_deref().map(str::trim).filter(|email| !email.is_empty()) {
        Some(email) => format!("?mailto={}", fetch::query_value(email)),
        None => String::new(),
    }
}
