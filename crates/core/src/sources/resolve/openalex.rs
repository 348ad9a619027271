//! DOI → a free PDF, from OpenAlex's work record. Best effort: any failure is `None`, because the record itself
//! already came from CrossRef or DataCite and a missing PDF must not cost the person their import.

use serde_json::Value;

use super::fetch::{self, base, doi_path};
use super::{mailto, Source, SourceSettings};
use crate::platform::{Clock, HttpClient};

pub(super) async fn pdf_url(
    http: &dyn HttpClient,
    clock: &dyn Clock,
    doi: &str,
    settings: &SourceSettings,
) -> Option<String> {
    let url = format!("{}/works/doi:{}{}", base(&settings.endpoints.openalex), doi_path(doi), mailto(settings));
    // The error type names a source for messages; OpenAlex's errors are never shown, so any name would do.
    let what = format!("DOI {doi}");
    let response = fetch::get(http, clock, settings, Source::CrossRef, &what, &url, "application/json").await.ok()?;
    if !response.status().is_success() {
        return None;
    }
    let work: Value = serde_json::from_slice(response.body()).ok()?;
    let best = work.pointer("/best_oa_location/pdf_url").and_then(Value::as_str).filter(|url| is_http(url));
    let open = work.pointer("/open_access/oa_url").and_then(Value::as_str).filter(|url| is_http(url) && is_pdf(url));
    best.or(open).map(str::to_owned)
}

fn is_http(url: &str) -> bool {
    url.starts_with("https://") || url.starts_with("http://")
}

/// Whether a URL's path ends in `.pdf`: `oa_url` is as often a landing page, which is no attachment.
fn is_pdf(url: &str) -> bool {
    let path = url.split(['?', '#']).next().unwrap_or(url);
    path.to_ascii_lowercase().ends_with(".pdf")
}
