//! `zotero-sim-files DIR`: the demo library's stored files as Zotero Desktop lays them out on WebDAV —
//! `DIR/zotero/<KEY>.zip` (the file) and `DIR/zotero/<KEY>.prop` — for the WebDAV server that `make dev` and the
//! end-to-end tests start beside the simulator (scripts/webdav-server.sh).
//!
//! Each PDF attachment gets a small PDF made here: its pages carry the attachment's full-text entry from the
//! demo library (split into pages of a few lines), or, without one, its parent's title. Real, freely licensed
//! PDFs for the demo are a later step; these make every read path work with no account.

use std::path::Path;
use std::process::ExitCode;

use serde_json::Value;
use zotero_mcp_core::testing::pdf_of_pages;
use zotero_mcp_core::webdav::{md5_hex, pack, FileProps};

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
        if item["itemType"] != "attachment" || !stored || item["contentType"] != "application/pdf" {
            continue;
        }
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
        let pdf = pdf_of_pages(&page_refs);
        let mtime = item["mtime"].as_u64().unwrap_or(1_700_000_000_000);
        let filename = item["filename"].as_str().unwrap_or("file.pdf");
        let zip = pack(filename, &pdf, mtime).map_err(|e| e.to_string())?;
        let props = FileProps { mtime_ms: mtime, md5: md5_hex(&pdf) };
        std::fs::write(folder.join(format!("{key}.zip")), zip).map_err(|e| e.to_string())?;
        std::fs::write(folder.join(format!("{key}.prop")), props.render()).map_err(|e| e.to_string())?;
        count += 1;
    }
    Ok(count)
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
