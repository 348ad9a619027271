//! Where Zotero Desktop keeps its data on this machine: the data directory (`zotero.sqlite`, `storage/`) and
//! the base directory of linked files, read as Zotero itself finds them.
//!
//! Zotero's profile directory holds `profiles.ini`, which names the profile folder; that folder's `prefs.js`
//! records a data directory chosen in Settings (`extensions.zotero.dataDir`, honoured while
//! `extensions.zotero.useDataDir` is true) and the base directory of linked files
//! (`extensions.zotero.baseAttachmentPath`). Without a chosen one the data directory is `~/Zotero`.

use std::path::{Path, PathBuf};

/// Zotero's data on this machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ZoteroData {
    /// The data directory (holds `zotero.sqlite` and `storage/`).
    pub data_dir: PathBuf,
    /// The base directory linked files may be relative to, when Zotero has one.
    pub base_dir: Option<PathBuf>,
    /// How the data directory was found, for the start-up line.
    pub found_by: &'static str,
}

/// Finds Zotero's data: `explicit` (`ZOTERO_DATA_DIR`) when given, else what the default profile's `prefs.js`
/// says, else `~/Zotero`. The base directory always comes from `prefs.js` (or `explicit_base`,
/// `ZOTERO_BASE_DIR`).
pub fn find(explicit: Option<PathBuf>, explicit_base: Option<PathBuf>, home: Option<&Path>) -> Option<ZoteroData> {
    let prefs = home.and_then(|home| profile_dirs(home).into_iter().find_map(|dir| default_profile_prefs(&dir)));
    let pref = |name: &str| prefs.as_deref().and_then(|text| pref_value(text, name));
    let base_dir = explicit_base.or_else(|| pref("extensions.zotero.baseAttachmentPath").map(PathBuf::from));
    if let Some(data_dir) = explicit {
        return Some(ZoteroData { data_dir, base_dir, found_by: "ZOTERO_DATA_DIR" });
    }
    let chosen = pref("extensions.zotero.useDataDir").is_some_and(|v| v == "true");
    if let (true, Some(dir)) = (chosen, pref("extensions.zotero.dataDir")) {
        return Some(ZoteroData { data_dir: PathBuf::from(dir), base_dir, found_by: "Zotero's prefs.js" });
    }
    let data_dir = home?.join("Zotero");
    Some(ZoteroData { data_dir, base_dir, found_by: "the default, ~/Zotero" })
}

/// Where Zotero keeps its profiles on each platform, under the home directory.
fn profile_dirs(home: &Path) -> Vec<PathBuf> {
    let mut dirs = vec![
        home.join(".zotero").join("zotero"),
        home.join("Library").join("Application Support").join("Zotero"),
        home.join("AppData").join("Roaming").join("Zotero").join("Zotero"),
    ];
    if let Some(appdata) = std::env::var_os("APPDATA") {
        dirs.push(PathBuf::from(appdata).join("Zotero").join("Zotero"));
    }
    dirs
}

/// The text of the default profile's `prefs.js` under a profile directory, when there is one.
fn default_profile_prefs(dir: &Path) -> Option<String> {
    let ini = std::fs::read_to_string(dir.join("profiles.ini")).ok()?;
    let profile = default_profile(&ini)?;
    let folder = if profile.relative { dir.join(&profile.path) } else { PathBuf::from(&profile.path) };
    std::fs::read_to_string(folder.join("prefs.js")).ok()
}

struct Profile {
    path: String,
    relative: bool,
}

/// The profile `profiles.ini` marks `Default=1`, else its first.
fn default_profile(ini: &str) -> Option<Profile> {
    let mut profiles: Vec<(Profile, bool)> = Vec::new();
    let mut current: Option<(Option<String>, bool, bool)> = None;
    let finish = |current: &mut Option<(Option<String>, bool, bool)>, profiles: &mut Vec<(Profile, bool)>| {
        if let Some((Some(path), relative, default)) = current.take() {
            profiles.push((Profile { path, relative }, default));
        }
    };
    for line in ini.lines().map(str::trim) {
        if line.starts_with('[') {
            finish(&mut current, &mut profiles);
            current = line.to_ascii_lowercase().starts_with("[profile").then_some((None, true, false));
        } else if let (Some(entry), Some((name, value))) = (current.as_mut(), line.split_once('=')) {
            match name.trim() {
                "Path" => entry.0 = Some(value.trim().to_owned()),
                "IsRelative" => entry.1 = value.trim() != "0",
                "Default" => entry.2 = value.trim() == "1",
                _ => {}
            }
        }
    }
    finish(&mut current, &mut profiles);
    let first_default = profiles.iter().position(|(_, default)| *default).unwrap_or(0);
    (!profiles.is_empty()).then(|| profiles.swap_remove(first_default).0)
}

