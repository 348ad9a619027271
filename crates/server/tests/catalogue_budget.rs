//! What the catalogue costs a model. Clients put each tool's name, title, description and input
//! schema into the model's context on every turn, so those bytes are paid for in every conversation. This test
//! measures them as `tools/list` sends them to a grant that may write (every tool of a deployment), prints the
//! table, fails past the budgets, and keeps docs/tools.md's copy of the table current.
//!
//! After changing a description or an input type, regenerate the table with
//! `UPDATE_SCHEMAS=1 cargo test -p zotero-mcp-server --test catalogue_budget` (the same variable that
//! regenerates `schemas.json`) and commit docs/tools.md.

mod common;

use std::path::Path;

use common::*;
use serde_json::{json, Value};

/// The average of the model-visible part (name, title, description, input schema, as compact JSON) per tool:
/// 1.0 KB, in the units (KiB: it measured these 54,144 bytes as 52.9 KB).
const AVERAGE_BUDGET: usize = 1024;
/// The model-visible part of any one tool: 1.8 KB.
const TOOL_BUDGET: usize = 1843;
/// A description's length, in characters.
const DESCRIPTION_BUDGET: usize = 400;

const TABLE_START: &str = "<!-- catalogue-budget:start (written by crates/server/tests/catalogue_budget.rs) -->";
const TABLE_END: &str = "<!-- catalogue-budget:end -->";

struct Row {
    name: String,
    description_chars: usize,
    description: usize,
    input: usize,
    output: usize,
    visible: usize,
}

async fn listed_to_a_writer() -> Vec<Value> {
    let app = app_with(&[("ENABLE_TEST_FIXTURES", "0")]);
    let reply = send(&app, as_writer(modern("tools/list", json!({})))).await;
    reply.result()["tools"].as_array().expect("a tools array").clone()
}

fn measure(tool: &Value) -> Row {
    let description = tool["description"].as_str().unwrap_or_default();
    let visible = json!({
        "name": tool["name"],
        "title": tool["title"],
        "description": tool["description"],
        "inputSchema": tool["inputSchema"],
    });
    Row {
        name: tool["name"].as_str().unwrap_or_default().to_owned(),
        description_chars: description.chars().count(),
        description: description.len(),
        input: tool["inputSchema"].to_string().len(),
        output: tool.get("outputSchema").map_or(0, |s| s.to_string().len()),
        visible: visible.to_string().len(),
    }
}

/// The Markdown table docs/tools.md shows.
fn table(rows: &[Row]) -> String {
    let mut text = String::from(
        "| tool | description (bytes) | input schema (bytes) | model-visible (bytes) | output schema (bytes) |\n\
         |---|---:|---:|---:|---:|\n",
    );
    for row in rows {
        text.push_str(&format!(
            "| `{}` | {} | {} | {} | {} |\n",
            row.name, row.description, row.input, row.visible, row.output
        ));
    }
    let sum = |f: fn(&Row) -> usize| rows.iter().map(f).sum::<usize>();
    text.push_str(&format!(
        "| **all {} tools** | {} | {} | {} (about {} per tool) | {} |\n",
        rows.len(),
        sum(|r| r.description),
        sum(|r| r.input),
        sum(|r| r.visible),
        sum(|r| r.visible) / rows.len().max(1),
        sum(|r| r.output),
    ));
    text
}

#[tokio::test]
async fn the_catalogue_stays_within_its_budget() {
    let tools = listed_to_a_writer().await;
    assert!(!tools.is_empty());
    let rows: Vec<Row> = tools.iter().map(measure).collect();
    let table = table(&rows);
    println!("{table}");

    let mut problems = Vec::new();
    let average = rows.iter().map(|r| r.visible).sum::<usize>() / rows.len();
    if average > AVERAGE_BUDGET {
        problems.push(format!("the average tool costs {average} bytes (budget {AVERAGE_BUDGET})"));
    }
    for row in &rows {
        if row.visible > TOOL_BUDGET {
            problems.push(format!("{} costs {} bytes (budget {TOOL_BUDGET})", row.name, row.visible));
        }
        if row.description_chars > DESCRIPTION_BUDGET {
            problems.push(format!(
                "{}'s description has {} characters (budget {DESCRIPTION_BUDGET})",
                row.name, row.description_chars
            ));
        }
    }
    assert!(problems.is_empty(), "over budget:\n{}\n\n{table}", problems.join("\n"));

    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/tools.md");
    let docs = std::fs::read_to_string(&path).expect("docs/tools.md");
    let (before, rest) = docs.split_once(TABLE_START).expect("docs/tools.md has the table's start marker");
    let (_, after) = rest.split_once(TABLE_END).expect("docs/tools.md has the table's end marker");
    let updated = format!("{before}{TABLE_START}\n{table}{TABLE_END}{after}");
    if std::env::var_os("UPDATE_SCHEMAS").is_some() {
        std::fs::write(&path, updated).expect("write docs/tools.md");
        return;
    }
    assert!(
        updated == docs,
        "docs/tools.md's table of what each tool costs is out of date. Regenerate it with \
         `UPDATE_SCHEMAS=1 cargo test -p zotero-mcp-server --test catalogue_budget` and commit the result."
    );
}
