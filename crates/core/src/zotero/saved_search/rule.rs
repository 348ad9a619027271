//! One condition as a test of one item, the way Zotero 9's `search.js` builds it.
//!
//! Zotero turns every condition into the set of items having the value (`itemID IN (…)`); the negated operators
//! (`isNot`, `doesNotContain`) take every item *outside* that set except annotations. So a test here answers
//! the positive question ("has a tag `x`", "has a title containing `x`") for one item, and the rule says whether
//! it is negated. Which items are looked at (the trash, child items) is the plan's business.

use serde_json::Value;

use super::dates::{self, DateValue, Span};
use super::family::{array, holds, keys_of};
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

/// The positive question a condition asks of an item: what of it is compared with the rule's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Test {
    /// In the collection (or, with `recursive`, in it or one of its subcollections: resolved when run).
    Collection,
    Tag,
    ItemType,
    /// A data field under any of its names: its own, and the fields standing for it (`publicationTitle` is
    /// `bookTitle` in a book section).
    Field(&'static str, &'static [&'static str]),
    /// A creator's "first last" name, of any creator type or of one.
    Creator(Option<&'static str>),
    Note,
    AnnotationText,
    AnnotationComment,
    /// Any data field, tag, note text or creator contains the value.
    AnyField,
    /// One of the item's dates, compared as the rule's [`DateTest`] says.
    Date(DateField),
    /// An attachment's full text contains the phrase (answered from the attachments read, not the item).
    FullText,
}

/// A condition ready to test items with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Rule {
    pub test: Test,
    /// How a tag, field or creator is compared (the other tests compare as they say).
    pub op: TextOp,
    /// What is compared: the condition's value folded, or a collection key, or an item type in lower case.
    pub value: String,
    /// A date condition's comparison.
    pub date: Option<DateTest>,
    /// `isNot`/`doesNotContain`: the item must not have the value.
    pub negated: bool,
    pub condition: SearchCondition,
}

/// What a test may need besides the item.
pub(super) struct Context<'a> {
    /// With `recursive`: each collection a condition names → it and its subcollections, at every depth.
    pub collections: &'a [(String, Vec<String>)],
    /// Each full-text phrase (folded) → the attachments whose text was read and contains it.
    pub fulltext: &'a [(String, Vec<String>)],
    pub now_ms: u64,
}

/// The operators evaluated here, each a bit (`1 << position`) in the masks below.
const OPERATORS: [&str; 8] =
    ["is", "isNot", "contains", "doesNotContain", "beginsWith", "isBefore", "isAfter", "isInTheLast"];
const IS: u8 = 1;
const IS_NOT: u8 = 2;
const CONTAINS: u8 = 4;
const DOES_NOT_CONTAIN: u8 = 8;
const BEGINS_WITH: u8 = 16;
const IS_BEFORE: u8 = 32;
const IS_AFTER: u8 = 64;
const IS_IN_THE_LAST: u8 = 128;
const TEXT: u8 = IS | IS_NOT | CONTAINS | DOES_NOT_CONTAIN;

/// The conditions that are not data fields read by name (a table rather than a `match`: its string comparisons cost wasm).
const KINDS: [(&str, Test); 17] = [
    ("collection", Test::Collection),
    ("tag", Test::Tag),
    ("itemType", Test::ItemType),
    ("creator", Test::Creator(None)),
    ("author", Test::Creator(Some("author"))),
    ("editor", Test::Creator(Some("editor"))),
    ("bookAuthor", Test::Creator(Some("bookAuthor"))),
    // `childNote` is the old name of `note`; Zotero reads it as `note`.
    ("note", Test::Note),
    ("childNote", Test::Note),
    ("annotationText", Test::AnnotationText),
    ("annotationComment", Test::AnnotationComment),
    ("anyField", Test::AnyField),
    ("fulltextContent", Test::FullText),
    // `date` and `accessDate` are dates; `dateDecided` and the like are text to Zotero 9.
    ("dateAdded", Test::Date(DateField::Added)),
    ("dateModified", Test::Date(DateField::Modified)),
    ("date", Test::Date(DateField::Date)),
    ("accessDate", Test::Date(DateField::Accessed)),
];

