//! Every list of the tools written outside their declarations is checked against them here. In code a new tool
//! is its own file plus its line in `tools::declare`; what people read about it (a README line, a docs row) is
//! still written by hand, and this test names each place it is missing. A renamed, regrouped or re-hinted tool
//! cannot leave a page saying otherwise. The declarations are the registry `tools::registry` builds (what `tools/list` serves
//! and `src/mcp/schemas.json` publishes); each check names the file to change and what to write there.
//!
//! The declarations are also checked against the code they describe where the two could drift: a destructive
//! tool says whether it asks first, and says so exactly when it implements `Tool::needs_confirmation`.
//!
//! What cannot be checked is generated: docs/tools.md's table of every tool's group and hints is written by this
//! test with `UPDATE_SCHEMAS=1 cargo test -p zotero-mcp-server --test catalogue_lists` (the variable that
//! regenerates `schemas.json`), like the cost table `catalogue_budget.rs` writes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use regex_lite::Regex;
use zotero_mcp_server::config::{Config, ToolGroup};
use zotero_mcp_server::mcp::{Access, Confirmation, ToolSpec};
use zotero_mcp_server::tools;

const HINTS_START: &str = "<!-- catalogue-hints:start (written by crates/server/tests/catalogue_lists.rs) -->";
const HINTS_END: &str = "<!-- catalogue-hints:end -->";

/// Words written like a tool name (`zotero_…` in backticks or quotes) that are not tools: a setting and a
/// file store's name.
const NOT_TOOLS: &[&str] = &["zotero_api_key", "zotero_storage"];

/// The catalogue a deployment serves a model (test fixtures off), in `tools/list` order: not the tool only panels
/// call, which docs/apps.md documents.
fn catalogue() -> Vec<ToolSpec> {
    tools::registry(&Config::from_lookup(|_| None)).model_tool_specs()
}

fn names(specs: &[ToolSpec]) -> Vec<&'static str> {
    specs.iter().map(|s| s.name).collect()
}

/// Shown to a token without `zotero:write`: every tool but those that only write.
fn reading_count(specs: &[ToolSpec]) -> usize {
    specs.iter().filter(|s| s.access != Access::Write).count()
}

fn only_writing_count(specs: &[ToolSpec]) -> usize {
    specs.iter().filter(|s| s.access == Access::Write).count()
}

fn repo_path(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(relative)
}

fn read(relative: &str) -> String {
    std::fs::read_to_string(repo_path(relative)).unwrap_or_else(|e| panic!("{relative} cannot be read: {e}"))
}

/// How a list of names differs from the declared tools it should hold (the catalogue, or those of a group or
/// hint): missing tools, other names, names given twice. Empty when it holds each of them exactly once.
fn list_problems(file: &str, what: &str, listed: &[String], specs: &[ToolSpec]) -> Vec<String> {
    let mut problems = Vec::new();
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    for name in listed {
        *seen.entry(name.as_str()).or_default() += 1;
    }
    for name in names(specs) {
        if !seen.contains_key(name) {
            problems.push(format!("{file}: {what} lacks `{name}`: add it"));
        }
    }
    for (name, count) in &seen {
        if !names(specs).contains(name) {
            problems.push(format!("{file}: {what} names `{name}`, which the declarations do not put there: remove it"));
        } else if *count > 1 {
            problems.push(format!("{file}: {what} names `{name}` {count} times: keep one"));
        }
    }
    problems
}

/// Every number the pattern's first group captures in `text` must be `expected`, and there must be one.
fn count_problems(file: &str, text: &str, pattern: &str, what: &str, expected: usize) -> Vec<String> {
    let re = Regex::new(pattern).expect("the pattern is valid");
    let found: Vec<&str> = re.captures_iter(text).filter_map(|c| c.get(1)).map(|m| m.as_str()).collect();
    if found.is_empty() {
        return vec![format!(
            "{file}: no sentence matches /{pattern}/ ({what}); say it again, or change this test where the sentence moved"
        )];
    }
    found
        .into_iter()
        .filter(|n| n.parse::<usize>().ok() != Some(expected))
        .map(|n| format!("{file}: says {n} for {what}; the catalogue has {expected}: write {expected}"))
        .collect()
}

fn assert_none(problems: Vec<String>) {
    assert!(problems.is_empty(), "lists of tools out of step with the declarations:\n{}", problems.join("\n"));
}

