//! Limits on what an unauthenticated caller can make the OAuth server read, store and show: form
//! size and parameter count at the token endpoint, registration size, redirect URI count and length, and
//! client names and other free text.

mod oauth_support;

use oauth_support::*;
use serde_json::{json, Value};
use zotero_mcp_core::platform::KvStore;

/// `x0=&x1=&…`: `count` distinct parameter names (comparing every pair of them took 35 s under wrangler dev).
fn distinct_names(count: usize) -> String {
    (0..count).map(|i| format!("x{i}=")).collect::<Vec<_>>().join("&")
}

async fn post_register(h: &Harness, body: Vec<u8>) -> Reply {
    let request = http::Request::post(format!("{ORIGIN}/oauth/register"))
        .header("content-type", "application/json")
        .body(body)
        .unwrap();
    h.send(request).await
}

fn description(reply: &Reply) -> &str {
    reply.json["error_description"].as_str().unwrap_or("")
}

#[tokio::test]
async fn a_token_request_of_150000_names_is_refused_and_issues_nothing() {
    let h = Harness::new();
    let client = h.public_client(REDIRECT).await;
    let code = h.code(&h.authorize_path(&client, REDIRECT, &[]), &["zotero:read"]).await;
    // A complete, valid code exchange followed by 150,000 distinct names.
    let valid: String = form_urlencoded::Serializer::new(String::new())
        .extend_pairs([
            ("grant_type", "authorization_code"),
            ("code", code.as_str()),
            ("redirect_uri", REDIRECT),
            ("client_id", client.as_str()),
            ("code_verifier", VERIFIER),
            ("resource", MCP_URL),
        ])
        .finish();
    let body = format!("{valid}&{}", distinct_names(150_000));
    let request = http::Request::post(format!("{ORIGIN}/oauth/token"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body.into_bytes())
        .unwrap();
    let reply = h.send(request).await;
    // The form is over the parser's limits, so none of it is read, the client included.
    assert_eq!((reply.status, reply.error()), (400, "invalid_request"), "{}", reply.text);
    assert!(reply.text.contains("at most"), "says what to send: {}", reply.text);
    assert!(reply.json.get("access_token").is_none());
    // Nothing was consumed: the same exchange without the padding still succeeds.
    let exchanged = h.exchange(&client, &code).await;
    assert_eq!(exchanged.status, 200, "{}", exchanged.text);
}

#[tokio::test]
async fn a_token_request_within_the_limits_is_still_served() {
    let h = Harness::new();
    let client = h.public_client(REDIRECT).await;
    let code = h.code(&h.authorize_path(&client, REDIRECT, &[]), &["zotero:read"]).await;
    // Six real parameters and 94 unknown ones: 100 in all, the most accepted. Unknown names are ignored.
    let padding: Vec<(String, String)> = (0..94).map(|i| (format!("ext{i}"), "v".to_owned())).collect();
    let mut form: Vec<(&str, &str)> = vec![
        ("grant_type", "authorization_code"),
        ("code", &code),
        ("redirect_uri", REDIRECT),
        ("client_id", &client),
        ("code_verifier", VERIFIER),
        ("resource", MCP_URL),
    ];
    form.extend(padding.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    assert_eq!(form.len(), 100);
    let reply = h.token(&form).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
}

#[tokio::test]
async fn a_registration_over_16_kib_is_refused_before_its_json_is_read() {
    let h = Harness::new();
    // Not JSON at all: a 400 "Invalid JSON" would mean it was parsed first.
    let reply = post_register(&h, vec![b'['; 16 * 1024 + 1]).await;
    assert_eq!((reply.status, reply.error()), (413, "invalid_request"), "{}", reply.text);
    assert!(description(&reply).contains("at most 16384 bytes"), "{}", reply.text);

    // A declared length over the limit is refused on the header alone.
    let request = http::Request::post(format!("{ORIGIN}/oauth/register"))
        .header("content-type", "application/json")
        .header("content-length", "20000")
        .body(b"{}".to_vec())
        .unwrap();
    assert_eq!(h.send(request).await.status, 413);

    // Exactly 16 KiB (valid metadata padded with JSON whitespace) is accepted.
    let metadata =
        json!({ "client_name": "Padded", "redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none" });
    let mut body = metadata.to_string().into_bytes();
    body.resize(16 * 1024, b' ');
    let reply = post_register(&h, body).await;
    assert_eq!(reply.status, 201, "{}", reply.text);
    assert_eq!(h.oauth_kv.keys().len(), 1, "only the accepted registration was stored");
}

#[tokio::test]
async fn at_most_ten_redirect_uris_of_at_most_2_kib_are_registered() {
    let h = Harness::new();
    let uris = |n: usize| (0..n).map(|i| format!("https://client.example/cb{i}")).collect::<Vec<_>>();
    let ten = h.register(json!({ "redirect_uris": uris(10), "token_endpoint_auth_method": "none" })).await;
    assert_eq!(ten.status, 201, "{}", ten.text);
    assert_eq!(ten.json["redirect_uris"].as_array().map(Vec::len), Some(10));

    let eleven = h.register(json!({ "redirect_uris": uris(11), "token_endpoint_auth_method": "none" })).await;
    assert_eq!((eleven.status, eleven.error()), (400, "invalid_client_metadata"));
    assert!(description(&eleven).contains("redirect_uris: at most 10 are accepted"), "{}", eleven.text);
    assert!(description(&eleven).contains("register the ones this client uses"), "{}", eleven.text);

    let long = format!("https://client.example/{}", "a".repeat(2048));
    let reply = h.register(json!({ "redirect_uris": [long], "token_endpoint_auth_method": "none" })).await;
    assert_eq!((reply.status, reply.error()), (400, "invalid_client_metadata"));
    assert!(description(&reply).contains("at most 2048"), "{}", reply.text);
    assert_eq!(h.oauth_kv.keys().len(), 1, "only the ten-URI client was stored");
}

#[tokio::test]
async fn client_names_are_cleaned_cut_and_cannot_hide_where_approval_goes() {
    let h = Harness::new();
    // Bidi overrides that would reverse the text after them, control characters, and 5,000 more characters.
    let name = format!("Notes\u{202E}\u{2066}App\u{0}\u{7}\n{}", "W".repeat(5_000));
    let reply = h
        .register(json!({ "client_name": name, "redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none" }))
        .await;
    assert_eq!(reply.status, 201, "{}", reply.text);
    let shown = reply.json["client_name"].as_str().unwrap();
    assert_eq!(shown.chars().count(), 100);
    assert!(shown.starts_with("NotesApp WWW") && shown.ends_with('…'), "{shown}");
    let client = reply.json["client_id"].as_str().unwrap();
    let stored = h.oauth_kv.get(&format!("client:{client}")).await.unwrap().unwrap();
    let stored: Value = serde_json::from_str(&stored).unwrap();
    assert_eq!(stored["clientName"], shown, "the response reports the name as stored");

    let page = h.get(&h.authorize_path(client, REDIRECT, &[])).await;
    assert_eq!(page.status, 200, "{}", page.text);
    assert!(page.text.contains(shown), "{}", page.text);
    assert!(!page.text.contains('\u{202E}') && !page.text.contains(&"W".repeat(101)));
    assert!(page.text.contains("Approval goes to"));
    assert!(page.text.contains("client.example"));
}

#[tokio::test]
async fn other_free_text_metadata_is_bounded() {
    let h = Harness::new();
    let long_uri = format!("https://client.example/{}", "a".repeat(2048));
    let contacts = |n: usize| (0..n).map(|i| format!("dev{i}@client.example")).collect::<Vec<_>>();
    let cases = [
        (json!({ "client_uri": long_uri }), "client_uri"),
        (json!({ "logo_uri": long_uri }), "logo_uri"),
        (json!({ "policy_uri": long_uri }), "policy_uri"),
        (json!({ "tos_uri": long_uri }), "tos_uri"),
        (json!({ "contacts": contacts(6) }), "at most 5"),
        (json!({ "contacts": ["x".repeat(2049)] }), "contacts"),
        (json!({ "software_id": "s".repeat(2049) }), "software_id"),
        (json!({ "software_version": "1".repeat(2049) }), "software_version"),
    ];
    for (extra, mentions) in cases {
        let mut metadata = json!({ "redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none" });
        for (k, v) in extra.as_object().unwrap() {
            metadata[k] = v.clone();
        }
        let reply = h.register(metadata.clone()).await;
        assert_eq!((reply.status, reply.error()), (400, "invalid_client_metadata"), "{metadata}");
        assert!(description(&reply).contains(mentions), "{metadata}: {}", reply.text);
    }
    assert!(h.oauth_kv.keys().is_empty(), "nothing was stored");
    let within = h
        .register(json!({
            "redirect_uris": [REDIRECT],
            "token_endpoint_auth_method": "none",
            "client_uri": "https://client.example/",
            "contacts": contacts(5),
            "software_id": "4NRB1-0XZABZI9E6-5SM3R",
            "software_version": "2.1",
        }))
        .await;
    assert_eq!(within.status, 201, "{}", within.text);
}

#[tokio::test]
async fn metadata_documents_follow_the_same_name_and_redirect_rules() {
    const DOC: &str = "https://app.example/oauth/client.json";
    let serve = |document: Value| {
        zotero_mcp_core::testing::StubHttp::new(move |_| {
            Ok(http::Response::builder()
                .status(200)
                .header("content-type", "application/json")
                .body(document.to_string().into_bytes())
                .unwrap())
        })
    };
    let document = |name: &str, redirect: &str| json!({ "client_id": DOC, "client_name": name, "redirect_uris": [redirect], "token_endpoint_auth_method": "none" });

    let h = Harness::with(&[], serve(document("App\u{202E}Evil", "https://app.example/cb")));
    let page = h.get(&h.authorize_path(DOC, "https://app.example/cb", &[])).await;
    assert_eq!(page.status, 200, "{}", page.text);
    assert!(page.text.contains("<strong>AppEvil</strong>"), "{}", page.text);

    let h = Harness::with(&[], serve(document("App", "http://app.example/cb")));
    let page = h.get(&h.authorize_path(DOC, "http://app.example/cb", &[])).await;
    assert_eq!(page.status, 400, "a document with a plain-http callback is not usable: {}", page.text);

    let h = Harness::with(&[], serve(document("\u{202E}\u{2066}", "https://app.example/cb")));
    let page = h.get(&h.authorize_path(DOC, "https://app.example/cb", &[])).await;
    assert_eq!(page.status, 400, "a name of only bidi controls is no name: {}", page.text);
}
