//! [`SqlDb`] over SQLite (rusqlite, with SQLite compiled in): the native server's mirror, one file in its data
//! directory, and the tests'.

use std::cell::RefCell;
use std::path::Path;

use async_trait::async_trait;
use rusqlite::types::{Value as SqlValue, ValueRef};
use rusqlite::Connection;
use serde_json::{Map, Value};

use crate::platform::{Row, SqlDb, SqlError, Statement};

/// A SQLite database, used from one thread (the native server's requests run on one).
pub struct SqliteDb {
    connection: RefCell<Connection>,
}

impl SqliteDb {
    /// Opens (or creates) the database file at `path`.
    pub fn open(path: &Path) -> Result<Self, SqlError> {
        let connection =
            Connection::open(path).map_err(|e| SqlError::Unavailable(format!("{}: {e}", path.display())))?;
        let unavailable = |e: rusqlite::Error| SqlError::Unavailable(format!("{}: {e}", path.display()));
        // Readers are not blocked by a writer, and a crash mid-write leaves the file whole; another server
        // writing to the same file is waited for rather than failed.
        connection.pragma_update(None, "journal_mode", "WAL").map_err(unavailable)?;
        connection.busy_timeout(std::time::Duration::from_secs(5)).map_err(unavailable)?;
        Ok(Self { connection: RefCell::new(connection) })
    }

    /// A database in memory, gone when dropped.
    pub fn in_memory() -> Result<Self, SqlError> {
        let connection = Connection::open_in_memory().map_err(|e| SqlError::Unavailable(e.to_string()))?;
        Ok(Self { connection: RefCell::new(connection) })
    }
}

fn bound(value: &Value) -> SqlValue {
    match value {
        Value::Null => SqlValue::Null,
        Value::Bool(b) => SqlValue::Integer(i64::from(*b)),
        Value::Number(n) => match n.as_i64() {
            Some(i) => SqlValue::Integer(i),
            None => SqlValue::Real(n.as_f64().unwrap_or(0.0)),
        },
        Value::String(s) => SqlValue::Text(s.clone()),
        other => SqlValue::Text(other.to_string()),
    }
}

fn read(value: ValueRef<'_>) -> Value {
    match value {
        ValueRef::Null | ValueRef::Blob(_) => Value::Null,
        ValueRef::Integer(i) => Value::from(i),
        ValueRef::Real(r) => serde_json::Number::from_f64(r).map_or(Value::Null, Value::Number),
        ValueRef::Text(t) => Value::String(String::from_utf8_lossy(t).into_owned()),
    }
}

fn refused(error: rusqlite::Error) -> SqlError {
    SqlError::Refused(error.to_string())
}

fn run(connection: &Connection, sql: &str, params: &[Value]) -> Result<Vec<Row>, SqlError> {
    let mut statement = connection.prepare_cached(sql).map_err(refused)?;
    let names: Vec<String> = statement.column_names().map(str::to_owned).collect();
    let params: Vec<SqlValue> = params.iter().map(bound).collect();
    let mut rows = statement.query(rusqlite::params_from_iter(params)).map_err(refused)?;
    let mut out = Vec::new();
    while let Some(row) = rows.next().map_err(refused)? {
        let mut object = Map::new();
        for (index, name) in names.iter().enumerate() {
            object.insert(name.clone(), read(row.get_ref(index).map_err(refused)?));
        }
        out.push(object);
    }
    Ok(out)
}

#[async_trait(?Send)]
impl SqlDb for SqliteDb {
    async fn query(&self, sql: &str, params: &[Value]) -> Result<Vec<Row>, SqlError> {
        run(&self.connection.borrow(), sql, params)
    }

    async fn batch(&self, statements: &[Statement]) -> Result<(), SqlError> {
        let mut connection = self.connection.borrow_mut();
        let transaction = connection.transaction().map_err(refused)?;
        for statement in statements {
            run(&transaction, statement.sql, &statement.params)?;
        }
        transaction.commit().map_err(refused)
    }
}