#[test]
fn the_readmes_list_every_tool_once_with_the_catalogues_counts() {
    let specs = catalogue();
    let bullet = Regex::new(r"(?m)^- `([A-Za-z_]+)`[:：]").expect("the pattern is valid");
    let mut problems = Vec::new();
    for file in ["README.md", "README.zh-CN.md"] {
        let text = read(file);
        let listed: Vec<String> = bullet.captures_iter(&text).map(|c| c[1].to_owned()).collect();
        problems.extend(list_problems(file, "\"What it can do\" (lines `- `tool`: …`)", &listed, &specs));
    }
    let english = read("README.md");
    problems.extend(count_problems("README.md", &english, r"(\d+) tools", "the number of tools", specs.len()));
    problems.extend(count_problems(
        "README.md",
        &english,
        r"the (\d+) that read",
        "the tools a read-only token is shown",
        reading_count(&specs),
    ));
    let chinese = read("README.zh-CN.md");
    problems.extend(count_problems("README.zh-CN.md", &chinese, r"共 (\d+) 个工具", "工具总数", specs.len()));
    problems.extend(count_problems(
        "README.zh-CN.md",
        &chinese,
        r"其中 (\d+) 个读取类工具",
        "只读令牌看到的工具数",
        reading_count(&specs),
    ));
    assert_none(problems);
}

#[test]
fn docs_tools_md_names_every_tool_with_its_access_group_and_reach() {
    let specs = catalogue();
    let file = "docs/tools.md";
    let text = read(file);
    let mut problems = count_problems(
        file,
        &text,
        r"(\d+) tools instead of \d+",
        "the tools a read-only token is shown",
        reading_count(&specs),
    );
    problems.extend(count_problems(file, &text, r"\d+ tools instead of (\d+)", "the number of tools", specs.len()));

    // The table of what each tool does: every tool once; "yes" under writes exactly for the tools that only
    // write (the ones a read-only token is not shown), and the modes that write for a mixed one.
    let header = "| tool | what it does | writes |";
    let rows: Vec<Vec<String>> = text
        .split_once(header)
        .map(|(_, rest)| {
            rest.lines()
                .skip(2)
                .take_while(|line| line.starts_with('|'))
                .map(|line| line.trim_matches('|').split(" | ").map(|c| c.trim().to_owned()).collect())
                .collect()
        })
        .unwrap_or_default();
    if rows.is_empty() {
        problems.push(format!("{file}: the table headed `{header}` is gone"));
    }
    let listed: Vec<String> = rows.iter().map(|r| r[0].trim_matches('`').to_owned()).collect();
    problems.extend(list_problems(file, "the table of what each tool does", &listed, &specs));
    for row in &rows {
        let name = row[0].trim_matches('`');
        let writes = row.last().map(String::as_str).unwrap_or_default();
        let Some(spec) = specs.iter().find(|s| s.name == name) else { continue };
        let problem = match spec.access {
            Access::Write if writes != "yes" => Some("\"yes\": every call writes"),
            Access::Read | Access::Mixed if writes == "yes" => Some("not \"yes\": a read-only token is shown it"),
            Access::Mixed if writes.is_empty() => Some("the modes that write"),
            _ => None,
        };
        if let Some(wanted) = problem {
            problems.push(format!("{file}: `{name}`'s writes cell says {writes:?}; it should be {wanted}"));
        }
    }

    // TOOL_GROUPS: each group followed by its tools in parentheses (a list may wrap).
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    for group in ToolGroup::ALL {
        let marker = format!("`{}` (", group.name());
        let Some(listed) = flat
            .split_once(&marker)
            .and_then(|(_, rest)| rest.split_once(')'))
            .map(|(inside, _)| inside.split(',').map(|n| n.trim().trim_matches('`').to_owned()).collect::<Vec<_>>())
        else {
            problems.push(format!("{file}: the TOOL_GROUPS paragraph has no {marker}…) listing the group's tools"));
            continue;
        };
        let members: Vec<ToolSpec> = specs.iter().copied().filter(|s| s.group == group).collect();
        problems.extend(list_problems(file, &format!("the `{}` group's list", group.name()), &listed, &members));
    }

    // The hints paragraph names the tools that reach the open web.
    let open_world = Regex::new(r"`openWorldHint` only for ([^.]*?), which").expect("the pattern is valid");
    match open_world.captures(&text) {
        Some(c) => {
            let listed: Vec<String> =
                Regex::new(r"`([a-z_]+)`").expect("valid").captures_iter(&c[1]).map(|n| n[1].to_owned()).collect();
            let members: Vec<ToolSpec> = specs.iter().copied().filter(|s| s.open_world).collect();
            problems.extend(list_problems(file, "the tools with `openWorldHint`", &listed, &members));
        }
        None => problems.push(format!("{file}: the sentence \"`openWorldHint` only for …, which\" is gone")),
    }
    assert_none(problems);
}

