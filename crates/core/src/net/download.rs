//! A guarded GET of a URL someone else chose, following redirects itself (the guards are in [`super`]'s docs).

use http::header::{self, HeaderMap, HeaderValue};
use http::StatusCode;
use percent_encoding::percent_decode_str;
use url::Url;

use super::address::{is_loopback_host, is_public_host};
use crate::platform::{within, Clock, HttpClient, HttpError, HttpResponse};

/// Limits of one [`download`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DownloadPolicy {
    /// Largest body accepted, in bytes; a longer one is not read past this.
    pub max_bytes: usize,
    /// Redirects followed before giving up.
    pub max_redirects: u32,
    /// Longest wait for each request (each redirect hop has its own).
    pub timeout_ms: u64,
    /// Allows plain `http://` to a loopback host (`127.0.0.0/8`, `::1`, `localhost`), and loopback hosts at all,
    /// for tests and local development. Never for a deployment: loopback is where the operator's own services
    /// listen.
    pub allow_loopback_http: bool,
    /// The `User-Agent` sent.
    pub user_agent: String,
}

impl DownloadPolicy {
    /// 40 MiB.
    pub const DEFAULT_MAX_BYTES: usize = 40 * 1024 * 1024;
    pub const DEFAULT_MAX_REDIRECTS: u32 = 5;
    pub const DEFAULT_TIMEOUT_MS: u64 = 30_000;
}

impl Default for DownloadPolicy {
    fn default() -> Self {
        Self {
            max_bytes: Self::DEFAULT_MAX_BYTES,
            max_redirects: Self::DEFAULT_MAX_REDIRECTS,
            timeout_ms: Self::DEFAULT_TIMEOUT_MS,
            allow_loopback_http: false,
            user_agent: concat!("zotero-mcp/", env!("CARGO_PKG_VERSION")).to_owned(),
        }
    }
}

/// A downloaded file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Download {
    pub bytes: Vec<u8>,
    /// Where the file was in the end, after redirects, without a fragment.
    pub final_url: String,
    /// The media type of `Content-Type`, lowercased, without parameters (`application/pdf`).
    pub content_type: Option<String>,
    /// The name the server suggests in `Content-Disposition`, else the last path segment of `final_url` if it
    /// looks like a file name (has a `.`). Only the last component of either, without control characters.
    pub filename: Option<String>,
}

/// Why a URL was not downloaded. The messages are for the model that chose the URL: each says what to do next.
#[derive(Debug, thiserror::Error)]
pub enum DownloadError {
    #[error("`{url}` is not a usable URL ({reason}); sourceUrl must be the full https:// address of the file")]
    InvalidUrl { url: String, reason: String },
    #[error(
        "`{url}` is not an https URL, and sourceUrl must be an https URL (so must any redirect); to upload a local \
         file, send it as base64Data instead"
    )]
    NotHttps { url: String },
    /// `url` is shown without the credentials.
    #[error(
        "`{url}` carries a user name or password, and credentials in URLs are refused; use a link that needs no \
         login, or download the file yourself and send it as base64Data"
    )]
    Credentials { url: String },
    #[error(
        "`{url}` resolves to a private address ({host}: loopback, private network, link-local or otherwise not on \
         the public Internet), which is never fetched; download the file yourself and send it as base64Data instead"
    )]
    PrivateAddress { url: String, host: String },
    #[error(
        "`{url}` resolves only to private addresses ({host}: loopback, private network, link-local or otherwise not \
         on the public Internet), which are never fetched; download the file yourself and send it as base64Data \
         instead"
    )]
    ResolvesPrivate { url: String, host: String },
    #[error("`{from}` redirected to a URL that is refused: {reason}")]
    RefusedRedirect { from: String, reason: Box<DownloadError> },
    #[error(
        "`{url}` answered HTTP {status} (a redirect) without a Location header; give the address of the file itself"
    )]
    RedirectWithoutLocation { url: String, status: u16 },
    #[error(
        "`{url}` redirected more than {max} times (a loop, or a chain too long to follow); give the final address \
         of the file instead"
    )]
    TooManyRedirects { url: String, max: u32 },
    #[error(
        "`{url}` answered HTTP {status}; check that the URL is right and that the file can be downloaded without \
         logging in"
    )]
    Status { url: String, status: u16 },
    #[error(
        "`{url}` is larger than the {limit}-byte limit, so it was not stored; choose a smaller file, or add this one \
         in Zotero itself"
    )]
    TooLarge { url: String, limit: usize },
    #[error(
        "`{url}` did not answer within {after_ms} ms; try again later, or download the file yourself and send it as \
         base64Data"
    )]
    Timeout { url: String, after_ms: u64 },
    #[error(transparent)]
    Http(HttpError),
}

