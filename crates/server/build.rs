//! Assembles the MCP Apps panels (`apps/panels/`) into one HTML document each: the shared stylesheet and the
//! app-side bridge are inlined where the panel's markers stand, so a host loads each panel as a single file.

use std::path::{Path, PathBuf};

const PANELS: [&str; 3] = ["evidence", "references", "review"];

fn read(dir: &Path, name: &str) -> String {
    let path = dir.join(name);
    println!("cargo:rerun-if-changed={}", path.display());
    match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(error) => panic!("{}: {error}; the panels are built from apps/panels/", path.display()),
    }
}

/// Replaces the one `marker` in `document`, which must hold it exactly once.
fn fill(document: &str, marker: &str, with: &str, panel: &str) -> String {
    assert_eq!(document.matches(marker).count(), 1, "apps/panels/{panel}.html must hold {marker} exactly once");
    document.replacen(marker, with, 1)
}

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let dir = manifest.join("../../apps/panels");
    println!("cargo:rerun-if-changed={}", dir.display());
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("panels");
    std::fs::create_dir_all(&out).expect("OUT_DIR is writable");
    let css = read(&dir, "shared.css");
    let bridge = read(&dir, "bridge.js");
    for panel in PANELS {
        let document = read(&dir, &format!("{panel}.html"));
        let code = read(&dir, &format!("{panel}.js"));
        let document = fill(&document, "/*SHARED_CSS*/", &css, panel);
        let document = fill(&document, "/*BRIDGE_JS*/", &bridge, panel);
        let document = fill(&document, "/*PANEL_JS*/", &code, panel);
        std::fs::write(out.join(format!("{panel}.html")), document).expect("OUT_DIR is writable");
    }
}
