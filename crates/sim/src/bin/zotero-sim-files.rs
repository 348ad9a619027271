//! `zotero-sim-files DIR`: the demo library's stored files as Zotero Desktop lays them out on WebDAV —
//! `DIR/zotero/<KEY>.zip` (the file) and `DIR/zotero/<KEY>.prop` — for the WebDAV server that `make dev` and the
//! end-to-end tests start beside the simulator (scripts/webdav-server.sh).
//!
//! The attachments of the "Demo files" collection get their real files, embedded from `crates/sim/demo/files`
//! (freely licensed PDFs and an EPUB; origins and licences in LICENSES.md there) and written unchanged; the md5
//! the library records for each must be its file's, or the command fails. Every other PDF attachment gets a
//! small PDF made here: its pages carry the attachment's full-text entry from the demo library (split into pages
//! of a few lines), or, without one, its parent's title, so every read path works with no account.

use std::path::Path;
use std::process::ExitCode;

use serde_json::Value;
use zotero_mcp_core::testing::pdf_of_pages;
use zotero_mcp_core::webdav::{md5_hex, pack, FileProps};

/// The real files, by attachment key (see crates/sim/demo/files/LICENSES.md).
const REAL_FILES: &[(&str, &[u8])] = &[
    ("Z36ESMED", include_bytes!("../../demo/files/llncsdoc.pdf")),
    ("A6JVMAK4", include_bytes!("../../demo/files/elstest-5p.pdf")),
    ("8TG626SX", include_bytes!("../../demo/files/shortsample.pdf")),
    ("ED5HAQHQ", include_bytes!("../../demo/files/demo-library-guide.epub")),
];

/// Lines of text per generated page.
const LINES_PER_PAGE: usize = 6;
/// Characters per line (Helvetica 11 pt across a letter page).
const LINE_CHARS: usize = 80;

fn main() -> ExitCode {
    let Some(dir) = std::env::args().nth(1) else {
        eprintln!("usage: zotero-sim-files DIR");
        return ExitCode::from(2);
    };
    match write_files(Path::new(&dir)) {
        Ok(count) => {
            println!("zotero-sim-files: {count} files in {dir}/zotero");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("zotero-sim-files: {e}");
            ExitCode::from(1)
        }
    }
}

fn write_files(dir: &Path) -> Result<usize, String> {
    let demo: Value = serde_json::from_str(zotero_sim::demo::DEMO_JSON).map_err(|e| e.to_string())?;
    let items = demo["items"].as_array().cloned().unwrap_or_default();
    let data = |item: &Value| item.get("data").cloned().unwrap_or_else(|| item.clone());
    let folder = dir.join("zotero");
    std::fs::create_dir_all(&folder).map_err(|e| format!("{}: {e}", folder.display()))?;
    let mut count = 0;
    for item in items.iter().map(data) {
        let stored = matches!(item["linkMode"].as_str(), Some("imported_file" | "imported_url"));
        if item["itemType"] != "attachment" || !stored {
            continue;
        }
        let key = item["key"].as_str().unwrap_or_default();
        let file = match real_file(key) {
            Some(bytes) => {
                let md5 = md5_hex(bytes);
                if item["md5"] != md5.as_str() {
                    return Err(format!("{key}: the demo library says md5 {}, its file's is {md5}", item["md5"]));
                }
                bytes.to_vec()
            }
            None if item["contentType"] == "application/pdf" => generated_pdf(&demo, &items, &item),
            None => continue,
        };
        let mtime = item["mtime"].as_u64().unwrap_or(1_700_000_000_000);
        let filename = item["filename"].as_str().unwrap_or("file.pdf");
        let zip = pack(filename, &file, mtime).map_err(|e| e.to_string())?;
        let props = FileProps { mtime_ms: mtime, md5: md5_hex(&file) };
        std::fs::write(folder.join(format!("{key}.zip")), zip).map_err(|e| e.to_string())?;
        std::fs::write(folder.join(format!("{key}.prop")), props.render()).map_err(|e| e.to_string())?;
        count += 1;
    }
    Ok(count)
}

/// The embedded file of attachment `key`, if it has one.
fn real_file(key: &str) -> Option<&'static [u8]> {
    REAL_FILES.iter().find(|(k, _)| *k == key).map(|(_, bytes)| *bytes)
}

