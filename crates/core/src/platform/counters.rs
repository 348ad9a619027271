//! Attempt counters: what the login throttle and the registration limit count in.
//!
//! An update is a short list of [`CounterStep`]s applied all or nothing: "refuse unless these counts are below
//! their limits, then add one to that count". Where the runtime can run that as one indivisible step (a Durable
//! Object in the Worker, one process natively) the limits are exact under any concurrency; Workers KV has no
//! atomic increment, so [`KvCounters`], the fallback, can overshoot by the requests that race it.
//!
//! [`apply_steps`] is the one implementation of the rules; every exact store runs it over its own rows
//! ([`CounterRows`]): a `HashMap` in [`MemoryCounters`], a SQLite table in the Worker's Durable Object.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use super::clock::Clock;
use super::kv::{KvStore, KvWrite};

/// One step of an update. Travels to the Worker's Durable Object as `{"step": "add", "key": …, …}` (serde's
/// internally tagged form; read back by the hand-written `Deserialize` below).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "step", rename_all = "snake_case")]
pub enum CounterStep {
    /// Refuse the whole update if `key`'s count has reached `limit`.
    Below { key: String, limit: u32 },
    /// Add one to `key`'s count. The count is forgotten `window_secs` after the first addition of its window
    /// (`rolling: false`) or after the latest addition (`rolling: true`: every addition restarts the window).
    Add { key: String, window_secs: u64, rolling: bool },
    /// Take one from `key`'s count (an attempt counted in advance that turned out not to count), keeping its
    /// window; a count that reaches 0 is forgotten.
    Subtract { key: String },
    /// Forget `key`'s count.
    Clear { key: String },
}

impl CounterStep {
    /// The key the step reads or changes.
    pub fn key(&self) -> &str {
        match self {
            CounterStep::Below { key, .. }
            | CounterStep::Add { key, .. }
            | CounterStep::Subtract { key }
            | CounterStep::Clear { key } => key,
        }
    }
}

/// Reads what the derived `Serialize` writes. Written by hand because serde's derive for an internally tagged
/// enum buffers every field in a generic `Content` tree first: about 14 KB of the Worker's code (4 KB of gzip,
/// measured) for four variants. Unknown fields are skipped, as the derive skips them; a field of another kind
/// of step is read by its own type (only the Worker writes these, from the `Serialize` above).
impl<'de> Deserialize<'de> for CounterStep {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(StepVisitor)
    }
}

struct StepVisitor;

/// The fields of a step as read, before its kind says which it needs.
#[derive(Default)]
struct StepFields {
    step: Option<String>,
    key: Option<String>,
    limit: Option<u32>,
    window_secs: Option<u64>,
    rolling: Option<bool>,
}

impl<'de> serde::de::Visitor<'de> for StepVisitor {
    type Value = CounterStep;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a counter step")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<CounterStep, A::Error> {
        let mut fields = StepFields::default();
        while let Some(name) = map.next_key::<String>()? {
            match name.as_str() {
                "step" => fields.step = Some(map.next_value()?),
                "key" => fields.key = Some(map.next_value()?),
                "limit" => fields.limit = Some(map.next_value()?),
                "window_secs" => fields.window_secs = Some(map.next_value()?),
                "rolling" => fields.rolling = Some(map.next_value()?),
                _ => {
                    map.next_value::<serde::de::IgnoredAny>()?;
                }
            }
        }
        fields.into_step()
    }
}

impl StepFields {
    /// The step, once its kind is known to be one of the four and it has that kind's fields; serde's own errors
    /// (missing field, unknown variant) otherwise, as a derived deserializer would give.
    fn into_step<E: serde::de::Error>(self) -> Result<CounterStep, E> {
        const STEPS: &[&str] = &["below", "add", "subtract", "clear"];
        let step = self.step.ok_or_else(|| E::missing_field("step"))?;
        let key = self.key.ok_or_else(|| E::missing_field("key"));
        Ok(match step.as_str() {
            "below" => CounterStep::Below { key: key?, limit: self.limit.ok_or_else(|| E::missing_field("limit"))? },
            "add" => CounterStep::Add {
                key: key?,
                window_secs: self.window_secs.ok_or_else(|| E::missing_field("window_secs"))?,
                rolling: self.rolling.ok_or_else(|| E::missing_field("rolling"))?,
            },
            "subtract" => CounterStep::Subtract { key: key? },
            "clear" => CounterStep::Clear { key: key? },
            other => return Err(E::unknown_variant(other, STEPS)),
        })
    }
}

