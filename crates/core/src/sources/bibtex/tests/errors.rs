//! Entries that cannot be read: errors name their line, the others are still read; limits.

use super::*;

#[test]
fn a_malformed_entry_between_two_good_ones() {
    let text = "@article{good1,\n  title = {One}\n}\n\n@article{bad,\n  title = {Two,\n  author = {X}\n\n@book{good2,\n  title = {Three}\n}\n";
    let entries = parse_bibtex(text);
    assert_eq!(entries.len(), 3);
    assert_eq!(entries[0].outcome.as_ref().ok().and_then(|item| item.get("title")), Some(&json!("One")));
    assert_eq!(entries[1].key.as_deref(), Some("bad"));
    let error = entries[1].outcome.clone().err();
    assert_eq!(
        error,
        Some(BibError::Unterminated { line: 5, what: "entry", key: Some("bad".to_owned()), next_entry_line: Some(9) })
    );
    let message = error.map(|error| error.to_string()).unwrap_or_default();
    assert!(message.contains("line 5") && message.contains("line 9") && message.contains("`bad`"), "{message}");
    assert_eq!(entries[2].index, 3);
    assert_eq!(entries[2].outcome.as_ref().ok().and_then(|item| item.get("title")), Some(&json!("Three")));
}

#[test]
fn syntax_errors_name_their_line_and_reading_goes_on() {
    let text = "@article{a,\n  title = {One}\n  year = 2000\n}\n@article{b, title {Two}}\n@article{c, title = }\n\
                @article{d, title = {Four}}";
    let entries = parse_bibtex(text);
    assert_eq!(entries.len(), 4);
    match &entries[0].outcome {
        Err(BibError::Syntax { line: 3, entry_line: 1, expected, found, .. }) => {
            assert!(expected.contains("`,`"), "{expected}");
            assert_eq!(found, "`y`");
        }
        other => panic!("{other:?}"),
    }
    let message = entries[0].outcome.clone().err().map(|error| error.to_string()).unwrap_or_default();
    assert!(message.starts_with("Line 3, in the BibTeX entry `a` starting on line 1: expected `,`"), "{message}");
    assert!(matches!(&entries[1].outcome, Err(BibError::Syntax { line: 5, expected, .. }) if expected.contains("`=`")));
    assert!(
        matches!(&entries[2].outcome, Err(BibError::Syntax { line: 6, expected, .. }) if expected.contains("a value"))
    );
    assert_eq!(entries[3].outcome.as_ref().ok().and_then(|item| item.get("title")), Some(&json!("Four")));
}

#[test]
fn an_entry_cut_short_at_the_end() {
    let entries = parse_bibtex("@article{ok, title = {A}}\n\n@article{cut, title = {B");
    assert_eq!(
        entries[1].outcome,
        Err(BibError::Unterminated { line: 3, what: "entry", key: Some("cut".to_owned()), next_entry_line: None })
    );
    assert!(entries[1].outcome.clone().err().is_some_and(|error| error.to_string().contains("the end of the text")));
    let quoted = parse_bibtex("@article{q, title = \"open\n");
    assert!(matches!(quoted[0].outcome, Err(BibError::Unterminated { line: 1, .. })));
    let stray = parse_bibtex("@article{q, title = \"a}b\"}");
    assert!(matches!(&stray[0].outcome, Err(BibError::Syntax { expected, .. }) if expected.contains("`\"`")));
}

#[test]
fn a_broken_string_is_reported_and_the_entries_still_read() {
    let entries = parse_bibtex("@string{x {X}}\n@article{k, title = {T}}");
    assert_eq!(entries.len(), 2);
    assert_eq!(entries[0].key, None);
    let message = entries[0].outcome.clone().err().map(|error| error.to_string()).unwrap_or_default();
    assert!(message.contains("@string") && message.contains("line 1"), "{message}");
    assert!(entries[1].outcome.is_ok());
}

#[test]
fn limits() {
    let big = "x".repeat(MAX_TEXT_BYTES + 1);
    let entries = parse_bibtex(&big);
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0].outcome, Err(BibError::TextTooLarge { bytes: MAX_TEXT_BYTES + 1, limit: MAX_TEXT_BYTES }));

    let many = "@misc{k, title = {t}}\n".repeat(MAX_ENTRIES + 3);
    let entries = parse_bibtex(&many);
    assert_eq!(entries.len(), MAX_ENTRIES + 1);
    assert_eq!(
        entries[MAX_ENTRIES].outcome,
        Err(BibError::TooManyEntries { line: MAX_ENTRIES + 1, limit: MAX_ENTRIES })
    );

    let long =
        format!("@article{{k, abstract = {{{}}}}}\n@article{{ok, title = {{T}}}}", "a".repeat(MAX_VALUE_BYTES + 1));
    let entries = parse_bibtex(&long);
    assert!(matches!(&entries[0].outcome, Err(BibError::ValueTooLong { field, .. }) if field == "abstract"));
    assert!(entries[1].outcome.is_ok());

    // Macros that double at each step would reach 2^40 bytes: the budget stops them.
    let mut doubling = String::from("@string{m0 = {aaaaaaaaaaaaaaaa}}\n");
    for level in 1..=40 {
        doubling.push_str(&format!("@string{{m{level} = m{prev} # m{prev}}}\n", prev = level - 1));
    }
    doubling.push_str("@article{k, title = m40}\n");
    let entries = parse_bibtex(&doubling);
    assert!(entries.iter().any(|entry| matches!(entry.outcome, Err(BibError::ValueTooLong { .. }))));
    assert!(entries.len() < 45);
}

#[test]
fn hostile_texts_take_linear_time() {
    // Each of these was quadratic in a first draft; at the text limit they must finish at once.
    let comments = "@comment{".repeat(MAX_TEXT_BYTES / 9);
    assert!(parse_bibtex(&comments).is_empty());
    let unclosed_comment = "@comment{ {\n@article{k, title = {T}}\n";
    assert_eq!(only_item(unclosed_comment)["title"], json!("T"));

    let mut many_fields = String::from("@misc{k");
    for field in 0..150_000 {
        many_fields.push_str(&format!(",f{field}=1"));
    }
    many_fields.push_str(", title = {T}}");
    assert!(many_fields.len() < MAX_TEXT_BYTES);
    assert_eq!(only_item(&many_fields)["title"], json!("T"));

    let keywords: Vec<String> = (0..7_000).map(|n| format!("k{n}")).collect();
    let item = only_item(&format!("@misc{{k, keywords = {{{}, k1}}}}", keywords.join(", ")));
    assert_eq!(item["tags"].as_array().map(Vec::len), Some(7_000));
}

#[test]
fn deep_nesting_costs_no_stack() {
    // As deep as a value may be long.
    let depth = 30_000;
    let text = format!("@article{{k, title = {{{}x{}}}}}", "{".repeat(depth), "}".repeat(depth));
    assert_eq!(only_item(&text)["title"], json!("x"));
    let depth = 15_000;
    let accents = format!("@article{{k, title = {{{}o{}}}}}", "\\\"{".repeat(depth), "}".repeat(depth));
    assert_eq!(only_item(&accents)["title"], json!("ö"));
}
