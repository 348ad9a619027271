//! The server on Zotero Desktop (`serve --local`), through the tool registry, over the simulator's local-API
//! mode (`zotero_sim::local`) and a data directory laid out as Zotero's: where each call's reads and writes go
//! for Zotero 10, for Zotero 7 with and without a Web API key, and what the local API's differences turn into
//! in the answers.

mod common;

use std::cell::RefCell;
use std::path::PathBuf;
use std::rc::Rc;

use async_trait::async_trait;
use common::*;
use serde_json::{json, Value};
use zotero_mcp_core::desktop::{locate, Desktop};
use zotero_mcp_core::files::{FileContent, FileStore, FileStoreError, StoreKind};
use zotero_mcp_core::platform::{HttpClient, HttpError, HttpRequest, HttpResponse};
use zotero_mcp_core::zotero::local::{self, DesktopInfo, LocalKey};
use zotero_mcp_core::zotero::{ObjectKey, ZoteroError, ZoteroObject};
use zotero_mcp_server::app::App;
use zotero_mcp_server::auth::Grant;
use zotero_mcp_server::call::Session;
use zotero_sim::local::{DialogAnswer, Flavour, LocalApi, EDITED_SINCE_SYNC, NEVER_SYNCED};
use zotero_sim::{LibraryRef, Simulator};

const LOCAL_BASE: &str = "http://localhost:23119/api";
const LIB: LibraryRef = LibraryRef::User(DEMO_USER);
/// The demo paper with the real 4-page PDF (A6JVMAK4).
const PAPER: &str = "6FEP7ILJ";

/// The machine: Zotero Desktop (the local API over its own library and data directory) and, apart, the Web
/// API's copy of the same account.
struct Machine {
    local: Rc<LocalApi>,
    web: Rc<Simulator>,
    data_dir: PathBuf,
}

impl Machine {
    fn new(flavour: Flavour, name: &str) -> Self {
        let data_dir = std::env::temp_dir().join(format!("zotero-mcp-desktop-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&data_dir);
        let local = LocalApi::new(Rc::new(Simulator::demo()), flavour, DEMO_USER, DEMO_KEY)
            .with_data_dir(data_dir.clone())
            .unwrap_or_else(|e| panic!("{e}"));
        Self { local: Rc::new(local), web: demo_sim(), data_dir }
    }

    fn app(&self, settings: &[(&str, &str)]) -> App {
        let mut app = app_with(settings);
        app.platform.http = Rc::new(Split { local: self.local.clone(), web: self.web.clone() });
        let desktop = TestDesktop {
            http: app.platform.http.clone(),
            clock: app.platform.clock.clone(),
            info: RefCell::new(None),
            key: Rc::new(LocalKey::default()),
            files: DiskFiles { data_dir: self.data_dir.clone() },
        };
        let mut config = (*app.config).clone();
        config.desktop = Some(Rc::new(desktop));
        app.config = Rc::new(config);
        app
    }

    async fn call(&self, app: &App, grant: Grant, name: &str, arguments: Value) -> Value {
        let ctx = Session::new(grant, app.config.clone(), app.platform.clone());
        zotero_mcp_server::tools::registry(&app.config).call_tool(&ctx, name, arguments).await.expect("tool exists")
    }

    fn local_notes(&self) -> usize {
        self.local.simulator().items(LIB).iter().filter(|i| i["data"]["itemType"] == "note").count()
    }
}

impl Drop for Machine {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.data_dir);
        let name = self.data_dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let _ = std::fs::remove_dir_all(self.data_dir.with_file_name(format!("{name}-papers")));
    }
}

/// Requests under `/api/` go to Zotero Desktop, every other to the Web API.
struct Split {
    local: Rc<LocalApi>,
    web: Rc<Simulator>,
}

#[async_trait(?Send)]
impl HttpClient for Split {
    async fn send(&self, request: HttpRequest) -> Result<HttpResponse, HttpError> {
        Ok(match request.uri().path().starts_with("/api") {
            true => self.local.handle(request),
            false => self.web.handle(request),
        })
    }
}

