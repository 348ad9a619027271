//! PMID and PMCID → NCBI E-utilities (the mapping is in the module documentation). EFetch's XML carries the whole
//! record, abstract included, in one request; a PMCID takes one ELink request first to find its PMID.

use serde_json::Value;

use super::fetch::{self, base, query_value};
use super::item::{Item, Name, Role};
use super::xml::{self, Element};
use super::{Reference, ResolveError, Source, SourceSettings};
use crate::platform::{Clock, HttpClient};

/// `&tool=zotero-mcp&email=…` when there is a contact address: NCBI asks heavy users to say who they are.
fn identify(settings: &SourceSettings) -> String {
    match settings.contact_email.as_deref().map(str::trim).filter(|email| !email.is_empty()) {
        Some(email) => format!("&tool=zotero-mcp&email={}", query_value(email)),
        None => String::new(),
    }
}

pub(super) async fn resolve_pmcid(
    http: &dyn HttpClient,
    clock: &dyn Clock,
    pmcid: &str,
    settings: &SourceSettings,
) -> Result<Reference, ResolveError> {
    let what = pmcid.to_owned();
    let digits = pmcid.trim_start_matches("PMC");
    let url = format!(
        "{}/elink.fcgi?dbfrom=pmc&db=pubmed&linkname=pmc_pubmed&id={digits}&retmode=json{}",
        base(&settings.endpoints.eutils),
        identify(settings)
    );
    let not_found = || ResolveError::NotFound { sources: "PubMed".into(), what: what.clone() };
    let response = fetch::get(http, clock, settings, Source::PubMed, &what, &url, "application/json").await?;
    let body = fetch::body_unless_missing(Source::PubMed, &what, response)?.ok_or_else(not_found)?;
    let links = fetch::json(Source::PubMed, &what, &body)?;
    let pmid = links
        .get("linksets")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .flat_map(|set| set.get("linksetdbs").and_then(Value::as_array).into_iter().flatten())
        .filter(|db| db.get("linkname").and_then(Value::as_str) == Some("pmc_pubmed"))
        .flat_map(|db| db.get("links").and_then(Value::as_array).into_iter().flatten())
        .find_map(|link| match link {
            Value::String(id) => Some(id.clone()),
            Value::Number(id) => Some(id.to_string()),
            _ => None,
        })
        .ok_or_else(not_found)?;
    resolve_pmid(http, clock, &pmid, Some(pmcid), settings).await
}

pub(super) async fn resolve_pmid(
    http: &dyn HttpClient,
    clock: &dyn Clock,
    pmid: &str,
    pmcid: Option<&str>,
    settings: &SourceSettings,
) -> Result<Reference, ResolveError> {
    let what = match pmcid {
        Some(pmcid) => format!("{pmcid} (PMID {pmid})"),
        None => format!("PMID {pmid}"),
    };
    let url = format!(
        "{}/efetch.fcgi?db=pubmed&id={}&retmode=xml{}",
        base(&settings.endpoints.eutils),
        query_value(pmid),
        identify(settings)
    );
    let not_found = || ResolveError::NotFound { sources: "PubMed".into(), what: what.clone() };
    let response = fetch::get(http, clock, settings, Source::PubMed, &what, &url, "application/xml").await?;
    let body = fetch::body_unless_missing(Source::PubMed, &what, response)?.ok_or_else(not_found)?;
    let text = fetch::text(Source::PubMed, &what, &body)?;
    let set = xml::parse(&text).map_err(|reason| ResolveError::Unparseable {
        service: Source::PubMed,
        what: what.clone(),
        reason: format!("not PubMed XML: {reason}"),
    })?;
    let article = set.child("PubmedArticle").ok_or_else(not_found)?;
    let data = map_article(article, pmid, pmcid).into_data();
    Ok(Reference { data, source: Source::PubMed, pdf_url: None, notes: Default::default() })
}

