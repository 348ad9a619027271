//! `SemanticIndex` against the stand-in and scripted services (sync.test.ts "AiSearchSemanticIndex").

use std::collections::HashSet;

use super::*;
use crate::testing::AiSearchCall;

// -- ensure (upstream 6–9) --

#[tokio::test]
async fn ensure_creates_the_instance_with_the_exact_config() {
    let service = MemoryAiSearch::new();
    let index = SemanticIndex::new(service.clone(), IndexSettings::default());
    assert_eq!(index.ensure().await.unwrap(), Ensured { created: true, mismatch: None });
    assert_eq!(
        service.creates(),
        [json!({
            "id": "zotero-items",
            "index_method": { "vector": true, "keyword": true },
            "fusion_method": "rrf",
            "embedding_model": "@cf/baai/bge-m3",
            "reranking": true,
            "reranking_model": "@cf/baai/bge-reranker-base",
            "chunk": true,
            "chunk_size": 512,
            "chunk_overlap": 10,
            "score_threshold": 0,
            "custom_metadata": [
                { "field_name": "itemtype", "data_type": "text" },
                { "field_name": "year", "data_type": "number" },
            ],
        })]
    );
    // The key order is the TypeScript project's too.
    let creates = service.creates();
    let keys: Vec<&String> = creates[0].as_object().unwrap().keys().collect();
    assert_eq!(keys.first().map(|k| k.as_str()), Some("id"));
    assert_eq!(keys.last().map(|k| k.as_str()), Some("custom_metadata"));
}

#[tokio::test]
async fn ensure_creates_when_the_binding_throws_not_found() {
    let service = MemoryAiSearch::new();
    service.missing_info_as_error(true);
    let index = SemanticIndex::new(service.clone(), IndexSettings::default());
    assert!(index.ensure().await.unwrap().created);
    assert!(service.has_instance("zotero-items"));
}

#[tokio::test]
async fn an_existing_instance_is_left_alone() {
    let (index, service) = ready_index().await;
    assert_eq!(index.ensure().await.unwrap(), Ensured { created: false, mismatch: None });
    assert_eq!(service.calls(AiSearchCall::Create), 1, "created once, never updated");
}

async fn existing_with(config: Value) -> Ensured {
    let service = MemoryAiSearch::new();
    service.create(&config).await.unwrap();
    SemanticIndex::new(service, IndexSettings::default()).ensure().await.unwrap()
}

#[tokio::test]
async fn a_smaller_chunk_size_is_reported() {
    let ensured = existing_with(json!({ "id": "zotero-items", "chunk_size": 256 })).await;
    assert!(!ensured.created);
    let mismatch = ensured.mismatch.unwrap();
    assert!(
        mismatch.starts_with(
            "AI Search instance \"zotero-items\" chunks at 256 tokens, but this deployment is built for 512."
        ),
        "{mismatch}"
    );
    assert!(mismatch.contains("Delete the instance and let the next sync rebuild it"));
}

#[tokio::test]
async fn a_larger_or_absent_chunk_size_is_not_a_mismatch() {
    assert_eq!(existing_with(json!({ "id": "zotero-items", "chunk_size": 1024 })).await.mismatch, None);
    assert_eq!(existing_with(json!({ "id": "zotero-items" })).await.mismatch, None);
}

#[tokio::test]
async fn other_info_failures_are_errors_and_create_nothing() {
    let service = MemoryAiSearch::new();
    service.fail_next(AiSearchCall::Info, 1, AiSearchError::Failed { name: "Error".into(), message: "boom".into() });
    let index = SemanticIndex::new(service.clone(), IndexSettings::default());
    let error = index.ensure().await.unwrap_err();
    assert!(matches!(error, IndexError::Service(_)), "{error}");
    assert!(error.to_string().contains("Try again"));
    assert_eq!(service.calls(AiSearchCall::Create), 0);
}

// -- upsert (upstream 10–11) --

#[tokio::test]
async fn upsert_keeps_one_document_per_item_with_a_stable_id() {
    let (index, service) = ready_index().await;
    let first = document_for(&article("AAAA1111"), None).unwrap();
    assert_eq!(index.upsert(&[first]).await.unwrap(), 1);
    let id = service.document("zotero-items", "AAAA1111.md").unwrap().id;
    assert_ne!(id, "AAAA1111.md", "the id is opaque, not the name");

    let mut changed = article("AAAA1111");
    changed.data.insert("title".into(), json!("A new title"));
    index.upsert(&[document_for(&changed, None).unwrap()]).await.unwrap();
    let documents = service.documents("zotero-items");
    assert_eq!(documents.len(), 1);
    assert_eq!(documents[0].id, id);
    assert!(documents[0].content.starts_with("A new title"));
    assert_eq!(Value::Object(documents[0].metadata.clone()), json!({ "itemtype": "journalArticle", "year": "2020" }));
}

