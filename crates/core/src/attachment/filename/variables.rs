//! Variables: what a tag's name reads (a field, `year`, `itemType`, `citationKey`, a creator list or count), its
//! attributes checked, and the item's fields looked up as Zotero's `getField` does, base fields included.

use serde_json::{Map, Value};

use super::creators::{creators_in, first_creator, PeopleOptions, Role};
use super::item::{text_of, Ctx};
use super::modifiers::Decoration;
use super::problems::Findings;

/// A variable with its attributes read and checked.
#[derive(Debug)]
pub(super) struct Variable {
    source: Source,
    people: PeopleOptions,
    decoration: Decoration,
}

/// Where a variable's value comes from.
#[derive(Debug)]
enum Source {
    FirstCreator,
    People(Role),
    PeopleCount(Role),
    Year,
    ItemType,
    CitationKey,
    Field(String),
}

/// Attributes every variable takes.
const COMMON_ATTRIBUTES: [&str; 9] =
    ["start", "truncate", "prefix", "suffix", "case", "match", "replaceFrom", "replaceTo", "regexOpts"];

/// Attributes of `authors`, `editors` and `creators` besides the common ones.
const PEOPLE_ATTRIBUTES: [&str; 6] = ["max", "join", "name", "namePartSeparator", "initialize", "initializeWith"];

impl Variable {
    pub(super) fn new(name: &str, attributes: &[(String, String)], findings: &mut Findings) -> Self {
        let source = match name {
            "firstCreator" => Source::FirstCreator,
            "authors" => Source::People(Role::Primary),
            "editors" => Source::People(Role::Editors),
            "creators" => Source::People(Role::All),
            "authorsCount" => Source::PeopleCount(Role::Primary),
            "editorsCount" => Source::PeopleCount(Role::Editors),
            "creatorsCount" => Source::PeopleCount(Role::All),
            "year" => Source::Year,
            "itemType" => Source::ItemType,
            "citationKey" => Source::CitationKey,
            other => Source::Field(other.to_owned()),
        };
        let is_people = matches!(source, Source::People(_));
        // Zotero's own attributes with no meaning here: `localize` (item type names in the UI language) and
        // `timeZone` (of accessDate) are accepted and ignored.
        let ignored: &[&str] = match name {
            "itemType" => &["localize"],
            "accessDate" => &["timeZone"],
            _ => &[],
        };
        let attr = |wanted: &str| attributes.iter().rev().find(|(n, _)| n == wanted).map(|(_, v)| v.as_str());
        for (attribute, _) in attributes {
            let known = COMMON_ATTRIBUTES.contains(&attribute.as_str())
                || (is_people && PEOPLE_ATTRIBUTES.contains(&attribute.as_str()))
                || ignored.contains(&attribute.as_str());
            if !known {
                let mut list: Vec<&str> = COMMON_ATTRIBUTES.to_vec();
                if is_people {
                    list.extend(PEOPLE_ATTRIBUTES);
                }
                findings
                    .push(format!("`{name}` has no attribute `{attribute}`; its attributes are {}", list.join(", ")));
            }
        }
        // The creator-list attributes are read only for creator lists, where `start` skips names rather than
        // characters.
        let (people, decoration) = if is_people {
            let common = |wanted: &str| if wanted == "start" { None } else { attr(wanted) };
            (PeopleOptions::new(&attr, findings), Decoration::new(&common, findings))
        } else {
            (PeopleOptions::new(&|_| None, findings), Decoration::new(&attr, findings))
        };
        Variable { source, people, decoration }
    }

    pub(super) fn eval(&self, ctx: &Ctx<'_>) -> String {
        let item = ctx.item;
        let raw = match &self.source {
            Source::FirstCreator => first_creator(item, ctx.creator_summary),
            Source::People(role) => self.people.render(item, *role),
            Source::PeopleCount(role) => creators_in(item, *role).count().to_string(),
            Source::Year => year_of(&field_text(item, "date")),
            Source::ItemType => text_of(item.get("itemType")).to_owned(),
            Source::CitationKey => citation_key(item),
            Source::Field(name) => field_text(item, name),
        };
        self.decoration.apply(&raw, &ctx.budget)
    }
}