/// What an update found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CounterReport {
    /// Each step's count before the update, in step order.
    pub before: Vec<u32>,
    /// When each step's count is forgotten after the update (ms since the Unix epoch; 0 for none).
    pub expires_at_ms: Vec<u64>,
}

/// Why an update did not happen.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
pub enum CountersError {
    /// A [`CounterStep::Below`] found its count at the limit; nothing was changed.
    #[error("the count of step {step} has reached its limit until {until_ms} ms")]
    Refused {
        /// The index of the refusing step.
        step: usize,
        /// When its count is forgotten (ms since the Unix epoch).
        until_ms: u64,
    },
    /// The store could not be reached or refused the write: nothing can be assumed counted.
    #[error("the attempt counters are unavailable: {0}")]
    Unavailable(String),
}

/// A store of attempt counts.
#[async_trait(?Send)]
pub trait Counters {
    /// Applies `steps` all or nothing.
    async fn update(&self, steps: &[CounterStep]) -> Result<CounterReport, CountersError>;

    /// Whether updates are indivisible, so limits hold exactly under concurrent requests.
    fn exact(&self) -> bool;
}

/// One stored count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CountRow {
    pub count: u32,
    /// When the count is forgotten, in ms since the Unix epoch.
    pub expires_at_ms: u64,
}

/// The rows an exact store keeps, read and written synchronously inside its indivisible step.
pub trait CounterRows {
    fn read(&mut self, key: &str) -> Option<CountRow>;
    fn write(&mut self, key: &str, row: CountRow);
    fn remove(&mut self, key: &str);
}

/// Applies `steps` to `rows` at `now_ms`: first every [`CounterStep::Below`] is checked against the counts as
/// they are (expired rows count as 0); if one is at its limit nothing is written. Then additions and clears
/// happen in order. Synchronous, so a single-threaded store that calls it without awaiting in between is
/// exact.
pub fn apply_steps(
    rows: &mut dyn CounterRows,
    steps: &[CounterStep],
    now_ms: u64,
) -> Result<CounterReport, CountersError> {
    let live = |rows: &mut dyn CounterRows, key: &str| rows.read(key).filter(|row| row.expires_at_ms > now_ms);
    let mut before = Vec::with_capacity(steps.len());
    for (index, step) in steps.iter().enumerate() {
        let row = live(rows, step.key());
        if let CounterStep::Below { limit, .. } = step {
            if let Some(row) = row.filter(|row| row.count >= *limit) {
                return Err(CountersError::Refused { step: index, until_ms: row.expires_at_ms });
            }
        }
        before.push(row.map_or(0, |row| row.count));
    }
    let mut expires_at_ms = Vec::with_capacity(steps.len());
    for step in steps {
        match step {
            CounterStep::Below { key, .. } => {
                expires_at_ms.push(live(rows, key).map_or(0, |row| row.expires_at_ms));
            }
            CounterStep::Add { key, window_secs, rolling } => {
                let window_end = now_ms.saturating_add(window_secs.saturating_mul(1000));
                let row = match live(rows, key) {
                    Some(row) => CountRow {
                        count: row.count.saturating_add(1),
                        expires_at_ms: if *rolling { window_end } else { row.expires_at_ms },
                    },
                    None => CountRow { count: 1, expires_at_ms: window_end },
                };
                rows.write(key, row);
                expires_at_ms.push(row.expires_at_ms);
            }
            CounterStep::Subtract { key } => match live(rows, key) {
                Some(row) if row.count > 1 => {
                    let row = CountRow { count: row.count - 1, ..row };
                    rows.write(key, row);
                    expires_at_ms.push(row.expires_at_ms);
                }
                Some(_) => {
                    rows.remove(key);
                    expires_at_ms.push(0);
                }
                None => expires_at_ms.push(0),
            },
            CounterStep::Clear { key } => {
                rows.remove(key);
                expires_at_ms.push(0);
            }
        }
    }
    Ok(CounterReport { before, expires_at_ms })
}

