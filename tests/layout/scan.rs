//! Finding the `crate::`, `self::` and `super::` references of one source file, `use` trees followed.

use std::collections::{BTreeMap, BTreeSet};

use super::tokens::{tokenize, Token};

/// One reference from a module to a path, with where it was written.
#[derive(Debug, Clone)]
pub struct Reference {
    /// The module the reference is in (inline `mod` blocks included), from the crate root.
    pub from: Vec<String>,
    /// The absolute path referred to, from the crate root, as written (re-exports not yet followed).
    pub to: Vec<String>,
    pub line: usize,
    pub written: String,
}

#[derive(Debug, Default)]
pub struct FileScan {
    pub references: Vec<Reference>,
    /// The names the file's top-level `use` items bring in, and the absolute paths they stand for.
    pub imports: BTreeMap<String, Vec<String>>,
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
pub fn scan_source(source: &str, module: &[String], children: &BTreeSet<String>) -> FileScan {
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
