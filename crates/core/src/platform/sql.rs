//! The seam to a SQL database (the library mirror's, `crate::mirror`): SQL text and JSON parameters in, rows as
//! JSON objects out. Cloudflare D1 on the Worker and SQLite natively run the same statements (D1 is SQLite), so
//! the SQL lives with what uses it and only the executor differs.

use async_trait::async_trait;
use serde_json::{Map, Value};

/// One row, column name to value (integers and reals as numbers, text as strings, NULL as null).
pub type Row = Map<String, Value>;

/// A statement and its parameters (`?1`, `?2`, … in order). A JSON array or object parameter is bound as its
/// text, for `json_each` and `json_extract`.
#[derive(Debug, Clone, PartialEq)]
pub struct Statement {
    pub sql: &'static str,
    pub params: Vec<Value>,
}

impl Statement {
    pub fn new(sql: &'static str, params: Vec<Value>) -> Self {
        Self { sql, params }
    }
}

/// Why the database did not do what it was asked.
#[derive(Debug, thiserror::Error)]
pub enum SqlError {
    #[error(
        "the library mirror's database refused a statement ({0}). The mirror is only a copy of the library: \
         delete it and it is built again"
    )]
    Refused(String),
    #[error("the library mirror's database could not be reached ({0}); answers come from Zotero meanwhile")]
    Unavailable(String),
}

/// A SQL database the mirror is kept in.
#[async_trait(?Send)]
pub trait SqlDb {
    /// Runs one statement and returns its rows (none for a statement that returns none).
    async fn query(&self, sql: &str, params: &[Value]) -> Result<Vec<Row>, SqlError>;
    /// Runs the statements in order, all or none (one transaction: D1's `batch`, SQLite's `BEGIN`…`COMMIT`).
    async fn batch(&self, statements: &[Statement]) -> Result<(), SqlError>;
}
