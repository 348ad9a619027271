//! Creators: Zotero's `firstCreator`, the lists `authors`, `editors` and `creators` with their name options, and
//! which creator type each item type counts as its authors.

use std::cmp::Ordering;

use serde_json::{Map, Value};

use super::item::text_of;
use super::problems::Findings;
use super::scan::whole_number;

/// Zotero's `firstCreator`: `creator_summary` when given (Zotero's own), else the last names of the item's primary
/// creators (authors for most types), else its editors, directors or contributors, else any creators: one name
/// as is, two joined with "and", more as "A et al.".
pub fn first_creator(item: &Map<String, Value>, creator_summary: Option<&str>) -> String {
    if let Some(summary) = creator_summary {
        // Zotero wraps names in bidi isolates for display; they are not part of the name.
        let summary = summary.replace(['\u{2068}', '\u{2069}'], "");
        if !summary.trim().is_empty() {
            return summary.trim().to_owned();
        }
    }
    let primary = primary_creator_type(text_of(item.get("itemType")));
    for wanted in [primary, "editor", "director", "contributor"] {
        let names = surnames(item, |t| t == wanted);
        if !names.is_empty() {
            return summarise_names(&names);
        }
    }
    summarise_names(&surnames(item, |_| true))
}

/// Which creators `authors`, `editors` and `creators` list.
#[derive(Debug, Clone, Copy)]
pub(super) enum Role {
    /// The item type's primary creators (authors for most types, directors for films, …).
    Primary,
    Editors,
    All,
}

/// The primary creator type of an item type in Zotero's schema: whom `authors` and `firstCreator` mean.
fn primary_creator_type(item_type: &str) -> &'static str {
    match item_type {
        "artwork" => "artist",
        "audioRecording" => "performer",
        "bill" => "sponsor",
        "computerProgram" => "programmer",
        "film" | "tvBroadcast" => "director",
        "hearing" => "contributor",
        "interview" => "interviewee",
        "map" => "cartographer",
        "patent" => "inventor",
        "podcast" => "podcaster",
        "presentation" => "presenter",
        "radioBroadcast" | "videoRecording" => "creator",
        _ => "author",
    }
}

/// The item's creators, in order.
fn creators(item: &Map<String, Value>) -> impl Iterator<Item = &Map<String, Value>> {
    item.get("creators").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_object)
}

fn creator_type(creator: &Map<String, Value>) -> &str {
    match text_of(creator.get("creatorType")) {
        "" => "author",
        t => t,
    }
}

pub(super) fn creators_in(item: &Map<String, Value>, role: Role) -> impl Iterator<Item = &Map<String, Value>> {
    let primary = primary_creator_type(text_of(item.get("itemType")));
    creators(item).filter(move |c| match role {
        Role::Primary => creator_type(c) == primary,
        Role::Editors => matches!(creator_type(c), "editor" | "seriesEditor"),
        Role::All => true,
    })
}

/// Last names (or single-field names) of the creators whose type passes `wanted`, blanks left out.
fn surnames(item: &Map<String, Value>, wanted: impl Fn(&str) -> bool) -> Vec<String> {
    creators(item)
        .filter(|c| wanted(creator_type(c)))
        .map(|c| match text_of(c.get("lastName")).trim() {
            "" => text_of(c.get("name")).trim(),
            last => last,
        })
        .filter(|name| !name.is_empty())
        .map(str::to_owned)
        .collect()
}

fn summarise_names(names: &[String]) -> String {
    match names {
        [] => String::new(),
        [one] => one.clone(),
        [a, b] => format!("{a} and {b}"),
        [first, ..] => format!("{first} et al."),
    }
}

/// How `authors`, `editors` and `creators` list names.
#[derive(Debug)]
pub(super) struct PeopleOptions {
    /// Names skipped first.
    start: usize,
    /// Names kept: all when 0; the last ones, in reverse order, when negative (as in Zotero).
    max: i64,
    join: String,
    style: NameStyle,
    separator: String,
    initials: Initials,
    /// Put after an initial.
    initial_mark: String,
}

