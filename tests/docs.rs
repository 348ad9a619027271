//! What the READMEs and the docs promise a reader, checked on every `cargo test` (and so by CI):
//!
//! 1. README.md stays short enough to scan (25 KB).
//! 2. README.zh-CN.md is the same page in Chinese: the same headings in the same order and levels, the very same
//!    code blocks (commands are not translated), and the same figures in the prose.
//! 3. The clone command in both READMEs names the repository Cargo.toml names.
//! 4. Every repository path the docs name in backticks exists, so a moved file cannot leave a dead pointer.
//!
//! Only text is read; nothing is built or run.

use std::collections::BTreeMap;
use std::path::PathBuf;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &str) -> String {
    std::fs::read_to_string(root().join(path)).unwrap_or_else(|e| panic!("cannot read {path}: {e}"))
}

/// A Markdown page split into its headings (level, text), its fenced code blocks and the prose outside them.
struct Page {
    headings: Vec<(usize, String)>,
    code_blocks: Vec<String>,
    prose: String,
}

fn parse(text: &str) -> Page {
    let mut page = Page { headings: Vec::new(), code_blocks: Vec::new(), prose: String::new() };
    let mut block: Option<String> = None;
    for line in text.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") {
            match block.take() {
                Some(code) => page.code_blocks.push(code),
                None => block = Some(format!("{trimmed}\n")),
            }
            continue;
        }
        if let Some(code) = block.as_mut() {
            code.push_str(trimmed);
            code.push('\n');
            continue;
        }
        let level = line.chars().take_while(|&c| c == '#').count();
        if level > 0 && line[level..].starts_with(' ') {
            page.headings.push((level, line[level..].trim().to_owned()));
        }
        page.prose.push_str(line);
        page.prose.push('\n');
    }
    assert!(block.is_none(), "a code block is never closed");
    page
}

/// Every figure in the text (runs of digits, with their decimal points and thousands separators), counted.
fn figures(text: &str) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        if chars[i].is_ascii_digit() {
            let start = i;
            while i < chars.len()
                && (chars[i].is_ascii_digit()
                    || ((chars[i] == '.' || chars[i] == ',') && chars.get(i + 1).is_some_and(char::is_ascii_digit)))
            {
                i += 1;
            }
            *counts.entry(chars[start..i].iter().collect()).or_insert(0) += 1;
        } else {
            i += 1;
        }
    }
    counts
}

#[test]
fn the_readme_is_at_most_25_kb() {
    let size = read("README.md").len();
    assert!(size <= 25 * 1024, "README.md is {size} bytes, over 25 KB: move detail into docs/ and link to it");
}

#[test]
fn the_chinese_readme_has_the_english_ones_headings_in_order() {
    let en = parse(&read("README.md"));
    let zh = parse(&read("README.zh-CN.md"));
    let levels = |p: &Page| p.headings.iter().map(|(l, _)| *l).collect::<Vec<_>>();
    assert_eq!(
        levels(&en),
        levels(&zh),
        "README.md and README.zh-CN.md differ in their headings:\n  en: {:?}\n  zh: {:?}\nTranslate each section of \
         README.md into README.zh-CN.md, in the same order",
        en.headings,
        zh.headings
    );
}

#[test]
fn the_chinese_readme_has_the_english_ones_code_blocks() {
    let en = parse(&read("README.md"));
    let zh = parse(&read("README.zh-CN.md"));
    assert_eq!(en.code_blocks.len(), zh.code_blocks.len(), "the two READMEs have different numbers of code blocks");
    for (i, (e, z)) in en.code_blocks.iter().zip(&zh.code_blocks).enumerate() {
        assert_eq!(e, z, "code block {} differs: copy README.md's into README.zh-CN.md as it is", i + 1);
    }
}