#[tokio::test]
async fn only_indexable_items_become_documents() {
    let (index, _) = ready_index().await;
    let items = [
        article("AAAA1111"),
        item("BBBB2222", json!({ "itemType": "note" })),
        item("CCCC3333", json!({ "itemType": "book", "deleted": 1 })),
    ];
    let documents: Vec<Document> = items.iter().filter_map(|i| document_for(i, None)).collect();
    assert_eq!(index.upsert(&documents).await.unwrap(), 1);
}

#[tokio::test]
async fn uploads_go_six_at_a_time() {
    let (index, service) = ready_index().await;
    let documents: Vec<Document> =
        (0..13).map(|i| document_for(&article(&format!("AAAA{i:04}")), None).unwrap()).collect();
    assert_eq!(index.upsert(&documents).await.unwrap(), 13);
    assert_eq!(service.most_uploads_in_flight(), 6);
    assert_eq!(service.documents("zotero-items").len(), 13);
}

#[tokio::test]
async fn a_failed_upload_fails_the_call() {
    let (index, service) = ready_index().await;
    service.fail_next(AiSearchCall::Upload, 1, AiSearchError::Failed { name: "Error".into(), message: "x".into() });
    let documents = [document_for(&article("AAAA1111"), None).unwrap()];
    assert!(index.upsert(&documents).await.is_err());
}

#[tokio::test]
async fn numeric_metadata_is_refused_like_the_service_does() {
    let (_, service) = ready_index().await;
    let error = service
        .upload("zotero-items", "AAAA1111.md", "text", &json!({ "metadata": { "itemtype": "book", "year": 2020 } }))
        .await
        .unwrap_err();
    assert!(error.to_string().contains("invalid_metadata_format"), "{error}");
}

// -- the search request (upstream 12–14) --

#[tokio::test]
async fn the_search_is_hybrid_with_no_thresholds() {
    let service = Scripted::new(json!([]));
    service.index().query("heat stress", &QueryOptions::default()).await.unwrap();
    assert_eq!(
        service.last_request(),
        json!({
            "query": "heat stress",
            "ai_search_options": {
                "retrieval": { "retrieval_type": "hybrid", "keyword_match_mode": "or", "max_num_results": 40,
                               "match_threshold": 0, "return_on_failure": false },
                "reranking": { "enabled": true, "match_threshold": 0 },
            },
        })
    );
}

#[tokio::test]
async fn keywords_match_any_word_and_a_failed_search_is_not_hidden() {
    let service = Scripted::new(json!([]));
    service.index().query("q", &QueryOptions::default()).await.unwrap();
    let retrieval = &service.last_request()["ai_search_options"]["retrieval"];
    assert_eq!(retrieval["keyword_match_mode"], json!("or"));
    assert_eq!(retrieval["return_on_failure"], json!(false));
}

#[tokio::test]
async fn chunks_asked_for_are_the_items_wanted_times_four_at_most_50() {
    let service = Scripted::new(json!([]));
    let index = service.index();
    for (top_k, chunks) in [(1, 4), (12, 48), (13, 50), (36, 50), (500, 50), (0, 4)] {
        index.query("q", &QueryOptions { top_k, ..QueryOptions::default() }).await.unwrap();
        assert_eq!(service.last_request()["ai_search_options"]["retrieval"]["max_num_results"], json!(chunks));
    }
    assert_eq!(MAX_SEMANTIC_ITEMS, 12);
}

#[tokio::test]
async fn filters_carry_the_item_type_and_the_year_range() {
    let service = Scripted::new(json!([]));
    let index = service.index();
    let options =
        QueryOptions { top_k: 5, item_type: Some("preprint".into()), from_year: Some(2015), to_year: Some(2020) };
    index.query("q", &options).await.unwrap();
    assert_eq!(
        service.last_request()["ai_search_options"]["retrieval"]["filters"],
        json!({ "itemtype": { "$eq": "preprint" }, "year": { "$gte": 2015, "$lte": 2020 } })
    );
    // A negated type and zero years send no filters at all.
    let options = QueryOptions { top_k: 5, item_type: Some("-book".into()), from_year: Some(0), to_year: None };
    index.query("q", &options).await.unwrap();
    assert!(service.last_request()["ai_search_options"]["retrieval"].get("filters").is_none());
    // One bound alone.
    index.query("q", &QueryOptions { to_year: Some(1999), ..QueryOptions::default() }).await.unwrap();
    assert_eq!(
        service.last_request()["ai_search_options"]["retrieval"]["filters"],
        json!({ "year": { "$lte": 1999 } })
    );
}

