//! Dates as Zotero's search compares them: everything becomes `YYYY-MM-DD` text and is compared as text.
//!
//! An item's `date` is Zotero's parsed form of what was typed, with `00` for a missing month or day (the API's
//! `meta.parsedDate`, padded: "2021-07" is `2021-07-00`); `dateAdded`, `dateModified` and `accessDate` are UTC
//! timestamps cut to their day. A condition's value is read the same way, with the parts it lacks filled in by
//! the operator: `is 2021` is the pattern `2021-__-__` (any day of 2021), `isBefore 2021-07` compares with
//! `2021-07-00` (so a date of just "2021" counts as before July 2021, as in Zotero), `isAfter 2021` with
//! `2021-__-__`, which only a later year passes. `isInTheLast 7 days` keeps days after the day seven days ago.
//! Zotero uses the computer's time zone for timestamps and "today"; a server has none, so UTC is used.

use crate::calendar::{civil_from_days, days_from_civil};

/// A date a condition names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum DateValue {
    /// What was typed: a year, and perhaps a month and a day.
    Parts { year: u32, month: Option<u32>, day: Option<u32> },
    /// `today` (0), `yesterday` (-1) or `tomorrow` (1), resolved when the search runs.
    Relative(i64),
    /// `YYYY-MM-DD HH:MM:SS`: Zotero compares such a value with the whole timestamp.
    DateTime(String),
}

/// `7 days`, `2 months`, `1 year` (the value of `isInTheLast`; weeks are counted as days).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Span {
    pub count: u32,
    pub unit: Unit,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Unit {
    Days,
    Months,
    Years,
}

fn month_named(word: &str) -> Option<u32> {
    let word = word.trim_end_matches('.').to_lowercase();
    if word.len() < 3 {
        return None;
    }
    crate::calendar::MONTH_NAMES.iter().position(|m| m.starts_with(&word)).and_then(|i| u32::try_from(i + 1).ok())
}

fn number(part: &str, digits: std::ops::RangeInclusive<usize>) -> Option<u32> {
    (digits.contains(&part.len()) && part.bytes().all(|b| b.is_ascii_digit())).then(|| part.parse().ok()).flatten()
}

fn valid(year: u32, month: Option<u32>, day: Option<u32>) -> Option<DateValue> {
    let month_ok = month.is_none_or(|m| (1..=12).contains(&m));
    let day_ok = day.is_none_or(|d| (1..=31).contains(&d)) && (day.is_none() || month.is_some());
    (month_ok && day_ok).then_some(DateValue::Parts { year, month, day })
}

/// A condition's date, in the forms people type: `2021`, `2021-07`, `2021-07-15` (or with `/`), `July 2021`,
/// `15 July 2021`, `July 15, 2021`, `today`, `yesterday`, `tomorrow`, or a full `YYYY-MM-DD HH:MM:SS`. Anything
/// else (`7/15/2021`, whose order depends on the locale; `spring 2021`) is `None`, and the condition refused.
pub(super) fn parse_value(text: &str) -> Option<DateValue> {
    let text = text.trim();
    match text.to_lowercase().as_str() {
        "today" => return Some(DateValue::Relative(0)),
        "yesterday" => return Some(DateValue::Relative(-1)),
        "tomorrow" => return Some(DateValue::Relative(1)),
        _ => {}
    }
    if is_datetime(text) {
        return Some(DateValue::DateTime(text.to_owned()));
    }
    let mut numeric = text.split(['-', '/']);
    if let Some(year) = numeric.next().and_then(|year| number(year, 4..=4)) {
        let (month, day) = (numeric.next(), numeric.next());
        if numeric.next().is_some() {
            return None;
        }
        let month = month.map(|m| number(m, 1..=2));
        let day = day.map(|d| number(d, 1..=2));
        return match (month, day) {
            (None, _) => valid(year, None, None),
            (Some(month), None) => valid(year, Some(month?), None),
            (Some(month), Some(day)) => valid(year, Some(month?), Some(day?)),
        };
    }
    let mut words = text.split([' ', ',']).filter(|w| !w.is_empty());
    match (words.next(), words.next(), words.next(), words.next()) {
        (Some(month), Some(year), None, _) => valid(number(year, 4..=4)?, Some(month_named(month)?), None),
        (Some(first), Some(second), Some(year), None) => {
            let year = number(year, 4..=4)?;
            match (number(first, 1..=2), month_named(second)) {
                (Some(day), Some(month)) => valid(year, Some(month), Some(day)),
                _ => valid(year, Some(month_named(first)?), Some(number(second, 1..=2)?)),
            }
        }
        _ => None,
    }
}