/// Zotero Desktop as the native shell implements it (crates/cli/src/native/desktop.rs), with files read from
/// the data directory synchronously.
struct TestDesktop {
    http: Rc<dyn HttpClient>,
    clock: Rc<dyn zotero_mcp_core::platform::Clock>,
    info: RefCell<Option<DesktopInfo>>,
    key: Rc<LocalKey>,
    files: DiskFiles,
}

#[async_trait(?Send)]
impl Desktop for TestDesktop {
    fn api_base(&self) -> &str {
        LOCAL_BASE
    }

    async fn zotero(&self) -> Result<DesktopInfo, ZoteroError> {
        if let Some(info) = self.info.borrow().clone() {
            return Ok(info);
        }
        let info = local::probe(self.http.as_ref(), self.clock.as_ref(), LOCAL_BASE).await?;
        *self.info.borrow_mut() = Some(info.clone());
        Ok(info)
    }

    fn key(&self) -> Rc<LocalKey> {
        self.key.clone()
    }

    fn files(&self, _: bool) -> &dyn FileStore {
        &self.files
    }
}

struct DiskFiles {
    data_dir: PathBuf,
}

#[async_trait(?Send)]
impl FileStore for DiskFiles {
    fn kind(&self) -> StoreKind {
        StoreKind::Desktop
    }

    fn requests_per_fetch(&self) -> usize {
        0
    }

    async fn fetch(&self, attachment: &ZoteroObject, _: &ObjectKey) -> Result<Option<FileContent>, FileStoreError> {
        let location =
            locate(attachment, &self.data_dir, None, true).map_err(|e| FileStoreError::Store(Box::new(e)))?;
        let Some(location) = location else { return Ok(None) };
        let filename = location.path().file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        Ok(std::fs::read(location.path()).ok().map(|data| FileContent { filename, data }))
    }

    async fn has_file(&self, key: &ObjectKey) -> Result<bool, FileStoreError> {
        Ok(self.data_dir.join("storage").join(key.as_str()).is_dir())
    }

    fn reads_linked_files(&self) -> bool {
        true
    }
}

fn failure(result: &Value) -> String {
    assert_eq!(result["isError"], true, "expected a refusal: {result}");
    error_text(result)
}

#[tokio::test]
async fn zotero_10_reads_and_writes_through_its_local_api_after_one_dialog() {
    let machine = Machine::new(Flavour::Zotero10, "ten");
    let app = machine.app(&[]);
    let found = machine.call(&app, Grant::read_only("owner"), "zotero_search", json!({ "query": "宋代" })).await;
    assert!(!ok(&found)["items"].as_array().unwrap().is_empty(), "{found}");
    let before = machine.local_notes();
    for title in ["First local note", "Second local note"] {
        let note = json!({ "action": "create", "itemKey": PAPER, "title": title, "note": "written on the desktop" });
        let written = machine.call(&app, Grant::read_write("owner"), "zotero_notes", note).await;
        assert!(ok(&written)["noteKey"].is_string(), "{written}");
    }
    assert_eq!(machine.local_notes(), before + 2);
    assert_eq!(machine.local.dialogs_shown(), 1, "Always Allow: asked once for the server's run");
    assert!(machine.web.requests().is_empty(), "nothing went to the Web API");
    let writes: Vec<_> = machine.local.requests().into_iter().filter(|r| r.method == "POST").collect();
    assert!(writes.iter().all(|r| r.headers.get("zotero-server-id").is_some()), "every write names the instance");
}

#[tokio::test]
async fn a_denied_dialog_writes_nothing_and_says_not_to_retry() {
    let machine = Machine::new(Flavour::Zotero10, "deny");
    machine.local.answer_dialogs(DialogAnswer::Deny);
    let app = machine.app(&[]);
    let before = machine.local_notes();
    let note = json!({ "action": "create", "itemKey": PAPER, "note": "no" });
    let refused = machine.call(&app, Grant::read_write("owner"), "zotero_notes", note).await;
    let said = failure(&refused);
    assert!(said.contains("the answer was Deny: nothing was written"), "{said}");
    assert_eq!(machine.local_notes(), before);
}

