//! The OAuth 2.1 flow of a zotero-mcp server, run without a browser: what `scripts/get-token` does to print
//! an access token for MCP clients that take a static bearer token, and what the end-to-end tests use to
//! drive the real Worker with a real OAuth client (the `oauth2` crate).
//!
//! The steps are those of any MCP client: discover the authorization server from the protected resource
//! metadata (RFC 9728, 8414), register (RFC 7591), authorize with PKCE (the consent form is posted the way a
//! browser would, with the server password), exchange the code for tokens bound to the MCP URL (RFC 8707),
//! and later refresh or revoke them (RFC 7009).

use std::time::Duration;
use zotero_mcp_core::net::parse_url;

use oauth2::basic::BasicClient;
use oauth2::{
    AuthType, AuthUrl, AuthorizationCode, ClientId, CsrfToken, EndpointNotSet, EndpointSet, PkceCodeChallenge,
    PkceCodeVerifier, RedirectUrl, RefreshToken, RevocationUrl, Scope, StandardRevocableToken, TokenResponse, TokenUrl,
};
use serde::Deserialize;
use serde_json::{json, Value};
use url::Url;

/// Where the server sends the browser after approval. This tool never listens there: it reads the code from
/// the redirect itself. A loopback URI, so any port matches (RFC 8252).
pub const REDIRECT_URI: &str = "http://127.0.0.1/get-token-callback";
/// Both scopes; the consent form ticks exactly the ones asked for.
pub const ALL_SCOPES: &[&str] = &["zotero:read", "zotero:write"];

/// Anything that stops the flow, with what to do about it.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("`{0}` is not a usable server URL: {1}. Pass the server's address, e.g. https://zotero.example.org or https://zotero.example.org/mcp")]
    BadUrl(String, String),
    #[error("could not reach {url}: {reason}")]
    Transport { url: String, reason: String },
    #[error("{what} failed: HTTP {status}: {body}")]
    Status { what: &'static str, status: u16, body: String },
    #[error("{what} returned something unexpected: {detail}")]
    Protocol { what: &'static str, detail: String },
    #[error(
        "the server refused the password (HTTP 401). Check AUTH_PASSWORD (and AUTH_USERNAME, if the server sets one)"
    )]
    WrongPassword,
    #[error("too many failed sign-in attempts from this address; wait 15 minutes and try again")]
    LockedOut,
    #[error("the authorization was refused: {error}: {description}")]
    Denied { error: String, description: String },
    #[error("the token endpoint refused the request: {0}")]
    Token(String),
}

pub type Result<T> = std::result::Result<T, Error>;

/// The authorization server's metadata (RFC 8414), the fields this flow needs.
#[derive(Debug, Clone, Deserialize)]
pub struct ServerMetadata {
    pub issuer: String,
    pub authorization_endpoint: String,
    pub token_endpoint: String,
    pub registration_endpoint: Option<String>,
    pub revocation_endpoint: Option<String>,
}

/// Tokens from the token endpoint. Its `Debug` shows which tokens there are, never their values.
#[derive(Clone)]
pub struct Tokens {
    pub access_token: String,
    pub refresh_token: Option<String>,
    pub expires_in: Option<u64>,
    pub scopes: Vec<String>,
}

impl std::fmt::Debug for Tokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tokens")
            .field("access_token", &"<set>")
            .field("refresh_token", &self.refresh_token.as_ref().map(|_| "<set>"))
            .field("expires_in", &self.expires_in)
            .field("scopes", &self.scopes)
            .finish()
    }
}

/// The sign-in of the consent page.
#[derive(Clone)]
pub struct Credentials {
    pub password: String,
    /// Only for servers that set `AUTH_USERNAME`.
    pub username: Option<String>,
}

/// A code from an approved authorization, with the PKCE verifier that redeems it.
pub struct Approval {
    pub code: String,
    verifier: PkceCodeVerifier,
}

type Client = BasicClient<EndpointSet, EndpointNotSet, EndpointNotSet, EndpointSet, EndpointSet>;

/// One server's OAuth endpoints, discovered from its MCP URL.
pub struct Flow {
    agent: reqwest::blocking::Client,
    pub mcp_url: Url,
    pub metadata: ServerMetadata,
}