#[test]
fn docs_deployment_md_gives_the_catalogues_counts() {
    let specs = catalogue();
    let file = "docs/deployment.md";
    let text = read(file);
    let mut problems = count_problems(file, &text, r"(\d+) tools", "the number of tools", specs.len());
    problems.extend(count_problems(
        file,
        &text,
        r"the (\d+) that only write",
        "the tools a read-only token is not shown",
        only_writing_count(&specs),
    ));
    problems.extend(count_problems(
        file,
        &text,
        r"\((\d+) listed\)",
        "the tools a read-only token is shown",
        reading_count(&specs),
    ));
    assert_none(problems);
}

/// Prose names tools in backticks, scripts in quotes: a renamed or removed tool must not live on in either.
#[test]
fn docs_and_e2e_scripts_name_only_tools_that_exist() {
    // Every tool, those only panels call included.
    let specs = tools::registry(&Config::from_lookup(|_| None)).tool_specs();
    let known = names(&specs);
    let mut files: Vec<String> =
        ["README.md", "README.zh-CN.md", "AGENTS.md", "SECURITY.md"].iter().map(|s| (*s).to_owned()).collect();
    for dir in ["docs", "tests/e2e", "tests/e2e/stdio", "tests/bench"] {
        let entries = std::fs::read_dir(repo_path(dir)).unwrap_or_else(|e| panic!("{dir} cannot be listed: {e}"));
        let mut found: Vec<String> = entries
            .filter_map(Result::ok)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".md") || n.ends_with(".mjs") || n.ends_with(".py"))
            .map(|n| format!("{dir}/{n}"))
            .collect();
        found.sort();
        files.extend(found);
    }
    let mention = Regex::new(r#"[`'"](zotero_[a-z_]+)[`'"]"#).expect("the pattern is valid");
    let mut problems = Vec::new();
    for file in &files {
        let text = read(file);
        for c in mention.captures_iter(&text) {
            let name = &c[1];
            if !known.contains(&name) && !NOT_TOOLS.contains(&name) {
                problems
                    .push(format!("{file}: names `{name}`, which is no tool of the catalogue: use the tool's name"));
            }
        }
    }
    problems.dedup();
    assert_none(problems);
}

/// docs/tools.md's table of every tool's group and four hints, as clients are shown them.
fn hints_table(specs: &[ToolSpec]) -> String {
    let flag = |on: bool| if on { "yes" } else { "no" };
    let mut table = String::from(
        "| tool | `TOOL_GROUPS` group | readOnlyHint | destructiveHint | idempotentHint | openWorldHint |\n\
         |---|---|:-:|:-:|:-:|:-:|\n",
    );
    for spec in specs {
        table.push_str(&format!(
            "| `{}` | {} | {} | {} | {} | {} |\n",
            spec.name,
            spec.group.name(),
            flag(spec.access == Access::Read),
            flag(spec.destructive),
            flag(spec.idempotent),
            flag(spec.open_world),
        ));
    }
    table
}

#[test]
fn docs_tools_md_has_the_declared_hints_of_every_tool() {
    let specs = catalogue();
    let path = repo_path("docs/tools.md");
    let docs = read("docs/tools.md");
    let (before, rest) = docs.split_once(HINTS_START).expect("docs/tools.md has the hints table's start marker");
    let (_, after) = rest.split_once(HINTS_END).expect("docs/tools.md has the hints table's end marker");
    let updated = format!("{before}{HINTS_START}\n{}{HINTS_END}{after}", hints_table(&specs));
    if std::env::var_os("UPDATE_SCHEMAS").is_some() {
        std::fs::write(&path, updated).expect("write docs/tools.md");
        return;
    }
    assert!(
        updated == docs,
        "docs/tools.md's table of groups and hints is out of date with the declarations. Regenerate it with \
         `UPDATE_SCHEMAS=1 cargo test -p zotero-mcp-server --test catalogue_lists` and commit the result."
    );
}

