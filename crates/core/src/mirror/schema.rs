//! The mirror's tables, made and changed by numbered migrations: each runs once, in one transaction with the
//! bump of the schema's version, so a database is always at one version whatever stopped it.

use serde_json::Value;

use crate::platform::{SqlDb, SqlError, Statement};

/// Migration `n + 1` is `MIGRATIONS[n]`. Never edit one that has shipped: add the next.
#[rustfmt::skip]
const MIGRATIONS: &[&[&str]] = &[&[
    // 1: the tables.
    // Per library: the version the rows are complete at (0: never), the fill or catch-up under way, and when
    // the library was last found in step with Zotero.
    "CREATE TABLE mirror_libraries (
        library TEXT PRIMARY KEY,
        version INTEGER NOT NULL DEFAULT 0,
        progress TEXT,
        synced_at INTEGER NOT NULL DEFAULT 0
    )",
    // One row per item: what queries filter on in columns, the rest in `data` (Zotero's JSON).
    "CREATE TABLE mirror_items (
        library TEXT NOT NULL,
        key TEXT NOT NULL,
        version INTEGER NOT NULL,
        item_type TEXT NOT NULL,
        parent TEXT,
        title TEXT,
        doi TEXT,
        trashed INTEGER NOT NULL DEFAULT 0,
        data TEXT NOT NULL,
        PRIMARY KEY (library, key)
    ) WITHOUT ROWID",
    "CREATE INDEX mirror_items_doi ON mirror_items (library, doi) WHERE doi IS NOT NULL",
    "CREATE INDEX mirror_items_parent ON mirror_items (library, parent) WHERE parent IS NOT NULL",
    "CREATE TABLE mirror_collections (
        library TEXT NOT NULL,
        key TEXT NOT NULL,
        version INTEGER NOT NULL,
        name TEXT NOT NULL,
        parent TEXT,
        data TEXT NOT NULL,
        PRIMARY KEY (library, key)
    ) WITHOUT ROWID",
    "CREATE TABLE mirror_searches (
        library TEXT NOT NULL,
        key TEXT NOT NULL,
        version INTEGER NOT NULL,
        name TEXT NOT NULL,
        data TEXT NOT NULL,
        PRIMARY KEY (library, key)
    ) WITHOUT ROWID",
], &[
    // 2: what reference matching, verification and searching need. Rows stored before it lack what is worked out
    // from Zotero's answers (the match keys, the search text), so the mirror is emptied and filled anew: it is a
    // copy, nothing is lost.
    "DELETE FROM mirror_items",
    "DELETE FROM mirror_collections",
    "DELETE FROM mirror_searches",
    "DELETE FROM mirror_libraries",
    // Each regular item's match keys (`mirror::matching`), one per line.
    "ALTER TABLE mirror_items ADD COLUMN match_keys TEXT",
    // When every key's version was last compared with Zotero's (`mirror::sync`'s verification), and how many
    // items the library's rows hold (kept as they are written: counting them would read every row).
    "ALTER TABLE mirror_libraries ADD COLUMN verified_at INTEGER NOT NULL DEFAULT 0",
    "ALTER TABLE mirror_libraries ADD COLUMN items INTEGER NOT NULL DEFAULT 0",
    // Per item, its quick-search text, year and sort values (`search::derive`), as JSON.
    "ALTER TABLE mirror_items ADD COLUMN search TEXT",
    // FTS5 names documents by integer: an item's is its library's number here times 2^42, plus its key read in
    // base 36 (`n` in `search`: eight characters of [0-9A-Z] stay below 2^42). So no row per item is needed to
    // find an item again from its document (on D1 that would be two more rows written per item).
    "CREATE TABLE mirror_search_libraries (
        id INTEGER PRIMARY KEY,
        library TEXT NOT NULL UNIQUE
    )",
    // The quick-search text, indexed for substrings (trigrams). Contentless: the text is in `search` already.
    // Lowercased before it comes here, so the index need not fold case. No column sizes: nothing ranks.
    "CREATE VIRTUAL TABLE mirror_search_text USING fts5(
        text, content='', columnsize=0, tokenize='trigram case_sensitive 1'
    )",
    // Large pages (32 KiB, not SQLite's 4 KB): D1 counts rows written, not bytes, and fewer, larger pages are
    // fewer rows (`the_search_index_of_a_ten_thousand_item_library_stays_a_fraction_of_the_mirror`). Not 64 KiB:
    // a page addresses its contents in 16 bits (`the_search_index_holds_a_trigram_every_item_shares`).
    "INSERT INTO mirror_search_text (mirror_search_text, rank) VALUES ('pgsz', 32768)",
    // The index follows the items, whoever writes them. A contentless index forgets a text only when told what
    // it was (the `delete` command, with the old text). `OR IGNORE` would give way to the upsert that fires the
    // trigger, so a library is added only where there is none.
    "CREATE TRIGGER mirror_search_insert AFTER INSERT ON mirror_items
    WHEN json_extract(NEW.search, '$.n') IS NOT NULL BEGIN
        INSERT INTO mirror_search_libraries (library) SELECT NEW.library
            WHERE NOT EXISTS (SELECT 1 FROM mirror_search_libraries WHERE library = NEW.library);
        INSERT INTO mirror_search_text (rowid, text)
            SELECT id * 4398046511104 + json_extract(NEW.search, '$.n'), json_extract(NEW.search, '$.text')
            FROM mirror_search_libraries WHERE library = NEW.library;
    END",
    "CREATE TRIGGER mirror_search_update AFTER UPDATE OF search ON mirror_items
    WHEN OLD.search IS NOT NEW.search BEGIN
        INSERT INTO mirror_search_text (mirror_search_text, rowid, text)
            SELECT 'delete', id * 4398046511104 + json_extract(OLD.search, '$.n'), json_extract(OLD.search, '$.text')
            FROM mirror_search_libraries
            WHERE library = OLD.library AND json_extract(OLD.search, '$.n') IS NOT NULL;
        INSERT INTO mirror_search_libraries (library) SELECT NEW.library
            WHERE NOT EXISTS (SELECT 1 FROM mirror_search_libraries WHERE library = NEW.library);
        INSERT INTO mirror_search_text (rowid, text)
            SELECT id * 4398046511104 + json_extract(NEW.search, '$.n'), json_extract(NEW.search, '$.text')
            FROM mirror_search_libraries
            WHERE library = NEW.library AND json_extract(NEW.search, '$.n') IS NOT NULL;
    END",
    "CREATE TRIGGER mirror_search_delete AFTER DELETE ON mirror_items
    WHEN json_extract(OLD.search, '$.n') IS NOT NULL BEGIN
        INSERT INTO mirror_search_text (mirror_search_text, rowid, text)
            SELECT 'delete', id * 4398046511104 + json_extract(OLD.search, '$.n'), json_extract(OLD.search, '$.text')
            FROM mirror_search_libraries WHERE library = OLD.library;
    END",
]];

