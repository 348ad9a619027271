//! `zotero-mcp reindex`: drives a deployed server's `zotero_reindex` tool until its semantic index (AI Search)
//! holds the whole library — after the first deploy, or after a `--full` rebuild. See `zotero-mcp reindex --help`.
//!
//! Each call sends up to `limit` items within the deployment's request budget and reports how many remain; the
//! server keeps the cursor, so calls continue one another (and a new run continues an interrupted one). Once
//! everything is sent, AI Search still indexes in the background: the command then calls again every
//! `--poll-secs` and shows that backlog draining, until it is empty or `--max-wait-mins` have passed.

mod progress;

use std::io::IsTerminal;
use std::process::ExitCode;
use std::time::Duration;

use serde::Deserialize;
use serde_json::{json, Value};

use self::progress::{Backlog, Sending};
use crate::commands::get_token::sign_in;
use crate::commands::mcp_client::{server_address, Auth, Client};
use crate::get_token::{mcp_url, ALL_SCOPES};

const TOOL: &str = "zotero_reindex";
/// How this command names itself to the server (OAuth client, `clientInfo`, User-Agent).
const CLIENT_NAME: &str = "zotero-mcp reindex";
/// Calls in a row without a readable backlog before giving up on it.
const UNKNOWN_BACKLOG_CALLS: u32 = 3;

const HELP: &str = "\
zotero-mcp reindex: bring a zotero-mcp server's semantic index (AI Search) up to date and wait until AI Search
has indexed everything — after the first deploy, or with --full after changing what goes into the index.

usage: zotero-mcp reindex <server> [--full] [--limit N] [--token TOKEN] [--username NAME] [--password-stdin]
                          [--poll-secs S] [--stall-calls N] [--max-wait-mins M] [--max-calls N]
                          [--timeout-secs S] [--retries N]

  <server>            the server: a domain (zotero.example.org), an address (https://zotero.example.org) or its
                      /mcp URL
  --full              start over: re-send every item and remove the documents of deleted items (first call
                      only; the calls after it continue that cycle)
  --limit N           items per call, 1-2000 (default: the server's SYNC_BATCH_LIMIT)
  --token TOKEN       an access token with zotero:write (or ZOTERO_MCP_TOKEN); without one, sign in as
                      `zotero-mcp get-token` does, with the password from ZOTERO_MCP_PASSWORD, stdin or a prompt
  --username NAME     the user name, for servers that set AUTH_USERNAME (or ZOTERO_MCP_USERNAME)
  --password-stdin    read the password from the first line of stdin
  --poll-secs S       seconds between checks of the indexing backlog (default 10)
  --stall-calls N     give up after N calls in a row in which nothing moved (default 5)
  --max-wait-mins M   give up when the backlog has not drained M minutes after everything was sent (default 60)
  --max-calls N       calls to make at most, sending and checking together (default 10000)
  --timeout-secs S    deadline of each HTTP request (default 300)
  --retries N         repeats of a request that failed in transit or got HTTP 429/502/503/504 (default 2)

It prints a line per call (items sent so far, remaining, rate, ETA) and then the backlog as it drains.
Resumable: the server keeps the sync cursor, so after an interruption or a failure run it again (without
--full) and it continues where it stopped; items already sent stay sent.

Exit status:
  0   everything is sent and indexed
  1   a failure (the tool, HTTP, sign-in, no progress, the backlog not draining in time); the message says
      what to do
  2   bad arguments
  3   everything is sent, but AI Search failed to index some documents (the count is printed)
  4   AI Search is not bound to the deployment (the AI_SEARCH binding is missing)";

struct Args {
    server: String,
    full: bool,
    limit: Option<u32>,
    token: Option<String>,
    username: Option<String>,
    password_stdin: bool,
    poll_secs: u64,
    stall_calls: u32,
    max_wait_mins: u64,
    max_calls: u32,
    timeout_secs: u64,
    retries: u32,
}

fn parse_args(args: Vec<String>) -> Result<Args, String> {
    let mut args = args.into_iter();
    let mut parsed = Args {
        server: String::new(),
        full: false,
        limit: None,
        token: None,
        username: None,
        password_stdin: false,
        poll_secs: 10,
        stall_calls: 5,
        max_wait_mins: 60,
        max_calls: 10_000,
        timeout_secs: 300,
        retries: 2,
    };
    fn number<T: std::str::FromStr + PartialOrd + std::fmt::Display>(
        name: &str,
        value: Option<String>,
        min: T,
        max: T,
    ) -> Result<T, String> {
        let value = value.ok_or_else(|| format!("{name} needs a number"))?;
        match value.parse::<T>() {
            Ok(n) if n >= min && n <= max => Ok(n),
            _ => Err(format!("{name}: `{value}` is not a number from {min} to {max}")),
        }
    }
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "-h" | "--help" => return Err(String::new()),
            "--full" => parsed.full = true,
            "--password-stdin" => parsed.password_stdin = true,
            "--limit" => parsed.limit = Some(number("--limit", args.next(), 1, 2000)?),
            "--token" => parsed.token = Some(args.next().ok_or("--token needs a token")?),
            "--username" => parsed.username = Some(args.next().ok_or("--username needs a name")?),
            "--poll-secs" => parsed.poll_secs = number("--poll-secs", args.next(), 0, 3600)?,
            "--stall-calls" => parsed.stall_calls = number("--stall-calls", args.next(), 1, 1000)?,
            "--max-wait-mins" => parsed.max_wait_mins = number("--max-wait-mins", args.next(), 0, 7 * 24 * 60)?,
            "--max-calls" => parsed.max_calls = number("--max-calls", args.next(), 1, 1_000_000)?,
            "--timeout-secs" => parsed.timeout_secs = number("--timeout-secs", args.next(), 1, 3600)?,
            "--retries" => parsed.retries = number("--retries", args.next(), 0, 10)?,
            other if other.starts_with('-') => return Err(format!("unknown option {other}")),
            other if parsed.server.is_empty() => parsed.server = other.to_owned(),
            other => return Err(format!("unexpected argument {other}")),
        }
    }
    if parsed.server.is_empty() {
        return Err("the server is missing".into());
    }
    let from_env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    parsed.token = parsed.token.filter(|t| !t.is_empty()).or_else(|| from_env("ZOTERO_MCP_TOKEN"));
    parsed.username = parsed.username.or_else(|| from_env("ZOTERO_MCP_USERNAME"));
    Ok(parsed)
}

