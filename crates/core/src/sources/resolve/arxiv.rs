//! arXiv id → the export API's Atom feed (the mapping is in the module documentation). The feed is XML, read with
//! the small tree in `xml.rs`; arXiv answers 200 even when it has no paper, with an empty feed or an error entry.

use super::fetch::{self, base, query_value};
use super::item::{collapse, Item, Name, Role};
use super::xml::{self, Element};
use super::{Reference, RegistryNotes, ResolveError, Source, SourceSettings};
use crate::platform::{Clock, HttpClient};

pub(super) async fn resolve(
    http: &dyn HttpClient,
    clock: &dyn Clock,
    id: &str,
    version: Option<u32>,
    settings: &SourceSettings,
) -> Result<Reference, ResolveError> {
    let versioned = match version {
        Some(version) => format!("{id}v{version}"),
        None => id.to_owned(),
    };
    let what = format!("arXiv:{versioned}");
    let not_found = || ResolveError::NotFound { sources: "arXiv".into(), what: what.clone() };
    let url =
        format!("{}/api/query?id_list={}&max_results=1", base(&settings.endpoints.arxiv), query_value(&versioned));
    let response = fetch::get(http, clock, settings, Source::Arxiv, &what, &url, "application/atom+xml").await?;
    let body = fetch::body_unless_missing(Source::Arxiv, &what, response)?.ok_or_else(not_found)?;
    let text = fetch::text(Source::Arxiv, &what, &body)?;
    let feed = xml::parse(&text).map_err(|reason| ResolveError::Unparseable {
        service: Source::Arxiv,
        what: what.clone(),
        reason: format!("not an Atom feed: {reason}"),
    })?;
    if feed.name != "feed" {
        return Err(ResolveError::Unparseable {
            service: Source::Arxiv,
            what,
            reason: format!("a <{}> document, not an Atom <feed>", feed.name),
        });
    }
    // An id arXiv does not know gives an empty feed; a malformed one an entry whose id is an error page.
    let entry = feed
        .child("entry")
        .filter(|entry| entry.child_text("id").is_some_and(|entry_id| entry_id.contains("arxiv.org/abs/")))
        .ok_or_else(not_found)?;
    let data = map_entry(entry, id, &versioned).into_data();
    let notes = RegistryNotes { published_as: entry.child_text("doi").into_iter().collect(), ..Default::default() };
    Ok(Reference { data, source: Source::Arxiv, pdf_url: Some(format!("https://arxiv.org/pdf/{versioned}")), notes })
}

fn map_entry(entry: &Element, id: &str, versioned: &str) -> Item {
    let mut item = Item::new("preprint");
    item.set("title", entry.child_text("title"));
    for author in entry.all("author") {
        item.creator(Role::Author, author.child_text("name").and_then(|name| author_name(&name)));
    }
    item.set("abstractNote", entry.child_text("summary").map(|summary| collapse(&summary)));
    let published = entry.child_text("published");
    item.set("date", published.as_deref().map(|date| date.get(..10).unwrap_or(date)));
    item.set("repository", Some("arXiv"));
    item.set("archiveID", Some(format!("arXiv:{id}")));
    item.set("url", Some(format!("https://arxiv.org/abs/{versioned}")));
    item.set("DOI", Some(format!("10.48550/arXiv.{id}")));

    let category = entry.child("primary_category").and_then(|category| category.attribute("term"));
    item.extra(match category {
        Some(category) => format!("arXiv:{id} [{category}]"),
        None => format!("arXiv:{id}"),
    });
    if let Some(reference) = entry.child_text("journal_ref") {
        item.extra(format!("Journal reference: {reference}"));
    }
    if let Some(doi) = entry.child_text("doi") {
        item.extra(format!("Published DOI: {doi}"));
    }
    item
}

/// arXiv gives names whole; a collaboration ("H1 Collaboration", "ATLAS Collaboration") is one name, not a person.
fn author_name(name: &str) -> Option<Name> {
    const GROUPS: &[&str] = &["collaboration", "consortium", "group", "team"];
    let last = name.split_whitespace().last()?.to_lowercase();
    if GROUPS.contains(&last.as_str()) {
        return Some(Name::Single(collapse(name)));
    }
    Name::split(name)
}
