//! The undo journal and `zotero_undo` against the simulator (and the in-memory WebDAV folder): every write call
//! leaves one entry, and an undo puts the library back — a field edit, a creation, a trash, a note deleted for
//! good (created again with its content), a merge (the state after the undo equals the state before the merge
//! but for versions), a rename and a file replacement (the earlier archive back on WebDAV). An object changed
//! since is named and left alone; an undo is journalled and can be undone; a second undo is refused.

mod common;

use std::rc::Rc;

use common::dav::{bench, bench_with, Bench};
use common::*;
use serde_json::{json, Map, Value};
use zotero_mcp_server::auth::Grant;
use zotero_mcp_server::call::Session;
use zotero_sim::{LibraryRef, Simulator};

const LIB: LibraryRef = LibraryRef::User(DEMO_USER);
const PARENT: &str = "KPDKK5UT";
const ATTACHMENT: &str = "UN79YVS8";

async fn call(app: &zotero_mcp_server::app::App, tool: &str, arguments: Value) -> Value {
    let ctx = Session::new(Grant::read_write("owner"), app.config.clone(), app.platform.clone());
    zotero_mcp_server::tools::registry(&app.config).call_tool(&ctx, tool, arguments).await.expect("tool exists")
}

/// The id the answer's last line gives for undoing the call.
fn undo_id(result: &Value) -> String {
    let text = text(result);
    let line = text.lines().rev().find(|l| l.starts_with("Undo: zotero_undo")).unwrap_or_else(|| panic!("{text}"));
    line.split('"').nth(1).expect("an id in quotes").to_owned()
}

/// An item's data without what Zotero sets itself on every write.
fn fields(sim: &Simulator, lib: LibraryRef, key: &str) -> Map<String, Value> {
    let item = sim.item(lib, key).unwrap_or_else(|| panic!("{key} exists"));
    let mut data = item["data"].as_object().cloned().unwrap_or_default();
    for bookkeeping in ["version", "dateModified"] {
        data.remove(bookkeeping);
    }
    data
}

fn writes(sim: &Simulator) -> usize {
    sim.requests().iter().filter(|r| r.method != "GET").count()
}

#[tokio::test]
async fn a_field_edit_is_undone_listed_and_not_undone_twice() {
    let b = bench(false);
    let before = fields(&b.sim, LIB, PARENT);
    let edit = b.write("zotero_update_item", json!({ "keys": [PARENT], "fields": { "title": "A new title" } })).await;
    let id = undo_id(&edit);
    assert_eq!(fields(&b.sim, LIB, PARENT)["title"], "A new title");

    let listed = b.write("zotero_undo", json!({})).await;
    let entry = &ok(&listed)["entries"][0];
    assert_eq!(entry["id"], id.as_str());
    assert_eq!(entry["tool"], "zotero_update_item");
    assert_eq!(entry["summary"], "changed 1 item");
    assert_eq!(entry["objects"][0]["fields"], json!(["title"]));
    assert_eq!(entry["objects"][0]["title"], before["title"], "listed by the title it had");

    let undone = b.write("zotero_undo", json!({ "id": id })).await;
    assert_eq!(ok(&undone)["objects"][0]["outcome"], "restored", "{undone}");
    assert_eq!(fields(&b.sim, LIB, PARENT), before);

    let again = b.write("zotero_undo", json!({ "id": id })).await;
    let message = error_text(&again);
    assert!(message.contains("already undone") && message.contains("Nothing was changed"), "{message}");
}

#[tokio::test]
async fn a_creation_is_undone_by_deleting_what_was_created() {
    let b = bench(false);
    let created = b
        .write("zotero_create_items", json!({ "items": [{ "itemType": "book", "title": "Written by mistake" }] }))
        .await;
    let key = ok(&created)["created"][0].as_str().map(str::to_owned).unwrap_or_else(|| panic!("{created}"));
    assert!(b.sim.item(LIB, &key).is_some());
    let undone = b.write("zotero_undo", json!({ "id": undo_id(&created) })).await;
    assert_eq!(ok(&undone)["objects"][0]["outcome"], "removed", "{undone}");
    assert!(b.sim.item(LIB, &key).is_none(), "the book is gone");
}

#[tokio::test]
async fn undoing_many_creations_reads_them_once() {
    let b = bench(false);
    let items: Vec<Value> = (1..=3).map(|n| json!({ "itemType": "book", "title": format!("Book {n}") })).collect();
    let created = b.write("zotero_create_items", json!({ "items": items })).await;
    let before = b.sim.requests().len();
    let undone = b.write("zotero_undo", json!({ "id": undo_id(&created) })).await;
    let requests: Vec<String> = b.sim.requests()[before..].iter().map(|r| format!("{} {}", r.method, r.path)).collect();
    let reads = requests.iter().filter(|r| r.starts_with("GET")).count();
    let deletes = requests.iter().filter(|r| r.starts_with("DELETE")).count();
    // The second read lists what changed since the creations, the trash included: a note added to one of them
    // (Zotero's `numChildren` leaves out trashed ones) keeps it. None did here, so no children are listed.
    assert_eq!(
        (reads, deletes),
        (2, 3),
        "one read of the three and one of what changed since, then one version-checked DELETE each: {requests:?}"
    );
    assert!(ok(&undone)["objects"].as_array().unwrap().iter().all(|o| o["outcome"] == "removed"), "{undone}");
}