/// A PDF of the attachment's full-text entry, or of its parent's title.
fn generated_pdf(demo: &Value, items: &[Value], item: &Value) -> Vec<u8> {
    let data = |item: &Value| item.get("data").cloned().unwrap_or_else(|| item.clone());
    let key = item["key"].as_str().unwrap_or_default();
    let text = demo["fulltext"][key]["content"].as_str().map(str::to_owned).unwrap_or_else(|| {
        let parent = item["parentItem"].as_str().unwrap_or_default();
        items
            .iter()
            .map(data)
            .find(|p| p["key"] == parent)
            .and_then(|p| p["title"].as_str().map(str::to_owned))
            .or_else(|| item["title"].as_str().map(str::to_owned))
            .unwrap_or_else(|| "A demo attachment".into())
    });
    let pages = paginate(&text);
    let page_refs: Vec<&str> = pages.iter().map(String::as_str).collect();
    pdf_of_pages(&page_refs)
}

/// The text as pages of one line each: `pdf_of_pages` draws one line per page, so a page's line is a run of
/// words up to [`LINE_CHARS`]; [`LINES_PER_PAGE`] such runs are joined into one page's line.
fn paginate(text: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.len() + word.len() + 1 > LINE_CHARS {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    let mut pages: Vec<String> = lines.chunks(LINES_PER_PAGE).map(|chunk| chunk.join(" ")).collect();
    if pages.is_empty() {
        pages.push(String::new());
    }
    pages
}

#[cfg(test)]
mod tests {
    use zotero_mcp_core::webdav::{unpack, ZipLimits};

    use super::*;

    #[test]
    fn each_real_file_is_a_stored_attachment_of_the_demo_with_its_md5_and_type() {
        let demo: Value = serde_json::from_str(zotero_sim::demo::DEMO_JSON).unwrap();
        let items = demo["items"].as_array().unwrap();
        for (key, bytes) in REAL_FILES {
            let item = items.iter().find(|i| i["key"] == *key).unwrap_or_else(|| panic!("{key} is not in the demo"));
            assert_eq!(item["itemType"], "attachment", "{key}");
            assert_eq!(item["linkMode"], "imported_file", "{key}");
            assert_eq!(item["md5"], md5_hex(bytes).as_str(), "{key}");
            let magic: &[u8] = match item["contentType"].as_str() {
                Some("application/pdf") => b"%PDF-",
                Some("application/epub+zip") => b"PK\x03\x04\x14\0\0\0\0\0",
                other => panic!("{key}: content type {other:?}"),
            };
            assert!(bytes.starts_with(magic), "{key}");
        }
    }

    #[test]
    fn the_real_files_are_written_unchanged_and_the_other_pdfs_are_made() {
        let dir = std::env::temp_dir().join(format!("zotero-sim-files-test-{}", std::process::id()));
        let count = write_files(&dir).unwrap();
        let read = |key: &str| {
            let zip = std::fs::read(dir.join(format!("zotero/{key}.zip"))).unwrap();
            let stored = unpack(&zip, None, &ZipLimits::default()).unwrap();
            let prop = std::fs::read_to_string(dir.join(format!("zotero/{key}.prop"))).unwrap();
            (stored, FileProps::parse(&prop).unwrap())
        };
        for (key, bytes) in REAL_FILES {
            let (stored, props) = read(key);
            assert_eq!(stored.data, *bytes, "{key}");
            assert_eq!(props.md5, md5_hex(bytes), "{key}");
        }
        let (epub, props) = read("ED5HAQHQ");
        assert_eq!(epub.filename, "zotero-mcp contributors - 2026 - How to Use the zotero-mcp Demo Library.epub");
        assert_eq!(props.mtime_ms, 1_770_022_800_000);
        // A made PDF carries its attachment's full text.
        let (made, props) = read("93WJRKG5");
        assert!(made.data.starts_with(b"%PDF-") && made.data.windows(23).any(|w| w == b"Geometric deep learning"));
        assert_eq!(props.md5, md5_hex(&made.data));
        // 17 made PDFs, 3 real PDFs and the EPUB.
        assert_eq!(count, 21);
        std::fs::remove_dir_all(&dir).ok();
    }
}
