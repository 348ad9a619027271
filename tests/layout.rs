//! The layout rules of the workspace, checked by `cargo test --workspace` (and so by CI):
//!
//! 1. Crate dependencies point one way. The Worker shell (the root package, `src/`) and the native binary
//!    (`crates/cli`) sit on the server (`crates/server`), which sits on the core (`crates/core`); the simulator
//!    (`crates/sim`) sits on the core alone. The core and the server stay free of any runtime (workers-rs,
//!    tokio, HTTP stacks, databases): those live in `src/` and `crates/cli`, behind the seams in
//!    `crates/core/src/platform`.
//! 2. No module circles. Within each crate the top-level modules (`crate::<module>`) reference each other
//!    without a cycle, and so do the files inside each directory module (`src/auth/*.rs`), except the few
//!    that have a circle today ([`SIBLING_CYCLES_ALLOWED`]).
//!
//! Only text is read (the Cargo.toml files and the sources); nothing is compiled or run. The source scan is a
//! small tokenizer, not a Rust parser: it skips comments, strings and character literals, follows `use` trees,
//! `crate::`, `self::` and `super::` paths, inline `mod x { … }` blocks and `use` re-exports.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fs;
use std::path::{Path, PathBuf};

// ---------------------------------------------------------------------------------------------------------------
// 1. Crate dependencies

/// Crates that make a runtime: the core and the server must not use them.
const RUNTIME_CRATES: &[&str] =
    &["worker", "tokio", "reqwest", "hyper", "redb", "wasm-bindgen", "wasm-bindgen-futures", "js-sys", "web-sys"];

/// What one workspace member may depend on (normal and build dependencies; dev-dependencies are free).
struct CrateRule {
    /// The member's directory, relative to the workspace root, as in `[workspace] members`.
    dir: &'static str,
    /// The workspace members it may depend on, by directory.
    may_use: &'static [&'static str],
    /// Other crates it must not depend on.
    forbidden: &'static [&'static str],
    /// What to do instead, for the failure message.
    instead: &'static str,
}

const CRATE_RULES: &[CrateRule] = &[
    CrateRule { dir: ".", may_use: &["crates/server", "crates/core"], forbidden: &[], instead: "" },
    CrateRule {
        dir: "crates/core",
        may_use: &[],
        forbidden: RUNTIME_CRATES,
        instead: "crates/core is runtime-free: reach the runtime through the seams in crates/core/src/platform, and \
                  put runtime code in crates/cli (native) or src/ (the Worker)",
    },
    CrateRule {
        dir: "crates/server",
        may_use: &["crates/core"],
        forbidden: RUNTIME_CRATES,
        instead: "crates/server is runtime-free: reach the runtime through the seams in crates/core/src/platform, \
                  and put runtime code in crates/cli (native) or src/ (the Worker)",
    },
    CrateRule {
        dir: "crates/sim",
        may_use: &["crates/core"],
        forbidden: &["worker"],
        instead: "only the Worker shell (the root package, src/) may use workers-rs",
    },
    CrateRule {
        dir: "crates/cli",
        may_use: &["crates/server", "crates/core", "crates/sim"],
        forbidden: &["worker"],
        instead: "only the Worker shell (the root package, src/) may use workers-rs",
    },
];

fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read_manifest(dir: &str) -> toml::Table {
    let path = workspace_root().join(dir).join("Cargo.toml");
    let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    toml::from_str(&text).unwrap_or_else(|e| panic!("cannot parse {}: {e}", path.display()))
}