#[tokio::test]
async fn a_trash_is_undone_and_the_undo_itself_can_be_undone() {
    let b = bench(false);
    let trashed = b.write("zotero_delete_items", json!({ "keys": [PARENT] })).await;
    assert_eq!(b.sim.item(LIB, PARENT).unwrap()["data"]["deleted"], json!(1));
    let undone = b.write("zotero_undo", json!({ "id": undo_id(&trashed) })).await;
    assert_eq!(ok(&undone)["objects"][0]["outcome"], "restored", "{undone}");
    assert!(b.sim.item(LIB, PARENT).unwrap()["data"].get("deleted").is_none(), "out of the trash");

    // The undo is an entry of its own, saying what it undid; undoing it puts the item back in the trash.
    let listed = b.write("zotero_undo", json!({ "limit": 5 })).await;
    let entries = ok(&listed)["entries"].as_array().unwrap().clone();
    let undo_entry = entries.iter().find(|e| e["tool"] == "zotero_undo").expect("the undo is listed");
    assert_eq!(undo_entry["undoes"], undo_id(&trashed).as_str());
    let original = entries.iter().find(|e| e["tool"] == "zotero_delete_items").unwrap();
    assert_eq!(original["undoneBy"], undo_entry["id"]);
    let redo = b.write("zotero_undo", json!({ "id": undo_entry["id"] })).await;
    assert_eq!(ok(&redo)["objects"][0]["outcome"], "restored", "{redo}");
    assert_eq!(b.sim.item(LIB, PARENT).unwrap()["data"]["deleted"], json!(1));
}

#[tokio::test]
async fn a_note_deleted_for_good_is_created_again_with_its_content() {
    let b = bench(false);
    let note = b.sim.insert_item(
        LIB,
        json!({ "itemType": "note", "note": "<p>Careful reading notes</p>", "parentItem": PARENT,
                "tags": [{ "tag": "mine" }] }),
    );
    let before = fields(&b.sim, LIB, &note);
    let deleted = b.write("zotero_delete_items", json!({ "keys": [note], "permanent": true })).await;
    assert!(b.sim.item(LIB, &note).is_none());
    let undone = b.write("zotero_undo", json!({ "id": undo_id(&deleted) })).await;
    assert_eq!(ok(&undone)["objects"][0]["outcome"], "recreated", "{undone}");
    let mut after = fields(&b.sim, LIB, &note);
    after.remove("dateAdded");
    let mut expected = before;
    expected.remove("dateAdded");
    assert_eq!(after, expected, "the same note under the same key");
}

#[tokio::test]
async fn an_item_deleted_for_good_comes_back_with_its_children() {
    let b = bench(false);
    let parent = b.sim.insert_item(LIB, json!({ "itemType": "book", "title": "A book with notes" }));
    let child =
        b.sim.insert_item(LIB, json!({ "itemType": "note", "note": "<p>On chapter 2</p>", "parentItem": parent }));
    let deleted = b.write("zotero_delete_items", json!({ "keys": [parent], "permanent": true })).await;
    assert!(b.sim.item(LIB, &parent).is_none() && b.sim.item(LIB, &child).is_none(), "Zotero deletes the child too");
    let undone = b.write("zotero_undo", json!({ "id": undo_id(&deleted) })).await;
    let outcomes: Vec<&str> =
        ok(&undone)["objects"].as_array().unwrap().iter().map(|o| o["outcome"].as_str().unwrap()).collect();
    assert_eq!(outcomes, ["recreated", "recreated"], "{undone}");
    assert_eq!(b.sim.item(LIB, &child).unwrap()["data"]["parentItem"], parent.as_str());
    assert_eq!(b.sim.item(LIB, &child).unwrap()["data"]["note"], "<p>On chapter 2</p>");
}

/// Zotero deletes an item's trashed children with it too (`numChildren` leaves them out): they are recorded,
/// and come back, still in the trash.
#[tokio::test]
async fn an_item_deleted_for_good_comes_back_with_its_trashed_children() {
    let b = bench(false);
    let parent = b.sim.insert_item(LIB, json!({ "itemType": "book", "title": "A book with a trashed note" }));
    let child = b
        .sim
        .insert_item(LIB, json!({ "itemType": "note", "note": "<p>Trashed</p>", "parentItem": parent, "deleted": 1 }));
    let deleted = b.write("zotero_delete_items", json!({ "keys": [parent], "permanent": true })).await;
    assert!(b.sim.item(LIB, &child).is_none(), "Zotero deletes the trashed child too: {deleted}");
    let undone = b.write("zotero_undo", json!({ "id": undo_id(&deleted) })).await;
    ok(&undone);
    let back = b.sim.item(LIB, &child).unwrap_or_else(|| panic!("the trashed note is back: {undone}"));
    assert_eq!(back["data"]["note"], "<p>Trashed</p>");
    assert_eq!(back["data"]["deleted"], json!(1), "still in the trash");
}

