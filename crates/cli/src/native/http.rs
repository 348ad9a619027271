use std::sync::Arc;

use async_trait::async_trait;
use zotero_mcp_core::platform::{HttpClient, HttpError, HttpRequest, HttpResponse};

use super::resolve::{only_private, PublicResolver};

/// Outbound HTTP over reqwest (rustls). Like the Worker's `fetch` with `redirect: "manual"`, a redirect is
/// returned to the caller rather than followed: the callers decide where they are willing to go. Deadlines
/// are the caller's too (`platform::within`); the connect timeout only stops a dead address from hanging.
///
/// Two clients: requests sent with [`HttpClient::send_public_limited`] (URLs someone else chose) go through one whose
/// resolver drops non-public addresses and which uses no proxy (a proxy would resolve the name itself, out of
/// our sight); everything else (Zotero, the user's WebDAV server, which may be on their own network) through
/// the ordinary one. The two never share a connection.
pub struct ReqwestHttp {
    client: reqwest::Client,
    public: reqwest::Client,
}

impl ReqwestHttp {
    pub fn new() -> Result<Self, String> {
        Self::with_resolver(PublicResolver::system())
    }

    fn with_resolver(resolver: PublicResolver) -> Result<Self, String> {
        let builder = || {
            reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .connect_timeout(std::time::Duration::from_secs(10))
                .user_agent(concat!("zotero-mcp/", env!("CARGO_PKG_VERSION")))
        };
        let failed = |e: reqwest::Error| format!("could not set up the HTTP client: {e}");
        let client = builder().build().map_err(failed)?;
        let public = builder().no_proxy().dns_resolver(Arc::new(resolver)).build().map_err(failed)?;
        Ok(Self { client, public })
    }
}

#[async_trait(?Send)]
impl HttpClient for ReqwestHttp {
    async fn send(&self, request: HttpRequest) -> Result<HttpResponse, HttpError> {
        self.fetch(&self.client, request, None).await
    }

    async fn send_limited(&self, request: HttpRequest, limit: usize) -> Result<HttpResponse, HttpError> {
        self.fetch(&self.client, request, Some(limit)).await
    }

    async fn send_public_limited(&self, request: HttpRequest, limit: usize) -> Result<HttpResponse, HttpError> {
        self.fetch(&self.public, request, Some(limit)).await
    }
}

