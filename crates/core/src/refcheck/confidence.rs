//! How surely a registry's candidate is the work a written reference describes. A search engine's score only
//! orders candidates for one query, so the judgement is made from what a reader would check: the title written
//! in the reference, the year, and the first author.

use serde_json::{Map, Value};

use super::reflist::ListedReference;
use crate::duplicates::normalise_title;

/// How surely a candidate is the work cited.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Confidence {
    /// Title, first author or year contradict, or are missing: not the work, or not knowable.
    Low,
    /// The title is in the reference, and the year (or, off by one, the first author) agrees.
    Medium,
    /// The title is in the reference, the year is the same and the first author's family name is there.
    High,
}

impl Confidence {
    pub fn name(self) -> &'static str {
        match self {
            Confidence::Low => "low",
            Confidence::Medium => "medium",
            Confidence::High => "high",
        }
    }
}

/// What a candidate (`data`, Zotero item data from a registry) has in common with `reference`.
pub fn confidence(reference: &ListedReference, data: &Map<String, Value>) -> Confidence {
    let written = normalise_title(&reference.text);
    let padded = format!(" {written} ");
    let contains = |phrase: &str| !phrase.is_empty() && padded.contains(&format!(" {phrase} "));
    let Some(title) = data.get("title").and_then(Value::as_str).map(normalise_title).filter(|t| !t.is_empty()) else {
        return Confidence::Low;
    };
    // A subtitle the reference leaves out still names the work when the main title is long enough to be distinct.
    let main = data
        .get("title")
        .and_then(Value::as_str)
        .and_then(|t| t.split_once([':', '?', '.']).map(|(main, _)| normalise_title(main)))
        .filter(|main| main.split(' ').count() >= 4);
    let parsed_title = reference.title.as_deref().map(normalise_title);
    // A short title ("Attention") is in many references; only one read off this reference names the work.
    let distinctive = title.split(' ').count() >= 3;
    let title_agrees = (distinctive && contains(&title))
        || main.as_deref().is_some_and(contains)
        || parsed_title.is_some_and(|t| t == title);
    if !title_agrees {
        return Confidence::Low;
    }
    let year = data.get("date").and_then(Value::as_str).and_then(crate::zotero::year_of);
    let written_year = reference.year.as_deref().and_then(|y| y.parse::<i64>().ok());
    let same_year = matches!((year, written_year), (Some(a), Some(b)) if i64::from(a) == b);
    let near_year = matches!((year, written_year), (Some(a), Some(b)) if (i64::from(a) - b).abs() <= 1);
    let author_agrees = first_author(data).is_some_and(|family| contains(&normalise_title(&family)));
    match (same_year, near_year, author_agrees) {
        (true, _, true) => Confidence::High,
        (true, _, false) | (false, true, true) => Confidence::Medium,
        _ => Confidence::Low,
    }
}

fn first_author(data: &Map<String, Value>) -> Option<String> {
    let creators = data.get("creators")?.as_array()?;
    let first = creators.first()?;
    first.get("lastName").or_else(|| first.get("name")).and_then(Value::as_str).map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::refcheck::reflist::references;

    fn candidate(title: &str, date: &str, family: &str) -> Map<String, Value> {
        let value = json!({"title": title, "date": date,
            "creators": [{"creatorType": "author", "firstName": "A", "lastName": family}]});
        value.as_object().cloned().unwrap_or_default()
    }

    fn listed(text: &str) -> ListedReference {
        references(text).expect("within the limits").into_iter().next().expect("one reference")
    }

    #[test]
    fn title_year_and_author_together_are_high() {
        let reference =
            listed("Vaswani A, Shazeer N. Attention is all you need. Adv Neural Inf Process Syst. 2017;30.");
        assert_eq!(
            confidence(&reference, &candidate("Attention Is All You Need", "2017", "Vaswani")),
            Confidence::High
        );
    }

    #[test]
    fn a_year_off_by_one_or_a_missing_author_is_medium() {
        let reference =
            listed("Vaswani A, Shazeer N. Attention is all you need. Adv Neural Inf Process Syst. 2017;30.");
        assert_eq!(
            confidence(&reference, &candidate("Attention is all you need", "2018", "Vaswani")),
            Confidence::Medium
        );
        assert_eq!(
            confidence(&reference, &candidate("Attention is all you need", "2017", "Smith")),
            Confidence::Medium
        );
    }

    #[test]
    fn another_title_is_low_whatever_the_rest() {
        let reference =
            listed("Vaswani A, Shazeer N. Attention is all you need. Adv Neural Inf Process Syst. 2017;30.");
        assert_eq!(
            confidence(&reference, &candidate("Attention is not all you need", "2017", "Vaswani")),
            Confidence::Low
        );
        assert_eq!(confidence(&reference, &candidate("Attention", "2017", "Vaswani")), Confidence::Low);
    }

    #[test]
    fn a_subtitle_left_out_of_the_reference_still_agrees() {
        let reference = listed("Smith J (2020) Deep learning for protein structure prediction. Nature 580:1-5.");
        let found = candidate("Deep learning for protein structure prediction: a review of methods", "2020", "Smith");
        assert_eq!(confidence(&reference, &found), Confidence::High);
    }
}
