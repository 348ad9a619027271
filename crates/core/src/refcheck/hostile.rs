//! Manuscripts of about a megabyte shaped to make a quadratic reader crawl (a security review measured the
//! earlier readers at 10 to 70 seconds on a quarter of this size, in release). Each must be read within a
//! minute in a debug build: the deadline fails the old readers by far and holds the linear ones easily.

use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Map};

use super::cites::{latex_citations, pandoc_citations, Citation, MAX_SENTENCE_CHARS};
use super::compare::{for_each_same_work, others_named, MAX_NAMED_LABELS};
use super::reflist::references;
use super::{Detected, Format, TooLarge, MAX_CITATIONS, MAX_REFERENCES};
use crate::sources::{detect_each, BibEntry};

const MEGABYTE: usize = 1_000_000;

/// `work`'s result, computed on a thread of its own; the test fails when it takes more than a minute.
fn within_a_minute<T: Send + 'static>(what: &str, work: impl FnOnce() -> T + Send + 'static) -> T {
    let (send, receive) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = send.send(work());
    });
    receive.recv_timeout(Duration::from_secs(60)).unwrap_or_else(|_| panic!("{what} took more than a minute"))
}

/// Repeats `piece(n)` for n = 0, 1, … until the text is a megabyte long or `most` pieces are in.
fn text_of(most: usize, piece: impl Fn(usize) -> String) -> String {
    let mut text = String::with_capacity(MEGABYTE + 100);
    for n in 0..most {
        if text.len() >= MEGABYTE {
            break;
        }
        text.push_str(&piece(n));
    }
    text
}

#[test]
fn one_reference_of_a_megabyte_of_initials() {
    let text = "A. ".repeat(MEGABYTE / 3);
    let read = within_a_minute("a reference of initials", move || references(&text));
    let read = read.expect("one reference is within the limits");
    assert_eq!(read.len(), 1);
    assert_eq!(read[0].first_author, None);
}

#[test]
fn a_megabyte_of_latex_citations_one_per_sentence() {
    let text = text_of(MAX_CITATIONS, |n| format!("Lorem ipsum dolor sit amet, as seen in \\cite{{k{n}}}. "));
    assert!(text.len() >= 950_000, "{}", text.len());
    let commands = text.matches("\\cite{").count();
    let detected = within_a_minute("LaTeX citations", move || Format::detect_reading(&text));
    assert_eq!(detected.format, Format::Latex);
    let found = detected.citations.expect("read while detecting").expect("within the limits");
    assert_eq!(found.len(), commands);
    let last = found.last().expect("citations");
    assert_eq!((&*last.sentence, last.line), ("Lorem ipsum dolor sit amet, as seen in.", 1));
}

#[test]
fn a_megabyte_of_pandoc_citations_on_one_line_in_an_unclosed_bracket() {
    // One line, one sentence, one `[` never closed: each `@` looks back for a bracket and forward for its end.
    let text =
        format!("[{}", text_of(MAX_CITATIONS, |n| format!("@k{n} and the words of this long sentence go on and on ")));
    assert!(text.len() >= 950_000, "{}", text.len());
    let detected = within_a_minute("Pandoc citations", move || Format::detect_reading(&text));
    assert_eq!(detected.format, Format::Markdown);
    let found = detected.citations.expect("read while detecting").expect("within the limits");
    assert!(found.len() >= 17_000, "{}", found.len());
    // One sentence of a megabyte: one copy, cut, shared by every citation.
    assert!(found.iter().all(|c| Arc::ptr_eq(&c.sentence, &found[0].sentence)));
    assert_eq!(found[0].sentence.chars().count(), MAX_SENTENCE_CHARS + 1);
}

