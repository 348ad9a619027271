//! A data directory laid out as Zotero Desktop's: `zotero.sqlite` (an empty stand-in: nothing here reads it,
//! the server only checks the directory is Zotero's), every stored file at `storage/<KEY>/<filename>`, and one
//! linked file kept outside, in `<data dir>-papers/`, as people keep their own folders of PDFs.

use std::path::Path;

use serde_json::json;
use zotero_mcp_core::testing::pdf_of_pages;

use crate::demo_files::demo_files;
use crate::{LibraryRef, Simulator};

/// The linked-file attachment the data directory adds to the user library (under the demo's 5-page paper).
pub const LINKED_KEY: &str = "LNKDFILE";
/// A phrase on page 2 of the linked file, and nowhere in the demo's own files.
pub const LINKED_PHRASE: &str = "marginalia kept beside the library";
/// The demo item the linked file is attached to.
const LINKED_PARENT: &str = "6FEP7ILJ";

/// Writes the library's files into `dir` and adds the linked file's attachment to the library.
pub(super) fn lay_out(sim: &Simulator, user_id: u64, dir: &Path) -> Result<(), String> {
    let fail = |what: &str, e: std::io::Error| format!("cannot write {what} in {}: {e}", dir.display());
    std::fs::create_dir_all(dir.join("storage")).map_err(|e| fail("storage/", e))?;
    std::fs::write(dir.join("zotero.sqlite"), b"").map_err(|e| fail("zotero.sqlite", e))?;
    let library = LibraryRef::User(user_id);
    for file in demo_files()? {
        // Only attachments of this library (the demo's): another user id has none of them.
        if sim.item(library, &file.key).is_none() {
            continue;
        }
        let folder = dir.join("storage").join(&file.key);
        std::fs::create_dir_all(&folder).map_err(|e| fail(&file.key, e))?;
        std::fs::write(folder.join(&file.filename), &file.bytes).map_err(|e| fail(&file.filename, e))?;
        // Zotero keeps its full-text cache beside the file; readers must not take it for the attachment.
        std::fs::write(folder.join(".zotero-ft-cache"), b"cached text").map_err(|e| fail(".zotero-ft-cache", e))?;
    }
    if sim.item(library, LINKED_PARENT).is_none() {
        return Ok(());
    }
    let name = dir.file_name().map_or_else(|| "zotero".into(), |n| n.to_string_lossy().into_owned());
    let papers = dir.with_file_name(format!("{name}-papers"));
    std::fs::create_dir_all(&papers).map_err(|e| fail("the linked files' folder", e))?;
    let linked = papers.join("Field notes (linked).pdf");
    let pdf = pdf_of_pages(&[
        "Field notes on the elastic test paper, first page",
        &format!("Second page: {LINKED_PHRASE}, read from disk"),
    ]);
    std::fs::write(&linked, pdf).map_err(|e| fail("the linked file", e))?;
    let path = linked.canonicalize().unwrap_or(linked);
    sim.insert_item(
        library,
        json!({
            "key": LINKED_KEY,
            "itemType": "attachment",
            "parentItem": LINKED_PARENT,
            "linkMode": "linked_file",
            "title": "Field notes (linked file)",
            "contentType": "application/pdf",
            "path": path.display().to_string(),
        }),
    );
    Ok(())
}
