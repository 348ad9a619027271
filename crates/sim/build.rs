//! Bundles `demo/library.json` for `Simulator::demo()`.
//!
//! The demo data is written separately from the code; until it exists, an empty library is bundled instead so
//! the crate still builds (and `demo()` serves an empty library).

use std::path::Path;

fn main() {
    let source = Path::new("demo/library.json");
    println!("cargo:rerun-if-changed=demo/library.json");
    println!("cargo:rerun-if-changed=demo");
    let out_dir = std::env::var("OUT_DIR").unwrap_or_else(|_| ".".into());
    let target = Path::new(&out_dir).join("demo-library.json");
    let contents = std::fs::read_to_string(source).unwrap_or_else(|_| "{}".to_string());
    if let Err(e) = std::fs::write(&target, contents) {
        panic!("cannot write {}: {e}", target.display());
    }
}