fn label(dir: &str) -> String {
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
fn normal_dependencies(manifest: &toml::Table, workspace_deps: &toml::Table) -> Vec<(String, String)> {
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

#[test]
fn crate_dependencies_point_one_way() {
    let root = read_manifest(".");
    let workspace = root.get("workspace").and_then(|w| w.as_table()).expect("the root Cargo.toml has [workspace]");
    let empty = toml::Table::new();
    let workspace_deps = workspace.get("dependencies").and_then(|d| d.as_table()).unwrap_or(&empty);
    let members: Vec<String> = workspace
        .get("members")
        .and_then(|m| m.as_array())
        .expect("[workspace] lists its members")
        .iter()
        .map(|m| m.as_str().expect("members are strings").trim_end_matches('/').to_owned())
        .collect();

    let mut failures = Vec::new();
    for member in &members {
        if !CRATE_RULES.iter().any(|rule| rule.dir == member) {
            failures.push(format!(
                "workspace member {member} has no rule: add it to CRATE_RULES in tests/layout.rs, saying which \
                 workspace crates it may depend on"
            ));
        }
    }
    for rule in CRATE_RULES {
        if !members.iter().any(|m| m == rule.dir) {
            failures.push(format!(
                "CRATE_RULES in tests/layout.rs names {}, which is not a workspace member: remove or fix the rule",
                rule.dir
            ));
        }
    }

    // Package name -> member directory.
    let mut member_of = BTreeMap::new();
    for member in &members {
        let manifest = read_manifest(member);
        let name = manifest
            .get("package")
            .and_then(|p| p.get("name"))
            .and_then(|n| n.as_str())
            .unwrap_or_else(|| panic!("{member}/Cargo.toml has no package name"));
        member_of.insert(name.to_owned(), member.clone());
    }

    for rule in CRATE_RULES.iter().filter(|rule| members.iter().any(|m| m == rule.dir)) {
        let manifest = read_manifest(rule.dir);
        let who = label(rule.dir);
        for (package, table) in normal_dependencies(&manifest, workspace_deps) {
            if let Some(dir) = member_of.get(&package) {
                if dir != rule.dir && !rule.may_use.contains(&dir.as_str()) {
                    let allowed =
                        if rule.may_use.is_empty() { "no workspace crate".to_owned() } else { rule.may_use.join(", ") };
                    failures.push(format!(
                        "{who} must not depend on {package} ({}), found in {table} of {}/Cargo.toml. Dependencies \
                         point one way: src/ and crates/cli -> crates/server -> crates/core, crates/sim -> \
                         crates/core (crates/cli may also use crates/sim); {who} may use {allowed}. Move what both \
                         need down into the lower crate, or make it a [dev-dependencies] entry if only tests need it",
                        label(dir),
                        rule.dir
                    ));
                }
            }
            if rule.forbidden.contains(&package.as_str()) {
                failures.push(format!(
                    "{who} must not depend on {package}, found in {table} of {}/Cargo.toml: {}",
                    rule.dir, rule.instead
                ));
            }
        }
    }
    assert!(failures.is_empty(), "crate dependency rules broken:\n  - {}\n", failures.join("\n  - "));
}

// ---------------------------------------------------------------------------------------------------------------
// 2. Module cycles

/// The source directories whose module graphs are checked.
const SOURCE_DIRS: &[&str] = &["crates/core/src", "crates/server/src", "crates/sim/src", "crates/cli/src", "src"];

/// Directory modules whose files (the sibling modules inside them) reference each other without a circle
/// today, and must go on so: edges come from `super::x`, `self::x` and `crate::<dir>::x` references, with the
/// `use` re-exports of the directory's `mod.rs` followed. A directory module listed nowhere (a new one) is
/// checked too; only those in [`SIBLING_CYCLES_ALLOWED`] are not.
const SIBLING_CHECKED: &[&str] = &[
    "crates/core/src/platform",
    "crates/core/src/zotero",
    "crates/server/src/auth",
    "crates/server/src/format",
    "crates/server/src/mcp",
    "crates/server/src/pages",
    "crates/server/src/tools",
    "crates/cli/src/commands",
    "crates/cli/src/native",
];

/// Directory modules whose files reference each other in a circle today, so only their place in the top-level
/// graph is checked. Each entry names its circle. The test fails once the circle is gone, so that the entry
/// moves to [`SIBLING_CHECKED`] and the circle cannot come back.
const SIBLING_CYCLES_ALLOWED: &[(&str, &str)] = &[];

/// One reference from a module to a path, with where it was written.
#[derive(Debug, Clone)]
struct Reference {
    /// The module the reference is in (inline `mod` blocks included), from the crate root.
    from: Vec<String>,
    /// The absolute path referred to, from the crate root, as written (re-exports not yet followed).
    to: Vec<String>,
    line: usize,
    written: String,
}

#[derive(Debug, Default)]
struct FileScan {
    references: Vec<Reference>,
    /// The names the file's top-level `use` items bring in, and the absolute paths they stand for.
    imports: BTreeMap<String, Vec<String>>,
}

#[derive(Debug, Clone, PartialEq)]
struct Token {
    text: String,
    line: usize,
}

fn is_word_char(c: char) -> bool {
    c == '_' || c.is_alphanumeric()
}

/// Skips a string literal whose opening quote is at `i`; returns the index after its closing quote.
fn skip_string(chars: &[char], mut i: usize, line: &mut usize) -> usize {
    i += 1;
    while i < chars.len() {
        match chars[i] {
            '\\' => {
                if chars.get(i + 1) == Some(&'\n') {
                    *line += 1;
                }
                i += 2;
            }
            '"' => return i + 1,
            c => {
                if c == '\n' {
                    *line += 1;
                }
                i += 1;
            }
        }
    }
    i
}

/// Skips a raw string whose `#`s or opening quote start at `i`; returns the index after it, or None when
/// `chars[i..]` does not open a raw string.
fn skip_raw_string(chars: &[char], i: usize, line: &mut usize) -> Option<usize> {
    let mut j = i;
    while chars.get(j) == Some(&'#') {
        j += 1;
    }
    if chars.get(j) != Some(&'"') {
        return None;
    }
    let hashes = j - i;
    j += 1;
    while j < chars.len() {
        if chars[j] == '"' && (1..=hashes).all(|k| chars.get(j + k) == Some(&'#')) {
            return Some(j + 1 + hashes);
        }
        if chars[j] == '\n' {
            *line += 1;
        }
        j += 1;
    }
    Some(j)
}

/// Splits Rust source into words and punctuation, dropping comments (doc comments too), string and character
/// literals. `::` is one token and `$crate` one word; numbers come out as words, which is harmless here.
fn tokenize(source: &str) -> Vec<Token> {
    let chars: Vec<char> = source.chars().collect();
    let mut tokens = Vec::new();
    let mut line = 1;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        match c {
            '\n' => {
                line += 1;
                i += 1;
            }
            c if c.is_whitespace() => i += 1,
            '/' if next == Some('/') => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            '/' if next == Some('*') => {
                let mut depth = 0;
                while i < chars.len() {
                    if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                        depth += 1;
                        i += 2;
                    } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        if chars[i] == '\n' {
                            line += 1;
                        }
                        i += 1;
                    }
                }
            }
            '"' => i = skip_string(&chars, i, &mut line),
            '\'' => {
                if next == Some('\\') {
                    // An escaped character literal: '\n', '\'', '\u{..}'.
                    i += 3;
                    while i < chars.len() && chars[i] != '\'' {
                        i += 1;
                    }
                    i += 1;
                } else if chars.get(i + 2) == Some(&'\'') {
                    i += 3;
                } else {
                    // A lifetime or a label: its name comes out as a word.
                    i += 1;
                }
            }
            ':' if next == Some(':') => {
                tokens.push(Token { text: "::".to_owned(), line });
                i += 2;
            }
            '$' if chars[i + 1..].starts_with(&['c', 'r', 'a', 't', 'e'])
                && !chars.get(i + 6).copied().is_some_and(is_word_char) =>
            {
                tokens.push(Token { text: "$crate".to_owned(), line });
                i += 6;
            }
            c if is_word_char(c) => {
                let start = i;
                while i < chars.len() && is_word_char(chars[i]) {
                    i += 1;
                }
                let word: String = chars[start..i].iter().collect();
                match (word.as_str(), chars.get(i)) {
                    ("r" | "br" | "cr", Some('"' | '#')) => {
                        if let Some(end) = skip_raw_string(&chars, i, &mut line) {
                            i = end;
                        } else if word == "r" && chars.get(i + 1).copied().is_some_and(is_word_char) {
                            // A raw identifier, kept as `r#name` so it never reads as a keyword.
                            let start = i + 1;
                            i = start;
                            while i < chars.len() && is_word_char(chars[i]) {
                                i += 1;
                            }
                            let name: String = chars[start..i].iter().collect();
                            tokens.push(Token { text: format!("r#{name}"), line });
                        } else {
                            tokens.push(Token { text: word, line });
                        }
                    }
                    ("b" | "c", Some('"')) => i = skip_string(&chars, i, &mut line),
                    _ => tokens.push(Token { text: word, line }),
                }
            }
            c => {
                tokens.push(Token { text: c.to_string(), line });
                i += 1;
            }
        }
    }
    tokens
}

