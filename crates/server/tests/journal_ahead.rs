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
use zotero_mcp_core::platform::{KvError, KvListPage, KvStore, KvWrite};
use zotero_mcp_core::testing::{ManualClock, StoppedClock};
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

/// `CACHE_KV` that remembers the keys written, over the app's own.
struct Recorded {
    inner: std::rc::Rc<dyn KvStore>,
    puts: std::cell::RefCell<Vec<String>>,
}

#[async_trait::async_trait(?Send)]
impl KvStore for Recorded {
    async fn get(&self, key: &str) -> Result<Option<String>, KvError> {
        self.inner.get(key).await
    }
    async fn put(&self, key: &str, value: &str, lifetime: KvWrite) -> Result<(), KvError> {
        self.puts.borrow_mut().push(key.to_owned());
        self.inner.put(key, value, lifetime).await
    }
    async fn delete(&self, key: &str) -> Result<(), KvError> {
        self.inner.delete(key).await
    }
    async fn list(&self, prefix: &str, cursor: Option<&str>, limit: u32) -> Result<KvListPage, KvError> {
        self.inner.list(prefix, cursor, limit).await
    }
}

async fn journal_keys(app: &App) -> Vec<String> {
    let page = app.platform.cache_kv.list("journal:owner:", None, 1000).await.expect("a listing");
    page.keys.into_iter().map(|key| key.name).collect()
}

#[tokio::test]
async fn a_call_that_waits_is_kept_in_steps_and_leaves_one_whole_entry_when_it_returns() {
    let sim = demo_sim();
    let mut app = app_with_sim(sim.clone());
    // Every request waits a turn, as over a network: the entry is saved ahead while the call waits.
    app.platform.http = common::steps::Steps::over(std::rc::Rc::new(zotero_sim::InProcess(sim.clone())));
    // A request that takes a turn would lose to its own deadline on a clock whose waits end at once.
    app.platform.clock = std::rc::Rc::new(StoppedClock(app.platform.clock.now_ms()));
    let recorded =
        std::rc::Rc::new(Recorded { inner: app.platform.cache_kv.clone(), puts: std::cell::RefCell::default() });
    app.platform.cache_kv = recorded.clone();
    let items: Vec<Value> = (0..3).map(|n| json!({ "itemType": "book", "title": format!("Waited {n}") })).collect();
    let made = call(&app, "zotero_create_items", json!({ "items": items })).await;
    assert!(text(&made).contains("Undo: zotero_undo"), "{}", text(&made));
    let steps: Vec<String> = recorded.puts.borrow().iter().filter(|key| key.contains(":step:")).cloned().collect();
    assert!(steps.iter().any(|key| key.ends_with(":step:0000")), "no entry saved ahead: {:?}", recorded.puts.borrow());
    // Returned: one entry under its own key, complete, and no step left to read as a call cut off.
    let keys = journal_keys(&app).await;
    assert_eq!(keys.len(), 1, "{keys:?}");
    assert!(!keys[0].contains(":step:"), "{keys:?}");
    let listed = call(&app, "zotero_undo", json!({})).await;
    let entry = &ok(&listed)["entries"][0];
    assert!(entry.get("incomplete").is_none(), "{listed}");
    assert_eq!(entry["summary"], "created 3 items", "{listed}");
}

#[tokio::test]
async fn a_journal_that_refuses_the_steps_still_records_the_call_when_it_returns() {
    let sim = demo_sim();
    let mut app = app_with_sim(sim.clone());
    app.platform.http = common::steps::Steps::over(std::rc::Rc::new(zotero_sim::InProcess(sim.clone())));
    // A request that takes a turn would lose to its own deadline on a clock whose waits end at once.
    app.platform.clock = std::rc::Rc::new(StoppedClock(app.platform.clock.now_ms()));
    let kv = common::kv::InterposedKv::over(app.platform.cache_kv.clone());
    kv.refused.borrow_mut().push(":step:".into());
    app.platform.cache_kv = kv;
    let made = call(&app, "zotero_create_items", json!({ "items": [{ "itemType": "book", "title": "Kept" }] })).await;
    assert!(text(&made).contains("Undo: zotero_undo"), "{}", text(&made));
    assert!(!text(&made).contains("could not be recorded"), "{}", text(&made));
    assert_eq!(journal_keys(&app).await.len(), 1);
}

/// One ordered record of what a call did outside itself: KV writes and Zotero writes, as they went out.
type Events = std::rc::Rc<std::cell::RefCell<Vec<String>>>;

/// `CACHE_KV` that notes each write in `events`, over the app's own.
struct NotedKv {
    inner: std::rc::Rc<dyn KvStore>,
    events: Events,
}