fn is_datetime(text: &str) -> bool {
    let b = text.as_bytes();
    b.len() == 19
        && b[10] == b' '
        && b[13] == b':'
        && b[16] == b':'
        && sql_date(&text[..10]).is_some()
        && [11, 12, 14, 15, 17, 18].iter().all(|&i| b[i].is_ascii_digit())
}

/// `isInTheLast`'s value: a count and `days`, `weeks`, `months` or `years` (singular too).
pub(super) fn parse_span(text: &str) -> Option<Span> {
    let mut words = text.split_whitespace();
    let count: u32 = words.next()?.parse().ok()?;
    let unit = words.next()?.to_lowercase();
    if words.next().is_some() {
        return None;
    }
    let (count, unit) = match unit.trim_end_matches('s') {
        "day" => (count, Unit::Days),
        "week" => (count.checked_mul(7)?, Unit::Days),
        "month" => (count, Unit::Months),
        "year" => (count, Unit::Years),
        _ => return None,
    };
    Some(Span { count, unit })
}

/// A valid `YYYY-MM-DD` prefix of a text, as it is.
fn sql_date(text: &str) -> Option<&str> {
    let day = text.get(..10)?;
    let b = day.as_bytes();
    let digits = [0, 1, 2, 3, 5, 6, 8, 9].iter().all(|&i| b[i].is_ascii_digit());
    (digits && b[4] == b'-' && b[7] == b'-').then_some(day)
}

/// The day of a timestamp (`2024-05-06T07:08:09Z` → `2024-05-06`).
pub(super) fn day_of_timestamp(stamp: &str) -> Option<String> {
    sql_date(stamp).map(str::to_owned)
}

/// A timestamp as Zotero stores it (`2024-05-06 07:08:09`), for values given to the second.
pub(super) fn datetime_of_timestamp(stamp: &str) -> Option<String> {
    let date = sql_date(stamp)?;
    let time = stamp
        .get(11..19)
        .filter(|t| t.bytes().enumerate().all(|(i, b)| if i % 3 == 2 { b == b':' } else { b.is_ascii_digit() }))?;
    Some(format!("{date} {time}"))
}

/// An item's date as Zotero stores it, from the API's `parsedDate` (`2021`, `2021-07`, `2021-07-15`): missing
/// parts are `00`, and a date Zotero could not parse is `0000-00-00`.
pub(super) fn sql_of_parsed(parsed: Option<&str>) -> String {
    let mut parts = parsed.unwrap_or("").split('-');
    let year = parts.next().and_then(|y| number(y, 4..=4));
    let mut part = || parts.next().and_then(|p| number(p, 1..=2)).unwrap_or(0);
    match year {
        Some(year) => {
            let month = part();
            let day = if month == 0 { 0 } else { part() };
            format!("{year:04}-{month:02}-{day:02}")
        }
        None => "0000-00-00".to_owned(),
    }
}

fn format_day(days: i64) -> String {
    let (y, m, d) = civil_from_days(days);
    format!("{y:04}-{m:02}-{d:02}")
}

/// The UTC day number of a time in milliseconds since the epoch.
fn today(now_ms: u64) -> i64 {
    i64::try_from(now_ms / 86_400_000).unwrap_or(i64::MAX / 2)
}

/// The day `span` before today, as `YYYY-MM-DD`: what `isInTheLast` compares with (strictly after it).
pub(super) fn cutoff(now_ms: u64, span: Span) -> String {
    let (y, m, d) = civil_from_days(today(now_ms));
    let count = i64::from(span.count);
    let days = match span.unit {
        Unit::Days => today(now_ms) - count,
        Unit::Months => days_from_civil(y, m - count, d),
        Unit::Years => days_from_civil(y - count, m, d),
    };
    format_day(days)
}

