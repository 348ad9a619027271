//! The floor for the PDF engine's wasm size in `make bench-pdf`: the same exports as pdf_wasm_bench.rs, with
//! the same JSON and wasm-bindgen glue, but no engine behind them. The gzip size of that module minus this one's
//! is what the engine adds to a Worker. Natively this example is empty.
#![cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]

#[cfg(target_arch = "wasm32")]
mod exports {
    use serde_json::json;
    use wasm_bindgen::prelude::wasm_bindgen;

    fn reply(bytes: &[u8], what: &str) -> String {
        json!({ "status": "ok", "result": [what, bytes.len()] }).to_string()
    }

    #[wasm_bindgen]
    pub fn text(bytes: &[u8], from: u32, to: u32, gate: bool) -> String {
        reply(bytes, &format!("{from} {to} {gate}"))
    }

    #[wasm_bindgen]
    pub fn outline_count(bytes: &[u8], gate: bool) -> String {
        reply(bytes, &gate.to_string())
    }

    #[wasm_bindgen]
    pub fn locate(bytes: &[u8], quotes: &str, gate: bool) -> String {
        let parsed = serde_json::from_str::<Vec<serde_json::Value>>(quotes).map(|q| q.len()).unwrap_or_default();
        reply(bytes, &format!("{parsed} {gate}"))
    }

    #[wasm_bindgen]
    pub fn memory_bytes() -> f64 {
        (core::arch::wasm32::memory_size::<0>() * 65_536) as f64
    }
}