/// Exact counters in this process's memory: the native server (one process) and tests. Counts do not survive
/// a restart, which only an operator can cause.
pub struct MemoryCounters {
    rows: RefCell<HashMap<String, CountRow>>,
    clock: Rc<dyn Clock>,
}

impl MemoryCounters {
    pub fn new(clock: Rc<dyn Clock>) -> Rc<Self> {
        Rc::new(Self { rows: RefCell::new(HashMap::new()), clock })
    }

    /// How many counts are kept (expired ones are dropped on every update).
    pub fn len(&self) -> usize {
        self.rows.borrow().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

struct MapRows<'a>(&'a mut HashMap<String, CountRow>);

impl CounterRows for MapRows<'_> {
    fn read(&mut self, key: &str) -> Option<CountRow> {
        self.0.get(key).copied()
    }
    fn write(&mut self, key: &str, row: CountRow) {
        self.0.insert(key.to_owned(), row);
    }
    fn remove(&mut self, key: &str) {
        self.0.remove(key);
    }
}

#[async_trait(?Send)]
impl Counters for MemoryCounters {
    async fn update(&self, steps: &[CounterStep]) -> Result<CounterReport, CountersError> {
        let now_ms = self.clock.now_ms();
        let mut rows = self.rows.borrow_mut();
        // Addresses that tried once and left would otherwise stay forever.
        rows.retain(|_, row| row.expires_at_ms > now_ms);
        apply_steps(&mut MapRows(&mut rows), steps, now_ms)
    }

    fn exact(&self) -> bool {
        true
    }
}

/// Counters in Workers KV, the fallback when no exact store is bound. Each key is read, then written: requests
/// that race can each see the old count, so a limit can be overshot by them (SECURITY.md has the numbers).
///
/// A count with a rolling window is stored as the bare number with the window as the key's TTL (the layout of
/// the TypeScript project's `login-attempts:` keys); one with a fixed window as `{"count": n, "resetAt": secs}`.
/// KV does not say when a key expires, so a bare count is taken to live for the longest window of the update
/// that reads it (a minute when the update adds nothing).
pub struct KvCounters {
    kv: Rc<dyn KvStore>,
    clock: Rc<dyn Clock>,
}

/// Workers KV refuses expirations less than a minute away.
const KV_MIN_TTL_SECS: u64 = 60;

impl KvCounters {
    pub fn new(kv: Rc<dyn KvStore>, clock: Rc<dyn Clock>) -> Rc<Self> {
        Rc::new(Self { kv, clock })
    }

    /// A stored count, and whether it was stored as a bare number.
    async fn read(&self, key: &str, now_ms: u64, window_ms: u64) -> Result<(Option<CountRow>, bool), CountersError> {
        let stored = self.kv.get(key).await.map_err(|e| CountersError::Unavailable(e.to_string()))?;
        let bare = stored.as_deref().is_some_and(|v| v.trim().parse::<u32>().is_ok());
        Ok((stored.as_deref().and_then(|value| parse_kv_count(value, now_ms, window_ms)), bare))
    }
}

/// A stored KV count: a bare number (its key's TTL ends it, which a read does not tell, so it is taken to
/// last `window_ms` more: an upper bound, as every addition restarts a rolling window) or `{"count", "resetAt"}`.
fn parse_kv_count(value: &str, now_ms: u64, window_ms: u64) -> Option<CountRow> {
    let value = value.trim();
    if let Ok(count) = value.parse::<u32>() {
        return Some(CountRow { count, expires_at_ms: now_ms.saturating_add(window_ms) });
    }
    let json: serde_json::Value = serde_json::from_slice(value.as_bytes()).ok()?;
    let count = u32::try_from(json.get("count")?.as_u64()?).ok()?;
    let reset_at_secs = json.get("resetAt")?.as_u64()?;
    Some(CountRow { count, expires_at_ms: reset_at_secs.saturating_mul(1000) })
}

