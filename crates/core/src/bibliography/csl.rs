//! CSL-JSON (the citation-style-language `csl-data.json` schema): one JSON array, an item a line, fields in a
//! fixed order. Every value is a string but the numbers of `date-parts`.
//!
//! Types follow Zotero's CSL mapping: journal article → article-journal, magazine → article-magazine,
//! newspaper → article-newspaper, book → book, book section → chapter, conference paper → paper-conference,
//! thesis → thesis, report → report, web page → webpage, blog post → post-weblog, forum post → post, preprint →
//! article, manuscript → manuscript, patent → patent, software → software, dataset → dataset, letter, email,
//! instant message → personal_communication, encyclopedia article → entry-encyclopedia, dictionary entry →
//! entry-dictionary, film and video → motion_picture, audio and podcast → song, broadcasts → broadcast,
//! presentation → speech, artwork → graphic, case → legal_case, statute → legislation, and bill, hearing,
//! interview, map, standard as themselves; anything else → document.
//!
//! Creators: the type's primary creators (authors, inventors, programmers, …) are `author`; editors, series
//! editors, book authors, translators, reviewed authors, recipients, interviewers, composers, performers and
//! contributors have their CSL roles (`editor`, `collection-editor`, `container-author`, …); each a
//! `{family, given}` or, for a name in one field, `{literal}`. Titles keep Zotero's rich-text markup, which CSL
//! processors (citeproc-js, Pandoc) read as formatting.

use serde_json::{json, Map, Value};

use super::{roles, Date, Entry, Name};

/// Appends one item of the array: after `[` for the first, after `,` for the others ([`super::Writer`] opens
/// and closes the array).
pub(super) fn write_entry(out: &mut String, entry: &Entry<'_>, first: bool) {
    // A map of strings always serialises; the check is only so that nothing here can panic.
    let Ok(json) = serde_json::to_string(&Value::Object(item(entry))) else {
        return;
    };
    out.push_str(if first { "[\n" } else { ",\n" });
    out.push_str(&json);
}

/// The CSL type of a Zotero item type.
fn csl_type(item_type: &str) -> &'static str {
    match item_type {
        "journalArticle" => "article-journal",
        "magazineArticle" => "article-magazine",
        "newspaperArticle" => "article-newspaper",
        "book" => "book",
        "bookSection" => "chapter",
        "conferencePaper" => "paper-conference",
        "thesis" => "thesis",
        "report" => "report",
        "webpage" => "webpage",
        "blogPost" => "post-weblog",
        "forumPost" => "post",
        "preprint" => "article",
        "manuscript" => "manuscript",
        "patent" => "patent",
        "computerProgram" => "software",
        "dataset" => "dataset",
        "letter" | "email" | "instantMessage" => "personal_communication",
        "encyclopediaArticle" => "entry-encyclopedia",
        "dictionaryEntry" => "entry-dictionary",
        "film" | "videoRecording" => "motion_picture",
        "audioRecording" | "podcast" => "song",
        "radioBroadcast" | "tvBroadcast" => "broadcast",
        "presentation" => "speech",
        "artwork" => "graphic",
        "case" => "legal_case",
        "statute" => "legislation",
        "bill" => "bill",
        "hearing" => "hearing",
        "interview" => "interview",
        "map" => "map",
        "standard" => "standard",
        _ => "document",
    }
}

/// The CSL role of a Zotero creator type other than the item type's primary one.
fn csl_role(creator_type: &str) -> Option<&'static str> {
    Some(match creator_type {
        "author" => "author",
        "editor" => "editor",
        "seriesEditor" => "collection-editor",
        "bookAuthor" => "container-author",
        "translator" => "translator",
        "reviewedAuthor" => "reviewed-author",
        "recipient" => "recipient",
        "interviewer" => "interviewer",
        "composer" => "composer",
        "performer" | "castMember" => "performer",
        "director" => "director",
        "producer" => "producer",
        "contributor" => "contributor",
        _ => return None,
    })
}

