//! The simulated server's state: libraries with their objects, versions, delete log and full text, and the API
//! keys that may reach them.
//!
//! Everything a response shows is derived from here at read time (child counts, reverse relations, tag counts),
//! as the real server derives it from its tables, so a write is visible in every listing at once.

use std::any::Any;
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::sync::Arc;

use serde_json::{json, Map, Value};

use crate::dates;
use crate::item::{item_uri, relation_values, ItemData, Tag};
use crate::keys::{Grant, KeyGen};
use crate::saved_search::{self, SearchRecord};
use crate::schema::Schema;
use crate::storage::{Storage, StoredFile, DEFAULT_QUOTA_MB};
use crate::{Fault, FaultMatch, LibraryRef, RecordedRequest};

pub const API_BASE: &str = "https://api.zotero.org";
pub const WWW_BASE: &str = "https://www.zotero.org";

/// Zotero's URL slug for a username: lowercase, spaces to underscores, other characters dropped.
pub fn slugify(name: &str) -> String {
    name.trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, ' ' | '.' | '_' | '-'))
        .map(|c| if c == ' ' { '_' } else { c })
        .collect()
}

/// What identifies one state of a library for [`Library::cached`]: any change moves one of these.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    version: u64,
    seq: u64,
    items: usize,
    collections: usize,
    changes: u64,
}

/// What a listing knows of the whole library, so that each object it shows need not be compared with every
/// item (the index in crates/sim/src/derived.rs).
pub trait LibraryFacts {
    /// How many children outside the trash the item has.
    fn children_of(&self, item: &str) -> usize;
    /// Keys of the other items naming this item URI in their `dc:relation`, in key order.
    fn related_from(&self, uri: &str) -> Vec<&str>;
    /// How many items outside the trash are directly in the collection, and how many subcollections it has.
    fn collection_counts(&self, collection: &str) -> (usize, usize);
}

/// A stored item.
#[derive(Debug, Clone)]
pub struct ItemRecord {
    pub key: String,
    pub version: u64,
    /// Creation order; stands in for Zotero's numeric item ID in sort tie-breaks.
    pub seq: u64,
    pub data: ItemData,
    /// The user who created it (shown as `meta.createdByUser` in group libraries).
    pub created_by: Option<(u64, String)>,
}

/// A collection's editable properties.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CollectionData {
    pub name: String,
    pub parent: Option<String>,
    pub relations: Map<String, Value>,
    pub deleted: bool,
}

#[derive(Debug, Clone)]
pub struct CollectionRecord {
    pub key: String,
    pub version: u64,
    pub seq: u64,
    pub data: CollectionData,
    pub date_added: String,
    pub date_modified: String,
}

/// Stored full-text content of an attachment, with its own version.
#[derive(Debug, Clone)]
pub struct FullText {
    pub content: String,
    pub indexed_pages: Option<i64>,
    pub total_pages: Option<i64>,
    pub indexed_chars: Option<i64>,
    pub total_chars: Option<i64>,
    pub version: u64,
}

/// Object kinds that appear in `/deleted`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Item,
    Collection,
    Search,
    Tag,
    Setting,
}

#[derive(Debug, Clone)]
pub struct DeleteEntry {
    pub kind: Kind,
    pub key: String,
    pub version: u64,
}

/// When a tag (name and type) first appeared in the library; tags have versions of their own for `since=`.
#[derive(Debug, Clone)]
pub struct TagMeta {
    pub version: u64,
    pub date_modified: String,
}

#[derive(Debug, Clone)]
pub struct Library {
    pub lref: LibraryRef,
    /// Username for a user library, group name for a group.
    pub name: String,
    pub version: u64,
    seq: u64,
    pub items: BTreeMap<String, ItemRecord>,
    pub collections: BTreeMap<String, CollectionRecord>,
    pub searches: BTreeMap<String, SearchRecord>,
    pub deleted: Vec<DeleteEntry>,
    pub fulltext: BTreeMap<String, FullText>,
    pub tags: BTreeMap<Tag, TagMeta>,
    /// Attachment key → its file on Zotero Storage.
    pub files: BTreeMap<String, StoredFile>,
    /// The storage quota in MB, as Zotero counts it (the owner's plan; one library here).
    pub quota_mb: u64,
    /// A group's file editing (`fileEditing`): `false` is Zotero's "none", where no member may store or change
    /// files (the key's user owns every simulated group, so "admins" and "members" both let it).
    pub files_editable: bool,
    /// Changes to items or collections that neither the version, the sequence nor the sizes show (see
    /// [`Library::touch`]).
    changes: u64,
    /// What listings derive from the whole library, for one state of it ([`Library::cached`]; the index of
    /// crates/sim/src/derived.rs, which this module does not name: it is built from this one).
    cache: RefCell<Option<(Stamp, Arc<dyn Any + Send + Sync>)>>,
}

