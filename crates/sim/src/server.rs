//! Serving the simulator over HTTP on loopback, for the `zotero-sim` binary (local demos and end-to-end tests
//! of the Worker under `wrangler dev`).
//!
//! Two listeners: the API's, and the storage origin's (Zotero Storage's signed download and upload URLs point
//! there, a separate origin as S3 is, so a client that carries the API key across the redirect is caught). Each
//! has a thread that only accepts; one thread answers every request in arrival order, since the simulator is
//! single-threaded by design and a local demo needs no concurrency. The server refuses non-loopback addresses
//! so that a demo can never expose an API key with write access to the network.

use std::io::Write;
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::local::{DialogAnswer, Flavour, LocalApi};
use crate::{control, LibraryRef, Simulator, DEMO_API_KEY, DEMO_USER_ID};

/// Why the server could not start or stopped.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error("{0}\n\nusage: zotero-sim --listen 127.0.0.1:PORT [--storage-listen 127.0.0.1:PORT] [--storage-origin http://127.0.0.1:PORT] [--demo [--demo-files-on-zotero-storage] [--demo-groups] | --synthetic N] [--synthetic-group N] [--feeds-group] [--seed S] [--api-key KEY] [--user-id N] [--exit-after SECONDS] [--control] [--local-api 7|10 [--local-data-dir DIR] [--local-api-disabled] [--local-dialog always|once|deny]]")]
    Usage(String),
    #[error("refusing to listen on {0}: zotero-sim serves loopback addresses only (127.0.0.0/8 or [::1])")]
    NotLoopback(String),
    #[error("cannot resolve the listen address {addr}: {reason}")]
    Resolve { addr: String, reason: String },
    #[error("cannot listen on {addr}: {reason}")]
    Bind { addr: String, reason: String },
    #[error("cannot put the demo files on the simulated Zotero Storage: {0}")]
    DemoFiles(String),
    #[error("cannot lay out the data directory: {0}")]
    DataDir(String),
}

/// Zotero Desktop's local API in front of the library (`--local-api`, [`crate::local`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalOptions {
    pub flavour: Flavour,
    /// Where to lay out Zotero's data directory (`--local-data-dir`).
    pub data_dir: Option<std::path::PathBuf>,
    /// The local API switched off in Zotero's settings (`--local-api-disabled`).
    pub disabled: bool,
    /// How the authorization dialog is answered (`--local-dialog`, default `always`).
    pub dialog: DialogAnswer,
}

/// Command-line options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    pub listen: String,
    pub demo: bool,
    pub api_key: String,
    pub user_id: u64,
    pub exit_after: Option<u64>,
    /// Serve the control endpoint (`/_sim/…`, [`crate::control`]): fault injection from outside, for tests.
    pub control: bool,
    /// Where the storage origin listens; by default a free port on the API's loopback address.
    pub storage_listen: Option<String>,
    /// Put the demo library's files on the simulated Zotero Storage (needs `--demo`).
    pub demo_files_on_zotero_storage: bool,
    /// The origin signed download and upload URLs name, when it is not the storage listener's own address: a
    /// loopback proxy in front of it (the benches count the requests that reach storage this way).
    pub storage_origin: Option<String>,
    /// Add the demo's two group libraries ([`crate::demo_groups`], needs `--demo`).
    pub demo_groups: bool,
    /// Serve Zotero Desktop's local API under `/api/` instead of the Web API.
    pub local: Option<LocalOptions>,
}

/// A synthetic library in place of the demo (`--synthetic N [--seed S]`, [`crate::synthetic`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SyntheticOptions {
    /// Top-level items.
    pub items: usize,
    /// The generator's seed (default 1): the same items and seed give the same library.
    pub seed: u64,
}