#[async_trait::async_trait(?Send)]
impl KvStore for NotedKv {
    async fn get(&self, key: &str) -> Result<Option<String>, KvError> {
        self.inner.get(key).await
    }
    async fn put(&self, key: &str, value: &str, lifetime: KvWrite) -> Result<(), KvError> {
        self.events.borrow_mut().push(format!("KV {key}"));
        self.inner.put(key, value, lifetime).await
    }
    async fn delete(&self, key: &str) -> Result<(), KvError> {
        self.inner.delete(key).await
    }
    async fn list(&self, prefix: &str, cursor: Option<&str>, limit: u32) -> Result<KvListPage, KvError> {
        self.inner.list(prefix, cursor, limit).await
    }
}

/// The simulator over HTTP, noting each write as it goes out; once `cut` is set, a write is applied and its
/// answer never comes (the server is stopped while it waits for it).
struct NotedHttp {
    sim: zotero_sim::InProcess,
    events: Events,
    cut: std::cell::Cell<bool>,
}

#[async_trait::async_trait(?Send)]
impl zotero_mcp_server::platform::HttpClient for NotedHttp {
    async fn send(
        &self,
        request: zotero_mcp_server::platform::HttpRequest,
    ) -> Result<zotero_mcp_server::platform::HttpResponse, zotero_mcp_server::platform::HttpError> {
        let write = request.method() != http::Method::GET;
        if write {
            self.events.borrow_mut().push(format!("{} {}", request.method(), request.uri().path()));
        }
        let answer = self.sim.send(request).await;
        if write && self.cut.get() {
            std::future::pending::<()>().await;
        }
        answer
    }
}

fn noted_app(sim: &std::rc::Rc<zotero_sim::Simulator>) -> (App, Events, std::rc::Rc<NotedHttp>) {
    let mut app = app_with_sim(sim.clone());
    let events = Events::default();
    let http = std::rc::Rc::new(NotedHttp {
        sim: zotero_sim::InProcess(sim.clone()),
        events: events.clone(),
        cut: std::cell::Cell::new(false),
    });
    app.platform.http = http.clone();
    app.platform.cache_kv = std::rc::Rc::new(NotedKv { inner: app.platform.cache_kv.clone(), events: events.clone() });
    (app, events, http)
}

#[tokio::test]
async fn each_write_goes_out_only_after_the_step_that_says_what_it_is_about_to_send() {
    let sim = demo_sim();
    let (app, events, _) = noted_app(&sim);
    // Two writes: the item, then its child note.
    // Two writes: 51 items go in two batches of 50 and 1.
    let items: Vec<Value> = (0..51).map(|n| json!({ "itemType": "book", "title": format!("Ordered {n}") })).collect();
    let made = call(&app, "zotero_create_items", json!({ "items": items })).await;
    assert!(text(&made).contains("Undo: zotero_undo"), "{}", text(&made));
    let events = events.borrow().clone();
    let at = |wanted: &dyn Fn(&str) -> bool| events.iter().position(|e| wanted(e));
    let writes: Vec<usize> =
        events.iter().enumerate().filter(|(_, e)| e.starts_with("POST ")).map(|(n, _)| n).collect();
    assert_eq!(writes.len(), 2, "{events:?}");
    let step = |n: usize| at(&|e: &str| e.starts_with("KV ") && e.ends_with(&format!(":step:000{n}")));
    let (first, second) = (step(0).expect("step 0"), step(1).expect("step 1"));
    assert!(first < writes[0], "the entry is stored before the first write: {events:?}");
    assert!(writes[0] < second && second < writes[1], "the first batch is stored before the second goes: {events:?}");
}

