//! `zotero-mcp serve`: the server over stdio (for MCP clients that start it themselves) or over HTTP.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use zotero_mcp_core::net::parse_url;

use zotero_mcp_server::app::{App, McpAccess};
use zotero_mcp_server::auth::crypto::sha256_hex;
use zotero_mcp_server::grant::Grant;

use crate::http_server::{self, PublicBase};
use crate::settings::Settings;

const HELP: &str = "\
zotero-mcp serve: run the MCP server natively.

usage: zotero-mcp serve --stdio [--local] [--read-only] [--config FILE]
       zotero-mcp serve --http [ADDR] [--local] [--read-only] [--no-token] [--config FILE] [--public-url URL]

  --stdio             JSON-RPC on stdin/stdout, one message per line (logs go to stderr): what Claude Desktop,
                      Claude Code and other local MCP clients start
  --http [ADDR]       Streamable HTTP on ADDR (default 127.0.0.1:8787), endpoint /mcp
  --local             the library of Zotero Desktop on this machine, through its local API (ZOTERO_LOCAL_URL,
                      default http://localhost:23119/api), and its files from its data directory (ZOTERO_DATA_DIR,
                      default: from Zotero's profile, else ~/Zotero). Writes go through the local API when the
                      running Zotero takes them (Zotero 10), else through the Web API when ZOTERO_API_KEY is set
  --read-only         grant zotero:read only (stdio, and HTTP without OAuth); default: read and write
  --no-token          HTTP on loopback without any token: every process of every user on this machine can then
                      call the server (with --local: read your Zotero files, write with your keys). Not the default
  --config FILE       a TOML file of settings (default: ZOTERO_MCP_CONFIG, or ~/.config/zotero-mcp/config.toml)
  --public-url URL    the address clients use when a TLS proxy sits in front (only its scheme is used)
  --exit-after SECS   stop after this many seconds (tests)

Settings have the Worker's names, from the environment or the config file: ZOTERO_API_KEY (required),
ZOTERO_LIBRARY_ID, ZOTERO_LIBRARY_TYPE, ZOTERO_API_BASE, AUTH_PASSWORD, AUTH_USERNAME, ALLOWED_ORIGINS,
ALLOWED_HOSTS, WEBDAV_URL, WEBDAV_USERNAME, WEBDAV_PASSWORD (attachment files), TOOL_GROUPS (the tools offered:
read, write, files, research, admin; default all). Native only: ZOTERO_MCP_DATA_DIR (where the key/value database lives) and ZOTERO_MCP_TOKEN.

Who may call the HTTP server:
  AUTH_PASSWORD set      the OAuth 2.1 server of the Worker, with its login page (any address; on a loopback
                         address Host must be a loopback name or --public-url's host, unless ALLOWED_HOSTS is set)
  ZOTERO_MCP_TOKEN set   requests must carry `Authorization: Bearer <that token>` (any address)
  neither                on a loopback address only, a token the server makes at its first start and keeps in
                         http-token in ZOTERO_MCP_DATA_DIR (owner-only, the same at every start); requests must carry
                         `Authorization: Bearer <the file's content>`, e.g. for Claude Code:
                           claude mcp add --transport http zotero http://127.0.0.1:8787/mcp \\
                             --header \"Authorization: Bearer $(cat <data dir>/http-token)\"
                         Browser pages only from the origins ALLOWED_ORIGINS lists (none unless set); Host must be a
                         loopback name (that stops DNS rebinding)
  neither, --no-token    no token at all, loopback only: any local process of any user may call";

/// How often `serve --http` removes the key/value records that expired (opening the file also does).
const KV_SWEEP_PERIOD: std::time::Duration = std::time::Duration::from_secs(3600);

enum Mode {
    Stdio,
    Http(SocketAddr),
}

struct Args {
    mode: Mode,
    read_only: bool,
    config: Option<PathBuf>,
    public_url: Option<String>,
    exit_after: Option<u64>,
    local: bool,
    /// `--no-token`: a loopback HTTP server without credentials lets every local process in.
    no_token: bool,
}

fn parse(args: Vec<String>) -> Result<Args, String> {
    let mut mode = None;
    let mut parsed = Args {
        mode: Mode::Stdio,
        read_only: false,
        config: None,
        public_url: None,
        exit_after: None,
        local: false,
        no_token: false,
    };
    let mut args = args.into_iter().peekable();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "-h" | "--help" => return Err(String::new()),
            "--stdio" => mode = Some(Mode::Stdio),
            "--http" => {
                let addr = match args.peek() {
                    Some(next) if !next.starts_with('-') => args.next().unwrap_or_default(),
                    _ => "127.0.0.1:8787".to_owned(),
                };
                let addr = addr
                    .parse::<SocketAddr>()
                    .map_err(|_| format!("`{addr}` is not an address: use IP:PORT, e.g. 127.0.0.1:8787"))?;
                mode = Some(Mode::Http(addr));
            }
            "--read-only" => parsed.read_only = true,
            "--local" => parsed.local = true,
            "--no-token" => parsed.no_token = true,
            "--config" => parsed.config = Some(args.next().ok_or("--config needs a file")?.into()),
            "--public-url" => parsed.public_url = Some(args.next().ok_or("--public-url needs a URL")?),
            "--exit-after" => {
                let secs = args.next().ok_or("--exit-after needs a number of seconds")?;
                parsed.exit_after = Some(secs.parse().map_err(|_| format!("--exit-after: `{secs}` is not a number"))?);
            }
            other => return Err(format!("unknown option {other}")),
        }
    }
    parsed.mode = mode.ok_or("say how to serve: --stdio or --http [ADDR]")?;
    Ok(parsed)
}

