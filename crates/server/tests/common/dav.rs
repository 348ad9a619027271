//! The attachment tools' test bench: the Zotero simulator (the demo library) and an in-memory WebDAV folder
//! behind one HTTP seam, with faults that can be injected into any request. The WebDAV client itself is tested
//! against a real Apache mod_dav in crates/cli/tests/webdav.rs; here the folder only has to answer like one
//! (Basic auth, 201 on PUT, 404 for a missing file).

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

use async_trait::async_trait;
use serde_json::Value;
use zotero_mcp_core::platform::{HttpClient, HttpError, HttpRequest, HttpResponse};
use zotero_mcp_core::webdav::pack;
use zotero_mcp_server::app::App;
use zotero_mcp_server::auth::Grant;
use zotero_mcp_server::call::Session;
use zotero_sim::Simulator;

use super::{app_with, demo_sim, DEMO_KEY};

pub const DAV: &str = "https://dav.test/files";
/// A PLOS article that CrossRef and OpenAlex know (their recorded answers: [`Bench::serve_plos`]).
pub const PLOS_DOI: &str = "10.1371/journal.pone.0000030";
const JSON: &[(&str, &str)] = &[("content-type", "application/json")];
/// base64("me:dav-pass").
const DAV_AUTH: &str = "Basic bWU6ZGF2LXBhc3M=";

/// Files by path, and the requests that reached the folder.
#[derive(Default)]
pub struct Folder {
    pub files: RefCell<HashMap<String, Vec<u8>>>,
    pub requests: RefCell<Vec<String>>,
    /// Answer DELETE with 500, as a failing server would.
    pub failing_deletes: Cell<bool>,
}

/// A request to fail: the first `times` requests whose method is `method` and whose path contains `path` get
/// `status` instead of reaching the simulator or the folder.
#[derive(Debug, Clone)]
pub struct Fault {
    pub method: &'static str,
    pub path: String,
    pub status: u16,
    pub times: usize,
}

