//! EPUB text: the XHTML documents of the book's spine, in reading order, as plain text.
//!
//! `META-INF/container.xml` names the package document; its manifest maps ids to files and its spine lists
//! them in order. A book without a readable package falls back to its (X)HTML files in archive order. Every
//! entry is read as the attachment archive is (`ZipLimits::read`: refused unread when its declared size is over
//! what is left of the book's budget, inflated with the output capped, its CRC-32 checked); one that fails is
//! left out.

use rawzip::{ZipArchive, ZipFileHeaderRecord, ZipSliceArchive};

use super::AttachmentError;
use crate::html_text::html_to_text;
use crate::webdav::{ArchiveError, ZipLimits};

/// Entries a book may have, and bytes read from it in all.
const MAX_ENTRIES: usize = 10_000;
const MAX_TOTAL_BYTES: u64 = 64 * 1024 * 1024;

pub(super) fn text(bytes: &[u8]) -> Result<String, AttachmentError> {
    let not_a_book = |e: rawzip::Error| AttachmentError::Archive(ArchiveError::NotAZip { detail: e.to_string() });
    let archive = ZipArchive::from_slice(bytes).map_err(not_a_book)?;
    // The directory's records, each borrowing its name from `bytes`; past the limit only counted, for the message.
    let mut records = Vec::new();
    let mut entries = 0usize;
    for record in archive.entries() {
        let record = record.map_err(not_a_book)?;
        entries += 1;
        if entries <= MAX_ENTRIES {
            records.push(record);
        }
    }
    if entries > MAX_ENTRIES {
        return Err(AttachmentError::Archive(ArchiveError::OverLimit {
            detail: format!("the EPUB has {entries} entries, at most {MAX_ENTRIES}"),
        }));
    }
    let html_files: Vec<String> = records
        .iter()
        .map(|r| String::from_utf8_lossy(r.file_path().as_bytes()).into_owned())
        .filter(|n| {
            let lower = n.to_ascii_lowercase();
            lower.ends_with(".xhtml") || lower.ends_with(".html") || lower.ends_with(".htm")
        })
        .collect();
    // Sorted by name for lookups: a spine may list far more chapters than there are entries.
    crate::sort::sort_by(&mut records, |a, b| a.file_path().as_bytes().cmp(b.file_path().as_bytes()));
    let mut book = Book { archive: &archive, records, budget: MAX_TOTAL_BYTES };
    let chapters = match spine(&mut book) {
        Some(chapters) if !chapters.is_empty() => chapters,
        _ => html_files,
    };
    let mut parts = Vec::new();
    for path in chapters {
        if let Some(html) = book.entry(&path) {
            let text = html_to_text(&String::from_utf8_lossy(&html));
            if !text.trim().is_empty() {
                parts.push(text.trim().to_owned());
            }
        }
    }
    Ok(parts.join("\n\n"))
}

/// An open book: its directory, sorted by name, and what may still be read from it.
struct Book<'a> {
    archive: &'a ZipSliceArchive<&'a [u8]>,
    records: Vec<ZipFileHeaderRecord<'a>>,
    budget: u64,
}

impl Book<'_> {
    /// One entry's bytes, when the book has it and it fits in what is left of the budget (checked from the
    /// directory, then while inflating, with the CRC-32 as for an attachment archive).
    fn entry(&mut self, path: &str) -> Option<Vec<u8>> {
        let at = self.records.binary_search_by(|r| r.file_path().as_bytes().cmp(path.as_bytes())).ok()?;
        let record = self.records.get(at)?;
        // No ratio limit: the budget bounds what all the entries together may inflate to.
        let limits = ZipLimits { max_entries: MAX_ENTRIES, max_file_bytes: self.budget, max_ratio: u64::MAX };
        let data = limits.read(self.archive, record).ok()?;
        self.budget = self.budget.saturating_sub(data.len() as u64);
        Some(data)
    }
}

/// The spine's files, as archive paths.
fn spine(book: &mut Book<'_>) -> Option<Vec<String>> {
    let container = String::from_utf8(book.entry("META-INF/container.xml")?).ok()?;
    let package_path = attribute(tags(&container, "rootfile").first()?, "full-path")?;
    let package = String::from_utf8(book.entry(&package_path)?).ok()?;
    let folder = package_path.rsplit_once('/').map_or(String::new(), |(dir, _)| format!("{dir}/"));
    let manifest: Vec<(String, String)> = tags(&package, "item")
        .iter()
        .filter_map(|tag| Some((attribute(tag, "id")?, attribute(tag, "href")?)))
        .collect();
    let order = tags(&package, "itemref").iter().filter_map(|tag| attribute(tag, "idref")).collect::<Vec<_>>();
    Some(
        order
            .iter()
            .filter_map(|id| manifest.iter().find(|(m, _)| m == id))
            .map(|(_, href)| format!("{folder}{}", percent_decode(href.split('#').next().unwrap_or_default())))
            .collect(),
    )
}