/// What the command line asks for: the server's options, the library to serve when it is a synthetic one, and
/// a synthetic group beside it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandLine {
    pub options: Options,
    pub synthetic: Option<SyntheticOptions>,
    /// A synthetic group library ([`crate::synthetic::GROUP`]) the key may read and write, beside the library
    /// served (`--synthetic-group N`): the demo and a large library from one simulator.
    pub synthetic_group: Option<SyntheticOptions>,
    /// The feeds group ([`crate::feeds_group`], `--feeds-group`): a library made for the bibliography feeds'
    /// end-to-end test, which the key may read.
    pub feeds_group: bool,
}

impl CommandLine {
    /// The simulator to serve: a synthetic library under the key and user ID given, or what the options say;
    /// and the synthetic group when asked for.
    pub fn simulator(&self) -> Simulator {
        let sim = match self.synthetic {
            Some(SyntheticOptions { items, seed }) => {
                Simulator::synthetic_with(self.options.user_id, &self.options.api_key, items, seed)
            }
            None => simulator(&self.options),
        };
        if let Some(SyntheticOptions { items, seed }) = self.synthetic_group {
            sim.add_synthetic_group(&self.options.api_key, items, seed);
        }
        if self.feeds_group {
            sim.add_feeds_group(&self.options.api_key);
        }
        sim
    }
}

