//! Writes the Adobe Glyph List that `pdf/text/encoding.rs` searches, as one text: `name`, a tab, `text` and a NUL
//! per glyph, sorted by name's bytes (the texts include every other control character, NUL none). pdf_encoding
//! keeps the list as a slice of string pairs behind a hash map built on first use: in wasm that is 16 bytes of
//! pointers a glyph (about 22 KiB of the Worker's gzip size) and the map's code, where the same list as text is
//! searched in place. Same source, same answers: the later of two entries for a name wins, as in pdf_encoding's
//! map (`glyph_list_matches_pdf_encoding` in that module's tests).
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=build.rs");
    let mut glyphs = BTreeMap::new();
    for &(name, text) in pdf_encoding::GLYPH_LIST {
        glyphs.insert(name, text);
    }
    let mut list = String::new();
    for (name, text) in glyphs {
        // The search splits an entry at its first tab and ends it at a NUL: a name has neither, a text no NUL.
        if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') || text.contains('\0') {
            return Err(format!("glyph list entry {name:?} → {text:?} cannot be written as an entry").into());
        }
        write!(list, "{name}\t{text}\0")?;
    }
    let out = PathBuf::from(std::env::var("OUT_DIR")?).join("glyph_list.txt");
    std::fs::write(out, list)?;
    Ok(())
}