fn map_article(article: &Element, pmid: &str, pmcid: Option<&str>) -> Item {
    let mut item = Item::new("journalArticle");
    let citation = article.child("MedlineCitation");
    let record = citation.and_then(|citation| citation.child("Article"));
    let journal = record.and_then(|record| record.child("Journal"));
    let issue = journal.and_then(|journal| journal.child("JournalIssue"));

    let title =
        record.and_then(|record| record.child_text("ArticleTitle")).map(|title| match title.strip_suffix('.') {
            Some(trimmed) if !trimmed.ends_with('.') => trimmed.to_owned(),
            _ => title,
        });
    item.set("title", title);

    let authors = record.and_then(|record| record.child("AuthorList"));
    for author in authors.into_iter().flat_map(|list| list.all("Author")) {
        if author.attribute("ValidYN") == Some("N") {
            continue;
        }
        let name = match author.child_text("CollectiveName") {
            Some(collective) => Some(Name::Single(collective)),
            None => Name::parts(
                author.child_text("ForeName").or_else(|| author.child_text("Initials")).as_deref(),
                author.child_text("LastName").as_deref(),
            ),
        };
        item.creator(Role::Author, name);
    }

    let sections: Vec<String> = record
        .and_then(|record| record.child("Abstract"))
        .into_iter()
        .flat_map(|abstract_| abstract_.all("AbstractText"))
        .filter_map(|section| {
            let text = section.text();
            (!text.is_empty()).then(|| match section.attribute("Label") {
                Some(label) if !label.is_empty() => format!("{label}: {text}"),
                _ => text,
            })
        })
        .collect();
    item.set("abstractNote", Some(sections.join("\n")));

    item.set("publicationTitle", journal.and_then(|journal| journal.child_text("Title")));
    let abbreviation = journal.and_then(|journal| journal.child_text("ISOAbbreviation")).or_else(|| {
        citation.and_then(|citation| citation.path(&["MedlineJournalInfo", "MedlineTA"])).map(Element::text)
    });
    item.set("journalAbbreviation", abbreviation);
    item.set("volume", issue.and_then(|issue| issue.child_text("Volume")));
    item.set("issue", issue.and_then(|issue| issue.child_text("Issue")));
    let pages = record.and_then(|record| record.path(&["Pagination", "MedlinePgn"])).map(Element::text);
    item.set("pages", pages.as_deref().map(expand_pages));
    item.set("date", issue.and_then(|issue| issue.child("PubDate")).and_then(pub_date));
    item.set("ISSN", journal.and_then(|journal| journal.child_text("ISSN")));
    item.set("language", record.and_then(|record| record.child_text("Language")));

    let ids = article.path(&["PubmedData", "ArticleIdList"]);
    let id_of = |kind: &str| {
        ids.into_iter()
            .flat_map(|list| list.all("ArticleId"))
            .find(|id| id.attribute("IdType") == Some(kind))
            .map(Element::text)
    };
    let doi = id_of("doi").or_else(|| {
        record
            .into_iter()
            .flat_map(|record| record.all("ELocationID"))
            .find(|location| location.attribute("EIdType") == Some("doi"))
            .map(Element::text)
    });
    item.set("DOI", doi);
    item.set("url", Some(format!("https://pubmed.ncbi.nlm.nih.gov/{pmid}/")));
    item.extra(format!("PMID: {pmid}"));
    if let Some(pmcid) = pmcid.map(str::to_owned).or_else(|| id_of("pmc")) {
        item.extra(format!("PMCID: {pmcid}"));
    }
    item
}

/// `PubDate`: `Year`, `Month` (`Jan` or `01`), `Day` → `2018-07-31`; a free-text `MedlineDate` as it is.
fn pub_date(date: &Element) -> Option<String> {
    let Some(year) = date.child_text("Year") else {
        return date.child_text("MedlineDate");
    };
    let month = date.child_text("Month").and_then(|month| month_number(&month));
    let day = date.child_text("Day").and_then(|day| day.parse::<u32>().ok()).filter(|day| (1..=31).contains(day));
    Some(match (month, day) {
        (Some(month), Some(day)) => format!("{year}-{month:02}-{day:02}"),
        (Some(month), None) => format!("{year}-{month:02}"),
        _ => year,
    })
}

fn month_number(month: &str) -> Option<u32> {
    if let Ok(number) = month.parse::<u32>() {
        return (1..=12).contains(&number).then_some(number);
    }
    const MONTHS: [&str; 12] = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];
    let prefix = month.get(..3)?.to_ascii_lowercase();
    MONTHS.iter().position(|name| *name == prefix).and_then(|index| u32::try_from(index + 1).ok())
}

/// MEDLINE shortens a range's end (`1260-4`); Zotero writes it out (`1260-1264`). Anything else is kept.
fn expand_pages(pages: &str) -> String {
    let Some((start, end)) = pages.split_once('-') else {
        return pages.to_owned();
    };
    let numeric = |part: &str| !part.is_empty() && part.bytes().all(|byte| byte.is_ascii_digit());
    if numeric(start) && numeric(end) && end.len() < start.len() {
        format!("{start}-{}{end}", &start[..start.len() - end.len()])
    } else {
        pages.to_owned()
    }
}
