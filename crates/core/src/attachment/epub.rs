//! EPUB text: the XHTML documents of the book's spine, in reading order, as plain text.
//!
//! `META-INF/container.xml` names the package document; its manifest maps ids to files and its spine lists
//! them in order. A book without a readable package falls back to its (X)HTML files in archive order. Every
//! entry is read with a cap, like the attachment archive itself.

use std::io::{Cursor, Read};

use zip::ZipArchive;

use super::AttachmentError;
use crate::html_text::html_to_text;
use crate::webdav::ArchiveError;

/// Entries a book may have, and bytes read from it in all.
const MAX_ENTRIES: usize = 10_000;
const MAX_TOTAL_BYTES: u64 = 64 * 1024 * 1024;

pub(super) fn text(bytes: &[u8]) -> Result<String, AttachmentError> {
    let not_a_book = |detail: String| AttachmentError::Archive(ArchiveError::NotAZip { detail });
    let mut book = ZipArchive::new(Cursor::new(bytes)).map_err(|e| not_a_book(e.to_string()))?;
    if book.len() > MAX_ENTRIES {
        return Err(AttachmentError::Archive(ArchiveError::OverLimit {
            detail: format!("the EPUB has {} entries, at most {MAX_ENTRIES}", book.len()),
        }));
    }
    let mut budget = MAX_TOTAL_BYTES;
    let chapters = match spine(&mut book, &mut budget) {
        Some(chapters) if !chapters.is_empty() => chapters,
        _ => (0..book.len())
            .filter_map(|i| book.name_for_index(i).and_then(Result::ok).map(|n| n.into_owned()))
            .filter(|n| {
                let lower = n.to_ascii_lowercase();
                lower.ends_with(".xhtml") || lower.ends_with(".html") || lower.ends_with(".htm")
            })
            .collect(),
    };
    let mut parts = Vec::new();
    for path in chapters {
        if let Some(html) = entry(&mut book, &path, &mut budget) {
            let text = html_to_text(&String::from_utf8_lossy(&html));
            if !text.trim().is_empty() {
                parts.push(text.trim().to_owned());
            }
        }
    }
    Ok(parts.join("\n\n"))
}

/// The spine's files, as archive paths.
fn spine(book: &mut ZipArchive<Cursor<&[u8]>>, budget: &mut u64) -> Option<Vec<String>> {
    let container = String::from_utf8(entry(book, "META-INF/container.xml", budget)?).ok()?;
    let package_path = attribute(tags(&container, "rootfile").first()?, "full-path")?;
    let package = String::from_utf8(entry(book, &package_path, budget)?).ok()?;
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

/// One entry's bytes, within the book's budget.
fn entry(book: &mut ZipArchive<Cursor<&[u8]>>, path: &str, budget: &mut u64) -> Option<Vec<u8>> {
    let file = book.by_name(path).ok()?;
    let mut data = Vec::new();
    let read = file.take(*budget).read_to_end(&mut data).ok()? as u64;
    *budget = budget.saturating_sub(read);
    Some(data)
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

    use zip::write::SimpleFileOptions;
    use zip::ZipWriter;

    use super::*;

    fn book(entries: &[(&str, &str)]) -> Vec<u8> {
        let mut writer = ZipWriter::new(Cursor::new(Vec::new()));
        for (name, text) in entries {
            writer.start_file(*name, SimpleFileOptions::default()).unwrap();
            writer.write_all(text.as_bytes()).unwrap();
        }
        writer.finish().unwrap().into_inner()
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
}