#[tokio::test]
async fn zotero_7_without_a_key_refuses_every_write_before_sending_it() {
    let machine = Machine::new(Flavour::Zotero7, "seven");
    let app = machine.app(&[("ZOTERO_API_KEY", "")]);
    let note = json!({ "action": "create", "itemKey": PAPER, "note": "no" });
    let refused = machine.call(&app, Grant::read_write("owner"), "zotero_notes", note).await;
    let said = failure(&refused);
    assert!(
        said.contains("Zotero 7.0.15 takes no writes on its local API") && said.contains("ZOTERO_API_KEY"),
        "{said}"
    );
    let tagged = json!({ "keys": [PAPER], "addTags": ["x"] });
    assert!(failure(&machine.call(&app, Grant::read_write("owner"), "zotero_update_item", tagged).await)
        .contains("takes no writes"));
    let sent: Vec<_> = machine.local.requests().into_iter().filter(|r| r.method != "GET").collect();
    assert!(sent.is_empty(), "no write was even tried: {sent:?}");
    // Reads still work, and say where the files come from.
    let read = machine
        .call(
            &app,
            Grant::read_write("owner"),
            "zotero_read_attachment",
            json!({ "itemKey": "A6JVMAK4", "fromPage": 1, "toPage": 1 }),
        )
        .await;
    assert_eq!(ok(&read)["source"], "zotero-desktop");
}

#[tokio::test]
async fn zotero_7_with_a_web_api_key_sends_a_writing_call_wholly_to_the_web_api() {
    let machine = Machine::new(Flavour::Zotero7, "seven-key");
    let app = machine.app(&[("ZOTERO_API_KEY", DEMO_KEY), ("ZOTERO_LIBRARY_ID", "1234567")]);
    let title = "Through the Web API";
    let note = json!({ "action": "create", "itemKey": PAPER, "title": title, "note": "synced later" });
    let written = machine.call(&app, Grant::read_write("owner"), "zotero_notes", note).await;
    let key = ok(&written)["noteKey"].as_str().unwrap().to_owned();
    assert!(machine.web.item(LIB, &key).is_some(), "the note is in the Web API library");
    assert!(machine.local.simulator().item(LIB, &key).is_none(), "Zotero Desktop has it after its next sync");
    // A version read on the desktop is never sent to the Web API: the writing call read there too.
    assert!(machine.local.requests().iter().all(|r| r.method == "GET"));
}

#[tokio::test]
async fn deletions_the_desktop_cannot_list_are_absent_never_empty() {
    let machine = Machine::new(Flavour::Zotero10, "changes");
    let app = machine.app(&[]);
    let baseline = machine.call(&app, Grant::read_only("owner"), "zotero_changes", json!({})).await;
    let out = ok(&baseline);
    assert!(out.get("deleted").is_none(), "no /deleted on this Zotero: {out}");
    assert!(out["note"].as_str().unwrap().contains("does not mean there were none"), "{out}");
    assert!(out["cursor"].is_object(), "the changes it can read still give a cursor: {out}");
}

#[tokio::test]
async fn annotations_are_read_among_an_attachments_children() {
    let machine = Machine::new(Flavour::Zotero10, "annotations");
    let app = machine.app(&[]);
    let listed =
        machine.call(&app, Grant::read_only("owner"), "zotero_annotations", json!({ "itemKey": "93WJRKG5" })).await;
    assert!(ok(&listed)["annotations"].as_array().unwrap().len() >= 4, "{listed}");
}