#[test]
fn a_megabyte_of_dois_detected_and_grouped() {
    let text = text_of(usize::MAX, |n| format!("10.1000/journal.{n:07}\n"));
    let (count, format) = within_a_minute("DOIs detected", move || {
        (detect_each(&text).filter(|(_, found)| found.is_ok()).count(), Format::detect(&text))
    });
    assert!(count > 40_000, "{count}");
    assert_eq!(format, Format::Identifiers);

    // As many entries, all different works, then one work under many labels: grouped by the identifiers they
    // share, never pair by pair.
    let entry = |index: usize, key: String, doi: String| {
        let data: Map<String, serde_json::Value> =
            json!({"itemType": "journalArticle", "title": "", "DOI": doi}).as_object().cloned().unwrap_or_default();
        BibEntry { index, key: Some(key), outcome: Ok(data) }
    };
    let mut entries: Vec<BibEntry> =
        (0..count).map(|n| entry(n + 1, format!("d{n}"), format!("10.1000/journal.{n:07}"))).collect();
    entries.extend((0..4_000).map(|n| entry(count + n + 1, format!("s{n}"), "10.1000/ONE".into())));
    let groups = within_a_minute("works grouped", move || {
        let mut groups: Vec<usize> = Vec::new();
        for_each_same_work(&entries, |group| groups.push(group.len()));
        groups
    });
    assert_eq!(groups, [4_000]);
}

#[test]
fn the_keys_of_a_command_and_the_commands_of_a_sentence_share_one_cut_sentence() {
    let long = "é ".repeat(2_000);
    let tex = format!("Short one \\cite{{a, b}} and \\citep{{c}}. Then {long}\\cite{{d}}.");
    let found: Vec<Citation> = latex_citations(&tex).expect("within the limits");
    assert_eq!(found.len(), 4);
    assert!(Arc::ptr_eq(&found[0].sentence, &found[1].sentence), "the keys of one command");
    assert!(Arc::ptr_eq(&found[0].sentence, &found[2].sentence), "two commands of one sentence");
    assert_eq!(&*found[0].sentence, "Short one and.");
    // Cut on a character boundary (`é` is two bytes), with an ellipsis.
    let cut = &found[3].sentence;
    assert_eq!(cut.chars().count(), MAX_SENTENCE_CHARS + 1);
    assert!(cut.starts_with("Then é é") && cut.ends_with('…'), "{cut}");
    let md = pandoc_citations("As [@x; @y] said.").expect("within the limits");
    assert!(Arc::ptr_eq(&md[0].sentence, &md[1].sentence));
}

#[test]
fn over_a_limit_the_reading_stops_and_says_what_to_do() {
    let keys: Vec<String> = (0..=MAX_CITATIONS).map(|n| format!("k{n}")).collect();
    let tex = format!("See \\cite{{{}}}.", keys.join(","));
    assert_eq!(latex_citations(&tex), Err(TooLarge::Citations));
    let md = format!("See [{}].", keys.iter().map(|k| format!("@{k}")).collect::<Vec<_>>().join("; "));
    assert_eq!(pandoc_citations(&md), Err(TooLarge::Citations));
    let list: String = (0..=MAX_REFERENCES).map(|n| format!("Author {n}. A title of work {n}. 2020.\n")).collect();
    assert_eq!(references(&list).map(|r| r.len()), Err(TooLarge::References));
    assert!(matches!(Format::detect_reading(&tex), Detected { format: Format::Latex, citations: Some(Err(_)) }));

    assert_eq!((MAX_CITATIONS, MAX_REFERENCES), (20_000, 5_000), "the messages name these numbers");
    let citations = TooLarge::Citations.to_string();
    assert!(citations.contains("more than 20,000 citations") && citations.contains("split it"), "{citations}");
    let references = TooLarge::References.to_string();
    assert!(references.contains("more than 5,000 references") && references.contains("split it"), "{references}");
    let keys = TooLarge::Keys.to_string();
    assert!(keys.contains("more than 5,000 entries") && keys.contains("only the entries"), "{keys}");
}

#[test]
fn also_cited_as_names_ten_labels_and_counts_the_rest() {
    let labels: Vec<String> = (0..4_000).map(|n| format!("k{n}")).collect();
    let group: Vec<&str> = labels.iter().map(String::as_str).collect();
    let named = others_named(&group, "k0");
    assert_eq!(named, "k1, k2, k3, k4, k5, k6, k7, k8, k9, k10 … and 3,989 more");
    assert_eq!(named.matches(", ").count() + 1, MAX_NAMED_LABELS);
    assert_eq!(others_named(&["a", "b", "c"], "b"), "a, c");
    assert_eq!(others_named(&group[..11], "k10"), "k0, k1, k2, k3, k4, k5, k6, k7, k8, k9");
}
