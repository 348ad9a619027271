//! One condition as a test of one item, the way Zotero 9's `search.js` builds it.
//!
//! Zotero turns every condition into the set of items having the value (`itemID IN (…)`); the negated operators
//! (`isNot`, `doesNotContain`) take every item *outside* that set except annotations. So a test here answers
//! the positive question ("has a tag `x`", "has a title containing `x`") for one item, and the rule says whether
//! it is negated. Which items are looked at (the trash, child items) is the plan's business.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::dates::{self, DateValue, Span};
use super::fields::{BASE_FIELDS, FIELDS};
use super::model::SearchCondition;
use super::text::{self, TextOp};
use crate::html_text::html_to_text;
use crate::zotero::{schema, ZoteroObject};

/// Which date of an item a date condition reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum DateField {
    /// `date` (and the fields standing for it: `dateDecided`, `dateEnacted`, `issueDate`), as Zotero parsed it.
    Date,
    Added,
    Modified,
    Accessed,
}

/// How a date condition compares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum DateTest {
    Is(DateValue),
    Before(DateValue),
    After(DateValue),
    InTheLast(Span),
}

/// The positive question a condition asks of an item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Test {
    /// In the collection (or, with `recursive`, in it or one of its subcollections: resolved when run).
    Collection(String),
    Tag(TextOp, String),
    ItemType(String),
    /// A data field under any of its names (`publicationTitle` is `bookTitle` in a book section).
    Field(Vec<&'static str>, TextOp, String),
    /// A creator's "first last" name, of any creator type or of one.
    Creator(Option<&'static str>, TextOp, String),
    Note(String),
    AnnotationText(String),
    AnnotationComment(String),
    /// Any data field, tag, note text or creator contains the value.
    AnyField(String),
    Date(DateField, DateTest),
    /// An attachment's full text contains the phrase (answered from the attachments read, not the item).
    FullText(String),
}

/// A condition ready to test items with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Rule {
    pub test: Test,
    /// `isNot`/`doesNotContain`: the item must not have the value.
    pub negated: bool,
    pub condition: SearchCondition,
}

/// What a test may need besides the item.
pub(super) struct Context<'a> {
    /// With `recursive`: each collection a condition names → it and its subcollections, at every depth.
    pub collections: &'a BTreeMap<String, BTreeSet<String>>,
    /// Each full-text phrase (folded) → the attachments whose text was read and contains it.
    pub fulltext: &'a BTreeMap<String, BTreeSet<String>>,
    pub now_ms: u64,
}

fn text_op(operator: &str) -> Option<(TextOp, bool)> {
    match operator {
        "is" => Some((TextOp::Is, false)),
        "isNot" => Some((TextOp::Is, true)),
        "contains" => Some((TextOp::Contains, false)),
        "doesNotContain" => Some((TextOp::Contains, true)),
        "beginsWith" => Some((TextOp::BeginsWith, false)),
        _ => None,
    }
}

/// Only `contains` and `doesNotContain`.
fn contains_op(operator: &str) -> Option<bool> {
    match operator {
        "contains" => Some(false),
        "doesNotContain" => Some(true),
        _ => None,
    }
}

/// The fields a field condition reads: the field, and the fields standing for it when it is a base field.
pub(super) fn field_names(name: &str) -> Option<Vec<&'static str>> {
    let own = FIELDS.iter().find(|f| **f == name)?;
    let mut names = vec![*own];
    if let Some((_, mapped)) = BASE_FIELDS.iter().find(|(base, _)| *base == name) {
        names.extend_from_slice(mapped);
    }
    Some(names)
}

/// Fields Zotero also compares as numbers; only their text operators are evaluated here.
const NUMBER_FIELDS: [&str; 6] = ["pages", "numPages", "numberOfVolumes", "section", "seriesNumber", "issue"];