#[tokio::test]
async fn an_object_changed_since_is_named_and_left_alone() {
    let b = bench(false);
    let edit = b.write("zotero_update_item", json!({ "keys": [PARENT], "fields": { "title": "Ours" } })).await;
    // Someone edits it afterwards (Zotero Desktop, another device).
    let later = b.write("zotero_update_item", json!({ "keys": [PARENT], "fields": { "title": "Theirs" } })).await;
    assert!(!undo_id(&later).is_empty());
    let sent = writes(&b.sim);
    let undone = b.write("zotero_undo", json!({ "id": undo_id(&edit) })).await;
    let out = ok(&undone);
    assert_eq!(out["objects"][0]["outcome"], "changedSince", "{undone}");
    assert_eq!(out["objects"][0]["key"], PARENT);
    assert!(out["notes"][0].as_str().unwrap().contains(PARENT), "the message names it: {undone}");
    assert!(text(&undone).contains("LEFT AS IT IS"), "{}", text(&undone));
    assert_eq!(fields(&b.sim, LIB, PARENT)["title"], "Theirs", "never overwritten");
    assert_eq!(writes(&b.sim), sent + 1, "one version-checked write, refused by Zotero");
}

/// Two copies of one article, the poorer with a note, a tag and a collection (as tools_duplicates.rs).
fn twins(sim: &Simulator) -> [String; 4] {
    let collection = sim.insert_collection(LIB, json!({"name": "Reading"}));
    let rich = sim.insert_item(
        LIB,
        json!({"itemType": "journalArticle", "title": "Urban heat islands and street trees", "date": "2020-03-01",
               "DOI": "10.1016/j.uclim.2020.100001", "pages": "1-20",
               "creators": [{"creatorType": "author", "firstName": "Ana", "lastName": "Silva"}],
               "tags": [{"tag": "heat"}]}),
    );
    let poor = sim.insert_item(
        LIB,
        json!({"itemType": "journalArticle", "title": "Urban Heat Islands and Street Trees.", "date": "March 2020",
               "DOI": "https://doi.org/10.1016/J.UCLIM.2020.100001", "volume": "31",
               "creators": [{"creatorType": "author", "firstName": "A.", "lastName": "Silva"}],
               "tags": [{"tag": "to-read", "type": 1}], "collections": [collection]}),
    );
    let note = sim.insert_item(LIB, json!({"itemType": "note", "note": "<p>My notes</p>", "parentItem": poor}));
    [rich, poor, note, collection]
}

#[tokio::test]
async fn a_merge_undone_leaves_the_library_as_before_but_for_versions() {
    let sim = Rc::new(Simulator::new());
    sim.add_user(DEMO_USER, DEMO_KEY, true);
    let app = app_with_sim(sim.clone());
    let [rich, poor, note, collection] = twins(&sim);
    let snapshot = |sim: &Simulator| {
        let mut state: Vec<Map<String, Value>> = [&rich, &poor, &note].iter().map(|k| fields(sim, LIB, k)).collect();
        let mut folder = sim.collection(LIB, &collection).unwrap()["data"].as_object().cloned().unwrap_or_default();
        folder.remove("version");
        state.push(folder);
        state
    };
    let before = snapshot(&sim);
    let merged = call(&app, "zotero_find_duplicates", json!({ "mergeKeys": [rich, poor], "merge": true })).await;
    assert_eq!(ok(&merged)["groups"][0]["merged"], true, "{merged}");
    assert_ne!(snapshot(&sim), before);

    let undone = call(&app, "zotero_undo", json!({ "id": undo_id(&merged) })).await;
    for object in ok(&undone)["objects"].as_array().unwrap() {
        assert_eq!(object["outcome"], "restored", "{undone}");
    }
    assert_eq!(snapshot(&sim), before, "children back, the kept item's fields, tags and relations, the copy untrashed");
    assert_eq!(sim.item(LIB, &poor).unwrap()["meta"]["numChildren"], 1);
}

fn stored_pdf(b: &Bench) -> Vec<u8> {
    let item = b.sim.item(LIB, ATTACHMENT).expect("the demo attachment");
    let name = item["data"]["filename"].as_str().expect("a file name").to_owned();
    let pdf = zotero_mcp_core::testing::pdf_of_pages(&["The earlier file"]);
    b.upload(ATTACHMENT, &name, &pdf);
    b.folder.files.borrow_mut().insert(
        format!("/files/zotero/{ATTACHMENT}.prop"),
        b"<properties version=\"1\"><mtime>1</mtime><hash>x</hash></properties>".to_vec(),
    );
    pdf
}

#[tokio::test]
async fn a_file_replacement_on_webdav_is_undone_with_the_earlier_archive() {
    let b = bench(true);
    stored_pdf(&b);
    let (zip, prop) = (b.file(&format!("{ATTACHMENT}.zip")), b.file(&format!("{ATTACHMENT}.prop")));
    let item_before = fields(&b.sim, LIB, ATTACHMENT);
    let new = zotero_mcp_core::testing::pdf_of_pages(&["The new file"]);
    let replaced = b
        .write("zotero_put_attachment", json!({ "replaceAttachmentKey": ATTACHMENT, "base64Data": files::b64(&new) }))
        .await;
    assert_ne!(b.file(&format!("{ATTACHMENT}.zip")), zip);
    let listed = b.write("zotero_undo", json!({})).await;
    assert!(ok(&listed)["entries"][0]["files"][0].as_str().unwrap().contains("kept"), "{listed}");

    let undone = b.write("zotero_undo", json!({ "id": undo_id(&replaced) })).await;
    let out = ok(&undone);
    assert_eq!(out["objects"][0]["outcome"], "restored", "{undone}");
    assert!(out["objects"][0]["detail"].as_str().unwrap().contains("back on WebDAV"), "{undone}");
    assert_eq!(b.file(&format!("{ATTACHMENT}.zip")), zip, "the earlier archive");
    assert_eq!(b.file(&format!("{ATTACHMENT}.prop")), prop);
    assert_eq!(fields(&b.sim, LIB, ATTACHMENT), item_before, "md5 and mtime as before");
}

