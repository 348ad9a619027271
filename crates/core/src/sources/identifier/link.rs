//! Identifiers in URLs: doi.org, arxiv.org, PubMed and PMC links by their site, any other link by a DOI in its
//! path or query (publishers put it there: `https://link.springer.com/article/10.1007/s00285-020-01523-2`).
//!
//! Paths are percent-decoded before they are read (`https://doi.org/10.1000%2Fabc`). A link to one of the sites
//! below may be written without its scheme (`doi.org/10.1000/abc`); any other needs `http://` or `https://`, or
//! it is read as text.

use percent_encoding::percent_decode_str;
use url::Url;

use crate::net::parse_url;

use super::{arxiv, doi, pubmed, strip_prefix_ignore_case, trim_end, Identifier, IdentifierError};

/// The sites whose links are recognised without a scheme (each with its subdomains: `dx.doi.org`,
/// `export.arxiv.org`, `pubmed.ncbi.nlm.nih.gov`, `pmc.ncbi.nlm.nih.gov`, `www.ncbi.nlm.nih.gov`).
const KNOWN_SITES: &[&str] = &["doi.org", "arxiv.org", "ncbi.nlm.nih.gov"];

/// The arxiv.org paths an id follows: the abstract page, the PDF, the HTML rendering.
const ARXIV_VIEWS: &[&str] = &["abs/", "pdf/", "html/"];

/// Last path segments that publishers add after a DOI for one view of the article: not part of the DOI.
const PUBLISHER_VIEWS: &[&str] = &["/abstract", "/full", "/fulltext", "/pdf", "/epdf", "/summary"];

/// Whether `text` is meant as a link: `http://` or `https://`, or a known site without a scheme.
pub(super) fn is_link(text: &str) -> bool {
    has_scheme(text) || known_site_without_scheme(text)
}

/// The identifier in the link `text`.
pub(super) fn detect(text: &str) -> Result<Identifier, IdentifierError> {
    let url = parse(text)?;
    let host = url.host_str().unwrap_or_default();
    let path = percent_decode_str(url.path()).decode_utf8_lossy();
    let path = path.trim_start_matches('/');
    if on_site(host, "doi.org") {
        return doi_link(text, path);
    }
    if on_site(host, "arxiv.org") {
        return arxiv_link(text, path);
    }
    if on_site(host, "pubmed.ncbi.nlm.nih.gov") {
        return pubmed::pmid(first_segment(path)).ok_or_else(|| pubmed::pmid_malformed(text));
    }
    if on_site(host, "ncbi.nlm.nih.gov") {
        if let Some(found) = ncbi_link(path) {
            return Ok(found);
        }
    }
    publisher_doi(host, path, &url)
        .map(Identifier::Doi)
        .ok_or_else(|| IdentifierError::UrlWithoutIdentifier { input: text.to_owned() })
}

fn has_scheme(text: &str) -> bool {
    strip_prefix_ignore_case(text, "http://").is_some() || strip_prefix_ignore_case(text, "https://").is_some()
}

fn known_site_without_scheme(text: &str) -> bool {
    let Some((host, _)) = text.split_once('/') else { return false };
    let host = host.to_ascii_lowercase();
    KNOWN_SITES.iter().any(|site| on_site(&host, site))
}

fn parse(text: &str) -> Result<Url, IdentifierError> {
    let parsed = if has_scheme(text) { parse_url(text) } else { parse_url(&format!("https://{text}")) };
    parsed.map_err(|error| IdentifierError::InvalidUrl { input: text.to_owned(), reason: error.to_string() })
}

/// Whether `host` is `site` or one of its subdomains (`Url` has lowercased it already).
fn on_site(host: &str, site: &str) -> bool {
    host.strip_suffix(site).is_some_and(|rest| rest.is_empty() || rest.ends_with('.'))
}

fn first_segment(path: &str) -> &str {
    path.split('/').next().unwrap_or_default()
}

/// A doi.org link: its whole path is the DOI.
fn doi_link(text: &str, path: &str) -> Result<Identifier, IdentifierError> {
    doi::parse(trim_end(path)).map(Identifier::Doi).ok_or_else(|| doi::malformed(text))
}

/// An arxiv.org link: `/abs/<id>`, `/pdf/<id>` (with or without `.pdf`) or `/html/<id>`.
fn arxiv_link(text: &str, path: &str) -> Result<Identifier, IdentifierError> {
    let id = ARXIV_VIEWS.iter().find_map(|view| path.strip_prefix(view));
    let id = id.map(|id| id.trim_end_matches('/')).map(|id| id.strip_suffix(".pdf").unwrap_or(id));
    id.and_then(arxiv::parse).ok_or_else(|| arxiv::malformed(text))
}

/// A link on NCBI's site: `/pubmed/<pmid>` (the old PubMed address), `/pmc/articles/PMC…` (the old PMC address)
/// or `/articles/PMC…` (pmc.ncbi.nlm.nih.gov, PMC's current address).
fn ncbi_link(path: &str) -> Option<Identifier> {
    let segments: Vec<&str> = path.split('/').collect();
    match segments.as_slice() {
        ["pubmed", pmid, ..] => pubmed::pmid(pmid),
        ["pmc", "articles", pmcid, ..] | ["articles", pmcid, ..] => pubmed::pmcid(pmcid),
        _ => None,
    }
}

/// A DOI in a publisher's link: in the path from a segment that starts one, or as a whole query value
/// (`?doi=10.…`, `?id=10.…`).
fn publisher_doi(host: &str, path: &str, url: &Url) -> Option<String> {
    let in_path = std::iter::once(0)
        .chain(path.match_indices('/').map(|(at, _)| at + 1))
        .filter_map(|at| path.get(at..))
        .find(|rest| doi::prefix_len(rest).is_some());
    if let Some(rest) = in_path {
        return doi::parse(trim_end(without_views(host, rest)));
    }
    url.query_pairs().find_map(|(_, value)| doi::parse(trim_end(value.trim())))
}

/// A DOI path without what publishers add after the DOI: a view segment (`/full`), a `.pdf` extension, and on
/// bioRxiv and medRxiv the version and view (`10.1101/2020.03.01.123456v2.full.pdf`), which their DOIs lack.
fn without_views<'a>(host: &str, path: &'a str) -> &'a str {
    let path = path.trim_end_matches('/');
    let path = PUBLISHER_VIEWS.iter().find_map(|view| path.strip_suffix(view)).unwrap_or(path);
    let path = path.strip_suffix(".pdf").unwrap_or(path);
    if on_site(host, "biorxiv.org") || on_site(host, "medrxiv.org") {
        return without_preprint_version(path);
    }
    path
}

/// A bioRxiv or medRxiv path without its `.full`/`.abstract` view and its `vN` version.
fn without_preprint_version(path: &str) -> &str {
    let path = [".full", ".abstract"].iter().find_map(|view| path.strip_suffix(view)).unwrap_or(path);
    match path.rsplit_once('v') {
        Some((doi, version)) if !version.is_empty() && version.bytes().all(|b| b.is_ascii_digit()) => doi,
        _ => path,
    }
}
