//! `zotero-mcp e2e`: checks a running zotero-mcp server end to end, as a client would use it — a deployment
//! after `make deploy`, or a local server. Read-only by default; `--write` adds a full write cycle on a scratch
//! item, removed again however the cycle ends. See `zotero-mcp e2e --help`.
//!
//! `args` reads the command line, `checks` holds the read-only steps, `write` the write cycle and its
//! clean-up, `catalogue` the `tools/list` comparison, `report` the steps and their rendering.

mod args;
mod catalogue;
mod checks;
mod report;
mod write;

use std::process::ExitCode;
use std::time::Duration;

use self::args::{Args, ArgsError};
use self::report::{Failure, Report};
use crate::commands::get_token::sign_in;
use crate::commands::mcp_client::{server_address, Auth, Client};
use crate::get_token::{mcp_url, ALL_SCOPES};

/// How this command names itself to the server (OAuth client, `clientInfo`, User-Agent).
const CLIENT_NAME: &str = "zotero-mcp e2e";

const HELP: &str = "\
zotero-mcp e2e: check a running zotero-mcp server end to end — a deployment (after `make deploy`) or a local
server — the way an MCP client uses it.

usage: zotero-mcp e2e <server> [--write] [--json] [--token TOKEN] [--username NAME] [--password-stdin]
                      [--query WORDS] [--no-sweep] [--timeout-secs S] [--retries N]

  <server>            the server: a domain (zotero.example.org), an address (https://zotero.example.org) or its
                      /mcp URL
  --write             also run a write cycle on a scratch item (tag zotero-mcp-e2e): create it, attach a PDF,
                      read it back, highlight a sentence, rename the file, delete the attachment and the item.
                      Whatever it created is deleted again, also when a step fails
  --json              print one JSON document (steps, cleanup, scratch keys, summary) instead of lines
  --token TOKEN       an access token (or ZOTERO_MCP_TOKEN), with zotero:write for --write; without one, sign in
                      as `zotero-mcp get-token` does, with the password from ZOTERO_MCP_PASSWORD, stdin or a
                      prompt (read-only runs ask for zotero:read only)
  --username NAME     the user name, for servers that set AUTH_USERNAME (or ZOTERO_MCP_USERNAME)
  --password-stdin    read the password from the first line of stdin
  --query WORDS       what the search step looks for (default: the newest items)
  --no-sweep          with --write, leave scratch items of earlier, interrupted runs alone (by default those
                      older than an hour are deleted first)
  --timeout-secs S    deadline of each HTTP request (default 120)
  --retries N         repeats of a request that failed in transit or got HTTP 429/502/503/504 (default 2)

Steps (one line each, with its time; ✓ passed, ✗ failed with what to do, – skipped):
  metadata            /.well-known/oauth-protected-resource/mcp and /.well-known/oauth-authorization-server
  protocol            server/discover (2026-07-28) and initialize (2025-06-18)
  tools/list          exactly the tools of this build, in order (test-fixture tools after them are accepted)
  search, item read   zotero_search, then zotero_get_item on its first hit
  collections         zotero_list_collections
  semantic search     an answer, or the exact answer of a deployment without AI Search
  /health             the server's own report: Zotero key, password, files (AI Search when it reports it)

Exit status:
  0   every step passed (and with --write, everything created was deleted)
  1   a step or a clean-up action failed; the output says which, why and what to do
  2   bad arguments";

/// Runs the command with the arguments after `e2e`.
pub fn main(args: Vec<String>) -> ExitCode {
    let args = match args::parse(args, |name| std::env::var(name).ok()) {
        Ok(args) => args,
        Err(ArgsError::Help) => {
            println!("{HELP}");
            return ExitCode::SUCCESS;
        }
        Err(problem) => {
            eprintln!("zotero-mcp e2e: {problem}\n\n{HELP}");
            return super::usage();
        }
    };
    let report = run(&args);
    if args.json {
        println!("{}", report.to_json());
    } else {
        println!("{}", report.summary_line());
    }
    if report.passed() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// Every step against the server; the report says how each went.
fn run(args: &Args) -> Report {
    let server = server_address(&args.server);
    let mut report = Report::new(server.clone(), args.write, args.json);
    let shown = mcp_url(&server).map(|u| u.to_string()).unwrap_or_else(|_| server.clone());
    report.note(&format!(
        "Checking {shown} ({}).",
        if args.write { "reads and a write cycle on a scratch item" } else { "read-only" }
    ));
    let Some(mut client) = report.check_with("sign-in", || connect(args, &server)) else {
        return report;
    };
    report.server = client.url().to_string();
    checks::metadata(&mut report, &client, args.token.is_some());
    if !checks::protocol(&mut report, &mut client) {
        // Without a working protocol every tool call would fail the same way: one failure says it.
        return report;
    }
    checks::tools_list(&mut report, &mut client);
    checks::search_and_read(&mut report, &mut client, args.query.as_deref());
    checks::collections(&mut report, &mut client);
    checks::semantic(&mut report, &mut client);
    checks::health(&mut report, &client);
    if args.write {
        if args.sweep {
            write::sweep(&mut report, &mut client);
        }
        let left = write::cycle(&mut report, &mut client);
        write::clean_up(&mut report, &mut client, left);
    }
    report
}

/// A client with a token: the one given, or one from signing in with the scopes the run needs.
fn connect(args: &Args, server: &str) -> Result<(Client, String), Failure> {
    let timeout = Duration::from_secs(args.timeout_secs);
    let setup = |e: String| Failure::new(e, "check the server address");
    match &args.token {
        Some(token) => {
            let url = mcp_url(server).map_err(|e| Failure::new(e.to_string(), "give the server's https address"))?;
            let client =
                Client::new(url, Auth::Token(token.clone()), timeout, args.retries, CLIENT_NAME).map_err(setup)?;
            Ok((client, "with the given token".to_owned()))
        }
        None => {
            // A read-only run asks for read only: it shows that such a grant is enough for it.
            let scopes: &[&str] = if args.write { ALL_SCOPES } else { &ALL_SCOPES[..1] };
            let signed_in =
                sign_in(server, CLIENT_NAME, args.username.clone(), args.password_stdin, scopes).map_err(|e| {
                    Failure::new(
                        e,
                        "the password is the server's AUTH_PASSWORD (in ZOTERO_MCP_PASSWORD, or --password-stdin); or \
                         pass --token",
                    )
                })?;
            let granted = signed_in.tokens.scopes.join(" ");
            if args.write
                && !signed_in.tokens.scopes.is_empty()
                && !signed_in.tokens.scopes.iter().any(|s| s == "zotero:write")
            {
                return Err(Failure::new(
                    format!("the server granted {granted} but --write needs zotero:write"),
                    "tick write on the consent page, or run without --write",
                ));
            }
            let url = signed_in.flow.mcp_url.clone();
            let client = Client::new(url, Auth::SignedIn(Box::new(signed_in)), timeout, args.retries, CLIENT_NAME)
                .map_err(setup)?;
            Ok((client, format!("signed in ({granted})")))
        }
    }
}