#[derive(Debug, Clone, Copy)]
enum NameStyle {
    Family,
    Given,
    GivenFamily,
    FamilyGiven,
}

/// Which name parts are shortened to an initial.
#[derive(Debug, Default, Clone, Copy)]
struct Initials {
    given: bool,
    family: bool,
    single: bool,
}

impl PeopleOptions {
    pub(super) fn new<'v>(attr: &dyn Fn(&str) -> Option<&'v str>, findings: &mut Findings) -> Self {
        let style = match attr("name").unwrap_or("family") {
            "family" | "last" => NameStyle::Family,
            "given" | "first" => NameStyle::Given,
            "full" | "given-family" | "first-last" => NameStyle::GivenFamily,
            "full-reversed" | "family-given" | "last-first" => NameStyle::FamilyGiven,
            other => {
                findings.push(format!(
                    "name=\"{other}\" is not a name style; use family, given, full (given family) or family-given"
                ));
                NameStyle::Family
            }
        };
        let initials = match attr("initialize").unwrap_or("") {
            "" => Initials::default(),
            "full" => Initials { given: true, family: true, single: true },
            "given" | "first" => Initials { given: true, ..Initials::default() },
            "family" | "last" => Initials { family: true, ..Initials::default() },
            "name" => Initials { single: true, ..Initials::default() },
            other => {
                findings.push(format!("initialize=\"{other}\" is not a name part; use given, family, full or name"));
                Initials::default()
            }
        };
        PeopleOptions {
            start: whole_number(attr, "start", findings).map_or(0, |n| usize::try_from(n).unwrap_or(0)),
            max: whole_number(attr, "max", findings).unwrap_or(0),
            join: attr("join").unwrap_or(", ").to_owned(),
            style,
            separator: attr("namePartSeparator").unwrap_or(" ").to_owned(),
            initials,
            initial_mark: attr("initializeWith").unwrap_or(".").to_owned(),
        }
    }

    pub(super) fn render(&self, item: &Map<String, Value>, role: Role) -> String {
        let chosen: Vec<&Map<String, Value>> = creators_in(item, role).skip(self.start).collect();
        let limit = usize::try_from(self.max.unsigned_abs()).unwrap_or(usize::MAX);
        let chosen: Vec<&Map<String, Value>> = match self.max.cmp(&0) {
            Ordering::Greater => chosen.into_iter().take(limit).collect(),
            Ordering::Less => chosen.into_iter().rev().take(limit).collect(),
            Ordering::Equal => chosen,
        };
        chosen.into_iter().filter_map(|c| self.name_of(c)).collect::<Vec<_>>().join(&self.join)
    }

    fn name_of(&self, creator: &Map<String, Value>) -> Option<String> {
        let single = text_of(creator.get("name")).trim();
        if !single.is_empty() {
            return Some(self.maybe_initial(single, self.initials.single));
        }
        let given = (text_of(creator.get("firstName")).trim(), self.initials.given);
        let family = (text_of(creator.get("lastName")).trim(), self.initials.family);
        let parts = match self.style {
            NameStyle::Family => vec![family],
            NameStyle::Given => vec![given],
            NameStyle::GivenFamily => vec![given, family],
            NameStyle::FamilyGiven => vec![family, given],
        };
        let name = parts
            .into_iter()
            .filter(|(part, _)| !part.is_empty())
            .map(|(part, shorten)| self.maybe_initial(part, shorten))
            .collect::<Vec<_>>()
            .join(&self.separator);
        (!name.is_empty()).then_some(name)
    }

    fn maybe_initial(&self, part: &str, shorten: bool) -> String {
        if !shorten {
            return part.to_owned();
        }
        let mut initial: String = part.chars().next().into_iter().flat_map(char::to_uppercase).collect();
        initial.push_str(&self.initial_mark);
        initial
    }
}