/// The value of `user_pref("<name>", <value>);` in a `prefs.js`: a string unquoted (with its JavaScript escapes
/// undone), or a boolean or number as written.
fn pref_value(prefs: &str, name: &str) -> Option<String> {
    let needle = format!("user_pref(\"{name}\",");
    let line = prefs.lines().map(str::trim).find(|line| line.starts_with(&needle))?;
    let value = line[needle.len()..].trim().strip_suffix(';')?.trim().strip_suffix(')')?.trim();
    match value.strip_prefix('"').and_then(|v| v.strip_suffix('"')) {
        Some(quoted) => Some(unescape(quoted)),
        None => Some(value.to_owned()),
    }
}

fn unescape(quoted: &str) -> String {
    let mut out = String::with_capacity(quoted.len());
    let mut chars = quoted.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(next) = chars.next() {
                out.push(next);
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_home(name: &str) -> PathBuf {
        let home = std::env::temp_dir().join(format!("zotero-mcp-profile-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&home);
        std::fs::create_dir_all(&home).unwrap();
        home
    }

    fn write_profile(home: &Path, prefs: &str) {
        let dir = home.join(".zotero").join("zotero");
        std::fs::create_dir_all(dir.join("abcd.default")).unwrap();
        std::fs::write(
            dir.join("profiles.ini"),
            "[General]\nStartWithLastProfile=1\n\n[Profile0]\nName=default\nIsRelative=1\nPath=abcd.default\nDefault=1\n",
        )
        .unwrap();
        std::fs::write(dir.join("abcd.default").join("prefs.js"), prefs).unwrap();
    }

    #[test]
    fn a_data_directory_chosen_in_settings_is_read_from_prefs_js() {
        let home = temp_home("chosen");
        write_profile(
            &home,
            "// Mozilla User Preferences\nuser_pref(\"extensions.zotero.dataDir\", \"/srv/zotero \\\"lab\\\"\");\n\
             user_pref(\"extensions.zotero.useDataDir\", true);\n\
             user_pref(\"extensions.zotero.baseAttachmentPath\", \"/home/r/Papers\");\n",
        );
        let found = find(None, None, Some(&home)).unwrap();
        assert_eq!(found.data_dir, PathBuf::from("/srv/zotero \"lab\""));
        assert_eq!(found.base_dir, Some(PathBuf::from("/home/r/Papers")));
        assert_eq!(found.found_by, "Zotero's prefs.js");
        let _ = std::fs::remove_dir_all(&home);
    }

    #[test]
    fn without_a_choice_the_data_directory_is_zotero_in_home() {
        let home = temp_home("default");
        write_profile(&home, "user_pref(\"extensions.zotero.dataDir\", \"/old\");\nuser_pref(\"extensions.zotero.useDataDir\", false);\n");
        let found = find(None, None, Some(&home)).unwrap();
        assert_eq!(found.data_dir, home.join("Zotero"));
        assert_eq!(found.base_dir, None);
        let explicit = find(Some(PathBuf::from("/x")), Some(PathBuf::from("/b")), Some(&home)).unwrap();
        assert_eq!((explicit.data_dir, explicit.base_dir), (PathBuf::from("/x"), Some(PathBuf::from("/b"))));
        let _ = std::fs::remove_dir_all(&home);
    }

    #[test]
    fn the_default_profile_wins() {
        let ini = "[Profile1]\nPath=/abs/other\nIsRelative=0\n\n[Profile0]\nPath=main\nIsRelative=1\nDefault=1\n";
        let profile = default_profile(ini).unwrap();
        assert_eq!((profile.path.as_str(), profile.relative), ("main", true));
        let first = default_profile("[Profile0]\nPath=/abs/one\nIsRelative=0\n").unwrap();
        assert_eq!((first.path.as_str(), first.relative), ("/abs/one", false));
        assert!(default_profile("[General]\nx=1\n").is_none());
    }
}