/// Downloads `url` under `policy`: validates it, follows up to `policy.max_redirects` redirects (each target
/// validated again), and reads at most `policy.max_bytes` of the final answer, which must be a 2xx.
///
/// Host names are checked as written here; each request goes out through
/// [`HttpClient::send_public_limited`], and the runtime refuses a name that resolves only to private addresses
/// where it resolves it, as the module docs explain.
pub async fn download(
    http: &dyn HttpClient,
    clock: &dyn Clock,
    url: &str,
    policy: &DownloadPolicy,
) -> Result<Download, DownloadError> {
    let parsed =
        super::parse_url(url).map_err(|e| DownloadError::InvalidUrl { url: shown(url), reason: e.to_string() })?;
    let mut current = checked(parsed, policy)?;
    let mut redirects = 0;
    loop {
        let response = fetch(http, clock, &current, policy).await?;
        let status = response.status();
        if is_followed_redirect(status) {
            let location = response.headers().get(header::LOCATION).filter(|v| !v.as_bytes().trim_ascii().is_empty());
            let Some(location) = location else {
                return Err(DownloadError::RedirectWithoutLocation {
                    url: shown(current.as_str()),
                    status: status.as_u16(),
                });
            };
            if redirects >= policy.max_redirects {
                return Err(DownloadError::TooManyRedirects { url: shown(url), max: policy.max_redirects });
            }
            redirects += 1;
            current = follow(&current, location, policy).map_err(|reason| DownloadError::RefusedRedirect {
                from: shown(current.as_str()),
                reason: Box::new(reason),
            })?;
            continue;
        }
        if !status.is_success() {
            return Err(DownloadError::Status { url: shown(current.as_str()), status: status.as_u16() });
        }
        // The runtimes' clients enforce the cap while reading; checked again because a client may only check
        // after reading (the trait's default), and a declared length over the cap means a truncated file.
        let declared = response
            .headers()
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok());
        if declared.is_some_and(|n| n > policy.max_bytes as u64) || response.body().len() > policy.max_bytes {
            return Err(DownloadError::TooLarge { url: shown(current.as_str()), limit: policy.max_bytes });
        }
        let content_type = media_type(response.headers());
        let filename = disposition_filename(response.headers()).or_else(|| url_filename(&current));
        return Ok(Download { bytes: response.into_body(), final_url: current.into(), content_type, filename });
    }
}

/// The redirects that name where the resource is: 301/302/303/307/308. (300 offers choices, 304 answers a
/// conditional request we never make, 305/306 are obsolete: those are plain error statuses here.) The request
/// is a GET either way, so the method-changing difference between them does not matter.
fn is_followed_redirect(status: StatusCode) -> bool {
    matches!(status.as_u16(), 301 | 302 | 303 | 307 | 308)
}

