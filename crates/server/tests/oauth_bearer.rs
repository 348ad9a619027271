//! The bearer check on `/mcp`: which tokens open it, for which URL, with which scopes.

mod oauth_support;

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use async_trait::async_trait;
use oauth_support::*;
use serde_json::json;
use zotero_mcp_core::platform::{KvError, KvListPage, KvStore, KvWrite};

fn challenge_error(reply: &Reply) -> String {
    reply.header("www-authenticate").to_owned()
}

#[tokio::test]
async fn unknown_malformed_and_foreign_tokens_are_invalid_token() {
    let h = Harness::new();
    for token in ["nonsense", "owner:grant:made-up-secret", "a:b:c:d"] {
        let reply = h.mcp_call(MCP_URL, token, "fixture_echo", json!({ "text": "x" })).await;
        assert_eq!(reply.status, 401, "{token}");
        assert_eq!(reply.error(), "invalid_token");
        assert!(challenge_error(&reply).contains(r#"error="invalid_token""#));
        assert!(challenge_error(&reply)
            .contains("resource_metadata=\"https://zotero.example/.well-known/oauth-protected-resource/mcp\""));
    }
    // Another scheme is no bearer token at all.
    let basic = http::Request::post(MCP_URL)
        .header("content-type", "application/json")
        .header("authorization", "Basic b3duZXI6eA==")
        .body(b"{}".to_vec())
        .unwrap();
    let reply = h.send(basic).await;
    assert_eq!(reply.status, 401);
    assert!(!reply.header("www-authenticate").contains("error="));
}

#[tokio::test]
async fn an_expired_access_token_is_refused() {
    let h = Harness::new();
    let t = h.flow(&["zotero:read"]).await;
    h.clock.advance_secs(3599);
    assert!(h.token_works(&t.access).await);
    h.clock.advance_secs(2);
    let reply = h.mcp_call(MCP_URL, &t.access, "fixture_echo", json!({ "text": "x" })).await;
    assert_eq!(reply.status, 401);
    assert_eq!(reply.error(), "invalid_token");
}

#[tokio::test]
async fn the_audience_is_checked_on_every_request() {
    let h = Harness::new();
    let t = h.flow(&["zotero:read"]).await;
    assert!(h.token_works(&t.access).await);
    for elsewhere in ["https://other.example/mcp", "http://zotero.example/mcp", "https://zotero.example:8443/mcp"] {
        let reply = h.mcp_call(elsewhere, &t.access, "fixture_echo", json!({ "text": "x" })).await;
        assert_eq!(reply.status, 401, "{elsewhere}");
        assert!(challenge_error(&reply).contains(r#"error_description="Invalid audience""#), "{elsewhere}");
    }
}

#[tokio::test]
async fn an_origin_only_audience_covers_mcp() {
    // Claude Code has sent the bare origin as its resource.
    let h = Harness::new();
    let client = h.public_client(REDIRECT).await;
    let code = h.code(&h.authorize_path(&client, REDIRECT, &[("resource", ORIGIN)]), &["zotero:read"]).await;
    let reply = h
        .token(&[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("client_id", &client),
            ("code_verifier", VERIFIER),
            ("resource", ORIGIN),
        ])
        .await;
    assert_eq!(reply.json["resource"], ORIGIN);
    assert!(h.token_works(reply.json["access_token"].as_str().unwrap()).await);
    let other = h
        .mcp_call(
            "https://other.example/mcp",
            reply.json["access_token"].as_str().unwrap(),
            "fixture_echo",
            json!({ "text": "x" }),
        )
        .await;
    assert_eq!(other.status, 401);
}

#[tokio::test]
async fn the_ticked_scopes_reach_the_tools() {
    let h = Harness::new();
    let writer = h.flow(&["zotero:read", "zotero:write"]).await;
    let wrote = h.mcp_call(MCP_URL, &writer.access, "fixture_write", json!({ "note": "x" })).await;
    assert_eq!(wrote.status, 200);
    assert_eq!(wrote.json["result"]["structuredContent"]["written"], true, "{}", wrote.text);

    let reader = h.flow(&["zotero:read"]).await;
    let refused = h.mcp_call(MCP_URL, &reader.access, "fixture_write", json!({ "note": "x" })).await;
    assert_eq!(refused.json["result"]["isError"], true);
    let message = refused.json["result"]["content"][0]["text"].as_str().unwrap();
    assert!(message.contains("zotero:write") && message.contains("write"), "{message}");
}

/// `OAUTH_KV` with a tally of its reads: single keys and bulk reads (with their sizes).
struct ReadTally {
    inner: Rc<dyn KvStore>,
    single: Cell<u32>,
    bulk: RefCell<Vec<usize>>,
}

#[async_trait(?Send)]
impl KvStore for ReadTally {
    async fn get(&self, key: &str) -> Result<Option<String>, KvError> {
        self.single.set(self.single.get() + 1);
        self.inner.get(key).await
    }
    async fn get_many(&self, keys: &[&str]) -> Result<Vec<Option<String>>, KvError> {
        self.bulk.borrow_mut().push(keys.len());
        self.inner.get_many(keys).await
    }
    async fn put(&self, key: &str, value: &str, lifetime: KvWrite) -> Result<(), KvError> {
        self.inner.put(key, value, lifetime).await
    }
    async fn delete(&self, key: &str) -> Result<(), KvError> {
        self.inner.delete(key).await
    }
    async fn list(&self, prefix: &str, cursor: Option<&str>, limit: u32) -> Result<KvListPage, KvError> {
        self.inner.list(prefix, cursor, limit).await
    }
}

#[tokio::test]
async fn each_request_reads_its_token_and_grant_in_one_bulk_read() {
    let mut h = Harness::new();
    let t = h.flow(&["zotero:read"]).await;
    let tally = Rc::new(ReadTally { inner: h.oauth_kv.clone(), single: Cell::new(0), bulk: RefCell::default() });
    h.app.platform.oauth_kv = tally.clone();
    let reply = h.mcp_call(MCP_URL, &t.access, "fixture_echo", json!({ "text": "x" })).await;
    assert_eq!(reply.status, 200);
    assert_eq!(*tally.bulk.borrow(), [2], "the token and its grant, together");
    assert_eq!(tally.single.get(), 0, "nothing else is read from OAUTH_KV on a request");
}

#[tokio::test]
async fn a_token_whose_grant_is_gone_is_refused() {
    let h = Harness::new();
    let t = h.flow(&["zotero:read"]).await;
    let grant = h.grant_keys().await.remove(0);
    zotero_mcp_core::platform::KvStore::delete(h.oauth_kv.as_ref(), &grant).await.unwrap();
    assert!(!h.token_works(&t.access).await, "revocation wins even where a token deletion has not propagated");
}