fn date_test(operator: &str, value: &str, field: DateField) -> Result<(DateTest, bool), String> {
    let date = || {
        let parsed = dates::parse_value(value).ok_or_else(|| {
            format!(
                "the date {value:?} is not one read here: use 2021, 2021-07, 2021-07-15, July 2021, 15 July 2021, \
                 today or yesterday"
            )
        })?;
        if matches!(parsed, DateValue::DateTime(_)) && field == DateField::Date {
            return Err("an item's date has no time of day; give the date alone".to_owned());
        }
        Ok(parsed)
    };
    Ok(match operator {
        "is" => (DateTest::Is(date()?), false),
        "isNot" => (DateTest::Is(date()?), true),
        "isBefore" => (DateTest::Before(date()?), false),
        "isAfter" => (DateTest::After(date()?), false),
        "isInTheLast" => {
            let span = dates::parse_span(value).ok_or_else(|| {
                format!("{value:?} is not a period read here: use a number and days, weeks, months or years")
            })?;
            (DateTest::InTheLast(span), false)
        }
        _ => return Err(unsupported_operator()),
    })
}

fn unsupported_operator() -> String {
    "this operator is not evaluated for this condition".to_owned()
}

/// Old saved searches name a collection as `<libraryID>_<key>`; Zotero reads the key after the underscore.
fn collection_key(value: &str) -> String {
    value.rsplit_once('_').map_or(value, |(_, key)| key).to_owned()
}

/// A primary condition (not a flag such as `noChildren`) as a rule, or why it cannot be evaluated.
pub(super) fn rule_of(condition: &SearchCondition) -> Result<Rule, String> {
    let (name, mode) = condition.name_and_mode();
    let operator = condition.operator.as_str();
    let value = condition.value.as_str();
    if let Some(mode) = mode.filter(|m| !(name == "fulltextContent" && *m == "phrase")) {
        return Err(format!("the {mode:?} mode (regular expressions, binary files) is not evaluated here"));
    }
    let folded = text::fold(value);
    let (test, negated) = match name {
        "collection" => match operator {
            "is" => (Test::Collection(collection_key(value)), false),
            "isNot" => (Test::Collection(collection_key(value)), true),
            _ => return Err(unsupported_operator()),
        },
        "tag" => {
            let (op, negated) =
                text_op(operator).filter(|(op, _)| *op != TextOp::BeginsWith).ok_or_else(unsupported_operator)?;
            (Test::Tag(op, folded), negated)
        }
        "itemType" => match operator {
            "is" => (Test::ItemType(value.to_ascii_lowercase()), false),
            "isNot" => (Test::ItemType(value.to_ascii_lowercase()), true),
            _ => return Err(unsupported_operator()),
        },
        "creator" | "author" | "editor" | "bookAuthor" => {
            let (op, negated) =
                text_op(operator).filter(|(op, _)| *op != TextOp::BeginsWith).ok_or_else(unsupported_operator)?;
            let creator_type = match name {
                "author" => Some("author"),
                "editor" => Some("editor"),
                "bookAuthor" => Some("bookAuthor"),
                _ => None,
            };
            (Test::Creator(creator_type, op, folded), negated)
        }
        // `childNote` is the old name of `note`; Zotero reads it as `note`.
        "note" | "childNote" => (Test::Note(folded), contains_op(operator).ok_or_else(unsupported_operator)?),
        "annotationText" | "annotationComment" => {
            // Zotero never lets a negated condition match an annotation, so `doesNotContain` on annotation text
            // would match every other item: refused rather than reproduced.
            if operator != "contains" {
                return Err(unsupported_operator());
            }
            let test =
                if name == "annotationText" { Test::AnnotationText(folded) } else { Test::AnnotationComment(folded) };
            (test, false)
        }
        "anyField" => {
            if operator != "contains" {
                return Err("only `anyField contains` is evaluated here".to_owned());
            }
            (Test::AnyField(folded), false)
        }
        "fulltextContent" => {
            if value.trim().is_empty() {
                return Err("an empty full-text phrase".to_owned());
            }
            (Test::FullText(folded), contains_op(operator).ok_or_else(unsupported_operator)?)
        }
        "dateAdded" | "dateModified" | "date" | "accessDate" => {
            let field = match name {
                "dateAdded" => DateField::Added,
                "dateModified" => DateField::Modified,
                "date" => DateField::Date,
                _ => DateField::Accessed,
            };
            let (test, negated) = date_test(operator, value, field)?;
            (Test::Date(field, test), negated)
        }
        field => {
            // `date` and `accessDate` are dates (above); `dateDecided` and the like are text to Zotero 9.
            let names = field_names(field).ok_or_else(|| "this condition is not evaluated here".to_owned())?;
            let (op, negated) = text_op(operator)
                .filter(|(op, _)| !(NUMBER_FIELDS.contains(&field) && *op == TextOp::BeginsWith))
                .ok_or_else(unsupported_operator)?;
            (Test::Field(names, op, folded), negated)
        }
    };
    Ok(Rule { test, negated, condition: condition.clone() })
}

