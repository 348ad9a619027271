//! Exact attempt counters for the Worker: one Durable Object (`AttemptCounters`, bound as `ATTEMPT_COUNTERS`)
//! holds every count of the login throttle and the registration limit in its SQLite storage.
//!
//! A Durable Object handles one event at a time, and an update here runs synchronously from first read to last
//! write (SQLite calls in a Durable Object do not wait), so no other update can interleave: the limits are exact
//! however many requests arrive together. The rules themselves are `zotero_mcp_core`'s [`apply_steps`], the
//! same code the native server and the tests run.
//!
//! Why not the Workers Rate Limiting binding: its periods are 10 or 60 seconds (the throttle's window is 15
//! minutes, the registration limit's an hour), its counts are kept per Cloudflare location and are eventually
//! consistent (the documentation calls it permissive), and it cannot clear one key after a successful sign-in.

use std::rc::Rc;

use async_trait::async_trait;
use serde::Deserialize;
use worker::{
    durable_object, DurableObject, Env, Method, ObjectNamespace, Request, RequestInit, Response, SqlStorage,
    SqlStorageValue, State,
};
use zotero_mcp_core::platform::{
    apply_steps, Clock, CountRow, CounterReport, CounterRows, CounterStep, Counters, CountersError, KvCounters, KvStore,
};

/// The binding name in `wrangler.toml`.
pub const BINDING: &str = "ATTEMPT_COUNTERS";
/// Every count lives in one object: the server-wide failure budget must see every address's attempts.
const OBJECT_NAME: &str = "attempts";

/// The counters a request uses: the Durable Object when it is bound, else `CACHE_KV` (not exact; logged).
pub fn bind(env: &Env, cache_kv: Rc<dyn KvStore>, clock: Rc<dyn Clock>) -> Rc<dyn Counters> {
    match env.durable_object(BINDING) {
        Ok(namespace) => Rc::new(ObjectCounters { namespace }),
        Err(_) => Rc::new(KvFallback { inner: KvCounters::new(cache_kv, clock) }),
    }
}

/// The client side: one subrequest to the object per update.
struct ObjectCounters {
    namespace: ObjectNamespace,
}

impl ObjectCounters {
    async fn call(&self, steps: &[CounterStep]) -> worker::Result<Result<CounterReport, CountersError>> {
        let stub = self.namespace.get_by_name(OBJECT_NAME)?;
        let body = serde_json::to_string(steps).map_err(|e| worker::Error::RustError(e.to_string()))?;
        let mut init = RequestInit::new();
        init.with_method(Method::Post).with_body(Some(body.into()));
        // The object's URL is not resolved anywhere; only the body matters.
        let request = Request::new_with_init("https://attempt-counters/update", &init)?;
        let mut response = stub.fetch_with_request(request).await?;
        if response.status_code() != 200 {
            return Err(worker::Error::RustError(format!(
                "the attempt counters answered {}: {}",
                response.status_code(),
                response.text().await.unwrap_or_default()
            )));
        }
        response.json().await
    }
}

#[async_trait(?Send)]
impl Counters for ObjectCounters {
    async fn update(&self, steps: &[CounterStep]) -> Result<CounterReport, CountersError> {
        self.call(steps).await.unwrap_or_else(|e| Err(CountersError::Unavailable(e.to_string())))
    }

    fn exact(&self) -> bool {
        true
    }
}

/// `CACHE_KV` counting, with a line in the log each time so an operator who removed the binding learns that
/// the limits are no longer exact.
struct KvFallback {
    inner: Rc<KvCounters>,
}

#[async_trait(?Send)]
impl Counters for KvFallback {
    async fn update(&self, steps: &[CounterStep]) -> Result<CounterReport, CountersError> {
        log::warn!(
            target: "oauth",
            "the {BINDING} Durable Object binding is missing, so attempts are counted in CACHE_KV, where \
             parallel attempts can overshoot the limits; restore it from wrangler.toml"
        );
        self.inner.update(steps).await
    }