/// Parses `--listen ADDR [--storage-listen ADDR] [--storage-origin URL] [--demo [--demo-files-on-zotero-storage]] [--api-key KEY]
/// [--user-id N] [--exit-after SECONDS] [--control] [--synthetic N [--seed S]]`.
pub fn parse_args<I: IntoIterator<Item = String>>(args: I) -> Result<CommandLine, ServerError> {
    let mut listen = None;
    let mut demo = false;
    let mut api_key = DEMO_API_KEY.to_string();
    let mut user_id = DEMO_USER_ID;
    let mut exit_after = None;
    let mut control = false;
    let mut storage_listen = None;
    let mut demo_files_on_zotero_storage = false;
    let mut storage_origin = None;
    let mut demo_groups = false;
    let mut flavour = None;
    let mut data_dir = None;
    let mut disabled = false;
    let mut dialog = DialogAnswer::AlwaysAllow;
    let mut synthetic_items: Option<usize> = None;
    let mut synthetic_group: Option<usize> = None;
    let mut feeds_group = false;
    let mut seed: Option<u64> = None;
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().ok_or_else(|| ServerError::Usage(format!("{name} needs a value")));
        match arg.as_str() {
            "--listen" => listen = Some(value("--listen")?),
            "--demo" => demo = true,
            "--control" => control = true,
            "--storage-listen" => storage_listen = Some(value("--storage-listen")?),
            "--demo-files-on-zotero-storage" => demo_files_on_zotero_storage = true,
            "--demo-groups" => demo_groups = true,
            "--local-api" => {
                flavour = Some(match value("--local-api")?.as_str() {
                    "7" => Flavour::Zotero7,
                    "10" => Flavour::Zotero10,
                    other => {
                        return Err(ServerError::Usage(format!(
                            "--local-api is 7 or 10 (the Zotero imitated), not {other:?}"
                        )))
                    }
                })
            }
            "--local-data-dir" => data_dir = Some(std::path::PathBuf::from(value("--local-data-dir")?)),
            "--local-api-disabled" => disabled = true,
            "--local-dialog" => {
                dialog = match value("--local-dialog")?.as_str() {
                    "always" => DialogAnswer::AlwaysAllow,
                    "once" => DialogAnswer::Allow,
                    "deny" => DialogAnswer::Deny,
                    other => {
                        return Err(ServerError::Usage(format!(
                            "--local-dialog is always, once or deny, not {other:?}"
                        )))
                    }
                }
            }
            "--storage-origin" => {
                let v = value("--storage-origin")?;
                let loopback = ["http://127.0.0.1:", "http://localhost:", "http://[::1]:"];
                if !loopback.iter().any(|prefix| v.starts_with(prefix)) {
                    return Err(ServerError::Usage(format!(
                        "--storage-origin must be an http URL on loopback (http://127.0.0.1:PORT), not {v:?}"
                    )));
                }
                storage_origin = Some(v);
            }
            "--synthetic" => {
                let v = value("--synthetic")?;
                synthetic_items = Some(v.parse().map_err(|_| {
                    ServerError::Usage(format!("--synthetic is a number of items (such as 10000), not {v:?}"))
                })?);
            }
            "--synthetic-group" => {
                let v = value("--synthetic-group")?;
                synthetic_group = Some(v.parse().map_err(|_| {
                    ServerError::Usage(format!("--synthetic-group is a number of items (such as 20000), not {v:?}"))
                })?);
            }
            "--feeds-group" => feeds_group = true,
            "--seed" => {
                let v = value("--seed")?;
                seed = Some(
                    v.parse().map_err(|_| ServerError::Usage(format!("--seed must be a whole number, not {v:?}")))?,
                );
            }
            "--api-key" => api_key = value("--api-key")?,
            "--user-id" => {
                let v = value("--user-id")?;
                user_id =
                    v.parse().map_err(|_| ServerError::Usage(format!("--user-id must be a number, not {v:?}")))?;
            }
            "--exit-after" => {
                let v = value("--exit-after")?;
                exit_after = Some(
                    v.parse().map_err(|_| ServerError::Usage(format!("--exit-after must be seconds, not {v:?}")))?,
                );
            }
            "-h" | "--help" => {
                return Err(ServerError::Usage("zotero-sim: a local Zotero Web API v3 simulator".into()))
            }
            other => return Err(ServerError::Usage(format!("unknown argument {other:?}"))),
        }
    }
    if api_key.is_empty() {
        return Err(ServerError::Usage("--api-key must not be empty".into()));
    }
    let listen = listen.ok_or_else(|| ServerError::Usage("--listen is required".into()))?;
    if demo_groups && !demo {
        return Err(ServerError::Usage("--demo-groups needs --demo (the groups are the demo's)".into()));
    }
    if demo_files_on_zotero_storage && !demo {
        return Err(ServerError::Usage(
            "--demo-files-on-zotero-storage needs --demo (the files are the demo's)".into(),
        ));
    }
    let synthetic = match (synthetic_items, seed) {
        (Some(_), _) if demo => {
            return Err(ServerError::Usage("--synthetic and --demo each choose the library: give one of them".into()))
        }
        (Some(items), seed) => Some(SyntheticOptions { items, seed: seed.unwrap_or(1) }),
        (None, Some(_)) if synthetic_group.is_none() => {
            return Err(ServerError::Usage("--seed needs --synthetic N or --synthetic-group N".into()))
        }
        (None, _) => None,
    };
    let synthetic_group = synthetic_group.map(|items| SyntheticOptions { items, seed: seed.unwrap_or(1) });
    let local = match flavour {
        Some(flavour) => Some(LocalOptions { flavour, data_dir, disabled, dialog }),
        None if data_dir.is_some() || disabled => {
            return Err(ServerError::Usage("--local-data-dir and --local-api-disabled need --local-api".into()))
        }
        None => None,
    };
    if local.as_ref().is_some_and(|l| l.data_dir.is_some()) && !demo {
        return Err(ServerError::Usage("--local-data-dir needs --demo (the files are the demo's)".into()));
    }
    let options = Options {
        local,
        listen,
        demo,
        api_key,
        user_id,
        exit_after,
        control,
        storage_listen,
        demo_files_on_zotero_storage,
        storage_origin,
        demo_groups,
    };
    Ok(CommandLine { options, synthetic, synthetic_group, feeds_group })
}

/// Resolves the listen address and checks that every address it names is loopback.
pub fn loopback_addr(listen: &str) -> Result<SocketAddr, ServerError> {
    let addrs: Vec<SocketAddr> = listen
        .to_socket_addrs()
        .map_err(|e| ServerError::Resolve { addr: listen.to_string(), reason: e.to_string() })?
        .collect();
    if addrs.is_empty() || addrs.iter().any(|a| !a.ip().is_loopback()) {
        return Err(ServerError::NotLoopback(listen.to_string()));
    }
    addrs.into_iter().next().ok_or_else(|| ServerError::NotLoopback(listen.to_string()))
}