#[tokio::test]
async fn a_new_file_is_stored_by_zotero_in_its_data_directory_and_a_rename_is_left_to_zotero() {
    let machine = Machine::new(Flavour::Zotero10, "files");
    let app = machine.app(&[]);
    let pdf = zotero_mcp_core::testing::pdf_of_pages(&["A page stored through the desktop"]);
    let base64 = base64_of(&pdf);
    let put = json!({ "parentItemKey": PAPER, "base64Data": base64, "filename": "stored.pdf" });
    let stored = machine.call(&app, Grant::read_write("owner"), "zotero_put_attachment", put).await;
    let out = ok(&stored).clone();
    let key = out["attachmentKey"].as_str().unwrap().to_owned();
    assert_eq!(out["storedIn"], StoreKind::Desktop.name());
    assert_eq!(std::fs::read(machine.data_dir.join("storage").join(&key).join("stored.pdf")).unwrap(), pdf);
    assert!(text(&stored).contains("Zotero Desktop stored the file in its data directory"), "{}", text(&stored));
    let read = machine.call(&app, Grant::read_only("owner"), "zotero_read_attachment", json!({ "itemKey": key })).await;
    assert!(ok(&read)["text"].as_str().unwrap().contains("A page stored through the desktop"));

    let rename = json!({ "itemKeys": [key], "apply": true, "template": "renamed" });
    let renamed = machine.call(&app, Grant::read_write("owner"), "zotero_rename_attachments", rename).await;
    let status = ok(&renamed)["planned"][0]["status"].as_str().unwrap().to_owned();
    assert!(status.starts_with("failed:") && status.contains("Rename File from Parent Metadata"), "{status}");
    assert_eq!(machine.local.simulator().item(LIB, &key).unwrap()["data"]["filename"], "stored.pdf");

    // Replaced through the local API: Zotero puts the new bytes in place; the journal says the earlier file is
    // not kept.
    let newer = zotero_mcp_core::testing::pdf_of_pages(&["The second version of the file"]);
    let replace = json!({ "replaceAttachmentKey": key, "base64Data": base64_of(&newer) });
    let replaced = machine.call(&app, Grant::read_write("owner"), "zotero_put_attachment", replace).await;
    assert_eq!(ok(&replaced)["replaced"], true, "{replaced}");
    assert_eq!(std::fs::read(machine.data_dir.join("storage").join(&key).join("stored.pdf")).unwrap(), newer);
    let journal = machine.call(&app, Grant::read_write("owner"), "zotero_undo", json!({})).await;
    // Both entries carry the test clock's one time, so their order is not the point: the replacement's is.
    let entries = ok(&journal)["entries"].as_array().unwrap().clone();
    let replacement = entries.iter().find(|e| e["summary"] == "replaced 1 file").unwrap_or_else(|| panic!("{journal}"));
    assert!(
        replacement["limits"].to_string().contains("Zotero Desktop replaced it in its data directory"),
        "{journal}"
    );

    // Deleted for good, Zotero erases the attachment's folder with it.
    let delete = json!({ "attachmentKey": key, "permanent": true });
    let deleted = machine.call(&app, Grant::read_write("owner"), "zotero_delete_attachment", delete).await;
    ok(&deleted);
    assert!(machine.local.simulator().item(LIB, &key).is_none());
    assert!(!machine.data_dir.join("storage").join(&key).exists(), "the file went with the item");
}

/// Zotero Desktop reports the md5 of the file on disk but takes a replacement only under `If-Match` the hash
/// of the file as last synced. A file never synced has none: the replacement goes through as a new file, as
/// Zotero's own sync client does it. A file edited since its sync has another one, which the local API does not
/// tell: the replacement is refused with what to do, and nothing changes.
#[tokio::test]
async fn a_file_zotero_never_synced_is_replaced_and_one_edited_since_its_sync_is_refused_with_what_to_do() {
    let machine = Machine::new(Flavour::Zotero10, "unsynced");
    let app = machine.app(&[]);
    let on_disk = |key: &str| {
        let item = machine.local.simulator().item(LIB, key).unwrap();
        let name = item["data"]["filename"].as_str().unwrap().to_owned();
        std::fs::read(machine.data_dir.join("storage").join(key).join(name)).unwrap()
    };
    assert_eq!(machine.local.synced_hash(LIB, NEVER_SYNCED), None);
    let newer = zotero_mcp_core::testing::pdf_of_pages(&["The thesis outline, fourth version"]);
    let replace = json!({ "replaceAttachmentKey": NEVER_SYNCED, "base64Data": base64_of(&newer) });
    let replaced = machine.call(&app, Grant::read_write("owner"), "zotero_put_attachment", replace).await;
    assert_eq!(ok(&replaced)["replaced"], true, "{replaced}");
    assert_eq!(on_disk(NEVER_SYNCED), newer);
    let md5 = zotero_mcp_core::webdav::md5_hex(&newer);
    assert_eq!(machine.local.synced_hash(LIB, NEVER_SYNCED).as_deref(), Some(md5.as_str()), "now synced");

    let before = on_disk(EDITED_SINCE_SYNC);
    let version = machine.local.simulator().library_version(LIB);
    let edited = zotero_mcp_core::testing::pdf_of_pages(&["The handout, corrected"]);
    let replace = json!({ "replaceAttachmentKey": EDITED_SINCE_SYNC, "base64Data": base64_of(&edited) });
    let refused = machine.call(&app, Grant::read_write("owner"), "zotero_put_attachment", replace).await;
    let message = failure(&refused);
    assert!(
        message.contains("edited since Zotero last synced it") && message.contains("let Zotero Desktop sync its files"),
        "{message}"
    );
    assert_eq!(on_disk(EDITED_SINCE_SYNC), before, "the file on disk is as it was");
    assert_eq!(machine.local.simulator().library_version(LIB), version, "nothing was written");
}

