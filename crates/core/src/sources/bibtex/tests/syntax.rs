//! The syntax: macros, concatenation, delimiters, keys, white space.

use super::*;

#[test]
fn string_macros_concatenation_and_months() {
    let text = r#"
@string{ieee = "IEEE"}
@STRING(tpami = ieee # " Transactions on Pattern Analysis")
@string{pre = {Proc. }}
@article{k,
  journal = tpami # { and Machine Intelligence},
  booktitle = pre # "of " # "X",
  title = "A " # {{"}Quoted{"}} # " title",
  month = dec,
  year = 1999,
  volume = 21 # {b},
  publisher = undefinedmacro,
}
"#;
    let item = only_item(text);
    assert_eq!(item["publicationTitle"], json!("IEEE Transactions on Pattern Analysis and Machine Intelligence"));
    assert_eq!(item["title"], json!("A \"Quoted\" title"));
    assert_eq!(item["date"], json!("1999-12"));
    assert_eq!(item["volume"], json!("21b"));
    assert_eq!(item["publisher"], json!("undefinedmacro"), "journal articles have a publisher in Zotero's schema");
    let doc = only_item("@misc{k, publisher = undefinedMacro}");
    assert_eq!(doc["publisher"], json!("undefinedMacro"));
    // A @string may redefine a month.
    let redefined = only_item("@string{may = {5}}@article{k, year = 2001, month = may}");
    assert_eq!(redefined["date"], json!("2001-05"));
}

#[test]
fn parentheses_delimit_entries_too() {
    let item = only_item("@article(key, title = {With (parentheses) inside}, year = {2001})");
    assert_eq!(item["title"], json!("With (parentheses) inside"));
    assert_eq!(item["extra"], json!("Citation Key: key"));
}

#[test]
fn nested_braces_and_escapes() {
    let item =
        only_item(r#"@article{k, title = {The {{DNA}} of {\em {C}ats} \{not\} 100\% \& more}, note = "M\"uller"}"#);
    assert_eq!(item["title"], json!("The DNA of Cats {not} 100% & more"));
    assert_eq!(item["extra"], json!("Citation Key: k\nMüller"));
}

#[test]
fn keys_fields_and_text_outside_entries() {
    let entries = parse_bibtex(
        "Some words before. @ signs in prose are fine: me@example.org.\n\
         @article{title = {No key}}\n@book{, title = {Empty key}}\n@misc{onlykey}\n\
         @article { spaced , title = {Spaced} , , }",
    );
    let keys: Vec<Option<&str>> = entries.iter().map(|entry| entry.key.as_deref()).collect();
    assert_eq!(keys, [None, None, Some("onlykey"), Some("spaced")]);
    let titles: Vec<Option<&Value>> =
        entries.iter().map(|entry| entry.outcome.as_ref().ok().and_then(|item| item.get("title"))).collect();
    assert_eq!(titles, [Some(&json!("No key")), Some(&json!("Empty key")), None, Some(&json!("Spaced"))]);
    assert!(entries[0].outcome.as_ref().is_ok_and(|item| item.get("extra").is_none()));
}

#[test]
fn keys_are_trimmed_of_any_white_space() {
    // Found by the fuzzer: a vertical tab is no ASCII white space to Rust, so it ended up in the key.
    let entries = parse_bibtex("@misc{\u{a0}key\u{b}, title = {T}}\n@misc{\u{b}, title = {U}}");
    assert_eq!(entries[0].key.as_deref(), Some("key"));
    assert_eq!(entries[1].key, None);
    assert!(entries[1].outcome.as_ref().is_ok_and(|item| item.get("extra").is_none()));
}

#[test]
fn a_field_given_twice_keeps_the_first() {
    let item = only_item("@article{k, title = {First}, TITLE = {Second}}");
    assert_eq!(item["title"], json!("First"));
}

#[test]
fn crlf_bom_and_empty_input() {
    let item = only_item("\u{feff}@article{k,\r\n  title = {Line\r\n  two},\r\n  year = 2020\r\n}\r\n");
    assert_eq!(item["title"], json!("Line two"));
    assert!(parse_bibtex("").is_empty());
    assert!(parse_bibtex("\u{feff}\r\n% only a comment\r\n").is_empty());
    assert!(parse_bibtex("@comment{anything @article{x, title={y}} here}").is_empty());
}