fn item(entry: &Entry<'_>) -> Map<String, Value> {
    let mut item = Map::new();
    let put = |item: &mut Map<String, Value>, field: &str, value: Option<&str>| {
        if let Some(value) = value.map(str::trim).filter(|value| !value.is_empty()) {
            item.insert(field.to_owned(), Value::String(value.to_owned()));
        }
    };
    item.insert("id".to_owned(), Value::String(entry.key.to_owned()));
    item.insert("type".to_owned(), Value::String(csl_type(entry.item_type()).to_owned()));

    let primary = entry.primary_role();
    let mut roles_seen: Vec<(&'static str, Vec<Value>)> = Vec::new();
    for (creator_type, name) in entry.creators() {
        let role = if creator_type == primary { Some("author") } else { csl_role(creator_type) };
        let Some(role) = role else {
            continue;
        };
        let name = match name {
            Name::Person { last, first } if !last.is_empty() && !first.is_empty() => {
                json!({ "family": last, "given": first })
            }
            Name::Person { last, first } => json!({ "literal": if last.is_empty() { first } else { last } }),
            Name::Literal(literal) => json!({ "literal": literal }),
        };
        match roles_seen.iter_mut().find(|(seen, _)| *seen == role) {
            Some((_, names)) => names.push(name),
            None => roles_seen.push((role, vec![name])),
        }
    }
    for (role, names) in roles_seen {
        item.insert(role.to_owned(), Value::Array(names));
    }

    put(&mut item, "title", entry.title());
    put(&mut item, "title-short", entry.field("shortTitle"));
    put(&mut item, "container-title", entry.first(roles::CONTAINER));
    put(&mut item, "container-title-short", entry.field("journalAbbreviation"));
    put(&mut item, "collection-title", entry.first(roles::SERIES));
    put(&mut item, "collection-number", entry.field("seriesNumber"));
    put(&mut item, "event-title", entry.field("conferenceName"));
    put(&mut item, "event-place", entry.field("eventPlace"));
    if let Some(date) = entry.date() {
        item.insert("issued".to_owned(), date_parts(date));
    }
    if let Some(date) = entry.access_date() {
        item.insert("accessed".to_owned(), date_parts(date));
    }
    put(&mut item, "volume", entry.field("volume"));
    put(&mut item, "issue", entry.field("issue"));
    put(&mut item, "page", entry.field("pages"));
    put(&mut item, "number-of-pages", entry.field("numPages"));
    put(&mut item, "number", entry.first(roles::NUMBER).or_else(|| entry.field("archiveID")));
    put(&mut item, "edition", entry.field("edition"));
    put(&mut item, "genre", entry.first(roles::GENRE));
    put(&mut item, "publisher", entry.first(roles::PUBLISHER));
    put(&mut item, "publisher-place", entry.field("place"));
    put(&mut item, "DOI", entry.field("DOI"));
    put(&mut item, "ISBN", entry.field("ISBN"));
    put(&mut item, "ISSN", entry.field("ISSN"));
    put(&mut item, "URL", entry.field("url"));
    put(&mut item, "abstract", entry.field("abstractNote"));
    put(&mut item, "language", entry.field("language"));
    let keywords = entry.tags().collect::<Vec<_>>().join(", ");
    put(&mut item, "keyword", Some(keywords.as_str()));
    for (label, field) in [("PMID", "PMID"), ("PMCID", "PMCID")] {
        put(&mut item, field, extra_line(entry, label));
    }
    item
}

/// `{"date-parts": [[year, month, day]]}` with the parts known.
fn date_parts(date: Date) -> Value {
    let mut parts = vec![json!(date.year)];
    if let Some(month) = date.month {
        parts.push(json!(month));
        if let Some(day) = date.day {
            parts.push(json!(day));
        }
    }
    json!({ "date-parts": [parts] })
}

/// The value of a `Label: value` line of `extra`.
fn extra_line<'a>(entry: &Entry<'a>, label: &str) -> Option<&'a str> {
    entry.field("extra")?.lines().find_map(|line| {
        let (name, value) = line.split_once(':')?;
        name.trim().eq_ignore_ascii_case(label).then(|| value.trim()).filter(|value| !value.is_empty())
    })
}