#[test]
fn the_chinese_readme_has_the_english_ones_figures() {
    let en = figures(&parse(&read("README.md")).prose);
    let zh = figures(&parse(&read("README.zh-CN.md")).prose);
    let only = |a: &BTreeMap<String, usize>, b: &BTreeMap<String, usize>| {
        a.iter().filter(|(k, n)| b.get(*k) != Some(*n)).map(|(k, n)| format!("{k} ×{n}")).collect::<Vec<_>>()
    };
    assert_eq!(
        en,
        zh,
        "the READMEs' figures differ (each counted outside code blocks): README.md has {:?} where README.zh-CN.md \
         has {:?}; a figure changed in one must change in the other",
        only(&en, &zh),
        only(&zh, &en)
    );
}

#[test]
fn the_readmes_clone_the_repository_cargo_toml_names() {
    let manifest: toml::Table = read("Cargo.toml").parse().expect("Cargo.toml parses");
    let repository = manifest["workspace"]["package"]["repository"]
        .as_str()
        .expect("Cargo.toml's [workspace.package] names the repository");
    for readme in ["README.md", "README.zh-CN.md"] {
        let page = parse(&read(readme));
        let clone = page
            .code_blocks
            .iter()
            .flat_map(|b| b.lines())
            .find_map(|l| l.strip_prefix("git clone "))
            .unwrap_or_else(|| panic!("{readme} shows no `git clone` command"));
        let url = clone.split_whitespace().next().unwrap_or_default();
        assert_eq!(
            url.trim_end_matches(".git"),
            repository,
            "{readme} clones {url}, but Cargo.toml's repository is {repository}"
        );
    }
}

/// The backtick spans of a page that name a file or folder of this repository: they start with one of its
/// top-level folders, or are one of its top-level files, and hold nothing a placeholder or pattern would.
fn repository_paths(text: &str) -> Vec<String> {
    const FOLDERS: [&str; 7] = ["crates/", "scripts/", "tests/", "docs/", "src/", "fuzz/", ".github/"];
    let top_files: Vec<String> = std::fs::read_dir(root())
        .map(|dir| {
            dir.filter_map(Result::ok)
                .filter(|e| e.path().is_file())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    let mut paths = Vec::new();
    for (i, span) in text.split('`').enumerate() {
        if i % 2 == 0 || span.is_empty() || span.contains(char::is_whitespace) {
            continue;
        }
        if span.contains(['<', '>', '*', '{', '}', '…', '$', '|', '=', '(', '?']) {
            continue;
        }
        // `scripts/build.sh:42`, `docs/pdf.md#limits`: the file.
        let path = span.split([':', '#']).next().unwrap_or_default();
        if FOLDERS.iter().any(|f| path.starts_with(f)) || top_files.iter().any(|f| f == path) {
            paths.push(path.to_owned());
        }
    }
    paths
}

/// A path from the repository's root, or, for `tests/…` (AGENTS.md names a crate's tests that way), from one of
/// the crates'.
fn exists(path: &str) -> bool {
    if root().join(path).exists() {
        return true;
    }
    path.starts_with("tests/")
        && std::fs::read_dir(root().join("crates"))
            .map(|dir| dir.filter_map(Result::ok).any(|c| c.path().join(path).exists()))
            .unwrap_or(false)
}

#[test]
fn every_repository_path_the_docs_name_exists() {
    let mut pages = vec!["README.md".to_owned(), "README.zh-CN.md".to_owned(), "AGENTS.md".to_owned()];
    pages.push("SECURITY.md".to_owned());
    pages.push("CHANGELOG.md".to_owned());
    let mut docs: Vec<String> = std::fs::read_dir(root().join("docs"))
        .expect("docs/ is readable")
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".md"))
        .map(|n| format!("docs/{n}"))
        .collect();
    docs.sort();
    pages.extend(docs);
    let mut missing = Vec::new();
    for page in &pages {
        for path in repository_paths(&read(page)) {
            if !exists(&path) {
                missing.push(format!("{page}: `{path}`"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "these pages name files that do not exist (moved or renamed? point them at the file's place now):\n  {}",
        missing.join("\n  ")
    );
}