#[tokio::test]
async fn a_rename_is_undone_file_and_item() {
    let b = bench(true);
    stored_pdf(&b);
    let zip = b.file(&format!("{ATTACHMENT}.zip"));
    let item_before = fields(&b.sim, LIB, ATTACHMENT);
    let renamed = b
        .write(
            "zotero_rename_attachments",
            json!({ "itemKeys": [PARENT], "template": "{{ year }} renamed", "apply": true }),
        )
        .await;
    assert_eq!(ok(&renamed)["planned"][0]["status"], "renamed", "{renamed}");
    assert_ne!(fields(&b.sim, LIB, ATTACHMENT)["filename"], item_before["filename"]);
    let undone = b.write("zotero_undo", json!({ "id": undo_id(&renamed) })).await;
    assert_eq!(ok(&undone)["objects"][0]["outcome"], "restored", "{undone}");
    assert_eq!(fields(&b.sim, LIB, ATTACHMENT), item_before);
    assert_eq!(b.file(&format!("{ATTACHMENT}.zip")), zip, "the archive holds the file under its old name again");
}

#[tokio::test]
async fn a_replacement_on_zotero_storage_says_the_earlier_file_is_not_kept() {
    let b = bench(false);
    let new = zotero_mcp_core::testing::pdf_of_pages(&["The new file"]);
    let replaced = b
        .write("zotero_put_attachment", json!({ "replaceAttachmentKey": ATTACHMENT, "base64Data": files::b64(&new) }))
        .await;
    assert!(ok(&replaced)["replaced"].as_bool().unwrap_or(false), "{replaced}");
    let listed = b.write("zotero_undo", json!({})).await;
    let limits = ok(&listed)["entries"][0]["limits"].to_string();
    assert!(limits.contains("Zotero Storage holds one file"), "{listed}");
}

#[tokio::test]
async fn a_permanently_deleted_attachment_comes_back_with_its_file() {
    let b = bench(true);
    let pdf = stored_pdf(&b);
    let zip = b.file(&format!("{ATTACHMENT}.zip"));
    let deleted = b.write("zotero_delete_attachment", json!({ "attachmentKey": ATTACHMENT, "permanent": true })).await;
    assert!(b.file(&format!("{ATTACHMENT}.zip")).is_none());
    let undone = b.write("zotero_undo", json!({ "id": undo_id(&deleted) })).await;
    assert_eq!(ok(&undone)["objects"][0]["outcome"], "recreated", "{undone}");
    assert_eq!(b.file(&format!("{ATTACHMENT}.zip")), zip);
    let read = b.write("zotero_read_attachment", json!({ "itemKey": ATTACHMENT })).await;
    assert!(text(&read).contains("The earlier file"), "{}", text(&read));
    assert!(!pdf.is_empty());
}

#[tokio::test]
async fn the_journal_is_per_user_needs_the_write_scope_and_can_be_off() {
    let b = bench(false);
    b.write("zotero_update_item", json!({ "keys": [PARENT], "fields": { "title": "Mine" } })).await;
    let other = b.tool("zotero_undo", Grant::read_write("someone-else"), json!({})).await;
    assert_eq!(ok(&other)["entries"], json!([]), "another user's journal is empty");
    let read_only = b.tool("zotero_undo", Grant::read_only("owner"), json!({})).await;
    assert!(error_text(&read_only).contains("zotero:write"), "{read_only}");
    let bad = b.write("zotero_undo", json!({ "id": "not-an-id" })).await;
    assert!(error_text(&bad).contains("id"), "{bad}");

    let off = bench_with(false, &[("JOURNAL_DAYS", "0")]);
    let edit = off.write("zotero_update_item", json!({ "keys": [PARENT], "fields": { "title": "Mine" } })).await;
    assert!(!text(&edit).contains("zotero_undo"), "{}", text(&edit));
    let listed = off.write("zotero_undo", json!({})).await;
    assert!(error_text(&listed).contains("JOURNAL_DAYS"), "{listed}");
}

