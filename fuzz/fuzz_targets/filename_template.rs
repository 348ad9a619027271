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
//!   current file's extension.

#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::{json, Map, Value};
use zotero_mcp_core::attachment::filename::{
    build_renamed_filename, check_template, extension_of, render, valid_file_name,
};

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
    if let Err(error) = check_template(template) {
        assert!(!error.to_string().is_empty());
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
