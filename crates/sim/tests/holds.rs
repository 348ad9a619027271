//! Holding a request until the test releases it: in process (a send that waits) and over the socket
//! (`/_sim/hold`, `/_sim/release`), before the request is applied or after, with its answer kept back.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::rc::Rc;
use std::time::{Duration, Instant};

use zotero_mcp_core::platform::HttpClient;
use zotero_sim::{FaultMatch, InProcess, LibraryRef, Simulator};

const USER: u64 = 4242;
const KEY: &str = "secret-key";
const LIB: LibraryRef = LibraryRef::User(USER);

fn book_post(title: &str) -> http::Request<Vec<u8>> {
    let body = format!(r#"[{{"itemType":"book","title":"{title}"}}]"#);
    http::Request::builder()
        .method("POST")
        .uri(format!("https://api.zotero.org/users/{USER}/items"))
        .header("Zotero-API-Key", KEY)
        .header("Content-Type", "application/json")
        .body(body.into_bytes())
        .unwrap_or_else(|e| panic!("{e}"))
}

fn titles(sim: &Simulator) -> Vec<String> {
    sim.items(LIB).iter().filter_map(|i| i["data"]["title"].as_str().map(str::to_owned)).collect()
}

fn second_post() -> FaultMatch {
    FaultMatch { method: Some(http::Method::POST), skip: 1, ..FaultMatch::default() }
}

#[tokio::test]
async fn an_in_process_hold_keeps_the_request_until_released() {
    for after_applying in [false, true] {
        let sim = Rc::new(Simulator::new());
        sim.add_user(USER, KEY, true);
        let client = InProcess(sim.clone());
        let hold = sim.hold_matching(second_post(), after_applying);
        let first = client.send(book_post("One")).await.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(first.status(), 200, "the first POST is not the one held");
        assert!(!hold.caught());

        let mut second = Box::pin(client.send(book_post("Two")));
        // Polled once: it is held, and the request is applied only when armed to be.
        assert!(futures_poll_once(second.as_mut()).is_none(), "after_applying={after_applying}: not held");
        assert!(hold.is_holding() && sim.held() == 1);
        assert_eq!(titles(&sim).contains(&"Two".to_owned()), after_applying, "after_applying={after_applying}");
        // Other requests go on meanwhile.
        let third = client.send(book_post("Three")).await.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(third.status(), 200);

        hold.release();
        let answer = second.await.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(answer.status(), 200);
        assert!(titles(&sim).contains(&"Two".to_owned()));
        assert_eq!(sim.held(), 0);
    }
}

/// Polls a future once with a waker that does nothing: `Some` when it is ready.
fn futures_poll_once<F: std::future::Future>(future: std::pin::Pin<&mut F>) -> Option<F::Output> {
    let waker = std::task::Waker::noop();
    let mut cx = std::task::Context::from_waker(waker);
    match future.poll(&mut cx) {
        std::task::Poll::Ready(out) => Some(out),
        std::task::Poll::Pending => None,
    }
}

struct Served(Child);

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn serve() -> (Served, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_zotero-sim"))
        .args(["--listen", "127.0.0.1:0", "--control", "--api-key", KEY, "--user-id", &USER.to_string()])
        .args(["--exit-after", "60"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn: {e}"));
    let stdout = child.stdout.take().unwrap_or_else(|| panic!("no stdout"));
    let served = Served(child);
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line).unwrap_or_default();
    let addr = line
        .trim()
        .strip_prefix("zotero-sim listening on http://")
        .unwrap_or_else(|| panic!("unexpected first line: {line:?}"))
        .to_string();
    (served, addr)
}

/// Sends a request and returns the stream to read its answer from.
fn send(addr: &str, method: &str, path: &str, body: &str) -> TcpStream {
    let mut stream = TcpStream::connect(addr).unwrap_or_else(|e| panic!("connect {addr}: {e}"));
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap_or_default();
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nZotero-API-Key: {KEY}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).unwrap_or_else(|e| panic!("write: {e}"));
    stream
}

fn answer(mut stream: TcpStream) -> String {
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap_or_default();
    response
}

fn call(addr: &str, method: &str, path: &str, body: &str) -> String {
    answer(send(addr, method, path, body))
}

fn held(addr: &str) -> String {
    call(addr, "GET", "/_sim/hold", "")
}

#[test]
fn a_hold_over_the_socket_parks_the_request_until_released() {
    let (_served, addr) = serve();
    let items = format!("/users/{USER}/items");
    for after_applying in [false, true] {
        let title = format!("Held {after_applying}");
        let hold = format!(r#"{{"method":"post","pathContains":"/items","afterApplying":{after_applying}}}"#);
        let armed = call(&addr, "POST", "/_sim/hold", &hold);
        assert!(armed.starts_with("HTTP/1.1 200"), "{armed}");

        let parked = send(&addr, "POST", &items, &format!(r#"[{{"itemType":"book","title":"{title}"}}]"#));
        let deadline = Instant::now() + Duration::from_secs(10);
        while !held(&addr).contains(r#""held":1"#) {
            assert!(Instant::now() < deadline, "the request was never held");
            std::thread::sleep(Duration::from_millis(20));
        }
        // Other requests are served meanwhile; the held one landed only if armed to be applied first.
        let listing = call(&addr, "GET", &items, "");
        assert!(listing.starts_with("HTTP/1.1 200"), "{listing}");
        assert_eq!(listing.contains(&title), after_applying, "{listing}");

        let released = call(&addr, "POST", "/_sim/release", "");
        assert!(released.contains(r#""released":1"#), "{released}");
        let answered = answer(parked);
        assert!(answered.starts_with("HTTP/1.1 200"), "{answered}");
        assert!(call(&addr, "GET", &items, "").contains(&title));
        assert!(held(&addr).contains(r#""held":0"#));
    }
}
