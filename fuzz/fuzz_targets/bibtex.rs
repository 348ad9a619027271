//! BibTeX / BibLaTeX import (`zotero_mcp_core::sources::parse_bibtex`), which reads whatever text a caller
//! pastes or uploads as a `.bib` file.
//!
//! Input: any bytes, read as UTF-8 text (other inputs are skipped).
//!
//! What must hold, for any input:
//! - no panic, no stack overflow, and time and memory bounded by the limits (text, entries, value length, macro
//!   expansion);
//! - the outcomes are numbered 1, 2, … with no gap, at most `MAX_ENTRIES` of them plus one `TooManyEntries`
//!   (which, when present, is the last); a text over `MAX_TEXT_BYTES` gives exactly one `TextTooLarge`;
//! - every error message is non-empty and every line it names exists in the text (entry line ≤ error line);
//! - every item has a known `itemType`; `creators` holds only `{creatorType, name}` or
//!   `{creatorType, firstName, lastName}` with non-empty text; `tags` only non-empty `{tag}`; every other field
//!   is a non-empty string with no white space at either end and no line break (except `extra`, whose lines are
//!   each non-empty);
//! - parsing is deterministic: the same text gives the same outcomes.

#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use zotero_mcp_core::sources::bibtex::{BibError, MAX_ENTRIES, MAX_TEXT_BYTES};
use zotero_mcp_core::sources::parse_bibtex;

const ITEM_TYPES: &[&str] = &[
    "journalArticle",
    "magazineArticle",
    "newspaperArticle",
    "book",
    "bookSection",
    "conferencePaper",
    "thesis",
    "report",
    "webpage",
    "document",
    "manuscript",
    "patent",
    "dataset",
    "computerProgram",
    "preprint",
    "letter",
];

fn non_empty_trimmed(value: &Value, what: &str) {
    let text = value.as_str().unwrap_or_else(|| panic!("{what} is not a string: {value:?}"));
    assert!(!text.is_empty(), "{what} is empty");
    assert_eq!(text.trim(), text, "{what} has white space at an end");
}

fn check_lines(error: &BibError, lines: usize) {
    let (line, entry_line) = match error {
        BibError::Unterminated { line, next_entry_line, .. } => {
            assert!(next_entry_line.is_none_or(|next| next > *line && next <= lines), "{error:?}");
            (*line, *line)
        }
        BibError::Syntax { line, entry_line, .. } | BibError::ValueTooLong { line, entry_line, .. } => {
            (*line, *entry_line)
        }
        BibError::TooManyEntries { line, .. } => (*line, *line),
        BibError::TextTooLarge { .. } => return,
    };
    assert!(1 <= entry_line && entry_line <= line && line <= lines, "{error:?} in {lines} lines");
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let entries = parse_bibtex(text);
    if text.len() > MAX_TEXT_BYTES {
        assert_eq!(entries.len(), 1);
        assert!(matches!(entries[0].outcome, Err(BibError::TextTooLarge { .. })));
        return;
    }
    assert!(entries.len() <= MAX_ENTRIES + 1);
    let lines = text.split('\n').count();
    for (position, entry) in entries.iter().enumerate() {
        assert_eq!(entry.index, position + 1);
        match &entry.outcome {
            Err(error) => {
                assert!(!error.to_string().is_empty());
                check_lines(error, lines);
                if matches!(error, BibError::TooManyEntries { .. }) {
                    assert_eq!(position, entries.len() - 1, "TooManyEntries is not the last outcome");
                    assert_eq!(position, MAX_ENTRIES);
                }
            }
            Ok(item) => {
                let item_type = item.get("itemType").and_then(Value::as_str).unwrap_or_default();
                assert!(ITEM_TYPES.contains(&item_type), "itemType {item_type:?}");
                for (field, value) in item {
                    match field.as_str() {
                        "itemType" => {}
                        "creators" => {
                            for creator in value.as_array().unwrap_or_else(|| panic!("creators: {value:?}")) {
                                let creator = creator.as_object().unwrap_or_else(|| panic!("{creator:?}"));
                                non_empty_trimmed(&creator["creatorType"], "creatorType");
                                match (creator.get("name"), creator.get("firstName"), creator.get("lastName")) {
                                    (Some(name), None, None) => non_empty_trimmed(name, "name"),
                                    (None, Some(first), Some(last)) => {
                                        non_empty_trimmed(first, "firstName");
                                        non_empty_trimmed(last, "lastName");
                                    }
                                    _ => panic!("creator {creator:?}"),
                                }
                                assert_eq!(creator.len(), if creator.contains_key("name") { 2 } else { 3 });
                            }
                        }
                        "tags" => {
                            for tag in value.as_array().unwrap_or_else(|| panic!("tags: {value:?}")) {
                                assert_eq!(tag.as_object().map(|tag| tag.len()), Some(1), "{tag:?}");
                                non_empty_trimmed(&tag["tag"], "tag");
                            }
                        }
                        "extra" => {
                            non_empty_trimmed(value, "extra");
                            let extra = value.as_str().unwrap_or_default();
                            assert!(extra.split('\n').all(|line| !line.trim().is_empty()), "{extra:?}");
                        }
                        _ => {
                            non_empty_trimmed(value, field);
                            assert!(!value.as_str().unwrap_or_default().contains('\n'), "{field}: {value:?}");
                        }
                    }
                }
            }
        }
    }
    assert_eq!(parse_bibtex(text), entries, "not deterministic");
});