/// The text a date value is compared with: its parts padded with `fill` (`__` for `is`/`isAfter`, `00` for
/// `isBefore`), or the whole day for a relative one.
pub(super) fn bound(value: &DateValue, fill: &str, now_ms: u64) -> String {
    match value {
        DateValue::Parts { year, month, day } => {
            let pad = |part: Option<u32>| part.map_or_else(|| fill.to_owned(), |p| format!("{p:02}"));
            format!("{year:04}-{}-{}", pad(*month), pad(*day))
        }
        DateValue::Relative(offset) => format_day(today(now_ms) + offset),
        DateValue::DateTime(text) => text.clone(),
    }
}

/// SQL's `LIKE` with only the one-character wildcard `_` (the only one a date pattern holds).
pub(super) fn like(value: &str, pattern: &str) -> bool {
    value.len() == pattern.len() && value.bytes().zip(pattern.bytes()).all(|(v, p)| p == b'_' || v == p)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAY_17_2024_NOON: u64 = 1_715_947_200_000;

    #[test]
    fn reads_the_forms_people_type() {
        let parts = |year, month, day| Some(DateValue::Parts { year, month, day });
        assert_eq!(parse_value("2021"), parts(2021, None, None));
        assert_eq!(parse_value("2021-07"), parts(2021, Some(7), None));
        assert_eq!(parse_value("2021/7/5"), parts(2021, Some(7), Some(5)));
        assert_eq!(parse_value("July 2021"), parts(2021, Some(7), None));
        assert_eq!(parse_value("15 Jul 2021"), parts(2021, Some(7), Some(15)));
        assert_eq!(parse_value("July 15, 2021"), parts(2021, Some(7), Some(15)));
        assert_eq!(parse_value("Yesterday"), Some(DateValue::Relative(-1)));
        assert_eq!(parse_value("2024-05-06 07:08:09"), Some(DateValue::DateTime("2024-05-06 07:08:09".into())));
        for refused in ["7/15/2021", "spring 2021", "2021-13", "2021-02-40", "21", "", "Ju 2021"] {
            assert_eq!(parse_value(refused), None, "{refused}");
        }
    }

    #[test]
    fn pads_values_as_the_operator_needs() {
        let july = DateValue::Parts { year: 2021, month: Some(7), day: None };
        assert_eq!(bound(&july, "__", 0), "2021-07-__");
        assert_eq!(bound(&july, "00", 0), "2021-07-00");
        assert_eq!(bound(&DateValue::Relative(-1), "__", MAY_17_2024_NOON), "2024-05-16");
        assert!(like("2021-07-15", "2021-07-__"));
        assert!(like("2021-00-00", "2021-__-__"));
        assert!(!like("2021-08-15", "2021-07-__"));
        // isAfter 2021 is passed by later years only, isBefore July 2021 by a bare "2021".
        assert!("2022-00-00" > "2021-__-__" && "2021-12-31" < "2021-__-__");
        assert!("2021-00-00" < "2021-07-00");
    }

    #[test]
    fn an_item_date_is_its_parsed_form_padded() {
        assert_eq!(sql_of_parsed(Some("2021-07")), "2021-07-00");
        assert_eq!(sql_of_parsed(Some("2021")), "2021-00-00");
        assert_eq!(sql_of_parsed(Some("2021-07-15")), "2021-07-15");
        assert_eq!(sql_of_parsed(None), "0000-00-00");
        assert_eq!(day_of_timestamp("2024-05-06T07:08:09Z").as_deref(), Some("2024-05-06"));
        assert_eq!(datetime_of_timestamp("2024-05-06T07:08:09Z").as_deref(), Some("2024-05-06 07:08:09"));
        assert_eq!(day_of_timestamp("May 2024"), None);
    }

    #[test]
    fn the_last_days_months_and_years_end_today() {
        let span = |text| parse_span(text).unwrap();
        assert_eq!(cutoff(MAY_17_2024_NOON, span("7 days")), "2024-05-10");
        assert_eq!(cutoff(MAY_17_2024_NOON, span("2 weeks")), "2024-05-03");
        assert_eq!(cutoff(MAY_17_2024_NOON, span("5 months")), "2023-12-17");
        assert_eq!(cutoff(MAY_17_2024_NOON, span("1 year")), "2023-05-17");
        // 2024-03-31 minus a month is "2024-02-31", which SQLite rolls over to 2024-03-02.
        assert_eq!(cutoff(1_711_886_400_000, span("1 month")), "2024-03-02");
        assert_eq!(parse_span("7 fortnights"), None);
        assert_eq!(parse_span("days"), None);
    }
}