impl Library {
    pub fn new(lref: LibraryRef, name: String) -> Self {
        Self {
            lref,
            name,
            version: 0,
            seq: 0,
            items: BTreeMap::new(),
            collections: BTreeMap::new(),
            searches: BTreeMap::new(),
            deleted: Vec::new(),
            fulltext: BTreeMap::new(),
            tags: BTreeMap::new(),
            files: BTreeMap::new(),
            quota_mb: DEFAULT_QUOTA_MB,
            files_editable: true,
            changes: 0,
            cache: RefCell::new(None),
        }
    }

    /// Marks a change to an item or collection, so that the listings' index is built again.
    pub fn touch(&mut self) {
        self.changes += 1;
    }

    /// What `build` derives from the library as it is now: built on first use after a change, then kept.
    pub fn cached<T: Any + Send + Sync>(&self, build: impl FnOnce(&Self) -> T) -> Arc<T> {
        if let Some(value) = self.cached_now() {
            return value;
        }
        let stamp = self.stamp();
        // Drop the old value before building the new one, so that its memory is reused.
        *self.cache.borrow_mut() = None;
        let value = Arc::new(build(self));
        *self.cache.borrow_mut() = Some((stamp, Arc::clone(&value) as Arc<dyn Any + Send + Sync>));
        value
    }

    /// What [`Library::cached`] holds, if it was built for the library as it is now; never builds it.
    pub fn cached_now<T: Any + Send + Sync>(&self) -> Option<Arc<T>> {
        let cache = self.cache.borrow();
        let (built, value) = cache.as_ref()?;
        (*built == self.stamp()).then(|| Arc::clone(value).downcast::<T>().ok()).flatten()
    }

    fn stamp(&self) -> Stamp {
        Stamp {
            version: self.version,
            seq: self.seq,
            items: self.items.len(),
            collections: self.collections.len(),
            changes: self.changes,
        }
    }

    pub fn is_user(&self) -> bool {
        matches!(self.lref, LibraryRef::User(_))
    }

    /// `/users/1` or `/groups/2`.
    pub fn path(&self) -> String {
        match self.lref {
            LibraryRef::User(id) => format!("/users/{id}"),
            LibraryRef::Group(id) => format!("/groups/{id}"),
        }
    }

    pub fn next_seq(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }

    /// The library's page on zotero.org: the user's slugified name, or the group's ID.
    pub fn www_url(&self) -> String {
        match self.lref {
            LibraryRef::User(_) => format!("{WWW_BASE}/{}", slugify(&self.name)),
            LibraryRef::Group(id) => format!("{WWW_BASE}/groups/{id}"),
        }
    }

    /// The `library` block of every object.
    pub fn library_json(&self) -> Value {
        let (kind, id) = match self.lref {
            LibraryRef::User(id) => ("user", id),
            LibraryRef::Group(id) => ("group", id),
        };
        json!({
            "type": kind,
            "id": id,
            "name": self.name,
            "links": {"alternate": {"href": self.www_url(), "type": "text/html"}}
        })
    }

    /// Non-trashed children of an item (notes and attachments of a regular item, annotations of an attachment,
    /// embedded images of a note).
    pub fn children(&self, key: &str, include_trashed: bool) -> Vec<&ItemRecord> {
        self.items
            .values()
            .filter(|r| r.data.parent.as_deref() == Some(key) && (include_trashed || !r.data.deleted))
            .collect()
    }

    /// The top-level ancestor of an item (itself when it has no parent).
    pub fn top_level<'a>(&'a self, mut rec: &'a ItemRecord) -> &'a ItemRecord {
        for _ in 0..8 {
            match rec.data.parent.as_deref().and_then(|p| self.items.get(p)) {
                Some(parent) => rec = parent,
                None => break,
            }
        }
        rec
    }