#[tokio::test]
async fn the_libraries_are_the_desktops_own_with_its_files() {
    let machine = Machine::new(Flavour::Zotero10, "libraries");
    let app = machine.app(&[]);
    let listed = machine.call(&app, Grant::read_write("owner"), "zotero_list_libraries", json!({})).await;
    let first = &ok(&listed)["libraries"][0];
    assert_eq!(first["library"], "users/0");
    assert_eq!(first["fileStore"], StoreKind::Desktop.name());
    assert_eq!(first["write"], true);
}

#[tokio::test]
async fn a_switched_off_local_api_is_named_with_where_to_switch_it_on() {
    let machine = Machine::new(Flavour::Zotero10, "off");
    machine.local.set_enabled(false);
    let app = machine.app(&[]);
    let refused = machine.call(&app, Grant::read_only("owner"), "zotero_search", json!({ "query": "x" })).await;
    let said = failure(&refused);
    assert!(said.contains("local API is switched off"), "{said}");
    assert!(said.contains("Allow other applications on this computer to communicate with Zotero"), "{said}");
}

fn base64_of(data: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(data)
}

/// The id the answer's last line gives for undoing the call.
fn undo_id(result: &Value) -> String {
    let said = text(result);
    let line = said.lines().rev().find(|l| l.starts_with("Undo: zotero_undo")).unwrap_or_else(|| panic!("{said}"));
    line.split('"').nth(1).expect("an id in quotes").to_owned()
}

fn listed_ids(listing: &Value) -> Vec<String> {
    ok(listing)["entries"].as_array().unwrap().iter().map(|e| e["id"].as_str().unwrap().to_owned()).collect()
}