/// The simulator the options ask for.
pub fn simulator(opts: &Options) -> Simulator {
    if opts.demo {
        Simulator::demo_with(opts.user_id, &opts.api_key)
    } else {
        let sim = Simulator::new();
        sim.add_user(opts.user_id, &opts.api_key, true);
        sim
    }
}

fn to_http(request: &mut tiny_http::Request) -> Option<http::Request<Vec<u8>>> {
    let mut body = Vec::new();
    request.as_reader().read_to_end(&mut body).ok()?;
    let mut builder = http::Request::builder().method(request.method().as_str()).uri(request.url());
    for header in request.headers() {
        builder = builder.header(header.field.as_str().as_str(), header.value.as_str());
    }
    builder.body(body).ok()
}

fn respond(request: tiny_http::Request, response: http::Response<Vec<u8>>) {
    let (parts, body) = response.into_parts();
    let mut out = tiny_http::Response::from_data(body).with_status_code(parts.status.as_u16());
    for (name, value) in &parts.headers {
        if let Ok(h) = tiny_http::Header::from_bytes(name.as_str().as_bytes(), value.as_bytes()) {
            out.add_header(h);
        }
    }
    // A client that went away is not the server's problem.
    let _ = request.respond(out);
}

/// Binds a loopback listener (with the socket options the benchmarks need).
fn listen_on(addr: SocketAddr) -> Result<tiny_http::Server, ServerError> {
    let bind = |reason: String| ServerError::Bind { addr: addr.to_string(), reason };
    // TCP_NODELAY on the listener, which Linux hands down to every accepted connection: tiny_http writes a
    // response's head and body separately, and with Nagle's algorithm the body then waits for the client's
    // delayed ACK — 40 ms on every keep-alive request, which would swamp what the benchmarks measure.
    let socket = socket2::Socket::new(socket2::Domain::for_address(addr), socket2::Type::STREAM, None)
        .map_err(|e| bind(e.to_string()))?;
    socket.set_reuse_address(true).map_err(|e| bind(e.to_string()))?;
    socket.set_tcp_nodelay(true).map_err(|e| bind(e.to_string()))?;
    socket.bind(&addr.into()).map_err(|e| bind(e.to_string()))?;
    // A deep backlog: the load benchmark opens a few hundred connections at once, and a full queue drops SYNs
    // that the client then retries only after seconds.
    socket.listen(1024).map_err(|e| bind(e.to_string()))?;
    tiny_http::Server::from_listener(std::net::TcpListener::from(socket), None).map_err(|e| bind(e.to_string()))
}

/// Which listener a request came in on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Origin {
    Api,
    Storage,
}

/// A request a hold caught, parked until released.
struct Held {
    hold: crate::Hold,
    request: tiny_http::Request,
    pending: Pending,
}

enum Pending {
    /// Caught before it was applied: applied once released.
    Apply(Origin, http::Request<Vec<u8>>),
    /// Applied, its answer kept back.
    Answer(http::Response<Vec<u8>>),
}

/// Accepts on `server` in a thread of its own and hands each request to the answering thread.
fn accept_into(server: tiny_http::Server, origin: Origin, to: mpsc::Sender<(Origin, tiny_http::Request)>) {
    std::thread::spawn(move || {
        while let Ok(request) = server.recv() {
            if to.send((origin, request)).is_err() {
                return;
            }
        }
    });
}

