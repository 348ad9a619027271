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
        let url = request.uri().to_string();
        let (parts, body) = request.into_parts();
        let mut outbound = self.client.request(parts.method, &url).headers(parts.headers);
        if !body.is_empty() {
            outbound = outbound.body(body);
        }
        let transport = |e: reqwest::Error| HttpError::Transport { url: url.clone(), reason: e.to_string() };
        let response = outbound.send().await.map_err(transport)?;
        let mut builder = http::Response::builder().status(response.status());
        for (name, value) in response.headers() {
            builder = builder.header(name, value);
        }
        let bytes = response.bytes().await.map_err(transport)?;
        builder.body(bytes.to_vec()).map_err(|e| HttpError::InvalidRequest { url: url.clone(), reason: e.to_string() })
    }
}
