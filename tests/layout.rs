//! The layout rules of the workspace, checked by `cargo test --workspace` (and so by CI):
//!
//! 1. Crate dependencies point one way. The Worker shell (the root package, `src/`) and the native binary
//!    (`crates/cli`) sit on the server (`crates/server`), which sits on the core (`crates/core`); the simulator
//!    (`crates/sim`) sits on the core alone. The core and the server stay free of any runtime (workers-rs,
//!    tokio, HTTP stacks, databases): those live in `src/` and `crates/cli`, behind the seams in
//!    `crates/core/src/platform`.
//! 2. No module circles. Within each crate the top-level modules (`crate::<module>`) reference each other
//!    without a cycle, and so do the modules inside each directory module, at every depth (`src/auth/*.rs`,
//!    `src/attachment/filename/*.rs`), except the few that have a circle today ([`SIBLING_CYCLES_ALLOWED`]).
//! 3. The server's layers. Its top-level modules reference only their own layer or those below
//!    ([`SERVER_LAYERS`]), and `mcp` knows nothing of `auth` or `tools` ([`SERVER_NEVER`]).
//! 4. Comments stand on their own. A comment in `crates/` or `src/` states its rule (and names the test that holds
//!    it), never an issue number or a document outside the repository ([`outside_reference`]): a reader of the
//!    code has neither, and what they said goes stale while the code moves on.
//!
//! Only text is read (the Cargo.toml files and the sources); nothing is compiled or run. The source scan is a
//! small tokenizer, not a Rust parser: it skips comments, strings and character literals, follows `use` trees,
//! `crate::`, `self::` and `super::` paths, inline `mod x { … }` blocks and `use` re-exports.
//!
//! This file holds the rules and the tests; the machinery is in `tests/layout/`: `manifest` (Cargo.toml
//! dependencies), `tokens` and `scan` (the source scan), `modules` (a crate's module tree and its reference
//! graph), `cycles` (finding a circle and describing it), `layers` (checking a graph against layers).

// A crate root's `mod x;` looks for `tests/x.rs`, which Cargo would build as a test of its own: hence the paths.
#[path = "layout/cycles.rs"]
mod cycles;
#[path = "layout/layers.rs"]
mod layers;
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

