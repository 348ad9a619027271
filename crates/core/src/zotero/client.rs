//! The Zotero Web API v3 client: one per request context, sharing its limiter, backoff gate and library lookup.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;

use futures_util::future::{join4, OptionFuture};
use http::Method;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::{Map, Value};

use super::batch::BATCH_SIZE;
use super::card::ItemCard;
use super::error::ZoteroError;
use super::key::ObjectKey;
use super::library::{KeyAccess, LibraryId, LibraryKind};
use super::local::{self, LocalApiAccess};
use super::query::Query;
use super::transport::{Call, Capabilities, Reply, RetryPolicy, Transport, MAX_IN_FLIGHT};
use super::types::{Deleted, FullText, ObjectKind, Page, Tag, Versions, ZoteroObject};
use crate::platform::{Clock, HttpClient};

// A wave of pages is four slots (`ZoteroClient::pages_of`), as many as the transport lets fly.
const _: () = assert!(MAX_IN_FLIGHT == 4);

/// The real API.
pub const DEFAULT_BASE_URL: &str = "https://api.zotero.org";
/// Zotero's page size limit.
pub const PAGE_LIMIT: usize = 100;
/// Export formats Zotero accepts for `format=` (CSL output is `bib` or `citation` with `style`).
pub const EXPORT_FORMATS: &[&str] = &[
    "bib",
    "citation",
    "bibtex",
    "biblatex",
    "bookmarks",
    "coins",
    "csljson",
    "csv",
    "mods",
    "refer",
    "rdf_bibliontology",
    "rdf_dc",
    "rdf_zotero",
    "ris",
    "tei",
    "wikipedia",
];

/// Which items a listing reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ItemScope<'a> {
    /// Every item, top-level and children.
    All,
    /// Top-level items only (no child attachments, notes or annotations).
    Top,
    /// Items in a collection (not its subcollections).
    Collection { key: &'a ObjectKey, top_only: bool },
    /// An item's attachments, notes and annotations.
    Children(&'a ObjectKey),
}

/// A group the key's user belongs to, from the groups listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupInfo {
    pub id: u64,
    pub name: String,
    /// `meta.numItems`, when Zotero gives it.
    pub items: Option<u64>,
}

/// What the client needs to know, from the deployment's configuration.
#[derive(Clone)]
pub struct ZoteroSettings {
    pub api_key: String,
    pub library_kind: LibraryKind,
    /// The numeric library id; found from the key when absent (user libraries only).
    pub library_id: Option<String>,
    /// `ZOTERO_API_BASE`, for the simulator; the real API when absent.
    pub base_url: Option<String>,
}

impl std::fmt::Debug for ZoteroSettings {
    // The key is reported as present or absent, never printed: a `{:?}` in a log line must not leak it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ZoteroSettings")
            .field("api_key", &if self.api_key.is_empty() { "<unset>" } else { "<set>" })
            .field("library_kind", &self.library_kind)
            .field("library_id", &self.library_id)
            .field("base_url", &self.base_url)
            .finish()
    }
}

/// The reading half of the Zotero Web API: everything that looks and nothing that changes. Writes are on
/// [`super::ZoteroWriter`], which owns one of these and hands it out for reads, so code given only a
/// `&ZoteroClient` cannot change the library.
pub struct ZoteroClient {
    pub(super) transport: Transport,
    kind: LibraryKind,
    configured_id: Option<u64>,
    /// `/users/<id>` or `/groups/<id>`, resolved at most once; concurrent callers share the lookup.
    prefix: async_lock::OnceCell<String>,
    /// A writer's client remembers the objects it read (`Some`), so that the writer knows what an object was
    /// before it changes it without reading it again ([`ZoteroClient::recall`]). A reader's keeps nothing.
    remembered: RefCell<Option<HashMap<(ObjectKind, String), ZoteroObject>>>,
}

#[derive(Deserialize)]
struct KeyInfo {
    #[serde(rename = "userID")]
    user_id: Option<u64>,
}

#[derive(Deserialize)]
struct RawTag {
    tag: String,
    #[serde(default)]
    meta: RawTagMeta,
}

#[derive(Deserialize, Default)]
struct RawTagMeta {
    #[serde(default, rename = "type")]
    kind: u8,
    #[serde(default, rename = "numItems")]
    num_items: u64,
}