#[tokio::test]
async fn an_expired_entry_goes_with_the_files_it_kept() {
    let mut b = bench_with(true, &[("JOURNAL_DAYS", "1")]);
    // A clock the test moves, shared with the KV (which expires values by it).
    let (platform, clock, _) = zotero_mcp_core::testing::memory_platform(1_800_000_000_000);
    b.app.platform.clock = platform.clock.clone();
    b.app.platform.cache_kv = platform.cache_kv.clone();
    stored_pdf(&b);
    let new = zotero_mcp_core::testing::pdf_of_pages(&["The new file"]);
    let replaced = b
        .write("zotero_put_attachment", json!({ "replaceAttachmentKey": ATTACHMENT, "base64Data": files::b64(&new) }))
        .await;
    let old_id = undo_id(&replaced);
    let kept = |b: &Bench| b.folder.files.borrow().keys().filter(|name| name.contains(".undo-")).count();
    assert_eq!(kept(&b), 2, "the earlier .zip and .prop are kept");

    clock.advance_secs(2 * 86_400);
    let listed = b.write("zotero_undo", json!({})).await;
    assert_eq!(ok(&listed)["entries"], json!([]), "past JOURNAL_DAYS an entry is no longer offered");
    let edit = b.write("zotero_update_item", json!({ "keys": [PARENT], "fields": { "title": "Later" } })).await;
    assert_eq!(kept(&b), 0, "the next write removed the expired entry's kept files");
    let gone = b.write("zotero_undo", json!({ "id": old_id })).await;
    assert!(error_text(&gone).contains("expired"), "{gone}");
    let listed = b.write("zotero_undo", json!({})).await;
    assert_eq!(ok(&listed)["entries"][0]["id"], undo_id(&edit).as_str());
}

/// An id's time part, as the journal writes it.
fn base36(mut n: u64) -> String {
    let digits = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut out = Vec::new();
    while {
        out.push(digits[(n % 36) as usize]);
        n /= 36;
        n > 0
    } {}
    out.reverse();
    String::from_utf8(out).unwrap()
}

#[tokio::test]
async fn an_entry_of_an_older_version_without_a_route_is_neither_listed_nor_undone_and_goes_in_time() {
    use zotero_mcp_core::platform::KvWrite;
    let b = bench(false);
    let kv = b.app.platform.cache_kv.clone();
    // As versions before routes wrote them: `journal:<user>:<countdown>-<random>`, no route in key or entry.
    let legacy = |at_ms: u64, random: &str| {
        let id = format!("{}-{random}", base36(at_ms));
        let key = format!("journal:owner:{:013}-{random}", 9_999_999_999_999 - at_ms);
        let entry = json!({ "id": id, "atMs": at_ms, "tool": "zotero_update_item", "changes": [] });
        (id, key, entry.to_string())
    };
    let (kept_id, kept_key, kept) = legacy(1_799_999_000_000, "abcd");
    let (_, expired_key, expired) = legacy(1_799_998_000_000, "0123");
    kv.put(&kept_key, &kept, KvWrite::ExpiresIn(30 * 86_400)).await.unwrap();
    // Past its journal time (KV keeps an entry two days longer, for the prune).
    kv.put(&expired_key, &expired, KvWrite::ExpiresIn(60)).await.unwrap();

    assert_eq!(ok(&b.write("zotero_undo", json!({})).await)["entries"], json!([]), "not listed");
    let said = error_text(&b.write("zotero_undo", json!({ "id": kept_id })).await);
    assert!(said.contains("earlier version of this server") && said.contains("Nothing was changed"), "{said}");
    assert_eq!(writes(&b.sim), 0);

    // A write prunes what is past its time, old layout included; the rest stays until then.
    b.write("zotero_update_item", json!({ "keys": [PARENT], "fields": { "extra": "pruned" } })).await;
    assert_eq!(kv.get(&expired_key).await.unwrap(), None);
    assert!(kv.get(&kept_key).await.unwrap().is_some());
}

/// Calls `tool` as `user`, on a connection of its own.
async fn call_by(b: &Bench, user: &str, tool: &str, arguments: Value) -> Value {
    let ctx = Session::new(Grant::read_write(user), b.app.config.clone(), b.app.platform.clone());
    zotero_mcp_server::tools::registry(&b.app.config).call_tool(&ctx, tool, arguments).await.expect("tool exists")
}

#[tokio::test]
async fn the_journal_is_the_operators_shared_by_every_connection_and_no_one_elses() {
    let b = bench(false);
    let edit = json!({ "keys": [PARENT], "fields": { "extra": "from one client" } });
    let id = undo_id(&call_by(&b, "owner", "zotero_update_item", edit).await);
    // A grant names the operator, not the client holding it: another connection of the same operator (another
    // OAuth client, another token) lists the change and may undo it.
    let listed = call_by(&b, "owner", "zotero_undo", json!({})).await;
    assert_eq!(ok(&listed)["entries"][0]["id"], id.as_str());
    // Another user's journal is another.
    assert_eq!(ok(&call_by(&b, "someone-else", "zotero_undo", json!({})).await)["entries"], json!([]));
    let refused = error_text(&call_by(&b, "someone-else", "zotero_undo", json!({ "id": id })).await);
    assert!(refused.contains("holds no change"), "{refused}");
    assert_eq!(b.sim.item(LIB, PARENT).unwrap()["data"]["extra"], "from one client");
}

/// The keys a `zotero_create_items` call created, in order.
fn created_keys(result: &Value) -> Vec<String> {
    let created = ok(result)["created"].as_array().unwrap_or_else(|| panic!("{result}")).clone();
    created.iter().map(|key| key.as_str().expect("a key").to_owned()).collect()
}

fn outcome_of<'a>(undone: &'a Value, key: &str) -> &'a Value {
    let objects = ok(undone)["objects"].as_array().unwrap_or_else(|| panic!("{undone}"));
    objects.iter().find(|o| o["key"] == key).unwrap_or_else(|| panic!("{key} in {undone}"))
}

