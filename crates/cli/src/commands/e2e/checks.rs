//! The read-only steps: the OAuth metadata documents, both protocol eras, the catalogue, a search, an item, the
//! collection tree, semantic search and `/health`. Each reads only; none needs the write scope.

use serde_json::{json, Value};
use url::Url;
use zotero_mcp_server::tools::semantic::UNBOUND;

use super::catalogue;
use super::report::{Failure, Report};
use crate::commands::mcp_client::{Client, ToolResult};

/// The 2025-era revision `initialize` is checked with: the one most deployed clients (claude.ai) speak.
pub const LEGACY_VERSION: &str = "2025-06-18";

/// What to do when the server cannot be reached or answers the protocol wrongly.
const FIX_PROTOCOL: &str = "is the URL the server's address, and is the deployment running? `wrangler tail` (Worker) \
                            or the server's log shows why it answers so";

/// Calls a tool; an `isError` result or a failed request is a [`Failure`] with `fix` as its advice.
pub fn call(client: &mut Client, tool: &str, arguments: Value, fix: &str) -> Result<ToolResult, Failure> {
    let arguments_shown = one_line(&arguments.to_string());
    let result = client.call_tool(tool, arguments).map_err(|e| Failure::new(e, FIX_PROTOCOL))?;
    if result.is_error {
        return Err(Failure::new(format!("{tool}: {}", one_line(&result.text)), fix));
    }
    match &result.schema_mismatch {
        Some(mismatch) => Err(outside_schema(tool, mismatch, &arguments_shown)),
        None => Ok(result),
    }
}

/// The failure of an answer a validating client (the official SDKs) would reject.
fn outside_schema(tool: &str, mismatch: &str, arguments: &str) -> Failure {
    Failure::new(
        format!("{tool} answered outside its listed outputSchema ({mismatch}); arguments: {arguments}"),
        "validating clients (the official SDKs) reject this answer: the deployment's schemas and answers disagree, \
         so report it with this line",
    )
}

/// A tool result's structuredContent, or a failure saying it is missing.
pub fn structured(tool: &str, result: ToolResult) -> Result<Value, Failure> {
    result.structured.ok_or_else(|| {
        Failure::new(
            format!("{tool} answered without structuredContent: {}", one_line(&result.text)),
            "the deployment is older than this command: deploy the current build",
        )
    })
}

/// Text on one line, at most 300 characters (server messages can be paragraphs).
pub fn one_line(text: &str) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match flat.char_indices().nth(300) {
        Some((cut, _)) => format!("{}…", &flat[..cut]),
        None => flat,
    }
}

/// The metadata documents of the server's OAuth side (RFC 9728 for the MCP URL, then RFC 8414 for the
/// authorization server it names). A server with a static token issues no tokens and serves neither (404).
pub fn metadata(report: &mut Report, client: &Client, static_token: bool) {
    let mcp = client.url().clone();
    let origin = mcp.origin().ascii_serialization();
    let issuer = report.check_with("metadata: protected resource", || {
        let url = format!("{origin}/.well-known/oauth-protected-resource{}", mcp.path());
        let (status, body) = client.get(&url).map_err(|e| Failure::new(e, FIX_PROTOCOL))?;
        if status == 404 && static_token {
            return Ok((None, "not served: the server takes a static token and runs no OAuth".to_owned()));
        }
        let doc = json_document(&url, status, &body)?;
        let resource = doc["resource"].as_str().unwrap_or_default();
        if resource.trim_end_matches('/') != mcp.as_str().trim_end_matches('/') {
            return Err(Failure::new(
                format!("`resource` is `{resource}`, not {mcp}"),
                "the server sees another address than the one used here: check the route and any proxy's Host \
                 header; tokens are bound to this address",
            ));
        }
        let issuer = doc["authorization_servers"][0].as_str().map(str::to_owned).ok_or_else(|| {
            Failure::new("`authorization_servers` is empty", "deploy the current build: it names itself there")
        })?;
        Ok((Some(issuer.clone()), format!("authorization server {issuer}")))
    });
    match issuer {
        Some(Some(issuer)) => {
            report.check("metadata: authorization server", || authorization_server(client, &issuer));
        }
        Some(None) => report.skip("metadata: authorization server", "no OAuth on this server"),
        None => report.skip("metadata: authorization server", "the protected resource document failed"),
    }
}

