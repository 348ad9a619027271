//! The in-memory AI Search stand-in behaves like the service where the index could notice.

use super::*;
use crate::testing::AiSearchCall;

#[tokio::test]
async fn calls_on_a_missing_instance_are_not_found() {
    let service = MemoryAiSearch::new();
    assert_eq!(service.info("nope").await.unwrap(), None);
    assert!(matches!(service.stats("nope").await, Err(AiSearchError::NotFound { .. })));
    assert!(matches!(service.upload("nope", "A.md", "t", &json!({})).await, Err(AiSearchError::NotFound { .. })));
    assert!(matches!(service.list("nope", &json!({})).await, Err(AiSearchError::NotFound { .. })));
    service.create(&json!({ "id": "one" })).await.unwrap();
    assert!(service.create(&json!({ "id": "one" })).await.is_err(), "no second create");
}

#[tokio::test]
async fn uploads_queue_until_processed() {
    let (index, service) = ready_index().await;
    index.upsert(&[document_for(&article("AAAA1111"), None).unwrap()]).await.unwrap();
    let stats = index.stats().await.unwrap();
    assert_eq!((stats.queued, stats.vectors), (1, 0));
    service.process();
    let stats = index.stats().await.unwrap();
    assert_eq!((stats.queued, stats.running, stats.vectors), (0, 0, 1));
    // A re-upload is queued again; the old text stays searchable until it is indexed.
    let mut changed = article("AAAA1111");
    changed.data.insert("title".into(), json!("Entirely different"));
    index.upsert(&[document_for(&changed, None).unwrap()]).await.unwrap();
    assert_eq!(index.query("wheat", &QueryOptions::default()).await.unwrap().len(), 1);
    service.process();
    assert!(index.query("Entirely", &QueryOptions::default()).await.unwrap().len() == 1);
}

#[tokio::test]
async fn running_and_failed_documents_are_counted() {
    let (index, service) = ready_index().await;
    let documents: Vec<Document> =
        ["AAAA1111", "BBBB2222", "CCCC3333"].iter().map(|k| document_for(&article(k), None).unwrap()).collect();
    index.upsert(&documents).await.unwrap();
    service.start_running("zotero-items", 1);
    service.fail_indexing("zotero-items", "CCCC3333.md");
    assert_eq!(index.stats().await.unwrap(), IndexStats { vectors: 0, queued: 1, running: 1, failed: 1 });
}

#[tokio::test]
async fn listings_page_at_most_fifty() {
    let (index, service) = ready_index().await;
    let documents: Vec<Document> =
        (0..55).map(|i| document_for(&article(&format!("KEY{i:05}")), None).unwrap()).collect();
    index.upsert(&documents).await.unwrap();
    let page = service.list("zotero-items", &json!({ "page": 2, "per_page": 50 })).await.unwrap();
    assert_eq!(page["result"].as_array().unwrap().len(), 5);
    assert_eq!(page["result_info"]["total_count"], json!(55));
    assert!(service.list("zotero-items", &json!({ "per_page": 51 })).await.is_err());
    let exact = service.list("zotero-items", &json!({ "key": "KEY00054.md" })).await.unwrap();
    assert_eq!(exact["result"][0]["key"], json!("KEY00054.md"));
    assert_eq!(exact["result"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn deletes_take_the_id_not_the_name() {
    let (index, service) = ready_index().await;
    index.upsert(&[document_for(&article("AAAA1111"), None).unwrap()]).await.unwrap();
    assert!(matches!(service.delete("zotero-items", "AAAA1111.md").await, Err(AiSearchError::NotFound { .. })));
    let id = service.document("zotero-items", "AAAA1111.md").unwrap().id;
    service.delete("zotero-items", &id).await.unwrap();
    assert!(service.documents("zotero-items").is_empty());
}

#[tokio::test]
async fn searches_cap_results_and_refuse_more_than_fifty() {
    let (index, service) = ready_index().await;
    let documents: Vec<Document> =
        (0..20).map(|i| document_for(&article(&format!("KEY{i:05}")), None).unwrap()).collect();
    index.upsert(&documents).await.unwrap();
    service.process();
    let answer = service
        .search(
            "zotero-items",
            &json!({ "query": "wheat", "ai_search_options": { "retrieval": { "max_num_results": 7 } } }),
        )
        .await
        .unwrap();
    assert_eq!(answer["chunks"].as_array().unwrap().len(), 7);
    let chunk = &answer["chunks"][0];
    assert!(chunk["scoring_details"]["vector_score"].is_number());
    assert!(chunk["item"]["key"].as_str().unwrap().ends_with(".md"));
    let too_many = json!({ "query": "wheat", "ai_search_options": { "retrieval": { "max_num_results": 51 } } });
    assert!(service.search("zotero-items", &too_many).await.is_err());
}

#[tokio::test]
async fn injected_failures_hit_the_next_calls_only() {
    let (index, service) = ready_index().await;
    service.fail_next(AiSearchCall::Stats, 2, AiSearchError::Failed { name: "Error".into(), message: "down".into() });
    assert!(index.stats().await.is_err());
    assert!(index.stats().await.is_err());
    assert!(index.stats().await.is_ok());
    assert_eq!(service.calls(AiSearchCall::Stats), 3);
}
