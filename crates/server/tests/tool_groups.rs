//! Only the tools a request can use are listed, through the router as the Worker serves it: a read-only
//! grant is not shown the tools that only write, and `TOOL_GROUPS` (a Worker variable, read by
//! `Config::from_lookup` from the Worker's env as from the native settings) offers an operator's choice of
//! groups. A tool that is not listed answers a call as clearly as a listed one the grant may not use.

mod common;

use common::*;
use serde_json::{json, Value};
use zotero_mcp_server::app::App;
use zotero_mcp_server::config::{Config, ToolGroup};
use zotero_mcp_server::mcp::{Access, ToolSpec};

/// The declared catalogue (a deployment's: no test fixtures), in `tools/list` order, as a client without MCP Apps
/// is shown it (`tests/apps.rs`).
fn declared() -> Vec<ToolSpec> {
    zotero_mcp_server::tools::registry(&Config::from_lookup(|_| None)).model_tool_specs()
}

fn production(extra: &[(&str, &str)]) -> App {
    let mut vars = vec![("ENABLE_TEST_FIXTURES", "0")];
    vars.extend_from_slice(extra);
    app_with(&vars)
}

async fn listed(app: &App, writer: bool) -> Vec<String> {
    let request = modern("tools/list", json!({}));
    let reply = send(app, if writer { as_writer(request) } else { request }).await;
    let tools = reply.result()["tools"].as_array().unwrap_or_else(|| panic!("no tools: {}", reply.text)).clone();
    tools.iter().map(|t| t["name"].as_str().unwrap_or_default().to_owned()).collect()
}

async fn call(app: &App, writer: bool, name: &str, arguments: Value) -> Value {
    let request = modern("tools/call", json!({ "name": name, "arguments": arguments }));
    let reply = send(app, if writer { as_writer(request) } else { request }).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    reply.result().clone()
}

#[tokio::test]
async fn a_read_only_grant_is_not_shown_the_tools_that_only_write() {
    let app = production(&[]);
    let declared = declared();
    let all = listed(&app, true).await;
    assert_eq!(all, declared.iter().map(|s| s.name).collect::<Vec<_>>(), "a writer is shown every tool");
    // Those declared `ToolSpec::write` (creating, updating, deleting, uploading, importing, re-indexing, undoing)
    // are left out; mixed tools keep their reading modes, so they stay.
    let reading = listed(&app, false).await;
    let expected: Vec<&str> = declared.iter().filter(|s| s.access != Access::Write).map(|s| s.name).collect();
    assert_eq!(reading, expected, "the tools that do not only write, in catalogue order");
    assert!(declared.iter().any(|s| s.access == Access::Write) && declared.iter().any(|s| s.access == Access::Mixed));
}

#[tokio::test]
async fn an_unlisted_write_tool_answers_the_missing_scope_error() {
    let app = production(&[]);
    let refused = call(&app, false, "zotero_create_items", json!({ "items": [{ "itemType": "book" }] })).await;
    let message = error_text(&refused);
    assert!(message.contains("zotero:write") && message.contains("Nothing was changed"), "{message}");
}

#[tokio::test]
async fn tool_groups_choose_what_a_deployment_lists() {
    let app = production(&[("TOOL_GROUPS", "read,files")]);
    let names = listed(&app, true).await;
    for present in ["zotero_search", "zotero_notes", "zotero_read_attachment", "zotero_rename_attachments", "fetch"] {
        assert!(names.contains(&present.to_owned()), "{present}: {names:?}");
    }
    // Research and admin are left out; and without `write` nothing that only writes, whatever the grant.
    for absent in ["zotero_retrieve", "zotero_semantic_search", "zotero_reindex", "zotero_find_duplicates"] {
        assert!(!names.contains(&absent.to_owned()), "{absent}: {names:?}");
    }
    let offered: Vec<&str> = declared()
        .into_iter()
        .filter(|s| matches!(s.group, ToolGroup::Read | ToolGroup::Files) && s.access != Access::Write)
        .map(|s| s.name)
        .collect();
    assert_eq!(names, offered, "the tools of the offered groups that do not only write");
    assert_eq!(names, listed(&app, false).await, "a read-only deployment lists the same to every grant");
}

#[tokio::test]
async fn a_tool_outside_the_groups_is_refused_by_name_before_anything_runs() {
    let app = production(&[("TOOL_GROUPS", "read")]);
    let refused = call(&app, true, "zotero_retrieve", json!({ "nonsense": true })).await;
    let message = error_text(&refused);
    assert!(message.contains("zotero_retrieve") && message.contains("`research`"), "{message}");
    assert!(message.contains("TOOL_GROUPS") && message.contains("Nothing was done"), "{message}");
}

#[tokio::test]
async fn without_the_write_group_no_tool_writes_even_for_a_writing_grant() {
    let app = production(&[("TOOL_GROUPS", "read, files, research, admin")]);
    let refused = call(&app, true, "zotero_create_items", json!({ "items": [{ "itemType": "book" }] })).await;
    let message = error_text(&refused);
    assert!(message.contains("`write`") && message.contains("TOOL_GROUPS"), "{message}");
    // A writing tool of an offered group: the server is read-only.
    let refused = call(&app, true, "zotero_put_attachment", json!({ "sourceUrl": "https://example.org/a.pdf" })).await;
    let message = error_text(&refused);
    assert!(message.contains("read-only") && message.contains("TOOL_GROUPS"), "{message}");
    assert!(message.contains("Nothing was changed"), "{message}");
    // A mixed tool keeps its reading modes and refuses its writing ones, before any request.
    let refused = call(&app, true, "zotero_notes", json!({ "action": "create", "note": "x" })).await;
    let message = error_text(&refused);
    assert!(message.contains("TOOL_GROUPS") && message.contains("Nothing was changed"), "{message}");
}

#[tokio::test]
async fn the_listing_is_serialized_once_per_view() {
    let app = production(&[]);
    let registry = zotero_mcp_server::tools::registry(&app.config);
    let view = |writes| zotero_mcp_server::config::ToolView { groups: app.config.tool_groups, writes, apps: false };
    let (reading, writing) = (registry.tools_json(view(false)), registry.tools_json(view(true)));
    assert!(std::rc::Rc::ptr_eq(&reading, &registry.tools_json(view(false))));
    assert!(std::rc::Rc::ptr_eq(&writing, &registry.tools_json(view(true))));
    assert!(reading.len() < writing.len());
}

#[tokio::test]
async fn health_names_a_tool_groups_typo() {
    let health = || http::Request::get("https://zotero.example/health").body(Vec::new()).unwrap();
    let typo = send(&production(&[("TOOL_GROUPS", "read,wirte")]), health()).await;
    let warnings = typo.body["warnings"].to_string();
    assert!(warnings.contains("TOOL_GROUPS names wirte") && warnings.contains("those of read"), "{}", typo.text);
    let fine = send(&production(&[("TOOL_GROUPS", "read,write")]), health()).await;
    assert!(fine.body.get("warnings").is_none(), "{}", fine.text);
}
