//! End to end against a running Worker: the `oauth2` crate as a real OAuth client. Ignored by default
//! (it needs a server); scripts/e2e.sh runs it against `wrangler dev` with
//! `cargo test -p zotero-mcp-cli --test get_token_flow -- --ignored`, setting MCP_URL and ZOTERO_MCP_PASSWORD.

use oauth2::{RefreshToken, StandardRevocableToken};
use serde_json::json;
use zotero_mcp_cli::get_token::{Credentials, Error, Flow};

fn server() -> (String, Credentials) {
    let url = std::env::var("MCP_URL").expect("MCP_URL: run this through scripts/e2e.sh");
    let password = std::env::var("ZOTERO_MCP_PASSWORD").unwrap_or_else(|_| "test-password".into());
    (url, Credentials { password, username: None })
}

#[test]
#[ignore = "needs a running Worker; scripts/e2e.sh runs it"]
fn registration_authorization_exchange_call_refresh_and_revocation() {
    let (url, credentials) = server();
    let flow = Flow::discover(&url).expect("discovery");
    assert_eq!(flow.mcp_url.as_str(), url);
    let client_id = flow.register("oauth2 crate e2e").expect("registration");

    let approval = flow.authorize(&client_id, &credentials, &["zotero:read", "zotero:write"]).expect("authorization");
    let tokens = flow.exchange(&client_id, approval).expect("code exchange");
    assert_eq!(tokens.scopes, ["zotero:read", "zotero:write"]);
    assert_eq!(tokens.expires_in, Some(3600));

    let (status, body) =
        flow.call_tool(&tokens.access_token, "fixture_write", json!({ "note": "oauth2" })).expect("MCP call");
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["result"]["structuredContent"]["written"], true, "{body}");

    let refresh = tokens.refresh_token.clone().expect("a refresh token");
    let refreshed = flow.refresh(&client_id, &refresh).expect("refresh");
    assert_ne!(refreshed.refresh_token.as_deref(), Some(refresh.as_str()), "rotated");
    assert_eq!(flow.call_tool(&refreshed.access_token, "fixture_echo", json!({ "text": "hi" })).unwrap().0, 200);

    let newest = refreshed.refresh_token.clone().expect("a new refresh token");
    flow.revoke(&client_id, StandardRevocableToken::RefreshToken(RefreshToken::new(newest.clone())))
        .expect("revocation");
    assert_eq!(
        flow.call_tool(&refreshed.access_token, "fixture_echo", json!({ "text": "hi" })).unwrap().0,
        401,
        "revoked with its grant"
    );
    assert!(matches!(flow.refresh(&client_id, &newest), Err(Error::Token(e)) if e.contains("invalid_grant")));
}

#[test]
#[ignore = "needs a running Worker; scripts/e2e.sh runs it"]
fn a_wrong_password_is_reported_as_such() {
    let (url, _) = server();
    let flow = Flow::discover(&url).expect("discovery");
    let client_id = flow.register("oauth2 crate e2e").expect("registration");
    let wrong = Credentials { password: "not-it".into(), username: None };
    assert!(matches!(flow.authorize(&client_id, &wrong, &["zotero:read"]), Err(Error::WrongPassword)));
}

#[test]
#[ignore = "needs a running Worker; scripts/e2e.sh runs it"]
fn the_get_token_command_prints_a_working_read_only_token() {
    let (url, credentials) = server();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_zotero-mcp"))
        .args(["get-token", url.as_str(), "--read-only"])
        .env("ZOTERO_MCP_PASSWORD", &credentials.password)
        .output()
        .expect("get-token runs");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let token = String::from_utf8(output.stdout).unwrap().trim().to_owned();
    let flow = Flow::discover(&url).unwrap();
    assert_eq!(flow.call_tool(&token, "fixture_echo", json!({ "text": "hi" })).unwrap().0, 200);
    let (_, refused) = flow.call_tool(&token, "fixture_write", json!({ "note": "x" })).unwrap();
    assert_eq!(refused["result"]["isError"], true, "read-only: {refused}");
}
