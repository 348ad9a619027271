//! The library mirror's database on the Worker: Cloudflare D1, bound as `MIRROR_DB` (`d1_databases` in
//! wrangler.toml), behind the core's [`SqlDb`] seam. D1 is SQLite, so it runs the mirror's SQL as the native
//! server's SQLite does. Without the binding the Worker has no mirror and its tools read Zotero directly.

use std::rc::Rc;

use async_trait::async_trait;
use serde_json::{Map, Value};
use wasm_bindgen::JsValue;
use worker::{D1Database, Env};
use zotero_mcp_core::mirror::{Row, SqlDb, SqlError, Statement};

/// The binding name in `wrangler.toml`.
pub const BINDING: &str = "MIRROR_DB";

struct D1(D1Database);

/// The mirror's database, when the deployment binds one.
pub fn bind(env: &Env) -> Option<Rc<dyn SqlDb>> {
    env.d1(BINDING).ok().map(|db| Rc::new(D1(db)) as Rc<dyn SqlDb>)
}

/// A parameter as D1 binds it: numbers as numbers (versions and counts stay far below 2^53), text as text, and a
/// JSON array or object as its text, for `json_each`.
fn bound(value: &Value) -> JsValue {
    match value {
        Value::Null => JsValue::NULL,
        Value::Bool(b) => JsValue::from_f64(if *b { 1.0 } else { 0.0 }),
        Value::Number(n) => JsValue::from_f64(n.as_f64().unwrap_or(0.0)),
        Value::String(s) => JsValue::from_str(s),
        other => JsValue::from_str(&other.to_string()),
    }
}

fn refused(error: worker::Error) -> SqlError {
    SqlError::Refused(error.to_string())
}

impl D1 {
    fn prepared(&self, sql: &str, params: &[Value]) -> Result<worker::D1PreparedStatement, SqlError> {
        let values: Vec<JsValue> = params.iter().map(bound).collect();
        self.0.prepare(sql).bind(&values).map_err(refused)
    }
}

#[async_trait(?Send)]
impl SqlDb for D1 {
    async fn query(&self, sql: &str, params: &[Value]) -> Result<Vec<Row>, SqlError> {
        let result = self.prepared(sql, params)?.all().await.map_err(refused)?;
        result.results::<Map<String, Value>>().map_err(refused)
    }

    async fn batch(&self, statements: &[Statement]) -> Result<(), SqlError> {
        let prepared =
            statements.iter().map(|s| self.prepared(s.sql, &s.params)).collect::<Result<Vec<_>, SqlError>>()?;
        self.0.batch(prepared).await.map_err(refused)?;
        Ok(())
    }
}
