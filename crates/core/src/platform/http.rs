use async_trait::async_trait;

/// An outbound request: the `http` crate's type with the whole body in memory.
pub type HttpRequest = http::Request<Vec<u8>>;
/// An inbound response with its whole body read.
pub type HttpResponse = http::Response<Vec<u8>>;

/// Why an outbound request produced no response at all. An HTTP error status is *not* an `HttpError`: it is a
/// response, and the caller decides what it means.
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    /// The request could not be sent or its response not received (DNS, TLS, connection reset, runtime refusal).
    #[error("the request to {url} failed before a response arrived: {reason}. Check that the host is reachable and try again")]
    Transport { url: String, reason: String },
    /// The request itself could not be expressed on this runtime (for example an invalid header value).
    #[error("the request to {url} could not be built: {reason}")]
    InvalidRequest { url: String, reason: String },
    /// No response within the caller's time limit.
    #[error("the request to {url} timed out after {after_ms} ms")]
    Timeout { url: String, after_ms: u64 },
    /// The response body is longer than the caller accepts ([`HttpClient::send_limited`]); the rest was not read.
    #[error("the response from {url} is larger than {limit} bytes")]
    TooLarge { url: String, limit: usize },
    /// A request sent with [`HttpClient::send_public_limited`] named a host that resolves only to addresses off
    /// the public Internet, so nothing was sent (the native client's resolver says so).
    #[error(
        "the request to {url} was not sent: `{host}` resolves only to private addresses, and this request may go \
         to the public Internet only"
    )]
    NotPublic { url: String, host: String },
}

/// Sends one HTTP request and reads the whole response.
///
/// Implementations neither follow redirects silently into other hosts nor retry: retry policy belongs to the
/// caller, which knows whether the request is safe to repeat.
#[async_trait(?Send)]
pub trait HttpClient {
    async fn send(&self, request: HttpRequest) -> Result<HttpResponse, HttpError>;

    /// Sends a request whose response body may be at most `limit` bytes: a declared longer one is refused
    /// before it is read, and an undeclared one is read only up to the limit ([`HttpError::TooLarge`]). For URLs
    /// someone else chose, whose server may send without end. This default reads first and checks after, which
    /// only in-memory stand-ins may rely on; the runtimes' clients stream.
    async fn send_limited(&self, request: HttpRequest, limit: usize) -> Result<HttpResponse, HttpError> {
        let url = request.uri().to_string();
        let response = self.send(request).await?;
        if response.body().len() > limit {
            return Err(HttpError::TooLarge { url, limit });
        }
        Ok(response)
    }

    /// [`send_limited`](Self::send_limited) for a URL someone else chose: the connection goes only to addresses
    /// on the public Internet, whatever the host name resolves to, and a name that resolves only to others fails
    /// with [`HttpError::NotPublic`] before anything is sent. The default is `send_limited`, which is right for
    /// a client whose every request is public ([`public_only`](Self::public_only): the Worker's `fetch` under
    /// `global_fetch_strictly_public`); the native client overrides it with a resolver that drops the rest.
    async fn send_public_limited(&self, request: HttpRequest, limit: usize) -> Result<HttpResponse, HttpError> {
        self.send_limited(request, limit).await
    }

    /// Whether every request goes to the public Internet only: never to loopback, private or link-local
    /// addresses, whatever a host name resolves to. Features that fetch a URL someone else chose (Client ID
    /// Metadata Documents) are offered only when this holds. The Worker's `fetch` under
    /// `global_fetch_strictly_public` guarantees it; a client that cannot should keep the default.
    fn public_only(&self) -> bool {
        false
    }
}