/// The fields a field condition reads: the field, and the fields standing for it when it is a base field.
pub(super) fn field_names(name: &str) -> Option<(&'static str, &'static [&'static str])> {
    let own = FIELDS.iter().find(|f| **f == name)?;
    let mapped = BASE_FIELDS.iter().find(|(base, _)| *base == name).map_or(&[][..], |(_, mapped)| mapped);
    Some((own, mapped))
}

/// Fields Zotero also compares as numbers; only their text operators are evaluated here.
const NUMBER_FIELDS: [&str; 6] = ["pages", "numPages", "numberOfVolumes", "section", "seriesNumber", "issue"];

/// Why a saved search's condition is not evaluated here; the search is then refused, naming it.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub(super) enum NotEvaluated {
    #[error("the {0:?} mode (regular expressions, binary files) is not evaluated here")]
    Mode(String),
    #[error("only `anyField contains` is evaluated here")]
    AnyFieldOperator,
    #[error("an empty full-text phrase")]
    EmptyFullText,
    #[error("this condition is not evaluated here")]
    Condition,
    #[error("this operator is not evaluated for this condition")]
    Operator,
    #[error("{0:?} is not a period read here: use a number and days, weeks, months or years")]
    Period(String),
    #[error(
        "the date {0:?} is not one read here: use 2021, 2021-07, 2021-07-15, July 2021, 15 July 2021, today or \
         yesterday"
    )]
    Date(String),
    #[error("an item's date has no time of day; give the date alone")]
    TimeOfDay,
}

/// A date condition's test, its operator (one bit) already checked.
fn date_test(operator: u8, value: &str, field: DateField) -> Result<DateTest, NotEvaluated> {
    if operator == IS_IN_THE_LAST {
        let span = dates::parse_span(value).ok_or_else(|| NotEvaluated::Period(value.to_owned()))?;
        return Ok(DateTest::InTheLast(span));
    }
    let date = dates::parse_value(value).ok_or_else(|| NotEvaluated::Date(value.to_owned()))?;
    if matches!(date, DateValue::DateTime(_)) && field == DateField::Date {
        return Err(NotEvaluated::TimeOfDay);
    }
    Ok(match operator {
        IS_BEFORE => DateTest::Before(date),
        IS_AFTER => DateTest::After(date),
        _ => DateTest::Is(date),
    })
}

/// Old saved searches name a collection as `<libraryID>_<key>`; Zotero reads the key after the underscore.
fn collection_key(value: &str) -> String {
    value.rsplit_once('_').map_or(value, |(_, key)| key).to_owned()
}

/// A primary condition (not a flag such as `noChildren`) as a rule, or why it cannot be evaluated.
pub(super) fn rule_of(condition: &SearchCondition) -> Result<Rule, NotEvaluated> {
    let (name, mode) = condition.name_and_mode();
    let value = condition.value.as_str();
    if let Some(mode) = mode.filter(|m| !(name == "fulltextContent" && *m == "phrase")) {
        return Err(NotEvaluated::Mode(mode.to_owned()));
    }
    let operator = OPERATORS.iter().position(|o| *o == condition.operator).map_or(0, |i| 1 << i);
    let test = KINDS.iter().find(|(n, _)| *n == name).map(|(_, test)| *test);
    let (test, allowed) = match test {
        Some(test @ (Test::Collection | Test::ItemType)) => (test, IS | IS_NOT),
        Some(test @ (Test::Tag | Test::Creator(_) | Test::Field(..))) => (test, TEXT),
        Some(Test::Note) => (Test::Note, CONTAINS | DOES_NOT_CONTAIN),
        // Zotero never lets a negated condition match an annotation, so `doesNotContain` on annotation text
        // would match every other item: refused rather than reproduced.
        Some(test @ (Test::AnnotationText | Test::AnnotationComment)) => (test, CONTAINS),
        Some(Test::AnyField) if operator != CONTAINS => {
            return Err(NotEvaluated::AnyFieldOperator);
        }
        Some(Test::AnyField) => (Test::AnyField, CONTAINS),
        Some(Test::FullText) if value.trim().is_empty() => return Err(NotEvaluated::EmptyFullText),
        Some(Test::FullText) => (Test::FullText, CONTAINS | DOES_NOT_CONTAIN),
        Some(test @ Test::Date(_)) => (test, IS | IS_NOT | IS_BEFORE | IS_AFTER | IS_IN_THE_LAST),
        None => {
            let (own, mapped) = field_names(name).ok_or(NotEvaluated::Condition)?;
            let text = if NUMBER_FIELDS.contains(&name) { TEXT } else { TEXT | BEGINS_WITH };
            (Test::Field(own, mapped), text)
        }
    };
    if operator & allowed == 0 {
        return Err(NotEvaluated::Operator);
    }
    let op = match operator {
        IS | IS_NOT => TextOp::Is,
        BEGINS_WITH => TextOp::BeginsWith,
        _ => TextOp::Contains,
    };
    let date = match test {
        Test::Date(field) => Some(date_test(operator, value, field)?),
        _ => None,
    };
    let value = match test {
        Test::Collection => collection_key(value),
        Test::ItemType => value.to_ascii_lowercase(),
        _ => text::fold(value),
    };
    let negated = operator & (IS_NOT | DOES_NOT_CONTAIN) != 0;
    Ok(Rule { test, op, value, date, negated, condition: condition.clone() })
}

