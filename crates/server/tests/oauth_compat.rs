//! Byte compatibility with `@cloudflare/workers-oauth-provider` 0.10.3, the OAuth server of the TypeScript
//! project: what it stored in `OAUTH_KV` works here, and what this server stores works there. The real npm
//! package runs under Node (tests/oauth_compat_node/harness.mjs) over a Map-backed KV; the two sides exchange
//! KV dumps and tokens as JSON.
//!
//! Needs `node` and `npm ci` (the package is a devDependency). Set ZOTERO_MCP_SKIP_NODE_TESTS=1 to skip on a
//! machine without them; CI runs them, and `make unit` fails on the skip unless tests/expected-skips.txt declares it.

mod oauth_support;
#[path = "../../../tests/support/skip.rs"]
mod skip;

use std::io::Write;
use std::process::{Command, Stdio};

use base64::Engine as _;
use oauth_support::*;
use serde_json::{json, Value};
use zotero_mcp_core::platform::{KvStore, KvWrite};

/// Whether the TypeScript side can run; `test` (the calling test's name) is recorded as skipped when it cannot.
fn node_available(test: &str) -> bool {
    if std::env::var("ZOTERO_MCP_SKIP_NODE_TESTS").as_deref() == Ok("1") {
        skip::skip(test, "ZOTERO_MCP_SKIP_NODE_TESTS=1");
        return false;
    }
    let package =
        concat!(env!("CARGO_MANIFEST_DIR"), "/../../node_modules/@cloudflare/workers-oauth-provider/package.json");
    assert!(
        std::path::Path::new(package).exists(),
        "@cloudflare/workers-oauth-provider is not installed: run `npm ci` (or set ZOTERO_MCP_SKIP_NODE_TESTS=1)"
    );
    true
}

/// Runs the TypeScript provider harness in `mode` with `input` on stdin; returns its JSON output.
fn typescript(mode: &str, input: &Value) -> Value {
    let mut child = Command::new("node")
        .arg("tests/oauth_compat_node/harness.mjs")
        .arg(mode)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("node is on PATH");
    child.stdin.take().expect("stdin").write_all(input.to_string().as_bytes()).expect("write stdin");
    let output = child.wait_with_output().expect("node ran");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "harness {mode} failed: {stderr}");
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| panic!("harness {mode} printed no JSON ({e}): {stderr}"))
}

/// A harness whose `OAUTH_KV` holds exactly this dump.
async fn load(dump: &Value) -> Harness {
    let h = Harness::new();
    for entry in dump.as_array().expect("kv dump") {
        let lifetime = match entry["expiration"].as_u64() {
            Some(at) => KvWrite::ExpiresAt(at),
            None => KvWrite::Forever,
        };
        h.oauth_kv.put(entry["key"].as_str().unwrap(), entry["value"].as_str().unwrap(), lifetime).await.unwrap();
    }
    h
}

async fn export(h: &Harness) -> Value {
    let page = h.oauth_kv.list("", None, 1000).await.unwrap();
    let mut entries = Vec::new();
    for key in page.keys {
        let value = h.oauth_kv.get(&key.name).await.unwrap().unwrap();
        entries.push(json!({ "key": key.name, "value": value, "expiration": key.expiration }));
    }
    Value::Array(entries)
}

fn basic(id: &str, secret: &str) -> String {
    format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(format!("{id}:{secret}")))
}