/// One GET of `url` within the per-hop deadline, its body capped.
async fn fetch(
    http: &dyn HttpClient,
    clock: &dyn Clock,
    url: &Url,
    policy: &DownloadPolicy,
) -> Result<HttpResponse, DownloadError> {
    let request = http::Request::get(url.as_str())
        .header(header::USER_AGENT, policy.user_agent.as_str())
        .header(header::ACCEPT, "*/*")
        .body(Vec::new())
        .map_err(|e| HttpError::InvalidRequest { url: url.to_string(), reason: e.to_string() })
        .map_err(DownloadError::Http)?;
    // Every hop, the first and each redirect, connects to public addresses only, except a loopback host the
    // policy allows (a test's file server on 127.0.0.1 or `localhost`).
    let sent = if policy.allow_loopback_http && url.host().is_some_and(|h| is_loopback_host(&h)) {
        http.send_limited(request, policy.max_bytes)
    } else {
        http.send_public_limited(request, policy.max_bytes)
    };
    match within(clock, policy.timeout_ms, sent).await {
        Some(Ok(response)) => Ok(response),
        Some(Err(HttpError::NotPublic { host, .. })) => {
            Err(DownloadError::ResolvesPrivate { url: shown(url.as_str()), host })
        }
        Some(Err(HttpError::TooLarge { .. })) => {
            Err(DownloadError::TooLarge { url: shown(url.as_str()), limit: policy.max_bytes })
        }
        Some(Err(HttpError::Timeout { after_ms, .. })) => {
            Err(DownloadError::Timeout { url: shown(url.as_str()), after_ms })
        }
        Some(Err(e)) => Err(DownloadError::Http(e)),
        None => Err(DownloadError::Timeout { url: shown(url.as_str()), after_ms: policy.timeout_ms }),
    }
}

/// `url` if it may be fetched under `policy`, without its fragment (which is for the reader, never sent).
fn checked(mut url: Url, policy: &DownloadPolicy) -> Result<Url, DownloadError> {
    url.set_fragment(None);
    let loopback_allowed = policy.allow_loopback_http && url.host().is_some_and(|h| is_loopback_host(&h));
    match url.scheme() {
        "https" => {}
        "http" if loopback_allowed => {}
        _ => return Err(DownloadError::NotHttps { url: shown(without_credentials(&url).as_str()) }),
    }
    // Before anything else shows the URL: the message must not repeat the password.
    if !url.username().is_empty() || url.password().is_some() {
        return Err(DownloadError::Credentials { url: shown(without_credentials(&url).as_str()) });
    }
    // http and https URLs always have a host (the parser refuses them otherwise); this is for the type.
    let Some(host) = url.host() else {
        return Err(DownloadError::InvalidUrl { url: shown(url.as_str()), reason: "it has no host".into() });
    };
    if !loopback_allowed && !is_public_host(&host) {
        return Err(DownloadError::PrivateAddress { url: shown(url.as_str()), host: host.to_string() });
    }
    Ok(url)
}

/// The target of a redirect from `current`, resolved (a `Location` may be relative) and checked like the first
/// URL.
fn follow(current: &Url, location: &HeaderValue, policy: &DownloadPolicy) -> Result<Url, DownloadError> {
    // Servers do send raw UTF-8 in Location; it is a URL once parsed either way.
    let text = String::from_utf8_lossy(location.as_bytes());
    let text = text.trim();
    let next = super::join_url(current, text)
        .map_err(|e| DownloadError::InvalidUrl { url: shown(text), reason: e.to_string() })?;
    checked(next, policy)
}

/// A URL for a message: without user info, and cut short (a `data:` URL can be megabytes long).
fn shown(url: &str) -> String {
    const MAX_CHARS: usize = 200;
    match url.char_indices().nth(MAX_CHARS) {
        Some((cut, _)) => format!("{}…", &url[..cut]),
        None => url.to_owned(),
    }
}

fn without_credentials(url: &Url) -> Url {
    let mut url = url.clone();
    // Setting these fails only for URLs that cannot have credentials, which then have none to hide.
    let _ = url.set_username("");
    let _ = url.set_password(None);
    url
}

/// The media type of `Content-Type`, lowercased, parameters dropped.
fn media_type(headers: &HeaderMap) -> Option<String> {
    let value = headers.get(header::CONTENT_TYPE)?.to_str().ok()?;
    let essence = value.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    (!essence.is_empty()).then_some(essence)
}