/// Starts the demo library on a free loopback port in a thread of this process, with the control endpoints
/// (`/_sim/*`), serving for at most two minutes; returns its base URL once it accepts connections. For tests
/// that drive a server over the network.
pub fn start_demo_on_loopback() -> Result<String, std::io::Error> {
    let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
    let options = Options {
        listen: format!("127.0.0.1:{port}"),
        demo: true,
        api_key: "demo".into(),
        user_id: crate::DEMO_USER_ID,
        exit_after: Some(120),
        control: true,
        storage_listen: None,
        demo_files_on_zotero_storage: false,
        storage_origin: None,
        demo_groups: false,
        local: None,
    };
    std::thread::spawn(move || run(&options));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        if std::time::Instant::now() > deadline {
            return Err(std::io::Error::new(std::io::ErrorKind::TimedOut, "zotero-sim did not start within 15 s"));
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    Ok(format!("http://127.0.0.1:{port}"))
}

/// Serves until `exit_after` elapses (or forever). Prints `zotero-sim listening on http://ADDR` and then
/// `zotero-sim storage listening on http://ADDR` once ready.
pub fn run(opts: &Options) -> Result<(), ServerError> {
    serve(opts, simulator(opts))
}

/// Serves what the command line asks for (the binary's entry): [`run`], or a synthetic library.
pub fn run_command_line(command_line: &CommandLine) -> Result<(), ServerError> {
    let sim = command_line.simulator();
    if let Some(made) = sim.synthetic_counts().get(&LibraryRef::Group(crate::synthetic::GROUP)) {
        let mut stdout = std::io::stdout();
        let _ = writeln!(
            stdout,
            "zotero-sim synthetic group groups/{}: {} items, {} duplicate pairs, {} tags, {} collections",
            crate::synthetic::GROUP,
            made.top_level,
            made.duplicate_pairs,
            made.tags,
            made.collections
        );
    }
    serve(&command_line.options, sim)
}

fn serve(opts: &Options, sim: Simulator) -> Result<(), ServerError> {
    let addr = loopback_addr(&opts.listen)?;
    // The storage origin's default is a free port, not the next one: scripts/dev.sh already gives the API's
    // next port to the WebDAV server.
    let storage_addr = match &opts.storage_listen {
        Some(listen) => loopback_addr(listen)?,
        None => SocketAddr::new(addr.ip(), 0),
    };
    let sim = std::rc::Rc::new(sim);
    let server = listen_on(addr)?;
    let storage = listen_on(storage_addr)?;
    let bound = server.server_addr().to_ip().unwrap_or(addr);
    let storage_bound = storage.server_addr().to_ip().unwrap_or(storage_addr);
    let origin = opts.storage_origin.clone().unwrap_or_else(|| format!("http://{storage_bound}"));
    sim.set_storage_origin(&origin);
    if opts.demo_groups {
        sim.add_demo_groups(&opts.api_key);
    }
    if opts.demo_files_on_zotero_storage {
        sim.store_demo_files(LibraryRef::User(opts.user_id)).map_err(ServerError::DemoFiles)?;
    }
    let local = match &opts.local {
        Some(local) => {
            let api = LocalApi::new(sim.clone(), local.flavour, opts.user_id, &opts.api_key);
            let api = match &local.data_dir {
                Some(dir) => api.with_data_dir(dir.clone()).map_err(ServerError::DataDir)?,
                None => api,
            };
            api.set_enabled(!local.disabled);
            api.answer_dialogs(local.dialog);
            Some(api)
        }
        None => None,
    };
    let mut stdout = std::io::stdout();
    let _ = writeln!(stdout, "zotero-sim listening on http://{bound}");
    let _ = writeln!(stdout, "zotero-sim storage listening on http://{storage_bound}");
    let _ = stdout.flush();
    let (tx, rx) = mpsc::channel();
    accept_into(server, Origin::Api, tx.clone());
    accept_into(storage, Origin::Storage, tx);
    let deadline = opts.exit_after.map(|s| Instant::now() + Duration::from_secs(s));
    // Requests a hold caught (`POST /_sim/hold`): answered once released, the others served meanwhile.
    let mut held: Vec<Held> = Vec::new();
    let serve = |origin: Origin, req: http::Request<Vec<u8>>| match origin {
        Origin::Storage => sim.handle_storage(req),
        Origin::Api => match &local {
            Some(local) => local.handle(req),
            None => sim.handle(req),
        },
    };
    loop {
        for parked in std::mem::take(&mut held) {
            if !parked.hold.is_released() {
                held.push(parked);
                continue;
            }
            let response = match parked.pending {
                Pending::Answer(response) => response,
                Pending::Apply(origin, req) => serve(origin, req),
            };
            respond(parked.request, response);
        }
        let wait = match deadline {
            Some(d) => match d.checked_duration_since(Instant::now()) {
                Some(left) => left.min(Duration::from_millis(if held.is_empty() { 250 } else { 20 })),
                None => return Ok(()),
            },
            None => Duration::from_millis(if held.is_empty() { 250 } else { 20 }),
        };
        let (origin, mut request) = match rx.recv_timeout(wait) {
            Ok(next) => next,
            Err(mpsc::RecvTimeoutError::Timeout) => continue,
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err(ServerError::Bind { addr: bound.to_string(), reason: "both listeners stopped".into() })
            }
        };
        // The listener is loopback-only; the peer check keeps the control endpoint so should that change.
        let from_loopback = request.remote_addr().is_some_and(|a| a.ip().is_loopback());
        let response = match (to_http(&mut request), origin) {
            (Some(req), Origin::Api)
                if opts.control && from_loopback && req.uri().path().starts_with(control::PREFIX) =>
            {
                control::handle(&sim, &req)
            }
            (Some(req), origin) => match sim.take_hold(&req) {
                Some((hold, false)) => {
                    held.push(Held { hold, request, pending: Pending::Apply(origin, req) });
                    continue;
                }
                Some((hold, true)) => {
                    let response = serve(origin, req);
                    held.push(Held { hold, request, pending: Pending::Answer(response) });
                    continue;
                }
                None => serve(origin, req),
            },
            (None, _) => {
                let mut r = http::Response::new(b"Bad request".to_vec());
                *r.status_mut() = http::StatusCode::BAD_REQUEST;
                r
            }
        };
        respond(request, response);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_non_loopback_addresses() {
        assert!(matches!(loopback_addr("0.0.0.0:0"), Err(ServerError::NotLoopback(_))));
        assert!(matches!(loopback_addr("10.1.2.3:8080"), Err(ServerError::NotLoopback(_))));
        assert!(loopback_addr("127.0.0.1:0").is_ok());
        assert!(loopback_addr("[::1]:0").is_ok());
    }

    #[test]
    fn parses_arguments() {
        let args = ["--listen", "127.0.0.1:9", "--demo", "--api-key", "k", "--user-id", "5", "--exit-after", "3"];
        let opts = parse_args(args.iter().map(|s| s.to_string())).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(opts.synthetic, None);
        assert_eq!(
            opts.options,
            Options {
                listen: "127.0.0.1:9".into(),
                demo: true,
                api_key: "k".into(),
                user_id: 5,
                exit_after: Some(3),
                control: false,
                storage_listen: None,
                demo_files_on_zotero_storage: false,
                storage_origin: None,
                demo_groups: false,
                local: None,
            }
        );
        let args = ["--listen", "127.0.0.1:9", "--demo", "--local-api", "10", "--local-data-dir", "/d"];
        let opts = parse_args(args.iter().map(|s| s.to_string())).unwrap_or_else(|e| panic!("{e}"));
        let local = opts.options.local.unwrap_or_else(|| panic!("--local-api was given"));
        assert_eq!((local.flavour, local.data_dir), (Flavour::Zotero10, Some("/d".into())));
        let args = ["--listen", "127.0.0.1:9", "--local-api", "8"];
        assert!(parse_args(args.iter().map(|s| s.to_string())).is_err());
        let args = ["--listen", "127.0.0.1:9", "--local-api-disabled"];
        assert!(parse_args(args.iter().map(|s| s.to_string())).is_err());
        let opts = parse_args(["--listen", "127.0.0.1:9", "--control"].iter().map(|s| s.to_string()));
        assert!(opts.is_ok_and(|o| o.options.control));
        assert!(parse_args(["--demo".to_string()]).is_err());
        let args =
            ["--listen", "127.0.0.1:9", "--demo", "--storage-listen", "127.0.0.1:10", "--demo-files-on-zotero-storage"];
        let opts = parse_args(args.iter().map(|s| s.to_string())).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(opts.options.storage_listen.as_deref(), Some("127.0.0.1:10"));
        assert!(opts.options.demo_files_on_zotero_storage);
        // The files are the demo library's: without it there is nothing to put them on.
        let args = ["--listen", "127.0.0.1:9", "--demo-files-on-zotero-storage"];
        assert!(parse_args(args.iter().map(|s| s.to_string())).is_err());
        // A storage origin elsewhere than loopback would send the bench's uploads off the machine.
        let args = ["--listen", "127.0.0.1:9", "--storage-origin", "http://127.0.0.1:11"];
        let opts = parse_args(args.iter().map(|s| s.to_string())).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(opts.options.storage_origin.as_deref(), Some("http://127.0.0.1:11"));
        let args = ["--listen", "127.0.0.1:9", "--demo", "--demo-groups"];
        assert!(parse_args(args.iter().map(|s| s.to_string())).is_ok_and(|o| o.options.demo_groups));
        let args = ["--listen", "127.0.0.1:9", "--demo-groups"];
        assert!(parse_args(args.iter().map(|s| s.to_string())).is_err());
        let args = ["--listen", "127.0.0.1:9", "--storage-origin", "https://s3.amazonaws.com"];
        assert!(parse_args(args.iter().map(|s| s.to_string())).is_err());
    }

    #[test]
    fn parses_a_synthetic_library() {
        let parse = |args: &[&str]| parse_args(args.iter().map(|s| s.to_string()));
        let cl =
            parse(&["--listen", "127.0.0.1:9", "--synthetic", "500", "--seed", "3"]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(cl.synthetic, Some(SyntheticOptions { items: 500, seed: 3 }));
        assert!(!cl.options.demo);
        let cl = parse(&["--listen", "127.0.0.1:9", "--synthetic", "20"]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(cl.synthetic, Some(SyntheticOptions { items: 20, seed: 1 }));
        assert_eq!((cl.options.api_key.as_str(), cl.options.user_id), (crate::DEMO_API_KEY, crate::DEMO_USER_ID));
        let sim = cl.simulator();
        assert_eq!(sim.items(LibraryRef::User(crate::DEMO_USER_ID)).len(), 20 + 1, "and one attachment");
        assert!(parse(&["--listen", "127.0.0.1:9", "--synthetic", "many"]).is_err());
        assert!(parse(&["--listen", "127.0.0.1:9", "--seed", "3"]).is_err());
        assert!(parse(&["--listen", "127.0.0.1:9", "--synthetic", "5", "--demo"]).is_err());
    }

    #[test]
    fn a_synthetic_group_sits_beside_the_demo() {
        let parse = |args: &[&str]| parse_args(args.iter().map(|s| s.to_string()));
        let cl = parse(&["--listen", "127.0.0.1:9", "--demo", "--synthetic-group", "300", "--seed", "4"])
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(cl.synthetic_group, Some(SyntheticOptions { items: 300, seed: 4 }));
        assert_eq!(cl.synthetic, None);
        let sim = cl.simulator();
        let group = LibraryRef::Group(crate::synthetic::GROUP);
        let top = sim.items(group).iter().filter(|i| i["data"].get("parentItem").is_none()).count();
        assert_eq!(top, 300);
        assert!(sim.items(LibraryRef::User(crate::DEMO_USER_ID)).len() > 30, "the demo library is still there");
        assert_eq!(sim.synthetic_counts().get(&group).map(|c| c.top_level), Some(300));
        assert!(parse(&["--listen", "127.0.0.1:9", "--synthetic-group", "lots"]).is_err());
    }
}