/// What the web server answers: status, headers, body.
pub type Page = (u16, Vec<(&'static str, String)>, Vec<u8>);

/// Zotero requests go to the simulator, `dav.test` ones to the folder; faults first.
pub struct Router {
    pub sim: Rc<Simulator>,
    pub folder: Rc<Folder>,
    pub faults: RefCell<Vec<Fault>>,
    /// A web server for `sourceUrl` downloads: any other host, by `host + path`.
    pub web: RefCell<HashMap<String, Page>>,
}

#[async_trait(?Send)]
impl HttpClient for Router {
    async fn send(&self, request: HttpRequest) -> Result<HttpResponse, HttpError> {
        let path = request.uri().path().to_owned();
        let injected = self.faults.borrow_mut().iter_mut().find_map(|f| {
            (f.times > 0 && f.method == request.method().as_str() && path.contains(&f.path)).then(|| {
                f.times -= 1;
                f.status
            })
        });
        if let Some(status) = injected {
            let body = format!("injected failure {status}").into_bytes();
            return Ok(http::Response::builder().status(status).body(body).unwrap());
        }
        let host = request.uri().host().unwrap_or_default().to_owned();
        // The simulator answers for the API and for its storage origin (storage.zotero-sim.invalid).
        let simulated = host == "127.0.0.1" || host == "api.zotero.org" || host.ends_with(".zotero-sim.invalid");
        if host != "dav.test" && !simulated {
            let found = self.web.borrow().get(&format!("{host}{path}")).cloned();
            let (status, headers, body) = found.unwrap_or((404, Vec::new(), Vec::new()));
            let mut response = http::Response::builder().status(status);
            for (name, value) in headers {
                response = response.header(name, value);
            }
            return Ok(response.body(body).unwrap());
        }
        if host != "dav.test" {
            // Through the simulator's own client, which turns an answer its faults drop into a lost connection.
            return zotero_sim::InProcess(self.sim.clone()).send(request).await;
        }
        self.folder.requests.borrow_mut().push(format!("{} {path}", request.method()));
        let status = if request.headers().get("authorization").and_then(|v| v.to_str().ok()) != Some(DAV_AUTH) {
            401
        } else {
            match request.method().as_str() {
                "GET" | "HEAD" if self.folder.files.borrow().contains_key(&path) => 200,
                "PROPFIND" if path == "/files/zotero/" => 207,
                "PUT" => {
                    self.folder.files.borrow_mut().insert(path.clone(), request.body().clone());
                    201
                }
                "MOVE" if self.folder.failing_deletes.get() => 500,
                "COPY" | "MOVE" => {
                    // As mod_dav: the Destination header is an absolute URL; 201 for a new file, 204 replacing one.
                    let destination = request.headers().get("destination").and_then(|v| v.to_str().ok()).unwrap_or("");
                    let target = destination.strip_prefix("https://dav.test").unwrap_or(destination).to_owned();
                    let source = self.folder.files.borrow().get(&path).cloned();
                    match source {
                        None => 404,
                        Some(bytes) => {
                            if request.method() == "MOVE" {
                                self.folder.files.borrow_mut().remove(&path);
                            }
                            match self.folder.files.borrow_mut().insert(target, bytes) {
                                Some(_) => 204,
                                None => 201,
                            }
                        }
                    }
                }
                "DELETE" if self.folder.failing_deletes.get() => 500,
                "DELETE" if self.folder.files.borrow_mut().remove(&path).is_some() => 204,
                _ => 404,
            }
        };
        let body = if status == 200 && request.method() == "GET" {
            self.folder.files.borrow().get(&path).cloned().unwrap_or_default()
        } else {
            Vec::new()
        };
        Ok(http::Response::builder().status(status).body(body).unwrap())
    }
}

pub struct Bench {
    pub app: App,
    pub sim: Rc<Simulator>,
    pub folder: Rc<Folder>,
    pub router: Rc<Router>,
}

/// The demo library, and (with `webdav`) the folder configured as WEBDAV_URL; without it the files are on the
/// simulator's Zotero Storage.
pub fn bench(webdav: bool) -> Bench {
    bench_with(webdav, &[])
}

/// As [`bench`], with more settings.
pub fn bench_with(webdav: bool, extra: &[(&str, &str)]) -> Bench {
    let mut vars = vec![("ZOTERO_API_KEY", DEMO_KEY), ("ZOTERO_LIBRARY_ID", "1234567")];
    if webdav {
        vars.extend([("WEBDAV_URL", DAV), ("WEBDAV_USERNAME", "me"), ("WEBDAV_PASSWORD", "dav-pass")]);
    }
    vars.extend_from_slice(extra);
    let mut app = app_with(&vars);
    let sim = demo_sim();
    let folder = Rc::new(Folder::default());
    let router = Rc::new(Router {
        sim: sim.clone(),
        folder: folder.clone(),
        faults: RefCell::new(Vec::new()),
        web: RefCell::new(HashMap::new()),
    });
    app.platform.http = router.clone();
    Bench { app, sim, folder, router }
}

impl Bench {
    /// Stores `data` for `key` as Zotero Desktop would: `<KEY>.zip` with the file inside.
    pub fn upload(&self, key: &str, filename: &str, data: &[u8]) {
        let zip = pack(filename, data, 1_700_000_000_000).unwrap();
        self.folder.files.borrow_mut().insert(format!("/files/zotero/{key}.zip"), zip);
    }

    /// Calls `tool` with a chosen grant, through the registry (which refuses write tools on read-only grants).
    pub async fn tool(&self, tool: &str, grant: Grant, arguments: Value) -> Value {
        self.call_as(tool, grant, false, arguments).await
    }

    /// Calls `tool` as a client that declared MCP Apps calls it (a tool only panels call), read-only.
    pub async fn panel_tool(&self, tool: &str, arguments: Value) -> Value {
        self.call_as(tool, Grant::read_only("owner"), true, arguments).await
    }

    async fn call_as(&self, tool: &str, grant: Grant, apps: bool, arguments: Value) -> Value {
        let ctx = Session::new(grant, self.app.config.clone(), self.app.platform.clone());
        ctx.set_apps(apps);
        zotero_mcp_server::tools::registry(&self.app.config)
            .call_tool(&ctx, tool, arguments)
            .await
            .expect("the tool exists for this client")
    }

    /// Calls `tool` with the write scope.
    pub async fn write(&self, tool: &str, arguments: Value) -> Value {
        self.tool(tool, Grant::read_write("owner"), arguments).await
    }

    pub fn dav_requests(&self) -> Vec<String> {
        self.folder.requests.borrow().clone()
    }

    pub fn file(&self, name: &str) -> Option<Vec<u8>> {
        self.folder.files.borrow().get(&format!("/files/zotero/{name}")).cloned()
    }

    /// Serves `body` at `url` (`host/path`) with `headers`, for downloads.
    pub fn serve(&self, url: &str, status: u16, headers: &[(&'static str, &str)], body: &[u8]) {
        let headers = headers.iter().map(|(n, v)| (*n, (*v).to_owned())).collect();
        self.router.web.borrow_mut().insert(url.to_owned(), (status, headers, body.to_vec()));
    }

    /// CrossRef and OpenAlex answer for the PLOS article with their recorded bodies, and PLOS serves its PDF
    /// (returned).
    pub fn serve_plos(&self) -> Vec<u8> {
        let crossref = source_fixture("crossref-journal-article-plos.json");
        self.serve(&format!("api.crossref.org/works/{PLOS_DOI}"), 200, JSON, &crossref);
        let openalex = source_fixture("openalex-work-with-pdf.json");
        self.serve(&format!("api.openalex.org/works/doi:{PLOS_DOI}"), 200, JSON, &openalex);
        let pdf = zotero_mcp_core::testing::pdf_of_pages(&["Triose phosphate isomerase deficiency"]);
        self.serve("journals.plos.org/plosone/article/file", 200, &[("content-type", "application/pdf")], &pdf);
        pdf
    }

    /// Fails the next `times` requests `method … path…` with `status`.
    pub fn fail(&self, method: &'static str, path: &str, status: u16, times: usize) {
        self.router.faults.borrow_mut().push(Fault { method, path: path.to_owned(), status, times });
    }
}

/// A recorded answer of a metadata source (crates/core/src/sources/resolve/fixtures).
pub fn source_fixture(name: &str) -> Vec<u8> {
    let path = format!("{}/../core/src/sources/resolve/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}
