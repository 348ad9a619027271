//! ISBN → Open Library's Books API with `jscmd=data` (the mapping is in the module documentation). Open Library
//! answers 200 with `{}` for a book it does not know.

use serde_json::Value;

use super::fetch::{self, base};
use super::item::{Item, Name, Role};
use super::{Reference, ResolveError, Source, SourceSettings};
use crate::platform::{Clock, HttpClient};

pub(super) async fn resolve(
    http: &dyn HttpClient,
    clock: &dyn Clock,
    isbn13: &str,
    isbn10: Option<&str>,
    settings: &SourceSettings,
) -> Result<Reference, ResolveError> {
    let what = format!("ISBN {isbn13}");
    let not_found = || ResolveError::NotFound { sources: "Open Library".into(), what: what.clone() };
    let url =
        format!("{}/api/books?bibkeys=ISBN:{isbn13}&format=json&jscmd=data", base(&settings.endpoints.open_library));
    let response = fetch::get(http, clock, settings, Source::OpenLibrary, &what, &url, "application/json").await?;
    let body = fetch::body_unless_missing(Source::OpenLibrary, &what, response)?.ok_or_else(not_found)?;
    let document = fetch::json(Source::OpenLibrary, &what, &body)?;
    if !document.is_object() {
        return Err(ResolveError::Unparseable {
            service: Source::OpenLibrary,
            what,
            reason: "not a JSON object".into(),
        });
    }
    let book = document.get(format!("ISBN:{isbn13}")).filter(|book| book.is_object()).ok_or_else(not_found)?;
    let data = map_book(book, isbn13, isbn10).into_data();
    Ok(Reference { data, source: Source::OpenLibrary, pdf_url: None, notes: Default::default() })
}

fn text<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    value.get(key).and_then(Value::as_str).map(str::trim).filter(|text| !text.is_empty())
}

fn first_name<'a>(book: &'a Value, key: &str) -> Option<&'a str> {
    book.get(key)?.as_array()?.iter().find_map(|entry| text(entry, "name"))
}

fn map_book(book: &Value, isbn13: &str, isbn10: Option<&str>) -> Item {
    let mut item = Item::new("book");
    let title = match (text(book, "title"), text(book, "subtitle")) {
        (Some(title), Some(subtitle)) => Some(format!("{title}: {subtitle}")),
        (title, _) => title.map(str::to_owned),
    };
    item.set("title", title);
    for author in book.get("authors").and_then(Value::as_array).into_iter().flatten() {
        item.creator(Role::Author, text(author, "name").and_then(Name::split));
    }
    item.set("publisher", first_name(book, "publishers"));
    item.set("place", first_name(book, "publish_places"));
    item.set("date", text(book, "publish_date"));
    item.set("numPages", book.get("number_of_pages").and_then(Value::as_u64).map(|pages| pages.to_string()));
    item.set("url", text(book, "url"));
    let isbn = match isbn10 {
        Some(isbn10) => format!("{isbn13} {isbn10}"),
        None => isbn13.to_owned(),
    };
    item.set("ISBN", Some(isbn));
    item
}