#[tokio::test]
async fn grants_and_tokens_minted_by_the_typescript_provider_work_here() {
    if !node_available("grants_and_tokens_minted_by_the_typescript_provider_work_here") {
        return;
    }
    let minted = typescript("mint", &json!({ "nowMs": NOW_MS }));
    let public = &minted["public"];
    let str_of = |v: &Value| v.as_str().unwrap().to_owned();

    // The access token opens /mcp with the props the TypeScript handler encrypted (read and write).
    let h = load(&minted["kv"]).await;
    let access = str_of(&public["accessToken"]);
    let wrote = h.mcp_call(MCP_URL, &access, "fixture_write", json!({ "note": "x" })).await;
    assert_eq!(wrote.status, 200, "{}", wrote.text);
    assert_eq!(wrote.json["result"]["structuredContent"]["written"], true, "{}", wrote.text);
    assert_eq!(
        h.mcp_call("https://other.example/mcp", &access, "fixture_echo", json!({ "text": "x" })).await.status,
        401,
        "its audience holds"
    );

    // Its refresh token rotates here, and the new access token works.
    let refreshed = h.refresh(&str_of(&public["clientId"]), &str_of(&public["refreshToken"])).await;
    assert_eq!(refreshed.status, 200, "{}", refreshed.text);
    assert!(h.token_works(refreshed.json["access_token"].as_str().unwrap()).await);

    // Its tokens carry no tag, and its old ones are still recognised once this server has rotated the grant:
    // the current token became the previous one (one retry within the minute), its previous one is retired.
    let next = refreshed.json["refresh_token"].as_str().unwrap().to_owned();
    let after = h.refresh(&str_of(&public["clientId"]), &next).await;
    assert_eq!(after.status, 200, "the token issued here refreshes too: {}", after.text);
    let replay = h.refresh(&str_of(&public["clientId"]), &str_of(&public["previousRefreshToken"])).await;
    assert_eq!((replay.status, replay.error()), (400, "invalid_grant"), "{}", replay.text);
    let after_access = after.json["access_token"].as_str().unwrap();
    assert!(!h.token_works(after_access).await, "its retired token revokes the grant");

    // Its previous refresh token gets no retry: nothing in the record says when it was replaced, and a retry is
    // allowed only within a minute of the rotation. It is the grant's, so it revokes the grant.
    let h = load(&minted["kv"]).await;
    let previous = h.refresh(&str_of(&public["clientId"]), &str_of(&public["previousRefreshToken"])).await;
    assert_eq!((previous.status, previous.error()), (400, "invalid_grant"), "{}", previous.text);
    assert!(previous.json["error_description"].as_str().unwrap().contains("revoked"), "{}", previous.text);
    assert!(!h.token_works(&access).await);

    // A confidential client authenticates with the secret whose hash it stored.
    let confidential = &minted["confidential"];
    let h = load(&minted["kv"]).await;
    let authorization = basic(&str_of(&confidential["clientId"]), &str_of(&confidential["clientSecret"]));
    let reply = h
        .token_with(
            &[("grant_type", "refresh_token"), ("refresh_token", confidential["refreshToken"].as_str().unwrap())],
            &[("authorization", &authorization)],
        )
        .await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert!(h.token_works(confidential["accessToken"].as_str().unwrap()).await);

    // A code it issued but that was not yet exchanged is exchanged here, PKCE and all.
    let pending = &minted["pending"];
    let h = load(&minted["kv"]).await;
    let reply = h
        .token(&[
            ("grant_type", "authorization_code"),
            ("code", pending["code"].as_str().unwrap()),
            ("client_id", pending["clientId"].as_str().unwrap()),
            ("code_verifier", pending["verifier"].as_str().unwrap()),
            ("redirect_uri", REDIRECT),
        ])
        .await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(reply.json["scope"], "zotero:read zotero:write");
    assert!(h.token_works(reply.json["access_token"].as_str().unwrap()).await);

    // Revoking its refresh token here cascades to its access tokens.
    let h = load(&minted["kv"]).await;
    assert_eq!(
        h.token(&[
            ("token", public["refreshToken"].as_str().unwrap()),
            ("client_id", public["clientId"].as_str().unwrap())
        ])
        .await
        .status,
        200
    );
    assert!(!h.token_works(&access).await);
}

