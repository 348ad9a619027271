//! DOI → DataCite's `/dois/{doi}` (JSON:API; the mapping is in the module documentation), asked when CrossRef
//! has no record. A 404 is `Ok(None)`: the caller names both registries in the error.

use serde_json::Value;

use super::fetch::{self, base, doi_path};
use super::item::{collapse, Item, Name, Role};
use super::{Reference, ResolveError, Source, SourceSettings};
use crate::platform::{Clock, HttpClient};

pub(super) async fn resolve(
    http: &dyn HttpClient,
    clock: &dyn Clock,
    doi: &str,
    settings: &SourceSettings,
) -> Result<Option<Reference>, ResolveError> {
    let what = format!("DOI {doi}");
    let url = format!("{}/dois/{}", base(&settings.endpoints.datacite), doi_path(doi));
    let response = fetch::get(http, clock, settings, Source::DataCite, &what, &url, "application/vnd.api+json").await?;
    let Some(body) = fetch::body_unless_missing(Source::DataCite, &what, response)? else {
        return Ok(None);
    };
    let document = fetch::json(Source::DataCite, &what, &body)?;
    let attributes = fetch::object_at(Source::DataCite, &what, &document, "/data/attributes")?;
    Ok(Some(Reference {
        data: map_record(attributes).into_data(),
        source: Source::DataCite,
        pdf_url: None,
        notes: Default::default(),
    }))
}

fn item_type(general: &str) -> &'static str {
    match general {
        "Dataset" | "Collection" => "dataset",
        "JournalArticle" | "DataPaper" => "journalArticle",
        "Preprint" => "preprint",
        "Software" => "computerProgram",
        "Report" => "report",
        "Dissertation" => "thesis",
        "Book" => "book",
        "BookChapter" => "bookSection",
        "ConferencePaper" => "conferencePaper",
        _ => "document",
    }
}

fn text<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    value.get(key).and_then(Value::as_str).map(str::trim).filter(|text| !text.is_empty())
}

fn list<'a>(value: &'a Value, key: &str) -> impl Iterator<Item = &'a Value> {
    value.get(key).and_then(Value::as_array).into_iter().flatten()
}

/// A DataCite creator or contributor as a Zotero name.
fn name(person: &Value) -> Option<Name> {
    let organisation = text(person, "nameType") == Some("Organizational");
    if !organisation {
        if let Some(name) = Name::parts(text(person, "givenName"), text(person, "familyName")) {
            return Some(name);
        }
    }
    let full = text(person, "name")?;
    match full.split_once(',') {
        Some((family, given)) if !organisation => Name::parts(Some(given), Some(family)),
        _ => Some(Name::Single(collapse(full))),
    }
}

fn map_record(record: &Value) -> Item {
    let general = record.pointer("/types/resourceTypeGeneral").and_then(Value::as_str).unwrap_or_default();
    let mut item = Item::new(item_type(general));
    let kind = item.item_type();

    let titles: Vec<&Value> = list(record, "titles").collect();
    let main = titles.iter().find(|title| title.get("titleType").is_none()).or(titles.first());
    let subtitle = titles.iter().find(|title| text(title, "titleType") == Some("Subtitle"));
    let title = main.and_then(|title| text(title, "title")).map(collapse);
    let title = match (title, subtitle.and_then(|subtitle| text(subtitle, "title"))) {
        (Some(title), Some(subtitle)) => Some(format!("{title}: {}", collapse(subtitle))),
        (title, _) => title,
    };
    item.set("title", title);

    for creator in list(record, "creators") {
        item.creator(Role::Author, name(creator));
    }
    for contributor in list(record, "contributors").filter(|c| text(c, "contributorType") == Some("Editor")) {
        item.creator(Role::Editor, name(contributor));
    }

    let abstract_note = list(record, "descriptions")
        .find(|description| text(description, "descriptionType") == Some("Abstract"))
        .and_then(|description| text(description, "description"))
        .map(collapse);
    item.set("abstractNote", abstract_note);

    let publisher = text(record, "publisher").or_else(|| record.pointer("/publisher/name").and_then(Value::as_str));
    let publisher_field = match kind {
        "dataset" | "preprint" => "repository",
        "computerProgram" => "company",
        "report" => "institution",
        "thesis" => "university",
        _ => "publisher",
    };
    item.set(publisher_field, publisher);
    if kind == "journalArticle" {
        item.set("publicationTitle", record.pointer("/container/title").and_then(Value::as_str));
    }

    let issued = list(record, "dates")
        .find(|date| text(date, "dateType") == Some("Issued"))
        .and_then(|date| text(date, "date"))
        .map(|date| date.split('T').next().unwrap_or(date).to_owned());
    let year = record.get("publicationYear").and_then(|year| match year {
        Value::Number(number) => Some(number.to_string()),
        Value::String(text) => Some(text.clone()),
        _ => None,
    });
    item.set("date", issued.or(year));

    item.set("language", text(record, "language"));
    item.set("url", text(record, "url"));
    item.set("versionNumber", text(record, "version"));
    item.set("rights", list(record, "rightsList").find_map(|rights| text(rights, "rights")));
    item.set("DOI", text(record, "doi"));
    item
}