#[tokio::test]
async fn a_created_item_that_got_notes_since_is_kept_with_them_and_they_are_named() {
    let b = bench(false);
    let items = json!([
        { "itemType": "book", "title": "Gets a note later" },
        { "itemType": "book", "title": "Gets a note later, then trashed" },
        { "itemType": "book", "title": "Stays bare" },
    ]);
    let created = b.write("zotero_create_items", json!({ "items": items })).await;
    let keys = created_keys(&created);
    // The person adds a note to the first and one to the second which they then trash. Neither changes the
    // parent's version, so the version-checked DELETE alone would take both notes with it.
    let note =
        b.sim.insert_item(LIB, json!({ "itemType": "note", "note": "<p>My reading notes</p>", "parentItem": keys[0] }));
    let binned = b
        .sim
        .insert_item(LIB, json!({ "itemType": "note", "note": "<p>Binned</p>", "parentItem": keys[1], "deleted": 1 }));
    assert_eq!(b.sim.item(LIB, &keys[1]).unwrap()["meta"]["numChildren"], 0, "Zotero does not count a trashed child");

    let undone = b.write("zotero_undo", json!({ "id": undo_id(&created) })).await;
    let kept = outcome_of(&undone, &keys[0]);
    assert_eq!(kept["outcome"], "changedSince", "{undone}");
    let detail = kept["detail"].as_str().unwrap_or_default();
    assert!(detail.contains(&note) && detail.contains("My reading notes"), "names the note: {detail}");
    assert!(detail.contains("zotero_delete_items"), "says what to do: {detail}");
    let kept_trashed = outcome_of(&undone, &keys[1]);
    assert_eq!(kept_trashed["outcome"], "changedSince", "{undone}");
    assert!(kept_trashed["detail"].as_str().unwrap_or_default().contains("in the trash"), "{undone}");
    assert_eq!(outcome_of(&undone, &keys[2])["outcome"], "removed", "{undone}");
    assert!(ok(&undone)["notes"][0].as_str().unwrap_or_default().contains(&keys[0]), "{undone}");
    for key in [&keys[0], &keys[1], &note, &binned] {
        assert!(b.sim.item(LIB, key).is_some(), "{key} is still there");
    }
    assert!(b.sim.item(LIB, &keys[2]).is_none(), "the bare book is gone");
}

#[tokio::test]
async fn a_created_item_goes_once_the_notes_added_by_later_calls_are_undone() {
    let b = bench(false);
    let created =
        b.write("zotero_create_items", json!({ "items": [{ "itemType": "book", "title": "Annotated" }] })).await;
    let key = created_keys(&created).remove(0);
    let noted = b.write("zotero_notes", json!({ "action": "create", "itemKey": key, "note": "A later note" })).await;
    let undone_note = b.write("zotero_undo", json!({ "id": undo_id(&noted) })).await;
    assert_eq!(ok(&undone_note)["objects"][0]["outcome"], "removed", "{undone_note}");
    let undone = b.write("zotero_undo", json!({ "id": undo_id(&created) })).await;
    assert_eq!(outcome_of(&undone, &key)["outcome"], "removed", "{undone}");
    assert!(b.sim.item(LIB, &key).is_none());
}

#[tokio::test]
async fn a_created_item_trashed_since_is_left_in_the_trash() {
    let b = bench(false);
    let created = b.write("zotero_create_items", json!({ "items": [{ "itemType": "book", "title": "Binned" }] })).await;
    let key = created_keys(&created).remove(0);
    b.write("zotero_delete_items", json!({ "keys": [key] })).await;
    let undone = b.write("zotero_undo", json!({ "id": undo_id(&created) })).await;
    assert_eq!(outcome_of(&undone, &key)["outcome"], "changedSince", "{undone}");
    assert_eq!(b.sim.item(LIB, &key).unwrap()["data"]["deleted"], json!(1), "still in the trash, not deleted");
}

#[tokio::test]
async fn an_item_deleted_for_good_and_made_again_since_is_not_overwritten() {
    let b = bench(false);
    let note =
        b.sim.insert_item(LIB, json!({ "itemType": "note", "note": "<p>First words</p>", "parentItem": PARENT }));
    let deleted = b.write("zotero_delete_items", json!({ "keys": [note], "permanent": true })).await;
    // Another device syncs an item back under the same key.
    b.sim.insert_item(LIB, json!({ "key": note, "itemType": "note", "note": "<p>Theirs</p>", "parentItem": PARENT }));
    let undone = b.write("zotero_undo", json!({ "id": undo_id(&deleted) })).await;
    assert_eq!(outcome_of(&undone, &note)["outcome"], "changedSince", "{undone}");
    assert_eq!(b.sim.item(LIB, &note).unwrap()["data"]["note"], "<p>Theirs</p>", "never overwritten");
}

/// `CACHE_KV` refusing the writes the test names in `refused`.
fn refusing(b: &mut Bench) -> Rc<common::kv::InterposedKv> {
    let kv = common::kv::InterposedKv::over(b.app.platform.cache_kv.clone());
    b.app.platform.cache_kv = kv.clone();
    kv
}