impl Flow {
    /// Discovers the authorization server of the MCP server at `server` (its origin or its `/mcp` URL).
    pub fn discover(server: &str) -> Result<Self> {
        let mcp_url = mcp_url(server)?;
        // Redirects are never followed: the consent form's 303 carries the code, and token endpoints that
        // redirect are a known way to leak credentials.
        let agent = reqwest::blocking::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(Duration::from_secs(30))
            .build()
            .map_err(|e| Error::Transport { url: mcp_url.to_string(), reason: e.to_string() })?;
        let origin = mcp_url.origin().ascii_serialization();
        let resource_metadata: Value = get_json(
            &agent,
            &format!("{origin}/.well-known/oauth-protected-resource{}", mcp_url.path()),
            "resource metadata",
        )?;
        let issuer =
            resource_metadata["authorization_servers"][0].as_str().unwrap_or(&origin).trim_end_matches('/').to_owned();
        let metadata: ServerMetadata = serde_json::from_value(get_json(
            &agent,
            &format!("{issuer}/.well-known/oauth-authorization-server"),
            "server metadata",
        )?)
        .map_err(|e| Error::Protocol { what: "server metadata", detail: e.to_string() })?;
        if metadata.issuer != issuer {
            return Err(Error::Protocol {
                what: "server metadata",
                detail: format!("issuer `{}` is not `{issuer}`", metadata.issuer),
            });
        }
        Ok(Self { agent, mcp_url, metadata })
    }

    /// Registers a public client (no secret, PKCE) and returns its id.
    pub fn register(&self, client_name: &str) -> Result<String> {
        let endpoint = self
            .metadata
            .registration_endpoint
            .as_deref()
            .ok_or(Error::Protocol { what: "server metadata", detail: "no registration_endpoint".into() })?;
        let body = json!({
            "client_name": client_name,
            "redirect_uris": [REDIRECT_URI],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
            "application_type": "native",
        });
        let request = self.agent.post(endpoint).header("content-type", "application/json").body(body.to_string());
        let response = send(request, endpoint)?;
        if response.status() != 201 {
            return Err(status_error("registration", response));
        }
        let registered: Value = serde_json::from_slice(response.body())
            .map_err(|e| Error::Protocol { what: "registration", detail: e.to_string() })?;
        registered["client_id"]
            .as_str()
            .map(str::to_owned)
            .ok_or(Error::Protocol { what: "registration", detail: "no client_id".into() })
    }

    fn client(&self, client_id: &str) -> Result<Client> {
        let bad = |e: url::ParseError| Error::Protocol { what: "server metadata", detail: e.to_string() };
        let revocation =
            self.metadata.revocation_endpoint.clone().unwrap_or_else(|| self.metadata.token_endpoint.clone());
        // oauth2 refuses a revocation URL that is not https (RFC 7009 §2). A development server on loopback
        // speaks plain http, so for loopback hosts only the URL is given as https and `oauth_http` maps the
        // scheme back; anything else reaches oauth2 unchanged, and a plain-http remote server is refused.
        let revocation = match parse_url(&revocation) {
            Ok(mut url) if url.scheme() == "http" && is_loopback(&url) => {
                let _ = url.set_scheme("https");
                url.to_string()
            }
            _ => revocation,
        };
        Ok(BasicClient::new(ClientId::new(client_id.to_owned()))
            .set_auth_type(AuthType::RequestBody)
            .set_auth_uri(AuthUrl::new(self.metadata.authorization_endpoint.clone()).map_err(bad)?)
            .set_token_uri(TokenUrl::new(self.metadata.token_endpoint.clone()).map_err(bad)?)
            .set_revocation_url(RevocationUrl::new(revocation).map_err(bad)?)
            .set_redirect_uri(RedirectUrl::new(REDIRECT_URI.to_owned()).map_err(bad)?))
    }