/// Why the command stopped short.
enum Failure {
    /// AI Search is not bound: nothing can be indexed.
    NotBound(String),
    /// Everything was sent, but AI Search failed to index this many documents.
    IndexingFailed(u64),
    Other(String),
}

impl From<String> for Failure {
    fn from(message: String) -> Self {
        Failure::Other(message)
    }
}

/// `zotero_reindex`'s structuredContent.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Report {
    #[serde(default)]
    submitted: u64,
    #[serde(default)]
    removed: u64,
    #[serde(default)]
    remaining: u64,
    backlog: Option<u64>,
    failed: Option<u64>,
    complete: bool,
    warning: Option<String>,
    #[serde(default)]
    message: String,
}

fn authenticate(args: &Args, server: &str) -> Result<Client, String> {
    let timeout = Duration::from_secs(args.timeout_secs);
    match &args.token {
        Some(token) => {
            let url = mcp_url(server).map_err(|e| e.to_string())?;
            Client::new(url, Auth::Token(token.clone()), timeout, args.retries, CLIENT_NAME)
        }
        None => {
            let signed_in = sign_in(server, CLIENT_NAME, args.username.clone(), args.password_stdin, ALL_SCOPES)?;
            if !signed_in.tokens.scopes.is_empty() && !signed_in.tokens.scopes.iter().any(|s| s == "zotero:write") {
                return Err(format!(
                    "the server granted {} but zotero_reindex needs zotero:write",
                    signed_in.tokens.scopes.join(" ")
                ));
            }
            eprintln!("Signed in to {} ({}).", signed_in.flow.mcp_url, signed_in.tokens.scopes.join(" "));
            let url = signed_in.flow.mcp_url.clone();
            Client::new(url, Auth::SignedIn(Box::new(signed_in)), timeout, args.retries, CLIENT_NAME)
        }
    }
}

