//! `zotero-mcp get-token`: prints an access token for a zotero-mcp server, for MCP clients that take a static
//! bearer token instead of running OAuth themselves. See `zotero-mcp get-token --help`.

use std::io::{BufRead, IsTerminal, Write};
use std::process::ExitCode;

use crate::get_token::{Credentials, Flow, Tokens, ALL_SCOPES};

const HELP: &str = "\
zotero-mcp get-token: sign in to a zotero-mcp server and print an OAuth access token.

usage: zotero-mcp get-token <server-url> [--read-only] [--json] [--out FILE] [--username NAME] [--password-stdin]

  <server-url>        the server's address, e.g. https://zotero.example.org (or its /mcp URL)
  --read-only         ask for zotero:read only (default: zotero:read and zotero:write)
  --json              print the whole token response (access and refresh token, expiry, client id)
  --out FILE          write the access token to FILE (mode 0600) instead of stdout
  --username NAME     the user name, for servers that set AUTH_USERNAME (or ZOTERO_MCP_USERNAME)
  --password-stdin    read the password from the first line of stdin

The password is AUTH_PASSWORD of the server: from ZOTERO_MCP_PASSWORD, from stdin (--password-stdin, or
when stdin is not a terminal), or asked for at the terminal. Access tokens last one hour; --json also gives
the refresh token (30 days, rotated on every use).";

struct Args {
    server: String,
    read_only: bool,
    json: bool,
    out: Option<String>,
    username: Option<String>,
    password_stdin: bool,
}

fn parse_args(args: Vec<String>) -> Result<Args, String> {
    let mut args = args.into_iter();
    let mut parsed =
        Args { server: String::new(), read_only: false, json: false, out: None, username: None, password_stdin: false };
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "-h" | "--help" => return Err(String::new()),
            "--read-only" => parsed.read_only = true,
            "--json" => parsed.json = true,
            "--password-stdin" => parsed.password_stdin = true,
            "--out" => parsed.out = Some(args.next().ok_or("--out needs a file name")?),
            "--username" => parsed.username = Some(args.next().ok_or("--username needs a name")?),
            other if other.starts_with('-') => return Err(format!("unknown option {other}")),
            other if parsed.server.is_empty() => parsed.server = other.to_owned(),
            other => return Err(format!("unexpected argument {other}")),
        }
    }
    if parsed.server.is_empty() {
        return Err("the server URL is missing".into());
    }
    parsed.username = parsed.username.or_else(|| std::env::var("ZOTERO_MCP_USERNAME").ok().filter(|u| !u.is_empty()));
    Ok(parsed)
}

/// Agent harnesses and CI have no terminal, so stdin is the fallback when there is no variable.
fn read_password(from_stdin: bool) -> Result<String, String> {
    if !from_stdin {
        if let Ok(password) = std::env::var("ZOTERO_MCP_PASSWORD") {
            return Ok(password);
        }
    }
    if !from_stdin && std::io::stdin().is_terminal() {
        return rpassword::prompt_password("Server password: ")
            .map_err(|e| format!("could not read the password: {e}"));
    }
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line).map_err(|e| format!("could not read the password from stdin: {e}"))?;
    Ok(line.trim_end_matches(['\r', '\n']).to_owned())
}

/// A finished sign-in: the server's flow, the client registered for it and the tokens it issued.
pub(crate) struct SignedIn {
    pub flow: Flow,
    pub client_id: String,
    pub tokens: Tokens,
}

/// The whole OAuth flow, as `client_name`: the password (see [`read_password`]), discovery, registration,
/// consent for `scopes` and the code exchange. Also what `zotero-mcp reindex` runs without a token.
pub(crate) fn sign_in(
    server: &str,
    client_name: &str,
    username: Option<String>,
    password_stdin: bool,
    scopes: &[&str],
) -> Result<SignedIn, String> {
    let password = read_password(password_stdin)?;
    if password.is_empty() {
        return Err("no password given: set ZOTERO_MCP_PASSWORD, pipe it in, or run from a terminal".into());
    }
    let flow = Flow::discover(server).map_err(|e| e.to_string())?;
    let client_id = flow.register(client_name).map_err(|e| e.to_string())?;
    let credentials = Credentials { password, username };
    let approval = flow.authorize(&client_id, &credentials, scopes).map_err(|e| e.to_string())?;
    let tokens = flow.exchange(&client_id, approval).map_err(|e| e.to_string())?;
    Ok(SignedIn { flow, client_id, tokens })
}

fn run(args: Args) -> Result<(), String> {
    let scopes: &[&str] = if args.read_only { &ALL_SCOPES[..1] } else { ALL_SCOPES };
    let SignedIn { flow, client_id, tokens } =
        sign_in(&args.server, "zotero-mcp get-token", args.username, args.password_stdin, scopes)?;

    let output = if args.json {
        serde_json::json!({
            "access_token": tokens.access_token,
            "refresh_token": tokens.refresh_token,
            "expires_in": tokens.expires_in,
            "scope": tokens.scopes.join(" "),
            "client_id": client_id,
            "token_endpoint": flow.metadata.token_endpoint,
            "mcp_url": flow.mcp_url.as_str(),
        })
        .to_string()
    } else {
        tokens.access_token.clone()
    };
    match &args.out {
        Some(path) => {
            write_private(path, &output).map_err(|e| format!("could not write {path}: {e}"))?;
            eprintln!("Token written to {path}");
        }
        None => println!("{output}"),
    }
    eprintln!(
        "Scope: {}. Expires in {} s. Use it as `Authorization: Bearer <token>` for {}",
        tokens.scopes.join(" "),
        tokens.expires_in.unwrap_or(0),
        flow.mcp_url
    );
    Ok(())
}

/// Writes a secret readable by its owner only: the token is as good as the password for an hour.
fn write_private(path: &str, contents: &str) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path)?;
    file.write_all(contents.as_bytes())?;
    file.write_all(b"\n")
}

/// Runs the command with the arguments after `get-token`.
pub fn main(args: Vec<String>) -> ExitCode {
    let args = match parse_args(args) {
        Ok(args) => args,
        Err(problem) if problem.is_empty() => {
            println!("{HELP}");
            return ExitCode::SUCCESS;
        }
        Err(problem) => {
            eprintln!("zotero-mcp get-token: {problem}\n\n{HELP}");
            return super::usage();
        }
    };
    match run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(problem) => {
            eprintln!("zotero-mcp get-token: {problem}");
            ExitCode::FAILURE
        }
    }
}
