//! Zotero 7 filename templates (`zotero_mcp_core::attachment::filename`), which `zotero_rename_attachments`
//! takes from the caller as `template`, rendered on an item whose fields come from the same input.
//!
//! Input: the first line is the template; the rest, split on `|`, fills the item's title, date, extra, the
//! creators' last names and the current file name.
//!
//! What must hold, for any input:
//! - no panic, and `check_template` either accepts or gives an error whose message is not empty;
//! - `valid_file_name` is idempotent, never empty, never `.` or `..`, at most 200 characters and 255 bytes,
//!   and holds none of `/ \ ? * : | " < >` nor a control character;
//! - `build_renamed_filename` gives `None` or a name that `valid_file_name` leaves as it is and that keeps the
//!   current file's extension;
//! - any `match`/`replaceFrom` pattern is refused by the limits or runs within them: `Template::checked` and
//!   `check_template` agree, and a template that passes renders (or is refused with `TooMuchSearching`) in well
//!   under a second, on the fuzzed item and on one whose fields are as long as a pattern reads
//!   (`MAX_PATTERN_INPUT_CHARS`) made of the fuzzed text repeated.

#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::{json, Map, Value};
use std::time::{Duration, Instant};

use zotero_mcp_core::attachment::filename::{
    build_renamed_filename, check_template, extension_of, render, valid_file_name, RenderError, Template,
    MAX_PATTERN_INPUT_CHARS, MAX_SEARCHED_CHARS,
};

/// What one rendering may take under the fuzzer's instrumentation; natively the limits keep it near 12 ms.
const MAX_RENDER_TIME: Duration = Duration::from_secs(1);

/// The template rendered on `item` within [`MAX_RENDER_TIME`], refused only for too much searching.
fn renders_within_limits(template: &Template, item: &Map<String, Value>) {
    let started = Instant::now();
    match template.render(item, None) {
        Ok(_) => {}
        Err(RenderError::TooMuchSearching { max }) => assert_eq!(max, MAX_SEARCHED_CHARS),
    }
    let took = started.elapsed();
    assert!(took < MAX_RENDER_TIME, "a template within the limits took {took:?} to render");
}

/// `text` repeated to the length a pattern reads.
fn long(text: &str) -> String {
    let seed = if text.is_empty() { "a" } else { text };
    seed.chars().cycle().take(MAX_PATTERN_INPUT_CHARS).collect()
}

fn check_name(name: &str) {
    assert_eq!(valid_file_name(name), name, "not idempotent: {name:?}");
    assert!(!name.is_empty() && name != "." && name != "..", "{name:?}");
    assert!(name.chars().count() <= 200 && name.len() <= 255, "{name:?}");
    assert!(!name.chars().any(|c| "/\\?*:|\"<>".contains(c) || (c as u32) < 0x20), "{name:?}");
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let (template, rest) = text.split_once('\n').unwrap_or((text, ""));
    let mut parts = rest.split('|');
    let mut next = || parts.next().unwrap_or_default().to_owned();
    let (title, date, extra, last_a, last_b, current) = (next(), next(), next(), next(), next(), next());
    let long_item = {
        let mut item = Map::new();
        item.insert("itemType".into(), json!("journalArticle"));
        item.insert("title".into(), Value::String(long(&title)));
        item.insert("date".into(), Value::String(long(&date)));
        item.insert("extra".into(), Value::String(long(&extra)));
        item.insert("creators".into(), json!([{ "creatorType": "author", "lastName": long(&last_a) }]));
        item
    };
    let mut item = Map::new();
    item.insert("itemType".into(), json!("journalArticle"));
    item.insert("title".into(), Value::String(title));
    item.insert("date".into(), Value::String(date));
    item.insert("extra".into(), Value::String(extra));
    item.insert(
        "creators".into(),
        json!([
            { "creatorType": "author", "lastName": last_a, "firstName": "A" },
            { "creatorType": "editor", "name": last_b },
        ]),
    );
    match Template::checked(template) {
        Ok(parsed) => {
            assert_eq!(check_template(template), Ok(()));
            renders_within_limits(&parsed, &item);
            renders_within_limits(&parsed, &long_item);
        }
        Err(error) => {
            assert!(!error.to_string().is_empty());
            assert_eq!(check_template(template), Err(error));
        }
    }
    let _ = render(template, &item, None);
    check_name(&valid_file_name(template));
    if let Some(name) = build_renamed_filename(&item, &current, template, Some(&last_b)) {
        check_name(&name);
        let extension = extension_of(&current);
        if !extension.is_empty() {
            assert!(name.ends_with(&format!(".{extension}")), "{name:?} lost .{extension}");
        }
    }
});
