//! The Worker's Unicode decomposition ([`zotero_mcp_core::platform::Platform::decompose`]): V8 holds the Unicode
//! tables already, so `String.prototype.normalize` and a `\p{M}` regular expression do what Rust's tables would,
//! for no bytes of the bundle (those tables measured about 60 KiB of gzip). `tests/fold_wasm.rs` checks it.

/// `text` in NFKD without its combining marks (General Category M). ASCII, most of a paper, is returned as it
/// is, without a round trip through JavaScript.
pub fn decompose(text: &str) -> String {
    if text.is_ascii() {
        return text.to_owned();
    }
    let marks = js_sys::RegExp::new("\\p{M}", "gu");
    String::from(js_sys::JsString::from(text).normalize("NFKD").replace_by_pattern(&marks, ""))
}
