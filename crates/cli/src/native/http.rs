use async_trait::async_trait;
use zotero_mcp_core::platform::{HttpClient, HttpError, HttpRequest, HttpResponse};

/// Outbound HTTP over reqwest (rustls). Like the Worker's `fetch` with `redirect: "manual"`, a redirect is
/// returned to the caller rather than followed: the callers decide where they are willing to go. Deadlines
/// are the caller's too (`platform::within`); the connect timeout only stops a dead address from hanging.
pub struct ReqwestHttp {
    client: reqwest::Client,
}

impl ReqwestHttp {
    pub fn new() -> Result<Self, String> {
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(std::time::Duration::from_secs(10))
            .user_agent(concat!("zotero-mcp/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| format!("could not set up the HTTP client: {e}"))?;
        Ok(Self { client })
    }
}

#[async_trait(?Send)]
impl HttpClient for ReqwestHttp {
    async fn send(&self, request: HttpRequest) -> Result<HttpResponse, HttpError> {
        self.fetch(request, None).await
    }

    async fn send_limited(&self, request: HttpRequest, limit: usize) -> Result<HttpResponse, HttpError> {
        self.fetch(request, Some(limit)).await
    }
}

impl ReqwestHttp {
    /// One request, its whole body read, or at most `limit` bytes of it (a longer one is refused as soon as it
    /// passes the limit, declared or not).
    async fn fetch(&self, request: HttpRequest, limit: Option<usize>) -> Result<HttpResponse, HttpError> {
        let url = request.uri().to_string();
        let (parts, body) = request.into_parts();
        let mut outbound = self.client.request(parts.method, &url).headers(parts.headers);
        if !body.is_empty() {
            outbound = outbound.body(body);
        }
        let transport = |e: reqwest::Error| HttpError::Transport { url: url.clone(), reason: e.to_string() };
        let too_large = |limit: usize| HttpError::TooLarge { url: url.clone(), limit };
        let mut response = outbound.send().await.map_err(transport)?;
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