/// The opening tags named `name` (with or without a namespace prefix), as written.
fn tags<'a>(xml: &'a str, name: &str) -> Vec<&'a str> {
    let mut found = Vec::new();
    let mut rest = xml;
    while let Some(open) = rest.find('<') {
        rest = &rest[open + 1..];
        let Some(close) = rest.find('>') else { break };
        let tag = &rest[..close];
        let tag_name = tag.split(|c: char| c.is_whitespace() || c == '/').next().unwrap_or_default();
        let local = tag_name.rsplit(':').next().unwrap_or_default();
        if local == name {
            found.push(tag);
        }
        rest = &rest[close..];
    }
    found
}

/// An attribute's value in a tag (`name="…"` or `name='…'`), entities decoded.
fn attribute(tag: &str, name: &str) -> Option<String> {
    let mut rest = tag;
    while let Some(at) = rest.find(name) {
        let before_ok = rest[..at].ends_with(|c: char| c.is_whitespace());
        let after = rest[at + name.len()..].trim_start();
        if before_ok {
            if let Some(value) = after.strip_prefix('=') {
                let value = value.trim_start();
                let quote = value.chars().next()?;
                if quote == '"' || quote == '\'' {
                    let end = value[1..].find(quote)?;
                    return Some(crate::html_text::decode_entities(&value[1..1 + end]));
                }
            }
        }
        rest = &rest[at + name.len()..];
    }
    None
}

fn percent_decode(href: &str) -> String {
    percent_encoding::percent_decode_str(href).decode_utf8_lossy().into_owned()
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use rawzip::ZipArchiveWriter;

    use super::*;

    fn book(entries: &[(&str, &str)]) -> Vec<u8> {
        let mut zip = Vec::new();
        let mut writer = ZipArchiveWriter::new(&mut zip);
        for (name, text) in entries {
            let (mut entry, config) = writer.new_file(*name).start().unwrap();
            let mut data_writer = config.wrap(&mut entry);
            data_writer.write_all(text.as_bytes()).unwrap();
            let (_, descriptor) = data_writer.finish().unwrap();
            entry.finish(descriptor).unwrap();
        }
        writer.finish().unwrap();
        zip
    }

    #[test]
    fn chapters_come_in_spine_order() {
        let epub = book(&[
            ("mimetype", "application/epub+zip"),
            (
                "META-INF/container.xml",
                r#"<container><rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles></container>"#,
            ),
            (
                "OEBPS/content.opf",
                r#"<package><manifest><item id="c1" href="one.xhtml" media-type="application/xhtml+xml"/><item id="c2" href="Chapter%20two.xhtml" media-type="application/xhtml+xml"/></manifest><spine><itemref idref="c2"/><itemref idref="c1"/></spine></package>"#,
            ),
            ("OEBPS/one.xhtml", "<html><body><h1>One</h1><p>First &amp; foremost.</p></body></html>"),
            (
                "OEBPS/Chapter two.xhtml",
                "<html><body><p>Second, but read first.</p><script>ignored()</script></body></html>",
            ),
        ]);
        let text = text(&epub).unwrap();
        let second = text.find("Second, but read first.").unwrap();
        let first = text.find("First & foremost.").unwrap();
        assert!(second < first, "{text}");
        assert!(!text.contains("ignored"), "{text}");
    }

    #[test]
    fn a_book_without_a_package_reads_its_html_files() {
        let epub = book(&[("a.html", "<p>Alpha</p>"), ("b.css", "p { }"), ("c.xhtml", "<p>Gamma</p>")]);
        assert_eq!(text(&epub).unwrap(), "Alpha\n\nGamma");
        assert!(text(b"not a zip").is_err());
    }

    #[test]
    fn a_damaged_chapter_is_left_out_and_too_many_entries_are_refused() {
        let mut epub = book(&[("a.html", "<p>Alpha</p>"), ("c.xhtml", "<p>Gamma</p>")]);
        let at = epub.windows(5).position(|w| w == b"Gamma").unwrap();
        epub[at] = b'D';
        assert_eq!(text(&epub).unwrap(), "Alpha");

        let names: Vec<String> = (0..=MAX_ENTRIES).map(|i| format!("{i}.html")).collect();
        let entries: Vec<(&str, &str)> = names.iter().map(|n| (n.as_str(), "")).collect();
        let error = text(&book(&entries)).unwrap_err();
        let expected = ArchiveError::OverLimit { detail: "the EPUB has 10001 entries, at most 10000".into() };
        assert!(matches!(&error, AttachmentError::Archive(e) if *e == expected), "{error:?}");
    }
}