    /// An item's relations as the API shows them: its own plus the reverse side of other items' `dc:relation`,
    /// since Zotero treats related items as bidirectional.
    pub fn effective_relations(&self, rec: &ItemRecord, derived: Option<&dyn LibraryFacts>) -> Map<String, Value> {
        let mut relations = rec.data.relations.clone();
        let me = item_uri(&self.path(), &rec.key);
        let mut related = relation_values(&relations, "dc:relation");
        let mut add = |other: &str| {
            let uri = item_uri(&self.path(), other);
            if !related.contains(&uri) {
                related.push(uri);
            }
        };
        match derived {
            Some(d) => d.related_from(&me).into_iter().for_each(add),
            None => {
                for other in self.items.values() {
                    if other.key != rec.key && relation_values(&other.data.relations, "dc:relation").contains(&me) {
                        add(&other.key);
                    }
                }
            }
        }
        match related.len() {
            0 => {}
            1 => {
                relations.insert("dc:relation".into(), json!(related[0]));
            }
            _ => {
                relations.insert("dc:relation".into(), json!(related));
            }
        }
        relations
    }

    /// The full API JSON of an item: `{key, version, library, links, meta, data}`.
    pub fn item_json(&self, rec: &ItemRecord, include_data: bool) -> Value {
        self.item_json_with(rec, include_data, None)
    }

    /// [`Library::item_json`], reading child counts and reverse relations from the listings' index when given.
    pub fn item_json_with(&self, rec: &ItemRecord, include_data: bool, derived: Option<&dyn LibraryFacts>) -> Value {
        let schema = Schema::get();
        let base = format!("{API_BASE}{}", self.path());
        let mut links = Map::new();
        links.insert("self".into(), json!({"href": format!("{base}/items/{}", rec.key), "type": "application/json"}));
        links.insert(
            "alternate".into(),
            json!({"href": format!("{}/items/{}", self.www_url(), rec.key), "type": "text/html"}),
        );
        if let Some(parent) = &rec.data.parent {
            links.insert("up".into(), json!({"href": format!("{base}/items/{parent}"), "type": "application/json"}));
        }
        // An attachment with a file on Zotero Storage links to it (`getDownloadDetails`: a ZIP without name or size).
        if let (Some(file), Some(att)) = (self.files.get(&rec.key), &rec.data.attachment) {
            let mut enclosure = Map::new();
            enclosure.insert("type".into(), json!(att.content_type));
            enclosure.insert("href".into(), json!(format!("{base}/items/{}/file/view", rec.key)));
            if !file.zip {
                enclosure.insert("title".into(), json!(att.filename));
                enclosure.insert("length".into(), json!(file.size));
            }
            links.insert("enclosure".into(), Value::Object(enclosure));
        }
        let mut meta = Map::new();
        if let (LibraryRef::Group(_), Some((id, username))) = (self.lref, &rec.created_by) {
            meta.insert(
                "createdByUser".into(),
                json!({
                    "id": id,
                    "username": username,
                    "name": "",
                    "links": {"alternate": {"href": format!("{WWW_BASE}/{username}"), "type": "text/html"}}
                }),
            );
        }
        let data = &rec.data;
        if data.is_regular() {
            let summary = data.creator_summary(schema);
            if !summary.is_empty() {
                meta.insert("creatorSummary".into(), json!(summary));
            }
            if let Some(parsed) = dates::parse_date(&data.date(schema)).parsed() {
                meta.insert("parsedDate".into(), json!(parsed));
            }
        }
        let pdf = data.attachment.as_ref().is_some_and(|a| a.content_type == "application/pdf");
        if data.is_regular() || data.item_type == "note" || pdf {
            let count = match derived {
                Some(d) => d.children_of(&rec.key),
                None => self.children(&rec.key, false).len(),
            };
            meta.insert("numChildren".into(), json!(count));
        }
        let mut out = Map::new();
        out.insert("key".into(), json!(rec.key));
        out.insert("version".into(), json!(rec.version));
        out.insert("library".into(), self.library_json());
        out.insert("links".into(), Value::Object(links));
        out.insert("meta".into(), Value::Object(meta));
        if include_data {
            let relations = self.effective_relations(rec, derived);
            out.insert("data".into(), data.to_json(&rec.key, rec.version, &relations, self.is_user()));
        }
        Value::Object(out)
    }