/// A tool that changes nothing can remove nothing, and a repeat of it changes nothing more: a declaration that
/// says otherwise contradicts itself, and clients would be told so.
#[test]
fn a_read_only_declaration_is_neither_destructive_nor_unrepeatable() {
    let problems: Vec<String> = catalogue()
        .into_iter()
        .filter(|s| s.access == Access::Read && (s.destructive || !s.idempotent))
        .map(|s| format!("{}: declared read-only, so drop `.confirms()` or `.destructive_without_confirmation(..)` and keep it idempotent", s.name))
        .collect();
    assert_none(problems);
}

/// A destructive tool either asks the person first or says, in its declaration, why not; a tool cannot be
/// declared as asking without being destructive (clients are told `destructiveHint` from the same line).
#[test]
fn every_destructive_tool_confirms_or_says_why_not() {
    let mut problems = Vec::new();
    for spec in catalogue() {
        match spec.confirmation {
            Confirmation::Unsaid if spec.destructive => problems.push(format!(
                "{}: destructive, but says neither `.confirms()` (and implements `Tool::needs_confirmation`) nor \
                 `.destructive_without_confirmation(\"why a question would not help\")`",
                spec.name
            )),
            Confirmation::NotAsked(why) if why.trim().is_empty() => problems.push(format!(
                "{}: `.destructive_without_confirmation` needs a reason: write why a question would not help",
                spec.name
            )),
            Confirmation::Asks | Confirmation::NotAsked(_) if !spec.destructive => problems.push(format!(
                "{}: declares whether it asks, but is not destructive: set it with `.confirms()` or \
                 `.destructive_without_confirmation(..)`, which also make it destructive",
                spec.name
            )),
            _ => {}
        }
    }
    assert_none(problems);
}

/// The names of the tools in `crates/server/src/tools/` whose `impl Tool` implements `needs_confirmation`,
/// read from the source: whether a trait's default was replaced cannot be asked of the type.
fn tools_implementing_needs_confirmation() -> Vec<String> {
    let dir = repo_path("crates/server/src/tools");
    let name = Regex::new(r#"ToolSpec::(?:read|write|mixed)\(\s*"([a-z_]+)""#).expect("the pattern is valid");
    let mut found = Vec::new();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{} cannot be listed: {e}", dir.display()))
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "rs"))
        .collect();
    files.sort();
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{} cannot be read: {e}", path.display()));
        // Each `impl Tool for` block runs to the next item that starts a line with `impl ` (or the file's end).
        for block in text.split("\nimpl Tool for ").skip(1) {
            let block = block.split("\nimpl ").next().unwrap_or(block);
            if !block.contains("fn needs_confirmation") {
                continue;
            }
            match name.captures(block) {
                Some(c) => found.push(c[1].to_owned()),
                None => panic!(
                    "{}: an `impl Tool` implements needs_confirmation, but its name was not found",
                    path.display()
                ),
            }
        }
    }
    found
}

/// A tool that asks at run time (`Tool::needs_confirmation`) is declared as asking, and a tool declared as
/// asking has calls it asks about: otherwise the declaration and the tool's behaviour disagree, and the check
/// above would pass on a destructive tool that never asks.
#[test]
fn a_tool_asks_exactly_when_its_declaration_says_it_confirms() {
    let specs = catalogue();
    let asking = tools_implementing_needs_confirmation();
    let mut problems = Vec::new();
    for name in &asking {
        match specs.iter().find(|s| s.name == name) {
            Some(spec) if spec.confirmation == Confirmation::Asks => {}
            Some(_) => problems
                .push(format!("{name}: implements `Tool::needs_confirmation`, so declare it with `.confirms()`")),
            None => problems.push(format!("{name}: implements `Tool::needs_confirmation` but is not in the catalogue")),
        }
    }
    for spec in specs.iter().filter(|s| s.confirmation == Confirmation::Asks) {
        if !asking.iter().any(|name| name == spec.name) {
            problems.push(format!(
                "{}: declared with `.confirms()` but never asks: implement `Tool::needs_confirmation`, or declare \
                 `.destructive_without_confirmation(\"why\")`",
                spec.name
            ));
        }
    }
    assert_none(problems);
}