#[tokio::test]
async fn grants_and_tokens_minted_here_work_with_the_typescript_provider() {
    if !node_available("grants_and_tokens_minted_here_work_with_the_typescript_provider") {
        return;
    }
    let h = Harness::new();
    let first = h.flow(&["zotero:read", "zotero:write"]).await;
    let second = h.refresh(&first.client_id, &first.refresh).await;
    assert_eq!(second.status, 200);
    // The grant carries the rotation state the TypeScript provider does not know: the key its refresh tokens are
    // tagged with and the previous token's retry allowance.
    let third = h.refresh(&first.client_id, second.json["refresh_token"].as_str().unwrap()).await;
    assert_eq!(third.status, 200);
    let grant_key = h.grant_keys().await.remove(0);
    let grant: Value = serde_json::from_str(&h.oauth_kv.get(&grant_key).await.unwrap().unwrap()).unwrap();
    let family_key = grant["refreshTokenFamilyKey"].clone();
    assert!(family_key.is_string() && grant["previousRefreshTokenRetry"].is_object(), "{grant}");
    let (conf_id, conf_secret) = h.confidential_client(REDIRECT).await;
    let conf_code = h.code(&h.authorize_path(&conf_id, REDIRECT, &[]), &["zotero:read"]).await;
    let conf = h
        .token_with(
            &[
                ("grant_type", "authorization_code"),
                ("code", &conf_code),
                ("code_verifier", VERIFIER),
                ("redirect_uri", REDIRECT),
            ],
            &[("authorization", &basic(&conf_id, &conf_secret))],
        )
        .await;
    assert_eq!(conf.status, 200, "{}", conf.text);
    let pending_client = h.public_client(REDIRECT).await;
    let pending_code =
        h.code(&h.authorize_path(&pending_client, REDIRECT, &[]), &["zotero:read", "zotero:write"]).await;

    let input = json!({
        "nowMs": NOW_MS,
        "kv": export(&h).await,
        "public": {
            "clientId": first.client_id,
            "accessToken": third.json["access_token"],
            "refreshToken": third.json["refresh_token"],
            "previousRefreshToken": second.json["refresh_token"],
        },
        "confidential": { "clientId": conf_id, "clientSecret": conf_secret, "accessToken": conf.json["access_token"], "refreshToken": conf.json["refresh_token"] },
        "pending": { "clientId": pending_client, "code": pending_code, "verifier": VERIFIER },
    });
    let results = &typescript("accept", &input)["results"];

    assert_eq!(results["mcp"]["status"], 200, "{results}");
    assert_eq!(
        results["mcp"]["body"]["props"],
        json!({ "userId": "owner", "scopes": ["zotero:read", "zotero:write"] }),
        "it decrypts our props"
    );
    assert_eq!(results["unwrapped"]["audience"], MCP_URL);
    assert_eq!(results["wrongAudience"]["status"], 401);
    assert_eq!(results["refresh"]["status"], 200, "{results}");
    assert_eq!(results["refreshedMcp"]["status"], 200, "{results}");
    assert_eq!(
        results["grantAfterRefresh"]["refreshTokenFamilyKey"], family_key,
        "it keeps the fields it does not know"
    );
    assert_eq!(results["previousRefresh"]["status"], 200, "{results}");
    assert_eq!(results["confidentialRefresh"]["status"], 200, "{results}");
    assert_eq!(results["confidentialMcp"]["status"], 200, "{results}");
    assert_eq!(results["pendingExchange"]["status"], 200, "{results}");
    assert_eq!(results["pendingExchange"]["scope"], "zotero:read zotero:write");
    assert_eq!(results["pendingMcp"]["status"], 200, "{results}");
    assert_eq!(results["afterRevocation"]["status"], 401, "{results}");

    // Back here after the TypeScript provider rotated the grant: its (untagged) refresh token refreshes, and a
    // token this server issued before still revokes the grant, because the family key survived.
    let h = load(&results["kvAfterRefresh"]).await;
    let theirs = results["refreshedRefreshToken"].as_str().unwrap();
    let reply = h.refresh(&first.client_id, theirs).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    let replay = h.refresh(&first.client_id, &first.refresh).await;
    assert_eq!((replay.status, replay.error()), (400, "invalid_grant"), "{}", replay.text);
    assert!(!h.token_works(reply.json["access_token"].as_str().unwrap()).await, "the grant is revoked");
}