// -- folding (upstream 15–17) --

#[tokio::test]
async fn chunks_fold_into_items_in_first_appearance_order() {
    let service = Scripted::new(json!([
        chunk("BBBB2222.md", Some(0.61), 0.9, "b one"),
        chunk("AAAA1111.md", Some(0.42), 0.8, "a one"),
        chunk("BBBB2222.md", Some(0.66), 0.7, "b two"),
        chunk("AAAA1111.md", Some(0.30), 0.6, "a two"),
    ]));
    let found = service.index().query("q", &QueryOptions::default()).await.unwrap();
    let keys: Vec<&str> = found.iter().map(|m| m.item_key.as_str()).collect();
    assert_eq!(keys, ["BBBB2222", "AAAA1111"]);
    assert_eq!(found[0].score, Some(0.66));
    assert_eq!(found[1].score, Some(0.42));
    // The passage is the best chunk's.
    assert_eq!(found[0].passage.as_deref(), Some("b two"));
    assert_eq!(found[1].passage.as_deref(), Some("a one"));
}

#[tokio::test]
async fn top_k_caps_the_items() {
    let chunks: Vec<Value> =
        (0..8).map(|i| chunk(&format!("KEY{i:05}.md"), Some(0.9 - i as f64 / 10.0), 0.5, "t")).collect();
    let service = Scripted::new(Value::Array(chunks));
    let found = service.index().query("q", &QueryOptions { top_k: 3, ..QueryOptions::default() }).await.unwrap();
    assert_eq!(found.len(), 3);
    assert_eq!(found[2].item_key, "KEY00002");
}

#[tokio::test]
async fn a_chunk_without_vector_score_leaves_the_score_unset() {
    let service = Scripted::new(json!([chunk("AAAA1111.md", None, 0.9, "text")]));
    let found = service.index().query("q", &QueryOptions::default()).await.unwrap();
    assert_eq!(found[0].score, None, "never the fused score, never 0");
}

#[tokio::test]
async fn a_later_scored_chunk_sets_an_unscored_items_score() {
    let service = Scripted::new(json!([
        chunk("AAAA1111.md", None, 0.9, "first"),
        chunk("AAAA1111.md", Some(0.2), 0.8, "second"),
        chunk("BBBB2222.md", None, 0.7, "only"),
    ]));
    let found = service.index().query("q", &QueryOptions::default()).await.unwrap();
    assert_eq!(found.len(), 2, "an item is never returned twice");
    assert_eq!((found[0].score, found[0].passage.as_deref()), (Some(0.2), Some("second")));
    assert_eq!((found[1].score, found[1].passage.as_deref()), (None, Some("only")));
}

#[tokio::test]
async fn an_answer_without_chunks_is_malformed() {
    let service = Rc::new(Scripted { answer: json!({ "search_query": "q" }), requests: Default::default() });
    let error = service.index().query("q", &QueryOptions::default()).await.unwrap_err();
    assert!(matches!(error, IndexError::Service(AiSearchError::Malformed { .. })), "{error}");
}

// -- stats --