/// A field as Zotero's `getField(name, false, true)` gives it: the field itself or, for a base field such as
/// `title` or `date`, the type's own field mapped to it (a case's `caseName`, a patent's `issueDate`).
fn field_text(item: &Map<String, Value>, name: &str) -> String {
    let own = match item.get(name) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => String::new(),
    };
    if !own.is_empty() {
        return own;
    }
    type_specific_fields(name)
        .iter()
        .map(|field| text_of(item.get(*field)))
        .find(|s| !s.is_empty())
        .unwrap_or_default()
        .to_owned()
}

/// The fields Zotero's schema maps to a base field (the item's type decides which one an item has).
fn type_specific_fields(base: &str) -> &'static [&'static str] {
    match base {
        "title" => &["caseName", "nameOfAct", "subject"],
        "date" => &["dateDecided", "dateEnacted", "issueDate"],
        "publicationTitle" => &[
            "bookTitle",
            "proceedingsTitle",
            "websiteTitle",
            "blogTitle",
            "forumTitle",
            "encyclopediaTitle",
            "dictionaryTitle",
            "programTitle",
            "sessionTitle",
        ],
        "publisher" => {
            &["university", "institution", "repository", "company", "distributor", "label", "network", "studio"]
        }
        "number" => &[
            "reportNumber",
            "patentNumber",
            "billNumber",
            "docketNumber",
            "publicLawNumber",
            "documentNumber",
            "episodeNumber",
            "archiveID",
            "identifier",
        ],
        "type" => &[
            "thesisType",
            "reportType",
            "manuscriptType",
            "letterType",
            "mapType",
            "postType",
            "presentationType",
            "websiteType",
            "genre",
        ],
        "authority" => &["court", "issuingAuthority", "legislativeBody", "organization"],
        "medium" => &[
            "format",
            "artworkMedium",
            "audioFileType",
            "audioRecordingFormat",
            "interviewMedium",
            "videoRecordingFormat",
        ],
        "volume" => &["codeVolume", "reporterVolume"],
        "pages" => &["codePages", "firstPage"],
        "place" => &["repositoryLocation"],
        "originalDate" => &["priorityDate"],
        "status" => &["legalStatus"],
        _ => &[],
    }
}

/// The first four-digit number standing alone in a date ("2017-06-12", "June 2017"), or `""`. Word boundaries
/// are ASCII ones, as in JavaScript, so "2017年" gives 2017.
fn year_of(date: &str) -> String {
    let bytes = date.as_bytes();
    let is_word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    (0..bytes.len().saturating_sub(3))
        .find(|&i| {
            bytes[i..i + 4].iter().all(u8::is_ascii_digit)
                && (i == 0 || !is_word(bytes[i - 1]))
                && bytes.get(i + 4).is_none_or(|&b| !is_word(b))
        })
        .map(|i| &date[i..i + 4])
        .filter(|year| *year != "0000")
        .unwrap_or_default()
        .to_owned()
}

/// The item's citation key: its `citationKey` field, else a `Citation Key: …` line of `extra` (any case).
fn citation_key(item: &Map<String, Value>) -> String {
    let own = text_of(item.get("citationKey")).trim();
    if !own.is_empty() {
        return own.to_owned();
    }
    const LABEL: &str = "citation key:";
    text_of(item.get("extra"))
        .lines()
        .filter_map(|line| {
            let line = line.trim_start();
            let label = line.get(..LABEL.len())?;
            label.eq_ignore_ascii_case(LABEL).then(|| line[LABEL.len()..].split_whitespace().next()).flatten()
        })
        .next()
        .unwrap_or_default()
        .to_owned()
}
