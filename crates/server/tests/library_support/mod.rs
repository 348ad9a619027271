//! Calling the library tools in tests: through the full JSON-RPC path, or the registry with a chosen grant
//! (shared by tools_library.rs and tools_resources.rs).
#![allow(dead_code)]

use std::rc::Rc;

use serde_json::{json, Value};
use zotero_mcp_server::auth::Grant;
use zotero_mcp_server::call::Session;
use zotero_sim::{LibraryRef, Simulator};

use crate::common::*;

pub const LIB: LibraryRef = LibraryRef::User(DEMO_USER);

/// Calls a tool through the full JSON-RPC path (read-only grant, as every request gets without OAuth).
pub async fn rpc(sim: &Rc<Simulator>, name: &str, arguments: Value) -> Value {
    let reply =
        send(&app_with_sim(sim.clone()), modern("tools/call", json!({ "name": name, "arguments": arguments }))).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    reply.result().clone()
}

/// Calls a tool with a chosen grant.
pub async fn call_as(sim: &Rc<Simulator>, grant: Grant, name: &str, arguments: Value) -> Value {
    let app = app_with_sim(sim.clone());
    let ctx = Session::new(grant, app.config.clone(), app.platform.clone());
    zotero_mcp_server::tools::registry(&app.config).call_tool(&ctx, name, arguments).await.expect("tool exists")
}

pub async fn write(sim: &Rc<Simulator>, name: &str, arguments: Value) -> Value {
    call_as(sim, Grant::read_write("owner"), name, arguments).await
}

pub fn keys(list: &Value) -> Vec<String> {
    list.as_array().unwrap().iter().map(|i| i["key"].as_str().unwrap().to_owned()).collect()
}

pub fn writes(sim: &Simulator) -> usize {
    sim.requests().iter().filter(|r| r.method != "GET").count()
}
