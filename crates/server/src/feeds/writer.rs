//! A feed's file, written a page of items at a time, so a library read from the mirror in pages is never held
//! whole: each page goes through `bibliography::write`, and CSL-JSON's pages (each one JSON array) are joined into
//! one array.

use zotero_mcp_core::bibliography::{self, Format};
use zotero_mcp_core::zotero::ZoteroObject;

pub struct Writer {
    format: Format,
    out: String,
    /// Entries written so far.
    written: usize,
}

impl Writer {
    pub fn new(format: Format) -> Self {
        Self { format, out: String::new(), written: 0 }
    }

    /// Writes `items`, each under the key at the same position of `keys`.
    pub fn page(&mut self, items: &[ZoteroObject], keys: &[String]) {
        if items.is_empty() {
            return;
        }
        let text = bibliography::write(self.format, items, keys);
        if self.format == Format::CslJson {
            // One array per page: its members go into the feed's one array.
            let members = text.trim().trim_start_matches('[').trim_end_matches(']').trim();
            if !members.is_empty() {
                self.out.push_str(if self.written == 0 { "[\n" } else { ",\n" });
                self.out.push_str(members);
            }
        } else {
            self.out.push_str(&text);
        }
        self.written += items.len();
    }

    /// The whole file.
    pub fn finish(mut self) -> String {
        if self.format == Format::CslJson {
            self.out.push_str(if self.written == 0 { "[]\n" } else { "\n]\n" });
        }
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn item(key: &str, title: &str) -> ZoteroObject {
        serde_json::from_value(json!({ "key": key, "version": 1,
            "data": { "key": key, "itemType": "book", "title": title, "creators": [] } }))
        .unwrap()
    }

    #[test]
    fn csl_json_pages_join_into_one_array_and_an_empty_feed_is_an_empty_array() {
        let mut writer = Writer::new(Format::CslJson);
        writer.page(&[item("AAAAAAAA", "One"), item("BBBBBBBB", "Two")], &["one".into(), "two".into()]);
        writer.page(&[], &[]);
        writer.page(&[item("CCCCCCCC", "Three")], &["three".into()]);
        let parsed: Vec<serde_json::Value> = serde_json::from_str(&writer.finish()).unwrap();
        let ids: Vec<&str> = parsed.iter().filter_map(|entry| entry["id"].as_str()).collect();
        assert_eq!(ids, ["one", "two", "three"]);
        let empty: Vec<serde_json::Value> = serde_json::from_str(&Writer::new(Format::CslJson).finish()).unwrap();
        assert!(empty.is_empty());
    }

    #[test]
    fn bibtex_pages_follow_one_another() {
        let mut writer = Writer::new(Format::BibTex);
        writer.page(&[item("AAAAAAAA", "One")], &["one".into()]);
        writer.page(&[item("BBBBBBBB", "Two")], &["two".into()]);
        let text = writer.finish();
        assert_eq!(text.lines().filter(|line| line.starts_with('@')).count(), 2, "{text}");
        assert!(text.find("{one,").unwrap() < text.find("{two,").unwrap());
    }
}