#[tokio::test]
async fn an_undo_entry_stays_on_its_route_between_the_web_api_and_the_desktop() {
    // `serve` and `serve --local` on one machine share the data directory, so one KV store: here one store
    // under a server on Zotero Desktop and one on the Web API, over the same account.
    let machine = Machine::new(Flavour::Zotero10, "routes");
    let settings = [("ZOTERO_API_KEY", DEMO_KEY), ("ZOTERO_LIBRARY_ID", "1234567")];
    let desktop = machine.app(&settings);
    let mut web = machine.app(&settings);
    let mut config = (*web.config).clone();
    config.desktop = None;
    web.config = Rc::new(config);
    web.platform.cache_kv = desktop.platform.cache_kv.clone();
    let owner = || Grant::read_write("owner");
    let edit = |extra: &str| json!({ "keys": [PAPER], "fields": { "extra": extra } });

    let on_web = undo_id(&machine.call(&web, owner(), "zotero_update_item", edit("edited on the web")).await);
    let on_desktop = undo_id(&machine.call(&desktop, owner(), "zotero_update_item", edit("edited locally")).await);
    let extra = |sim: &Simulator| sim.item(LIB, PAPER).unwrap()["data"]["extra"].clone();
    assert_eq!(extra(&machine.web), "edited on the web");
    assert_eq!(extra(machine.local.simulator()), "edited locally");

    // Each server lists its own route's changes only.
    let desktop_list = listed_ids(&machine.call(&desktop, owner(), "zotero_undo", json!({})).await);
    assert_eq!(desktop_list, std::slice::from_ref(&on_desktop));
    let web_list = listed_ids(&machine.call(&web, owner(), "zotero_undo", json!({})).await);
    assert_eq!(web_list, std::slice::from_ref(&on_web));

    // And refuses the other's, saying where it was made; neither library is touched.
    let local_writes = || machine.local.requests().iter().filter(|r| r.method != "GET").count();
    let web_writes = || machine.web.requests().iter().filter(|r| r.method != "GET").count();
    let (local_before, web_before) = (local_writes(), web_writes());
    let said = failure(&machine.call(&desktop, owner(), "zotero_undo", json!({ "id": on_web })).await);
    assert!(said.contains("was made in users/1234567 through the Web API"), "{said}");
    assert!(said.contains("serve` without --local") && said.contains("Nothing was changed"), "{said}");
    let said = failure(&machine.call(&web, owner(), "zotero_undo", json!({ "id": on_desktop })).await);
    assert!(said.contains("was made in users/0 through Zotero Desktop's local API"), "{said}");
    assert!(said.contains("serve --local"), "{said}");
    assert_eq!((local_writes(), web_writes()), (local_before, web_before), "nothing was written anywhere");
    assert_eq!(extra(machine.local.simulator()), "edited locally", "the desktop edit stands");
    assert_eq!(extra(&machine.web), "edited on the web");

    // On its own route each is undone as before.
    let undone = machine.call(&desktop, owner(), "zotero_undo", json!({ "id": on_desktop })).await;
    assert_eq!(ok(&undone)["objects"][0]["outcome"], "restored", "{undone}");
    let undone = machine.call(&web, owner(), "zotero_undo", json!({ "id": on_web })).await;
    assert_eq!(ok(&undone)["objects"][0]["outcome"], "restored", "{undone}");

    // In the shared store each route keeps its entries under its own prefix.
    let kv = &desktop.platform.cache_kv;
    let keys = |prefix: &str| {
        let prefix = prefix.to_owned();
        async move { kv.list(&prefix, None, 1000).await.unwrap().keys.len() }
    };
    assert_eq!(keys("journal:owner:local/users/0:").await, 2, "the edit and its undo");
    assert_eq!(keys("journal:owner:users/1234567:").await, 2);
    // So do the desktop's caches: a text read there is not served to the Web API's calls, nor the reverse.
    let page = json!({ "itemKey": "A6JVMAK4", "fromPage": 1, "toPage": 1 });
    machine.call(&desktop, Grant::read_only("owner"), "zotero_read_attachment", page).await;
    assert!(keys("lib:local/users/0:text:").await > 0, "the desktop's text is cached under its route");
    assert_eq!(keys("text:").await, 0, "and not under the Web API's keys");
}

/// Zotero's "Allow" gives a key good for one write (`consumeLocalAPIKey` in `server_localAPI.js` deletes it on
/// its first use), and a new attachment with its file takes three: the item, then the upload's authorization
/// and its registration. Each later write asks again, and with each allowed the call completes.
#[tokio::test]
async fn a_file_under_one_time_allow_keys_asks_again_for_each_write_and_is_stored() {
    let machine = Machine::new(Flavour::Zotero10, "allow-once");
    machine.local.answer_dialogs(DialogAnswer::Allow);
    let app = machine.app(&[]);
    let pdf = zotero_mcp_core::testing::pdf_of_pages(&["Stored one allowed write at a time"]);
    let put = json!({ "parentItemKey": PAPER, "base64Data": base64_of(&pdf), "filename": "allowed.pdf" });
    let stored = machine.call(&app, Grant::read_write("owner"), "zotero_put_attachment", put).await;
    let key = ok(&stored)["attachmentKey"].as_str().unwrap().to_owned();
    assert_eq!(std::fs::read(machine.data_dir.join("storage").join(&key).join("allowed.pdf")).unwrap(), pdf);
    assert_eq!(machine.local.dialogs_shown(), 3, "one dialog for each of the three writes");
    let said = text(&stored);
    assert!(said.contains("Always Allow"), "the answer says how to be asked once: {said}");
}