#[tokio::test]
async fn stats_count_outdated_as_queued_and_default_to_zero() {
    struct Stats(Value);
    #[async_trait(?Send)]
    impl AiSearch for Stats {
        async fn info(&self, _: &str) -> Result<Option<Value>, AiSearchError> {
            Err(unused())
        }
        async fn create(&self, _: &Value) -> Result<(), AiSearchError> {
            Err(unused())
        }
        async fn search(&self, _: &str, _: &Value) -> Result<Value, AiSearchError> {
            Err(unused())
        }
        async fn stats(&self, _: &str) -> Result<Value, AiSearchError> {
            Ok(self.0.clone())
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
    let stats = |value: Value| async move {
        SemanticIndex::new(Rc::new(Stats(value)), IndexSettings::default()).stats().await.unwrap()
    };
    assert_eq!(
        stats(json!({ "queued": 2, "outdated": 3, "running": 1, "error": 4,
                      "engine": { "vectorize": { "vectorsCount": 99, "dimensions": 1024 } } }))
        .await,
        IndexStats { vectors: 99, queued: 5, running: 1, failed: 4 }
    );
    assert_eq!(stats(json!({})).await, IndexStats::default());
}

// -- remove (upstream 18–20) --

async fn with_documents(count: usize) -> (SemanticIndex, Rc<MemoryAiSearch>) {
    let (index, service) = ready_index().await;
    let documents: Vec<Document> =
        (0..count).map(|i| document_for(&article(&format!("KEY{i:05}")), None).unwrap()).collect();
    index.upsert(&documents).await.unwrap();
    (index, service)
}

fn names(service: &MemoryAiSearch) -> HashSet<String> {
    service.documents("zotero-items").into_iter().map(|d| d.name).collect()
}

#[tokio::test]
async fn deletes_resolve_ids_by_listing() {
    let (index, service) = with_documents(120).await;
    // Many keys: one paged scan, stopping once all are found.
    let keys: Vec<String> = (0..60).map(|i| format!("KEY{i:05}")).collect();
    assert_eq!(index.remove(&keys).await.unwrap(), 60);
    assert_eq!(names(&service).len(), 60);
    assert!(!names(&service).contains("KEY00000.md"));
    let lists = service.lists();
    assert_eq!(lists.len(), 2, "pages 1 and 2 held all 60");
    assert_eq!(lists[0], json!({ "page": 1, "per_page": 50, "source": "builtin" }));
    assert_eq!(service.calls(AiSearchCall::Delete), 60);
}

#[tokio::test]
async fn a_few_keys_are_looked_up_by_exact_key() {
    let (index, service) = with_documents(120).await;
    let keys = vec!["KEY00100".to_owned(), "KEY00007".to_owned()];
    assert_eq!(index.remove(&keys).await.unwrap(), 2);
    assert_eq!(
        service.lists(),
        [json!({ "key": "KEY00007.md", "source": "builtin" }), json!({ "key": "KEY00100.md", "source": "builtin" }),]
    );
    assert!(!names(&service).contains("KEY00100.md"));
}

#[tokio::test]
async fn a_service_that_ignores_the_key_falls_back_to_the_scan() {
    let (index, service) = with_documents(120).await;
    service.ignore_key_filter(true);
    let keys = vec!["KEY00110".to_owned()];
    assert_eq!(index.remove(&keys).await.unwrap(), 1);
    assert!(!names(&service).contains("KEY00110.md"));
    assert_eq!(names(&service).len(), 119, "nothing else was deleted");
    // One exact lookup (ignored), then pages 1–3.
    assert_eq!(service.calls(AiSearchCall::List), 4);
}

#[tokio::test]
async fn keys_without_documents_are_not_an_error() {
    let (index, service) = with_documents(3).await;
    let keys = vec!["NOPE0001".to_owned(), "KEY00001".to_owned()];
    assert_eq!(index.remove(&keys).await.unwrap(), 1);
    assert_eq!(index.remove(&[]).await.unwrap(), 0);
    // Many missing keys: the scan stops at the short page.
    let missing: Vec<String> = (0..30).map(|i| format!("GONE{i:04}")).collect();
    assert_eq!(index.remove(&missing).await.unwrap(), 0);
    assert_eq!(names(&service).len(), 2);
}

#[tokio::test]
async fn an_endless_listing_is_an_error() {
    /// Every page is full and holds none of the wanted documents.
    struct Endless;
    #[async_trait(?Send)]
    impl AiSearch for Endless {
        async fn info(&self, _: &str) -> Result<Option<Value>, AiSearchError> {
            Err(unused())
        }
        async fn create(&self, _: &Value) -> Result<(), AiSearchError> {
            Err(unused())
        }
        async fn search(&self, _: &str, _: &Value) -> Result<Value, AiSearchError> {
            Err(unused())
        }
        async fn stats(&self, _: &str) -> Result<Value, AiSearchError> {
            Err(unused())
        }
        async fn upload(&self, _: &str, _: &str, _: &str, _: &Value) -> Result<Value, AiSearchError> {
            Err(unused())
        }
        async fn list(&self, _: &str, _: &Value) -> Result<Value, AiSearchError> {
            let result: Vec<Value> = (0..50).map(|i| json!({ "id": format!("id{i}"), "key": "OTHER000.md" })).collect();
            Ok(json!({ "result": result }))
        }
        async fn delete(&self, _: &str, _: &str) -> Result<(), AiSearchError> {
            Err(unused())
        }
    }
    let index = SemanticIndex::new(Rc::new(Endless), IndexSettings::default());
    let keys: Vec<String> = (0..20).map(|i| format!("GONE{i:04}")).collect();
    let error = index.remove(&keys).await.unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("AI Search: listing zotero-items did not terminate within 5000 pages, so 20 deleted item(s) could not be removed."),
        "{error}"
    );
}

#[tokio::test]
async fn remove_absent_deletes_documents_of_items_that_are_gone() {
    let (index, service) = with_documents(60).await;
    let keep: HashSet<String> = (0..60).filter(|i| i % 3 != 0).map(|i| format!("KEY{i:05}")).collect();
    assert_eq!(index.remove_absent(&keep).await.unwrap(), 20);
    assert_eq!(names(&service).len(), 40);
    assert!(!names(&service).contains("KEY00003.md") && names(&service).contains("KEY00004.md"));
}
