//! A crate's module tree, read from its source files, and the reference graph between sibling modules.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use super::cycles::Graph;
use super::scan::{scan_source, FileScan};
use super::workspace_root;

/// The module path of a source file: `foo.rs` and `foo/mod.rs` are `[foo]`, `foo/bar.rs` is `[foo, bar]`, the
/// crate root (`lib.rs`, `main.rs`) is `[]`.
fn module_of(relative: &Path) -> Vec<String> {
    let mut parts: Vec<String> = relative.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    if let Some(last) = parts.last_mut() {
        if let Some(stem) = last.strip_suffix(".rs") {
            *last = stem.to_owned();
        }
    }
    if parts.last().is_some_and(|p| p == "mod") || (parts.len() == 1 && (parts[0] == "lib" || parts[0] == "main")) {
        parts.pop();
    }
    parts
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|entry| entry.expect("a directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// One crate's sources, scanned.
pub struct Crate {
    /// The source directory, relative to the workspace root (`crates/server/src`).
    src: String,
    modules: BTreeSet<Vec<String>>,
    /// Each file, relative to `src`, with its scan.
    files: Vec<(String, FileScan)>,
    /// Per module, the names its top-level `use` items bring in.
    imports: BTreeMap<Vec<String>, BTreeMap<String, Vec<String>>>,
}

impl Crate {
    /// Scans the crate whose sources are in `src` (relative to the workspace root).
    pub fn scan(src: &str) -> Self {
        let dir = workspace_root().join(src);
        let mut paths = Vec::new();
        rust_files(&dir, &mut paths);
        let files = paths
            .into_iter()
            .map(|path| {
                let relative = path.strip_prefix(&dir).expect("under src").to_string_lossy().replace('\\', "/");
                let source =
                    fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
                (relative, source)
            })
            .collect();
        Self::from_sources(src, files)
    }

    /// A crate made of the given files (paths relative to its source directory, `a/b.rs`), as if read from `src`:
    /// what the tests of the checker feed it.
    pub fn from_sources(src: &str, files: Vec<(String, String)>) -> Self {
        // `src/bin/*` are crate roots of their own.
        let sources: Vec<(String, Vec<String>, String)> = files
            .into_iter()
            .filter(|(relative, _)| !relative.starts_with("bin/"))
            .map(|(relative, source)| {
                let module = module_of(Path::new(&relative));
                (relative, module, source)
            })
            .collect();
        let modules: BTreeSet<Vec<String>> = sources.iter().map(|(_, module, _)| module.clone()).collect();
        let mut scanned = Vec::new();
        let mut imports = BTreeMap::new();
        for (relative, module, source) in sources {
            let children: BTreeSet<String> = modules
                .iter()
                .filter(|m| m.len() == module.len() + 1 && m.starts_with(&module))
                .map(|m| m[module.len()].clone())
                .collect();
            let scan = scan_source(&source, &module, &children);
            imports.entry(module).or_insert_with(BTreeMap::new).extend(scan.imports.clone());
            scanned.push((relative, scan));
        }
        Crate { src: src.to_owned(), modules, files: scanned, imports }
    }

    /// Follows `use` re-exports: `crate::zotero::ZoteroWriter` becomes `crate::zotero::writer::ZoteroWriter`.
    fn resolve(&self, path: &[String]) -> Vec<String> {
        let mut path = path.to_vec();
        for _ in 0..16 {
            let mut k = 0;
            while k < path.len() && self.modules.contains(&path[..=k]) {
                k += 1;
            }
            if k == path.len() {
                break;
            }
            match self.imports.get(&path[..k]).and_then(|names| names.get(&path[k])) {
                Some(target) if target.as_slice() != &path[..=k] => {
                    let mut next = target.clone();
                    next.extend_from_slice(&path[k + 1..]);
                    path = next;
                }
                _ => break,
            }
        }
        path
    }

    /// Modules that are directories (have modules inside), at every depth, as paths from the crate root
    /// (`[attachment]`, `[attachment, filename]`), in order.
    pub fn directory_modules(&self) -> Vec<Vec<String>> {
        let mut directories = BTreeSet::new();
        for module in &self.modules {
            for depth in 1..module.len() {
                directories.insert(module[..depth].to_vec());
            }
        }
        directories.into_iter().collect()
    }

    /// The graph between the modules just under `parent` (`[]` for the top-level modules, `[dir]` for the files
    /// of a directory module), each edge with the references that make it.
    pub fn graph(&self, parent: &[String]) -> Graph {
        let depth = parent.len();
        let nodes: BTreeSet<String> = self
            .modules
            .iter()
            .filter(|m| m.len() > depth && m.starts_with(parent))
            .map(|m| m[depth].clone())
            .collect();
        let mut graph: Graph = nodes.iter().map(|n| (n.clone(), BTreeMap::new())).collect();
        for (file, scan) in &self.files {
            for reference in &scan.references {
                if reference.from.len() <= depth || !reference.from.starts_with(parent) {
                    continue;
                }
                let to = self.resolve(&reference.to);
                if to.len() <= depth || !to.starts_with(parent) || !nodes.contains(&to[depth]) {
                    continue;
                }
                let (a, b) = (&reference.from[depth], &to[depth]);
                if a != b {
                    let place = format!("{}/{file}:{} `{}`", self.src, reference.line, reference.written);
                    // `a` may be an inline `mod` of the parent's own file, so not yet a node.
                    graph.entry(a.clone()).or_default().entry(b.clone()).or_default().push(place);
                }
            }
        }
        graph
    }
}