fn is_path_word(text: &str) -> bool {
    text == "$crate" || text.chars().next().is_some_and(|c| c == '_' || c.is_alphabetic())
}

/// A leaf of a use tree or a plain path: its segments as written, the name it brings in (None for a glob), and
/// the line where the tree starts.
type Leaf = (Vec<String>, Option<String>, usize);

/// Reads the use tree (or plain path) at `tokens[i]`, under `prefix`; returns the index after it.
fn parse_tree(tokens: &[Token], mut i: usize, prefix: Vec<String>, leaves: &mut Vec<Leaf>) -> usize {
    let text = |i: usize| tokens.get(i).map(|t| t.text.as_str());
    let line = tokens.get(i).map_or(0, |t| t.line);
    let mut path = prefix;
    loop {
        match text(i) {
            Some("{") => {
                i += 1;
                loop {
                    match text(i) {
                        Some("}") => return i + 1,
                        None => return i,
                        _ => {}
                    }
                    let before = i;
                    i = parse_tree(tokens, i, path.clone(), leaves);
                    match text(i) {
                        Some(",") => i += 1,
                        Some("}") => return i + 1,
                        _ if i == before => return i + 1,
                        _ => return i,
                    }
                }
            }
            Some("*") => {
                leaves.push((path, None, line));
                return i + 1;
            }
            Some(word) if is_path_word(word) => {
                path.push(word.to_owned());
                i += 1;
                if text(i) == Some("::") {
                    i += 1;
                    continue;
                }
                let mut alias = path.last().cloned();
                if alias.as_deref() == Some("self") {
                    alias = path.len().checked_sub(2).map(|k| path[k].clone());
                }
                if text(i) == Some("as") {
                    alias = text(i + 1).map(str::to_owned);
                    i += 2;
                }
                leaves.push((path, alias, line));
                return i;
            }
            _ => {
                if !path.is_empty() {
                    let alias = path.last().cloned();
                    leaves.push((path, alias, line));
                }
                return i;
            }
        }
    }
}

