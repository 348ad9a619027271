//! DOI → CrossRef's `/works/{doi}` (the mapping is in the module documentation). A 404 is `Ok(None)`, so the
//! caller can ask DataCite, which registers the DOIs CrossRef does not (datasets, arXiv, Zenodo).

use serde_json::Value;

use super::fetch::{self, base, doi_path};
use super::item::{collapse, date_of_parts, plain_abstract, plain_title, Item, Name, Role};
use super::{mailto, Reference, RegistryNotes, ResolveError, Source, SourceSettings, Update};
use crate::platform::{Clock, HttpClient};

pub(super) async fn resolve(
    http: &dyn HttpClient,
    clock: &dyn Clock,
    doi: &str,
    settings: &SourceSettings,
) -> Result<Option<Reference>, ResolveError> {
    let what = format!("DOI {doi}");
    let url = format!("{}/works/{}{}", base(&settings.endpoints.crossref), doi_path(doi), mailto(settings));
    let response = fetch::get(http, clock, settings, Source::CrossRef, &what, &url, "application/json").await?;
    let Some(body) = fetch::body_unless_missing(Source::CrossRef, &what, response)? else {
        return Ok(None);
    };
    let document = fetch::json(Source::CrossRef, &what, &body)?;
    let work = fetch::object_at(Source::CrossRef, &what, &document, "/message")?;
    Ok(Some(reference_of(work)))
}

fn reference_of(work: &Value) -> Reference {
    Reference { data: map_work(work).into_data(), source: Source::CrossRef, pdf_url: None, notes: notes_of(work) }
}

/// `GET {crossref}/works?query.bibliographic={reference}&rows={rows}`: the works CrossRef's search ranks highest
/// for a reference as written, each with its `score`.
pub(super) async fn bibliographic(
    http: &dyn HttpClient,
    clock: &dyn Clock,
    reference: &str,
    rows: usize,
    settings: &SourceSettings,
) -> Result<Vec<(Reference, f64)>, ResolveError> {
    let what = "a bibliographic search".to_owned();
    // CrossRef reads at most a few hundred characters of a reference; a longer query only costs bandwidth.
    let query: String = reference.chars().take(400).collect();
    let mut url = format!(
        "{}/works?query.bibliographic={}&rows={}",
        base(&settings.endpoints.crossref),
        fetch::query_value(&query),
        rows.clamp(1, 20)
    );
    let polite = mailto(settings);
    if let Some(email) = polite.strip_prefix('?') {
        url.push('&');
        url.push_str(email);
    }
    let response = fetch::get(http, clock, settings, Source::CrossRef, &what, &url, "application/json").await?;
    let body = fetch::body_unless_missing(Source::CrossRef, &what, response)?.unwrap_or_default();
    if body.is_empty() {
        return Ok(Vec::new());
    }
    let document = fetch::json(Source::CrossRef, &what, &body)?;
    let list = fetch::object_at(Source::CrossRef, &what, &document, "/message")?;
    let items = list.get("items").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    Ok(items
        .iter()
        .filter(|work| work.is_object())
        .map(|work| (reference_of(work), work.get("score").and_then(Value::as_f64).unwrap_or(0.0)))
        .collect())
}

/// The work's update notices (`updated-by`) and other versions (`relation`).
fn notes_of(work: &Value) -> RegistryNotes {
    let mut notes = RegistryNotes::default();
    for notice in work.get("updated-by").and_then(Value::as_array).into_iter().flatten() {
        let Some(kind) = text(notice, "type") else { continue };
        let update = Update {
            kind: kind.to_lowercase().replace(['-', ' '], "_"),
            notice_doi: text(notice, "DOI").map(str::to_owned),
            date: notice
                .pointer("/updated/date-parts/0")
                .and_then(Value::as_array)
                .and_then(|parts| date_of_parts(parts)),
            source: text(notice, "source").map(str::to_owned),
        };
        // The same notice may be asserted twice (by the publisher and by Retraction Watch): kept once.
        if !notes.updates.iter().any(|u| u.kind == update.kind && u.notice_doi == update.notice_doi) {
            notes.updates.push(update);
        }
    }
    let related = |name: &str| -> Vec<String> {
        let mut dois: Vec<String> = Vec::new();
        for relation in work.pointer(&format!("/relation/{name}")).and_then(Value::as_array).into_iter().flatten() {
            let is_doi = text(relation, "id-type").is_none_or(|t| t.eq_ignore_ascii_case("doi"));
            if let Some(id) = text(relation, "id").filter(|_| is_doi) {
                if !dois.iter().any(|d| d.eq_ignore_ascii_case(id)) {
                    dois.push(id.to_owned());
                }
            }
        }
        dois
    };
    notes.published_as = related("is-preprint-of");
    notes.preprints = related("has-preprint");
    notes
}