impl ReqwestHttp {
    /// One request, its whole body read, or at most `limit` bytes of it (a longer one is refused as soon as it
    /// passes the limit, declared or not).
    async fn fetch(
        &self,
        client: &reqwest::Client,
        request: HttpRequest,
        limit: Option<usize>,
    ) -> Result<HttpResponse, HttpError> {
        let url = request.uri().to_string();
        let (parts, body) = request.into_parts();
        let mut outbound = client.request(parts.method, &url).headers(parts.headers);
        if !body.is_empty() {
            outbound = outbound.body(body);
        }
        let transport = |e: reqwest::Error| HttpError::Transport { url: url.clone(), reason: e.to_string() };
        let too_large = |limit: usize| HttpError::TooLarge { url: url.clone(), limit };
        let mut response = outbound.send().await.map_err(|e| match only_private(&e) {
            Some(refused) => HttpError::NotPublic { url: url.clone(), host: refused.host.clone() },
            None => transport(e),
        })?;
        if let Some(limit) = limit.filter(|&l| response.content_length().is_some_and(|n| n > l as u64)) {
            return Err(too_large(limit));
        }
        let mut builder = http::Response::builder().status(response.status());
        for (name, value) in response.headers() {
            builder = builder.header(name, value);
        }
        // Read chunk by chunk and stop past the limit: dropping the response closes the connection.
        let mut bytes = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(transport)? {
            if let Some(limit) = limit.filter(|&l| bytes.len() + chunk.len() > l) {
                return Err(too_large(limit));
            }
            bytes.extend_from_slice(&chunk);
        }
        builder.body(bytes).map_err(|e| HttpError::InvalidRequest { url: url.clone(), reason: e.to_string() })
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;

    /// Serves one HTTP/1.1 answer per connection: `head` then `chunks` of body, as given.
    async fn serve_once(head: &'static str, chunks: Vec<Vec<u8>>) -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/doc", listener.local_addr().unwrap());
        tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut request = [0u8; 1024];
            let _ = socket.read(&mut request).await;
            let _ = socket.write_all(head.as_bytes()).await;
            for chunk in chunks {
                if socket.write_all(&chunk).await.is_err() {
                    break;
                }
            }
        });
        url
    }

    fn get(url: &str) -> HttpRequest {
        http::Request::get(url).body(Vec::new()).unwrap()
    }

    /// `n` bytes as one chunk of chunked transfer encoding.
    fn chunk(n: usize) -> Vec<u8> {
        let mut bytes = format!("{n:x}\r\n").into_bytes();
        bytes.extend(std::iter::repeat_n(b'a', n));
        bytes.extend_from_slice(b"\r\n");
        bytes
    }

    /// A download (the core's guard over this client) of `url`, as `zotero_put_attachment`'s `sourceUrl` is.
    async fn download(http: &ReqwestHttp, url: &str) -> Result<zotero_mcp_core::net::Download, DownloadError> {
        let policy = zotero_mcp_core::net::DownloadPolicy { timeout_ms: 10_000, ..Default::default() };
        zotero_mcp_core::net::download(http, &super::super::TokioClock, url, &policy).await
    }

    use zotero_mcp_core::net::DownloadError;

    #[tokio::test]
    async fn a_name_that_resolves_to_loopback_is_not_connected_to_for_a_public_only_request() {
        // Every name resolves to 127.0.0.1, where a server is listening.
        let http = ReqwestHttp::with_resolver(PublicResolver::fixed(vec!["127.0.0.1".parse().unwrap()])).unwrap();
        let ok = "HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok";
        let server = serve_once(ok, vec![]).await;
        let port = zotero_mcp_core::net::parse_url(&server).unwrap().port().unwrap();

        let error = http.send_public_limited(get(&format!("http://files.example:{port}/doc")), 1024).await.unwrap_err();
        assert!(matches!(&error, HttpError::NotPublic { host, .. } if host == "files.example"), "{error}");
        // Through the download guard, as a tool's sourceUrl: a clear refusal, not a connection error.
        let error = download(&http, &format!("https://files.example:{port}/paper.pdf")).await.unwrap_err();
        assert!(matches!(error, DownloadError::ResolvesPrivate { .. }), "{error}");
        assert!(error.to_string().contains("resolves only to private addresses"), "{error}");

        // Other requests (Zotero, the user's own WebDAV server) are not filtered: the server is still
        // waiting for its one connection, which this one is.
        let answer = http.send(get(&server)).await.unwrap();
        assert_eq!(answer.body(), b"ok");
    }

    #[tokio::test]
    async fn the_system_resolvers_loopback_answer_is_not_connected_to() {
        // The system resolver (getaddrinfo), as the server runs it. `localhost` resolves to loopback on every
        // system (RFC 6761: /etc/hosts, or the resolver's own rule), so this runs everywhere, unlike a test on
        // the machine's own name, whose address depends on the machine. The core's literal check refuses
        // `localhost` before a download sends anything; at this seam it stands for any name an attacker points at
        // a private address (the path through the download guard: the fixed-resolver test above).
        let http = ReqwestHttp::new().unwrap();
        let ok = "HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok";
        let server = serve_once(ok, vec![]).await;
        let port = zotero_mcp_core::net::parse_url(&server).unwrap().port().unwrap();

        let error = http.send_public_limited(get(&format!("http://localhost:{port}/doc")), 1024).await.unwrap_err();
        assert!(matches!(&error, HttpError::NotPublic { host, .. } if host == "localhost"), "{error}");
        // No connection was made: the server's one connection is still free for a request not limited to
        // public addresses.
        let answer = http.send(get(&server)).await.unwrap();
        assert_eq!(answer.body(), b"ok");
    }

    #[tokio::test]
    async fn a_limited_fetch_stops_at_the_limit_whatever_the_server_declares() {
        let http = ReqwestHttp::new().unwrap();
        let chunked = "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n";
        let small = serve_once(chunked, vec![chunk(100), b"0\r\n\r\n".to_vec()]).await;
        assert_eq!(http.send_limited(get(&small), 5 * 1024).await.unwrap().body().len(), 100);

        // No length declared and far more than the limit: refused once the limit is passed.
        let endless = serve_once(chunked, (0..1000).map(|_| chunk(1024)).collect()).await;
        let error = http.send_limited(get(&endless), 5 * 1024).await.unwrap_err();
        assert!(matches!(error, HttpError::TooLarge { limit: 5120, .. }), "{error}");

        // A declared length over the limit: refused before the body is read.
        let declared =
            serve_once("HTTP/1.1 200 OK\r\ncontent-length: 9999999\r\nconnection: close\r\n\r\n", vec![]).await;
        assert!(matches!(http.send_limited(get(&declared), 5 * 1024).await, Err(HttpError::TooLarge { .. })));
    }
}
