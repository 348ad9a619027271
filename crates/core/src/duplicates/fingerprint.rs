//! What makes two items the same work: identifiers first, then title, year and first author.

use serde_json::Value;

use crate::sources::{detect, Identifier};
use crate::zotero::{year_of, ZoteroObject};

/// Normalised titles shorter than this never match on their own ("Introduction", "Editorial", "Reply").
pub const MIN_TITLE_CHARS: usize = 12;

/// Why two items are in one group, strongest first (the order is the derive's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Reason {
    Doi,
    Isbn,
    Arxiv,
    TitleYearCreator,
}

impl Reason {
    /// The name reported for a group (`DOI`, `ISBN`, `arXiv`, `title+year+creator`).
    pub fn label(self) -> &'static str {
        match self {
            Reason::Doi => "DOI",
            Reason::Isbn => "ISBN",
            Reason::Arxiv => "arXiv",
            Reason::TitleYearCreator => "title+year+creator",
        }
    }
}

/// An item's identifiers and its title key, each normalised.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Fingerprints {
    /// Lowercased, without `https://doi.org/` or `doi:`.
    pub dois: Vec<String>,
    /// As ISBN-13, only for books: a chapter or a paper carries its container's ISBN, which many share.
    pub isbns: Vec<String>,
    /// Without a version (`1706.03762`, `math.GT/0309136`).
    pub arxiv: Vec<String>,
    /// `title|year|creator`, or `None` when the title is too short to tell works apart.
    pub title_key: Option<String>,
}

impl Fingerprints {
    pub fn of(item: &ZoteroObject) -> Self {
        let mut prints = Fingerprints::default();
        let mut add = |identifier: Identifier| match identifier {
            Identifier::Doi(doi) => {
                // DOIs are case-insensitive; arXiv's own (10.48550/arXiv.<id>) name the preprint as its id does.
                let doi = doi.to_lowercase();
                match doi.strip_prefix("10.48550/arxiv.") {
                    Some(id) => push_unique(&mut prints.arxiv, id.to_owned()),
                    None => push_unique(&mut prints.dois, doi),
                }
            }
            Identifier::Arxiv { id, .. } => push_unique(&mut prints.arxiv, id.to_lowercase()),
            Identifier::Isbn { isbn13, .. } if item.item_type() == Some("book") => {
                push_unique(&mut prints.isbns, isbn13)
            }
            _ => {}
        };
        if let Some(doi) = item.field("DOI") {
            if let Ok(identifier @ Identifier::Doi(_)) = detect(doi) {
                add(identifier);
            }
        }
        for line in item.field("extra").unwrap_or_default().lines() {
            // Zotero keeps identifiers of types without the field as `DOI: …` / `arXiv: …` lines of extra.
            let Some((label, value)) = line.split_once(':') else { continue };
            let label = label.trim().to_ascii_lowercase();
            if label == "doi" || label == "arxiv" {
                let value = value.trim();
                let text = if label == "arxiv" { format!("arXiv:{value}") } else { value.to_owned() };
                if let Ok(identifier) = detect(&text) {
                    add(identifier);
                }
            }
        }
        if let Some(archive_id) = item.field("archiveID").filter(|id| id.to_ascii_lowercase().starts_with("arxiv:")) {
            if let Ok(identifier) = detect(archive_id) {
                add(identifier);
            }
        }
        if let Some(url) = item.field("url").filter(|url| url.contains("arxiv.org/")) {
            if let Ok(identifier) = detect(url) {
                add(identifier);
            }
        }
        for part in item.field("ISBN").unwrap_or_default().split([' ', ',', ';']).filter(|p| !p.is_empty()) {
            if let Ok(identifier @ Identifier::Isbn { .. }) = detect(part) {
                add(identifier);
            }
        }
        prints.title_key = title_key(item);
        prints
    }
}

fn push_unique(list: &mut Vec<String>, value: String) {
    if !list.contains(&value) {
        list.push(value);
    }
}

/// `normalised title|year|first creator's last name`, when the title is long enough to tell works apart.
fn title_key(item: &ZoteroObject) -> Option<String> {
    let title = normalise_title(item.field("title")?);
    if title.chars().count() < MIN_TITLE_CHARS {
        return None;
    }
    let year = item.field("date").and_then(year_of).map(|year| year.to_string()).unwrap_or_default();
    Some(format!("{title}|{year}|{}", first_creator(item)))
}

/// Lowercased, rich-text tags (`<i>`, `<sub>`) removed, every run of characters that are neither letters nor
/// digits (in any script) made one space, and trimmed: "Deep Learning: A Review" = "deep learning a review".
pub fn normalise_title(title: &str) -> String {
    let mut plain = String::with_capacity(title.len());
    let mut in_tag = false;
    for c in title.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            _ if in_tag => {}
            _ => plain.push(c),
        }
    }
    let mut out = String::with_capacity(plain.len());
    let mut gap = false;
    for c in plain.chars().flat_map(char::to_lowercase) {
        if c.is_alphanumeric() {
            if gap && !out.is_empty() {
                out.push(' ');
            }
            gap = false;
            out.push(c);
        } else {
            gap = true;
        }
    }
    out
}

/// The first creator's last name (or single-field name), normalised as titles are; `""` without creators.
fn first_creator(item: &ZoteroObject) -> String {
    let first = item.data.get("creators").and_then(Value::as_array).and_then(|list| list.first());
    let name = first
        .and_then(|creator| creator.get("lastName").or_else(|| creator.get("name")))
        .and_then(Value::as_str)
        .unwrap_or_default();
    normalise_title(name)
}

/// Whether two items describe one work by the grouping's rules: a shared identifier, or the same title key
/// when no identifier of one kind contradicts it. For the existing-copy check of an import.
pub fn same_work(a: &Fingerprints, b: &Fingerprints) -> bool {
    let shares = |x: &[String], y: &[String]| x.iter().any(|value| y.contains(value));
    let contradicts = |x: &[String], y: &[String]| !x.is_empty() && !y.is_empty() && !shares(x, y);
    if shares(&a.dois, &b.dois) {
        return true;
    }
    if contradicts(&a.dois, &b.dois) || contradicts(&a.isbns, &b.isbns) || contradicts(&a.arxiv, &b.arxiv) {
        return false;
    }
    shares(&a.isbns, &b.isbns)
        || shares(&a.arxiv, &b.arxiv)
        || a.title_key.as_ref().is_some_and(|key| b.title_key.as_ref() == Some(key))
}