/// The person allows the item's creation and denies a later write of the file (its upload's authorization, or,
/// having allowed that too, its registration): the call stops there, asks nothing more (not even to remove the
/// item: Deny means no more changes), says exactly what the library holds, and its undo entry removes the item.
#[tokio::test]
async fn a_later_dialog_denied_part_way_says_what_was_made_and_asks_no_more() {
    for allowed in [1, 2] {
        let machine = Machine::new(Flavour::Zotero10, &format!("deny-after-{allowed}"));
        machine.local.answer_next_dialogs(&vec![DialogAnswer::Allow; allowed]);
        machine.local.answer_dialogs(DialogAnswer::Deny);
        let app = machine.app(&[]);
        let pdf = zotero_mcp_core::testing::pdf_of_pages(&["Never stored"]);
        let put = json!({ "parentItemKey": PAPER, "base64Data": base64_of(&pdf), "filename": "denied.pdf" });
        let refused = machine.call(&app, Grant::read_write("owner"), "zotero_put_attachment", put).await;
        let said = failure(&refused);
        assert_eq!(machine.local.dialogs_shown(), allowed + 1, "no dialog after the Deny: {said}");
        let made = machine.local.simulator().items(LIB).into_iter().find(|i| i["data"]["filename"] == "denied.pdf");
        let key = made.expect("the attachment item allowed first stands")["key"].as_str().unwrap().to_owned();
        assert!(!machine.data_dir.join("storage").join(&key).exists(), "its file was not stored");
        assert!(said.contains("the answer was Deny"), "{said}");
        assert!(!said.contains("nothing was written"), "something was: {said}");
        assert!(said.contains(&key) && said.contains("without a file"), "the item made is named: {said}");
        assert!(said.contains("zotero_delete_attachment"), "and what to do with it: {said}");

        // The item is in the call's undo entry: undone later (allowed), it goes.
        machine.local.answer_dialogs(DialogAnswer::AlwaysAllow);
        let undo = json!({ "id": undo_id(&refused) });
        let undone = machine.call(&app, Grant::read_write("owner"), "zotero_undo", undo).await;
        ok(&undone);
        assert!(machine.local.simulator().item(LIB, &key).is_none(), "{undone}");
    }
}

/// Deny on the only dialog of a call: nothing changes, and the answer says the person refused it in Zotero.
#[tokio::test]
async fn a_denied_first_dialog_of_a_file_write_changes_nothing() {
    let machine = Machine::new(Flavour::Zotero10, "deny-file");
    machine.local.answer_dialogs(DialogAnswer::Deny);
    let app = machine.app(&[]);
    let version = machine.local.simulator().library_version(LIB);
    let pdf = zotero_mcp_core::testing::pdf_of_pages(&["Never stored"]);
    let put = json!({ "parentItemKey": PAPER, "base64Data": base64_of(&pdf), "filename": "denied.pdf" });
    let said = failure(&machine.call(&app, Grant::read_write("owner"), "zotero_put_attachment", put).await);
    assert!(said.contains("the answer was Deny: nothing was written"), "{said}");
    assert!(said.contains("Always Allow"), "{said}");
    assert_eq!(machine.local.simulator().library_version(LIB), version);
    assert_eq!(machine.local.dialogs_shown(), 1);
}

#[tokio::test]
async fn the_desktop_library_is_read_whole_without_a_mirror() {
    let machine = Machine::new(Flavour::Zotero10, "mirror");
    let mut app = machine.app(&[]);
    app.platform.mirror_db = Some(common::mirror_db());
    let result = machine.call(&app, Grant::read_write("owner"), "zotero_list_tags", json!({})).await;
    let out = ok(&result);
    assert!(out.get("mirror").is_none() && out.get("note").is_none(), "{out}");
    assert!(out["tags"].as_array().is_some_and(|tags| !tags.is_empty()), "{out}");
    let asked_deleted = machine
        .local
        .requests()
        .iter()
        .any(|request| request.target.contains("/deleted") || request.target.contains("since="));
    assert!(!asked_deleted, "no copy is kept in step with the local API");
}