fn string<'a>(object: &'a ZoteroObject, name: &str) -> &'a str {
    object.data.get(name).and_then(Value::as_str).unwrap_or("")
}

/// `firstName lastName`, trimmed, or `name`: what Zotero compares a creator condition with.
fn creator_names<'a>(item: &'a ZoteroObject, creator_type: Option<&'a str>) -> impl Iterator<Item = String> + 'a {
    item.data.get("creators").and_then(Value::as_array).into_iter().flatten().filter_map(move |c| {
        let kind = c.get("creatorType").and_then(Value::as_str).unwrap_or("");
        if creator_type.is_some_and(|wanted| wanted != kind) {
            return None;
        }
        let part = |name: &str| c.get(name).and_then(Value::as_str).unwrap_or("");
        let full = format!("{} {}", part("firstName"), part("lastName"));
        let full = full.trim();
        Some(if full.is_empty() { part("name").trim().to_owned() } else { full.to_owned() })
    })
}

fn tags(item: &ZoteroObject) -> impl Iterator<Item = &str> {
    item.data.get("tags").and_then(Value::as_array).into_iter().flatten().filter_map(|t| t.get("tag")?.as_str())
}

/// An item's `date` as Zotero stores it: the parsed date, then what was typed (`2021-07-00 July 2021`), which is
/// what a text search of every field reads.
fn stored_date(item: &ZoteroObject) -> Option<String> {
    let typed = BASE_DATE_NAMES.iter().map(|n| string(item, n)).find(|v| !v.is_empty())?;
    let parsed = item.meta.get("parsedDate").and_then(Value::as_str);
    Some(format!("{} {typed}", dates::sql_of_parsed(parsed)))
}

/// `date` and the fields standing for it (what `field_names("date")` gives; a test keeps them equal).
pub(super) const BASE_DATE_NAMES: [&str; 4] = ["date", "dateDecided", "dateEnacted", "issueDate"];

/// Every data field of the item with a value, as Zotero stores it (what "any field" reads).
fn field_values(item: &ZoteroObject) -> impl Iterator<Item = String> + '_ {
    let item_type = item.item_type().unwrap_or("");
    item.data.iter().filter_map(move |(name, value)| {
        let value = value.as_str().filter(|v| !v.is_empty())?;
        if !schema::has_field(item_type, name) {
            return None;
        }
        Some(match name.as_str() {
            n if BASE_DATE_NAMES.contains(&n) => stored_date(item).unwrap_or_else(|| value.to_owned()),
            "accessDate" => dates::datetime_of_timestamp(value).unwrap_or_else(|| value.to_owned()),
            _ => value.to_owned(),
        })
    })
}