/// The file name of `Content-Disposition`: `filename*` (RFC 8187, UTF-8 or ISO-8859-1) before `filename`,
/// which old clients read instead and which servers therefore keep ASCII.
fn disposition_filename(headers: &HeaderMap) -> Option<String> {
    // Some servers send raw UTF-8 in the header; to_str would refuse it.
    let value = std::str::from_utf8(headers.get(header::CONTENT_DISPOSITION)?.as_bytes()).ok()?;
    let params = disposition_params(value);
    let param =
        |wanted: &'static str| params.iter().filter(move |(name, _)| name == wanted).map(|(_, value)| value.as_str());
    param("filename*")
        .filter_map(decode_extended_value)
        .find_map(|name| clean_filename(&name))
        .or_else(|| param("filename").find_map(clean_filename))
}

/// The parameters after the disposition type, names lowercased and quoted-string values unquoted (RFC 6266's
/// grammar, read leniently: a missing closing quote ends the value at the end of the header).
fn disposition_params(value: &str) -> Vec<(String, String)> {
    let mut params = Vec::new();
    let Some((_, mut rest)) = value.split_once(';') else { return params };
    loop {
        rest = rest.trim_start_matches([' ', '\t', ';']);
        if rest.is_empty() {
            return params;
        }
        let name_end = rest.find(['=', ';']).unwrap_or(rest.len());
        let name = rest[..name_end].trim().to_ascii_lowercase();
        rest = &rest[name_end..];
        let Some(raw) = rest.strip_prefix('=') else { continue };
        let raw = raw.trim_start();
        let parsed = if let Some(quoted) = raw.strip_prefix('"') {
            let mut unquoted = String::new();
            let mut end = quoted.len();
            let mut chars = quoted.char_indices();
            while let Some((i, c)) = chars.next() {
                match c {
                    '\\' => unquoted.extend(chars.next().map(|(_, escaped)| escaped)),
                    '"' => {
                        end = i + 1;
                        break;
                    }
                    _ => unquoted.push(c),
                }
            }
            // Anything between the closing quote and the next `;` is not part of the value.
            let after = &quoted[end..];
            rest = after.find(';').map_or("", |i| &after[i..]);
            unquoted
        } else {
            let end = raw.find(';').unwrap_or(raw.len());
            rest = &raw[end..];
            raw[..end].trim().to_owned()
        };
        params.push((name, parsed));
    }
}

/// An RFC 8187 `charset'language'percent-encoded` value, for the two charsets it requires recipients to know.
fn decode_extended_value(value: &str) -> Option<String> {
    let mut parts = value.splitn(3, '\'');
    let (charset, _language, encoded) = (parts.next()?, parts.next()?, parts.next()?);
    let bytes: Vec<u8> = percent_decode_str(encoded).collect();
    if charset.eq_ignore_ascii_case("utf-8") {
        String::from_utf8(bytes).ok()
    } else if charset.eq_ignore_ascii_case("iso-8859-1") {
        // ISO-8859-1 is the first 256 code points.
        Some(bytes.into_iter().map(char::from).collect())
    } else {
        None
    }
}

/// The last path segment of `url`, percent-decoded, if it looks like a file name (has a `.`).
fn url_filename(url: &Url) -> Option<String> {
    let segment = url.path_segments()?.next_back()?;
    let decoded = percent_decode_str(segment).decode_utf8().ok()?;
    clean_filename(&decoded).filter(|name| name.contains('.'))
}

/// A name the server chose, made a plain file name: a name is never a path, so only what follows the last `/`
/// or `\` is kept; control characters go; empty, `.` and `..` are no name.
fn clean_filename(name: &str) -> Option<String> {
    let base = name.rsplit(['/', '\\']).next().unwrap_or(name);
    let cleaned: String = base.chars().filter(|c| !c.is_control()).collect();
    let cleaned = cleaned.trim();
    (!cleaned.is_empty() && cleaned != "." && cleaned != "..").then(|| cleaned.to_owned())
}