#[tokio::test]
async fn a_change_the_journal_cannot_keep_says_it_cannot_be_undone() {
    let mut b = bench(false);
    let kv = refusing(&mut b);
    kv.refused.borrow_mut().push("journal:".into());
    let edit = b.write("zotero_update_item", json!({ "keys": [PARENT], "fields": { "title": "Unrecorded" } })).await;
    let said = text(&edit);
    assert!(said.contains("could not be recorded for undo") && said.contains("cannot turn it back"), "{said}");
    assert!(!said.contains("Undo: zotero_undo"), "no id is offered: {said}");
    assert_eq!(fields(&b.sim, LIB, PARENT)["title"], "Unrecorded", "the change itself was made");
}

#[tokio::test]
async fn an_undo_that_cannot_mark_its_entry_says_not_to_undo_it_twice() {
    let mut b = bench(false);
    let kv = refusing(&mut b);
    let before = fields(&b.sim, LIB, PARENT);
    let edit = b.write("zotero_update_item", json!({ "keys": [PARENT], "fields": { "title": "Ours" } })).await;
    let id = undo_id(&edit);
    // Entry keys end in the id's random part: only the original entry's key is refused from now on.
    let random = id.rsplit('-').next().unwrap_or_default().to_owned();
    kv.refused.borrow_mut().push(format!("-{random}"));
    let undone = b.write("zotero_undo", json!({ "id": id })).await;
    assert_eq!(ok(&undone)["objects"][0]["outcome"], "restored", "{undone}");
    let notes = ok(&undone)["notes"].to_string();
    assert!(notes.contains("could not mark") && notes.contains("do not undo it twice"), "{undone}");
    assert_eq!(fields(&b.sim, LIB, PARENT), before);
}

// Every branch of the undo's file restoration (journal::undo::restore_files and WebDavWriter::restore_kept), on
// a replacement of ATTACHMENT's file on WebDAV unless said otherwise.

/// Replaces ATTACHMENT's stored file on WebDAV with a new one; returns the call's answer and the earlier .zip.
async fn replace_on_webdav(b: &Bench) -> (Value, Option<Vec<u8>>) {
    stored_pdf(b);
    let zip = b.file(&format!("{ATTACHMENT}.zip"));
    let new = zotero_mcp_core::testing::pdf_of_pages(&["The new file"]);
    let replaced = b
        .write("zotero_put_attachment", json!({ "replaceAttachmentKey": ATTACHMENT, "base64Data": files::b64(&new) }))
        .await;
    assert!(ok(&replaced)["replaced"].as_bool().unwrap_or(false), "{replaced}");
    (replaced, zip)
}

fn notes_of(undone: &Value) -> String {
    ok(undone)["notes"].to_string()
}

#[tokio::test]
async fn a_file_whose_attachment_changed_since_stays_as_it_is_with_the_earlier_one_kept() {
    let b = bench(true);
    let (replaced, _) = replace_on_webdav(&b).await;
    let now = b.file(&format!("{ATTACHMENT}.zip"));
    // The person edits the attachment in Zotero after the call.
    let retitle = json!({ "keys": [ATTACHMENT], "fields": { "title": "Retitled since" } });
    ok(&b.write("zotero_update_item", retitle).await);
    let undone = b.write("zotero_undo", json!({ "id": undo_id(&replaced) })).await;
    assert_eq!(outcome_of(&undone, ATTACHMENT)["outcome"], "changedSince", "{undone}");
    assert!(notes_of(&undone).contains("left where it is kept, like its attachment"), "{undone}");
    assert_eq!(b.file(&format!("{ATTACHMENT}.zip")), now, "the file there now is not overwritten");
}

#[tokio::test]
async fn a_file_kept_on_webdav_is_not_put_back_once_webdav_is_not_the_store() {
    let mut b = bench(true);
    let (replaced, _) = replace_on_webdav(&b).await;
    let now = b.file(&format!("{ATTACHMENT}.zip"));
    let mut config = (*b.app.config).clone();
    config.webdav = None;
    b.app.config = Rc::new(config);
    let undone = b.write("zotero_undo", json!({ "id": undo_id(&replaced) })).await;
    assert!(notes_of(&undone).contains("WebDAV is not this library's store now"), "{undone}");
    assert_eq!(b.file(&format!("{ATTACHMENT}.zip")), now, "nothing was written to WebDAV");
}

#[tokio::test]
async fn a_kept_file_gone_from_webdav_is_said_not_put_back() {
    let b = bench(true);
    let (replaced, _) = replace_on_webdav(&b).await;
    let now = b.file(&format!("{ATTACHMENT}.zip"));
    b.folder.files.borrow_mut().retain(|name, _| !name.contains(".undo-"));
    let undone = b.write("zotero_undo", json!({ "id": undo_id(&replaced) })).await;
    assert!(
        notes_of(&undone).contains("kept copy of the file of") && notes_of(&undone).contains("is gone"),
        "{undone}"
    );
    assert_eq!(b.file(&format!("{ATTACHMENT}.zip")), now);
}

#[tokio::test]
async fn a_webdav_failing_while_putting_a_file_back_is_said() {
    let b = bench(true);
    let (replaced, earlier) = replace_on_webdav(&b).await;
    // Keeping the file there now succeeds; copying the kept archive back fails.
    b.fail("COPY", &format!("{ATTACHMENT}.zip.undo-"), 403, 1);
    let undone = b.write("zotero_undo", json!({ "id": undo_id(&replaced) })).await;
    let notes = notes_of(&undone);
    assert!(notes.contains(&format!("The file of {ATTACHMENT} could not be put back")), "{undone}");
    assert_ne!(b.file(&format!("{ATTACHMENT}.zip")), earlier, "not put back");
}