fn run(args: &Args) -> Result<(), Failure> {
    let server = server_address(&args.server);
    let mut client = authenticate(args, &server)?;
    client.initialize()?;
    let terminal = std::io::stdout().is_terminal();
    println!(
        "Reindexing {} ({}){}.",
        client.url(),
        if args.full { "full: every item" } else { "changes since the last sync" },
        args.limit.map(|l| format!(", {l} items per call")).unwrap_or_default()
    );

    let mut sending = Sending::new();
    let mut backlog: Option<Backlog> = None;
    let mut sending_mode = true;
    let mut last_remaining: Option<u64> = None;
    let mut stalled = 0u32;
    let mut unknown_backlog = 0u32;
    let mut warned: Option<String> = None;

    for call in 1..=args.max_calls {
        let mut arguments = json!({});
        if call == 1 && args.full {
            arguments["full"] = json!(true);
        }
        if let Some(limit) = args.limit {
            arguments["limit"] = json!(limit);
        }
        // An error returned from here on drops `backlog`, which ends its in-place line first.
        let result = client.call_tool(TOOL, arguments)?;
        if result.is_error {
            return Err(tool_error(&result.text));
        }
        let report = parse_report(result.structured, &result.text)?;
        if report.message.contains("not bound") {
            return Err(Failure::NotBound(report.message));
        }
        if let Some(warning) = report.warning.as_ref().filter(|w| warned.as_ref() != Some(*w)) {
            if let Some(b) = backlog.as_mut() {
                b.finish();
            }
            eprintln!("warning: {warning}");
            warned = Some(warning.clone());
        }

        if sending_mode || report.submitted + report.removed > 0 || !report.complete {
            if let Some(b) = backlog.as_mut() {
                b.finish();
            }
            println!("{}", sending.record(call, report.submitted, report.removed, report.remaining));
        }
        if !report.complete {
            // More to send (also when new changes arrived while the backlog drained): no waiting between calls.
            let moved = report.remaining < last_remaining.unwrap_or(u64::MAX)
                && (last_remaining.is_some() || report.submitted + report.removed > 0);
            stalled = if moved { 0 } else { stalled + 1 };
            last_remaining = Some(report.remaining);
            if stalled >= args.stall_calls {
                return Err(Failure::Other(format!(
                    "no progress in {stalled} calls in a row: {} items stay queued and nothing was sent (the server \
                     said: {}). The server's log (`wrangler tail`) says why: typically Zotero failing or refusing, or \
                     a SYNC_SUBREQUEST_BUDGET too small for even one item. Fix that and run again; it continues \
                     where it stopped",
                    report.remaining,
                    report.message.trim()
                )));
            }
            sending_mode = true;
            backlog = None;
            continue;
        }
        if sending_mode {
            println!(
                "All changes sent: {} items{} in {}. {}",
                sending.sent,
                if sending.removed > 0 { format!(", {} removed", sending.removed) } else { String::new() },
                progress::duration(sending.elapsed().as_secs()),
                report.message.trim()
            );
            sending_mode = false;
            last_remaining = None;
            stalled = 0;
        }
        match report.backlog {
            Some(0) => {
                if let Some(b) = backlog.as_mut() {
                    b.show(0);
                    b.finish();
                }
                if let Some(failed) = report.failed.filter(|&n| n > 0) {
                    return Err(Failure::IndexingFailed(failed));
                }
                println!(
                    "Done: AI Search has indexed everything{}.",
                    if report.failed.is_none() { " (it did not say whether any document failed)" } else { "" }
                );
                return Ok(());
            }
            Some(left) => {
                unknown_backlog = 0;
                let drain = backlog.get_or_insert_with(|| Backlog::new(terminal));
                drain.show(left);
                if drain.waited() >= Duration::from_secs(args.max_wait_mins * 60) {
                    return Err(Failure::Other(format!(
                        "AI Search still had {left} documents to index {} after everything was sent. They were \
                         all sent and it keeps indexing on its own: run this again later to check (it only waits), \
                         or look at the instance in the Cloudflare dashboard",
                        progress::duration(drain.waited().as_secs())
                    )));
                }
            }
            None => {
                if let Some(b) = backlog.as_mut() {
                    b.finish();
                }
                unknown_backlog += 1;
                if unknown_backlog >= UNKNOWN_BACKLOG_CALLS {
                    return Err(Failure::Other(format!(
                        "everything was sent, but AI Search did not report its indexing backlog in {unknown_backlog} \
                         calls in a row, so it is unknown whether indexing has finished: look at the instance in \
                         the Cloudflare dashboard, or run this again later"
                    )));
                }
                eprintln!("AI Search did not report its backlog; asking again.");
            }
        }
        std::thread::sleep(Duration::from_secs(args.poll_secs));
    }
    Err(Failure::Other(format!(
        "stopped after {} calls (--max-calls) before the index was complete. Run again to continue where it stopped, \
         with a higher --max-calls or --limit",
        args.max_calls
    )))
}