fn date_matches(item: &ZoteroObject, field: DateField, test: &DateTest, now_ms: u64) -> bool {
    let stamp = |name: &str| Some(string(item, name)).filter(|s| !s.is_empty());
    let whole_stamp = matches!(
        test,
        DateTest::Is(DateValue::DateTime(_))
            | DateTest::Before(DateValue::DateTime(_))
            | DateTest::After(DateValue::DateTime(_))
    );
    let stored = match field {
        DateField::Date => stored_date(item).and_then(|s| s.get(..10).map(str::to_owned)),
        DateField::Added | DateField::Modified | DateField::Accessed => {
            let name = match field {
                DateField::Added => "dateAdded",
                DateField::Modified => "dateModified",
                _ => "accessDate",
            };
            stamp(name)
                .and_then(|s| if whole_stamp { dates::datetime_of_timestamp(s) } else { dates::day_of_timestamp(s) })
        }
    };
    let Some(stored) = stored else { return false };
    match test {
        DateTest::Is(DateValue::DateTime(at)) => stored == *at,
        DateTest::Is(value) => dates::like(&stored, &dates::bound(value, "__", now_ms)),
        // A date whose year Zotero could not read is stored as 0000-…, which is before nothing.
        DateTest::Before(value) => {
            stored < dates::bound(value, "00", now_ms) && (whole_stamp || stored.as_str() > "0000-00-00")
        }
        DateTest::After(value) => stored > dates::bound(value, "__", now_ms),
        DateTest::InTheLast(span) => stored > dates::cutoff(now_ms, *span),
    }
}

impl Rule {
    /// Whether the item has what the condition asks about (before negation).
    pub fn has(&self, item: &ZoteroObject, context: &Context<'_>) -> bool {
        match &self.test {
            Test::Collection(key) => {
                let wanted = context.collections.get(key);
                item.data
                    .get("collections")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .any(|c| match wanted {
                        Some(set) => set.contains(c),
                        None => c == key,
                    })
            }
            Test::Tag(op, value) => tags(item).any(|t| text::matches(*op, t, value)),
            Test::ItemType(value) => item.item_type().is_some_and(|t| t.eq_ignore_ascii_case(value)),
            Test::Field(names, op, value) => names.iter().any(|n| text::matches(*op, string(item, n), value)),
            Test::Creator(kind, op, value) => creator_names(item, *kind).any(|n| text::matches(*op, &n, value)),
            Test::Note(value) => {
                item.item_type() == Some("note")
                    && text::matches(TextOp::Contains, &html_to_text(string(item, "note")), value)
            }
            Test::AnnotationText(value) => text::matches(TextOp::Contains, string(item, "annotationText"), value),
            Test::AnnotationComment(value) => text::matches(TextOp::Contains, string(item, "annotationComment"), value),
            Test::AnyField(value) => {
                field_values(item).any(|v| text::matches(TextOp::Contains, &v, value))
                    || tags(item).any(|t| text::matches(TextOp::Contains, t, value))
                    || creator_names(item, None).any(|n| text::matches(TextOp::Contains, &n, value))
                    || (item.item_type() == Some("note")
                        && text::matches(TextOp::Contains, &html_to_text(string(item, "note")), value))
            }
            Test::Date(field, test) => date_matches(item, *field, test, context.now_ms),
            Test::FullText(value) => context.fulltext.get(value).is_some_and(|keys| keys.contains(&item.key)),
        }
    }

    /// Whether an annotation could be among the items this rule lets through: a negated rule never lets one
    /// through (full text aside, which annotations never contain), and most positive ones ask about what
    /// annotations do not have.
    pub fn may_match_annotations(&self) -> bool {
        match &self.test {
            Test::FullText(_) => self.negated,
            _ if self.negated => false,
            Test::Tag(..) | Test::AnyField(_) | Test::AnnotationText(_) | Test::AnnotationComment(_) => true,
            Test::Date(field, _) => matches!(field, DateField::Added | DateField::Modified),
            Test::ItemType(value) => value == "annotation",
            _ => false,
        }
    }
}