fn authorization_server(client: &Client, issuer: &str) -> Result<String, Failure> {
    let url = format!("{}/.well-known/oauth-authorization-server", issuer.trim_end_matches('/'));
    let (status, body) = client.get(&url).map_err(|e| Failure::new(e, FIX_PROTOCOL))?;
    let doc = json_document(&url, status, &body)?;
    let fix = "deploy the current build: its metadata names every endpoint";
    if doc["issuer"].as_str() != Some(issuer.trim_end_matches('/')) && doc["issuer"].as_str() != Some(issuer) {
        return Err(Failure::new(format!("`issuer` is {}, not {issuer}", doc["issuer"]), fix));
    }
    for field in ["authorization_endpoint", "token_endpoint", "registration_endpoint"] {
        if doc[field].as_str().is_none_or(str::is_empty) {
            return Err(Failure::new(format!("`{field}` is missing"), fix));
        }
    }
    let pkce = doc["code_challenge_methods_supported"].as_array().is_some_and(|m| m.iter().any(|v| v == "S256"));
    if !pkce {
        return Err(Failure::new("PKCE with S256 is not offered (code_challenge_methods_supported)", fix));
    }
    Ok("endpoints, registration and PKCE S256 listed".to_owned())
}

fn json_document(url: &str, status: u16, body: &[u8]) -> Result<Value, Failure> {
    if status != 200 {
        return Err(Failure::new(
            format!("GET {url}: HTTP {status}: {}", one_line(&String::from_utf8_lossy(body))),
            "a zotero-mcp server serves this document at its origin: check the address (and that nothing in front \
             of the server rewrites /.well-known)",
        ));
    }
    serde_json::from_slice(body).map_err(|e| Failure::new(format!("GET {url}: not JSON ({e})"), FIX_PROTOCOL))
}