fn parse_report(structured: Option<Value>, text: &str) -> Result<Report, Failure> {
    if text.contains("not bound") && structured.is_none() {
        return Err(Failure::NotBound(text.to_owned()));
    }
    let structured = structured.ok_or_else(|| {
        format!(
            "{TOOL} answered without structuredContent, so its progress cannot be read (is the server older than \
             this command? update it). It said: {}",
            text.trim()
        )
    })?;
    serde_json::from_value(structured.clone())
        .map_err(|e| Failure::Other(format!("{TOOL} answered something unexpected ({e}): {structured}")))
}

fn tool_error(text: &str) -> Failure {
    if text.contains("not bound") {
        return Failure::NotBound(text.to_owned());
    }
    let advice = if text.contains("zotero:write") || text.contains("read-only") {
        "The token lacks zotero:write: use one from `scripts/get-token` without --read-only, or leave out --token \
         and ZOTERO_MCP_TOKEN to sign in"
    } else {
        "What was sent before stays sent: fix the cause and run again (without --full) to continue where it stopped"
    };
    Failure::Other(format!("{TOOL} failed: {}\n{advice}", text.trim()))
}

/// Runs the command with the arguments after `reindex`.
pub fn main(args: Vec<String>) -> ExitCode {
    let args = match parse_args(args) {
        Ok(args) => args,
        Err(problem) if problem.is_empty() => {
            println!("{HELP}");
            return ExitCode::SUCCESS;
        }
        Err(problem) => {
            eprintln!("zotero-mcp reindex: {problem}\n\n{HELP}");
            return super::usage();
        }
    };
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::NotBound(said)) => {
            eprintln!(
                "zotero-mcp reindex: AI Search is not bound to this deployment, so there is no semantic index to fill \
                 (the server said: {}). Add the AI_SEARCH binding (`[[ai_search_namespaces]]` with binding = \
                 \"AI_SEARCH\" in wrangler.toml, as in this repository's), deploy again, then run this again",
                said.trim()
            );
            // Not 2: that is every command's usage error (`super::USAGE`).
            ExitCode::from(4)
        }
        Err(Failure::IndexingFailed(count)) => {
            eprintln!(
                "zotero-mcp reindex: everything was sent, but AI Search failed to index {count} document(s). The \
                 instance's jobs in the Cloudflare dashboard say which and why; after fixing the cause, `--full` \
                 sends everything again"
            );
            ExitCode::from(3)
        }
        Err(Failure::Other(problem)) => {
            eprintln!("zotero-mcp reindex: {problem}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_are_checked() {
        let parse = |args: &[&str]| parse_args(args.iter().map(|s| (*s).to_owned()).collect());
        let args = parse(&["example.org", "--full", "--limit", "50", "--poll-secs", "0", "--token", "t"]).ok().unwrap();
        assert!(args.full);
        assert_eq!((args.limit, args.poll_secs, args.token.as_deref()), (Some(50), 0, Some("t")));
        assert!(parse(&["example.org", "--limit", "0"]).err().unwrap().contains("from 1 to 2000"));
        assert!(parse(&["example.org", "--stall-calls", "x"]).err().unwrap().contains("not a number"));
        assert!(parse(&["--full"]).err().unwrap().contains("missing"));
        assert_eq!(parse(&["--help"]).err().unwrap(), "");
    }
}
