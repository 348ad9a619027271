//! A call cut off part-way (a crash, a Worker request stopped at its CPU or memory limit) still leaves an undo
//! journal entry: kept ahead of the writes while the call runs, it lists what landed, marked incomplete, and
//! can be undone; the next write call on the route names it once, with what is already in the library, so
//! that doing the call again does not write it twice. A call still running is not named.

mod common;

use std::future::Future as _;
use std::pin::pin;
use std::task::{Context, Waker};

use common::*;
use serde_json::{json, Value};
use zotero_mcp_core::testing::ManualClock;
use zotero_mcp_core::zotero::ObjectKind;
use zotero_mcp_server::app::App;
use zotero_mcp_server::auth::Grant;
use zotero_mcp_server::call::{Access, Plan, Session};
use zotero_mcp_server::context::RequestContext;
use zotero_sim::LibraryRef;

const LIB: LibraryRef = LibraryRef::User(DEMO_USER);
const PAPER: &str = "KPDKK5UT";
const LANDED_TITLE: &str = "Landed before the cut";

async fn call(app: &App, tool: &str, arguments: Value) -> Value {
    let session = Session::new(Grant::read_write("owner"), app.config.clone(), app.platform.clone());
    zotero_mcp_server::tools::registry(&app.config).call_tool(&session, tool, arguments).await.expect("tool exists")
}

/// Runs a `zotero_create_items` call that writes one batch and is then stopped before it returns: the tool's
/// future is polled while it waits, then dropped, as a runtime that stops the request does. No record step.
async fn cut_off_create(app: &App) {
    let session = Session::new(Grant::read_write("owner"), app.config.clone(), app.platform.clone());
    let plan = Plan {
        tool: "zotero_create_items",
        access: Access::Write,
        confirms: false,
        library: None,
        asking: Default::default(),
    };
    let ctx = RequestContext::resolve(&session, plan).await.expect("the configured library");
    let work = async {
        let writer = ctx.writer().expect("may write");
        let item = json!({ "itemType": "book", "title": LANDED_TITLE });
        writer.write_objects(ObjectKind::Items, &[item]).await.expect("written");
        // The next step never comes: the request is stopped while the call waits here.
        std::future::pending::<()>().await
    };
    let mut running = pin!(ctx.journaled(work));
    for _ in 0..20 {
        assert!(running.as_mut().poll(&mut Context::from_waker(Waker::noop())).is_pending());
    }
}

fn key_titled(app_sim: &zotero_sim::Simulator, title: &str) -> Option<String> {
    app_sim
        .items(LIB)
        .iter()
        .find(|item| item["data"]["title"] == title)
        .and_then(|item| item["key"].as_str().map(str::to_owned))
}

#[tokio::test]
async fn a_call_cut_off_is_listed_with_what_landed_named_by_a_later_write_and_undone() {
    let sim = demo_sim();
    let mut app = app_with_sim(sim.clone());
    let clock = ManualClock::at(1_800_000_000_000);
    app.platform.clock = clock.clone();

    cut_off_create(&app).await;
    let landed = key_titled(&sim, LANDED_TITLE).expect("the batch landed");

    // A write call a moment later, while the cut-off call might still be running elsewhere, does not name it.
    clock.advance_secs(5);
    let meanwhile = call(&app, "zotero_update_item", json!({ "keys": [PAPER], "fields": { "extra": "one" } })).await;
    assert!(!text(&meanwhile).contains("cut off"), "{}", text(&meanwhile));

    // Listed first, though older, marked incomplete, with the object that landed.
    let listed = call(&app, "zotero_undo", json!({})).await;
    let entries = ok(&listed)["entries"].as_array().cloned().unwrap_or_default();
    assert_eq!(entries.len(), 2, "{listed}");
    let entry = &entries[0];
    assert_eq!(entry["incomplete"], true, "{listed}");
    assert_eq!(entry["tool"], "zotero_create_items");
    assert_eq!(entry["summary"], "created 1 item");
    assert_eq!(entry["objects"][0]["key"], landed.as_str());
    assert_eq!(entry["objects"][0]["change"], "created");
    assert!(entries[1].get("incomplete").is_none(), "{listed}");
    assert!(text(&listed).contains("INCOMPLETE"), "{}", text(&listed));
    let id = entry["id"].as_str().expect("an id").to_owned();

    // Once it has run longer than any call, the next write call names it, with what is already there.
    clock.advance_secs(11 * 60);
    let next = call(&app, "zotero_update_item", json!({ "keys": [PAPER], "fields": { "extra": "two" } })).await;
    let said = text(&next);
    let line = said.lines().find(|l| l.contains("was cut off")).unwrap_or_else(|| panic!("not named: {said}"));
    for part in ["zotero_create_items", id.as_str(), landed.as_str(), LANDED_TITLE, "zotero_undo"] {
        assert!(line.contains(part), "{part} missing: {line}");
    }
    // Named once.
    let later = call(&app, "zotero_update_item", json!({ "keys": [PAPER], "fields": { "extra": "three" } })).await;
    assert!(!text(&later).contains("cut off"), "{}", text(&later));

    // Still listed as incomplete, and undone like any entry: what landed is removed.
    let listed = call(&app, "zotero_undo", json!({})).await;
    let entry = &ok(&listed)["entries"][0];
    assert_eq!((entry["id"].as_str(), &entry["incomplete"]), (Some(id.as_str()), &json!(true)), "{listed}");
    let undone = call(&app, "zotero_undo", json!({ "id": id })).await;
    assert_eq!(ok(&undone)["objects"][0]["outcome"], "removed", "{undone}");
    assert_eq!(key_titled(&sim, LANDED_TITLE), None);
    let listed = call(&app, "zotero_undo", json!({})).await;
    let entries = ok(&listed)["entries"].as_array().cloned().unwrap_or_default();
    let cut = entries.iter().find(|e| e["id"] == id.as_str()).expect("still listed");
    assert!(cut["undoneBy"].is_string(), "{listed}");
}