/// `server/discover` (2026-07-28) and `initialize` (2025-era); the tool calls after them use 2026-07-28.
pub fn protocol(report: &mut Report, client: &mut Client) -> bool {
    let discovered = report.check("server/discover (2026-07-28)", || {
        let result = client.discover().map_err(|e| Failure::new(e, FIX_PROTOCOL))?;
        let versions: Vec<&str> =
            result["supportedVersions"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
        if !versions.contains(&"2026-07-28") || result["capabilities"]["tools"].is_null() {
            return Err(Failure::new(
                format!("unexpected answer: {}", one_line(&result.to_string())),
                "deploy the current build: it speaks 2026-07-28 and offers tools",
            ));
        }
        let name = result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"].as_str().unwrap_or("?");
        let version = result["_meta"]["io.modelcontextprotocol/serverInfo"]["version"].as_str().unwrap_or("?");
        Ok(format!("{name} {version}, versions {}", versions.join(", ")))
    });
    let initialized = report.check(&format!("initialize ({LEGACY_VERSION})"), || {
        let result = client.initialize_as(LEGACY_VERSION).map_err(|e| Failure::new(e, FIX_PROTOCOL))?;
        let version = result["protocolVersion"].as_str().unwrap_or_default();
        if version != LEGACY_VERSION {
            return Err(Failure::new(
                format!("the server chose {version} for a {LEGACY_VERSION} client"),
                "deploy the current build: it still serves 2025-era clients such as claude.ai",
            ));
        }
        Ok(format!("{} {}", result["serverInfo"]["name"].as_str().unwrap_or("?"), version))
    });
    // The calls after this are made as a current client makes them.
    client.use_modern();
    discovered && initialized
}

/// `tools/list` against this build's catalogue.
pub fn tools_list(report: &mut Report, client: &mut Client) {
    report.check("tools/list", || {
        let listed = client.list_tool_names().map_err(|e| Failure::new(e, FIX_PROTOCOL))?;
        let expected = catalogue::expected();
        let difference = catalogue::compare(&expected, &listed);
        if !difference.is_empty() {
            return Err(Failure::new(
                difference.describe(),
                "the deployment runs another version than this zotero-mcp: deploy this build (or run the \
                 zotero-mcp built from what is deployed)",
            ));
        }
        let shown: Vec<String> =
            expected.iter().map(|e| e.name.clone()).filter(|n| !difference.left_out.contains(n)).collect();
        let mut detail =
            format!("{} tools, {} … {}", shown.len(), first(&shown), shown.last().map_or("", String::as_str));
        if !difference.left_out.is_empty() {
            detail.push_str(&format!(
                " ({} not listed to this token or deployment: {})",
                difference.left_out.len(),
                difference.left_out.join(", ")
            ));
        }
        Ok(detail)
    });
}

fn first(names: &[String]) -> &str {
    names.first().map_or("", String::as_str)
}

const FIX_ZOTERO: &str = "the server could not read the library: /health and the message say whether ZOTERO_API_KEY \
                          (or ZOTERO_LIBRARY_ID/TYPE) is wrong or Zotero is unreachable";

/// A search, and a read of its first hit.
pub fn search_and_read(report: &mut Report, client: &mut Client, query: Option<&str>) {
    let hit = report.check_with("search", || {
        let mut arguments = json!({ "limit": 5 });
        if let Some(query) = query {
            arguments["query"] = json!(query);
        }
        let found = structured("zotero_search", call(client, "zotero_search", arguments, FIX_ZOTERO)?)?;
        let items = found["items"].as_array().cloned().unwrap_or_default();
        let first = items.first().and_then(|i| i["key"].as_str()).map(str::to_owned);
        let total = found["totalResults"].as_u64().map(|t| format!(" of {t}")).unwrap_or_default();
        let what = query.map(|q| format!(" for “{q}”")).unwrap_or_else(|| " (newest items)".to_owned());
        Ok((first, format!("{}{total} hits{what}", items.len())))
    });
    match hit {
        Some(Some(key)) => {
            report.check("item read", || {
                let read = call(client, "zotero_get_item", json!({ "key": key }), FIX_ZOTERO)?;
                let item = structured("zotero_get_item", read)?;
                let got = item["item"]["key"].as_str().unwrap_or_default();
                if got != key {
                    return Err(Failure::new(format!("asked for {key}, got `{got}`"), FIX_PROTOCOL));
                }
                let title = item["item"]["title"].as_str().unwrap_or("(untitled)");
                Ok(format!("{key}: {}", one_line(title).chars().take(60).collect::<String>()))
            });
        }
        Some(None) => report.skip("item read", "the search found nothing to read (an empty library?)"),
        None => report.skip("item read", "the search failed"),
    }
}

/// The collection tree.
pub fn collections(report: &mut Report, client: &mut Client) {
    report.check("collections", || {
        let listed = call(client, "zotero_list_collections", json!({}), FIX_ZOTERO)?;
        let listed = structured("zotero_list_collections", listed)?;
        let all = listed["collections"].as_array().map_or(0, Vec::len);
        let top = listed["collections"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|c| c["parentCollection"].is_null() || c["parentCollection"] == json!(false))
            .count();
        Ok(format!("{all} collections, {top} at the top"))
    });
}

/// Semantic search: an answer, or exactly the answer of a deployment without AI Search.
pub fn semantic(report: &mut Report, client: &mut Client) {
    report.check("semantic search", || {
        let arguments = json!({ "query": "research methods", "limit": 3 });
        let arguments_shown = arguments.to_string();
        let result =
            client.call_tool("zotero_semantic_search", arguments).map_err(|e| Failure::new(e, FIX_PROTOCOL))?;
        if result.is_error {
            if result.text.trim() == UNBOUND {
                return Ok("AI Search is not bound to this deployment (no AI_SEARCH binding): answered as such".into());
            }
            return Err(Failure::new(
                format!("zotero_semantic_search: {}", one_line(&result.text)),
                "AI Search is bound but failed: check the instance in the Cloudflare dashboard; `zotero-mcp reindex` \
                 fills an empty index",
            ));
        }
        if let Some(mismatch) = &result.schema_mismatch {
            return Err(outside_schema("zotero_semantic_search", mismatch, &arguments_shown));
        }
        let found = structured("zotero_semantic_search", result)?;
        let note = found["note"].as_str().map(|n| format!(" ({})", one_line(n))).unwrap_or_default();
        Ok(format!("{} results{note}", found["total"].as_u64().unwrap_or(0)))
    });
}

/// `/health`: usable or not, and what it says about each part.
pub fn health(report: &mut Report, client: &Client) {
    let mcp: &Url = client.url();
    let url = format!("{}/health", mcp.origin().ascii_serialization());
    report.check("/health", || {
        let (status, body) = client.get(&url).map_err(|e| Failure::new(e, FIX_PROTOCOL))?;
        let doc: Value = serde_json::from_slice(&body).map_err(|e| {
            Failure::new(format!("GET {url}: HTTP {status}, not JSON ({e})"), "deploy the current build")
        })?;
        let (summary, fixes) = describe_health(&doc);
        if doc["status"] != "ok" || status != 200 {
            return Err(Failure::new(
                format!("{} — {summary}", doc["status"].as_str().unwrap_or("?")),
                fixes.join(" "),
            ));
        }
        Ok(summary)
    });
}

/// One line over `/health`'s checks (Zotero, the password, the file store, AI Search when reported), and the fixes of
/// those not ok.
pub fn describe_health(doc: &Value) -> (String, Vec<String>) {
    let checks: Vec<&Value> = doc["checks"].as_array().map(|c| c.iter().collect()).unwrap_or_default();
    fn label(name: &str) -> &str {
        match name {
            "zotero_api_key" => "Zotero key",
            "auth_password" => "password",
            "webdav" => "WebDAV",
            "zotero_storage" => "Zotero Storage",
            "files" => "files",
            "ai_search" => "AI Search",
            other => other,
        }
    }
    let mut parts: Vec<String> = checks
        .iter()
        .map(|c| {
            let name = c["name"].as_str().unwrap_or("?");
            let state = match (c["ok"].as_bool(), c["required"].as_bool()) {
                (Some(true), _) => "ok",
                (_, Some(true)) => "MISSING",
                _ => "off",
            };
            format!("{}: {state}", label(name))
        })
        .collect();
    if !checks.iter().any(|c| c["name"] == "ai_search") {
        parts.push("AI Search: not reported by /health (see semantic search)".to_owned());
    }
    let fixes = checks
        .iter()
        .filter(|c| c["ok"] == json!(false))
        .filter_map(|c| c["fix"].as_str().map(|f| format!("{}: {f}", label(c["name"].as_str().unwrap_or("?")))))
        .collect();
    let version =
        doc["version"].as_str().map(|v| format!("{} {v}; ", doc["name"].as_str().unwrap_or(""))).unwrap_or_default();
    (format!("{version}{}", parts.join(", ")), fixes)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stand-in MCP server on loopback that lists `zotero_changes` with its published output schema and
    /// answers every call with `answer`: what a deployment whose answers and schemas disagree looks like.
    fn wrong_server(answer: Value) -> (url::Url, std::thread::JoinHandle<()>) {
        use std::io::{BufRead, BufReader, Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a loopback port");
        let url =
            zotero_mcp_core::net::parse_url(&format!("http://{}/mcp", listener.local_addr().expect("its address")))
                .expect("a URL");
        let published = zotero_mcp_server::mcp::published::Published::load();
        let schema = published.output_schema("zotero_changes").cloned().expect("a published output schema");
        let server = std::thread::spawn(move || {
            // tools/list, then tools/call: one connection each (the answers close them).
            for _ in 0..2 {
                let Ok((stream, _)) = listener.accept() else { return };
                let mut reader = BufReader::new(stream);
                let mut length = 0;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line.trim().is_empty() {
                        break;
                    }
                    if let Some((name, value)) = line.split_once(':') {
                        if name.eq_ignore_ascii_case("content-length") {
                            length = value.trim().parse().unwrap_or(0);
                        }
                    }
                }
                let mut body = vec![0; length];
                reader.read_exact(&mut body).expect("the request body");
                let request: Value = serde_json::from_slice(&body).expect("a JSON-RPC request");
                let result = match request["method"].as_str() {
                    Some("tools/list") => json!({ "tools": [{
                        "name": "zotero_changes", "inputSchema": { "type": "object" }, "outputSchema": schema,
                    }] }),
                    _ => json!({ "content": [{ "type": "text", "text": "changes" }], "structuredContent": answer }),
                };
                let reply = json!({ "jsonrpc": "2.0", "id": request["id"], "result": result }).to_string();
                let mut stream = reader.into_inner();
                let head = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                    reply.len()
                );
                stream.write_all(head.as_bytes()).and_then(|()| stream.write_all(reply.as_bytes())).ok();
            }
        });
        (url, server)
    }

    #[test]
    fn an_answer_outside_the_listed_output_schema_fails_the_step() {
        let wrong = json!({ "library": "users/1", "changed": { "items": [{ "key": "ABCD2345" }] }, "truncated": "no" });
        let (url, server) = wrong_server(wrong);
        let auth = crate::commands::mcp_client::Auth::Token("test".into());
        let mut client = Client::new(url, auth, std::time::Duration::from_secs(10), 0, "e2e test").expect("a client");
        assert_eq!(client.list_tool_names().expect("tools/list"), ["zotero_changes"]);
        let failure = match call(&mut client, "zotero_changes", json!({ "limit": 2 }), "fix") {
            Ok(result) => panic!("a wrong answer passed: {:?}", result.structured),
            Err(failure) => failure,
        };
        assert!(failure.detail.contains("answered outside its listed outputSchema"), "{}", failure.detail);
        for path in ["/truncated", "/changed/items/0"] {
            assert!(failure.detail.contains(&format!("at `{path}`")), "{path}: {}", failure.detail);
        }
        assert!(failure.detail.contains("totals"), "{}", failure.detail);
        assert!(failure.detail.contains("arguments: {\"limit\":2}"), "{}", failure.detail);
        assert!(failure.fix.contains("validating clients"), "{}", failure.fix);
        server.join().expect("the stand-in server");
    }

    #[test]
    fn health_is_summed_up_per_part_with_the_fixes_of_what_is_off() {
        let doc = json!({
            "status": "ok", "name": "zotero-mcp", "version": "0.1.0",
            "checks": [
                { "name": "zotero_api_key", "ok": true, "required": true },
                { "name": "auth_password", "ok": true, "required": true },
                { "name": "webdav", "ok": false, "required": false, "fix": "Set WEBDAV_URL." },
            ],
        });
        let (summary, fixes) = describe_health(&doc);
        assert_eq!(
            summary,
            "zotero-mcp 0.1.0; Zotero key: ok, password: ok, WebDAV: off, AI Search: not reported by /health (see \
             semantic search)"
        );
        assert_eq!(fixes, vec!["WebDAV: Set WEBDAV_URL.".to_owned()]);
        let missing = json!({ "checks": [{ "name": "zotero_api_key", "ok": false, "required": true, "fix": "Set it." },
                                         { "name": "ai_search", "ok": true, "required": false }] });
        let (summary, fixes) = describe_health(&missing);
        assert_eq!(summary, "Zotero key: MISSING, AI Search: ok");
        assert_eq!(fixes, vec!["Zotero key: Set it.".to_owned()]);
    }

    #[test]
    fn long_messages_are_cut_to_one_line() {
        assert_eq!(one_line("a\n  b\tc"), "a b c");
        let long = "x".repeat(400);
        assert_eq!(one_line(&long).chars().count(), 301);
    }
}