    /// Opens the authorization URL and approves it by posting the consent form with `credentials` and a tick
    /// for each of `scopes`, as a browser would; checks `state` and `iss` (RFC 9207) of the redirect.
    pub fn authorize(&self, client_id: &str, credentials: &Credentials, scopes: &[&str]) -> Result<Approval> {
        let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
        let client = self.client(client_id)?;
        let (url, state) = client
            .authorize_url(CsrfToken::new_random)
            .add_scopes(scopes.iter().map(|s| Scope::new((*s).to_owned())))
            .set_pkce_challenge(challenge)
            .add_extra_param("resource", self.mcp_url.as_str())
            .url();
        let mut form = url::form_urlencoded::Serializer::new(String::new());
        form.append_pair("password", &credentials.password);
        if let Some(username) = &credentials.username {
            form.append_pair("username", username);
        }
        for scope in scopes {
            form.append_pair("scope", scope);
        }
        let body = form.finish();
        let request =
            self.agent.post(url.as_str()).header("content-type", "application/x-www-form-urlencoded").body(body);
        let response = send(request, url.as_str())?;
        match response.status().as_u16() {
            302 | 303 => {}
            401 => return Err(Error::WrongPassword),
            429 => return Err(Error::LockedOut),
            _ => return Err(status_error("authorization", response)),
        }
        let location = response.headers().get("location").and_then(|v| v.to_str().ok()).unwrap_or("");
        let location = parse_url(location)
            .map_err(|e| Error::Protocol { what: "authorization", detail: format!("Location `{location}`: {e}") })?;
        let param = |name: &str| location.query_pairs().find(|(k, _)| k == name).map(|(_, v)| v.into_owned());
        if param("state").as_deref() != Some(state.secret().as_str()) {
            return Err(Error::Protocol {
                what: "authorization",
                detail: "the state did not come back unchanged".into(),
            });
        }
        if param("iss").as_deref() != Some(self.metadata.issuer.as_str()) {
            return Err(Error::Protocol {
                what: "authorization",
                detail: format!("iss {:?} is not the issuer {}", param("iss"), self.metadata.issuer),
            });
        }
        if let Some(error) = param("error") {
            return Err(Error::Denied { error, description: param("error_description").unwrap_or_default() });
        }
        let code =
            param("code").ok_or(Error::Protocol { what: "authorization", detail: "no code in the redirect".into() })?;
        Ok(Approval { code, verifier })
    }

    /// Redeems an approval for tokens bound to the MCP URL.
    pub fn exchange(&self, client_id: &str, approval: Approval) -> Result<Tokens> {
        let http = |request| self.oauth_http(request);
        let response = self
            .client(client_id)?
            .exchange_code(AuthorizationCode::new(approval.code))
            .set_pkce_verifier(approval.verifier)
            .add_extra_param("resource", self.mcp_url.as_str())
            .request(&http)
            .map_err(|e| Error::Token(describe(&e)))?;
        Ok(tokens_of(&response))
    }

    /// A new access token (and a new refresh token: the server rotates it every time).
    pub fn refresh(&self, client_id: &str, refresh_token: &str) -> Result<Tokens> {
        let http = |request| self.oauth_http(request);
        let token = RefreshToken::new(refresh_token.to_owned());
        let response = self
            .client(client_id)?
            .exchange_refresh_token(&token)
            .request(&http)
            .map_err(|e| Error::Token(describe(&e)))?;
        Ok(tokens_of(&response))
    }

    /// Revokes a refresh token (and with it every token of the grant) or one access token.
    pub fn revoke(&self, client_id: &str, token: StandardRevocableToken) -> Result<()> {
        let http = |request| self.oauth_http(request);
        self.client(client_id)?
            .revoke_token(token)
            .map_err(|e| Error::Protocol { what: "revocation", detail: e.to_string() })?
            .request(&http)
            .map_err(|e| Error::Token(describe(&e)))
    }

    /// Calls an MCP tool with the token (a stateless 2025-era request); returns the HTTP status and body.
    pub fn call_tool(&self, access_token: &str, tool: &str, arguments: Value) -> Result<(u16, Value)> {
        let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": tool, "arguments": arguments } });
        let request = self
            .agent
            .post(self.mcp_url.as_str())
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("authorization", format!("Bearer {access_token}"))
            .body(body.to_string());
        let response = send(request, self.mcp_url.as_str())?;
        let json = serde_json::from_slice(response.body()).unwrap_or(Value::Null);
        Ok((response.status().as_u16(), json))
    }