fn string<'a>(object: &'a ZoteroObject, name: &str) -> &'a str {
    object.data.get(name).and_then(Value::as_str).unwrap_or("")
}

/// `firstName lastName`, trimmed, or `name`: what Zotero compares a creator condition with.
fn creator_names<'a>(item: &'a ZoteroObject, creator_type: Option<&'a str>) -> impl Iterator<Item = String> + 'a {
    array(item, "creators").iter().filter_map(move |c| {
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
    array(item, "tags").iter().filter_map(|t| t.get("tag")?.as_str())
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
        let (op, value) = (self.op, self.value.as_str());
        match self.test {
            Test::Collection => {
                let wanted = keys_of(context.collections, value);
                array(item, "collections").iter().filter_map(Value::as_str).any(|c| match wanted {
                    Some(keys) => holds(keys, c),
                    None => c == value,
                })
            }
            Test::Tag => tags(item).any(|t| text::matches(op, t, value)),
            Test::ItemType => item.item_type().is_some_and(|t| t.eq_ignore_ascii_case(value)),
            Test::Field(own, mapped) => {
                std::iter::once(&own).chain(mapped).any(|n| text::matches(op, string(item, n), value))
            }
            Test::Creator(kind) => creator_names(item, kind).any(|n| text::matches(op, &n, value)),
            Test::Note => {
                item.item_type() == Some("note")
                    && text::matches(TextOp::Contains, &html_to_text(string(item, "note")), value)
            }
            Test::AnnotationText => text::matches(TextOp::Contains, string(item, "annotationText"), value),
            Test::AnnotationComment => text::matches(TextOp::Contains, string(item, "annotationComment"), value),
            Test::AnyField => {
                field_values(item).any(|v| text::matches(TextOp::Contains, &v, value))
                    || tags(item).any(|t| text::matches(TextOp::Contains, t, value))
                    || creator_names(item, None).any(|n| text::matches(TextOp::Contains, &n, value))
                    || (item.item_type() == Some("note")
                        && text::matches(TextOp::Contains, &html_to_text(string(item, "note")), value))
            }
            Test::Date(field) => self.date.as_ref().is_some_and(|test| date_matches(item, field, test, context.now_ms)),
            Test::FullText => keys_of(context.fulltext, value).is_some_and(|keys| holds(keys, &item.key)),
        }
    }

    /// Whether an annotation could be among the items this rule lets through: a negated rule never lets one
    /// through (full text aside, which annotations never contain), and most positive ones ask about what
    /// annotations do not have.
    pub fn may_match_annotations(&self) -> bool {
        match self.test {
            Test::FullText => self.negated,
            _ if self.negated => false,
            Test::Tag | Test::AnyField | Test::AnnotationText | Test::AnnotationComment => true,
            Test::Date(field) => matches!(field, DateField::Added | DateField::Modified),
            Test::ItemType => self.value == "annotation",
            _ => false,
        }
    }
}
