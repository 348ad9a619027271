//! The deployment's AI Search settings (`AI_SEARCH_INSTANCE`, `EMBEDDING_MODEL`, `RERANKING_MODEL`).

use super::error::IndexError;
use super::MAX_INSTANCE_CHARS;

/// The instance used when `AI_SEARCH_INSTANCE` is unset: the TypeScript project's, so a switched deployment
/// finds its index.
pub const DEFAULT_INSTANCE: &str = "zotero-items";
/// The embedding model of instances created here.
pub const DEFAULT_EMBEDDING_MODEL: &str = "@cf/baai/bge-m3";
/// The reranking model of instances created here.
pub const DEFAULT_RERANKING_MODEL: &str = "@cf/baai/bge-reranker-base";

/// Which AI Search instance holds the library, and the models a new one is created with. Query rewriting is
/// deliberately not configurable: a rewritten query searches for something the caller did not ask.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexSettings {
    pub instance: String,
    pub embedding_model: String,
    pub reranking_model: String,
}

impl Default for IndexSettings {
    fn default() -> Self {
        Self {
            instance: DEFAULT_INSTANCE.to_owned(),
            embedding_model: DEFAULT_EMBEDDING_MODEL.to_owned(),
            reranking_model: DEFAULT_RERANKING_MODEL.to_owned(),
        }
    }
}

impl IndexSettings {
    /// Reads the settings through `lookup` (the Worker's variables, or the native settings). An empty value is
    /// the same as an unset one, as in the TypeScript project (`||`).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, IndexError> {
        let read =
            |name: &str, default: &str| lookup(name).filter(|v| !v.is_empty()).unwrap_or_else(|| default.to_owned());
        let instance = read("AI_SEARCH_INSTANCE", DEFAULT_INSTANCE);
        if !is_valid_instance(&instance) {
            return Err(IndexError::InvalidInstance { instance });
        }
        Ok(Self {
            instance,
            embedding_model: read("EMBEDDING_MODEL", DEFAULT_EMBEDDING_MODEL),
            reranking_model: read("RERANKING_MODEL", DEFAULT_RERANKING_MODEL),
        })
    }
}

/// `^[a-z0-9_]+(?:-[a-z0-9_]+)*$`, 1–32 characters: AI Search's rule for instance ids.
pub fn is_valid_instance(id: &str) -> bool {
    let word = |part: &str| {
        !part.is_empty() && part.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
    };
    !id.is_empty() && id.len() <= MAX_INSTANCE_CHARS && id.split('-').all(word)
}