#[async_trait(?Send)]
impl Counters for KvCounters {
    async fn update(&self, steps: &[CounterStep]) -> Result<CounterReport, CountersError> {
        let now_ms = self.clock.now_ms();
        // The longest window of the update stands in for the unknown remaining life of bare-number counts.
        let window_ms = steps
            .iter()
            .filter_map(|s| match s {
                CounterStep::Add { window_secs, .. } => Some(window_secs.saturating_mul(1000)),
                _ => None,
            })
            .max()
            .unwrap_or(KV_MIN_TTL_SECS * 1000);
        let mut rows = HashMap::new();
        let mut bare_keys = Vec::new();
        for step in steps {
            if !rows.contains_key(step.key()) {
                let (row, bare) = self.read(step.key(), now_ms, window_ms).await?;
                rows.insert(step.key().to_owned(), row);
                if bare {
                    bare_keys.push(step.key().to_owned());
                }
            }
        }
        let mut snapshot = KvSnapshot { rows, changed: Vec::new() };
        let report = apply_steps(&mut snapshot, steps, now_ms)?;
        for key in snapshot.changed {
            let result = match snapshot.rows.get(&key).copied().flatten() {
                None => self.kv.delete(&key).await,
                Some(row) => {
                    // A count keeps the format it was found in; a new one is a bare number if its window rolls.
                    let rolling = bare_keys.contains(&key)
                        || steps
                            .iter()
                            .any(|s| matches!(s, CounterStep::Add { key: k, rolling: true, .. } if *k == key));
                    let ttl = (row.expires_at_ms.saturating_sub(now_ms) / 1000).max(KV_MIN_TTL_SECS);
                    let value = if rolling {
                        row.count.to_string()
                    } else {
                        serde_json::json!({ "count": row.count, "resetAt": row.expires_at_ms / 1000 }).to_string()
                    };
                    self.kv.put(&key, &value, KvWrite::ExpiresIn(ttl)).await
                }
            };
            result.map_err(|e| CountersError::Unavailable(e.to_string()))?;
        }
        Ok(report)
    }

    fn exact(&self) -> bool {
        false
    }
}

struct KvSnapshot {
    rows: HashMap<String, Option<CountRow>>,
    changed: Vec<String>,
}

