//! `zotero-sim-files DIR`: the demo library's stored files as Zotero Desktop lays them out on WebDAV —
//! `DIR/zotero/<KEY>.zip` (the file) and `DIR/zotero/<KEY>.prop` — for the WebDAV server that `make dev` and the
//! end-to-end tests start beside the simulator (scripts/webdav-server.sh).
//!
//! Which files, and how the made PDFs are made: `zotero_sim::demo_files` (the same files the simulator can put
//! on its Zotero Storage instead, `zotero-sim --demo-files-on-zotero-storage`).

use std::path::Path;
use std::process::ExitCode;

use zotero_mcp_core::webdav::{md5_hex, pack, FileProps};
use zotero_sim::demo_files::demo_files;

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
    let folder = dir.join("zotero");
    std::fs::create_dir_all(&folder).map_err(|e| format!("{}: {e}", folder.display()))?;
    let files = demo_files()?;
    for f in &files {
        let mtime = u64::try_from(f.mtime).unwrap_or(0);
        let zip = pack(&f.filename, &f.bytes, mtime).map_err(|e| e.to_string())?;
        let props = FileProps { mtime_ms: mtime, md5: md5_hex(&f.bytes) };
        std::fs::write(folder.join(format!("{}.zip", f.key)), zip).map_err(|e| e.to_string())?;
        std::fs::write(folder.join(format!("{}.prop", f.key)), props.render()).map_err(|e| e.to_string())?;
    }
    Ok(files.len())
}

#[cfg(test)]
mod tests {
    use serde_json::Value;
    use zotero_mcp_core::webdav::{unpack, ZipLimits};
    use zotero_sim::demo_files::REAL_FILES;

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