impl ZoteroClient {
    pub fn new(settings: ZoteroSettings, http: Rc<dyn HttpClient>, clock: Rc<dyn Clock>) -> Result<Self, ZoteroError> {
        Self::with_policy(settings, http, clock, RetryPolicy::default())
    }

    pub fn with_policy(
        settings: ZoteroSettings,
        http: Rc<dyn HttpClient>,
        clock: Rc<dyn Clock>,
        policy: RetryPolicy,
    ) -> Result<Self, ZoteroError> {
        let api_key = settings.api_key.trim();
        if api_key.is_empty() {
            return Err(ZoteroError::Unset {
                variable: "ZOTERO_API_KEY",
                what: "the API key, created at zotero.org/settings/keys",
            });
        }
        let configured_id = match settings.library_id.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
            Some(id) => Some(id.parse::<u64>().map_err(|_| {
                ZoteroError::Config(format!("ZOTERO_LIBRARY_ID must be the library's number, not `{id}`"))
            })?),
            None => None,
        };
        if settings.library_kind == LibraryKind::Group && configured_id.is_none() {
            return Err(ZoteroError::Unset {
                variable: "ZOTERO_LIBRARY_ID",
                what: "ZOTERO_LIBRARY_TYPE is `group`, and a key does not say which group to use: the group's \
                       number, from https://www.zotero.org/groups/<number>/…",
            });
        }
        let base_url = settings.base_url.as_deref().filter(|s| !s.trim().is_empty()).unwrap_or(DEFAULT_BASE_URL);
        Ok(Self {
            transport: Transport::new(http, clock, base_url, api_key, policy),
            kind: settings.library_kind,
            configured_id,
            prefix: async_lock::OnceCell::new(),
            remembered: RefCell::new(None),
        })
    }

    /// A client of Zotero Desktop's local API at `base` (e.g. `http://localhost:23119/api`) for `library`
    /// (`users/0` is the desktop's own user library): no zotero.org key, the instance id and local key as
    /// [`super::local`] describes.
    pub fn for_desktop(
        base: &str,
        library: LibraryId,
        access: LocalApiAccess,
        http: Rc<dyn HttpClient>,
        clock: Rc<dyn Clock>,
    ) -> Self {
        Self {
            transport: Transport::new(http, clock, base, "", RetryPolicy::default())
                .with_backend(local::backend(access)),
            kind: library.kind,
            configured_id: Some(library.id),
            prefix: async_lock::OnceCell::new(),
            remembered: RefCell::new(None),
        }
    }

    /// What the server this client reads can do (Zotero Desktop's local API less than zotero.org).
    pub fn caps(&self) -> Capabilities {
        local::possible(self.transport.caps())
    }

    /// Makes this client remember every object it reads in full (for a writer: see [`Self::recall`]).
    pub(super) fn remember_reads(&self) {
        *self.remembered.borrow_mut() = Some(HashMap::new());
    }

    /// Remembers `objects` as read, when this client remembers.
    pub(super) fn remember<'o>(&self, kind: ObjectKind, objects: impl IntoIterator<Item = &'o ZoteroObject>) {
        if let Some(map) = self.remembered.borrow_mut().as_mut() {
            for object in objects {
                map.insert((kind, object.key.clone()), object.clone());
            }
        }
    }

    /// The object `key` as last read, if it was read at exactly `version`: then it is what a write made with
    /// that version overwrites (a write made on any other version is refused by Zotero).
    pub(super) fn recall(&self, kind: ObjectKind, key: &str, version: u64) -> Option<ZoteroObject> {
        let map = self.remembered.borrow();
        map.as_ref()?.get(&(kind, key.to_owned())).filter(|object| object.version == version).cloned()
    }

    /// Forgets what was read of `key` (it was changed, and is not known exactly any more).
    pub(super) fn forget(&self, kind: ObjectKind, key: &str) {
        if let Some(map) = self.remembered.borrow_mut().as_mut() {
            map.remove(&(kind, key.to_owned()));
        }
    }

    /// Whether the next request will first look the library up from the key (`GET /keys/current`): the library
    /// id was not configured and no request has resolved it yet. Callers that count their requests (the index
    /// sync's subrequest budget) add this one.
    pub fn needs_key_lookup(&self) -> bool {
        self.configured_id.is_none() && self.prefix.get().is_none()
    }

    /// The library path prefix, looking the user id up from the key when it was not configured.
    pub async fn library_prefix(&self) -> Result<&str, ZoteroError> {
        let prefix = self
            .prefix
            .get_or_try_init(|| async {
                let segment = match self.kind {
                    LibraryKind::User => "users",
                    LibraryKind::Group => "groups",
                };
                let id = match self.configured_id {
                    Some(id) => id,
                    None => {
                        let reply = self.transport.execute(&Call::new(Method::GET, "/keys/current".into())).await?;
                        let info: KeyInfo = reply.json()?;
                        info.user_id.ok_or_else(|| {
                            ZoteroError::Config(
                                "the API key does not belong to a user, so the library cannot be found from it. Set ZOTERO_LIBRARY_ID".into(),
                            )
                        })?
                    }
                };
                Ok::<_, ZoteroError>(format!("/{segment}/{id}"))
            })
            .await?;
        Ok(prefix.as_str())
    }

    /// What the key may do, and in which libraries (`GET /keys/current`).
    pub async fn key_access(&self) -> Result<KeyAccess, ZoteroError> {
        let reply = self.transport.execute(&Call::new(Method::GET, "/keys/current".into())).await?;
        Ok(KeyAccess::from_key_info(&reply.json::<Value>()?))
    }

    /// The groups the user `user_id` belongs to that the key can see (`GET /users/<id>/groups`, up to 100): each
    /// one's id, name and item count.
    pub async fn groups(&self, user_id: u64) -> Result<Vec<GroupInfo>, ZoteroError> {
        let query = vec![("limit".to_owned(), "100".to_owned())];
        let reply = self.get(format!("/users/{user_id}/groups"), query).await?;
        let listed: Vec<Value> = reply.json()?;
        Ok(listed
            .iter()
            .filter_map(|group| {
                Some(GroupInfo {
                    id: group["id"].as_u64()?,
                    name: group["data"]["name"].as_str().unwrap_or_default().to_owned(),
                    items: group["meta"]["numItems"].as_u64(),
                })
            })
            .collect())
    }

    pub(super) async fn library_path(&self, rest: &str) -> Result<String, ZoteroError> {
        Ok(format!("{}{rest}", self.library_prefix().await?))
    }

    pub(super) async fn get(&self, path: String, query: Vec<(String, String)>) -> Result<Reply, ZoteroError> {
        self.transport.execute(&Call::new(Method::GET, path).query(query)).await
    }

    /// Reads a paginated listing until `max` objects or the end, `PAGE_LIMIT` at a time, from the query's
    /// `offset` (0 unless set). The paging is [`Self::pages_of`]'s; only the parsing is per type.
    pub(super) async fn list<T: DeserializeOwned>(
        &self,
        path: String,
        query: &Query,
        max: usize,
    ) -> Result<Page<T>, ZoteroError> {
        let mut items = Vec::new();
        let mut take = |reply: &Reply| {
            let batch: Vec<T> = reply.json()?;
            let received = batch.len();
            items.extend(batch);
            Ok(received)
        };
        let (total_results, library_version) = self.pages_of(&path, query, max, &mut take).await?;
        Ok(Page { items, total_results, library_version })
    }

    /// Requests the pages of a listing and hands each answer to `take`, which parses it and says how many objects
    /// it held; returns `Total-Results` and the highest `Last-Modified-Version` seen.
    ///
    /// The first page says how many objects there are (`Total-Results`), so the pages after it are independent
    /// and go out together, as many at once as the transport lets fly: a 500-item scan takes two sequential steps
    /// instead of five. Without the header the pages are read one after another. Either way a short page ends
    /// the listing, and each wave is parsed before the next is sent (no more raw pages held than in flight).
    async fn pages_of(
        &self,
        path: &str,
        query: &Query,
        max: usize,
        take: &mut dyn FnMut(&Reply) -> Result<usize, ZoteroError>,
    ) -> Result<(Option<u64>, u64), ZoteroError> {
        let (mut total_results, mut library_version) = (None, 0);
        let mut next = query.initial_offset();
        let mut end = next.saturating_add(max);
        while next < end {
            let width = if total_results.is_some() { MAX_IN_FLIGHT } else { 1 };
            let wave: Vec<(usize, usize)> =
                (next..end).step_by(PAGE_LIMIT).take(width).map(|start| (start, PAGE_LIMIT.min(end - start))).collect();
            next = wave.last().map_or(end, |(start, limit)| start + limit);
            // Four fixed slots rather than `join_all`, whose general machinery costs kilobytes of wasm.
            let page = |slot: usize| {
                OptionFuture::from(
                    wave.get(slot).map(|&(start, limit)| self.get(path.to_owned(), query.with_page(start, limit))),
                )
            };
            let (a, b, c, d) = join4(page(0), page(1), page(2), page(3)).await;
            let mut short = false;
            for (reply, (_, limit)) in [a, b, c, d].into_iter().flatten().zip(&wave) {
                let reply = reply?;
                if total_results.is_none() {
                    total_results = reply.total_results();
                    end = end.min(total_results.map_or(usize::MAX, |t| usize::try_from(t).unwrap_or(usize::MAX)));
                }
                library_version = library_version.max(reply.last_modified_version());
                short |= take(&reply)? < *limit;
            }
            if short {
                break;
            }
        }
        Ok((total_results, library_version))
    }

    // ---- items ----

    /// The path of a set of items.
    async fn items_path(&self, scope: ItemScope<'_>) -> Result<String, ZoteroError> {
        let rest = match scope {
            ItemScope::All => "/items".to_owned(),
            ItemScope::Top => "/items/top".to_owned(),
            ItemScope::Collection { key, top_only: false } => format!("/collections/{key}/items"),
            ItemScope::Collection { key, top_only: true } => format!("/collections/{key}/items/top"),
            ItemScope::Children(key) => format!("/items/{key}/children"),
        };
        self.library_path(&rest).await
    }

    /// The items of `scope` matching `query`, each read as the card a listing shows (not every field): the cheap
    /// way to list. Use the other listings where every field is needed.
    pub async fn item_cards(
        &self,
        scope: ItemScope<'_>,
        query: &Query,
        max: usize,
    ) -> Result<Page<ItemCard>, ZoteroError> {
        match scope {
            ItemScope::Children(key) => self.list_children(key, query, max).await,
            _ => self.list(self.items_path(scope).await?, query, max).await,
        }
    }

    /// An item's children. A server whose bare children listing leaves annotations out (Zotero Desktop's local
    /// API) gives them only when asked for by type, so there the annotations are a second read, made alongside.
    async fn list_children<T: DeserializeOwned>(
        &self,
        key: &ObjectKey,
        query: &Query,
        max: usize,
    ) -> Result<Page<T>, ZoteroError> {
        let path = self.items_path(ItemScope::Children(key)).await?;
        if !self.caps().annotation_children && !query.has("itemType") {
            // Boxed where it is made: in a build whose capabilities are fixed (the Worker's), the branch folds
            // away with the future's code, where an `.await` on it would keep that code linked.
            let with_annotations: std::pin::Pin<Box<dyn std::future::Future<Output = _> + '_>> =
                Box::pin(self.list_children_with_annotations(path, query, max));
            return with_annotations.await;
        }
        self.list(path, query, max).await
    }

    /// [`Self::list_children`] where annotations are not listed bare: the listing and the annotations, asked for
    /// together.
    async fn list_children_with_annotations<T: DeserializeOwned>(
        &self,
        path: String,
        query: &Query,
        max: usize,
    ) -> Result<Page<T>, ZoteroError> {
        let annotations = query.clone().item_type("annotation");
        let (rest, annotated) =
            futures_util::future::join(self.list(path.clone(), query, max), self.list(path, &annotations, max)).await;
        let (mut page, annotated): (Page<T>, Page<T>) = (rest?, annotated?);
        page.total_results = match (page.total_results, annotated.total_results) {
            (Some(a), Some(b)) => Some(a + b),
            _ => None,
        };
        page.library_version = page.library_version.max(annotated.library_version);
        page.items.extend(annotated.items);
        page.items.truncate(max);
        Ok(page)
    }

    /// All items (top-level and children) matching `query`.
    pub async fn items(&self, query: &Query, max: usize) -> Result<Page<ZoteroObject>, ZoteroError> {
        let page: Page<ZoteroObject> = self.list(self.items_path(ItemScope::All).await?, query, max).await?;
        self.remember(ObjectKind::Items, &page.items);
        Ok(page)
    }

    /// Top-level items only (no child attachments, notes or annotations).
    pub async fn top_items(&self, query: &Query, max: usize) -> Result<Page<ZoteroObject>, ZoteroError> {
        let page: Page<ZoteroObject> = self.list(self.items_path(ItemScope::Top).await?, query, max).await?;
        self.remember(ObjectKind::Items, &page.items);
        Ok(page)
    }

    /// Items in a collection (not its subcollections).
    pub async fn collection_items(
        &self,
        collection: &ObjectKey,
        top_only: bool,
        query: &Query,
        max: usize,
    ) -> Result<Page<ZoteroObject>, ZoteroError> {
        let path = self.items_path(ItemScope::Collection { key: collection, top_only }).await?;
        let page: Page<ZoteroObject> = self.list(path, query, max).await?;
        self.remember(ObjectKind::Items, &page.items);
        Ok(page)
    }

    pub async fn item(&self, key: &ObjectKey) -> Result<ZoteroObject, ZoteroError> {
        let item: ZoteroObject =
            self.get(self.library_path(&format!("/items/{key}")).await?, Vec::new()).await?.json()?;
        self.remember(ObjectKind::Items, [&item]);
        Ok(item)
    }

    /// One item in full, and the same answer read as its card (what a detail view shows besides the fields):
    /// one request, read twice, so the summary follows the one reading rule of listings.
    pub async fn item_with_card(&self, key: &ObjectKey) -> Result<(ZoteroObject, ItemCard), ZoteroError> {
        let reply = self.get(self.library_path(&format!("/items/{key}")).await?, Vec::new()).await?;
        let item: ZoteroObject = reply.json()?;
        self.remember(ObjectKind::Items, [&item]);
        Ok((item, reply.json()?))
    }

    /// Several items by key, 50 keys per request (Zotero's `itemKey` limit), in Zotero's order.
    pub async fn items_by_keys(&self, keys: &[ObjectKey]) -> Result<Vec<ZoteroObject>, ZoteroError> {
        let mut found = Vec::with_capacity(keys.len());
        for chunk in keys.chunks(BATCH_SIZE) {
            let joined = chunk.iter().map(ObjectKey::as_str).collect::<Vec<_>>().join(",");
            let query = Query::new().param("itemKey", joined).include_trashed(true);
            found.extend(self.items(&query, chunk.len()).await?.items);
        }
        Ok(found)
    }

    /// An item's attachments, notes and annotations.
    pub async fn children(&self, key: &ObjectKey, max: usize) -> Result<Page<ZoteroObject>, ZoteroError> {
        let page: Page<ZoteroObject> = self.list_children(key, &Query::new(), max).await?;
        self.remember(ObjectKind::Items, &page.items);
        Ok(page)
    }

    /// An item's children, those in the trash included: everything Zotero would delete with the item (its
    /// `meta.numChildren` and a plain children listing leave trashed ones out).
    pub async fn children_with_trashed(&self, key: &ObjectKey, max: usize) -> Result<Page<ZoteroObject>, ZoteroError> {
        let page: Page<ZoteroObject> = self.list_children(key, &Query::new().include_trashed(true), max).await?;
        self.remember(ObjectKind::Items, &page.items);
        Ok(page)
    }

    /// The empty item Zotero would create for `item_type` (and `link_mode` for attachments).
    pub async fn template(&self, item_type: &str, link_mode: Option<&str>) -> Result<Map<String, Value>, ZoteroError> {
        let mut query = Query::new().param("itemType", item_type);
        if let Some(mode) = link_mode {
            query = query.param("linkMode", mode);
        }
        self.get("/items/new".into(), query.into_params()).await?.json()
    }

    /// The keys of the first `max` items of `scope` matching `query`, in its order (`format=keys`): one request,
    /// for a caller that has the items themselves (the library mirror).
    pub async fn item_keys(
        &self,
        scope: ItemScope<'_>,
        query: &Query,
        max: usize,
    ) -> Result<Page<String>, ZoteroError> {
        let query = query.clone().param("format", "keys").param("limit", max.to_string());
        let reply = self.get(self.items_path(scope).await?, query.into_params()).await?;
        let items = reply.text().lines().map(str::trim).filter(|k| !k.is_empty()).map(str::to_owned).collect();
        Ok(Page { items, total_results: reply.total_results(), library_version: reply.last_modified_version() })
    }

    /// Every item's version changed since `since` (trashed included), and the library version.
    pub async fn item_versions(&self, since: u64) -> Result<Versions, ZoteroError> {
        let query = Query::new().since(since).param("format", "versions").include_trashed(true);
        let reply = self.get(self.library_path("/items").await?, query.into_params()).await?;
        Ok(Versions { versions: reply.json()?, library_version: reply.last_modified_version() })
    }

    /// The versions of a listing's objects changed since `since` (`rest`: `/items`, `/items/top`, `/items/trash`,
    /// `/collections`, `/searches`), read whole in one request, and whether the answer says it is whole
    /// (`Total-Results`, when sent, equals what came).
    pub async fn versions_of(&self, rest: &str, since: u64) -> Result<(Versions, bool), ZoteroError> {
        let query = Query::new().since(since).param("format", "versions");
        let reply = self.get(self.library_path(rest).await?, query.into_params()).await?;
        let versions: BTreeMap<String, u64> = reply.json()?;
        let whole = reply.total_results().is_none_or(|total| total == versions.len() as u64);
        Ok((Versions { versions, library_version: reply.last_modified_version() }, whole))
    }

    /// The version of every object of a listing (`/collections`, `/searches`), those in the trash included, read
    /// whole in one request: what a copy of the library compares its own with.
    pub async fn versions_with_trashed(&self, rest: &str) -> Result<Versions, ZoteroError> {
        let query = Query::new().param("format", "versions").include_trashed(true);
        let reply = self.get(self.library_path(rest).await?, query.into_params()).await?;
        Ok(Versions { versions: reply.json()?, library_version: reply.last_modified_version() })
    }

    /// The versions of top-level items changed since `since`, those moved to the trash included (a listing that
    /// keeps only the live items must hear of them), and the library version.
    pub async fn top_item_versions(&self, since: u64) -> Result<Versions, ZoteroError> {
        let query = Query::new().since(since).param("format", "versions").include_trashed(true);
        let reply = self.get(self.library_path("/items/top").await?, query.into_params()).await?;
        Ok(Versions { versions: reply.json()?, library_version: reply.last_modified_version() })
    }

    /// One page (`start`, at most [`PAGE_LIMIT`] objects) of what changed in a listing since `since` (`rest`:
    /// `/items`, `/collections`, `/searches`), trashed objects included, oldest added first so that pages keep
    /// their place while objects change. With `unless_unchanged`, `None` when the library has not changed since
    /// `since` (`If-Modified-Since-Version`: Zotero answers 304, and that is all the request costs).
    pub async fn changed_page(
        &self,
        rest: &str,
        since: u64,
        start: usize,
        unless_unchanged: bool,
    ) -> Result<Option<Page<ZoteroObject>>, ZoteroError> {
        let query = Query::new()
            .since(since)
            .include_trashed(true)
            .param("sort", "dateAdded")
            .param("direction", "asc")
            .param("start", start.to_string())
            .param("limit", PAGE_LIMIT.to_string());
        let mut call = Call::new(Method::GET, self.library_path(rest).await?).query(query.into_params());
        if unless_unchanged {
            call = call.header("if-modified-since-version", since.to_string());
        }
        let reply = self.transport.execute(&call).await?;
        if reply.not_modified {
            return Ok(None);
        }
        let items: Vec<ZoteroObject> = reply.json()?;
        Ok(Some(Page { items, total_results: reply.total_results(), library_version: reply.last_modified_version() }))
    }

    /// Keys deleted since `since`.
    pub async fn deleted(&self, since: u64) -> Result<Deleted, ZoteroError> {
        let reply = self.get(self.library_path("/deleted").await?, Query::new().since(since).into_params()).await?;
        let mut deleted: Deleted = reply.json()?;
        deleted.library_version = reply.last_modified_version();
        Ok(deleted)
    }

    /// Zotero's own export of the given items: BibTeX, RIS, CSL-JSON, or a formatted bibliography (`bib`,
    /// `citation`) in a CSL `style` and `locale`.
    pub async fn export(
        &self,
        keys: &[ObjectKey],
        format: &str,
        style: Option<&str>,
        locale: Option<&str>,
    ) -> Result<String, ZoteroError> {
        if !EXPORT_FORMATS.contains(&format) {
            return Err(ZoteroError::Config(format!(
                "`{format}` is not a Zotero export format; use one of {}",
                EXPORT_FORMATS.join(", ")
            )));
        }
        let mut out = String::new();
        for chunk in keys.chunks(BATCH_SIZE) {
            let joined = chunk.iter().map(ObjectKey::as_str).collect::<Vec<_>>().join(",");
            let query = Query::new()
                .param("itemKey", joined)
                .param("format", format)
                .param("style", style.unwrap_or_default())
                .param("locale", locale.unwrap_or_default());
            let reply = self.get(self.library_path("/items").await?, query.into_params()).await?;
            out.push_str(&reply.text());
        }
        Ok(out)
    }

    // ---- full text ----

    /// An attachment's stored full text, or `None` when Zotero has none.
    pub async fn fulltext(&self, key: &ObjectKey) -> Result<Option<FullText>, ZoteroError> {
        match self.get(self.library_path(&format!("/items/{key}/fulltext")).await?, Vec::new()).await {
            Ok(reply) => reply.json().map(Some),
            Err(error) if error.status() == Some(404) => Ok(None),
            Err(error) => Err(error),
        }
    }

    /// Every attachment whose full text changed since `since` (`GET /fulltext?since=`), with its full-text
    /// version, and the library version. Only attachments that have text are listed.
    pub async fn fulltext_versions(&self, since: u64) -> Result<Versions, ZoteroError> {
        let reply = self.get(self.library_path("/fulltext").await?, Query::new().since(since).into_params()).await?;
        Ok(Versions { versions: reply.json()?, library_version: reply.last_modified_version() })
    }

    // ---- collections and tags ----

    pub async fn collections(&self, query: &Query, max: usize) -> Result<Page<ZoteroObject>, ZoteroError> {
        let page: Page<ZoteroObject> = self.list(self.library_path("/collections").await?, query, max).await?;
        self.remember(ObjectKind::Collections, &page.items);
        Ok(page)
    }

    pub async fn top_collections(&self, max: usize) -> Result<Page<ZoteroObject>, ZoteroError> {
        self.list(self.library_path("/collections/top").await?, &Query::new(), max).await
    }

    pub async fn subcollections(&self, key: &ObjectKey, max: usize) -> Result<Page<ZoteroObject>, ZoteroError> {
        self.list(self.library_path(&format!("/collections/{key}/collections")).await?, &Query::new(), max).await
    }

    pub async fn collection(&self, key: &ObjectKey) -> Result<ZoteroObject, ZoteroError> {
        let path = self.library_path(&format!("/collections/{key}")).await?;
        let collection: ZoteroObject = self.get(path, Vec::new()).await?.json()?;
        self.remember(ObjectKind::Collections, [&collection]);
        Ok(collection)
    }

    /// Tags with their type and item counts.
    pub async fn tags(&self, query: &Query, max: usize) -> Result<Page<Tag>, ZoteroError> {
        let raw: Page<RawTag> = self.list(self.library_path("/tags").await?, query, max).await?;
        Ok(Page {
            items: raw
                .items
                .into_iter()
                .map(|t| Tag { tag: t.tag, kind: t.meta.kind, num_items: t.meta.num_items })
                .collect(),
            total_results: raw.total_results,
            library_version: raw.library_version,
        })
    }
}

#[cfg(test)]
mod debug_tests {
    use super::*;

    #[test]
    fn settings_debug_says_whether_the_key_is_set_never_what_it_is() {
        let mut settings = ZoteroSettings {
            api_key: "P9NiFoyLeZu2bZNvvuQPDWsd".into(),
            library_kind: LibraryKind::User,
            library_id: Some("42".into()),
            base_url: None,
        };
        let shown = format!("{settings:?}");
        assert!(!shown.contains("P9NiFoyLeZu2bZNvvuQPDWsd"), "{shown}");
        assert!(shown.contains("api_key: \"<set>\"") && shown.contains("42"), "{shown}");
        settings.api_key.clear();
        assert!(format!("{settings:#?}").contains("<unset>"));
    }
}
