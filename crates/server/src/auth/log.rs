//! Operator diagnostics. Clients get generic errors (a refused metadata document, a storage failure); the reason
//! goes here, to `console.warn` in the Worker (visible with `wrangler tail` and in Workers Logs).

#[cfg(target_arch = "wasm32")]
mod console {
    use wasm_bindgen::prelude::wasm_bindgen;

    #[wasm_bindgen]
    extern "C" {
        #[wasm_bindgen(js_namespace = console, js_name = warn)]
        pub fn warn(message: &str);
    }
}

/// Logs one line for the operator. Never pass secrets.
pub fn warn(message: &str) {
    #[cfg(target_arch = "wasm32")]
    console::warn(&format!("oauth: {message}"));
    #[cfg(not(target_arch = "wasm32"))]
    eprintln!("oauth: {message}");
}
