//! The core's WebDAV client against a real WebDAV server: Apache httpd with mod_dav (scripts/webdav-server.sh,
//! installed by scripts/setup.sh), on loopback, over the native HTTP client. What Zotero Desktop would find on
//! the server afterwards is checked on disk.

use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::rc::Rc;
use std::time::{Duration, Instant};

use zotero_mcp_cli::native::{ReqwestHttp, TokioClock};
use zotero_mcp_core::webdav::{
    md5_hex, pack, unpack, FileProps, WebDavError, WebDavPolicy, WebDavSettings, WebDavWriter, ZipLimits,
};
use zotero_mcp_core::zotero::ObjectKey;

/// The Apache process; stopped when dropped.
struct DavServer {
    child: Child,
    root: PathBuf,
    url: String,
}

impl Drop for DavServer {
    /// TERM, so that Apache shuts down in order, then KILL if it has not gone within five seconds.
    fn drop(&mut self) {
        let _ = Command::new("kill").arg(self.child.id().to_string()).status();
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start() -> DavServer {
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let work = std::env::temp_dir().join(format!("zotero-mcp-webdav-{}-{port}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scripts/webdav-server.sh");
    // Its own process group: nothing Apache signals on its way out may reach this test.
    let child = Command::new("bash")
        .process_group(0)
        .arg(script)
        .arg(&work)
        .arg(port.to_string())
        .args(["reader", "pass word"])
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("scripts/webdav-server.sh starts (bash is needed)");
    let server = DavServer { child, root: work.join("dav"), url: format!("http://127.0.0.1:{port}/") };
    let deadline = Instant::now() + Duration::from_secs(15);
    while !answers_http(port) {
        assert!(Instant::now() < deadline, "Apache did not start; is apache2 installed (scripts/setup.sh)?");
        std::thread::sleep(Duration::from_millis(50));
    }
    server
}

/// Whether an HTTP server answers on `port`: a status line back, not only an accepted connection. A fresh CI run
/// once saw the first request after a bare TCP check fail with no response; an answer is the readiness that
/// counts (and a port that only connected to itself never gives one).
fn answers_http(port: u16) -> bool {
    use std::io::{Read, Write};
    let address = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    let Ok(mut stream) = std::net::TcpStream::connect_timeout(&address, Duration::from_millis(500)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    if stream.write_all(b"OPTIONS / HTTP/1.0\r\n\r\n").is_err() {
        return false;
    }
    let mut head = [0u8; 5];
    stream.read_exact(&mut head).is_ok() && &head == b"HTTP/"
}

fn client(server: &DavServer, password: &str) -> WebDavWriter {
    let settings = WebDavSettings { url: server.url.clone(), username: "reader".into(), password: password.into() };
    let http = Rc::new(ReqwestHttp::new().unwrap());
    WebDavWriter::new(&settings, http, Rc::new(TokioClock), WebDavPolicy::default()).unwrap()
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
}

#[test]
fn a_file_goes_up_reads_back_and_is_removed_as_zotero_lays_it_out() {
    let server = start();
    let dav = client(&server, "pass word");
    let key = ObjectKey::parse("QWER2345").unwrap();
    let pdf = b"%PDF-1.4 a stand-in for a paper, long enough to compress a little a little a little".to_vec();
    let props = FileProps { mtime_ms: 1_700_000_000_123, md5: md5_hex(&pdf) };
    runtime().block_on(async {
        assert!(dav.check().await.unwrap().folder.ends_with("/zotero"));
        assert!(!dav.has_zip(&key).await.unwrap());
        assert_eq!(dav.get_zip(&key).await.unwrap(), None);
        dav.put_zip(&key, pack("Doe - 2020 - Paper.pdf", &pdf, props.mtime_ms).unwrap()).await.unwrap();
        dav.put_prop(&key, &props).await.unwrap();
        // Replacing answers 204 rather than 201 here: both are success.
        dav.put_prop(&key, &props).await.unwrap();
        assert!(dav.has_zip(&key).await.unwrap());
        let zip = dav.get_zip(&key).await.unwrap().unwrap();
        let stored = unpack(&zip, Some("Doe - 2020 - Paper.pdf"), &ZipLimits::default()).unwrap();
        assert_eq!(stored.data, pdf);
        assert_eq!(dav.get_prop(&key).await.unwrap(), Some(props.clone()));
    });
    // On disk, exactly Zotero's layout: <KEY>.zip and <KEY>.prop in zotero/.
    let folder = server.root.join("zotero");
    let mut names: Vec<String> =
        std::fs::read_dir(&folder).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    names.sort();
    assert_eq!(names, ["QWER2345.prop", "QWER2345.zip"]);
    assert_eq!(std::fs::read_to_string(folder.join("QWER2345.prop")).unwrap(), props.render());
    runtime().block_on(async {
        dav.delete(&key).await.unwrap();
        // Deleting again is not an error: the files are gone either way.
        dav.delete(&key).await.unwrap();
    });
    assert_eq!(std::fs::read_dir(&folder).unwrap().count(), 0);
}

#[test]
fn wrong_credentials_and_a_missing_folder_say_what_to_fix() {
    let server = start();
    let wrong = client(&server, "guess");
    let key = ObjectKey::parse("QWER2345").unwrap();
    runtime().block_on(async {
        let error = wrong.check().await.unwrap_err();
        assert_eq!(error, WebDavError::Unauthorized { status: 401 });
        assert!(wrong.put_zip(&key, b"PK".to_vec()).await.is_err());
    });
    std::fs::remove_dir_all(server.root.join("zotero")).unwrap();
    let dav = client(&server, "pass word");
    runtime().block_on(async {
        assert!(matches!(dav.check().await, Err(WebDavError::MissingFolder { .. })));
        // Apache answers a PUT into a missing folder with 409.
        let error = dav.put_zip(&key, b"PK".to_vec()).await.unwrap_err();
        assert!(matches!(error, WebDavError::MissingFolder { .. }), "{error}");
        assert!(error.to_string().contains("Zotero Desktop"), "{error}");
    });
}

/// tests/compat/zotero_webdav.py with `args`: its stdout, or the test fails with its reason.
fn zotero_format(args: &[&str]) -> String {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/compat/zotero_webdav.py");
    let out = Command::new("python3").arg(script).args(args).output().expect("python3 runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn what_we_upload_is_what_zotero_desktop_reads_and_what_it_uploads_we_read() {
    let server = start();
    let dav = client(&server, "pass word");
    let folder = server.root.join("zotero");
    let pdf = b"%PDF-1.4 a stand-in for a paper, with a name in another script".to_vec();
    let ours = ObjectKey::parse("ZXCV2345").unwrap();
    let name = "Wang et al. - 2023 - 图神经网络综述.pdf";
    let props = FileProps { mtime_ms: 1_700_000_000_123, md5: md5_hex(&pdf) };
    runtime().block_on(async {
        dav.put_zip(&ours, pack(name, &pdf, props.mtime_ms).unwrap()).await.unwrap();
        dav.put_prop(&ours, &props).await.unwrap();
    });
    let zip = folder.join("ZXCV2345.zip");
    let prop = folder.join("ZXCV2345.prop");
    let checked = zotero_format(&["read", zip.to_str().unwrap(), prop.to_str().unwrap(), name]);
    assert_eq!(checked.trim(), format!("ok {} {} {}", pdf.len(), props.md5, props.mtime_ms));

    // The other way: files laid out as Desktop uploads them, with its full-text cache entries in the archive
    // and a one-line .prop, put straight into the server's folder.
    let source = server.root.join("source.pdf");
    std::fs::write(&source, &pdf).unwrap();
    let written =
        zotero_format(&["write", folder.to_str().unwrap(), "DESK2345", "Paper (final).pdf", source.to_str().unwrap()]);
    let mtime: u64 = written.split_whitespace().nth(3).unwrap().parse().unwrap();
    let desktop = ObjectKey::parse("DESK2345").unwrap();
    runtime().block_on(async {
        let zip = dav.get_zip(&desktop).await.unwrap().expect("Desktop's archive");
        let stored = unpack(&zip, Some("Paper (final).pdf"), &ZipLimits::default()).unwrap();
        assert_eq!((stored.filename.as_str(), stored.data), ("Paper (final).pdf", pdf.clone()));
        // Without the item's name to go by, the first real file is still chosen over the cache entries.
        assert_eq!(unpack(&zip, None, &ZipLimits::default()).unwrap().filename, "Paper (final).pdf");
        let read = dav.get_prop(&desktop).await.unwrap().expect("Desktop's .prop");
        assert_eq!(read, FileProps { mtime_ms: mtime, md5: md5_hex(&pdf) });
    });
}
