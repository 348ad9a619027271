//! The Cargo.toml side of the layout rules: reading the manifests and listing each member's dependencies.

use std::fs;

use super::workspace_root;

pub fn read_manifest(dir: &str) -> toml::Table {
    let path = workspace_root().join(dir).join("Cargo.toml");
    let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    toml::from_str(&text).unwrap_or_else(|e| panic!("cannot parse {}: {e}", path.display()))
}

pub fn label(dir: &str) -> String {
    if dir == "." {
        "the Worker shell (the root package, src/)".to_owned()
    } else {
        dir.to_owned()
    }
}

/// The package a dependency entry names: its `package` key, the `package` key of the workspace entry it
/// inherits, or else its own key.
fn package_name(key: &str, spec: &toml::Value, workspace_deps: &toml::Table) -> String {
    let renamed = |spec: &toml::Value| spec.get("package").and_then(|p| p.as_str()).map(str::to_owned);
    if let Some(name) = renamed(spec) {
        return name;
    }
    if spec.get("workspace").and_then(|w| w.as_bool()) == Some(true) {
        if let Some(name) = workspace_deps.get(key).and_then(renamed) {
            return name;
        }
    }
    key.to_owned()
}

/// Every dependency of a manifest except dev-dependencies, target-specific ones included: (package, table).
pub fn normal_dependencies(manifest: &toml::Table, workspace_deps: &toml::Table) -> Vec<(String, String)> {
    let mut found = Vec::new();
    let mut scan = |table: &toml::Table, prefix: &str| {
        for kind in ["dependencies", "build-dependencies", "build_dependencies"] {
            if let Some(deps) = table.get(kind).and_then(|v| v.as_table()) {
                for (key, spec) in deps {
                    found.push((package_name(key, spec, workspace_deps), format!("[{prefix}{kind}]")));
                }
            }
        }
    };
    scan(manifest, "");
    if let Some(targets) = manifest.get("target").and_then(|v| v.as_table()) {
        for (cfg, table) in targets {
            if let Some(table) = table.as_table() {
                scan(table, &format!("target.'{cfg}'."));
            }
        }
    }
    found
}
