//! Folding words for `zotero_retrieve` as WebAssembly in V8: the Worker decomposes text with its JavaScript
//! engine's `String.prototype.normalize` (src/retrieve/fold.rs), not with Rust tables, so the cases of the native
//! tests are run here through that path (`make test` runs this file as wasm; natively it is empty).
#![cfg(target_arch = "wasm32")]

use wasm_bindgen_test::wasm_bindgen_test;
use zotero_mcp_core::retrieve::fold::{fold, terms};

#[wasm_bindgen_test]
fn folding_in_the_worker_matches_what_zotero_s_search_matches() {
    assert_eq!(fold("Café"), "cafe");
    assert_eq!(fold("Ångström"), "angstrom");
    assert_eq!(fold("\u{FB01}nd"), "find", "a ligature decomposes");
    assert_eq!(fold("ＡＢＣ"), "abc", "full-width letters decompose");
    assert_eq!(fold("“quoted” ‘single’"), "\"quoted\" 'single'");
    assert_eq!(fold("2010–2020 — x‐y"), "2010-2020 - x-y");
    assert_eq!(fold("Øresund Straße Łódź"), "oresund strasse lodz");
    assert_eq!(fold("e\u{301}"), "e", "a combining accent goes");
    assert_eq!(terms("The proteins of Café-society, in 2020!"), ["protein", "cafe", "society", "2020"]);
}
