//! Folding words for `zotero_retrieve` in the Worker: its decomposition is V8's (`src/text.rs`), not Rust's
//! tables, so the folding cases of `crates/core/src/retrieve/fold.rs` run here, as wasm in Node, through it
//! (`make test` runs this file; natively it is empty).
#![cfg(target_arch = "wasm32")]

use wasm_bindgen_test::wasm_bindgen_test;
use zotero_mcp::text::decompose;
use zotero_mcp_core::platform::Decompose;
use zotero_mcp_core::retrieve::fold::{fold, terms};

const WORKER: Decompose = decompose;

#[wasm_bindgen_test]
fn folding_in_the_worker_matches_what_zotero_s_search_matches() {
    assert_eq!(fold("Café", WORKER), "cafe");
    assert_eq!(fold("Ångström", WORKER), "angstrom");
    assert_eq!(fold("\u{FB01}nd", WORKER), "find", "a ligature decomposes");
    assert_eq!(fold("ＡＢＣ", WORKER), "abc", "full-width letters decompose");
    assert_eq!(fold("“quoted” ‘single’", WORKER), "\"quoted\" 'single'");
    assert_eq!(fold("2010–2020 — x‐y", WORKER), "2010-2020 - x-y");
    assert_eq!(fold("Øresund Straße Łódź", WORKER), "oresund strasse lodz");
    assert_eq!(fold("e\u{301}", WORKER), "e", "a combining accent goes");
    assert_eq!(terms("The proteins of Café-society, in 2020!", WORKER), ["protein", "cafe", "society", "2020"]);
}