    /// Items directly in a collection (not counting the trash), for `meta.numItems`.
    pub fn collection_item_count(&self, key: &str) -> usize {
        self.items.values().filter(|r| !r.data.deleted && r.data.collections.iter().any(|c| c == key)).count()
    }

    pub fn subcollections(&self, key: &str) -> Vec<&CollectionRecord> {
        self.collections.values().filter(|c| c.data.parent.as_deref() == Some(key)).collect()
    }

    /// The full API JSON of a collection.
    pub fn collection_json(&self, rec: &CollectionRecord, include_data: bool) -> Value {
        self.collection_json_with(rec, include_data, None)
    }

    /// [`Library::collection_json`], reading the counts from the listings' index when given.
    pub fn collection_json_with(
        &self,
        rec: &CollectionRecord,
        include_data: bool,
        derived: Option<&dyn LibraryFacts>,
    ) -> Value {
        let base = format!("{API_BASE}{}", self.path());
        let mut links = Map::new();
        links.insert(
            "self".into(),
            json!({"href": format!("{base}/collections/{}", rec.key), "type": "application/json"}),
        );
        links.insert(
            "alternate".into(),
            json!({"href": format!("{}/collections/{}", self.www_url(), rec.key), "type": "text/html"}),
        );
        if let Some(parent) = &rec.data.parent {
            links.insert(
                "up".into(),
                json!({"href": format!("{base}/collections/{parent}"), "type": "application/json"}),
            );
        }
        let mut out = Map::new();
        out.insert("key".into(), json!(rec.key));
        out.insert("version".into(), json!(rec.version));
        out.insert("library".into(), self.library_json());
        out.insert("links".into(), Value::Object(links));
        let (collections, items) = match derived {
            Some(d) => {
                let (items, collections) = d.collection_counts(&rec.key);
                (collections, items)
            }
            None => (self.subcollections(&rec.key).len(), self.collection_item_count(&rec.key)),
        };
        out.insert("meta".into(), json!({"numCollections": collections, "numItems": items}));
        if include_data {
            let mut data = Map::new();
            data.insert("key".into(), json!(rec.key));
            data.insert("version".into(), json!(rec.version));
            data.insert("name".into(), json!(rec.data.name));
            data.insert("parentCollection".into(), rec.data.parent.as_ref().map_or(json!(false), |p| json!(p)));
            data.insert("relations".into(), Value::Object(rec.data.relations.clone()));
            if rec.data.deleted {
                data.insert("deleted".into(), json!(true));
            }
            out.insert("data".into(), Value::Object(data));
        }
        Value::Object(out)
    }

    /// The full API JSON of a saved search.
    pub fn search_json(&self, rec: &SearchRecord, include_data: bool) -> Value {
        saved_search::to_json(rec, &format!("{API_BASE}{}", self.path()), self.library_json(), include_data)
    }

    /// Deletes a saved search. Returns whether it existed.
    pub fn delete_search(&mut self, key: &str, version: u64) -> bool {
        if self.searches.remove(key).is_none() {
            return false;
        }
        self.log_delete(Kind::Search, key, version);
        true
    }

    /// Brings the tag table in line with the items: new (name, type) pairs get the given version, tags no item
    /// carries any more disappear (Zotero purges orphaned tags).
    pub fn refresh_tags(&mut self, version: u64, now: &str) {
        // By reference, in one table: cloning every tag of a large library on each write, only to drop the
        // copies, left the allocator's free lists fragmented enough to slow every later request.
        let present: HashSet<&Tag> = self.items.values().flat_map(|r| r.data.tags.iter()).collect();
        self.tags.retain(|t, _| present.contains(t));
        for tag in present {
            if !self.tags.contains_key(tag) {
                self.tags.insert(tag.clone(), TagMeta { version, date_modified: now.to_string() });
            }
        }
    }

    /// Records a deletion for `/deleted?since=`.
    pub fn log_delete(&mut self, kind: Kind, key: &str, version: u64) {
        self.deleted.retain(|d| !(d.kind == kind && d.key == key));
        self.deleted.push(DeleteEntry { kind, key: key.to_string(), version });
    }