    fn exact(&self) -> bool {
        false
    }
}

/// The Durable Object.
#[durable_object(fetch)]
pub struct AttemptCounters {
    state: State,
}

impl DurableObject for AttemptCounters {
    fn new(state: State, _env: Env) -> Self {
        // Once per object, not per update. Should it fail, every update fails on the missing table and sign-in
        // is refused (429), never checked uncounted.
        let created = state.storage().sql().exec(
            "CREATE TABLE IF NOT EXISTS counts (key TEXT PRIMARY KEY, count INTEGER NOT NULL, expires_at_ms INTEGER NOT NULL)",
            None,
        );
        if let Err(e) = created {
            log::warn!(target: "oauth", "the attempt counters could not create their table: {e}");
        }
        Self { state }
    }

    async fn fetch(&self, mut request: Request) -> worker::Result<Response> {
        let steps: Vec<CounterStep> = match request.json().await {
            Ok(steps) => steps,
            Err(e) => return Response::error(format!("unreadable update: {e}"), 400),
        };
        let sql = self.state.storage().sql();
        let now_ms = worker::Date::now().as_millis();
        // Everything below is synchronous: nothing else runs in this object until the answer is built.
        let result = update(&sql, &steps, now_ms);
        Response::from_json(&result)
    }
}

fn update(sql: &SqlStorage, steps: &[CounterStep], now_ms: u64) -> Result<CounterReport, CountersError> {
    let unavailable = |e: worker::Error| CountersError::Unavailable(format!("SQLite: {e}"));
    // Addresses that tried once and left would otherwise stay forever.
    sql.exec("DELETE FROM counts WHERE expires_at_ms <= ?", vec![millis(now_ms)]).map_err(unavailable)?;
    let mut rows = SqlRows { sql, failure: None };
    let result = apply_steps(&mut rows, steps, now_ms);
    match rows.failure {
        Some(e) => Err(unavailable(e)),
        None => result,
    }
}

fn millis(ms: u64) -> SqlStorageValue {
    SqlStorageValue::from(i64::try_from(ms).unwrap_or(i64::MAX))
}

/// The `counts` table as [`CounterRows`]; the first SQLite failure is kept and reported after the update.
struct SqlRows<'a> {
    sql: &'a SqlStorage,
    failure: Option<worker::Error>,
}

#[derive(Deserialize)]
struct StoredRow {
    count: f64,
    expires_at_ms: f64,
}

impl SqlRows<'_> {
    fn run(&mut self, query: &str, bindings: Vec<SqlStorageValue>) -> Option<worker::SqlCursor> {
        match self.sql.exec(query, bindings) {
            Ok(cursor) => Some(cursor),
            Err(e) => {
                self.failure.get_or_insert(e);
                None
            }
        }
    }
}

impl CounterRows for SqlRows<'_> {
    fn read(&mut self, key: &str) -> Option<CountRow> {
        let cursor = self.run("SELECT count, expires_at_ms FROM counts WHERE key = ?", vec![key.into()])?;
        let rows: Vec<StoredRow> = match cursor.to_array() {
            Ok(rows) => rows,
            Err(e) => {
                self.failure.get_or_insert(e);
                return None;
            }
        };
        // Integers come back as JavaScript numbers; counts and millisecond times are far below 2^53.
        rows.first().map(|row| CountRow { count: row.count as u32, expires_at_ms: row.expires_at_ms as u64 })
    }

    fn write(&mut self, key: &str, row: CountRow) {
        self.run(
            "INSERT INTO counts (key, count, expires_at_ms) VALUES (?, ?, ?) \
             ON CONFLICT(key) DO UPDATE SET count = excluded.count, expires_at_ms = excluded.expires_at_ms",
            vec![key.into(), SqlStorageValue::from(i64::from(row.count)), millis(row.expires_at_ms)],
        );
    }

    fn remove(&mut self, key: &str) {
        self.run("DELETE FROM counts WHERE key = ?", vec![key.into()]);
    }
}