/// The schema version this build writes.
pub const SCHEMA_VERSION: usize = MIGRATIONS.len();

/// Brings the database to [`SCHEMA_VERSION`]. One read when it is there already (every call that uses the
/// mirror asks): the schema's own table is made only when that read finds none. Returns how many statements it
/// sent besides that read: D1 counts each against a Worker invocation's 50 queries, and a call that migrates
/// leaves fewer to the fill.
pub async fn migrate(db: &dyn SqlDb) -> Result<usize, SqlError> {
    let mut sent = 0;
    const VERSION: &str = "SELECT version FROM mirror_schema WHERE id = 1";
    let rows = match db.query(VERSION, &[]).await {
        Ok(rows) => rows,
        Err(_) => {
            db.batch(&[Statement::new(
                "CREATE TABLE IF NOT EXISTS mirror_schema \
                 (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL)",
                Vec::new(),
            )])
            .await?;
            sent += 2;
            db.query(VERSION, &[]).await?
        }
    };
    let at = rows.first().and_then(|row| row.get("version")).and_then(Value::as_u64).unwrap_or(0) as usize;
    if at > SCHEMA_VERSION {
        return Err(SqlError::Refused(format!(
            "the mirror was made by a newer version of zotero-mcp (schema {at}, this one knows {SCHEMA_VERSION})"
        )));
    }
    for (index, migration) in MIGRATIONS.iter().enumerate().skip(at) {
        let mut statements: Vec<Statement> = migration.iter().map(|sql| Statement::new(sql, Vec::new())).collect();
        statements.push(Statement::new(
            "INSERT INTO mirror_schema (id, version) VALUES (1, ?1)
             ON CONFLICT (id) DO UPDATE SET version = excluded.version",
            vec![Value::from(index + 1)],
        ));
        db.batch(&statements).await?;
        sent += statements.len();
    }
    Ok(sent)
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use std::cell::Cell;

    use async_trait::async_trait;

    use super::*;
    use crate::mirror::sqlite::SqliteDb;
    use crate::platform::Row;

    /// SQLite, counting the statements it is sent.
    struct Counted(SqliteDb, Cell<usize>);

    #[async_trait(?Send)]
    impl SqlDb for Counted {
        async fn query(&self, sql: &str, params: &[Value]) -> Result<Vec<Row>, SqlError> {
            self.1.set(self.1.get() + 1);
            self.0.query(sql, params).await
        }
        async fn batch(&self, statements: &[Statement]) -> Result<(), SqlError> {
            self.1.set(self.1.get() + statements.len());
            self.0.batch(statements).await
        }
    }

    #[tokio::test]
    async fn a_database_at_the_current_schema_costs_one_read() {
        let db = Counted(SqliteDb::in_memory().expect("a database"), Cell::new(0));
        migrate(&db).await.expect("migrated");
        let tables: Vec<Row> =
            db.query("SELECT name FROM sqlite_master WHERE name = 'mirror_items'", &[]).await.unwrap();
        assert_eq!(tables.len(), 1);
        db.1.set(0);
        migrate(&db).await.expect("migrated");
        assert_eq!(db.1.get(), 1);
    }

    #[tokio::test]
    async fn the_search_index_holds_a_trigram_every_item_shares() {
        // FTS5 pages keep 16-bit offsets: with pages of 64 KiB, a trigram on some 50,000 items (`the`) made a
        // doclist the page could not address, and the index read as corrupt. Its pages are 32 KiB.
        let db = SqliteDb::in_memory().expect("a database");
        migrate(&db).await.expect("migrated");
        db.query(
            "INSERT INTO mirror_search_text (rowid, text)
             WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 60000)
             SELECT i * 7919, 'the theory of the thing ' || i FROM n",
            &[],
        )
        .await
        .expect("indexed");
        db.query("INSERT INTO mirror_search_text (mirror_search_text, rank) VALUES ('integrity-check', 0)", &[])
            .await
            .expect("the index is whole");
        let found = db
            .query("SELECT count(*) AS n FROM mirror_search_text WHERE mirror_search_text MATCH '\"the t\"'", &[])
            .await
            .expect("a search");
        assert_eq!(found[0]["n"], 60000);
    }
}
