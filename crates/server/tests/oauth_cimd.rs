//! Client ID Metadata Documents: fetched, bounded, validated, cached; never from a private address.

mod oauth_support;

use std::rc::Rc;

use async_trait::async_trait;
use oauth_support::*;
use serde_json::{json, Value};
use zotero_mcp_core::platform::KvStore;
use zotero_mcp_core::testing::StubHttp;
use zotero_mcp_server::platform::{HttpClient, HttpError, HttpRequest, HttpResponse};

const CLAUDE: &str = "https://claude.ai/oauth/mcp-oauth-client-metadata";
const CLAUDE_CALLBACK: &str = "https://claude.ai/api/mcp/auth_callback";

fn claude_document() -> Value {
    // As claude.ai publishes it: no application_type, and a jwt-bearer grant this server does not offer.
    json!({
        "client_id": CLAUDE,
        "client_name": "Claude",
        "redirect_uris": [CLAUDE_CALLBACK],
        "grant_types": ["authorization_code", "refresh_token", "urn:ietf:params:oauth:grant-type:jwt-bearer"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
    })
}

fn serve(body: String, cache_control: &'static str) -> Rc<StubHttp> {
    StubHttp::new(move |_| {
        Ok(http::Response::builder()
            .status(200)
            .header("content-type", "application/json")
            .header("cache-control", cache_control)
            .body(body.clone().into_bytes())
            .unwrap())
    })
}

fn harness(http: Rc<StubHttp>) -> Harness {
    Harness::with(&[], http)
}

async fn page(h: &Harness, client_id: &str, redirect: &str) -> Reply {
    h.get(&h.authorize_path(client_id, redirect, &[])).await
}

#[tokio::test]
async fn a_metadata_document_client_completes_the_flow_without_registering() {
    let http = serve(claude_document().to_string(), "public, max-age=3600");
    let h = harness(http.clone());
    let shown = page(&h, CLAUDE, CLAUDE_CALLBACK).await;
    assert_eq!(shown.status, 200, "{}", shown.text);
    assert!(shown.text.contains("<strong>Claude</strong>"));
    assert!(shown.text.contains(CLAUDE), "the client id (its metadata URL) is shown");
    let request = &http.requests()[0];
    assert_eq!(request.uri().to_string(), CLAUDE);
    assert_eq!(request.headers()["accept"], "application/json");

    let code = h.code(&h.authorize_path(CLAUDE, CLAUDE_CALLBACK, &[]), &["zotero:read", "zotero:write"]).await;
    let tokens = h
        .token(&[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("client_id", CLAUDE),
            ("code_verifier", VERIFIER),
            ("redirect_uri", CLAUDE_CALLBACK),
        ])
        .await;
    assert_eq!(tokens.status, 200, "{}", tokens.text);
    let refresh = h.refresh(CLAUDE, tokens.json["refresh_token"].as_str().unwrap()).await;
    assert_eq!(refresh.status, 200, "the jwt-bearer grant was dropped, refresh_token kept: {}", refresh.text);
    assert!(
        h.oauth_kv.keys().iter().all(|k| !k.starts_with("client:")),
        "document clients are never stored as clients"
    );
    assert_eq!(http.requests().len(), 1, "the validated document was cached per Cache-Control");
    let cached = h.cache_kv.list("oauth-cimd:v1:", None, 10).await.unwrap();
    assert_eq!(cached.keys[0].expiration, Some(NOW_MS / 1000 + 3600));
}

#[tokio::test]
async fn documents_over_5_kb_are_refused() {
    let mut document = claude_document();
    document["client_uri"] = json!(format!("https://claude.ai/{}", "x".repeat(5200)));
    let h = harness(serve(document.to_string(), "max-age=3600"));
    let reply = page(&h, CLAUDE, CLAUDE_CALLBACK).await;
    assert_eq!(reply.status, 400);
    assert!(reply.text.contains("could not be used"));

    let declared = StubHttp::new(|_| {
        Ok(http::Response::builder()
            .status(200)
            .header("content-length", "999999")
            .body(claude_document().to_string().into_bytes())
            .unwrap())
    });
    let h = harness(declared);
    assert_eq!(page(&h, CLAUDE, CLAUDE_CALLBACK).await.status, 400, "a declared length over the cap is refused");
}

/// A server that never answers.
struct Silent;

#[async_trait(?Send)]
impl HttpClient for Silent {
    async fn send(&self, _request: HttpRequest) -> Result<HttpResponse, HttpError> {
        std::future::pending().await
    }

    /// Stands in for the Worker's public-only fetch, as `StubHttp` does.
    fn public_only(&self) -> bool {
        true
    }
}

#[tokio::test]
async fn a_document_that_does_not_arrive_within_10_seconds_is_refused() {
    let h = Harness::with(&[], Rc::new(Silent));
    let reply = page(&h, CLAUDE, CLAUDE_CALLBACK).await;
    assert_eq!(reply.status, 400);
    assert_eq!(h.clock.sleeps(), [10_000], "gave up after exactly 10 s");
}

#[tokio::test]
async fn a_document_whose_client_id_differs_from_its_url_is_refused() {
    let mut document = claude_document();
    document["client_id"] = json!("https://claude.ai/oauth/other");
    let h = harness(serve(document.to_string(), "max-age=3600"));
    assert_eq!(page(&h, CLAUDE, CLAUDE_CALLBACK).await.status, 400);
    assert!(h.cache_kv.keys().is_empty(), "refused documents are not cached");
}

#[tokio::test]
async fn private_and_loopback_addresses_are_never_fetched() {
    let http = StubHttp::strict();
    let h = harness(http.clone());
    for id in [
        "https://127.0.0.1/client.json",
        "https://[::1]/client.json",
        "https://169.254.169.254/latest/meta-data",
        "https://192.168.1.10/c.json",
        "https://localhost/c.json",
        "https://0x7f000001/c.json",
    ] {
        let reply = page(&h, id, CLAUDE_CALLBACK).await;
        assert_eq!(reply.status, 400, "{id}");
    }
    assert!(http.requests().is_empty(), "nothing was fetched");
    let token = h
        .token(&[("grant_type", "refresh_token"), ("refresh_token", "a:b:c"), ("client_id", "https://10.0.0.1/c.json")])
        .await;
    assert_eq!((token.status, token.error()), (401, "invalid_client"));
}

#[tokio::test]
async fn documents_that_carry_secrets_or_private_keys_are_refused() {
    let mut with_secret = claude_document();
    with_secret["client_secret"] = json!("s3cret");
    let mut with_private_key = claude_document();
    with_private_key["jwks"] = json!({ "keys": [{ "kty": "EC", "crv": "P-256", "x": "a", "y": "b", "d": "private" }] });
    let mut shared_secret_method = claude_document();
    shared_secret_method["token_endpoint_auth_method"] = json!("client_secret_basic");
    for document in [with_secret, with_private_key, shared_secret_method] {
        let h = harness(serve(document.to_string(), "max-age=3600"));
        assert_eq!(page(&h, CLAUDE, CLAUDE_CALLBACK).await.status, 400, "{document}");
    }
}

#[tokio::test]
async fn errors_and_uncacheable_documents_are_fetched_every_time() {
    let http = serve(claude_document().to_string(), "no-store");
    let h = harness(http.clone());
    assert_eq!(page(&h, CLAUDE, CLAUDE_CALLBACK).await.status, 200);
    assert_eq!(page(&h, CLAUDE, CLAUDE_CALLBACK).await.status, 200);
    assert_eq!(http.requests().len(), 2);
    assert!(h.cache_kv.keys().is_empty());

    let failing =
        StubHttp::new(|_| Ok(http::Response::builder().status(403).body(b"<html>challenge</html>".to_vec()).unwrap()));
    let h = harness(failing.clone());
    assert_eq!(page(&h, CLAUDE, CLAUDE_CALLBACK).await.status, 400);
    assert_eq!(page(&h, CLAUDE, CLAUDE_CALLBACK).await.status, 400);
    assert_eq!(failing.requests().len(), 2, "failures are not cached");
}

#[tokio::test]
async fn a_cached_document_that_no_longer_validates_is_evicted_and_refetched() {
    let http = serve(claude_document().to_string(), "max-age=3600");
    let h = harness(http.clone());
    let key = format!("oauth-cimd:v1:{}", zotero_mcp_server::auth::crypto::sha256_hex(CLAUDE));
    h.cache_kv
        .put(
            &key,
            r#"{"client_id":"https://claude.ai/oauth/mcp-oauth-client-metadata"}"#,
            zotero_mcp_core::platform::KvWrite::ExpiresIn(3600),
        )
        .await
        .unwrap();
    assert_eq!(page(&h, CLAUDE, CLAUDE_CALLBACK).await.status, 200);
    assert_eq!(http.requests().len(), 1, "the bad cache entry was replaced from the origin");
}

#[tokio::test]
async fn a_redirect_not_in_the_document_is_refused() {
    let h = harness(serve(claude_document().to_string(), "max-age=3600"));
    let reply = page(&h, CLAUDE, "https://evil.example/callback").await;
    assert_eq!(reply.status, 400);
    assert_eq!(reply.header("location"), "");
}

#[tokio::test]
async fn re_authorizing_a_document_client_replaces_only_the_grant_for_that_redirect() {
    let mut document = claude_document();
    document["redirect_uris"] = json!([CLAUDE_CALLBACK, "https://claude.com/api/mcp/auth_callback"]);
    let h = harness(serve(document.to_string(), "max-age=3600"));
    for redirect in [CLAUDE_CALLBACK, "https://claude.com/api/mcp/auth_callback", CLAUDE_CALLBACK] {
        let code = h.code(&h.authorize_path(CLAUDE, redirect, &[]), &["zotero:read"]).await;
        let reply = h
            .token(&[
                ("grant_type", "authorization_code"),
                ("code", &code),
                ("client_id", CLAUDE),
                ("code_verifier", VERIFIER),
                ("redirect_uri", redirect),
            ])
            .await;
        assert_eq!(reply.status, 200, "{}", reply.text);
    }
    assert_eq!(h.grant_keys().await.len(), 2, "one grant per installation (redirect URI) of a shared client id");
}
