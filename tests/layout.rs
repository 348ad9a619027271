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
//!
//! This file holds the rules and the tests; the machinery is in `tests/layout/`: `manifest` (Cargo.toml
//! dependencies), `tokens` and `scan` (the source scan), `modules` (a crate's module tree and its reference
//! graph), `cycles` (finding a circle and describing it).

// A crate root's `mod x;` looks for `tests/x.rs`, which Cargo would build as a test of its own: hence the paths.
#[path = "layout/cycles.rs"]
mod cycles;
#[path = "layout/manifest.rs"]
mod manifest;
#[path = "layout/modules.rs"]
mod modules;
#[path = "layout/scan.rs"]
mod scan;
#[path = "layout/tokens.rs"]
mod tokens;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use cycles::{cycles, describe_cycle};
use manifest::{label, normal_dependencies, read_manifest};
use modules::Crate;
use scan::scan_source;

/// The workspace root: the root package's directory.
fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

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
    // Stand-ins for two of lopdf's dependencies (crates/shims/README.md): leaves, with no dependencies at all.
    CrateRule {
        dir: "crates/shims/brotli-decompressor",
        may_use: &[],
        forbidden: &["worker"],
        instead: "a shim stands in for one crate and depends on nothing",
    },
    CrateRule {
        dir: "crates/shims/stringprep",
        may_use: &[],
        forbidden: &["worker"],
        instead: "a shim stands in for one crate and depends on nothing",
    },
];

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