    /// The HTTP client oauth2 runs on: reqwest without redirects, error statuses returned as responses.
    fn oauth_http(&self, request: oauth2::HttpRequest) -> std::result::Result<oauth2::HttpResponse, Error> {
        let mut url = request.uri().to_string();
        if let Ok(mut parsed) = parse_url(&url) {
            let server_is_plain_http = self.metadata.issuer.starts_with("http://");
            if parsed.scheme() == "https" && server_is_plain_http && is_loopback(&parsed) {
                let _ = parsed.set_scheme("http");
                url = parsed.to_string();
            }
        }
        let (parts, body) = request.into_parts();
        let mut call = self.agent.request(parts.method, &url).headers(parts.headers);
        if !body.is_empty() {
            call = call.body(body);
        }
        send(call, &url)
    }
}

/// The MCP endpoint of a server given by its origin (`/mcp` is added) or its MCP URL.
pub fn mcp_url(server: &str) -> Result<Url> {
    let mut mcp_url = parse_url(server.trim()).map_err(|e| Error::BadUrl(server.to_owned(), e.to_string()))?;
    if !matches!(mcp_url.scheme(), "http" | "https") {
        return Err(Error::BadUrl(server.to_owned(), "it must be an http(s) URL".into()));
    }
    if mcp_url.path() == "/" || mcp_url.path().is_empty() {
        mcp_url.set_path("/mcp");
    }
    Ok(mcp_url)
}

fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

/// Sends a request; an error status is a response like any other (the caller decides what it means).
fn send(request: reqwest::blocking::RequestBuilder, url: &str) -> Result<http::Response<Vec<u8>>> {
    let transport = |e: reqwest::Error| Error::Transport { url: url.to_owned(), reason: e.to_string() };
    let response = request.send().map_err(transport)?;
    let mut builder = http::Response::builder().status(response.status());
    for (name, value) in response.headers() {
        builder = builder.header(name, value);
    }
    let bytes = response.bytes().map_err(transport)?;
    builder.body(bytes.to_vec()).map_err(|e| Error::Protocol { what: "HTTP", detail: e.to_string() })
}

fn get_json(agent: &reqwest::blocking::Client, url: &str, what: &'static str) -> Result<Value> {
    let response = send(agent.get(url).header("accept", "application/json"), url)?;
    if response.status() != 200 {
        return Err(status_error(what, response));
    }
    serde_json::from_slice(response.body()).map_err(|e| Error::Protocol { what, detail: e.to_string() })
}

fn status_error(what: &'static str, response: http::Response<Vec<u8>>) -> Error {
    let body = String::from_utf8_lossy(response.body()).chars().take(300).collect();
    Error::Status { what, status: response.status().as_u16(), body }
}

fn tokens_of(response: &oauth2::basic::BasicTokenResponse) -> Tokens {
    Tokens {
        access_token: response.access_token().secret().clone(),
        refresh_token: response.refresh_token().map(|t| t.secret().clone()),
        expires_in: response.expires_in().map(|d| d.as_secs()),
        scopes: response.scopes().map(|s| s.iter().map(|s| s.to_string()).collect()).unwrap_or_default(),
    }
}

/// The OAuth error of a failed token request, in one line.
fn describe<E: oauth2::ErrorResponse>(error: &oauth2::RequestTokenError<Error, E>) -> String {
    match error {
        oauth2::RequestTokenError::ServerResponse(response) => response.to_string(),
        oauth2::RequestTokenError::Request(e) => e.to_string(),
        oauth2::RequestTokenError::Parse(e, body) => format!("{e}: {}", String::from_utf8_lossy(body)),
        oauth2::RequestTokenError::Other(e) => e.clone(),
    }
}

#[cfg(test)]
mod debug_tests {
    use super::Tokens;

    #[test]
    fn debug_output_never_shows_a_token() {
        let tokens = Tokens {
            access_token: "access-secret".into(),
            refresh_token: Some("refresh-secret".into()),
            expires_in: Some(3600),
            scopes: vec!["zotero:read".into()],
        };
        let shown = format!("{tokens:?}");
        assert!(!shown.contains("secret"), "{shown}");
        assert!(shown.contains("zotero:read"), "{shown}");
    }
}
