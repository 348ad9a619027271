//! Tests of the semantic index: documents, the service calls, folding and passages, and the in-memory AI
//! Search stand-in. The sync runs against the Zotero simulator in crates/server/tests/index_sync.rs.

use std::rc::Rc;

use async_trait::async_trait;
use serde_json::{json, Value};

use super::*;
use crate::platform::{AiSearch, AiSearchError};
use crate::testing::MemoryAiSearch;
use crate::zotero::ZoteroObject;

mod documents;
mod passages;
mod service;
mod settings;
mod stand_in;

/// An item as the API returns it, from its `data`.
fn item(key: &str, data: Value) -> ZoteroObject {
    let mut data = data;
    data["key"] = json!(key);
    serde_json::from_value(json!({ "key": key, "version": 1, "meta": {}, "data": data })).unwrap()
}

/// A journal article with the fields the documents use.
fn article(key: &str) -> ZoteroObject {
    item(
        key,
        json!({
            "itemType": "journalArticle",
            "title": "Heat stress and wheat yields",
            "creators": [
                { "creatorType": "author", "firstName": "Ada", "lastName": "Lovelace" },
                { "creatorType": "author", "name": "Climate Consortium" },
            ],
            "date": "2020-05-01",
            "publicationTitle": "Field Crops Research",
            "tags": [{ "tag": "drought" }, { "tag": "wheat", "type": 1 }],
            "abstractNote": "Warming shortens the grain filling period.",
        }),
    )
}

/// An index on a fresh stand-in, with the instance already created.
async fn ready_index() -> (SemanticIndex, Rc<MemoryAiSearch>) {
    let service = MemoryAiSearch::new();
    let index = SemanticIndex::new(service.clone(), IndexSettings::default());
    assert!(index.ensure().await.unwrap().created);
    (index, service)
}

/// A service that answers every search with the same chunks and records the requests; other calls fail.
struct Scripted {
    answer: Value,
    requests: std::cell::RefCell<Vec<Value>>,
}

impl Scripted {
    fn new(chunks: Value) -> Rc<Self> {
        Rc::new(Self { answer: json!({ "search_query": "q", "chunks": chunks }), requests: Default::default() })
    }
    fn index(self: &Rc<Self>) -> SemanticIndex {
        SemanticIndex::new(self.clone(), IndexSettings::default())
    }
    fn last_request(&self) -> Value {
        self.requests.borrow().last().cloned().unwrap()
    }
}

fn unused() -> AiSearchError {
    AiSearchError::Failed { name: "Test".into(), message: "not scripted".into() }
}

#[async_trait(?Send)]
impl AiSearch for Scripted {
    async fn info(&self, _: &str) -> Result<Option<Value>, AiSearchError> {
        Err(unused())
    }
    async fn create(&self, _: &Value) -> Result<(), AiSearchError> {
        Err(unused())
    }
    async fn search(&self, _: &str, request: &Value) -> Result<Value, AiSearchError> {
        self.requests.borrow_mut().push(request.clone());
        Ok(self.answer.clone())
    }
    async fn stats(&self, _: &str) -> Result<Value, AiSearchError> {
        Err(unused())
    }
    async fn upload(&self, _: &str, _: &str, _: &str, _: &Value) -> Result<Value, AiSearchError> {
        Err(unused())
    }
    async fn list(&self, _: &str, _: &Value) -> Result<Value, AiSearchError> {
        Err(unused())
    }
    async fn delete(&self, _: &str, _: &str) -> Result<(), AiSearchError> {
        Err(unused())
    }
}

/// A chunk as the binding returns it; `vector_score` left out when `None`.
fn chunk(name: &str, vector_score: Option<f64>, fused: f64, text: &str) -> Value {
    let mut details = json!({ "keyword_score": 1 });
    if let Some(score) = vector_score {
        details["vector_score"] = json!(score);
    }
    json!({ "id": format!("c-{name}"), "type": "text", "score": fused, "text": text,
            "item": { "key": name }, "scoring_details": details })
}
