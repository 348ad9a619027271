use async_trait::async_trait;
use serde_json::Value;

/// Why a call to Cloudflare AI Search failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AiSearchError {
    /// The instance or item does not exist (the binding's `AiSearchNotFoundError`, or any error whose name or
    /// message matches `/not.?found/i`).
    #[error("AI Search has no {what}")]
    NotFound { what: String },
    /// The service refused or failed the call; `name` is the JavaScript error's name.
    #[error("AI Search failed ({name}): {message}")]
    Failed { name: String, message: String },
    /// The answer did not have the shape the binding documents.
    #[error("AI Search answered with something unexpected: {reason}")]
    Malformed { reason: String },
}

/// The Cloudflare AI Search namespace binding (`ai_search_namespaces`, `env.AI_SEARCH`), one method per call
/// this server makes, with the binding's own JSON shapes in and out. The Worker implements
/// it over wasm-bindgen; tests over an in-memory stand-in that indexes asynchronously like the service.
///
/// Every method but `create` names its instance: `ns.get(instance)` is a synchronous handle with no I/O, so
/// an implementation may resolve it per call.
#[async_trait(?Send)]
pub trait AiSearch {
    /// `instance.info()`; `Ok(None)` when the instance does not exist.
    async fn info(&self, instance: &str) -> Result<Option<Value>, AiSearchError>;
    /// `ns.create(config)`; `config.id` names the instance.
    async fn create(&self, config: &Value) -> Result<(), AiSearchError>;
    /// `instance.search(request)`: `{search_query, chunks: [{id, type, score, text, item: {key, …},
    /// scoring_details?: {vector_score?, …}}]}`.
    async fn search(&self, instance: &str, request: &Value) -> Result<Value, AiSearchError>;
    /// `instance.stats()`: `{queued?, running?, completed?, error?, skipped?, outdated?, engine?: {vectorize?:
    /// {vectorsCount, dimensions}}}`.
    async fn stats(&self, instance: &str) -> Result<Value, AiSearchError>;
    /// `instance.items.upload(name, content, options)`: an upsert by name, indexed later. Metadata values must be
    /// strings (the service rejects numbers).
    async fn upload(&self, instance: &str, name: &str, content: &str, options: &Value) -> Result<Value, AiSearchError>;
    /// `instance.items.list(params)`: `{result: [{id, key, status, …}], result_info?}`; `per_page` ≤ 50.
    async fn list(&self, instance: &str, params: &Value) -> Result<Value, AiSearchError>;
    /// `instance.items.delete(id)`: by the item's opaque id, not its key.
    async fn delete(&self, instance: &str, id: &str) -> Result<(), AiSearchError>;
}