#[tokio::test]
async fn a_call_cut_off_while_its_write_was_out_is_read_back_named_and_undone() {
    let sim = demo_sim();
    let (mut app, _, http) = noted_app(&sim);
    let clock = ManualClock::at(1_800_000_000_000);
    app.platform.clock = clock.clone();
    // The create lands in the library, but the server is stopped before its answer comes (on a clock whose
    // waits never end, so no deadline answers for it).
    http.cut.set(true);
    let mut stopped = app.platform.clone();
    stopped.clock = std::rc::Rc::new(StoppedClock(app.platform.clock.now_ms()));
    let session = Session::new(Grant::read_write("owner"), app.config.clone(), stopped);
    let args =
        json!({ "items": [{ "itemType": "book", "title": LANDED_TITLE }, { "itemType": "book", "title": "Second" }] });
    {
        let registry = zotero_mcp_server::tools::registry(&app.config);
        let mut running = pin!(registry.call_tool(&session, "zotero_create_items", args.clone()));
        for _ in 0..50 {
            assert!(running.as_mut().poll(&mut Context::from_waker(Waker::noop())).is_pending());
        }
    }
    http.cut.set(false);
    let landed = key_titled(&sim, LANDED_TITLE).expect("the create landed");
    assert!(key_titled(&sim, "Second").is_some());

    // Listed as incomplete, with what was on its way.
    let listed = call(&app, "zotero_undo", json!({})).await;
    let entry = &ok(&listed)["entries"][0];
    assert_eq!(entry["incomplete"], true, "{listed}");
    let in_flight: Vec<&str> =
        entry["inFlight"].as_array().map(|a| a.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
    assert!(in_flight.contains(&landed.as_str()), "{listed}");
    let id = entry["id"].as_str().expect("an id").to_owned();

    // Named by the next write call with both objects read back as there: running it again would duplicate them.
    clock.advance_secs(11 * 60);
    let next = call(&app, "zotero_update_item", json!({ "keys": [PAPER], "fields": { "extra": "after" } })).await;
    let said = text(&next);
    let line = said.lines().find(|l| l.contains("was cut off")).unwrap_or_else(|| panic!("not named: {said}"));
    for part in [id.as_str(), "created 2 items", landed.as_str(), LANDED_TITLE, "do not write them again"] {
        assert!(line.contains(part), "{part} missing: {line}");
    }
    assert!(!line.contains("Not known"), "{line}");

    // Undone: both go.
    let undone = call(&app, "zotero_undo", json!({ "id": id })).await;
    let outcomes: Vec<&Value> =
        ok(&undone)["objects"].as_array().map(|a| a.iter().map(|o| &o["outcome"]).collect()).unwrap_or_default();
    assert_eq!(outcomes, [&json!("removed"), &json!("removed")], "{undone}");
    assert_eq!((key_titled(&sim, LANDED_TITLE), key_titled(&sim, "Second")), (None, None));
}

#[tokio::test]
async fn an_update_cut_off_while_out_is_read_back_by_its_undo() {
    let sim = demo_sim();
    let (app, _, http) = noted_app(&sim);
    let title_of = |sim: &zotero_sim::Simulator| {
        sim.items(LIB).iter().find(|item| item["key"] == PAPER).map(|item| item["data"]["title"].clone())
    };
    let before = title_of(&sim).expect("the paper");
    http.cut.set(true);
    let mut stopped = app.platform.clone();
    stopped.clock = std::rc::Rc::new(StoppedClock(app.platform.clock.now_ms()));
    let session = Session::new(Grant::read_write("owner"), app.config.clone(), stopped);
    {
        let registry = zotero_mcp_server::tools::registry(&app.config);
        let args = json!({ "keys": [PAPER], "fields": { "title": "Retitled, then cut off" } });
        let mut running = pin!(registry.call_tool(&session, "zotero_update_item", args));
        for _ in 0..50 {
            assert!(running.as_mut().poll(&mut Context::from_waker(Waker::noop())).is_pending());
        }
    }
    http.cut.set(false);
    assert_eq!(title_of(&sim), Some(json!("Retitled, then cut off")), "the update landed");
    let listed = call(&app, "zotero_undo", json!({})).await;
    let entry = &ok(&listed)["entries"][0];
    assert_eq!(entry["inFlight"], json!([PAPER]), "{listed}");
    let id = entry["id"].as_str().expect("an id").to_owned();
    let undone = call(&app, "zotero_undo", json!({ "id": id })).await;
    assert_eq!(ok(&undone)["objects"][0]["outcome"], "restored", "{undone}");
    assert_eq!(title_of(&sim), Some(before));
}

#[tokio::test]
async fn a_call_left_by_an_earlier_run_of_the_native_server_is_named_at_once() {
    let sim = demo_sim();
    let mut app = app_with_sim(sim.clone());
    app.platform.clock = ManualClock::at(1_800_000_000_000);
    // The native server's store is its own: a call of this run may still be running...
    app.platform.process_run = Some("run-1".into());
    cut_off_create(&app).await;
    let landed = key_titled(&sim, LANDED_TITLE).expect("the batch landed");
    let same = call(&app, "zotero_update_item", json!({ "keys": [PAPER], "fields": { "extra": "one" } })).await;
    assert!(!text(&same).contains("cut off"), "{}", text(&same));
    // ...but once the server has started again, the call is known to be cut off, however recent.
    app.platform.process_run = Some("run-2".into());
    let next = call(&app, "zotero_update_item", json!({ "keys": [PAPER], "fields": { "extra": "two" } })).await;
    let said = text(&next);
    let line = said.lines().find(|l| l.contains("was cut off")).unwrap_or_else(|| panic!("not named: {said}"));
    assert!(line.contains(&landed), "{line}");
}