/// The absolute path (from the crate root) of `written`, seen from module `current`; None for paths into other
/// crates, the prelude or local items. `children`, when given, are the child modules a relative `use` path may
/// start with.
fn absolute(written: &[String], current: &[String], children: Option<&BTreeSet<String>>) -> Option<Vec<String>> {
    let first = written.first()?.as_str();
    let (mut base, rest) = match first {
        "crate" | "$crate" => (Vec::new(), &written[1..]),
        "self" => (current.to_vec(), &written[1..]),
        "super" => (current.to_vec(), written),
        name if children.is_some_and(|c| c.contains(name)) => (current.to_vec(), written),
        _ => return None,
    };
    for segment in rest {
        match segment.as_str() {
            "super" => {
                base.pop();
            }
            "self" => {}
            _ => base.push(segment.clone()),
        }
    }
    Some(base)
}

/// A path as written, for messages (`super::cimd::self` shows as `super::cimd`).
fn show(written: &[String]) -> String {
    let path = written.join("::");
    path.strip_suffix("::self").map_or(path.clone(), str::to_owned)
}

/// Finds the references of one file in module `module`, whose child modules are `children`.
fn scan_source(source: &str, module: &[String], children: &BTreeSet<String>) -> FileScan {
    let tokens = tokenize(source);
    let text = |i: usize| tokens.get(i).map(|t| t.text.as_str());
    let mut scan = FileScan::default();
    let mut depth = 0usize;
    // Inline `mod name { … }` blocks we are in, with the brace depth inside each.
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        let current: Vec<String> = module.iter().cloned().chain(inline.iter().map(|(name, _)| name.clone())).collect();
        match tokens[i].text.as_str() {
            "{" => depth += 1,
            "}" => {
                if inline.last().is_some_and(|&(_, d)| d == depth) {
                    inline.pop();
                }
                depth = depth.saturating_sub(1);
            }
            "mod" if text(i + 2) == Some("{") => {
                depth += 1;
                inline.push((tokens[i + 1].text.clone(), depth));
                i += 3;
                continue;
            }
            "use" => {
                let mut leaves = Vec::new();
                let end = parse_tree(&tokens, i + 1, Vec::new(), &mut leaves);
                let top = depth == 0 && inline.is_empty();
                for (written, alias, line) in leaves {
                    let Some(to) = absolute(&written, &current, top.then_some(children)) else { continue };
                    if top {
                        if let Some(name) = alias.filter(|name| name != "_") {
                            scan.imports.insert(name, to.clone());
                        }
                    }
                    scan.references.push(Reference { from: current.clone(), to, line, written: show(&written) });
                }
                i = end.max(i + 1);
                continue;
            }
            "crate" | "$crate" | "super" | "self"
                if text(i + 1) == Some("::")
                    && i.checked_sub(1).and_then(text) != Some("::")
                    && !(i.checked_sub(1).and_then(text) == Some("in")
                        && i.checked_sub(2).and_then(text) == Some("(")) =>
            {
                let mut leaves = Vec::new();
                let end = parse_tree(&tokens, i, Vec::new(), &mut leaves);
                for (written, _, line) in leaves {
                    if let Some(to) = absolute(&written, &current, None) {
                        scan.references.push(Reference { from: current.clone(), to, line, written: show(&written) });
                    }
                }
                i = end.max(i + 1);
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    scan
}

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
struct Crate {
    /// The source directory, relative to the workspace root (`crates/server/src`).
    src: String,
    modules: BTreeSet<Vec<String>>,
    /// Each file, relative to `src`, with its scan.
    files: Vec<(String, FileScan)>,
    /// Per module, the names its top-level `use` items bring in.
    imports: BTreeMap<Vec<String>, BTreeMap<String, Vec<String>>>,
}

impl Crate {
    fn scan(src: &str) -> Self {
        let dir = workspace_root().join(src);
        let mut paths = Vec::new();
        rust_files(&dir, &mut paths);
        // `src/bin/*` are crate roots of their own.
        let sources: Vec<(String, Vec<String>, PathBuf)> = paths
            .into_iter()
            .map(|path| {
                let relative = path.strip_prefix(&dir).expect("under src").to_path_buf();
                (relative.to_string_lossy().replace('\\', "/"), module_of(&relative), path)
            })
            .filter(|(relative, _, _)| !relative.starts_with("bin/"))
            .collect();
        let modules: BTreeSet<Vec<String>> = sources.iter().map(|(_, module, _)| module.clone()).collect();
        let mut files = Vec::new();
        let mut imports = BTreeMap::new();
        for (relative, module, path) in sources {
            let children: BTreeSet<String> = modules
                .iter()
                .filter(|m| m.len() == module.len() + 1 && m.starts_with(&module))
                .map(|m| m[module.len()].clone())
                .collect();
            let source = fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
            let scan = scan_source(&source, &module, &children);
            imports.entry(module).or_insert_with(BTreeMap::new).extend(scan.imports.clone());
            files.push((relative, scan));
        }
        Crate { src: src.to_owned(), modules, files, imports }
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

    /// Top-level modules that are directories (have modules inside).
    fn directory_modules(&self) -> Vec<String> {
        self.modules
            .iter()
            .filter(|m| m.len() == 2)
            .map(|m| m[0].clone())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect()
    }

    /// The graph between the modules just under `parent` (`[]` for the top-level modules, `[dir]` for the files
    /// of a directory module), each edge with the references that make it.
    fn graph(&self, parent: &[String]) -> Graph {
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

/// Module -> module it references -> where.
type Graph = BTreeMap<String, BTreeMap<String, Vec<String>>>;

/// One cycle from each strongly connected component with more than one module.
fn cycles(graph: &Graph) -> Vec<Vec<String>> {
    // Tarjan's algorithm; the graphs are small.
    struct State<'g> {
        graph: &'g Graph,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        on_stack: BTreeSet<&'g str>,
        components: Vec<Vec<&'g str>>,
    }
    fn visit<'g>(s: &mut State<'g>, v: &'g str) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on_stack.insert(v);
        for w in s.graph[v].keys() {
            let w = w.as_str();
            if !s.index.contains_key(w) {
                visit(s, w);
                let low = s.low[v].min(s.low[w]);
                s.low.insert(v, low);
            } else if s.on_stack.contains(w) {
                let low = s.low[v].min(s.index[w]);
                s.low.insert(v, low);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                component.push(w);
                if w == v {
                    break;
                }
            }
            s.components.push(component);
        }
    }
    let mut state = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        components: Vec::new(),
    };
    for v in graph.keys() {
        if !state.index.contains_key(v.as_str()) {
            visit(&mut state, v);
        }
    }
    let mut found = Vec::new();
    for component in state.components.into_iter().filter(|c| c.len() > 1) {
        // The shortest cycle through the component's first module, by breadth-first search within it.
        let members: BTreeSet<&str> = component.iter().copied().collect();
        let start = *members.iter().next().expect("not empty");
        let mut came_from: BTreeMap<&str, &str> = BTreeMap::new();
        let mut queue = VecDeque::from([start]);
        'search: while let Some(v) = queue.pop_front() {
            for w in graph[v].keys().map(String::as_str).filter(|w| members.contains(w)) {
                if w == start {
                    let mut cycle = vec![v.to_owned()];
                    let mut at = v;
                    while at != start {
                        at = came_from[at];
                        cycle.push(at.to_owned());
                    }
                    cycle.reverse();
                    found.push(cycle);
                    break 'search;
                }
                if !came_from.contains_key(w) {
                    came_from.insert(w, v);
                    queue.push_back(w);
                }
            }
        }
    }
    found
}

/// A readable account of a cycle: the circle, then each step with the references that make it.
fn describe_cycle(graph: &Graph, cycle: &[String]) -> String {
    let mut circle = cycle.to_vec();
    circle.push(cycle[0].clone());
    let mut text = circle.join(" -> ");
    for pair in circle.windows(2) {
        let places = &graph[&pair[0]][&pair[1]];
        text.push_str(&format!("\n      {} -> {}:", pair[0], pair[1]));
        for place in places.iter().take(4) {
            text.push_str(&format!("\n        {place}"));
        }
        if places.len() > 4 {
            text.push_str(&format!("\n        … and {} more", places.len() - 4));
        }
    }
    text
}

const BREAK_A_CYCLE: &str = "Break the circle: decide which module is the lower one and move what it takes from the \
                             higher one down into it (or into a new module both can use), so references point one way.";

#[test]
fn top_level_modules_form_no_cycle() {
    let mut failures = Vec::new();
    for src in SOURCE_DIRS {
        let krate = Crate::scan(src);
        let graph = krate.graph(&[]);
        for cycle in cycles(&graph) {
            failures.push(format!(
                "{src}: top-level modules reference each other in a circle: {}",
                describe_cycle(&graph, &cycle)
            ));
        }
    }
    assert!(failures.is_empty(), "module cycles:\n  - {}\n{BREAK_A_CYCLE}\n", failures.join("\n  - "));
}

#[test]
fn files_of_directory_modules_form_no_cycle() {
    let mut failures = Vec::new();
    let mut seen = BTreeSet::new();
    for src in SOURCE_DIRS {
        let krate = Crate::scan(src);
        for dir in krate.directory_modules() {
            let name = format!("{src}/{dir}");
            seen.insert(name.clone());
            let graph = krate.graph(std::slice::from_ref(&dir));
            let found = cycles(&graph);
            if let Some((_, circle)) = SIBLING_CYCLES_ALLOWED.iter().find(|(allowed, _)| *allowed == name) {
                if found.is_empty() {
                    failures.push(format!(
                        "{name} no longer has the circle SIBLING_CYCLES_ALLOWED in tests/layout.rs allows it \
                         ({circle}): well done; move {name} from SIBLING_CYCLES_ALLOWED to SIBLING_CHECKED, so \
                         the circle cannot come back"
                    ));
                }
                continue;
            }
            let listed = if SIBLING_CHECKED.contains(&name.as_str()) { "" } else { " (a new directory module)" };
            for cycle in found {
                failures.push(format!(
                    "{name}{listed}: its files reference each other in a circle: {}",
                    describe_cycle(&graph, &cycle)
                ));
            }
        }
    }
    for (listed, _) in SIBLING_CYCLES_ALLOWED {
        if !seen.contains(*listed) {
            failures.push(format!(
                "SIBLING_CYCLES_ALLOWED in tests/layout.rs lists {listed}, which is no longer a directory module: \
                 remove the entry"
            ));
        }
    }
    assert!(failures.is_empty(), "module cycles:\n  - {}\n{BREAK_A_CYCLE}\n", failures.join("\n  - "));
}

/// The scanner itself: what it must see and what it must skip.
#[test]
fn the_scanner_reads_references_as_rust_does() {
    let source = r####"
//! Doc: crate::doc_comment::X must be skipped.
use std::fmt;
use crate::{alpha::{self, A}, beta::B as Bee};
use super::{gamma, Delta};
use child::Thing;
pub(in crate::visibility) fn f() {
    /* crate::block_comment /* nested crate::nested */ */
    let _ = "crate::string";
    let _ = r#"crate::raw "string""#;
    let _ = '"'; let _ = '\''; let _: &'static str = "";
    crate::epsilon::call::<u8>();
    let _ = self::local::x;
}
#[cfg(test)]
mod tests {
    use super::Thing;
    fn g() { crate::zeta::h(); }
}
"####;
    let children: BTreeSet<String> = ["child".to_owned()].into();
    let module = vec!["top".to_owned(), "file".to_owned()];
    let scan = scan_source(source, &module, &children);
    let seen: Vec<(String, String, usize)> =
        scan.references.iter().map(|r| (r.from.join("::"), r.to.join("::"), r.line)).collect();
    let expected: Vec<(String, String, usize)> = [
        ("top::file", "alpha", 4),
        ("top::file", "alpha::A", 4),
        ("top::file", "beta::B", 4),
        ("top::file", "top::gamma", 5),
        ("top::file", "top::Delta", 5),
        ("top::file", "top::file::child::Thing", 6),
        ("top::file", "epsilon::call", 12),
        ("top::file", "top::file::local::x", 13),
        ("top::file::tests", "top::file::Thing", 17),
        ("top::file::tests", "zeta::h", 18),
    ]
    .into_iter()
    .map(|(a, b, l)| (a.to_owned(), b.to_owned(), l))
    .collect();
    assert_eq!(seen, expected);
    assert_eq!(scan.imports.get("Bee").map(|p| p.join("::")).as_deref(), Some("beta::B"));
    assert_eq!(scan.imports.get("alpha").map(|p| p.join("::")).as_deref(), Some("alpha"));
    assert!(!scan.imports.contains_key("Thing") || scan.imports["Thing"].join("::") == "top::file::child::Thing");
}