/// Runs the command with the arguments after `serve`.
pub fn main(args: Vec<String>) -> ExitCode {
    let args = match parse(args) {
        Ok(args) => args,
        Err(problem) if problem.is_empty() => {
            println!("{HELP}");
            return ExitCode::SUCCESS;
        }
        Err(problem) => {
            eprintln!("zotero-mcp serve: {problem}\n\n{HELP}");
            return super::usage();
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("zotero-mcp serve: could not start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    // One thread, like a Worker: the server's futures are not Send, so they run on a LocalSet.
    let local = tokio::task::LocalSet::new();
    match local.block_on(&runtime, run(args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(problem) => {
            eprintln!("zotero-mcp serve: {problem}");
            ExitCode::FAILURE
        }
    }
}

async fn run(args: Args) -> Result<(), String> {
    crate::native::log::install();
    let settings = Settings::load(args.config.as_deref())?;
    let mut config = settings.config();
    if !args.local && config.zotero_api_key.is_none() {
        eprintln!(
            "zotero-mcp: ZOTERO_API_KEY is not set; tools will say so until it is (a key from zotero.org/settings/keys)"
        );
    }
    if config.test_fixtures {
        // Said at the start, where whoever set it by mistake looks first (`/health` says it too).
        eprintln!("zotero-mcp: warning: {}", zotero_mcp_server::config::TEST_SWITCHES_WARNING);
    }
    let data_dir = settings.data_dir()?;
    let kv_path = data_dir.join("kv.redb");
    let grant =
        if args.read_only { Grant::read_only(&config.auth_username) } else { Grant::read_write(&config.auth_username) };
    let stop = stop_signal(args.exit_after);
    match args.mode {
        Mode::Stdio => {
            let platform = crate::native::stdio_platform(&kv_path)?;
            if args.local {
                config.desktop = Some(on_desktop(&settings, &platform).await?);
            }
            let app = App { config: std::rc::Rc::new(config), platform, access: McpAccess::Trusted(grant) };
            eprintln!("zotero-mcp: serving MCP on stdio ({})", scopes_of(&app));
            tokio::select! {
                served = crate::stdio::serve(app, tokio::io::stdin(), tokio::io::stdout()) => served.map_err(|e| e.to_string()),
                () = stop => Ok(()),
            }
        }
        Mode::Http(addr) => {
            let public_url = match args.public_url.as_deref() {
                Some(url) => Some(parse_url(url).map_err(|e| format!("--public-url `{url}`: {e}"))?),
                None => None,
            };
            let credentials = match (config.auth_password.is_some(), settings.get("ZOTERO_MCP_TOKEN")) {
                (true, _) => Credentials::Password,
                (false, Some(token)) => Credentials::Token(token),
                (false, None) => Credentials::None,
            };
            if args.no_token && !matches!(credentials, Credentials::None) {
                return Err("--no-token asks for no credentials, but AUTH_PASSWORD or ZOTERO_MCP_TOKEN is set: \
                            drop the flag, or unset the variable"
                    .to_owned());
            }
            let mut token_file = None;
            let access = match credentials {
                Credentials::Password => {
                    if http_server::is_loopback(&addr) {
                        // A page that rebinds its own domain to 127.0.0.1 arrives with its own Host: refused, or it
                        // could post wrong passwords to the login form and lock its owner out. A TLS proxy in front
                        // sends the public name, which --public-url gives.
                        let public_host = public_url.as_ref().and_then(|u| u.host_str()).map(str::to_owned);
                        config.allowed_hosts.get_or_insert_with(|| loopback_hosts().chain(public_host).collect());
                    }
                    McpAccess::OAuth
                }
                Credentials::Token(token) => McpAccess::StaticToken { token_sha256: sha256_hex(&token), grant },
                Credentials::None if http_server::is_loopback(&addr) => {
                    loopback_only(&mut config, &settings);
                    if args.no_token {
                        McpAccess::Trusted(grant)
                    } else {
                        // Loopback is not "only me": every user's processes reach 127.0.0.1. The server's own
                        // token, in a file only its owner reads, is what keeps the others out.
                        let token = crate::native::token::load_or_create(&data_dir).map_err(|e| e.to_string())?;
                        let access = McpAccess::StaticToken { token_sha256: sha256_hex(&token.value), grant };
                        token_file = Some(token);
                        access
                    }
                }
                Credentials::None => {
                    return Err(format!(
                        "{addr} is reachable from other machines, so the server needs credentials: set AUTH_PASSWORD \
                         (the OAuth login page, as on Workers) or ZOTERO_MCP_TOKEN (one fixed bearer token)"
                    ));
                }
            };
            let scheme = public_url.as_ref().map_or("http", |u| u.scheme()).to_owned();
            let (platform, kv) = crate::native::platform(&kv_path)?;
            if args.local {
                config.desktop = Some(on_desktop(&settings, &platform).await?);
            }
            // Reads skip expired records but only a read removes one; abandoned client registrations and spent
            // codes are never read again, so without this they would fill kv.redb for as long as it runs.
            tokio::task::spawn_local(kv.sweep_every(KV_SWEEP_PERIOD));
            let listener =
                tokio::net::TcpListener::bind(addr).await.map_err(|e| format!("could not listen on {addr}: {e}"))?;
            let bound = listener.local_addr().map_err(|e| e.to_string())?;
            let app = App { config: std::rc::Rc::new(config), platform, access };
            let who = match &app.access {
                McpAccess::OAuth => "OAuth 2.1 (AUTH_PASSWORD)".to_owned(),
                McpAccess::StaticToken { .. } => match &token_file {
                    Some(token) => {
                        format!("bearer token from {}, loopback only, {}", token.path.display(), scopes_of(&app))
                    }
                    None => format!("bearer token ZOTERO_MCP_TOKEN, {}", scopes_of(&app)),
                },
                McpAccess::Trusted(_) => format!(
                    "--no-token: no token, loopback only, so every process of every user on this machine can call \
                     it, {}",
                    scopes_of(&app)
                ),
            };
            let hosts = match &app.config.allowed_hosts {
                Some(hosts) => format!("; Host: {}", hosts.join(", ")),
                None => String::new(),
            };
            eprintln!("zotero-mcp: listening on {scheme}://{bound}/mcp ({who}{hosts}; data in {})", data_dir.display());
            if let Some(token) = &token_file {
                eprintln!("{}", how_to_pass(token, &format!("{scheme}://{bound}/mcp")));
            }
            http_server::serve(listener, app, PublicBase { scheme }, stop).await.map_err(|e| e.to_string())
        }
    }
}

/// Zotero Desktop for `--local`: where its local API and data directory are, and a first look at the running
/// Zotero (said on stderr; a Zotero not running yet is not fatal: each call says so until it answers).
async fn on_desktop(
    settings: &Settings,
    platform: &zotero_mcp_core::platform::Platform,
) -> Result<std::rc::Rc<dyn zotero_mcp_core::desktop::Desktop>, String> {
    use zotero_mcp_core::desktop::Desktop;
    use zotero_mcp_core::zotero::local::DEFAULT_LOCAL_URL;

    let api_base = settings.get("ZOTERO_LOCAL_URL").unwrap_or_else(|| DEFAULT_LOCAL_URL.to_owned());
    parse_url(&api_base).map_err(|e| format!("ZOTERO_LOCAL_URL `{api_base}`: {e}"))?;
    let data = crate::native::zotero_profile::find(
        settings.get("ZOTERO_DATA_DIR").map(PathBuf::from),
        settings.get("ZOTERO_BASE_DIR").map(PathBuf::from),
        dirs::home_dir().as_deref(),
    )
    .ok_or(
        "no home directory is known for this user, so Zotero's data directory cannot be found: set ZOTERO_DATA_DIR",
    )?;
    if !data.data_dir.join("zotero.sqlite").exists() {
        eprintln!(
            "zotero-mcp: {} (from {}) holds no zotero.sqlite, so it is not Zotero's data directory; files will not \
             be found until ZOTERO_DATA_DIR names it (Zotero shows it in Settings → Advanced → Files and Folders)",
            data.data_dir.display(),
            data.found_by
        );
    }
    let desktop =
        crate::native::desktop::NativeDesktop::new(&api_base, &data, platform.http.clone(), platform.clock.clone());
    let writes = match desktop.zotero().await {
        Ok(info) if info.accepts_writes() => format!("{}; writes through its local API", info.describe()),
        Ok(info) => match settings.get("ZOTERO_API_KEY") {
            Some(_) => format!("{}, read-only locally; writes through the Web API (ZOTERO_API_KEY)", info.describe()),
            None => format!("{}, read-only (set ZOTERO_API_KEY to write through the Web API)", info.describe()),
        },
        Err(error) => format!("not answering yet: {error}"),
    };
    eprintln!(
        "zotero-mcp: Zotero Desktop at {api_base}: {writes}; files from {} ({})",
        data.data_dir.display(),
        data.found_by
    );
    Ok(std::rc::Rc::new(desktop))
}

/// What an HTTP server was given to check its callers with.
enum Credentials {
    /// `AUTH_PASSWORD`: the OAuth server.
    Password,
    /// `ZOTERO_MCP_TOKEN`.
    Token(String),
    None,
}

/// A loopback server without a password: only this machine may call, and only by a loopback name (a page that
/// rebinds its own domain to 127.0.0.1 arrives with its own Host and is refused). Nor may a browser page drive
/// the tools unless its origin is listed: not claude.ai's or chatgpt.com's (the default list, for servers
/// reached from elsewhere), not a page on another loopback port (any local dev server).
fn loopback_only(config: &mut zotero_mcp_server::config::Config, settings: &Settings) {
    config.allowed_hosts.get_or_insert_with(|| loopback_hosts().collect());
    config.strict_origins = true;
    if settings.get("ALLOWED_ORIGINS").is_none() {
        config.allowed_origins.clear();
    }
}

/// The start-up lines saying where the server's own token is and how a client sends it (never the token itself:
/// stderr may end up in a log others read).
fn how_to_pass(token: &crate::native::token::LocalToken, url: &str) -> String {
    let made = if token.created { "made now" } else { "kept from an earlier start" };
    let path = token.path.display();
    format!(
        "zotero-mcp: requests must carry `Authorization: Bearer <token>`, the token in {path} ({made}; readable \
         by you only, the same at every start). For Claude Code:\n  claude mcp add --transport http zotero {url} \
         --header \"Authorization: Bearer $(cat '{path}')\"\nOther clients: the same header in their server \
         settings. `--no-token` serves without one (then every process of every user here can call)."
    )
}

/// The names by which this machine reaches a loopback server.
fn loopback_hosts() -> impl Iterator<Item = String> {
    ["localhost", "127.0.0.1", "[::1]"].into_iter().map(str::to_owned)
}

fn scopes_of(app: &App) -> &'static str {
    let grant = match &app.access {
        McpAccess::Trusted(grant) | McpAccess::StaticToken { grant, .. } => grant,
        McpAccess::OAuth => return "scopes as granted",
    };
    if grant.allows(zotero_mcp_server::grant::Scope::Write) {
        "read and write"
    } else {
        "read-only"
    }
}

/// Resolves on Ctrl-C, or after `exit_after` seconds when given.
async fn stop_signal(exit_after: Option<u64>) {
    let timer = async {
        match exit_after {
            Some(secs) => tokio::time::sleep(std::time::Duration::from_secs(secs)).await,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        () = timer => {}
    }
}