/// Zotero Desktop trusts a `.prop`'s hash: the earlier archive under the newer file's `.prop` would pass for the
/// newer file. When the `.prop` cannot be put back, the archive there before goes back too.
#[tokio::test]
async fn a_webdav_failing_between_the_archive_and_its_prop_leaves_no_half_restored_file() {
    let b = bench(true);
    let (replaced, _) = replace_on_webdav(&b).await;
    let (zip_now, prop_now) = (b.file(&format!("{ATTACHMENT}.zip")), b.file(&format!("{ATTACHMENT}.prop")));
    b.fail("COPY", &format!("{ATTACHMENT}.prop.undo-"), 403, 1);
    let undone = b.write("zotero_undo", json!({ "id": undo_id(&replaced) })).await;
    assert!(notes_of(&undone).contains(&format!("The file of {ATTACHMENT} could not be put back")), "{undone}");
    assert_eq!(b.file(&format!("{ATTACHMENT}.zip")), zip_now, "the archive matches its .prop again: {undone}");
    assert_eq!(b.file(&format!("{ATTACHMENT}.prop")), prop_now);
}

/// The last step of a WebDAV replacement, recording md5/mtime on the item, failed: the entry holds the file
/// change and no item change, so nothing of the item guards the file. Zotero Desktop then stored another file.
#[tokio::test]
async fn a_file_replaced_since_by_someone_else_is_not_overwritten() {
    let b = bench(true);
    stored_pdf(&b);
    b.fail("PATCH", &format!("/items/{ATTACHMENT}"), 500, 2);
    let new = zotero_mcp_core::testing::pdf_of_pages(&["The new file"]);
    let replaced = b
        .write("zotero_put_attachment", json!({ "replaceAttachmentKey": ATTACHMENT, "base64Data": files::b64(&new) }))
        .await;
    assert_eq!(ok(&replaced)["recorded"], false, "{replaced}");
    // Someone stores a third file since (Zotero Desktop's upload: the archive and its .prop).
    let theirs = zotero_mcp_core::testing::pdf_of_pages(&["Someone else's file"]);
    let name = fields(&b.sim, LIB, ATTACHMENT)["filename"].as_str().unwrap().to_owned();
    b.upload(ATTACHMENT, &name, &theirs);
    let props = zotero_mcp_core::webdav::FileProps { mtime_ms: 1, md5: zotero_mcp_core::webdav::md5_hex(&theirs) };
    b.folder.files.borrow_mut().insert(format!("/files/zotero/{ATTACHMENT}.prop"), props.render().into_bytes());
    let (zip, prop) = (b.file(&format!("{ATTACHMENT}.zip")), b.file(&format!("{ATTACHMENT}.prop")));

    let undone = b.write("zotero_undo", json!({ "id": undo_id(&replaced) })).await;
    assert_eq!(b.file(&format!("{ATTACHMENT}.zip")), zip, "their file stands: {undone}");
    assert_eq!(b.file(&format!("{ATTACHMENT}.prop")), prop);
    assert!(notes_of(&undone).contains("changed since"), "{undone}");
}

/// With no item change in the entry (the md5 was not recorded), the file alone is put back, and said.
#[tokio::test]
async fn a_file_whose_record_failed_is_still_put_back_and_said() {
    let b = bench(true);
    let earlier = stored_pdf(&b);
    let zip = b.file(&format!("{ATTACHMENT}.zip"));
    b.fail("PATCH", &format!("/items/{ATTACHMENT}"), 500, 2);
    let new = zotero_mcp_core::testing::pdf_of_pages(&["The new file"]);
    let replaced = b
        .write("zotero_put_attachment", json!({ "replaceAttachmentKey": ATTACHMENT, "base64Data": files::b64(&new) }))
        .await;
    assert_eq!(ok(&replaced)["recorded"], false, "{replaced}");
    let undone = b.write("zotero_undo", json!({ "id": undo_id(&replaced) })).await;
    assert!(notes_of(&undone).contains(&format!("the earlier file of {ATTACHMENT} is back on WebDAV")), "{undone}");
    assert_eq!(b.file(&format!("{ATTACHMENT}.zip")), zip);
    assert!(!earlier.is_empty());
}

/// A new attachment's file on WebDAV goes with the item its undo deletes: no archive is left behind that no
/// item refers to.
#[tokio::test]
async fn a_file_created_by_the_call_goes_with_its_attachment() {
    let b = bench(true);
    let pdf = zotero_mcp_core::testing::pdf_of_pages(&["A new file"]);
    let put = json!({ "parentItemKey": PARENT, "base64Data": files::b64(&pdf), "filename": "new.pdf" });
    let created = b.write("zotero_put_attachment", put).await;
    let key = ok(&created)["attachmentKey"].as_str().unwrap().to_owned();
    assert!(b.file(&format!("{key}.zip")).is_some());
    let undone = b.write("zotero_undo", json!({ "id": undo_id(&created) })).await;
    assert_eq!(outcome_of(&undone, &key)["outcome"], "removed", "{undone}");
    assert!(b.sim.item(LIB, &key).is_none());
    assert_eq!((b.file(&format!("{key}.zip")), b.file(&format!("{key}.prop"))), (None, None), "{undone}");
}
