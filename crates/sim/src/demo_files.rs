//! The demo library's stored files, for whichever store serves them: `zotero-sim-files` writes them in Zotero's
//! WebDAV layout, [`crate::Simulator::store_demo_files`] puts them on the simulated Zotero Storage.
//!
//! The attachments of the "Demo files" collection get their real files, embedded from `crates/sim/demo/files`
//! (freely licensed PDFs and an EPUB; origins and licences in LICENSES.md there), unchanged; the md5 the library
//! records for each must be its file's, or [`demo_files`] fails. Every other PDF attachment gets a small PDF
//! made here: its pages carry the attachment's full-text entry from the demo library (split into pages of a few
//! lines), or, without one, its parent's title, so every read path works with no account.

use serde_json::Value;
use zotero_mcp_core::testing::pdf_of_pages;
use zotero_mcp_core::webdav::md5_hex;

/// The real files, by attachment key (see crates/sim/demo/files/LICENSES.md).
pub const REAL_FILES: &[(&str, &[u8])] = &[
    ("Z36ESMED", include_bytes!("../demo/files/llncsdoc.pdf")),
    ("A6JVMAK4", include_bytes!("../demo/files/elstest-5p.pdf")),
    ("8TG626SX", include_bytes!("../demo/files/shortsample.pdf")),
    ("ED5HAQHQ", include_bytes!("../demo/files/demo-library-guide.epub")),
];

/// Lines of text per generated page.
const LINES_PER_PAGE: usize = 6;
/// Characters per line (Helvetica 11 pt across a letter page).
const LINE_CHARS: usize = 80;

/// One stored attachment's file.
#[derive(Debug, Clone)]
pub struct DemoFile {
    /// The attachment item's key.
    pub key: String,
    pub filename: String,
    /// Modification time in milliseconds since the epoch (the item's, or a fixed one).
    pub mtime: i64,
    pub bytes: Vec<u8>,
}

/// Every stored attachment of the demo library that gets a file, in library order.
pub fn demo_files() -> Result<Vec<DemoFile>, String> {
    let demo: Value = serde_json::from_str(crate::demo::DEMO_JSON).map_err(|e| e.to_string())?;
    let items: Vec<Value> = demo["items"].as_array().map(|a| a.iter().map(data).collect()).unwrap_or_default();
    let mut out = Vec::new();
    for item in &items {
        let stored = matches!(item["linkMode"].as_str(), Some("imported_file" | "imported_url"));
        if item["itemType"] != "attachment" || !stored {
            continue;
        }
        let key = item["key"].as_str().unwrap_or_default();
        let bytes = match real_file(key) {
            Some(bytes) => {
                let md5 = md5_hex(bytes);
                if item["md5"] != md5.as_str() {
                    return Err(format!("{key}: the demo library says md5 {}, its file's is {md5}", item["md5"]));
                }
                bytes.to_vec()
            }
            None if item["contentType"] == "application/pdf" => generated_pdf(&demo, &items, item),
            None => continue,
        };
        out.push(DemoFile {
            key: key.to_string(),
            filename: item["filename"].as_str().unwrap_or("file.pdf").to_string(),
            mtime: item["mtime"].as_i64().unwrap_or(1_700_000_000_000),
            bytes,
        });
    }
    Ok(out)
}

fn data(item: &Value) -> Value {
    item.get("data").cloned().unwrap_or_else(|| item.clone())
}

/// The embedded file of attachment `key`, if it has one.
pub fn real_file(key: &str) -> Option<&'static [u8]> {
    REAL_FILES.iter().find(|(k, _)| *k == key).map(|(_, bytes)| *bytes)
}

/// A PDF of the attachment's full-text entry, or of its parent's title.
fn generated_pdf(demo: &Value, items: &[Value], item: &Value) -> Vec<u8> {
    let key = item["key"].as_str().unwrap_or_default();
    let text = demo["fulltext"][key]["content"].as_str().map(str::to_owned).unwrap_or_else(|| {
        let parent = item["parentItem"].as_str().unwrap_or_default();
        items
            .iter()
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
