//! Where the native server's settings come from: environment variables with the Worker's names
//! (`ZOTERO_API_KEY`, `AUTH_PASSWORD`, …), else a TOML config file with the same keys, plus the two settings
//! only a native server has (`ZOTERO_MCP_TOKEN`, `ZOTERO_MCP_DATA_DIR`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use zotero_mcp_server::config::Config;

/// The settings of one run.
pub struct Settings {
    values: HashMap<String, String>,
    /// The file the values came from, if any (for messages).
    pub file: Option<PathBuf>,
}

impl Settings {
    /// Reads the config file (`explicit`, else `ZOTERO_MCP_CONFIG`, else `<config dir>/zotero-mcp/config.toml`
    /// when it exists). An explicit file that is missing or malformed is an error; the default one is optional.
    pub fn load(explicit: Option<&Path>) -> Result<Self, String> {
        let named =
            explicit.map(Path::to_path_buf).or_else(|| std::env::var_os("ZOTERO_MCP_CONFIG").map(PathBuf::from));
        let path = match named {
            Some(path) => Some(path),
            None => dirs::config_dir().map(|d| d.join("zotero-mcp").join("config.toml")).filter(|p| p.exists()),
        };
        let values = match &path {
            Some(path) => parse_file(path)?,
            None => HashMap::new(),
        };
        Ok(Self { values, file: path })
    }

    /// Settings from these values only (tests).
    pub fn from_values(values: &[(&str, &str)]) -> Self {
        Self { values: values.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect(), file: None }
    }

    /// A setting: the environment wins over the file. Empty counts as unset.
    pub fn get(&self, name: &str) -> Option<String> {
        std::env::var(name)
            .ok()
            .or_else(|| self.values.get(name).cloned())
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty())
    }

    /// The server configuration, read exactly as the Worker reads its variables.
    pub fn config(&self) -> Config {
        Config::from_lookup(|name| self.get(name))
    }

    /// Where the key/value database lives: `ZOTERO_MCP_DATA_DIR`, else the user's data directory.
    pub fn data_dir(&self) -> Result<PathBuf, String> {
        if let Some(dir) = self.get("ZOTERO_MCP_DATA_DIR") {
            return Ok(PathBuf::from(dir));
        }
        dirs::data_dir()
            .map(|d| d.join("zotero-mcp"))
            .ok_or_else(|| "no data directory is known for this user: set ZOTERO_MCP_DATA_DIR".to_owned())
    }
}

fn parse_file(path: &Path) -> Result<HashMap<String, String>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("could not read {}: {e}", path.display()))?;
    let table: toml::Table = text.parse().map_err(|e| format!("{} is not valid TOML: {e}", path.display()))?;
    let mut values = HashMap::new();
    for (key, value) in table {
        let text = match value {
            toml::Value::String(s) => s,
            toml::Value::Integer(i) => i.to_string(),
            toml::Value::Boolean(b) => if b { "1" } else { "0" }.to_owned(),
            _ => return Err(format!("{}: `{key}` must be a string (write it as {key} = \"…\")", path.display())),
        };
        values.insert(key, text);
    }
    Ok(values)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_config_file_uses_the_workers_names() {
        let path = std::env::temp_dir().join(format!("zotero-mcp-settings-{}.toml", std::process::id()));
        std::fs::write(&path, "ZOTERO_API_KEY = \"k3y\"\nZOTERO_LIBRARY_ID = 12345\nZOTERO_LIBRARY_TYPE = \"group\"\n")
            .unwrap();
        let settings = Settings::load(Some(&path)).unwrap();
        let config = settings.config();
        assert_eq!(config.zotero_api_key.as_deref(), Some("k3y"));
        assert_eq!(config.zotero_library_id.as_deref(), Some("12345"));
        assert_eq!(config.zotero_library_type, zotero_mcp_core::zotero::LibraryKind::Group);
        std::fs::write(&path, "ZOTERO_API_KEY = [1]\n").unwrap();
        let error = Settings::load(Some(&path)).err().unwrap();
        assert!(error.contains("must be a string"), "{error}");
        let _ = std::fs::remove_file(&path);
        assert!(Settings::load(Some(Path::new("/nonexistent/zotero-mcp.toml"))).is_err());
    }
}
