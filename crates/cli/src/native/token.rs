//! The bearer token of a loopback HTTP server started without credentials.
//!
//! A port on 127.0.0.1 is open to every process of every user of the machine, and with `--local` the server
//! reads its owner's files and writes with its owner's keys. So a server given neither `AUTH_PASSWORD` nor
//! `ZOTERO_MCP_TOKEN` makes its own token: random at the first start, kept in a file only its owner can read
//! (`http-token` in the data directory, beside `kv.redb`), and the same on every later start, so a client
//! configured once keeps working. Another user cannot read the file, so cannot call.

use std::io::Write;
use std::path::{Path, PathBuf};

/// The file's name in the data directory.
pub const TOKEN_FILE: &str = "http-token";

/// Characters of a new token (6 bits each: 258 bits).
const TOKEN_CHARS: usize = 43;

/// The shortest token taken from an existing file: one a user wrote there by hand must still be unguessable.
const MIN_TOKEN_CHARS: usize = 32;

/// The server's token and where it is kept.
pub struct LocalToken {
    pub path: PathBuf,
    pub value: String,
    /// Made at this start (else read from the file).
    pub created: bool,
}

/// Hand-written so the token never reaches a log through `{:?}`.
impl std::fmt::Debug for LocalToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalToken").field("path", &self.path).field("value", &"<set>").finish()
    }
}

/// Why the token could not be made or read. Each says what to do.
#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    #[error(
        "could not create {dir} for the server's token ({source}); set ZOTERO_MCP_DATA_DIR to a directory you own"
    )]
    Dir { dir: String, source: std::io::Error },
    #[error("could not write the server's token to {path} ({source}); set ZOTERO_MCP_DATA_DIR to a directory you own")]
    Write { path: String, source: std::io::Error },
    #[error("could not read the server's token from {path} ({source}); remove the file and start again for a new one")]
    Read { path: String, source: std::io::Error },
    #[error(
        "{path} does not hold a token of at least {MIN_TOKEN_CHARS} characters (letters, digits, - or _); remove \
         it and start again for a new one, or set ZOTERO_MCP_TOKEN"
    )]
    Malformed { path: String },
    #[error("no random numbers for the server's token: {0}")]
    Random(String),
}

/// The token kept in `data_dir`, made (owner-only) when there is none yet.
pub fn load_or_create(data_dir: &Path) -> Result<LocalToken, TokenError> {
    super::kv::private::create_dir(data_dir)
        .map_err(|source| TokenError::Dir { dir: data_dir.display().to_string(), source })?;
    let path = data_dir.join(TOKEN_FILE);
    match create(&path) {
        Ok(value) => Ok(LocalToken { path, value, created: true }),
        // Made at an earlier start (or by a second server starting at the same moment): read it.
        Err(TokenError::Write { source, .. }) if source.kind() == std::io::ErrorKind::AlreadyExists => {
            let value = read(&path)?;
            Ok(LocalToken { path, value, created: false })
        }
        Err(other) => Err(other),
    }
}

/// Writes a fresh token to `path`, which must not exist yet: created 0600, so there is no moment at which
/// another user could open it.
fn create(path: &Path) -> Result<String, TokenError> {
    let write_error = |source| TokenError::Write { path: path.display().to_string(), source };
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(path).map_err(write_error)?;
    let value =
        zotero_mcp_server::auth::crypto::random_string(TOKEN_CHARS).map_err(|e| TokenError::Random(e.to_string()))?;
    let written = file.write_all(format!("{value}\n").as_bytes()).and_then(|()| file.sync_all());
    if let Err(source) = written {
        // A half-written file would be read as malformed at the next start.
        let _ = std::fs::remove_file(path);
        return Err(write_error(source));
    }
    Ok(value)
}

/// Reads the token from `path`, narrowing a file others can read to its owner first (someone may have copied
/// it in with a plain `cp`).
fn read(path: &Path) -> Result<String, TokenError> {
    let read_error = |source| TokenError::Read { path: path.display().to_string(), source };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(path).map_err(read_error)?.permissions().mode() & 0o777;
        if mode & 0o077 != 0 {
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).map_err(read_error)?;
            eprintln!(
                "zotero-mcp: {} was mode {mode:o}, readable by others; it is now 600 (owner only). Anyone who read \
                 it can call this server: remove it and restart for a new token",
                path.display()
            );
        }
    }
    let text = std::fs::read_to_string(path).map_err(read_error)?;
    let value = text.trim();
    let well_formed =
        value.len() >= MIN_TOKEN_CHARS && value.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if !well_formed {
        return Err(TokenError::Malformed { path: path.display().to_string() });
    }
    Ok(value.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("zotero-mcp-token-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn the_first_start_makes_a_token_that_later_starts_reuse() {
        let dir = dir("reuse");
        let first = load_or_create(&dir).unwrap();
        assert!(first.created);
        assert_eq!(first.value.len(), TOKEN_CHARS);
        let second = load_or_create(&dir).unwrap();
        assert!(!second.created);
        assert_eq!(second.value, first.value);
        assert!(!format!("{second:?}").contains(&first.value), "Debug hides the token");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[cfg(unix)]
    #[test]
    fn the_file_is_owner_only_and_a_widened_one_is_narrowed() {
        use std::os::unix::fs::PermissionsExt;
        let dir = dir("mode");
        let token = load_or_create(&dir).unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&token.path), 0o600);
        std::fs::set_permissions(&token.path, std::fs::Permissions::from_mode(0o644)).unwrap();
        load_or_create(&dir).unwrap();
        assert_eq!(mode(&token.path), 0o600);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_short_or_empty_token_file_is_refused_with_what_to_do() {
        let dir = dir("short");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(TOKEN_FILE), "abc\n").unwrap();
        let error = load_or_create(&dir).unwrap_err().to_string();
        assert!(error.contains("remove it"), "{error}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