fn item_type(crossref_type: &str) -> &'static str {
    match crossref_type {
        "journal-article" => "journalArticle",
        "proceedings-article" => "conferencePaper",
        "book-chapter" | "book-section" | "book-part" => "bookSection",
        "book" | "monograph" | "edited-book" | "reference-book" => "book",
        "posted-content" => "preprint",
        "dataset" => "dataset",
        "report" => "report",
        "dissertation" => "thesis",
        "reference-entry" => "encyclopediaArticle",
        _ => "document",
    }
}

/// The first string of a CrossRef list field (`title`, `container-title`, …).
fn first<'a>(work: &'a Value, key: &str) -> Option<&'a str> {
    work.get(key)?.as_array()?.iter().filter_map(Value::as_str).map(str::trim).find(|text| !text.is_empty())
}

fn text<'a>(work: &'a Value, key: &str) -> Option<&'a str> {
    work.get(key).and_then(Value::as_str).map(str::trim).filter(|text| !text.is_empty())
}

fn all(work: &Value, key: &str) -> Vec<String> {
    let mut values: Vec<String> = Vec::new();
    for value in work.get(key).and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str) {
        if !values.iter().any(|seen| seen == value) {
            values.push(value.to_owned());
        }
    }
    values
}

fn map_work(work: &Value) -> Item {
    let mut item = Item::new(item_type(text(work, "type").unwrap_or_default()));
    let kind = item.item_type();

    let title = first(work, "title").map(plain_title);
    let title = match (title, first(work, "subtitle").map(plain_title)) {
        (Some(title), Some(subtitle)) if !subtitle.is_empty() => Some(format!("{title}: {subtitle}")),
        (title, _) => title,
    };
    item.set("title", title);

    for (key, role) in [("author", Role::Author), ("editor", Role::Editor)] {
        for person in work.get(key).and_then(Value::as_array).into_iter().flatten() {
            let name = Name::parts(text(person, "given"), text(person, "family"))
                .or_else(|| text(person, "name").map(|name| Name::Single(collapse(name))));
            item.creator(role, name);
        }
    }

    item.set("abstractNote", text(work, "abstract").map(plain_abstract));

    let container = first(work, "container-title").map(plain_title);
    let container_field = match kind {
        "journalArticle" => "publicationTitle",
        "conferencePaper" => "proceedingsTitle",
        "bookSection" => "bookTitle",
        "encyclopediaArticle" => "encyclopediaTitle",
        "book" => "series",
        "report" => "seriesTitle",
        _ => "",
    };
    if !container_field.is_empty() {
        item.set(container_field, container);
    }
    if kind == "journalArticle" {
        item.set("journalAbbreviation", first(work, "short-container-title"));
    }

    let event = work.get("event");
    if kind == "conferencePaper" {
        item.set("conferenceName", event.and_then(|event| text(event, "name")));
        item.set("place", event.and_then(|event| text(event, "location")));
    }

    let issued = work.pointer("/issued/date-parts/0").and_then(Value::as_array);
    item.set("date", issued.and_then(|parts| date_of_parts(parts)));
    item.set("volume", text(work, "volume"));
    item.set("issue", text(work, "issue"));
    item.set("pages", text(work, "page"));

    let institution = work.pointer("/institution/0/name").and_then(Value::as_str);
    let publisher = text(work, "publisher");
    match kind {
        "report" => item.set("institution", publisher),
        "thesis" => item.set("university", institution.or(publisher)),
        "dataset" => item.set("repository", publisher),
        "preprint" => item.set("repository", institution.or(publisher)),
        _ => item.set("publisher", publisher),
    }
    item.set("place", text(work, "publisher-location"));

    item.set("DOI", text(work, "DOI"));
    let isbn = all(work, "ISBN").join(" ");
    item.set("ISBN", Some(isbn));
    let issn = all(work, "ISSN").join(", ");
    item.set("ISSN", Some(issn));

    let url = work.pointer("/resource/primary/URL").and_then(Value::as_str).or_else(|| text(work, "URL"));
    item.set("url", url);
    item.set("language", text(work, "language"));
    item
}
