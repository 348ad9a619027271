//! The platform seams of the core crate, implemented for a native process: outbound HTTP over reqwest (URLs
//! someone else chose through a resolver that keeps to public addresses), time over tokio's timers, and the two
//! key/value stores in one embedded redb database, readable by its owner only.

mod clock;
pub mod desktop;
mod http;
mod kv;
pub mod log;
mod offload;
mod resolve;
pub mod token;
pub mod zotero_profile;

use std::path::Path;
use std::rc::Rc;

use zotero_mcp_core::platform::{MemoryCounters, Platform};

pub use self::clock::TokioClock;
pub use self::http::ReqwestHttp;
pub use self::kv::{KvFile, RedbKv};
pub use self::offload::BlockingPool;

/// The services for a native server whose state lives in the database at `kv_path`, and that database (which
/// the HTTP server sweeps for expired records while it runs).
pub fn platform(kv_path: &Path) -> Result<(Platform, KvFile), String> {
    let file = KvFile::open(kv_path)?;
    Ok((platform_over(file.clone(), mirror_beside(kv_path))?, file))
}

/// The services for a stdio server. It issues no tokens, so nothing it stores must outlive it: when another
/// server holds the database (Claude Desktop and Claude Code each start their own), it keeps its caches in
/// memory instead of failing to start.
pub fn stdio_platform(kv_path: &Path) -> Result<Platform, String> {
    let file = match KvFile::open(kv_path) {
        Ok(file) => file,
        Err(busy) => {
            eprintln!("zotero-mcp: {busy}; keeping this session's caches in memory");
            KvFile::in_memory()?
        }
    };
    platform_over(file, mirror_beside(kv_path))
}

/// The library mirror's SQLite file beside the key/value database (`mirror.sqlite3`), readable by its owner only
/// (SQLite gives its journal files the same permissions); `None`, said on stderr, when it cannot be opened:
/// tools then read Zotero live. SQLite lets several servers share it (each waits its turn to write).
fn mirror_beside(kv_path: &Path) -> Option<Rc<dyn zotero_mcp_core::mirror::SqlDb>> {
    let path = kv_path.with_file_name("mirror.sqlite3");
    let opened = kv::private::open_file(&path)
        .map_err(|e| format!("could not create {}: {e}", path.display()))
        .and_then(|_| zotero_mcp_core::mirror::sqlite::SqliteDb::open(&path).map_err(|e| e.to_string()));
    match opened {
        Ok(db) => Some(Rc::new(db)),
        Err(error) => {
            ::log::warn!("the library mirror is off: {error}");
            None
        }
    }
}

fn platform_over(file: KvFile, mirror_db: Option<Rc<dyn zotero_mcp_core::mirror::SqlDb>>) -> Result<Platform, String> {
    let clock = Rc::new(TokioClock);
    Ok(Platform {
        http: Rc::new(ReqwestHttp::new()?),
        oauth_kv: Rc::new(file.store("oauth_kv")),
        cache_kv: Rc::new(file.store("cache_kv")),
        // One process serves every request, so counts kept in its memory are exact; they start over when the
        // server restarts, which only its operator can cause.
        counters: MemoryCounters::new(clock.clone()),
        clock,
        // The data file is this process's alone (redb refuses a second opener): a journal entry another run left
        // incomplete was cut off.
        process_run: Some(run_id()),
        mirror_db,
        // AI Search is a Cloudflare binding: natively semantic search is off.
        ai_search: None,
        decompose: zotero_mcp_core::platform::decompose_with_tables,
        panel_files: None,
        // The server's one thread answers requests; a long computation goes to tokio's blocking pool, two at once.
        offload: Some(Rc::new(BlockingPool::new())),
    })
}

/// This run of the server: its process id and the time it started, which no other run shares.
fn run_id() -> String {
    let started = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    format!("{}-{started:x}", std::process::id())
}