use cycles::{cycles, describe_cycle, Graph};
use layers::{layer_violations, Layers, Never};
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
/// `use` re-exports of the directory's `mod.rs` followed. Every directory module at every depth is checked,
/// listed here or not (an unlisted one is reported as new); only those in [`SIBLING_CYCLES_ALLOWED`] are not.
const SIBLING_CHECKED: &[&str] = &[
    "crates/core/src/attachment/filename",
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

/// The circles inside each directory module of `krate` (whose sources are in `src`), at every depth: (the
/// directory, as `src/a/b`, and each circle described), every directory listed whether it has a circle or not.
fn directory_cycles(src: &str, krate: &Crate) -> Vec<(String, Vec<String>)> {
    krate
        .directory_modules()
        .into_iter()
        .map(|dir| {
            let graph = krate.graph(&dir);
            let found = cycles(&graph).iter().map(|cycle| describe_cycle(&graph, cycle)).collect();
            (format!("{src}/{}", dir.join("/")), found)
        })
        .collect()
}

#[test]
fn files_of_directory_modules_form_no_cycle() {
    let mut failures = Vec::new();
    let mut seen = BTreeSet::new();
    for src in SOURCE_DIRS {
        for (name, found) in directory_cycles(src, &Crate::scan(src)) {
            seen.insert(name.clone());
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
            for circle in found {
                failures.push(format!("{name}{listed}: its files reference each other in a circle: {circle}"));
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
    for listed in SIBLING_CHECKED {
        if !seen.contains(*listed) {
            failures.push(format!(
                "SIBLING_CHECKED in tests/layout.rs lists {listed}, which is no longer a directory module: remove \
                 the entry"
            ));
        }
    }
    assert!(failures.is_empty(), "module cycles:\n  - {}\n{BREAK_A_CYCLE}\n", failures.join("\n  - "));
}

/// A circle three levels down is found, and named by its directory.
#[test]
fn the_cycle_check_reaches_every_depth() {
    let file = |path: &str, source: &str| (path.to_owned(), source.to_owned());
    let krate = Crate::from_sources(
        "synthetic/src",
        vec![
            file("lib.rs", "mod a;"),
            file("a/mod.rs", "mod b;"),
            file("a/b/mod.rs", "mod c; mod d;"),
            file("a/b/c/mod.rs", "mod x; mod y; mod z;"),
            file("a/b/c/x.rs", "use super::y::Y; pub struct X;"),
            file("a/b/c/y.rs", "pub struct Y(crate::a::b::c::z::Z);"),
            file("a/b/c/z.rs", "pub struct Z(Box<super::x::X>);"),
            file("a/b/d.rs", "use super::c::x::X;"),
        ],
    );
    let found = directory_cycles("synthetic/src", &krate);
    let names: Vec<&str> = found.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(names, ["synthetic/src/a", "synthetic/src/a/b", "synthetic/src/a/b/c"]);
    assert!(found[0].1.is_empty() && found[1].1.is_empty(), "{found:#?}");
    assert_eq!(found[2].1.len(), 1, "{found:#?}");
    let circle = &found[2].1[0];
    assert!(circle.starts_with("x -> y -> z -> x"), "{circle}");
    assert!(circle.contains("synthetic/src/a/b/c/z.rs:1 `super::x::X`"), "{circle}");
}

// ---------------------------------------------------------------------------------------------------------------
// 3. The server's layers

/// The server crate's top-level modules in layers, highest first, as docs/architecture.md states them (its
/// section [`LAYERS_SECTION`], which [`the_architecture_page_states_the_server_layers`] holds to this list): a
/// module may reference its own layer and those below, never one above. `lib.rs`, the crate root, only declares
/// them and sits above all. A new module fails the test until it is added to a layer here and on that page.
const SERVER_LAYERS: &Layers = &[
    ("the router", &["router"]),
    // `jobs` (the scheduled index sync) is called by the shells beside the router, and builds a RequestContext.
    // `feeds` serves a feed link's file (`GET /feeds/…`) with the tools' mirror and saved-search readers.
    ("the request handlers", &["auth", "mcp", "tools", "pages", "jobs", "feeds"]),
    // `call` resolves each tools/call once (plan, target, record) for the registry to run the tool with.
    ("what handlers share", &["call", "context", "format", "library", "journal", "confirm", "feed_links"]),
    ("the foundations", &["app", "grant", "config", "respond"]),
];

/// References refused within a layer.
const SERVER_NEVER: &Never = &[
    ("mcp", "auth", "the MCP layer is told who calls by the Grant the router hands it"),
    ("mcp", "tools", "the MCP layer serves whatever Registry the router hands it"),
];

#[test]
fn server_modules_keep_their_layers() {
    let src = "crates/server/src";
    let graph = Crate::scan(src).graph(&[]);
    let failures = layer_violations(src, &graph, SERVER_LAYERS, SERVER_NEVER);
    assert!(failures.is_empty(), "server layers broken:\n  - {}\n", failures.join("\n  - "));
    for (_, modules) in SERVER_LAYERS {
        for module in *modules {
            assert!(
                graph.contains_key(*module),
                "SERVER_LAYERS in tests/layout.rs lists {module}, which is not a module of {src}: remove it"
            );
        }
    }
}

/// The heading of the section of docs/architecture.md that lists the server's layers.
const LAYERS_SECTION: &str = "## The server's layers";

/// The layers a page's [`LAYERS_SECTION`] lists: its numbered lines, `1. the router: `router``, each a layer's
/// name, a colon, and its modules in backticks. `Err` says what is missing.
fn stated_layers(page: &str) -> Result<Vec<(String, Vec<String>)>, String> {
    let Some(start) = page.find(LAYERS_SECTION) else {
        return Err(format!("it has no section headed {LAYERS_SECTION:?}"));
    };
    let section = &page[start + LAYERS_SECTION.len()..];
    let section = section.find("\n## ").map_or(section, |end| &section[..end]);
    let mut layers = Vec::new();
    for line in section.lines() {
        let Some((number, rest)) = line.split_once(". ") else { continue };
        if number.is_empty() || !number.chars().all(|c| c.is_ascii_digit()) {
            continue;
        }
        let Some((name, modules)) = rest.split_once(':') else {
            return Err(format!("its line {line:?} has no `name: modules`"));
        };
        let modules = modules.split('`').skip(1).step_by(2).map(str::to_owned).collect();
        layers.push((name.trim().to_owned(), modules));
    }
    if layers.is_empty() {
        return Err(format!("its section {LAYERS_SECTION:?} lists no numbered layers"));
    }
    Ok(layers)
}

/// The order a newcomer reads is the order the test holds: docs/architecture.md lists the same layers, in the
/// same order, with the same modules as [`SERVER_LAYERS`].
#[test]
fn the_architecture_page_states_the_server_layers() {
    let path = workspace_root().join("docs/architecture.md");
    let page = std::fs::read_to_string(&path).unwrap_or_default();
    let stated = stated_layers(&page).unwrap_or_else(|problem| panic!("docs/architecture.md: {problem}"));
    let held: Vec<(String, Vec<String>)> = SERVER_LAYERS
        .iter()
        .map(|(name, modules)| ((*name).to_owned(), modules.iter().map(|m| (*m).to_owned()).collect()))
        .collect();
    assert_eq!(
        stated, held,
        "docs/architecture.md's section {LAYERS_SECTION:?} (left) and SERVER_LAYERS in tests/layout.rs (right) \
         differ: a layer moved on one side only; make both say the same, in the same order"
    );
}

/// The reader of that section on a made-up page: numbered lines only, up to the next heading.
#[test]
fn the_layers_section_is_read_from_its_numbered_lines() {
    let page = "# Title\n\n## The server's layers\n\nProse: 2. not a layer\n\n1. top: `a`\n2. below: `b`, `c`\n\n\
                ## Next\n\n3. other: `d`\n";
    let layers = stated_layers(page).expect("the section is there");
    let expected =
        vec![("top".to_owned(), vec!["a".to_owned()]), ("below".to_owned(), vec!["b".to_owned(), "c".to_owned()])];
    assert_eq!(layers, expected);
    assert!(stated_layers("# Title\n").is_err());
    assert!(stated_layers("## The server's layers\n\nnone\n").is_err());
}

/// The layer check on a made-up graph: a reference up a layer, a refused pair and an unlisted module are each
/// reported, with what to do; references down or across a layer are not.
#[test]
fn the_layer_check_catches_what_breaks_the_order() {
    let edge = |graph: &mut Graph, from: &str, to: &str| {
        graph.entry(to.to_owned()).or_default();
        graph.entry(from.to_owned()).or_default().insert(to.to_owned(), vec![format!("src/{from}.rs:3 `{to}`")]);
    };
    let mut graph = Graph::new();
    edge(&mut graph, "router", "mcp");
    edge(&mut graph, "mcp", "context");
    edge(&mut graph, "tools", "mcp");
    edge(&mut graph, "context", "tools");
    edge(&mut graph, "mcp", "auth");
    edge(&mut graph, "extra", "app");
    let failures = layer_violations("s", &graph, SERVER_LAYERS, SERVER_NEVER);
    assert_eq!(failures.len(), 3, "{failures:#?}");
    assert!(failures[0].starts_with("s/extra is in no layer: add it to the layer it belongs to in SERVER_LAYERS"));
    assert!(
        failures[1].starts_with(
            "s/context (what handlers share) references tools (the request handlers, a \
                                      higher layer) at:\n      src/context.rs:3 `tools`"
        ),
        "{}",
        failures[1]
    );
    assert!(failures[1].contains("move what context takes from tools down into context or a module it may use"));
    assert!(
        failures[2].starts_with("s/mcp must not reference auth (the MCP layer is told who calls"),
        "{}",
        failures[2]
    );
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

// ---------------------------------------------------------------------------------------------------------------
// 4. Comments stand on their own

/// What in a comment points outside the code: an issue number (`issue 26`, `Issue #9`) or a document that is
/// not in this repository (the TypeScript project's specification, its `../shared` tree and seed files). `None`
/// when the comment needs nothing outside the repository. The repository's own `fuzz/seeds/` is allowed.
fn outside_reference(comment: &str) -> Option<&'static str> {
    let lower = comment.to_ascii_lowercase();
    let mut rest = lower.as_str();
    while let Some(at) = rest.find("issue") {
        let after = rest[at + "issue".len()..].trim_start_matches(' ').trim_start_matches('#');
        if after.starts_with(|c: char| c.is_ascii_digit()) {
            return Some("an issue number");
        }
        rest = &rest[at + "issue".len()..];
    }
    if lower.contains("upstream-spec") || lower.contains("../shared") {
        return Some("a document outside the repository");
    }
    if lower.replace("fuzz/seeds/", "").contains("seeds/") {
        return Some("a seed file outside the repository");
    }
    None
}

/// The comment on a line (from `//` on), or `None`. A `//` inside a string is taken for a comment too; the
/// strings of this workspace hold no issue numbers, and a false alarm names its line.
fn comment_of(line: &str) -> Option<&str> {
    line.find("//").map(|at| &line[at..])
}

fn rust_files(dir: &std::path::Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        if path.is_dir() {
            if name != "target" && name != "node_modules" {
                rust_files(&path, out);
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn comments_cite_no_issue_numbers_or_outside_documents() {
    let root = workspace_root();
    let mut files = Vec::new();
    for dir in ["crates", "src"] {
        rust_files(&root.join(dir), &mut files);
    }
    files.sort();
    assert!(files.len() > 100, "the scan found only {} Rust files under crates/ and src/", files.len());
    let mut failures = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap_or_default();
        for (number, line) in text.lines().enumerate() {
            if let Some(what) = comment_of(line).and_then(outside_reference) {
                let shown = file.strip_prefix(&root).unwrap_or(file).display();
                failures.push(format!("{shown}:{}: {what}: {}", number + 1, line.trim()));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "comments that lean on something outside the code; state the rule itself and name the test that holds \
         it:\n  - {}\n",
        failures.join("\n  - ")
    );
}

/// The comment check on made-up lines: what it flags and what it leaves alone.
#[test]
fn the_comment_check_tells_outside_references_from_rules() {
    for flagged in [
        "// a burst sends one probe (issue 26)",
        "//! Limits (Issue #9): form size",
        "/// as the index reads it (upstream-spec §10.5)",
        "// see ../shared/notes.md",
        "// from the seeds/ of the TypeScript project",
    ] {
        assert!(comment_of(flagged).and_then(outside_reference).is_some(), "{flagged}");
    }
    for fine in [
        "// the issue is a stale cursor; tests/index_sync.rs holds the rule",
        "/// refresh fuzz/seeds/pdf_text by hand",
        "let issue = 26; // no comment words here",
        "let s = \"issue 26\";",
    ] {
        assert!(comment_of(fine).and_then(outside_reference).is_none(), "{fine}");
    }
}

// 5. Errors are types

/// Where a `Result` whose error is a bare `String` is declared in `line`, if anywhere: such an error cannot be
/// matched on, and its message cannot be checked to say what to do next.
fn string_error(line: &str) -> Option<usize> {
    let code = line.split("//").next().unwrap_or_default();
    let mut from = 0;
    while let Some(at) = code[from..].find("Result<").map(|at| from + at) {
        let rest = &code[at + "Result<".len()..];
        let (mut depth, mut last_comma, mut end) = (0usize, None, None);
        for (offset, c) in rest.char_indices() {
            match c {
                '<' | '(' | '[' => depth += 1,
                '>' | ')' | ']' if depth == 0 => {
                    end = Some(offset);
                    break;
                }
                '>' | ')' | ']' => depth -= 1,
                ',' if depth == 0 => last_comma = Some(offset),
                _ => {}
            }
        }
        if let (Some(comma), Some(end)) = (last_comma, end) {
            if rest[comma + 1..end].trim() == "String" {
                return Some(at);
            }
        }
        from = at + "Result<".len();
    }
    None
}

/// Core and server code (not their tests) returns typed errors, never `Result<_, String>`.
#[test]
fn core_and_server_return_no_string_errors() {
    let root = workspace_root();
    let mut files = Vec::new();
    for dir in ["crates/core/src", "crates/server/src"] {
        rust_files(&root.join(dir), &mut files);
    }
    files.sort();
    let mut failures = Vec::new();
    for file in files.iter().filter(|f| !f.ends_with("tests.rs") && !f.components().any(|c| c.as_os_str() == "tests")) {
        let text = std::fs::read_to_string(file).unwrap_or_default();
        // A file's unit tests come last, after `#[cfg(test)]`; they may use strings.
        for (number, line) in text.lines().take_while(|line| line.trim() != "#[cfg(test)]").enumerate() {
            if string_error(line).is_some() {
                let shown = file.strip_prefix(&root).unwrap_or(file).display();
                failures.push(format!("{shown}:{}: {}", number + 1, line.trim()));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "a Result with a String error; give it a thiserror enum whose messages say what to do next:\n  - {}\n",
        failures.join("\n  - ")
    );
}

/// The string-error check on made-up lines.
#[test]
fn the_string_error_check_reads_generics() {
    for flagged in [
        "fn f() -> Result<(), String> {",
        "async fn g(&self) -> Result<Vec<(u8, String)>, String>;",
        "let x: Result<HashMap<String, u8>, String> = Ok(HashMap::new());",
    ] {
        assert!(string_error(flagged).is_some(), "{flagged}");
    }
    for fine in [
        "fn f() -> Result<String, Error> {",
        "fn g() -> Result<Vec<(u8, String)>, FileStoreError>;",
        "// returns Result<(), String> in the old days",
        "fn h() -> std::io::Result<String> {",
    ] {
        assert!(string_error(fine).is_none(), "{fine}");
    }
}

// 6. What the Worker compiles once

/// The call in `line` that the Worker's code makes through a shared routine instead, if any: each of these is
/// compiled again for every type it is used with (docs/performance.md, "Bundle size").
fn compiled_per_type(line: &str) -> Option<&'static str> {
    let code = line.split("//").next().unwrap_or_default();
    const CALLS: [(&str, &str); 7] = [
        ("serde_json::from_str", "read JSON text with serde_json::from_slice(text.as_bytes())"),
        ("future::join_all(", "wait through zotero_mcp_core::join::join_all"),
        (".sort()", "sort through zotero_mcp_core::sort"),
        (".sort_by(", "sort through zotero_mcp_core::sort"),
        (".sort_by_key(", "sort through zotero_mcp_core::sort"),
        (".sort_by_cached_key(", "sort through zotero_mcp_core::sort"),
        (".sort_unstable", "sort through zotero_mcp_core::sort"),
    ];
    CALLS.iter().find(|(call, _)| code.contains(call)).map(|(_, instead)| *instead)
}

/// The code the Worker runs (core, server and the shell, not their tests) sorts, waits on many futures and reads
/// JSON text through the shared routines, so each is compiled once.
#[test]
fn worker_code_sorts_waits_and_reads_json_through_the_shared_routines() {
    let root = workspace_root();
    let mut files = Vec::new();
    for dir in ["crates/core/src", "crates/server/src", "src"] {
        rust_files(&root.join(dir), &mut files);
    }
    files.sort();
    let shared = [root.join("crates/core/src/sort.rs"), root.join("crates/core/src/join.rs")];
    let mut failures = Vec::new();
    let own_code = |f: &&PathBuf| {
        !f.ends_with("tests.rs")
            && !f.components().any(|c| c.as_os_str() == "tests" || c.as_os_str() == "testing")
            && !shared.contains(f)
    };
    for file in files.iter().filter(own_code) {
        let text = std::fs::read_to_string(file).unwrap_or_default();
        for (number, line) in text.lines().take_while(|line| line.trim() != "#[cfg(test)]").enumerate() {
            if let Some(instead) = compiled_per_type(line) {
                let shown = file.strip_prefix(&root).unwrap_or(file).display();
                failures.push(format!("{shown}:{}: {} ({instead})", number + 1, line.trim()));
            }
        }
    }
    assert!(failures.is_empty(), "compiled again for each type in the Worker:\n  - {}\n", failures.join("\n  - "));
}

/// The check on made-up lines.
#[test]
fn the_shared_routine_check_reads_calls_not_comments() {
    for flagged in [
        "let v: T = serde_json::from_str(&s)?;",
        "keys.sort();",
        "xs.sort_by(|a, b| a.cmp(b));",
        "futures_util::future::join_all(calls).await",
        "v.sort_unstable_by_key(|x| *x);",
    ] {
        assert!(compiled_per_type(flagged).is_some(), "{flagged}");
    }
    for fine in [
        "zotero_mcp_core::sort::sort_by_key(&mut v, |x| *x);",
        "join_all(reads).await",
        "// keys.sort() would compile a sort per type",
        "serde_json::from_slice(text.as_bytes())",
    ] {
        assert!(compiled_per_type(fine).is_none(), "{fine}");
    }
}
