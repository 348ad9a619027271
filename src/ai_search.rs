//! Cloudflare AI Search for the Worker: the `AI_SEARCH` namespace binding (`ai_search_namespaces` in
//! wrangler.toml) behind the core's [`AiSearch`] seam.
//!
//! workers-rs 0.8 has no wrapper for this binding, so its JavaScript objects are declared here as wasm-bindgen
//! extern types with exactly the methods the server calls. Arguments cross as JSON (`JSON.parse` of serde's
//! output, so objects arrive as plain objects and numbers as numbers, as the binding expects), and answers come
//! back through `JSON.stringify`. A JavaScript error becomes [`AiSearchError::NotFound`] when its name or message
//! says "not found" (the binding's `AiSearchNotFoundError`), else [`AiSearchError::Failed`] with its name.

use std::rc::Rc;

use async_trait::async_trait;
use serde_json::Value;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use worker::Env;
use zotero_mcp_core::platform::{AiSearch, AiSearchError};

/// The binding name in `wrangler.toml`, as in the TypeScript project.
pub const BINDING: &str = "AI_SEARCH";

#[wasm_bindgen]
extern "C" {
    /// `env.AI_SEARCH`.
    #[wasm_bindgen(extends = js_sys::Object)]
    pub type AiSearchNamespace;
    /// A synchronous handle: no I/O until a method is called on it.
    #[wasm_bindgen(method, catch)]
    fn get(this: &AiSearchNamespace, name: &str) -> Result<AiSearchInstance, JsValue>;
    #[wasm_bindgen(method, catch)]
    fn create(this: &AiSearchNamespace, config: JsValue) -> Result<js_sys::Promise, JsValue>;

    #[wasm_bindgen(extends = js_sys::Object)]
    pub type AiSearchInstance;
    #[wasm_bindgen(method, catch)]
    fn info(this: &AiSearchInstance) -> Result<js_sys::Promise, JsValue>;
    #[wasm_bindgen(method, catch)]
    fn search(this: &AiSearchInstance, request: JsValue) -> Result<js_sys::Promise, JsValue>;
    #[wasm_bindgen(method, catch)]
    fn stats(this: &AiSearchInstance) -> Result<js_sys::Promise, JsValue>;
    /// `items` is a getter on the instance.
    #[wasm_bindgen(method, getter)]
    fn items(this: &AiSearchInstance) -> AiSearchItems;

    #[wasm_bindgen(extends = js_sys::Object)]
    pub type AiSearchItems;
    #[wasm_bindgen(method, catch)]
    fn upload(this: &AiSearchItems, name: &str, content: &str, options: JsValue) -> Result<js_sys::Promise, JsValue>;
    #[wasm_bindgen(method, catch)]
    fn list(this: &AiSearchItems, params: JsValue) -> Result<js_sys::Promise, JsValue>;
    #[wasm_bindgen(method, catch, js_name = delete)]
    fn delete_item(this: &AiSearchItems, id: &str) -> Result<js_sys::Promise, JsValue>;
}

/// The binding, when the deployment has one. Read through `Reflect` rather than `Env::get_binding`, whose check
/// of the object's constructor name does not know this binding.
pub fn bind(env: &Env) -> Option<Rc<dyn AiSearch>> {
    let value = js_sys::Reflect::get(env.as_ref(), &JsValue::from_str(BINDING)).ok()?;
    if value.is_undefined() || value.is_null() || !value.is_object() {
        return None;
    }
    Some(Rc::new(WorkerAiSearch { namespace: value.unchecked_into() }))
}

struct WorkerAiSearch {
    namespace: AiSearchNamespace,
}

impl WorkerAiSearch {
    fn instance(&self, name: &str) -> Result<AiSearchInstance, AiSearchError> {
        self.namespace.get(name).map_err(|e| error_of(&e))
    }
}

#[async_trait(?Send)]
impl AiSearch for WorkerAiSearch {
    async fn info(&self, instance: &str) -> Result<Option<Value>, AiSearchError> {
        let handle = self.instance(instance)?;
        match settle(handle.info()).await {
            Ok(info) => Ok(Some(info)),
            Err(AiSearchError::NotFound { .. }) => Ok(None),
            Err(other) => Err(other),
        }
    }

    async fn create(&self, config: &Value) -> Result<(), AiSearchError> {
        settle(self.namespace.create(to_js(config)?)).await.map(|_| ())
    }

    async fn search(&self, instance: &str, request: &Value) -> Result<Value, AiSearchError> {
        settle(self.instance(instance)?.search(to_js(request)?)).await
    }

    async fn stats(&self, instance: &str) -> Result<Value, AiSearchError> {
        settle(self.instance(instance)?.stats()).await
    }

    async fn upload(&self, instance: &str, name: &str, content: &str, options: &Value) -> Result<Value, AiSearchError> {
        settle(self.instance(instance)?.items().upload(name, content, to_js(options)?)).await
    }

    async fn list(&self, instance: &str, params: &Value) -> Result<Value, AiSearchError> {
        settle(self.instance(instance)?.items().list(to_js(params)?)).await
    }

    async fn delete(&self, instance: &str, id: &str) -> Result<(), AiSearchError> {
        settle(self.instance(instance)?.items().delete_item(id)).await.map(|_| ())
    }
}

/// A serde value as a plain JavaScript value.
fn to_js(value: &Value) -> Result<JsValue, AiSearchError> {
    let text = serde_json::to_string(value).map_err(|e| AiSearchError::Malformed { reason: e.to_string() })?;
    js_sys::JSON::parse(&text).map_err(|e| error_of(&e))
}

/// Awaits a binding call and reads its answer as JSON (`undefined` reads as null).
async fn settle(call: Result<js_sys::Promise, JsValue>) -> Result<Value, AiSearchError> {
    let promise = call.map_err(|e| error_of(&e))?;
    let answer = JsFuture::from(promise).await.map_err(|e| error_of(&e))?;
    if answer.is_undefined() || answer.is_null() {
        return Ok(Value::Null);
    }
    let text: String = js_sys::JSON::stringify(&answer)
        .map_err(|e| error_of(&e))?
        .as_string()
        .ok_or_else(|| AiSearchError::Malformed { reason: "an answer that is not JSON".into() })?;
    serde_json::from_slice(text.as_bytes()).map_err(|e| AiSearchError::Malformed { reason: e.to_string() })
}

/// A thrown JavaScript value as our error: "not found" by its name or message, as the binding names it.
fn error_of(thrown: &JsValue) -> AiSearchError {
    let (name, message) = match thrown.dyn_ref::<js_sys::Error>() {
        Some(error) => (String::from(error.name()), String::from(error.message())),
        None => ("Error".to_owned(), thrown.as_string().unwrap_or_else(|| format!("{thrown:?}"))),
    };
    if says_not_found(&format!("{name} {message}")) {
        AiSearchError::NotFound { what: message }
    } else {
        AiSearchError::Failed { name, message }
    }
}

/// `/not.?found/i`, the test the TypeScript server applies: "NotFound", "not found", "not_found", "not-found".
fn says_not_found(text: &str) -> bool {
    let lower: Vec<char> = text.to_lowercase().chars().collect();
    let found: Vec<char> = "found".chars().collect();
    let at = |i: usize| lower.get(i..i + found.len()) == Some(&found[..]);
    (0..lower.len()).any(|i| lower[i..].starts_with(&['n', 'o', 't']) && (at(i + 3) || at(i + 4)))
}