    /// Forgets an earlier deletion when an object is created again under the same key.
    pub fn unlog_delete(&mut self, kind: Kind, key: &str) {
        self.deleted.retain(|d| !(d.kind == kind && d.key == key));
    }

    /// Deletes an item and, as Zotero does, its children (notes, attachments, annotations), with their full
    /// text. Returns whether anything was deleted.
    pub fn delete_item(&mut self, key: &str, version: u64) -> bool {
        if !self.items.contains_key(key) {
            return false;
        }
        let children: Vec<String> =
            self.items.values().filter(|r| r.data.parent.as_deref() == Some(key)).map(|r| r.key.clone()).collect();
        for child in children {
            self.delete_item(&child, version);
        }
        self.items.remove(key);
        self.touch();
        self.fulltext.remove(key);
        // The dataserver drops the item's storage row with it: its file is no longer the library's.
        self.files.remove(key);
        self.log_delete(Kind::Item, key, version);
        true
    }

    /// Deletes a collection with its subcollections; the items stay, outside it (without a version bump, as on
    /// the real server).
    pub fn delete_collection(&mut self, key: &str, version: u64) -> bool {
        if !self.collections.contains_key(key) {
            return false;
        }
        let subs: Vec<String> = self.subcollections(key).iter().map(|c| c.key.clone()).collect();
        for sub in subs {
            self.delete_collection(&sub, version);
        }
        self.collections.remove(key);
        self.touch();
        for rec in self.items.values_mut() {
            rec.data.collections.retain(|c| c != key);
        }
        self.log_delete(Kind::Collection, key, version);
        true
    }

    /// Whether `candidate` is `key` or one of its descendants (a collection cannot move under itself).
    pub fn collection_is_descendant(&self, candidate: &str, key: &str) -> bool {
        let mut current = Some(candidate.to_string());
        for _ in 0..64 {
            match current {
                Some(c) if c == key => return true,
                Some(c) => current = self.collections.get(&c).and_then(|r| r.data.parent.clone()),
                None => return false,
            }
        }
        false
    }
}

/// A write token remembered for Zotero's 12-hour window.
#[derive(Debug, Clone)]
pub struct WriteToken {
    pub expires_at: u64,
}

/// How long Zotero remembers a successful write token.
pub const WRITE_TOKEN_SECS: u64 = 12 * 3600;

/// The whole simulated server.
#[derive(Debug)]
pub struct State {
    pub libraries: BTreeMap<LibraryRef, Library>,
    pub keys: BTreeMap<String, Grant>,
    pub usernames: BTreeMap<u64, String>,
    pub write_tokens: HashMap<(String, String), WriteToken>,
    pub faults: VecDeque<Fault>,
    /// Faults for the requests a matcher selects, each with the number of requests it still answers.
    pub matched_faults: Vec<(FaultMatch, usize, Fault)>,
    pub pending_edits: Vec<(LibraryRef, String)>,
    pub requests: Vec<RecordedRequest>,
    pub keygen: KeyGen,
    /// Zotero Storage: the bucket behind the file endpoints, on its own origin.
    pub storage: Storage,
}

impl State {
    pub fn new() -> Self {
        Self {
            libraries: BTreeMap::new(),
            keys: BTreeMap::new(),
            usernames: BTreeMap::new(),
            write_tokens: HashMap::new(),
            faults: VecDeque::new(),
            matched_faults: Vec::new(),
            pending_edits: Vec::new(),
            requests: Vec::new(),
            keygen: KeyGen::new(dates::unix_now() ^ 0x5EED_2345),
            storage: Storage::default(),
        }
    }

    /// A key not used by any item, collection or saved search of the library.
    pub fn fresh_key(&mut self, lref: LibraryRef) -> String {
        loop {
            let key = self.keygen.key();
            let taken = self.libraries.get(&lref).is_some_and(|l| {
                l.items.contains_key(&key) || l.collections.contains_key(&key) || l.searches.contains_key(&key)
            });
            if !taken {
                return key;
            }
        }
    }

    pub fn username(&self, user_id: u64) -> String {
        self.usernames.get(&user_id).cloned().unwrap_or_else(|| format!("user{user_id}"))
    }
}