impl CounterRows for KvSnapshot {
    fn read(&mut self, key: &str) -> Option<CountRow> {
        self.rows.get(key).copied().flatten()
    }
    fn write(&mut self, key: &str, row: CountRow) {
        self.rows.insert(key.to_owned(), Some(row));
        if !self.changed.iter().any(|k| k == key) {
            self.changed.push(key.to_owned());
        }
    }
    fn remove(&mut self, key: &str) {
        self.rows.insert(key.to_owned(), None);
        if !self.changed.iter().any(|k| k == key) {
            self.changed.push(key.to_owned());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    use crate::platform::{KvError, KvListPage};

    // Small stand-ins of their own: `crate::testing` is built on this module, so using it here would make the
    // two modules depend on each other (tests/layout.rs).
    struct ManualClock(Cell<u64>);

    impl ManualClock {
        fn at(ms: u64) -> Rc<Self> {
            Rc::new(Self(Cell::new(ms)))
        }
        fn advance_secs(&self, secs: u64) {
            self.0.set(self.0.get() + secs * 1000);
        }
    }

    #[async_trait(?Send)]
    impl Clock for ManualClock {
        fn now_ms(&self) -> u64 {
            self.0.get()
        }
        async fn sleep(&self, ms: u64) {
            self.0.set(self.0.get() + ms);
        }
    }

    /// Values only; expiry is not what these tests look at.
    #[derive(Default)]
    struct MemoryKv(RefCell<HashMap<String, String>>);

    impl MemoryKv {
        fn new(_clock: Rc<ManualClock>) -> Rc<Self> {
            Rc::new(Self::default())
        }
    }

    #[async_trait(?Send)]
    impl KvStore for MemoryKv {
        async fn get(&self, key: &str) -> Result<Option<String>, KvError> {
            Ok(self.0.borrow().get(key).cloned())
        }
        async fn put(&self, key: &str, value: &str, _lifetime: KvWrite) -> Result<(), KvError> {
            self.0.borrow_mut().insert(key.to_owned(), value.to_owned());
            Ok(())
        }
        async fn delete(&self, key: &str) -> Result<(), KvError> {
            self.0.borrow_mut().remove(key);
            Ok(())
        }
        async fn list(&self, _prefix: &str, _cursor: Option<&str>, _limit: u32) -> Result<KvListPage, KvError> {
            Ok(KvListPage::default())
        }
    }

    fn below(key: &str, limit: u32) -> CounterStep {
        CounterStep::Below { key: key.into(), limit }
    }
    fn add(key: &str, window_secs: u64, rolling: bool) -> CounterStep {
        CounterStep::Add { key: key.into(), window_secs, rolling }
    }

    #[tokio::test]
    async fn a_count_is_refused_at_its_limit_and_nothing_else_changes() {
        let clock = ManualClock::at(1_000_000);
        let counters = MemoryCounters::new(clock.clone());
        let steps = [below("a", 2), add("a", 60, true), add("b", 60, true)];
        assert_eq!(counters.update(&steps).await.unwrap().before, vec![0, 0, 0]);
        assert_eq!(counters.update(&steps).await.unwrap().before, vec![1, 1, 1]);
        let refused = counters.update(&steps).await.unwrap_err();
        assert_eq!(refused, CountersError::Refused { step: 0, until_ms: 1_060_000 });
        // `b` was not counted by the refused update.
        assert_eq!(counters.update(&[below("b", 100)]).await.unwrap().before, vec![2]);
    }

    #[tokio::test]
    async fn rolling_windows_restart_and_fixed_ones_do_not() {
        let clock = ManualClock::at(0);
        let counters = MemoryCounters::new(clock.clone());
        counters.update(&[add("r", 60, true), add("f", 60, false)]).await.unwrap();
        clock.advance_secs(50);
        let report = counters.update(&[add("r", 60, true), add("f", 60, false)]).await.unwrap();
        assert_eq!(report.expires_at_ms, vec![110_000, 60_000]);
        clock.advance_secs(20);
        let report = counters.update(&[below("r", 10), below("f", 10)]).await.unwrap();
        assert_eq!(report.before, vec![2, 0], "the fixed window ended at 60 s; the rolling one goes on");
        assert_eq!(counters.len(), 1, "expired counts are dropped");
    }

    #[tokio::test]
    async fn subtract_takes_one_back_and_keeps_the_window() {
        let clock = ManualClock::at(0);
        let counters = MemoryCounters::new(clock.clone());
        counters.update(&[add("a", 60, true), add("a", 60, true)]).await.unwrap();
        clock.advance_secs(10);
        let report = counters.update(&[CounterStep::Subtract { key: "a".into() }]).await.unwrap();
        assert_eq!((report.before, report.expires_at_ms), (vec![2], vec![60_000]));
        counters.update(&[CounterStep::Subtract { key: "a".into() }]).await.unwrap();
        assert!(counters.is_empty(), "a count of 0 is forgotten");
        counters.update(&[CounterStep::Subtract { key: "never".into() }]).await.unwrap();
        assert!(counters.is_empty());
    }

    #[tokio::test]
    async fn clear_forgets_a_count() {
        let counters = MemoryCounters::new(ManualClock::at(0));
        counters.update(&[add("a", 60, true), add("a", 60, true)]).await.unwrap();
        counters.update(&[CounterStep::Clear { key: "a".into() }]).await.unwrap();
        assert_eq!(counters.update(&[below("a", 1)]).await.unwrap().before, vec![0]);
    }

    #[tokio::test]
    async fn kv_counters_keep_the_typescript_layout_for_rolling_counts() {
        let clock = ManualClock::at(1_000_000);
        let kv = MemoryKv::new(clock.clone());
        let counters = KvCounters::new(kv.clone(), clock.clone());
        assert!(!counters.exact());
        counters.update(&[below("login-attempts:1.2.3.4", 8), add("login-attempts:1.2.3.4", 900, true)]).await.unwrap();
        assert_eq!(kv.get("login-attempts:1.2.3.4").await.unwrap().as_deref(), Some("1"));
        counters.update(&[add("register-attempts:1.2.3.4", 3600, false)]).await.unwrap();
        assert_eq!(
            kv.get("register-attempts:1.2.3.4").await.unwrap().as_deref(),
            Some(r#"{"count":1,"resetAt":4600}"#)
        );
        // A count the TypeScript project wrote is read.
        kv.put("login-attempts:5.6.7.8", "8", KvWrite::ExpiresIn(900)).await.unwrap();
        let refused = counters.update(&[below("login-attempts:5.6.7.8", 8)]).await.unwrap_err();
        assert!(matches!(refused, CountersError::Refused { step: 0, .. }));
        counters.update(&[CounterStep::Clear { key: "login-attempts:5.6.7.8".into() }]).await.unwrap();
        assert_eq!(kv.get("login-attempts:5.6.7.8").await.unwrap(), None);
    }

    /// A KV store whose every call waits once, so that concurrent updates interleave as they do in a Worker.
    struct SlowKv(Rc<MemoryKv>);

    #[async_trait(?Send)]
    impl KvStore for SlowKv {
        async fn get(&self, key: &str) -> Result<Option<String>, KvError> {
            tokio::task::yield_now().await;
            self.0.get(key).await
        }
        async fn put(&self, key: &str, value: &str, lifetime: KvWrite) -> Result<(), KvError> {
            tokio::task::yield_now().await;
            self.0.put(key, value, lifetime).await
        }
        async fn delete(&self, key: &str) -> Result<(), KvError> {
            self.0.delete(key).await
        }
        async fn list(&self, prefix: &str, cursor: Option<&str>, limit: u32) -> Result<KvListPage, KvError> {
            self.0.list(prefix, cursor, limit).await
        }
    }

    /// Fifty attempts at once against a limit of eight: how many got through.
    async fn admitted_of_fifty(counters: &dyn Counters) -> usize {
        let steps = [below("login-attempts:1.2.3.4", 8), add("login-attempts:1.2.3.4", 900, true)];
        let attempts = (0..50).map(|_| counters.update(&steps));
        futures::future::join_all(attempts).await.iter().filter(|r| r.is_ok()).count()
    }

    #[tokio::test]
    async fn concurrent_updates_overshoot_in_kv_and_never_in_exact_counters() {
        let clock = ManualClock::at(0);
        assert_eq!(admitted_of_fifty(MemoryCounters::new(clock.clone()).as_ref()).await, 8);
        let kv = Rc::new(SlowKv(MemoryKv::new(clock.clone())));
        let admitted = admitted_of_fifty(KvCounters::new(kv, clock).as_ref()).await;
        assert!(admitted > 8, "KV has no atomic increment: every racing update reads the old count ({admitted})");
    }

    #[test]
    fn steps_travel_as_tagged_json() {
        let json = serde_json::to_string(&add("k", 60, true)).unwrap();
        assert_eq!(json, r#"{"step":"add","key":"k","window_secs":60,"rolling":true}"#);
        let back: CounterStep = serde_json::from_str(&json).unwrap();
        assert_eq!(back, add("k", 60, true));
    }

    #[test]
    fn every_step_reads_back_as_written_and_a_step_missing_a_field_is_refused() {
        let steps = [
            CounterStep::Below { key: "b".into(), limit: 10 },
            add("a", 3600, false),
            CounterStep::Subtract { key: "s".into() },
            CounterStep::Clear { key: "c".into() },
        ];
        let json = serde_json::to_string(&steps).unwrap();
        assert_eq!(serde_json::from_str::<Vec<CounterStep>>(&json).unwrap(), steps);
        // The tag may come anywhere, and fields no step has are skipped, as serde's derive does.
        let loose = r#"{"key":"k","limit":3,"step":"clear","extra":[1,{"a":null}]}"#;
        assert_eq!(serde_json::from_str::<CounterStep>(loose).unwrap(), CounterStep::Clear { key: "k".into() });
        for (bad, says) in [
            (r#"{"step":"below","key":"k"}"#, "missing field `limit`"),
            (r#"{"step":"add","key":"k","window_secs":60}"#, "missing field `rolling`"),
            (r#"{"key":"k"}"#, "missing field `step`"),
            (r#"{"step":"clear"}"#, "missing field `key`"),
            (r#"{"step":"reset","key":"k"}"#, "unknown variant `reset`"),
            (r#"{"step":"below","key":"k","limit":-1}"#, "invalid value"),
            (r#"["below","k"]"#, "invalid type"),
        ] {
            let error = serde_json::from_str::<CounterStep>(bad).unwrap_err().to_string();
            assert!(error.contains(says), "{bad}: {error}");
        }
    }
}
